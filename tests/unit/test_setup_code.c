/*
 * test_setup_code.c — the first-run setup code on an injected clock: the
 * generator's exact mapping and its spread over the alphabet, the shown
 * form, lenient reading of what was typed, expiry at exactly
 * SETUP_CODE_TTL_MS, a used code gone, and the limiter of wrong codes
 * from every address: locked at SETUP_CODE_FAILURES, the right code
 * refused while locked, open again when the window ends.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/setup_code.h"

#define T0	1000000		/* an arbitrary monotonic start, ms */

/* The code made from the bytes 0, 1, 2, ... 9 plus base. */
static void
make_counting(struct setup_code *sc, uint8_t base, uint64_t now)
{
	uint8_t	rnd[SETUP_CODE_CHARS];
	size_t	i;

	for (i = 0; i < sizeof(rnd); i++)
		rnd[i] = (uint8_t)(base + i);
	setup_code_init(sc);
	setup_code_from_bytes(sc, rnd, now);
}

static void
test_generator_mapping(void **state)
{
	struct setup_code	sc;
	char			shown[SETUP_CODE_TEXT_MAX];

	make_counting(&sc, 0, T0);
	assert_string_equal(sc.code, "0123456789");
	make_counting(&sc, 10, T0);
	assert_string_equal(sc.code, "ABCDEFGHJK");
	make_counting(&sc, 22, T0);		/* no I, L, O, U */
	assert_string_equal(sc.code, "PQRSTVWXYZ");
	make_counting(&sc, 23, T0);		/* 32 wraps to 0 */
	assert_string_equal(sc.code, "QRSTVWXYZ0");
	make_counting(&sc, 0xe0 + 20, T0);	/* only the low 5 bits count */
	assert_string_equal(sc.code, "MNPQRSTVWX");
	setup_code_format(&sc, shown, sizeof(shown));
	assert_string_equal(shown, "MNPQR-STVWX");
	assert_int_equal(strlen(shown) + 1, 12);
	assert_true(sizeof(shown) >= 12);
}

static void
test_random_codes(void **state)
{
	struct setup_code	sc, prev;
	unsigned		seen[32] = { 0 };
	const char		*p;
	int			i, j;

	setup_code_init(&prev);
	for (i = 0; i < 3200; i++) {
		setup_code_init(&sc);
		assert_int_equal(setup_code_make(&sc, T0), 0);
		assert_int_equal(strlen(sc.code), SETUP_CODE_CHARS);
		assert_true(setup_code_valid(&sc, T0));
		assert_int_equal(sc.expires_ms, T0 + SETUP_CODE_TTL_MS);
		assert_string_not_equal(sc.code, prev.code);
		for (j = 0; j < SETUP_CODE_CHARS; j++) {
			p = strchr(SETUP_CODE_ALPHABET, sc.code[j]);
			assert_non_null(p);
			seen[p - SETUP_CODE_ALPHABET]++;
		}
		prev = sc;
	}
	/* 32000 characters: 1000 of each expected, sd 31; 200 is 6 sd */
	for (j = 0; j < 32; j++)
		assert_in_range(seen[j], 800, 1200);
}

static void
test_typed_leniently(void **state)
{
	struct setup_code	sc;

	make_counting(&sc, 0, T0);		/* "0123456789" */
	assert_int_equal(setup_code_check(&sc, "01234-56789", T0, NULL),
	    SETUP_CHECK_OK);
	assert_int_equal(setup_code_check(&sc, " oi234 56789 ", T0, NULL),
	    SETUP_CHECK_OK);
	assert_int_equal(setup_code_check(&sc, "OL23456789", T0, NULL),
	    SETUP_CHECK_OK);
	make_counting(&sc, 10, T0);		/* "ABCDEFGHJK" */
	assert_int_equal(setup_code_check(&sc, "abcde-fghjk", T0, NULL),
	    SETUP_CHECK_OK);
	/* one character off, one short, one long, one outside the alphabet */
	assert_int_equal(setup_code_check(&sc, "ABCDE-FGHJM", T0, NULL),
	    SETUP_CHECK_WRONG);
	assert_int_equal(setup_code_check(&sc, "ABCDE-FGHJ", T0, NULL),
	    SETUP_CHECK_WRONG);
	assert_int_equal(setup_code_check(&sc, "ABCDE-FGHJKK", T0, NULL),
	    SETUP_CHECK_WRONG);
	assert_int_equal(setup_code_check(&sc, "ABCDE-FGHJU", T0, NULL),
	    SETUP_CHECK_WRONG);
	assert_int_equal(setup_code_check(&sc, "", T0, NULL),
	    SETUP_CHECK_WRONG);
	assert_int_equal(sc.failures, 5);
	assert_true(setup_code_valid(&sc, T0));	/* wrong ones do not use it */
}

static void
test_expiry(void **state)
{
	struct setup_code	sc;
	char			shown[SETUP_CODE_TEXT_MAX];

	make_counting(&sc, 10, T0);
	assert_int_equal(setup_code_left_ms(&sc, T0 + 1000),
	    SETUP_CODE_TTL_MS - 1000);
	assert_int_equal(setup_code_check(&sc, "ABCDEFGHJK",
	    T0 + SETUP_CODE_TTL_MS - 1, NULL), SETUP_CHECK_OK);
	assert_false(setup_code_valid(&sc, T0 + SETUP_CODE_TTL_MS));
	assert_int_equal(setup_code_left_ms(&sc, T0 + SETUP_CODE_TTL_MS), 0);
	assert_int_equal(setup_code_check(&sc, "ABCDEFGHJK",
	    T0 + SETUP_CODE_TTL_MS, NULL), SETUP_CHECK_NONE);
	/* dropped: even the clock going back does not bring it back */
	assert_int_equal(setup_code_check(&sc, "ABCDEFGHJK", T0, NULL),
	    SETUP_CHECK_NONE);
	assert_int_equal(sc.failures, 0);	/* nothing was compared */
	setup_code_format(&sc, shown, sizeof(shown));
	assert_string_equal(shown, "");
}

static void
test_used_code_gone(void **state)
{
	struct setup_code	sc;

	make_counting(&sc, 10, T0);
	assert_int_equal(setup_code_check(&sc, "ABCDEFGHJK", T0, NULL),
	    SETUP_CHECK_OK);
	setup_code_drop(&sc);
	assert_int_equal(setup_code_check(&sc, "ABCDEFGHJK", T0 + 1, NULL),
	    SETUP_CHECK_NONE);
	setup_code_init(&sc);			/* never made */
	assert_int_equal(setup_code_check(&sc, "", T0, NULL),
	    SETUP_CHECK_NONE);
	assert_int_equal(setup_code_check(&sc, "0000000000", T0, NULL),
	    SETUP_CHECK_NONE);
}

static void
test_limiter(void **state)
{
	struct setup_code	sc;
	uint64_t		wait = 0, t = T0;
	int			i;

	make_counting(&sc, 10, T0);
	for (i = 0; i < SETUP_CODE_FAILURES; i++)
		assert_int_equal(setup_code_check(&sc, "ZZZZZZZZZZ", t += 100,
		    NULL), SETUP_CHECK_WRONG);
	/* locked from the first failure's time for a window */
	assert_int_equal(setup_code_check(&sc, "ABCDEFGHJK", t + 1, &wait),
	    SETUP_CHECK_LOCKED);
	assert_int_equal(wait, T0 + 100 + SETUP_CODE_WINDOW_MS - (t + 1));
	assert_int_equal(setup_code_check(&sc, "ZZZZZZZZZZ", t + 2, NULL),
	    SETUP_CHECK_LOCKED);
	assert_int_equal(sc.failures, SETUP_CODE_FAILURES);	/* not counted */
	t = T0 + 100 + SETUP_CODE_WINDOW_MS;
	assert_int_equal(setup_code_check(&sc, "ABCDEFGHJK", t - 1, NULL),
	    SETUP_CHECK_LOCKED);
	assert_int_equal(setup_code_check(&sc, "ABCDEFGHJK", t, NULL),
	    SETUP_CHECK_OK);
	/* a new window counts from one again */
	assert_int_equal(setup_code_check(&sc, "ZZZZZZZZZZ", t + 1, NULL),
	    SETUP_CHECK_WRONG);
	assert_int_equal(sc.failures, 1);
	assert_int_equal(sc.window_ms, t + 1);
}

/*
 * The figure the README states: at most SETUP_CODE_FAILURES wrong codes a
 * window over a code's whole life, against 32^SETUP_CODE_CHARS codes.
 */
static void
test_guessing_bound(void **state)
{
	double	codes = 1, guesses;
	int	i;

	for (i = 0; i < SETUP_CODE_CHARS; i++)
		codes *= 32;
	guesses = (double)SETUP_CODE_FAILURES *
	    (SETUP_CODE_TTL_MS / SETUP_CODE_WINDOW_MS);
	assert_true(guesses == 600);
	assert_true(codes / guesses > 1.8e12);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generator_mapping),
		cmocka_unit_test(test_random_codes),
		cmocka_unit_test(test_typed_leniently),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_used_code_gone),
		cmocka_unit_test(test_limiter),
		cmocka_unit_test(test_guessing_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
