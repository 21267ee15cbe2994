/*
 * test_store_rules.c — the authors' rules at the store's door
 * (store/rules.h), held against a brute-force model of the NIPs written
 * here independently of the code: for each scenario (replaceable and
 * addressable versions, NIP-09 by id and by address, a gift wrap deleted
 * by its recipient, deletions of deletions and by strangers, NIP-40,
 * NIP-62 for this box and for another relay, versions withdrawn by other
 * rules) the events arrive through ingest in many orders (every
 * permutation of up to four, seeded shuffles of more), each order
 * on a fresh store, and what the store serves afterwards (a scan, as the
 * relay endpoint and export read it) must be exactly what the model says
 * is kept, whatever the order. A copy of a withdrawn event is refused
 * without a signature check; a store filled before the rules (rows
 * written raw) is brought to the same state by the conversion steps; an
 * event that expires later leaves at its time and is refused after.
 */
#define _XOPEN_SOURCE 700	/* nftw */

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
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "nostr/key.h"
#include "store/events.h"
#include "store/follows.h"
#include "store/rules.h"
#include "store/scan.h"
#include "store/store.h"
#include "store/withdrawn.h"
#include "sync/ingest.h"

#define MAX_EVENTS	28
#define FAR		4000000000LL	/* an expiration far ahead */
#define T0		1700000000LL

/* One event of a scenario: signed JSON and what the model reads of it. */
struct tev {
	char		*json;
	uint8_t		 id[32];
	uint8_t		 pubkey[32];
	uint32_t	 kind;
	int64_t		 at;
	const char	*tags[8][2];	/* name, value; NULL ends */
};

struct scenario {
	const char	*name;
	struct tev	 ev[MAX_EVENTS];
	size_t		 n;
};

struct fixture {
	char			 dir[64];
	struct store		*st;
	struct ingest		*ing;
	struct nostr_key	 a, b, r, w;	/* authors, a recipient, a wrapper */
};

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

static bool
judge_ours(void *arg, const char *url)
{
	(void)arg;
	return strcmp(url, "ws://cachebox.local:7777") == 0;
}

static void
open_store(struct fixture *fx)
{
	char	err[256];

	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_rules.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	assert_int_equal(store_open(&fx->st, fx->dir, err, sizeof(err)), 0);
	store_set_relay_judge(fx->st, judge_ours, NULL);
	assert_non_null(fx->ing = ingest_new(NULL, fx->st));
}

static void
close_store(struct fixture *fx)
{
	ingest_free(fx->ing);
	store_close(fx->st);
	nftw(fx->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	fx->ing = NULL;
	fx->st = NULL;
}

static int
setup(void **state)
{
	struct fixture	*fx = calloc(1, sizeof(*fx));
	uint8_t		 sk[32];

	assert_non_null(fx);
	memset(sk, 0x31, sizeof(sk));
	assert_int_equal(key_from_secret(&fx->a, sk), 0);
	memset(sk, 0x32, sizeof(sk));
	assert_int_equal(key_from_secret(&fx->b, sk), 0);
	memset(sk, 0x33, sizeof(sk));
	assert_int_equal(key_from_secret(&fx->r, sk), 0);
	memset(sk, 0x34, sizeof(sk));
	assert_int_equal(key_from_secret(&fx->w, sk), 0);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	free(*state);
	return 0;
}

/* ---- building scenarios --------------------------------------------------- */

static char	 hexbuf[MAX_EVENTS * 8][140];
static size_t	 nhex;

/* A string that lives as long as the test: hex of 32 bytes, or "k:pk:d". */
static const char *
hexs(const uint8_t v[32])
{
	assert_true(nhex < sizeof(hexbuf) / sizeof(hexbuf[0]));
	hex_encode(v, 32, hexbuf[nhex], 65);
	return hexbuf[nhex++];
}

static const char *
addr(uint32_t kind, const struct nostr_key *k, const char *d)
{
	char	pk[65];

	assert_true(nhex < sizeof(hexbuf) / sizeof(hexbuf[0]));
	hex_encode(k->pubkey, 32, pk, sizeof(pk));
	snprintf(hexbuf[nhex], sizeof(hexbuf[0]), "%u:%s:%s", kind, pk, d);
	return hexbuf[nhex++];
}

/*
 * Add an event of key to sc: kind, second, content, then up to 8 tags as
 * name, value pairs ending with NULL. Returns its index.
 */
static size_t
add(struct scenario *sc, const struct nostr_key *key, uint32_t kind,
    int64_t at, const char *content, ...)
{
	struct tev	*t = &sc->ev[sc->n];
	struct event	 ev;
	struct buf	 b;
	cJSON		*tags = cJSON_CreateArray(), *tag;
	const char	*name;
	va_list		 ap;
	size_t		 i = 0;

	assert_true(sc->n < MAX_EVENTS);
	va_start(ap, content);
	while ((name = va_arg(ap, const char *)) != NULL) {
		t->tags[i][0] = name;
		t->tags[i][1] = va_arg(ap, const char *);
		tag = cJSON_CreateArray();
		cJSON_AddItemToArray(tag, cJSON_CreateString(name));
		if (t->tags[i][1] != NULL)
			cJSON_AddItemToArray(tag,
			    cJSON_CreateString(t->tags[i][1]));
		cJSON_AddItemToArray(tags, tag);
		i++;
	}
	va_end(ap);
	assert_int_equal(event_create(&ev, key, kind, at, tags, content),
	    EVENT_OK);
	cJSON_Delete(tags);
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(event_to_json(&ev, &b), 0);
	assert_non_null(t->json = strdup(buf_cstr(&b)));
	memcpy(t->id, ev.id, 32);
	memcpy(t->pubkey, ev.pubkey, 32);
	t->kind = kind;
	t->at = at;
	buf_free(&b);
	event_free(&ev);
	return sc->n++;
}

static void
scenario_free(struct scenario *sc)
{
	size_t	i;

	for (i = 0; i < sc->n; i++)
		free(sc->ev[i].json);
	nhex = 0;
}

/* ---- the model ------------------------------------------------------------ */

static const char *
tag_of(const struct tev *e, const char *name)
{
	size_t	i;

	for (i = 0; i < 8 && e->tags[i][0] != NULL; i++)
		if (strcmp(e->tags[i][0], name) == 0)
			return e->tags[i][1];
	return NULL;
}

static bool
has_tag(const struct tev *e, const char *name, const char *value)
{
	size_t	i;

	for (i = 0; i < 8 && e->tags[i][0] != NULL; i++)
		if (strcmp(e->tags[i][0], name) == 0 && e->tags[i][1] != NULL &&
		    strcmp(e->tags[i][1], value) == 0)
			return true;
	return false;
}

static bool
m_replaceable(uint32_t k)
{
	return k == 0 || k == 3 || (k >= 10000 && k < 20000) ||
	    (k >= 30000 && k < 40000);
}

static const char *
m_d(const struct tev *e)
{
	const char	*d;

	if (e->kind < 30000 || e->kind >= 40000)
		return "";
	return (d = tag_of(e, "d")) == NULL ? "" : d;
}

static bool
m_newer(const struct tev *x, const struct tev *y)
{
	return x->at > y->at || (x->at == y->at && memcmp(x->id, y->id, 32) < 0);
}

/* Whether request w (kind 62) is meant here and covers e. */
static bool
m_vanishes(const struct tev *w, const uint8_t pk[32], const struct tev *e)
{
	return w->kind == 62 && memcmp(w->pubkey, pk, 32) == 0 &&
	    (has_tag(w, "relay", "ALL_RELAYS") ||
	    has_tag(w, "relay", "ws://cachebox.local:7777")) &&
	    w->at >= e->at && memcmp(w->id, e->id, 32) != 0;
}

/* NIP-01, -09, -40, -62 as the box owes them: is e kept, given all of E? */
static bool
model_kept(const struct scenario *sc, size_t i, int64_t now)
{
	const struct tev	*e = &sc->ev[i], *w;
	const char		*x;
	int64_t			 exp;
	char			 pkhex[65], idhex[65], a[160];
	size_t			 j, k;
	uint8_t			 rc[32];

	if (e->kind >= 20000 && e->kind < 30000)
		return false;
	if ((x = tag_of(e, "expiration")) != NULL &&
	    (exp = strtoll(x, NULL, 10)) <= now)
		return false;
	hex_encode(e->id, 32, idhex, sizeof(idhex));
	hex_encode(e->pubkey, 32, pkhex, sizeof(pkhex));
	for (j = 0; j < sc->n; j++) {
		w = &sc->ev[j];
		if (m_vanishes(w, e->pubkey, e))
			return false;
		for (k = 0; e->kind == 1059 && k < 8 && e->tags[k][0]; k++)
			if (strcmp(e->tags[k][0], "p") == 0 &&
			    hex_decode(e->tags[k][1], 64, rc, 32) == 0 &&
			    m_vanishes(w, rc, e))
				return false;
		if (w->kind == 5 && e->kind != 5 && e->kind != 62 &&
		    has_tag(w, "e", idhex)) {
			if (memcmp(w->pubkey, e->pubkey, 32) == 0)
				return false;
			hex_encode(w->pubkey, 32, a, 65);
			if (e->kind == 1059 && has_tag(e, "p", a))
				return false;
		}
		if (!m_replaceable(e->kind) || j == i)
			continue;
		if (memcmp(w->pubkey, e->pubkey, 32) == 0 &&
		    w->kind == e->kind && strcmp(m_d(w), m_d(e)) == 0 &&
		    m_newer(w, e))
			return false;
		snprintf(a, sizeof(a), "%u:%s:%s", e->kind, pkhex, m_d(e));
		if (w->kind == 5 && memcmp(w->pubkey, e->pubkey, 32) == 0 &&
		    has_tag(w, "a", a) && w->at >= e->at)
			return false;
	}
	return true;
}

/* ---- what the store serves -------------------------------------------------- */

struct served {
	uint8_t	ids[MAX_EVENTS * 4][32];
	size_t	n;
};

static int
collect(void *arg, const struct store_scan_row *row, const char *json,
    size_t len)
{
	struct served	*s = arg;

	(void)json;
	(void)len;
	assert_true(s->n < sizeof(s->ids) / 32);
	memcpy(s->ids[s->n++], row->id, 32);
	return 0;
}

/* Every event a REQ of {} would get, as the relay endpoint reads it. */
static void
served(struct fixture *fx, struct served *out)
{
	const struct store_scan_opts	 o = { .no_limit = true,
					    .with_json = true };
	struct store_scan		*s;
	struct filter			 f;

	filter_init(&f);
	out->n = 0;
	assert_non_null(s = store_scan_new(fx->st, &f, 1, &o));
	while (store_scan_step(s, 1000, collect, out) == 1)
		;
	store_scan_free(s);
	filter_free(&f);
}

static bool
served_has(const struct served *s, const uint8_t id[32])
{
	size_t	i;

	for (i = 0; i < s->n; i++)
		if (memcmp(s->ids[i], id, 32) == 0)
			return true;
	return false;
}

/* Run the steps the sweep would (purges, expirations due at now). */
static void
settle(struct fixture *fx, int64_t now)
{
	int64_t	next;
	int	rc;

	while ((rc = store_rules_fill_step(fx->st, 3, NULL)) == 1)
		;
	assert_int_equal(rc, 0);
	while ((rc = store_rules_vanish_step(fx->st, 2, NULL)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_true(store_rules_expire_step(fx->st, now, 100, &next) >= 0);
}

/* The store serves exactly what the model keeps; order printed on failure. */
static void
check_model(struct fixture *fx, const struct scenario *sc,
    const size_t *order, int64_t now)
{
	struct served	s;
	size_t		i, kept = 0;
	bool		want;

	served(fx, &s);
	for (i = 0; i < sc->n; i++) {
		want = model_kept(sc, i, now);
		kept += want;
		if (want != served_has(&s, sc->ev[i].id)) {
			fprintf(stderr, "scenario %s: event %zu (kind %u) %s by "
			    "the model, %s by the store; arrival order:",
			    sc->name, i, sc->ev[i].kind, want ? "kept" :
			    "withdrawn", want ? "not served" : "served");
			for (i = 0; order != NULL && i < sc->n; i++)
				fprintf(stderr, " %zu", order[i]);
			fprintf(stderr, "\n");
			fail();
		}
	}
	assert_int_equal(s.n, kept);
}

/* ---- orders ----------------------------------------------------------------- */

/* The next permutation of p[0..n) in lexicographic order; false at the end. */
static bool
next_perm(size_t *p, size_t n)
{
	size_t	i, j, t;

	if (n < 2)
		return false;
	for (i = n - 1; i > 0 && p[i - 1] >= p[i]; i--)
		;
	if (i == 0)
		return false;
	for (j = n - 1; p[j] <= p[i - 1]; j--)
		;
	t = p[i - 1]; p[i - 1] = p[j]; p[j] = t;
	for (j = n - 1; i < j; i++, j--) {
		t = p[i]; p[i] = p[j]; p[j] = t;
	}
	return true;
}

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Feed sc in order on a fresh store and check it against the model. */
static void
run_order(struct fixture *fx, const struct scenario *sc, const size_t *order)
{
	int64_t	now = clock_wall_s();
	size_t	i;

	open_store(fx);
	for (i = 0; i < sc->n; i++)
		(void)ingest_event_json(fx->ing, sc->ev[order[i]].json,
		    strlen(sc->ev[order[i]].json), NULL, 0, INGEST_LIVE, NULL,
		    NULL);
	assert_int_equal(ingest_flush(fx->ing), 0);
	settle(fx, now);
	check_model(fx, sc, order, now);
	close_store(fx);
}

/* Every order of a set of up to 4, else 30 seeded shuffles. */
static void
run_orders(struct fixture *fx, const struct scenario *sc)
{
	size_t		p[MAX_EVENTS], i, j, t, runs = 0;
	uint64_t	seed = 0x9e3779b97f4a7c15ULL;

	for (i = 0; i < sc->n; i++)
		p[i] = i;
	if (sc->n <= 4) {
		do {
			run_order(fx, sc, p);
			runs++;
		} while (next_perm(p, sc->n));
	} else {
		run_order(fx, sc, p);		/* as listed */
		for (i = 0; i < sc->n; i++)
			p[i] = sc->n - 1 - i;
		run_order(fx, sc, p);		/* reversed */
		for (runs = 2; runs < 30; runs++) {
			for (i = sc->n - 1; i > 0; i--) {
				j = (size_t)(rnd(&seed) % (i + 1));
				t = p[i]; p[i] = p[j]; p[j] = t;
			}
			run_order(fx, sc, p);
		}
	}
	printf("    %s: %zu events, %zu orders\n", sc->name, sc->n, runs);
}

/* ---- scenarios -------------------------------------------------------------- */

static void
test_replaceable(void **state)
{
	struct fixture	*fx = *state;
	struct scenario	 sc = { .name = "replaceable" };

	add(&sc, &fx->a, 0, T0, "v1", NULL);
	add(&sc, &fx->a, 0, T0 + 10, "v2", NULL);
	add(&sc, &fx->a, 0, T0 + 10, "v2 again", NULL);	/* a tie: lowest id */
	add(&sc, &fx->b, 0, T0, "b's", NULL);
	add(&sc, &fx->a, 10002, T0, "relays", NULL);
	run_orders(fx, &sc);
	scenario_free(&sc);
}

static void
test_addressable(void **state)
{
	struct fixture	*fx = *state;
	struct scenario	 sc = { .name = "addressable" };

	add(&sc, &fx->a, 30023, T0, "x1", "d", "x", NULL);
	add(&sc, &fx->a, 30023, T0 + 5, "x2", "d", "x", NULL);
	add(&sc, &fx->a, 30023, T0, "y1", "d", "y", NULL);
	add(&sc, &fx->a, 30023, T0 + 9, "no d", NULL);
	add(&sc, &fx->a, 30023, T0 + 1, "empty d", "d", "", NULL);
	run_orders(fx, &sc);
	scenario_free(&sc);
}

static void
test_delete_by_id(void **state)
{
	struct fixture	*fx = *state;
	struct scenario	 sc = { .name = "NIP-09 by id" };
	size_t		 n1, n2, d1;

	n1 = add(&sc, &fx->a, 1, T0, "a's note", NULL);
	n2 = add(&sc, &fx->a, 1, T0 + 1, "a's other note", NULL);
	d1 = add(&sc, &fx->a, 5, T0 + 2, "", "e", hexs(sc.ev[n1].id), NULL);
	/* A stranger's deletion of a's other note does nothing. */
	add(&sc, &fx->b, 5, T0 + 3, "", "e", hexs(sc.ev[n2].id), NULL);
	/* A deletion of a deletion does nothing. */
	add(&sc, &fx->a, 5, T0 + 4, "", "e", hexs(sc.ev[d1].id), NULL);
	run_orders(fx, &sc);
	scenario_free(&sc);
}

static void
test_delete_by_address(void **state)
{
	struct fixture	*fx = *state;
	struct scenario	 sc = { .name = "NIP-09 by address" };

	add(&sc, &fx->a, 30023, T0, "x1", "d", "x", NULL);
	add(&sc, &fx->a, 30023, T0 + 20, "x3", "d", "y", NULL);
	add(&sc, &fx->a, 5, T0 + 10, "", "a", addr(30023, &fx->a, "x"), NULL);
	add(&sc, &fx->a, 30023, T0 + 30, "x after", "d", "x", NULL);
	add(&sc, &fx->a, 10002, T0 + 5, "relays", NULL);
	add(&sc, &fx->a, 5, T0 + 6, "", "a", addr(10002, &fx->a, ""), NULL);
	/* b cannot delete a's address. */
	add(&sc, &fx->b, 5, T0 + 40, "", "a", addr(30023, &fx->a, "y"), NULL);
	run_orders(fx, &sc);
	scenario_free(&sc);
}

static void
test_gift_wrap(void **state)
{
	struct fixture	*fx = *state;
	struct scenario	 sc = { .name = "gift wrap" };
	size_t		 w1, w2;

	w1 = add(&sc, &fx->w, 1059, T0, "sealed", "p", hexs(fx->r.pubkey),
	    NULL);
	w2 = add(&sc, &fx->w, 1059, T0 + 1, "sealed 2", "p",
	    hexs(fx->b.pubkey), NULL);
	/* The recipient deletes the first; a stranger cannot delete the second. */
	add(&sc, &fx->r, 5, T0 + 2, "", "e", hexs(sc.ev[w1].id), NULL);
	add(&sc, &fx->a, 5, T0 + 3, "", "e", hexs(sc.ev[w2].id), NULL);
	run_orders(fx, &sc);
	scenario_free(&sc);
}

static void
test_expiration(void **state)
{
	struct fixture	*fx = *state;
	struct scenario	 sc = { .name = "NIP-40" };
	char		 past[32], far[32];

	snprintf(past, sizeof(past), "%lld", (long long)(T0 + 100));
	snprintf(far, sizeof(far), "%lld", (long long)FAR);
	add(&sc, &fx->a, 1, T0, "gone", "expiration", past, NULL);
	add(&sc, &fx->a, 1, T0, "later", "expiration", far, NULL);
	/* The newest version expired: the older one does not come back. */
	add(&sc, &fx->a, 10002, T0, "v1", NULL);
	add(&sc, &fx->a, 10002, T0 + 1, "v2", "expiration", past, NULL);
	add(&sc, &fx->a, 20001, T0, "ephemeral", NULL);
	run_orders(fx, &sc);
	scenario_free(&sc);
}

static void
test_vanish(void **state)
{
	struct fixture	*fx = *state;
	struct scenario	 sc = { .name = "NIP-62" };

	add(&sc, &fx->a, 1, T0, "old", NULL);
	add(&sc, &fx->a, 0, T0 + 1, "profile", NULL);
	add(&sc, &fx->a, 5, T0 - 5, "", "e", "00", NULL);
	add(&sc, &fx->a, 62, T0 + 10, "bye", "relay", "ALL_RELAYS", NULL);
	add(&sc, &fx->a, 1, T0 + 20, "after", NULL);
	add(&sc, &fx->w, 1059, T0 + 2, "to a", "p", hexs(fx->a.pubkey), NULL);
	/* Another relay's request does nothing here; this box's does. */
	add(&sc, &fx->b, 1, T0, "b's", NULL);
	add(&sc, &fx->b, 62, T0 + 10, "bye", "relay", "wss://other.example",
	    NULL);
	add(&sc, &fx->r, 1, T0, "r's", NULL);
	add(&sc, &fx->r, 62, T0 + 10, "bye", "relay",
	    "ws://cachebox.local:7777", NULL);
	run_orders(fx, &sc);
	scenario_free(&sc);
}

static void
test_mixed(void **state)
{
	struct fixture	*fx = *state;
	struct scenario	 sc = { .name = "mixed" };
	size_t		 v2;

	add(&sc, &fx->a, 3, T0, "follows v1", NULL);
	v2 = add(&sc, &fx->a, 3, T0 + 5, "follows v2", NULL);
	/* The newest version deleted by id: the older does not come back. */
	add(&sc, &fx->a, 5, T0 + 6, "", "e", hexs(sc.ev[v2].id), NULL);
	add(&sc, &fx->b, 3, T0, "b v1", NULL);
	add(&sc, &fx->b, 3, T0 + 1, "b v2", NULL);
	run_orders(fx, &sc);
	scenario_free(&sc);
}

/* A copy of a withdrawn event is refused by its tombstone, unverified. */
static void
test_tombstone(void **state)
{
	struct fixture			*fx = *state;
	struct scenario			 sc = { .name = "tombstone" };
	const struct ingest_stats	*is;
	struct ingest_info		 info;
	size_t				 n1, i;
	uint64_t			 sigs;
	char				*copy;

	n1 = add(&sc, &fx->a, 1, T0, "note", NULL);
	add(&sc, &fx->a, 5, T0 + 1, "", "e", hexs(sc.ev[n1].id), NULL);
	open_store(fx);
	is = ingest_stats(fx->ing);
	for (i = 0; i < 2; i++)
		(void)ingest_event_json(fx->ing, sc.ev[i].json,
		    strlen(sc.ev[i].json), NULL, 0, INGEST_LIVE, NULL, NULL);
	assert_int_equal(store_withdrawn_known(fx->st, sc.ev[n1].id, NULL), 1);
	/* A copy with a broken signature: refused the same, not checked. */
	assert_non_null(copy = strdup(sc.ev[n1].json));
	*(strstr(copy, "\"sig\":\"") + 7) ^= 1;
	sigs = is->sig_checks;
	assert_int_equal(ingest_event_json(fx->ing, copy, strlen(copy), NULL,
	    0, INGEST_BACKFILL, NULL, &info), INGEST_DUPLICATE);
	assert_int_equal(info.not_kept, STORE_INSERT_DELETED);
	assert_int_equal(is->sig_checks, sigs);
	assert_int_equal(is->withdrawn, 1);
	assert_int_equal(is->deleted, 0);	/* it was stored, then removed */
	assert_int_equal(store_rules_stats(fx->st)->deleted, 1);
	free(copy);
	close_store(fx);
	scenario_free(&sc);
}

/* An event that expires after it came leaves at its time, then is refused. */
static void
test_expires_later(void **state)
{
	struct fixture	*fx = *state;
	struct scenario	 sc = { .name = "expires later" };
	struct served	 s;
	struct ingest_info info;
	char		 at[32];
	int64_t		 next;

	snprintf(at, sizeof(at), "%lld", (long long)FAR);
	add(&sc, &fx->a, 1, T0, "brief", "expiration", at, NULL);
	open_store(fx);
	assert_int_equal(ingest_event_json(fx->ing, sc.ev[0].json,
	    strlen(sc.ev[0].json), NULL, 0, INGEST_LIVE, NULL, NULL),
	    INGEST_NEW);
	assert_int_equal(store_rules_expire_step(fx->st, FAR - 1, 10, &next),
	    0);
	assert_int_equal(next, FAR);
	assert_int_equal(store_rules_expire_step(fx->st, FAR, 10, &next), 1);
	assert_int_equal(next, -1);
	served(fx, &s);
	assert_int_equal(s.n, 0);
	assert_int_equal(ingest_event_json(fx->ing, sc.ev[0].json,
	    strlen(sc.ev[0].json), NULL, 0, INGEST_LIVE, NULL, &info),
	    INGEST_DUPLICATE);
	assert_int_equal(info.not_kept, STORE_INSERT_EXPIRED);
	close_store(fx);
	scenario_free(&sc);
}

/*
 * A store filled before the rules: rows written as they are, then the
 * conversion steps bring it to the model's state.
 */
static void
test_conversion(void **state)
{
	struct fixture		*fx = *state;
	struct scenario		 sc = { .name = "conversion" };
	struct store_event_row	 row;
	struct event		 ev;
	char			 past[32];
	size_t			 i;
	int64_t			 now = clock_wall_s();

	snprintf(past, sizeof(past), "%lld", (long long)(T0 + 100));
	add(&sc, &fx->a, 0, T0 + 10, "new profile", NULL);
	add(&sc, &fx->a, 0, T0, "old profile", NULL);
	add(&sc, &fx->a, 1, T0, "deleted", NULL);
	add(&sc, &fx->a, 5, T0 + 1, "", "e", hexs(sc.ev[2].id), NULL);
	add(&sc, &fx->a, 1, T0, "expired", "expiration", past, NULL);
	add(&sc, &fx->a, 20001, T0, "ephemeral", NULL);
	add(&sc, &fx->b, 1, T0, "b's", NULL);
	add(&sc, &fx->b, 62, T0 + 10, "bye", "relay", "ALL_RELAYS", NULL);
	add(&sc, &fx->r, 1, T0, "kept", NULL);
	open_store(fx);
	assert_int_equal(store_begin(fx->st), 0);
	for (i = 0; i < sc.n; i++) {
		event_init(&ev);
		assert_int_equal(event_parse(&ev, sc.ev[i].json,
		    strlen(sc.ev[i].json), EVENT_MAX_BYTES_CEILING), EVENT_OK);
		row = (struct store_event_row){ .id = ev.id, .pubkey = ev.pubkey,
		    .kind = ev.kind, .created_at = ev.created_at,
		    .json = sc.ev[i].json, .json_len = strlen(sc.ev[i].json),
		    .source = "backfill", .received_at = now, .tags = ev.tags };
		assert_int_equal(store_event_row_insert(fx->st, &row, -1,
		    false), STORE_INSERT_NEW);
		event_free(&ev);
	}
	assert_int_equal(store_exec(fx->st, "INSERT INTO meta (key, value) "
	    "VALUES ('rules_fill_next', 1), ('rules_fill_end', "
	    "(SELECT max(rowid) FROM events))"), 0);
	assert_int_equal(store_commit(fx->st), 0);
	settle(fx, now);
	check_model(fx, &sc, NULL, now);
	assert_int_equal(store_rules_fill_step(fx->st, 10, NULL), 0);
	close_store(fx);
	scenario_free(&sc);
}

static int
count_version(void *arg, const uint8_t pubkey[32], uint32_t kind,
    int64_t created_at, const char *json, size_t len)
{
	int64_t	*seen = arg;

	(void)pubkey;
	(void)json;
	(void)len;
	assert_int_equal(kind, 3);
	seen[seen[0] + 1] = created_at;
	seen[0]++;
	return 0;
}

/*
 * A root's superseded follow lists are kept aside, newest first, at most
 * ROOTS_HISTORY_KEEP, whichever order they came in; another author's are
 * not.
 */
static void
test_roots_history(void **state)
{
	struct fixture	*fx = *state;
	struct scenario	 sc = { .name = "roots history" };
	int64_t		 seen[ROOTS_HISTORY_KEEP + 8] = { 0 };
	size_t		 i, order[MAX_EVENTS];

	for (i = 0; i < ROOTS_HISTORY_KEEP + 3; i++)
		add(&sc, &fx->a, 3, T0 + (int64_t)i, "follows", NULL);
	add(&sc, &fx->b, 3, T0, "b v1", NULL);
	add(&sc, &fx->b, 3, T0 + 1, "b v2", NULL);
	open_store(fx);
	assert_int_equal(store_follows_sync(fx->st, NULL, 0,
	    (const uint8_t (*)[32])fx->a.pubkey, 1, T0, NULL), 0);
	/* Odd ones first, then the even ones: some arrive already beaten. */
	for (i = 0; i < sc.n; i++)
		order[i] = i;
	for (i = 0; i < sc.n; i += 2)
		(void)ingest_event_json(fx->ing, sc.ev[i].json,
		    strlen(sc.ev[i].json), NULL, 0, INGEST_LIVE, NULL, NULL);
	for (i = 1; i < sc.n; i += 2)
		(void)ingest_event_json(fx->ing, sc.ev[i].json,
		    strlen(sc.ev[i].json), NULL, 0, INGEST_LIVE, NULL, NULL);
	assert_int_equal(ingest_flush(fx->ing), 0);
	assert_int_equal(store_roots_history_list(fx->st, NULL, -1, 100,
	    count_version, seen), ROOTS_HISTORY_KEEP);
	/* Newest first, the current one not among them, the oldest gone. */
	assert_int_equal(seen[1], T0 + ROOTS_HISTORY_KEEP + 1);
	assert_int_equal(seen[seen[0]], T0 + 2);
	check_model(fx, &sc, order, clock_wall_s());
	close_store(fx);
	scenario_free(&sc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replaceable),
		cmocka_unit_test(test_addressable),
		cmocka_unit_test(test_delete_by_id),
		cmocka_unit_test(test_delete_by_address),
		cmocka_unit_test(test_gift_wrap),
		cmocka_unit_test(test_expiration),
		cmocka_unit_test(test_vanish),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_tombstone),
		cmocka_unit_test(test_expires_later),
		cmocka_unit_test(test_conversion),
		cmocka_unit_test(test_roots_history),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
