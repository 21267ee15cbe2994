/*
 * checkpoint.h — the daemon's WAL checkpoints, off its commits.
 *
 * SQLite's own checkpoint runs inside the commit that crosses the WAL
 * limit: it syncs the WAL, copies every page into the database and syncs
 * the database, one turn of the loop (100-300 ms at 16,000 pages on the
 * test machine, during an import). Taken over here, a limit of the
 * daemon's (store.checkpoint_mib) is reached in three steps, each in a turn
 * of its own in which nothing was committed:
 *
 *   1. a second, read-only connection takes a snapshot at the WAL's end;
 *   2. once a later commit has grown the WAL past it, a passive checkpoint
 *      from a third connection copies the pages up to the snapshot (not
 *      the pages written again after it: they are copied in step 3) and,
 *      the snapshot holding the WAL back, SQLite does not sync the
 *      database; the snapshot is let go and the kernel is asked to start
 *      writing the copied pages out (sync_file_range, no wait);
 *   3. STORE_CKPT_SETTLE_MS later a passive checkpoint copies the rest and
 *      syncs the database, by then mostly written.
 *
 * The WAL's writing-out is also started after every commit, so the sync
 * at the head of steps 2 and 3 finds little left to do. What a power cut
 * can lose is unchanged: the WAL is reset only after step 3's sync, as
 * after SQLite's own checkpoint.
 *
 * With store_ckpt_use_process the copies are a child process's instead
 * (store/ckpt_proc.h), and the three steps run only while it is down:
 * the loop asks and polls for its answers and copies nothing itself,
 * except past the catch-up mark, STORE_WAL_CATCH_UP_TIMES the limit
 * (writers that leave it no gap).
 */
#ifndef CACHEBOX_STORE_CHECKPOINT_H
#define CACHEBOX_STORE_CHECKPOINT_H

#include <sys/types.h>

#include <stdbool.h>
#include <stdint.h>

struct loop;
struct store;

struct store_ckpt_stats {
	uint64_t	copies;		/* step 2 done (pages up to a snapshot) */
	uint64_t	completions;	/* step 3 done: the WAL may restart */
	uint64_t	failures;	/* a checkpoint call that failed */
	uint64_t	catch_ups;	/* the whole WAL at once after a commit, past twice the limit */
	int		copied, left;	/* WAL frames the last call copied and left */
	uint64_t	proc_starts;	/* checkpoint processes started */
	uint64_t	proc_deaths;	/* ... and found gone (killed, crashed) */
	int64_t		proc_write_bytes; /* the bytes they wrote (the kernel's count) */
	uint64_t	hold_timeouts;	/* holds that ended unanswered */
};

/*
 * Frames of the WAL past which a commit copies the whole WAL at once
 * (STORE_WAL_CATCH_UP_TIMES the limit unless a test sets another).
 */
struct store_ckpt;
void	store_ckpt_set_catch_up(struct store_ckpt *, int frames);

/*
 * Take st's checkpoints over at pages WAL pages (0: the store's limit).
 * With loop NULL nothing steps on its own (tests call store_ckpt_step).
 * NULL (logged) when the connections cannot be opened: SQLite's own
 * checkpoints then stay on. Free before closing the store.
 */
struct store_ckpt	*store_ckpt_new(struct loop *, struct store *, int pages);
void			 store_ckpt_free(struct store_ckpt *);
/*
 * Hand the copies to a checkpoint process (store/ckpt_proc.h), which the
 * loop's hook starts again STORE_CKPT_PROC_RESTART_MS after it is found
 * gone; meanwhile the three steps run in the loop. 0, or -1 (logged) if
 * it cannot start or there is no loop. Its pid, or 0 when it is down.
 */
int			 store_ckpt_use_process(struct store_ckpt *);
pid_t			 store_ckpt_process_pid(const struct store_ckpt *);
/*
 * Whether a writer that can wait (an import) should not begin its next
 * transaction yet: the checkpoint process is copying the last commits so
 * that the WAL restarts (checkpoint.c, proc_committed). False for NULL.
 */
bool			 store_ckpt_holding(const struct store_ckpt *);

/*
 * One step, at most, of the three, at the monotonic time now_ms. The loop
 * hook calls it only in a turn where nothing was committed since the
 * turn before.
 */
void			 store_ckpt_step(struct store_ckpt *, uint64_t now_ms);
/* Frames in the WAL at the last commit, and the step the next call takes. */
int			 store_ckpt_frames(const struct store_ckpt *);
int			 store_ckpt_phase(const struct store_ckpt *);
const struct store_ckpt_stats *store_ckpt_stats(const struct store_ckpt *);

#endif
