/*
 * test_retention.c — retention on a real store, a real loop and a real
 * ingest: over store.max_bytes it evicts down to RETENTION_LOW_WATER_PCT
 * of the budget and counts what it evicted; its steps run inside
 * ingest's open batch and commit with it (so a round writes a page once
 * per batch, not once per step); a transaction that is not ingest's
 * makes it wait; over budget with only protected events
 * (queued, kinds 0/3/10002) it says so once and then only looks again at
 * the slow check interval; a changed store.max_bytes is taken at a kick.
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

#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "store/events.h"
#include "store/rules.h"
#include "store/store.h"
#include "sync/ingest.h"
#include "sync/retention.h"

#include "store_fixture.h"

#define BUDGET		(16 * 1024 * 1024)	/* store.max_bytes=16m, its minimum */
#define ROW_BYTES	(64 * 1024)		/* JSON bytes of one test row */
#define MAX_ROUNDS	500

struct rfx {
	struct fixture	*fx;
	struct loop	*loop;
	struct config	*cfg;
	struct ingest	*ing;
	struct retention *ret;
	FILE		*log;
	char		*json;
	uint32_t	 next_id;
};

static int
setup_ret(void **state)
{
	struct rfx	*r = calloc(1, sizeof(*r));
	void		*inner;
	char		 err[256];

	assert_non_null(r);
	setup(&inner);
	r->fx = inner;
	assert_non_null(r->loop = loop_new());
	assert_non_null(r->cfg = config_new());
	assert_int_equal(config_set(r->cfg, "store.max_bytes", "16m",
	    CFG_SRC_CLI, err, sizeof(err)), 0);
	assert_non_null(r->ing = ingest_new(r->loop, r->fx->st));
	/* Ingest would keep its batch open for a minute on its own. */
	ingest_commit_policy(r->ing, 60000, 1000000);
	assert_non_null(r->log = tmpfile());
	log_init(r->log, LOG_LEVEL_INFO);
	assert_non_null(r->json = malloc(ROW_BYTES + 1));
	memset(r->json, 'x', ROW_BYTES);
	r->json[ROW_BYTES] = '\0';
	*state = r;
	return 0;
}

static int
teardown_ret(void **state)
{
	struct rfx	*r = *state;
	void		*inner = r->fx;

	log_init(stderr, LOG_LEVEL_WARN);
	retention_free(r->ret);
	ingest_free(r->ing);
	config_free(r->cfg);
	loop_free(r->loop);
	fclose(r->log);
	free(r->json);
	free(r);
	return teardown(&inner);
}

/* n rows of ROW_BYTES, created_at going up from at, in one transaction. */
static void
fill(struct rfx *r, int n, uint32_t kind, int64_t at, bool enqueue)
{
	struct store_event_row	row = { 0 };
	uint8_t			id[32], pk[32];
	int			i;

	memset(&row, 0, sizeof(row));
	memset(pk, 7, sizeof(pk));
	row.id = id;
	row.pubkey = pk;
	row.kind = kind;
	row.json = r->json;
	row.json_len = ROW_BYTES;
	row.source = "backfill";
	row.received_at = 1700000000;
	assert_int_equal(store_begin(r->fx->st), 0);
	for (i = 0; i < n; i++) {
		memset(id, 0, sizeof(id));
		memcpy(id, &r->next_id, sizeof(r->next_id));
		/* One author each: a replaceable kind keeps one per author. */
		memcpy(pk, &r->next_id, sizeof(r->next_id));
		r->next_id++;
		row.created_at = at + i;
		assert_int_equal(store_event_insert(r->fx->st, &row, enqueue), 1);
	}
	assert_int_equal(store_commit(r->fx->st), 0);
}

static void
totals(struct rfx *r, int64_t *count, int64_t *bytes)
{
	assert_int_equal(store_events_totals(r->fx->st, count, bytes), 0);
}

/* Run loop rounds until retention is settled; the rounds it took. */
static int
run_until_settled(struct rfx *r)
{
	int	i;

	for (i = 0; i < MAX_ROUNDS && !retention_settled(r->ret); i++)
		assert_int_equal(loop_run_once(r->loop, 1000), 0);
	assert_true(retention_settled(r->ret));
	return i;
}

/* Lines of the log so far that contain s. */
static int
log_lines_with(struct rfx *r, const char *s)
{
	char	line[LOG_MAX_LINE + 2];
	int	n = 0;

	fflush(r->log);
	rewind(r->log);
	while (fgets(line, sizeof(line), r->log) != NULL)
		if (strstr(line, s) != NULL)
			n++;
	fseek(r->log, 0, SEEK_END);
	return n;
}

/*
 * 300 rows of 64 KiB (18.75 MiB) over a 16 MiB budget: the oldest go
 * until the total is at most 98 % of it, exactly as many as needed, and
 * the counter says how many. Ingest's batch, open with a long policy,
 * holds the evictions: nothing is committed until it is.
 */
static void
test_evicts_to_low_water_after_ingest_commit(void **state)
{
	struct rfx	*r = *state;
	int64_t		 low = (int64_t)BUDGET / 100 * RETENTION_LOW_WATER_PCT;
	int64_t		 count, bytes, want;

	fill(r, 300, 1, 1000, false);
	totals(r, &count, &bytes);
	assert_int_equal(bytes, 300 * (int64_t)ROW_BYTES);
	want = (bytes - low + ROW_BYTES - 1) / ROW_BYTES;
	assert_int_equal(ingest_tx(r->ing), 0);
	assert_true(ingest_tx_open(r->ing));
	assert_non_null(r->ret = retention_new(r->loop, r->fx->st, r->ing,
	    r->cfg));
	assert_false(retention_settled(r->ret));
	run_until_settled(r);
	assert_true(ingest_tx_open(r->ing));
	assert_int_equal(store_tx_depth(r->fx->st), 1);
	assert_int_equal(ingest_stats(r->ing)->transactions, 0);
	assert_int_equal(ingest_flush(r->ing), 0);
	assert_int_equal(store_tx_depth(r->fx->st), 0);
	assert_int_equal(ingest_stats(r->ing)->transactions, 1);
	assert_int_equal(retention_state(r->ret), RETENTION_WITHIN);
	assert_string_equal(retention_state_name(retention_state(r->ret)),
	    "within");
	assert_int_equal(retention_evicted(r->ret), want);
	totals(r, &count, &bytes);
	assert_int_equal(count, 300 - want);
	assert_true(bytes <= low);
	assert_true(bytes + ROW_BYTES > low);
	/* The oldest went: the oldest left is row want (created_at 1000+want). */
	assert_int_equal(fixture_int(r->fx, "SELECT min(created_at) FROM events"),
	    1000 + want);
	assert_int_equal(log_lines_with(r, "evicting the oldest"), 1);
	assert_int_equal(log_lines_with(r, "within budget"), 1);
}

/*
 * A transaction that is not ingest's stays untouched: while it is open
 * nothing is evicted (and retention is not settled); once it commits,
 * retention goes on by itself.
 */
static void
test_waits_for_foreign_transaction(void **state)
{
	struct rfx	*r = *state;
	int64_t		 count, bytes;
	int		 i;

	fill(r, 300, 1, 1000, false);
	assert_non_null(r->ret = retention_new(r->loop, r->fx->st, r->ing,
	    r->cfg));
	assert_int_equal(store_begin(r->fx->st), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(loop_run_once(r->loop, 1000), 0);
	assert_int_equal(store_tx_depth(r->fx->st), 1);
	assert_int_equal(retention_evicted(r->ret), 0);
	assert_false(retention_settled(r->ret));
	assert_int_equal(retention_state(r->ret), RETENTION_EVICTING);
	assert_int_equal(store_commit(r->fx->st), 0);
	totals(r, &count, &bytes);
	assert_int_equal(count, 300);
	run_until_settled(r);
	assert_true(retention_evicted(r->ret) > 0);
	totals(r, &count, &bytes);
	assert_int_equal(count, 300 - (int64_t)retention_evicted(r->ret));
}

/*
 * 280 protected rows (queued, kinds 0, 3, 10002) alone exceed the budget;
 * 20 plain ones are spread among them. All 20 go, no protected one does,
 * the state is "protected", said once, and the next look is a slow check
 * away (no spinning). Raising store.max_bytes and a kick end it.
 */
static void
test_protected_only_said_once(void **state)
{
	struct rfx	*r = *state;
	int64_t		 count, bytes;
	char		 err[256];
	int		 timeout;

	fill(r, 70, 0, 1000, false);
	fill(r, 10, 1, 1035, false);
	fill(r, 70, 3, 2000, false);
	fill(r, 70, 10002, 3000, false);
	fill(r, 10, 1, 3035, false);
	fill(r, 70, 1, 4000, true);
	assert_non_null(r->ret = retention_new(r->loop, r->fx->st, r->ing,
	    r->cfg));
	run_until_settled(r);
	assert_int_equal(retention_state(r->ret), RETENTION_PROTECTED);
	assert_string_equal(retention_state_name(retention_state(r->ret)),
	    "protected");
	assert_int_equal(retention_evicted(r->ret), 20);
	assert_int_equal(fixture_int(r->fx, "SELECT count(*) FROM events WHERE "
	    "kind = 1 AND id NOT IN (SELECT event_id FROM inbox)"), 0);
	assert_int_equal(fixture_int(r->fx, "SELECT count(*) FROM events WHERE "
	    "kind IN (0, 3, 10002)"), 210);
	assert_int_equal(fixture_int(r->fx, "SELECT count(*) FROM inbox"), 70);
	totals(r, &count, &bytes);
	assert_int_equal(count, 280);
	assert_true(bytes > BUDGET);
	timeout = loop_poll_timeout(r->loop, -1);
	/* (the loop's clock is read once a round: the timer may be a few ms beyond) */
	assert_in_range(timeout, RETENTION_CHECK_MS / 2, RETENTION_CHECK_MS + 1000);
	assert_int_equal(log_lines_with(r, "every event left is protected"), 1);
	assert_int_equal(log_lines_with(r, "within budget"), 0);

	assert_int_equal(config_set(r->cfg, "store.max_bytes", "64m",
	    CFG_SRC_CLI, err, sizeof(err)), 0);
	retention_kick(r->ret);
	assert_in_range(loop_poll_timeout(r->loop, -1), 0, 1000);
	assert_int_equal(loop_run_once(r->loop, 1000), 0);
	assert_int_equal(retention_state(r->ret), RETENTION_WITHIN);
	assert_int_equal(log_lines_with(r, "within budget"), 1);
	assert_int_equal(retention_evicted(r->ret), 20);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_evicts_to_low_water_after_ingest_commit, setup_ret,
		    teardown_ret),
		cmocka_unit_test_setup_teardown(
		    test_waits_for_foreign_transaction, setup_ret,
		    teardown_ret),
		cmocka_unit_test_setup_teardown(
		    test_protected_only_said_once, setup_ret, teardown_ret),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
