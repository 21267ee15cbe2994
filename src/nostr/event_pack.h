/*
 * event_pack.h — the compact form an event's JSON is stored in (the
 * events table's packed column, docs/ARCHITECTURE.md section 5). The
 * JSON text loses the three long hex values it holds (the id, the public
 * key and the signature: 64 + 64 + 128 characters); the signature is kept
 * as its 64 bytes, the id and the public key are not kept at all (the row
 * holds them as binary columns already), and decoding puts the three
 * back where they were. Decoding gives back the very bytes that were
 * encoded, whatever they are: key order, white space, escapes and
 * unicode are never looked at, only copied.
 *
 * A blob starts with its form:
 *   EVENT_PACK_VERBATIM   the text as it came, after the form byte: what
 *                         the other forms cannot hold (a hex value in
 *                         upper case, a value that is not there);
 *   EVENT_PACK_CANONICAL  64 signature bytes, then the text without the
 *                         three values, which sit where the store's own
 *                         serialization puts them ({"id":"<id>","pubkey":
 *                         "<pubkey>",...,"sig":"<sig>"}): nothing else is
 *                         needed to put them back;
 *   EVENT_PACK_PLACED     three 32-bit little-endian offsets (of the id,
 *                         the public key and the signature in the text),
 *                         64 signature bytes, then the text without them:
 *                         any key order and spacing.
 * A form number never changes meaning once released; a new layout takes
 * a new number. The stored size of every form is its JSON's size plus a
 * constant (event_pack_json_len), so SQL can compute the served size
 * from length() alone (sql/sqlite/015_events_packed.sql).
 */
#ifndef CACHEBOX_NOSTR_EVENT_PACK_H
#define CACHEBOX_NOSTR_EVENT_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

enum event_pack_form {
	EVENT_PACK_VERBATIM = 0,
	EVENT_PACK_CANONICAL = 1,
	EVENT_PACK_PLACED = 2,
};

/*
 * Append the packed form of json[0..len) to out, for the event whose id
 * and public key are given (the values the row keeps in binary). The
 * smallest form that gives back json exactly is chosen. 0, or -1 when
 * out cannot hold it (nothing appended then).
 */
int	event_pack_encode(const char *json, size_t len, const uint8_t id[32],
	    const uint8_t pubkey[32], struct buf *out);

/*
 * Append the JSON that blob[0..len) packs to out, given the same id and
 * public key it was packed with. 0, or -1 when the blob is malformed
 * (an unknown form, offsets out of place) or out cannot hold the text;
 * nothing is appended then.
 */
int	event_pack_decode(const uint8_t *blob, size_t len, const uint8_t id[32],
	    const uint8_t pubkey[32], struct buf *out);

/* The form of a blob (its first byte), -1 when it is empty. */
int	event_pack_form(const uint8_t *blob, size_t len);

/*
 * Bytes of JSON a blob of len bytes in form decodes to, -1 for an
 * unknown form or a length too short for it.
 */
int64_t	event_pack_json_len(int form, size_t len);

#endif
