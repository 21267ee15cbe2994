/*
 * app.h — the daemon's parts, wired together once in main.c and handed to
 * the surfaces (status, command table). Read alone, it shows what a running
 * cacheboxd is made of. Nothing here owns behaviour; each part has its own
 * module with its own _init/_free pair.
 */
#ifndef CACHEBOX_APP_H
#define CACHEBOX_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/limits.h"
#include "nostr/key.h"

struct loop;
struct config;
struct store;
struct store_ckpt;
struct ctlsock;
struct uplink;
struct dns;
struct pool;
struct ingest;
struct relays_obs;
struct follow;
struct live;
struct drain;
struct negsync;
struct jobs;
struct retention;
struct sweep;
struct http;
struct serve;
struct backup;
struct download;
struct console;
struct firstrun;

/*
 * A section a part adds to the status document under its own name; the
 * part registers it at start (status.c calls each), so status.c needs
 * no header of the surfaces that serve it.
 */
struct app_section {
	const char	*name;
	void		(*add)(const void *part, cJSON *obj);
	const void	*part;
};

struct app {
	struct loop		*loop;
	struct config		*cfg;
	struct store		*store;
	struct ctlsock		*ctl;
	struct uplink		*uplink;	/* forwards the inbox (uplink.url) */
	struct dns		*dns;
	struct pool		*pool;		/* every upstream relay */
	struct ingest		*ingest;	/* every event into the store */
	struct store_ckpt	*ckpt;		/* WAL checkpoints off the commits */
	struct relays_obs	*relays_obs;	/* the relays table, from pools */
	struct follow		*follow;	/* planners: follow graph, */
	struct live		*live;		/* live stream, */
	struct drain		*drain;		/* author drain */
	struct negsync		*negsync;	/* NIP-77 sync and recovery */
	struct jobs		*jobs;		/* custom backfill jobs */
	struct retention	*retention;	/* store.max_bytes enforced */
	struct sweep		*sweep;		/* expiry, vanish purges, conversion */
	struct http		*http;		/* status page, API, /metrics */
	struct serve		*serve;		/* the box as a relay (relay.listen) */
	struct backup		*backup;	/* cacheboxctl backup, on the loop */
	struct download		*download;	/* the page's backup download, or NULL */
	struct console		*console;	/* serial console, or NULL */
	struct firstrun		*firstrun;	/* setup code while no admin token, or NULL */
	struct app_section	 sections[APP_MAX_SECTIONS];
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
 * The application's glue (app.c).
 *
 * True when there is no work left: every author complete or recorded
 * incomplete, no pending or running job, inbox empty or no uplink, and
 * nothing uncommitted. Used by --exit-when-idle and shown as "idle".
 */
bool	app_idle(const struct app *);
/*
 * Whether the recovery index has ids to fetch again within
 * recovery.settle_s (then the box is not idle): the relay with the
 * earliest such deadline into relay (len bytes, may be NULL), its pending
 * ids into *pending and the deadline, wall ms, into *until_ms (both may
 * be NULL).
 */
bool	app_recovery_wait(const struct app *, char *relay, size_t len,
	    int64_t *pending, int64_t *until_ms);
/*
 * Apply the current value of key to the running parts; key NULL applies
 * every run-time key (after a reload). Every surface that changes a key
 * calls this afterwards, so a key takes effect the same way everywhere.
 */
void	app_config_changed(struct app *, const char *key);
/*
 * Lend the configuration the checks of the values that higher layers
 * parse (relay URLs, public keys, the uplink URL). Before any setting is
 * read: first thing in main.
 */
void	app_config_lend_checks(void);
/*
 * Lend the store what only the app knows: whether a relay URL (a kind
 * 62's relay tag) names this box (net/boxnames.c, from the configuration).
 */
void	app_store_lend(struct app *);
/* Give ingest its limits from the configuration (event size, queueing). */
void	app_ingest_configure(struct app *);
/* The uplink's target changed (uplink_opts.target_changed; arg: the app). */
void	app_uplink_target_changed(void *arg);
/*
 * One line of summary for the service manager's STATUS= (the signature of
 * sdnotify_status_fn; arg: the app): "draining 120/688 authors, 45210
 * events, 4/5 relays open, uplink ok". Written into buf (len bytes),
 * truncated to fit.
 */
void	app_summary(void *arg, char *buf, size_t len);
/*
 * Add a section to the status document: add(part, obj) fills obj, named
 * name, at every status. 0, or -1 when APP_MAX_SECTIONS are taken.
 */
int	app_section_add(struct app *, const char *name,
	    void (*add)(const void *part, cJSON *obj), const void *part);
/* Remove every section of part (before part is freed). */
void	app_section_del(struct app *, const void *part);

#endif
