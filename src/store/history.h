/*
 * history.h — rows of `ingest_history` (migration 012): events stored per
 * bucket of wall-clock time, kept for INGEST_HISTORY_S, so the page's
 * chart of the last day and week survives a restart. Ingest counts in
 * memory and writes one bucket when the next begins (sync/ingest.c).
 */
#ifndef CACHEBOX_STORE_HISTORY_H
#define CACHEBOX_STORE_HISTORY_H

#include <stdint.h>

struct store;

/*
 * Add n events to the bucket starting at start (Unix s) and delete the
 * buckets starting before keep_from, in the caller's transaction (it
 * opens none). 0, or -1 (logged).
 */
int	store_history_add(struct store *, int64_t start, int64_t n,
	    int64_t keep_from);

/*
 * Each bucket starting at from or later, oldest first: fn(start, stored,
 * arg); fn returns nonzero to stop. 0, or -1 (logged).
 */
typedef int (*store_history_fn)(int64_t start, int64_t stored, void *arg);
int	store_history_each(struct store *, int64_t from, store_history_fn fn,
	    void *arg);

/*
 * The events of the buckets starting at from or later into *sum, and the
 * start of the oldest bucket kept (any age) into *oldest (0: none). 0, or
 * -1 (logged).
 */
int	store_history_sum(struct store *, int64_t from, int64_t *sum,
	    int64_t *oldest);

#endif
