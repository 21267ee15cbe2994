/*
 * test_outbox.c — the outbox relay plan: at most SYNC_OUTBOX_RELAYS_MAX
 * outbox relays in all, most shared first, bootstrap relays never
 * counted; per author its listed bootstrap relays plus at most
 * SYNC_OUTBOX_PER_AUTHOR planned ones by rank. On a real store, a hostile
 * relay list of 1,000 relays and a hundred authors with 32 scattered
 * relays each end with a bounded set of hosts to dial.
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
#include "store/follows.h"
#include "store/store.h"
#include "sync/outbox.h"

static char	*boots[] = { "wss://boot.example", "wss://boot2.example" };

static void
test_offer_bounded_and_ranked(void **state)
{
	struct outbox_plan	p;

	(void)state;
	outbox_plan_init(&p, 3, boots, 2);
	assert_int_equal(outbox_plan_offer(&p, "wss://z.example"), 1);
	assert_int_equal(outbox_plan_offer(&p, "wss://boot.example"), 0);
	assert_int_equal(outbox_plan_offer(&p, "wss://a.example"), 1);
	assert_int_equal(outbox_plan_offer(&p, "wss://z.example"), 0);
	assert_int_equal(outbox_plan_offer(&p, "wss://m.example"), 1);
	assert_int_equal(outbox_plan_offer(&p, "wss://b.example"), 0); /* full */
	assert_int_equal(p.n, 3);
	assert_int_equal(outbox_rank(&p, "wss://z.example"), 0);
	assert_int_equal(outbox_rank(&p, "wss://a.example"), 1);
	assert_int_equal(outbox_rank(&p, "wss://m.example"), 2);
	assert_int_equal(outbox_rank(&p, "wss://b.example"), -1);
	assert_int_equal(outbox_rank(&p, "wss://boot.example"), -1);
	assert_true(outbox_allowed(&p, "wss://boot2.example"));
	assert_true(outbox_allowed(&p, "wss://a.example"));
	assert_false(outbox_allowed(&p, "wss://b.example"));
	outbox_plan_free(&p);
	assert_int_equal(p.n, 0);
	assert_false(outbox_allowed(&p, "wss://a.example"));
}

static void
test_pick_per_author(void **state)
{
	struct outbox_plan	 p;
	const char		*urls[] = {
		"wss://x.example",	/* 0: not planned */
		"wss://c.example",	/* 1: rank 2 */
		"wss://boot2.example",	/* 2: bootstrap */
		"wss://a.example",	/* 3: rank 0 */
		"wss://d.example",	/* 4: rank 3 */
		"wss://b.example",	/* 5: rank 1 */
	};
	size_t			 out[6], n;

	(void)state;
	outbox_plan_init(&p, 10, boots, 2);
	assert_int_equal(outbox_plan_offer(&p, "wss://a.example"), 1);
	assert_int_equal(outbox_plan_offer(&p, "wss://b.example"), 1);
	assert_int_equal(outbox_plan_offer(&p, "wss://c.example"), 1);
	assert_int_equal(outbox_plan_offer(&p, "wss://d.example"), 1);
	/* Two outbox relays at most: the bootstrap one, then a and b. */
	n = outbox_pick(&p, urls, 6, 2, out);
	assert_int_equal(n, 3);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 3);
	assert_int_equal(out[2], 5);
	/* Room for all: every planned one by rank, x never. */
	n = outbox_pick(&p, urls, 6, 8, out);
	assert_int_equal(n, 5);
	assert_int_equal(out[1], 3);
	assert_int_equal(out[2], 5);
	assert_int_equal(out[3], 1);
	assert_int_equal(out[4], 4);
	/* None allowed: only the bootstrap relay. */
	n = outbox_pick(&p, urls, 6, 0, out);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 2);
	n = outbox_pick(&p, urls, 0, 8, out);
	assert_int_equal(n, 0);
	outbox_plan_free(&p);
}

#include "store_fixture.h"

static void
author_key(uint8_t pk[32], size_t i)
{
	memset(pk, 0, 32);
	pk[0] = 0x10;
	pk[30] = (uint8_t)(i >> 8);
	pk[31] = (uint8_t)i;
}

/* Store author i's list: urls made by fmt(i, k) for k < n. */
static void
set_list(struct store *st, size_t i, size_t n, const char *shared)
{
	struct store_author_relay	*l;
	char				(*urls)[64];
	uint8_t				 pk[32];
	size_t				 k;

	l = calloc(n, sizeof(*l));
	urls = calloc(n, sizeof(*urls));
	assert_non_null(l);
	assert_non_null(urls);
	for (k = 0; k < n; k++) {
		if (shared != NULL && k == 0)
			snprintf(urls[k], 64, "%s", shared);
		else
			snprintf(urls[k], 64, "wss://r%zu-%zu.example", i, k);
		l[k].url = urls[k];
		l[k].read = l[k].write = true;
	}
	author_key(pk, i);
	assert_int_equal(store_author_relays_set(st, pk, l, n, 1700000000),
	    1);
	free(urls);
	free(l);
}

static void
follow_all(struct store *st, size_t n)
{
	uint8_t	(*f)[32] = calloc(n, 32);
	size_t	  i;

	assert_non_null(f);
	for (i = 0; i < n; i++)
		author_key(f[i], i);
	assert_int_equal(store_follows_sync(st, (const uint8_t (*)[32])f, n,
	    NULL, 0, 1700000000, NULL), 0);
	free(f);
}

/* What every author's picks add up to: distinct relays, all allowed. */
struct dial {
	const struct outbox_plan	*p;
	char				 urls[SYNC_OUTBOX_RELAYS_MAX + 8][64];
	size_t				 n;
	size_t				 calls;
};

static int
dial_cb(const uint8_t pk[32], const struct store_author_relay *ar, void *arg)
{
	struct dial	*d = arg;
	size_t		 i;

	(void)pk;
	assert_true(ar->write);
	assert_true(outbox_allowed(d->p, ar->url));
	d->calls++;
	for (i = 0; i < d->n; i++)
		if (strcmp(d->urls[i], ar->url) == 0)
			return 0;
	assert_true(d->n < SYNC_OUTBOX_RELAYS_MAX + 8);
	snprintf(d->urls[d->n++], 64, "%s", ar->url);
	return 0;
}

/* Each author's picks into d; returns the largest number one author got. */
static size_t
dial_all(struct store *st, const struct outbox_plan *p, size_t nauth,
    struct dial *d, size_t *per)
{
	uint8_t	pk[32];
	size_t	i, before, most = 0;
	int	rc;

	memset(d, 0, sizeof(*d));
	d->p = p;
	for (i = 0; i < nauth; i++) {
		author_key(pk, i);
		before = d->calls;
		rc = outbox_author_each(p, st, pk, dial_cb, d);
		per[i] = d->calls - before;
		assert_int_equal(rc, (int)per[i]);
		if (per[i] > most)
			most = per[i];
	}
	return most;
}

static void
test_store_hostile_list(void **state)
{
	struct fixture		*fx = *state;
	struct outbox_plan	 p;
	static struct dial	 d;
	size_t			 i, per[111];

	/* Author 0: a list of 1,000 relays. Authors 1..100: one relay they
	 * share plus 31 of their own. Authors 101..110: 3 of their own. */
	set_list(fx->st, 0, 1000, NULL);
	for (i = 1; i <= 100; i++)
		set_list(fx->st, i, 32, "wss://shared.example");
	for (i = 101; i <= 110; i++)
		set_list(fx->st, i, 3, NULL);
	follow_all(fx->st, 111);
	outbox_plan_init(&p, SYNC_OUTBOX_RELAYS_MAX, boots, 2);
	assert_int_equal(outbox_plan_load(&p, fx->st), 0);
	/* The shared relay, then one relay for each uncovered author. */
	assert_int_equal(p.n, 12);
	assert_int_equal(outbox_rank(&p, "wss://shared.example"), 0);
	assert_true(outbox_allowed(&p, "wss://r0-0.example"));
	assert_false(outbox_allowed(&p, "wss://r0-1.example"));
	assert_true(outbox_allowed(&p, "wss://r101-0.example"));
	assert_false(outbox_allowed(&p, "wss://r1-1.example"));
	assert_int_equal(dial_all(fx->st, &p, 111, &d, per), 1);
	assert_int_equal(d.n, 12);
	assert_int_equal(d.calls, 111);
	outbox_plan_free(&p);
}

static void
test_store_overall_cap(void **state)
{
	struct fixture		*fx = *state;
	struct outbox_plan	 p;
	static struct dial	 d;
	char			 shared[64];
	size_t			 i, per[140], without = 0;

	/* 70 pairs of authors, each pair sharing one relay besides 20 of
	 * its own: 70 relays with two writers, more than the plan holds. */
	for (i = 0; i < 140; i++) {
		snprintf(shared, sizeof(shared), "wss://pair%03zu.example",
		    i / 2);
		set_list(fx->st, i, 21, shared);
	}
	follow_all(fx->st, 140);
	outbox_plan_init(&p, SYNC_OUTBOX_RELAYS_MAX, boots, 2);
	assert_int_equal(outbox_plan_load(&p, fx->st), 0);
	assert_int_equal(p.n, SYNC_OUTBOX_RELAYS_MAX);
	assert_int_equal(outbox_rank(&p, "wss://pair000.example"), 0);
	assert_int_equal(outbox_rank(&p, "wss://pair063.example"), 63);
	assert_int_equal(outbox_rank(&p, "wss://pair064.example"), -1);
	assert_int_equal(dial_all(fx->st, &p, 140, &d, per), 1);
	assert_int_equal(d.n, SYNC_OUTBOX_RELAYS_MAX);
	for (i = 0; i < 140; i++)
		without += per[i] == 0;
	assert_int_equal(without, 12);	/* read from bootstrap only */
	outbox_plan_free(&p);
}

static void
test_store_per_author_cap(void **state)
{
	struct fixture		*fx = *state;
	struct outbox_plan	 p;
	static struct dial	 d;
	struct store_author_relay l[12];
	char			 urls[12][64];
	uint8_t			 pk[32];
	size_t			 i, j, per[2];

	/* Two authors listing the same 12 relays and one bootstrap relay:
	 * all 12 are shared, yet each author uses SYNC_OUTBOX_PER_AUTHOR
	 * of them, plus the bootstrap relay, which is not counted. */
	for (i = 0; i < 2; i++) {
		for (j = 0; j < 12; j++) {
			if (j == 11)
				snprintf(urls[j], 64, "%s", boots[0]);
			else
				snprintf(urls[j], 64, "wss://s%02zu.example", j);
			l[j].url = urls[j];
			l[j].read = l[j].write = true;
		}
		author_key(pk, i);
		assert_int_equal(store_author_relays_set(fx->st, pk, l, 12,
		    1700000000), 1);
	}
	follow_all(fx->st, 2);
	outbox_plan_init(&p, SYNC_OUTBOX_RELAYS_MAX, boots, 2);
	assert_int_equal(outbox_plan_load(&p, fx->st), 0);
	assert_int_equal(p.n, 11);
	assert_int_equal(dial_all(fx->st, &p, 2, &d, per),
	    SYNC_OUTBOX_PER_AUTHOR + 1);
	assert_int_equal(per[0], SYNC_OUTBOX_PER_AUTHOR + 1);
	assert_int_equal(d.n, SYNC_OUTBOX_PER_AUTHOR + 1);
	outbox_plan_free(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offer_bounded_and_ranked),
		cmocka_unit_test(test_pick_per_author),
		cmocka_unit_test_setup_teardown(test_store_hostile_list, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_store_overall_cap, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_store_per_author_cap,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
