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
#define EVENT_MAX_FUTURE_S		(15 * 60)	/* created_at ahead of now, seconds */
#define EVENT_SERIAL_MAX_BYTES		(2 * EVENT_MAX_BYTES_CEILING)	/* bytes of a canonical serialization (escapes may grow it) */

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

/* Configuration. */
#define CONFIG_MAX_VALUE		4096		/* bytes of one value */
#define CONFIG_MAX_LINE			8192		/* bytes of one config file line */

/* Local store. */
#define STORE_CACHE_KIB			2048		/* SQLite page cache, KiB */
#define STORE_BUSY_TIMEOUT_MS		2000		/* SQLite busy timeout, ms */
#define STORE_MAX_STMTS			256		/* prepared statements kept open */
#define STORE_WAL_LIMIT_BYTES		(4 * 1024 * 1024) /* WAL file kept after a checkpoint, bytes */
#define STORE_MAX_PATH			4096		/* bytes of DIR/cachebox.db */

/* Loop. */
#define LOOP_MAX_FDS			1024		/* watched descriptors */

/* Logging. */
#define LOG_MAX_LINE			1024		/* bytes of one log line */
#define LOG_RATELIMIT_INTERVAL_MS	10000		/* window for repeated warnings, ms */
#define LOG_RATELIMIT_BURST		5		/* lines per window per call site */

#endif
