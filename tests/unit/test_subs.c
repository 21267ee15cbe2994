/*
 * test_subs.c — the planners' filter and URL helpers: authors cut into
 * filters of SYNC_AUTHORS_PER_FILTER and requests of SYNC_FILTERS_PER_SUB
 * filters with exact boundaries, kinds and since carried into every
 * filter, refusals; relay URL lists split, trimmed, normalised and
 * deduplicated.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "nostr/filter.h"
#include "sync/subs.h"

/* n authors whose first two bytes are their index. */
static uint8_t (*
authors_make(size_t n))[32]
{
	uint8_t	(*a)[32] = calloc(n, 32);
	size_t	  i;

	assert_non_null(a);
	for (i = 0; i < n; i++) {
		a[i][0] = (uint8_t)(i >> 8);
		a[i][1] = (uint8_t)i;
	}
	return a;
}

static size_t
author_index(const uint8_t pk[32])
{
	return (size_t)pk[0] << 8 | pk[1];
}

static void
test_filter_authors(void **state)
{
	uint8_t			(*a)[32] = authors_make(3);
	static const uint16_t	 kinds[] = { 0, 10002 };
	struct filter		 f;

	(void)state;
	assert_int_equal(sync_filter_authors(&f, (const uint8_t (*)[32])a, 3,
	    kinds, 2, 1700000000), 0);
	assert_int_equal(f.nauthors, 3);
	assert_memory_equal(f.authors, a, 3 * 32);
	assert_int_equal(f.nkinds, 2);
	assert_int_equal(f.kinds[1], 10002);
	assert_int_equal(f.since, 1700000000);
	assert_int_equal(f.has, FILTER_HAS_AUTHORS | FILTER_HAS_KINDS |
	    FILTER_HAS_SINCE);
	filter_free(&f);

	/* No kinds, no since: only authors. */
	assert_int_equal(sync_filter_authors(&f, (const uint8_t (*)[32])a, 1,
	    NULL, 0, -1), 0);
	assert_int_equal(f.has, FILTER_HAS_AUTHORS);
	assert_int_equal(f.nauthors, 1);
	filter_free(&f);

	/* Refused: none, or more than a filter may hold. */
	assert_int_equal(sync_filter_authors(&f, (const uint8_t (*)[32])a, 0,
	    NULL, 0, -1), -1);
	assert_null(f.authors);
	free(a);
	a = authors_make(FILTER_MAX_AUTHORS + 1);
	assert_int_equal(sync_filter_authors(&f, (const uint8_t (*)[32])a,
	    FILTER_MAX_AUTHORS + 1, NULL, 0, -1), -1);
	assert_null(f.authors);
	free(a);
}

static void
test_chunks_exact(void **state)
{
	size_t			 n = 450, pos = 0;
	uint8_t			(*a)[32] = authors_make(n);
	struct filter		 f[SYNC_FILTERS_PER_SUB];
	static const uint16_t	 kinds[] = { 1 };
	int			 nf;

	(void)state;
	assert_int_equal(SYNC_AUTHORS_PER_FILTER, 200);
	nf = sync_filters_chunk(f, (const uint8_t (*)[32])a, n, &pos, kinds,
	    1, 42);
	assert_int_equal(nf, 3);
	assert_int_equal(pos, 450);
	assert_int_equal(f[0].nauthors, 200);
	assert_int_equal(f[1].nauthors, 200);
	assert_int_equal(f[2].nauthors, 50);
	assert_int_equal(author_index(f[0].authors[0]), 0);
	assert_int_equal(author_index(f[0].authors[199]), 199);
	assert_int_equal(author_index(f[1].authors[0]), 200);
	assert_int_equal(author_index(f[2].authors[0]), 400);
	assert_int_equal(author_index(f[2].authors[49]), 449);
	assert_int_equal(f[2].kinds[0], 1);
	assert_int_equal(f[2].since, 42);
	sync_filters_free(f, (size_t)nf);
	/* Nothing left. */
	assert_int_equal(sync_filters_chunk(f, (const uint8_t (*)[32])a, n,
	    &pos, NULL, 0, -1), 0);
	free(a);
}

static void
test_chunks_split_requests(void **state)
{
	size_t		 n = SYNC_AUTHORS_PER_FILTER * SYNC_FILTERS_PER_SUB + 7;
	size_t		 pos = 0, i;
	uint8_t		(*a)[32] = authors_make(n);
	struct filter	 f[SYNC_FILTERS_PER_SUB];
	int		 nf;

	(void)state;
	/* 1,607 authors: one full request of 8 x 200, then one of 7. */
	nf = sync_filters_chunk(f, (const uint8_t (*)[32])a, n, &pos, NULL,
	    0, -1);
	assert_int_equal(nf, SYNC_FILTERS_PER_SUB);
	assert_int_equal(pos, 1600);
	for (i = 0; i < (size_t)nf; i++) {
		assert_int_equal(f[i].nauthors, 200);
		assert_int_equal(f[i].has, FILTER_HAS_AUTHORS);
	}
	sync_filters_free(f, (size_t)nf);
	nf = sync_filters_chunk(f, (const uint8_t (*)[32])a, n, &pos, NULL,
	    0, -1);
	assert_int_equal(nf, 1);
	assert_int_equal(pos, n);
	assert_int_equal(f[0].nauthors, 7);
	assert_int_equal(author_index(f[0].authors[0]), 1600);
	assert_int_equal(author_index(f[0].authors[6]), 1606);
	sync_filters_free(f, 1);
	free(a);
}

static void
test_urls_parse(void **state)
{
	char	**u;
	size_t	  n;

	(void)state;
	n = sync_urls_parse(" wss://Relay.Example.com:443/ ,ws://127.0.0.1:7777,"
	    ",\twss://relay.example.com, https://not.a.relay, nonsense ,"
	    "wss://b.example/path", &u);
	assert_int_equal(n, 3);
	assert_string_equal(u[0], "wss://relay.example.com");
	assert_string_equal(u[1], "ws://127.0.0.1:7777");
	assert_string_equal(u[2], "wss://b.example/path");
	sync_urls_free(u, n);

	assert_int_equal(sync_urls_parse("", &u), 0);
	assert_null(u);
	assert_int_equal(sync_urls_parse(NULL, &u), 0);
	assert_null(u);
	assert_int_equal(sync_urls_parse(" , ,", &u), 0);
	assert_null(u);
}

static void
test_urls_parse_long_item(void **state)
{
	char	*text, **u;
	size_t	 n, len = URL_MAX_BYTES + 10;

	(void)state;
	/* An item over URL_MAX_BYTES is skipped, the next one kept. */
	text = malloc(len + 32);
	assert_non_null(text);
	memcpy(text, "wss://", 6);
	memset(text + 6, 'a', len - 6);
	strcpy(text + len, ",wss://ok.example");
	n = sync_urls_parse(text, &u);
	assert_int_equal(n, 1);
	assert_string_equal(u[0], "wss://ok.example");
	sync_urls_free(u, n);
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_authors),
		cmocka_unit_test(test_chunks_exact),
		cmocka_unit_test(test_chunks_split_requests),
		cmocka_unit_test(test_urls_parse),
		cmocka_unit_test(test_urls_parse_long_item),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
