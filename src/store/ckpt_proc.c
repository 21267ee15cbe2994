/*
 * ckpt_proc.c — the checkpoint process (ckpt_proc.h): starting, asking,
 * reading and stopping it on the daemon's side, and its own main. It owns
 * the socket pair and the child's pid; the WAL's state and when to ask
 * stay checkpoint.c's.
 */
#define _GNU_SOURCE	/* close_range */

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/procio.h"
#include "store/ckpt_proc.h"

struct ckpt_proc {
	pid_t	pid;
	int	fd;		/* the daemon's end of the socket pair */
};

/* The program the child is run through (tests under an emulator), or NULL. */
static const char *const *ckpt_runner;

void
ckpt_proc_set_runner(const char *const *argv)
{
	ckpt_runner = argv;
}

/*
 * In the child between fork and exec: die with the parent, its end of the
 * socket pair on stdin and stdout, every other descriptor closed. Only
 * async-signal-safe calls, but for execvp's search of PATH for a runner
 * (the daemon has one thread: nothing holds a lock across the fork).
 */
static void
child_exec(pid_t parent, int sock, const char *exe, char *const *argv)
{
	int	s;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
		_exit(127);
	/* Above 2 first: the socket may sit on 0, 1 or 2 itself. */
	if ((s = fcntl(sock, F_DUPFD, 10)) == -1 ||
	    dup2(s, STDIN_FILENO) == -1 || dup2(s, STDOUT_FILENO) == -1)
		_exit(127);
	(void)close_range(3, ~0U, 0);
	if (ckpt_runner != NULL)
		execvp(argv[0], argv);
	else
		execv(exe, argv);
	_exit(127);
}

/*
 * The daemon's binary by its path, which an emulator (qemu-user) answers
 * with the emulated program's; /proc/self/exe itself when the file was
 * replaced since (an upgrade: the child runs the daemon's own version).
 */
static void
self_exe(char *exe, size_t size)
{
	ssize_t	n = readlink("/proc/self/exe", exe, size - 1);

	if (n <= 0 || (size_t)n >= size - 1) {
		snprintf(exe, size, "/proc/self/exe");
		return;
	}
	exe[n] = '\0';
	if (strstr(exe, " (deleted)") != NULL)
		snprintf(exe, size, "/proc/self/exe");
}

/*
 * The child's arguments: the runner's and the binary's path, or
 * "cacheboxd-checkpoint" (its name in ps) when run directly; then
 * CKPT_PROC_ARG and the database's path. -1 if the runner has too many.
 */
static int
child_argv(char **argv, char *exe, const char *path)
{
	int	n = 0;

	if (ckpt_runner != NULL) {
		for (; ckpt_runner[n] != NULL; n++) {
			if (n >= STORE_CKPT_RUNNER_ARGS)
				return -1;
			argv[n] = (char *)ckpt_runner[n];
		}
		argv[n++] = exe;
	} else {
		argv[n++] = (char *)"cacheboxd-checkpoint";
	}
	argv[n++] = (char *)CKPT_PROC_ARG;
	argv[n++] = (char *)path;
	argv[n] = NULL;
	return 0;
}

struct ckpt_proc *
ckpt_proc_start(const char *path)
{
	struct ckpt_proc	*p;
	int			 sv[2];
	pid_t			 parent = getpid();
	char			 exe[STORE_MAX_PATH];
	char			*argv[STORE_CKPT_RUNNER_ARGS + 4];

	self_exe(exe, sizeof(exe));
	if (child_argv(argv, exe, path) == -1) {
		log_warnx("checkpoint process: a runner of more than %d "
		    "arguments", STORE_CKPT_RUNNER_ARGS);
		return NULL;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	/* Records, not a stream: a reply is read whole or not at all. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("checkpoint process: socketpair");
		free(p);
		return NULL;
	}
	if ((p->pid = fork()) == 0)
		child_exec(parent, sv[1], exe, argv);
	close(sv[1]);
	p->fd = sv[0];
	if (p->pid == -1 || fcntl(p->fd, F_SETFL, O_NONBLOCK) == -1) {
		log_warn("checkpoint process: start");
		ckpt_proc_stop(p);
		return NULL;
	}
	return p;
}

/* Wait for the child's end of the socket pair to close, at most ms milliseconds: 0 when seen. */
static int
wait_eof(int fd, int ms)
{
	struct ckpt_proc_reply	r;
	struct pollfd		pfd = { .fd = fd, .events = POLLIN };
	struct timespec		t0, t1;
	ssize_t			n;
	int			left = ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (left > 0) {
		if (poll(&pfd, 1, left) == -1 && errno != EINTR)
			return -1;
		while ((n = read(fd, &r, sizeof(r))) > 0)
			;	/* a last reply: dropped */
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = ms - (int)((t1.tv_sec - t0.tv_sec) * 1000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000000);
	}
	return -1;
}

void
ckpt_proc_stop(struct ckpt_proc *p)
{
	if (p == NULL)
		return;
	/* The child reads the end of its requests and exits. */
	(void)shutdown(p->fd, SHUT_WR);
	if (p->pid > 0) {
		if (wait_eof(p->fd, STORE_CKPT_PROC_STOP_MS) == -1)
			(void)kill(p->pid, SIGKILL);
		while (waitpid(p->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	close(p->fd);
	free(p);
}

int
ckpt_proc_fd(const struct ckpt_proc *p)
{
	return p->fd;
}

pid_t
ckpt_proc_pid(const struct ckpt_proc *p)
{
	return p->pid;
}

int
ckpt_proc_ask(struct ckpt_proc *p)
{
	ssize_t	n;

	/*
	 * MSG_NOSIGNAL: a child gone is EPIPE here, which the caller treats
	 * as its death, never a SIGPIPE that would end the daemon.
	 */
	while ((n = send(p->fd, "c", 1, MSG_NOSIGNAL | MSG_DONTWAIT)) == -1 &&
	    errno == EINTR)
		;
	return n == 1 ? 0 : -1;
}

int
ckpt_proc_read(struct ckpt_proc *p, struct ckpt_proc_reply *r)
{
	ssize_t	n;

	while ((n = read(p->fd, r, sizeof(*r))) == -1 && errno == EINTR)
		;
	if (n == -1 && errno == EAGAIN)
		return 0;
	/* A reply is one record: whole or not at all; 0 is the child's end. */
	return n == (ssize_t)sizeof(*r) ? 1 : -1;
}

/*
 * The child's connection, no checkpoint at its close. It reads nothing
 * until the first request: with a read of the child's at its start the
 * WAL of test_store_ckpt_proc's catch-up case at times never restarted.
 */
static sqlite3 *
proc_open(const char *path)
{
	sqlite3	*db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
	    NULL) != SQLITE_OK) {
		log_warnx("checkpoint process: %s: %s", path,
		    db != NULL ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

int
ckpt_proc_main(int argc, char **argv)
{
	struct ckpt_proc_reply	 r;
	sqlite3			*db;
	char			 c;
	ssize_t			 n;

	if (argc != 3)
		return 2;
	/* A ^C on the terminal is the daemon's to act on. */
	if (signal(SIGINT, SIG_IGN) == SIG_ERR)
		log_warn("checkpoint process: signal");
	if ((db = proc_open(argv[2])) == NULL)
		return 1;
	for (;;) {
		if ((n = read(STDIN_FILENO, &c, 1)) == -1 && errno == EINTR)
			continue;
		if (n != 1)
			break;		/* the daemon stopped asking, or died */
		memset(&r, 0, sizeof(r));
		/*
		 * The daemon's sync level (the copy syncs the WAL before it
		 * and the database after), and a read: a connection knows the
		 * WAL once it has read. Each ends before the copy.
		 */
		r.rc = sqlite3_exec(db, "PRAGMA synchronous = NORMAL; "
		    "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL);
		if (r.rc == SQLITE_OK)
			r.rc = sqlite3_wal_checkpoint_v2(db, "main",
			    SQLITE_CHECKPOINT_PASSIVE, &r.log, &r.done);
		r.write_bytes = procio_write_bytes("/proc/self/io");
		if (write(STDOUT_FILENO, &r, sizeof(r)) != (ssize_t)sizeof(r))
			break;
	}
	sqlite3_close(db);
	return 0;
}
