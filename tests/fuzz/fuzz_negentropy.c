/*
 * fuzz_negentropy.c — arbitrary bytes as a NIP-77 negentropy message, to a
 * responder and to an initiator (after its first message), each over a
 * small fixed set, with and without a frame-size limit. Checks that
 * nothing reads outside the message, that a refusal always carries a
 * reason, that no reply passes the frame-size limit, and that whatever
 * either role writes is itself a message the other role accepts.
 *
 * The set (see fuzz_set) is 120 items over 40 seconds, three to a second,
 * whose ids share their first bytes in pairs, so bounds with id prefixes
 * occur; tests/fuzz/corpus/fuzz_negentropy holds messages made against it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "nostr/negentropy.h"

#define FUZZ_ITEMS	120
#define FUZZ_LIMIT	4096	/* the frame-size limit of the limited runs */

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct neg_storage	fuzz_st;
static struct buf		fuzz_out, fuzz_back;

/* Item i: created_at 1000 + i / 3, id bytes i/2, i, then 0x5a... */
static void
fuzz_set(void)
{
	uint8_t	id[NEG_ID_BYTES];
	size_t	i;

	neg_storage_init(&fuzz_st, FUZZ_ITEMS);
	for (i = 0; i < FUZZ_ITEMS; i++) {
		memset(id, 0x5a, sizeof(id));
		id[0] = (uint8_t)(i / 2);
		id[1] = (uint8_t)i;
		if (neg_storage_add(&fuzz_st, 1000 + i / 3, id) == -1)
			abort();
	}
	neg_storage_seal(&fuzz_st);
	buf_init(&fuzz_out, NEG_MAX_MSG_BYTES);
	buf_init(&fuzz_back, NEG_MAX_MSG_BYTES);
}

static void
fuzz_id(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	(void)arg;
	(void)id;
}

/* What one role wrote must be accepted by the other role. */
static void
fuzz_echo(enum neg_role writer, size_t limit)
{
	struct neg_session	s;
	enum neg_status		r;

	if (limit != 0 && fuzz_out.len > limit)
		abort();
	if (neg_session_init(&s, &fuzz_st, writer == NEG_RESPONDER ?
	    NEG_INITIATOR : NEG_RESPONDER, 0) == -1)
		abort();
	if (writer == NEG_RESPONDER && neg_initiate(&s, &fuzz_back) != NEG_SEND)
		abort();
	r = neg_reconcile(&s, fuzz_out.data, fuzz_out.len, &fuzz_back, NULL);
	if (r == NEG_ERROR)
		abort();
	neg_session_free(&s);
}

static void
fuzz_role(enum neg_role role, size_t limit, const uint8_t *msg, size_t len)
{
	struct neg_session	s;
	struct neg_ids		ids = { fuzz_id, fuzz_id, NULL };
	enum neg_status		r;

	if (neg_session_init(&s, &fuzz_st, role, limit) == -1)
		abort();
	if (role == NEG_INITIATOR && neg_initiate(&s, &fuzz_out) != NEG_SEND)
		abort();
	r = neg_reconcile(&s, msg, len, &fuzz_out, &ids);
	if (r == NEG_ERROR && neg_session_reason(&s)[0] == '\0')
		abort();
	if (r == NEG_DONE && role != NEG_INITIATOR)
		abort();
	if (r == NEG_SEND)
		fuzz_echo(role, limit);
	neg_session_free(&s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool	ready;
	uint8_t		*copy;

	if (!ready) {
		fuzz_set();
		ready = true;
	}
	/* A heap copy of exactly size bytes, so ASan sees any overread. */
	if ((copy = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	fuzz_role(NEG_RESPONDER, 0, copy, size);
	fuzz_role(NEG_RESPONDER, FUZZ_LIMIT, copy, size);
	fuzz_role(NEG_INITIATOR, 0, copy, size);
	fuzz_role(NEG_INITIATOR, FUZZ_LIMIT, copy, size);
	free(copy);
	return 0;
}
