/*
 * test_ingest.c — the ingest path on a real SQLite store in a temporary
 * directory, with events signed here: each outcome (new, duplicate,
 * invalid signature, wrong id, malformed, too large, unrequested) with its
 * exact counters; a duplicate costs no signature check even when its
 * signature is forged, and reports the stored author, time and kind (a
 * copy claiming others is invalid, and never moves live's since); writes stay invisible to another connection until
 * the loop commits the batch (once old or large enough, or at its
 * deadline when the loop is idle); a cursor written into the batch commits
 * or vanishes together with the batch's events (a child process dies
 * before the commit).
 */
#define _XOPEN_SOURCE 700	/* nftw */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/loop.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "nostr/key.h"
#include "relay/msg.h"
#include "store/cursors.h"
#include "store/events.h"
#include "store/history.h"
#include "store/store.h"
#include "store/store_sql.h"
#include "sync/ingest.h"

#define RELAY	"wss://relay.example.com"

struct fixture {
	char			 dir[64];
	char			 db[128];
	struct store		*st;
	struct ingest		*ing;
	struct nostr_key	 key, other;
};

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

static int
setup(void **state)
{
	struct fixture	*fx = calloc(1, sizeof(*fx));
	uint8_t		 sk[32];
	char		 err[256];

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_ingest.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->db, sizeof(fx->db), "%s/cachebox.db", fx->dir);
	assert_int_equal(store_open(&fx->st, fx->dir, err, sizeof(err)), 0);
	fx->ing = ingest_new(NULL, fx->st);
	assert_non_null(fx->ing);
	memset(sk, 0x11, sizeof(sk));
	assert_int_equal(key_from_secret(&fx->key, sk), 0);
	memset(sk, 0x22, sizeof(sk));
	assert_int_equal(key_from_secret(&fx->other, sk), 0);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	ingest_free(fx->ing);
	store_close(fx->st);
	nftw(fx->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* A signed event as canonical JSON (malloc'd); its id into id if set. */
static char *
make_event(const struct nostr_key *key, uint32_t kind, int64_t at,
    const char *content, uint8_t *id)
{
	struct event	ev;
	struct buf	b;
	char		*s;

	assert_int_equal(event_create(&ev, key, kind, at, NULL, content),
	    EVENT_OK);
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(event_to_json(&ev, &b), 0);
	s = strdup(buf_cstr(&b));
	assert_non_null(s);
	if (id != NULL)
		memcpy(id, ev.id, 32);
	buf_free(&b);
	event_free(&ev);
	return s;
}

/* Flip one hex digit of the signature (the last one). */
static void
corrupt_sig(char *json)
{
	char	*p = strstr(json, "\"sig\":\"");

	assert_non_null(p);
	p += 7 + 127;
	*p = *p == '0' ? '1' : '0';
}

static enum ingest_result
feed(struct fixture *fx, const char *json, const struct filter *f, size_t nf)
{
	return ingest_event_json(fx->ing, json, strlen(json), f, nf,
	    INGEST_BACKFILL, RELAY, NULL);
}

static int64_t
events_in_store(struct fixture *fx)
{
	int64_t	count, bytes;

	assert_int_equal(store_events_totals(fx->st, &count, &bytes), 0);
	return count;
}

static void
assert_stats(const struct ingest_stats *s, uint64_t received,
    uint64_t stored, uint64_t dup, uint64_t invalid, uint64_t too_large,
    uint64_t unrequested, uint64_t sig_checks)
{
	assert_int_equal(s->received, received);
	assert_int_equal(s->stored, stored);
	assert_int_equal(s->duplicates, dup);
	assert_int_equal(s->invalid, invalid);
	assert_int_equal(s->too_large, too_large);
	assert_int_equal(s->unrequested, unrequested);
	assert_int_equal(s->errors, 0);
	assert_int_equal(s->sig_checks, sig_checks);
}

static void
test_new_then_duplicate(void **state)
{
	struct fixture		*fx = *state;
	const struct ingest_stats *s = ingest_stats(fx->ing);
	uint8_t			 id[32];
	char			*json = make_event(&fx->key, 1, 1700000000,
				    "hello", id);
	struct ingest_info	 info;
	struct buf		 got;

	assert_int_equal(ingest_event_json(fx->ing, json, strlen(json), NULL,
	    0, INGEST_LIVE, RELAY, &info), INGEST_NEW);
	assert_memory_equal(info.id, id, 32);
	assert_memory_equal(info.pubkey, fx->key.pubkey, 32);
	assert_int_equal(info.created_at, 1700000000);
	assert_int_equal(info.kind, 1);
	assert_stats(s, 1, 1, 0, 0, 0, 0, 1);
	assert_int_equal(s->bytes_stored, strlen(json));
	assert_true(ingest_tx_open(fx->ing));
	assert_int_equal(s->transactions, 0);
	assert_int_equal(ingest_flush(fx->ing), 0);
	assert_false(ingest_tx_open(fx->ing));
	assert_int_equal(s->transactions, 1);

	/* The stored row is the canonical JSON, source and relay recorded. */
	buf_init(&got, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(store_event_get(fx->st, id, &got), 1);
	assert_string_equal(buf_cstr(&got), json);
	buf_free(&got);

	assert_int_equal(feed(fx, json, NULL, 0), INGEST_DUPLICATE);
	assert_stats(s, 2, 1, 1, 0, 0, 0, 1);
	assert_false(ingest_tx_open(fx->ing));
	assert_int_equal(events_in_store(fx), 1);
	free(json);
}

/*
 * A duplicate whose signature is forged is still a duplicate, and no
 * signature is checked: once from the recent-id set, once (a fresh ingest
 * with an empty set) from the store's primary key.
 */
static void
test_duplicate_skips_signature(void **state)
{
	struct fixture		*fx = *state;
	const struct ingest_stats *s;
	char			*json = make_event(&fx->key, 1, 1700000001,
				    "dup", NULL);

	assert_int_equal(feed(fx, json, NULL, 0), INGEST_NEW);
	assert_int_equal(ingest_flush(fx->ing), 0);
	corrupt_sig(json);
	assert_int_equal(feed(fx, json, NULL, 0), INGEST_DUPLICATE);
	s = ingest_stats(fx->ing);
	assert_stats(s, 2, 1, 1, 0, 0, 0, 1);

	ingest_free(fx->ing);
	fx->ing = ingest_new(NULL, fx->st);
	assert_non_null(fx->ing);
	s = ingest_stats(fx->ing);
	assert_int_equal(feed(fx, json, NULL, 0), INGEST_DUPLICATE);
	assert_int_equal(feed(fx, json, NULL, 0), INGEST_DUPLICATE);
	assert_stats(s, 2, 0, 2, 0, 0, 0, 0);
	assert_int_equal(events_in_store(fx), 1);
	free(json);
}

/* Replace the first occurrence of from in json (malloc'd) by to. */
static char *
replaced(const char *json, const char *from, const char *to)
{
	const char	*p = strstr(json, from);
	char		*out;
	size_t		 n;

	assert_non_null(p);
	n = strlen(json) - strlen(from) + strlen(to) + 1;
	out = malloc(n);
	assert_non_null(out);
	snprintf(out, n, "%.*s%s%s", (int)(p - json), json, to,
	    p + strlen(from));
	return out;
}

/*
 * A stored id replayed with another created_at or pubkey: the caller
 * (the drain's cursor, live's since) never sees the forged values; the
 * copy is invalid and, like any duplicate, costs no signature check,
 * whether the id is found in the recent-id set or in the store. An honest
 * duplicate reports the stored fields.
 */
static void
test_duplicate_forged_claims(void **state)
{
	struct fixture		*fx = *state;
	const struct ingest_stats *s;
	struct ingest_info	 info;
	char			 mine[65], theirs[65], *json, *early, *late,
				*who;
	int64_t			 newest = -1;
	int			 round;

	json = make_event(&fx->key, 1, 1700000000, "replayed", NULL);
	early = replaced(json, "\"created_at\":1700000000",
	    "\"created_at\":1");
	late = replaced(json, "\"created_at\":1700000000",
	    "\"created_at\":1700000500");
	hex_encode(fx->key.pubkey, 32, mine, sizeof(mine));
	hex_encode(fx->other.pubkey, 32, theirs, sizeof(theirs));
	who = replaced(json, mine, theirs);
	assert_int_equal(feed(fx, json, NULL, 0), INGEST_NEW);
	assert_int_equal(ingest_flush(fx->ing), 0);

	for (round = 0; round < 2; round++) {
		s = ingest_stats(fx->ing);
		memset(&info, 0, sizeof(info));
		assert_int_not_equal(ingest_event_json(fx->ing, early,
		    strlen(early), NULL, 0, INGEST_BACKFILL, RELAY, &info),
		    INGEST_DUPLICATE);
		assert_int_not_equal(info.created_at, 1);
		memset(&info, 0, sizeof(info));
		assert_int_equal(ingest_event_json(fx->ing, who, strlen(who),
		    NULL, 0, INGEST_BACKFILL, RELAY, &info), INGEST_INVALID);
		assert_memory_not_equal(info.pubkey, fx->other.pubkey, 32);
		/* Live: a forged created_at never becomes the relay's since. */
		assert_int_equal(ingest_event_json(fx->ing, late, strlen(late),
		    NULL, 0, INGEST_LIVE, RELAY, &info), INGEST_INVALID);
		assert_int_equal(ingest_tx(fx->ing), 0);
		assert_int_equal(ingest_flush(fx->ing), 0);
		assert_int_equal(store_relay_newest_get(fx->st, RELAY, &newest),
		    0);
		assert_int_equal(newest, 0);
		assert_int_equal(s->invalid, 3);
		assert_int_equal(s->sig_checks, round == 0 ? 1 : 0);

		/* The honest copy: a duplicate with the stored fields. */
		memset(&info, 0, sizeof(info));
		assert_int_equal(ingest_event_json(fx->ing, json, strlen(json),
		    NULL, 0, INGEST_BACKFILL, RELAY, &info), INGEST_DUPLICATE);
		assert_int_equal(info.created_at, 1700000000);
		assert_memory_equal(info.pubkey, fx->key.pubkey, 32);
		assert_int_equal(info.kind, 1);
		assert_int_equal(s->duplicates, 1);

		/* Round two: a fresh ingest, the store's lookup only. */
		ingest_free(fx->ing);
		fx->ing = ingest_new(NULL, fx->st);
		assert_non_null(fx->ing);
	}
	assert_int_equal(events_in_store(fx), 1);
	free(json);
	free(early);
	free(late);
	free(who);
}

/* The one integer sql answers on db. */
static int64_t
other_count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*q;
	int64_t		 v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/*
 * A batch the disk cannot hold: SQLite rolls it back by itself at the
 * failing insert, the commit fails, and the batch is counted lost (the
 * drain's step compares that count at EOSE before moving a cursor). The
 * next batch stores normally.
 */
static void
test_lost_batch_counted(void **state)
{
	struct fixture	*fx = *state;
	char		 sql[64], content[3001], *json;
	enum ingest_result r = INGEST_NEW;
	int		 i;

	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
	    (long long)other_count(store_db(fx->st), "PRAGMA page_count") + 6);
	assert_int_equal(store_exec(fx->st, sql), 0);
	memset(content, 'z', sizeof(content) - 1);
	content[sizeof(content) - 1] = '\0';
	for (i = 0; i < 200 && r == INGEST_NEW; i++) {
		json = make_event(&fx->key, 1, 1700000100 + i, content, NULL);
		r = feed(fx, json, NULL, 0);
		free(json);
	}
	assert_int_equal(r, INGEST_ERROR);
	assert_int_equal(ingest_stats(fx->ing)->lost_batches, 0);
	assert_int_equal(ingest_flush(fx->ing), -1);
	assert_int_equal(ingest_stats(fx->ing)->lost_batches, 1);
	assert_int_equal(events_in_store(fx), 0);

	assert_int_equal(store_exec(fx->st, "PRAGMA max_page_count = "
	    "1000000"), 0);
	json = make_event(&fx->key, 1, 1700000999, "after", NULL);
	assert_int_equal(feed(fx, json, NULL, 0), INGEST_NEW);
	free(json);
	assert_int_equal(ingest_flush(fx->ing), 0);
	assert_int_equal(ingest_stats(fx->ing)->lost_batches, 1);
	assert_int_equal(events_in_store(fx), 1);
}

static void
test_invalid(void **state)
{
	struct fixture		*fx = *state;
	const struct ingest_stats *s = ingest_stats(fx->ing);
	char			*bad_sig = make_event(&fx->key, 1, 1700000002,
				    "signed", NULL);
	char			*bad_id = make_event(&fx->key, 1, 1700000003,
				    "hello", NULL);
	char			*p;
	static const char	 garbage[] = "{\"id\":\"zz\",\"kind\":1}";

	corrupt_sig(bad_sig);
	assert_int_equal(feed(fx, bad_sig, NULL, 0), INGEST_INVALID);
	assert_stats(s, 1, 0, 0, 1, 0, 0, 1);

	/* Content changed after signing: the id check fails first. */
	p = strstr(bad_id, "\"hello\"");
	assert_non_null(p);
	p[1] = 'j';
	assert_int_equal(feed(fx, bad_id, NULL, 0), INGEST_INVALID);
	assert_stats(s, 2, 0, 0, 2, 0, 0, 1);

	assert_int_equal(feed(fx, garbage, NULL, 0), INGEST_INVALID);
	assert_int_equal(feed(fx, "[1,2]", NULL, 0), INGEST_INVALID);
	assert_int_equal(feed(fx, "{not json", NULL, 0), INGEST_INVALID);
	assert_stats(s, 5, 0, 0, 5, 0, 0, 1);
	assert_false(ingest_tx_open(fx->ing));
	assert_int_equal(events_in_store(fx), 0);
	free(bad_sig);
	free(bad_id);
}

static void
test_too_large(void **state)
{
	struct fixture		*fx = *state;
	const struct ingest_stats *s = ingest_stats(fx->ing);
	char			 content[400];
	char			*big, *small;
	size_t			 len;

	memset(content, 'x', sizeof(content) - 1);
	content[sizeof(content) - 1] = '\0';
	big = make_event(&fx->key, 1, 1700000004, content, NULL);
	small = make_event(&fx->key, 1, 1700000005, "s", NULL);
	len = strlen(big);
	ingest_configure(fx->ing, len - 1, false);
	assert_int_equal(feed(fx, big, NULL, 0), INGEST_TOO_LARGE);
	assert_stats(s, 1, 0, 0, 0, 1, 0, 0);
	assert_int_equal(feed(fx, small, NULL, 0), INGEST_NEW);
	ingest_configure(fx->ing, len, false);
	assert_int_equal(feed(fx, big, NULL, 0), INGEST_NEW);
	assert_stats(s, 3, 2, 0, 0, 1, 0, 2);
	free(big);
	free(small);
}

static void
test_unrequested(void **state)
{
	struct fixture		*fx = *state;
	const struct ingest_stats *s = ingest_stats(fx->ing);
	struct filter		 f[2];
	char			 text[200], hex[65], err[128];
	char			*mine = make_event(&fx->key, 1, 1700000006, "m",
				    NULL);
	char			*theirs = make_event(&fx->other, 1, 1700000007,
				    "t", NULL);
	char			*kind7 = make_event(&fx->key, 7, 1700000008,
				    "+", NULL);

	hex_encode(fx->key.pubkey, 32, hex, sizeof(hex));
	snprintf(text, sizeof(text), "{\"authors\":[\"%s\"],\"kinds\":[1]}",
	    hex);
	assert_int_equal(filter_parse_text(&f[0], text, strlen(text), err,
	    sizeof(err)), 0);
	assert_int_equal(filter_parse_text(&f[1], "{\"kinds\":[30023]}",
	    strlen("{\"kinds\":[30023]}"), err, sizeof(err)), 0);
	assert_int_equal(feed(fx, theirs, f, 2), INGEST_UNREQUESTED);
	assert_int_equal(feed(fx, kind7, f, 2), INGEST_UNREQUESTED);
	assert_int_equal(feed(fx, mine, f, 2), INGEST_NEW);
	/* The filter comes before the signature: only mine was verified. */
	assert_stats(s, 3, 1, 0, 0, 0, 2, 1);
	assert_int_equal(ingest_flush(fx->ing), 0);
	assert_int_equal(events_in_store(fx), 1);
	filter_free(&f[0]);
	filter_free(&f[1]);
	free(mine);
	free(theirs);
	free(kind7);
}

/* Through a parsed relay frame, as the pool hands it over. */
static void
test_relay_message(void **state)
{
	struct fixture		*fx = *state;
	struct relay_msg	 msg;
	struct ingest_info	 info;
	uint8_t			 id[32];
	char			*json = make_event(&fx->key, 1, 1700000009,
				    "via frame", id);
	char			 frame[1024];
	int64_t			 newest;

	snprintf(frame, sizeof(frame), "[\"EVENT\", \"s1\", %s]", json);
	assert_int_equal(relay_msg_parse(&msg, frame, strlen(frame),
	    sizeof(frame)), RELAY_MSG_PARSED);
	assert_int_equal(ingest_event(fx->ing, &msg, NULL, 0, INGEST_LIVE,
	    RELAY, &info), INGEST_NEW);
	relay_msg_free(&msg);
	assert_memory_equal(info.id, id, 32);
	assert_int_equal(relay_msg_parse(&msg, frame, strlen(frame),
	    sizeof(frame)), RELAY_MSG_PARSED);
	assert_int_equal(ingest_event(fx->ing, &msg, NULL, 0, INGEST_LIVE,
	    RELAY, &info), INGEST_DUPLICATE);
	relay_msg_free(&msg);
	assert_memory_equal(info.id, id, 32);
	assert_int_equal(info.created_at, 1700000009);
	assert_stats(ingest_stats(fx->ing), 2, 1, 1, 0, 0, 0, 1);

	/* The newest live event per relay is written with the batch. */
	assert_int_equal(store_relay_newest_get(fx->st, RELAY, &newest), 0);
	assert_int_equal(newest, 0);
	assert_int_equal(ingest_flush(fx->ing), 0);
	assert_int_equal(store_relay_newest_get(fx->st, RELAY, &newest), 0);
	assert_int_equal(newest, 1700000009);
	free(json);
}

static void
test_inbox_when_uplink(void **state)
{
	struct fixture	*fx = *state;
	char		*a = make_event(&fx->key, 1, 1700000010, "a", NULL);
	char		*b = make_event(&fx->key, 1, 1700000011, "b", NULL);
	sqlite3_stmt	*q;

	assert_int_equal(feed(fx, a, NULL, 0), INGEST_NEW);
	ingest_configure(fx->ing, 0, true);
	assert_int_equal(feed(fx, b, NULL, 0), INGEST_NEW);
	assert_int_equal(feed(fx, b, NULL, 0), INGEST_DUPLICATE);
	assert_int_equal(ingest_flush(fx->ing), 0);
	q = store_stmt(fx->st, "SELECT count(*) FROM inbox");
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(q, 0), 1);
	store_stmt_done(q);
	free(a);
	free(b);
}

/* An ingest on a new loop, with the given commit policy. */
static struct loop *
loop_ingest(struct fixture *fx, uint64_t min_ms, size_t events)
{
	struct loop	*loop = loop_new();

	assert_non_null(loop);
	ingest_free(fx->ing);
	fx->ing = ingest_new(loop, fx->st);
	assert_non_null(fx->ing);
	ingest_commit_policy(fx->ing, min_ms, events);
	return loop;
}

/*
 * The batch is one transaction, invisible to another connection until it
 * commits. A young, small batch outlives the rounds that follow it (a
 * minute and 1,000 events here, so no machine is slow enough to age it).
 */
static void
test_loop_keeps_young_batches(void **state)
{
	struct fixture	*fx = *state;
	struct loop	*loop = loop_ingest(fx, 60000, 1000);
	sqlite3		*db2;
	char		*e[2];
	int		 i, t;

	for (i = 0; i < 2; i++)
		e[i] = make_event(&fx->key, 1, 1700000020 + i, "round", NULL);
	assert_int_equal(sqlite3_open(fx->db, &db2), SQLITE_OK);
	assert_int_equal(loop_poll_timeout(loop, -1), -1);
	assert_int_equal(feed(fx, e[0], NULL, 0), INGEST_NEW);
	assert_int_equal(feed(fx, e[1], NULL, 0), INGEST_NEW);
	for (i = 0; i < 3; i++)
		assert_int_equal(loop_run_once(loop, 0), 0);
	/* Its deadline is armed and is the loop's only one. */
	t = loop_poll_timeout(loop, -1);
	assert_true(t > 0 && t <= 60000);
	assert_true(ingest_tx_open(fx->ing));
	assert_int_equal(other_count(db2, "SELECT count(*) FROM events"), 0);
	assert_int_equal(ingest_stats(fx->ing)->transactions, 0);
	/* An explicit flush commits at once and disarms the deadline. */
	assert_int_equal(ingest_flush(fx->ing), 0);
	assert_int_equal(other_count(db2, "SELECT count(*) FROM events"), 2);
	assert_int_equal(other_count(db2, "SELECT count FROM event_totals"),
	    2);
	assert_int_equal(ingest_stats(fx->ing)->transactions, 1);
	assert_int_equal(loop_poll_timeout(loop, -1), -1);
	/* Rounds without events commit nothing and arm nothing. */
	assert_int_equal(loop_run_once(loop, 0), 0);
	assert_int_equal(ingest_stats(fx->ing)->transactions, 1);
	assert_int_equal(loop_poll_timeout(loop, -1), -1);
	sqlite3_close(db2);
	ingest_free(fx->ing);
	fx->ing = NULL;
	loop_free(loop);
	for (i = 0; i < 2; i++)
		free(e[i]);
}

/*
 * With nothing else to do the loop sleeps until the batch's deadline and
 * commits it there: an idle box never holds a batch open for long.
 */
static void
test_loop_commits_at_deadline(void **state)
{
	struct fixture	*fx = *state;
	struct loop	*loop = loop_ingest(fx, 50, 1000);
	sqlite3		*db2;
	char		*e = make_event(&fx->key, 1, 1700000030, "idle", NULL);
	int		 rounds = 0;

	assert_int_equal(sqlite3_open(fx->db, &db2), SQLITE_OK);
	assert_int_equal(feed(fx, e, NULL, 0), INGEST_NEW);
	while (ingest_tx_open(fx->ing)) {
		assert_true(loop_poll_timeout(loop, -1) >= 0);
		assert_int_equal(loop_run_once(loop, -1), 0);
		assert_true(++rounds < 1000);
	}
	assert_int_equal(other_count(db2, "SELECT count(*) FROM events"), 1);
	assert_int_equal(ingest_stats(fx->ing)->transactions, 1);
	assert_int_equal(loop_poll_timeout(loop, -1), -1);
	sqlite3_close(db2);
	ingest_free(fx->ing);
	fx->ing = NULL;
	loop_free(loop);
	free(e);
}

/*
 * A batch that holds the policy's number of events commits at the top of
 * the next round, however young; one event fewer waits.
 */
static void
test_loop_commits_large_batches(void **state)
{
	struct fixture	*fx = *state;
	struct loop	*loop = loop_ingest(fx, 60000, 3);
	sqlite3		*db2;
	char		*e[4];
	int		 i;

	for (i = 0; i < 4; i++)
		e[i] = make_event(&fx->key, 1, 1700000040 + i, "bulk", NULL);
	assert_int_equal(sqlite3_open(fx->db, &db2), SQLITE_OK);
	assert_int_equal(feed(fx, e[0], NULL, 0), INGEST_NEW);
	assert_int_equal(feed(fx, e[1], NULL, 0), INGEST_NEW);
	/* A duplicate is no pending event. */
	assert_int_equal(feed(fx, e[1], NULL, 0), INGEST_DUPLICATE);
	assert_int_equal(loop_run_once(loop, 0), 0);
	assert_true(ingest_tx_open(fx->ing));
	assert_int_equal(feed(fx, e[2], NULL, 0), INGEST_NEW);
	assert_int_equal(other_count(db2, "SELECT count(*) FROM events"), 0);
	assert_int_equal(loop_run_once(loop, 0), 0);
	assert_false(ingest_tx_open(fx->ing));
	assert_int_equal(other_count(db2, "SELECT count(*) FROM events"), 3);
	assert_int_equal(ingest_stats(fx->ing)->transactions, 1);
	assert_int_equal(loop_poll_timeout(loop, -1), -1);
	/* The next batch starts counting from zero. */
	assert_int_equal(feed(fx, e[3], NULL, 0), INGEST_NEW);
	assert_int_equal(loop_run_once(loop, 0), 0);
	assert_true(ingest_tx_open(fx->ing));
	/* Freeing the ingest commits what it holds. */
	ingest_free(fx->ing);
	fx->ing = NULL;
	assert_int_equal(other_count(db2, "SELECT count(*) FROM events"), 4);
	sqlite3_close(db2);
	loop_free(loop);
	for (i = 0; i < 4; i++)
		free(e[i]);
}

/*
 * A drain page: its events and the cursor it moves go into one batch. A
 * child process that dies before the commit leaves neither; the same
 * steps with the round ended leave both.
 */
static void
page_then_maybe_die(struct fixture *fx, const char *json, bool commit)
{
	assert_int_equal(store_cursor_ensure(fx->st, fx->key.pubkey, RELAY,
	    1700000100), 1);
	assert_int_equal(ingest_flush(fx->ing), 0);
	assert_int_equal(feed(fx, json, NULL, 0), INGEST_NEW);
	assert_int_equal(ingest_tx(fx->ing), 0);
	assert_int_equal(store_cursor_page(fx->st, fx->key.pubkey, RELAY,
	    1700000030, 1, 1, 1700000101), 0);
	if (commit)
		assert_int_equal(ingest_flush(fx->ing), 0);
}

static void
test_cursor_commits_with_events(void **state)
{
	struct fixture		*fx = *state;
	struct store_cursor	 c;
	uint8_t			 id[32];
	char			*json = make_event(&fx->key, 1, 1700000030,
				    "page", id);
	char			 err[256];
	pid_t			 pid;
	int			 status;

	/* No SQLite connection crosses the fork: each side opens its own. */
	ingest_free(fx->ing);
	store_close(fx->st);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (store_open(&fx->st, fx->dir, err, sizeof(err)) == -1 ||
		    (fx->ing = ingest_new(NULL, fx->st)) == NULL)
			_exit(2);
		page_then_maybe_die(fx, json, false);
		_exit(0);	/* a crash: no commit, no cleanup */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(store_open(&fx->st, fx->dir, err, sizeof(err)), 0);
	fx->ing = ingest_new(NULL, fx->st);
	assert_non_null(fx->ing);
	assert_int_equal(store_event_exists(fx->st, id), 0);
	assert_int_equal(store_cursor_get(fx->st, fx->key.pubkey, RELAY, &c),
	    1);
	assert_false(c.started);
	assert_int_equal(c.pages, 0);

	/* ensure returns 0 now (the row committed before the page). */
	assert_int_equal(store_cursor_ensure(fx->st, fx->key.pubkey, RELAY,
	    1700000100), 0);
	assert_int_equal(feed(fx, json, NULL, 0), INGEST_NEW);
	assert_int_equal(ingest_tx(fx->ing), 0);
	assert_int_equal(store_cursor_page(fx->st, fx->key.pubkey, RELAY,
	    1700000030, 1, 1, 1700000101), 0);
	assert_int_equal(ingest_flush(fx->ing), 0);
	assert_int_equal(store_event_exists(fx->st, id), 1);
	assert_int_equal(store_cursor_get(fx->st, fx->key.pubkey, RELAY, &c),
	    1);
	assert_true(c.started);
	assert_int_equal(c.until_cursor, 1700000030);
	assert_int_equal(c.pages, 1);
	free(json);
}

/* Writes made while someone else's transaction is open join it. */
static void
test_joins_outer_transaction(void **state)
{
	struct fixture	*fx = *state;
	uint8_t		 id[32];
	char		*json = make_event(&fx->key, 1, 1700000040, "outer", id);

	assert_int_equal(store_begin(fx->st), 0);
	assert_int_equal(feed(fx, json, NULL, 0), INGEST_NEW);
	assert_false(ingest_tx_open(fx->ing));
	assert_int_equal(store_rollback(fx->st), 0);
	assert_int_equal(store_event_exists(fx->st, id), 0);
	assert_int_equal(store_tx_depth(fx->st), 0);
	free(json);
}

/* Pending history: the committed count and the open batch's, summed. */
static int64_t
history_pending(struct fixture *fx)
{
	int64_t	start[2], count[2], sum = 0;
	size_t	i, n = ingest_history_pending(fx->ing, start, count);

	for (i = 0; i < n; i++) {
		assert_true(start[i] % INGEST_HISTORY_BUCKET_S == 0);
		sum += count[i];
	}
	return sum;
}

static int
count_rows(int64_t start, int64_t stored, void *arg)
{
	(void)start; (void)stored;
	++*(int *)arg;
	return 0;
}

/*
 * The stored-events history: counted in memory (the open batch, then the
 * committed bucket), written to ingest_history by ingest_free, so a new
 * ingest (a restart) reads it from the store; a duplicate is not counted;
 * a bucket older than INGEST_HISTORY_S is deleted by the next write.
 */
static void
test_history_survives_restart(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 now = clock_wall_s(), sum, oldest;
	char		*e[3];
	int		 i, rows = 0;

	for (i = 0; i < 3; i++) {
		e[i] = make_event(&fx->key, 1, now - 10 - i, "history", NULL);
		assert_int_equal(feed(fx, e[i], NULL, 0), INGEST_NEW);
	}
	assert_int_equal(feed(fx, e[0], NULL, 0), INGEST_DUPLICATE);
	assert_int_equal(history_pending(fx), 3);
	assert_int_equal(ingest_flush(fx->ing), 0);
	assert_int_equal(history_pending(fx), 3);
	ingest_free(fx->ing);
	assert_int_equal(store_history_sum(fx->st, 0, &sum, &oldest), 0);
	assert_int_equal(sum, 3);
	assert_true(oldest > now - 2 * INGEST_HISTORY_BUCKET_S);
	assert_int_equal(store_history_each(fx->st, 0, count_rows, &rows), 0);
	assert_int_equal(rows, 1);
	fx->ing = ingest_new(NULL, fx->st);
	assert_non_null(fx->ing);
	assert_int_equal(history_pending(fx), 0);

	/* An old bucket goes with the next write. */
	assert_int_equal(store_begin(fx->st), 0);
	assert_int_equal(store_history_add(fx->st, oldest -
	    INGEST_HISTORY_S - INGEST_HISTORY_BUCKET_S, 5, 0), 0);
	assert_int_equal(store_history_add(fx->st, oldest, 2,
	    oldest - INGEST_HISTORY_S), 0);
	assert_int_equal(store_commit(fx->st), 0);
	assert_int_equal(store_history_sum(fx->st, 0, &sum, &oldest), 0);
	assert_int_equal(sum, 5);
	for (i = 0; i < 3; i++)
		free(e[i]);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(ingest_result_name(INGEST_NEW), "new");
	assert_string_equal(ingest_result_name(INGEST_UNREQUESTED),
	    "unrequested");
	assert_string_equal(ingest_result_name((enum ingest_result)99), "?");
	assert_string_equal(ingest_source_name(INGEST_RECOVERY), "recovery");
}

/* A signed event of kind with one expiration tag at exp (malloc'd JSON). */
static char *
make_expiring(const struct nostr_key *key, uint32_t kind, int64_t at,
    int64_t exp)
{
	struct event	 ev;
	struct buf	 b;
	cJSON		*tags = cJSON_CreateArray(), *t = cJSON_CreateArray();
	char		 v[32], *s;

	snprintf(v, sizeof(v), "%lld", (long long)exp);
	cJSON_AddItemToArray(t, cJSON_CreateString("expiration"));
	cJSON_AddItemToArray(t, cJSON_CreateString(v));
	cJSON_AddItemToArray(tags, t);
	assert_int_equal(event_create(&ev, key, kind, at, tags, "x"),
	    EVENT_OK);
	cJSON_Delete(tags);
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(event_to_json(&ev, &b), 0);
	s = strdup(buf_cstr(&b));
	assert_non_null(s);
	buf_free(&b);
	event_free(&ev);
	return s;
}

/*
 * Each rule's count, apart from real duplicates: a newer profile replaces
 * the one held (replaced), an older one arriving later is not stored
 * (superseded, a duplicate to the caller with not_kept OLDER), an event
 * expired on arrival is not stored (expired), an ephemeral one is told
 * and not stored (ephemeral); a copy of a stored id is the only
 * duplicate.
 */
static void
test_rule_counts(void **state)
{
	struct fixture		*fx = *state;
	const struct ingest_stats *s = ingest_stats(fx->ing);
	struct ingest_info	 info;
	char			*p1 = make_event(&fx->key, 0, 1700000000, "a", NULL);
	char			*p2 = make_event(&fx->key, 0, 1700000100, "b", NULL);
	char			*eph = make_event(&fx->key, 20001, 1700000000,
				    "e", NULL);
	char			*gone = make_expiring(&fx->key, 1, 1700000000,
				    1700000001);
	char			*later = make_expiring(&fx->key, 1, 1700000000,
				    4000000000LL);
	uint64_t		 sigs;

	assert_int_equal(feed(fx, p2, NULL, 0), INGEST_NEW);
	assert_int_equal(ingest_event_json(fx->ing, p1, strlen(p1), NULL, 0,
	    INGEST_BACKFILL, RELAY, &info), INGEST_DUPLICATE);
	assert_int_equal(info.not_kept, STORE_INSERT_OLDER);
	assert_int_equal(s->superseded, 1);
	assert_int_equal(s->duplicates, 0);
	/*
	 * Seen again: refused by its tombstone (no second signature check),
	 * counted as withdrawn, not as a second supersede nor a duplicate.
	 */
	sigs = s->sig_checks;
	assert_int_equal(ingest_event_json(fx->ing, p1, strlen(p1), NULL, 0,
	    INGEST_BACKFILL, RELAY, &info), INGEST_DUPLICATE);
	assert_int_equal(info.not_kept, STORE_INSERT_OLDER);
	assert_int_equal(s->superseded, 1);
	assert_int_equal(s->withdrawn, 1);
	assert_int_equal(s->duplicates, 0);
	assert_int_equal(s->sig_checks, sigs);
	assert_int_equal(events_in_store(fx), 1);
	free(p1);
	free(p2);
	/* The other order: the newer replaces the one held. */
	p1 = make_event(&fx->other, 0, 1700000000, "a", NULL);
	p2 = make_event(&fx->other, 0, 1700000100, "b", NULL);
	assert_int_equal(feed(fx, p1, NULL, 0), INGEST_NEW);
	assert_int_equal(feed(fx, p2, NULL, 0), INGEST_NEW);
	assert_int_equal(s->replaced, 1);
	assert_int_equal(events_in_store(fx), 2);

	assert_int_equal(ingest_event_json(fx->ing, gone, strlen(gone), NULL,
	    0, INGEST_BACKFILL, RELAY, &info), INGEST_DUPLICATE);
	assert_int_equal(info.not_kept, STORE_INSERT_EXPIRED);
	assert_int_equal(s->expired, 1);
	assert_int_equal(feed(fx, later, NULL, 0), INGEST_NEW);
	assert_int_equal(feed(fx, eph, NULL, 0), INGEST_NEW);
	assert_int_equal(s->ephemeral, 1);
	assert_int_equal(events_in_store(fx), 3);
	assert_int_equal(s->stored, 4);
	assert_int_equal(s->duplicates, 0);
	assert_int_equal(s->withdrawn, 1);
	assert_int_equal(s->received, 8);
	free(p1);
	free(p2);
	free(eph);
	free(gone);
	free(later);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_then_duplicate, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_skips_signature,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_forged_claims,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unrequested, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_relay_message, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_inbox_when_uplink, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_loop_keeps_young_batches,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop_commits_at_deadline,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop_commits_large_batches,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_cursor_commits_with_events,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_joins_outer_transaction,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_batch_counted, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_history_survives_restart,
		    setup, teardown),
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_rule_counts, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
