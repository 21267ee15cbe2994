/*
 * fuzz_nip19.c — NIP-19 / bech32 decoding of arbitrary text. Every string
 * that decodes must encode back to a string that decodes to the same
 * entity; a public key that parses must survive npub encode + parse.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nostr/nip19.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_round_trip(const struct nip19_entity *e)
{
	static char		out[NIP19_MAX_CHARS + 1];
	struct nip19_entity	back;
	enum nip19_err		err;

	err = nip19_encode(e, out, sizeof(out));
	/* A decoded entity may exceed the limit once re-encoded only if it
	 * had unknown TLV items that we drop; it can never grow. */
	if (err != NIP19_OK)
		abort();
	if (nip19_decode(out, &back) != NIP19_OK)
		abort();
	if (back.type != e->type || memcmp(back.key, e->key, 32) != 0 ||
	    back.nrelays != e->nrelays || back.has_kind != e->has_kind ||
	    back.kind != e->kind || back.has_author != e->has_author ||
	    strcmp(back.identifier, e->identifier) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char			*s;
	struct nip19_entity	 e;
	uint8_t			 pk[32], pk2[32];
	char			 npub[NIP19_KEY_CHARS + 1];

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (nip19_decode(s, &e) == NIP19_OK)
		check_round_trip(&e);
	if (nip19_pubkey_parse(s, pk) == 0) {
		if (nip19_encode32(NIP19_NPUB, pk, npub, sizeof(npub)) !=
		    NIP19_OK || nip19_pubkey_parse(npub, pk2) != 0 ||
		    memcmp(pk, pk2, 32) != 0)
			abort();
	}
	free(s);
	return 0;
}
