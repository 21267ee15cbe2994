/*
 * render_fmt.c — numbers in people's units for the human rendering
 * (render_int.h): UTC dates, byte sizes, durations and counts with
 * thousands separated, and the members of an answer read with a default.
 * It formats only and calls no other file of the rendering.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/buf.h"
#include "core/json.h"
#include "ui/render_int.h"

int
render_time(struct buf *out, long long t)
{
	struct tm	tm;
	time_t		tt = (time_t)t;
	char		s[64];

	if (t == 0)
		return buf_puts(out, "-");
	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(s, sizeof(s), "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
		return buf_printf(out, "%lld", t);
	return buf_puts(out, s);
}

int
render_bytes(struct buf *out, long long n)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double	v = (double)n;
	size_t	u = 0;

	if (llabs(n) < 1024)
		return buf_printf(out, "%lld B", n);
	v /= 1024;
	while ((v >= 1024 || v <= -1024) && u + 1 < sizeof(units) /
	    sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (json_is_integer(v))
		return buf_printf(out, "%.0f %s", v, units[u]);
	return buf_printf(out, "%.1f %s", v, units[u]);
}

int
render_duration(struct buf *out, long long s)
{
	if (s < 60)
		return buf_printf(out, "%llds", s);
	if (s < 3600)
		return buf_printf(out, "%lldm %llds", s / 60, s % 60);
	if (s < 86400)
		return buf_printf(out, "%lldh %lldm", s / 3600, s % 3600 / 60);
	return buf_printf(out, "%lldd %lldh", s / 86400, s % 86400 / 3600);
}

const char *
render_count_text(long long n, char *s, size_t len)
{
	char	digits[32], grouped[48];
	int	nd, i, j = 0;

	nd = snprintf(digits, sizeof(digits), "%lld", n < 0 ? -n : n);
	if (n < 0)
		grouped[j++] = '-';
	for (i = 0; i < nd; i++) {
		if (i > 0 && (nd - i) % 3 == 0)
			grouped[j++] = ',';
		grouped[j++] = digits[i];
	}
	grouped[j] = '\0';
	snprintf(s, len, "%s", grouped);
	return s;
}

int
render_count(struct buf *out, long long n)
{
	char	s[48];

	return buf_puts(out, render_count_text(n, s, sizeof(s)));
}

const char *
render_str(const cJSON *o, const char *name)
{
	const char	*s = cJSON_GetStringValue(cJSON_GetObjectItem(o, name));

	return s != NULL ? s : "";
}

long long
render_num(const cJSON *o, const char *name)
{
	const cJSON	*v = cJSON_GetObjectItem(o, name);

	return cJSON_IsNumber(v) ? (long long)v->valuedouble : 0;
}

const char *
render_s(long long n)
{
	return n == 1 ? "" : "s";
}
