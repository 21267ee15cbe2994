/*
 * secp.c — owns the single libsecp256k1 context and shares it with every
 * Nostr module. It must never hand out a second context or free the
 * one it has: other modules keep the pointer.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "core/log.h"
#include "nostr/secp.h"

static secp256k1_context *secp_ctx;

int
nostr_random(uint8_t *out, size_t n)
{
	size_t	 got = 0;
	ssize_t	 r;

	while (got < n) {
		r = getrandom(out + got, n - got, 0);
		if (r == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}

const secp256k1_context *
nostr_secp(void)
{
	uint8_t			 seed[32];
	secp256k1_context	*ctx;

	if (secp_ctx != NULL)
		return secp_ctx;
	ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	if (ctx == NULL) {
		log_warnx("secp256k1: cannot create context");
		return NULL;
	}
	if (nostr_random(seed, sizeof(seed)) == -1) {
		log_warn("secp256k1: getrandom");
		secp256k1_context_destroy(ctx);
		return NULL;
	}
	if (!secp256k1_context_randomize(ctx, seed)) {
		log_warnx("secp256k1: cannot randomize context");
		secp256k1_context_destroy(ctx);
		return NULL;
	}
	memset(seed, 0, sizeof(seed));
	secp_ctx = ctx;
	return secp_ctx;
}
