/*
 * ctx.h — the parts the sync planners (the author drain, NIP-77 sync,
 * live, jobs) are built over, given once to each constructor. All are
 * borrowed and outlive the planner; follow may be NULL (relay lists
 * found while syncing are then not noted).
 */
#ifndef CACHEBOX_SYNC_CTX_H
#define CACHEBOX_SYNC_CTX_H

struct loop;
struct pool;
struct ingest;
struct store;
struct config;
struct follow;

struct sync_ctx {
	struct loop		*loop;
	struct pool		*pool;
	struct ingest		*ing;
	struct store		*st;
	const struct config	*cfg;
	struct follow		*follow;
};

#endif
