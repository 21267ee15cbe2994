/*
 * limits.h — every fixed limit of cachebox, with its unit, in one place.
 * A length a peer declares is checked against one of these before anything
 * is allocated. Limits a user may tune live in the configuration table
 * (config.c) instead; those named here are the hard ceilings behind them.
 */
#ifndef CACHEBOX_CORE_LIMITS_H
#define CACHEBOX_CORE_LIMITS_H

/* Events (NIP-01). limits.max_event_bytes is configured below this. */
#define EVENT_MAX_BYTES_CEILING		(1024 * 1024)	/* bytes of event JSON */
#define EVENT_MAX_TAGS			4096		/* tags per event */
#define EVENT_MAX_TAG_ITEMS		64		/* strings per tag */
/*
 * What parsing one event may allocate is bounded by its values, not by
 * EVENT_MAX_TAGS x EVENT_MAX_TAG_ITEMS (262,144 strings, ~30 MiB of cJSON
 * nodes): the text is counted (core/jsonscan.h) before cJSON sees it.
 * 24,576 values hold the largest lists met in practice (4,096 tags of
 * ["p", key, relay, petname] are 20,500) and cost at most ~3 MiB of nodes
 * (tests/bench/event_worst.c).
 */
#define EVENT_MAX_JSON_VALUES		24576		/* values in one event (strings, member names, numbers, arrays, ...) */
#define EVENT_MAX_JSON_DEPTH		16		/* nesting of arrays and objects in one event (NIP-01 needs 3) */
#define EVENT_MAX_FUTURE_S		(15 * 60)	/* created_at ahead of now, seconds */
#define EVENT_SERIAL_MAX_BYTES		(2 * EVENT_MAX_BYTES_CEILING)	/* bytes of a canonical serialization (escapes may grow it) */
#define EVENT_PUBKEY_CACHE_SLOTS	512		/* parsed public keys kept for verification (96 bytes each) */
#define EVENT_PUBKEY_CACHE_WAYS		4		/* of which share a set (most recently used first) */

/* Filters (NIP-01). */
#define FILTER_MAX_IDS			1000		/* entries in "ids" */
#define FILTER_MAX_AUTHORS		1000		/* entries in "authors" */
#define FILTER_MAX_KINDS		100		/* entries in "kinds" */
#define FILTER_MAX_TAG_KEYS		8		/* distinct #x keys */
#define FILTER_MAX_TAG_VALUES		1000		/* values per #x key */
#define FILTER_MAX_TEXT_BYTES		(256 * 1024)	/* bytes of filter JSON text */

/* NIP-19 bech32 entities. */
#define NIP19_MAX_CHARS			5000		/* chars of a bech32 string (TLV ones pass 90) */
#define NIP19_MAX_TLV_VALUE		255		/* bytes of one TLV value (its length is one byte) */
#define NIP19_MAX_RELAYS		16		/* relay hints kept from one nprofile/nevent/naddr */

/* NIP-11 relay information documents. */
#define NIP11_MAX_DOC_BYTES		(64 * 1024)	/* bytes of one document */
#define NIP11_MAX_STRING		128		/* bytes kept of name/software/version */
#define NIP11_MAX_NIPS			128		/* supported_nips entries kept */
#define NIP11_MAX_NIP_NUMBER		65535		/* largest NIP number believed */
#define NIP11_MAX_JSON_VALUES		8192		/* values in one document, counted before parsing */
#define NIP11_MAX_JSON_DEPTH		16		/* nesting in one document */

/* Configuration. */
#define CONFIG_MAX_VALUE		4096		/* bytes of one value */
#define CONFIG_MAX_LINE			8192		/* bytes of one config file line */
#define CONFIG_MAX_KEY			64		/* bytes of one key name */
#define CONFIG_MAX_FILE_BYTES		(256 * 1024)	/* bytes of a -c file */

/* Credentials masked on every surface (core/redact.c). */
#define REDACT_MAX_SPANS		16		/* credentials looked for in one URL or connection string */
#define REDACT_TEXT_MAX			1024		/* bytes of a message after masking (longer ones are cut) */
#define REDACT_MAX_KEY			64		/* bytes of a decoded parameter name */

/* Local store. */
#define STORE_CACHE_KIB			1024		/* SQLite page cache, KiB */
#define STORE_BUSY_TIMEOUT_MS		10000		/* SQLite busy timeout: longer than a batch holds the write lock (INGEST_COMMIT_MIN_MS), ms */
#define STORE_MAX_STMTS			256		/* prepared statements kept open */
#define STORE_WAL_LIMIT_BYTES		(4 * 1024 * 1024) /* WAL file kept after a checkpoint, bytes */
/*
 * A drain into a store of 1,000,000 events dirties pages of the id, author
 * and tag indexes spread over the whole file; a checkpoint every 4,000
 * pages wrote each of them to the database after nearly every batch: 102 KB
 * written per drained event, 12.7 KB at 16,000 (tests/bench/scale.sh
 * 1000000 1000 with SCALE_STOP_AT_IDLE=1; the small drain of write_ratio.sh
 * is the same either way). A 64 MiB WAL costs a second or two of reading
 * after a power cut.
 */
#define STORE_WAL_CHECKPOINT_PAGES	16384		/* WAL pages past which a commit checkpoints (wal_autocheckpoint) until the daemon's checkpoint takes over; its own limit is store.checkpoint_mib, 64 MiB by default, the same */
#define STORE_CKPT_SETTLE_MS		300		/* between the steps of the daemon's checkpoint (store/checkpoint.h): the copied pages are written out meanwhile, ms */
#define STORE_WAL_CATCH_UP_TIMES	2		/* the WAL's limit times this: past it a commit copies the whole WAL at once (a steady import leaves the steps no turn between transactions, and the WAL would not restart) */
#define STORE_CKPT_HOLD_MS		2000		/* an import waits at most this long for the checkpoint process's copy that lets the WAL restart, ms */
#define STORE_CKPT_PROC_RESTART_MS	1000		/* after the checkpoint process died, the next one starts this much later (the loop's own steps checkpoint meanwhile), ms */
#define STORE_CKPT_PROC_STOP_MS		5000		/* at the daemon's stop, the checkpoint process is given this long to finish its copy before SIGKILL, ms */
#define STORE_CKPT_RUNNER_ARGS		8		/* arguments of the program a test runs the checkpoint process through (an emulator and its options), at most */
#define STORE_PAGE_BYTES		4096		/* page size of a new database (an existing one keeps its own), bytes */
#define STORE_MAX_PATH			4096		/* bytes of DIR/cachebox.db */
#define STORE_MAX_TX_DEPTH		16		/* nested transaction levels (savepoints) */

/* Loop. */
#define LOOP_MAX_FDS			1024		/* watched descriptors */
#define LOOP_TURN_BOUNDS_MS		{ 10, 50, 100, 250, 1000 } /* a turn's length is counted against each of these in the status document, ms */
#define LOOP_TURN_NBOUNDS		5		/* how many LOOP_TURN_BOUNDS_MS lists */

/* Logging. */
#define LOG_MAX_LINE			1024		/* bytes of one log line */
#define LOG_RATELIMIT_INTERVAL_MS	10000		/* window for repeated warnings, ms */
#define LOG_RATELIMIT_BURST		5		/* lines per window per call site */

/* Control socket (cacheboxctl <-> cacheboxd). */
#define CTL_MAX_REQUEST			(64 * 1024)	/* bytes of one request line */
#define CTL_MAX_REPLY			(4 * 1024 * 1024) /* bytes of one reply */
#define CTL_MAX_CLIENTS			8		/* connections at once */
#define CTL_IO_TIMEOUT_MS		10000		/* a client idle this long is dropped, ms */

/* Surfaces: web status page, JSON API and serial console (src/ui). */
#define HTTP_API_MAX_BODY_BYTES		(64 * 1024)	/* bytes of a POST body to /api/ */
#define HTTP_API_MAX_HEADER_BYTES	(16 * 1024)	/* bytes of request line + headers (per-connection pool) */
#define HTTP_API_MAX_CONNS		32		/* HTTP connections at once */
#define HTTP_API_CONN_TIMEOUT_S		15		/* an HTTP connection whose answer stops moving is closed after, s */
#define HTTP_API_HEAD_DEADLINE_MS	10000		/* request line and headers complete within, from accept, ms */
#define HTTP_API_REQUEST_DEADLINE_MS	15000		/* the whole request, body included, complete within, from accept, ms */
#define HTTP_API_SHED_MIN_AGE_MS	1000		/* a connection being answered is never cut to make room before, ms */
#define HTTP_API_EXCHANGE_DEADLINE_MS	60000		/* the whole exchange (headers, body, answer), from accept, ms */
#define HTTP_API_LINGER_MS		2000		/* a refused peer may read our answer for, ms */
#define HTTP_API_SWEEP_MS		500		/* how often deadlines are checked while connections are open, ms */
#define HTTP_API_ACCEPT_BURST		64		/* connections accepted per wake-up */
#define HTTP_API_ACCEPT_PAUSE_MS	1000		/* accepting rests this long when out of descriptors, ms */
#define HTTP_API_MAX_QUERY_ARGS		32		/* arguments in a request's query string */
#define HTTP_API_MAX_HEADER_LINES	64		/* header lines in a request */
#define HTTP_API_AUTH_FAILURES		10		/* wrong admin tokens from one address... */
#define HTTP_API_AUTH_WINDOW_MS		60000		/* ...within this window, after which it waits it out, ms */
#define HTTP_API_AUTH_PEERS		16		/* addresses whose wrong tokens are counted at once */
#define HTTP_API_AUTH_GLOBAL_FAILURES	40		/* wrong admin tokens from every address together within HTTP_API_AUTH_WINDOW_MS, after which none is checked until it ends */
#define HTTP_API_MAX_REPLY_BYTES	(4 * 1024 * 1024) /* bytes of one JSON or metrics answer */
#define ADMIN_TOKEN_MIN_CHARS		12		/* chars of an admin token */
#define ADMIN_TOKEN_MAX_CHARS		256		/* chars of an admin token */
#define ADMIN_TOKEN_HASH_ITERATIONS	4096		/* PBKDF2-HMAC-SHA256 rounds of the stored token hash */
#define ADMIN_TOKEN_SALT_BYTES		16		/* random salt of the stored token hash, bytes */
#define SETUP_CODE_CHARS		10		/* characters of the first-run setup code, 5 bits each: 50 bits */
#define SETUP_CODE_TTL_MS		(30 * 60 * 1000) /* a setup code is valid for, from when it was made, ms */
#define SETUP_CODE_FAILURES		20		/* wrong setup codes from every address together... */
#define SETUP_CODE_WINDOW_MS		60000		/* ...within this window, after which no code is compared until it ends, ms */
#define CONSOLE_MAX_LINE		512		/* bytes of one typed console line */
#define CONSOLE_MAX_WORDS		24		/* words in one console line (a job takes up to 15 name=value words) */
#define CONSOLE_OUT_QUEUE_BYTES		(256 * 1024)	/* console output waiting for the terminal, bytes */
#define CONSOLE_READ_CHUNK		256		/* bytes read from the console per wake-up */
#define CONSOLE_REOPEN_MS		5000		/* retry opening a console device that failed or hung up, ms */
#define RENDER_MAX_BYTES		(4 * 1024 * 1024) /* bytes of one human-readable answer */
#define RENDER_STATUS_RELAYS		5		/* relays not open that the human status names one by one */
#define RENDER_JOB_GROUPS		10		/* groups of unfinished batches (relay, state, reason) jobs show prints */
#define COMMAND_NEAR_EDITS		2		/* edits (one for a name of four letters or fewer) within which a mistyped command or parameter name is suggested */
#define STATUS_RSS_BUDGET_BYTES		(16 * 1024 * 1024) /* memory budget shown beside rss_bytes (ARCHITECTURE.md §10) */
#define COMMAND_MAX_PARAMS		16		/* parameters of one command */
#define COMMAND_MAX_WORDS		4		/* words in a command name */
#define COMMAND_MAX_PARAM_NAME		31		/* bytes of a parameter's name (and of a command's word a typo is matched against) */
#define APP_MAX_SECTIONS		4		/* status sections parts add (app_section_add) */

/* Network: URLs, DNS, TCP, TLS, WebSocket, HTTP client (src/net). */
#define URL_MAX_BYTES			2048		/* bytes of a whole URL */
#define URL_MAX_HOST			253		/* bytes of a host name (RFC 1035) */
#define BOXNAMES_ADDR_CACHE_MS		5000		/* the box's interface addresses are read again after, ms */
#define DNS_TIMEOUT_MS			10000		/* one resolution, all tries, ms */
#define DNS_TRY_TIMEOUT_MS		2500		/* one c-ares try to one server, ms */
#define DNS_TRIES			3		/* c-ares tries per server */
#define DNS_MAX_ADDRS			16		/* addresses kept per name */
#define DNS_MAX_SERVERS			8		/* entries of dns.servers */
#define TCP_CONNECT_TIMEOUT_MS		5000		/* one connect attempt to one address, ms */
#define TCP_KEEPALIVE_IDLE_S		60		/* idle before the first keepalive probe, s */
#define TCP_KEEPALIVE_INTVL_S		20		/* between keepalive probes, s */
#define TCP_KEEPALIVE_PROBES		3		/* unanswered probes before the peer is dead */
#define TLS_MAX_CA_SETS			4		/* distinct CA files held at once */
#define TLS_REASON_MAX			128		/* bytes of a verification failure reason */
#define WS_OPEN_TIMEOUT_MS		30000		/* URL to open WebSocket (DNS+TCP+TLS+upgrade), ms */
#define WS_CLOSE_TIMEOUT_MS		5000		/* wait for the peer's close frame, ms */
#define WS_HANDSHAKE_MAX_BYTES		8192		/* bytes of the 101 response head */
#define HTTP_MAX_HEADERS		64		/* header lines in a response head */
#define WS_MAX_MSG_BYTES_CEILING	(16 * 1024 * 1024) /* largest message ever accepted, bytes */
#define WS_MAX_MSG_BYTES_DEFAULT	(1024 * 1024)	/* default largest message, bytes */
#define WS_SEND_HIGH_WATER_DEFAULT	(256 * 1024)	/* queued bytes above which reading stops, bytes */
#define RELAY_SEND_HIGH_WATER		(64 * 1024)	/* bytes queued to an upstream relay past which no more REQs are sent before it drains */
#define WS_SEND_QUEUE_MAX_DEFAULT	(1024 * 1024)	/* queued bytes above which sends are refused */
#define HTTP_MAX_HEAD_BYTES		8192		/* bytes of a response status line + headers */
#define HTTP_MAX_BODY_BYTES		(64 * 1024)	/* bytes of a NIP-11 response body */
#define HTTP_TIMEOUT_MS			15000		/* URL to complete response, ms */
#define HTTP_MAX_CHUNK_LINE		64		/* bytes of one chunk-size line */

/* Relay protocol and pool (src/relay). */
#define RELAY_SUBID_MAX			64		/* bytes of a subscription id (NIP-01) */
#define RELAY_COUNT_MAX			9007199254740992LL /* largest COUNT (NIP-45) believed: 2^53, exact in JSON */
#define RELAY_MSG_MAX_FILTERS		16		/* filters in one REQ or COUNT */
#define RELAY_MSG_MAX_VALUES		(EVENT_MAX_JSON_VALUES + 16)	/* values in one relay frame: an event and its envelope */
#define RELAY_MSG_MAX_DEPTH		(EVENT_MAX_JSON_DEPTH + 1)	/* nesting in one relay frame */
#define RELAY_CHALLENGE_MAX		512		/* bytes of a NIP-42 challenge we answer */
#define RELAY_REASON_MAX		256		/* bytes of a relay's message kept as last_error */
#define RELAY_BACKOFF_BASE_MS		1000		/* first reconnect delay, ms */
#define RELAY_BACKOFF_CAP_MS		(10 * 60 * 1000) /* longest reconnect delay, ms */
#define RELAY_PING_INTERVAL_MS		30000		/* idle time before a keepalive ping, ms */
#define RELAY_DEAD_PEER_MS		90000		/* no frame at all for this long: reconnect, ms */
#define RELAY_RATELIMIT_BASE_MS		2000		/* first pause of new REQs after rate-limited:, ms */
#define RELAY_RATELIMIT_CAP_MS		(5 * 60 * 1000)	/* longest such pause, ms */
#define RELAY_MAX_SUBS_DEFAULT		10		/* open subscriptions per relay without NIP-11 advice */
#define RELAY_MAX_SUBS_CEILING		100		/* open subscriptions per relay, whatever NIP-11 says */
#define RELAY_MAX_PENDING_OK		1024		/* published events awaiting OK, per relay */
#define RELAY_STATS_FLUSH_MS		5000		/* traffic counters reported for the record at most this often, ms */
#define RELAY_RECORD_MS			1000		/* a relay's state or NIP-11 facts reported within, ms */
#define RELAY_OK_TIMEOUT_MS		30000		/* an EVENT with no OK after this is failed, ms */
#define RELAY_NIP11_REFRESH_MS		(6 * 3600 * 1000) /* a NIP-11 document is read again after, ms */
#define RELAY_NIP11_WAIT_MS		3000		/* first REQs held for a NIP-11 fetch in flight, ms */
/*
 * A relay whose input is mostly invalid (bad ids or signatures, malformed
 * or oversized frames) is cut off and kept away, so a flood costs a
 * bounded number of signature checks: at most RELAY_INVALID_CUT per
 * connection, then a wait of at least RELAY_INVALID_BACKOFF_MS (doubling
 * per cut) -- about 0.1 % of a core on a Pi-class board, where one failed
 * check is ~0.2 ms, instead of half a core for as long as the flood
 * lasts. 200 in 10 s is 20 a second, far above what an honest relay sends
 * even when it serves other people's broken events; and the share rule
 * keeps a fast relay whose junk is a minority of a big page connected
 * (its bad events are dropped one by one, as before).
 */
#define RELAY_INVALID_WINDOW_MS		10000		/* invalid input of one relay is counted per window of, ms */
#define RELAY_INVALID_CUT		200		/* invalid events and frames in one window that cut the connection... */
#define RELAY_INVALID_CUT_SHARE_PCT	50		/* ...when they are at least this share of its messages in it, percent */
#define RELAY_INVALID_BACKOFF_MS	60000		/* least reconnect delay after such a cut, doubled per cut (capped like any backoff), ms */
#define RELAY_INVALID_FORGIVE_MS	(60 * 60 * 1000) /* a relay not cut for this long starts again at the first delay, ms */

/* Ingest and the store's table families (src/sync/ingest.c, src/store). */
#define INGEST_RECENT_IDS		4096		/* ids remembered in memory for dedup (power of two) */
#define INGEST_MAX_BATCH_EVENTS		5000		/* events in one batch transaction before it commits early */
#define INGEST_COMMIT_MIN_MS		5000		/* a batch younger than this waits for later rounds (SD wear), ms */
#define INGEST_COMMIT_EVENTS		2000		/* ...unless it holds this many events */
#define INGEST_NEWEST_RELAYS		64		/* relays whose newest live event one batch tracks */
#define INGEST_MAX_LISTENERS		4		/* parts told of every new event (negsync's recovery, the relay endpoint's live push) */
#define INGEST_MINUTES			360		/* minutes of events-stored counters kept in memory (4 bytes each) for the page's chart */
#define INGEST_HISTORY_BUCKET_S		600		/* one row of the stored-events history (ingest_history) per this many seconds of wall clock: at most one row written per bucket */
#define INGEST_HISTORY_S		(7 * 86400)	/* the history kept, seconds (1,008 rows of about 20 bytes) */
#define INGEST_HISTORY_WALL_MIN_S	1577836800	/* a wall clock before 2020-01-01 is not set yet (a board with no RTC before NTP): nothing is counted into the history */
#define STORE_NAMES_CACHE		8192		/* profile names (kind 0) kept in memory, entries (power of two; about 80 bytes each) */
#define STORE_NAME_MAX_BYTES		40		/* bytes of one cached profile name (cut at a character) */
#define STORE_QUERY_MAX_ROWS		10000		/* rows one local query examines */
#define STORE_QUERY_MAX_LIST		1000		/* ids, authors or kinds bound into one local query */
#define STORE_EVICT_SCAN_ROWS		2000		/* rows one retention step examines */
#define STORE_EVICT_CHUNK_ROWS		500		/* rows one retention step deletes */
#define STORE_AUTHOR_RELAYS_MAX		32		/* relays kept from one NIP-65 list */
#define STORE_CURSOR_REASON_MAX		200		/* bytes of an incomplete cursor's reason */
#define STORE_WITHDRAWN_MAX		100000		/* tombstones of withdrawn event ids kept (about 100 bytes each on disk), the oldest dropped past it */
#define ROOTS_HISTORY_KEEP		20		/* superseded versions of a root's kind 0, 3 or 10002 kept aside, per kind */
#define RULES_MAX_RECIPIENTS		16		/* "p" tags of a gift wrap (kind 1059) the rules read */
#define ROOTS_HISTORY_LIST_MAX		200		/* versions kept aside one roots history answer lists */

/* Retention: store.max_bytes enforced on the loop (src/sync/retention.c). */
#define RETENTION_CHECK_MS		5000		/* the event bytes are compared with store.max_bytes every, ms */
#define RETENTION_CHUNK_GAP_MS		20		/* pause between two eviction steps while over budget, ms */
#define RETENTION_BUSY_MS		100		/* retry after finding a transaction open that is not ingest's, ms */
#define RETENTION_LOW_WATER_PCT		98		/* once over budget, evict down to this share of store.max_bytes, percent */
#define RETENTION_PROTECTED_RETRY_MS	(5 * 60 * 1000)	/* over budget with only protected events: look again after, ms */
#define RETENTION_LOG_QUIET_MS		60000		/* eviction start/stop lines at info at most once per, ms (debug between) */
#define SWEEP_STEP_ROWS			500		/* events one step of the rules' sweep removes or converts */
#define SWEEP_PACK_ROWS			200		/* older rows one step packs (each read, packed and rewritten: ~1 KB of WAL) */
#define SWEEP_GAP_MS			20		/* pause between two sweep steps while work is left, ms */
#define SWEEP_IDLE_MS			30000		/* the sweep looks for new work (a purge, a conversion) every, ms */
#define SWEEP_BUSY_MS			100		/* retry after finding a transaction open that is not ingest's, ms */
#define SWEEP_RETRY_MS			5000		/* retry after a failed sweep step, ms */
#define SWEEP_EXPIRE_MAX_WAIT_MS	60000		/* the expiry timer looks again at least every (the wall clock may jump), ms */

/* Uplink and its inbox (src/uplink, src/store/inbox.c). */
#define UPLINK_TICK_MS			200		/* how often an idle uplink looks at the inbox, ms */
#define UPLINK_ENQUEUE_CHUNK		5000		/* stored events queued per round when an uplink target is new */
#define UPLINK_BACKOFF_BASE_MS		1000		/* first reconnect delay after a failure, ms */
#define UPLINK_BACKOFF_CAP_MS		30000		/* longest reconnect delay, ms */
#define UPLINK_ERROR_MAX		256		/* bytes of last_error kept */
#define UPLINK_URL_MAX			URL_MAX_BYTES	/* bytes of uplink.url */
#define UPLINK_RATE_WINDOW_S		10		/* forward rate is averaged over this many seconds */
#define UPLINK_DEADLETTER_LIST_MAX	100		/* dead letters one listing returns */
#define UPLINK_PG_BATCH_ROWS		1000		/* events in one batch (one COPY and INSERT) into caching_event_inbox */
#define UPLINK_PG_BATCH_JSON_BYTES	(1024 * 1024)	/* event JSON bytes in one batch (at least one event) */
#define UPLINK_PG_QUERY_MAX_BYTES	(8 * 1024 * 1024) /* bytes of one batch's COPY text after escaping (>= 2 x EVENT_MAX_BYTES_CEILING) */
#define UPLINK_PG_COPY_CHUNK_BYTES	(64 * 1024)	/* COPY text handed to libpq at a time (PQputCopyData) */
#define UPLINK_PG_CONNECT_TIMEOUT_MS	10000		/* URL to an open Postgres session, ms */
#define UPLINK_PG_QUERY_TIMEOUT_MS	60000		/* one batch sent to its COMMIT answered, ms */
#define UPLINK_WITHDRAWN_IDS		500		/* ids withdrawn here deleted from caching_event_inbox in one statement */
#define UPLINK_WITHDRAWN_SETTLE_S	2		/* ids withdrawn in the last this many seconds wait (a second still running gets rows), s */
#define UPLINK_WS_WINDOW		128		/* EVENTs sent and not yet answered by OK */
#define UPLINK_WS_TAKE_BYTES		(256 * 1024)	/* event JSON bytes handed to the pool in one round */
#define UPLINK_WS_OK_TIMEOUT_MS		10000		/* an EVENT with no OK after this forces a reconnect, ms */
#define UPLINK_WS_PAUSE_BASE_MS		1000		/* first pause after rate-limited: or a failed AUTH, ms */
#define UPLINK_WS_PAUSE_CAP_MS		60000		/* longest such pause, ms */

/* Planners: follow graph, live, author drain (src/sync/follow.c, live.c, drain.c). */
#define SYNC_AUTHORS_PER_FILTER		200		/* authors in one filter of a REQ */
#define SYNC_FILTERS_PER_SUB		8		/* such filters in one REQ */
#define SYNC_OUTBOX_RELAYS_MAX		64		/* outbox (NIP-65 write) relays dialled in all, besides bootstrap */
#define SYNC_OUTBOX_PER_AUTHOR		8		/* of those, used for one author */
#define FOLLOW_REFRESH_MS		(10 * 60 * 1000) /* follow graph read again after, ms */
#define FOLLOW_META_OVERLAP_S		600		/* a refresh asks kept authors for kinds 0 and 10002 since the last one less this, s */
#define FOLLOW_FETCH_TIMEOUT_MS		30000		/* a follow-list request without EOSE is given up after, ms */
#define FOLLOW_GRACE_MS			2000		/* once one bootstrap relay answered a phase in full, the others get as long again as it took plus this, ms */
#define FOLLOW_MAX_FOLLOWS		10000		/* "p" tags taken from one root's kind 3 */
#define FOLLOW_MAX_ROOTS		64		/* roots in follow.roots */
#define FOLLOW_MAX_LISTENERS		4		/* parts told when the follow set changes */
#define LIVE_RETRY_MS			30000		/* a live subscription the relay closed is opened again after, ms */
#define DRAIN_STEP_TIMEOUT_MS		30000		/* a drain request silent this long (relay open) is a stall, ms */
#define DRAIN_MAX_STALLS		3		/* stalls in a row before a relay is recorded incomplete for an author */
#define DRAIN_GIVEUP_FAILURES		8		/* failed connects in a row after which waiting steps stall */
#define DRAIN_RETRY_MS			2000		/* pause of a relay's drain after a refusal, ms */
#define DRAIN_SAME_SECOND_MIN		2		/* events in one second before a page can be a burst */
#define DRAIN_RECOVER_PAGES		16		/* clean pages before a relay that dropped pages gets more steps */
#define DRAIN_TICK_MS			5000		/* every relay's drain is looked at again after, ms */
#define DRAIN_NOANSWER_RETRY_S		3600		/* a relay recorded "no answer" for an author is asked again after, s (wall); doubled for each earlier record */
#define DRAIN_NOANSWER_RETRY_MAX_S	(24 * 3600)	/* ...up to, s (wall) */
#define DRAIN_SYNC_CHUNK		64		/* authors whose cursor rows a sync writes per transaction */
#define DRAIN_RETRY_SWEEP_MS		(5 * 60 * 1000)	/* cursor rows due a retry are looked for every, ms */
#define FOLLOWS_LIST_MAX_CURSORS	5000		/* cursor rows one `follows` answer lists */
#define FOLLOWS_PAGE_DEFAULT		100		/* authors one `follows` answer lists when no limit is given */
#define FOLLOWS_PAGE_MAX		500		/* ...and at most, whatever limit is asked */
#define FOLLOWS_QUERY_MAX_BYTES		64		/* bytes of a `follows` search (q) */

/* NIP-77 sync of authors' histories (src/sync/negsync.c). */
#define NEGSYNC_WINDOW_ITEMS		10000		/* the box's own items in one session (40 bytes each) */
#define NEGSYNC_MAX_STEPS		4		/* author reconciliations at once, over every relay */
#define NEGSYNC_STEPS_PER_RELAY		2		/* ...of them on one relay: the other half waits for the others */
#define NEGSYNC_WHY_MAX			160		/* bytes of the reason a relay is recorded as not reconciling */
#define NEGSYNC_QUEUE_IDS		4096		/* ids waiting to be fetched, per step (32 bytes each) */
#define NEGSYNC_FETCHES_PER_STEP	2		/* exact-id REQs of one step at once */
#define NEGSYNC_FRAME_BYTES		32768		/* frame-size limit of our negentropy messages, bytes */
#define NEGSYNC_FIRST_REPLY_MS		15000		/* NEG-OPEN unanswered this long: the relay does not reconcile, ms */
#define NEGSYNC_IDLE_MS			60000		/* a session silent this long ends, ms */
#define NEGSYNC_FETCH_TIMEOUT_MS	30000		/* an exact-id REQ without EOSE ends, ms */
#define NEGSYNC_RETRY_REFUSAL_S		86400		/* a relay that refused NIP-77 is asked again after, s */
#define NEGSYNC_RECOVERY_TICK_MS	60000		/* the recovery index is looked at least this often, ms */
#define NEGSYNC_RECOVERY_PER_TICK	8		/* due relays begun per look */
#define NEGSYNC_RECOVERY_FETCHES	4		/* recovery fetches in flight at once */
#define NEGSYNC_SATISFIED_BATCH		256		/* stored ids handed to recovery together */
#define NEGSYNC_FILTER_MAX_BYTES	(128 * 1024)	/* a scoped step's filter as JSON (a job batch of 1,000 authors and its tags) */
#define NEGSYNC_SATISFIED_MS		1000		/* ...or after this long, ms */
#define RECOVERY_LIST_MAX		1000		/* relays one recovery listing shows */

/* Missing-event recovery (src/sync/recovery.c, src/store/recovery.c); its delays are recovery.backoff_*_ms. */
#define RECOVERY_MAX_IDS_PER_ATTEMPT	300		/* ids in one recovery fetch (one exact-id REQ), ids */
#define RECOVERY_MAX_FAILURES_PER_ID	12		/* failed fetches of one id before it expires, fetches */
#define RECOVERY_MAX_SOURCE_BATCHES	16		/* batch ids remembered per relay to tell a related failure from an unrelated one */
#define RECOVERY_BACKOFF_MAX_DOUBLINGS	16		/* failures past this double the delay no further (before the cap), doublings */

/* Negentropy (NIP-77, protocol v1; src/nostr/negentropy.c). An item is a
 * (created_at, id) pair of 40 bytes, so NEG_MAX_ITEMS items hold 2 MB:
 * larger sets are reconciled as several sessions over time windows
 * (neg_window_next). */
#define NEG_MAX_ITEMS			50000		/* items in one set the daemon reconciles (40 bytes each) */
#define NEG_HARNESS_MAX_ITEMS		4000000		/* items the offline conformance harness accepts */
#define NEG_MAX_MSG_BYTES		(32 * 1024 * 1024) /* bytes of one binary message read or written (hex is twice this) */
#define NEG_FRAME_MIN_BYTES		4096		/* smallest frame-size limit other than 0 (none), bytes */
#define NEG_FRAME_RESERVE_BYTES		200		/* room kept under the frame-size limit for the closing range, bytes */
#define NEG_VARINT_MAX_DIGITS		10		/* base-128 digits of one varint (64 bits) */
#define NEG_REASON_MAX			128		/* bytes of a session's error reason */
#define NEG_HARNESS_MAX_LINE		(2 * (size_t)NEG_MAX_MSG_BYTES + 16) /* bytes of one harness line: "msg," and the hex */
#define NEG_HARNESS_READ_CHUNK		65536		/* bytes the harness reads from its input at a time */
#define NEG_HARNESS_HEX_CHUNK		4096		/* message bytes the harness hex-encodes at a time */

/*
 * Custom backfill jobs (src/sync/job_spec.c, src/sync/jobs.c,
 * src/store/jobs.c). A job's author or id list is resolved once into the
 * store (32 bytes a row) and never held whole in memory while it runs: a
 * step reads its batch's slice. Lists a person types are counted before
 * anything is allocated for them.
 */
#define JOBS_MAX_ITEMS			100000		/* authors or ids one job resolves to */
#define JOBS_BATCH_SIZE_DEFAULT		100		/* authors or ids per batch when none is given */
#define JOBS_BATCH_SIZE_MAX		1000		/* authors or ids per batch (one filter: FILTER_MAX_AUTHORS) */
#define JOBS_BATCH_SIZE_WARN		500		/* above this some relays refuse the filter: warned */
#define JOBS_MAX_RELAYS			32		/* relays one job asks (custom list, bootstrap, outbox plan) */
#define JOBS_OUTBOX_PER_AUTHOR		4		/* write relays one author is asked on in outbox mode */
#define JOBS_LABEL_MAX			128		/* bytes of a job's label */
#define JOBS_FILTER_MAX_BYTES		(48 * 1024)	/* bytes of a job's shared filter JSON (kinds, tags, times) */
#define JOBS_TAGS_MAX_BYTES		(32 * 1024)	/* bytes of the tags argument */
#define JOBS_LIMIT_MAX			1000000000	/* the limit argument, events */
#define JOBS_EVERY_MIN_S		1		/* shortest schedule, s (seconds are meant for tests) */
#define JOBS_EVERY_MAX_S		(366 * 86400)	/* longest schedule, s */
#define JOBS_MAX_ATTEMPTS		5		/* failed attempts of a batch before it is recorded failed */
#define JOBS_RETRY_MAX_MS		(10 * 60 * 1000) /* longest wait before a failed batch is asked again, ms */
#define JOBS_STEP_TIMEOUT_MS		30000		/* a job request silent this long (relay open) has failed, ms */
#define JOBS_NEG_WAIT_MS		500		/* a batch waiting for a NIP-77 session slot looks again after, ms */
#define JOBS_TICK_MS			1000		/* schedules, backoffs and the queue are looked at every, ms */
#define JOBS_LIST_MAX			200		/* jobs one listing shows, newest first */
#define JOBS_SHOW_MAX_BATCHES		200		/* unfinished, incomplete or failed batches one show lists */
#define JOBS_PREVIEW_ITEMS		5		/* resolved authors or ids a dry run shows */
#define JOBS_REASON_MAX			200		/* bytes of a batch's or job's reason */
#define JOBS_FIRST_REASON_MAX		400		/* bytes of the first failed or incomplete batch's reason in a finished job's message */
#define JOBS_DUE_PER_TICK		8		/* scheduled jobs planned again per tick */
#define JOB_SPEC_QUOTE_MAX		40		/* bytes of an argument quoted back in a refusal */
#define JOB_SPEC_ENTRY_MAX		96		/* bytes of one entry of an author or id list (an npub is 63) */
#define JOB_SPEC_MAX_WARNINGS		4		/* warnings a checked job carries */
#define JOB_SPEC_WARNING_BYTES		160		/* bytes of one warning */

/*
 * Relay endpoint: the box as a NIP-01 relay on the LAN (src/serve,
 * net/ws_serve.c, store/scan.c, store/tags.c). Memory, worst case, with
 * every client at its limits: RELAYD_INPUT_BUDGET of messages being
 * received plus RELAYD_MAX_CLIENTS x wslay's 4 KiB context (1.25 MiB),
 * RELAYD_SEND_BUDGET for output whatever the number of clients (4 MiB,
 * and one event more per client between two checks), RELAYD_ACTIVE_SCANS
 * x STORE_SCAN_ROWS x 48 bytes for queries (384 KiB), and
 * RELAYD_MAX_NEG_SESSIONS x NEG_MAX_ITEMS x 40 bytes for NIP-77 (3.8
 * MiB), and RELAYD_MEM_BUDGET for the filters of every subscription
 * (2 MiB): about 11.5 MiB on top of the daemon's own.
 */
#define RELAYD_MAX_CLIENTS		64		/* WebSocket clients at once */
#define RELAYD_HANDSHAKE_SLOTS		16		/* connections at the door or upgrading besides them */
#define RELAYD_MAX_MSG_BYTES		(128 * 1024)	/* bytes of one client message (NIP-11 max_message_length) */
#define RELAYD_INPUT_BUDGET		(1024 * 1024)	/* bytes of messages being received over every client; a frame past it closes its connection (1013) */
#define RELAYD_MAX_SUBS			20		/* open subscriptions per connection (NIP-11 max_subscriptions) */
#define RELAYD_CLIENT_MEM		(1024 * 1024)	/* bytes the filters of one connection's subscriptions and NIP-77 sessions may hold; past it a new one is refused */
#define RELAYD_MEM_BUDGET		(2 * 1024 * 1024) /* bytes the filters of every connection together may hold; past it a new subscription is refused */
#define RELAYD_TRIM_BYTES		(256 * 1024)	/* filter bytes freed by leaving clients past which the heap is trimmed (at once when none is left) */
#define RELAYD_MAX_FILTERS		10		/* filters in one REQ or COUNT (NIP-11 max_filters) */
#define RELAYD_MAX_LIMIT		5000		/* events one filter gives its initial query; also the limit of a filter without one */
#define RELAYD_SEND_HIGH_WATER		(64 * 1024)	/* queued bytes of a client above which its queries pause */
#define RELAYD_SEND_QUEUE_MAX		(256 * 1024)	/* queued bytes of a client past which it is cut off (slow reader); one message more may be queued */
#define RELAYD_SEND_BUDGET		(4 * 1024 * 1024) /* queued bytes of every client together; past it the longest queue is cut */
#define RELAYD_STALL_MS			5000		/* a client with bytes waiting that takes none for this long is cut off, ms */
#define RELAYD_STALL_SWEEP_MS		1000		/* how often stalled clients are looked for, ms */
#define RELAYD_SLICE_ROWS		2000		/* rows one query slice examines before the loop turns */
#define RELAYD_SLICE_EVENTS		500		/* events one query slice sends before the loop turns */
#define RELAYD_ACTIVE_SCANS		8		/* queries (REQ, COUNT, NEG-OPEN) served at once; others wait their turn */
#define RELAYD_CLIENT_SCANS		2		/* of those, queries one connection holds at once; its others wait while other clients' queries go first */
#define RELAYD_MAX_NEG_SESSIONS		2		/* NIP-77 sessions open at once over every client */
#define RELAYD_CLIENT_NEG_SESSIONS	1		/* NIP-77 sessions one connection may hold at once */
#define RELAYD_NEG_MAX_MS		60000		/* a session open this long is closed, however often it is fed (a reconciliation of NEG_MAX_ITEMS takes a few rounds), ms */
#define RELAYD_NEG_IDLE_MS		30000		/* a session the client leaves without a NEG-MSG this long after our answer is closed, ms */
#define RELAYD_NEG_FRAME_BYTES		(64 * 1024)	/* frame-size limit of our NEG-MSG answers, bytes (binary) */
#define RELAYD_EVENT_HEAD_MAX		(16 + 6 * RELAY_SUBID_MAX) /* bytes of ["EVENT","subid", with every byte of the id escaped */
#define RELAYD_NOTICE_MAX		256		/* bytes of a NOTICE, CLOSED or OK message we write */
#define RELAYD_CHALLENGE_BYTES		16		/* random bytes of a NIP-42 challenge (hex on the wire) */
#define RELAYD_AUTH_WINDOW_S		600		/* an AUTH event's created_at within this of now, s */
#define RELAYD_PING_MS			60000		/* a client silent this long is pinged, ms */
#define RELAYD_DEAD_MS			150000		/* a client silent this long (no pong either) is closed, ms */
#define RELAYD_SHED_IDLE_MS		30000		/* at the limit, a client with no subscription silent this long makes room, ms */
#define RELAYD_CLOSE_LINGER_MS		2000		/* after our close frame, what the peer sends is read and dropped for, ms */
#define RELAYD_EVICT_MIN_AGE_MS		1000		/* a connection still sending its head is pushed out for a newer one after, ms */
#define STORE_SCAN_ROWS			1024		/* rows one scan buffers over all its filters' index streams (48 bytes each) */
#define SCAN_STREAM_ROWS_MAX		256		/* rows one index stream of a scan buffers at most */
#define STORE_SCAN_MAX_STREAMS		1024		/* index streams one filter is split into; past it the filter is read in time order */
#define STORE_SCAN_STEP_MS		50		/* a scan step (one read transaction) ends after this long whatever rows it has left, so it holds neither the loop nor a checkpoint of the WAL longer, ms */
#define SCAN_CLOCK_ROWS			64		/* rows a scan step examines between two looks at the clock */
#define TAGS_FILL_STEP_EVENTS		500		/* stored events one background step of the tag index reads */
#define TAGS_FILL_GAP_MS		20		/* pause between two such steps, ms */
#define TAGS_MAX_PER_EVENT		EVENT_MAX_TAGS	/* index rows one event may add */

/* Export, import and backup (cacheboxctl, store/backup.c, sync/backup.c, ui/ctlsock.c). */
#define EXPORT_SLICE_ROWS		2000		/* rows one read transaction of an export examines (the WAL is never held longer) */
#define IMPORT_MAX_LINE_BYTES		(EVENT_MAX_BYTES_CEILING + 1) /* bytes of one line of an import stream */
#define IMPORT_REPORT_INVALID		10		/* invalid lines an import reports by number and reason */
#define IMPORT_BUSY_RETRY_MS		20		/* an import paused for the relay's clients looks again after, ms */
#define IMPORT_READ_BYTES		4096		/* bytes of an import read per turn of the loop (about 10 events: a few ms of signature checks) */
#define BACKUP_STEP_PAGES		256		/* database pages one backup step copies */
#define BACKUP_STEP_GAP_MS		5		/* pause between two backup steps, ms */
#define BACKUP_BUSY_RETRY_MS		20		/* retry of a step that found a write transaction open, ms */
#define BACKUP_DOWNLOAD_TICKET_BYTES	32		/* random bytes of the one-time ticket that fetches a backup download */
#define BACKUP_DOWNLOAD_TTL_MS		(10 * 60 * 1000) /* a finished download copy waits for its fetch this long, then is removed, ms */
#define BACKUP_DOWNLOAD_DEADLINE_MS	(60 * 60 * 1000) /* the whole exchange of a backup download on the web (instead of HTTP_API_EXCHANGE_DEADLINE_MS; a stalled one ends after HTTP_API_CONN_TIMEOUT_S), ms */

/* Notifications to the service manager (src/net/sdnotify.c, sd_notify(3)). */
#define SDNOTIFY_STATUS_MAX		200		/* bytes of the one-line summary STATUS= carries, with its NUL */
#define SDNOTIFY_MSG_MAX		512		/* bytes of one datagram (systemd takes up to 4096) */
#define SDNOTIFY_STATUS_MS		5000		/* the summary is made again after, ms (a count over the followed authors; sent only when changed) */

/* WebSocket (net/ws.c, the client; net/ws_serve.c, the server end). */
#define WS_REASON_MAX			124		/* bytes of a close reason: RFC 6455 allows 123, with its NUL */
#define WS_PEER_OUT_BYTES		(16 * 1024)	/* server end: frames batched per send(2) */
#define WS_PEER_READ_BYTES		(16 * 1024)	/* server end: bytes read per recv(2) */
#define WS_PEER_BUF_KEEP		(16 * 1024)	/* server end: message buffer kept between messages, bytes */

/* The box's own addresses (net/boxnames.c). */
#define BOXNAMES_MAX_ADDRS		64		/* interface addresses kept */

/* The web API (ui/api.c). */
#define API_MAX_PATH			256		/* bytes of a command path after /api/ */
#define METRIC_MAX_NAME			128		/* bytes of a metric name */
#define METRIC_MAX_PATH			(METRIC_MAX_NAME + 16) /* bytes of a status path shown in HELP */
#define METRIC_MAX_FIELDS		32		/* distinct fields of a row array */

/* The Postgres uplink (uplink/pg.c). */
#define PG_MAX_OPTIONS			64		/* connection keywords passed to libpq */
#define PG_BATCH_SQL_BYTES		512		/* bytes of the batch statement, box key included */
#define PG_ROW_FIXED_BYTES		512		/* bytes of one COPY row, worst case, less its JSON and relay */

/* cacheboxd (main.c). */
#define IDLE_CHECK_MS			200		/* how often --exit-when-idle looks, ms */

#endif
