/*
 * errf.c — a one-line reason for the caller (see errf.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "core/errf.h"

int
errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}
