/*
 * sdnotify.h — telling the service manager (systemd) how the daemon is
 * doing, with its documented notification protocol (sd_notify(3)): one
 * datagram of "KEY=VALUE" lines at a time, sent to the AF_UNIX datagram
 * socket named by $NOTIFY_SOCKET (a path, or "@name" in the abstract
 * namespace). Sent: READY=1 once start-up is done, STATUS= one line of
 * summary when it changes, WATCHDOG=1 from a loop timer at half the
 * interval in $WATCHDOG_USEC (so the keep-alives stop exactly when the
 * loop stops turning), STOPPING=1 at shutdown.
 *
 * Without $NOTIFY_SOCKET nothing is sent and every call is a no-op. A
 * datagram the manager cannot take at once is dropped, never waited for:
 * the loop must not block on it.
 */
#ifndef CACHEBOX_NET_SDNOTIFY_H
#define CACHEBOX_NET_SDNOTIFY_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <stddef.h>
#include <stdint.h>

struct loop;
struct sdnotify;

/*
 * Fills buf (of len bytes, at least SDNOTIFY_STATUS_MAX) with the
 * one-line summary STATUS= carries.
 */
typedef void	(*sdnotify_status_fn)(void *arg, char *buf, size_t len);

/*
 * Parse $NOTIFY_SOCKET: an absolute path, or "@name" for a socket in the
 * abstract namespace. Fills *sa and *salen (the length to hand to
 * sendto: an abstract name is not NUL-terminated). 0, or -1 with a
 * reason in *why (static).
 */
int	sdnotify_parse_socket(const char *text, struct sockaddr_un *sa,
	    socklen_t *salen, const char **why);

/*
 * Parse $WATCHDOG_USEC and $WATCHDOG_PID (either may be NULL, unset) for
 * the process self. Returns 1 with *period_ms = the keep-alive period
 * (half the interval, at least 1 ms) when the watchdog is on and meant for
 * self; 0 when it is off (no WATCHDOG_USEC) or meant for another process
 * (WATCHDOG_PID names one); -1 with a reason in *why (static) when a value
 * is malformed.
 */
int	sdnotify_parse_watchdog(const char *usec, const char *pid, pid_t self,
	    uint64_t *period_ms, const char **why);

/*
 * Notifications from the values of $NOTIFY_SOCKET, $WATCHDOG_USEC and
 * $WATCHDOG_PID as given (the caller reads the environment). NULL when
 * socket_env is NULL or empty (not started by a manager that listens), or
 * when it or the watchdog values are unusable (logged): the daemon runs
 * on without. status fills STATUS= lines; called on the loop. Free with
 * sdnotify_free().
 */
struct sdnotify	*sdnotify_open(struct loop *, const char *socket_env,
		    const char *usec_env, const char *pid_env,
		    sdnotify_status_fn status, void *arg);
/* NULL is a no-op. */
void		 sdnotify_free(struct sdnotify *);

/*
 * Start-up is done (the store is open, the surfaces listen): READY=1 with
 * the first STATUS=, then the watchdog's keep-alives and a STATUS= line
 * each time the summary changes. NULL is a no-op.
 */
void		 sdnotify_ready(struct sdnotify *);
/* Shutdown begins: STOPPING=1; no more keep-alives. NULL is a no-op. */
void		 sdnotify_stopping(struct sdnotify *);

#endif
