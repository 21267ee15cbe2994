/*
 * redact.h — credentials out of everything a person or a log sees. The
 * uplink URL may carry a password in every form libpq accepts: in the
 * userinfo ("postgres://user:pw@host"), as a URI query parameter
 * ("?password=pw", "&sslpassword=pw", keys percent-encoded or not) or in
 * a keyword/value string ("host=h password='p w'"). Each is replaced by
 * "***". Nothing here allocates; outputs are cut to their buffer.
 */
#ifndef CACHEBOX_CORE_REDACT_H
#define CACHEBOX_CORE_REDACT_H

#include <stddef.h>

/* s with every credential masked, written into out (returned). */
const char	*redact_url(const char *s, char *out, size_t outlen);

/*
 * text (a message that may quote parts of url, such as a libpq error)
 * with every credential url holds, raw or percent-decoded, replaced by
 * "***", written into out (returned).
 */
const char	*redact_text(const char *url, const char *text, char *out,
		    size_t outlen);

#endif
