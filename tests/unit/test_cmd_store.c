/*
 * test_cmd_store.c — commands whose answer is read from a real store
 * (ui/cmd_box.c): the relays table listed as it is, and a table that
 * cannot be read answered with an error instead of a shorter list that
 * looks whole.
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

#include "app.h"
#include "core/config.h"
#include "store/relays.h"
#include "store/store.h"
#include "ui/commands.h"

#include "store_fixture.h"
#include "ui/reply.h"

/* "relays list" from the CLI on an app with fx's store and no pool. */
static cJSON *
relays_list(struct fixture *fx, struct config *cfg)
{
	struct app	 app = { .cfg = cfg, .store = fx->st };
	cJSON		*args = cJSON_CreateObject(), *r;

	assert_non_null(args);
	r = commands_run(&app, "relays list", args, CMD_FROM_CTL);
	cJSON_Delete(args);
	assert_non_null(r);
	return r;
}

/* The url of every row of a relays list answer, comma-joined. */
static void
urls_of(const cJSON *r, char *out, size_t len)
{
	const cJSON	*row;
	size_t		 at = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(r, "relays")) {
		at += (size_t)snprintf(out + at, len - at, "%s%s",
		    at > 0 ? "," : "", cJSON_GetStringValue(
		    cJSON_GetObjectItem(row, "url")));
		assert_true(at < len);
	}
}

static void
test_relays_listed(void **state)
{
	struct fixture	*fx = *state;
	struct config	*cfg = config_new();
	char		 urls[256];
	cJSON		*r;

	assert_non_null(cfg);
	assert_int_equal(store_relay_upsert(fx->st, "wss://a.example",
	    "outbox", 1700000000), 0);
	assert_int_equal(store_relay_upsert(fx->st, "wss://b.example",
	    "custom", 1700000000), 0);
	r = relays_list(fx, cfg);
	assert_false(commands_is_error(r));
	urls_of(r, urls, sizeof(urls));
	/* The table's rows in URL order, then the configured bootstrap ones. */
	assert_true(strncmp(urls, "wss://a.example,wss://b.example",
	    strlen("wss://a.example,wss://b.example")) == 0);
	cJSON_Delete(r);
	config_free(cfg);
}

/*
 * The table cannot be read (here it is gone): the answer is an error,
 * not the configured relays alone as if the table were empty.
 */
static void
test_relays_unreadable(void **state)
{
	struct fixture	*fx = *state;
	struct config	*cfg = config_new();
	cJSON		*r;

	assert_non_null(cfg);
	assert_int_equal(store_relay_upsert(fx->st, "wss://a.example",
	    "outbox", 1700000000), 0);
	assert_int_equal(store_exec(fx->st, "DROP TABLE relays"), 0);
	r = relays_list(fx, cfg);
	assert_true(commands_is_error(r));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r,
	    "error")), "relays: cannot read the relays table (the log says "
	    "why)");
	cJSON_Delete(r);
	config_free(cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_relays_listed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_relays_unreadable, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
