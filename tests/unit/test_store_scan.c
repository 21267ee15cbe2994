/*
 * test_store_scan.c — the query engine (store/scan.c) against a reference:
 * a generated store of 3,000 events (12 authors, 8 kinds, 400 seconds so
 * that many events share a second, "e", "p", "t", "d" and "P" tags, some
 * tags the index must skip), 200 random REQs of one to three filters
 * (ids, authors, kinds, "#x", since/until/limit in every combination),
 * each answered by the scan in steps of random size and by a brute-force
 * filter_match over every event: the same ids in the same order (created
 * at descending, id ascending). The same again while the tag index is
 * still being filled (conditions read from the JSON), then the fill
 * itself, the snapshot (events stored during a scan are left to
 * store_scan_after) and retention deleting index rows with their events.
 */
#define _GNU_SOURCE	/* nftw, memmem */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "store/events.h"
#include "store/rules.h"
#include "store/scan.h"
#include "store/store.h"
#include "store/store_sql.h"
#include "store/tags.h"

#include "store_fixture.h"

#define NEVENTS		3000
#define NAUTHORS	12
#define T0		1000
#define TSPAN		400

static const uint32_t kinds[] = { 0, 1, 3, 6, 7, 1111, 30023, 10002 };
static const char *const words[] = { "nostr", "cache", "box", "pi" };

static uint64_t	rng = 0x9e3779b97f4a7c15ULL;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct world {
	uint8_t		authors[NAUTHORS][32];
	struct event	ev[NEVENTS + 64];	/* parsed, as stored */
	size_t		n;
};

static struct world	W;
static int64_t		put_kind = -1;	/* put_event's kind when >= 0 */

static void
hex32(const uint8_t *b, char out[65])
{
	hex_encode(b, 32, out, 65);
}

/* The first "d" value of ev ("" without one): an addressable kind's key. */
static const char *
d_of(const struct event *ev)
{
	const cJSON	*t;

	cJSON_ArrayForEach(t, ev->tags)
		if (cJSON_IsString(t->child) &&
		    strcmp(t->child->valuestring, "d") == 0)
			return cJSON_IsString(t->child->next) ?
			    t->child->next->valuestring : "";
	return "";
}

/* Make, store and remember one event (tags reference earlier ones). */
static void
put_event(struct fixture *fx, int64_t at)
{
	char			 id[65], pk[65], other[65], json[2048], tags[1024];
	uint8_t			 idb[32];
	size_t			 i, a = rnd(NAUTHORS), nt = rnd(5), len = 0;
	uint32_t		 kind = kinds[rnd(8)];
	struct store_event_row	 row = { 0 };
	struct event		*ev = &W.ev[W.n];
	int			 rc;

	for (i = 0; i < 32; i++)
		idb[i] = (uint8_t)rnd(256);
	if (put_kind >= 0)
		kind = (uint32_t)put_kind;
	hex32(idb, id);
	hex32(W.authors[a], pk);
	len += (size_t)snprintf(tags + len, sizeof(tags) - len, "[");
	for (i = 0; i < nt; i++) {
		const char *sep = i ? "," : "";

		switch (rnd(7)) {
		case 0:
			if (W.n == 0)
				break;
			hex32(W.ev[rnd((uint32_t)W.n)].id, other);
			len += (size_t)snprintf(tags + len, sizeof(tags) - len,
			    "%s[\"e\",\"%s\",\"\"]", sep, other);
			continue;
		case 1:
			hex32(W.authors[rnd(NAUTHORS)], other);
			len += (size_t)snprintf(tags + len, sizeof(tags) - len,
			    "%s[\"p\",\"%s\"]", sep, other);
			continue;
		case 2:
			len += (size_t)snprintf(tags + len, sizeof(tags) - len,
			    "%s[\"t\",\"%s\"]", sep, words[rnd(4)]);
			continue;
		case 3:
			len += (size_t)snprintf(tags + len, sizeof(tags) - len,
			    "%s[\"d\",\"x%u\"]", sep, rnd(20));
			continue;
		case 4:
			hex32(W.authors[rnd(NAUTHORS)], other);
			len += (size_t)snprintf(tags + len, sizeof(tags) - len,
			    "%s[\"P\",\"%s\"]", sep, other);
			continue;
		case 5:	/* not indexed: no value, or a long name */
			len += (size_t)snprintf(tags + len, sizeof(tags) - len,
			    "%s[\"e\"]", sep);
			continue;
		default:
			len += (size_t)snprintf(tags + len, sizeof(tags) - len,
			    "%s[\"expiration\",\"400000000%u\"]", sep, rnd(9));
			continue;
		}
		len += (size_t)snprintf(tags + len, sizeof(tags) - len,
		    "%s[\"t\",\"box\"]", sep);
	}
	snprintf(tags + len, sizeof(tags) - len, "]");
	snprintf(json, sizeof(json), "{\"id\":\"%s\",\"pubkey\":\"%s\","
	    "\"created_at\":%lld,\"kind\":%u,\"tags\":%s,\"content\":\"\","
	    "\"sig\":\"%0128d\"}", id, pk, (long long)at, kind, tags, 0);
	event_init(ev);
	assert_int_equal(event_parse(ev, json, strlen(json),
	    EVENT_MAX_BYTES_CEILING), EVENT_OK);
	row.id = ev->id;
	row.pubkey = ev->pubkey;
	row.kind = ev->kind;
	row.created_at = ev->created_at;
	row.json = json;
	row.json_len = strlen(json);
	row.source = "backfill";
	row.received_at = 1;
	row.tags = ev->tags;
	rc = store_event_insert(fx->st, &row, false);
	/*
	 * The model of a replaceable kind: one version per author and kind
	 * (and "d" for 30000-39999), the newest, on a tie the lowest id.
	 */
	for (i = 0; i < W.n; i++) {
		struct event	*o = &W.ev[i];

		if (!store_kind_replaceable(kind) || o->kind != kind ||
		    memcmp(o->pubkey, ev->pubkey, 32) != 0 || (kind >= 30000 &&
		    strcmp(d_of(o), d_of(ev)) != 0))
			continue;
		if (o->created_at > ev->created_at || (o->created_at ==
		    ev->created_at && memcmp(o->id, ev->id, 32) < 0)) {
			assert_int_equal(rc, STORE_INSERT_OLDER);
			event_free(ev);
			return;
		}
		event_free(o);
		memmove(o, o + 1, (W.n - i - 1) * sizeof(*o));
		W.n--;
		i--;
	}
	assert_true(rc == STORE_INSERT_NEW || rc == STORE_INSERT_REPLACED);
	if (ev != &W.ev[W.n])	/* move it down past what it replaced */
		W.ev[W.n] = *ev;
	W.n++;
}

static int
setup_world(void **state)
{
	struct fixture	*fx;
	const char	*seed = getenv("CACHEBOX_TEST_SEED");
	size_t		 i, j;

	if (seed != NULL)	/* other worlds, by hand */
		rng = strtoull(seed, NULL, 0) | 1;
	setup(state);
	fx = *state;
	for (i = 0; i < NAUTHORS; i++)
		for (j = 0; j < 32; j++)
			W.authors[i][j] = (uint8_t)rnd(256);
	W.n = 0;
	assert_int_equal(store_begin(fx->st), 0);
	for (i = 0; i < NEVENTS; i++)
		put_event(fx, T0 + rnd(TSPAN));
	assert_int_equal(store_commit(fx->st), 0);
	return 0;
}

static int
teardown_world(void **state)
{
	size_t	i;

	for (i = 0; i < W.n; i++)
		event_free(&W.ev[i]);
	return teardown(state);
}

/* ---- random filters -------------------------------------------------- */

static void
add_hex_list(struct buf *b, const char *key, size_t n, int which)
{
	char	hex[65];
	uint8_t	none[32];
	size_t	i;

	buf_printf(b, "\"%s\":[", key);
	for (i = 0; i < n; i++) {
		if (which == 0 && rnd(6) == 0) {
			memset(none, 0xee, sizeof(none));
			hex32(none, hex);
		} else if (which == 0)
			hex32(W.ev[rnd((uint32_t)W.n)].id, hex);
		else
			hex32(W.authors[rnd(NAUTHORS)], hex);
		buf_printf(b, "%s\"%s\"", i ? "," : "", hex);
	}
	buf_puts(b, "],");
}

static void
add_tag(struct buf *b, int *used)
{
	char	hex[65];
	size_t	i, n = 1 + rnd(3);
	int	which = (int)rnd(5);

	if (*used & (1 << which))
		return;
	*used |= 1 << which;
	buf_printf(b, "\"#%c\":[", "eptdP"[which]);
	for (i = 0; i < n; i++) {
		if (i)
			buf_putc(b, ',');
		switch (which) {
		case 0:
			hex32(W.ev[rnd((uint32_t)W.n)].id, hex);
			buf_printf(b, "\"%s\"", hex);
			break;
		case 1:
		case 4:
			hex32(W.authors[rnd(NAUTHORS)], hex);
			buf_printf(b, "\"%s\"", hex);
			break;
		case 2:
			buf_printf(b, "\"%s\"", words[rnd(4)]);
			break;
		default:
			buf_printf(b, "\"x%u\"", rnd(22));
		}
	}
	buf_puts(b, "],");
}

/* A random filter as JSON, parsed into f. */
static void
random_filter(struct filter *f, char *text, size_t textlen)
{
	struct buf	b;
	char		err[256];
	size_t		i;
	int		used = 0;

	buf_init(&b, 64 * 1024);
	buf_putc(&b, '{');
	if (rnd(8) == 0)
		add_hex_list(&b, "ids", 1 + rnd(8), 0);
	if (rnd(2) == 0)
		add_hex_list(&b, "authors", 1 + rnd(4), 1);
	if (rnd(2) == 0) {
		buf_puts(&b, "\"kinds\":[");
		for (i = 0; i < 1 + rnd(3); i++)
			buf_printf(&b, "%s%u", i ? "," : "", kinds[rnd(8)]);
		buf_puts(&b, "],");
	}
	if (rnd(3) == 0)
		add_tag(&b, &used);
	if (rnd(8) == 0)
		add_tag(&b, &used);
	if (rnd(3) == 0)
		buf_printf(&b, "\"since\":%u,", T0 + rnd(TSPAN));
	if (rnd(3) == 0)
		buf_printf(&b, "\"until\":%u,", T0 + rnd(TSPAN));
	if (rnd(2) == 0)
		buf_printf(&b, "\"limit\":%u,", rnd(5) == 0 ? 0 : rnd(60));
	if (b.data[b.len - 1] == ',')
		b.data[--b.len] = '\0';
	buf_putc(&b, '}');
	snprintf(text, textlen, "%s", buf_cstr(&b));
	if (filter_parse_text(f, (const char *)b.data, b.len, err,
	    sizeof(err)) == -1)
		fail_msg("%s: %s", buf_cstr(&b), err);
	if (rnd(2) == 0)
		filter_sort(f);
	buf_free(&b);
}

/* ---- the reference ------------------------------------------------------ */

static const struct event *const *cmp_base;

static int
by_order(const void *a, const void *b)
{
	const struct event	*x = *(const struct event *const *)a;
	const struct event	*y = *(const struct event *const *)b;

	if (x->created_at != y->created_at)
		return x->created_at > y->created_at ? -1 : 1;
	return memcmp(x->id, y->id, 32);
}

/*
 * What the scan must give for filters[0..n): each filter's matches in
 * order cut at its limit (default_limit when it has none, capped by
 * max_limit), united, in order. Pointers into W.ev into out; the count.
 */
static size_t
reference(const struct filter *filters, size_t n, uint64_t def, uint64_t max,
    const struct event **out)
{
	const struct event	**m = calloc(W.n, sizeof(*m));
	size_t			  i, j, k, nm, nout = 0;
	uint64_t		  lim;

	(void)cmp_base;
	for (i = 0; i < n; i++) {
		for (nm = 0, j = 0; j < W.n; j++)
			if (filter_match(&filters[i], &W.ev[j]))
				m[nm++] = &W.ev[j];
		qsort(m, nm, sizeof(*m), by_order);
		lim = (filters[i].has & FILTER_HAS_LIMIT) ? filters[i].limit :
		    def ? def : UINT64_MAX;
		if (max && lim > max)
			lim = max;
		for (j = 0; j < nm && j < lim; j++) {
			for (k = 0; k < nout && out[k] != m[j]; k++)
				;
			if (k == nout)
				out[nout++] = m[j];
		}
	}
	qsort(out, nout, sizeof(*out), by_order);
	free(m);
	return nout;
}

struct got {
	struct store_scan_row	*rows;
	size_t			 n, cap;
	int			 json_ok;
};

static int
collect(void *arg, const struct store_scan_row *row, const char *json,
    size_t len)
{
	struct got	*g = arg;
	char		 hex[65];

	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 64;
		g->rows = realloc(g->rows, g->cap * sizeof(*g->rows));
	}
	g->rows[g->n++] = *row;
	hex32(row->id, hex);
	if (json != NULL && (len < 80 || memmem(json, len, hex, 64) == NULL))
		g->json_ok = 0;
	return 0;
}

/* Run one scan in steps of random size; its rows into g. */
static void
run_scan(struct fixture *fx, const struct filter *f, size_t n,
    const struct store_scan_opts *o, struct got *g)
{
	struct store_scan	*s;
	int			 rc;

	memset(g, 0, sizeof(*g));
	g->json_ok = 1;
	assert_non_null(s = store_scan_new(fx->st, f, n, o));
	while ((rc = store_scan_step(s, 1 + rnd(64), collect, g)) == 1)
		;
	assert_int_equal(rc, 0);
	store_scan_free(s);
}

/* 200 (or count) random REQs: scan == reference, same order. */
static void
compare_random(struct fixture *fx, int count)
{
	struct filter		 f[3];
	const struct event	**want = calloc(W.n, sizeof(*want));
	struct store_scan_opts	 o = { 0 };
	struct got		 g;
	char			 text[3][4096];
	size_t			 n, nwant, i;
	int			 r;

	for (r = 0; r < count; r++) {
		n = 1 + rnd(3);
		for (i = 0; i < n; i++)
			random_filter(&f[i], text[i], sizeof(text[i]));
		o.default_limit = rnd(2) ? 0 : 40;
		o.max_limit = rnd(2) ? 0 : 30;
		o.with_json = rnd(2);
		nwant = reference(f, n, o.default_limit, o.max_limit, want);
		run_scan(fx, f, n, &o, &g);
		if (g.n != nwant)
			print_error("REQ %d (%zu filters, first %s): %zu rows, "
			    "want %zu\n", r, n, text[0], g.n, nwant);
		assert_int_equal(g.n, nwant);
		for (i = 0; i < nwant; i++) {
			assert_memory_equal(g.rows[i].id, want[i]->id, 32);
			assert_int_equal(g.rows[i].created_at,
			    want[i]->created_at);
		}
		assert_true(g.json_ok);
		free(g.rows);
		for (i = 0; i < n; i++)
			filter_free(&f[i]);
	}
	free(want);
}

static void
test_random_filters(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(store_tags_ready(fx->st), 1);
	compare_random(fx, 200);
}

/*
 * Filters of replaceable kinds only, without authors (or too many for a
 * probe each), read the partial index of replaceable events: the answer
 * of the reference, having read those rows only, not the store.
 */
static void
test_replaceable_plan(void **state)
{
	static const char *const texts[] = {
		"{\"kinds\":[0]}",
		"{\"kinds\":[0,3,10002],\"limit\":5}",
		"{\"kinds\":[30023],\"since\":1100,\"until\":1300}",
		"{\"kinds\":[3],\"#p\":[\"nobody\"]}",
	};
	struct fixture		 *fx = *state;
	const struct event	**want = calloc(W.n, sizeof(*want));
	struct store_scan_opts	  o = { 0 };
	struct store_scan	 *sc;
	struct filter		  f;
	struct got		  g;
	char			  err[256];
	size_t			  i, k, nwant, nrepl = 0;

	for (i = 0; i < W.n; i++)
		if (store_kind_replaceable(W.ev[i].kind))
			nrepl++;
	assert_true(nrepl < W.n / 2);
	for (k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
		assert_int_equal(filter_parse_text(&f, texts[k],
		    strlen(texts[k]), err, sizeof(err)), 0);
		nwant = reference(&f, 1, 0, 0, want);
		memset(&g, 0, sizeof(g));
		g.json_ok = 1;
		assert_non_null(sc = store_scan_new(fx->st, &f, 1, &o));
		while (store_scan_step(sc, 1 + rnd(64), collect, &g) == 1)
			;
		/* Examined: rows read, and rows given (one each). */
		assert_true(store_scan_examined(sc) <= nrepl + nwant);
		store_scan_free(sc);
		assert_int_equal(g.n, nwant);
		for (i = 0; i < nwant; i++)
			assert_memory_equal(g.rows[i].id, want[i]->id, 32);
		free(g.rows);
		filter_free(&f);
	}
	free(want);
}

/* The fill pending: "#x" read from the JSON; then the fill rebuilds all. */
static void
test_fill(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 rows, bytes, again, left;
	int		 rc, steps = 0;

	assert_int_equal(store_tags_size(fx->st, &rows, &bytes), 0);
	assert_true(rows > 1000);
	assert_int_equal(store_exec(fx->st, "DELETE FROM event_tags; "
	    "INSERT INTO meta VALUES ('tags_fill_next', 1), ('tags_fill_end', "
	    "(SELECT max(rowid) FROM events))"), 0);
	assert_int_equal(store_tags_ready(fx->st), 0);
	compare_random(fx, 100);
	while ((rc = store_tags_fill_step(fx->st, 128, &left)) == 1)
		steps++;
	assert_int_equal(rc, 0);
	assert_int_equal(left, 0);
	assert_int_equal(steps, (int)((W.n + 127) / 128) - 1);
	assert_int_equal(store_tags_ready(fx->st), 1);
	assert_int_equal(store_tags_size(fx->st, &again, &bytes), 0);
	assert_int_equal(again, rows);
	compare_random(fx, 50);
}

/* Events stored during a scan are after its snapshot: store_scan_after. */
static void
test_snapshot_and_after(void **state)
{
	struct fixture		*fx = *state;
	struct store_scan_opts	 o = { .no_limit = true };
	struct store_scan	*s;
	struct filter		 f;
	struct got		 g = { 0 }, a = { .json_ok = 1 };
	int64_t			 after;
	char			 err[128];
	int			 rc;

	assert_int_equal(filter_parse_text(&f, "{}", 2, err, sizeof(err)), 0);
	assert_non_null(s = store_scan_new(fx->st, &f, 1, &o));
	after = store_scan_snapshot(s);
	assert_int_equal(store_scan_step(s, 100, collect, &g), 1);
	/* Kind 1: neither replaces nor is replaced by what is stored. */
	put_kind = 1;
	put_event(fx, T0 + TSPAN + 5);		/* newer than all: would be first */
	put_event(fx, T0 - 5);			/* older than all: would be last */
	put_kind = -1;
	while ((rc = store_scan_step(s, 500, collect, &g)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(g.n, W.n - 2);
	store_scan_free(s);
	assert_int_equal(store_scan_after(fx->st, &f, 1, &after, 1, true,
	    collect, &a), 1);
	assert_int_equal(store_scan_after(fx->st, &f, 1, &after, 10, true,
	    collect, &a), 0);
	assert_int_equal(a.n, 2);
	assert_memory_equal(a.rows[0].id, W.ev[W.n - 2].id, 32);
	assert_memory_equal(a.rows[1].id, W.ev[W.n - 1].id, 32);
	assert_true(a.json_ok);
	free(g.rows);
	free(a.rows);
	filter_free(&f);
}

/* Retention takes an event's index rows with it. */
static void
test_evict_keeps_index(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 count, bytes, evicted;

	assert_int_equal(store_events_totals(fx->st, &count, &bytes), 0);
	assert_int_equal(store_events_evict(fx->st, bytes / 2, &evicted), 1);
	assert_true(evicted > 0);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM event_tags t "
	    "LEFT JOIN events e ON e.rowid = t.ev AND e.created_at = "
	    "t.created_at WHERE e.rowid IS NULL"), 0);
	assert_true(fixture_int(fx, "SELECT count(*) FROM event_tags") > 100);
}

/*
 * A lone filter's rows go out as they are read (direct_step): events
 * evicted between two steps are not handed out, and the rest comes after
 * the last row handed out, each once, with its JSON.
 */
static void
test_direct_evicted(void **state)
{
	struct fixture		*fx = *state;
	struct store_scan_opts	 o = { .no_limit = true, .with_json = true };
	struct store_scan	*s;
	struct filter		 f;
	struct got		 g = { .json_ok = 1 };
	char			 err[128], hex[65], sql[256];
	int64_t			 count, bytes, evicted, left;
	int			 rc;

	assert_int_equal(filter_parse_text(&f, "{}", 2, err, sizeof(err)), 0);
	assert_non_null(s = store_scan_new(fx->st, &f, 1, &o));
	assert_int_equal(store_scan_step(s, 100, collect, &g), 1);
	assert_int_equal(g.n, 100);
	assert_int_equal(store_events_totals(fx->st, &count, &bytes), 0);
	assert_int_equal(store_events_evict(fx->st, bytes / 2, &evicted), 1);
	assert_true(evicted > 0);
	assert_int_equal(hex_encode(g.rows[99].id, 32, hex, sizeof(hex)), 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE "
	    "created_at < %lld OR (created_at = %lld AND id > x'%s')",
	    (long long)g.rows[99].created_at,
	    (long long)g.rows[99].created_at, hex);
	left = fixture_int(fx, sql);
	while ((rc = store_scan_step(s, 37, collect, &g)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal((int64_t)g.n, 100 + left);
	assert_true(g.json_ok);
	store_scan_free(s);
	free(g.rows);
	filter_free(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_random_filters,
		    setup_world, teardown_world),
		cmocka_unit_test_setup_teardown(test_replaceable_plan,
		    setup_world, teardown_world),
		cmocka_unit_test_setup_teardown(test_fill,
		    setup_world, teardown_world),
		cmocka_unit_test_setup_teardown(test_snapshot_and_after,
		    setup_world, teardown_world),
		cmocka_unit_test_setup_teardown(test_direct_evicted,
		    setup_world, teardown_world),
		cmocka_unit_test_setup_teardown(test_evict_keeps_index,
		    setup_world, teardown_world),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
