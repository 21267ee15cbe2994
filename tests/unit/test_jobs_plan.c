/*
 * test_jobs_plan.c — planning a custom backfill job on a real store
 * (sync/jobs_plan.h): a typed list cut chunk by chunk on every bootstrap
 * relay, the plan's figures and preview, a dry run that leaves nothing
 * behind, a time window as one batch per relay, custom relays, outbox
 * mode (each author on its write relays, the bootstrap relays for one
 * without), only-missing-kind-0, the refusal when no relay is left, and a
 * scheduled job's next run cut anew.
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
#include "core/hex.h"
#include "net/url.h"
#include "store/events.h"
#include "store/rules.h"
#include "store/follows.h"
#include "store/jobs.h"
#include "store/store.h"
#include "sync/job_spec.h"
#include "sync/jobs_plan.h"

#define RA	"wss://a.example"
#define RB	"wss://b.example"
#define RBOOT	"wss://boot.example"

#include "store_fixture.h"

static const uint8_t *
key(uint8_t b)
{
	static uint8_t	keys[256][32];

	memset(keys[b], b, 32);
	return keys[b];
}

/* "k1,k2,...": the hex keys of authors 1..n. */
static void
authors_text(char *out, size_t len, int n)
{
	char	hex[65];
	size_t	at = 0;
	int	i;

	out[0] = '\0';
	for (i = 1; i <= n; i++) {
		hex_encode(key((uint8_t)i), 32, hex, sizeof(hex));
		at += (size_t)snprintf(out + at, len - at, "%s%s",
		    i > 1 ? "," : "", hex);
	}
}

struct env {
	struct config		*cfg;
	struct jobs_planner	 pl;
};

static void
env_init(struct env *e, struct fixture *fx, const char *bootstrap)
{
	char	err[256];

	assert_non_null(e->cfg = config_new());
	assert_int_equal(config_set(e->cfg, "relays.bootstrap", bootstrap,
	    CFG_SRC_CLI, err, sizeof(err)), 0);
	assert_int_equal(config_set(e->cfg, "backfill.pace_ms", "2000",
	    CFG_SRC_CLI, err, sizeof(err)), 0);
	e->pl.st = fx->st;
	e->pl.cfg = e->cfg;
}

/* Plan args; the rc, with plan and err filled. */
static int
plan(struct env *e, const struct job_args *a, bool dry, struct jobs_plan *p,
    char *err, size_t errlen)
{
	struct job_spec	spec;
	int		rc;

	assert_int_equal(job_spec_parse(a, &spec, err, errlen), 0);
	rc = jobs_plan_create(&e->pl, &spec, "console", dry, p, err, errlen);
	job_spec_free(&spec);
	return rc;
}

struct batches {
	struct store_job_batch	b[16];
	size_t			n;
};

static int
collect(const struct store_job_batch *b, void *arg)
{
	struct batches	*bs = arg;

	bs->b[bs->n++] = *b;
	return bs->n >= 16 ? 1 : 0;
}

static void
batches(struct fixture *fx, int64_t job, struct batches *bs)
{
	bs->n = 0;
	assert_true(store_job_batches_unfinished(fx->st, job, 16, collect,
	    bs) >= 0);
}

static const struct jobs_plan_relay *
plan_relay(const struct jobs_plan *p, const char *url)
{
	size_t	i;

	for (i = 0; i < p->nrelays; i++)
		if (strcmp(p->relays[i].url, url) == 0)
			return &p->relays[i];
	return NULL;
}

/* Five authors, batches of two, two bootstrap relays: chunk by chunk. */
static void
test_list_on_every_relay(void **state)
{
	struct fixture	*fx = *state;
	struct env	 e;
	struct jobs_plan p;
	struct batches	 bs;
	char		 list[5 * 66], err[256];
	struct job_args	 a = { .kinds = "1", .authors = list,
			    .batch_size = "2" };
	size_t		 i;

	env_init(&e, fx, RA "," RB);
	authors_text(list, sizeof(list), 5);
	assert_int_equal(plan(&e, &a, false, &p, err, sizeof(err)), 0);
	assert_true(p.job > 0);
	assert_int_equal(p.mode, STORE_JOB_MODE_AUTHORS);
	assert_int_equal(p.items, 5);
	assert_int_equal(p.batches, 6);
	assert_int_equal(p.requests, 6);
	assert_int_equal(p.nrelays, 2);
	assert_int_equal(plan_relay(&p, RA)->batches, 3);
	assert_int_equal(plan_relay(&p, RB)->batches, 3);
	/* Three requests a relay at 2 s: the busiest relay sets the time. */
	assert_int_equal(p.pace_ms, 2000);
	assert_int_equal(p.estimated_s, 6);
	assert_int_equal(p.npreview, 5);
	assert_memory_equal(p.preview[0], key(1), 32);
	assert_memory_equal(p.preview[4], key(5), 32);
	assert_non_null(strstr(p.filter_json, "\"kinds\":[1]"));
	batches(fx, p.job, &bs);
	assert_int_equal(bs.n, 6);
	for (i = 0; i < bs.n; i++) {
		assert_int_equal(bs.b[i].index, (int64_t)i);
		assert_string_equal(bs.b[i].relay, i % 2 == 0 ? RA : RB);
		assert_int_equal(bs.b[i].item_lo, (int64_t)(i / 2) * 2);
		assert_false(bs.b[i].has_mask);
		assert_int_equal(bs.b[i].status, STORE_JOB_PENDING);
	}
	assert_int_equal(bs.b[5].item_hi, 5);	/* the last chunk is short */
	assert_int_equal(bs.b[5].items, 1);
	jobs_plan_free(&p);
	config_free(e.cfg);
}

/* A dry run gives the same figures and leaves no row. */
static void
test_dry_run_leaves_nothing(void **state)
{
	struct fixture	*fx = *state;
	struct env	 e;
	struct jobs_plan p;
	char		 list[5 * 66], err[256];
	struct job_args	 a = { .kinds = "1", .authors = list,
			    .batch_size = "2" };

	env_init(&e, fx, RA "," RB);
	authors_text(list, sizeof(list), 5);
	assert_int_equal(plan(&e, &a, true, &p, err, sizeof(err)), 0);
	assert_int_equal(p.job, 0);
	assert_int_equal(p.items, 5);
	assert_int_equal(p.batches, 6);
	assert_int_equal(p.nrelays, 2);
	assert_int_equal(p.npreview, 5);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM jobs"), 0);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM job_batches"),
	    0);
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM job_items"), 0);
	jobs_plan_free(&p);
	config_free(e.cfg);
}

/* No authors, no ids: one batch per relay, of no items. */
static void
test_time_window(void **state)
{
	struct fixture	*fx = *state;
	struct env	 e;
	struct jobs_plan p;
	struct batches	 bs;
	char		 err[256];
	struct job_args	 a = { .kinds = "0", .since = "1700000000" };

	env_init(&e, fx, RA "," RB);
	assert_int_equal(plan(&e, &a, false, &p, err, sizeof(err)), 0);
	assert_int_equal(p.mode, STORE_JOB_MODE_NONE);
	assert_int_equal(p.items, 0);
	assert_int_equal(p.batches, 2);
	batches(fx, p.job, &bs);
	assert_int_equal(bs.n, 2);
	assert_int_equal(bs.b[0].item_lo, 0);
	assert_int_equal(bs.b[0].item_hi, 0);
	jobs_plan_free(&p);
	config_free(e.cfg);
}

/* Custom relays replace the bootstrap ones. */
static void
test_custom_relays(void **state)
{
	struct fixture	*fx = *state;
	struct env	 e;
	struct jobs_plan p;
	struct batches	 bs;
	char		 list[3 * 66], err[256];
	struct job_args	 a = { .kinds = "1", .authors = list,
			    .relay_mode = "custom", .relays = RBOOT };

	env_init(&e, fx, RA "," RB);
	authors_text(list, sizeof(list), 3);
	assert_int_equal(plan(&e, &a, false, &p, err, sizeof(err)), 0);
	assert_int_equal(p.batches, 1);
	assert_int_equal(p.nrelays, 1);
	assert_string_equal(p.relays[0].url, RBOOT);
	batches(fx, p.job, &bs);
	assert_int_equal(bs.n, 1);
	assert_string_equal(bs.b[0].relay, RBOOT);
	assert_int_equal(bs.b[0].item_hi, 3);
	jobs_plan_free(&p);
	config_free(e.cfg);
}

static bool
mask_has(const struct store_job_batch *b, int i)
{
	return (b->mask[i / 8] & (1u << (i % 8))) != 0;
}

/*
 * Outbox: author 1 writes to A, author 2 to A and B (reads C), author 3
 * lists none: A asks 1 and 2, B asks 2, the bootstrap relay asks 3.
 */
static void
test_outbox(void **state)
{
	struct fixture			*fx = *state;
	struct env			 e;
	struct jobs_plan		 p;
	struct batches			 bs;
	char				 list[3 * 66], err[256];
	struct job_args			 a = { .kinds = "1", .authors = list,
					    .relay_mode = "outbox" };
	struct store_author_relay	 one[] = { { RA, true, true } };
	struct store_author_relay	 two[] = { { RA, true, true },
					    { RB, false, true },
					    { "wss://c.example", true,
					    false } };
	size_t				 i;
	const struct store_job_batch	*ba = NULL, *bb = NULL, *bboot = NULL;

	env_init(&e, fx, RBOOT);
	assert_int_equal(store_author_relays_set(fx->st, key(1), one, 1, 10),
	    1);
	assert_int_equal(store_author_relays_set(fx->st, key(2), two, 3, 10),
	    1);
	authors_text(list, sizeof(list), 3);
	assert_int_equal(plan(&e, &a, false, &p, err, sizeof(err)), 0);
	assert_int_equal(p.items, 3);
	assert_int_equal(p.batches, 3);
	assert_int_equal(p.nrelays, 3);
	assert_non_null(plan_relay(&p, RA));
	assert_non_null(plan_relay(&p, RB));
	assert_non_null(plan_relay(&p, RBOOT));
	assert_null(plan_relay(&p, "wss://c.example"));	/* read only */
	batches(fx, p.job, &bs);
	assert_int_equal(bs.n, 3);
	for (i = 0; i < bs.n; i++) {
		if (strcmp(bs.b[i].relay, RA) == 0)
			ba = &bs.b[i];
		else if (strcmp(bs.b[i].relay, RB) == 0)
			bb = &bs.b[i];
		else if (strcmp(bs.b[i].relay, RBOOT) == 0)
			bboot = &bs.b[i];
	}
	assert_non_null(ba);
	assert_non_null(bb);
	assert_non_null(bboot);
	assert_true(ba->has_mask);
	assert_int_equal(ba->items, 2);
	assert_true(mask_has(ba, 0) && mask_has(ba, 1) && !mask_has(ba, 2));
	assert_int_equal(bb->items, 1);
	assert_true(!mask_has(bb, 0) && mask_has(bb, 1) && !mask_has(bb, 2));
	assert_int_equal(bboot->items, 1);
	assert_true(!mask_has(bboot, 0) && !mask_has(bboot, 1) &&
	    mask_has(bboot, 2));
	jobs_plan_free(&p);
	config_free(e.cfg);
}

/* Only authors without a kind 0 are planned when asked so. */
static void
test_only_missing_kind0(void **state)
{
	struct fixture		*fx = *state;
	struct env		 e;
	struct jobs_plan	 p;
	char			 list[3 * 66], err[256];
	struct job_args		 a = { .kinds = "1", .authors = list,
				    .only_missing_kind0 = "true" };
	uint8_t			 id[32];
	struct store_event_row	 row;

	memset(id, 0xee, sizeof(id));
	memset(&row, 0, sizeof(row));
	row.id = id;
	row.pubkey = key(2);
	row.kind = 0;
	row.created_at = 1700000000;
	row.json = "{}";
	row.json_len = 2;
	row.source = "backfill";
	row.first_relay = RA;
	row.received_at = 1700000000;
	assert_int_equal(store_event_insert(fx->st, &row, false), 1);
	env_init(&e, fx, RA);
	authors_text(list, sizeof(list), 3);
	assert_int_equal(plan(&e, &a, true, &p, err, sizeof(err)), 0);
	assert_int_equal(p.items, 2);
	assert_int_equal(p.npreview, 2);
	assert_memory_equal(p.preview[0], key(1), 32);
	assert_memory_equal(p.preview[1], key(3), 32);
	jobs_plan_free(&p);
	config_free(e.cfg);
}

/* No bootstrap relay: refused with the field, and nothing stays. */
static void
test_no_relay(void **state)
{
	struct fixture	*fx = *state;
	struct env	 e;
	struct jobs_plan p;
	char		 list[2 * 66], err[256];
	struct job_args	 a = { .kinds = "1", .authors = list };

	env_init(&e, fx, "");
	authors_text(list, sizeof(list), 2);
	assert_int_equal(plan(&e, &a, false, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "relay_mode: no relay to ask"));
	assert_int_equal(fixture_int(fx, "SELECT count(*) FROM jobs"), 0);
	config_free(e.cfg);
}

/* A scheduled job's next run: its batches are cut again, pending. */
static void
test_rerun_cuts_again(void **state)
{
	struct fixture	*fx = *state;
	struct env	 e;
	struct jobs_plan p;
	struct batches	 bs;
	char		 list[3 * 66], err[256];
	struct job_args	 a = { .kinds = "1", .authors = list,
			    .batch_size = "2", .every = "1d" };

	env_init(&e, fx, RA);
	authors_text(list, sizeof(list), 3);
	assert_int_equal(plan(&e, &a, false, &p, err, sizeof(err)), 0);
	assert_int_equal(p.batches, 2);
	assert_int_equal(jobs_plan_rerun(&e.pl, p.job), 0);
	batches(fx, p.job, &bs);
	assert_int_equal(bs.n, 2);
	assert_int_equal(bs.b[1].item_lo, 2);
	assert_int_equal(bs.b[1].item_hi, 3);
	jobs_plan_free(&p);
	config_free(e.cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_list_on_every_relay,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_dry_run_leaves_nothing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_window, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_custom_relays, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_outbox, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_missing_kind0, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_no_relay, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rerun_cuts_again, setup,
		    teardown),
	};

	config_lend_check(CFG_URLS, url_check_relay);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
