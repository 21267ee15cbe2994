/*
 * nip19.h — bech32-encoded Nostr entities (NIP-19) and the bech32 layer
 * under them (BIP-173 checksum; bech32m strings are refused).
 *
 * Bare entities carry 32 bytes: npub (public key), nsec (secret key),
 * note (event id). TLV entities carry a list of type-length-value items:
 * nprofile (special = public key, relay*), nevent (special = event id,
 * relay*, author?, kind?), naddr (special = "d" identifier, relay*,
 * author, kind). Unknown TLV types are skipped, as NIP-19 asks.
 *
 * Decoding accepts all-lowercase or all-uppercase text, never mixed case,
 * and refuses anything longer than NIP19_MAX_CHARS before looking at it.
 * Every failure is a distinct enum nip19_err with a stable message
 * (nip19_strerror). Nothing here allocates: entities are fixed-size
 * structs and the caller owns every buffer.
 */
#ifndef CACHEBOX_NOSTR_NIP19_H
#define CACHEBOX_NOSTR_NIP19_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

/* Length of an encoded npub / nsec / note, without the NUL. */
#define NIP19_KEY_CHARS		63

enum nip19_err {
	NIP19_OK = 0,
	NIP19_ERR_CHECKSUM,	/* "bad checksum" */
	NIP19_ERR_MIXED_CASE,	/* "mixed case" */
	NIP19_ERR_PREFIX,	/* "wrong prefix" */
	NIP19_ERR_LENGTH,	/* "wrong length" */
	NIP19_ERR_CHAR,		/* "bad character" */
	NIP19_ERR_TLV,		/* "bad TLV" */
	NIP19_ERR_TOO_LONG,	/* "too long" */
	NIP19_ERR_SEPARATOR,	/* "missing separator" */
	NIP19_ERR_PADDING,	/* "bad padding" */
	NIP19_ERR_SPACE,	/* "output buffer too small" */
};

enum nip19_type {
	NIP19_NONE = 0,
	NIP19_NPUB,
	NIP19_NSEC,
	NIP19_NOTE,
	NIP19_NPROFILE,
	NIP19_NEVENT,
	NIP19_NADDR,
};

/*
 * One decoded (or to-be-encoded) entity. Which fields count depends on
 * type: key is the 32 bytes of npub/nsec/note, the pubkey of nprofile and
 * the id of nevent; identifier is naddr's "d" value; author and kind are
 * nevent's optional and naddr's required items. Relays past
 * NIP19_MAX_RELAYS are counted in relays_dropped, not stored.
 */
struct nip19_entity {
	enum nip19_type	 type;
	uint8_t		 key[32];
	bool		 has_author;
	uint8_t		 author[32];
	bool		 has_kind;
	uint32_t	 kind;
	char		 identifier[NIP19_MAX_TLV_VALUE + 1];
	size_t		 nrelays;
	size_t		 relays_dropped;
	char		 relays[NIP19_MAX_RELAYS][NIP19_MAX_TLV_VALUE + 1];
};

/* A stable one-phrase message for err ("bad checksum", ...). Static. */
const char	*nip19_strerror(enum nip19_err);
/*
 * Write the message for err into buf, naming the expected prefix for
 * NIP19_ERR_PREFIX when want is not NIP19_NONE: "wrong prefix (expected
 * npub)". Returns buf.
 */
char		*nip19_format_error(enum nip19_err, enum nip19_type want,
		    char *buf, size_t bufsz);
/* The bech32 prefix of type ("npub", ...), or "" for NIP19_NONE. Static. */
const char	*nip19_type_prefix(enum nip19_type);

/*
 * Decode any NIP-19 entity. NIP19_OK with *out filled, or an error code
 * (out is then unspecified). An unknown prefix is NIP19_ERR_PREFIX.
 */
enum nip19_err	 nip19_decode(const char *text, struct nip19_entity *out);

/*
 * Decode text and insist on one type: NIP19_ERR_PREFIX if the string is
 * valid bech32 of another prefix (a note given where an npub is wanted).
 */
enum nip19_err	 nip19_decode_as(const char *text, enum nip19_type want,
		    struct nip19_entity *out);

/*
 * Decode an npub, nsec or note (want) into its 32 bytes. Same errors as
 * nip19_decode_as.
 */
enum nip19_err	 nip19_decode32(const char *text, enum nip19_type want,
		    uint8_t out[32]);

/*
 * Encode e as lowercase bech32 into out (NUL-terminated). NIP19_OK, or
 * NIP19_ERR_SPACE if outsz is too small, NIP19_ERR_TLV if a relay or
 * identifier is longer than a TLV value may be, NIP19_ERR_TOO_LONG past
 * NIP19_MAX_CHARS.
 */
enum nip19_err	 nip19_encode(const struct nip19_entity *e, char *out,
		    size_t outsz);

/*
 * Encode 32 bytes as npub, nsec or note (type) into out, which needs
 * NIP19_KEY_CHARS + 1 bytes. NIP19_OK or NIP19_ERR_SPACE.
 */
enum nip19_err	 nip19_encode32(enum nip19_type type, const uint8_t in[32],
		    char *out, size_t outsz);

/*
 * Parse a public key given as 64 lowercase hex digits or as an npub
 * (either case). NIP19_OK with the 32 bytes in pk, or the reason it is
 * not one: a hex string of the wrong length is NIP19_ERR_LENGTH, a
 * 64-character string with a non-[0-9a-f] digit NIP19_ERR_CHAR.
 */
enum nip19_err	 nip19_pubkey_decode(const char *text, uint8_t pk[32]);

/*
 * Parse a public key given as 64 lowercase hex digits or as an npub.
 * 0 with the 32 bytes in pk, or -1 for anything else.
 */
int		 nip19_pubkey_parse(const char *text, uint8_t pk[32]);
/*
 * The configuration's check of a public key (config_lend_check, CFG_KEYS):
 * 0 when nip19_pubkey_parse takes text, else -1 (*why NULL).
 */
int		 nip19_pubkey_check(const char *text, const char **why);

/*
 * The bech32 layer. Encode data (8-bit bytes, regrouped into 5-bit words)
 * under the lowercase prefix hrp into out. NIP19_OK, NIP19_ERR_SPACE or
 * NIP19_ERR_TOO_LONG (result over NIP19_MAX_CHARS), NIP19_ERR_PREFIX for
 * an empty or non-lowercase-printable hrp.
 */
enum nip19_err	 nip19_bech32_encode(const char *hrp, const uint8_t *data,
		    size_t len, char *out, size_t outsz);

/*
 * Decode a bech32 string: its prefix, lowercased, into hrp (hrpsz bytes
 * with the NUL) and its payload bytes into data (at most datasz; *len set).
 * NIP19_ERR_LENGTH if the payload does not fit datasz, NIP19_ERR_PREFIX if
 * the prefix does not fit hrpsz (the checksum is verified first).
 */
enum nip19_err	 nip19_bech32_decode(const char *text, char *hrp, size_t hrpsz,
		    uint8_t *data, size_t datasz, size_t *len);

#endif
