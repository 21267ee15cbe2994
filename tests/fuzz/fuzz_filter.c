/*
 * fuzz_filter.c — NIP-01 filter JSON as a user or planner hands it in.
 * A filter that parses must serialize to JSON that parses again and
 * serializes to the same bytes, and must match a fixed event without
 * crashing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/filter.h"

#define FILTER_JSON_MAX	(4 * 1024 * 1024)	/* bytes of a re-serialized filter */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* A well-formed event with an e and a p tag (signature not checked). */
static const char fuzz_event_json[] =
    "{\"id\":\"7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e\","
    "\"pubkey\":\"3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d\","
    "\"created_at\":1700000000,\"kind\":1,"
    "\"tags\":[[\"e\",\"abc\"],[\"p\",\"3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d\"],[\"t\",\"nostr\"]],"
    "\"content\":\"hello\","
    "\"sig\":\"00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000\"}";

static struct event	fuzz_ev;
static int		fuzz_ev_ok;

static void
check_round_trip(const struct filter *f)
{
	struct buf	a, b;
	struct filter	g;
	char		err[256];

	buf_init(&a, FILTER_JSON_MAX);
	buf_init(&b, FILTER_JSON_MAX);
	if (filter_to_json(f, &a) != 0)
		abort();
	if (filter_parse_text(&g, (const char *)a.data, a.len, err,
	    sizeof(err)) != 0)
		abort();
	if (filter_to_json(&g, &b) != 0 || a.len != b.len ||
	    memcmp(a.data, b.data, a.len) != 0)
		abort();
	if (filter_match(f, &fuzz_ev) != filter_match(&g, &fuzz_ev))
		abort();
	filter_free(&g);
	buf_free(&a);
	buf_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct filter	f;
	char		err[256];

	if (!fuzz_ev_ok) {
		event_init(&fuzz_ev);
		if (event_parse(&fuzz_ev, fuzz_event_json,
		    sizeof(fuzz_event_json) - 1, EVENT_MAX_BYTES_CEILING) !=
		    EVENT_OK)
			abort();
		fuzz_ev_ok = 1;
	}
	if (filter_parse_text(&f, (const char *)data, size, err,
	    sizeof(err)) != 0)
		return 0;
	check_round_trip(&f);
	filter_free(&f);
	return 0;
}
