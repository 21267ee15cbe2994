/*
 * test_store_cursors.c — the cursors table on a real store: a row starts
 * not started and draining, pages move the inclusive cursor and add up
 * exact counters, stalls count and reset, complete and incomplete exclude
 * each other, resets keep the traffic counters, the drain's round-robin
 * reader skips finished rows and stale authors, the summary counts
 * authors the way every surface reports them, and one author's queries
 * cost the same SQLite instructions with 30 rows or 15,000.
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

#include "store/cursors.h"
#include "store/follows.h"
#include "store/store.h"
#include "store/store_sql.h"

#define RA	"wss://a.example"
#define RB	"wss://b.example"

#include "store_fixture.h"

static const uint8_t *
pk(uint8_t b)
{
	static uint8_t	keys[256][32];

	memset(keys[b], b, 32);
	return keys[b];
}

static void
get(struct fixture *fx, uint8_t a, const char *relay, struct store_cursor *c)
{
	assert_int_equal(store_cursor_get(fx->st, pk(a), relay, c), 1);
}

static void
test_lifecycle(void **state)
{
	struct fixture		*fx = *state;
	struct store_cursor	 c;

	assert_int_equal(store_cursor_get(fx->st, pk(1), RA, &c), 0);
	assert_int_equal(store_cursor_page(fx->st, pk(1), RA, 5, 1, 1, 9), -1);
	assert_int_equal(store_cursor_ensure(fx->st, pk(1), RA, 100), 1);
	assert_int_equal(store_cursor_ensure(fx->st, pk(1), RA, 200), 0);
	get(fx, 1, RA, &c);
	assert_memory_equal(c.pubkey, pk(1), 32);
	assert_string_equal(c.relay, RA);
	assert_false(c.started);
	assert_int_equal(c.state, STORE_CURSOR_DRAINING);
	assert_int_equal(c.updated_at, 100);

	assert_int_equal(store_cursor_page(fx->st, pk(1), RA, 5000, 500, 480,
	    101), 0);
	assert_int_equal(store_cursor_stall(fx->st, pk(1), RA, 102), 0);
	assert_int_equal(store_cursor_stall(fx->st, pk(1), RA, 103), 0);
	get(fx, 1, RA, &c);
	assert_true(c.started);
	assert_int_equal(c.until_cursor, 5000);
	assert_int_equal(c.pages, 1);
	assert_int_equal(c.events, 500);
	assert_int_equal(c.new_events, 480);
	assert_int_equal(c.largest_page, 500);
	assert_int_equal(c.stalls, 2);
	assert_int_equal(c.stalls_total, 2);

	assert_int_equal(store_cursor_page(fx->st, pk(1), RA, 4000, 300, 0,
	    104), 0);
	assert_int_equal(store_cursor_gap(fx->st, pk(1), RA, 3999, 104), 0);
	get(fx, 1, RA, &c);
	assert_int_equal(c.until_cursor, 4000);
	assert_int_equal(c.pages, 2);
	assert_int_equal(c.events, 800);
	assert_int_equal(c.new_events, 480);
	assert_int_equal(c.largest_page, 500);
	assert_int_equal(c.stalls, 0);
	assert_int_equal(c.stalls_total, 2);
	assert_int_equal(c.state, STORE_CURSOR_DRAINING);
	assert_true(c.has_gap);
	assert_int_equal(c.gap_since, 3999);

	assert_int_equal(store_cursor_complete(fx->st, pk(1), RA, 105), 0);
	get(fx, 1, RA, &c);
	assert_int_equal(c.state, STORE_CURSOR_COMPLETE);
	assert_false(c.has_gap);
	assert_string_equal(c.reason, "");

	assert_int_equal(store_cursor_incomplete(fx->st, pk(1), RA,
	    STORE_CURSOR_WHY_UNTIL, NULL, 1234, 106), 0);
	get(fx, 1, RA, &c);
	assert_int_equal(c.state, STORE_CURSOR_INCOMPLETE);
	assert_int_equal(c.why, STORE_CURSOR_WHY_UNTIL);
	assert_string_equal(c.reason, "relay ignores until");
	assert_true(c.has_gap);
	assert_int_equal(c.gap_since, 1234);
	assert_int_equal(c.updated_at, 106);
	assert_string_equal(store_cursor_state_name(c.state), "incomplete");

	assert_int_equal(store_cursor_incomplete(fx->st, pk(1), RA,
	    STORE_CURSOR_WHY_NOANSWER, "timeout", -1, 107), 0);
	get(fx, 1, RA, &c);
	assert_false(c.has_gap);
	assert_int_equal(c.why, STORE_CURSOR_WHY_NOANSWER);
	assert_string_equal(c.reason, "no answer from relay: timeout");
	/* Finished again, the code is cleared with the text. */
	assert_int_equal(store_cursor_retry(fx->st, pk(1), RA, 108), 0);
	get(fx, 1, RA, &c);
	assert_int_equal(c.why, STORE_CURSOR_WHY_NONE);
	assert_int_equal(c.state, STORE_CURSOR_DRAINING);
}

static void
test_reason_cut(void **state)
{
	struct fixture		*fx = *state;
	struct store_cursor	 c;
	char			 longr[STORE_CURSOR_REASON_MAX + 50];

	memset(longr, 'r', sizeof(longr) - 1);
	longr[sizeof(longr) - 1] = '\0';
	assert_int_equal(store_cursor_ensure(fx->st, pk(1), RA, 1), 1);
	assert_int_equal(store_cursor_incomplete(fx->st, pk(1), RA,
	    STORE_CURSOR_WHY_NOANSWER, longr, -1, 2), 0);
	get(fx, 1, RA, &c);
	assert_int_equal(strlen(c.reason), STORE_CURSOR_REASON_MAX);
}

static void
test_reset(void **state)
{
	struct fixture		*fx = *state;
	struct store_cursor	 c;

	assert_int_equal(store_cursor_ensure(fx->st, pk(1), RA, 1), 1);
	assert_int_equal(store_cursor_ensure(fx->st, pk(1), RB, 1), 1);
	assert_int_equal(store_cursor_ensure(fx->st, pk(2), RA, 1), 1);
	assert_int_equal(store_cursor_page(fx->st, pk(1), RA, 50, 10, 10, 2), 0);
	assert_int_equal(store_cursor_complete(fx->st, pk(1), RA, 3), 0);
	assert_int_equal(store_cursor_incomplete(fx->st, pk(1), RB,
	    STORE_CURSOR_WHY_BURST, NULL, 40, 3), 0);
	assert_int_equal(store_cursor_page(fx->st, pk(2), RA, 70, 5, 5, 2), 0);

	assert_int_equal(store_cursors_reset(fx->st, pk(1), 10), 2);
	get(fx, 1, RA, &c);
	assert_false(c.started);
	assert_int_equal(c.state, STORE_CURSOR_DRAINING);
	assert_int_equal(c.pages, 1);
	assert_int_equal(c.events, 10);
	assert_int_equal(c.updated_at, 10);
	get(fx, 1, RB, &c);
	assert_int_equal(c.state, STORE_CURSOR_DRAINING);
	assert_string_equal(c.reason, "");
	assert_false(c.has_gap);
	get(fx, 2, RA, &c);
	assert_true(c.started);
	assert_int_equal(c.until_cursor, 70);

	assert_int_equal(store_cursors_reset(fx->st, NULL, 11), 3);
	get(fx, 2, RA, &c);
	assert_false(c.started);
}

struct seen {
	uint8_t	first[16];
	char	relay[16][32];
	size_t	n;
};

static int
seen_cb(const struct store_cursor *c, void *arg)
{
	struct seen	*s = arg;

	assert_true(s->n < 16);
	s->first[s->n] = c->pubkey[0];
	assert_true(strlen(c->relay) < sizeof(s->relay[0]));
	memcpy(s->relay[s->n], c->relay, strlen(c->relay) + 1);
	s->n++;
	return 0;
}

/*
 * Authors 1..5 followed, 6 stale:
 *   1: RA complete, RB complete            -> complete
 *   2: RA complete, RB incomplete          -> incomplete
 *   3: RA incomplete, RB draining          -> draining
 *   4: no cursor row (no relay known)      -> incomplete
 *   5: RA draining (started)               -> draining
 *   6 (stale): RA complete                 -> not counted
 */
static void
fill_summary(struct fixture *fx)
{
	uint8_t	f[6][32];
	int	i;

	for (i = 0; i < 6; i++)
		memcpy(f[i], pk((uint8_t)(i + 1)), 32);
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    6, NULL, 0, 1, NULL), 0);
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    5, NULL, 0, 2, NULL), 0);
	for (i = 1; i <= 3; i++) {
		assert_int_equal(store_cursor_ensure(fx->st, pk(i), RA, 1), 1);
		assert_int_equal(store_cursor_ensure(fx->st, pk(i), RB, 1), 1);
	}
	assert_int_equal(store_cursor_ensure(fx->st, pk(5), RA, 1), 1);
	assert_int_equal(store_cursor_ensure(fx->st, pk(6), RA, 1), 1);
	assert_int_equal(store_cursor_complete(fx->st, pk(1), RA, 2), 0);
	assert_int_equal(store_cursor_complete(fx->st, pk(1), RB, 2), 0);
	assert_int_equal(store_cursor_complete(fx->st, pk(2), RA, 2), 0);
	assert_int_equal(store_cursor_incomplete(fx->st, pk(2), RB,
	    STORE_CURSOR_WHY_BURST, NULL, 9, 2), 0);
	assert_int_equal(store_cursor_incomplete(fx->st, pk(3), RA,
	    STORE_CURSOR_WHY_UNTIL, NULL, -1, 2), 0);
	assert_int_equal(store_cursor_page(fx->st, pk(5), RA, 10, 1, 1, 2), 0);
	assert_int_equal(store_cursor_complete(fx->st, pk(6), RA, 2), 0);
}

static void
test_summary(void **state)
{
	struct fixture			*fx = *state;
	struct store_cursor_summary	 s;

	assert_int_equal(store_cursors_summary(fx->st, &s), 0);
	assert_int_equal(s.authors_total, 0);
	fill_summary(fx);
	assert_int_equal(store_cursors_summary(fx->st, &s), 0);
	assert_int_equal(s.authors_total, 5);
	assert_int_equal(s.authors_complete, 1);
	assert_int_equal(s.authors_incomplete, 2);
	assert_int_equal(s.authors_draining, 2);
	assert_int_equal(s.cursors_total, 7);
	assert_int_equal(s.cursors_complete, 3);
	assert_int_equal(s.cursors_incomplete, 2);

	/* Author 3's last relay finishes complete: now incomplete overall. */
	assert_int_equal(store_cursor_complete(fx->st, pk(3), RB, 3), 0);
	assert_int_equal(store_cursors_summary(fx->st, &s), 0);
	assert_int_equal(s.authors_incomplete, 3);
	assert_int_equal(s.authors_draining, 1);
	assert_int_equal(store_cursors_any_draining(fx->st), 1);

	/* Author 5 finishes: nothing drains, and once idle complete +
	 * incomplete = total, author 4 (no row at all) included. */
	assert_int_equal(store_cursor_complete(fx->st, pk(5), RA, 3), 0);
	assert_int_equal(store_cursors_summary(fx->st, &s), 0);
	assert_int_equal(s.authors_draining, 0);
	assert_int_equal(store_cursors_any_draining(fx->st), 0);
	/* Asked again with nothing written: the same answer (cached). */
	assert_int_equal(store_cursors_summary(fx->st, &s), 0);
	assert_int_equal(s.authors_draining, 0);
	assert_int_equal(s.authors_complete, 2);
	assert_int_equal(s.authors_incomplete, 3);
	assert_int_equal(s.authors_complete + s.authors_incomplete,
	    s.authors_total);

	/* A relay becomes known for author 4: its new row drains. */
	assert_int_equal(store_cursor_ensure(fx->st, pk(4), RA, 4), 1);
	assert_int_equal(store_cursors_summary(fx->st, &s), 0);
	assert_int_equal(s.authors_incomplete, 2);
	assert_int_equal(s.authors_draining, 1);
	assert_int_equal(store_cursors_any_draining(fx->st), 1);

	/* A write rolled back: the summary is read again, not the cache. */
	assert_int_equal(store_begin(fx->st), 0);
	assert_int_equal(store_cursor_complete(fx->st, pk(4), RA, 5), 0);
	assert_int_equal(store_cursors_summary(fx->st, &s), 0);
	assert_int_equal(s.authors_draining, 0);
	assert_int_equal(store_rollback(fx->st), 0);
	assert_int_equal(store_cursors_summary(fx->st, &s), 0);
	assert_int_equal(s.authors_draining, 1);
}

static void
test_each_and_draining(void **state)
{
	struct fixture	*fx = *state;
	struct seen	 s;

	fill_summary(fx);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_cursors_each(fx->st, pk(2), seen_cb, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.relay[0], RA);
	assert_string_equal(s.relay[1], RB);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_cursors_each(fx->st, NULL, seen_cb, &s), 0);
	assert_int_equal(s.n, 8);
	assert_int_equal(s.first[7], 6);

	/* On RA only author 5 still drains (6 is stale). */
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_cursors_draining(fx->st, RA, NULL, 10, seen_cb,
	    &s), 1);
	assert_int_equal(s.first[0], 5);
	/* On RB author 3; round-robin after 3 finds nothing more. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_cursors_draining(fx->st, RB, NULL, 10, seen_cb,
	    &s), 1);
	assert_int_equal(s.first[0], 3);
	assert_int_equal(store_cursors_draining(fx->st, RB, pk(3), 10, seen_cb,
	    &s), 0);
	assert_int_equal(store_cursors_reset(fx->st, NULL, 5), 8);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_cursors_draining(fx->st, RB, pk(1), 1, seen_cb,
	    &s), 1);
	assert_int_equal(s.first[0], 2);
}

/* SQLite virtual machine instructions run, counted by a progress handler. */
static int
count_ops(void *arg)
{
	(*(uint64_t *)arg)++;
	return 0;
}

/*
 * Authors from..from+n-1 (two bytes of index) followed, on three relays,
 * all recorded incomplete; authors 0..from-1 stay followed.
 */
static void
fill_many(struct fixture *fx, int from, int n)
{
	static const char *const relays[] = { RA, RB, "wss://c.example" };
	uint8_t	(*all)[32], *k;
	int	 i, r;

	assert_non_null(all = calloc((size_t)(from + n), 32));
	for (i = 0; i < from + n; i++) {
		memset(all[i], 0x42, 32);
		all[i][0] = (uint8_t)(i >> 8);
		all[i][1] = (uint8_t)i;
	}
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])all,
	    (size_t)(from + n), NULL, 0, 1, NULL), 0);
	assert_int_equal(store_begin(fx->st), 0);
	for (i = from; i < from + n; i++) {
		k = all[i];
		for (r = 0; r < 3; r++) {
			assert_int_equal(store_cursor_ensure(fx->st, k, relays[r],
			    1), 1);
			assert_int_equal(store_cursor_incomplete(fx->st, k,
			    relays[r], STORE_CURSOR_WHY_UNTIL, NULL, -1, 2), 0);
		}
	}
	assert_int_equal(store_commit(fx->st), 0);
	free(all);
}

/* Instructions one author's rows, one reset and the drain's next
 * authors on a relay where every author is recorded incomplete cost. */
static uint64_t
ops_for_one(struct fixture *fx)
{
	struct seen	s;
	uint64_t	ops = 0;
	uint8_t		k[32];

	memset(k, 0x42, 32);
	k[0] = 0;
	k[1] = 7;
	memset(&s, 0, sizeof(s));
	sqlite3_progress_handler(store_db(fx->st), 1, count_ops, &ops);
	assert_int_equal(store_cursors_each(fx->st, k, seen_cb, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(store_cursors_reset(fx->st, k, 3), 3);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_cursors_draining(fx->st, RB, NULL, 10, seen_cb,
	    &s), 1);	/* only the author just reset */
	assert_int_equal(store_cursors_any_draining(fx->st) >= 0, 1);
	sqlite3_progress_handler(store_db(fx->st), 0, NULL, NULL);
	assert_int_equal(store_cursor_incomplete(fx->st, k, RA,
	    STORE_CURSOR_WHY_UNTIL, NULL, -1, 4), 0);
	assert_int_equal(store_cursor_incomplete(fx->st, k, RB,
	    STORE_CURSOR_WHY_UNTIL, NULL, -1, 4), 0);
	assert_int_equal(store_cursor_incomplete(fx->st, k,
	    "wss://c.example", STORE_CURSOR_WHY_UNTIL, NULL, -1, 4), 0);
	return ops;
}

/*
 * One author's cursor rows, one author's reset and the drain's next
 * authors cost the same with 30 rows or 15,000: each reads an index, not
 * the table. (The per-author query was once "?1 IS NULL OR pubkey = ?1",
 * which SQLite answers by reading every row: O(followed x relays) per
 * call, once per author in the drain's start-up pass.) Counted in
 * SQLite's instructions, which do not depend on the machine.
 */
static void
test_one_author_costs_the_same(void **state)
{
	struct fixture	*fx = *state;
	uint64_t	 small, large;

	fill_many(fx, 0, 10);
	small = ops_for_one(fx);
	fill_many(fx, 10, 4990);
	large = ops_for_one(fx);
	print_message("instructions: %llu with 30 rows, %llu with 15,000\n",
	    (unsigned long long)small, (unsigned long long)large);
	assert_true(large < small * 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reason_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_author_costs_the_same,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_each_and_draining, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
