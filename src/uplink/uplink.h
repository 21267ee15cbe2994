/*
 * uplink.h — forwards the inbox to the owner's relay (ARCHITECTURE.md §8),
 * with
 * at-least-once delivery and an idempotent effect. One interface, two
 * drivers chosen by the scheme of uplink.url:
 *
 *   ws:// wss://                 nostr.c: NIP-01 EVENT/OK through the relay
 *                                pool, a window of outstanding events
 *   postgres:// postgresql://    pg.c: libpq's asynchronous API, batched
 *                                INSERT ... ON CONFLICT DO NOTHING into
 *                                caching_event_inbox inside BEGIN/COMMIT
 *
 * The uplink only reads the inbox and deletes what the peer confirmed; a
 * row refused by the peer becomes a dead letter with its reason; another
 * author's protected event (NIP-70) is never sent: the inbox skips it and
 * counts it (store_inbox_take). It never
 * blocks the loop: every socket is watched by the loop, every wait is a
 * timer. It follows uplink.url at run time: a changed URL stops the old
 * driver and starts the new one; a URL it has not forwarded to before
 * (meta 'uplink_target') queues the whole store, oldest first, a chunk of
 * UPLINK_ENQUEUE_CHUNK events per round.
 */
#ifndef CACHEBOX_UPLINK_UPLINK_H
#define CACHEBOX_UPLINK_UPLINK_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "relay/pool.h"

struct loop;
struct store;
struct config;
struct nostr_key;
struct pool;
struct dns;
struct uplink;
struct uplink_driver;

/*
 * What the uplink works with; everything is borrowed and must outlive it.
 * pool and dns may be NULL: the uplink then makes its own when a driver
 * needs one (a pool for ws://, a resolver for a Postgres host name).
 */
struct uplink_opts {
	struct loop		*loop;
	struct store		*store;
	const struct config	*cfg;	/* uplink.url, uplink.pg.create_schema, tls.ca_file */
	const struct nostr_key	*key;	/* NIP-42 AUTH and box_pubkey */
	struct pool		*pool;
	struct dns		*dns;
	/* records its own pool's relay (pool_opts.observer); may be empty */
	struct pool_observer	 relay_observer;
	/*
	 * Called when uplink.url is taken up (or emptied), so new events are
	 * queued for the uplink or not; may be NULL.
	 */
	void			(*target_changed)(void *arg);
	void			*target_arg;
	/*
	 * The driver for a URL's scheme, NULL with *why set when none serves
	 * it: uplink_driver_for.
	 */
	const struct uplink_driver *(*pick)(const char *url, const char **why);
};

/*
 * The driver for url's scheme (ws://, wss://, postgres://, postgresql://),
 * or NULL with *why set to a sentence when none serves it (uplink/drivers.c).
 */
const struct uplink_driver *uplink_driver_for(const char *url,
			    const char **why);

/* What a status surface shows; strings owned by the uplink. */
struct uplink_status {
	const char	*url;		/* password masked; "" when none */
	const char	*driver;	/* "none", "nostr", "postgres" */
	const char	*state;		/* the driver's state, "off" when none */
	const char	*last_error;	/* "" when none */
	double		 forward_rate;	/* events/s over UPLINK_RATE_WINDOW_S */
	uint64_t	 forwarded_session;	/* since this process started */
	uint64_t	 rejected_session;
	bool		 enqueue_active;	/* queueing the whole store */
};

/* An uplink on opts->loop, not started. NULL on allocation failure. */
struct uplink	*uplink_new(const struct uplink_opts *);
/* Stop and free. NULL is a no-op. */
void		 uplink_free(struct uplink *);

/*
 * Read uplink.url and start its driver (none when empty), then follow
 * the configuration every UPLINK_TICK_MS. A URL no driver can serve (a
 * postgres:// URL in a build without Postgres) is reported in the status,
 * not an error here. 0, or -1 when a timer could not be set.
 */
int		 uplink_start(struct uplink *);
/* Stop the driver and the timers; rows in flight stay pending. */
void		 uplink_stop(struct uplink *);
/* New rows were queued: look at the inbox soon (within this round). */
void		 uplink_kick(struct uplink *);
/*
 * Follow uplink.url now rather than at the next tick (a change at run
 * time), so the status read right after the change shows the new target.
 */
void		 uplink_follow_config(struct uplink *);

/* Whether an uplink URL is configured. */
bool		 uplink_configured(const struct uplink *);
/*
 * Whether work is left: an uplink is configured and rows are pending or
 * the whole store is still being queued. (Dead letters are not work.)
 */
bool		 uplink_busy(struct uplink *);
/* Fill *st; valid until the next call into the uplink. */
void		 uplink_status(const struct uplink *, struct uplink_status *st);

/*
 * Add the "uplink" object to root and the uplink's fields to root's
 * "inbox" object (created if absent): pending, forwarded, rejected,
 * skipped_protected, oldest_pending_age_s. NULL-safe for up (then driver
 * "none").
 */
void		 uplink_status_json(struct uplink *, struct store *,
		    cJSON *root);

/*
 * Dead letters back to pending (seq 0: all) and kick. Number of rows
 * moved, or -1.
 */
int64_t		 uplink_retry(struct uplink *, int64_t seq);

/*
 * The configuration's check of a non-empty uplink.url (config_lend_check,
 * CFG_UPLINK): a ws:// or wss:// URL the pool can dial, or a postgres://
 * or postgresql:// URL without spaces (libpq parses the rest when the
 * driver starts). 0, or -1 with a reason in *why (NULL for a scheme the
 * uplink has no driver for).
 */
int		 uplink_url_check(const char *text, const char **why);

#endif
