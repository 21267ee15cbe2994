/*
 * fuzz_nip11.c — relay information documents of arbitrary bytes. The
 * parser must never crash or read outside the given length, and what it
 * keeps must respect the struct's bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nostr/nip11.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nip11_info	info;
	char			err[128];

	if (nip11_parse((const char *)data, size, &info, err,
	    sizeof(err)) != 0)
		return 0;
	if (info.nsupported_nips > NIP11_MAX_NIPS ||
	    strlen(info.name) > NIP11_MAX_STRING ||
	    info.max_limit < 0 || info.negentropy < 0)
		abort();
	(void)nip11_supports(&info, 77);
	return 0;
}
