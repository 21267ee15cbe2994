/*
 * fuzz_setup_code.c — whatever a web peer types as the first-run setup
 * code (POST /api/setup), checked against a known code: the answer is
 * right or wrong and nothing else, "right" only for what reads as the code
 * (its characters, any case, with O, I, L for 0, 1, 1, spaces and dashes
 * anywhere), and every wrong one is counted until the limiter locks.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/setup_code.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* What typed reads as, by the rules the header states, independently. */
static int
reads_as(const char *typed, const char *code)
{
	size_t	n = 0;
	int	c;

	for (; *typed != '\0'; typed++) {
		c = toupper((unsigned char)*typed);
		if (c == ' ' || c == '-')
			continue;
		c = c == 'O' ? '0' : c == 'I' || c == 'L' ? '1' : c;
		if (n >= SETUP_CODE_CHARS || code[n] != c)
			return 0;
		n++;
	}
	return n == SETUP_CODE_CHARS;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t	rnd[SETUP_CODE_CHARS] = {
		0, 1, 18, 20, 24, 27, 31, 10, 9, 30,	/* "01JMRVZA9Y" */
	};
	struct setup_code	sc;
	enum setup_check	r;
	char			*typed;
	unsigned		before;

	if ((typed = malloc(size + 1)) == NULL)
		return 0;
	memcpy(typed, data, size);
	typed[size] = '\0';
	setup_code_init(&sc);
	setup_code_from_bytes(&sc, rnd, 1000);
	before = sc.failures;
	r = setup_code_check(&sc, typed, 1000, NULL);
	if (r != SETUP_CHECK_OK && r != SETUP_CHECK_WRONG)
		abort();
	if ((r == SETUP_CHECK_OK) != reads_as(typed, sc.code))
		abort();
	if (r == SETUP_CHECK_WRONG && sc.failures != before + 1)
		abort();
	free(typed);
	return 0;
}
