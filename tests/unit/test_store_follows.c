/*
 * test_store_follows.c — the follows and author_relays tables on a real
 * store: a sync adds, drops (stale, kept) and brings back authors with
 * exact change counts and timestamps; roots are followed and flagged;
 * relay lists come from the newest kind 10002 only, with NIP-65 markers,
 * normalised URLs, repeats merged and non-ws URLs skipped; the readers
 * the planners use return exactly the followed writers; a page of the
 * followed set comes in pubkey order without the stale; profile names come
 * from the newest stored kind 0 (display_name, then name), trimmed and
 * cut at a character, and a newer kind 0 replaces a cached one.
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

#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/key.h"
#include "store/events.h"
#include "store/rules.h"
#include "store/follows.h"
#include "store/names.h"
#include "store/store.h"

#include "store_fixture.h"

static void
pk(uint8_t out[32], uint8_t b)
{
	memset(out, b, 32);
}

static void
assert_change(const struct store_follows_change *c, size_t added,
    size_t returned, size_t dropped, size_t active)
{
	assert_int_equal(c->added, added);
	assert_int_equal(c->returned, returned);
	assert_int_equal(c->dropped, dropped);
	assert_int_equal(c->active, active);
}

static void
assert_follow(struct fixture *fx, uint8_t b, bool root, bool stale,
    int64_t first, int64_t last)
{
	struct store_follow	f;
	uint8_t			k[32];

	pk(k, b);
	assert_int_equal(store_follow_get(fx->st, k, &f), 1);
	assert_memory_equal(f.pubkey, k, 32);
	assert_int_equal(f.is_root, root);
	assert_int_equal(f.stale, stale);
	assert_int_equal(f.first_seen, first);
	assert_int_equal(f.last_seen, last);
}

static void
test_sync(void **state)
{
	struct fixture			*fx = *state;
	struct store_follows_change	 c;
	uint8_t				 f[5][32], r[1][32], (*act)[32];
	int64_t				 active, stale;
	size_t				 n;

	pk(r[0], 0x10);
	pk(f[0], 0x0a);
	pk(f[1], 0x0b);
	pk(f[2], 0x0c);
	pk(f[3], 0x0b);		/* a repeat */
	pk(f[4], 0x10);		/* the root also in its own list */
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    5, (const uint8_t (*)[32])r, 1, 1000, &c), 0);
	assert_change(&c, 4, 0, 0, 4);
	assert_follow(fx, 0x10, true, false, 1000, 1000);
	assert_follow(fx, 0x0b, false, false, 1000, 1000);
	assert_int_equal(store_follows_count(fx->st, &active, &stale), 0);
	assert_int_equal(active, 4);
	assert_int_equal(stale, 0);

	/* C unfollowed: stale, kept. */
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    2, (const uint8_t (*)[32])r, 1, 2000, &c), 0);
	assert_change(&c, 0, 0, 1, 3);
	assert_follow(fx, 0x0c, false, true, 1000, 1000);
	assert_follow(fx, 0x0a, false, false, 1000, 2000);
	assert_int_equal(store_follows_count(fx->st, &active, &stale), 0);
	assert_int_equal(active, 3);
	assert_int_equal(stale, 1);

	/* C back, B gone, in the same second as the last sync. */
	memcpy(f[1], f[2], 32);
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    2, (const uint8_t (*)[32])r, 1, 2000, &c), 0);
	assert_change(&c, 0, 1, 1, 3);
	assert_follow(fx, 0x0c, false, false, 1000, 2000);
	assert_follow(fx, 0x0b, false, true, 1000, 2000);

	/* The root demoted to a plain follow of a new root. */
	pk(r[0], 0x20);
	pk(f[2], 0x10);
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    3, (const uint8_t (*)[32])r, 1, 3000, NULL), 0);
	assert_follow(fx, 0x10, false, false, 1000, 3000);
	assert_follow(fx, 0x20, true, false, 3000, 3000);

	assert_int_equal(store_follows_active(fx->st, &act, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(act[0][0], 0x0a);
	assert_int_equal(act[1][0], 0x0c);
	assert_int_equal(act[2][0], 0x10);
	assert_int_equal(act[3][0], 0x20);
	free(act);

	assert_int_equal(store_follow_add_fetched(fx->st, f[0], 7), 0);
	assert_int_equal(store_follow_add_fetched(fx->st, f[0], 5), 0);
	{
		struct store_follow	sf;

		assert_int_equal(store_follow_get(fx->st, f[0], &sf), 1);
		assert_int_equal(sf.events_fetched, 12);
		pk(f[4], 0x77);
		assert_int_equal(store_follow_get(fx->st, f[4], &sf), 0);
	}
}

static int
count_cb(const struct store_follow *f, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static void
test_each_stale(void **state)
{
	struct fixture	*fx = *state;
	uint8_t		 f[3][32];
	int		 n = 0;

	pk(f[0], 1);
	pk(f[1], 2);
	pk(f[2], 3);
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    3, NULL, 0, 10, NULL), 0);
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    1, NULL, 0, 20, NULL), 0);
	assert_int_equal(store_follows_each(fx->st, false, count_cb, &n), 0);
	assert_int_equal(n, 1);
	n = 0;
	assert_int_equal(store_follows_each(fx->st, true, count_cb, &n), 0);
	assert_int_equal(n, 3);
}

static void
test_normalise(void **state)
{
	char	out[URL_MAX_BYTES + 1];

	(void)state;
	assert_int_equal(store_relay_url_normalise("wss://Relay.Example.COM:443/",
	    out, sizeof(out)), 0);
	assert_string_equal(out, "wss://relay.example.com");
	assert_int_equal(store_relay_url_normalise("WS://127.0.0.1:7000/sub?x=1",
	    out, sizeof(out)), 0);
	assert_string_equal(out, "ws://127.0.0.1:7000/sub?x=1");
	assert_int_equal(store_relay_url_normalise("ws://[::1]:80", out,
	    sizeof(out)), 0);
	assert_string_equal(out, "ws://[::1]");
	assert_int_equal(store_relay_url_normalise("https://relay.example.com",
	    out, sizeof(out)), -1);
	assert_int_equal(store_relay_url_normalise("not a url", out,
	    sizeof(out)), -1);
	assert_int_equal(store_relay_url_normalise("wss://relay.example.com",
	    out, 10), -1);
}

/* A kind 10002 of key at time at with tags given as JSON text. */
static void
relay_list(const struct nostr_key *key, int64_t at, const char *tags,
    struct event *ev)
{
	cJSON	*t = cJSON_Parse(tags);

	assert_non_null(t);
	assert_int_equal(event_create(ev, key, 10002, at, t, ""), EVENT_OK);
	cJSON_Delete(t);
}

struct rel_seen {
	char	url[8][64];
	int	read[8], write[8];
	int	n;
};

static int
rel_cb(const uint8_t pubkey[32], const struct store_author_relay *r,
    void *arg)
{
	struct rel_seen	*s = arg;

	assert_true(s->n < 8);
	snprintf(s->url[s->n], sizeof(s->url[0]), "%s", r->url);
	s->read[s->n] = r->read;
	s->write[s->n] = r->write;
	s->n++;
	return 0;
}

static void
test_author_relays(void **state)
{
	struct fixture		*fx = *state;
	struct nostr_key	 key;
	struct event		 ev;
	struct rel_seen		 s;
	uint8_t			 sk[32];

	memset(sk, 0x44, sizeof(sk));
	assert_int_equal(key_from_secret(&key, sk), 0);
	relay_list(&key, 500, "[[\"r\",\"wss://Both.example/\"],"
	    "[\"r\",\"wss://read.example\",\"read\"],"
	    "[\"r\",\"wss://write.example\",\"write\"],"
	    "[\"r\",\"https://web.example\"],[\"p\",\"wss://p.example\"],"
	    "[\"r\",\"wss://read.example\",\"write\"]]", &ev);
	assert_int_equal(store_author_relays_from_event(fx->st, &ev), 1);
	event_free(&ev);

	memset(&s, 0, sizeof(s));
	assert_int_equal(store_author_relays_each(fx->st, key.pubkey, rel_cb,
	    &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.url[0], "wss://both.example");
	assert_true(s.read[0] && s.write[0]);
	assert_string_equal(s.url[1], "wss://read.example");
	assert_true(s.read[1] && s.write[1]);	/* merged with the repeat */
	assert_string_equal(s.url[2], "wss://write.example");
	assert_true(!s.read[2] && s.write[2]);

	/* An older list changes nothing; a newer one replaces all rows. */
	relay_list(&key, 400, "[[\"r\",\"wss://old.example\"]]", &ev);
	assert_int_equal(store_author_relays_from_event(fx->st, &ev), 0);
	event_free(&ev);
	relay_list(&key, 600, "[[\"r\",\"wss://new.example\",\"read\"]]", &ev);
	assert_int_equal(store_author_relays_from_event(fx->st, &ev), 1);
	event_free(&ev);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_author_relays_each(fx->st, key.pubkey, rel_cb,
	    &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.url[0], "wss://new.example");
	assert_true(s.read[0] && !s.write[0]);
}

static int
writer_cb(const uint8_t pubkey[32], const struct store_author_relay *r,
    void *arg)
{
	struct rel_seen	*s = arg;

	s->read[s->n++] = pubkey[0];
	return 0;
}

static int
wr_cb(const char *url, int64_t authors, void *arg)
{
	struct rel_seen	*s = arg;

	snprintf(s->url[s->n], sizeof(s->url[0]), "%s", url);
	s->write[s->n++] = (int)authors;
	return 0;
}

static void
test_writers(void **state)
{
	struct fixture			*fx = *state;
	uint8_t				 f[3][32];
	struct store_author_relay	 a[] = {
		{ "wss://x.example", true, true },
		{ "wss://y.example", true, false },
	};
	struct store_author_relay	 b[] = { { "wss://x.example", false, true } };
	struct rel_seen			 s;

	pk(f[0], 1);
	pk(f[1], 2);
	pk(f[2], 3);
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    3, NULL, 0, 10, NULL), 0);
	assert_int_equal(store_author_relays_set(fx->st, f[0], a, 2, 5), 1);
	assert_int_equal(store_author_relays_set(fx->st, f[1], b, 1, 5), 1);
	assert_int_equal(store_author_relays_set(fx->st, f[2], b, 1, 5), 1);
	assert_int_equal(store_author_relays_set(fx->st, f[2], b, 1, 5), 0);
	/* Author 3 unfollowed: no longer a writer anyone subscribes to. */
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    2, NULL, 0, 20, NULL), 0);

	memset(&s, 0, sizeof(s));
	assert_int_equal(store_relay_writers_each(fx->st, "wss://x.example",
	    writer_cb, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.read[0], 1);
	assert_int_equal(s.read[1], 2);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_relay_writers_each(fx->st, "wss://y.example",
	    writer_cb, &s), 0);
	assert_int_equal(s.n, 0);

	memset(&s, 0, sizeof(s));
	assert_int_equal(store_write_relays_each(fx->st, wr_cb, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.url[0], "wss://x.example");
	assert_int_equal(s.write[0], 2);
}


static int
page_cb(const struct store_follow *f, void *arg)
{
	uint8_t	*seen = arg;

	seen[++seen[0]] = f->pubkey[0];
	return 0;
}

static void
test_page(void **state)
{
	struct fixture	*fx = *state;
	uint8_t		 f[7][32], seen[8];
	int		 i;

	for (i = 0; i < 7; i++)
		pk(f[i], (uint8_t)(7 - i));	/* 7, 6, ..., 1: sorted on read */
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    7, NULL, 0, 10, NULL), 0);
	/* 4 unfollowed: stale rows are left out of pages. */
	pk(f[3], 7);
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    7, NULL, 0, 20, NULL), 0);
	memset(seen, 0, sizeof(seen));
	assert_int_equal(store_follows_page(fx->st, 0, 3, page_cb, seen), 0);
	assert_int_equal(seen[0], 3);
	assert_int_equal(seen[1], 1);
	assert_int_equal(seen[2], 2);
	assert_int_equal(seen[3], 3);
	memset(seen, 0, sizeof(seen));
	assert_int_equal(store_follows_page(fx->st, 3, 3, page_cb, seen), 0);
	assert_int_equal(seen[0], 3);
	assert_int_equal(seen[1], 5);
	assert_int_equal(seen[2], 6);
	assert_int_equal(seen[3], 7);
	memset(seen, 0, sizeof(seen));
	assert_int_equal(store_follows_page(fx->st, 6, 3, page_cb, seen), 0);
	assert_int_equal(seen[0], 0);
}

/*
 * Store a kind 0 of author b at second at with content (JSON text); want is
 * what store_event_insert answers (STORE_INSERT_OLDER: a newer profile is
 * held, not stored; NEW or REPLACED both taken for STORE_INSERT_NEW).
 */
static void
profile_want(struct fixture *fx, uint8_t b, int64_t at, const char *content,
    int want)
{
	uint8_t			 id[32], author[32];
	struct store_event_row	 row = { 0 };
	cJSON			*ev = cJSON_CreateObject();
	char			*json;
	int			 rc;

	memset(id, 0, sizeof(id));
	memcpy(id, &at, sizeof(at));
	id[31] = b;
	pk(author, b);
	cJSON_AddStringToObject(ev, "content", content);
	json = cJSON_PrintUnformatted(ev);
	row.id = id;
	row.pubkey = author;
	row.kind = 0;
	row.created_at = at;
	row.json = json;
	row.json_len = strlen(json);
	row.source = "live";
	row.received_at = at;
	rc = store_event_insert(fx->st, &row, false);
	if (want == STORE_INSERT_NEW && rc == STORE_INSERT_REPLACED)
		rc = STORE_INSERT_NEW;
	assert_int_equal(rc, want);
	free(json);
	cJSON_Delete(ev);
}

static void
profile(struct fixture *fx, uint8_t b, int64_t at, const char *content)
{
	profile_want(fx, b, at, content, 1);
}

static void
assert_name(struct fixture *fx, uint8_t b, int rc, const char *want)
{
	char	name[STORE_NAME_MAX_BYTES + 1];
	uint8_t	k[32];

	pk(k, b);
	assert_int_equal(store_profile_name(fx->st, k, name, sizeof(name)),
	    rc);
	assert_string_equal(name, want);
}

static void
test_names(void **state)
{
	struct fixture	*fx = *state;
	char		 long_name[128], want[64];

	assert_name(fx, 1, 0, "");
	profile(fx, 1, 100, "{\"display_name\":\"\",\"name\":\"  Alice\\n \"}");
	assert_name(fx, 1, 1, "Alice");
	/* A newer profile replaces the cached name; an older one does not. */
	profile(fx, 1, 200, "{\"display_name\":\"Ally\",\"name\":\"alice\"}");
	assert_name(fx, 1, 1, "Ally");
	profile_want(fx, 1, 150, "{\"name\":\"old\"}", STORE_INSERT_OLDER);
	assert_name(fx, 1, 1, "Ally");
	/* Content that is not JSON, or names nobody. */
	profile(fx, 2, 100, "not json");
	assert_name(fx, 2, 0, "");
	profile(fx, 3, 100, "{\"about\":\"no name\",\"name\":7}");
	assert_name(fx, 3, 0, "");
	/* Cut before a character that would pass STORE_NAME_MAX_BYTES. */
	memset(want, 'x', STORE_NAME_MAX_BYTES - 1);
	want[STORE_NAME_MAX_BYTES - 1] = '\0';
	snprintf(long_name, sizeof(long_name), "{\"name\":\"%s\\u00e9z\"}",
	    want);
	profile(fx, 4, 100, long_name);
	assert_name(fx, 4, 1, want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_each_stale, setup,
		    teardown),
		cmocka_unit_test(test_normalise),
		cmocka_unit_test_setup_teardown(test_author_relays, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_writers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
