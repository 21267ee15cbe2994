/*
 * loop.c — the single poll(2) loop: descriptor watchers, one-shot timers on
 * the monotonic clock, pre-poll hooks and signal delivery. It owns the
 * watcher, timer and hook tables and the signal self-pipe; it never owns
 * the descriptors it watches and must never close one. It is the only
 * place in cachebox that calls poll().
 *
 * A round: read the clock, run the hooks, drop dead entries, poll for at
 * most the time to the nearest deadline, read the clock again, dispatch
 * ready descriptors, then fire due timers. Callbacks may add and remove
 * anything; removal only marks an entry dead, so indexes stay valid while
 * dispatching and a dead watcher is never called. Entries added during a
 * round wait for the next round. A timer added with delay 0 inside a timer
 * callback fires in the next round, so a round always ends.
 *
 * Signals: the handlers only set a volatile sig_atomic_t and write one byte
 * to a non-blocking self-pipe, which the loop watches like any descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"

struct loop_watch {
	int		 fd;
	short		 events;
	bool		 dead;
	loop_fd_cb	 cb;
	void		*arg;
};

struct loop_timer {
	uint64_t	 deadline;	/* ms, monotonic */
	uint64_t	 id;		/* also the order of addition */
	loop_timer_cb	 cb;
	void		*arg;
};

struct loop_hook {
	loop_hook_cb	 cb;
	void		*arg;
	bool		 dead;
};

struct loop {
	struct loop_watch	*w;
	size_t			 nw, capw;
	struct pollfd		*pfd;
	size_t			 cappfd;
	struct loop_timer	*heap;	/* min-heap on (deadline, id) */
	size_t			 nt, capt;
	uint64_t		 next_id;
	struct loop_hook	*hooks;
	size_t			 nh, caph;
	loop_signal_cb		 sig_cb;
	void			*sig_arg;
	uint64_t		 now;
	uint64_t		 woke_us;	/* when poll last returned; 0: never */
	struct loop_turn_stats	 turns;
	int			 stopped;
};

const unsigned	loop_turn_bounds_ms[LOOP_TURN_NBOUNDS] = LOOP_TURN_BOUNDS_MS;
_Static_assert(sizeof((unsigned[])LOOP_TURN_BOUNDS_MS) == sizeof(unsigned) *
    LOOP_TURN_NBOUNDS, "LOOP_TURN_NBOUNDS must count LOOP_TURN_BOUNDS_MS");

/* Signal state is process-wide: the handlers cannot find a loop. */
static const int		 loop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
#define LOOP_NSIGS		 (sizeof(loop_sigs) / sizeof(loop_sigs[0]))
static volatile sig_atomic_t	 loop_sig_flag[LOOP_NSIGS];
static int			 loop_sig_pipe[2] = { -1, -1 };
static struct loop		*loop_sig_owner;

/* A new, empty loop; NULL when out of memory. */
struct loop *
loop_new(void)
{
	struct loop	*l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->next_id = 1;
	l->now = clock_mono_ms();
	return l;
}

/* Restore default signal dispositions and close the self-pipe. */
static void
loop_signals_release(void)
{
	size_t	i;

	for (i = 0; i < LOOP_NSIGS; i++) {
		signal(loop_sigs[i], SIG_DFL);
		loop_sig_flag[i] = 0;
	}
	for (i = 0; i < 2; i++) {
		if (loop_sig_pipe[i] != -1)
			close(loop_sig_pipe[i]);
		loop_sig_pipe[i] = -1;
	}
	loop_sig_owner = NULL;
}

/* Free the loop and its tables; watched descriptors are left open. */
void
loop_free(struct loop *l)
{
	if (l == NULL)
		return;
	if (loop_sig_owner == l)
		loop_signals_release();
	free(l->w);
	free(l->pfd);
	free(l->heap);
	free(l->hooks);
	free(l);
}

/* Grow an array of elements of size sz so that need of them fit. 0 or -1. */
static int
loop_grow(void **arr, size_t *cap, size_t need, size_t sz)
{
	size_t	 ncap;
	void	*p;

	if (need <= *cap)
		return 0;
	ncap = *cap < 8 ? 8 : *cap * 2;
	while (ncap < need)
		ncap *= 2;
	if ((p = reallocarray(*arr, ncap, sz)) == NULL)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* The live watcher of fd, or NULL. */
static struct loop_watch *
loop_watch_find(struct loop *l, int fd)
{
	size_t	i;

	for (i = 0; i < l->nw; i++)
		if (!l->w[i].dead && l->w[i].fd == fd)
			return &l->w[i];
	return NULL;
}

/* Live watchers. */
static size_t
loop_watch_count(const struct loop *l)
{
	size_t	i, n = 0;

	for (i = 0; i < l->nw; i++)
		if (!l->w[i].dead)
			n++;
	return n;
}

/* Watch fd; 0, or -1 if fd is invalid, watched already, or the table is full. */
int
loop_fd_add(struct loop *l, int fd, short events, loop_fd_cb cb, void *arg)
{
	struct loop_watch	*w;

	if (fd < 0 || cb == NULL || loop_watch_find(l, fd) != NULL)
		return -1;
	if (loop_watch_count(l) >= LOOP_MAX_FDS)
		return -1;
	if (loop_grow((void **)&l->w, &l->capw, l->nw + 1, sizeof(*l->w)) == -1)
		return -1;
	w = &l->w[l->nw++];
	w->fd = fd;
	w->events = events;
	w->dead = false;
	w->cb = cb;
	w->arg = arg;
	return 0;
}

/* Change what fd is watched for; 0, or -1 if fd is not watched. */
int
loop_fd_set_events(struct loop *l, int fd, short events)
{
	struct loop_watch	*w;

	if ((w = loop_watch_find(l, fd)) == NULL)
		return -1;
	w->events = events;
	return 0;
}

/* Stop watching fd; its callback is never called again. */
void
loop_fd_del(struct loop *l, int fd)
{
	struct loop_watch	*w;

	if ((w = loop_watch_find(l, fd)) != NULL)
		w->dead = true;
}

/* Does timer a fire before timer b? */
static bool
loop_timer_before(const struct loop_timer *a, const struct loop_timer *b)
{
	if (a->deadline != b->deadline)
		return a->deadline < b->deadline;
	return a->id < b->id;
}

static void
loop_heap_swap(struct loop *l, size_t i, size_t j)
{
	struct loop_timer	t = l->heap[i];

	l->heap[i] = l->heap[j];
	l->heap[j] = t;
}

static void
loop_heap_up(struct loop *l, size_t i)
{
	while (i > 0 && loop_timer_before(&l->heap[i], &l->heap[(i - 1) / 2])) {
		loop_heap_swap(l, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void
loop_heap_down(struct loop *l, size_t i)
{
	size_t	c;

	while ((c = 2 * i + 1) < l->nt) {
		if (c + 1 < l->nt && loop_timer_before(&l->heap[c + 1], &l->heap[c]))
			c++;
		if (!loop_timer_before(&l->heap[c], &l->heap[i]))
			break;
		loop_heap_swap(l, i, c);
		i = c;
	}
}

/* Take the timer at heap index i out of the heap. */
static void
loop_heap_remove(struct loop *l, size_t i)
{
	l->heap[i] = l->heap[--l->nt];
	if (i < l->nt) {
		loop_heap_down(l, i);
		loop_heap_up(l, i);
	}
}

/* Arm a one-shot timer delay_ms from now; its id (> 0), or 0 when out of memory. */
uint64_t
loop_timer_add(struct loop *l, uint64_t delay_ms, loop_timer_cb cb, void *arg)
{
	struct loop_timer	*t;
	uint64_t		 now = clock_mono_ms(), id;

	if (cb == NULL ||
	    loop_grow((void **)&l->heap, &l->capt, l->nt + 1, sizeof(*l->heap)) == -1)
		return 0;
	t = &l->heap[l->nt];
	t->deadline = delay_ms > UINT64_MAX - now ? UINT64_MAX : now + delay_ms;
	t->id = id = l->next_id++;
	t->cb = cb;
	t->arg = arg;
	loop_heap_up(l, l->nt++);
	return id;
}

/* Cancel timer id; unknown, fired or cancelled ids are ignored. */
void
loop_timer_cancel(struct loop *l, uint64_t id)
{
	size_t	i;

	for (i = 0; i < l->nt; i++) {
		if (l->heap[i].id == id) {
			loop_heap_remove(l, i);
			return;
		}
	}
}

void
loop_timer_clear(struct loop *l, uint64_t *id)
{
	if (*id != 0)
		loop_timer_cancel(l, *id);
	*id = 0;
}

/* Run cb at the top of every round. 0, or -1 when out of memory. */
int
loop_hook_add(struct loop *l, loop_hook_cb cb, void *arg)
{
	struct loop_hook	*h;

	if (cb == NULL ||
	    loop_grow((void **)&l->hooks, &l->caph, l->nh + 1, sizeof(*l->hooks)) == -1)
		return -1;
	h = &l->hooks[l->nh++];
	h->cb = cb;
	h->arg = arg;
	h->dead = false;
	return 0;
}

/* Remove the hook added with this cb and arg (the first live one). */
void
loop_hook_del(struct loop *l, loop_hook_cb cb, void *arg)
{
	size_t	i;

	for (i = 0; i < l->nh; i++) {
		if (!l->hooks[i].dead && l->hooks[i].cb == cb &&
		    l->hooks[i].arg == arg) {
			l->hooks[i].dead = true;
			return;
		}
	}
}

static void
loop_sig_handler(int signo)
{
	int	saved = errno;
	size_t	i;
	char	c = 0;

	for (i = 0; i < LOOP_NSIGS; i++)
		if (loop_sigs[i] == signo)
			loop_sig_flag[i] = 1;
	/* A full pipe already guarantees a wake-up; the result is moot. */
	if (write(loop_sig_pipe[1], &c, 1) == -1)
		c = 1;
	errno = saved;
}

/* Empty the self-pipe, then run the callback for every flagged signal. */
static void
loop_sig_read(struct loop *l, int fd, short revents, void *arg)
{
	char	drain[64];
	size_t	i;

	while (read(fd, drain, sizeof(drain)) > 0)
		continue;
	for (i = 0; i < LOOP_NSIGS; i++) {
		if (!loop_sig_flag[i])
			continue;
		loop_sig_flag[i] = 0;
		if (l->sig_cb != NULL)
			l->sig_cb(l, loop_sigs[i], l->sig_arg);
	}
}

/* Make the self-pipe, both ends non-blocking and close-on-exec. 0 or -1. */
static int
loop_sig_pipe_open(void)
{
	int	i;

	if (pipe(loop_sig_pipe) == -1)
		return -1;
	for (i = 0; i < 2; i++) {
		if (fcntl(loop_sig_pipe[i], F_SETFL, O_NONBLOCK) == -1 ||
		    fcntl(loop_sig_pipe[i], F_SETFD, FD_CLOEXEC) == -1) {
			close(loop_sig_pipe[0]);
			close(loop_sig_pipe[1]);
			loop_sig_pipe[0] = loop_sig_pipe[1] = -1;
			return -1;
		}
	}
	return 0;
}

/* Install the handlers on behalf of l. 0 or -1. */
static int
loop_sig_install(void)
{
	struct sigaction	sa;
	size_t			i;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) == -1)
		return -1;
	sa.sa_handler = loop_sig_handler;
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < LOOP_NSIGS; i++)
		if (sigaction(loop_sigs[i], &sa, NULL) == -1)
			return -1;
	return 0;
}

/*
 * Deliver SIGINT, SIGTERM and SIGHUP to cb on this loop and ignore SIGPIPE.
 * One loop per process may own the signals. 0 or -1 (errno set).
 */
int
loop_signals(struct loop *l, loop_signal_cb cb, void *arg)
{
	if (loop_sig_owner != NULL && loop_sig_owner != l) {
		errno = EBUSY;
		return -1;
	}
	l->sig_cb = cb;
	l->sig_arg = arg;
	if (loop_sig_owner == l)
		return 0;
	if (loop_sig_pipe_open() == -1)
		return -1;
	if (loop_fd_add(l, loop_sig_pipe[0], POLLIN, loop_sig_read, NULL) == -1) {
		loop_signals_release();
		return -1;
	}
	loop_sig_owner = l;
	if (loop_sig_install() == -1) {
		loop_fd_del(l, loop_sig_pipe[0]);
		loop_signals_release();
		return -1;
	}
	return 0;
}

/* Drop dead watchers and hooks; only between rounds, never while dispatching. */
static void
loop_compact(struct loop *l)
{
	size_t	i, n;

	for (i = n = 0; i < l->nw; i++)
		if (!l->w[i].dead)
			l->w[n++] = l->w[i];
	l->nw = n;
	for (i = n = 0; i < l->nh; i++)
		if (!l->hooks[i].dead)
			l->hooks[n++] = l->hooks[i];
	l->nh = n;
}

/* Run the hooks that exist at the start of the round. */
static void
loop_run_hooks(struct loop *l)
{
	size_t	i, n = l->nh;

	for (i = 0; i < n; i++)
		if (!l->hooks[i].dead)
			l->hooks[i].cb(l, l->hooks[i].arg);
}

/*
 * The poll timeout in ms: the time from loop_now_ms() to the nearest
 * deadline (0 when one is due), capped by max_wait_ms unless that is
 * negative; -1 (wait for ever) with no timer and no cap.
 */
int
loop_poll_timeout(const struct loop *l, int max_wait_ms)
{
	uint64_t	left;
	int		t;

	if (l->nt == 0)
		return max_wait_ms < 0 ? -1 : max_wait_ms;
	left = l->heap[0].deadline <= l->now ? 0 : l->heap[0].deadline - l->now;
	t = left > INT_MAX ? INT_MAX : (int)left;
	if (max_wait_ms >= 0 && max_wait_ms < t)
		t = max_wait_ms;
	return t;
}

/* Fill the pollfd array from the watchers; the count, or -1 when out of memory. */
static int
loop_fill_pollfds(struct loop *l, size_t *n)
{
	size_t	i;

	if (loop_grow((void **)&l->pfd, &l->cappfd, l->nw, sizeof(*l->pfd)) == -1)
		return -1;
	for (i = 0; i < l->nw; i++) {
		l->pfd[i].fd = l->w[i].fd;
		l->pfd[i].events = l->w[i].events;
		l->pfd[i].revents = 0;
	}
	*n = l->nw;
	return 0;
}

/*
 * Call the watchers that were polled and reported events. Index i of the
 * pollfd array is watcher i: nothing is moved while dispatching. Events a
 * callback stopped asking for in this round are not delivered.
 */
static void
loop_dispatch_fds(struct loop *l, size_t n)
{
	struct loop_watch	*w;
	short			 rev;
	size_t			 i;

	for (i = 0; i < n; i++) {
		if (l->pfd[i].revents == 0)
			continue;
		w = &l->w[i];
		if (w->dead)
			continue;
		rev = l->pfd[i].revents & (w->events | POLLERR | POLLHUP | POLLNVAL);
		if (rev != 0)
			w->cb(l, w->fd, rev, w->arg);
	}
}

/* Fire every timer due at loop_now_ms() that existed before this call. */
static void
loop_fire_timers(struct loop *l)
{
	struct loop_timer	t;
	uint64_t		last = l->next_id;

	while (l->nt > 0 && l->heap[0].deadline <= l->now &&
	    l->heap[0].id < last) {
		t = l->heap[0];
		loop_heap_remove(l, 0);
		t.cb(l, t.arg);
	}
}

/* Count the turn that ends now, begun when poll last returned. */
static void
loop_turn_end(struct loop *l)
{
	uint64_t	us;
	size_t		i;

	if (l->woke_us == 0)
		return;
	us = clock_mono_us() - l->woke_us;
	l->turns.turns++;
	if (us > l->turns.max_us)
		l->turns.max_us = us;
	for (i = 0; i < LOOP_TURN_NBOUNDS; i++)
		if (us > (uint64_t)loop_turn_bounds_ms[i] * 1000)
			l->turns.over[i]++;
}

const struct loop_turn_stats *
loop_turn_stats(const struct loop *l)
{
	return &l->turns;
}

/*
 * One round: hooks, poll for at most the nearest deadline (and at most
 * max_wait_ms unless negative), descriptor callbacks, due timers. 0, or -1
 * if poll failed (EINTR is not a failure).
 */
int
loop_run_once(struct loop *l, int max_wait_ms)
{
	size_t	n;
	int	rv;

	l->now = clock_mono_ms();
	loop_run_hooks(l);
	loop_compact(l);
	if (loop_fill_pollfds(l, &n) == -1)
		return -1;
	loop_turn_end(l);
	rv = poll(l->pfd, (nfds_t)n, loop_poll_timeout(l, max_wait_ms));
	l->woke_us = clock_mono_us();
	l->now = l->woke_us / 1000;
	if (rv == -1 && errno != EINTR) {
		log_warn("poll");
		return -1;
	}
	if (rv > 0)
		loop_dispatch_fds(l, n);
	loop_fire_timers(l);
	return 0;
}

/* Run rounds until loop_stop(); 0 on a clean stop, -1 if poll failed. */
int
loop_run(struct loop *l)
{
	while (!l->stopped)
		if (loop_run_once(l, -1) == -1)
			return -1;
	return 0;
}

/* Make loop_run() return after the current round. */
void
loop_stop(struct loop *l)
{
	l->stopped = 1;
}

/* Non-zero once loop_stop() was called. */
int
loop_stopped(const struct loop *l)
{
	return l->stopped;
}

/* The monotonic time at the top of this round, refreshed when poll returns. */
uint64_t
loop_now_ms(const struct loop *l)
{
	return l->now;
}
