/*
 * test_log.c — log lines written to a temporary stream: the line format,
 * level filtering, strerror on log_warn only, truncation at LOG_MAX_LINE,
 * rate limiting per call site, and fatalx exiting 1.
 */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/limits.h"
#include "core/log.h"

static FILE	*out;
static char	 text[64 * 1024];

static int
setup(void **state)
{
	if ((out = tmpfile()) == NULL)
		return -1;
	log_init(out, LOG_LEVEL_INFO);
	return 0;
}

static int
teardown(void **state)
{
	log_init(NULL, LOG_LEVEL_INFO);
	fclose(out);
	return 0;
}

/* Everything written so far, as a string. */
static const char *
contents(void)
{
	size_t	n;

	fflush(out);
	rewind(out);
	n = fread(text, 1, sizeof(text) - 1, out);
	text[n] = '\0';
	return text;
}

static int
count_lines(void)
{
	const char	*p;
	int		 n = 0;

	for (p = contents(); *p != '\0'; p++)
		if (*p == '\n')
			n++;
	return n;
}

/* Count the occurrences of needle in what was written. */
static int
count_of(const char *needle)
{
	const char	*p = contents();
	int		 n = 0;

	while ((p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	return n;
}

static void
rl_at(struct log_rl *rl, uint64_t now, enum log_level level,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
rl_at(struct log_rl *rl, uint64_t now, enum log_level level,
    const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vrl_at(rl, now, level, fmt, ap);
	va_end(ap);
}

static void
test_line_format(void **state)
{
	regex_t	re;

	log_info("hello %d", 42);
	assert_int_equal(regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:"
	    "[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z info: hello 42\n$", REG_EXTENDED), 0);
	assert_int_equal(regexec(&re, contents(), 0, NULL, 0), 0);
	regfree(&re);
}

static void
test_level_filter_info(void **state)
{
	log_debug("d");
	log_info("i");
	log_warnx("w");
	log_err("e");
	assert_int_equal(count_lines(), 3);
	assert_int_equal(count_of(" debug: "), 0);
	assert_int_equal(count_of(" info: i\n"), 1);
	assert_int_equal(count_of(" warn: w\n"), 1);
	assert_int_equal(count_of(" error: e\n"), 1);
}

static void
test_level_filter_each(void **state)
{
	enum log_level	lv;
	int		expect[] = { 1, 2, 3, 4 };

	for (lv = LOG_LEVEL_ERROR; lv <= LOG_LEVEL_DEBUG; lv++) {
		assert_int_equal(ftruncate(fileno(out), 0), 0);
		rewind(out);
		log_set_level(lv);
		assert_int_equal(log_get_level(), lv);
		log_debug("d");
		log_info("i");
		log_warnx("w");
		log_err("e");
		assert_int_equal(count_lines(), expect[lv]);
	}
}

static void
test_warn_strerror(void **state)
{
	char	want[256];

	errno = ENOENT;
	log_warn("open %s", "x.conf");
	assert_int_equal(errno, ENOENT);
	snprintf(want, sizeof(want), " warn: open x.conf: %s\n",
	    strerror(ENOENT));
	assert_int_equal(count_of(want), 1);
	errno = ENOENT;
	log_warnx("plain");
	assert_int_equal(count_of(" warn: plain\n"), 1);
	assert_int_equal(count_of(strerror(ENOENT)), 1);
}

static void
test_long_line_truncated(void **state)
{
	char		 big[LOG_MAX_LINE * 2];
	const char	*s;

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_info("%s", big);
	s = contents();
	assert_int_equal(strlen(s), LOG_MAX_LINE - 1);
	assert_string_equal(s + strlen(s) - 4, "...\n");
	assert_int_equal(count_lines(), 1);
}

static void
test_level_names(void **state)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	enum log_level	lv;
	int		i;

	for (i = 0; i < 4; i++) {
		assert_int_equal(log_level_parse(names[i], &lv), 0);
		assert_int_equal(lv, i);
		assert_string_equal(log_level_name(lv), names[i]);
	}
	lv = LOG_LEVEL_WARN;
	assert_int_equal(log_level_parse("verbose", &lv), -1);
	assert_int_equal(log_level_parse("", &lv), -1);
	assert_int_equal(log_level_parse("INFO", &lv), -1);
	assert_int_equal(lv, LOG_LEVEL_WARN);
	assert_string_equal(log_level_name((enum log_level)9), "?");
}

static void
test_ratelimit_window(void **state)
{
	struct log_rl	rl = { 0 };
	const uint64_t	t0 = 5000000;
	int		i;

	for (i = 0; i < 8; i++)
		rl_at(&rl, t0 + (uint64_t)i, LOG_LEVEL_WARN, "bad frame %d", i);
	assert_int_equal(count_lines(), LOG_RATELIMIT_BURST);
	assert_int_equal(count_of("bad frame 4\n"), 1);
	assert_int_equal(count_of("bad frame 5\n"), 0);
	assert_int_equal(rl.suppressed, 3);
	/* Last millisecond of the window: still suppressed. */
	rl_at(&rl, t0 + LOG_RATELIMIT_INTERVAL_MS - 1, LOG_LEVEL_WARN, "late");
	assert_int_equal(count_lines(), LOG_RATELIMIT_BURST);
	/* The next window opens with the count of what was dropped. */
	rl_at(&rl, t0 + LOG_RATELIMIT_INTERVAL_MS, LOG_LEVEL_WARN, "again");
	assert_int_equal(count_of(" warn: (4 similar lines suppressed)\n"), 1);
	assert_int_equal(count_of(" warn: again\n"), 1);
	assert_int_equal(count_lines(), LOG_RATELIMIT_BURST + 2);
	assert_int_equal(rl.count, 1);
	assert_int_equal(rl.suppressed, 0);
}

static void
test_ratelimit_no_suppress_line_when_none(void **state)
{
	struct log_rl	rl = { 0 };

	rl_at(&rl, 1000, LOG_LEVEL_INFO, "one");
	rl_at(&rl, 1000 + LOG_RATELIMIT_INTERVAL_MS, LOG_LEVEL_INFO, "two");
	assert_int_equal(count_lines(), 2);
	assert_int_equal(count_of("suppressed"), 0);
}

static void
test_ratelimit_below_level_not_counted(void **state)
{
	struct log_rl	rl = { 0 };
	int		i;

	log_set_level(LOG_LEVEL_WARN);
	for (i = 0; i < 10; i++)
		rl_at(&rl, 100, LOG_LEVEL_INFO, "quiet");
	assert_int_equal(rl.count, 0);
	assert_int_equal(rl.suppressed, 0);
	assert_int_equal(count_lines(), 0);
}

static void
test_ratelimit_macro_sites(void **state)
{
	int	i;

	/* Two call sites, each with its own budget. */
	for (i = 0; i < 20; i++) {
		log_warnx_rl("site a %d", i);
		log_info_rl("site b %d", i);
	}
	assert_int_equal(count_of(" warn: site a "), LOG_RATELIMIT_BURST);
	assert_int_equal(count_of(" info: site b "), LOG_RATELIMIT_BURST);
	assert_int_equal(count_lines(), 2 * LOG_RATELIMIT_BURST);
}

static void
test_fatalx_exits_1(void **state)
{
	pid_t	pid;
	int	status;

	fflush(out);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		fatalx("cannot start: %s", "reason");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_int_equal(count_of(" error: cannot start: reason\n"), 1);
}

static void
test_fatal_strerror(void **state)
{
	pid_t	pid;
	int	status;
	char	want[256];

	fflush(out);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		log_set_level(LOG_LEVEL_ERROR);
		errno = EACCES;
		fatal("open %s", "db");
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	snprintf(want, sizeof(want), " error: open db: %s\n", strerror(EACCES));
	assert_int_equal(count_of(want), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_line_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_filter_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_filter_each, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warn_strerror, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_line_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ratelimit_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ratelimit_no_suppress_line_when_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ratelimit_below_level_not_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ratelimit_macro_sites, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fatalx_exits_1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fatal_strerror, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
