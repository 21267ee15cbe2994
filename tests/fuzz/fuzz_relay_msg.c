/*
 * fuzz_relay_msg.c — relay -> client frames as a relay could send them.
 * Checks that the parser never reads outside the frame, that a parsed
 * EVENT's raw span lies inside the frame and starts and ends with braces,
 * and that the detached event and the tree are freed exactly once.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relay/msg.h"

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
		if ((ev = relay_msg_take_event(&m)) != NULL)
			cJSON_Delete(ev);
		relay_msg_free(&m);
	}
	free(copy);
	return 0;
}
