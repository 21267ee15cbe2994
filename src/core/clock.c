/*
 * clock.c — the monotonic and the wall clock. It owns nothing and keeps no
 * state; it must never be used to mix the two clocks: timeouts come from
 * clock_mono_ms(), Nostr timestamps from clock_wall_s().
 */
#include <stdio.h>
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

/* Microseconds on CLOCK_MONOTONIC (0 only if the clock is unavailable). */
uint64_t
clock_mono_us(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
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

const char *
clock_utc_text(int64_t t, char *buf, size_t len)
{
	struct tm	tm;
	time_t		tt = (time_t)t;
	size_t		n;

	if (gmtime_r(&tt, &tm) == NULL) {
		snprintf(buf, len, "%lld", (long long)t);
		return buf;
	}
	if (tm.tm_hour == 0 && tm.tm_min == 0 && tm.tm_sec == 0)
		n = strftime(buf, len, "%Y-%m-%d", &tm);
	else if (tm.tm_sec == 0)
		n = strftime(buf, len, "%Y-%m-%d %H:%M UTC", &tm);
	else
		n = strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
	if (n == 0)
		snprintf(buf, len, "%lld", (long long)t);
	return buf;
}
