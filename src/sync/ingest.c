/*
 * ingest.c — the one path from a relay's EVENT message into the store.
 *
 * Order of the checks, cheapest first where the outcome allows it:
 * size (the byte span the relay sent) → id peeked from the parse tree the
 * message already holds → dedup (a small direct-mapped set of recent ids,
 * then the events primary key) → full decode of the tree → time → id →
 * signature → policy (the subscription's filters) → insert of the
 * canonical JSON. A duplicate therefore costs a hex decode and an index
 * probe, never a signature check. What the caller learns of a duplicate
 * is the stored row's author, second and kind (the id vouches for those,
 * not for the copy): a copy claiming others is invalid, so a relay
 * replaying a stored id with created_at 1 cannot move a drain cursor or a
 * live since. A copy whose other fields are forged is a duplicate, which
 * is harmless because it is not stored again. The
 * id is hashed while the JSON to store is written (one serialization), so
 * what is stored is exactly the canonical form whose hash was checked.
 *
 * It owns the batch transaction: opened at the first insert, committed
 * by a loop hook at the top of a round once old or large enough, by the
 * deadline armed at the open, by ingest_flush, or early when the batch is
 * large. It never opens a
 * transaction of its own while someone else's is open (its writes then
 * join that one) and never commits a level it did not open. It never logs
 * a peer's bad input without a rate limit.
 */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/jsonscan.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/minring.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "relay/msg.h"
#include "store/dedup.h"
#include "store/events.h"
#include "store/rules.h"
#include "store/withdrawn.h"
#include "store/history.h"
#include "store/store.h"
#include "sync/ingest.h"

_Static_assert((INGEST_RECENT_IDS & (INGEST_RECENT_IDS - 1)) == 0,
    "INGEST_RECENT_IDS must be a power of two");

/* A stored event in the recent-id set: its id and what the row says. */
struct ingest_recent {
	uint8_t		id[32];
	uint8_t		pubkey[32];
	int64_t		created_at;
	uint32_t	kind;
};

/* Newest live created_at seen from one relay during the open batch. */
struct ingest_newest {
	char	*relay;
	int64_t	 created_at;
};

struct ingest {
	struct loop		*loop;
	struct store		*store;
	size_t			 max_event_bytes;
	bool			 queue;
	bool			 tx_open;	/* we opened the outermost level */
	size_t			 batch_events;
	uint64_t		 batch_opened_ms;	/* monotonic, at the open */
	uint64_t		 commit_timer;	/* wakes an idle loop; 0: none */
	uint64_t		 commit_min_ms;	/* INGEST_COMMIT_MIN_MS */
	size_t			 commit_events;	/* INGEST_COMMIT_EVENTS */
	struct buf		 json;		/* canonical event JSON to store */
	struct ingest_recent	*recent;	/* ids known stored */
	uint8_t			 *recent_used;
	struct ingest_newest	 newest[INGEST_NEWEST_RELAYS];
	size_t			 nnewest;
	struct ingest_stats	 stats;
	struct minring		 minutes;	/* events stored per minute */
	int64_t			 hist_start;	/* bucket hist_count belongs to */
	int64_t			 hist_count;	/* committed, not yet written */
	struct log_rl		 rl_invalid, rl_error;
	struct ingest_listener {
		ingest_stored_fn  fn;
		void		 *arg;
	}			 listeners[INGEST_MAX_LISTENERS];
	size_t			 nlisteners;
};

static const char *const result_names[] = {
	[INGEST_NEW] = "new",
	[INGEST_DUPLICATE] = "duplicate",
	[INGEST_INVALID] = "invalid",
	[INGEST_TOO_LARGE] = "too large",
	[INGEST_UNREQUESTED] = "unrequested",
	[INGEST_ERROR] = "error",
};

static const char *const source_names[] = {
	[INGEST_LIVE] = "live",
	[INGEST_BACKFILL] = "backfill",
	[INGEST_JOB] = "job",
	[INGEST_RECOVERY] = "recovery",
	[INGEST_CLIENT] = "client",
	[INGEST_IMPORT] = "import",
};

const char *
ingest_result_name(enum ingest_result r)
{
	if ((unsigned)r >= sizeof(result_names) / sizeof(result_names[0]))
		return "?";
	return result_names[r];
}

const char *
ingest_source_name(enum ingest_source s)
{
	if ((unsigned)s >= sizeof(source_names) / sizeof(source_names[0]))
		return "?";
	return source_names[s];
}

/* The recent-id set: direct-mapped on the id's first bytes (uniform). */
static size_t
recent_slot(const uint8_t id[32])
{
	return ((size_t)id[0] | (size_t)id[1] << 8 | (size_t)id[2] << 16) &
	    (INGEST_RECENT_IDS - 1);
}

/* Whether id is in the set; if so its stored fields into info. */
static bool
recent_get(const struct ingest *ing, const uint8_t id[32],
    struct ingest_info *info)
{
	size_t				 s = recent_slot(id);
	const struct ingest_recent	*r = &ing->recent[s];

	if (!ing->recent_used[s] || memcmp(r->id, id, 32) != 0)
		return false;
	memcpy(info->id, id, 32);
	memcpy(info->pubkey, r->pubkey, 32);
	info->created_at = r->created_at;
	info->kind = r->kind;
	return true;
}

/* Remember a stored event (info holds its stored fields). */
static void
recent_add(struct ingest *ing, const struct ingest_info *info)
{
	size_t			 s = recent_slot(info->id);
	struct ingest_recent	*r = &ing->recent[s];

	memcpy(r->id, info->id, 32);
	memcpy(r->pubkey, info->pubkey, 32);
	r->created_at = info->created_at;
	r->kind = info->kind;
	ing->recent_used[s] = 1;
}

/* The store removed id: it is no longer known stored. */
static void
recent_forget(void *arg, const uint8_t id[32])
{
	struct ingest	*ing = arg;
	size_t		 s = recent_slot(id);

	if (ing->recent_used[s] && memcmp(ing->recent[s].id, id, 32) == 0)
		ing->recent_used[s] = 0;
}

/* Forget every recent id: a rolled-back batch may have held some. */
static void
recent_clear(struct ingest *ing)
{
	memset(ing->recent_used, 0, INGEST_RECENT_IDS);
}

/*
 * Top of a round: commit a batch that is old enough or large enough. A
 * younger, smaller one keeps collecting the next rounds' events and
 * pages, so a steady stream costs a commit every few seconds instead of
 * one per round (each commit rewrites the index pages it touched: measured
 * 4.6 MB per 1,000 events written with batches of 500, 3.6 MB with 2,000;
 * over a paced drain, tests/bench/write_ratio.sh, 7.68 bytes written per
 * byte of JSON with batches of 250 ms, 5.76 with 2 s, 4.80 with 5 s). A
 * power cut loses at most that long of fetched events, never a cursor
 * past them: cursors commit in the same batch.
 */
static void
ingest_hook(struct loop *loop, void *arg)
{
	struct ingest	*ing = arg;

	if (ing->tx_open && (ing->batch_events >= ing->commit_events ||
	    loop_now_ms(loop) - ing->batch_opened_ms >= ing->commit_min_ms))
		ingest_flush(ing);
}

/*
 * The deadline armed when a batch opens: a loop with nothing else to do
 * would otherwise sleep in poll with the batch open. So a batch is never
 * older than INGEST_COMMIT_MIN_MS plus one round when it commits.
 */
static void
ingest_commit_due(struct loop *loop, void *arg)
{
	struct ingest	*ing = arg;

	(void)loop;
	ing->commit_timer = 0;
	if (ing->tx_open)
		ingest_flush(ing);
}

/* Arm the commit deadline of the open batch (no loop: nothing to arm). */
static void
ingest_arm(struct ingest *ing)
{
	if (ing->loop != NULL && ing->commit_timer == 0)
		ing->commit_timer = loop_timer_add(ing->loop,
		    ing->commit_min_ms, ingest_commit_due, ing);
}

/* The history bucket of the wall clock now; 0 while the clock is unset. */
static int64_t
history_bucket(void)
{
	int64_t	now = clock_wall_s();

	if (now < INGEST_HISTORY_WALL_MIN_S)
		return 0;
	return now - now % INGEST_HISTORY_BUCKET_S;
}

/*
 * Write the committed count of a bucket that has ended (or of any bucket
 * when all is set: the daemon stops), inside the open transaction. 1 when
 * a row was written (hist_count is cleared once it commits), 0 when none
 * was due, -1 on a store error.
 */
static int
history_write(struct ingest *ing, int64_t bucket, bool all)
{
	if (ing->hist_count == 0 || ing->hist_start == 0 ||
	    (!all && bucket == ing->hist_start))
		return 0;
	if (store_history_add(ing->store, ing->hist_start, ing->hist_count,
	    (bucket ? bucket : ing->hist_start) - INGEST_HISTORY_S) == -1)
		return -1;
	return 1;
}

struct ingest *
ingest_new(struct loop *loop, struct store *st)
{
	struct ingest	*ing;

	if ((ing = calloc(1, sizeof(*ing))) == NULL)
		return NULL;
	ing->loop = loop;
	ing->store = st;
	ing->max_event_bytes = EVENT_MAX_BYTES_CEILING;
	ing->commit_min_ms = INGEST_COMMIT_MIN_MS;
	ing->commit_events = INGEST_COMMIT_EVENTS;
	buf_init(&ing->json, EVENT_SERIAL_MAX_BYTES);
	minring_init(&ing->minutes, clock_mono_ms());
	ing->recent = calloc(INGEST_RECENT_IDS, sizeof(*ing->recent));
	ing->recent_used = calloc(INGEST_RECENT_IDS, 1);
	if (ing->recent == NULL || ing->recent_used == NULL ||
	    (loop != NULL && loop_hook_add(loop, ingest_hook, ing) == -1)) {
		free(ing->recent);
		free(ing->recent_used);
		free(ing);
		return NULL;
	}
	store_on_removed(st, recent_forget, ing);
	return ing;
}

void
ingest_free(struct ingest *ing)
{
	if (ing == NULL)
		return;
	if (ing->tx_open)
		ingest_flush(ing);
	/* The running bucket's count, so a restart keeps it; -1 loses it. */
	if (ing->hist_count > 0 && store_tx_depth(ing->store) == 0 &&
	    store_begin(ing->store) == 0) {
		if (history_write(ing, history_bucket(), true) == 1)
			(void)store_commit(ing->store);
		else
			(void)store_rollback(ing->store);
	}
	store_on_removed(ing->store, NULL, NULL);
	if (ing->loop != NULL) {
		loop_hook_del(ing->loop, ingest_hook, ing);
		loop_timer_cancel(ing->loop, ing->commit_timer);
	}
	while (ing->nnewest > 0)
		free(ing->newest[--ing->nnewest].relay);
	buf_free(&ing->json);
	free(ing->recent);
	free(ing->recent_used);
	free(ing);
}

void
ingest_configure(struct ingest *ing, size_t max_event_bytes,
    bool queue_for_uplink)
{
	if (max_event_bytes == 0 || max_event_bytes > EVENT_MAX_BYTES_CEILING)
		max_event_bytes = EVENT_MAX_BYTES_CEILING;
	ing->max_event_bytes = max_event_bytes;
	ing->queue = queue_for_uplink;
}

void
ingest_commit_policy(struct ingest *ing, uint64_t min_ms, size_t events)
{
	ing->commit_min_ms = min_ms;
	ing->commit_events = events;
}

const struct ingest_stats *
ingest_stats(const struct ingest *ing)
{
	return &ing->stats;
}

const struct minring *
ingest_minutes(const struct ingest *ing)
{
	return &ing->minutes;
}

bool
ingest_tx_open(const struct ingest *ing)
{
	return ing->tx_open;
}

int
ingest_tx(struct ingest *ing)
{
	if (ing->tx_open || store_tx_depth(ing->store) > 0)
		return 0;
	if (store_begin(ing->store) == -1)
		return -1;
	ing->tx_open = true;
	ing->batch_events = 0;
	ing->batch_opened_ms = clock_mono_ms();
	ingest_arm(ing);
	return 0;
}

/* Drop the per-relay marks of a batch that will not commit. */
static void
newest_clear(struct ingest *ing)
{
	while (ing->nnewest > 0)
		free(ing->newest[--ing->nnewest].relay);
}

/* Write the batch's per-relay marks into it. 0 or -1. */
static int
newest_write(struct ingest *ing)
{
	size_t	i;
	int	rc = 0;

	for (i = 0; i < ing->nnewest && rc == 0; i++)
		rc = store_relay_newest_note(ing->store, ing->newest[i].relay,
		    ing->newest[i].created_at);
	newest_clear(ing);
	return rc;
}

/* Remember relay's newest live created_at; written at commit. 0 or -1. */
static int
newest_note(struct ingest *ing, const char *relay, int64_t created_at)
{
	size_t	i;

	for (i = 0; i < ing->nnewest; i++)
		if (strcmp(ing->newest[i].relay, relay) == 0) {
			if (created_at > ing->newest[i].created_at)
				ing->newest[i].created_at = created_at;
			return 0;
		}
	if (ing->nnewest == INGEST_NEWEST_RELAYS ||
	    (ing->newest[i].relay = strdup(relay)) == NULL)
		return store_relay_newest_note(ing->store, relay, created_at);
	ing->newest[i].created_at = created_at;
	ing->nnewest++;
	return 0;
}

/* A batch of n events committed at bucket: count them in it. */
static void
history_note(struct ingest *ing, int64_t bucket, int wrote, size_t n)
{
	if (wrote == 1)
		ing->hist_count = 0;
	if (bucket == 0)
		return;		/* no wall clock: not counted */
	if (bucket != ing->hist_start) {
		/* A bucket whose write failed is merged into the new one. */
		ing->hist_start = bucket;
	}
	ing->hist_count += (int64_t)n;
}

size_t
ingest_history_pending(const struct ingest *ing, int64_t start[2],
    int64_t count[2])
{
	int64_t	b = history_bucket();
	size_t	n = 0;

	if (ing->hist_count > 0 && ing->hist_start != 0) {
		start[n] = ing->hist_start;
		count[n++] = ing->hist_count;
	}
	if (ing->tx_open && ing->batch_events > 0 && b != 0) {
		start[n] = b;
		count[n++] = (int64_t)ing->batch_events;
	}
	return n;
}

int
ingest_flush(struct ingest *ing)
{
	int64_t	bucket = history_bucket();
	int	rc, wrote;

	if (!ing->tx_open)
		return 0;
	if (store_tx_depth(ing->store) != 1) {
		log_warnx("ingest: a nested transaction is still open at the "
		    "end of the round; batch left open");
		ingest_arm(ing);	/* try again later */
		return -1;
	}
	loop_timer_clear(ing->loop, &ing->commit_timer);
	ing->tx_open = false;
	if (newest_write(ing) == -1 ||
	    (wrote = history_write(ing, bucket, false)) == -1) {
		store_rollback(ing->store);
		recent_clear(ing);
		ing->batch_events = 0;
		ing->stats.lost_batches++;
		return -1;
	}
	rc = store_commit(ing->store);
	if (rc == -1) {
		log_rl(&ing->rl_error, LOG_LEVEL_ERROR, "ingest: batch of %zu "
		    "events lost: commit failed", ing->batch_events);
		recent_clear(ing);
		ing->stats.lost_batches++;
	} else {
		ing->stats.transactions++;
		history_note(ing, bucket, wrote, ing->batch_events);
	}
	ing->batch_events = 0;
	return rc;
}

/*
 * Read id (and what info needs) from an event object without judging the
 * rest: enough to dedup. 0, or -1 when the id is absent or malformed (the
 * full parse then reports why).
 */
static int
peek_id(const cJSON *obj, uint8_t id[32])
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(obj, "id");

	if (!cJSON_IsString(v) || strlen(v->valuestring) != 64 ||
	    hex_decode(v->valuestring, 64, id, 32) == -1)
		return -1;
	return 0;
}

/*
 * Whether a copy of a stored id claims what the stored row says (info):
 * the same pubkey, created_at and kind. Nothing else of the copy is
 * looked at; it is not stored.
 */
static bool
claims_match(const cJSON *obj, const struct ingest_info *info)
{
	const cJSON	*pk = cJSON_GetObjectItemCaseSensitive(obj, "pubkey");
	const cJSON	*at = cJSON_GetObjectItemCaseSensitive(obj, "created_at");
	const cJSON	*k = cJSON_GetObjectItemCaseSensitive(obj, "kind");
	uint8_t		 claimed[32];

	return cJSON_IsString(pk) && strlen(pk->valuestring) == 64 &&
	    hex_decode(pk->valuestring, 64, claimed, 32) == 0 &&
	    memcmp(claimed, info->pubkey, 32) == 0 &&
	    cJSON_IsNumber(at) && at->valuedouble == (double)info->created_at &&
	    cJSON_IsNumber(k) && k->valuedouble == (double)info->kind;
}

static void
info_from_event(const struct event *ev, struct ingest_info *info)
{
	memcpy(info->id, ev->id, 32);
	memcpy(info->pubkey, ev->pubkey, 32);
	info->created_at = ev->created_at;
	info->kind = ev->kind;
}

/*
 * 1 stored (its stored fields into info), 0 not, -1 on a store error.
 * Recent ids checked first.
 */
static int
ingest_known(struct ingest *ing, const uint8_t id[32],
    struct ingest_info *info)
{
	struct store_dedup	row;
	int			rc;

	if (recent_get(ing, id, info))
		return 1;
	if ((rc = store_dedup_probe(ing->store, id, &row)) != 1)
		return rc;
	memcpy(info->id, id, 32);
	memcpy(info->pubkey, row.pubkey, 32);
	info->created_at = row.created_at;
	info->kind = row.kind;
	recent_add(ing, info);
	return 1;
}

static enum ingest_result
ingest_invalid(struct ingest *ing, const struct event *ev,
    enum event_result er, const char *relay)
{
	char	hex[65] = "?";

	if (ev->id_ok)
		hex_encode(ev->id, 32, hex, sizeof(hex));
	log_rl(&ing->rl_invalid, LOG_LEVEL_WARN, "ingest: dropped event %s "
	    "from %s: %s", hex, relay ? relay : "-", event_result_str(er));
	ing->stats.invalid++;
	return INGEST_INVALID;
}

/* Tell every listener of the new event ev, stored as ing->json. */
static void
ingest_tell(struct ingest *ing, const struct event *ev,
    enum ingest_source src)
{
	struct ingest_stored	s = { ev, (const char *)ing->json.data,
				    ing->json.len, src };
	size_t			i;

	for (i = 0; i < ing->nlisteners; i++)
		ing->listeners[i].fn(ing->listeners[i].arg, &s);
}

/*
 * Time, id, signature. The id is hashed while the canonical JSON to store
 * is written into ing->json (one serialization for both), so on EVENT_OK
 * ing->json holds exactly the bytes whose hash was checked.
 */
static enum event_result
ingest_verify(struct ingest *ing, const struct event *ev)
{
	enum event_result	er;
	uint8_t			id[32];

	if ((er = event_check_time(ev, clock_wall_s())) != EVENT_OK)
		return er;
	buf_reset(&ing->json);
	if (event_to_json_id(ev, &ing->json, id) == -1)
		return EVENT_TOO_LARGE;
	if (memcmp(id, ev->id, sizeof(id)) != 0)
		return EVENT_ID_MISMATCH;
	ing->stats.sig_checks++;
	return event_check_sig(ev);
}

/*
 * Whether a filter matches ev; if none does, *off_time says whether one
 * would without its since and until (a relay ignoring them, not events
 * nobody asked for).
 */
static bool
ingest_requested(const struct event *ev, const struct filter *filters,
    size_t n, bool *off_time)
{
	struct filter	f;
	size_t		i;

	*off_time = false;
	if (n == 0)
		return true;
	for (i = 0; i < n; i++)
		if (filter_match(&filters[i], ev))
			return true;
	for (i = 0; i < n && !*off_time; i++) {
		f = filters[i];		/* shallow: only read */
		f.has &= ~(FILTER_HAS_SINCE | FILTER_HAS_UNTIL);
		*off_time = filter_match(&f, ev);
	}
	return false;
}

/* Count a refusal by the rule rc (an enum store_insert). */
static void
ingest_count_rule(struct ingest *ing, int rc)
{
	switch (rc) {
	case STORE_INSERT_OLDER:
		ing->stats.superseded++;
		break;
	case STORE_INSERT_EXPIRED:
		ing->stats.expired++;
		break;
	case STORE_INSERT_DELETED:
		ing->stats.deleted++;
		break;
	case STORE_INSERT_VANISHED:
		ing->stats.vanished++;
		break;
	default:
		break;
	}
}

/*
 * An id withdrawn before (its tombstone made from a verified event): 1
 * with info from the tombstone and the refusal in info->not_kept, 0 when
 * id has none, -1 on a store error.
 */
static int
ingest_withdrawn(struct ingest *ing, const uint8_t id[32],
    struct ingest_info *info)
{
	struct store_withdrawn	w;
	int			rc;

	if ((rc = store_withdrawn_known(ing->store, id, &w)) != 1)
		return rc;
	memcpy(info->id, id, 32);
	memcpy(info->pubkey, w.pubkey, 32);
	info->created_at = w.created_at;
	info->kind = (uint32_t)w.kind;
	info->not_kept = store_withdrawn_result(w.why);
	return 1;
}

/*
 * Insert a verified event (its JSON in ing->json, written by
 * ingest_verify) into the batch. INGEST_NEW, INGEST_ERROR, or
 * INGEST_DUPLICATE with *not_kept the rule that kept it out (0: the id
 * was stored).
 */
static enum ingest_result
ingest_store(struct ingest *ing, const struct event *ev,
    enum ingest_source src, const char *relay, int *not_kept)
{
	struct store_event_row	row;
	struct ingest_info	known;
	int			rc;

	/*
	 * Ephemeral kinds (NIP-01): the listeners (live LAN subscribers) are
	 * told, nothing is stored or queued for the uplink.
	 */
	if (ev->kind >= 20000 && ev->kind < 30000) {
		ing->stats.ephemeral++;
		return INGEST_NEW;
	}
	if (ingest_tx(ing) == -1)
		goto fail;
	row.id = ev->id;
	row.pubkey = ev->pubkey;
	row.kind = ev->kind;
	row.created_at = ev->created_at;
	row.json = (const char *)ing->json.data;
	row.json_len = ing->json.len;
	row.source = ingest_source_name(src);
	row.first_relay = relay;
	row.received_at = clock_wall_s();
	row.tags = ev->tags;
	if ((rc = store_event_insert(ing->store, &row, ing->queue)) == -1)
		goto fail;
	info_from_event(ev, &known);
	switch (rc) {
	case STORE_INSERT_NEW:
		break;
	case STORE_INSERT_REPLACED:
		ing->stats.replaced++;
		break;
	case STORE_INSERT_OLDER:
	case STORE_INSERT_EXPIRED:
	case STORE_INSERT_DELETED:
	case STORE_INSERT_VANISHED:
		/*
		 * Kept out by a rule (its tombstone written, so the next copy
		 * costs no check): received like a copy of a stored event.
		 */
		ingest_count_rule(ing, rc);
		*not_kept = rc;
		return INGEST_DUPLICATE;
	case STORE_INSERT_EPHEMERAL:	/* taken above; never here */
		ing->stats.ephemeral++;
		return INGEST_NEW;
	default:
		recent_add(ing, &known);
		ing->stats.duplicates++;
		return INGEST_DUPLICATE;
	}
	recent_add(ing, &known);
	ing->stats.stored++;
	ing->stats.bytes_stored += ing->json.len;
	minring_add(&ing->minutes, clock_mono_ms(), 1);
	if (++ing->batch_events >= INGEST_MAX_BATCH_EVENTS)
		ingest_flush(ing);
	return INGEST_NEW;
fail:
	log_rl(&ing->rl_error, LOG_LEVEL_ERROR, "ingest: event not stored "
	    "(store failure)");
	ing->stats.errors++;
	return INGEST_ERROR;
}

/*
 * The common tail once the size is checked and obj (owned here, taken from
 * its message or parsed from text) is in hand.
 */
static enum ingest_result
ingest_object(struct ingest *ing, cJSON *obj, const struct filter *filters,
    size_t nfilters, enum ingest_source src, const char *relay,
    struct ingest_info *info)
{
	struct event		ev;
	struct ingest_info	local;
	enum event_result	er;
	enum ingest_result	res;
	uint8_t			id[32];
	int			known = 0;

	if (info == NULL)
		info = &local;
	info->why = EVENT_OK;
	info->off_time = false;
	info->not_kept = 0;
	if (peek_id(obj, id) == 0 &&
	    ((known = ingest_known(ing, id, info)) != 0 ||
	    (known = ingest_withdrawn(ing, id, info)) != 0)) {
		res = known == -1 ? INGEST_ERROR : claims_match(obj, info) ?
		    INGEST_DUPLICATE : INGEST_INVALID;
		cJSON_Delete(obj);
		if (res == INGEST_INVALID) {
			log_rl(&ing->rl_invalid, LOG_LEVEL_WARN, "ingest: dropped "
			    "a copy of a stored event from %s: its author, time "
			    "or kind differ from the stored one", relay ? relay :
			    "-");
			ing->stats.invalid++;
		}
		/* Stored, so verified once; still never past now for since. */
		if (res == INGEST_DUPLICATE && src == INGEST_LIVE &&
		    relay != NULL && info->created_at <= clock_wall_s())
			(void)newest_note(ing, relay, info->created_at);
		if (res == INGEST_DUPLICATE && info->not_kept != 0)
			ing->stats.withdrawn++;
		else
			ing->stats.duplicates += res == INGEST_DUPLICATE;
		ing->stats.errors += res == INGEST_ERROR;
		return res;
	}
	event_init(&ev);
	if ((er = event_from_cjson(&ev, obj)) != EVENT_OK) {
		info->why = er;
		return ingest_invalid(ing, &ev, er, relay);
	}
	/* The filter first: it costs nothing beside a signature check. */
	if (!ingest_requested(&ev, filters, nfilters, &info->off_time)) {
		ing->stats.unrequested++;
		log_info_rl("ingest: dropped an event from %s that its "
		    "subscription did not ask for", relay ? relay : "-");
		res = INGEST_UNREQUESTED;
	} else if ((er = ingest_verify(ing, &ev)) != EVENT_OK) {
		info->why = er;
		res = ingest_invalid(ing, &ev, er, relay);
	} else
		res = ingest_store(ing, &ev, src, relay, &info->not_kept);
	info_from_event(&ev, info);
	if (res == INGEST_NEW && src == INGEST_LIVE && relay != NULL)
		(void)newest_note(ing, relay, ev.created_at);
	if (res == INGEST_NEW)
		ingest_tell(ing, &ev, src);
	event_free(&ev);
	return res;
}

enum ingest_result
ingest_event(struct ingest *ing, struct relay_msg *msg,
    const struct filter *filters, size_t nfilters, enum ingest_source src,
    const char *relay_url, struct ingest_info *info)
{
	cJSON	*obj;

	ing->stats.received++;
	if (msg->type != RELAY_MSG_EVENT || msg->event == NULL) {
		ing->stats.invalid++;
		return INGEST_INVALID;
	}
	if (msg->event_raw_len > ing->max_event_bytes) {
		log_info_rl("ingest: dropped an event of %zu bytes from %s "
		    "(limit %zu)", msg->event_raw_len, relay_url ? relay_url :
		    "-", ing->max_event_bytes);
		ing->stats.too_large++;
		return INGEST_TOO_LARGE;
	}
	obj = relay_msg_take_event(msg);
	return ingest_object(ing, obj, filters, nfilters, src, relay_url, info);
}

enum ingest_result
ingest_event_json(struct ingest *ing, const char *text, size_t len,
    const struct filter *filters, size_t nfilters, enum ingest_source src,
    const char *relay_url, struct ingest_info *info)
{
	cJSON	*obj;

	ing->stats.received++;
	if (info != NULL)
		info->why = EVENT_TOO_LARGE;
	if (len > ing->max_event_bytes || jsonscan_check(text, len,
	    EVENT_MAX_JSON_VALUES, EVENT_MAX_JSON_DEPTH, NULL) != JSONSCAN_OK) {
		ing->stats.too_large++;
		return INGEST_TOO_LARGE;
	}
	if ((obj = cJSON_ParseWithLength(text, len)) == NULL ||
	    !cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		if (info != NULL)
			info->why = EVENT_BAD_JSON;
		ing->stats.invalid++;
		return INGEST_INVALID;
	}
	return ingest_object(ing, obj, filters, nfilters, src, relay_url, info);
}

int
ingest_listen(struct ingest *ing, ingest_stored_fn fn, void *arg)
{
	if (ing->nlisteners == INGEST_MAX_LISTENERS)
		return -1;
	ing->listeners[ing->nlisteners].fn = fn;
	ing->listeners[ing->nlisteners].arg = arg;
	ing->nlisteners++;
	return 0;
}

void
ingest_unlisten(struct ingest *ing, ingest_stored_fn fn, void *arg)
{
	size_t	i;

	for (i = 0; i < ing->nlisteners; i++) {
		if (ing->listeners[i].fn != fn || ing->listeners[i].arg != arg)
			continue;
		memmove(&ing->listeners[i], &ing->listeners[i + 1],
		    (ing->nlisteners - i - 1) * sizeof(ing->listeners[0]));
		ing->nlisteners--;
		return;
	}
}
