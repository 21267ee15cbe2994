/*
 * jobs_int.h — what the custom jobs' two files share: the planner
 * (sync/jobs.c: the running job, its relays, the loop) and one batch on
 * one relay (sync/jobs_step.c: paged by the pager or reconciled by
 * negsync). The planner starts and frees steps; a step reaches back only
 * through the hooks in struct jobs, so the two never call each other in a
 * circle.
 */
#ifndef CACHEBOX_SYNC_JOBS_INT_H
#define CACHEBOX_SYNC_JOBS_INT_H

#include <sys/queue.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/jobs.h"
#include "sync/drain_page.h"
#include "sync/pager.h"

struct config;
struct follow;
struct ingest;
struct loop;
struct negsync;
struct negsync_step;
struct pool;
struct store;

struct jrelay;

struct jstep {
	TAILQ_ENTRY(jstep)	 entry;
	struct jrelay		*jr;
	struct store_job_batch	 b;
	struct pager		 pg;		/* the request and its page */
	int64_t			 fetched;	/* the batch's events so far */
	enum drain_next		 next;		/* the last committed verdict */
	struct negsync_step	*neg;		/* reconciling instead, or NULL */
};
TAILQ_HEAD(jstep_list, jstep);

struct jrelay {
	TAILQ_ENTRY(jrelay)	 entry;
	struct jobs		*j;
	char			*url;
	struct jstep_list	 steps;
	size_t			 nsteps;
	int64_t			 largest_page;	/* cap seen on this relay */
	struct pager_pump	 pump;
};
TAILQ_HEAD(jrelay_list, jrelay);

struct jobs {
	struct loop		*loop;
	struct pool		*pool;
	struct ingest		*ing;
	struct store		*st;
	const struct config	*cfg;
	struct follow		*follow;
	struct jrelay_list	 relays;	/* of the running job */
	size_t			 nsteps;
	int64_t			 active;	/* the running job, 0: none */
	bool			 relays_unread;	/* its relays to be read again */
	char			*filter_json;	/* its shared filter */
	enum store_job_mode	 mode;
	int64_t			 since;		/* its run's window; -1: none */
	int64_t			 until;
	int64_t			 user_limit;	/* newest events per batch; 0 */
	uint64_t		 tick_timer;
	uint64_t		 check_timer;
	bool			 (*held)(void *);
	void			*held_arg;
	struct negsync		*ns;		/* NIP-77 steps, or NULL */
	/*
	 * What a step's end asks of the planner (jobs.c sets them): look
	 * at jr's due batches after delay_ms, and at the job's end soon.
	 */
	void			(*kick)(struct jrelay *, uint64_t delay_ms);
	void			(*check)(struct jobs *);
};

/* Wall-clock milliseconds (the job rows' times). */
int64_t	jobs_wall_ms(void);
/*
 * Start batch b on jr: reconciled where the relay speaks NIP-77 and the
 * batch may be, else paged. 0, or -1 (nothing started).
 */
int	jobs_step_start(struct jrelay *jr, const struct store_job_batch *b);
/* Close the step's request (if open) and forget it; its row is as left. */
void	jobs_step_free(struct jstep *s);

#endif
