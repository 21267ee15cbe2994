/*
 * test_store_ckpt_proc.c — the checkpoint process (store/ckpt_proc.c) on a
 * real store and a real loop: the copy is the child's (the loop copies
 * nothing itself) and the next commit restarts the WAL; a commit past the
 * limit after a copy asks writers to hold until the child has copied it,
 * past the catch-up mark too; writers that give the child no turn meet the loop's catch-up copy;
 * a child killed with SIGKILL is reaped, another child starts and
 * checkpoints in its stead, and every row is
 * there and the file sound afterwards; a child that cannot run is seen as
 * gone when asked (EPIPE, not a SIGPIPE that would end the daemon) and the
 * loop's own steps checkpoint instead. This binary is also the child: its
 * main runs ckpt_proc_main when asked, as cacheboxd's does. Under an
 * emulator (a cross build's tests, CACHEBOX_EMULATOR) the child is run
 * through the same emulator, as ctest runs this binary.
 */
#define _XOPEN_SOURCE 700	/* nftw */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "core/loop.h"
#include "store/checkpoint.h"
#include "store/ckpt_proc.h"
#include "store/store.h"
#include "store/store_sql.h"

#include "store_fixture.h"
#include "ckpt_fixture.h"

#define TURNS	100000		/* turns waited for a condition, at most */
#define EMU_ARGS 8		/* words of CACHEBOX_EMULATOR, at most */

/* The emulator's words (argv for ckpt_proc_set_runner), or NULL. */
static const char	*emu_argv[EMU_ARGS + 1];
static char		 emu_buf[1024];
static const char *const *emu_runner;

/* A runner that cannot be run: the child's exec fails, it exits 127. */
static const char *const no_runner[] = {
	"/nonexistent/cachebox-no-such-emulator", NULL
};

/* Turns of l until the checkpoints completed reach n. */
static void
wait_completions(struct loop *l, struct store_ckpt *ck, uint64_t n)
{
	int	i;

	for (i = 0; i < TURNS && store_ckpt_stats(ck)->completions < n; i++)
		assert_int_equal(loop_run_once(l, 100), 0);
	assert_true(store_ckpt_stats(ck)->completions >= n);
}

/* Past the limit, the child copies; the next commit restarts the WAL. */
static void
test_copies(void **state)
{
	struct fixture		*fx = *state;
	struct store_ckpt	*ck;
	struct loop		*l;
	int			 i, grown;

	assert_non_null(l = loop_new());
	ck = ckpt_start(fx, l, NO_CATCH_UP);
	assert_int_equal(store_ckpt_use_process(ck), 0);
	assert_true(store_ckpt_process_pid(ck) > 0);
	for (i = 0; i < 8; i++)
		write_rows(fx, 16);
	grown = store_ckpt_frames(ck);
	assert_true(grown >= PAGES);
	wait_completions(l, ck, 1);
	/* The loop's steps and catch-ups copied nothing. */
	assert_int_equal(store_ckpt_phase(ck), 0);
	assert_int_equal(store_ckpt_stats(ck)->catch_ups, 0);
	assert_int_equal(store_ckpt_stats(ck)->failures, 0);
	assert_int_equal(store_ckpt_stats(ck)->copied, grown);
	assert_int_equal(store_ckpt_frames(ck), grown);
	write_rows(fx, 4);
	assert_true(store_ckpt_frames(ck) < PAGES);
	check_file(fx, 8 * 16 + 4);
	store_ckpt_free(ck);
	loop_free(l);
}

/*
 * A commit after a whole copy with the WAL still past the limit: writers
 * that can wait hold until the child copied it too; the next commit then
 * restarts the WAL.
 */
static void
test_hold(void **state)
{
	struct fixture		*fx = *state;
	struct store_ckpt	*ck;
	struct loop		*l;
	int			 i;

	assert_non_null(l = loop_new());
	ck = ckpt_start(fx, l, NO_CATCH_UP);
	assert_int_equal(store_ckpt_use_process(ck), 0);
	for (i = 0; i < 8; i++)
		write_rows(fx, 16);
	/* A read held open keeps the next commit from restarting the WAL. */
	assert_int_equal(store_begin(fx->st), 0);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM ckpt_t"),
	    8 * 16);
	wait_completions(l, ck, 1);
	assert_false(store_ckpt_holding(ck));
	assert_int_equal(store_exec(fx->st, "INSERT INTO ckpt_t "
	    "VALUES (randomblob(3000))"), 0);
	assert_int_equal(store_commit(fx->st), 0);
	assert_true(store_ckpt_frames(ck) > PAGES);	/* not restarted */
	assert_true(store_ckpt_holding(ck));
	for (i = 0; i < TURNS && store_ckpt_holding(ck); i++)
		assert_int_equal(loop_run_once(l, 100), 0);
	assert_false(store_ckpt_holding(ck));
	assert_int_equal(store_ckpt_stats(ck)->completions, 2);
	assert_int_equal(store_ckpt_stats(ck)->hold_timeouts, 0);
	write_rows(fx, 4);
	assert_true(store_ckpt_frames(ck) < PAGES);
	check_file(fx, 8 * 16 + 1 + 4);
	store_ckpt_free(ck);
	loop_free(l);
}

/*
 * After a restart the child's first copies reach the last commit only
 * while the next batch is open, and that batch's commit is past the
 * catch-up mark: it asks writers to hold, as any commit after a whole
 * copy does, and the loop copies nothing; the child's copy of it then
 * lets the next commit restart the WAL.
 */
static void
test_hold_past_mark(void **state)
{
	struct fixture		*fx = *state;
	struct store_ckpt	*ck;
	struct loop		*l;
	int			 i;

	assert_non_null(l = loop_new());
	ck = ckpt_start(fx, l, 4 * PAGES);
	assert_int_equal(store_ckpt_use_process(ck), 0);
	for (i = 0; i < 5; i++)
		write_rows(fx, 16);
	assert_true(store_ckpt_frames(ck) >= PAGES);
	assert_true(store_ckpt_frames(ck) < 4 * PAGES);
	/* The next batch opens before the child's whole copy. */
	assert_int_equal(store_begin(fx->st), 0);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM ckpt_t"),
	    5 * 16);
	wait_completions(l, ck, 1);
	assert_int_equal(store_exec(fx->st, "WITH RECURSIVE c(i) AS (SELECT 1 "
	    "UNION ALL SELECT i + 1 FROM c WHERE i < 4 * 64) INSERT INTO "
	    "ckpt_t SELECT randomblob(3000) FROM c"), 0);
	assert_int_equal(store_commit(fx->st), 0);
	assert_true(store_ckpt_frames(ck) >= 4 * PAGES);	/* past the mark */
	assert_true(store_ckpt_holding(ck));
	assert_int_equal(store_ckpt_stats(ck)->catch_ups, 0);
	for (i = 0; i < TURNS && store_ckpt_holding(ck); i++)
		assert_int_equal(loop_run_once(l, 100), 0);
	assert_false(store_ckpt_holding(ck));
	assert_int_equal(store_ckpt_stats(ck)->completions, 2);
	write_rows(fx, 4);
	assert_true(store_ckpt_frames(ck) < PAGES);	/* restarted */
	assert_int_equal(store_ckpt_stats(ck)->catch_ups, 0);
	assert_int_equal(store_ckpt_stats(ck)->hold_timeouts, 0);
	check_file(fx, 5 * 16 + 4 * 64 + 4);
	store_ckpt_free(ck);
	loop_free(l);
}

/*
 * Writers that never give the child a gap: past the catch-up mark, with
 * no request in flight, a commit copies what is left in the loop.
 */
static void
test_catch_up(void **state)
{
	struct fixture		*fx = *state;
	struct store_ckpt	*ck;
	struct loop		*l;
	int			 i, most = 0;

	assert_non_null(l = loop_new());
	ck = ckpt_start(fx, l, 0);
	assert_int_equal(store_ckpt_use_process(ck), 0);
	/* The mark: twice the limit (STORE_WAL_CATCH_UP_TIMES). */
	for (i = 0; i < 40; i++) {
		write_rows(fx, 16);
		if (store_ckpt_frames(ck) > most)
			most = store_ckpt_frames(ck);
	}
	assert_true(store_ckpt_stats(ck)->catch_ups >= 3);
	assert_true(most < 2 * PAGES + 32);
	check_file(fx, 40 * 16);
	store_ckpt_free(ck);
	loop_free(l);
}

/* A child killed: reaped, and another started, which copies. */
static void
test_killed(void **state)
{
	struct fixture		*fx = *state;
	struct store_ckpt	*ck;
	struct loop		*l;
	pid_t			 pid;
	int			 i;

	assert_non_null(l = loop_new());
	ck = ckpt_start(fx, l, NO_CATCH_UP);
	assert_int_equal(store_ckpt_use_process(ck), 0);
	assert_true((pid = store_ckpt_process_pid(ck)) > 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	for (i = 0; i < TURNS && store_ckpt_stats(ck)->proc_deaths == 0; i++)
		assert_int_equal(loop_run_once(l, 100), 0);
	assert_int_equal(store_ckpt_stats(ck)->proc_deaths, 1);
	assert_int_equal(store_ckpt_process_pid(ck), 0);
	assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);	/* reaped */
	assert_int_equal(errno, ECHILD);

	/* Another child, after STORE_CKPT_PROC_RESTART_MS. */
	for (i = 0; i < TURNS && store_ckpt_process_pid(ck) == 0; i++)
		assert_int_equal(loop_run_once(l, 100), 0);
	assert_true(store_ckpt_process_pid(ck) > 0);
	assert_int_not_equal(store_ckpt_process_pid(ck), pid);
	assert_int_equal(store_ckpt_stats(ck)->proc_starts, 2);

	/* It copies the WAL; the next commit restarts it. */
	for (i = 0; i < 8; i++)
		write_rows(fx, 16);
	assert_true(store_ckpt_frames(ck) >= PAGES);
	wait_completions(l, ck, 1);
	assert_int_equal(store_ckpt_stats(ck)->catch_ups, 0);
	write_rows(fx, 4);
	assert_true(store_ckpt_frames(ck) < PAGES);
	check_file(fx, 8 * 16 + 4);
	store_ckpt_free(ck);
	loop_free(l);
}

/* A child that cannot run: asking it fails with no SIGPIPE; reaped. */
static void
test_child_cannot_run(void **state)
{
	struct ckpt_proc	*p;
	struct ckpt_proc_reply	 r;
	siginfo_t		 si;
	pid_t			 pid;
	struct fixture		*fx = *state;

	/* SIGPIPE's default action ends this test, as it would the daemon. */
	assert_true(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
	ckpt_proc_set_runner(no_runner);
	p = ckpt_proc_start(store_path(fx->st));
	ckpt_proc_set_runner(emu_runner);
	assert_non_null(p);
	assert_true((pid = ckpt_proc_pid(p)) > 0);
	/* Its exit, left for ckpt_proc_stop to reap. */
	memset(&si, 0, sizeof(si));
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == -1)
		assert_int_equal(errno, EINTR);
	assert_int_equal(si.si_code, CLD_EXITED);
	assert_int_equal(si.si_status, 127);
	assert_int_equal(ckpt_proc_ask(p), -1);
	assert_int_equal(ckpt_proc_read(p, &r), -1);
	ckpt_proc_stop(p);
	assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);	/* reaped */
	assert_int_equal(errno, ECHILD);
}

/*
 * Every child fails to run: each is found gone, and the loop's own steps
 * copy the WAL between restarts; the next commit restarts it.
 */
static void
test_fallback(void **state)
{
	struct fixture		*fx = *state;
	struct store_ckpt	*ck;
	struct loop		*l;
	int			 i;

	assert_true(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
	assert_non_null(l = loop_new());
	ck = ckpt_start(fx, l, NO_CATCH_UP);
	ckpt_proc_set_runner(no_runner);
	assert_int_equal(store_ckpt_use_process(ck), 0);
	for (i = 0; i < 8; i++)
		write_rows(fx, 16);
	assert_true(store_ckpt_frames(ck) >= PAGES);
	wait_completions(l, ck, 1);
	ckpt_proc_set_runner(emu_runner);
	assert_true(store_ckpt_stats(ck)->proc_deaths >= 1);
	assert_int_equal(store_ckpt_stats(ck)->failures, 0);
	write_rows(fx, 4);
	assert_true(store_ckpt_frames(ck) < PAGES);
	check_file(fx, 8 * 16 + 4);
	store_ckpt_free(ck);
	loop_free(l);
}

/*
 * CACHEBOX_EMULATOR, as ctest sets it in a cross build ("qemu-aarch64-static
 * -L <sysroot>"), split on spaces: the children run through it.
 */
static void
use_emulator(void)
{
	const char	*e = getenv("CACHEBOX_EMULATOR");
	char		*w, *save = NULL;
	int		 n = 0;

	if (e == NULL || *e == '\0')
		return;
	if (snprintf(emu_buf, sizeof(emu_buf), "%s", e) >= (int)sizeof(emu_buf))
		abort();
	for (w = strtok_r(emu_buf, " ", &save); w != NULL;
	    w = strtok_r(NULL, " ", &save)) {
		if (n >= EMU_ARGS)
			abort();
		emu_argv[n++] = w;
	}
	emu_argv[n] = NULL;
	emu_runner = emu_argv;
	ckpt_proc_set_runner(emu_runner);
	printf("checkpoint children run through the emulator: %s\n", e);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_copies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_past_mark, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_catch_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_child_cannot_run, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fallback, setup, teardown),
	};

	if (argc > 1 && strcmp(argv[1], CKPT_PROC_ARG) == 0)
		return ckpt_proc_main(argc, argv);
	use_emulator();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
