/*
 * job_spec.c — the form fields of a custom job checked into a job_spec
 * (job_spec.h), field by field: each checker reads one string and either
 * fills its part or writes "<field>: <what is wrong>". The presets are a
 * table; applying one only fills fields the caller left out.
 *
 * Everything here is peer input (the web API, cacheboxctl, the console):
 * every length is bounded before it is used, lists are counted before
 * they are allocated, and nothing is echoed back unbounded (an entry
 * quoted in a message is cut to a few dozen bytes).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/clock.h"
#include "core/errf.h"
#include "core/utf8.h"
#include "net/url.h"
#include "nostr/nip19.h"
#include "store/follows.h"
#include "sync/job_spec.h"

#define SEPARATORS	", \t\r\n"

static const struct job_preset presets[] = {
	{ "missing-profiles-kind1", "Backfill missing profiles (kind-1 "
	  "authors)", "0", "kind1", "true", "bootstrap" },
	{ "missing-profiles-all", "Backfill missing profiles (all pubkeys)",
	  "0", "all", "true", "bootstrap" },
	{ "profiles-date-range", "Cache all kind-0 from date range", "0",
	  "none", "false", "bootstrap" },
	{ "relay-lists", "Backfill relay lists", "10002", "all", "false",
	  "bootstrap" },
	{ "contact-lists", "Backfill contact lists", "3", "followed", "false",
	  "bootstrap" },
	{ NULL },
};

const struct job_preset *
job_presets(void)
{
	return presets;
}

const struct job_preset *
job_preset_find(const char *name)
{
	const struct job_preset	*p;

	for (p = presets; name != NULL && p->name != NULL; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

static bool
given(const char *s)
{
	return s != NULL && *s != '\0';
}

/* A typed list with at least one entry (separators alone are no list). */
static bool
listed(const char *s)
{
	return given(s) && job_list_count(s) > 0;
}

static void
warn(struct job_spec *s, const char *fmt, ...)
{
	va_list	ap;

	if (s->nwarnings >= JOB_SPEC_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(s->warnings[s->nwarnings++], sizeof(s->warnings[0]), fmt,
	    ap);
	va_end(ap);
}

/* ---- presets ---------------------------------------------------------- */

int
job_args_preset(const struct job_args *in, struct job_args *out, char *err,
    size_t errlen)
{
	const struct job_preset	*p;
	const struct job_preset	*q;
	char			 names[256] = "";
	size_t			 n = 0;

	*out = *in;
	if (!given(in->preset))
		return 0;
	if ((p = job_preset_find(in->preset)) == NULL) {
		for (q = presets; q->name != NULL; q++)
			n += (size_t)snprintf(names + n, n < sizeof(names) ?
			    sizeof(names) - n : 0, "%s%s", q == presets ? "" :
			    ", ", q->name);
		return errf(err, errlen, "preset: unknown '%.*s' (one of: %s)",
		    JOB_SPEC_QUOTE_MAX, in->preset, names);
	}
	if (!given(out->label))
		out->label = p->title;
	if (!given(out->kinds))
		out->kinds = p->kinds;
	if (!given(out->authors_source) && !listed(in->authors) &&
	    !listed(in->ids))
		out->authors_source = p->authors_source;
	if (!given(out->only_missing_kind0) && !listed(in->ids))
		out->only_missing_kind0 = p->only_missing_kind0;
	if (!given(out->relay_mode) && !listed(in->relays))
		out->relay_mode = p->relay_mode;
	return 0;
}

/* ---- small parsers ------------------------------------------------------ */

size_t
job_list_count(const char *text)
{
	size_t	n = 0;
	const char *p = text;

	while (p != NULL && *p != '\0') {
		p += strspn(p, SEPARATORS);
		if (*p == '\0')
			break;
		n++;
		p += strcspn(p, SEPARATORS);
	}
	return n;
}

/* The next entry of a list from *p into out (cut to outlen - 1); 0 at end. */
static size_t
list_next(const char **p, char *out, size_t outlen, size_t *full)
{
	size_t	len;

	*p += strspn(*p, SEPARATORS);
	if (**p == '\0')
		return 0;
	len = strcspn(*p, SEPARATORS);
	*full = len;
	snprintf(out, outlen, "%.*s", (int)(len < outlen ? len : outlen - 1),
	    *p);
	*p += len;
	return len;
}

/* A whole decimal integer in [lo, hi]. 0, or -1. */
static int
int_parse(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
	char		*end;
	long long	 v;

	if (!isdigit((unsigned char)text[0]) && !(text[0] == '-' &&
	    isdigit((unsigned char)text[1])))
		return -1;
	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int
bool_parse(const char *text, bool *out)
{
	static const char *const yes[] = { "true", "1", "yes", "on" };
	static const char *const no[] = { "false", "0", "no", "off" };
	size_t	i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(text, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(text, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

/* Digits of width n at p into *out; the pointer moves past them. */
static int
digits(const char **p, int n, int *out)
{
	int	v = 0, i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

int
job_time_parse(const char *text, int64_t *out, const char **why)
{
	struct tm	 tm;
	const char	*p = text;
	int		 y, mo, d, h = 0, mi = 0, s = 0;
	time_t		 t;

	*why = "not Unix seconds or an ISO-8601 date (2024-01-31, "
	    "2024-01-31T12:00:00Z)";
	if (int_parse(text, 0, (int64_t)1 << 40, out) == 0)
		return 0;
	if (digits(&p, 4, &y) == -1 || *p++ != '-' || digits(&p, 2, &mo) == -1 ||
	    *p++ != '-' || digits(&p, 2, &d) == -1)
		return -1;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (digits(&p, 2, &h) == -1 || *p++ != ':' ||
		    digits(&p, 2, &mi) == -1)
			return -1;
		if (*p == ':' && (p++, digits(&p, 2, &s) == -1))
			return -1;
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	if (*p != '\0' || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 ||
	    h > 23 || mi > 59 || s > 60) {
		*why = *p != '\0' ? "not Unix seconds or an ISO-8601 date in "
		    "UTC (2024-01-31T12:00:00Z; no other time zone)" :
		    "not a valid date";
		return -1;
	}
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	if ((t = timegm(&tm)) == (time_t)-1 || tm.tm_mday != d) {
		*why = "not a valid date";
		return -1;
	}
	*out = (int64_t)t;
	return 0;
}

int
job_every_parse(const char *text, int64_t *out, const char **why)
{
	static const struct { char unit; int64_t s; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	char		num[24];
	size_t		len = strlen(text), i;
	int64_t		n, mult = 0;

	*why = "not a count and a unit: 30m, 1h, 6h, 1d (s for seconds)";
	if (len < 2 || len >= sizeof(num))
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (text[len - 1] == units[i].unit)
			mult = units[i].s;
	memcpy(num, text, len - 1);
	num[len - 1] = '\0';
	if (mult == 0 || int_parse(num, 1, JOBS_EVERY_MAX_S, &n) == -1)
		return -1;
	if (n > JOBS_EVERY_MAX_S / mult || n * mult < JOBS_EVERY_MIN_S) {
		*why = "out of range (1s .. 366d)";
		return -1;
	}
	*out = n * mult;
	return 0;
}

void
job_every_format(int64_t s, char *out, size_t len)
{
	if (s > 0 && s % 86400 == 0)
		snprintf(out, len, "%lldd", (long long)(s / 86400));
	else if (s > 0 && s % 3600 == 0)
		snprintf(out, len, "%lldh", (long long)(s / 3600));
	else if (s > 0 && s % 60 == 0)
		snprintf(out, len, "%lldm", (long long)(s / 60));
	else
		snprintf(out, len, "%llds", (long long)s);
}

/* ---- fields --------------------------------------------------------------- */

static int
check_label(const struct job_args *a, struct job_spec *s, char *err,
    size_t errlen)
{
	const char	*l = given(a->label) ? a->label : "custom job";
	size_t		 i, len = strlen(l);

	if (len > JOBS_LABEL_MAX)
		return errf(err, errlen, "label: longer than %d bytes",
		    JOBS_LABEL_MAX);
	if (!utf8_valid(l, len))
		return errf(err, errlen, "label: not UTF-8 text");
	for (i = 0; i < len; i++)
		if ((unsigned char)l[i] < 0x20 || l[i] == 0x7f)
			return errf(err, errlen, "label: holds a control "
			    "character");
	memcpy(s->label, l, len + 1);
	snprintf(s->preset, sizeof(s->preset), "%s", given(a->preset) ?
	    a->preset : "");
	return 0;
}

static int
kind_cmp(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static int
check_kinds(const struct job_args *a, struct job_spec *s, char *err,
    size_t errlen)
{
	char		 e[JOB_SPEC_QUOTE_MAX + 1];
	const char	*p = a->kinds;
	size_t		 n, full, i, k = 0;
	int64_t		 v;

	if (!given(p))
		return 0;
	if ((n = job_list_count(p)) > FILTER_MAX_KINDS)
		return errf(err, errlen, "kinds: %zu entries, more than %d", n,
		    FILTER_MAX_KINDS);
	if ((s->shared.kinds = calloc(n, sizeof(uint16_t))) == NULL)
		return errf(err, errlen, "kinds: out of memory");
	for (i = 1; list_next(&p, e, sizeof(e), &full) > 0; i++) {
		if (full > 5 || int_parse(e, 0, 65535, &v) == -1)
			return errf(err, errlen, "kinds: entry %zu '%s' is not "
			    "a kind (0..65535)", i, e);
		s->shared.kinds[k++] = (uint16_t)v;
	}
	qsort(s->shared.kinds, k, sizeof(uint16_t), kind_cmp);
	for (i = 0, n = 0; i < k; i++)
		if (n == 0 || s->shared.kinds[n - 1] != s->shared.kinds[i])
			s->shared.kinds[n++] = s->shared.kinds[i];
	s->shared.nkinds = n;
	s->shared.has |= FILTER_HAS_KINDS;
	return 0;
}

static int
item_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

/* Sort and drop repeats; the new count. */
static size_t
items_unique(uint8_t (*v)[32], size_t n)
{
	size_t	i, m = 0;

	qsort(v, n, 32, item_cmp);
	for (i = 0; i < n; i++)
		if (m == 0 || memcmp(v[m - 1], v[i], 32) != 0)
			memmove(v[m++], v[i], 32);
	return m;
}

/* One entry of an author list: npub or hex. */
static int
author_decode(const char *e, uint8_t out[32])
{
	return nip19_pubkey_parse(e, out);
}

/* One entry of an id list: 64 hex digits or a note. */
static int
id_decode(const char *e, uint8_t out[32])
{
	size_t	i;

	if (strlen(e) == 64) {
		for (i = 0; i < 64; i++)
			if (!isxdigit((unsigned char)e[i]))
				return -1;
		for (i = 0; i < 32; i++) {
			unsigned	v;

			if (sscanf(e + 2 * i, "%2x", &v) != 1)
				return -1;
			out[i] = (uint8_t)v;
		}
		return 0;
	}
	return nip19_decode32(e, NIP19_NOTE, out) == NIP19_OK ? 0 : -1;
}

/*
 * A typed list of 32-byte values: counted first (over JOBS_MAX_ITEMS is
 * refused before anything is allocated), then decoded, sorted, unique.
 */
static int
check_list(const char *field, const char *text, const char *what,
    int (*decode)(const char *, uint8_t[32]), uint8_t (**out)[32],
    size_t *nout, char *err, size_t errlen)
{
	char		 e[JOB_SPEC_ENTRY_MAX + 1];
	const char	*p = text;
	size_t		 n = job_list_count(text), i, full;

	if (n > JOBS_MAX_ITEMS)
		return errf(err, errlen, "%s: %zu entries, more than the limit "
		    "of %d", field, n, JOBS_MAX_ITEMS);
	if (n == 0)
		return 0;
	if ((*out = calloc(n, 32)) == NULL)
		return errf(err, errlen, "%s: out of memory", field);
	for (i = 0; list_next(&p, e, sizeof(e), &full) > 0; i++)
		if (full > JOB_SPEC_ENTRY_MAX || decode(e, (*out)[i]) == -1)
			return errf(err, errlen, "%s: entry %zu '%.*s%s' is not "
			    "%s", field, i + 1, JOB_SPEC_QUOTE_MAX, e,
			    full > JOB_SPEC_QUOTE_MAX ? "..." : "", what);
	*nout = items_unique(*out, n);
	return 0;
}

static int
check_authors(const struct job_args *a, struct job_spec *s, char *err,
    size_t errlen)
{
	int	src = STORE_JOB_SRC_NONE;

	if (given(a->authors_source) &&
	    ((src = store_job_source_parse(a->authors_source)) < 0))
		return errf(err, errlen, "authors_source: '%.*s' is not one of "
		    "manual, all, kind1, followed, none",
		    JOB_SPEC_QUOTE_MAX, a->authors_source);
	if (listed(a->authors)) {
		if (given(a->authors_source) && src != STORE_JOB_SRC_MANUAL)
			return errf(err, errlen, "authors: a typed list needs "
			    "authors_source manual (not %.*s)",
			    JOB_SPEC_QUOTE_MAX, a->authors_source);
		src = STORE_JOB_SRC_MANUAL;
		if (check_list("authors", a->authors, "an npub or 64 hex "
		    "digits", author_decode, &s->authors, &s->nauthors, err,
		    errlen) == -1)
			return -1;
	} else if (src == STORE_JOB_SRC_MANUAL)
		return errf(err, errlen, "authors: authors_source manual needs "
		    "a list of npubs or hex keys");
	s->source = (enum store_job_source)src;
	if (given(a->only_missing_kind0) &&
	    bool_parse(a->only_missing_kind0, &s->missing_kind0) == -1)
		return errf(err, errlen, "only_missing_kind0: '%.*s' is not "
		    "true or false", JOB_SPEC_QUOTE_MAX, a->only_missing_kind0);
	if (s->missing_kind0 && s->source == STORE_JOB_SRC_NONE)
		return errf(err, errlen, "only_missing_kind0: needs an "
		    "authors_source (manual, all, kind1 or followed)");
	return 0;
}

static int
check_ids(const struct job_args *a, struct job_spec *s, char *err,
    size_t errlen)
{
	if (!listed(a->ids))
		return 0;
	if (s->source != STORE_JOB_SRC_NONE)
		return errf(err, errlen, "ids: give authors or ids, not both");
	return check_list("ids", a->ids, "a note or 64 hex digits", id_decode,
	    &s->ids, &s->nids, err, errlen);
}

static int
check_times(const struct job_args *a, struct job_spec *s, char *err,
    size_t errlen)
{
	const char	*why;
	int64_t		 v;
	char		 a_since[40], a_until[40];

	if (given(a->since)) {
		if (job_time_parse(a->since, &v, &why) == -1)
			return errf(err, errlen, "since: '%.*s' is %s",
			    JOB_SPEC_QUOTE_MAX, a->since, why);
		s->shared.since = v;
		s->shared.has |= FILTER_HAS_SINCE;
	}
	if (given(a->until)) {
		if (job_time_parse(a->until, &v, &why) == -1)
			return errf(err, errlen, "until: '%.*s' is %s",
			    JOB_SPEC_QUOTE_MAX, a->until, why);
		s->shared.until = v;
		s->shared.has |= FILTER_HAS_UNTIL;
	}
	if ((s->shared.has & FILTER_HAS_SINCE) &&
	    (s->shared.has & FILTER_HAS_UNTIL) &&
	    s->shared.since > s->shared.until)
		return errf(err, errlen, "since: %s is after until %s: "
		    "choose an earlier since or a later until",
		    clock_utc_text(s->shared.since, a_since, sizeof(a_since)),
		    clock_utc_text(s->shared.until, a_until, sizeof(a_until)));
	if (given(a->limit)) {
		if (int_parse(a->limit, 0, JOBS_LIMIT_MAX, &v) == -1)
			return errf(err, errlen, "limit: '%.*s' is not a count "
			    "(0 .. %d; 0 = none)", JOB_SPEC_QUOTE_MAX, a->limit,
			    JOBS_LIMIT_MAX);
		if (v > 0) {
			s->shared.limit = (uint64_t)v;
			s->shared.has |= FILTER_HAS_LIMIT;
		}
	}
	return 0;
}

/* One "#x": [strings] member of the tags object into t. */
static int
check_tag(const cJSON *m, struct filter_tag *t, char *err, size_t errlen)
{
	const cJSON	*v;
	int		 n, i = 0;

	if (strlen(m->string) != 2 || m->string[0] != '#' ||
	    !isalpha((unsigned char)m->string[1]))
		return errf(err, errlen, "tags: key \"%.*s\" is not #<letter> "
		    "(as in {\"#t\":[\"nostr\"]})", JOB_SPEC_QUOTE_MAX,
		    m->string);
	if (!cJSON_IsArray(m) || (n = cJSON_GetArraySize(m)) == 0 ||
	    n > FILTER_MAX_TAG_VALUES)
		return errf(err, errlen, "tags: \"%s\" must be an array of 1 to "
		    "%d strings", m->string, FILTER_MAX_TAG_VALUES);
	t->letter = m->string[1];
	if ((t->values = calloc((size_t)n, sizeof(char *))) == NULL)
		return errf(err, errlen, "tags: out of memory");
	cJSON_ArrayForEach(v, m) {
		if (!cJSON_IsString(v))
			return errf(err, errlen, "tags: \"%s\" entry %d is not "
			    "a string", m->string, i + 1);
		if ((t->values[i++] = strdup(v->valuestring)) == NULL)
			return errf(err, errlen, "tags: out of memory");
		t->nvalues = (size_t)i;
	}
	return 0;
}

static int
check_tags(const struct job_args *a, struct job_spec *s, char *err,
    size_t errlen)
{
	cJSON		*o;
	const cJSON	*m;
	size_t		 i;
	int		 rc = 0;

	if (!given(a->tags))
		return 0;
	if (strlen(a->tags) > JOBS_TAGS_MAX_BYTES)
		return errf(err, errlen, "tags: longer than %d bytes",
		    JOBS_TAGS_MAX_BYTES);
	if ((o = cJSON_Parse(a->tags)) == NULL || !cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return errf(err, errlen, "tags: not a JSON object of string "
		    "arrays keyed #<letter> (as in {\"#t\":[\"nostr\"]})");
	}
	cJSON_ArrayForEach(m, o) {
		if (s->shared.ntags >= FILTER_MAX_TAG_KEYS) {
			rc = errf(err, errlen, "tags: more than %d keys",
			    FILTER_MAX_TAG_KEYS);
			break;
		}
		if ((rc = check_tag(m, &s->shared.tags[s->shared.ntags++],
		    err, errlen)) == -1)
			break;
		for (i = 0; i + 1 < s->shared.ntags; i++)
			if (s->shared.tags[i].letter == m->string[1])
				break;
		if (i + 1 < s->shared.ntags) {
			rc = errf(err, errlen, "tags: \"%s\" given twice",
			    m->string);
			break;
		}
	}
	cJSON_Delete(o);
	return rc;
}

static int
check_batch_size(const struct job_args *a, struct job_spec *s, char *err,
    size_t errlen)
{
	s->batch_size = JOBS_BATCH_SIZE_DEFAULT;
	if (given(a->batch_size) && int_parse(a->batch_size, 1,
	    JOBS_BATCH_SIZE_MAX, &s->batch_size) == -1)
		return errf(err, errlen, "batch_size: '%.*s' is not 1 .. %d",
		    JOB_SPEC_QUOTE_MAX, a->batch_size, JOBS_BATCH_SIZE_MAX);
	if (s->batch_size > JOBS_BATCH_SIZE_WARN)
		warn(s, "batch_size: %lld is above %d; some relays refuse "
		    "filters with that many authors or ids",
		    (long long)s->batch_size, JOBS_BATCH_SIZE_WARN);
	return 0;
}

static int
check_relay_list(const char *text, struct job_spec *s, char *err,
    size_t errlen)
{
	char		 e[URL_MAX_BYTES + 1], norm[URL_MAX_BYTES + 1];
	const char	*p = text, *why;
	size_t		 n = job_list_count(text), full, i, k;

	if (n > JOBS_MAX_RELAYS)
		return errf(err, errlen, "relays: %zu entries, more than %d", n,
		    JOBS_MAX_RELAYS);
	if ((s->relays = calloc(n, sizeof(char *))) == NULL)
		return errf(err, errlen, "relays: out of memory");
	for (i = 1; list_next(&p, e, sizeof(e), &full) > 0; i++) {
		if (full >= sizeof(e))
			return errf(err, errlen, "relays: entry %zu is longer "
			    "than %d bytes", i, URL_MAX_BYTES);
		if (url_check_relay(e, &why) == -1 ||
		    store_relay_url_normalise(e, norm, sizeof(norm)) == -1)
			return errf(err, errlen, "relays: '%.*s' is not a relay "
			    "URL: %s", JOB_SPEC_QUOTE_MAX, e, why != NULL ?
			    why : "not ws:// or wss://");
		for (k = 0; k < s->nrelays; k++)
			if (strcmp(s->relays[k], norm) == 0)
				break;
		if (k < s->nrelays)
			continue;
		if ((s->relays[s->nrelays] = strdup(norm)) == NULL)
			return errf(err, errlen, "relays: out of memory");
		s->nrelays++;
	}
	return 0;
}

static int
check_relays(const struct job_args *a, struct job_spec *s, char *err,
    size_t errlen)
{
	int	m = listed(a->relays) ? STORE_JOB_RELAYS_CUSTOM :
		    STORE_JOB_RELAYS_BOOTSTRAP;

	if (given(a->relay_mode) &&
	    (m = store_job_relays_parse(a->relay_mode)) < 0)
		return errf(err, errlen, "relay_mode: '%.*s' is not one of "
		    "bootstrap, outbox, custom", JOB_SPEC_QUOTE_MAX,
		    a->relay_mode);
	s->relay_mode = (enum store_job_relays)m;
	if (listed(a->relays) && m != STORE_JOB_RELAYS_CUSTOM)
		return errf(err, errlen, "relays: a list is for relay_mode "
		    "custom (not %.*s)", JOB_SPEC_QUOTE_MAX, a->relay_mode);
	if (m != STORE_JOB_RELAYS_CUSTOM)
		return 0;
	if (!listed(a->relays))
		return errf(err, errlen, "relays: relay_mode custom needs at "
		    "least one ws:// or wss:// URL");
	return check_relay_list(a->relays, s, err, errlen);
}

static int
check_every(const struct job_args *a, struct job_spec *s, char *err,
    size_t errlen)
{
	const char	*why;

	if (!given(a->every))
		return 0;
	if (job_every_parse(a->every, &s->every_s, &why) == -1)
		return errf(err, errlen, "every: '%.*s' is %s",
		    JOB_SPEC_QUOTE_MAX, a->every, why);
	if (s->shared.has & FILTER_HAS_UNTIL)
		return errf(err, errlen, "every: a scheduled job takes no until "
		    "(each run ends where it starts, the next begins there)");
	return 0;
}

/*
 * A time window (no authors, no ids) is asked of every relay whole: said
 * when it has no dates at all (the "from date range" preset without
 * dates asks for every profile a relay holds), and when it may be huge
 * without a limit: kind 1 named, or no kinds, which means every kind.
 */
static void
warn_window(struct job_spec *s)
{
	bool	any = !(s->shared.has & FILTER_HAS_KINDS), kind1 = false;
	size_t	i;

	for (i = 0; i < s->shared.nkinds; i++)
		if (s->shared.kinds[i] == 1)
			kind1 = true;
	if (!(s->shared.has & (FILTER_HAS_SINCE | FILTER_HAS_UNTIL)))
		warn(s, "since, until: no dates: every relay is asked for "
		    "everything it holds of %s, from the newest to the oldest",
		    any ? "every kind" : "these kinds");
	if (s->shared.has & FILTER_HAS_LIMIT)
		return;
	if (kind1)
		warn(s, "limit: a time window over kind 1 without a limit may "
		    "fetch a great many events");
	else if (any)
		warn(s, "limit: no kinds means every kind: a time window over "
		    "every kind without a limit may fetch a great many events");
}

/* The batch mode and the warnings that depend on several fields. */
static void
settle(struct job_spec *s)
{

	if (s->source != STORE_JOB_SRC_NONE)
		s->mode = STORE_JOB_MODE_AUTHORS;
	else if (s->nids > 0)
		s->mode = STORE_JOB_MODE_IDS;
	else
		s->mode = STORE_JOB_MODE_NONE;
	if (s->relay_mode == STORE_JOB_RELAYS_OUTBOX &&
	    s->mode != STORE_JOB_MODE_AUTHORS)
		warn(s, "relay_mode: outbox uses the authors' relays; without "
		    "authors the bootstrap relays are asked");
	if (s->mode == STORE_JOB_MODE_NONE)
		warn_window(s);
}

int
job_spec_parse(const struct job_args *in, struct job_spec *s, char *err,
    size_t errlen)
{
	static int (*const checks[])(const struct job_args *,
	    struct job_spec *, char *, size_t) = {
		check_label, check_kinds, check_authors, check_ids,
		check_times, check_tags, check_batch_size, check_relays,
		check_every,
	};
	struct job_args	a;
	size_t		i;

	memset(s, 0, sizeof(*s));
	filter_init(&s->shared);
	if (job_args_preset(in, &a, err, errlen) == -1)
		return -1;
	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (checks[i](&a, s, err, errlen) == -1) {
			job_spec_free(s);
			return -1;
		}
	settle(s);
	return 0;
}

void
job_spec_free(struct job_spec *s)
{
	size_t	i;

	filter_free(&s->shared);
	free(s->authors);
	free(s->ids);
	for (i = 0; i < s->nrelays; i++)
		free(s->relays[i]);
	free(s->relays);
	memset(s, 0, sizeof(*s));
	filter_init(&s->shared);
}
