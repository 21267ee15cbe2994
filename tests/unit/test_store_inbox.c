/*
 * test_store_inbox.c — the inbox family on a real SQLite store in a temporary
 * directory: take in seq order with its row and byte limits, confirm
 * deletes and bumps the forwarded total in one transaction, dead letters
 * with reasons and retry (one or all), counts and the oldest pending row,
 * no row taken that the open transaction queued,
 * and the queue-everything pass for a new uplink target (oldest first, in
 * chunks, resumable, not queueing twice, forgotten when no uplink is set);
 * NIP-70: another author's protected event is never taken, from either
 * way into the inbox, and is counted; the cursor over withdrawn ids.
 * Events are inserted as raw rows: the inbox looks into them only for a
 * tag named "-".
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

#include <sqlite3.h>

#include "core/limits.h"
#include "store/inbox.h"
#include "store/store.h"
#include "store/store_sql.h"

#include "store_fixture.h"

/* Event n: id and pubkey are n repeated, created_at and JSON given. */
static void
put_event_json(struct fixture *f, int n, int64_t created_at,
    const char *json, bool queue)
{
	sqlite3_stmt	*s;
	uint8_t		 id[32];

	memset(id, n, sizeof(id));
	s = store_stmt(f->st, "INSERT INTO events (id, pubkey, kind, "
	    "created_at, json, source, first_relay, received_at) VALUES "
	    "(?1, ?1, 1, ?2, ?3, 'live', 'wss://r.example', 100)");
	assert_non_null(s);
	sqlite3_bind_blob(s, 1, id, 32, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, created_at);
	sqlite3_bind_text(s, 3, json, -1, SQLITE_TRANSIENT);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	store_stmt_done(s);
	if (!queue)
		return;
	s = store_stmt(f->st, "INSERT INTO inbox (event_id, enqueued_at) "
	    "VALUES (?1, 1000)");
	sqlite3_bind_blob(s, 1, id, 32, SQLITE_TRANSIENT);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	store_stmt_done(s);
}

/* Event n with the JSON {"n":n}. */
static void
put_event(struct fixture *f, int n, int64_t created_at, bool queue)
{
	char	json[64];

	snprintf(json, sizeof(json), "{\"n\":%d}", n);
	put_event_json(f, n, created_at, json, queue);
}

/* Event n, canonical JSON with the given tags (JSON text). */
static void
put_tagged(struct fixture *f, int n, int64_t created_at, const char *tags,
    bool queue)
{
	char	json[512];

	snprintf(json, sizeof(json), "{\"id\":\"%02x\",\"pubkey\":\"%02x\","
	    "\"created_at\":%lld,\"kind\":1,\"tags\":%s,\"content\":"
	    "\"say [\\\"-\\\"]\",\"sig\":\"00\"}", n, n,
	    (long long)created_at, tags);
	put_event_json(f, n, created_at, json, queue);
}

static void
take_in_order_with_limits(void **state)
{
	struct fixture		*f = *state;
	struct inbox_batch	 b = { 0 };
	int			 i;

	for (i = 1; i <= 5; i++)
		put_event(f, i, 1000 - i, true);
	assert_int_equal(store_inbox_take(f->st, 0, 3, 1 << 20, NULL, &b), 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(b.rows[i].id[0], i + 1);
		assert_int_equal(b.rows[i].created_at, 1000 - (i + 1));
		assert_string_equal(b.rows[i].source, "live");
		assert_string_equal(b.rows[i].relay, "wss://r.example");
		assert_int_equal(b.rows[i].kind, 1);
	}
	assert_string_equal(b.rows[0].json, "{\"n\":1}");
	assert_int_equal(b.rows[0].json_len, 7);
	/* after_seq skips what was taken; the byte limit stops at 2 rows. */
	assert_int_equal(store_inbox_take(f->st, b.rows[2].seq, 10, 14, NULL, &b), 2);
	assert_int_equal(b.rows[0].id[0], 4);
	/* A byte limit below one row still takes that row. */
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1, NULL, &b), 1);
	store_inbox_batch_free(&b);
}

/*
 * A row the open transaction queued is not taken until it commits: a
 * crash before the commit would take the event back after the uplink had
 * sent it. Rows committed before the transaction began are taken in it.
 */
static void
take_committed_rows_only(void **state)
{
	struct fixture		*f = *state;
	struct inbox_batch	 b = { 0 };

	put_event(f, 1, 1000, true);
	assert_int_equal(store_begin(f->st), 0);
	put_event(f, 2, 1001, true);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 1);
	assert_int_equal(b.rows[0].id[0], 1);
	/* A savepoint inside the batch does not make its rows committed. */
	assert_int_equal(store_begin(f->st), 0);
	put_event(f, 3, 1002, true);
	assert_int_equal(store_commit(f->st), 0);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 1);
	assert_int_equal(store_commit(f->st), 0);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 3);
	/* In the next transaction they are committed rows. */
	assert_int_equal(store_begin(f->st), 0);
	put_event(f, 4, 1003, true);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 3);
	assert_int_equal(b.rows[2].id[0], 3);
	/* A rolled-back row never was. */
	assert_int_equal(store_rollback(f->st), 0);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 3);
	store_inbox_batch_free(&b);
}

static void
confirm_counts_forwarded(void **state)
{
	struct fixture		*f = *state;
	struct inbox_batch	 b = { 0 };
	struct inbox_counts	 c;
	int64_t			 seqs[3];

	put_event(f, 1, 10, true);
	put_event(f, 2, 11, true);
	put_event(f, 3, 12, true);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 3);
	seqs[0] = b.rows[0].seq;
	seqs[1] = b.rows[2].seq;
	seqs[2] = b.rows[2].seq;	/* twice: counted once */
	assert_int_equal(store_inbox_confirm(f->st, seqs, 3), 2);
	assert_int_equal(store_inbox_counts(f->st, &c), 0);
	assert_int_equal(c.pending, 1);
	assert_int_equal(c.forwarded, 2);
	assert_int_equal(c.dead, 0);
	assert_int_equal(c.oldest_enqueued_at, 1000);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 1);
	assert_int_equal(b.rows[0].id[0], 2);
	seqs[0] = b.rows[0].seq;
	assert_int_equal(store_inbox_confirm(f->st, seqs, 1), 1);
	assert_int_equal(store_inbox_counts(f->st, &c), 0);
	assert_int_equal(c.forwarded, 3);
	assert_int_equal(c.pending, 0);
	assert_int_equal(c.oldest_enqueued_at, 0);
	assert_int_equal(store_inbox_has_pending(f->st), 0);
	store_inbox_batch_free(&b);
}

struct seen {
	int	n;
	int64_t	seq[8];
	char	reason[8][64];
};

static int
collect(const struct inbox_dead *d, void *arg)
{
	struct seen	*s = arg;

	s->seq[s->n] = d->seq;
	snprintf(s->reason[s->n], sizeof(s->reason[0]), "%s", d->reason);
	s->n++;
	return 0;
}

static void
dead_letters_and_retry(void **state)
{
	struct fixture		*f = *state;
	struct inbox_batch	 b = { 0 };
	struct inbox_counts	 c;
	struct seen		 seen = { 0 };
	int64_t			 s1, s2;

	put_event(f, 1, 10, true);
	put_event(f, 2, 11, true);
	put_event(f, 3, 12, true);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 3);
	s1 = b.rows[0].seq;
	s2 = b.rows[1].seq;
	assert_int_equal(store_inbox_dead(f->st, s1, "blocked: no thanks", 50), 1);
	assert_int_equal(store_inbox_dead(f->st, s2, NULL, 50), 1);
	assert_int_equal(store_inbox_dead(f->st, s2, "again", 50), 0);
	assert_int_equal(store_inbox_dead_list(f->st, 10, collect, &seen), 2);
	assert_int_equal(seen.seq[0], s1);
	assert_string_equal(seen.reason[0], "blocked: no thanks");
	assert_string_equal(seen.reason[1], "refused");
	assert_int_equal(store_inbox_counts(f->st, &c), 0);
	assert_int_equal(c.dead, 2);
	assert_int_equal(c.pending, 1);
	/* Dead rows are not taken. */
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 1);
	assert_int_equal(b.rows[0].id[0], 3);
	assert_int_equal(store_inbox_retry(f->st, s2), 1);
	assert_int_equal(store_inbox_retry(f->st, s2), 0);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 2);
	assert_int_equal(b.rows[0].seq, s2);	/* back in its old place */
	assert_int_equal(store_inbox_retry(f->st, 0), 1);
	assert_int_equal(store_inbox_counts(f->st, &c), 0);
	assert_int_equal(c.dead, 0);
	assert_int_equal(c.pending, 3);
	store_inbox_batch_free(&b);
}

static void
enqueue_everything_for_new_target(void **state)
{
	struct fixture		*f = *state;
	struct inbox_batch	 b = { 0 };
	struct inbox_counts	 c;
	int64_t			 queued, s;
	int			 i;

	/* Five stored events, one (n=3) queued already; created_at order 5..1. */
	for (i = 1; i <= 5; i++)
		put_event(f, i, 100 - i, i == 3);
	assert_int_equal(store_inbox_enqueue_active(f->st), 0);
	assert_int_equal(store_inbox_target(f->st, "postgres://a"), 1);
	assert_int_equal(store_inbox_target(f->st, "postgres://a"), 0);
	assert_int_equal(store_inbox_enqueue_active(f->st), 1);
	assert_int_equal(store_inbox_enqueue_step(f->st, 2, 7, &queued), 1);
	assert_int_equal(queued, 2);		/* n=5, n=4 */
	assert_int_equal(store_inbox_enqueue_step(f->st, 2, 7, &queued), 1);
	assert_int_equal(queued, 1);		/* n=3 was there, n=2 */
	assert_int_equal(store_inbox_enqueue_step(f->st, 2, 7, &queued), 0);
	assert_int_equal(queued, 1);		/* n=1 */
	assert_int_equal(store_inbox_enqueue_active(f->st), 0);
	assert_int_equal(store_inbox_enqueue_step(f->st, 2, 7, &queued), 0);
	assert_int_equal(queued, 0);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 5);
	assert_int_equal(b.rows[0].id[0], 3);	/* queued before the pass */
	assert_int_equal(b.rows[1].id[0], 5);	/* then oldest first */
	assert_int_equal(b.rows[2].id[0], 4);
	assert_int_equal(b.rows[3].id[0], 2);
	assert_int_equal(b.rows[4].id[0], 1);
	/* Another target: dead letters come back, the pass runs again. */
	s = b.rows[0].seq;
	assert_int_equal(store_inbox_dead(f->st, s, "invalid: x", 8), 1);
	assert_int_equal(store_inbox_target(f->st, "wss://b"), 1);
	assert_int_equal(store_inbox_counts(f->st, &c), 0);
	assert_int_equal(c.dead, 0);
	assert_int_equal(c.pending, 5);
	assert_int_equal(store_inbox_enqueue_step(f->st, 100, 9, &queued), 0);
	assert_int_equal(queued, 0);
	/* No uplink: the target is forgotten, so the next one queues again. */
	assert_int_equal(store_inbox_target_clear(f->st), 0);
	assert_int_equal(store_inbox_target(f->st, "wss://b"), 1);
	store_inbox_batch_free(&b);
}

static void
protected_test_is_exact(void **state)
{
	static const struct {
		const char	*json;
		bool		 protected;
	} cases[] = {
		{ "{\"tags\":[[\"-\"]],\"content\":\"\"}", true },
		{ "{\"tags\":[[\"e\",\"ab\"],[\"-\"]],\"content\":\"\"}",
		    true },
		{ "{\"tags\":[[\"-\",\"x\"]],\"content\":\"\"}", true },
		{ "{\"tags\":[],\"content\":\"[\\\"-\\\"]\"}", false },
		{ "{\"tags\":[[\"e\",\"-\"]],\"content\":\"\"}", false },
		{ "{\"tags\":[[\"--\"]],\"content\":\"\"}", false },
		{ "{\"tags\":[[\"t\",\"[\\\"-\\\"]\"]],\"content\":\"\"}",
		    false },
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(store_inbox_protected(cases[i].json,
		    strlen(cases[i].json)), cases[i].protected);
	assert_false(store_inbox_protected(NULL, 0));
}

static void
protected_of_others_skipped(void **state)
{
	struct fixture		*f = *state;
	struct inbox_batch	 b = { 0 };
	struct inbox_counts	 c;
	uint8_t			 self[32];

	memset(self, 3, sizeof(self));
	put_tagged(f, 1, 10, "[[\"-\"]]", true);		/* another's */
	put_tagged(f, 2, 11, "[[\"p\",\"aa\"],[\"-\"]]", true);	/* another's */
	put_tagged(f, 3, 12, "[[\"-\"]]", true);		/* the box's */
	put_tagged(f, 4, 13, "[[\"e\",\"-\"]]", true);	/* not protected */
	put_tagged(f, 5, 14, "[]", true);
	/* The first pass finds only skipped rows: it looks again. */
	assert_int_equal(store_inbox_take(f->st, 0, 2, 1 << 20, self, &b), 2);
	assert_int_equal(b.rows[0].id[0], 3);
	assert_int_equal(b.rows[1].id[0], 4);
	assert_int_equal(store_inbox_counts(f->st, &c), 0);
	assert_int_equal(c.skipped_protected, 2);
	assert_int_equal(c.pending, 3);
	assert_int_equal(c.dead, 0);
	/* Gone for good: taken again, they are not there. */
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, self, &b), 3);
	assert_int_equal(b.rows[2].id[0], 5);
	/* Without the box's key every protected event is skipped. */
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, NULL, &b), 2);
	assert_int_equal(b.rows[0].id[0], 4);
	assert_int_equal(store_inbox_counts(f->st, &c), 0);
	assert_int_equal(c.skipped_protected, 3);
	assert_int_equal(c.forwarded, 0);
	store_inbox_batch_free(&b);
}

static void
protected_of_others_skipped_after_requeue(void **state)
{
	struct fixture		*f = *state;
	struct inbox_batch	 b = { 0 };
	struct inbox_counts	 c;
	uint8_t			 self[32];
	int64_t			 queued;

	/* Stored before any uplink: the queue-everything pass queues them. */
	memset(self, 2, sizeof(self));
	put_tagged(f, 1, 10, "[[\"-\"]]", false);
	put_tagged(f, 2, 11, "[[\"-\"]]", false);
	put_tagged(f, 3, 12, "[]", false);
	assert_int_equal(store_inbox_target(f->st, "wss://owner"), 1);
	assert_int_equal(store_inbox_enqueue_step(f->st, 100, 7, &queued), 0);
	assert_int_equal(queued, 3);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, self, &b), 2);
	assert_int_equal(b.rows[0].id[0], 2);
	assert_int_equal(b.rows[1].id[0], 3);
	assert_int_equal(store_inbox_counts(f->st, &c), 0);
	assert_int_equal(c.skipped_protected, 1);
	/* A new target queues it again, and it is skipped (and counted) again. */
	assert_int_equal(store_inbox_target(f->st, "wss://other"), 1);
	assert_int_equal(store_inbox_enqueue_step(f->st, 100, 8, &queued), 0);
	assert_int_equal(queued, 1);
	assert_int_equal(store_inbox_take(f->st, 0, 10, 1 << 20, self, &b), 2);
	assert_int_equal(store_inbox_counts(f->st, &c), 0);
	assert_int_equal(c.skipped_protected, 2);
	assert_int_equal(c.pending, 2);
	store_inbox_batch_free(&b);
}

/* A tombstone of id n (n < 256: n repeated; else n's two bytes first). */
static void
put_withdrawn(struct fixture *f, int n, int64_t at)
{
	sqlite3_stmt	*s;
	uint8_t		 id[32];

	memset(id, n < 256 ? n : 0xee, sizeof(id));
	if (n >= 256) {
		id[0] = (uint8_t)(n >> 8);
		id[1] = (uint8_t)n;
	}
	s = store_stmt(f->st, "INSERT INTO withdrawn (id, pubkey, created_at, "
	    "kind, why, at) VALUES (?1, ?1, 5, 1, 2, ?2)");
	assert_non_null(s);
	sqlite3_bind_blob(s, 1, id, 32, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, at);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	store_stmt_done(s);
}

static void
withdrawn_cursor(void **state)
{
	struct fixture		*f = *state;
	struct inbox_withdrawn	*w = calloc(1, sizeof(*w));
	int			 i;

	assert_non_null(w);
	assert_int_equal(store_inbox_withdrawn_next(f->st, 100, w), 0);
	put_withdrawn(f, 7, 10);
	put_withdrawn(f, 5, 10);
	put_withdrawn(f, 1, 11);
	put_withdrawn(f, 2, 20);
	/* In (at, id) order, only before before_at. */
	assert_int_equal(store_inbox_withdrawn_next(f->st, 15, w), 3);
	assert_int_equal(w->ids[0][0], 5);
	assert_int_equal(w->ids[1][0], 7);
	assert_int_equal(w->ids[2][0], 1);
	assert_int_equal(w->last_at, 11);
	/* The cursor moves only when told. */
	assert_int_equal(store_inbox_withdrawn_next(f->st, 15, w), 3);
	assert_int_equal(store_inbox_withdrawn_done(f->st, w), 0);
	assert_int_equal(store_inbox_withdrawn_next(f->st, 15, w), 0);
	assert_int_equal(store_inbox_withdrawn_done(f->st, w), 0);
	assert_int_equal(store_inbox_withdrawn_next(f->st, 21, w), 1);
	assert_int_equal(w->ids[0][0], 2);
	assert_int_equal(store_inbox_withdrawn_done(f->st, w), 0);
	/* Bounded per call. */
	for (i = 0; i < UPLINK_WITHDRAWN_IDS + 3; i++)
		put_withdrawn(f, 256 + i, 30 + i / 2);
	assert_int_equal(store_inbox_withdrawn_next(f->st, 10000, w),
	    UPLINK_WITHDRAWN_IDS);
	assert_int_equal(store_inbox_withdrawn_done(f->st, w), 0);
	assert_int_equal(store_inbox_withdrawn_next(f->st, 10000, w), 3);
	assert_int_equal(w->ids[2][1], (uint8_t)(256 + UPLINK_WITHDRAWN_IDS + 2));
	free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(take_in_order_with_limits,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(take_committed_rows_only,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(confirm_counts_forwarded,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(dead_letters_and_retry,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(enqueue_everything_for_new_target,
		    setup, teardown),
		cmocka_unit_test(protected_test_is_exact),
		cmocka_unit_test_setup_teardown(protected_of_others_skipped,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    protected_of_others_skipped_after_requeue, setup, teardown),
		cmocka_unit_test_setup_teardown(withdrawn_cursor, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
