/*
 * loop.h — the one poll(2) loop of cacheboxd. Only loop.c calls poll().
 *
 * Modules register descriptors (with the poll events they want) and
 * deadlines on the monotonic clock; the poll timeout is the nearest
 * deadline. Callbacks may add, change or remove any watcher or timer,
 * including their own, while the loop is dispatching: a removed watcher is
 * never called again, even later in the same round.
 *
 * Signals: SIGINT/SIGTERM and SIGHUP are turned into flags by handlers that
 * only set a volatile sig_atomic_t and write one byte to a self-pipe; the
 * loop reads them and calls the signal callback outside signal context.
 */
#ifndef CACHEBOX_CORE_LOOP_H
#define CACHEBOX_CORE_LOOP_H

#include <stdint.h>
#include <poll.h>

#include "core/limits.h"

struct loop;

typedef void	(*loop_fd_cb)(struct loop *, int fd, short revents, void *arg);
typedef void	(*loop_timer_cb)(struct loop *, void *arg);
typedef void	(*loop_hook_cb)(struct loop *, void *arg);
typedef void	(*loop_signal_cb)(struct loop *, int signo, void *arg);

/* A new loop; NULL on allocation failure. Free with loop_free(). */
struct loop	*loop_new(void);
void		 loop_free(struct loop *);

/*
 * Watch fd for events (POLLIN, POLLOUT). One watcher per fd: adding an fd
 * that is watched already fails. 0 on success, -1 when full or invalid.
 */
int		 loop_fd_add(struct loop *, int fd, short events, loop_fd_cb, void *arg);
/* Change the events of a watched fd. 0, or -1 when fd is not watched. */
int		 loop_fd_set_events(struct loop *, int fd, short events);
/* Stop watching fd (does not close it). Safe inside any callback. */
void		 loop_fd_del(struct loop *, int fd);

/*
 * Call cb once, delay_ms from now (monotonic). Returns a timer id > 0, or 0
 * on allocation failure. Timers due at the same instant fire in the order
 * they were added.
 */
uint64_t	 loop_timer_add(struct loop *, uint64_t delay_ms, loop_timer_cb, void *arg);
/* Cancel a pending timer; an id that already fired or was cancelled is ignored. */
void		 loop_timer_cancel(struct loop *, uint64_t id);
/*
 * The common case: cancel the timer *id names, if any, and set *id to 0
 * (the "no timer" value every owner keeps).
 */
void		 loop_timer_clear(struct loop *, uint64_t *id);

/*
 * Call cb at the top of every round, before the poll timeout is computed:
 * the place to reap objects marked closing and to refresh deadlines that a
 * library keeps (libmicrohttpd, c-ares, libpq). Returns 0 or -1.
 */
int		 loop_hook_add(struct loop *, loop_hook_cb, void *arg);
void		 loop_hook_del(struct loop *, loop_hook_cb, void *arg);

/*
 * Install handlers for SIGINT, SIGTERM and SIGHUP (and ignore SIGPIPE); cb
 * runs on the loop for each signal received. 0 or -1.
 */
int		 loop_signals(struct loop *, loop_signal_cb, void *arg);

/* Run rounds until loop_stop(). 0 on a clean stop, -1 if poll failed. */
int		 loop_run(struct loop *);
/*
 * One round: hooks, poll for at most max_wait_ms (or the nearest deadline,
 * whichever is sooner; -1 means no cap), dispatch. 0 or -1.
 */
int		 loop_run_once(struct loop *, int max_wait_ms);
/* Ask loop_run() to return after the current round. */
void		 loop_stop(struct loop *);
int		 loop_stopped(const struct loop *);

/*
 * How long the loop was away from poll: a turn is the time from poll's
 * return to the next poll (callbacks, timers, the next round's hooks). A
 * probe sent during a turn waits for its end; over[i] counts the turns
 * longer than LOOP_TURN_BOUNDS_MS[i].
 */
struct loop_turn_stats {
	uint64_t	turns;
	uint64_t	max_us;		/* the longest turn since start */
	uint64_t	over[LOOP_TURN_NBOUNDS];
};
extern const unsigned	loop_turn_bounds_ms[LOOP_TURN_NBOUNDS];
const struct loop_turn_stats *loop_turn_stats(const struct loop *);

/*
 * The monotonic time in ms, read once at the top of each round and once
 * more when poll returns (so timers and callbacks see the time they run at).
 */
uint64_t	 loop_now_ms(const struct loop *);
/*
 * The timeout the next poll would use, from loop_now_ms(): the time to the
 * nearest deadline (0 if one is due), at most max_wait_ms unless that is
 * negative, -1 with no timer and no cap.
 */
int		 loop_poll_timeout(const struct loop *, int max_wait_ms);

#endif
