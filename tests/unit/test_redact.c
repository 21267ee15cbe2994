/*
 * test_redact.c — every form of credential libpq accepts is masked by
 * redact_url, and redact_text masks what a message quotes of a URL (raw or
 * percent-decoded); nothing else is changed; output is cut to its buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/redact.h"

static void
url_is(const char *in, const char *want)
{
	char	out[512];

	assert_string_equal(redact_url(in, out, sizeof(out)), want);
}

static void
test_urls(void **state)
{
	url_is("postgres://u:pw@h/db", "postgres://u:***@h/db");
	url_is("postgres://u@h/db", "postgres://u@h/db");
	url_is("postgres://h/db?password=pw&sslmode=disable",
	    "postgres://h/db?password=***&sslmode=disable");
	url_is("postgresql://h/db?sslmode=require&sslpassword=pw",
	    "postgresql://h/db?sslmode=require&sslpassword=***");
	url_is("postgres://h/db?pass%77ord=pw", "postgres://h/db?pass%77ord=***");
	url_is("postgres://h/db?PASSWORD=pw", "postgres://h/db?PASSWORD=***");
	url_is("postgres://u:p?w@h/db", "postgres://u:***@h/db");
	url_is("postgres://u:a%40b@h1,h2/db?password=x&password=y",
	    "postgres://u:***@h1,h2/db?password=***&password=***");
	url_is("postgres://u@h/db?x=a:b@c", "postgres://u@h/db?x=a:b@c");
	url_is("host=h password=pw dbname=d", "host=h password=*** dbname=d");
	url_is("host=h password = 'p w\\' x' sslpassword=z",
	    "host=h password = *** sslpassword=***");
	url_is("wss://relay.example/path", "wss://relay.example/path");
	url_is("ws://a,wss://b", "ws://a,wss://b");
	url_is("", "");
	url_is("info", "info");
}

static void
test_text_and_cut(void **state)
{
	char	out[512], small[16];

	assert_string_equal(redact_text("postgres://u:s%21cret@h/db",
	    "invalid percent-encoded token: \"s%21cret\" (s!cret)", out,
	    sizeof(out)), "invalid percent-encoded token: \"***\" (***)");
	assert_string_equal(redact_text("host=h password=hunter2",
	    "missing \"=\" after \"hunter2\"", out, sizeof(out)),
	    "missing \"=\" after \"***\"");
	assert_string_equal(redact_text("postgres://h/db", "no secret here",
	    out, sizeof(out)), "no secret here");
	/* Cut short, never past the start of a secret. */
	redact_url("postgres://u:secret@h", small, 12);
	assert_string_equal(small, "postgres://");
	assert_null(strstr(redact_url("postgres://u:secret@h", small, 15),
	    "sec"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_text_and_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
