/*
 * websrv.h — one web server on the daemon's loop, the part both HTTP
 * servers share (the status page and API, ui/http.c; the box's relay
 * endpoint, serve/server.c):
 *
 *   - the front door (http_door.h) on the listening address, and the port
 *     file published while it listens;
 *   - libmicrohttpd in external-epoll mode without a listening socket of
 *     its own, fed by the door: its epoll descriptor is one watcher of the
 *     loop, MHD_get_timeout() one loop timer armed again before each poll;
 *   - the connections libmicrohttpd holds (the door counts them against
 *     its limit), each optionally bounded in time from its accept;
 *   - a request read whole: the head handed to the server, the body kept
 *     up to a bound, then the server's answer;
 *   - the answer helpers (text, JSON, an error) with the headers every
 *     answer carries, and the peer's address.
 *
 * What is a server's own stays with it, given as hooks: what a request
 * means (routing, auth, an upgrade), the headers only its answers carry,
 * which connection makes room at the limit, its work at the top of a
 * round. Nothing here blocks; libmicrohttpd's messages go to the log with
 * the server's name.
 */
#ifndef CACHEBOX_NET_WEBSRV_H
#define CACHEBOX_NET_WEBSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include <cjson/cJSON.h>

struct loop;
struct websrv;
struct http_door_stats;

/* One request, as the server's hooks see it. */
struct websrv_request {
	const char	*url;
	const char	*method;
	void		*own;		/* set by head, freed by done */
	const char	*body;		/* as read, not NUL-terminated */
	size_t		 body_len;
	bool		 too_big;	/* over max_body: the rest dropped */
};

struct websrv_opts {
	struct loop	*loop;
	const char	*who;		/* in the log: "http", "relay" */
	const char	*listen;	/* "host:port" or "[v6]:port" */
	const char	*key;		/* the setting listen came from */
	const char	*port_file;	/* holds the port while listening */
	unsigned	 max_conns;	/* the door's and MHD's together */
	size_t		 max_head;	/* bytes of a request head */
	size_t		 max_body;	/* bytes of a body (0: none is kept) */
	bool		 upgrade;	/* MHD_ALLOW_UPGRADE */
	/* http_door_opts' of the same names */
	uint32_t	 evict_min_age_ms;
	const char	*full_reason;
	/*
	 * A connection is shut down when its whole request is not in this
	 * long after its accept, or its exchange not done (0: never). An
	 * upgraded connection is the server's: these must be 0 with upgrade.
	 */
	uint32_t	 request_deadline_ms;
	uint32_t	 exchange_deadline_ms;
	void		*arg;		/* given to every hook */
	/*
	 * The head is in (url, method, headers): 0 to read the body and then
	 * answer, 1 when an answer was queued already (*rc is libmicrohttpd's
	 * verdict). May set rq->own. NULL: always 0.
	 */
	int		(*head)(void *arg, struct MHD_Connection *,
			    struct websrv_request *rq, enum MHD_Result *rc);
	/* The whole request is in: queue the answer. */
	enum MHD_Result	(*answer)(void *arg, struct MHD_Connection *,
			    const struct websrv_request *rq);
	/* The request is over: free own (not called when own is NULL). */
	void		(*done)(void *arg, void *own);
	/*
	 * Add the headers of this server's answers to r (status, Content-
	 * Type type) besides Content-Type, Connection: close and Cache-
	 * Control: no-store. NULL: none.
	 */
	void		(*headers)(struct MHD_Response *r, unsigned status,
			    const char *type);
	/*
	 * At the limit: drop a connection the server holds (http_door_opts'
	 * shed). NULL: the oldest connection at least shed_min_age_ms old is
	 * shut down, so a flood of slow readers cannot keep everyone out
	 * while a fresh exchange is left to finish.
	 */
	int		(*shed)(void *arg);
	uint32_t	 shed_min_age_ms;
	/*
	 * At the top of every loop round, before libmicrohttpd is asked when
	 * it next wants to run. NULL: nothing.
	 */
	void		(*tick)(void *arg);
};

/*
 * Resolve o->listen, start libmicrohttpd, listen behind the door and
 * publish the port in o->port_file (removed first, so a reader never sees
 * an old one). The strings of o are copied. NULL with a one-line reason
 * in err, naming o->who. The caller frees it with websrv_free.
 */
struct websrv	*websrv_start(const struct websrv_opts *o, char *err,
		    size_t errlen);
/*
 * Close the door, stop libmicrohttpd (every connection it holds, each
 * request's done hook called) and remove the port file. NULL is fine.
 */
void		 websrv_free(struct websrv *);
/* Let libmicrohttpd do what it can now (after a server's own change). */
void		 websrv_run(struct websrv *);

/* The port bound; the address asked for; whether it is loopback only. */
uint16_t	 websrv_port(const struct websrv *);
const char	*websrv_listen(const struct websrv *);
bool		 websrv_loopback(const struct websrv *);
/* Connections open: at the door and held by libmicrohttpd. */
unsigned	 websrv_connections(const struct websrv *);
/* Connections shut down past a deadline or to make room. */
uint64_t	 websrv_cut(const struct websrv *);
const struct http_door_stats *websrv_door_stats(const struct websrv *);

/*
 * A response of status holding len bytes of text (mode as libmicrohttpd
 * takes it; MUST_FREE text is the response's, or freed here when NULL is
 * returned) with Content-Type type, Connection: close, Cache-Control:
 * no-store and the server's headers. NULL when out of memory.
 */
struct MHD_Response *websrv_response(const struct websrv *, unsigned status,
		    const char *type, char *text, size_t len,
		    enum MHD_ResponseMemoryMode mode);
/* Queue r (NULL: MHD_NO) as the answer of c, and let go of it. */
enum MHD_Result	 websrv_queue(struct MHD_Connection *c, unsigned status,
		    struct MHD_Response *r);
/* websrv_response and websrv_queue in one. */
enum MHD_Result	 websrv_text(const struct websrv *, struct MHD_Connection *,
		    unsigned status, const char *type, char *text, size_t len,
		    enum MHD_ResponseMemoryMode mode);
/* Answer doc as JSON (valid UTF-8); doc is taken over and freed. */
enum MHD_Result	 websrv_json(const struct websrv *, struct MHD_Connection *,
		    unsigned status, cJSON *doc);
/* Answer {"error": the formatted text}. */
enum MHD_Result	 websrv_error(const struct websrv *, struct MHD_Connection *,
		    unsigned status, const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));

/*
 * c's exchange may last exchange_ms from its accept instead of the
 * server's exchange deadline, and c is never shed to make room (a long
 * answer the server chose to send, such as a file download).
 */
void		 websrv_conn_long(struct MHD_Connection *c,
		    uint32_t exchange_ms);

/*
 * The address of c's peer: as 4 or 16 bytes in out, returning AF_INET or
 * AF_INET6 (0 when unknown); or as text ("?" when unknown).
 */
int		 websrv_peer_addr(struct MHD_Connection *c, uint8_t out[16]);
void		 websrv_peer_text(struct MHD_Connection *c, char *out,
		    size_t outlen);

#endif
