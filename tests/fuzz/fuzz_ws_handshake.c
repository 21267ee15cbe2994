/*
 * fuzz_ws_handshake.c — a server's answer to the WebSocket upgrade, as
 * arbitrary bytes, fed to ws_handshake_parse whole and split at every
 * tenth offset, and to http_head_parse. Nothing may crash or read past the
 * length; an accepted head must lie within the input and within
 * WS_HANDSHAKE_MAX_BYTES, and a head accepted from a prefix must be the
 * same head when more bytes follow.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/http.h"
#include "net/ws.h"
#include "net/ws_handshake.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define ACCEPT	"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_head	 h;
	const char		*why;
	char			*copy, r[256];
	size_t			 used = 0, u2, cut;
	int			 rc, rc2;

	/* An exact-size copy so any over-read is caught. */
	if ((copy = malloc(size > 0 ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	rc = ws_handshake_parse(copy, size, ACCEPT, &used, r, sizeof(r));
	if (rc == 1 && (used > size || used > WS_HANDSHAKE_MAX_BYTES))
		abort();
	for (cut = 0; cut < size; cut += 10) {
		rc2 = ws_handshake_parse(copy, cut, ACCEPT, &u2, r, sizeof(r));
		if (rc2 == 1 && (rc != 1 || u2 != used))
			abort();
	}
	if (http_head_parse(copy, size, HTTP_MAX_HEAD_BYTES, &h, &why) == 1) {
		if (h.head_len > size || h.nheaders > HTTP_MAX_HEADERS ||
		    h.status < 100 || h.status > 599)
			abort();
		for (size_t i = 0; i < h.nheaders; i++)
			if (h.headers[i].value + h.headers[i].value_len >
			    copy + h.head_len)
				abort();
	}
	free(copy);
	return 0;
}
