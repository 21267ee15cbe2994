/*
 * prog_console — drives cacheboxd's serial console through a
 * pseudo-terminal, as a person at a USB-serial line would: it starts the
 * daemon with --console on the pty's slave, types on the master and checks
 * the exact bytes that come back (echo, erasing, answers, prompts).
 *
 * usage: prog_console CACHEBOXD STATE_DIR
 * Prints "ok - ..." or "FAIL - ..." per check; exits 1 if any failed.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "core/limits.h"
#include "ui/console.h"

#define IO_TIMEOUT_MS	10000
#define ACC_MAX		(4 * 1024 * 1024)
#define NL		"\r\n"
#define PROMPT		CONSOLE_PROMPT

static int	 master = -1;
static char	*acc;		/* bytes read since the last clear */
static size_t	 acclen;
static int	 fails;

static void
check(const char *what, int cond)
{
	printf("%s - %s\n", cond ? "ok" : "FAIL", what);
	if (!cond)
		fails++;
}

/* Show an unexpected answer with its control bytes visible. */
static void
show(const char *label, const char *s, size_t n)
{
	size_t	i;

	printf("# %s: \"", label);
	for (i = 0; i < n && i < 2000; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\r')
			printf("\\r");
		else if (c == '\n')
			printf("\\n");
		else if (c < 0x20 || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	printf("\"%s\n", n > 2000 ? "..." : "");
}

/* Read from the master into acc until it ends with suffix. 0, or -1 on timeout. */
static int
read_until_suffix(const char *suffix, int timeout_ms)
{
	struct pollfd	pfd = { master, POLLIN, 0 };
	size_t		sl = strlen(suffix);
	ssize_t		n;

	for (;;) {
		if (acclen >= sl && memcmp(acc + acclen - sl, suffix, sl) == 0)
			return 0;
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -1;
		n = read(master, acc + acclen, ACC_MAX - acclen);
		if (n <= 0)
			return -1;
		acclen += (size_t)n;
		acc[acclen] = '\0';
	}
}

static void
type(const char *s, size_t n)
{
	ssize_t	w;

	while (n > 0) {
		if ((w = write(master, s, n)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			perror("write");
			exit(1);
		}
		s += w;
		n -= (size_t)w;
	}
}

static int
contains(const char *hay, size_t n, const char *needle)
{
	size_t	nl = strlen(needle), i;

	for (i = 0; i + nl <= n; i++)
		if (memcmp(hay + i, needle, nl) == 0)
			return 1;
	return 0;
}

/* Type input, wait for the next prompt and compare everything echoed. */
static void
exchange(const char *what, const char *input, size_t inlen,
    const char *expect)
{
	int	ok;

	acclen = 0;
	type(input, inlen);
	ok = read_until_suffix(PROMPT, IO_TIMEOUT_MS) == 0 &&
	    acclen == strlen(expect) && memcmp(acc, expect, acclen) == 0;
	check(what, ok);
	if (!ok) {
		show("got", acc, acclen);
		show("want", expect, strlen(expect));
	}
}

static pid_t
start_daemon(const char *daemon, const char *dir, const char *tty)
{
	pid_t	pid;

	if ((pid = fork()) == 0) {
		char *argv[] = { (char *)daemon, "-d", (char *)dir, "--console",
		    (char *)tty, "--set", "http.listen=127.0.0.1:0", "--set",
		    "relays.bootstrap=", NULL };

		execv(daemon, argv);
		_exit(127);
	}
	return pid;
}

/* GET /api/status over loopback while the console is stuck: must answer. */
static int
http_answers(const char *dir)
{
	char			 path[512], reply[64];
	struct sockaddr_in	 sin = { 0 };
	FILE			*f;
	int			 port = 0, s, ok;
	ssize_t			 n;

	snprintf(path, sizeof(path), "%s/http.port", dir);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fscanf(f, "%d", &port) != 1)
		port = 0;
	fclose(f);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return 0;
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		close(s);
		return 0;
	}
	dprintf(s, "GET /api/status HTTP/1.0\r\n\r\n");
	n = read(s, reply, sizeof(reply) - 1);
	close(s);
	reply[n > 0 ? n : 0] = '\0';
	ok = strncmp(reply, "HTTP/1.0 200", 12) == 0 ||
	    strncmp(reply, "HTTP/1.1 200", 12) == 0;
	return ok;
}

static void
check_editing(void)
{
	const char	*tail = "default: info" NL "source: default" NL "unit: " NL
	    "runtime: yes" NL "help: least severe level logged: error, warn, "
	    "info or debug" NL PROMPT;
	char		 want[2048];

	/* "config get log.levxx" + two backspaces (BS and DEL) + "el" */
	snprintf(want, sizeof(want), "config get log.levxx\b \b\b \bel" NL
	    "key: log.level" NL "value: info" NL "%s", tail);
	exchange("backspace and DEL erase, then the answer",
	    "config get log.levxx\b\x7f" "el\r", 25, want);
	exchange("Ctrl-C abandons the line", "config get\x03", 11,
	    "config get^C" NL PROMPT);
	exchange("CR LF ends one line, not two", "\r\n", 2, NL PROMPT);
	exchange("arrow keys are ignored", "lo\x1b[Ag level\r", 14,
	    "log level" NL "level: info" NL PROMPT);
	exchange("Ctrl-U erases the line", "junk\x15help xx\x15log level\r", 23,
	    "junk\b \b\b \b\b \b\b \bhelp xx\b \b\b \b\b \b\b \b\b \b\b \b\b \b"
	    "log level" NL "level: info" NL PROMPT);
}

static void
check_refusals(void)
{
	char	line[CONSOLE_MAX_LINE + 100], want[CONSOLE_MAX_LINE + 300];

	memset(line, 'a', sizeof(line));
	line[sizeof(line) - 1] = '\r';
	memset(want, 'a', CONSOLE_MAX_LINE);
	snprintf(want + CONSOLE_MAX_LINE, sizeof(want) - CONSOLE_MAX_LINE,
	    "\a" NL "error: line longer than %d bytes, discarded" NL PROMPT,
	    CONSOLE_MAX_LINE);
	exchange("over-long line refused and discarded", line, sizeof(line),
	    want);
	exchange("unknown command", "frobnicate\r", 11,
	    "frobnicate" NL "error: unknown command 'frobnicate' (try 'help')"
	    NL PROMPT);
	exchange("a group name lists its commands", "roots\r", 6,
	    "roots" NL
	    "  roots list                   the follow roots (npub and hex)" NL
	    "  roots add key                add a follow root (npub or hex)" NL
	    "  roots remove key             remove a follow root" NL
	    "  roots history [key] [kind]   earlier versions of the roots' "
	    "profiles, follow lists and relay lists, kept aside" NL PROMPT);
	exchange("unknown command of a group", "roots bogus\r", 12,
	    "roots bogus" NL "error: unknown command 'roots bogus' (try "
	    "'roots')" NL PROMPT);
	exchange("quit does not close a serial console", "quit\r", 5,
	    "quit" NL "error: quit and exit end a console on stdin (--console "
	    "-); this serial console stays: close the terminal to leave" NL
	    PROMPT);
	exchange("unclosed quote", "config get \"log\r", 16,
	    "config get \"log" NL "error: unclosed quote" NL PROMPT);
	exchange("missing argument", "config get\r", 11,
	    "config get" NL "error: config get: missing key" NL PROMPT);
	exchange("bad value refused", "config set backfill.page_size 0\r", 32,
	    "config set backfill.page_size 0" NL "error: backfill.page_size: "
	    "0 is below the minimum 1" NL PROMPT);
}

static void
check_commands(void)
{
	exchange("log level set", "log level debug\r", 16,
	    "log level debug" NL "level: debug" NL PROMPT);
	exchange("quoted argument", "config get 'log.level'\r", 23,
	    "config get 'log.level'" NL "key: log.level" NL "value: debug" NL
	    "default: info" NL "source: database" NL "unit: " NL
	    "runtime: yes" NL "help: least severe level logged: error, warn, "
	    "info or debug" NL PROMPT);
	exchange("admin token too short", "admin-token set abc\r", 20,
	    "admin-token set abc" NL "error: the admin password needs 12 to 256 "
	    "characters" NL PROMPT);
	exchange("admin token set on the console",
	    "admin-token set console-token-0123\r", 35,
	    "admin-token set console-token-0123" NL "admin.token: set" NL
	    PROMPT);
	exchange("the token is never shown", "config get admin.token\r", 23,
	    "config get admin.token" NL "key: admin.token" NL "value: (set)" NL
	    "default: " NL "source: database" NL "unit: " NL "runtime: yes" NL
	    "help: the admin password: changes from the status page and the "
	    "web API need it (sent as a bearer token; kept only as a salted "
	    "hash); empty = none may change anything there" NL PROMPT);
}

/*
 * Stop reading while the console answers far more than its queue holds:
 * the daemon must keep serving HTTP, and once we read again the output
 * shows the drop marker and ends in a prompt.
 */
static void
check_drop(const char *dir)
{
	const char	*mark = CONSOLE_DROP_MARK;
	char		 lines[20 * 5];
	int		 i, round, dropped = 0, ended;

	acclen = 0;
	for (i = 0; i < 20; i++)
		memcpy(lines + 5 * i, "help\r", 5);
	/* a pty holds up to 640 KiB itself: answer well past that plus the queue */
	for (round = 0; round < 60; round++) {
		type(lines, sizeof(lines));
		usleep(20000);
	}
	check("HTTP answers while the console is not read", http_answers(dir));
	/* read until the console has been quiet for a second */
	for (;;) {
		struct pollfd	pfd = { master, POLLIN, 0 };
		ssize_t		n;

		if (poll(&pfd, 1, 1000) <= 0)
			break;
		if (acclen > ACC_MAX / 2) {
			dropped |= contains(acc, acclen, mark);
			acclen = 0;
		}
		if ((n = read(master, acc + acclen, ACC_MAX - acclen)) <= 0)
			break;
		acclen += (size_t)n;
	}
	dropped |= contains(acc, acclen, mark);
	ended = acclen >= strlen(PROMPT) && memcmp(acc + acclen -
	    strlen(PROMPT), PROMPT, strlen(PROMPT)) == 0;
	check("output dropped with a marker, not blocking", dropped);
	check("the marker is followed by a prompt", ended);
	exchange("the console works again afterwards", "log level\r", 10,
	    "log level" NL "level: debug" NL PROMPT);
}

int
main(int argc, char **argv)
{
	char		 name[128];
	int		 slave, status;
	pid_t		 pid;

	if (argc != 3) {
		fprintf(stderr, "usage: prog_console CACHEBOXD DIR\n");
		return 2;
	}
	if ((acc = malloc(ACC_MAX + 1)) == NULL)
		return 2;
	if (openpty(&master, &slave, name, NULL, NULL) == -1) {
		perror("openpty");
		return 77;
	}
	pid = start_daemon(argv[1], argv[2], name);
	check("greeting and prompt", read_until_suffix(PROMPT,
	    IO_TIMEOUT_MS) == 0 && strstr(acc, "console; 'help' lists the "
	    "commands") != NULL);
	close(slave);	/* the daemon has its own descriptor now */
	check_editing();
	check_refusals();
	check_commands();
	check_drop(argv[2]);
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	check("daemon exits 0 on SIGTERM", WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0);
	printf("%d failed\n", fails);
	return fails ? 1 : 0;
}
