/*
 * http_door.h — the front door of an HTTP server on the loop: it owns the
 * listening socket, accepts, and keeps each new connection until its
 * request head has arrived whole, then screens the head (http_screen.h)
 * and hands the connection to the server (libmicrohttpd, websrv.h) or
 * answers the refusal itself and closes.
 *
 * What a hostile client can do to a server is bounded here, for every
 * connection the same way:
 *   - connections: the door's own plus those the server holds never
 *     exceed max_conns; at the limit a new connection pushes out the
 *     oldest one still waiting for its head (idle or trickling), and only
 *     when every connection is already being answered is it refused;
 *   - time: a head must be complete HTTP_API_HEAD_DEADLINE_MS after the
 *     connection was accepted, however slowly its bytes trickle in;
 *   - bytes: nothing is read into memory (the head is peeked into one
 *     shared scratch buffer) and a head over max_head is refused.
 */
#ifndef CACHEBOX_NET_HTTP_DOOR_H
#define CACHEBOX_NET_HTTP_DOOR_H

#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loop;
struct addrinfo;
struct http_door;

struct http_door_opts {
	unsigned	max_conns;	/* door's and server's together */
	size_t		max_head;	/* bytes of a request head */
	size_t		max_body;	/* declared Content-Length */
	/*
	 * Take a connection whose head passed the screen (its bytes are
	 * still unread in the socket). 0 when taken (the server now owns
	 * fd), -1 when not (the door closes it).
	 */
	int		(*handoff)(void *arg, int fd, const struct sockaddr *sa,
			    socklen_t salen, uint64_t accepted_ms);
	/* Connections the server holds now. */
	unsigned	(*held)(void *arg);
	/*
	 * At the limit with nothing of the door's own to push out: ask the
	 * server to drop its oldest connection that is not being answered.
	 * 0 when one was dropped (its slot is free), -1 when none could be.
	 */
	int		(*shed)(void *arg);
	void		*arg;
	/*
	 * A connection still sending its head is pushed out for a newer one
	 * only once it is this old (0: at once, whatever its age).
	 */
	uint32_t	evict_min_age_ms;
	/*
	 * At the limit with nothing to push out, a newcomer is answered 503
	 * with this reason before it is closed (NULL: closed without a word).
	 */
	const char	*full_reason;
};

/* Counters for the status page. */
struct http_door_stats {
	uint64_t	accepted;
	uint64_t	passed;		/* handed to the server */
	uint64_t	refused;	/* bad heads answered with an error */
	uint64_t	evicted;	/* pushed out by a newer connection */
	uint64_t	timed_out;	/* head not complete in time */
	uint64_t	turned_away;	/* refused at the limit */
};

/*
 * Listen on ai (the first address) and accept from the loop. NULL with
 * a one-line message in err on failure.
 */
struct http_door *http_door_open(struct loop *, const struct addrinfo *ai,
		    const struct http_door_opts *, char *err, size_t errlen);
/* Close the listening socket and every connection still at the door. */
void		 http_door_free(struct http_door *);
/* The port bound (useful with port 0). */
uint16_t	 http_door_port(const struct http_door *);
/* Connections waiting at the door. */
unsigned	 http_door_waiting(const struct http_door *);
const struct http_door_stats *http_door_stats(const struct http_door *);

/*
 * "host:port" or "[v6]:port" (a numeric port) resolved for
 * http_door_open; key names the setting in err ("http.listen"). NULL
 * with a one-line reason. The caller frees it with freeaddrinfo.
 */
struct addrinfo	*http_door_resolve(const char *listen, const char *key,
		    char *err, size_t errlen);
/* True for 127.0.0.0/8, ::1 and ::ffff:127.x; false for wildcards. */
bool		 http_door_loopback(const struct sockaddr *);
/*
 * Publish the port bound in path (by way of path.tmp and a rename, so a
 * reader never sees half a number); who names the server in the log.
 */
void		 http_door_port_file(const char *path, uint16_t port,
		    const char *who);

#endif
