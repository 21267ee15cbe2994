/*
 * fuzz_event_pack.c — the compact stored form of event JSON
 * (nostr/event_pack.h). Every input event_parse accepts must pack and
 * unpack to the same bytes, both as it came and in the store's own
 * serialization (which must take the canonical form); any other input
 * must too, packed with the id and key read from its first two 64-digit
 * hex runs; and the input read as a packed blob must decode or be
 * refused without reading past its end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/event_pack.h"

#define FUZZ_BUF_MAX	(4 * EVENT_MAX_BYTES_CEILING)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Pack then unpack text; abort unless the bytes come back (or form differs). */
static void
round_trip(const char *text, size_t len, const uint8_t id[32],
    const uint8_t pk[32], int form)
{
	struct buf	packed, back;
	int		got;

	buf_init(&packed, FUZZ_BUF_MAX);
	buf_init(&back, FUZZ_BUF_MAX);
	if (event_pack_encode(text, len, id, pk, &packed) != 0)
		abort();
	got = event_pack_form(packed.data, packed.len);
	if ((form >= 0 && got != form) ||
	    event_pack_json_len(got, packed.len) != (int64_t)len ||
	    event_pack_decode(packed.data, packed.len, id, pk, &back) != 0 ||
	    back.len != len || (len > 0 && memcmp(back.data, text, len) != 0))
		abort();
	buf_free(&packed);
	buf_free(&back);
}

/* The first two 64-digit lowercase hex runs of text into id and pk. */
static void
hex_runs(const char *text, size_t len, uint8_t id[32], uint8_t pk[32])
{
	size_t	i, run = 0;
	int	found = 0;

	memset(id, 0x11, 32);
	memset(pk, 0x22, 32);
	for (i = 0; i < len && found < 2; i++) {
		run = hex_digit((unsigned char)text[i]) >= 0 ? run + 1 : 0;
		if (run >= 64 && hex_decode(text + i - 63, 64,
		    found == 0 ? id : pk, 32) == 0) {
			found++;
			run = 0;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*text = (const char *)data;
	struct event	 ev;
	struct buf	 canon;
	uint8_t		 id[32], pk[32];

	event_init(&ev);
	if (event_parse(&ev, text, size, EVENT_MAX_BYTES_CEILING) ==
	    EVENT_OK) {
		round_trip(text, size, ev.id, ev.pubkey, -1);
		buf_init(&canon, EVENT_SERIAL_MAX_BYTES);
		if (event_to_json(&ev, &canon) == 0)
			round_trip((const char *)canon.data, canon.len, ev.id,
			    ev.pubkey, EVENT_PACK_CANONICAL);
		buf_free(&canon);
		event_free(&ev);
	}
	hex_runs(text, size, id, pk);
	round_trip(text, size, id, pk, -1);
	buf_init(&canon, FUZZ_BUF_MAX);
	(void)event_pack_decode(data, size, id, pk, &canon);
	buf_free(&canon);
	return 0;
}
