/*
 * fuzz_relay_msg.c — relay -> client frames as a relay could send them.
 * Checks that the parser never reads outside the frame, that a parsed
 * EVENT's raw span lies inside the frame and starts and ends with braces,
 * that the detached event and the tree are freed exactly once, and that a
 * NEG-MSG's hex decodes to exactly half its digits or is refused, and
 * encodes back to the same text.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relay/msg.h"

/* A NEG-MSG's hex: decoded within its limit, built back byte for byte. */
static void
check_neg(const struct relay_msg *m)
{
	struct buf	 bin, out;
	const char	*why, *hex;

	buf_init(&bin, 512 * 1024);
	if (relay_msg_neg_decode(m->text, m->text_len, 512 * 1024, &bin,
	    &why) == 0) {
		if (bin.len * 2 != m->text_len)
			abort();
		buf_init(&out, 1024 * 1024 + 128);
		if (relay_msg_build_neg_msg(&out, m->subid, bin.data,
		    bin.len) == -1)
			abort();
		/* The hex is the last element: after the last comma and quote. */
		hex = strrchr(buf_cstr(&out), ',');
		if (hex == NULL || memcmp(hex + 2, m->text, m->text_len) != 0)
			abort();
		buf_free(&out);
	} else if (bin.len != 0)
		abort();
	buf_free(&bin);
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct relay_msg	 m;
	const char		*f;
	char			*copy;
	cJSON			*ev;

	/* A heap copy of exactly size bytes, so ASan sees any overread. */
	if ((copy = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	f = copy;
	if (relay_msg_parse(&m, f, size, 1024 * 1024) == RELAY_MSG_PARSED) {
		if (m.type == RELAY_MSG_EVENT && m.event_raw != NULL) {
			if (m.event_raw < f ||
			    m.event_raw + m.event_raw_len > f + size ||
			    m.event_raw[0] != '{' ||
			    m.event_raw[m.event_raw_len - 1] != '}')
				abort();
		}
		if (m.subid != NULL && !relay_subid_valid(m.subid, m.subid_len))
			abort();
		(void)relay_reason_parse(m.text, m.text_len);
		if (m.type == RELAY_MSG_NEG_MSG)
			check_neg(&m);
		if ((ev = relay_msg_take_event(&m)) != NULL)
			cJSON_Delete(ev);
		relay_msg_free(&m);
	}
	free(copy);
	return 0;
}
