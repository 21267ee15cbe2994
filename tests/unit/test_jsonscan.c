/*
 * test_jsonscan.c — the value and depth count taken before cJSON parses a
 * peer's text: exact counts for every kind of value, member names counted,
 * brackets and quotes inside strings ignored, escapes read as cJSON reads
 * them, the scan stopping at the first limit passed, and never fewer
 * values than the nodes cJSON builds from the same text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "core/jsonscan.h"

static size_t
count(const char *s)
{
	size_t	n = 0;

	assert_int_equal(jsonscan_check(s, strlen(s), (size_t)-1, (size_t)-1,
	    &n), JSONSCAN_OK);
	return n;
}

static void
test_counts(void **state)
{
	(void)state;
	assert_int_equal(count(""), 0);
	assert_int_equal(count("   \n\t"), 0);
	assert_int_equal(count("[]"), 1);
	assert_int_equal(count("[[],[],[]]"), 4);
	assert_int_equal(count("{}"), 1);
	assert_int_equal(count("\"a\""), 1);
	assert_int_equal(count("[1,-2.5e3,true,false,null]"), 6);
	assert_int_equal(count("[ 12345 , 0.5E-7 ]"), 3);
	/* A member name costs an allocation: counted with its value. */
	assert_int_equal(count("{\"a\":1,\"b\":[\"c\"]}"), 6);
	/* Brackets, commas and quotes inside strings are text. */
	assert_int_equal(count("[\"[[[{,:\",\"\\\"]]]\\\\\"]"), 3);
	assert_int_equal(count("\"\\u0022[\""), 1);
	/* Garbage still never counts less than cJSON could build. */
	assert_int_equal(count("truefalse"), 1);
	assert_int_equal(count("[\"unterminated, [1, 2]"), 2);
}

static void
test_limits(void **state)
{
	size_t	n = 0;

	(void)state;
	assert_int_equal(jsonscan_check("[1,2,3]", 7, 4, 8, &n), JSONSCAN_OK);
	assert_int_equal(n, 4);
	assert_int_equal(jsonscan_check("[1,2,3]", 7, 3, 8, &n),
	    JSONSCAN_TOO_MANY);
	assert_int_equal(n, 4);		/* stopped at the first one over */
	assert_int_equal(jsonscan_check("[[[]]]", 6, 10, 3, &n), JSONSCAN_OK);
	assert_int_equal(jsonscan_check("[[[]]]", 6, 10, 2, &n),
	    JSONSCAN_TOO_DEEP);
	/* Depth is nesting, not the number of containers. */
	assert_int_equal(jsonscan_check("[[],[],[],[]]", 13, 10, 2, &n),
	    JSONSCAN_OK);
	/* Only len bytes are read. */
	assert_int_equal(jsonscan_check("[1,2,3]", 2, 10, 10, &n), JSONSCAN_OK);
	assert_int_equal(n, 2);
	assert_string_equal(jsonscan_result_str(JSONSCAN_TOO_MANY),
	    "too many values");
	assert_string_equal(jsonscan_result_str(JSONSCAN_TOO_DEEP),
	    "nested too deep");
}

/* Every node of a cJSON tree, member names included once per member. */
static size_t
tree_size(const cJSON *v)
{
	const cJSON	*c;
	size_t		 n = 1 + (v->string != NULL);

	for (c = v->child; c != NULL; c = c->next)
		n += tree_size(c);
	return n;
}

static void
test_matches_cjson(void **state)
{
	static const char *const texts[] = {
		"{\"id\":\"ab\",\"tags\":[[\"p\",\"x\"],[]],\"kind\":1,"
		    "\"content\":\"hi \\\"there\\\" [\",\"sig\":null}",
		"[\"EVENT\",\"s\",{\"a\":[1,2,[3,{\"b\":false}]]}]",
		"[[[[[[[[[[]]]]]]]]]]",
	};
	cJSON	*t;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		assert_non_null(t = cJSON_Parse(texts[i]));
		assert_int_equal(count(texts[i]), tree_size(t));
		cJSON_Delete(t);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_matches_cjson),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
