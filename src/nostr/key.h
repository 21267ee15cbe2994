/*
 * key.h — the box's own Nostr identity (used to sign NIP-42 AUTH) and
 * key files in general. A key file holds the 32-byte secret key as 64
 * lowercase hex digits and a newline, mode 0600. This module never logs
 * or prints a secret key, and never accepts a key file that group or
 * others can read.
 */
#ifndef CACHEBOX_NOSTR_KEY_H
#define CACHEBOX_NOSTR_KEY_H

#include <stddef.h>
#include <stdint.h>

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>

#define KEY_FILE_NAME	"box.key"

struct nostr_key {
	uint8_t			seckey[32];
	uint8_t			pubkey[32];	/* x-only, as events carry it */
	secp256k1_keypair	keypair;	/* for secp256k1_schnorrsig_sign32 */
};

/*
 * Fill key from a 32-byte secret. 0, or -1 if the secret is not a valid
 * secp256k1 scalar (zero or not below the group order) or there is no
 * context.
 */
int	key_from_secret(struct nostr_key *key, const uint8_t seckey[32]);

/*
 * Load the key from path. 0, or -1 with a one-line reason in err (no
 * trailing newline): missing file, permissions letting group or others
 * read it, content other than 64 lowercase hex digits and an optional
 * newline, or an invalid secret.
 */
int	key_load_file(const char *path, struct nostr_key *key, char *err,
	    size_t errlen);

/*
 * Load DIR/box.key, or create it on first start (a fresh random secret
 * written to a temporary file, fsynced, renamed into place, directory
 * fsynced). 0, or -1 with a reason in err. dir must exist.
 */
int	key_load_or_create(const char *dir, struct nostr_key *key, char *err,
	    size_t errlen);

/* Wipe the secret material. */
void	key_clear(struct nostr_key *key);

#endif
