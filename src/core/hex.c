/*
 * hex.c — lowercase hex encode/decode (see hex.h). Pure functions over
 * caller buffers: never allocates, never reads past the given lengths.
 */
#include "core/hex.h"

static const char hex_digits[] = "0123456789abcdef";

/* 0..15 for [0-9a-f], -1 otherwise. */
int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* 0 with out NUL-terminated, or -1 if it would not fit. */
int
hex_encode(const uint8_t *in, size_t n, char *out, size_t outsz)
{
	size_t	i;

	if (n > (SIZE_MAX - 1) / 2 || outsz < 2 * n + 1)
		return -1;
	for (i = 0; i < n; i++) {
		out[2 * i] = hex_digits[in[i] >> 4];
		out[2 * i + 1] = hex_digits[in[i] & 0x0f];
	}
	out[2 * n] = '\0';
	return 0;
}

/* 0, or -1 on a wrong length or a digit outside [0-9a-f]. */
int
hex_decode(const char *text, size_t textlen, uint8_t *out, size_t n)
{
	size_t	i;
	int	hi, lo;

	if (n > SIZE_MAX / 2 || textlen != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		hi = hex_digit((unsigned char)text[2 * i]);
		lo = hex_digit((unsigned char)text[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
