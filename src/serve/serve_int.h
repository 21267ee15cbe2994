/*
 * serve_int.h — what the files of src/serve share, private to them: the
 * server, its clients and their subscriptions, and the calls between
 * server.c, client.c, sub.c, neg.c and send.c. Read with serve.h for the
 * design. The calls run one way: server.c > client.c > neg.c > sub.c >
 * send.c; what a lower file needs from a higher one it is given as a hook.
 *
 * Ownership: the server owns its clients (a list, reaped at the top of
 * the loop once marked closing, never inside their own callbacks); a
 * client owns its subscriptions and NIP-77 sessions; the run queue of
 * query slices only points at subscriptions, which leave it before they
 * are freed.
 */
#ifndef CACHEBOX_SERVE_SERVE_INT_H
#define CACHEBOX_SERVE_SERVE_INT_H

#include <sys/queue.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/limits.h"
#include "net/ws_serve.h"
#include "nostr/negentropy.h"
#include "serve/serve.h"

struct MHD_UpgradeResponseHandle;
struct websrv;
struct ws_peer;
struct filter;
struct store_scan;
struct store_scan_row;
struct wire_msg;
struct ingest_stored;

enum client_state {
	CLIENT_OPEN,
	CLIENT_CLOSING,		/* ws_peer closing or told to; reaped on on_close */
	CLIENT_DEAD,		/* on_close came: reaped at the top of the loop */
};

enum sub_kind {
	SUB_REQ,
	SUB_COUNT,
	SUB_NEG,
};

/*
 * A REQ goes WAITING (for a scan slot) -> QUERY (the stored events,
 * newest first) -> CATCHUP (what was stored since the query's snapshot,
 * by rowid) -> LIVE (pushed as ingest stores it). A COUNT and a NEG-OPEN
 * only go through WAITING and QUERY; a NEG then stays OPEN for NEG-MSGs.
 */
enum sub_phase {
	SUB_WAITING,
	SUB_QUERY,
	SUB_CATCHUP,
	SUB_LIVE,
	SUB_NEG_OPEN,
	SUB_DONE,
};

struct client;
struct sub;

/*
 * What a NIP-77 session does at the turns the scheduler drives (neg.c
 * sets them when it opens one), so sub.c never calls up into neg.c:
 * take a scanned row, answer once the item set is complete, release what
 * the session holds when the subscription is freed.
 */
struct sub_hooks {
	int	(*collect)(void *sub, const struct store_scan_row *,
		    const char *json, size_t len);
	void	(*queried)(struct sub *);
	void	(*release)(struct sub *);
};

struct sub {
	TAILQ_ENTRY(sub)	 entry;		/* the client's subs or negs */
	TAILQ_ENTRY(sub)	 runq;		/* the server's run queue */
	bool			 queued;	/* on the run queue */
	bool			 holds_slot;	/* one of RELAYD_ACTIVE_SCANS */
	struct client		*c;
	char			 id[RELAY_SUBID_MAX + 1];
	enum sub_kind		 kind;
	enum sub_phase		 phase;
	struct filter		*filters;	/* owned */
	size_t			 nfilters;
	size_t			 mem;		/* charged to c and srv (sub_mem) */
	struct store_scan	*scan;
	int64_t			 after;		/* CATCHUP: last rowid seen */
	uint64_t		 count;		/* COUNT: so far */
	size_t			 sent_in_slice;
	char			 head[RELAYD_EVENT_HEAD_MAX]; /* ["EVENT","id", */
	size_t			 headlen;	/* 0 until the first EVENT */
	/* NIP-77 */
	const struct sub_hooks	*hooks;		/* neg.c's */
	struct neg_storage	 items;
	struct neg_session	 sess;
	bool			 sess_open;
	bool			 over_cap;	/* more items than NEG_MAX_ITEMS */
	uint64_t		 answered_ms;	/* our last NEG-MSG, loop time */
	uint64_t		 opened_ms;	/* NEG-OPEN came, loop time */
	struct buf		 first;		/* the NEG-OPEN message, decoded */
};
TAILQ_HEAD(sub_list, sub);

struct client {
	TAILQ_ENTRY(client)	 entry;
	struct serve		*srv;
	struct ws_peer		*peer;
	struct MHD_UpgradeResponseHandle *urh;
	int			 fd;
	enum client_state	 state;
	char			 addr[64];
	uint64_t		 connected_ms;
	uint64_t		 last_msg_ms;
	struct sub_list		 subs;		/* REQ and COUNT */
	struct sub_list		 negs;		/* NEG-OPEN sessions */
	unsigned		 nsubs, nnegs;
	size_t			 mem;		/* its subs' and negs' filters */
	unsigned		 scans;		/* scan slots its subs hold */
	bool			 paused;	/* queue over the high-water mark */
	char			 challenge[2 * RELAYD_CHALLENGE_BYTES + 1];
	bool			 authed;	/* AUTH accepted */
	uint8_t			 auth_pubkey[32];
	bool			 may_read;	/* relay.auth allows it to read */
	uint64_t		 reqs, events_sent, refused;
};
TAILQ_HEAD(client_list, client);

struct serve {
	struct loop		*loop;
	struct store		*st;
	struct ingest		*ing;
	const struct config	*cfg;
	uint8_t			 pubkey[32];
	struct websrv		*web;		/* the door and libmicrohttpd */
	struct ws_input_budget	 input;		/* messages being received */
	struct client_list	 clients;
	unsigned		 nclients;	/* open WebSocket clients */
	struct sub_list		 runq;		/* subs with a slice to run */
	struct sub_list		 waitq;		/* subs waiting for a scan slot */
	unsigned		 active_scans;
	unsigned		 neg_sessions;
	size_t			 mem;		/* every client's mem */
	size_t			 mem_peak;	/* highest since the last trim */
	uint64_t		 work_timer;
	uint64_t		 fill_timer;	/* tag index background fill */
	uint64_t		 stall_timer;	/* stalled clients looked for */
	bool			 listening;	/* told ingest of us */
	struct serve_stats	 stats;
	struct buf		 frame;		/* one outgoing message */
};

/* ---- client.c ---------------------------------------------------------- */

/*
 * A new client on the upgraded socket fd (libmicrohttpd's, closed through
 * urh). NULL when out of memory (the caller closes through urh).
 */
struct client	*client_new(struct serve *, int fd, const char *extra,
		    size_t extra_len, struct MHD_UpgradeResponseHandle *urh,
		    const char *addr);
/* Release a client whose ws_peer ended (reap point only). */
void		 client_free(struct client *);
/* ---- send.c -------------------------------------------------------------- */

/* Move a client to state s (logged). */
void		 client_set_state(struct client *, enum client_state);
/* Start closing with a WebSocket close code and reason. */
void		 client_close(struct client *, int code, const char *reason);
/* Cut a client off now (it does not read): code and reason are logged. */
void		 client_cut(struct client *, int code, const char *reason);
/*
 * Send the message in srv->frame. 0 sent, 1 sent but the queue is now
 * over the high-water mark (stop producing), -1 refused (the client is
 * being cut off as a slow reader).
 */
int		 client_send_frame(struct client *);
/* A NOTICE, a CLOSED for subid, an OK. 0, 1 or -1 as above. */
int		 client_notice(struct client *, const char *msg);
int		 client_closed(struct client *, const char *subid,
		    const char *msg);
/* Bytes queued for the client. */
size_t		 client_queued(const struct client *);

/* Over RELAYD_SEND_BUDGET in all: cut the longest queues until under. */
void		 serve_enforce_budget(struct serve *);
/* Take s, or all of a client's subscriptions, off the queues (safe anywhere). */
void		 sub_unschedule(struct sub *);
void		 sub_unschedule_all(struct client *);

/* ---- sub.c --------------------------------------------------------------- */

/* REQ and COUNT of a client (the message's filters are taken). */
void		 sub_req(struct client *, struct wire_msg *);
void		 sub_count(struct client *, struct wire_msg *);
void		 sub_close_msg(struct client *, const char *subid);
/*
 * A new subscription or NIP-77 session of c for the message m (its
 * filters are taken), on the client's list for its kind and waiting for
 * its first slice. NULL when out of memory.
 */
struct sub	*sub_new(struct client *, enum sub_kind, struct wire_msg *);
/*
 * Whether c may open one more subscription or session for m: NULL, or
 * the reason for a CLOSED or NEG-ERR ("blocked: ..." when this client
 * holds its share, RELAYD_CLIENT_MEM; "error: ..." when every client
 * together holds RELAYD_MEM_BUDGET), written into why.
 */
const char	*sub_mem_refusal(struct client *, const struct wire_msg *,
		    char *why, size_t whylen);
/* Free one subscription (off the run queue, its scan slot given back). */
void		 sub_free(struct sub *);
/* Put s on the run queue (no-op when there or not runnable). */
void		 sub_schedule(struct sub *);
/* The client's queue fell below the high-water mark: resume its subs. */
void		 sub_resume_client(struct client *);
/* The ingest listener: push a new event to every live subscription. */
void		 sub_on_stored(void *serve, const struct ingest_stored *);
/* Free every subscription and session of a client (not in a callback of theirs). */
void		 sub_free_all(struct client *);

/* ---- neg.c ---------------------------------------------------------------- */

void		 neg_open(struct client *, struct wire_msg *);
void		 neg_msg(struct client *, struct wire_msg *);
void		 neg_close(struct client *, const char *subid);
/*
 * End c's sessions that waited on the client RELAYD_NEG_IDLE_MS or longer
 * since our last answer, or are open RELAYD_NEG_MAX_MS however often they
 * are fed (NEG-ERR "closed: ..."), so idle clients, or ones that only
 * keep a session alive, cannot hold the RELAYD_MAX_NEG_SESSIONS slots for
 * good.
 */
void		 neg_sweep(struct client *, uint64_t now_ms);

#endif
