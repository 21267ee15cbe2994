/*
 * ckpt_proc.c — the checkpoint process (ckpt_proc.h): starting, asking,
 * reading and stopping it on the daemon's side, and its own main. It owns
 * the two pipes and the child's pid; the WAL's state and when to ask stay
 * checkpoint.c's.
 */
#define _GNU_SOURCE	/* pipe2, close_range */

#include <sys/prctl.h>
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
#include "store/ckpt_proc.h"

struct ckpt_proc {
	pid_t	pid;
	int	ask_fd;		/* the request pipe's write end */
	int	reply_fd;	/* the reply pipe's read end */
};

/*
 * In the child between fork and exec: die with the parent, the pipes on
 * stdin and stdout, every other descriptor closed. Only async-signal-safe
 * calls.
 */
static void
child_exec(pid_t parent, int req, int rep, const char *exe, const char *path)
{
	int	in, out;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
		_exit(127);
	/* Above 2 first: either end may sit on 0, 1 or 2 itself. */
	if ((in = fcntl(req, F_DUPFD, 10)) == -1 ||
	    (out = fcntl(rep, F_DUPFD, 10)) == -1 ||
	    dup2(in, STDIN_FILENO) == -1 || dup2(out, STDOUT_FILENO) == -1)
		_exit(127);
	(void)close_range(3, ~0U, 0);
	execl(exe, "cacheboxd-checkpoint", CKPT_PROC_ARG, path, (char *)NULL);
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

struct ckpt_proc *
ckpt_proc_start(const char *path)
{
	struct ckpt_proc	*p;
	int			 req[2], rep[2];
	pid_t			 parent = getpid();
	char			 exe[STORE_MAX_PATH];

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	self_exe(exe, sizeof(exe));
	if (pipe2(req, O_CLOEXEC) == -1) {
		log_warn("checkpoint process: pipe");
		free(p);
		return NULL;
	}
	if (pipe2(rep, O_CLOEXEC) == -1) {
		log_warn("checkpoint process: pipe");
		close(req[0]);
		close(req[1]);
		free(p);
		return NULL;
	}
	if ((p->pid = fork()) == 0)
		child_exec(parent, req[0], rep[1], exe, path);
	close(req[0]);
	close(rep[1]);
	p->ask_fd = req[1];
	p->reply_fd = rep[0];
	if (p->pid == -1 || fcntl(p->ask_fd, F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(p->reply_fd, F_SETFL, O_NONBLOCK) == -1) {
		log_warn("checkpoint process: start");
		ckpt_proc_stop(p);
		return NULL;
	}
	return p;
}

/* Wait for the reply pipe's end, at most ms milliseconds: 0 when seen. */
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
	if (p->ask_fd != -1)
		close(p->ask_fd);
	if (p->pid > 0) {
		if (wait_eof(p->reply_fd, STORE_CKPT_PROC_STOP_MS) == -1)
			(void)kill(p->pid, SIGKILL);
		while (waitpid(p->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	close(p->reply_fd);
	free(p);
}

int
ckpt_proc_fd(const struct ckpt_proc *p)
{
	return p->reply_fd;
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

	while ((n = write(p->ask_fd, "c", 1)) == -1 && errno == EINTR)
		;
	return n == 1 ? 0 : -1;
}

int
ckpt_proc_read(struct ckpt_proc *p, struct ckpt_proc_reply *r)
{
	ssize_t	n;

	while ((n = read(p->reply_fd, r, sizeof(*r))) == -1 && errno == EINTR)
		;
	if (n == -1 && errno == EAGAIN)
		return 0;
	/* A reply is one write of less than PIPE_BUF: whole or not at all. */
	return n == (ssize_t)sizeof(*r) ? 1 : -1;
}

/* The child's bytes written so far, as the kernel counts them; -1 if unknown. */
static int64_t
proc_write_bytes(void)
{
	FILE		*f = fopen("/proc/self/io", "r");
	char		 line[128];
	long long	 v, written = -1, cancelled = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "write_bytes: %lld", &v) == 1)
			written = v;
		else if (sscanf(line, "cancelled_write_bytes: %lld", &v) == 1)
			cancelled = v;
	}
	fclose(f);
	if (written < 0)
		return -1;
	return written > cancelled ? written - cancelled : 0;
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
			break;		/* the daemon closed the pipe, or died */
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
		r.write_bytes = proc_write_bytes();
		if (write(STDOUT_FILENO, &r, sizeof(r)) != (ssize_t)sizeof(r))
			break;
	}
	sqlite3_close(db);
	return 0;
}
