/*
 * buf.c — bounded byte buffers. It owns the bytes of each buf and nothing
 * else. It must never let len pass max, never let pos pass len, and never
 * change a buffer when an operation fails: a failed append is as if it had
 * not been tried.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

#define BUF_MIN_ALLOC	64	/* bytes of the first allocation */

/* Prepare an empty buffer that may grow to max bytes; allocates nothing. */
void
buf_init(struct buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

/* Release the bytes; the buffer is empty again and keeps its max. */
void
buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b, b->max);
}

/* Forget the contents and the cursor; keeps the allocation. */
void
buf_reset(struct buf *b)
{
	b->len = 0;
	b->pos = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

/* The capacity to grow to so that need bytes fit, never past max. */
static size_t
buf_grow_size(const struct buf *b, size_t need)
{
	size_t	ncap;

	ncap = b->cap < BUF_MIN_ALLOC ? BUF_MIN_ALLOC : b->cap;
	while (ncap < need && ncap <= b->max / 2)
		ncap *= 2;
	if (ncap < need)
		ncap = need;
	if (ncap > b->max)
		ncap = b->max;
	return ncap;
}

/* 0 once n more bytes (plus the NUL) fit; -1 past max or out of memory. */
int
buf_reserve(struct buf *b, size_t n)
{
	uint8_t	*p;
	size_t	 ncap;

	if (n > b->max - b->len)
		return -1;
	if (b->data != NULL && b->len + n <= b->cap)
		return 0;
	ncap = buf_grow_size(b, b->len + n);
	p = realloc(b->data, ncap + 1);
	if (p == NULL)
		return -1;
	if (b->data == NULL)
		p[0] = '\0';
	b->data = p;
	b->cap = ncap;
	return 0;
}

/* Append n bytes of p. 0, or -1 with the buffer unchanged. */
int
buf_append(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (buf_reserve(b, n) == -1)
		return -1;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

/* Append one byte (c converted to unsigned char). 0 or -1. */
int
buf_putc(struct buf *b, int c)
{
	uint8_t	ch = (uint8_t)c;

	return buf_append(b, &ch, 1);
}

/* Append a C string without its NUL. 0 or -1. */
int
buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

/* printf-append; 0, or -1 with nothing appended if it would not fit. */
int
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list	ap2;
	int	n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || buf_reserve(b, (size_t)n) == -1)
		return -1;
	if (n == 0)
		return 0;
	/* cap excludes the NUL, so n + 1 bytes fit at data + len. */
	if (vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap) != n) {
		b->data[b->len] = '\0';
		return -1;
	}
	b->len += (size_t)n;
	return 0;
}

/* printf-append; see buf_vprintf(). */
int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list	ap;
	int	rv;

	va_start(ap, fmt);
	rv = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rv;
}

/* Unread bytes: len - pos. */
size_t
buf_avail(const struct buf *b)
{
	return b->len - b->pos;
}

/* The first unread byte; valid until the next change to the buffer. */
const uint8_t *
buf_rptr(const struct buf *b)
{
	if (b->data == NULL)
		return (const uint8_t *)"";
	return b->data + b->pos;
}

/* Copy n unread bytes into out and advance. 0, or -1 (nothing read). */
int
buf_read(struct buf *b, void *out, size_t n)
{
	if (n > buf_avail(b))
		return -1;
	if (n > 0)
		memcpy(out, b->data + b->pos, n);
	b->pos += n;
	return 0;
}

/* Advance the cursor by n. 0, or -1 (cursor unchanged). */
int
buf_skip(struct buf *b, size_t n)
{
	if (n > buf_avail(b))
		return -1;
	b->pos += n;
	return 0;
}

/* Drop the bytes already read. */
void
buf_compact(struct buf *b)
{
	buf_consume(b, b->pos);
}

/* Drop the first n bytes (clamped to len); pos moves back by n, not below 0. */
void
buf_consume(struct buf *b, size_t n)
{
	if (n > b->len)
		n = b->len;
	if (n == 0)
		return;
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
	b->pos = b->pos > n ? b->pos - n : 0;
}

/* The contents as a C string, owned by the buffer ("" when empty). */
const char *
buf_cstr(const struct buf *b)
{
	if (b->data == NULL)
		return "";
	return (const char *)b->data;
}
