/*
 * pager.h — one paged request on one relay, shared by the author drain
 * (sync/drain.h: a cursor row per author and relay) and jobs
 * (sync/jobs.h: a batch row per batch and relay).
 *
 * A pager asks {filter, "until": page.until, "limit": page.limit} and
 * streams each event into ingest as it arrives, counting the events of
 * the asked filter into its struct drain_page (the owner's match hook
 * says which are). A request the pool sends again (reconnect, rate
 * limit) starts the page's counts afresh. At EOSE the page's verdict
 * (drain_page_verdict) is made and handed to the owner's commit hook
 * inside ingest's open batch, so what the owner records commits with the
 * page's events; a page during which ingest lost a batch, or an event the
 * store refused, is not committed. A request that stays silent for the
 * timeout while its relay is open, or whose relay stays down for
 * DRAIN_GIVEUP_FAILURES connects, or that the relay closes, is handed to
 * the fail hook.
 *
 * The pager never frees anything of its owner: every hook may end the
 * owner's step (pager_close, then free) except match, newer, resent and
 * commit, which run inside the pool's or ingest's callbacks on a live
 * request.
 */
#ifndef CACHEBOX_SYNC_PAGER_H
#define CACHEBOX_SYNC_PAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nostr/filter.h"
#include "sync/drain_page.h"
#include "sync/ingest.h"

struct loop;
struct pool;
struct pool_sub;
struct follow;
struct relay_msg;

/* How a request ended without EOSE. */
enum pager_fail {
	PAGER_CLOSED = 0,	/* the relay closed it: why is its message */
	PAGER_SILENT,		/* no EOSE in time while the relay is open */
	PAGER_UNREACHABLE,	/* the relay stayed down: why names its error */
	PAGER_NOT_OPENED,	/* the next page could not be asked */
};

struct pager_hooks {
	/* An event ingest took (new or duplicate): is it the asked filter's? */
	bool	(*match)(void *arg, const struct ingest_info *);
	/*
	 * An event ingest is about to refuse as unrequested (raw object):
	 * is it the asked filter's but newer than until? Called only once
	 * until was sent (page.started).
	 */
	bool	(*newer)(void *arg, const struct relay_msg *);
	/*
	 * EOSE of a whole page: record the verdict, inside ingest's open
	 * batch. 0, or -1 (the page is then not committed).
	 */
	int	(*commit)(void *arg, struct drain_verdict *);
	/* After commit (committed 0) or instead of it (-1). */
	void	(*eose)(void *arg, int committed);
	void	(*fail)(void *arg, enum pager_fail, const char *why);
	/* The pool sent the request again; may be NULL. */
	void	(*resent)(void *arg);
};

/* The parts a pager borrows (they outlive it). */
struct pager_deps {
	struct loop		*loop;
	struct pool		*pool;
	struct ingest		*ing;
	struct follow		*follow;	/* told of every event; or NULL */
	enum ingest_source	 source;
	uint64_t		 timeout_ms;	/* silence that fails a page */
};

struct pager {
	struct pager_deps	 d;
	const char		*url;		/* borrowed from the owner */
	const struct pager_hooks *hooks;
	void			*arg;
	struct filter		 f;		/* the owner's; until, limit set
						 * per page */
	struct drain_page	 page;		/* asked, and the page so far */
	int64_t			*relay_largest;	/* the relay's proven cap */
	int64_t			 row_largest;	/* the row's largest page */
	struct pool_sub		*sub;
	uint64_t		 timer;		/* timeout, or the next page */
	uint64_t		 last_ms;	/* monotonic, last sign of life */
	unsigned		 resent;
	bool			 failed;	/* the store refused an event */
	uint64_t		 lost_at_start;	/* ingest's lost batches then */
};

/*
 * Set pg up for url (borrowed); relay_largest points at the owner's
 * record of the largest page the relay has returned, which the pager
 * keeps up to date. The filter is empty (filter_init): the owner fills
 * it, and page.started, until, has_gap, gap_since and limit, before
 * pager_open().
 */
void		 pager_init(struct pager *pg, const struct pager_deps *,
		    const char *url, int64_t *relay_largest,
		    const struct pager_hooks *, void *arg);
/* Ask the page (counts start afresh). 0, or -1 (nothing was sent). */
int		 pager_open(struct pager *);
/*
 * After a committed page that is not the last: close the request and ask
 * the next page (page.until and limit as the commit left them) from the
 * loop; a failure to ask it goes to the fail hook (PAGER_NOT_OPENED).
 */
void		 pager_next(struct pager *);
/* Close the request and stop the timer; the filter stays. */
void		 pager_close(struct pager *);
/* pager_close and free the filter. */
void		 pager_free(struct pager *);

/* The limit to ask of url: page_size under its NIP-11 max_limit. */
int64_t		 pager_limit(const struct pager *, int64_t page_size);

/*
 * How many requests an owner may have open on url: cap, less when the
 * pool's cap for the relay is taken by other subscriptions than the
 * owner's own; at least 1.
 */
size_t		 pager_relay_cap(struct pool *, const char *url, int64_t cap,
		    size_t own);

/*
 * A relay's pump, run from the loop (never inside a pool callback): a
 * kick arms it once; later kicks wait for that run.
 */
struct pager_pump {
	struct loop	*loop;
	uint64_t	 timer;
	void		(*run)(void *arg);
	void		*arg;
};

void		 pager_pump_init(struct pager_pump *, struct loop *,
		    void (*run)(void *), void *arg);
void		 pager_kick(struct pager_pump *, uint64_t delay_ms);
void		 pager_pump_clear(struct pager_pump *);
bool		 pager_pump_armed(const struct pager_pump *);

#endif
