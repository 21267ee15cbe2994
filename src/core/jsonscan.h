/*
 * jsonscan.h — how much a JSON text will make a tree parser allocate,
 * found before the parser runs. cJSON makes a 64-byte node (80 with the
 * allocator's header) for every value and one more allocation for every
 * string and member name, so what a parse costs follows the number of
 * values, not the byte size: 1 MiB of "[],[],..." is 350,000 nodes and
 * about 28 MiB. A text a peer sent is scanned once here, without
 * allocating, and refused when it holds more values or deeper nesting
 * than the caller's limits; only then is it handed to cJSON.
 *
 * The scan reads strings exactly as cJSON does (a backslash skips the
 * next byte), so every value cJSON could build before it fails is one the
 * scan counted. It does not validate JSON: malformed text the limits let
 * through is refused by the parser as before.
 */
#ifndef CACHEBOX_CORE_JSONSCAN_H
#define CACHEBOX_CORE_JSONSCAN_H

#include <stddef.h>

enum jsonscan_result {
	JSONSCAN_OK = 0,
	JSONSCAN_TOO_MANY,	/* more than max_values values */
	JSONSCAN_TOO_DEEP,	/* arrays and objects nested past max_depth */
};

/*
 * Count the values of text[0..len): every array, object, string (member
 * names included, since each costs an allocation), number, true, false
 * and null. Stops at the first limit passed. The count so far goes to
 * *values when not NULL (with JSONSCAN_OK, the whole text's count).
 */
enum jsonscan_result jsonscan_check(const char *text, size_t len,
	    size_t max_values, size_t max_depth, size_t *values);

/* "ok", "too many values", "nested too deep". */
const char	*jsonscan_result_str(enum jsonscan_result);
/*
 * The index just past the JSON string whose opening quote is s[i]
 * (escapes skipped, not checked), or len if it does not end in s[0..len).
 */
size_t		 jsonscan_skip_string(const char *s, size_t i, size_t len);
/* The index of the first byte from s[i] on that is not white space (or len). */
size_t		 jsonscan_skip_ws(const char *s, size_t i, size_t len);

#endif
