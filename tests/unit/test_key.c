/*
 * test_key.c — the box key file: created once with mode 0600 and the
 * right format, loaded back to the same identity, refused when group or
 * others can read it or when its content is wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/hex.h"
#include "nostr/key.h"

struct fixture {
	char	dir[64];
	char	path[128];
};

static int
setup(void **state)
{
	struct fixture	*fx = calloc(1, sizeof(*fx));

	if (fx == NULL)
		return -1;
	strcpy(fx->dir, "/tmp/cachebox-keytest.XXXXXX");
	if (mkdtemp(fx->dir) == NULL)
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/box.key", fx->dir);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	unlink(fx->path);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE	*fp;

	unlink(path);
	assert_non_null(fp = fopen(path, "w"));
	fputs(text, fp);
	fclose(fp);
	assert_int_equal(chmod(path, mode), 0);
}

static void
test_create_then_load(void **state)
{
	struct fixture		*fx = *state;
	struct nostr_key	 a, b;
	struct stat		 st;
	char			 err[512], text[200], hex[65];
	FILE			*fp;

	assert_int_equal(key_load_or_create(fx->dir, &a, err, sizeof(err)), 0);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, 65);
	assert_non_null(fp = fopen(fx->path, "r"));
	assert_non_null(fgets(text, sizeof(text), fp));
	fclose(fp);
	assert_int_equal(hex_encode(a.seckey, 32, hex, sizeof(hex)), 0);
	assert_int_equal(strncmp(text, hex, 64), 0);
	assert_string_equal(text + 64, "\n");
	/* Second start: the same identity, nothing rewritten. */
	assert_int_equal(key_load_or_create(fx->dir, &b, err, sizeof(err)), 0);
	assert_memory_equal(a.seckey, b.seckey, 32);
	assert_memory_equal(a.pubkey, b.pubkey, 32);
	/* No temporary file is left behind. */
	snprintf(text, sizeof(text), "%s.tmp.%ld", fx->path, (long)getpid());
	assert_int_equal(access(text, F_OK), -1);
}

static void
test_known_pubkey(void **state)
{
	struct fixture		*fx = *state;
	struct nostr_key	 k;
	char			 err[512], hex[65];

	write_file(fx->path, "00000000000000000000000000000000000000000000"
	    "00000000000000000003\n", 0600);
	assert_int_equal(key_load_file(fx->path, &k, err, sizeof(err)), 0);
	assert_int_equal(hex_encode(k.pubkey, 32, hex, sizeof(hex)), 0);
	assert_string_equal(hex, "f9308a019258c31049344f85f89d5229b531c845"
	    "836f99b08601f113bce036f9");
}

static void
test_refuse_mode(void **state)
{
	struct fixture		*fx = *state;
	struct nostr_key	 k;
	char			 err[512], want[512];

	write_file(fx->path, "00000000000000000000000000000000000000000000"
	    "00000000000000000003\n", 0640);
	assert_int_equal(key_load_or_create(fx->dir, &k, err, sizeof(err)),
	    -1);
	snprintf(want, sizeof(want), "%s: mode 640 lets group or others "
	    "access the secret key; run chmod 600 %s", fx->path, fx->path);
	assert_string_equal(err, want);
	assert_int_equal(chmod(fx->path, 0604), 0);
	assert_int_equal(key_load_file(fx->path, &k, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "mode 604"));
}

static void
test_refuse_content(void **state)
{
	static const char *const bad[] = {
		"",
		"0000000000000000000000000000000000000000000000000000000000000003",
		"00000000000000000000000000000000000000000000000000000000000003\n",
		"000000000000000000000000000000000000000000000000000000000000000A\n",
		"0000000000000000000000000000000000000000000000000000000000000003\n\n",
		"00000000000000000000000000000000000000000000000000000000000000g3\n",
		/* zero and the group order are not valid secrets */
		"0000000000000000000000000000000000000000000000000000000000000000\n",
		"fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141\n",
	};
	struct fixture		*fx = *state;
	struct nostr_key	 k;
	char			 err[512], want[512];
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(fx->path, bad[i], 0600);
		err[0] = '\0';
		if (i == 1) {	/* no newline is tolerated */
			assert_int_equal(key_load_file(fx->path, &k, err,
			    sizeof(err)), 0);
			continue;
		}
		assert_int_equal(key_load_file(fx->path, &k, err, sizeof(err)),
		    -1);
		snprintf(want, sizeof(want), i >= 6 ?
		    "%s: not a valid secp256k1 secret key" :
		    "%s: expected 64 lowercase hex digits and a newline",
		    fx->path);
		assert_string_equal(err, want);
	}
}

static void
test_missing_dir(void **state)
{
	struct nostr_key	k;
	char			err[512];

	(void)state;
	assert_int_equal(key_load_or_create("/nonexistent/cachebox", &k, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file or directory"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_then_load, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_known_pubkey, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refuse_mode, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refuse_content, setup,
		    teardown),
		cmocka_unit_test(test_missing_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
