/*
 * clock.c — the monotonic and the wall clock. It owns nothing and keeps no
 * state; it must never be used to mix the two clocks: timeouts come from
 * clock_mono_ms(), Nostr timestamps from clock_wall_s().
 */
#include <time.h>

#include "core/clock.h"

/* Milliseconds on CLOCK_MONOTONIC (0 only if the clock is unavailable). */
uint64_t
clock_mono_ms(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return 0;
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Seconds since the Unix epoch on CLOCK_REALTIME. */
int64_t
clock_wall_s(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1)
		return (int64_t)time(NULL);
	return (int64_t)ts.tv_sec;
}
