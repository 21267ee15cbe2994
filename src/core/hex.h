/*
 * hex.h — lowercase hexadecimal encoding of byte strings, as NIP-01 writes
 * ids, public keys and signatures. Decoding is strict: only the digits
 * 0-9 and a-f are accepted (NIP-01 requires lowercase), and the text must
 * have exactly twice as many digits as the output has bytes. Nothing here
 * allocates; callers size their own buffers.
 */
#ifndef CACHEBOX_CORE_HEX_H
#define CACHEBOX_CORE_HEX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Write the 2 * n lowercase hex digits of in[0..n) and a NUL into out.
 * 0, or -1 (out untouched) if outsz < 2 * n + 1.
 */
int	hex_encode(const uint8_t *in, size_t n, char *out, size_t outsz);

/*
 * Decode exactly 2 * n lowercase hex digits from text[0..textlen) into
 * out[0..n). 0, or -1 if textlen != 2 * n or a digit is not [0-9a-f];
 * out may be partly written on failure.
 */
int	hex_decode(const char *text, size_t textlen, uint8_t *out, size_t n);

/* 0..15 for a lowercase hex digit, -1 for anything else. */
int	hex_digit(int c);

#endif
