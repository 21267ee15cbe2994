/*
 * tags.h — the single-letter tag index (`event_tags`, migration 010) that
 * NIP-01 "#x" filters read: the rows of an event written in the same
 * transaction as the event (store_event_insert calls this), deleted with
 * it (retention), and the background fill that indexes events stored
 * before the index existed, a few hundred per step.
 *
 * What is indexed: for every tag whose name is one ASCII letter and which
 * has a value, the pair (letter, first value), once per event. A value of
 * 64 lowercase hex digits is kept as its 32 bytes, anything else as text;
 * queries bind their values through store_tag_value_bind (store_sql.h) so
 * both sides agree.
 */
#ifndef CACHEBOX_STORE_TAGS_H
#define CACHEBOX_STORE_TAGS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct store;

/*
 * Index the tags of the event stored at rowid (created_at is its time).
 * tags is the event's "tags" array (NULL: nothing to index). Inside the
 * caller's transaction. 0, or -1 (logged).
 */
int	store_tags_insert(struct store *, int64_t rowid, int64_t created_at,
	    const cJSON *tags);

/*
 * Remove the index rows of the event stored at rowid, whose JSON is
 * json[0..len) (its tags say which rows it has). 0, or -1 (logged).
 */
int	store_tags_delete(struct store *, int64_t rowid, int64_t created_at,
	    const char *json, size_t len);

/*
 * Whether every stored event is in the index: 1 when the background fill
 * is done (or was never needed), 0 while it runs, -1 on error. While it
 * is 0 a "#x" condition must be checked on the events themselves.
 */
int	store_tags_ready(struct store *);

/*
 * One step of the background fill: index the next max_events events
 * stored before migration 010, in one transaction (nested in one the
 * caller has open). *left (may be NULL) gets the rowids still to read.
 * 1 when more steps are needed, 0 when the index is complete, -1 (logged)
 * on error.
 */
int	store_tags_fill_step(struct store *, size_t max_events, int64_t *left);

/*
 * The number of rows of the index and the bytes its b-tree takes, for
 * the benchmark's report (dbstat when SQLite has it, else -1 bytes).
 * 0 or -1.
 */
int	store_tags_size(struct store *, int64_t *rows, int64_t *bytes);

#endif
