/*
 * ckpt_proc.h — the checkpoint process: a child of the daemon that copies
 * the WAL into the database with a connection of its own, so that the
 * copy (seconds of I/O on a large store) never holds the loop.
 *
 * The daemon starts it by running its own binary again (fork, then exec
 * of the path /proc/self/exe names, or of /proc/self/exe when that file
 * was replaced, with a hidden first argument, CKPT_PROC_ARG, and the
 * database's path). A socket pair of records joins them (the child's end
 * on its stdin and stdout): the daemon sends one byte to ask for a
 * checkpoint, the child answers with one struct ckpt_proc_reply per byte.
 * The daemon sends with MSG_NOSIGNAL: a child gone is an error to act on
 * (the loop copies meanwhile), never a SIGPIPE. The child runs SQLite's passive checkpoint, which never
 * blocks the daemon's writes, with synchronous=NORMAL as the daemon's
 * connection: the WAL is synced before the copy and the database after a
 * complete one, so what a power cut can lose is unchanged.
 *
 * The child dies with the daemon: the kernel sends it SIGKILL when the
 * daemon exits (PR_SET_PDEATHSIG), and it exits when the requests reach
 * their end. The daemon never waits on it while running: it polls its
 * end of the socket pair.
 */
#ifndef CACHEBOX_STORE_CKPT_PROC_H
#define CACHEBOX_STORE_CKPT_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* argv[1] of the child; argv[2] is the database's path. */
#define CKPT_PROC_ARG	"--checkpoint-process"

struct ckpt_proc_reply {
	int32_t		rc;		/* sqlite3_wal_checkpoint_v2's result */
	int32_t		log;		/* frames in the WAL it saw */
	int32_t		done;		/* frames copied into the database */
	int32_t		pad;
	int64_t		write_bytes;	/* the child's /proc/self/io so far, -1 if none */
};

struct ckpt_proc;

/*
 * Start a child on the database at path; NULL (logged) if it cannot. A
 * child that cannot run (its exec failed) is seen as gone at its first
 * request or read.
 */
struct ckpt_proc	*ckpt_proc_start(const char *path);
/*
 * For tests only: the children started from now on are run through argv
 * (a NULL-terminated list, kept by the caller: an emulator and its
 * options, found in PATH) followed by the binary's path, as a cross build
 * runs the test itself. NULL, the default, runs the binary directly. The
 * daemon never calls it.
 */
void			 ckpt_proc_set_runner(const char *const *argv);
/*
 * Shut the requests down and wait, at most STORE_CKPT_PROC_STOP_MS, for
 * the child to finish the copy in hand and exit; then SIGKILL and reap.
 */
void			 ckpt_proc_stop(struct ckpt_proc *);
/* The daemon's end of the socket pair (non-blocking), for the loop to poll. */
int			 ckpt_proc_fd(const struct ckpt_proc *);
pid_t			 ckpt_proc_pid(const struct ckpt_proc *);
/* Ask for one checkpoint: 0, or -1 if the child is gone. */
int			 ckpt_proc_ask(struct ckpt_proc *);
/* One reply: 1 read into r, 0 none yet, -1 the child is gone. */
int			 ckpt_proc_read(struct ckpt_proc *, struct ckpt_proc_reply *r);

/*
 * The child's side: main() calls it first when argv[1] is CKPT_PROC_ARG.
 * Answers requests on stdin on stdout until stdin ends; the exit status.
 */
int			 ckpt_proc_main(int argc, char **argv);

#endif
