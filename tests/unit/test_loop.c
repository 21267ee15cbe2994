/*
 * test_loop.c — the poll loop: timers in deadline order and, at one
 * instant, in the order added; the poll timeout as the nearest deadline;
 * pipe readiness; removal and addition of watchers during dispatch; timer
 * cancel; hooks; signals through the self-pipe; loop_stop.
 *
 * Time is read from the loop's own clock. Upper bounds on elapsed time are
 * generous (seconds) so a loaded machine does not fail them.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/limits.h"
#include "core/loop.h"

#define ROUNDS_MAX	200	/* rounds a test waits for something to happen */

struct rec {
	int	order[32];
	int	n;
};

struct tmark {
	struct rec	*rec;
	int		 tag;
};

static void
mark(struct loop *l, void *arg)
{
	struct tmark	*m = arg;

	m->rec->order[m->rec->n++] = m->tag;
}

/* Run rounds (each at most 1 s) until rec holds n entries. */
static void
run_until(struct loop *l, struct rec *rec, int n)
{
	int	i;

	for (i = 0; i < ROUNDS_MAX && rec->n < n; i++)
		assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(rec->n, n);
}

static void
test_timer_deadline_order(void **state)
{
	struct loop	*l = loop_new();
	struct rec	 rec = { .n = 0 };
	struct tmark	 m[3] = { { &rec, 30 }, { &rec, 10 }, { &rec, 20 } };

	assert_non_null(l);
	assert_true(loop_timer_add(l, 30, mark, &m[0]) > 0);
	assert_true(loop_timer_add(l, 10, mark, &m[1]) > 0);
	assert_true(loop_timer_add(l, 20, mark, &m[2]) > 0);
	run_until(l, &rec, 3);
	assert_int_equal(rec.order[0], 10);
	assert_int_equal(rec.order[1], 20);
	assert_int_equal(rec.order[2], 30);
	loop_free(l);
}

static void
test_timer_same_instant_add_order(void **state)
{
	struct loop	*l = loop_new();
	struct rec	 rec = { .n = 0 };
	struct tmark	 m[8];
	int		 i;

	for (i = 0; i < 8; i++) {
		m[i].rec = &rec;
		m[i].tag = i;
		assert_true(loop_timer_add(l, 0, mark, &m[i]) > 0);
	}
	run_until(l, &rec, 8);
	for (i = 0; i < 8; i++)
		assert_int_equal(rec.order[i], i);
	loop_free(l);
}

static void
test_timer_ids_increase(void **state)
{
	struct loop	*l = loop_new();
	struct rec	 rec = { .n = 0 };
	struct tmark	 m = { &rec, 1 };
	uint64_t	 a, b;

	a = loop_timer_add(l, 100, mark, &m);
	b = loop_timer_add(l, 100, mark, &m);
	assert_true(a > 0);
	assert_true(b > a);
	assert_int_equal(loop_timer_add(l, 1, NULL, NULL), 0);
	loop_free(l);
}

static void
test_poll_timeout_values(void **state)
{
	struct loop	*l = loop_new();
	struct rec	 rec = { .n = 0 };
	struct tmark	 m = { &rec, 1 };
	int		 t;

	assert_int_equal(loop_poll_timeout(l, -1), -1);
	assert_int_equal(loop_poll_timeout(l, 7), 7);
	assert_int_equal(loop_poll_timeout(l, 0), 0);
	assert_int_equal(loop_run_once(l, 0), 0);	/* refresh now */
	assert_true(loop_timer_add(l, 60000, mark, &m) > 0);
	assert_true(loop_timer_add(l, 3000, mark, &m) > 0);
	t = loop_poll_timeout(l, -1);
	assert_true(t >= 3000 && t <= 3000 + 2000);
	assert_int_equal(loop_poll_timeout(l, 50), 50);
	assert_int_equal(loop_poll_timeout(l, 0), 0);
	assert_true(loop_timer_add(l, 0, mark, &m) > 0);
	assert_true(loop_poll_timeout(l, -1) <= 2000);
	loop_free(l);
}

static void
test_poll_sleeps_until_deadline(void **state)
{
	struct loop	*l = loop_new();
	struct rec	 rec = { .n = 0 };
	struct tmark	 m = { &rec, 1 };
	uint64_t	 t0, elapsed;

	t0 = clock_mono_ms();
	assert_true(loop_timer_add(l, 150, mark, &m) > 0);
	/* No descriptors: the only thing that ends the poll is the deadline. */
	assert_int_equal(loop_run_once(l, -1), 0);
	elapsed = loop_now_ms(l) - t0;
	assert_int_equal(rec.n, 1);
	assert_true(elapsed >= 150);
	assert_true(elapsed < 150 + 5000);
	loop_free(l);
}

static void
test_max_wait_caps_poll(void **state)
{
	struct loop	*l = loop_new();
	struct rec	 rec = { .n = 0 };
	struct tmark	 m = { &rec, 1 };
	uint64_t	 t0, elapsed;

	assert_true(loop_timer_add(l, 60000, mark, &m) > 0);
	t0 = clock_mono_ms();
	assert_int_equal(loop_run_once(l, 40), 0);
	elapsed = loop_now_ms(l) - t0;
	assert_int_equal(rec.n, 0);
	assert_true(elapsed >= 40);
	assert_true(elapsed < 40 + 5000);
	loop_free(l);
}

struct fdrec {
	int	calls;
	short	revents;
	int	other;		/* fd to remove or add, or -1 */
	int	readit;
};

static void
fd_note(struct loop *l, int fd, short revents, void *arg)
{
	struct fdrec	*r = arg;
	char		 c;

	r->calls++;
	r->revents = revents;
	if (r->readit && (revents & POLLIN))
		assert_int_equal(read(fd, &c, 1), 1);
}

static void
test_fd_pipe_readiness(void **state)
{
	struct loop	*l = loop_new();
	struct fdrec	 rd = { .other = -1, .readit = 1 };
	struct fdrec	 wr = { .other = -1 };
	int		 p[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(loop_fd_add(l, p[0], POLLIN, fd_note, &rd), 0);
	assert_int_equal(loop_run_once(l, 0), 0);
	assert_int_equal(rd.calls, 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(rd.calls, 1);
	assert_true(rd.revents & POLLIN);
	/* The byte was read: nothing more to report. */
	assert_int_equal(loop_run_once(l, 0), 0);
	assert_int_equal(rd.calls, 1);
	/* A pipe's write end is writable at once. */
	assert_int_equal(loop_fd_add(l, p[1], POLLOUT, fd_note, &wr), 0);
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(wr.calls, 1);
	assert_true(wr.revents & POLLOUT);
	/* Asking for nothing silences it. */
	assert_int_equal(loop_fd_set_events(l, p[1], 0), 0);
	assert_int_equal(loop_run_once(l, 0), 0);
	assert_int_equal(wr.calls, 1);
	loop_free(l);
	close(p[0]);
	close(p[1]);
}

static void
test_fd_hangup(void **state)
{
	struct loop	*l = loop_new();
	struct fdrec	 rd = { .other = -1 };
	int		 p[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(loop_fd_add(l, p[0], POLLIN, fd_note, &rd), 0);
	close(p[1]);
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(rd.calls, 1);
	assert_true(rd.revents & POLLHUP);
	loop_free(l);
	close(p[0]);
}

static void
test_fd_add_errors(void **state)
{
	struct loop	*l = loop_new();
	struct fdrec	 r = { .other = -1 };
	int		 p[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(loop_fd_add(l, -1, POLLIN, fd_note, &r), -1);
	assert_int_equal(loop_fd_add(l, p[0], POLLIN, NULL, &r), -1);
	assert_int_equal(loop_fd_add(l, p[0], POLLIN, fd_note, &r), 0);
	assert_int_equal(loop_fd_add(l, p[0], POLLIN, fd_note, &r), -1);
	assert_int_equal(loop_fd_set_events(l, p[1], POLLOUT), -1);
	loop_fd_del(l, p[1]);		/* not watched: ignored */
	loop_fd_del(l, p[0]);
	assert_int_equal(loop_fd_set_events(l, p[0], POLLIN), -1);
	assert_int_equal(loop_fd_add(l, p[0], POLLIN, fd_note, &r), 0);
	loop_free(l);
	close(p[0]);
	close(p[1]);
}

static void
test_fd_table_full(void **state)
{
	struct loop	*l = loop_new();
	struct fdrec	 r = { .other = -1 };
	int		 fd;

	/* Adding does not touch the descriptor; numbers are enough. */
	for (fd = 0; fd < LOOP_MAX_FDS; fd++)
		assert_int_equal(loop_fd_add(l, fd, POLLIN, fd_note, &r), 0);
	assert_int_equal(loop_fd_add(l, LOOP_MAX_FDS, POLLIN, fd_note, &r), -1);
	loop_fd_del(l, 7);
	assert_int_equal(loop_fd_add(l, LOOP_MAX_FDS, POLLIN, fd_note, &r), 0);
	assert_int_equal(loop_fd_add(l, LOOP_MAX_FDS + 1, POLLIN, fd_note, &r), -1);
	loop_free(l);
}

/* Readable pipes a and b; whichever runs first removes the other. */
struct pair {
	struct loop	*l;
	int		 fd[2];
	int		 calls[2];
};

static void
pair_cb(struct loop *l, int fd, short revents, void *arg)
{
	struct pair	*p = arg;
	int		 me = fd == p->fd[0] ? 0 : 1;

	p->calls[me]++;
	loop_fd_del(l, p->fd[1 - me]);
}

static void
test_remove_other_during_dispatch(void **state)
{
	struct loop	*l = loop_new();
	struct pair	 pr = { .l = l };
	int		 a[2], b[2], i;

	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	pr.fd[0] = a[0];
	pr.fd[1] = b[0];
	assert_int_equal(write(a[1], "x", 1), 1);
	assert_int_equal(write(b[1], "x", 1), 1);
	assert_int_equal(loop_fd_add(l, a[0], POLLIN, pair_cb, &pr), 0);
	assert_int_equal(loop_fd_add(l, b[0], POLLIN, pair_cb, &pr), 0);
	/* Both are ready in the same poll; only the first may run. */
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(pr.calls[0] + pr.calls[1], 1);
	/* The removed one stays silent in later rounds too. */
	for (i = 0; i < 3; i++)
		assert_int_equal(loop_run_once(l, 0), 0);
	assert_true(pr.calls[0] == 0 || pr.calls[1] == 0);
	loop_free(l);
	for (i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
	}
}

static void
self_del_cb(struct loop *l, int fd, short revents, void *arg)
{
	struct fdrec	*r = arg;

	r->calls++;
	loop_fd_del(l, fd);
}

static void
test_remove_self(void **state)
{
	struct loop	*l = loop_new();
	struct fdrec	 r = { .other = -1 };
	int		 p[2], i;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(loop_fd_add(l, p[0], POLLIN, self_del_cb, &r), 0);
	/* Still readable (the byte stays), but never called again. */
	for (i = 0; i < 3; i++)
		assert_int_equal(loop_run_once(l, 10), 0);
	assert_int_equal(r.calls, 1);
	/* The descriptor is free to be watched again. */
	assert_int_equal(loop_fd_add(l, p[0], POLLIN, self_del_cb, &r), 0);
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(r.calls, 2);
	loop_free(l);
	close(p[0]);
	close(p[1]);
}

/* Replace itself with another watcher on the same fd. */
static void
swap_cb(struct loop *l, int fd, short revents, void *arg)
{
	struct fdrec	*r = arg;

	r->calls++;
	loop_fd_del(l, fd);
	assert_int_equal(loop_fd_add(l, fd, POLLIN, fd_note, r + 1), 0);
}

static void
test_replace_self_same_fd(void **state)
{
	struct loop	*l = loop_new();
	struct fdrec	 r[2] = { { .other = -1 }, { .other = -1 } };
	int		 p[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(loop_fd_add(l, p[0], POLLIN, swap_cb, &r[0]), 0);
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(r[0].calls, 1);
	assert_int_equal(r[1].calls, 0);	/* added this round: next round */
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(r[0].calls, 1);
	assert_int_equal(r[1].calls, 1);
	loop_free(l);
	close(p[0]);
	close(p[1]);
}

struct adder {
	int		 fd;
	struct fdrec	*added;
	int		 calls;
};

static void
adder_cb(struct loop *l, int fd, short revents, void *arg)
{
	struct adder	*a = arg;

	if (a->calls++ == 0)
		assert_int_equal(loop_fd_add(l, a->fd, POLLIN, fd_note,
		    a->added), 0);
}

static void
test_add_during_dispatch(void **state)
{
	struct loop	*l = loop_new();
	struct fdrec	 added = { .other = -1 };
	struct adder	 ad = { .added = &added };
	int		 a[2], b[2];

	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	ad.fd = b[0];
	assert_int_equal(write(a[1], "x", 1), 1);
	assert_int_equal(write(b[1], "x", 1), 1);
	assert_int_equal(loop_fd_add(l, a[0], POLLIN, adder_cb, &ad), 0);
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(ad.calls, 1);
	assert_int_equal(added.calls, 0);
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(added.calls, 1);
	assert_int_equal(ad.calls, 2);
	loop_free(l);
	close(a[0]); close(a[1]);
	close(b[0]); close(b[1]);
}

struct rearm {
	struct rec	*rec;
	int		 left;
};

/* A timer that re-adds itself with delay 0. */
static void
rearm_cb(struct loop *l, void *arg)
{
	struct rearm	*r = arg;

	r->rec->order[r->rec->n++] = r->left;
	if (--r->left > 0)
		assert_true(loop_timer_add(l, 0, rearm_cb, r) > 0);
}

static void
test_timer_added_in_callback_waits_a_round(void **state)
{
	struct loop	*l = loop_new();
	struct rec	 rec = { .n = 0 };
	struct rearm	 r = { &rec, 3 };

	assert_true(loop_timer_add(l, 0, rearm_cb, &r) > 0);
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(rec.n, 1);
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(rec.n, 2);
	assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(rec.n, 3);
	assert_int_equal(loop_poll_timeout(l, -1), -1);
	loop_free(l);
}

struct canceller {
	uint64_t	victim;
	struct rec	*rec;
};

static void
cancel_cb(struct loop *l, void *arg)
{
	struct canceller	*c = arg;

	c->rec->order[c->rec->n++] = 99;
	loop_timer_cancel(l, c->victim);
}

static void
test_timer_cancel(void **state)
{
	struct loop		*l = loop_new();
	struct rec		 rec = { .n = 0 };
	struct tmark		 m[3] = { { &rec, 1 }, { &rec, 2 }, { &rec, 3 } };
	struct canceller	 c = { 0, &rec };
	uint64_t		 id1, id2;
	int			 i;

	id1 = loop_timer_add(l, 0, mark, &m[0]);
	assert_true(loop_timer_add(l, 0, cancel_cb, &c) > 0);
	c.victim = loop_timer_add(l, 0, mark, &m[1]);	/* due with it */
	id2 = loop_timer_add(l, 20, mark, &m[2]);
	loop_timer_cancel(l, id2);
	loop_timer_cancel(l, 123456);			/* unknown: ignored */
	for (i = 0; i < 5; i++)
		assert_int_equal(loop_run_once(l, 30), 0);
	assert_int_equal(rec.n, 2);
	assert_int_equal(rec.order[0], 1);
	assert_int_equal(rec.order[1], 99);
	loop_timer_cancel(l, id1);			/* fired: ignored */
	assert_int_equal(loop_poll_timeout(l, -1), -1);
	loop_free(l);
}

struct hookrec {
	int		 calls;
	int		 del_self;
	int		 added;
	struct hookrec	*child;
};

static void
hook_cb(struct loop *l, void *arg)
{
	struct hookrec	*h = arg;

	h->calls++;
	if (h->del_self)
		loop_hook_del(l, hook_cb, h);
	if (h->child != NULL && !h->added) {
		h->added = 1;
		assert_int_equal(loop_hook_add(l, hook_cb, h->child), 0);
	}
}

static void
test_hooks(void **state)
{
	struct loop	*l = loop_new();
	struct hookrec	 child = { 0 };
	struct hookrec	 parent = { .child = &child };
	struct hookrec	 once = { .del_self = 1 };
	int		 i;

	assert_int_equal(loop_hook_add(l, hook_cb, &parent), 0);
	assert_int_equal(loop_hook_add(l, hook_cb, &once), 0);
	assert_int_equal(loop_run_once(l, 0), 0);
	assert_int_equal(parent.calls, 1);
	assert_int_equal(once.calls, 1);
	assert_int_equal(child.calls, 0);	/* added during hooks */
	for (i = 0; i < 3; i++)
		assert_int_equal(loop_run_once(l, 0), 0);
	assert_int_equal(parent.calls, 4);
	assert_int_equal(once.calls, 1);
	assert_int_equal(child.calls, 3);
	loop_hook_del(l, hook_cb, &parent);
	assert_int_equal(loop_run_once(l, 0), 0);
	assert_int_equal(parent.calls, 4);
	assert_int_equal(child.calls, 4);
	loop_free(l);
}

static void
hook_arms_timer(struct loop *l, void *arg)
{
	struct tmark	*m = arg;

	if (m->rec->n == 0 && m->tag == 0) {
		m->tag = 1;
		assert_true(loop_timer_add(l, 0, mark, m) > 0);
	}
}

static void
test_hook_deadline_used_by_same_round(void **state)
{
	struct loop	*l = loop_new();
	struct rec	 rec = { .n = 0 };
	struct tmark	 m = { &rec, 0 };
	uint64_t	 t0;

	assert_int_equal(loop_hook_add(l, hook_arms_timer, &m), 0);
	t0 = clock_mono_ms();
	/* Without the hook's deadline this would wait the whole 5 s. */
	assert_int_equal(loop_run_once(l, 5000), 0);
	assert_int_equal(rec.n, 1);
	assert_true(loop_now_ms(l) - t0 < 4000);
	loop_free(l);
}

struct sigrec {
	int	signo[8];
	int	n;
	int	stop_on_term;
};

static void
sig_cb(struct loop *l, int signo, void *arg)
{
	struct sigrec	*s = arg;

	s->signo[s->n++] = signo;
	if (s->stop_on_term && signo == SIGTERM)
		loop_stop(l);
}

static void
test_signals(void **state)
{
	struct loop		*l = loop_new(), *other = loop_new();
	struct sigrec		 s = { .n = 0 };
	struct sigaction	 sa;
	int			 i;

	assert_int_equal(loop_signals(l, sig_cb, &s), 0);
	assert_int_equal(loop_signals(other, sig_cb, &s), -1);
	assert_int_equal(raise(SIGTERM), 0);
	for (i = 0; i < 10 && s.n < 1; i++)
		assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.signo[0], SIGTERM);
	assert_int_equal(raise(SIGHUP), 0);
	assert_int_equal(raise(SIGINT), 0);
	for (i = 0; i < 10 && s.n < 3; i++)
		assert_int_equal(loop_run_once(l, 1000), 0);
	assert_int_equal(s.n, 3);
	/* Both arrive; the callback sees each once. */
	assert_true((s.signo[1] == SIGHUP && s.signo[2] == SIGINT) ||
	    (s.signo[1] == SIGINT && s.signo[2] == SIGHUP));
	/* SIGPIPE is ignored: the process lives on. */
	assert_int_equal(raise(SIGPIPE), 0);
	assert_int_equal(sigaction(SIGPIPE, NULL, &sa), 0);
	assert_true(sa.sa_handler == SIG_IGN);
	loop_free(l);
	/* Freed: handlers back to default, another loop may take them. */
	assert_int_equal(sigaction(SIGTERM, NULL, &sa), 0);
	assert_true(sa.sa_handler == SIG_DFL);
	assert_int_equal(loop_signals(other, sig_cb, &s), 0);
	loop_free(other);
}

static void
raise_term(struct loop *l, void *arg)
{
	assert_int_equal(raise(SIGTERM), 0);
}

static void
test_signal_stops_run(void **state)
{
	struct loop	*l = loop_new();
	struct sigrec	 s = { .n = 0, .stop_on_term = 1 };

	assert_int_equal(loop_signals(l, sig_cb, &s), 0);
	assert_true(loop_timer_add(l, 10, raise_term, NULL) > 0);
	assert_int_equal(loop_stopped(l), 0);
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(loop_stopped(l), 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.signo[0], SIGTERM);
	loop_free(l);
}

struct stopper {
	int	rounds;
};

static void
stop_after(struct loop *l, void *arg)
{
	struct stopper	*st = arg;

	if (++st->rounds == 3)
		loop_stop(l);
	else
		assert_true(loop_timer_add(l, 1, stop_after, st) > 0);
}

static void
test_loop_stop(void **state)
{
	struct loop	*l = loop_new();
	struct stopper	 st = { 0 };

	assert_true(loop_timer_add(l, 1, stop_after, &st) > 0);
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(st.rounds, 3);
	assert_int_equal(loop_stopped(l), 1);
	/* Stopped already: loop_run returns at once. */
	assert_int_equal(loop_run(l), 0);
	loop_free(l);
}

static void
test_now_monotonic(void **state)
{
	struct loop	*l = loop_new();
	uint64_t	 a, b;

	a = loop_now_ms(l);
	assert_true(a > 0);
	assert_int_equal(loop_run_once(l, 5), 0);
	b = loop_now_ms(l);
	assert_true(b >= a + 5);
	loop_free(l);
}

/* A timer that keeps the loop busy for longer than the first bound. */
static void
busy_cb(struct loop *l, void *arg)
{
	uint64_t	until = clock_mono_us() + loop_turn_bounds_ms[0] * 1000 + 1000;

	(void)l;
	(*(int *)arg)++;
	while (clock_mono_us() < until)
		;
}

/*
 * Turns: counted from poll's return to the next poll (the first round has
 * none before it), the longest kept, and a turn held past the first bound
 * counted over it. Longer bounds count no more turns than shorter ones.
 */
static void
test_turn_stats(void **state)
{
	struct loop			*l = loop_new();
	const struct loop_turn_stats	*t = loop_turn_stats(l);
	int				 fired = 0;
	size_t				 i;

	assert_int_equal(t->turns, 0);
	assert_int_equal(loop_run_once(l, 0), 0);
	assert_int_equal(t->turns, 0);
	assert_int_equal(loop_run_once(l, 0), 0);
	assert_int_equal(t->turns, 1);
	assert_true(loop_timer_add(l, 0, busy_cb, &fired) != 0);
	assert_int_equal(loop_run_once(l, 0), 0);	/* the busy turn */
	assert_int_equal(fired, 1);
	assert_int_equal(loop_run_once(l, 0), 0);	/* which ends here */
	assert_int_equal(t->turns, 3);
	assert_true(t->over[0] >= 1);
	assert_true(t->max_us > loop_turn_bounds_ms[0] * 1000);
	for (i = 1; i < LOOP_TURN_NBOUNDS; i++) {
		assert_true(loop_turn_bounds_ms[i] > loop_turn_bounds_ms[i - 1]);
		assert_true(t->over[i] <= t->over[i - 1]);
	}
	loop_free(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_turn_stats),
		cmocka_unit_test(test_timer_deadline_order),
		cmocka_unit_test(test_timer_same_instant_add_order),
		cmocka_unit_test(test_timer_ids_increase),
		cmocka_unit_test(test_poll_timeout_values),
		cmocka_unit_test(test_poll_sleeps_until_deadline),
		cmocka_unit_test(test_max_wait_caps_poll),
		cmocka_unit_test(test_fd_pipe_readiness),
		cmocka_unit_test(test_fd_hangup),
		cmocka_unit_test(test_fd_add_errors),
		cmocka_unit_test(test_fd_table_full),
		cmocka_unit_test(test_remove_other_during_dispatch),
		cmocka_unit_test(test_remove_self),
		cmocka_unit_test(test_replace_self_same_fd),
		cmocka_unit_test(test_add_during_dispatch),
		cmocka_unit_test(test_timer_added_in_callback_waits_a_round),
		cmocka_unit_test(test_timer_cancel),
		cmocka_unit_test(test_hooks),
		cmocka_unit_test(test_hook_deadline_used_by_same_round),
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_signal_stops_run),
		cmocka_unit_test(test_loop_stop),
		cmocka_unit_test(test_now_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
