/*
 * json.h — reading numbers out of cJSON values. cJSON keeps every number
 * as a double, so "is this an integer, and in range?" is asked in many
 * places (event fields, filters, NIP-11 limits, relay COUNTs, command
 * arguments, rendering); it is answered here once, without undefined
 * conversions for values outside int64_t.
 */
#ifndef CACHEBOX_CORE_JSON_H
#define CACHEBOX_CORE_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/*
 * 0 with *out set when v is a JSON number holding an integer in [lo, hi]:
 * an integral value written as 1.0 or 1e3 reads as that integer (as
 * JSON.parse reads it); 1.5, 1e400, NaN and anything outside int64_t or
 * the range are refused with -1 (*out untouched).
 */
int	json_int(const cJSON *v, int64_t lo, int64_t hi, int64_t *out);

/* True when d is an integer that prints exactly as a long long (|d| < 2^53). */
bool	json_is_integer(double d);

#endif
