/*
 * fuzz_http_screen.c — what a client sends to the web server's front
 * door, as arbitrary bytes, screened whole and cut at every tenth offset.
 * Nothing may crash or read past the length; a passed head lies within
 * the input and the head limit; a refusal carries a status and a reason;
 * a prefix that is already decided is decided the same way when more
 * bytes follow.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "net/http_screen.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_screen		 whole, part;
	enum http_screen_verdict	 v, vp;
	char				*copy;
	size_t				 cut;

	if ((copy = malloc(size > 0 ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	v = http_screen(copy, size, 4096, HTTP_API_MAX_BODY_BYTES, &whole);
	if (v == HTTP_SCREEN_PASS && (whole.head_len > size ||
	    whole.head_len > 4096))
		abort();
	if (v == HTTP_SCREEN_REFUSE && (whole.reason == NULL ||
	    whole.status < 400 || whole.status > 499))
		abort();
	for (cut = 0; cut < size; cut += 10) {
		vp = http_screen(copy, cut, 4096, HTTP_API_MAX_BODY_BYTES,
		    &part);
		if (vp == HTTP_SCREEN_PASS && (v != HTTP_SCREEN_PASS ||
		    part.head_len != whole.head_len))
			abort();
	}
	free(copy);
	return 0;
}
