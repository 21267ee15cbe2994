/*
 * test_sdnotify.c — the service manager's notifications: NOTIFY_SOCKET as a
 * path and as an abstract @name (lengths exact, every refusal),
 * WATCHDOG_USEC and WATCHDOG_PID (half the interval, another process's
 * watchdog, malformed values), and the datagrams themselves, received on
 * real AF_UNIX sockets bound here and driven by a real loop: READY=1 with
 * the first STATUS=, keep-alives from the loop's timer, STATUS= only when
 * the summary changes, STOPPING=1 with no timer left, and a manager that
 * was not there at first reached once its socket exists.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/limits.h"
#include "core/loop.h"
#include "net/sdnotify.h"

#define SUN_OFF	offsetof(struct sockaddr_un, sun_path)

static void
test_socket_path(void **state)
{
	struct sockaddr_un	sa;
	socklen_t		len = 0;
	const char		*why = NULL;

	assert_int_equal(sdnotify_parse_socket("/run/systemd/notify", &sa,
	    &len, &why), 0);
	assert_int_equal(sa.sun_family, AF_UNIX);
	assert_string_equal(sa.sun_path, "/run/systemd/notify");
	assert_int_equal(len, SUN_OFF + 20);
}

static void
test_socket_abstract(void **state)
{
	struct sockaddr_un	sa;
	socklen_t		len = 0;
	const char		*why = NULL;

	assert_int_equal(sdnotify_parse_socket("@abc", &sa, &len, &why), 0);
	assert_int_equal(sa.sun_family, AF_UNIX);
	assert_int_equal(sa.sun_path[0], '\0');
	assert_memory_equal(sa.sun_path + 1, "abc", 3);
	assert_int_equal(len, SUN_OFF + 4);	/* no terminating NUL */
}

static void
test_socket_refused(void **state)
{
	struct sockaddr_un	sa;
	socklen_t		len = 0;
	const char		*why;
	char			long_path[200];

	why = NULL;
	assert_int_equal(sdnotify_parse_socket(NULL, &sa, &len, &why), -1);
	assert_non_null(why);
	why = NULL;
	assert_int_equal(sdnotify_parse_socket("", &sa, &len, &why), -1);
	assert_non_null(why);
	why = NULL;
	assert_int_equal(sdnotify_parse_socket("run/notify", &sa, &len, &why),
	    -1);
	assert_string_equal(why, "neither an absolute path nor an @name");
	assert_int_equal(sdnotify_parse_socket("vsock:2:999", &sa, &len, &why),
	    -1);
	why = NULL;
	assert_int_equal(sdnotify_parse_socket("@", &sa, &len, &why), -1);
	assert_non_null(why);

	/* A path fills sun_path with its NUL: 107 characters at most. */
	memset(long_path, 'a', sizeof(long_path));
	long_path[0] = '/';
	long_path[sizeof(sa.sun_path) - 1] = '\0';
	assert_int_equal(sdnotify_parse_socket(long_path, &sa, &len, &why), 0);
	assert_int_equal(len, SUN_OFF + sizeof(sa.sun_path));
	long_path[sizeof(sa.sun_path) - 1] = 'a';
	long_path[sizeof(sa.sun_path)] = '\0';
	why = NULL;
	assert_int_equal(sdnotify_parse_socket(long_path, &sa, &len, &why), -1);
	assert_non_null(why);

	/* An abstract name has no NUL: '@' and 107 characters fit. */
	long_path[0] = '@';
	assert_int_equal(sdnotify_parse_socket(long_path, &sa, &len, &why), 0);
	assert_int_equal(len, SUN_OFF + sizeof(sa.sun_path));
	long_path[sizeof(sa.sun_path)] = 'a';
	long_path[sizeof(sa.sun_path) + 1] = '\0';
	why = NULL;
	assert_int_equal(sdnotify_parse_socket(long_path, &sa, &len, &why), -1);
	assert_non_null(why);
}

static void
test_watchdog_values(void **state)
{
	uint64_t	ms = 99;
	const char	*why = NULL;
	char		self[32];

	/* Off: nothing set, or set empty. */
	assert_int_equal(sdnotify_parse_watchdog(NULL, NULL, 4242, &ms, &why),
	    0);
	assert_int_equal(ms, 0);
	assert_int_equal(sdnotify_parse_watchdog("", "4242", 4242, &ms, &why),
	    0);
	/* Half the interval. */
	assert_int_equal(sdnotify_parse_watchdog("30000000", NULL, 4242, &ms,
	    &why), 1);
	assert_int_equal(ms, 15000);
	assert_int_equal(sdnotify_parse_watchdog("30000000", "", 4242, &ms,
	    &why), 1);
	assert_int_equal(ms, 15000);
	assert_int_equal(sdnotify_parse_watchdog("400000", "4242", 4242, &ms,
	    &why), 1);
	assert_int_equal(ms, 200);
	/* Under 2 ms the period is 1 ms, never 0 (a timer of 0 would spin). */
	assert_int_equal(sdnotify_parse_watchdog("1500", NULL, 4242, &ms,
	    &why), 1);
	assert_int_equal(ms, 1);
	assert_int_equal(sdnotify_parse_watchdog("1", NULL, 4242, &ms, &why),
	    1);
	assert_int_equal(ms, 1);
	/* Meant for another process (a parent's, inherited). */
	assert_int_equal(sdnotify_parse_watchdog("30000000", "4243", 4242, &ms,
	    &why), 0);
	assert_int_equal(ms, 0);
	snprintf(self, sizeof(self), "%ld", (long)getpid());
	assert_int_equal(sdnotify_parse_watchdog("30000000", self, getpid(),
	    &ms, &why), 1);
	assert_int_equal(ms, 15000);
}

static void
test_watchdog_malformed(void **state)
{
	static const char *const bad_usec[] = {
		"0", "-5", "+5", "12x", " 12", "1e6", "99999999999999999999",
	};
	static const char *const bad_pid[] = { "0", "abc", "-1", "12 " };
	uint64_t	ms;
	const char	*why;
	size_t		i;

	for (i = 0; i < sizeof(bad_usec) / sizeof(bad_usec[0]); i++) {
		why = NULL;
		ms = 99;
		assert_int_equal(sdnotify_parse_watchdog(bad_usec[i], NULL, 1,
		    &ms, &why), -1);
		assert_string_equal(why,
		    "WATCHDOG_USEC is not a positive number of microseconds");
		assert_int_equal(ms, 0);
	}
	for (i = 0; i < sizeof(bad_pid) / sizeof(bad_pid[0]); i++) {
		why = NULL;
		assert_int_equal(sdnotify_parse_watchdog("30000000", bad_pid[i],
		    1, &ms, &why), -1);
		assert_string_equal(why, "WATCHDOG_PID is not a process id");
	}
}

/* ---- datagrams on real sockets ---------------------------------------- */

struct sink {
	char	dir[64];
	char	path[128];
	int	fd;
};

/* The summary the test hands the module, and how often it was asked. */
static const char	*summary_text = "A";
static int		 summary_calls;

static void
summary(void *arg, char *buf, size_t len)
{
	(void)arg;
	summary_calls++;
	snprintf(buf, len, "%s", summary_text);
}

static int
sink_bind(struct sink *s, const struct sockaddr_un *sa, socklen_t len)
{
	if ((s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0)) == -1)
		return -1;
	return bind(s->fd, (const struct sockaddr *)sa, len);
}

/* A datagram socket bound to a path in a fresh directory. */
static void
sink_open_path(struct sink *s)
{
	struct sockaddr_un	sa;
	socklen_t		len;
	const char		*why;

	snprintf(s->dir, sizeof(s->dir), "/tmp/test_sdnotify.XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->path, sizeof(s->path), "%s/notify", s->dir);
	assert_int_equal(sdnotify_parse_socket(s->path, &sa, &len, &why), 0);
	assert_int_equal(sink_bind(s, &sa, len), 0);
}

static void
sink_close(struct sink *s)
{
	close(s->fd);
	if (s->dir[0] != '\0') {
		unlink(s->path);
		rmdir(s->dir);
	}
}

/* The next datagram, or "" when none is waiting. */
static const char *
sink_recv(struct sink *s)
{
	static char	buf[SDNOTIFY_MSG_MAX + 1];
	ssize_t		n;

	n = recv(s->fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/*
 * Run loop rounds until a datagram other than WATCHDOG=1 arrives; count
 * the keep-alives before it. The loop sleeps until its next timer, so
 * this waits as long as the module's timers say, never a guess.
 */
static const char *
sink_until_other(struct sink *s, struct loop *loop, int *keepalives)
{
	const char	*m;

	for (;;) {
		while (*(m = sink_recv(s)) != '\0') {
			if (strcmp(m, "WATCHDOG=1") != 0)
				return m;
			(*keepalives)++;
		}
		assert_int_equal(loop_run_once(loop, -1), 0);
	}
}

static void
test_datagrams(void **state)
{
	struct sink	 s = { .fd = -1 };
	struct loop	*loop;
	struct sdnotify	*n;
	const char	*p;
	int		 keepalives = 0, calls;

	sink_open_path(&s);
	assert_non_null(loop = loop_new());
	summary_text = "A";
	summary_calls = 0;
	n = sdnotify_open(loop, s.path, "200000", NULL, summary, NULL);
	assert_non_null(n);
	assert_string_equal(sink_recv(&s), "");		/* nothing before ready */
	assert_int_equal(loop_poll_timeout(loop, -1), -1);	/* no timer yet */

	sdnotify_ready(n);
	assert_string_equal(sink_recv(&s), "READY=1\nSTATUS=A");
	sdnotify_ready(n);				/* once only */
	assert_string_equal(sink_recv(&s), "");

	/* The summary looked at again, unchanged: nothing sent. */
	calls = summary_calls;
	while (summary_calls == calls) {
		assert_int_equal(loop_run_once(loop, -1), 0);
		while (*sink_recv(&s) != '\0')
			keepalives++;
	}
	/* A status period is 50 keep-alive periods: some came meanwhile. */
	assert_true(keepalives >= 1);

	/* Changed: one STATUS= line, keep-alives before it. */
	summary_text = "B\nwith a newline";
	keepalives = 0;
	assert_string_equal(sink_until_other(&s, loop, &keepalives),
	    "STATUS=B with a newline");
	assert_true(keepalives >= 1);

	/* Keep-alives the round that sent STATUS= may have sent after it. */
	for (p = sink_recv(&s); *p != '\0'; p = sink_recv(&s))
		assert_string_equal(p, "WATCHDOG=1");
	sdnotify_stopping(n);
	assert_string_equal(sink_recv(&s), "STOPPING=1\nSTATUS=stopping");
	assert_int_equal(loop_poll_timeout(loop, -1), -1);	/* no timer left */
	sdnotify_free(n);
	loop_free(loop);
	sink_close(&s);
}

static void
test_abstract_and_no_watchdog(void **state)
{
	struct sink		 s = { .fd = -1 };
	struct sockaddr_un	 sa;
	socklen_t		 len;
	struct loop		*loop;
	struct sdnotify		*n;
	const char		*why;
	char			 name[64];

	snprintf(name, sizeof(name), "@cachebox-test-sdnotify-%ld",
	    (long)getpid());
	assert_int_equal(sdnotify_parse_socket(name, &sa, &len, &why), 0);
	assert_int_equal(sink_bind(&s, &sa, len), 0);
	assert_non_null(loop = loop_new());
	summary_text = "abstract";
	/* The watchdog is a parent's: only the status timer runs. */
	n = sdnotify_open(loop, name, "200000", "1", summary, NULL);
	assert_non_null(n);
	sdnotify_ready(n);
	assert_string_equal(sink_recv(&s), "READY=1\nSTATUS=abstract");
	/* The next timer is the status one, not a keep-alive (100 ms). */
	assert_true(loop_poll_timeout(loop, -1) >= SDNOTIFY_STATUS_MS);
	sdnotify_free(n);
	assert_int_equal(loop_poll_timeout(loop, -1), -1);
	loop_free(loop);
	sink_close(&s);
}

static void
test_unusable_environment(void **state)
{
	struct loop	*loop;

	assert_non_null(loop = loop_new());
	assert_null(sdnotify_open(loop, NULL, "200000", NULL, summary, NULL));
	assert_null(sdnotify_open(loop, "", NULL, NULL, summary, NULL));
	assert_null(sdnotify_open(loop, "notify", NULL, NULL, summary, NULL));
	/* Every call takes NULL. */
	sdnotify_ready(NULL);
	sdnotify_stopping(NULL);
	sdnotify_free(NULL);
	loop_free(loop);
}

/* No one listens at first; the keep-alives reach the socket once bound. */
static void
test_manager_comes_later(void **state)
{
	struct sink		 s = { .fd = -1 };
	struct sockaddr_un	 sa;
	socklen_t		 len;
	struct loop		*loop;
	struct sdnotify		*n;
	const char		*why, *m;

	snprintf(s.dir, sizeof(s.dir), "/tmp/test_sdnotify.XXXXXX");
	assert_non_null(mkdtemp(s.dir));
	snprintf(s.path, sizeof(s.path), "%s/notify", s.dir);
	assert_non_null(loop = loop_new());
	summary_text = "late";
	n = sdnotify_open(loop, s.path, "20000", NULL, summary, NULL);
	assert_non_null(n);
	sdnotify_ready(n);			/* dropped: nobody there */
	assert_int_equal(loop_run_once(loop, -1), 0);	/* a keep-alive, dropped */

	assert_int_equal(sdnotify_parse_socket(s.path, &sa, &len, &why), 0);
	assert_int_equal(sink_bind(&s, &sa, len), 0);
	while (*(m = sink_recv(&s)) == '\0')
		assert_int_equal(loop_run_once(loop, -1), 0);
	assert_string_equal(m, "WATCHDOG=1");
	sdnotify_free(n);
	loop_free(loop);
	sink_close(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_path),
		cmocka_unit_test(test_socket_abstract),
		cmocka_unit_test(test_socket_refused),
		cmocka_unit_test(test_watchdog_values),
		cmocka_unit_test(test_watchdog_malformed),
		cmocka_unit_test(test_datagrams),
		cmocka_unit_test(test_abstract_and_no_watchdog),
		cmocka_unit_test(test_unusable_environment),
		cmocka_unit_test(test_manager_comes_later),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
