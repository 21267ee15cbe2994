/*
 * app.h — the daemon's parts, wired together once in main.c and handed to
 * the surfaces (status, command table). Read alone, it shows what a running
 * cacheboxd is made of. Nothing here owns behaviour; each part has its own
 * module with its own _init/_free pair.
 */
#ifndef CACHEBOX_APP_H
#define CACHEBOX_APP_H

#include <stdbool.h>
#include <stdint.h>

#include "nostr/key.h"

struct loop;
struct config;
struct store;
struct ctlsock;
struct uplink;
struct dns;
struct pool;
struct ingest;
struct follow;
struct live;
struct drain;
struct retention;
struct http;
struct console;

struct app {
	struct loop		*loop;
	struct config		*cfg;
	struct store		*store;
	struct ctlsock		*ctl;
	struct uplink		*uplink;	/* forwards the inbox (uplink.url) */
	struct dns		*dns;
	struct pool		*pool;		/* every upstream relay */
	struct ingest		*ingest;	/* every event into the store */
	struct follow		*follow;	/* planners: follow graph, */
	struct live		*live;		/* live stream, */
	struct drain		*drain;		/* author drain */
	struct retention	*retention;	/* store.max_bytes enforced */
	struct http		*http;		/* status page, API, /metrics */
	struct console		*console;	/* serial console, or NULL */
	struct nostr_key	 key;		/* the box identity (NIP-42 AUTH) */
	char			 npub[96];

	const char		*state_dir;	/* -d */
	const char		*config_file;	/* -c, or NULL */
	char			**sets;		/* --set KEY=VALUE, in order */
	int			 nsets;

	uint64_t		 started_ms;	/* monotonic */
	bool			 exit_when_idle;
	int			 exit_status;	/* of a loop that stopped cleanly */
	bool			 stopping;
};

/*
 * True when there is no work left: every author complete or recorded
 * incomplete, no pending or running job, inbox empty or no uplink. Used by
 * --exit-when-idle and shown as "idle" in the status.
 */
bool	app_idle(const struct app *);

#endif
