/*
 * log.h — leveled logging with timestamps, in the manner of ntpd's log.h:
 * log_warn() appends strerror(errno), log_warnx() does not. Lines go to
 * stderr (or the stream given to log_init). log_*_rl() variants rate-limit
 * a call site that could otherwise flood the log (a relay sending garbage):
 * LOG_RATELIMIT_BURST lines per LOG_RATELIMIT_INTERVAL_MS, then one line
 * saying how many were suppressed.
 */
#ifndef CACHEBOX_CORE_LOG_H
#define CACHEBOX_CORE_LOG_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/* State of one rate-limited call site; zero-initialised static. */
struct log_rl {
	uint64_t	window_start_ms;
	unsigned	count;
	unsigned	suppressed;
};

void	log_init(FILE *stream, enum log_level);
void	log_set_level(enum log_level);
enum log_level log_get_level(void);
/* Parse "error", "warn", "info", "debug". 0, or -1 for an unknown name. */
int	log_level_parse(const char *name, enum log_level *out);
const char *log_level_name(enum log_level);

void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Log at error level and exit(1). Only at start-up. */
void	fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

void	log_rl(struct log_rl *, enum log_level, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/*
 * log_rl() with the monotonic time now_ms supplied by the caller (the loop's
 * cached time, or a test's). Lines below the current level are not counted.
 */
void	log_vrl_at(struct log_rl *, uint64_t now_ms, enum log_level,
	    const char *fmt, va_list) __attribute__((format(printf, 4, 0)));
#define log_warnx_rl(...) do {						\
	static struct log_rl log_rl_site_;				\
	log_rl(&log_rl_site_, LOG_LEVEL_WARN, __VA_ARGS__);		\
} while (0)
#define log_info_rl(...) do {						\
	static struct log_rl log_rl_site_;				\
	log_rl(&log_rl_site_, LOG_LEVEL_INFO, __VA_ARGS__);		\
} while (0)

#endif
