/*
 * test_store_ckpt.c — the daemon's checkpoint (store/checkpoint.c) on a
 * real store: no commit checkpoints (the WAL only grows until a step),
 * the three steps each take a call of their own, the first copy stops at
 * the snapshot, the WAL restarts only after the last, the loop's hook
 * lets a turn that committed go by without a step, and every row is
 * there and the file sound afterwards.
 */
#define _XOPEN_SOURCE 700	/* nftw */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/limits.h"
#include "core/loop.h"
#include "store/checkpoint.h"
#include "store/store.h"
#include "store/store_sql.h"

#include "store_fixture.h"
#include "ckpt_fixture.h"


static void
test_steps(void **state)
{
	struct fixture		*fx = *state;
	struct store_ckpt	*ck;
	int			 i, before, grown;
	uint64_t		 t = 1000000;

	ck = ckpt_start(fx, NULL, NO_CATCH_UP);

	/* Four times the limit: no commit checkpoints, the WAL only grows. */
	before = 0;
	for (i = 0; i < 16; i++) {
		write_rows(fx, 16);
		assert_true(store_ckpt_frames(ck) > before);
		before = store_ckpt_frames(ck);
	}
	assert_true(before >= 4 * PAGES);

	/* Step 1: the snapshot; a second call without a commit waits. */
	store_ckpt_step(ck, t);
	assert_int_equal(store_ckpt_phase(ck), 1);
	store_ckpt_step(ck, t + 1);
	assert_int_equal(store_ckpt_phase(ck), 1);
	assert_int_equal(store_ckpt_stats(ck)->copies, 0);

	/* Step 2 once a commit grew the WAL past the snapshot: a copy only. */
	write_rows(fx, 16);
	grown = store_ckpt_frames(ck);
	assert_true(grown > before);
	store_ckpt_step(ck, t + 2);
	assert_int_equal(store_ckpt_phase(ck), 2);
	assert_int_equal(store_ckpt_stats(ck)->copies, 1);
	assert_int_equal(store_ckpt_stats(ck)->completions, 0);
	assert_int_equal(store_ckpt_stats(ck)->copied, before);
	assert_int_equal(store_ckpt_stats(ck)->left, grown - before);

	/* The pages' writing-out, then nothing before the settle. */
	store_ckpt_step(ck, t + 3);
	store_ckpt_step(ck, t + 3 + STORE_CKPT_SETTLE_MS - 2);
	assert_int_equal(store_ckpt_phase(ck), 2);
	assert_int_equal(store_ckpt_stats(ck)->completions, 0);

	/* A commit in between does not restart the WAL: it is not all copied. */
	write_rows(fx, 4);
	assert_true(store_ckpt_frames(ck) > grown);

	/* Step 3: the rest; the next commit starts the WAL over. */
	store_ckpt_step(ck, t + 3 + STORE_CKPT_SETTLE_MS);
	assert_int_equal(store_ckpt_phase(ck), 0);
	assert_int_equal(store_ckpt_stats(ck)->completions, 1);
	assert_int_equal(store_ckpt_stats(ck)->failures, 0);
	assert_int_equal(store_ckpt_stats(ck)->left, 0);
	write_rows(fx, 4);
	assert_true(store_ckpt_frames(ck) < PAGES);
	check_file(fx, 16 * 16 + 16 + 4 + 4);
	store_ckpt_free(ck);

	/* Freed: SQLite's own checkpoint is back (the WAL restarts by itself). */
	assert_int_equal(sqlite3_wal_autocheckpoint(store_db(fx->st), PAGES),
	    SQLITE_OK);
	for (i = 0; i < 16; i++)
		write_rows(fx, 16);
	check_file(fx, 16 * 16 * 2 + 16 + 4 + 4);
}

/*
 * Commits that never leave the steps a turn between two transactions: past
 * the catch-up mark a commit copies the whole WAL, and the next one starts
 * it over, so the WAL stays bounded.
 */
static void
test_catch_up(void **state)
{
	struct fixture		*fx = *state;
	struct store_ckpt	*ck;
	int			 i, most = 0;

	/* The mark: twice the limit (STORE_WAL_CATCH_UP_TIMES). */
	ck = ckpt_start(fx, NULL, 0);
	for (i = 0; i < 40; i++) {
		write_rows(fx, 16);
		if (store_ckpt_frames(ck) > most)
			most = store_ckpt_frames(ck);
	}
	assert_true(store_ckpt_stats(ck)->catch_ups >= 3);
	assert_true(store_ckpt_stats(ck)->completions >= 3);
	assert_true(most < 2 * PAGES + 32);
	check_file(fx, 40 * 16);
	store_ckpt_free(ck);
}

/* The loop's hook: a turn that committed is let go by; the next steps. */
static void
test_hook(void **state)
{
	struct fixture		*fx = *state;
	struct store_ckpt	*ck;
	struct loop		*l;
	int			 i;

	assert_non_null(l = loop_new());
	ck = ckpt_start(fx, l, NO_CATCH_UP);
	for (i = 0; i < 8; i++)
		write_rows(fx, 16);
	assert_true(store_ckpt_frames(ck) >= PAGES);
	assert_int_equal(loop_run_once(l, 0), 0);	/* had the commits */
	assert_int_equal(store_ckpt_phase(ck), 0);
	assert_int_equal(loop_run_once(l, 0), 0);	/* step 1 */
	assert_int_equal(store_ckpt_phase(ck), 1);
	write_rows(fx, 16);
	assert_int_equal(loop_run_once(l, 0), 0);	/* had the commit */
	assert_int_equal(store_ckpt_phase(ck), 1);
	assert_int_equal(loop_run_once(l, 0), 0);	/* step 2 */
	assert_int_equal(store_ckpt_phase(ck), 2);
	assert_int_equal(store_ckpt_stats(ck)->copies, 1);
	store_ckpt_free(ck);
	loop_free(l);
	check_file(fx, 8 * 16 + 16);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_catch_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hook, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
