/*
 * test_minring.c — the per-minute counters behind the page's chart: counts
 * land in the minute of their time, a read gives the last minutes oldest
 * first with the running one last, minutes passed without a write read 0
 * (also after a gap longer than the ring), minutes before the start read 0,
 * a late time counts in the newest minute, and a bucket saturates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/minring.h"

#define MIN(m)	((uint64_t)(m) * MINRING_MINUTE_MS)
#define T0	MIN(1000)	/* a monotonic time well past zero */

static void
test_minutes(void **state)
{
	struct minring	r;
	uint32_t	out[4];

	minring_init(&r, T0 + 5000);
	minring_add(&r, T0 + 5000, 3);
	minring_add(&r, T0 + 59999, 2);		/* the same minute */
	minring_add(&r, T0 + MIN(1), 7);
	minring_add(&r, T0 + MIN(3) + 1, 1);	/* minute 2 passed idle */
	assert_int_equal(minring_read(&r, T0 + MIN(3) + 30000, out, 4), 4);
	assert_int_equal(out[0], 5);
	assert_int_equal(out[1], 7);
	assert_int_equal(out[2], 0);
	assert_int_equal(out[3], 1);
	/* Read a minute later, nothing written: everything moves left. */
	minring_read(&r, T0 + MIN(4), out, 4);
	assert_int_equal(out[0], 7);
	assert_int_equal(out[1], 0);
	assert_int_equal(out[2], 1);
	assert_int_equal(out[3], 0);
	assert_int_equal(minring_known(&r, T0 + MIN(4)), 5);
	/* A time older than the newest minute counts in that minute. */
	minring_add(&r, T0 + MIN(1), 4);
	minring_read(&r, T0 + MIN(3), out, 2);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 5);
}

static void
test_before_start_and_cap(void **state)
{
	struct minring	r;
	uint32_t	out[INGEST_MINUTES + 10];

	minring_init(&r, MIN(2));
	minring_add(&r, MIN(2), 9);
	/* Asking for more than the ring holds gives the ring's length. */
	assert_int_equal(minring_read(&r, MIN(2), out, INGEST_MINUTES + 10),
	    INGEST_MINUTES);
	assert_int_equal(out[INGEST_MINUTES - 1], 9);
	assert_int_equal(out[INGEST_MINUTES - 2], 0);	/* before the start */
	assert_int_equal(out[0], 0);			/* before minute 0 */
	assert_int_equal(minring_known(&r, MIN(2)), 1);
	assert_int_equal(minring_known(&r, MIN(2 + 2 * INGEST_MINUTES)),
	    INGEST_MINUTES);
}

static void
test_wrap(void **state)
{
	struct minring	r;
	uint32_t	out[INGEST_MINUTES];
	uint64_t	m;
	size_t		i;

	minring_init(&r, T0);
	for (m = 0; m < INGEST_MINUTES + 5; m++)
		minring_add(&r, T0 + MIN(m), (uint32_t)m + 1);
	minring_read(&r, T0 + MIN(INGEST_MINUTES + 4), out, INGEST_MINUTES);
	for (i = 0; i < INGEST_MINUTES; i++)
		assert_int_equal(out[i], i + 6);	/* minutes 5 .. N+4 */
	/* A gap longer than the ring empties it. */
	minring_add(&r, T0 + MIN(3 * INGEST_MINUTES), 2);
	minring_read(&r, T0 + MIN(3 * INGEST_MINUTES), out, INGEST_MINUTES);
	for (i = 0; i + 1 < INGEST_MINUTES; i++)
		assert_int_equal(out[i], 0);
	assert_int_equal(out[INGEST_MINUTES - 1], 2);
}

static void
test_saturates(void **state)
{
	struct minring	r;
	uint32_t	out[1];

	minring_init(&r, T0);
	minring_add(&r, T0, UINT32_MAX - 1);
	minring_add(&r, T0, 5);
	minring_read(&r, T0, out, 1);
	assert_int_equal(out[0], UINT32_MAX);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minutes),
		cmocka_unit_test(test_before_start_and_cap),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_saturates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
