/*
 * nip11.h — the relay information document (NIP-11) as cachebox uses it:
 * identity (name, software, version), supported_nips, the limitation
 * object that sizes our requests, and NIP-77's "negentropy" field.
 *
 * A relay's document is advisory: a field of the wrong type, out of range
 * or absent is left at its zero value without failing the parse. Only a
 * body that is too large, not JSON, or not a JSON object is an error.
 * Everything is copied into a fixed-size struct; nothing from cJSON
 * outlives the call.
 */
#ifndef CACHEBOX_NOSTR_NIP11_H
#define CACHEBOX_NOSTR_NIP11_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

/*
 * Numbers are 0 when absent, wrong-typed, negative, fractional or larger
 * than INT64 can hold (so 0 means "not advertised"). Strings are cut at
 * NIP11_MAX_STRING bytes on a UTF-8 character boundary, "" when absent.
 */
struct nip11_info {
	char	 name[NIP11_MAX_STRING + 1];
	char	 software[NIP11_MAX_STRING + 1];
	char	 version[NIP11_MAX_STRING + 1];
	int	 supported_nips[NIP11_MAX_NIPS];
	size_t	 nsupported_nips;	/* entries kept, <= NIP11_MAX_NIPS */
	int64_t	 max_limit;
	int64_t	 max_subscriptions;
	int64_t	 max_message_length;
	int64_t	 max_event_tags;
	int64_t	 max_content_length;
	bool	 auth_required;
	bool	 payment_required;
	int	 negentropy;		/* NIP-77 version advertised, 0 if none */
};

/*
 * Parse len bytes of doc (need not be NUL-terminated) into *info, which
 * is cleared first. 0, or -1 with a one-line reason in err (when errlen
 * > 0): larger than NIP11_MAX_DOC_BYTES, not JSON, or not an object.
 */
int	nip11_parse(const char *doc, size_t len, struct nip11_info *info,
	    char *err, size_t errlen);

/* Whether info lists nip in supported_nips (or, for 77, has negentropy). */
bool	nip11_supports(const struct nip11_info *info, int nip);

#endif
