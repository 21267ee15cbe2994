/*
 * log.c — leveled, timestamped log lines. It owns the log stream and the
 * current level, and the state of rate-limited call sites lives with each
 * site. It must never allocate or block on anything but the stream, and
 * must never be called from a signal handler. One line is written with one
 * fwrite, at most LOG_MAX_LINE bytes including its newline.
 *
 * Timestamps are wall-clock UTC with milliseconds, for people reading the
 * log; rate limiting uses the monotonic clock.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/limits.h"
#include "core/log.h"

static FILE		*log_stream;
static enum log_level	 log_level = LOG_LEVEL_INFO;

static const char *const log_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

/* Send lines to stream (stderr when NULL) at and above level. */
void
log_init(FILE *stream, enum log_level level)
{
	log_stream = stream;
	log_set_level(level);
}

/* Change the level; an out-of-range value is clamped to debug. */
void
log_set_level(enum log_level level)
{
	if ((unsigned)level > LOG_LEVEL_DEBUG)
		level = LOG_LEVEL_DEBUG;
	log_level = level;
}

/* The current level. */
enum log_level
log_get_level(void)
{
	return log_level;
}

/* 0 with the level named by name in out, or -1 for an unknown name. */
int
log_level_parse(const char *name, enum log_level *out)
{
	size_t	i;

	for (i = 0; i < sizeof(log_names) / sizeof(log_names[0]); i++) {
		if (strcmp(name, log_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

/* The name of level (static), "?" when out of range. */
const char *
log_level_name(enum log_level level)
{
	if ((unsigned)level > LOG_LEVEL_DEBUG)
		return "?";
	return log_names[level];
}

/* Write "TIMESTAMP level: " into line; returns the bytes written. */
static size_t
log_prefix(char *line, size_t size, enum log_level level)
{
	struct timespec	ts;
	struct tm	tm;
	int		n;

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1 ||
	    gmtime_r(&ts.tv_sec, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	n = snprintf(line, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s: ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, log_level_name(level));
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

/*
 * Format and write one line. errnum != 0 appends ": strerror(errnum)". A
 * line that does not fit is cut and ends in "...".
 */
static void
log_vline(enum log_level, int, const char *, va_list)
    __attribute__((format(printf, 3, 0)));

static void
log_vline(enum log_level level, int errnum, const char *fmt, va_list ap)
{
	char	line[LOG_MAX_LINE];
	size_t	len;
	int	n;
	FILE	*fp = log_stream != NULL ? log_stream : stderr;

	len = log_prefix(line, sizeof(line) - 1, level);
	n = vsnprintf(line + len, sizeof(line) - 1 - len, fmt, ap);
	if (n > 0)
		len += (size_t)n;
	if (errnum != 0 && len < sizeof(line) - 1) {
		n = snprintf(line + len, sizeof(line) - 1 - len, ": %s",
		    strerror(errnum));
		if (n > 0)
			len += (size_t)n;
	}
	if (len > sizeof(line) - 2) {
		len = sizeof(line) - 2;
		memcpy(line + len - 3, "...", 3);
	}
	line[len++] = '\n';
	fwrite(line, 1, len, fp);
	fflush(fp);
}

/* Log at level if enabled; see log_vline(). */
static void
log_vlog(enum log_level, int, const char *, va_list)
    __attribute__((format(printf, 3, 0)));

static void
log_vlog(enum log_level level, int errnum, const char *fmt, va_list ap)
{
	if (level > log_level)
		return;
	log_vline(level, errnum, fmt, ap);
}

/* Debug line. */
void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vlog(LOG_LEVEL_DEBUG, 0, fmt, ap);
	va_end(ap);
}

/* Info line. */
void
log_info(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vlog(LOG_LEVEL_INFO, 0, fmt, ap);
	va_end(ap);
}

/* Warning line with ": strerror(errno)" appended. errno is preserved. */
void
log_warn(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	log_vlog(LOG_LEVEL_WARN, saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

/* Warning line without strerror. */
void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vlog(LOG_LEVEL_WARN, 0, fmt, ap);
	va_end(ap);
}

/* Error line (no strerror; callers that want it use fatal or add %s). */
void
log_err(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vlog(LOG_LEVEL_ERROR, 0, fmt, ap);
	va_end(ap);
}

/* Error line with ": strerror(errno)", then exit(1). Start-up only. */
void
fatal(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	log_vline(LOG_LEVEL_ERROR, saved, fmt, ap);
	va_end(ap);
	exit(1);
}

/* Error line, then exit(1). Start-up only. */
void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vline(LOG_LEVEL_ERROR, 0, fmt, ap);
	va_end(ap);
	exit(1);
}

/* The line format wants a va_list; this gives one for a fixed message. */
static void
log_line(enum log_level, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
log_line(enum log_level level, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vline(level, 0, fmt, ap);
	va_end(ap);
}

/*
 * Decide whether a rate-limited site may write now. A window that has
 * passed is closed first, reporting what it suppressed.
 */
static bool
log_rl_admit(struct log_rl *rl, enum log_level level, uint64_t now_ms)
{
	if (rl->count == 0 ||
	    now_ms - rl->window_start_ms >= LOG_RATELIMIT_INTERVAL_MS ||
	    now_ms < rl->window_start_ms) {
		if (rl->suppressed > 0)
			log_line(level, "(%u similar lines suppressed)",
			    rl->suppressed);
		rl->window_start_ms = now_ms;
		rl->count = 0;
		rl->suppressed = 0;
	}
	if (rl->count >= LOG_RATELIMIT_BURST) {
		rl->suppressed++;
		return false;
	}
	rl->count++;
	return true;
}

/*
 * log_rl() with the current time given: at most LOG_RATELIMIT_BURST lines
 * per LOG_RATELIMIT_INTERVAL_MS window for this site; the next admitted
 * line after a window with suppressions is preceded by their count.
 */
void
log_vrl_at(struct log_rl *rl, uint64_t now_ms, enum log_level level,
    const char *fmt, va_list ap)
{
	if (level > log_level)
		return;
	if (log_rl_admit(rl, level, now_ms))
		log_vline(level, 0, fmt, ap);
}

/* Rate-limited line for the call site rl; see log_vrl_at(). */
void
log_rl(struct log_rl *rl, enum log_level level, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vrl_at(rl, clock_mono_ms(), level, fmt, ap);
	va_end(ap);
}
