/*
 * test_backoff.c — the one capped exponential delay: exact values, the
 * cap, a base above the cap, doublings that would overflow, and jitter
 * staying within half to all of the delay.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/backoff.h"

static void
test_doubling_and_cap(void **state)
{
	assert_int_equal(backoff_ms(1000, 0, 600000), 1000);
	assert_int_equal(backoff_ms(1000, 1, 600000), 2000);
	assert_int_equal(backoff_ms(1000, 3, 600000), 8000);
	assert_int_equal(backoff_ms(30000, 5, 900000), 900000);	/* 960000 capped */
	assert_int_equal(backoff_ms(30000, 4, 900000), 480000);
	assert_int_equal(backoff_ms(5000, 0, 1000), 1000);	/* base above cap */
	assert_int_equal(backoff_ms(1, 200, UINT64_MAX), UINT64_MAX);
	assert_int_equal(backoff_ms(UINT64_MAX / 2 + 1, 1, UINT64_MAX),
	    UINT64_MAX);
	assert_int_equal(backoff_ms(0, 10, 100), 0);
}

static void
test_jitter(void **state)
{
	uint32_t	rnd;

	for (rnd = 0; rnd < 5000; rnd += 7) {
		uint64_t j = backoff_jitter(10000, rnd * 2654435761u);

		assert_true(j >= 5000 && j <= 10000);
	}
	assert_int_equal(backoff_jitter(1, 12345), 0);
	assert_int_equal(backoff_jitter(0, 12345), 0);
	assert_int_equal(backoff_jitter(10, 0), 5);
	assert_int_equal(backoff_jitter(10, 5), 10);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doubling_and_cap),
		cmocka_unit_test(test_jitter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
