/*
 * test_idfetch.c — the pace of exact-id fetches (sync/idfetch.h), with
 * exact values: a fetch of 163 ids on a relay with a learned cap of 137
 * splits into REQs of at most 137 and goes on at once with the rest; a
 * relay's silent cap is learned from a short answer; only ids asked
 * within the cap and not sent are missing (recovery's backoff applies to
 * them alone); a fetch without EOSE leaves the rest missing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/limits.h"
#include "sync/idfetch.h"

/* A relay that sends at most cap of the ids asked (a silent cap). */
static size_t
relay_answers(size_t asked, size_t cap)
{
	return asked < cap ? asked : cap;
}

static void
test_chunk_bounds(void **state)
{
	(void)state;
	assert_int_equal(idfetch_chunk(163, 300, 0, 0), 163);
	assert_int_equal(idfetch_chunk(163, 300, 137, 0), 137);
	assert_int_equal(idfetch_chunk(26, 300, 137, 0), 26);
	assert_int_equal(idfetch_chunk(1000, 300, 0, 0), 300);
	assert_int_equal(idfetch_chunk(1000, 300, 500, 0), 300);
	assert_int_equal(idfetch_chunk(1000, 300, 137, 100), 100);
	assert_int_equal(idfetch_chunk(0, 300, 137, 0), 0);
}

/* The case: 163 ids, a cap of 137 not yet learnt. */
static void
test_cap_learnt_and_rest_at_once(void **state)
{
	int64_t	cap = 0;

	(void)state;
	assert_int_equal(idfetch_settle(163, 137, true, &cap), IDFETCH_CAPPED);
	assert_int_equal(cap, 137);
	assert_int_equal(idfetch_chunk(26, 300, cap, 0), 26);
	assert_int_equal(idfetch_settle(26, 26, true, &cap), IDFETCH_SETTLED);
	assert_int_equal(cap, 137);
}

/* With the cap learnt, a fetch of n ids takes ceil(n / cap) REQs of <= cap. */
static void
test_learnt_cap_splits(void **state)
{
	int64_t	cap = 137;
	size_t	left = 1000, n, got, reqs = 0, stored = 0;

	(void)state;
	while (left > 0) {
		n = idfetch_chunk(left, RECOVERY_MAX_IDS_PER_ATTEMPT, cap, 0);
		assert_true(n <= 137);
		got = relay_answers(n, 137);
		assert_int_not_equal(idfetch_settle(n, got, true, &cap),
		    IDFETCH_FAILED);
		stored += got;
		left -= got;
		reqs++;
	}
	assert_int_equal(stored, 1000);
	assert_int_equal(reqs, 8);
	assert_int_equal(cap, 137);
}

/* Asked within the cap, not sent: missing (recovery), no retry at once. */
static void
test_short_within_cap_is_missing(void **state)
{
	int64_t	cap = 137;

	(void)state;
	assert_int_equal(idfetch_settle(137, 130, true, &cap), IDFETCH_SETTLED);
	assert_int_equal(cap, 137);
	assert_int_equal(idfetch_settle(50, 0, true, &cap), IDFETCH_SETTLED);
	assert_int_equal(idfetch_settle(50, 50, true, &cap), IDFETCH_SETTLED);
}

/* A whole answer proves no cap: nothing is learnt from it. */
static void
test_whole_answer_learns_nothing(void **state)
{
	int64_t	cap = 0;

	(void)state;
	assert_int_equal(idfetch_settle(20, 20, true, &cap), IDFETCH_SETTLED);
	assert_int_equal(cap, 0);
	/* An empty answer neither. */
	assert_int_equal(idfetch_settle(20, 0, true, &cap), IDFETCH_SETTLED);
	assert_int_equal(cap, 0);
}

/* Short of its cap with no cap known: asked again; the retry settles. */
static void
test_unknown_cap_short_answer_terminates(void **state)
{
	int64_t	cap = 0;

	(void)state;
	/* 300 asked, the relay holds 250 of them (no cap). */
	assert_int_equal(idfetch_settle(300, 250, true, &cap), IDFETCH_CAPPED);
	assert_int_equal(cap, 250);
	/* The 50 asked again: none come, they are missing. */
	assert_int_equal(idfetch_settle(50, 0, true, &cap), IDFETCH_SETTLED);
}

/* No EOSE: what did not come is missing, and nothing is learnt. */
static void
test_no_eose_fails(void **state)
{
	int64_t	cap = 0;

	(void)state;
	assert_int_equal(idfetch_settle(163, 100, false, &cap), IDFETCH_FAILED);
	assert_int_equal(cap, 0);
	assert_int_equal(idfetch_settle(10, 10, false, &cap), IDFETCH_SETTLED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunk_bounds),
		cmocka_unit_test(test_cap_learnt_and_rest_at_once),
		cmocka_unit_test(test_learnt_cap_splits),
		cmocka_unit_test(test_short_within_cap_is_missing),
		cmocka_unit_test(test_whole_answer_learns_nothing),
		cmocka_unit_test(test_unknown_cap_short_answer_terminates),
		cmocka_unit_test(test_no_eose_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
