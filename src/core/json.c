/*
 * json.c — number checks on cJSON values (json.h). No state, no
 * allocation; a double is converted to an integer only once it is known
 * to lie inside int64_t.
 */
#include <math.h>

#include "core/json.h"

/* 2^63: the first double at or above which int64_t has no room. */
#define JSON_INT64_EDGE	9223372036854775808.0
/* 2^53: integers up to here are exact in a double. */
#define JSON_EXACT_EDGE	9007199254740992.0

int
json_int(const cJSON *v, int64_t lo, int64_t hi, int64_t *out)
{
	double	d;
	int64_t	i;

	if (!cJSON_IsNumber(v))
		return -1;
	d = v->valuedouble;
	if (!(d >= -JSON_INT64_EDGE && d < JSON_INT64_EDGE) || floor(d) != d)
		return -1;
	i = (int64_t)d;
	if (i < lo || i > hi)
		return -1;
	*out = i;
	return 0;
}

bool
json_is_integer(double d)
{
	return d > -JSON_EXACT_EDGE && d < JSON_EXACT_EDGE && floor(d) == d;
}
