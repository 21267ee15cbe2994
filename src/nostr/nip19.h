/*
 * nip19.h — bech32-encoded Nostr entities (NIP-19): npub, nsec, note,
 * nprofile, nevent. (Contract placeholder: the implementation fills this in.)
 */
#ifndef CACHEBOX_NOSTR_NIP19_H
#define CACHEBOX_NOSTR_NIP19_H

#include <stdint.h>

/*
 * Parse a public key given as 64 lowercase hex digits or as an npub.
 * 0 with the 32 bytes in pk, or -1 for anything else.
 */
int	nip19_pubkey_parse(const char *text, uint8_t pk[32]);

#endif
