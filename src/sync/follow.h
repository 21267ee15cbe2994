/*
 * follow.h — the follow graph planner. From follow.roots it asks the
 * bootstrap relays for the newest kind 3 of every root, makes the followed
 * set (the roots plus the "p" tags of their lists) in the `follows` table,
 * then asks for kind 0 and kind 10002 of the followed authors so that
 * every author's write relays land in `author_relays`. It refreshes every
 * FOLLOW_REFRESH_MS and when a root's newer kind 3 arrives by any path.
 *
 * It never holds events: what relays send goes through ingest; lists are
 * read back from the store. It tells its listeners (drain, live) when the
 * followed set or a relay list changed; it never drives their requests.
 */
#ifndef CACHEBOX_SYNC_FOLLOW_H
#define CACHEBOX_SYNC_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sync/ingest.h"

struct loop;
struct pool;
struct store;
struct config;
struct follow;

/* Called from the loop (never inside a relay callback) after a change. */
typedef void	(*follow_change_cb)(void *arg);

/*
 * A follow graph planner over the given parts (all borrowed, they must
 * outlive it). Nothing is asked until follow_start(). NULL on allocation
 * failure.
 */
struct follow	*follow_new(struct loop *, struct pool *, struct ingest *,
		    struct store *, const struct config *);
/* Close its requests and free it. NULL is a no-op. */
void		 follow_free(struct follow *);

/* Add a listener told about changes. 0, or -1 when the table is full. */
int		 follow_listen(struct follow *, follow_change_cb, void *arg);

/*
 * Tell listeners about the set already stored (a restart resumes at
 * once), then resolve the graph from the relays.
 */
void		 follow_start(struct follow *);
/* Resolve again soon (configuration changed, a reset). */
void		 follow_refresh(struct follow *);

/*
 * Any planner hands over what ingest said of an event: a new kind 10002
 * replaces its author's relay list, a new kind 3 of a root triggers a
 * refresh. Safe inside relay callbacks (the work is deferred or bounded).
 */
void		 follow_note(struct follow *, enum ingest_result,
		    const struct ingest_info *);

/*
 * True once every root's kind 3 and the followed authors' lists have been
 * asked of every bootstrap relay and each request ended (EOSE, refusal or
 * timeout; also those a phase went on without, see follow.c), and no
 * refresh is under way.
 */
bool		 follow_resolved(const struct follow *);

#endif
