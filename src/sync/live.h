/*
 * live.h — the live stream: per relay, subscriptions for the followed
 * authors who write there (their NIP-65 write relays; authors without a
 * list, and the roots, on the bootstrap relays), chunked filters, since =
 * the newest event seen from that relay minus live.overlap_s. A reconnect
 * (the pool sends the REQ again) is answered by reopening with a fresh
 * since; a change of the follow set reopens only the relays whose author
 * set changed, opening the new subscriptions before closing the old.
 *
 * It never asks for history (the drain does) and never holds events.
 */
#ifndef CACHEBOX_SYNC_LIVE_H
#define CACHEBOX_SYNC_LIVE_H

#include <stddef.h>

struct loop;
struct pool;
struct ingest;
struct store;
struct config;
struct follow;
struct live;

struct sync_ctx;

/* A live planner over the parts of cx (sync/ctx.h). NULL on failure. */
struct live	*live_new(const struct sync_ctx *cx);
/* Close every subscription and free. NULL is a no-op. */
void		 live_free(struct live *);
/*
 * Recompute every relay's author set and (re)open what changed; with
 * live.enabled off, close everything. Suits follow_listen().
 */
void		 live_sync(void *live);
/* Live subscriptions open (sent or queued in the pool). */
size_t		 live_subs(const struct live *);

#endif
