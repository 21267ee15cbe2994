/*
 * fuzz_relay_client_msg.c — client -> relay messages as a client of the
 * box's relay could send them (serve/wire.c). Checks that the parser never
 * reads outside the message, that a refusal leaves nothing owned and says
 * why, that a parsed EVENT's span lies inside the message and is one
 * object, that filters are within their limits and sorted, that a subid
 * is 1..64 bytes, and that the answers built from what was parsed (EVENT,
 * CLOSED, NOTICE, NEG-ERR) are valid JSON arrays.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/limits.h"
#include "nostr/filter.h"
#include "serve/wire.h"

/* An answer built from the parse must be one JSON array. */
static void
check_json(const struct buf *b)
{
	cJSON	*j = cJSON_ParseWithLength((const char *)b->data, b->len);

	if (j == NULL || !cJSON_IsArray(j))
		abort();
	cJSON_Delete(j);
}

static void
check_parsed(const struct wire_msg *m, const char *f, size_t size)
{
	struct buf	b;
	size_t		i, len = strlen(m->subid);

	if (m->type != WIRE_EVENT && m->type != WIRE_AUTH &&
	    (len == 0 || len > RELAY_SUBID_MAX))
		abort();
	if (m->event != NULL && (m->event < f || m->event + m->event_len >
	    f + size || m->event[0] != '{' || m->event[m->event_len - 1] != '}'))
		abort();
	if (m->nfilters > 10)
		abort();
	for (i = 0; i < m->nfilters; i++)
		if (!m->filters[i].sorted || m->filters[i].nauthors >
		    FILTER_MAX_AUTHORS || m->filters[i].nids > FILTER_MAX_IDS)
			abort();
	buf_init(&b, 4 * 1024 * 1024);
	if (m->event != NULL) {
		if (wire_event(&b, "x", m->event, m->event_len) == -1)
			abort();
	} else if (wire_closed(&b, m->subid, "invalid: x") == -1)
		abort();
	check_json(&b);
	buf_free(&b);
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_msg	 m;
	struct buf	 b;
	char		*copy, why[RELAYD_NOTICE_MAX];

	if (size > RELAYD_MAX_MSG_BYTES)
		return 0;
	/* A heap copy of exactly size bytes, so ASan sees any overread. */
	if ((copy = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	if (wire_parse(&m, copy, size, 10, why, sizeof(why)) == 0) {
		check_parsed(&m, copy, size);
		wire_free(&m);
	} else {
		if (m.root != NULL || m.filters != NULL || why[0] == '\0')
			abort();
		buf_init(&b, 1024);
		if (wire_notice(&b, why) == -1)
			abort();
		check_json(&b);
		buf_free(&b);
	}
	free(copy);
	return 0;
}
