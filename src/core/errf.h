/*
 * errf.h — a one-line reason for the caller, in the err/errlen pair
 * every fallible function of the daemon takes.
 */
#ifndef CACHEBOX_CORE_ERRF_H
#define CACHEBOX_CORE_ERRF_H

#include <stddef.h>

/*
 * Format the reason into err (nothing when err is NULL or errlen 0) and
 * return -1, so a check can end with `return errf(err, errlen, ...)`.
 */
int	errf(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

#endif
