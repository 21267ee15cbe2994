/*
 * console.c — the serial console: the device (opened non-blocking, set raw
 * 115200 8N1 when it is a tty), the line discipline (lined.c), running
 * each line through the command table and the output queue.
 *
 * Output never blocks the loop: it goes into a bounded queue written when
 * the device is writable. A terminal that stops reading (a serial line
 * with nobody at the other end, a stopped pager) fills the queue; then
 * output is dropped, and once room returns a marker says so. A device
 * that hangs up is closed and opened again later. On stdin ("-") the
 * console is what the daemon was started for: its end of input, or quit,
 * stops the daemon as SIGTERM does.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "app.h"
#include "core/buf.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "ui/commands.h"
#include "ui/console.h"
#include "ui/firstrun.h"
#include "ui/lined.h"
#include "ui/render.h"
#include "ui/reply.h"

struct console {
	struct app	*app;
	struct loop	*loop;
	char		 path[PATH_MAX];
	int		 rfd, wfd;	/* the same for a device; 0 and 1 for "-" */
	int		 is_stdio;
	int		 echo;		/* the input is a terminal */
	const char	*nl;		/* "\r\n" on a raw terminal, else "\n" */
	int		 saved_tty;	/* saved_tio holds settings to restore */
	struct termios	 saved_tio;
	int		 saved_rfl, saved_wfl;
	struct lined	 ld;
	struct buf	 out;		/* waiting for the terminal */
	int		 dropped;	/* output was lost; marker pending */
	uint64_t	 reopen_timer;
	int		 warned;	/* the open failure was logged */
};

static void	console_close_dev(struct console *);
static void	console_try_open(struct loop *, void *);

/* ---- output ------------------------------------------------------------ */

static void
want_write(struct console *con)
{
	short	ev = con->out.len > 0 ? POLLOUT : 0;

	if (con->rfd == -1)
		return;
	if (con->rfd == con->wfd)
		loop_fd_set_events(con->loop, con->rfd, POLLIN | ev);
	else
		loop_fd_set_events(con->loop, con->wfd, ev);
}

/* Queue what fits of s; the rest is dropped and remembered. */
static void
out_put(struct console *con, const char *s, size_t n)
{
	size_t	room = CONSOLE_OUT_QUEUE_BYTES - con->out.len;

	if (con->dropped)
		return;
	if (n > room) {
		con->dropped = 1;
		n = room;
	}
	if (n > 0 && buf_append(&con->out, s, n) == -1)
		con->dropped = 1;
}

static void
out_str(struct console *con, const char *s)
{
	out_put(con, s, strlen(s));
}

/*
 * After a write made room: if output was lost, queue the marker and a
 * fresh prompt (what was lost may have been the prompt).
 */
static void
out_mark(struct console *con)
{
	char	mark[64];
	int	n;

	n = snprintf(mark, sizeof(mark), "%s%s%s%s", con->nl,
	    CONSOLE_DROP_MARK, con->nl, CONSOLE_PROMPT);
	if (!con->dropped || con->out.len + (size_t)n > CONSOLE_OUT_QUEUE_BYTES)
		return;
	con->dropped = 0;
	out_put(con, mark, (size_t)n);
}

static void
flush_out(struct console *con)
{
	ssize_t	n;

	while (con->wfd != -1 && con->out.len > 0) {
		n = write(con->wfd, con->out.data, con->out.len);
		if (n > 0) {
			buf_consume(&con->out, (size_t)n);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		log_warn("console: write %s", con->path);
		console_close_dev(con);
		return;
	}
	out_mark(con);
	want_write(con);
}

/* ---- running a line ---------------------------------------------------- */

static void
print_error(struct console *con, const char *msg)
{
	out_str(con, "error: ");
	out_str(con, msg);
	out_str(con, con->nl);
}

/* The commands of a group, as help lists them ("relays" alone). */
static void
print_group(struct console *con, const char *group)
{
	cJSON		*help = commands_help(group);
	struct buf	 text;

	buf_init(&text, CONSOLE_OUT_QUEUE_BYTES);
	if (help == NULL ||
	    render_answer(&text, "help", help, 0, con->nl) == -1)
		con->dropped = 1;
	out_put(con, (const char *)text.data, text.len);
	buf_free(&text);
	cJSON_Delete(help);
}

/*
 * No command matches argv: a group's name alone lists the group, anything
 * else is an error that names the command meant when one is near
 * (commands_near) and says where to look.
 */
static void
print_unknown(struct console *con, int argc, char *const *argv)
{
	char	msg[320], text[400];
	int	group = commands_is_group(argv[0]);

	if (group && argc == 1) {
		print_group(con, argv[0]);
		return;
	}
	snprintf(text, sizeof(text), "%s (try '%.64s')", commands_unknown(argc,
	    argv, msg, sizeof(msg)), group ? argv[0] : "help");
	print_error(con, text);
}

static void
print_reply(struct console *con, const struct command *c, const cJSON *reply,
    unsigned flags)
{
	const cJSON	*err = cJSON_GetObjectItemCaseSensitive(reply, "error");
	struct buf	 text;

	if (commands_is_error(reply) && !(flags & RENDER_JSON)) {
		print_error(con, err->valuestring);
		return;
	}
	buf_init(&text, CONSOLE_OUT_QUEUE_BYTES);
	if (render_answer(&text, c->name, reply, flags, con->nl) == -1)
		con->dropped = 1;
	out_put(con, (const char *)text.data, text.len);
	buf_free(&text);
}

/*
 * The console on stdin ended (end of input, or quit): stop the daemon as
 * SIGTERM would; the daemon was run for this console. What is still
 * queued gets one more try to go out.
 */
static void
stop_stdio(struct console *con, const char *why)
{
	log_info("console: %s on stdin: shutting down", why);
	flush_out(con);
	console_close_dev(con);
	con->app->stopping = true;
	loop_stop(con->loop);
}

/*
 * quit or exit: on stdin they end the console and so the daemon; a
 * serial line has nothing to close (the other end leaves by hanging up).
 */
static void
run_quit(struct console *con)
{
	if (con->is_stdio) {
		stop_stdio(con, "quit");
		return;
	}
	print_error(con, "quit and exit end a console on stdin (--console -); "
	    "this serial console stays: close the terminal to leave");
}

static void
run_line(struct console *con, char *line)
{
	char			*argv[CONSOLE_MAX_WORDS], err[512];
	const char		*why;
	const struct command	*c;
	cJSON			*args, *reply;
	unsigned		 flags;
	int			 argc, used = 0;

	if ((argc = lined_split(line, argv, CONSOLE_MAX_WORDS, &why)) == -1) {
		print_error(con, why);
		return;
	}
	flags = render_take_flags(&argc, argv);
	if (argc == 0)
		return;
	if (argc == 1 && (strcmp(argv[0], "quit") == 0 ||
	    strcmp(argv[0], "exit") == 0)) {
		run_quit(con);
		return;
	}
	if ((c = commands_match(argc, argv, &used)) == NULL) {
		print_unknown(con, argc, argv);
		return;
	}
	if ((args = commands_build_args(c, argc - used, argv + used, err,
	    sizeof(err))) == NULL) {
		print_error(con, err);
		return;
	}
	if ((why = render_flags_check(c->name, args, &flags)) != NULL) {
		print_error(con, why);
		cJSON_Delete(args);
		return;
	}
	reply = commands_run(con->app, c->name, args, CMD_FROM_CONSOLE);
	cJSON_Delete(args);
	if (c->flags & CMD_MUTATING)
		log_info("console: %s", c->name);
	if (reply != NULL)
		print_reply(con, c, reply, flags);
	cJSON_Delete(reply);
}

static void
take_byte(struct console *con, unsigned char ch, struct buf *echo)
{
	char	msg[96];

	switch (lined_feed(&con->ld, ch, con->echo ? echo : NULL)) {
	case LINED_NONE:
		out_put(con, (const char *)echo->data, echo->len);
		buf_reset(echo);
		return;
	case LINED_LINE:
		out_put(con, (const char *)echo->data, echo->len);
		buf_reset(echo);
		run_line(con, con->ld.line);
		break;
	case LINED_TOO_LONG:
		out_put(con, (const char *)echo->data, echo->len);
		buf_reset(echo);
		snprintf(msg, sizeof(msg), "error: line longer than %d bytes, "
		    "discarded", CONSOLE_MAX_LINE);
		out_str(con, msg);
		out_str(con, con->nl);
		break;
	case LINED_CANCEL:
		break;
	}
	out_put(con, (const char *)echo->data, echo->len);
	buf_reset(echo);
	out_str(con, CONSOLE_PROMPT);
}

/* ---- input ------------------------------------------------------------- */

static void
read_input(struct console *con)
{
	unsigned char	 in[CONSOLE_READ_CHUNK];
	struct buf	 echo;
	ssize_t		 n, i;

	n = read(con->rfd, in, sizeof(in));
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (n == 0 && con->is_stdio) {
		stop_stdio(con, "end of input");
		return;
	}
	if (n <= 0) {
		if (n == -1)
			log_warn("console: read %s", con->path);
		else
			log_info("console: end of input on %s", con->path);
		console_close_dev(con);
		return;
	}
	/* the most one byte echoes: Ctrl-U erasing a full line */
	buf_init(&echo, 3 * CONSOLE_MAX_LINE + 16);
	for (i = 0; i < n && con->rfd != -1; i++)
		take_byte(con, in[i], &echo);
	out_put(con, (const char *)echo.data, echo.len);
	buf_free(&echo);
	flush_out(con);
}

static void
on_fd(struct loop *loop, int fd, short revents, void *arg)
{
	struct console	*con = arg;

	if (fd == con->wfd && (revents & POLLOUT))
		flush_out(con);
	if (fd == con->rfd && con->rfd != -1 &&
	    (revents & (POLLIN | POLLHUP | POLLERR)))
		read_input(con);
}

/* ---- the device -------------------------------------------------------- */

/* Raw 115200 8N1, no flow control, one byte at a time. */
static int
set_raw(struct console *con, int fd)
{
	struct termios	tio;

	if (tcgetattr(fd, &con->saved_tio) == -1)
		return -1;
	con->saved_tty = 1;
	tio = con->saved_tio;
	cfmakeraw(&tio);
	tio.c_cflag &= ~(CSIZE | PARENB | CSTOPB | CRTSCTS);
	tio.c_cflag |= CS8 | CLOCAL | CREAD;
	tio.c_cc[VMIN] = 1;
	tio.c_cc[VTIME] = 0;
	if (cfsetispeed(&tio, B115200) == -1 ||
	    cfsetospeed(&tio, B115200) == -1 ||
	    tcsetattr(fd, TCSANOW, &tio) == -1)
		return -1;
	return 0;
}

static int
set_nonblock(int fd, int *saved)
{
	int	fl;

	if ((fl = fcntl(fd, F_GETFL)) == -1)
		return -1;
	*saved = fl;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/*
 * Open the console device. Only a character device (a tty, a USB gadget
 * serial port) is accepted: the console runs every line it reads as a
 * command with the console's full trust, so a regular file or a FIFO that
 * another user could write must never be one. The path is checked before
 * it is opened (opening is not free of effects) and the descriptor again
 * after, so a path swapped in between is caught. -1 with errno set
 * (ENOTTY for a path that is not a character device).
 */
static int
open_device(const char *path)
{
	struct stat	before, after;
	int		fd;

	if (stat(path, &before) == -1)
		return -1;
	if (!S_ISCHR(before.st_mode)) {
		errno = ENOTTY;
		return -1;
	}
	if ((fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &after) == -1 || !S_ISCHR(after.st_mode) ||
	    after.st_rdev != before.st_rdev) {
		close(fd);
		errno = ENOTTY;
		return -1;
	}
	return fd;
}

static int
open_fds(struct console *con)
{
	if (con->is_stdio) {
		con->rfd = STDIN_FILENO;
		con->wfd = STDOUT_FILENO;
	} else if ((con->rfd = con->wfd = open_device(con->path)) == -1)
		return -1;
	if (set_nonblock(con->rfd, &con->saved_rfl) == -1 ||
	    set_nonblock(con->wfd, &con->saved_wfl) == -1)
		return -1;
	con->echo = isatty(con->rfd);
	if (con->echo && set_raw(con, con->rfd) == -1)
		return -1;
	con->nl = isatty(con->wfd) ? "\r\n" : "\n";
	return 0;
}

static int
watch(struct console *con)
{
	if (loop_fd_add(con->loop, con->rfd, POLLIN, on_fd, con) == -1)
		return -1;
	if (con->wfd != con->rfd &&
	    loop_fd_add(con->loop, con->wfd, 0, on_fd, con) == -1)
		return -1;
	return 0;
}

/* Queue text's lines ("\n"-ended), each ended by the terminal's newline. */
static void
out_lines(struct console *con, const char *text)
{
	size_t	len;

	for (; *text != '\0'; text += len + (text[len] == '\n')) {
		len = strcspn(text, "\n");
		out_put(con, text, len);
		out_str(con, con->nl);
	}
}

/* The greeting, with the first-run setup code while one is valid. */
static void
greet(struct console *con)
{
	char	setup[512];

	out_str(con, con->nl);
	out_str(con, "cachebox " CACHEBOX_VERSION " console; 'help' lists "
	    "the commands");
	out_str(con, con->nl);
	if (firstrun_console_text(con->app->firstrun, setup, sizeof(setup)) > 0)
		out_lines(con, setup);
	out_str(con, CONSOLE_PROMPT);
	flush_out(con);
}

static void
console_try_open(struct loop *loop, void *arg)
{
	struct console	*con = arg;

	con->reopen_timer = 0;
	lined_init(&con->ld);
	if (open_fds(con) == -1 || watch(con) == -1) {
		if (!con->warned && errno == ENOTTY)
			log_warnx("console: %s is not a character device (a "
			    "tty); refused: the console only runs on a serial "
			    "device or on stdin (--console -)", con->path);
		else if (!con->warned)
			log_warn("console: %s (trying again every %d s)",
			    con->path, CONSOLE_REOPEN_MS / 1000);
		con->warned = 1;
		console_close_dev(con);
		return;
	}
	con->warned = 0;
	log_info("console: serving on %s", con->path);
	greet(con);
}

/* Stop watching the device, restore its settings, close it. */
static void
release_dev(struct console *con)
{
	if (con->rfd != -1) {
		loop_fd_del(con->loop, con->rfd);
		if (con->saved_tty)
			tcsetattr(con->rfd, TCSANOW, &con->saved_tio);
		fcntl(con->rfd, F_SETFL, con->saved_rfl);
	}
	if (con->wfd != -1 && con->wfd != con->rfd) {
		loop_fd_del(con->loop, con->wfd);
		fcntl(con->wfd, F_SETFL, con->saved_wfl);
	}
	if (!con->is_stdio && con->rfd != -1)
		close(con->rfd);
	con->rfd = con->wfd = -1;
	con->saved_tty = 0;
	buf_reset(&con->out);
	con->dropped = 0;
}

/* Release the device; a tty is tried again later, stdin/stdout are not. */
static void
console_close_dev(struct console *con)
{
	release_dev(con);
	if (!con->is_stdio && con->reopen_timer == 0)
		con->reopen_timer = loop_timer_add(con->loop,
		    CONSOLE_REOPEN_MS, console_try_open, con);
}

struct console *
console_open(struct app *app, const char *path, char *err, size_t errlen)
{
	struct console	*con;

	if ((con = calloc(1, sizeof(*con))) == NULL) {
		snprintf(err, errlen, "console: out of memory");
		return NULL;
	}
	con->app = app;
	con->loop = app->loop;
	con->rfd = con->wfd = -1;
	con->nl = "\n";
	con->is_stdio = strcmp(path, "-") == 0;
	snprintf(con->path, sizeof(con->path), "%s", con->is_stdio ?
	    "stdin" : path);
	buf_init(&con->out, CONSOLE_OUT_QUEUE_BYTES);
	console_try_open(app->loop, con);
	return con;
}

void
console_free(struct console *con)
{
	if (con == NULL)
		return;
	loop_timer_clear(con->loop, &con->reopen_timer);
	release_dev(con);
	buf_free(&con->out);
	free(con);
}

void
console_notice(struct console *con, const char *text)
{
	if (con == NULL || con->wfd == -1)
		return;
	out_str(con, con->nl);
	out_lines(con, text);
	out_str(con, CONSOLE_PROMPT);
	if (con->echo && !con->ld.done)
		out_put(con, con->ld.line, con->ld.len);
	flush_out(con);
}
