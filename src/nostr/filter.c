/*
 * filter.c — owns NIP-01 filters: parsing with a reason for every refusal,
 * compact serialization, and matching against parsed events. It must never
 * accept a list longer than its FILTER_MAX_* bound, never keep a pointer
 * into the caller's cJSON tree (a filter outlives the message it came in),
 * and never treat an id or author prefix as a match.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "core/json.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/filter.h"

/* Largest magnitude of an int64 as a double: 2^63. */

void
filter_init(struct filter *f)
{
	memset(f, 0, sizeof(*f));
}

void
filter_free(struct filter *f)
{
	size_t	i, j;

	free(f->ids);
	free(f->authors);
	free(f->kinds);
	for (i = 0; i < f->ntags; i++) {
		for (j = 0; j < f->tags[i].nvalues; j++)
			free(f->tags[i].values[j]);
		free(f->tags[i].values);
	}
	filter_init(f);
}

/* What malloc(n) takes from the heap, near enough (glibc, 64-bit). */
static size_t
heap_bytes(size_t n)
{
	if (n == 0)
		return 0;
	return ((n + 8 + 15) & ~(size_t)15) < 32 ? 32 :
	    (n + 8 + 15) & ~(size_t)15;
}

size_t
filter_mem(const struct filter *f)
{
	size_t	n = 0, i, j;

	n += heap_bytes(f->nids * 32) + heap_bytes(f->nauthors * 32) +
	    heap_bytes(f->nkinds * sizeof(*f->kinds));
	for (i = 0; i < f->ntags; i++) {
		n += heap_bytes(f->tags[i].nvalues * sizeof(char *));
		for (j = 0; j < f->tags[i].nvalues; j++)
			n += heap_bytes(strlen(f->tags[i].values[j]) + 1);
	}
	return n;
}

/* Number of elements of array a, or -1 if a is not an array or over max. */
static long
filter_array_len(const cJSON *a, size_t max)
{
	const cJSON	*c;
	size_t		 n = 0;

	if (!cJSON_IsArray(a))
		return -1;
	for (c = a->child; c != NULL; c = c->next)
		if (++n > max)
			return -1;
	return (long)n;
}

/* Check a list's shape; on error write "<key>: ..." into err. */
static long
filter_list(const cJSON *v, const char *key, size_t max, char *err,
    size_t errlen)
{
	long	n;

	if (!cJSON_IsArray(v)) {
		snprintf(err, errlen, "%s: not an array", key);
		return -1;
	}
	if ((n = filter_array_len(v, max)) < 0) {
		snprintf(err, errlen, "%s: more than %zu entries", key, max);
		return -1;
	}
	return n;
}

/* Parse a list of 64-hex strings into a new array *out. */
static int
filter_hex_list(const cJSON *v, const char *key, size_t max,
    uint8_t (**out)[32], size_t *nout, char *err, size_t errlen)
{
	const cJSON	*c;
	long		 n;
	size_t		 i = 0;

	if ((n = filter_list(v, key, max, err, errlen)) < 0)
		return -1;
	if ((*out = calloc(n > 0 ? (size_t)n : 1, 32)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", key);
		return -1;
	}
	for (c = v->child; c != NULL; c = c->next, i++) {
		if (!cJSON_IsString(c) || c->valuestring == NULL ||
		    hex_decode(c->valuestring, strlen(c->valuestring),
		    (*out)[i], 32) == -1) {
			snprintf(err, errlen, "%s: entry %zu is not 64 "
			    "lowercase hex digits", key, i);
			return -1;
		}
	}
	*nout = i;
	return 0;
}

static int
filter_k_ids(struct filter *f, const cJSON *v, char *err, size_t errlen)
{
	f->has |= FILTER_HAS_IDS;
	return filter_hex_list(v, "ids", FILTER_MAX_IDS, &f->ids, &f->nids,
	    err, errlen);
}

static int
filter_k_authors(struct filter *f, const cJSON *v, char *err, size_t errlen)
{
	f->has |= FILTER_HAS_AUTHORS;
	return filter_hex_list(v, "authors", FILTER_MAX_AUTHORS, &f->authors,
	    &f->nauthors, err, errlen);
}

static int
filter_k_kinds(struct filter *f, const cJSON *v, char *err, size_t errlen)
{
	const cJSON	*c;
	int64_t		 k;
	long		 n;

	f->has |= FILTER_HAS_KINDS;
	if ((n = filter_list(v, "kinds", FILTER_MAX_KINDS, err, errlen)) < 0)
		return -1;
	if ((f->kinds = calloc(n > 0 ? (size_t)n : 1,
	    sizeof(*f->kinds))) == NULL) {
		snprintf(err, errlen, "kinds: out of memory");
		return -1;
	}
	for (c = v->child; c != NULL; c = c->next) {
		if (json_int(c, 0, 65535, &k) == -1) {
			snprintf(err, errlen, "kinds: entry %zu is not an "
			    "integer from 0 to 65535", f->nkinds);
			return -1;
		}
		f->kinds[f->nkinds++] = (uint16_t)k;
	}
	return 0;
}

static int
filter_time(const cJSON *v, const char *key, int64_t *out, char *err,
    size_t errlen)
{
	if (json_int(v, INT64_MIN, INT64_MAX,
	    out) == -1) {
		snprintf(err, errlen, "%s: not an integer timestamp", key);
		return -1;
	}
	return 0;
}

static int
filter_k_since(struct filter *f, const cJSON *v, char *err, size_t errlen)
{
	f->has |= FILTER_HAS_SINCE;
	return filter_time(v, "since", &f->since, err, errlen);
}

static int
filter_k_until(struct filter *f, const cJSON *v, char *err, size_t errlen)
{
	f->has |= FILTER_HAS_UNTIL;
	return filter_time(v, "until", &f->until, err, errlen);
}

static int
filter_k_limit(struct filter *f, const cJSON *v, char *err, size_t errlen)
{
	int64_t	l;

	f->has |= FILTER_HAS_LIMIT;
	if (json_int(v, 0, INT64_MAX, &l) == -1) {
		snprintf(err, errlen, "limit: not a non-negative integer");
		return -1;
	}
	f->limit = (uint64_t)l;
	return 0;
}

/* "#x": copy the string values into a new tag condition. */
static int
filter_k_tag(struct filter *f, const char *key, const cJSON *v, char *err,
    size_t errlen)
{
	struct filter_tag	*t;
	const cJSON		*c;
	long			 n;

	if (f->ntags == FILTER_MAX_TAG_KEYS) {
		snprintf(err, errlen, "more than %d #x keys",
		    FILTER_MAX_TAG_KEYS);
		return -1;
	}
	if ((n = filter_list(v, key, FILTER_MAX_TAG_VALUES, err,
	    errlen)) < 0)
		return -1;
	t = &f->tags[f->ntags++];
	t->letter = key[1];
	if ((t->values = calloc(n > 0 ? (size_t)n : 1,
	    sizeof(*t->values))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", key);
		return -1;
	}
	for (c = v->child; c != NULL; c = c->next) {
		if (!cJSON_IsString(c) || c->valuestring == NULL) {
			snprintf(err, errlen, "%s: entry %zu is not a string",
			    key, t->nvalues);
			return -1;
		}
		if ((t->values[t->nvalues] = strdup(c->valuestring)) == NULL) {
			snprintf(err, errlen, "%s: out of memory", key);
			return -1;
		}
		t->nvalues++;
	}
	return 0;
}

typedef int (*filter_key_fn)(struct filter *, const cJSON *, char *, size_t);

static const struct filter_key {
	const char	*name;
	filter_key_fn	 fn;
	unsigned	 bit;
} filter_keys[] = {
	{ "ids", filter_k_ids, FILTER_HAS_IDS },
	{ "authors", filter_k_authors, FILTER_HAS_AUTHORS },
	{ "kinds", filter_k_kinds, FILTER_HAS_KINDS },
	{ "since", filter_k_since, FILTER_HAS_SINCE },
	{ "until", filter_k_until, FILTER_HAS_UNTIL },
	{ "limit", filter_k_limit, FILTER_HAS_LIMIT },
};
#define FILTER_NKEYS	(sizeof(filter_keys) / sizeof(filter_keys[0]))

/* 1 if key is "#" and one ASCII letter. */
static int
filter_is_tag_key(const char *key)
{
	return key[0] == '#' && key[1] != '\0' && key[2] == '\0' &&
	    ((key[1] >= 'a' && key[1] <= 'z') ||
	    (key[1] >= 'A' && key[1] <= 'Z'));
}

/* 1 if a "#x" condition for letter is already in f. */
static int
filter_has_tag(const struct filter *f, char letter)
{
	size_t	i;

	for (i = 0; i < f->ntags; i++)
		if (f->tags[i].letter == letter)
			return 1;
	return 0;
}

/* Dispatch one member of the filter object. */
static int
filter_member(struct filter *f, const cJSON *m, char *err, size_t errlen)
{
	const char	*key = m->string;
	size_t		 i;

	if (filter_is_tag_key(key)) {
		if (filter_has_tag(f, key[1])) {
			snprintf(err, errlen, "duplicate key \"%s\"", key);
			return -1;
		}
		return filter_k_tag(f, key, m, err, errlen);
	}
	for (i = 0; i < FILTER_NKEYS; i++) {
		if (strcmp(key, filter_keys[i].name) != 0)
			continue;
		if (f->has & filter_keys[i].bit) {
			snprintf(err, errlen, "duplicate key \"%s\"", key);
			return -1;
		}
		return filter_keys[i].fn(f, m, err, errlen);
	}
	snprintf(err, errlen, "unknown key \"%.64s\"", key);
	return -1;
}

int
filter_parse(struct filter *f, const cJSON *obj, char *err, size_t errlen)
{
	const cJSON	*m;

	filter_init(f);
	if (!cJSON_IsObject(obj)) {
		snprintf(err, errlen, "filter is not a JSON object");
		return -1;
	}
	for (m = obj->child; m != NULL; m = m->next) {
		if (m->string == NULL ||
		    filter_member(f, m, err, errlen) == -1) {
			filter_free(f);
			return -1;
		}
	}
	return 0;
}

int
filter_parse_text(struct filter *f, const char *text, size_t len, char *err,
    size_t errlen)
{
	const char	*end = NULL;
	cJSON		*obj;
	int		 rc;

	filter_init(f);
	if (len > FILTER_MAX_TEXT_BYTES) {
		snprintf(err, errlen, "filter longer than %d bytes",
		    FILTER_MAX_TEXT_BYTES);
		return -1;
	}
	obj = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (obj == NULL) {
		snprintf(err, errlen, "filter is not valid JSON");
		return -1;
	}
	while (end < text + len && (*end == ' ' || *end == '\t' ||
	    *end == '\n' || *end == '\r'))
		end++;
	if (end != text + len) {
		snprintf(err, errlen, "filter has trailing garbage");
		cJSON_Delete(obj);
		return -1;
	}
	rc = filter_parse(f, obj, err, errlen);
	cJSON_Delete(obj);
	return rc;
}

/* Append "key":[hex,...]. */
static int
filter_put_hex_list(struct buf *out, const char *key, uint8_t (*l)[32],
    size_t n)
{
	char	hex[65];
	size_t	i;

	if (buf_printf(out, "\"%s\":[", key) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		(void)hex_encode(l[i], 32, hex, sizeof(hex));
		if (buf_printf(out, "%s\"%s\"", i ? "," : "", hex) == -1)
			return -1;
	}
	return buf_puts(out, "],");
}

static int
filter_put_tag(struct buf *out, const struct filter_tag *t)
{
	size_t	i;

	if (buf_printf(out, "\"#%c\":[", t->letter) == -1)
		return -1;
	for (i = 0; i < t->nvalues; i++) {
		if ((i && buf_putc(out, ',') == -1) ||
		    event_json_string(out, t->values[i],
		    strlen(t->values[i])) == -1)
			return -1;
	}
	return buf_puts(out, "],");
}

/* The lists, then the scalars; each member ends with a comma. */
static int
filter_put_members(const struct filter *f, struct buf *out)
{
	size_t	i;

	if ((f->has & FILTER_HAS_IDS) &&
	    filter_put_hex_list(out, "ids", f->ids, f->nids) == -1)
		return -1;
	if ((f->has & FILTER_HAS_AUTHORS) && filter_put_hex_list(out,
	    "authors", f->authors, f->nauthors) == -1)
		return -1;
	if (f->has & FILTER_HAS_KINDS) {
		if (buf_puts(out, "\"kinds\":[") == -1)
			return -1;
		for (i = 0; i < f->nkinds; i++)
			if (buf_printf(out, "%s%u", i ? "," : "",
			    (unsigned)f->kinds[i]) == -1)
				return -1;
		if (buf_puts(out, "],") == -1)
			return -1;
	}
	for (i = 0; i < f->ntags; i++)
		if (filter_put_tag(out, &f->tags[i]) == -1)
			return -1;
	if (((f->has & FILTER_HAS_SINCE) && buf_printf(out, "\"since\":%lld,",
	    (long long)f->since) == -1) ||
	    ((f->has & FILTER_HAS_UNTIL) && buf_printf(out, "\"until\":%lld,",
	    (long long)f->until) == -1) ||
	    ((f->has & FILTER_HAS_LIMIT) && buf_printf(out, "\"limit\":%llu,",
	    (unsigned long long)f->limit) == -1))
		return -1;
	return 0;
}

int
filter_to_json(const struct filter *f, struct buf *out)
{
	size_t	start = out->len;

	if (buf_putc(out, '{') == -1 || filter_put_members(f, out) == -1)
		return -1;
	/* Replace the last member's comma with the closing brace. */
	if (out->len > start + 1 && out->data[out->len - 1] == ',') {
		out->data[out->len - 1] = '}';
		return 0;
	}
	return buf_putc(out, '}');
}

static int
cmp32(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

static int
cmp_u16(const void *a, const void *b)
{
	uint16_t	x = *(const uint16_t *)a, y = *(const uint16_t *)b;

	return x < y ? -1 : x > y;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort l[0..*n) of size sz and drop repeats (freeing repeated strings). */
static void
sort_unique(void *l, size_t *n, size_t sz, int (*cmp)(const void *,
    const void *), int strings)
{
	uint8_t	*b = l;
	size_t	 i, out = 0;

	if (*n < 2)
		return;
	qsort(l, *n, sz, cmp);
	for (i = 1; i < *n; i++) {
		if (cmp(b + out * sz, b + i * sz) == 0) {
			if (strings)
				free(*(char **)(void *)(b + i * sz));
			continue;
		}
		if (++out != i)
			memcpy(b + out * sz, b + i * sz, sz);
	}
	*n = out + 1;
}

void
filter_sort(struct filter *f)
{
	size_t	i;

	sort_unique(f->ids, &f->nids, 32, cmp32, 0);
	sort_unique(f->authors, &f->nauthors, 32, cmp32, 0);
	sort_unique(f->kinds, &f->nkinds, sizeof(*f->kinds), cmp_u16, 0);
	for (i = 0; i < f->ntags; i++)
		sort_unique(f->tags[i].values, &f->tags[i].nvalues,
		    sizeof(char *), cmp_str, 1);
	f->sorted = 1;
}

/* 1 if the 32 bytes b are in l[0..n). */
static int
filter_has32(const struct filter *f, uint8_t (*l)[32], size_t n,
    const uint8_t *b)
{
	size_t	i;

	if (f->sorted)
		return n > 0 && bsearch(b, l, n, 32, cmp32) != NULL;
	for (i = 0; i < n; i++)
		if (memcmp(l[i], b, 32) == 0)
			return 1;
	return 0;
}

/* 1 if v is among t's values. */
static int
filter_tag_has(const struct filter *f, const struct filter_tag *t,
    const char *v)
{
	size_t	i;

	if (f->sorted)
		return t->nvalues > 0 && bsearch(&v, t->values, t->nvalues,
		    sizeof(char *), cmp_str) != NULL;
	for (i = 0; i < t->nvalues; i++)
		if (strcmp(v, t->values[i]) == 0)
			return 1;
	return 0;
}

/* 1 if ev has a tag [letter, v, ...] with v among t's values. */
static int
filter_tag_match(const struct filter *f, const struct filter_tag *t,
    const struct event *ev)
{
	const cJSON	*tag, *k, *v;

	for (tag = ev->tags != NULL ? ev->tags->child : NULL; tag != NULL;
	    tag = tag->next) {
		k = tag->child;
		if (k == NULL || (v = k->next) == NULL ||
		    k->valuestring[0] != t->letter ||
		    k->valuestring[1] != '\0')
			continue;
		if (filter_tag_has(f, t, v->valuestring))
			return 1;
	}
	return 0;
}

int
filter_match_id(const struct filter *f, const uint8_t id[32])
{
	return !(f->has & FILTER_HAS_IDS) || filter_has32(f, f->ids, f->nids,
	    id);
}

int
filter_match_author(const struct filter *f, const uint8_t pubkey[32])
{
	return !(f->has & FILTER_HAS_AUTHORS) || filter_has32(f, f->authors,
	    f->nauthors, pubkey);
}

int
filter_match_kind(const struct filter *f, uint32_t kind)
{
	uint16_t	k = (uint16_t)kind;
	size_t		i;

	if (!(f->has & FILTER_HAS_KINDS))
		return 1;
	if (kind > 65535)
		return 0;
	if (f->sorted)
		return f->nkinds > 0 && bsearch(&k, f->kinds, f->nkinds,
		    sizeof(k), cmp_u16) != NULL;
	for (i = 0; i < f->nkinds; i++)
		if (f->kinds[i] == k)
			return 1;
	return 0;
}

int
filter_match_time(const struct filter *f, int64_t created_at)
{
	if ((f->has & FILTER_HAS_SINCE) && created_at < f->since)
		return 0;
	if ((f->has & FILTER_HAS_UNTIL) && created_at > f->until)
		return 0;
	return 1;
}

int
filter_match_tags(const struct filter *f, const struct event *ev)
{
	size_t	i;

	for (i = 0; i < f->ntags; i++)
		if (!filter_tag_match(f, &f->tags[i], ev))
			return 0;
	return 1;
}

int
filter_match(const struct filter *f, const struct event *ev)
{
	return filter_match_time(f, ev->created_at) &&
	    filter_match_kind(f, ev->kind) && filter_match_id(f, ev->id) &&
	    filter_match_author(f, ev->pubkey) && filter_match_tags(f, ev);
}
