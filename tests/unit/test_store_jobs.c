/*
 * test_store_jobs.c — the jobs, job_items and job_batches tables on a
 * real store: a job's row round trip, its list typed and resolved from
 * the events and the followed set (only-missing-kind-0, the limit plus
 * one), ranges read back, write relays ranked, batches picked by relay
 * and due time, a page adding up batch and job counters, the ends of a
 * batch, the queue (running first, then the oldest pending), a run's
 * window kept on resume, schedules (next run, due, rerun, skipped run),
 * cancel, retry, delete with everything it owns, start-up recovery and
 * the status summary.
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

#include "store/events.h"
#include "store/rules.h"
#include "store/follows.h"
#include "store/jobs.h"
#include "store/store.h"

#define RA	"wss://a.example"
#define RB	"wss://b.example"

#include "store_fixture.h"

static const uint8_t *
key(uint8_t b)
{
	static uint8_t	keys[256][32];

	memset(keys[b], b, 32);
	return keys[b];
}

/* An event with id n, author a, kind, at. */
static void
put(struct fixture *fx, uint8_t n, uint8_t a, uint32_t kind, int64_t at)
{
	uint8_t			id[32];
	struct store_event_row	row;

	memset(id, 0xee, sizeof(id));
	id[0] = n;
	memset(&row, 0, sizeof(row));	/* no tags */
	row.id = id;
	row.pubkey = key(a);
	row.kind = kind;
	row.created_at = at;
	row.json = "{}";
	row.json_len = 2;
	row.source = "backfill";
	row.first_relay = RA;
	row.received_at = 1700000000;
	assert_int_equal(store_event_insert(fx->st, &row, false), 1);
}

static int64_t
new_job(struct fixture *fx, const char *label, int64_t every)
{
	struct store_job	j = { 0 };
	int64_t			id;

	snprintf(j.label, sizeof(j.label), "%s", label);
	j.filter_json = "{\"kinds\":[0]}";
	j.source = STORE_JOB_SRC_MANUAL;
	j.mode = STORE_JOB_MODE_AUTHORS;
	j.batch_size = 2;
	j.relay_mode = STORE_JOB_RELAYS_CUSTOM;
	j.relay_list = RA "," RB;
	j.created_at = 1000;
	j.every_s = every;
	j.run_since = -1;
	snprintf(j.created_by, sizeof(j.created_by), "ctl");
	assert_true((id = store_job_insert(fx->st, &j)) > 0);
	return id;
}

static void
get(struct fixture *fx, int64_t id, struct store_job *j)
{
	assert_int_equal(store_job_get(fx->st, id, j), 1);
}

static void
test_names(void **state)
{
	assert_string_equal(store_job_status_name(STORE_JOB_INCOMPLETE),
	    "incomplete");
	assert_int_equal(store_job_status_parse("cancelled"),
	    STORE_JOB_CANCELLED);
	assert_int_equal(store_job_status_parse("done"), -1);
	assert_int_equal(store_job_source_parse("kind1"), STORE_JOB_SRC_KIND1);
	assert_int_equal(store_job_source_parse("all_in_store"), -1);
	assert_string_equal(store_job_mode_name(STORE_JOB_MODE_IDS), "ids");
	assert_int_equal(store_job_relays_parse("outbox"),
	    STORE_JOB_RELAYS_OUTBOX);
	assert_string_equal(store_job_status_name((enum store_job_status)9),
	    "?");
}

static void
test_row(void **state)
{
	struct fixture		*fx = *state;
	struct store_job	 j;
	int64_t			 id = new_job(fx, "profiles", 3600);

	get(fx, id, &j);
	assert_string_equal(j.label, "profiles");
	assert_string_equal(j.filter_json, "{\"kinds\":[0]}");
	assert_int_equal(j.source, STORE_JOB_SRC_MANUAL);
	assert_int_equal(j.mode, STORE_JOB_MODE_AUTHORS);
	assert_int_equal(j.batch_size, 2);
	assert_int_equal(j.relay_mode, STORE_JOB_RELAYS_CUSTOM);
	assert_string_equal(j.relay_list, RA "," RB);
	assert_int_equal(j.status, STORE_JOB_PENDING);
	assert_int_equal(j.every_s, 3600);
	assert_int_equal(j.run_since, -1);
	assert_int_equal(j.run_until, -1);
	assert_int_equal(j.started_at, 0);
	assert_string_equal(j.created_by, "ctl");
	assert_string_equal(j.error, "");
	store_job_clear(&j);
	assert_int_equal(store_job_get(fx->st, id + 1, &j), 0);
}

struct collected {
	int64_t	ids[16];
	int	n;
};

static int
collect_job(const struct store_job *j, void *arg)
{
	struct collected	*c = arg;

	c->ids[c->n++] = j->id;
	return 0;
}

static void
test_list_newest_first(void **state)
{
	struct fixture		*fx = *state;
	struct collected	 c = { .n = 0 };
	int64_t			 a = new_job(fx, "a", 0), b = new_job(fx, "b", 0);

	assert_int_equal(store_jobs_each(fx->st, 10, collect_job, &c), 2);
	assert_int_equal(c.ids[0], b);
	assert_int_equal(c.ids[1], a);
	c.n = 0;
	assert_int_equal(store_jobs_each(fx->st, 1, collect_job, &c), 1);
}

static void
test_items(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 id = new_job(fx, "x", 0), i;
	uint8_t		 out[4][32];

	for (i = 0; i < 5; i++)
		assert_int_equal(store_job_item_add(fx->st, id, i,
		    key((uint8_t)(10 + i))), 0);
	assert_int_equal(store_job_item_add(fx->st, id, 0, key(1)), -1);
	assert_int_equal(store_job_items_read(fx->st, id, 1, 4, out), 3);
	assert_memory_equal(out[0], key(11), 32);
	assert_memory_equal(out[2], key(13), 32);
	assert_int_equal(store_job_items_read(fx->st, id, 4, 8, out), 1);
	assert_memory_equal(out[0], key(14), 32);
	assert_int_equal(store_job_items_clear(fx->st, id), 0);
	assert_int_equal(store_job_items_read(fx->st, id, 0, 4, out), 0);
}

static void
test_resolve(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 id = new_job(fx, "x", 0);
	uint8_t		 out[8][32], f[2][32];

	put(fx, 1, 5, 1, 100);		/* author 5: kind 1 and kind 0 */
	put(fx, 2, 5, 0, 100);
	put(fx, 3, 3, 1, 100);		/* author 3: kind 1 only */
	put(fx, 4, 3, 1, 101);
	put(fx, 5, 9, 7, 100);		/* author 9: kind 7 only */
	put(fx, 6, 7, 0, 100);		/* author 7: kind 0 only */

	assert_int_equal(store_job_items_resolve(fx->st, id,
	    STORE_JOB_SRC_ALL, false, 100), 4);
	assert_int_equal(store_job_items_read(fx->st, id, 0, 8, out), 4);
	assert_memory_equal(out[0], key(3), 32);	/* pubkey order */
	assert_memory_equal(out[1], key(5), 32);
	assert_memory_equal(out[2], key(7), 32);
	assert_memory_equal(out[3], key(9), 32);
	assert_int_equal(store_job_items_resolve(fx->st, id,
	    STORE_JOB_SRC_ALL, true, 100), 2);
	assert_int_equal(store_job_items_read(fx->st, id, 0, 8, out), 2);
	assert_memory_equal(out[0], key(3), 32);
	assert_memory_equal(out[1], key(9), 32);
	assert_int_equal(store_job_items_resolve(fx->st, id,
	    STORE_JOB_SRC_KIND1, false, 100), 2);
	assert_int_equal(store_job_items_resolve(fx->st, id,
	    STORE_JOB_SRC_KIND1, true, 100), 1);
	assert_int_equal(store_job_items_read(fx->st, id, 0, 8, out), 1);
	assert_memory_equal(out[0], key(3), 32);
	/* over the limit: one row more than it, so the caller can refuse */
	assert_int_equal(store_job_items_resolve(fx->st, id,
	    STORE_JOB_SRC_ALL, false, 2), 3);

	memcpy(f[0], key(7), 32);
	memcpy(f[1], key(8), 32);
	assert_int_equal(store_follows_sync(fx->st, (const uint8_t (*)[32])f,
	    2, NULL, 0, 50, NULL), 0);
	assert_int_equal(store_job_items_resolve(fx->st, id,
	    STORE_JOB_SRC_FOLLOWED, false, 100), 2);
	assert_int_equal(store_job_items_resolve(fx->st, id,
	    STORE_JOB_SRC_FOLLOWED, true, 100), 1);
	assert_int_equal(store_job_items_read(fx->st, id, 0, 8, out), 1);
	assert_memory_equal(out[0], key(8), 32);
	assert_int_equal(store_job_items_resolve(fx->st, id,
	    STORE_JOB_SRC_MANUAL, false, 100), -1);
}

struct ranked {
	char	url[4][64];
	int64_t	n[4];
	int	count;
};

static int
collect_relay(const char *url, int64_t authors, void *arg)
{
	struct ranked	*r = arg;

	snprintf(r->url[r->count], sizeof(r->url[0]), "%s", url);
	r->n[r->count++] = authors;
	return 0;
}

static void
test_write_relays(void **state)
{
	struct fixture			*fx = *state;
	struct ranked			 r = { .count = 0 };
	struct store_author_relay	 both[] = { { RA, true, true },
					    { RB, true, true } };
	struct store_author_relay	 b_read[] = { { RB, true, false } };
	int64_t				 id = new_job(fx, "x", 0);

	assert_int_equal(store_author_relays_set(fx->st, key(1), both, 2,
	    10), 1);
	assert_int_equal(store_author_relays_set(fx->st, key(2), both, 1,
	    10), 1);
	assert_int_equal(store_author_relays_set(fx->st, key(3), b_read, 1,
	    10), 1);
	assert_int_equal(store_job_item_add(fx->st, id, 0, key(1)), 0);
	assert_int_equal(store_job_item_add(fx->st, id, 1, key(2)), 0);
	assert_int_equal(store_job_item_add(fx->st, id, 2, key(3)), 0);
	assert_int_equal(store_job_write_relays(fx->st, id, 8, collect_relay,
	    &r), 0);
	assert_int_equal(r.count, 2);
	assert_string_equal(r.url[0], RA);	/* two writers */
	assert_int_equal(r.n[0], 2);
	assert_string_equal(r.url[1], RB);	/* one: author 3 only reads */
	assert_int_equal(r.n[1], 1);
	r.count = 0;
	assert_int_equal(store_job_write_relays(fx->st, id, 1, collect_relay,
	    &r), 0);
	assert_int_equal(r.count, 1);
}

struct batches {
	struct store_job_batch	b[8];
	int			n;
};

static int
collect_batch(const struct store_job_batch *b, void *arg)
{
	struct batches	*c = arg;

	c->b[c->n++] = *b;
	return 0;
}

/* Job with batches 0,1 on RA (items 0-1, 2-3) and 2 on RB (a mask). */
static int64_t
job_with_batches(struct fixture *fx)
{
	int64_t	id = new_job(fx, "x", 0);
	uint8_t	mask = 0x02;

	assert_int_equal(store_job_batch_add(fx->st,
	    &(struct store_job_batch_spec){ .job = id, .index = 0,
	    .item_lo = 0, .item_hi = 2, .mask = NULL, .masklen = 0,
	    .items = 2, .relay = RA }), 0);
	assert_int_equal(store_job_batch_add(fx->st,
	    &(struct store_job_batch_spec){ .job = id, .index = 1,
	    .item_lo = 2, .item_hi = 4, .mask = NULL, .masklen = 0,
	    .items = 2, .relay = RA }), 0);
	assert_int_equal(store_job_batch_add(fx->st,
	    &(struct store_job_batch_spec){ .job = id, .index = 2,
	    .item_lo = 0, .item_hi = 2, .mask = &mask, .masklen = 1,
	    .items = 1, .relay = RB }), 0);
	assert_int_equal(store_job_batch_add(fx->st,
	    &(struct store_job_batch_spec){ .job = id, .index = 2,
	    .item_lo = 0, .item_hi = 2, .mask = NULL, .masklen = 0,
	    .items = 1, .relay = RB }), -1);	/* unique index */
	assert_int_equal(store_job_planned(fx->st, id, 4, 3), 0);
	return id;
}

static void
test_batches(void **state)
{
	struct fixture		*fx = *state;
	struct batches		 c = { .n = 0 };
	struct store_job	 j;
	struct store_job_batch	 b;
	int64_t			 id = job_with_batches(fx), counts[6], next;

	get(fx, id, &j);
	assert_int_equal(j.items, 4);
	assert_int_equal(j.total_batches, 3);
	store_job_clear(&j);

	assert_int_equal(store_job_batches_due(fx->st, id, RA, 5000, 8,
	    collect_batch, &c), 2);
	assert_int_equal(c.b[0].index, 0);
	assert_int_equal(c.b[1].index, 1);
	assert_false(c.b[0].has_mask);
	assert_false(c.b[0].started);
	c.n = 0;
	assert_int_equal(store_job_batches_due(fx->st, id, RB, 5000, 8,
	    collect_batch, &c), 1);
	assert_true(c.b[0].has_mask);
	assert_int_equal(c.b[0].mask[0], 0x02);
	assert_int_equal(c.b[0].items, 1);
	b = c.b[0];

	/* a page of batch 2: its counters and the job's */
	assert_int_equal(store_job_batch_start(fx->st, b.id, 2000), 0);
	assert_int_equal(store_job_batch_page(fx->st, b.id, id, 150, 7, 5), 0);
	assert_int_equal(store_job_batch_page(fx->st, b.id, id, 140, 3, 0), 0);
	assert_int_equal(store_job_batch_gap(fx->st, b.id, 141), 0);
	assert_int_equal(store_job_batch_get(fx->st, b.id, &b), 1);
	assert_int_equal(b.status, STORE_JOB_RUNNING);
	assert_true(b.started);
	assert_int_equal(b.until_cursor, 140);
	assert_int_equal(b.pages, 2);
	assert_int_equal(b.events_fetched, 10);
	assert_int_equal(b.events_new, 5);
	assert_int_equal(b.largest_page, 7);
	assert_true(b.has_gap);
	assert_int_equal(b.gap_since, 141);
	assert_int_equal(b.started_at, 2000);
	get(fx, id, &j);
	assert_int_equal(j.events_fetched, 10);
	assert_int_equal(j.events_new, 5);
	assert_int_equal(j.requests, 2);
	store_job_clear(&j);

	/* running batches are not due; the relays still holding work */
	c.n = 0;
	assert_int_equal(store_job_batches_due(fx->st, id, RB, 5000, 8,
	    collect_batch, &c), 0);
	assert_int_equal(store_job_batch_counts(fx->st, id, counts, &next), 0);
	assert_int_equal(counts[STORE_JOB_PENDING], 2);
	assert_int_equal(counts[STORE_JOB_RUNNING], 1);

	/* incomplete with why, reason and gap; done + 1 */
	assert_int_equal(store_job_batch_end(fx->st,
	    &(struct store_job_batch_outcome){ .id = b.id, .job = id,
	    .status = STORE_JOB_INCOMPLETE, .why = STORE_CURSOR_WHY_BURST,
	    .reason = "burst",
	    .gap_since = 141, .now_s = 2100 }), 0);
	assert_int_equal(store_job_batch_get(fx->st, b.id, &b), 1);
	assert_int_equal(b.status, STORE_JOB_INCOMPLETE);
	assert_int_equal(b.why, STORE_CURSOR_WHY_BURST);
	assert_string_equal(b.error, "burst");
	assert_int_equal(b.completed_at, 2100);
	get(fx, id, &j);
	assert_int_equal(j.done_batches, 1);
	store_job_clear(&j);

	/* a failed attempt waits; the other one is due */
	c.n = 0;
	assert_int_equal(store_job_batches_due(fx->st, id, RA, 5000, 8,
	    collect_batch, &c), 2);
	assert_int_equal(store_job_batch_start(fx->st, c.b[0].id, 2000), 0);
	assert_int_equal(store_job_batch_later(fx->st, c.b[0].id, 1, 9000,
	    "blocked: no"), 0);
	c.n = 0;
	assert_int_equal(store_job_batches_due(fx->st, id, RA, 5000, 8,
	    collect_batch, &c), 1);
	assert_int_equal(c.b[0].index, 1);
	assert_int_equal(store_job_batch_counts(fx->st, id, counts, &next), 0);
	assert_int_equal(next, 0);		/* batch 1 is due now */
	c.n = 0;
	assert_int_equal(store_job_batches_due(fx->st, id, RA, 9000, 8,
	    collect_batch, &c), 2);
	assert_int_equal(c.b[0].attempts, 1);
	assert_string_equal(c.b[0].error, "blocked: no");

	/* complete clears reason and gap */
	assert_int_equal(store_job_batch_end(fx->st,
	    &(struct store_job_batch_outcome){ .id = c.b[1].id, .job = id,
	    .status = STORE_JOB_COMPLETE, .why = STORE_CURSOR_WHY_NONE,
	    .reason = "x",
	    .gap_since = 5, .now_s = 2200 }), 0);
	assert_int_equal(store_job_batch_get(fx->st, c.b[1].id, &b), 1);
	assert_int_equal(b.status, STORE_JOB_COMPLETE);
	assert_string_equal(b.error, "");
	assert_false(b.has_gap);

	/* unfinished: everything but complete, in batch order */
	c.n = 0;
	assert_int_equal(store_job_batches_unfinished(fx->st, id, 8,
	    collect_batch, &c), 2);
	assert_int_equal(c.b[0].index, 0);
	assert_int_equal(c.b[1].index, 2);
}

static int
collect_url(const char *url, void *arg)
{
	struct ranked	*r = arg;

	snprintf(r->url[r->count++], sizeof(r->url[0]), "%s", url);
	return 0;
}

static void
test_recover_release_relays(void **state)
{
	struct fixture		*fx = *state;
	struct batches		 c = { .n = 0 };
	struct ranked		 r = { .count = 0 };
	int64_t			 id = job_with_batches(fx), counts[6], next;

	assert_int_equal(store_job_batches_due(fx->st, id, RA, 0, 8,
	    collect_batch, &c), 2);
	assert_int_equal(store_job_batch_start(fx->st, c.b[0].id, 1), 0);
	assert_int_equal(store_job_batch_start(fx->st, c.b[1].id, 1), 0);
	assert_int_equal(store_job_batch_page(fx->st, c.b[0].id, id, 77, 1, 1),
	    0);
	assert_int_equal(store_job_batch_release(fx->st, c.b[1].id), 0);
	assert_int_equal(store_jobs_recover(fx->st), 1);	/* batch 0 */
	assert_int_equal(store_job_batch_counts(fx->st, id, counts, &next), 0);
	assert_int_equal(counts[STORE_JOB_PENDING], 3);
	assert_int_equal(counts[STORE_JOB_RUNNING], 0);
	c.n = 0;
	assert_int_equal(store_job_batches_due(fx->st, id, RA, 0, 8,
	    collect_batch, &c), 2);
	assert_true(c.b[0].started);		/* the cursor stayed */
	assert_int_equal(c.b[0].until_cursor, 77);

	assert_int_equal(store_job_batch_end(fx->st,
	    &(struct store_job_batch_outcome){ .id = c.b[0].id, .job = id,
	    .status = STORE_JOB_COMPLETE, .why = STORE_CURSOR_WHY_NONE,
	    .reason = NULL,
	    .gap_since = -1, .now_s = 5 }), 0);
	assert_int_equal(store_job_batch_end(fx->st,
	    &(struct store_job_batch_outcome){ .id = c.b[1].id, .job = id,
	    .status = STORE_JOB_FAILED, .why = STORE_CURSOR_WHY_NONE,
	    .reason = "gone",
	    .gap_since = -1, .now_s = 5 }), 0);
	assert_int_equal(store_job_batch_relays(fx->st, id, collect_url, &r),
	    0);
	assert_int_equal(r.count, 1);
	assert_string_equal(r.url[0], RB);
}

static void
test_queue_and_run(void **state)
{
	struct fixture		*fx = *state;
	struct store_job	 j;
	int64_t			 a = new_job(fx, "a", 0), b = new_job(fx, "b", 0);
	int64_t			 id;

	assert_int_equal(store_job_next(fx->st, &id), 1);
	assert_int_equal(id, a);		/* oldest pending */
	assert_int_equal(store_job_run(fx->st, b, 500, 100), 0);
	assert_int_equal(store_job_next(fx->st, &id), 1);
	assert_int_equal(id, b);		/* the running one first */
	get(fx, b, &j);
	assert_int_equal(j.status, STORE_JOB_RUNNING);
	assert_int_equal(j.started_at, 100);
	assert_int_equal(j.run_until, 500);
	assert_int_equal(j.runs, 1);
	store_job_clear(&j);
	/* a restart resumes: the window and the start stay */
	assert_int_equal(store_job_run(fx->st, b, 900, 200), 0);
	get(fx, b, &j);
	assert_int_equal(j.started_at, 100);
	assert_int_equal(j.run_until, 500);
	assert_int_equal(j.runs, 1);
	store_job_clear(&j);
	assert_int_equal(store_job_finish(fx->st, b, STORE_JOB_INCOMPLETE,
	    "1 of 2 batches incomplete", 300), 0);
	get(fx, b, &j);
	assert_int_equal(j.status, STORE_JOB_INCOMPLETE);
	assert_string_equal(j.error, "1 of 2 batches incomplete");
	assert_int_equal(j.completed_at, 300);
	assert_int_equal(j.next_run_at, 0);	/* no schedule */
	store_job_clear(&j);
	assert_int_equal(store_job_next(fx->st, &id), 1);
	assert_int_equal(id, a);
	assert_int_equal(store_job_finish(fx->st, a, STORE_JOB_COMPLETE, NULL,
	    300), 0);
	assert_int_equal(store_job_next(fx->st, &id), 0);
}

static void
test_schedule(void **state)
{
	struct fixture		*fx = *state;
	struct store_job	 j;
	int64_t			 id = new_job(fx, "every", 60), due[4];

	assert_int_equal(store_job_run(fx->st, id, 1000, 1000), 0);
	assert_int_equal(store_jobs_due(fx->st, 5000, due, 4), 0);
	assert_int_equal(store_job_finish(fx->st, id, STORE_JOB_COMPLETE, "",
	    1010), 0);
	get(fx, id, &j);
	assert_int_equal(j.next_run_at, 1060);	/* started + every */
	store_job_clear(&j);
	assert_int_equal(store_jobs_due(fx->st, 1059, due, 4), 0);
	assert_int_equal(store_jobs_due(fx->st, 1060, due, 4), 1);
	assert_int_equal(due[0], id);
	assert_int_equal(store_job_rerun(fx->st, id, 1000), 0);
	assert_int_equal(store_job_planned(fx->st, id, 0, 0), 0);
	get(fx, id, &j);
	assert_int_equal(j.status, STORE_JOB_PENDING);
	assert_int_equal(j.run_since, 1000);
	assert_int_equal(j.prev_run_at, 1000);
	assert_int_equal(j.run_until, -1);
	assert_int_equal(j.next_run_at, 0);
	store_job_clear(&j);
	assert_int_equal(store_jobs_due(fx->st, 99999, due, 4), 0);
	/* the next run is a fresh one: new start and window */
	assert_int_equal(store_job_run(fx->st, id, 1070, 1070), 0);
	get(fx, id, &j);
	assert_int_equal(j.started_at, 1070);
	assert_int_equal(j.run_until, 1070);
	assert_int_equal(j.runs, 2);
	store_job_clear(&j);
	/* a run that finishes late is due at once */
	assert_int_equal(store_job_finish(fx->st, id, STORE_JOB_FAILED, "x",
	    2000), 0);
	get(fx, id, &j);
	assert_int_equal(j.next_run_at, 2000);
	store_job_clear(&j);
	/* a run that cannot be planned waits one period */
	assert_int_equal(store_job_skip_run(fx->st, id, "too many", 3000), 0);
	get(fx, id, &j);
	assert_int_equal(j.status, STORE_JOB_FAILED);
	assert_string_equal(j.error, "too many");
	assert_int_equal(j.next_run_at, 3060);
	store_job_clear(&j);
	/* cancel drops the schedule */
	assert_int_equal(store_job_cancel(fx->st, id, 3001), 1);
	get(fx, id, &j);
	assert_int_equal(j.status, STORE_JOB_CANCELLED);
	assert_int_equal(j.next_run_at, 0);
	store_job_clear(&j);
	assert_int_equal(store_job_cancel(fx->st, id, 3002), 0);
}

static void
test_cancel_retry_delete(void **state)
{
	struct fixture		*fx = *state;
	struct batches		 c = { .n = 0 };
	struct store_job	 j;
	int64_t			 id = job_with_batches(fx), counts[6], next;

	assert_int_equal(store_job_batches_due(fx->st, id, RA, 0, 8,
	    collect_batch, &c), 2);
	assert_int_equal(store_job_run(fx->st, id, 10, 10), 0);
	assert_int_equal(store_job_batch_start(fx->st, c.b[0].id, 10), 0);
	assert_int_equal(store_job_batch_end(fx->st,
	    &(struct store_job_batch_outcome){ .id = c.b[1].id, .job = id,
	    .status = STORE_JOB_COMPLETE, .why = STORE_CURSOR_WHY_NONE,
	    .reason = NULL,
	    .gap_since = -1, .now_s = 11 }), 0);
	assert_int_equal(store_job_cancel(fx->st, id, 12), 1);
	assert_int_equal(store_job_batch_counts(fx->st, id, counts, &next), 0);
	assert_int_equal(counts[STORE_JOB_CANCELLED], 2);	/* running, pending */
	assert_int_equal(counts[STORE_JOB_COMPLETE], 1);
	assert_int_equal(store_job_cancel(fx->st, id, 13), 0);

	assert_int_equal(store_job_retry(fx->st, id), 2);
	get(fx, id, &j);
	assert_int_equal(j.status, STORE_JOB_PENDING);
	assert_int_equal(j.done_batches, 1);
	assert_int_equal(j.completed_at, 0);
	store_job_clear(&j);
	assert_int_equal(store_job_batch_counts(fx->st, id, counts, &next), 0);
	assert_int_equal(counts[STORE_JOB_PENDING], 2);
	assert_int_equal(store_job_retry(fx->st, id), 0);	/* nothing */

	assert_int_equal(store_job_item_add(fx->st, id, 0, key(1)), 0);
	assert_int_equal(store_job_delete(fx->st, id), 1);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM job_batches"),
	    0);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM job_items"), 0);
	assert_int_equal(store_job_delete(fx->st, id), 0);
}

static void
test_summary(void **state)
{
	struct fixture			*fx = *state;
	struct store_jobs_summary	 s;
	int64_t				 a = job_with_batches(fx);
	int64_t				 b = new_job(fx, "b", 60);
	struct batches			 c = { .n = 0 };

	new_job(fx, "c", 0);
	assert_int_equal(store_job_run(fx->st, a, 10, 10), 0);
	assert_int_equal(store_job_batches_due(fx->st, a, RA, 0, 8,
	    collect_batch, &c), 2);
	assert_int_equal(store_job_batch_page(fx->st, c.b[0].id, a, 5, 12, 4),
	    0);
	assert_int_equal(store_job_cancel(fx->st, b, 10), 1);
	assert_int_equal(store_jobs_summary(fx->st, &s), 0);
	assert_int_equal(s.by_status[STORE_JOB_RUNNING], 1);
	assert_int_equal(s.by_status[STORE_JOB_PENDING], 1);
	assert_int_equal(s.by_status[STORE_JOB_CANCELLED], 1);
	assert_int_equal(s.running_id, a);
	assert_int_equal(s.events_fetched, 12);
	assert_int_equal(s.events_new, 4);
	assert_int_equal(s.scheduled, 1);
}

/*
 * Resolving a source reads indexes only: DISTINCT pubkey (and the kind 1
 * test) from events_pubkey_time without touching a row, the kind 0 check
 * as a probe of the partial index of replaceable kinds. A plan that scans
 * the events table itself would read every stored event's JSON.
 */
static void
test_resolve_plans(void **state)
{
	static const enum store_job_source srcs[] = { STORE_JOB_SRC_ALL,
	    STORE_JOB_SRC_KIND1, STORE_JOB_SRC_FOLLOWED };
	struct fixture	*fx = *state;
	char		 plan[1024];
	size_t		 i;

	for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		fixture_plan(fx, store_job_resolve_sql(srcs[i]), plan,
		    sizeof(plan));
		print_message("    %s: %s\n", store_job_source_name(srcs[i]),
		    plan);
		if (strstr(plan, "events_replaceable") == NULL)
			fail_msg("%s: kind 0 check without the partial index",
			    store_job_source_name(srcs[i]));
		if (srcs[i] != STORE_JOB_SRC_FOLLOWED &&
		    strstr(plan, "COVERING INDEX events_pubkey_time") == NULL)
			fail_msg("%s: authors not read from the index alone",
			    store_job_source_name(srcs[i]));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_row, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_newest_first, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_items, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve_plans, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_write_relays, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_release_relays,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_and_run, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_schedule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_retry_delete, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
