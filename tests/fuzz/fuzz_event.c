/*
 * fuzz_event.c — event JSON as a relay would send it: parse, then the
 * full validate path (time, id, signature). An event that parses must
 * serialize to JSON that parses again to the same id, pubkey, kind and
 * created_at, and whose canonical form hashes to the same id.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/limits.h"
#include "nostr/event.h"

#define FUZZ_NOW	1700000000	/* fixed "now" so runs reproduce */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_round_trip(const struct event *ev, struct buf *scratch)
{
	struct buf	out;
	struct event	back;
	uint8_t		id1[32], id2[32];

	buf_init(&out, 4 * EVENT_MAX_BYTES_CEILING);
	event_init(&back);
	if (event_to_json(ev, &out) != 0)
		goto done;	/* escaping may grow it past out's max */
	if (event_parse(&back, (const char *)out.data, out.len,
	    out.len) != EVENT_OK)
		abort();
	if (memcmp(back.id, ev->id, 32) != 0 ||
	    memcmp(back.pubkey, ev->pubkey, 32) != 0 ||
	    back.kind != ev->kind || back.created_at != ev->created_at ||
	    back.ntags != ev->ntags || back.content_len != ev->content_len)
		abort();
	if (event_compute_id(ev, scratch, id1) == 0 &&
	    event_compute_id(&back, scratch, id2) == 0 &&
	    memcmp(id1, id2, 32) != 0)
		abort();
	event_free(&back);
done:
	buf_free(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct event		ev;
	struct event_rkey	rk;
	struct buf		scratch;

	buf_init(&scratch, 2 * EVENT_MAX_BYTES_CEILING);
	event_init(&ev);
	if (event_parse(&ev, (const char *)data, size,
	    EVENT_MAX_BYTES_CEILING) == EVENT_OK) {
		check_round_trip(&ev, &scratch);
		(void)event_kind_class(ev.kind);
		(void)event_replace_key(&ev, &rk);
		(void)event_check_id(&ev, &scratch);
		(void)event_check_sig(&ev);
		event_free(&ev);
	}
	event_init(&ev);
	if (event_validate(&ev, (const char *)data, size,
	    EVENT_MAX_BYTES_CEILING, FUZZ_NOW, &scratch) == EVENT_OK)
		event_free(&ev);
	buf_free(&scratch);
	return 0;
}
