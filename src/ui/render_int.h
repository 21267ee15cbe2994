/*
 * render_int.h — what the files of the human rendering share (render.c,
 * render_sum.c over render_fmt.c): numbers in people's units and the
 * members of an answer read without a check at every use. Private to
 * those files; render.h is the surface.
 */
#ifndef CACHEBOX_UI_RENDER_INT_H
#define CACHEBOX_UI_RENDER_INT_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct buf;

/*
 * Each appends to out and returns 0, or -1 when out is full (what fitted
 * stays).
 */
/* Unix seconds as "2024-03-01 12:00:00 UTC"; 0 (never, none) reads "-". */
int		 render_time(struct buf *out, long long t);
/* "512 B", "4 KiB", "1.5 MiB", "16 GiB". */
int		 render_bytes(struct buf *out, long long n);
/* "45s", "12m 5s", "3h 12m", "2d 3h". */
int		 render_duration(struct buf *out, long long s);
/* A count with thousands separated: "20,090". */
int		 render_count(struct buf *out, long long n);
/* The same into s (48 bytes hold any), which it returns. */
const char	*render_count_text(long long n, char *s, size_t len);

/* Member name of o as a string, or "" (never NULL; o may be NULL). */
const char	*render_str(const cJSON *o, const char *name);
/* Member name of o as a number, or 0 when absent or not a number. */
long long	 render_num(const cJSON *o, const char *name);
/* "s" when n is not 1: "1 relay", "3 relays". */
const char	*render_s(long long n);


/*
 * render_sum.c: one answer each, for a person at a glance (same return
 * as render_human): the status document, jobs list, jobs show, recovery.
 */
int		 render_status(struct buf *out, const cJSON *st, const char *nl);
int		 render_jobs_list(struct buf *out, const cJSON *v,
		    const char *nl);
int		 render_jobs_show(struct buf *out, const cJSON *job,
		    const char *nl);
int		 render_recovery(struct buf *out, const cJSON *v,
		    const char *nl);

#endif
