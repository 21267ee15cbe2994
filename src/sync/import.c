/*
 * import.c — an import's lines through ingest (import.h). It keeps only
 * counters and the first few refusals; a line is never kept past its
 * call, and nothing but ingest decides what is stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "nostr/event.h"
#include "sync/import.h"
#include "sync/ingest.h"

struct import_bad {
	unsigned long	line;
	char		reason[96];
};

struct import_run {
	struct ingest		*ing;
	unsigned long		 lines, stored, duplicate, invalid, errors;
	unsigned long		 withdrawn, ephemeral;
	struct import_bad	 bad[IMPORT_REPORT_INVALID];
	size_t			 nbad;
};

struct import_run *
import_begin(struct ingest *ing)
{
	struct import_run	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->ing = ing;
	return r;
}

static void
import_refused(struct import_run *r, const char *reason)
{
	r->invalid++;
	if (r->nbad == IMPORT_REPORT_INVALID)
		return;
	r->bad[r->nbad].line = r->lines;
	snprintf(r->bad[r->nbad].reason, sizeof(r->bad[0].reason), "%s",
	    reason);
	r->nbad++;
}

void
import_line(struct import_run *r, const char *text, size_t len)
{
	struct ingest_info	info;
	enum ingest_result	res;
	size_t			i;

	r->lines++;
	for (i = 0; i < len && (text[i] == ' ' || text[i] == '\t' ||
	    text[i] == '\r'); i++)
		;
	if (i == len)
		return;
	res = ingest_event_json(r->ing, text, len, NULL, 0, INGEST_IMPORT,
	    NULL, &info);
	switch (res) {
	case INGEST_NEW:
		/* An ephemeral event is told to live subscribers, not kept. */
		if (info.kind >= 20000 && info.kind < 30000)
			r->ephemeral++;
		else
			r->stored++;
		break;
	case INGEST_DUPLICATE:
		/* Kept out by an author's rule, or a copy of a stored one. */
		if (info.not_kept != 0)
			r->withdrawn++;
		else
			r->duplicate++;
		break;
	case INGEST_TOO_LARGE:
		import_refused(r, "invalid: event too large");
		break;
	case INGEST_ERROR:
		r->errors++;
		break;
	default:
		import_refused(r, info.why != EVENT_OK ?
		    event_result_str(info.why) : "invalid: a stored event "
		    "with this id has another author, time or kind");
	}
}

void
import_line_too_long(struct import_run *r)
{
	r->lines++;
	import_refused(r, "invalid: line longer than the largest event");
}

cJSON *
import_end(struct import_run *r)
{
	cJSON	*o = cJSON_CreateObject(), *l, *e;
	size_t	 i;
	bool	 kept;

	/* The counts are a promise: commit ingest's batch before giving them. */
	if (!(kept = ingest_flush(r->ing) == 0))
		r->errors++;
	if (o != NULL) {
		if (!kept)
			cJSON_AddStringToObject(o, "error", "the last events "
			    "could not be committed (see the log); import the "
			    "file again: what is stored is skipped as duplicate");
		cJSON_AddNumberToObject(o, "lines", (double)r->lines);
		cJSON_AddNumberToObject(o, "stored", (double)r->stored);
		cJSON_AddNumberToObject(o, "duplicate", (double)r->duplicate);
		cJSON_AddNumberToObject(o, "withdrawn", (double)r->withdrawn);
		cJSON_AddNumberToObject(o, "ephemeral", (double)r->ephemeral);
		cJSON_AddNumberToObject(o, "invalid", (double)r->invalid);
		cJSON_AddNumberToObject(o, "errors", (double)r->errors);
		l = cJSON_AddArrayToObject(o, "invalid_lines");
		for (i = 0; i < r->nbad && l != NULL; i++) {
			if ((e = cJSON_CreateObject()) == NULL)
				break;
			cJSON_AddNumberToObject(e, "line", (double)r->bad[i].line);
			cJSON_AddStringToObject(e, "reason", r->bad[i].reason);
			cJSON_AddItemToArray(l, e);
		}
	}
	free(r);
	return o;
}
