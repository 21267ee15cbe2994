/*
 * jsonscan.c — the value and depth count of a JSON text (see jsonscan.h).
 * One pass, one byte table, no allocation, never a read past len. It must
 * never count fewer values than cJSON would build from the same bytes.
 */
#include <stdint.h>

#include "core/jsonscan.h"

enum {
	JS_OTHER = 0,	/* inside a literal or number ("rue", ".5e3"), junk */
	JS_SEP,		/* white space, ',' and ':': ends a literal */
	JS_OPEN,	/* '[' '{' */
	JS_CLOSE,	/* ']' '}' */
	JS_QUOTE,
	JS_SCALAR,	/* first byte of a number, true, false or null */
};

/* cJSON skips every byte <= 32 as white space; so does this table. */
static const uint8_t js_class[256] = {
	[0x00] = JS_SEP, [0x01] = JS_SEP, [0x02] = JS_SEP, [0x03] = JS_SEP,
	[0x04] = JS_SEP, [0x05] = JS_SEP, [0x06] = JS_SEP, [0x07] = JS_SEP,
	[0x08] = JS_SEP, [0x09] = JS_SEP, [0x0a] = JS_SEP, [0x0b] = JS_SEP,
	[0x0c] = JS_SEP, [0x0d] = JS_SEP, [0x0e] = JS_SEP, [0x0f] = JS_SEP,
	[0x10] = JS_SEP, [0x11] = JS_SEP, [0x12] = JS_SEP, [0x13] = JS_SEP,
	[0x14] = JS_SEP, [0x15] = JS_SEP, [0x16] = JS_SEP, [0x17] = JS_SEP,
	[0x18] = JS_SEP, [0x19] = JS_SEP, [0x1a] = JS_SEP, [0x1b] = JS_SEP,
	[0x1c] = JS_SEP, [0x1d] = JS_SEP, [0x1e] = JS_SEP, [0x1f] = JS_SEP,
	[' '] = JS_SEP, [','] = JS_SEP, [':'] = JS_SEP,
	['['] = JS_OPEN, ['{'] = JS_OPEN, [']'] = JS_CLOSE, ['}'] = JS_CLOSE,
	['"'] = JS_QUOTE,
	['-'] = JS_SCALAR, ['0'] = JS_SCALAR, ['1'] = JS_SCALAR,
	['2'] = JS_SCALAR, ['3'] = JS_SCALAR, ['4'] = JS_SCALAR,
	['5'] = JS_SCALAR, ['6'] = JS_SCALAR, ['7'] = JS_SCALAR,
	['8'] = JS_SCALAR, ['9'] = JS_SCALAR, ['t'] = JS_SCALAR,
	['f'] = JS_SCALAR, ['n'] = JS_SCALAR,
};

static const char *const js_names[] = {
	[JSONSCAN_OK] = "ok",
	[JSONSCAN_TOO_MANY] = "too many values",
	[JSONSCAN_TOO_DEEP] = "nested too deep",
};

const char *
jsonscan_result_str(enum jsonscan_result r)
{
	if ((unsigned)r >= sizeof(js_names) / sizeof(js_names[0]))
		return "?";
	return js_names[r];
}

size_t
jsonscan_skip_string(const char *s, size_t i, size_t len)
{
	for (i++; i < len; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return len;
}

enum jsonscan_result
jsonscan_check(const char *text, size_t len, size_t max_values,
    size_t max_depth, size_t *values)
{
	enum jsonscan_result	 res = JSONSCAN_OK;
	size_t			 i = 0, n = 0, depth = 0;
	int			 in_scalar = 0, c;

	while (i < len) {
		c = js_class[(unsigned char)text[i]];
		if (c == JS_OTHER) {
			i++;
			continue;
		}
		if (c == JS_SCALAR && in_scalar) {
			i++;
			continue;
		}
		in_scalar = c == JS_SCALAR;
		if (c == JS_CLOSE) {
			depth -= depth > 0;
			i++;
			continue;
		}
		if (c == JS_SEP) {
			i++;
			continue;
		}
		if (++n > max_values) {
			res = JSONSCAN_TOO_MANY;
			break;
		}
		if (c == JS_OPEN && ++depth > max_depth) {
			res = JSONSCAN_TOO_DEEP;
			break;
		}
		i = c == JS_QUOTE ? jsonscan_skip_string(text, i, len) : i + 1;
	}
	if (values != NULL)
		*values = n;
	return res;
}

size_t
jsonscan_skip_ws(const char *s, size_t i, size_t len)
{
	while (i < len && (unsigned char)s[i] <= 32)
		i++;
	return i;
}
