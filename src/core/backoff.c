/*
 * backoff.c — capped exponential delays (backoff.h). Pure arithmetic; a
 * doubling that would pass the cap (or overflow) stops at the cap.
 */
#include "core/backoff.h"

uint64_t
backoff_ms(uint64_t base, uint32_t doublings, uint64_t cap)
{
	uint64_t	d = base;
	uint32_t	i;

	for (i = 0; i < doublings && d < cap; i++)
		d = d > cap / 2 ? cap : d * 2;
	return d > cap ? cap : d;
}

uint64_t
backoff_jitter(uint64_t d, uint32_t rnd)
{
	uint64_t	half = d / 2;

	return half + (half > 0 ? rnd % (half + 1) : 0);
}
