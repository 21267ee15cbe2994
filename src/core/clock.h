/*
 * clock.h — the two clocks. The monotonic clock times every timeout and
 * deadline; the wall clock is used only for Nostr timestamps.
 */
#ifndef CACHEBOX_CORE_CLOCK_H
#define CACHEBOX_CORE_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t	clock_mono_ms(void);
/* Microseconds on CLOCK_MONOTONIC: the length of a turn or of a step. */
uint64_t	clock_mono_us(void);
/* Seconds since the Unix epoch (CLOCK_REALTIME), for created_at. */
int64_t		clock_wall_s(void);
/*
 * Unix seconds t as a date for people, in UTC: "2024-01-31" at midnight,
 * "2024-01-31 12:00 UTC" otherwise (seconds shown only when not 0).
 * Written into buf (at least 32 bytes) and returned.
 */
const char	*clock_utc_text(int64_t t, char *buf, size_t len);

#endif
