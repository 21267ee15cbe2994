/*
 * test_job_spec.c — a custom job's form fields checked (sync/job_spec.c):
 * the seed's five presets give the filter, author source and relay mode
 * the seed describes, and a field given beside a preset wins; every
 * invalid field is refused with a message naming it; lists are decoded
 * (hex, npub, note), sorted and without repeats, and a million-entry list
 * is refused by the limit before it is allocated; times and schedules
 * parse as documented; the batch mode follows from the lists.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nostr/nip19.h"
#include "sync/job_spec.h"

#define PK1	"3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d"
#define NPUB1	"npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6"
#define PK2	"0000000000000000000000000000000000000000000000000000000000000002"
#define PK3	"ff00000000000000000000000000000000000000000000000000000000000003"

static char	err[512];

static int
parse(const struct job_args *a, struct job_spec *s)
{
	err[0] = '\0';
	return job_spec_parse(a, s, err, sizeof(err));
}

/* The field at fault is named first. */
static void
refused(const struct job_args *a, const char *want)
{
	struct job_spec	s;

	assert_int_equal(parse(a, &s), -1);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("want \"%s...\", got \"%s\"", want, err);
	assert_null(s.authors);
	assert_null(s.shared.kinds);
}

static bool
has_kind(const struct job_spec *s, uint16_t k)
{
	size_t	i;

	for (i = 0; i < s->shared.nkinds; i++)
		if (s->shared.kinds[i] == k)
			return true;
	return false;
}

static void
test_presets(void **state)
{
	struct job_args	a = { 0 };
	struct job_spec	s;

	a.preset = "missing-profiles-kind1";
	assert_int_equal(parse(&a, &s), 0);
	assert_string_equal(s.label, "Backfill missing profiles (kind-1 "
	    "authors)");
	assert_string_equal(s.preset, "missing-profiles-kind1");
	assert_int_equal(s.shared.nkinds, 1);
	assert_true(has_kind(&s, 0));
	assert_int_equal(s.source, STORE_JOB_SRC_KIND1);
	assert_true(s.missing_kind0);
	assert_int_equal(s.relay_mode, STORE_JOB_RELAYS_BOOTSTRAP);
	assert_int_equal(s.mode, STORE_JOB_MODE_AUTHORS);
	assert_int_equal(s.batch_size, JOBS_BATCH_SIZE_DEFAULT);
	job_spec_free(&s);

	a.preset = "missing-profiles-all";
	assert_int_equal(parse(&a, &s), 0);
	assert_true(has_kind(&s, 0) && s.shared.nkinds == 1);
	assert_int_equal(s.source, STORE_JOB_SRC_ALL);
	assert_true(s.missing_kind0);
	assert_int_equal(s.relay_mode, STORE_JOB_RELAYS_BOOTSTRAP);
	job_spec_free(&s);

	a.preset = "profiles-date-range";
	a.since = "2024-01-01";
	a.until = "2024-02-01";
	assert_int_equal(parse(&a, &s), 0);
	assert_true(has_kind(&s, 0) && s.shared.nkinds == 1);
	assert_int_equal(s.source, STORE_JOB_SRC_NONE);
	assert_false(s.missing_kind0);
	assert_int_equal(s.mode, STORE_JOB_MODE_NONE);	/* time window */
	assert_int_equal(s.shared.since, 1704067200);
	assert_int_equal(s.shared.until, 1706745600);
	assert_int_equal(s.relay_mode, STORE_JOB_RELAYS_BOOTSTRAP);
	job_spec_free(&s);
	a.since = a.until = NULL;

	a.preset = "relay-lists";
	assert_int_equal(parse(&a, &s), 0);
	assert_true(has_kind(&s, 10002) && s.shared.nkinds == 1);
	assert_int_equal(s.source, STORE_JOB_SRC_ALL);
	assert_false(s.missing_kind0);
	assert_int_equal(s.mode, STORE_JOB_MODE_AUTHORS);
	assert_string_equal(s.label, "Backfill relay lists");
	job_spec_free(&s);

	a.preset = "contact-lists";
	assert_int_equal(parse(&a, &s), 0);
	assert_true(has_kind(&s, 3) && s.shared.nkinds == 1);
	assert_int_equal(s.source, STORE_JOB_SRC_FOLLOWED);
	assert_false(s.missing_kind0);
	assert_int_equal(s.relay_mode, STORE_JOB_RELAYS_BOOTSTRAP);
	job_spec_free(&s);

	/* every preset is listed and found */
	assert_non_null(job_preset_find("contact-lists"));
	assert_null(job_preset_find("contacts"));
	assert_string_equal(job_presets()[4].name, "contact-lists");
	assert_null(job_presets()[5].name);
}

/* A field given beside a preset wins over what the preset fills. */
static void
test_preset_overrides(void **state)
{
	struct job_args	a = { 0 };
	struct job_spec	s;

	a.preset = "relay-lists";
	a.label = "mine";
	a.kinds = "10002, 3";
	a.batch_size = "50";
	assert_int_equal(parse(&a, &s), 0);
	assert_string_equal(s.label, "mine");
	assert_int_equal(s.shared.nkinds, 2);
	assert_int_equal(s.shared.kinds[0], 3);		/* sorted */
	assert_int_equal(s.shared.kinds[1], 10002);
	assert_int_equal(s.batch_size, 50);
	job_spec_free(&s);

	/* a typed author list makes the source manual */
	a.kinds = NULL;
	a.authors = PK1;
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.source, STORE_JOB_SRC_MANUAL);
	assert_int_equal(s.nauthors, 1);
	job_spec_free(&s);
	/* ... unless the source is named: then they disagree */
	a.authors_source = "followed";
	refused(&a, "authors: a typed list needs authors_source manual");
	a.authors_source = NULL;
	a.authors = NULL;

	/* typed relays make the relay mode custom */
	a.relays = "wss://r.example";
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.relay_mode, STORE_JOB_RELAYS_CUSTOM);
	assert_int_equal(s.nrelays, 1);
	assert_string_equal(s.relays[0], "wss://r.example");
	job_spec_free(&s);

	/* typed ids keep the preset's authors out */
	a.relays = NULL;
	a.preset = "missing-profiles-kind1";
	a.ids = PK2;
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.source, STORE_JOB_SRC_NONE);
	assert_false(s.missing_kind0);
	assert_int_equal(s.mode, STORE_JOB_MODE_IDS);
	job_spec_free(&s);

	a.ids = NULL;
	a.preset = "everything";
	refused(&a, "preset: unknown 'everything' (one of: "
	    "missing-profiles-kind1, missing-profiles-all, "
	    "profiles-date-range, relay-lists, contact-lists)");
}

static void
test_lists(void **state)
{
	struct job_args	a = { 0 };
	struct job_spec	s;
	uint8_t		pk[32];

	a.authors = PK3 ",\n" NPUB1 " " PK2 "\t" PK1 ",,";
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.nauthors, 3);	/* NPUB1 is PK1 */
	assert_int_equal(s.authors[0][31], 2);	/* sorted */
	assert_int_equal(s.authors[1][0], 0x3b);
	assert_int_equal(s.authors[2][0], 0xff);
	assert_int_equal(nip19_pubkey_parse(PK1, pk), 0);
	assert_memory_equal(s.authors[1], pk, 32);
	assert_int_equal(s.mode, STORE_JOB_MODE_AUTHORS);
	job_spec_free(&s);

	a.authors = NULL;
	a.ids = PK2 " " PK2;
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.nids, 1);
	assert_int_equal(s.mode, STORE_JOB_MODE_IDS);
	job_spec_free(&s);

	a.ids = NULL;
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.mode, STORE_JOB_MODE_NONE);
	job_spec_free(&s);
	/* separators alone are no list (found by fuzz_job_spec) */
	a.authors = " \t,\n";
	a.ids = ",";
	a.relays = "  ";
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.source, STORE_JOB_SRC_NONE);
	assert_int_equal(s.mode, STORE_JOB_MODE_NONE);
	assert_int_equal(s.relay_mode, STORE_JOB_RELAYS_BOOTSTRAP);
	job_spec_free(&s);
	a.ids = a.relays = NULL;
	a.authors_source = "manual";
	refused(&a, "authors: authors_source manual needs a list");
	a.authors_source = NULL;
	a.authors = NULL;
	a.relay_mode = "custom";
	a.relays = " , ";
	refused(&a, "relays: relay_mode custom needs at least one");
	a.relay_mode = a.relays = NULL;
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.source, STORE_JOB_SRC_NONE);
	job_spec_free(&s);
	assert_int_equal(job_list_count(" a,b\n\nc ,"), 3);
	assert_int_equal(job_list_count(""), 0);
}

/* A million authors: refused by the count, before any allocation. */
static void
test_huge_list(void **state)
{
	struct job_args	 a = { 0 };
	size_t		 n = 1000000, i;
	char		*text = malloc(n * 65 + 1);

	assert_non_null(text);
	for (i = 0; i < n; i++) {
		memcpy(text + i * 65, PK1, 64);
		text[i * 65 + 64] = ',';
	}
	text[n * 65] = '\0';
	a.authors = text;
	refused(&a, "authors: 1000000 entries, more than the limit of 100000");
	a.authors = NULL;
	a.ids = text;
	refused(&a, "ids: 1000000 entries, more than the limit of 100000");
	free(text);
}

static void
test_refusals(void **state)
{
	struct job_args	a;
	char		long_label[JOBS_LABEL_MAX + 2];

#define R(field, value, want) do {					\
	memset(&a, 0, sizeof(a));					\
	a.field = value;						\
	refused(&a, want);						\
} while (0)
	R(kinds, "0,70000", "kinds: entry 2 '70000' is not a kind (0..65535)");
	R(kinds, "1,x", "kinds: entry 2 'x' is not a kind");
	R(kinds, "-1", "kinds: entry 1 '-1' is not a kind");
	R(authors, PK1 ",zz", "authors: entry 2 'zz' is not an npub or 64 hex");
	R(authors, "npub1xyz", "authors: entry 1 'npub1xyz' is not an npub");
	R(ids, "abc", "ids: entry 1 'abc' is not a note or 64 hex digits");
	R(since, "yesterday", "since: 'yesterday' is not Unix seconds or an "
	    "ISO-8601 date");
	R(until, "2024-02-30", "until: '2024-02-30' is not a valid date");
	R(until, "2024-01-01T10:00+02:00", "until: '2024-01-01T10:00+02:00' "
	    "is not Unix seconds or an ISO-8601 date in UTC");
	R(limit, "-5", "limit: '-5' is not a count");
	R(limit, "many", "limit: 'many' is not a count");
	R(tags, "[\"t\"]", "tags: not a JSON object");
	R(tags, "{\"t\":[\"nostr\"]}", "tags: key \"t\" is not #<letter>");
	R(tags, "{\"#tt\":[\"nostr\"]}", "tags: key \"#tt\" is not #<letter>");
	R(tags, "{\"#t\":\"nostr\"}", "tags: \"#t\" must be an array of 1 to");
	R(tags, "{\"#t\":[]}", "tags: \"#t\" must be an array of 1 to");
	R(tags, "{\"#t\":[\"a\",2]}", "tags: \"#t\" entry 2 is not a string");
	R(tags, "{\"#t\":[\"a\"],\"#t\":[\"b\"]}", "tags: \"#t\" given twice");
	R(tags, "{\"#t\":", "tags: not a JSON object");
	R(batch_size, "0", "batch_size: '0' is not 1 .. 1000");
	R(batch_size, "1001", "batch_size: '1001' is not 1 .. 1000");
	R(batch_size, "12x", "batch_size: '12x' is not 1 .. 1000");
	R(relay_mode, "all", "relay_mode: 'all' is not one of bootstrap, "
	    "outbox, custom");
	R(relay_mode, "custom", "relays: relay_mode custom needs at least one");
	R(relays, "http://r.example", "relays: 'http://r.example' is not a "
	    "relay URL: not ws:// or wss://");
	R(relays, "wss://a.example,ftp://b", "relays: 'ftp://b' is not a relay");
	R(authors_source, "everyone", "authors_source: 'everyone' is not one "
	    "of manual, all, kind1, followed, none");
	R(authors_source, "manual", "authors: authors_source manual needs a "
	    "list");
	R(only_missing_kind0, "true", "only_missing_kind0: needs an "
	    "authors_source");
	R(every, "5x", "every: '5x' is not a count and a unit");
	R(every, "0h", "every: '0h' is not a count and a unit");
	R(every, "400d", "every: '400d' is out of range");
	R(preset, "nope", "preset: unknown 'nope'");
	memset(long_label, 'x', sizeof(long_label) - 1);
	long_label[sizeof(long_label) - 1] = '\0';
	R(label, long_label, "label: longer than 128 bytes");
	R(label, "a\tb", "label: holds a control character");
#undef R
	memset(&a, 0, sizeof(a));
	a.since = "1700000100";
	a.until = "1700000000";
	refused(&a, "since: 2023-11-14 22:15 UTC is after until 2023-11-14 "
	    "22:13:20 UTC: choose an earlier since or a later until");
	/* What the page's date pickers send reads as dates again. */
	memset(&a, 0, sizeof(a));
	a.since = "2021-06-01T00:00";
	a.until = "2020-01-01T00:00";
	refused(&a, "since: 2021-06-01 is after until 2020-01-01: ");
	memset(&a, 0, sizeof(a));
	a.authors = PK1;
	a.ids = PK2;
	refused(&a, "ids: give authors or ids, not both");
	memset(&a, 0, sizeof(a));
	a.authors_source = "all";
	a.only_missing_kind0 = "maybe";
	refused(&a, "only_missing_kind0: 'maybe' is not true or false");
	memset(&a, 0, sizeof(a));
	a.relay_mode = "bootstrap";
	a.relays = "wss://r.example";
	refused(&a, "relays: a list is for relay_mode custom (not bootstrap)");
	memset(&a, 0, sizeof(a));
	a.every = "1h";
	a.until = "1700000000";
	refused(&a, "every: a scheduled job takes no until");
}

static void
test_fields(void **state)
{
	struct job_args	a = { 0 };
	struct job_spec	s;

	a.kinds = "1";
	a.tags = "{\"#t\":[\"nostr\",\"zap\"],\"#p\":[\"" PK1 "\"]}";
	a.limit = "25";
	a.since = "2024-01-31T12:00";
	a.batch_size = "600";
	a.relay_mode = "outbox";
	a.every = "6h";
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.shared.ntags, 2);
	assert_int_equal(s.shared.tags[0].letter, 't');
	assert_int_equal(s.shared.tags[0].nvalues, 2);
	assert_string_equal(s.shared.tags[0].values[1], "zap");
	assert_int_equal(s.shared.limit, 25);
	assert_true(s.shared.has & FILTER_HAS_LIMIT);
	assert_int_equal(s.shared.since, 1706659200 + 12 * 3600);
	assert_int_equal(s.batch_size, 600);
	assert_int_equal(s.every_s, 6 * 3600);
	assert_int_equal(s.relay_mode, STORE_JOB_RELAYS_OUTBOX);
	/* warned: batch size over 500, outbox without authors */
	assert_int_equal(s.nwarnings, 2);
	assert_true(strncmp(s.warnings[0], "batch_size: 600 is above 500",
	    28) == 0);
	assert_true(strncmp(s.warnings[1], "relay_mode: outbox", 18) == 0);
	job_spec_free(&s);

	memset(&a, 0, sizeof(a));
	a.limit = "0";			/* 0 = none */
	a.kinds = "1";
	a.only_missing_kind0 = "false";
	assert_int_equal(parse(&a, &s), 0);
	assert_false(s.shared.has & FILTER_HAS_LIMIT);
	assert_int_equal(s.nwarnings, 2);	/* no dates; kind 1, no limit */
	assert_true(strncmp(s.warnings[0], "since, until: no dates", 22) == 0);
	assert_string_equal(s.warnings[1], "limit: a time window over kind 1 "
	    "without a limit may fetch a great many events");
	assert_string_equal(s.label, "custom job");
	job_spec_free(&s);
}

/*
 * A time window's warnings: no kinds is every kind, never "kind 1"; the
 * "from date range" preset without dates says it has none; dates and a
 * kind that is not 1 warn of nothing.
 */
static void
test_window_warnings(void **state)
{
	struct job_args	a = { 0 };
	struct job_spec	s;

	a.since = "2024-01-01";
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.nwarnings, 1);
	assert_string_equal(s.warnings[0], "limit: no kinds means every "
	    "kind: a time window over every kind without a limit may fetch a "
	    "great many events");
	assert_null(strstr(s.warnings[0], "kind 1"));
	job_spec_free(&s);

	memset(&a, 0, sizeof(a));
	a.preset = "profiles-date-range";
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.mode, STORE_JOB_MODE_NONE);
	assert_int_equal(s.nwarnings, 1);
	assert_string_equal(s.warnings[0], "since, until: no dates: every "
	    "relay is asked for everything it holds of these kinds, from the "
	    "newest to the oldest");
	job_spec_free(&s);

	a.until = "2024-06-01";
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.nwarnings, 0);
	job_spec_free(&s);

	memset(&a, 0, sizeof(a));
	a.kinds = "";
	a.limit = "50";
	assert_int_equal(parse(&a, &s), 0);
	assert_int_equal(s.nwarnings, 1);
	assert_true(strstr(s.warnings[0], "of every kind") != NULL);
	job_spec_free(&s);
}

static void
test_times(void **state)
{
	const char	*why;
	int64_t		 t;
	char		 out[16];

	assert_int_equal(job_time_parse("1700000000", &t, &why), 0);
	assert_int_equal(t, 1700000000);
	assert_int_equal(job_time_parse("2024-01-31", &t, &why), 0);
	assert_int_equal(t, 1706659200);
	assert_int_equal(job_time_parse("2024-01-31T12:30", &t, &why), 0);
	assert_int_equal(t, 1706659200 + 12 * 3600 + 30 * 60);
	assert_int_equal(job_time_parse("2024-01-31 12:30:05Z", &t, &why), 0);
	assert_int_equal(t, 1706659200 + 12 * 3600 + 30 * 60 + 5);
	assert_int_equal(job_time_parse("2024-01-31T24:00", &t, &why), -1);
	assert_int_equal(job_time_parse("1969-12-31", &t, &why), -1);
	assert_int_equal(job_time_parse("2023-02-29", &t, &why), -1);
	assert_int_equal(job_time_parse("2024-02-29", &t, &why), 0);
	assert_int_equal(job_time_parse("", &t, &why), -1);

	assert_int_equal(job_every_parse("2s", &t, &why), 0);
	assert_int_equal(t, 2);
	assert_int_equal(job_every_parse("30m", &t, &why), 0);
	assert_int_equal(t, 1800);
	assert_int_equal(job_every_parse("1d", &t, &why), 0);
	assert_int_equal(t, 86400);
	assert_int_equal(job_every_parse("h", &t, &why), -1);
	assert_int_equal(job_every_parse("1.5h", &t, &why), -1);
	assert_int_equal(job_every_parse("-1h", &t, &why), -1);
	job_every_format(6 * 3600, out, sizeof(out));
	assert_string_equal(out, "6h");
	job_every_format(90, out, sizeof(out));
	assert_string_equal(out, "90s");
	job_every_format(2 * 86400, out, sizeof(out));
	assert_string_equal(out, "2d");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_preset_overrides),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_huge_list),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_window_warnings),
		cmocka_unit_test(test_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
