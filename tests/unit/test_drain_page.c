/*
 * test_drain_page.c — the author drain's end-of-page decision
 * (drain_page_verdict) and limit sizing (drain_page_limit), with exact
 * values: the next cursor is the page's oldest second, inclusive; only a
 * page with nothing older than the cursor ends a relay (duplicates and a
 * short page do not); a full page within one second steps to T - 1 and
 * records a gap at T, but a page repeating the cursor's second is not full
 * by the largest page seen (a whole history in one second completes);
 * events newer than until prove the relay ignores it,
 * and such a relay completes an author only when its answer is below the
 * page it has proven it returns.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/limits.h"
#include "sync/drain_page.h"

/* A page asked with until (started) and limit 500, nothing in it yet. */
static struct drain_page
asked(int64_t until)
{
	struct drain_page	p;

	memset(&p, 0, sizeof(p));
	p.started = true;
	p.until = until;
	p.limit = 500;
	return p;
}

static void
test_first_page_moves_to_oldest_inclusive(void **state)
{
	struct drain_page	p = asked(1700000000);
	struct drain_verdict	v;

	(void)state;
	p.started = false;	/* until was "now" */
	p.received = p.fresh = p.older = 500;
	p.oldest = 1600000123;
	p.newest = 1699999999;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, 1600000123);	/* not minus one */
	assert_false(v.gap);
	assert_int_equal(v.gap_since, -1);
	assert_false(v.ignores_until);
	assert_int_equal(v.why, STORE_CURSOR_WHY_NONE);
}

static void
test_short_page_is_not_the_end(void **state)
{
	struct drain_page	p = asked(1600000123);
	struct drain_verdict	v;

	(void)state;
	/* A relay capping silently at 300 while 500 were asked. */
	p.received = 300;
	p.fresh = 297;
	p.older = 297;
	p.oldest = 1500000000;
	p.newest = 1600000123;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, 1500000000);
}

static void
test_duplicates_older_than_cursor_go_on(void **state)
{
	struct drain_page	p = asked(1600000000);
	struct drain_verdict	v;

	(void)state;
	/* Another relay delivered these ids already: no new id, yet the
	 * relay still had older history, so the drain continues. */
	p.received = 40;
	p.fresh = 0;
	p.older = 38;
	p.oldest = 1590000000;
	p.newest = 1600000000;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, 1590000000);
}

static void
test_nothing_older_completes(void **state)
{
	struct drain_page	p = asked(1590000000);
	struct drain_verdict	v;

	(void)state;
	/* Only the cursor's own second came back, all known. */
	p.received = 3;
	p.oldest = p.newest = 1590000000;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_COMPLETE);
	assert_int_equal(v.until, 1590000000);
	assert_int_equal(v.gap_since, -1);

	p = asked(1590000000);		/* an empty page */
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_COMPLETE);
	assert_int_equal(v.until, 1590000000);

	p = asked(1700000000);		/* no history at all */
	p.started = false;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_COMPLETE);
	assert_int_equal(v.until, 1700000000);
}

static void
test_same_second_full_page_steps_past(void **state)
{
	struct drain_page	p = asked(1650000100);
	struct drain_verdict	v;

	(void)state;
	p.received = p.fresh = p.older = 500;
	p.oldest = p.newest = 1650000000;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, 1649999999);
	assert_true(v.gap);
	assert_int_equal(v.gap_since, 1650000000);
	assert_false(v.ignores_until);
}

static void
test_same_second_full_by_cap_seen(void **state)
{
	struct drain_page	p = asked(1650000100);
	struct drain_verdict	v;

	(void)state;
	/* 300 in one second from a relay that has returned 300 before. */
	p.cap_seen = 300;
	p.received = p.older = 300;
	p.oldest = p.newest = 1650000000;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.until, 1649999999);
	assert_true(v.gap);
	assert_int_equal(v.gap_since, 1650000000);

	/* The same from a relay advertising max_limit 300. */
	p.cap_seen = 0;
	p.max_limit = 300;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.until, 1649999999);
	assert_true(v.gap);

	/* 299 in one second under a proven 300: the second came whole; step
	 * past it without a gap (asked again it would only come back). */
	p.max_limit = 0;
	p.cap_seen = 300;
	p.received = p.older = 299;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, 1649999999);
	assert_false(v.gap);
	assert_int_equal(v.gap_since, -1);
}

static void
test_one_event_is_no_burst(void **state)
{
	struct drain_page	p = asked(1650000100);
	struct drain_verdict	v;

	(void)state;
	p.limit = 1;
	p.received = p.older = 1;
	p.oldest = p.newest = 1650000000;
	drain_page_verdict(&p, &v);
	assert_int_equal(DRAIN_SAME_SECOND_MIN, 2);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, 1650000000);
	assert_false(v.gap);
}

/*
 * The pages a drain sees for an author whose whole history on a relay is
 * n events in second t, from a relay that has returned no bigger page
 * (cap_seen 0 on the first page, then n: the row's own first page).
 */
static void
one_second_history(int64_t n)
{
	const int64_t		t = 1700000000;
	struct drain_page	p = asked(1700000500);
	struct drain_verdict	v;

	p.started = false;
	p.received = p.fresh = p.older = n;
	p.oldest = p.newest = t;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, t - 1);	/* the second came whole */
	assert_false(v.gap);
	assert_int_equal(v.gap_since, -1);

	p = asked(t - 1);			/* nothing before it */
	p.cap_seen = n;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_COMPLETE);
	assert_false(v.gap);
	assert_int_equal(v.gap_since, -1);
	assert_int_equal(v.why, STORE_CURSOR_WHY_NONE);
}

static void
test_whole_history_in_one_second_completes(void **state)
{
	(void)state;
	one_second_history(2);	/* e.g. kinds 0 and 3 */
	one_second_history(3);	/* kinds 0, 3 and 10002 of a new account */
}

static void
test_burst_over_proven_cap_stays_incomplete(void **state)
{
	const int64_t		t = 1700000000;
	struct drain_page	p = asked(1700000500);
	struct drain_verdict	v;

	(void)state;
	/* The relay has returned 3 in one page before and returns 3 events
	 * of second t now: more of t may be hidden. */
	p.started = false;
	p.cap_seen = 3;
	p.received = p.fresh = p.older = 3;
	p.oldest = p.newest = t;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, t - 1);
	assert_true(v.gap);
	assert_int_equal(v.gap_since, t);

	/* Nothing before t: incomplete, with the gap at t. */
	p = asked(t - 1);
	p.has_gap = true;
	p.gap_since = t;
	p.cap_seen = 3;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_INCOMPLETE);
	assert_int_equal(v.why, STORE_CURSOR_WHY_BURST);
	assert_int_equal(v.gap_since, t);
}

static void
test_burst_at_cursor_second_stays_incomplete(void **state)
{
	const int64_t		t = 1700000000;
	struct drain_page	p = asked(t);
	struct drain_verdict	v;

	(void)state;
	/* A full page of newer events and some of t (cut by a silent cap of
	 * 300) left the cursor on t; asked from t the relay fills a page with
	 * t alone. Every id is known (a drain before a reset stored them), so
	 * nothing is new, yet the relay holds more of t than it returns. */
	p.cap_seen = 300;
	p.received = 300;
	p.oldest = p.newest = t;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, t - 1);
	assert_true(v.gap);
	assert_int_equal(v.gap_since, t);

	/* The same with ids not seen before. */
	p.fresh = 120;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.until, t - 1);
	assert_true(v.gap);

	/* Below the proven cap: t is whole, the relay is finished. */
	p.fresh = 0;
	p.received = 299;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_COMPLETE);
	assert_false(v.gap);
}

static void
test_gap_kept_and_reported_at_the_end(void **state)
{
	struct drain_page	p = asked(1640000100);
	struct drain_verdict	v;

	(void)state;
	/* A second burst after one was already stepped past: the first
	 * gap's second is what is recorded. */
	p.has_gap = true;
	p.gap_since = 1650000000;
	p.received = p.older = 500;
	p.oldest = p.newest = 1640000000;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.until, 1639999999);
	assert_true(v.gap);
	assert_int_equal(v.gap_since, 1650000000);

	/* The relay ends later: incomplete, never complete. */
	p = asked(1600000000);
	p.has_gap = true;
	p.gap_since = 1650000000;
	p.received = 2;
	p.oldest = p.newest = 1600000000;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_INCOMPLETE);
	assert_int_equal(v.why, STORE_CURSOR_WHY_BURST);
	assert_int_equal(v.gap_since, 1650000000);
	assert_int_equal(v.until, 1600000000);
}

static void
test_ignores_until_incomplete_at_cap(void **state)
{
	struct drain_page	p = asked(1600000000);
	struct drain_verdict	v;

	(void)state;
	/* The relay sent its newest 300 again: 2 at the cursor's second,
	 * 298 newer. It has returned 300 before, so more may be hidden. */
	p.cap_seen = 300;
	p.received = 2;
	p.newer = 298;
	p.oldest = p.newest = 1600000000;
	drain_page_verdict(&p, &v);
	assert_true(v.ignores_until);
	assert_int_equal(v.next, DRAIN_NEXT_INCOMPLETE);
	assert_int_equal(v.why, STORE_CURSOR_WHY_UNTIL);
	assert_int_equal(v.gap_since, 1600000000);
	assert_int_equal(v.until, 1600000000);	/* cursor does not move */
}

static void
test_ignores_until_complete_below_cap(void **state)
{
	struct drain_page	p = asked(1600000000);
	struct drain_verdict	v;

	(void)state;
	/* The whole history is 120 events, below a proven 300. */
	p.cap_seen = 300;
	p.received = 2;
	p.newer = 118;
	p.oldest = p.newest = 1600000000;
	drain_page_verdict(&p, &v);
	assert_true(v.ignores_until);
	assert_int_equal(v.next, DRAIN_NEXT_COMPLETE);
	assert_int_equal(v.until, 1600000000);
	assert_int_equal(v.why, STORE_CURSOR_WHY_NONE);

	/* One below the proof still completes, the proof itself does not. */
	p.newer = 297;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_COMPLETE);
	p.newer = 298;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_INCOMPLETE);
}

static void
test_ignores_until_without_proof(void **state)
{
	struct drain_page	p = asked(1600000000);
	struct drain_verdict	v;

	(void)state;
	/* No page seen from the relay: nothing proves the cap. */
	p.received = 1;
	p.newer = 5;
	p.oldest = p.newest = 1600000000;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_INCOMPLETE);
	assert_int_equal(v.why, STORE_CURSOR_WHY_UNTIL);

	/* NIP-11 max_limit is no proof either. */
	p.max_limit = 500;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_INCOMPLETE);

	/* The proof is bounded by the limit asked: a 500 seen before, 200
	 * asked now, 200 sent: the relay may hold more. */
	p.max_limit = 0;
	p.cap_seen = 500;
	p.limit = 200;
	p.received = 1;
	p.newer = 199;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_INCOMPLETE);
	p.newer = 198;
	drain_page_verdict(&p, &v);
	assert_int_equal(v.next, DRAIN_NEXT_COMPLETE);
}

static void
test_ignores_until_after_a_gap(void **state)
{
	struct drain_page	p = asked(1649999999);
	struct drain_verdict	v;

	(void)state;
	p.has_gap = true;
	p.gap_since = 1650000000;
	p.cap_seen = 300;
	p.newer = 10;
	drain_page_verdict(&p, &v);
	assert_true(v.ignores_until);
	assert_int_equal(v.next, DRAIN_NEXT_INCOMPLETE);
	assert_int_equal(v.why, STORE_CURSOR_WHY_BURST);
	assert_int_equal(v.gap_since, 1650000000);
}

static void
test_few_unrequested_newer_are_not_proof(void **state)
{
	struct drain_page	p = asked(1600000000);
	struct drain_verdict	v;

	(void)state;
	/* A hostile relay slipped 3 newer events into a page of 100 older
	 * ones: the drain goes on from the oldest second. */
	p.received = 100;
	p.older = 95;
	p.fresh = 95;
	p.newer = 3;
	p.oldest = 1590000000;
	p.newest = 1600000000;
	drain_page_verdict(&p, &v);
	assert_false(v.ignores_until);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, 1590000000);

	/* Nothing older and one newer: the end of the relay, and the
	 * answer (11) is below the proven 500, so complete. */
	p = asked(1590000000);
	p.cap_seen = 500;
	p.received = 10;
	p.newer = 1;
	p.oldest = p.newest = 1590000000;
	drain_page_verdict(&p, &v);
	assert_true(v.ignores_until);
	assert_int_equal(v.next, DRAIN_NEXT_COMPLETE);
}

static void
test_first_page_never_ignores_until(void **state)
{
	struct drain_page	p = asked(1700000000);
	struct drain_verdict	v;

	(void)state;
	p.started = false;
	p.newer = 7;		/* cannot happen, and must not count */
	p.received = p.older = 20;
	p.oldest = 1600000000;
	p.newest = 1690000000;
	drain_page_verdict(&p, &v);
	assert_false(v.ignores_until);
	assert_int_equal(v.next, DRAIN_NEXT_PAGE);
	assert_int_equal(v.until, 1600000000);
}

static void
test_limit_sizing(void **state)
{
	(void)state;
	assert_int_equal(drain_page_limit(500, 0), 500);
	assert_int_equal(drain_page_limit(500, -1), 500);
	assert_int_equal(drain_page_limit(500, 300), 300);
	assert_int_equal(drain_page_limit(500, 500), 500);
	assert_int_equal(drain_page_limit(500, 5000), 500);
	assert_int_equal(drain_page_limit(1, 300), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_page_moves_to_oldest_inclusive),
		cmocka_unit_test(test_short_page_is_not_the_end),
		cmocka_unit_test(test_duplicates_older_than_cursor_go_on),
		cmocka_unit_test(test_nothing_older_completes),
		cmocka_unit_test(test_same_second_full_page_steps_past),
		cmocka_unit_test(test_same_second_full_by_cap_seen),
		cmocka_unit_test(test_one_event_is_no_burst),
		cmocka_unit_test(test_whole_history_in_one_second_completes),
		cmocka_unit_test(test_burst_over_proven_cap_stays_incomplete),
		cmocka_unit_test(test_burst_at_cursor_second_stays_incomplete),
		cmocka_unit_test(test_gap_kept_and_reported_at_the_end),
		cmocka_unit_test(test_ignores_until_incomplete_at_cap),
		cmocka_unit_test(test_ignores_until_complete_below_cap),
		cmocka_unit_test(test_ignores_until_without_proof),
		cmocka_unit_test(test_ignores_until_after_a_gap),
		cmocka_unit_test(test_few_unrequested_newer_are_not_proof),
		cmocka_unit_test(test_first_page_never_ignores_until),
		cmocka_unit_test(test_limit_sizing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
