/*
 * ws_handshake.c — the text of the WebSocket opening handshake (RFC 6455
 * section 4): a fresh key and its expected accept value, and the check of
 * a server's 101 answer. Pure apart from the random key; it never reads
 * past the bytes it is given and never echoes unprintable bytes a server
 * sent.
 */
#include <stdio.h>
#include <string.h>

#include <mbedtls/base64.h>
#include <mbedtls/sha1.h>

#include "core/limits.h"
#include "net/http.h"
#include "net/tls.h"
#include "net/ws.h"
#include "net/ws_handshake.h"

#define WS_GUID		"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

int
ws_accept_for_key(const char *key, char *out)
{
	unsigned char	 cat[WS_KEY_LEN + sizeof(WS_GUID)], sha[20];
	size_t		 klen = strlen(key), olen;

	if (klen > WS_KEY_LEN)
		return -1;
	memcpy(cat, key, klen);
	memcpy(cat + klen, WS_GUID, sizeof(WS_GUID) - 1);
	if (mbedtls_sha1_ret(cat, klen + sizeof(WS_GUID) - 1, sha) != 0)
		return -1;
	if (mbedtls_base64_encode((unsigned char *)out, WS_ACCEPT_LEN + 1,
	    &olen, sha, sizeof(sha)) != 0 || olen != WS_ACCEPT_LEN)
		return -1;
	return 0;
}

void
ws_printable(char *out, size_t outlen, const char *s, size_t len)
{
	size_t	 i, o = 0;

	for (i = 0; i < len && o + 1 < outlen; i++)
		out[o++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[o] = '\0';
}

static int
ws_refuse_status(const struct http_head *h, char *why, size_t whylen)
{
	const struct http_header	*loc;
	char				 v[128] = "";

	if (h->status >= 300 && h->status < 400) {
		if ((loc = http_head_find(h, "Location")) != NULL)
			ws_printable(v, sizeof(v), loc->value, loc->value_len);
		snprintf(why, whylen, "redirect refused (HTTP %d to %s)",
		    h->status, v[0] != '\0' ? v : "nowhere");
		return -1;
	}
	ws_printable(v, sizeof(v), h->reason, h->reason_len);
	snprintf(why, whylen, "upgrade refused: HTTP %d %s", h->status, v);
	return -1;
}

int
ws_handshake_parse(const char *buf, size_t len, const char *accept,
    size_t *used, char *why, size_t whylen)
{
	struct http_head		 h;
	const struct http_header	*f;
	const char			*e = NULL;
	int				 rc;

	rc = http_head_parse(buf, len, WS_HANDSHAKE_MAX_BYTES, &h, &e);
	if (rc == 0)
		return 0;
	if (rc == -1) {
		snprintf(why, whylen, "bad handshake response: %s", e);
		return -1;
	}
	if (h.status != 101)
		return ws_refuse_status(&h, why, whylen);
	if ((f = http_head_find(&h, "Upgrade")) == NULL ||
	    !http_header_has_token(f, "websocket"))
		e = "handshake without Upgrade: websocket";
	else if ((f = http_head_find(&h, "Connection")) == NULL ||
	    !http_header_has_token(f, "upgrade"))
		e = "handshake without Connection: upgrade";
	else if ((f = http_head_find(&h, "Sec-WebSocket-Accept")) == NULL)
		e = "handshake without Sec-WebSocket-Accept";
	else if (f->value_len != strlen(accept) ||
	    memcmp(f->value, accept, f->value_len) != 0)
		e = "wrong Sec-WebSocket-Accept";
	else if (http_head_find(&h, "Sec-WebSocket-Extensions") != NULL)
		e = "server chose an extension that was not offered";
	else if (http_head_find(&h, "Sec-WebSocket-Protocol") != NULL)
		e = "server chose a subprotocol that was not offered";
	if (e != NULL) {
		snprintf(why, whylen, "%s", e);
		return -1;
	}
	*used = h.head_len;
	return 1;
}

int
ws_new_key(char key[WS_KEY_LEN + 1], char accept[WS_ACCEPT_LEN + 1])
{
	unsigned char	raw[16];
	size_t		olen;

	if (tls_random(raw, sizeof(raw)) == -1 ||
	    mbedtls_base64_encode((unsigned char *)key, WS_KEY_LEN + 1, &olen,
	    raw, sizeof(raw)) != 0 || olen != WS_KEY_LEN)
		return -1;
	return ws_accept_for_key(key, accept);
}
