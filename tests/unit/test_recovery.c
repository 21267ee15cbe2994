/*
 * test_recovery.c — the missing-event recovery index (sync/recovery.h over
 * store/recovery.h) on a real store, time driven by hand.
 *
 * First every behaviour the policy's reference specifies, each its own
 * test with the same exact values: repeated registrations merge; an
 * attempt waits for its deadline and only one is in flight; progress
 * keeps the backoff of the ids still missing; fresh progress never renews
 * an old id's budget; expiry keeps the younger ids and the degraded health;
 * a large inventory starves no id; the backoff doubles up to its cap; the
 * budget runs out explicitly; full recovery says whether health can come
 * back; unrelated failures and an already-degraded relay forbid that; ids
 * satisfied locally cost no attempt; a completion after a reset does
 * nothing; a deferral spends no budget.
 *
 * Then what persistence and the store add: a restart mid-recovery keeps
 * every id, budget and deadline and gives back the attempt in flight; an
 * event stored by another path settles its id; 100,000 ids are walked
 * round-robin with each call reading a bounded number of rows (SQLite's
 * own counters, no clock); deferral gives back an attempt in flight; a
 * wall clock stepped back does not stall recovery; explicit expiry;
 * surfaces; migration 004 keeps the rows of a store written before it.
 */
#define _XOPEN_SOURCE 700	/* nftw */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/embed.h"
#include "core/limits.h"
#include "store/events.h"
#include "store/rules.h"
#include "store/recovery.h"
#include "store/store.h"
#include "store/store_sql.h"
#include "sync/recovery.h"

#include "store_fixture.h"

#define RELAY		"wss://relay.example"
#define RELAY_B		"wss://b.example"
#define NOW		INT64_C(1700000000000)	/* wall ms */
#define BASE_MS		30000
#define MAX_MS		900000
#define DAY_MS		(INT64_C(24) * 3600 * 1000)
#define BUDGET		RECOVERY_MAX_FAILURES_PER_ID
#define PAGE		RECOVERY_MAX_IDS_PER_ATTEMPT

struct rfx {
	struct fixture	*fx;
	struct recovery	*rec;
};

static int
rsetup(void **state)
{
	struct rfx	*r = calloc(1, sizeof(*r));

	assert_non_null(r);
	setup(state);
	r->fx = *state;
	assert_non_null(r->rec = recovery_new(r->fx->st, BASE_MS, MAX_MS));
	*state = r;
	return 0;
}

static int
rteardown(void **state)
{
	struct rfx	*r = *state;

	recovery_free(r->rec);
	*state = r->fx;
	free(r);
	return teardown(state);
}

/* Close the store and open it again from the same directory. */
static void
restart(struct rfx *r)
{
	char	err[256];

	recovery_free(r->rec);
	store_close(r->fx->st);
	assert_int_equal(store_open(&r->fx->st, r->fx->dir, err, sizeof(err)),
	    0);
	assert_non_null(r->rec = recovery_new(r->fx->st, BASE_MS, MAX_MS));
}

/* A day after t: every deadline this policy sets has passed. */
static int64_t
due(int64_t t)
{
	return t + DAY_MS;
}

/* The id made of 32 bytes b. */
static const uint8_t *
id(uint8_t b)
{
	static uint8_t	ids[256][32];

	memset(ids[b], b, 32);
	return ids[b];
}

/* The id numbered n (big-endian in its first four bytes). */
static void
idx(uint8_t out[32], uint32_t n)
{
	memset(out, 0, 32);
	out[0] = (uint8_t)(n >> 24);
	out[1] = (uint8_t)(n >> 16);
	out[2] = (uint8_t)(n >> 8);
	out[3] = (uint8_t)n;
}

static uint32_t
idx_of(const uint8_t in[32])
{
	return (uint32_t)in[0] << 24 | (uint32_t)in[1] << 16 |
	    (uint32_t)in[2] << 8 | in[3];
}

/* The ids id(b) for each byte b of bytes, into out (at most 16). */
static size_t
ids_of(const char *bytes, uint8_t (*out)[32])
{
	size_t	i, n = strlen(bytes);

	assert_true(n <= 16);
	for (i = 0; i < n; i++)
		memcpy(out[i], id((uint8_t)bytes[i]), 32);
	return n;
}

static struct recovery_registered
reg_on(struct rfx *r, const char *relay, uint64_t batch, const char *bytes,
    bool degraded, int64_t now)
{
	struct recovery_registered	out;
	uint8_t				ids[16][32];
	size_t				n = ids_of(bytes, ids);

	assert_int_equal(recovery_register(r->rec, relay, batch,
	    (const uint8_t (*)[32])ids, n, degraded, now, &out), 0);
	return out;
}

/* Register bytes' ids on RELAY from batch 1 at NOW (the usual start). */
static int64_t
registered(struct rfx *r, const char *bytes)
{
	reg_on(r, RELAY, 1, bytes, false, NOW);
	return NOW;
}

static struct recovery_attempt *
begin_ok(struct rfx *r, const char *relay, int64_t now)
{
	static struct recovery_attempt	a;

	assert_int_equal(recovery_begin(r->rec, relay, now, &a),
	    RECOVERY_BEGUN);
	assert_true(a.n > 0);
	return &a;
}

static int
begin_rc(struct rfx *r, const char *relay, int64_t now)
{
	static struct recovery_attempt	a;

	return recovery_begin(r->rec, relay, now, &a);
}

static struct recovery_outcome
complete_on(struct rfx *r, const char *relay, const char *arrived,
    int64_t now)
{
	struct recovery_outcome	out;
	uint8_t			ids[16][32];
	size_t			n = ids_of(arrived, ids);

	assert_int_equal(recovery_complete(r->rec, relay,
	    (const uint8_t (*)[32])ids, n, now, &out), 0);
	return out;
}

static struct recovery_outcome
complete(struct rfx *r, const char *arrived, int64_t now)
{
	return complete_on(r, RELAY, arrived, now);
}

/* A failed attempt on RELAY: begun when due, nothing arrived at now. */
static struct recovery_outcome
fail_once(struct rfx *r, int64_t now)
{
	begin_ok(r, RELAY, due(now));
	return complete(r, "", now);
}

struct idlist {
	uint8_t	bytes[64];	/* first byte of each id, queue order */
	int64_t	failures[64];
	size_t	n;
};

static int
idlist_cb(const struct store_recovery_id *row, void *arg)
{
	struct idlist	*l = arg;

	assert_true(l->n < sizeof(l->bytes));
	l->failures[l->n] = row->failures;
	l->bytes[l->n++] = row->id[0];
	return 0;
}

/* The first byte of relay's pending (or expired) ids, in queue order. */
static struct idlist
listed(struct rfx *r, const char *relay, bool expired)
{
	struct idlist	l;

	memset(&l, 0, sizeof(l));
	assert_true(store_recovery_ids_each(r->fx->st, relay, expired,
	    INT64_MIN, sizeof(l.bytes), idlist_cb, &l) >= 0);
	return l;
}

static int
byte_cmp(const void *a, const void *b)
{
	return *(const uint8_t *)a - *(const uint8_t *)b;
}

/* Relay's pending ids as a sorted string of their bytes. */
static const char *
pending_sorted(struct rfx *r, const char *relay)
{
	static char	s[65];
	struct idlist	l = listed(r, relay, false);

	qsort(l.bytes, l.n, 1, byte_cmp);
	memcpy(s, l.bytes, l.n);
	s[l.n] = '\0';
	return s;
}

static struct recovery_summary
summary(struct rfx *r, const char *relay, int want_row)
{
	struct recovery_summary	s;

	assert_int_equal(recovery_summary(r->rec, relay, &s), want_row);
	return s;
}

/* Store an event with id (content irrelevant here). */
static void
store_event(struct rfx *r, const uint8_t eid[32])
{
	static const uint8_t		pk[32];
	struct store_event_row		row = { 0 };

	memset(&row, 0, sizeof(row));
	row.id = eid;
	row.pubkey = pk;
	row.kind = 1;
	row.created_at = 1;
	row.json = "{}";
	row.json_len = 2;
	row.source = "live";
	row.received_at = 1;
	assert_int_equal(store_event_insert(r->fx->st, &row, false), 1);
}

/* What a recovery_satisfied callback saw. */
struct seen {
	int			calls;
	char			relay[64];
	struct recovery_outcome	out;
};

static void
seen_cb(const char *relay, const struct recovery_outcome *o, void *arg)
{
	struct seen	*s = arg;

	s->calls++;
	snprintf(s->relay, sizeof(s->relay), "%s", relay);
	s->out = *o;
}

static int64_t
satisfied(struct rfx *r, const char *bytes, struct seen *seen)
{
	uint8_t	ids[16][32];
	size_t	n = ids_of(bytes, ids);

	return recovery_satisfied(r->rec, (const uint8_t (*)[32])ids, n, NOW,
	    seen_cb, seen);
}

/* --- The reference's behaviours ------------------------------------- */

static void
test_duplicate_registrations_merge(void **state)
{
	struct rfx			*r = *state;
	struct recovery_registered	 out;

	registered(r, "\x01\x02");
	out = reg_on(r, RELAY, 2, "\x02\x03", false, NOW);
	assert_int_equal(out.added, 1);
	assert_int_equal(out.pending_total, 3);
	assert_int_equal(out.already_pending, 1);
	assert_int_equal(out.already_stored, 0);
	assert_int_equal(summary(r, RELAY, 1).pending, 3);
	assert_int_equal(listed(r, RELAY, false).n, 3);
	/* The same id twice in one call is one id too. */
	out = reg_on(r, RELAY, 3, "\x04\x04\x01", false, NOW);
	assert_int_equal(out.added, 1);
	assert_int_equal(out.already_pending, 2);
	assert_int_equal(out.pending_total, 4);
}

static void
test_deadline_and_single_flight(void **state)
{
	struct rfx		*r = *state;
	struct recovery_attempt	 a, *b;
	struct seen		 seen = { 0 };
	int64_t			 now = registered(r, "\x01");

	/* Before the deadline: not due, and it says when. */
	assert_int_equal(recovery_begin(r->rec, RELAY, now, &a),
	    RECOVERY_NOT_DUE);
	assert_int_equal(a.n, 0);
	assert_int_equal(a.due_ms, now + BASE_MS);
	assert_int_equal(begin_rc(r, RELAY, now + BASE_MS - 1),
	    RECOVERY_NOT_DUE);
	b = begin_ok(r, RELAY, due(now));
	assert_int_equal(b->n, 1);
	assert_memory_equal(b->ids[0], id(1), 32);
	assert_int_equal(b->number, 1);
	/* Only one attempt in flight per relay. */
	assert_int_equal(begin_rc(r, RELAY, due(now)), RECOVERY_BUSY);
	/* The local-satisfaction path leaves the attempt's ids alone. */
	assert_int_equal(satisfied(r, "\x01", &seen), 0);
	assert_int_equal(seen.calls, 0);
	assert_int_equal(summary(r, RELAY, 1).pending, 1);
	assert_true(summary(r, RELAY, 1).in_flight);
}

static void
test_progress_keeps_backoff(void **state)
{
	struct rfx		*r = *state;
	struct recovery_outcome	 o;
	int64_t			 now = registered(r, "\x01\x02\x03");

	/* Two failed attempts grow the backoff. */
	fail_once(r, now);
	fail_once(r, now);
	begin_ok(r, RELAY, due(now));
	o = complete(r, "\x02", now);
	assert_int_equal(o.result, RECOVERY_PARTIALLY_RECOVERED);
	assert_int_equal(o.recovered, 1);
	assert_int_equal(o.remaining, 2);
	/* Not reset by the progress: three failures, 30 s doubled thrice. */
	assert_int_equal(o.next_attempt_in_ms, recovery_backoff_ms(r->rec, 3));
	assert_int_equal(o.next_attempt_in_ms, 240000);
	assert_int_equal(summary(r, RELAY, 1).next_attempt_ms, now + 240000);
	assert_string_equal(pending_sorted(r, RELAY), "\x01\x03");
}

static void
test_fresh_progress_keeps_old_budget(void **state)
{
	struct rfx		*r = *state;
	struct recovery_outcome	 o;
	struct recovery_summary	 s;
	int64_t			 now = registered(r, "\x01");
	int			 attempt;

	for (attempt = 1; attempt <= BUDGET; attempt++) {
		reg_on(r, RELAY, 2, "\x02\x03", false, now);
		assert_int_equal(satisfied(r, "\x02", NULL), 1);
		begin_ok(r, RELAY, due(now));
		o = complete(r, "\x03", now);
		if (attempt == BUDGET) {
			assert_int_equal(o.result, RECOVERY_EXPIRED);
			assert_int_equal(o.expired, 1);
			assert_int_equal(o.remaining, 0);
			assert_int_equal(o.attempts, attempt);
			assert_int_equal(o.recovered, 1);
		} else {
			assert_int_equal(o.result,
			    RECOVERY_PARTIALLY_RECOVERED);
			assert_int_equal(o.recovered, 1);
			assert_int_equal(o.remaining, 1);
			assert_int_equal(o.next_attempt_in_ms,
			    recovery_backoff_ms(r->rec, attempt));
		}
	}
	/* The expired id stays listed and the health stays degraded. */
	s = summary(r, RELAY, 1);
	assert_int_equal(s.pending, 0);
	assert_int_equal(s.expired, 1);
	assert_false(s.can_restore_health);
	assert_int_equal(s.health, RECOVERY_HEALTH_SYNC_FAILURES);
	assert_int_equal(listed(r, RELAY, true).bytes[0], 1);
	assert_int_equal(listed(r, RELAY, true).failures[0], BUDGET);
}

static void
test_expiry_keeps_younger_ids(void **state)
{
	struct rfx		*r = *state;
	struct recovery_outcome	 o;
	struct recovery_attempt	*a;
	int64_t			 now = registered(r, "\x01");
	int			 i;

	for (i = 1; i < BUDGET; i++)
		assert_int_equal(fail_once(r, now).result,
		    RECOVERY_RETRY_SCHEDULED);
	begin_ok(r, RELAY, due(now));
	/* Registered during the fetch: this attempt does not charge it. */
	reg_on(r, RELAY, 2, "\x02", false, now);
	o = complete(r, "", now);
	assert_int_equal(o.result, RECOVERY_SOME_EXPIRED);
	assert_int_equal(o.expired, 1);
	assert_int_equal(o.remaining, 1);
	assert_int_equal(o.attempts, BUDGET);
	assert_int_equal(o.next_attempt_in_ms, recovery_backoff_ms(r->rec, 0));
	assert_int_equal(o.next_attempt_in_ms, BASE_MS);
	assert_false(o.can_restore_health);
	assert_string_equal(pending_sorted(r, RELAY), "\x02");
	assert_int_equal(listed(r, RELAY, false).failures[0], 0);

	a = begin_ok(r, RELAY, due(now));
	assert_int_equal(a->n, 1);
	assert_memory_equal(a->ids[0], id(2), 32);
	o = complete(r, "\x02", now);
	assert_int_equal(o.result, RECOVERY_FULLY_RECOVERED);
	assert_false(o.can_restore_health);
	assert_int_equal(summary(r, RELAY, 1).health,
	    RECOVERY_HEALTH_SYNC_FAILURES);
}

static void
test_large_inventory_no_starvation(void **state)
{
	struct rfx		*r = *state;
	struct recovery_attempt	*a;
	uint8_t			 ids[PAGE + 1][32], untouched[32];
	int			 i;

	for (i = 0; i <= PAGE; i++)
		idx(ids[i], (uint32_t)i);
	assert_int_equal(recovery_register(r->rec, RELAY, 1,
	    (const uint8_t (*)[32])ids, PAGE + 1, false, NOW, NULL), 0);
	a = begin_ok(r, RELAY, due(NOW));
	assert_int_equal(a->n, PAGE);
	for (i = 0; i < PAGE; i++)
		assert_int_equal(idx_of(a->ids[i]), i);
	idx(untouched, PAGE);
	assert_int_equal(complete(r, "", NOW).result, RECOVERY_RETRY_SCHEDULED);
	a = begin_ok(r, RELAY, due(NOW));
	assert_memory_equal(a->ids[0], untouched, 32);
	/* Then the oldest attempted ones, in their order. */
	assert_int_equal(idx_of(a->ids[1]), 0);
	assert_int_equal(a->n, PAGE);
}

static void
test_backoff_doubles_with_cap(void **state)
{
	struct rfx	*r = *state;
	struct config	*cfg;

	assert_true(recovery_backoff_ms(r->rec, 1) >
	    recovery_backoff_ms(r->rec, 0));
	assert_true(recovery_backoff_ms(r->rec, 2) >
	    recovery_backoff_ms(r->rec, 1));
	assert_int_equal(recovery_backoff_ms(r->rec, 30), MAX_MS);
	assert_int_equal(recovery_backoff_ms(r->rec, 0), 30000);
	assert_int_equal(recovery_backoff_ms(r->rec, 1), 60000);
	assert_int_equal(recovery_backoff_ms(r->rec, 4), 480000);
	assert_int_equal(recovery_backoff_ms(r->rec, 5), 900000);
	assert_int_equal(recovery_backoff_ms(r->rec, INT64_MAX), 900000);
	/* The defaults of the configuration are these delays. */
	assert_non_null(cfg = config_new());
	assert_int_equal(config_get_int(cfg, "recovery.backoff_base_ms"),
	    BASE_MS);
	assert_int_equal(config_get_int(cfg, "recovery.backoff_max_ms"),
	    MAX_MS);
	config_free(cfg);
	/* Other delays from a new configuration. */
	recovery_set_backoff(r->rec, 500, 5000);
	assert_int_equal(recovery_backoff_ms(r->rec, 0), 500);
	assert_int_equal(recovery_backoff_ms(r->rec, 3), 4000);
	assert_int_equal(recovery_backoff_ms(r->rec, 4), 5000);
}

static void
test_budget_expires_explicitly(void **state)
{
	struct rfx		*r = *state;
	struct recovery_outcome	 o;
	struct recovery_summary	 s;
	int64_t			 now = registered(r, "\x01\x02");
	int			 attempt;

	for (attempt = 1; attempt < BUDGET; attempt++) {
		o = fail_once(r, now);
		assert_int_equal(o.result, RECOVERY_RETRY_SCHEDULED);
		assert_int_equal(o.attempts, attempt);
		assert_int_equal(o.remaining, 2);
		assert_int_equal(o.next_attempt_in_ms,
		    recovery_backoff_ms(r->rec, attempt));
	}
	o = fail_once(r, now);
	assert_int_equal(o.result, RECOVERY_EXPIRED);
	assert_int_equal(o.expired, 2);
	assert_int_equal(o.remaining, 0);
	assert_int_equal(o.attempts, BUDGET);
	assert_false(o.can_restore_health);
	/* An expired relay carries no pending work. */
	assert_int_equal(begin_rc(r, RELAY, due(due(now))), RECOVERY_IDLE);
	s = summary(r, RELAY, 1);
	assert_int_equal(s.pending, 0);
	assert_int_equal(s.expired, 2);
	assert_int_equal(s.attempts, BUDGET);
	assert_int_equal(s.health, RECOVERY_HEALTH_SYNC_FAILURES);
}

static void
test_full_recovery_restores_health(void **state)
{
	struct rfx		*r = *state;
	struct recovery_outcome	 o;
	struct recovery_summary	 s;
	int64_t			 now = registered(r, "\x01");

	begin_ok(r, RELAY, due(now));
	o = complete(r, "\x01", now);
	assert_int_equal(o.result, RECOVERY_FULLY_RECOVERED);
	assert_int_equal(o.recovered, 1);
	assert_int_equal(o.recovered_total, 1);
	assert_true(o.can_restore_health);
	/* Nothing left to say about the relay: its row is gone. */
	s = summary(r, RELAY, 0);
	assert_int_equal(s.health, RECOVERY_HEALTH_CONNECTED);
	assert_string_equal(recovery_health_name(s.health), "connected");
	assert_int_equal(fixture_int(r->fx, "SELECT count(*) FROM "
	    "recovery_relays"), 0);
}

static void
test_unrelated_failure_poisons_health(void **state)
{
	struct rfx		*r = *state;
	struct recovery_outcome	 o;
	int64_t			 now = registered(r, "\x01");

	/* Batch 1 registered the ids: its own failure is related. */
	assert_int_equal(recovery_note_failure(r->rec, RELAY, 1, now), 0);
	assert_true(summary(r, RELAY, 1).can_restore_health);
	/* Batch 7 registered nothing here: unrelated. */
	assert_int_equal(recovery_note_failure(r->rec, RELAY, 7, now), 1);
	assert_int_equal(recovery_note_failure(r->rec, RELAY, 7, now), 0);
	begin_ok(r, RELAY, due(now));
	o = complete(r, "\x01", now);
	assert_int_equal(o.result, RECOVERY_FULLY_RECOVERED);
	assert_int_equal(o.recovered, 1);
	assert_int_equal(o.recovered_total, 1);
	assert_false(o.can_restore_health);
	assert_string_equal(recovery_health_name(summary(r, RELAY, 1).health),
	    "connected, historic sync failures");
	/* A relay without recovery work ignores failures. */
	assert_int_equal(recovery_note_failure(r->rec, RELAY_B, 7, now), 0);
}

static void
test_degraded_registration_poisons_health(void **state)
{
	struct rfx		*r = *state;
	struct recovery_outcome	 o;

	reg_on(r, RELAY, 1, "\x01", true, NOW);
	begin_ok(r, RELAY, due(NOW));
	o = complete(r, "\x01", NOW);
	assert_int_equal(o.result, RECOVERY_FULLY_RECOVERED);
	assert_false(o.can_restore_health);
}

static void
test_satisfied_locally_costs_no_attempt(void **state)
{
	struct rfx	*r = *state;
	struct seen	 seen = { 0 };

	registered(r, "\x01\x02");
	assert_int_equal(satisfied(r, "\x01", &seen), 1);
	assert_int_equal(seen.calls, 0);
	assert_string_equal(pending_sorted(r, RELAY), "\x02");
	assert_int_equal(satisfied(r, "\x02\x09", &seen), 1);
	assert_int_equal(seen.calls, 1);
	assert_string_equal(seen.relay, RELAY);
	assert_int_equal(seen.out.result, RECOVERY_FULLY_RECOVERED);
	assert_int_equal(seen.out.recovered, 1);
	assert_int_equal(seen.out.recovered_total, 2);
	assert_int_equal(seen.out.attempts, 0);
	assert_true(seen.out.can_restore_health);
	summary(r, RELAY, 0);
	/* Nothing missing anywhere: nothing to clear. */
	assert_int_equal(satisfied(r, "\x01", &seen), 0);
	assert_int_equal(seen.calls, 1);
}

static void
test_complete_after_reset_is_noop(void **state)
{
	struct rfx		*r = *state;
	struct recovery_outcome	 o;
	int64_t			 now = registered(r, "\x01");

	begin_ok(r, RELAY, due(now));
	assert_int_equal(recovery_reset(r->rec, RELAY), 1);
	o = complete(r, "", now);
	assert_int_equal(o.result, RECOVERY_NONE);
	summary(r, RELAY, 0);
	assert_int_equal(fixture_int(r->fx, "SELECT count(*) FROM "
	    "missing_ids"), 0);
	assert_int_equal(recovery_reset(r->rec, RELAY), 0);
}

static void
test_deferral_spends_no_budget(void **state)
{
	struct rfx		*r = *state;
	struct recovery_attempt	 a;
	int64_t			 now = registered(r, "\x01");

	assert_int_equal(recovery_defer(r->rec, RELAY, due(now)), 1);
	assert_int_equal(recovery_begin(r->rec, RELAY, due(now), &a),
	    RECOVERY_NOT_DUE);
	assert_int_equal(a.due_ms, due(now) + BASE_MS);
	assert_int_equal(begin_ok(r, RELAY, due(due(now)))->number, 1);
	assert_int_equal(listed(r, RELAY, false).failures[0], 0);
	assert_int_equal(recovery_defer(r->rec, RELAY_B, now), 0);
}

/* --- What persistence and the store add ------------------------------ */

static void
test_restart_mid_recovery(void **state)
{
	struct rfx		*r = *state;
	struct recovery_outcome	 o;
	struct recovery_summary	 s;
	struct recovery_attempt	*a;
	struct idlist		 l;
	int64_t			 now = registered(r, "\x01\x02\x03");
	int			 attempt;

	fail_once(r, now);
	fail_once(r, now);			/* failures 2, due now + 120 s */
	reg_on(r, RELAY_B, 5, "\x07", false, now);
	begin_ok(r, RELAY_B, due(now));
	complete_on(r, RELAY_B, "", now);	/* due now + 60 s */
	a = begin_ok(r, RELAY, due(now));	/* in flight at the crash */
	assert_int_equal(a->number, 3);

	restart(r);
	s = summary(r, RELAY, 1);
	assert_int_equal(s.pending, 3);
	assert_false(s.in_flight);
	assert_int_equal(s.attempts, 3);
	assert_int_equal(s.next_attempt_ms, now + 120000);
	assert_true(s.can_restore_health);
	l = listed(r, RELAY, false);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.failures[0], 2);
	assert_int_equal(l.failures[1], 2);
	assert_int_equal(l.failures[2], 2);
	/* The other relay's deadline survived to the millisecond. */
	assert_int_equal(begin_rc(r, RELAY_B, now + 59999), RECOVERY_NOT_DUE);
	assert_int_equal(begin_ok(r, RELAY_B, now + 60000)->number, 2);
	/*
	 * The given-back attempt cost no budget: ten failures are left, so
	 * attempts 4 to 12 are retried and attempt 13 expires the ids.
	 */
	for (attempt = 4; attempt <= BUDGET; attempt++) {
		o = fail_once(r, now);
		assert_int_equal(o.result, RECOVERY_RETRY_SCHEDULED);
		assert_int_equal(o.attempts, attempt);
		assert_int_equal(o.next_attempt_in_ms,
		    recovery_backoff_ms(r->rec, attempt - 1));
	}
	o = fail_once(r, now);
	assert_int_equal(o.result, RECOVERY_EXPIRED);
	assert_int_equal(o.expired, 3);
	assert_int_equal(o.attempts, BUDGET + 1);
	/* A completion for the attempt lost in the restart does nothing. */
	restart(r);
	assert_true(summary(r, RELAY_B, 1).pending == 1);
	assert_false(summary(r, RELAY_B, 1).in_flight);
	assert_int_equal(complete_on(r, RELAY_B, "\x07", now).result,
	    RECOVERY_NONE);
	assert_int_equal(summary(r, RELAY_B, 1).pending, 1);
}

static void
test_stored_by_another_path(void **state)
{
	struct rfx			*r = *state;
	struct recovery_registered	 reg;
	struct recovery_outcome		 o;
	struct seen			 seen = { 0 };

	/* Already stored at registration: not missing at all. */
	store_event(r, id(9));
	reg = reg_on(r, RELAY, 1, "\x01\x02\x09", false, NOW);
	assert_int_equal(reg.added, 2);
	assert_int_equal(reg.already_stored, 1);
	assert_int_equal(reg.pending_total, 2);
	/* Stored while its attempt is in flight: settled as recovered. */
	begin_ok(r, RELAY, due(NOW));
	store_event(r, id(1));
	assert_int_equal(satisfied(r, "\x01", &seen), 0);
	o = complete(r, "", NOW);
	assert_int_equal(o.result, RECOVERY_PARTIALLY_RECOVERED);
	assert_int_equal(o.recovered, 1);
	assert_int_equal(o.remaining, 1);
	assert_int_equal(listed(r, RELAY, false).failures[0], 1);
	/* An id missing on two relays is cleared on both, each told. */
	reg_on(r, RELAY_B, 4, "\x02", false, NOW);
	store_event(r, id(2));
	assert_int_equal(satisfied(r, "\x02", &seen), 2);
	assert_int_equal(seen.calls, 2);
	assert_int_equal(seen.out.result, RECOVERY_FULLY_RECOVERED);
	summary(r, RELAY, 0);
	summary(r, RELAY_B, 0);
	/* All stored: a registration leaves no row behind. */
	reg = reg_on(r, RELAY, 5, "\x01\x02", false, NOW);
	assert_int_equal(reg.already_stored, 2);
	assert_int_equal(reg.pending_total, 0);
	summary(r, RELAY, 0);
}

static void
test_expired_id_registered_again(void **state)
{
	struct rfx			*r = *state;
	struct recovery_registered	 reg;
	struct recovery_outcome		 o;
	struct recovery_summary		 s;
	struct recovery_attempt		 a;
	int64_t				 now = registered(r, "\x01");
	int				 i;

	memset(&o, 0, sizeof(o));
	for (i = 0; i < BUDGET; i++)
		o = fail_once(r, now);
	assert_int_equal(o.result, RECOVERY_EXPIRED);
	/* The next sync finds the gap again: a fresh budget, no health. */
	reg = reg_on(r, RELAY, 2, "\x01", false, due(now));
	assert_int_equal(reg.added, 1);
	assert_int_equal(reg.pending_total, 1);
	s = summary(r, RELAY, 1);
	assert_int_equal(s.expired, 0);
	assert_false(s.can_restore_health);
	assert_int_equal(s.next_attempt_ms, due(now) + BASE_MS);
	assert_int_equal(listed(r, RELAY, false).failures[0], 0);
	assert_int_equal(recovery_begin(r->rec, RELAY, due(now), &a),
	    RECOVERY_NOT_DUE);
	assert_int_equal(begin_ok(r, RELAY, due(due(now)))->number, BUDGET + 1);
}

static void
test_defer_gives_back_attempt(void **state)
{
	struct rfx		*r = *state;
	struct recovery_summary	 s;
	int64_t			 now = registered(r, "\x01\x02");

	begin_ok(r, RELAY, due(now));
	/* The connection dropped mid-fetch. */
	assert_int_equal(recovery_defer(r->rec, RELAY, due(now)), 1);
	s = summary(r, RELAY, 1);
	assert_false(s.in_flight);
	assert_int_equal(s.next_attempt_ms, due(now) + BASE_MS);
	assert_int_equal(listed(r, RELAY, false).failures[0], 0);
	assert_int_equal(listed(r, RELAY, false).failures[1], 0);
	/* A late answer to the given-back attempt settles nothing. */
	assert_int_equal(complete(r, "\x01", due(now)).result, RECOVERY_NONE);
	assert_int_equal(summary(r, RELAY, 1).pending, 2);
	assert_int_equal(begin_ok(r, RELAY, due(due(now)))->number, 2);
}

static void
test_clock_stepped_back(void **state)
{
	struct rfx	*r = *state;
	int64_t		 now = registered(r, "\x01");

	/* A day back: a deadline beyond any delay set is due at once. */
	assert_int_equal(begin_ok(r, RELAY, now - DAY_MS)->number, 1);
	assert_int_equal(complete(r, "", now - DAY_MS).next_attempt_in_ms,
	    60000);
	/* Within the longest delay it is honoured. */
	assert_int_equal(begin_rc(r, RELAY, now - DAY_MS + 59999),
	    RECOVERY_NOT_DUE);
}

static void
test_explicit_expire(void **state)
{
	struct rfx		*r = *state;
	struct recovery_outcome	 o;
	struct recovery_summary	 s;

	registered(r, "\x01\x02\x03");
	begin_ok(r, RELAY, due(NOW));
	assert_int_equal(recovery_expire(r->rec, RELAY, NOW, &o), 0);
	assert_int_equal(o.result, RECOVERY_EXPIRED);
	assert_int_equal(o.expired, 3);
	assert_int_equal(o.remaining, 0);
	assert_int_equal(o.attempts, 1);
	assert_false(o.can_restore_health);
	s = summary(r, RELAY, 1);
	assert_int_equal(s.pending, 0);
	assert_int_equal(s.expired, 3);
	assert_false(s.in_flight);
	assert_int_equal(complete(r, "\x01", NOW).result, RECOVERY_NONE);
	assert_int_equal(recovery_expire(r->rec, RELAY, NOW, &o), 0);
	assert_int_equal(o.result, RECOVERY_NONE);
	/* A reset forgets the expired ids too. */
	assert_int_equal(recovery_reset(r->rec, RELAY), 0);
	assert_int_equal(fixture_int(r->fx, "SELECT count(*) FROM "
	    "missing_ids"), 0);
}

struct collect {
	int	n;
	char	relays[4][URL_MAX_BYTES + 1];
	int64_t	pending[4];
};

static int
collect_cb(const struct recovery_summary *s, void *arg)
{
	struct collect	*c = arg;

	assert_true(c->n < 4);
	snprintf(c->relays[c->n], sizeof(c->relays[0]), "%s", s->relay);
	c->pending[c->n++] = s->pending;
	return 0;
}

static void
test_next_due_and_surfaces(void **state)
{
	struct rfx	*r = *state;
	struct collect	 c = { 0 };
	char		 relay[URL_MAX_BYTES + 1];
	int64_t		 due_ms;

	assert_int_equal(recovery_next(r->rec, NOW, relay, sizeof(relay),
	    &due_ms), 0);
	reg_on(r, RELAY, 1, "\x01\x02", false, NOW);
	reg_on(r, RELAY_B, 2, "\x03", false, NOW + 1000);
	assert_int_equal(recovery_next(r->rec, NOW, relay, sizeof(relay),
	    &due_ms), 1);
	assert_string_equal(relay, RELAY);
	assert_int_equal(due_ms, NOW + BASE_MS);
	begin_ok(r, RELAY, NOW + BASE_MS);
	/* In flight: the other relay is next. */
	assert_int_equal(recovery_next(r->rec, NOW, relay, sizeof(relay),
	    &due_ms), 1);
	assert_string_equal(relay, RELAY_B);
	assert_int_equal(due_ms, NOW + 1000 + BASE_MS);
	assert_int_equal(recovery_each(r->rec, collect_cb, &c), 0);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.relays[0], RELAY_B);
	assert_int_equal(c.pending[0], 1);
	assert_string_equal(c.relays[1], RELAY);
	assert_int_equal(c.pending[1], 2);
	assert_true(summary(r, RELAY, 1).in_flight);
	assert_int_equal(summary(r, RELAY, 1).attempts, 1);
}

static void
raw_exec(sqlite3 *db, const char *sql)
{
	char	*msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg != NULL ? msg : "?");
}

/*
 * A store at schema 3 holding rows in 001's recovery tables (an attempt
 * in flight, a flagged id, an expired one) is rebuilt by 004 with every
 * row, its counts and its queue order, and the index works on it.
 */
static void
test_migration_004_keeps_rows(void **state)
{
	struct fixture		 fx;
	struct recovery		*rec;
	struct recovery_summary	 s;
	struct recovery_attempt	 a;
	char			 path[128], err[256], sql[128];
	sqlite3			*db;
	int			 i;

	(void)state;
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/test_recovery.XXXXXX");
	assert_non_null(mkdtemp(fx.dir));
	snprintf(path, sizeof(path), "%s/" STORE_DB_NAME, fx.dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	for (i = 0; i < 3; i++)
		raw_exec(db, (const char *)store_migration_files[i].data);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = 3; "
	    "PRAGMA application_id = %d", STORE_APPLICATION_ID);
	raw_exec(db, sql);
	raw_exec(db, "INSERT INTO recovery_relays (relay, attempts_total, "
	    "attempts_without_progress, next_attempt_ms, in_flight, "
	    "can_restore_health, recovered_total, expired_total, "
	    "source_batches, updated_at) VALUES ('" RELAY "', 4, 2, 5000, 1, "
	    "0, 2, 1, '3,4', 1)");
	raw_exec(db, "INSERT INTO missing_ids (relay, id, failures, queue_seq, "
	    "attempted, state, registered_at) VALUES "
	    "('" RELAY "', zeroblob(32), 3, 10, 1, 'pending', 1), "
	    "('" RELAY "', randomblob(32), 12, 4, 0, 'expired', 1), "
	    "('" RELAY "', x'03030303030303030303030303030303"
	    "03030303030303030303030303030303', 0, 11, 0, 'pending', 1)");
	assert_int_equal(sqlite3_close(db), SQLITE_OK);

	assert_int_equal(store_open(&fx.st, fx.dir, err, sizeof(err)), 0);
	assert_int_equal(store_schema_version(fx.st), store_schema_latest());
	assert_int_equal(fixture_int(&fx, "SELECT count(*) FROM sqlite_schema "
	    "WHERE type = 'trigger' AND tbl_name = 'missing_ids'"), 3);
	assert_int_equal(fixture_int(&fx, "SELECT count(*) FROM "
	    "pragma_table_info('missing_ids') WHERE name = 'attempted'"), 0);
	assert_non_null(rec = recovery_new(fx.st, BASE_MS, MAX_MS));
	assert_int_equal(recovery_summary(rec, RELAY, &s), 1);
	assert_int_equal(s.pending, 2);
	assert_int_equal(s.expired, 1);
	assert_false(s.in_flight);
	assert_int_equal(s.attempts, 4);
	assert_int_equal(s.recovered, 2);
	assert_false(s.can_restore_health);
	assert_int_equal(s.next_attempt_ms, 5000);
	/* Batch 3 is still known as the relay's own. */
	assert_int_equal(recovery_note_failure(rec, RELAY, 3, NOW), 0);
	/* A new id queues behind the copied ones, in their order. */
	assert_int_equal(recovery_register(rec, RELAY, 5,
	    (const uint8_t (*)[32])id(4), 1, false, NOW, NULL), 0);
	assert_int_equal(recovery_begin(rec, RELAY, 5000, &a), RECOVERY_BEGUN);
	assert_int_equal(a.n, 3);
	assert_int_equal(a.number, 5);
	assert_memory_equal(a.ids[0], id(0), 32);
	assert_memory_equal(a.ids[1], id(3), 32);
	assert_memory_equal(a.ids[2], id(4), 32);
	recovery_free(rec);
	store_close(fx.st);
	nftw(fx.dir, fixture_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* --- A large set: round-robin over the whole queue, bounded calls ---- */

#define LARGE		100000
#define LARGE_CHUNK	1000

/* What the store's statements did since the last call (reset on read). */
struct cost {
	int64_t	vm_steps;	/* virtual machine steps: rows visited */
	int64_t	full_scans;	/* steps of a full table scan */
	int64_t	sorts;
};

static struct cost
cost_take(struct rfx *r)
{
	sqlite3_stmt	*s = NULL;
	struct cost	 c = { 0, 0, 0 };

	while ((s = sqlite3_next_stmt(store_db(r->fx->st), s)) != NULL) {
		c.vm_steps += sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP,
		    1);
		c.full_scans += sqlite3_stmt_status(s,
		    SQLITE_STMTSTATUS_FULLSCAN_STEP, 1);
		c.sorts += sqlite3_stmt_status(s, SQLITE_STMTSTATUS_SORT, 1);
	}
	return c;
}

/*
 * A call over one attempt may visit its PAGE ids a few dozen times over
 * (page read, move, failures, expiry, the stored check, triggers, index
 * upkeep); a scan of the relay's queue would visit LARGE rows.
 */
#define STEPS_PER_ID	100

static void
assert_bounded(struct rfx *r, int64_t ids)
{
	struct cost	c = cost_take(r);

	assert_int_equal(c.full_scans, 0);
	assert_int_equal(c.sorts, 0);
	assert_true(c.vm_steps > 0);
	assert_true(c.vm_steps <= STEPS_PER_ID * (ids + 10));
}

static void
large_register(struct rfx *r)
{
	static uint8_t			ids[LARGE_CHUNK][32];
	struct recovery_registered	reg;
	uint32_t			n, i;

	for (n = 0; n < LARGE; n += LARGE_CHUNK) {
		for (i = 0; i < LARGE_CHUNK; i++)
			idx(ids[i], n + i);
		assert_int_equal(recovery_register(r->rec, RELAY, 1,
		    (const uint8_t (*)[32])ids, LARGE_CHUNK, false, NOW, &reg),
		    0);
		assert_int_equal(reg.added, LARGE_CHUNK);
		assert_int_equal(reg.pending_total, n + LARGE_CHUNK);
	}
}

static void
test_large_set_round_robin_bounded(void **state)
{
	struct rfx		*r = *state;
	struct recovery_attempt	*a;
	struct recovery_outcome	 o;
	uint8_t			*turns;
	uint8_t			 one[1][32];
	int64_t			 t = NOW + BASE_MS;
	uint32_t		 k, j, rounds = (LARGE + PAGE - 1) / PAGE;

	large_register(r);
	assert_non_null(turns = calloc(LARGE, 1));
	cost_take(r);
	for (k = 0; k < rounds; k++) {
		a = begin_ok(r, RELAY, t);
		assert_bounded(r, PAGE);
		assert_int_equal(a->n, PAGE);
		assert_int_equal(a->number, k + 1);
		for (j = 0; j < PAGE; j++) {
			uint32_t want = (k * PAGE + j) % LARGE;

			assert_int_equal(idx_of(a->ids[j]), want);
			turns[want]++;
		}
		o = complete(r, "", t);
		assert_bounded(r, PAGE);
		assert_int_equal(o.result, RECOVERY_RETRY_SCHEDULED);
		assert_int_equal(o.remaining, LARGE);
		/* Everyone had a turn before anyone had a second. */
		assert_int_equal(o.next_attempt_in_ms, k + 1 < rounds ?
		    60000 : 120000);
		t += o.next_attempt_in_ms;
		assert_int_equal(begin_rc(r, RELAY, t - 1), RECOVERY_NOT_DUE);
		cost_take(r);
	}
	for (j = 0; j < LARGE; j++)
		assert_int_equal(turns[j], j < rounds * PAGE - LARGE ? 2 : 1);
	free(turns);

	/* The other calls are bounded by what they are given, too. */
	idx(one[0], LARGE / 2);
	assert_int_equal(recovery_satisfied(r->rec,
	    (const uint8_t (*)[32])one, 1, t, NULL, NULL), 1);
	assert_bounded(r, 1);
	assert_int_equal(summary(r, RELAY, 1).pending, LARGE - 1);
	assert_bounded(r, 1);
	assert_int_equal(recovery_register(r->rec, RELAY, 2,
	    (const uint8_t (*)[32])one, 1, false, t, NULL), 0);
	assert_bounded(r, 1);
	assert_int_equal(recovery_defer(r->rec, RELAY, t), 1);
	assert_bounded(r, 1);
	assert_int_equal(recovery_note_failure(r->rec, RELAY, 9, t), 1);
	assert_bounded(r, 1);
	assert_int_equal(summary(r, RELAY, 1).pending, LARGE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_duplicate_registrations_merge, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_deadline_and_single_flight, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_progress_keeps_backoff, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_fresh_progress_keeps_old_budget, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_expiry_keeps_younger_ids, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_large_inventory_no_starvation, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_backoff_doubles_with_cap, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_budget_expires_explicitly, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_full_recovery_restores_health, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_unrelated_failure_poisons_health, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_degraded_registration_poisons_health, rsetup,
		    rteardown),
		cmocka_unit_test_setup_teardown(
		    test_satisfied_locally_costs_no_attempt, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_complete_after_reset_is_noop, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_deferral_spends_no_budget, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_restart_mid_recovery, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_stored_by_another_path, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_expired_id_registered_again, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_defer_gives_back_attempt, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_clock_stepped_back, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_explicit_expire, rsetup, rteardown),
		cmocka_unit_test_setup_teardown(
		    test_next_due_and_surfaces, rsetup, rteardown),
		cmocka_unit_test(test_migration_004_keeps_rows),
		cmocka_unit_test_setup_teardown(
		    test_large_set_round_robin_bounded, rsetup, rteardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
