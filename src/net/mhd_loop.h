/*
 * mhd_loop.h — libmicrohttpd run from our poll loop, for every HTTP
 * server of the daemon (the status page, ui/http.c; the box's relay,
 * serve/server.c).
 *
 * libmicrohttpd runs in external-loop mode without a listening socket
 * (http_door.h accepts and hands connections over): its epoll descriptor
 * is watched by the loop, and MHD_get_timeout() becomes one loop timer,
 * armed again from the server's loop hook before each poll. Nothing here
 * blocks; libmicrohttpd's messages go to our log with the server's name.
 */
#ifndef CACHEBOX_NET_MHD_LOOP_H
#define CACHEBOX_NET_MHD_LOOP_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct loop;
struct MHD_Daemon;

struct mhd_loop {
	struct loop		*loop;
	struct MHD_Daemon	*mhd;
	const char		*who;		/* log prefix: "http", "relay" */
	int			 epfd;		/* -1 until attached */
	uint64_t		 timer;		/* loop timer id, 0 if none */
	uint64_t		 deadline_ms;	/* when it fires, 0 if none */
};

/*
 * Take d (started with MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET) and
 * watch its epoll descriptor. 0, or -1 with a reason in err (ml then
 * owns d all the same: mhd_loop_stop frees it).
 */
int	mhd_loop_attach(struct mhd_loop *ml, struct loop *, struct MHD_Daemon *d,
	    const char *who, char *err, size_t errlen);
/* Let libmicrohttpd do what it can now. */
void	mhd_loop_run(struct mhd_loop *);
/* From the server's loop hook: wake the loop when it next wants to run. */
void	mhd_loop_arm(struct mhd_loop *);
/* Stop watching and stop the daemon. A zeroed or stopped ml is ignored. */
void	mhd_loop_stop(struct mhd_loop *);
/* MHD_OPTION_EXTERNAL_LOGGER; cls is the server's name ("http"). */
void	mhd_loop_log(void *cls, const char *fmt, va_list ap)
	    __attribute__((format(printf, 2, 0)));

#endif
