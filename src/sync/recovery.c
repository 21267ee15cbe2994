/*
 * recovery.c — the policy of the missing-event recovery index: when a
 * relay's next fetch is due, which ids it asks for, what an answer does to
 * each id's budget and to the relay's health. The rows are
 * store/recovery.c's; this file only decides and calls it.
 *
 * It owns nothing but the two delays and a scratch list of the relays one
 * recovery_satisfied call touched. It never talks to a relay, never reads
 * a relay's whole queue (an attempt reads one page), and never changes the
 * store half-way: each operation whose writes belong together runs them in
 * one (nested) transaction and rolls it back on any error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backoff.h"
#include "core/log.h"
#include "store/recovery.h"
#include "store/store.h"
#include "sync/recovery.h"

/* The relays one recovery_satisfied call cleared ids on. */
struct rec_tally {
	char			*relay;
	int64_t			 pending;	/* pending ids cleared */
	bool			 finished;	/* its last pending id went */
	struct recovery_outcome	 out;
};

struct recovery {
	struct store		*st;
	int64_t			 base_ms, max_ms;
	struct rec_tally	*tally;
	size_t			 ntally, captally;
	bool			 tally_failed;	/* out of memory mid-call */
};

static const char *const health_names[] = {
	[RECOVERY_HEALTH_CONNECTED] = "connected",
	[RECOVERY_HEALTH_SYNC_FAILURES] = "connected, historic sync failures",
};

const char *
recovery_health_name(enum recovery_health h)
{
	if ((unsigned)h >= sizeof(health_names) / sizeof(health_names[0]))
		return "?";
	return health_names[h];
}

struct recovery *
recovery_new(struct store *st, int64_t base_ms, int64_t max_ms)
{
	struct recovery	*r;
	int64_t		 released;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		log_warn("recovery: new");
		return NULL;
	}
	r->st = st;
	recovery_set_backoff(r, base_ms, max_ms);
	if ((released = store_recovery_release(st)) == -1) {
		free(r);
		return NULL;
	}
	if (released > 0)
		log_info("recovery: %" PRId64 " attempt(s) in flight when the "
		    "daemon stopped are given back (no failure counted)",
		    released);
	return r;
}

static void
tally_clear(struct recovery *r)
{
	size_t	i;

	for (i = 0; i < r->ntally; i++)
		free(r->tally[i].relay);
	r->ntally = 0;
	r->tally_failed = false;
}

void
recovery_free(struct recovery *r)
{
	if (r == NULL)
		return;
	tally_clear(r);
	free(r->tally);
	free(r);
}

void
recovery_set_backoff(struct recovery *r, int64_t base_ms, int64_t max_ms)
{
	r->base_ms = base_ms < 1 ? 1 : base_ms;
	r->max_ms = max_ms < 1 ? 1 : max_ms;
}

int64_t
recovery_backoff_ms(const struct recovery *r, int64_t failures)
{
	uint32_t	doublings;

	if (failures < 0)
		failures = 0;
	doublings = failures > RECOVERY_BACKOFF_MAX_DOUBLINGS ?
	    RECOVERY_BACKOFF_MAX_DOUBLINGS : (uint32_t)failures;
	return (int64_t)backoff_ms((uint64_t)r->base_ms, doublings,
	    (uint64_t)r->max_ms);
}

/*
 * The longest wait this policy ever sets: a deferral waits base, a
 * backoff at most max. A deadline further ahead than that came from a
 * wall clock that has since stepped back.
 */
static int64_t
rec_longest(const struct recovery *r)
{
	return r->base_ms > r->max_ms ? r->base_ms : r->max_ms;
}

/* When row's next attempt is due, as seen at now_ms. */
static int64_t
rec_due(const struct recovery *r, const struct store_recovery_relay *row,
    int64_t now_ms)
{
	if (row->next_attempt_ms > now_ms &&
	    row->next_attempt_ms - now_ms > rec_longest(r))
		return now_ms;
	return row->next_attempt_ms;
}

/* A row with nothing to show: no ids, nothing in flight, health fine. */
static bool
rec_empty(const struct store_recovery_relay *row)
{
	return row->pending == 0 && row->expired == 0 && !row->in_flight &&
	    row->can_restore_health;
}

static void
rec_row_init(struct store_recovery_relay *row, const char *relay)
{
	memset(row, 0, sizeof(*row));
	snprintf(row->relay, sizeof(row->relay), "%s", relay);
	row->attempt_hi = -1;
	row->can_restore_health = true;
}

static void
rec_batch_note(struct store_recovery_relay *row, uint64_t batch)
{
	size_t	i;

	for (i = 0; i < row->nbatches; i++)
		if (row->batches[i] == batch)
			return;
	if (row->nbatches < RECOVERY_MAX_SOURCE_BATCHES)
		row->batches[row->nbatches++] = batch;
}

/* Read the trigger-kept counts of row's relay into row. 0 or -1. */
static int
rec_counts(struct recovery *r, struct store_recovery_relay *row)
{
	struct store_recovery_relay	cur;

	if (store_recovery_relay_get(r->st, row->relay, &cur) != 1) {
		log_warnx("recovery: %s: relay row missing", row->relay);
		return -1;
	}
	row->pending = cur.pending;
	row->expired = cur.expired;
	return 0;
}

/* Add ids[0..n) at queue positions seq, seq + 1, ...; count into out. */
static int
rec_add_ids(struct recovery *r, const char *relay, const uint8_t (*ids)[32],
    size_t n, int64_t seq, int64_t now_ms, struct recovery_registered *out)
{
	size_t	i;
	int	rc;

	for (i = 0; i < n; i++) {
		rc = store_recovery_id_add(r->st, relay, ids[i],
		    seq + (int64_t)i, now_ms / 1000);
		if (rc == -1)
			return -1;
		if (rc == STORE_RECOVERY_ADDED || rc == STORE_RECOVERY_REVIVED)
			out->added++;
		else if (rc == STORE_RECOVERY_PENDING)
			out->already_pending++;
		else
			out->already_stored++;
	}
	return 0;
}

int
recovery_register(struct recovery *r, const char *relay, uint64_t batch,
    const uint8_t (*ids)[32], size_t n, bool relay_degraded, int64_t now_ms,
    struct recovery_registered *out)
{
	struct recovery_registered	 local;
	struct store_recovery_relay	 row;
	int64_t				 seq;
	int				 found;

	if (out == NULL)
		out = &local;
	memset(out, 0, sizeof(*out));
	if (store_begin(r->st) == -1)
		return -1;
	if ((found = store_recovery_relay_get(r->st, relay, &row)) == -1)
		goto fail;
	if (found == 0)
		rec_row_init(&row, relay);
	/* Work arriving on an idle relay waits one base delay, as new. */
	if (row.pending == 0 && !row.in_flight)
		row.next_attempt_ms = now_ms + r->base_ms;
	if (relay_degraded)
		row.can_restore_health = false;
	rec_batch_note(&row, batch);
	seq = row.queue_next;
	row.queue_next += (int64_t)n;
	if (store_recovery_relay_put(r->st, &row, now_ms) == -1 ||
	    rec_add_ids(r, relay, ids, n, seq, now_ms, out) == -1 ||
	    rec_counts(r, &row) == -1)
		goto fail;
	if (rec_empty(&row) && store_recovery_relay_delete(r->st, relay) == -1)
		goto fail;
	if (store_commit(r->st) == -1) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	out->pending_total = row.pending;
	log_debug("recovery: %s: batch %" PRIu64 " left %zu id(s) missing: "
	    "%" PRId64 " new, %" PRId64 " already pending, %" PRId64 " stored "
	    "meanwhile; %" PRId64 " pending", relay, batch, n, out->added,
	    out->already_pending, out->already_stored, row.pending);
	return 0;
fail:
	store_rollback(r->st);
	memset(out, 0, sizeof(*out));
	return -1;
}

/*
 * Hand out the head of row's queue and move it behind the rest; row
 * becomes in flight. Inside the caller's transaction. 0 or -1.
 */
static int
rec_take_page(struct recovery *r, struct store_recovery_relay *row,
    struct recovery_attempt *a, int64_t now_ms)
{
	int64_t	n, first, last, moved;

	n = store_recovery_page(r->st, row->relay,
	    RECOVERY_MAX_IDS_PER_ATTEMPT, a->ids, &first, &last);
	if (n <= 0) {
		if (n == 0)
			log_warnx("recovery: %s: %" PRId64 " pending but none "
			    "in the queue", row->relay, row->pending);
		return -1;
	}
	moved = store_recovery_requeue(r->st, row->relay, first, last,
	    row->queue_next);
	if (moved != n) {
		if (moved >= 0)
			log_warnx("recovery: %s: moved %" PRId64 " of %" PRId64
			    " ids behind the queue", row->relay, moved, n);
		return -1;
	}
	row->attempt_lo = row->queue_next;
	row->attempt_hi = row->queue_next + (last - first);
	row->queue_next = row->attempt_hi + 1;
	row->in_flight = true;
	row->attempts_total++;
	a->n = (size_t)n;
	a->number = row->attempts_total;
	return store_recovery_relay_put(r->st, row, now_ms);
}

int
recovery_begin(struct recovery *r, const char *relay, int64_t now_ms,
    struct recovery_attempt *a)
{
	struct store_recovery_relay	row;
	int				found;

	a->n = 0;
	a->number = a->due_ms = 0;
	if ((found = store_recovery_relay_get(r->st, relay, &row)) == -1)
		return -1;
	if (found == 0 || (row.pending == 0 && !row.in_flight))
		return RECOVERY_IDLE;
	if (row.in_flight)
		return RECOVERY_BUSY;
	if (rec_due(r, &row, now_ms) > now_ms) {
		a->due_ms = row.next_attempt_ms;
		return RECOVERY_NOT_DUE;
	}
	if (store_begin(r->st) == -1)
		return -1;
	if (rec_take_page(r, &row, a, now_ms) == -1) {
		store_rollback(r->st);
		a->n = 0;
		return -1;
	}
	if (store_commit(r->st) == -1) {
		a->n = 0;
		return -1;
	}
	log_debug("recovery: %s: attempt %" PRId64 " asks for %zu of %" PRId64
	    " missing id(s)", relay, a->number, a->n, row.pending);
	return RECOVERY_BEGUN;
}

/* Fill the fields every outcome carries from row. */
static void
rec_outcome(struct recovery_outcome *out, enum recovery_result result,
    const struct store_recovery_relay *row)
{
	out->result = result;
	out->recovered_total = row->recovered_total;
	out->remaining = row->pending;
	out->attempts = row->attempts_total;
	out->can_restore_health = row->can_restore_health;
}

/*
 * Nothing is pending on row any more: FULLY_RECOVERED. The row goes when
 * nothing about it is left to show, else it is kept (pending 0). 0 or -1.
 */
static int
rec_finish(struct recovery *r, struct store_recovery_relay *row,
    int64_t recovered, int64_t now_ms, struct recovery_outcome *out)
{
	rec_outcome(out, RECOVERY_FULLY_RECOVERED, row);
	out->recovered = recovered;
	if (rec_empty(row))
		return store_recovery_relay_delete(r->st, row->relay) == -1 ?
		    -1 : 0;
	return store_recovery_relay_put(r->st, row, now_ms);
}

/*
 * The ids of the attempt still pending failed once more: expire those out
 * of budget, schedule the next attempt after the most-failed one. 0 or -1.
 */
static int
rec_charge(struct recovery *r, struct store_recovery_relay *row,
    int64_t recovered, int64_t now_ms, struct recovery_outcome *out)
{
	int64_t	expired, worst, delay;

	if (store_recovery_fail(r->st, row->relay, row->attempt_lo,
	    row->attempt_hi) == -1 ||
	    (expired = store_recovery_expire(r->st, row->relay,
	    row->attempt_lo, row->attempt_hi,
	    RECOVERY_MAX_FAILURES_PER_ID)) == -1)
		return -1;
	if (expired > 0) {
		/* The abandoned ids leave a gap recovery cannot close. */
		row->can_restore_health = false;
		row->expired_total += expired;
	}
	if (rec_counts(r, row) == -1)
		return -1;
	out->recovered = recovered;
	out->expired = expired;
	if (row->pending == 0) {
		rec_outcome(out, RECOVERY_EXPIRED, row);
		return store_recovery_relay_put(r->st, row, now_ms);
	}
	if (store_recovery_max_failures(r->st, row->relay, &worst) == -1)
		return -1;
	delay = recovery_backoff_ms(r, worst);
	row->next_attempt_ms = now_ms + delay;
	rec_outcome(out, expired > 0 ? RECOVERY_SOME_EXPIRED : recovered > 0 ?
	    RECOVERY_PARTIALLY_RECOVERED : RECOVERY_RETRY_SCHEDULED, row);
	out->next_attempt_in_ms = delay;
	return store_recovery_relay_put(r->st, row, now_ms);
}

/*
 * Remove what arrived: arrived[0..n) still pending, and the attempt's ids
 * whose event is stored by now. Number removed, or -1.
 */
static int64_t
rec_take_arrived(struct recovery *r, const struct store_recovery_relay *row,
    const uint8_t (*arrived)[32], size_t n)
{
	int64_t	got = 0, stored;
	size_t	i;
	int	rc;

	for (i = 0; i < n; i++) {
		if ((rc = store_recovery_drop(r->st, row->relay,
		    arrived[i])) == -1)
			return -1;
		got += rc;
	}
	stored = store_recovery_drop_stored(r->st, row->relay,
	    row->attempt_lo, row->attempt_hi);
	return stored == -1 ? -1 : got + stored;
}

static void
rec_log_outcome(const char *relay, const struct recovery_outcome *o)
{
	switch (o->result) {
	case RECOVERY_FULLY_RECOVERED:
		log_info("recovery: %s: every missing event recovered (%" PRId64
		    " now, %" PRId64 " in all); %s", relay, o->recovered,
		    o->recovered_total, o->can_restore_health ? "health can be "
		    "restored" : "health stays degraded (an id expired, or an "
		    "unrelated failure)");
		break;
	case RECOVERY_SOME_EXPIRED:
	case RECOVERY_EXPIRED:
		log_warnx("recovery: %s: %" PRId64 " missing event(s) given up "
		    "after %d failed fetches each; %" PRId64 " still pending; "
		    "the relay's history stays incomplete until it is synced "
		    "again", relay, o->expired, RECOVERY_MAX_FAILURES_PER_ID,
		    o->remaining);
		break;
	case RECOVERY_PARTIALLY_RECOVERED:
	case RECOVERY_RETRY_SCHEDULED:
		log_debug("recovery: %s: %" PRId64 " recovered, %" PRId64
		    " pending, next attempt in %" PRId64 " ms", relay,
		    o->recovered, o->remaining, o->next_attempt_in_ms);
		break;
	case RECOVERY_NONE:
		break;
	}
}

int
recovery_complete(struct recovery *r, const char *relay,
    const uint8_t (*arrived)[32], size_t n, int64_t now_ms,
    struct recovery_outcome *out)
{
	struct store_recovery_relay	row;
	int64_t				recovered;
	int				found, rc;

	memset(out, 0, sizeof(*out));
	if (store_begin(r->st) == -1)
		return -1;
	if ((found = store_recovery_relay_get(r->st, relay, &row)) != 1 ||
	    !row.in_flight) {
		store_rollback(r->st);
		return found == -1 ? -1 : 0;
	}
	row.in_flight = false;
	if ((recovered = rec_take_arrived(r, &row, arrived, n)) == -1 ||
	    rec_counts(r, &row) == -1)
		goto fail;
	row.recovered_total += recovered;
	if (row.pending == 0)
		rc = rec_finish(r, &row, recovered, now_ms, out);
	else
		rc = rec_charge(r, &row, recovered, now_ms, out);
	if (rc == -1)
		goto fail;
	if (store_commit(r->st) == -1) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	rec_log_outcome(relay, out);
	return 0;
fail:
	store_rollback(r->st);
	memset(out, 0, sizeof(*out));
	return -1;
}

int
recovery_defer(struct recovery *r, const char *relay, int64_t now_ms)
{
	struct store_recovery_relay	row;
	int				found;

	if ((found = store_recovery_relay_get(r->st, relay, &row)) != 1)
		return found;
	if (row.in_flight)
		log_debug("recovery: %s: attempt %" PRId64 " given back",
		    relay, row.attempts_total);
	row.in_flight = false;
	row.next_attempt_ms = now_ms + r->base_ms;
	return store_recovery_relay_put(r->st, &row, now_ms) == -1 ? -1 : 1;
}

/* store_recovery_satisfy's callback: count a deleted row per relay. */
static void
rec_tally_cb(const char *relay, bool was_pending, void *arg)
{
	struct recovery		*r = arg;
	struct rec_tally	*t, *nt;
	size_t			 i;

	for (i = 0; i < r->ntally; i++)
		if (strcmp(r->tally[i].relay, relay) == 0)
			break;
	if (i == r->ntally) {
		if (r->ntally == r->captally) {
			size_t cap = r->captally ? r->captally * 2 : 8;

			nt = reallocarray(r->tally, cap, sizeof(*nt));
			if (nt == NULL) {
				r->tally_failed = true;
				return;
			}
			r->tally = nt;
			r->captally = cap;
		}
		t = &r->tally[r->ntally];
		memset(t, 0, sizeof(*t));
		if ((t->relay = strdup(relay)) == NULL) {
			r->tally_failed = true;
			return;
		}
		r->ntally++;
	}
	if (was_pending)
		r->tally[i].pending++;
}

/* Write what satisfy did to t's relay; finish it if nothing is left. */
static int
rec_tally_apply(struct recovery *r, struct rec_tally *t, int64_t now_ms)
{
	struct store_recovery_relay	row;

	if (store_recovery_relay_get(r->st, t->relay, &row) != 1) {
		log_warnx("recovery: %s: relay row missing", t->relay);
		return -1;
	}
	row.recovered_total += t->pending;
	if (t->pending > 0 && row.pending == 0 && !row.in_flight) {
		t->finished = true;
		return rec_finish(r, &row, t->pending, now_ms, &t->out);
	}
	return store_recovery_relay_put(r->st, &row, now_ms);
}

int64_t
recovery_satisfied(struct recovery *r, const uint8_t (*ids)[32], size_t n,
    int64_t now_ms, recovery_outcome_cb cb, void *arg)
{
	int64_t	cleared = 0;
	size_t	i;
	int	any;

	if (n == 0 || (any = store_recovery_any(r->st)) == 0)
		return 0;
	if (any == -1 || store_begin(r->st) == -1)
		return -1;
	tally_clear(r);
	for (i = 0; i < n; i++)
		if (store_recovery_satisfy(r->st, ids[i], rec_tally_cb, r) == -1)
			goto fail;
	if (r->tally_failed) {
		log_warnx("recovery: satisfied: out of memory");
		goto fail;
	}
	for (i = 0; i < r->ntally; i++) {
		if (rec_tally_apply(r, &r->tally[i], now_ms) == -1)
			goto fail;
		cleared += r->tally[i].pending;
	}
	if (store_commit(r->st) == -1) {
		tally_clear(r);
		return -1;
	}
	for (i = 0; i < r->ntally; i++) {
		if (!r->tally[i].finished)
			continue;
		rec_log_outcome(r->tally[i].relay, &r->tally[i].out);
		if (cb != NULL)
			cb(r->tally[i].relay, &r->tally[i].out, arg);
	}
	tally_clear(r);
	return cleared;
fail:
	store_rollback(r->st);
	tally_clear(r);
	return -1;
}

int
recovery_note_failure(struct recovery *r, const char *relay, uint64_t batch,
    int64_t now_ms)
{
	struct store_recovery_relay	row;
	size_t				i;
	int				found;

	if ((found = store_recovery_relay_get(r->st, relay, &row)) != 1)
		return found;
	for (i = 0; i < row.nbatches; i++)
		if (row.batches[i] == batch)
			return 0;
	if (!row.can_restore_health)
		return 0;
	row.can_restore_health = false;
	if (store_recovery_relay_put(r->st, &row, now_ms) == -1)
		return -1;
	log_info("recovery: %s: batch %" PRIu64 " failed and registered no "
	    "missing ids here; recovering them will not restore the relay's "
	    "health", relay, batch);
	return 1;
}

int
recovery_expire(struct recovery *r, const char *relay, int64_t now_ms,
    struct recovery_outcome *out)
{
	struct store_recovery_relay	row;
	int64_t				n;
	int				found;

	memset(out, 0, sizeof(*out));
	if (store_begin(r->st) == -1)
		return -1;
	if ((found = store_recovery_relay_get(r->st, relay, &row)) == -1)
		goto fail;
	if (found == 0 || row.pending == 0) {
		store_rollback(r->st);
		return 0;
	}
	if ((n = store_recovery_expire(r->st, relay, INT64_MIN, INT64_MAX,
	    0)) == -1)
		goto fail;
	row.in_flight = false;
	row.can_restore_health = false;
	row.expired_total += n;
	if (rec_counts(r, &row) == -1 ||
	    store_recovery_relay_put(r->st, &row, now_ms) == -1)
		goto fail;
	if (store_commit(r->st) == -1)
		return -1;
	rec_outcome(out, RECOVERY_EXPIRED, &row);
	out->expired = n;
	log_warnx("recovery: %s: %" PRId64 " missing event(s) given up on "
	    "request; the relay's history stays incomplete until it is synced "
	    "again", relay, n);
	return 0;
fail:
	store_rollback(r->st);
	return -1;
}

int64_t
recovery_reset(struct recovery *r, const char *relay)
{
	struct store_recovery_relay	row;
	int				found;

	if ((found = store_recovery_relay_get(r->st, relay, &row)) != 1)
		return found;
	if (store_recovery_relay_delete(r->st, relay) == -1)
		return -1;
	log_info("recovery: %s: reset, %" PRId64 " pending and %" PRId64
	    " expired id(s) dropped", relay, row.pending, row.expired);
	return row.pending;
}

static void
rec_summary_fill(const struct store_recovery_relay *row,
    struct recovery_summary *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->relay, sizeof(s->relay), "%s", row->relay);
	s->pending = row->pending;
	s->in_flight = row->in_flight;
	s->next_attempt_ms = row->next_attempt_ms;
	s->expired = row->expired;
	s->attempts = row->attempts_total;
	s->recovered = row->recovered_total;
	s->can_restore_health = row->can_restore_health;
	s->health = RECOVERY_HEALTH_SYNC_FAILURES;
}

int
recovery_summary(struct recovery *r, const char *relay,
    struct recovery_summary *out)
{
	struct store_recovery_relay	row;
	int				found;

	memset(out, 0, sizeof(*out));
	snprintf(out->relay, sizeof(out->relay), "%s", relay);
	out->can_restore_health = true;
	if ((found = store_recovery_relay_get(r->st, relay, &row)) == 1)
		rec_summary_fill(&row, out);
	return found;
}

struct rec_each {
	recovery_summary_cb	 cb;
	void			*arg;
};

static int
rec_each_cb(const struct store_recovery_relay *row, void *arg)
{
	struct rec_each		*e = arg;
	struct recovery_summary	 s;

	rec_summary_fill(row, &s);
	return e->cb(&s, e->arg);
}

int
recovery_each(struct recovery *r, recovery_summary_cb cb, void *arg)
{
	struct rec_each	e = { cb, arg };

	return store_recovery_relays_each(r->st, rec_each_cb, &e);
}

struct rec_next {
	const struct recovery	*r;
	int64_t			 now_ms;
	char			*relay;
	size_t			 len;
	int64_t			 due_ms;
	bool			 found;
};

static int
rec_next_cb(const struct store_recovery_relay *row, void *arg)
{
	struct rec_next	*x = arg;
	int64_t		 due;

	if (row->pending == 0 || row->in_flight)
		return 0;
	due = rec_due(x->r, row, x->now_ms);
	if (!x->found || due < x->due_ms) {
		snprintf(x->relay, x->len, "%s", row->relay);
		x->due_ms = due;
		x->found = true;
	}
	return 0;
}

int
recovery_next(struct recovery *r, int64_t now_ms, char *relay, size_t len,
    int64_t *due_ms)
{
	struct rec_next	x = { r, now_ms, relay, len, 0, false };

	if (len > 0)
		relay[0] = '\0';
	*due_ms = 0;
	if (store_recovery_relays_each(r->st, rec_next_cb, &x) == -1)
		return -1;
	*due_ms = x.due_ms;
	return x.found ? 1 : 0;
}
