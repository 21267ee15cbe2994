/*
 * utf8.c — a decoder that only measures (utf8.h). It never reads past the
 * bytes it is given and never allocates except for a repaired copy, which
 * is at most three times the input (one U+FFFD per bad byte).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"

/*
 * The length of the well-formed sequence at s (at most n bytes), or 0 if
 * the sequence there is ill-formed or cut short.
 */
static size_t
seq_len(const unsigned char *s, size_t n)
{
	size_t	len, i;
	uint8_t	lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;		/* overlong */
		else if (s[0] == 0xed)
			hi = 0x9f;		/* surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;		/* overlong */
		else if (s[0] == 0xf4)
			hi = 0x8f;		/* above U+10FFFF */
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

bool
utf8_valid(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, k;

	while (i < len) {
		if ((k = seq_len(p + i, len - i)) == 0)
			return false;
		i += k;
	}
	return true;
}

char *
utf8_repair(char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 len, i = 0, o = 0, k;
	char			*out;

	if (s == NULL)
		return NULL;
	len = strlen(s);
	if (utf8_valid(s, len))
		return s;
	if ((out = malloc(3 * len + 1)) == NULL) {
		free(s);
		return NULL;
	}
	while (i < len) {
		if ((k = seq_len(p + i, len - i)) == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, p + i, k);
		o += k;
		i += k;
	}
	out[o] = '\0';
	free(s);
	return out;
}
