/*
 * minring.c — per-minute counters in a fixed ring (minring.h). The ring is
 * advanced lazily: a write zeroes the buckets of the minutes that passed
 * since the last one, a read skips buckets older than the ring's window,
 * so an idle daemon spends nothing on it.
 */
#include <string.h>

#include "core/minring.h"

void
minring_init(struct minring *r, uint64_t now_ms)
{
	memset(r, 0, sizeof(*r));
	r->minute = r->first = now_ms / MINRING_MINUTE_MS;
}

void
minring_add(struct minring *r, uint64_t now_ms, uint32_t n)
{
	uint64_t	m = now_ms / MINRING_MINUTE_MS, gap;
	uint32_t	*c;

	if (m > r->minute) {
		gap = m - r->minute;
		if (gap >= INGEST_MINUTES)
			memset(r->count, 0, sizeof(r->count));
		else
			while (gap-- > 0)
				r->count[(m - gap) % INGEST_MINUTES] = 0;
		r->minute = m;
	}
	c = &r->count[r->minute % INGEST_MINUTES];
	*c = *c > UINT32_MAX - n ? UINT32_MAX : *c + n;
}

size_t
minring_read(const struct minring *r, uint64_t now_ms, uint32_t *out,
    size_t n)
{
	uint64_t	m = now_ms / MINRING_MINUTE_MS, k;
	size_t		i;

	if (m < r->minute)
		m = r->minute;
	if (n > INGEST_MINUTES)
		n = INGEST_MINUTES;
	for (i = 0; i < n; i++) {
		out[i] = 0;
		if (m < n - 1 - i)
			continue;
		k = m - (n - 1 - i);
		/* Written buckets hold minutes (r->minute - N, r->minute]. */
		if (k <= r->minute && r->minute - k < INGEST_MINUTES &&
		    k >= r->first)
			out[i] = r->count[k % INGEST_MINUTES];
	}
	return n;
}

size_t
minring_known(const struct minring *r, uint64_t now_ms)
{
	uint64_t	m = now_ms / MINRING_MINUTE_MS;

	if (m < r->first)
		return 1;
	return m - r->first + 1 >= INGEST_MINUTES ? INGEST_MINUTES :
	    (size_t)(m - r->first + 1);
}
