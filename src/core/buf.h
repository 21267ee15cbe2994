/*
 * buf.h — bounds-checked byte buffers, in the manner of Dropbear's buffer.h.
 * A buf grows on demand up to its max and never past it: every append
 * either fits or fails with -1 and leaves the buffer unchanged. Reads go
 * through a cursor (pos) that can never pass len. The bytes are always
 * followed by a NUL (not counted in len), so text can be used as a C string.
 */
#ifndef CACHEBOX_CORE_BUF_H
#define CACHEBOX_CORE_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t	*data;		/* owned; NULL until the first byte */
	size_t	 len;		/* bytes held */
	size_t	 cap;		/* bytes allocated (excluding the NUL) */
	size_t	 max;		/* len never exceeds this */
	size_t	 pos;		/* read cursor, <= len */
};

/* An empty buffer that may hold up to max bytes. Allocates nothing. */
void	buf_init(struct buf *, size_t max);
void	buf_free(struct buf *);
/* Drop the contents (keeps the allocation and max). */
void	buf_reset(struct buf *);

/* Make room for n more bytes. 0, or -1 if len + n > max or out of memory. */
int	buf_reserve(struct buf *, size_t n);
int	buf_append(struct buf *, const void *, size_t);
int	buf_putc(struct buf *, int c);
int	buf_puts(struct buf *, const char *);
/* printf into the buffer; -1 (and nothing appended) if it would not fit. */
int	buf_printf(struct buf *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
int	buf_vprintf(struct buf *, const char *fmt, va_list)
	    __attribute__((format(printf, 2, 0)));

/* Bytes from pos to len. */
size_t	buf_avail(const struct buf *);
const uint8_t *buf_rptr(const struct buf *);
/* Copy n bytes at pos into out and advance. 0, or -1 if fewer are left. */
int	buf_read(struct buf *, void *out, size_t n);
/* Advance pos by n. 0, or -1 if fewer are left. */
int	buf_skip(struct buf *, size_t n);
/* Remove everything before pos (moves the unread bytes to the front). */
void	buf_compact(struct buf *);
/* Remove the first n bytes (n <= len) and move pos back accordingly. */
void	buf_consume(struct buf *, size_t n);

/* The contents as a NUL-terminated string ("" when empty). */
const char *buf_cstr(const struct buf *);

#endif
