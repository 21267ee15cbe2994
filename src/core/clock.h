/*
 * clock.h — the two clocks. The monotonic clock times every timeout and
 * deadline; the wall clock is used only for Nostr timestamps.
 */
#ifndef CACHEBOX_CORE_CLOCK_H
#define CACHEBOX_CORE_CLOCK_H

#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t	clock_mono_ms(void);
/* Seconds since the Unix epoch (CLOCK_REALTIME), for created_at. */
int64_t		clock_wall_s(void);

#endif
