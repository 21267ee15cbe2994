/*
 * driver.h — the contract between the uplink core (uplink.c) and its two
 * drivers (nostr.c, pg.c). Surfaces include uplink.h, never this header.
 *
 * A driver owns its connection and the rows it has in flight; the core
 * owns the configuration, the status strings, the counters and the tick.
 * A driver confirms rows through store_inbox_confirm and reports the
 * count with uplink_delivered; it never frees itself inside one of its
 * own callbacks (the core calls stop from its timer only).
 */
#ifndef CACHEBOX_UPLINK_DRIVER_H
#define CACHEBOX_UPLINK_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

struct uplink;
struct loop;
struct store;
struct config;
struct nostr_key;
struct pool;
struct dns;

struct uplink_driver {
	const char	*name;		/* "nostr", "postgres" */
	/*
	 * Begin forwarding to url (the full URL, password included). The
	 * driver's state, or NULL after setting the uplink's error.
	 */
	void		*(*start)(struct uplink *, const char *url);
	/* Close everything and free; no callback runs afterwards. */
	void		 (*stop)(void *);
	/* Rows may be pending: send what the connection allows now. */
	void		 (*kick)(void *);
	/*
	 * Rows older than what was sent became pending again (a retry):
	 * start again from the oldest pending row. May be NULL.
	 */
	void		 (*rewind)(void *);
};

extern const struct uplink_driver uplink_nostr_driver;
#ifdef CACHEBOX_WITH_POSTGRES
extern const struct uplink_driver uplink_pg_driver;
#endif

/* The parts the core was given, borrowed. */
struct loop		*uplink_loop(struct uplink *);
struct store		*uplink_store(struct uplink *);
const struct config	*uplink_cfg(struct uplink *);
const struct nostr_key	*uplink_key(struct uplink *);
/* The pool (made on first use when none was given); NULL if that failed. */
struct pool		*uplink_pool(struct uplink *);
/* The resolver (made on first use when none was given); NULL on failure. */
struct dns		*uplink_dns(struct uplink *);

/* The driver's state name: a string constant, shown as uplink.state. */
void		 uplink_set_state(struct uplink *, const char *state);
/*
 * Set last_error (a warning is logged when it changes; the text must not
 * hold a password). uplink_clear_error empties it.
 */
void		 uplink_set_error(struct uplink *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
void		 uplink_clear_error(struct uplink *);
/* n rows were confirmed (deleted) / dead-lettered just now. */
void		 uplink_delivered(struct uplink *, uint64_t n);
void		 uplink_rejected(struct uplink *, uint64_t n);
/*
 * True while a new target's queue-everything pass is unfinished: a driver
 * takes no row then. A row delivered and deleted before the pass reached
 * its event would be queued again and sent twice; the pass is quick
 * (UPLINK_ENQUEUE_CHUNK events a turn) and the tick kicks the driver when
 * it ends.
 */
bool		 uplink_queueing(const struct uplink *);
/* Reconnect delay after failures consecutive failures (>= 1), ms. */
uint64_t	 uplink_backoff_ms(unsigned failures);

#endif
