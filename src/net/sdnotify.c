/*
 * sdnotify.c — owns the datagram socket to the service manager and the two
 * loop timers that feed it: the watchdog's keep-alive and the STATUS=
 * refresh. It must never block the loop (the socket is non-blocking; a
 * datagram the manager cannot take now is dropped, and the next tick tries
 * again) and never decides what the summary says (the caller's status
 * function does).
 *
 * The keep-alive comes from a loop timer on purpose: a stuck loop (a
 * statement that never returns, a callback that spins) stops WATCHDOG=1 and
 * the manager kills and restarts the daemon, while a loop that turns keeps
 * it alive however busy it is.
 *
 * Each datagram is sent with the address (sendto), not on a connected
 * socket: a manager that re-executes itself binds its socket anew, and a
 * connected socket would keep pointing at the old one.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/sdnotify.h"

struct sdnotify {
	struct loop		*loop;
	int			 fd;
	struct sockaddr_un	 sa;
	socklen_t		 salen;
	char			 name[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	uint64_t		 period_ms;	/* keep-alive period; 0: no watchdog */
	uint64_t		 keepalive_timer;
	uint64_t		 status_timer;
	sdnotify_status_fn	 status;
	void			*arg;
	char			 last[SDNOTIFY_STATUS_MAX];	/* STATUS= last sent */
	bool			 ready;
	bool			 failing;	/* the last send failed (logged once) */
};

int
sdnotify_parse_socket(const char *text, struct sockaddr_un *sa,
    socklen_t *salen, const char **why)
{
	size_t	n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (text == NULL || *text == '\0') {
		*why = "empty";
		return -1;
	}
	n = strlen(text);
	if (text[0] == '@') {
		/* The name is the bytes after a leading NUL, not terminated. */
		if (n == 1) {
			*why = "an abstract socket name after '@' is missing";
			return -1;
		}
		if (n > sizeof(sa->sun_path)) {
			*why = "longer than a socket name can be";
			return -1;
		}
		memcpy(sa->sun_path + 1, text + 1, n - 1);
		*salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
		return 0;
	}
	if (text[0] != '/') {
		*why = "neither an absolute path nor an @name";
		return -1;
	}
	if (n >= sizeof(sa->sun_path)) {
		*why = "longer than a socket path can be";
		return -1;
	}
	memcpy(sa->sun_path, text, n + 1);
	*salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

/* A decimal number of digits only, no sign, no overflow. 0 or -1. */
static int
parse_decimal(const char *s, uint64_t *out)
{
	uint64_t	v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

int
sdnotify_parse_watchdog(const char *usec, const char *pid, pid_t self,
    uint64_t *period_ms, const char **why)
{
	uint64_t	us, p;

	*period_ms = 0;
	if (usec == NULL || *usec == '\0')
		return 0;
	if (parse_decimal(usec, &us) == -1 || us == 0) {
		*why = "WATCHDOG_USEC is not a positive number of microseconds";
		return -1;
	}
	if (pid != NULL && *pid != '\0') {
		if (parse_decimal(pid, &p) == -1 || p == 0) {
			*why = "WATCHDOG_PID is not a process id";
			return -1;
		}
		if (p != (uint64_t)self)
			return 0;
	}
	/* Half the interval, as sd_watchdog_enabled(3) advises. */
	*period_ms = us / 2000;
	if (*period_ms == 0)
		*period_ms = 1;
	return 1;
}

/*
 * Send one datagram. A failure is logged when it begins and when it ends,
 * not at every tick. 0, or -1 (dropped).
 */
static int
notify_send(struct sdnotify *n, const char *msg)
{
	if (sendto(n->fd, msg, strlen(msg), MSG_NOSIGNAL,
	    (const struct sockaddr *)&n->sa, n->salen) == -1) {
		if (!n->failing)
			log_warn("service manager: cannot notify %s", n->name);
		n->failing = true;
		return -1;
	}
	if (n->failing)
		log_info("service manager: %s takes notifications again",
		    n->name);
	n->failing = false;
	return 0;
}

/* The summary in line, made one line whatever the status function wrote. */
static void
make_summary(struct sdnotify *n, char *line, size_t len)
{
	char	*p;

	line[0] = '\0';
	n->status(n->arg, line, len);
	line[len - 1] = '\0';
	for (p = line; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
}

/*
 * Send head (lines ending in "\n"; may be "") and STATUS= with the
 * summary; with head "", only when the summary changed.
 */
static void
notify_status(struct sdnotify *n, const char *head)
{
	char	line[SDNOTIFY_STATUS_MAX], msg[SDNOTIFY_MSG_MAX];

	make_summary(n, line, sizeof(line));
	if (*head == '\0' && strcmp(line, n->last) == 0)
		return;
	(void)snprintf(msg, sizeof(msg), "%sSTATUS=%s", head, line);
	if (notify_send(n, msg) == 0)
		memcpy(n->last, line, sizeof(n->last));
}

static void
status_tick(struct loop *loop, void *arg)
{
	struct sdnotify	*n = arg;

	n->status_timer = loop_timer_add(loop, SDNOTIFY_STATUS_MS,
	    status_tick, n);
	notify_status(n, "");
}

static void
keepalive_tick(struct loop *loop, void *arg)
{
	struct sdnotify	*n = arg;

	n->keepalive_timer = loop_timer_add(loop, n->period_ms,
	    keepalive_tick, n);
	(void)notify_send(n, "WATCHDOG=1");
}

/* The socket's name for log lines: the path, or @name. */
static void
set_name(struct sdnotify *n)
{
	size_t	len = n->salen - offsetof(struct sockaddr_un, sun_path);

	if (n->sa.sun_path[0] == '\0') {
		n->name[0] = '@';
		memcpy(n->name + 1, n->sa.sun_path + 1, len - 1);
		n->name[len] = '\0';
	} else
		memcpy(n->name, n->sa.sun_path, len);
}

struct sdnotify *
sdnotify_open(struct loop *loop, const char *socket_env, const char *usec_env,
    const char *pid_env, sdnotify_status_fn status, void *arg)
{
	struct sdnotify	*n;
	const char	*why;

	if (socket_env == NULL || *socket_env == '\0')
		return NULL;
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		log_warnx("service manager: out of memory");
		return NULL;
	}
	n->loop = loop;
	n->status = status;
	n->arg = arg;
	if (sdnotify_parse_socket(socket_env, &n->sa, &n->salen, &why) == -1) {
		log_warnx("NOTIFY_SOCKET \"%.120s\": %s; not notifying the "
		    "service manager", socket_env, why);
		free(n);
		return NULL;
	}
	set_name(n);
	if (sdnotify_parse_watchdog(usec_env, pid_env, getpid(), &n->period_ms,
	    &why) == -1)
		log_warnx("service manager: %s; no watchdog keep-alive", why);
	if ((n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		log_warn("service manager: socket");
		free(n);
		return NULL;
	}
	if (n->period_ms > 0)
		log_info("service manager: notifying %s, watchdog keep-alive "
		    "every %llu ms", n->name, (unsigned long long)n->period_ms);
	else if (usec_env != NULL && *usec_env != '\0' && pid_env != NULL &&
	    *pid_env != '\0')
		log_info("service manager: notifying %s, no watchdog (it is "
		    "process %.20s's)", n->name, pid_env);
	else
		log_info("service manager: notifying %s, no watchdog", n->name);
	return n;
}

void
sdnotify_ready(struct sdnotify *n)
{
	if (n == NULL || n->ready)
		return;
	n->ready = true;
	notify_status(n, "READY=1\n");
	n->status_timer = loop_timer_add(n->loop, SDNOTIFY_STATUS_MS,
	    status_tick, n);
	if (n->period_ms > 0)
		n->keepalive_timer = loop_timer_add(n->loop, n->period_ms,
		    keepalive_tick, n);
	if (n->status_timer == 0 || (n->period_ms > 0 &&
	    n->keepalive_timer == 0))
		log_warnx("service manager: out of memory for a timer");
}

void
sdnotify_stopping(struct sdnotify *n)
{
	if (n == NULL)
		return;
	loop_timer_clear(n->loop, &n->keepalive_timer);
	loop_timer_clear(n->loop, &n->status_timer);
	(void)notify_send(n, "STOPPING=1\nSTATUS=stopping");
}

void
sdnotify_free(struct sdnotify *n)
{
	if (n == NULL)
		return;
	loop_timer_clear(n->loop, &n->keepalive_timer);
	loop_timer_clear(n->loop, &n->status_timer);
	close(n->fd);
	free(n);
}
