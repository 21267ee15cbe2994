/*
 * mhd_loop.c — libmicrohttpd on our loop (see mhd_loop.h).
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "core/log.h"
#include "core/loop.h"
#include "net/mhd_loop.h"

static void
on_epoll(struct loop *loop, int fd, short revents, void *arg)
{
	mhd_loop_run(arg);
}

static void
on_timer(struct loop *loop, void *arg)
{
	struct mhd_loop	*ml = arg;

	ml->timer = 0;
	ml->deadline_ms = 0;
	mhd_loop_run(ml);
}

int
mhd_loop_attach(struct mhd_loop *ml, struct loop *loop, struct MHD_Daemon *d,
    const char *who, char *err, size_t errlen)
{
	const union MHD_DaemonInfo	*info;

	memset(ml, 0, sizeof(*ml));
	ml->loop = loop;
	ml->mhd = d;
	ml->who = who;
	ml->epfd = -1;
	if (d == NULL) {
		snprintf(err, errlen, "%s: cannot start the HTTP server", who);
		return -1;
	}
	if ((info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD)) ==
	    NULL) {
		snprintf(err, errlen, "%s: no epoll descriptor", who);
		return -1;
	}
	if (loop_fd_add(loop, info->epoll_fd, POLLIN, on_epoll, ml) == -1) {
		snprintf(err, errlen, "%s: cannot watch the epoll descriptor",
		    who);
		return -1;
	}
	ml->epfd = info->epoll_fd;
	return 0;
}

void
mhd_loop_run(struct mhd_loop *ml)
{
	if (MHD_run(ml->mhd) != MHD_YES)
		log_warnx_rl("%s: MHD_run failed", ml->who);
}

void
mhd_loop_arm(struct mhd_loop *ml)
{
	MHD_UNSIGNED_LONG_LONG	ms;
	uint64_t		want = 0;

	if (MHD_get_timeout(ml->mhd, &ms) == MHD_YES)
		want = loop_now_ms(ml->loop) + ms;
	if (want == ml->deadline_ms)
		return;
	loop_timer_clear(ml->loop, &ml->timer);
	ml->deadline_ms = want;
	if (want != 0 && (ml->timer = loop_timer_add(ml->loop, ms, on_timer,
	    ml)) == 0)
		ml->deadline_ms = 0;
}

void
mhd_loop_stop(struct mhd_loop *ml)
{
	if (ml->loop == NULL)
		return;
	loop_timer_clear(ml->loop, &ml->timer);
	if (ml->epfd != -1)
		loop_fd_del(ml->loop, ml->epfd);
	if (ml->mhd != NULL)
		MHD_stop_daemon(ml->mhd);
	ml->epfd = -1;
	ml->mhd = NULL;
	ml->loop = NULL;
}

void
mhd_loop_log(void *cls, const char *fmt, va_list ap)
{
	char	msg[512];
	size_t	n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if ((n = strlen(msg)) > 0 && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	log_warnx_rl("%s: %s", (const char *)cls, msg);
}
