/*
 * ws_handshake.h — the WebSocket opening handshake's text (RFC 6455
 * section 4), apart from any connection: the key a client sends, the
 * accept value a server answers with, and the check of a server's answer.
 */
#ifndef CACHEBOX_NET_WS_HANDSHAKE_H
#define CACHEBOX_NET_WS_HANDSHAKE_H

#include <stddef.h>

#include "net/ws.h"

/*
 * A fresh random Sec-WebSocket-Key into key and the accept value a server
 * must answer it with into accept. 0 or -1.
 */
int		 ws_new_key(char key[WS_KEY_LEN + 1],
		    char accept[WS_ACCEPT_LEN + 1]);

/*
 * The Sec-WebSocket-Accept value for key: base64(SHA-1(key + RFC 6455
 * GUID)) into out (WS_ACCEPT_LEN + 1 bytes). 0 or -1.
 */
int		 ws_accept_for_key(const char *key, char *out);

/*
 * Parse a server's handshake response at buf[0..len) (bytes received so
 * far) against the expected accept value. Returns 1 when it is a valid 101
 * (*used = bytes of the head; frames may follow), 0 when more bytes are
 * needed, -1 when refused, with a reason in why: a redirect (3xx), another
 * status, missing Upgrade/Connection headers, a wrong accept value, an
 * unrequested extension or subprotocol, or a head over
 * WS_HANDSHAKE_MAX_BYTES.
 */
int		 ws_handshake_parse(const char *buf, size_t len,
		    const char *accept, size_t *used, char *why, size_t whylen);

/*
 * Copy the len bytes at s into out for a message (cut to outlen), each
 * unprintable byte as '?': what a peer sends is never echoed raw.
 */
void		 ws_printable(char *out, size_t outlen, const char *s,
		    size_t len);

#endif
