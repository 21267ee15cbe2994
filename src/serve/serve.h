/*
 * serve.h — the box as a relay on the LAN (docs/ARCHITECTURE.md
 * §7a): NIP-01 reads answered from the store newest first
 * and then live from ingest, NIP-11 on the same port, NIP-45 COUNT,
 * NIP-77 as responder, NIP-42 for reads when relay.auth says so, and
 * EVENTs from clients only as relay.accept allows (read-only by default).
 *
 * One listening socket on the loop, served by the web server both HTTP
 * servers share (net/websrv.h): its front door bounds connections and
 * screens heads, libmicrohttpd hands the requests to server.c, which
 * answers NIP-11 and upgrades WebSockets, and wslay frames them
 * (net/ws_serve.h). Queries
 * run in slices (store/scan.h) so one huge REQ never stalls the loop;
 * what waits to be sent to a client is bounded, and a client that does
 * not read is cut off.
 *
 * Files: server.c (this API, its web server's hooks, NIP-11, status),
 * client.c (one connection: its messages, AUTH, EVENT), sub.c (REQ,
 * COUNT, the scheduler of query slices, live push), neg.c (NIP-77
 * sessions), wire.c (the messages).
 */
#ifndef CACHEBOX_SERVE_SERVE_H
#define CACHEBOX_SERVE_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct loop;
struct store;
struct ingest;
struct config;
struct serve;

struct serve_opts {
	struct loop		*loop;
	struct store		*store;
	struct ingest		*ingest;
	const struct config	*cfg;		/* relay.* and follow.roots, read on use */
	const uint8_t		*pubkey;	/* the box's key, for NIP-11 (32 bytes) */
	const char		*listen;	/* host:port; port 0 picks one */
	const char		*state_dir;	/* DIR/relay.port is written there */
};

/* Counters since start, for the status page and /metrics. */
struct serve_stats {
	uint64_t	connections;	/* WebSocket clients accepted */
	uint64_t	refused_full;	/* upgrades refused at RELAYD_MAX_CLIENTS */
	uint64_t	reqs;		/* REQ messages served */
	uint64_t	counts;		/* COUNT messages answered */
	uint64_t	negs;		/* NEG-OPEN sessions opened */
	uint64_t	events_sent;	/* EVENT messages sent (stored and live) */
	uint64_t	live_sent;	/* of which live */
	uint64_t	bytes_out;	/* bytes written to clients' sockets */
	uint64_t	writes_accepted; /* EVENTs stored from clients */
	uint64_t	writes_refused;	/* EVENTs refused (read-only, key, invalid) */
	uint64_t	protected_refused; /* of which NIP-70: not from its author */
	uint64_t	bad_messages;	/* malformed or refused messages */
	uint64_t	cut_slow;	/* clients cut off for not reading */
	uint64_t	refused_mem;	/* subscriptions refused: filters' memory spent */
	uint64_t	nip11;		/* NIP-11 documents served */
};

/*
 * Listen on opts->listen and serve. NULL with a one-line reason in err
 * (the port is busy, the address is bad). The store, ingest and
 * configuration must outlive the server.
 */
struct serve	*serve_start(const struct serve_opts *, char *err,
		    size_t errlen);
/* Close every client and the listening socket. NULL is ignored. */
void		 serve_free(struct serve *);
uint16_t	 serve_port(const struct serve *);
const struct serve_stats *serve_stats(const struct serve *);

/*
 * Whether some client has more waiting than its high-water mark: a bulk
 * source the box controls (an import) waits while it is, so what it
 * stores reaches every reading client instead of cutting them off. A
 * client that does not read at all is cut after RELAYD_STALL_MS, so the
 * wait is bounded. NULL is never busy.
 */
bool		 serve_backlogged(const struct serve *);

/* The status section "relay_endpoint": add its members to obj. */
void		 serve_status_json(const void *serve, cJSON *obj);
/*
 * The connected clients, one object each (address, age, subscriptions,
 * events sent, bytes queued and sent, the key it authenticated as): a new
 * array the caller owns.
 */
cJSON		*serve_clients_json(const struct serve *);

#endif
