/*
 * backoff.h — capped exponential delays, the one formula behind every
 * "wait longer after each failure" of the daemon: reconnecting to a relay,
 * a relay's rate-limit pause, the uplink's retries and pauses, a drain
 * row's "no answer" retry and the recovery index's fetches.
 */
#ifndef CACHEBOX_CORE_BACKOFF_H
#define CACHEBOX_CORE_BACKOFF_H

#include <stdint.h>

/*
 * base doubled `doublings` times, never more than cap (and never
 * overflowing): backoff_ms(1000, 0, cap) is 1000, (1000, 3, cap) 8000.
 * A base above cap gives cap.
 */
uint64_t	backoff_ms(uint64_t base, uint32_t doublings, uint64_t cap);

/*
 * d spread so that many peers failing together do not retry together:
 * half of d plus up to half again, chosen by rnd (any random value).
 */
uint64_t	backoff_jitter(uint64_t d, uint32_t rnd);

#endif
