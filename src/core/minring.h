/*
 * minring.h — a ring of per-minute counters (INGEST_MINUTES of them, 4
 * bytes each): what happened in each of the last minutes, for a chart and
 * a rate. Minutes are counted on the monotonic clock, so a change of the
 * wall clock never moves or empties a bucket; a minute nothing happened in
 * reads 0. It allocates nothing and never fails.
 */
#ifndef CACHEBOX_CORE_MINRING_H
#define CACHEBOX_CORE_MINRING_H

#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

#define MINRING_MINUTE_MS	60000

struct minring {
	uint32_t	count[INGEST_MINUTES];
	uint64_t	minute;		/* the minute count[minute % N] belongs to */
	uint64_t	first;		/* the minute the ring started in */
};

/* A ring starting (all zero) at now_ms, monotonic. */
void	minring_init(struct minring *, uint64_t now_ms);
/*
 * Add n to the minute of now_ms (saturating at UINT32_MAX). Minutes passed
 * since the last call are zeroed first. A now_ms older than the newest
 * minute seen counts in that minute.
 */
void	minring_add(struct minring *, uint64_t now_ms, uint32_t n);
/*
 * The last n minutes up to and including the one of now_ms (still
 * running) into out[0..n), oldest first; n is capped at INGEST_MINUTES.
 * Minutes before the ring started and minutes nothing was added in read 0.
 * Returns how many were written.
 */
size_t	minring_read(const struct minring *, uint64_t now_ms, uint32_t *out,
	    size_t n);
/* How many of those minutes the ring has seen (at most INGEST_MINUTES). */
size_t	minring_known(const struct minring *, uint64_t now_ms);

#endif
