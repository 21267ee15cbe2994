/*
 * fuzz_job_spec.c — the form fields of jobs new and jobs dry-run, as any
 * surface hands them over (the web API's body members, name=value words):
 * the input is up to 15 fields separated by newlines, in the order of
 * struct job_args. Whatever job_spec_parse accepts must hold: a batch size
 * in range, kinds sorted and unique, typed lists sorted and without
 * repeats, at most JOBS_MAX_ITEMS of them, since not after until, a
 * schedule only without until, and a shared filter that serializes and
 * parses back; a refusal must name a field.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "sync/job_spec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define NFIELDS	15

static void
check_spec(const struct job_spec *s)
{
	struct buf	b;
	struct filter	f;
	char		err[256];
	size_t		i;

	if (s->batch_size < 1 || s->batch_size > JOBS_BATCH_SIZE_MAX ||
	    s->nauthors > JOBS_MAX_ITEMS || s->nids > JOBS_MAX_ITEMS)
		abort();
	for (i = 1; i < s->shared.nkinds; i++)
		if (s->shared.kinds[i - 1] >= s->shared.kinds[i])
			abort();
	for (i = 1; i < s->nauthors; i++)
		if (memcmp(s->authors[i - 1], s->authors[i], 32) >= 0)
			abort();
	for (i = 1; i < s->nids; i++)
		if (memcmp(s->ids[i - 1], s->ids[i], 32) >= 0)
			abort();
	if ((s->shared.has & FILTER_HAS_SINCE) &&
	    (s->shared.has & FILTER_HAS_UNTIL) &&
	    s->shared.since > s->shared.until)
		abort();
	if (s->every_s > 0 && (s->shared.has & FILTER_HAS_UNTIL))
		abort();
	if ((s->nauthors > 0) != (s->source == STORE_JOB_SRC_MANUAL))
		abort();
	buf_init(&b, JOBS_FILTER_MAX_BYTES * 4);
	if (filter_to_json(&s->shared, &b) == 0) {
		if (filter_parse_text(&f, (const char *)buf_rptr(&b),
		    buf_avail(&b), err, sizeof(err)) == -1)
			abort();
		filter_free(&f);
	}
	buf_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_args	 a;
	struct job_spec	 s;
	const char	*f[NFIELDS] = { NULL };
	char		*text, *p, err[512];
	size_t		 n = 0;

	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (p = text; p != NULL && n < NFIELDS; n++) {
		f[n] = p;
		if ((p = strchr(p, '\n')) != NULL)
			*p++ = '\0';
	}
	a = (struct job_args){ f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7],
	    f[8], f[9], f[10], f[11], f[12], f[13], f[14] };
	if (job_spec_parse(&a, &s, err, sizeof(err)) == 0) {
		check_spec(&s);
		job_spec_free(&s);
	} else if (strchr(err, ':') == NULL)
		abort();
	free(text);
	return 0;
}
