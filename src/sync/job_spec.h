/*
 * job_spec.h — what a person asks a custom backfill job to do, checked:
 * the form fields of `jobs new` and `jobs dry-run` (strings, as every
 * surface passes them) become a job_spec, or a one-line message that
 * names the field at fault ("kinds: entry 2 '70000' is not a kind
 * (0..65535)"). The seed's five presets fill fields the caller left out.
 *
 * Pure: no store, no loop. A list a person typed is counted before
 * anything is allocated for it, so a million-entry list is refused by
 * JOBS_MAX_ITEMS, not by the allocator.
 */
#ifndef CACHEBOX_SYNC_JOB_SPEC_H
#define CACHEBOX_SYNC_JOB_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"
#include "nostr/filter.h"
#include "store/jobs.h"

/* The form fields as given; NULL or "" means absent. Borrowed. */
struct job_args {
	const char	*label, *kinds, *authors_source, *authors;
	const char	*only_missing_kind0, *ids, *since, *until, *limit;
	const char	*tags, *batch_size, *relay_mode, *relays, *preset;
	const char	*every;
};


/*
 * A checked job. shared holds what every batch's filter shares (kinds,
 * #tags, since, until, limit); authors and ids are the typed lists,
 * decoded, sorted and without repeats (malloc'd). relays are normalised
 * URLs (custom mode). job_spec_free releases it all.
 */
struct job_spec {
	char			 label[JOBS_LABEL_MAX + 1];
	char			 preset[32];
	struct filter		 shared;
	enum store_job_source	 source;
	bool			 missing_kind0;
	uint8_t			(*authors)[32];
	size_t			 nauthors;
	uint8_t			(*ids)[32];
	size_t			 nids;
	enum store_job_mode	 mode;
	int64_t			 batch_size;
	enum store_job_relays	 relay_mode;
	char			**relays;
	size_t			 nrelays;
	int64_t			 every_s;	/* 0: runs once */
	char			 warnings[JOB_SPEC_MAX_WARNINGS]
				    [JOB_SPEC_WARNING_BYTES];
	size_t			 nwarnings;
};

/* One of the seed's presets: the fields it fills. */
struct job_preset {
	const char	*name;		/* "relay-lists" */
	const char	*title;		/* the seed's button text */
	const char	*kinds;
	const char	*authors_source;
	const char	*only_missing_kind0;
	const char	*relay_mode;
};

/* The presets, ended by an entry whose name is NULL. */
const struct job_preset	*job_presets(void);
/* The preset called name, or NULL. */
const struct job_preset	*job_preset_find(const char *name);

/*
 * Fill out from in and the preset in->preset names (in->preset absent:
 * out = in). A field in gives wins; a typed author list keeps the
 * preset's author source out (the list is manual), a typed id list keeps
 * it out too (none), typed relays keep its relay mode out (custom).
 * 0, or -1 with "preset: ..." in err.
 */
int	job_args_preset(const struct job_args *in, struct job_args *out,
	    char *err, size_t errlen);

/*
 * Check in (presets applied first) into out (initialised here). 0, or -1
 * with a message naming the field in err; out then owns nothing.
 * Warnings (a batch size over JOBS_BATCH_SIZE_WARN, outbox for a job
 * without authors, a time window without a limit over kind 1) go to
 * out->warnings.
 */
int	job_spec_parse(const struct job_args *in, struct job_spec *out,
	    char *err, size_t errlen);
void	job_spec_free(struct job_spec *);

/*
 * A time: Unix seconds ("1700000000") or an ISO-8601 date or date-time in
 * UTC ("2024-01-31", "2024-01-31T12:00", "2024-01-31 12:00:05Z"). 0 with
 * *out, or -1 with a static reason in *why.
 */
int	job_time_parse(const char *text, int64_t *out, const char **why);
/*
 * A schedule: a count and a unit, s, m, h or d ("6h", "1d"; seconds are
 * for tests), within JOBS_EVERY_MIN_S .. JOBS_EVERY_MAX_S. 0 with *out
 * seconds, or -1 with a static reason.
 */
int	job_every_parse(const char *text, int64_t *out, const char **why);
/* s as the largest unit that divides it ("6h", "90s") into out. */
void	job_every_format(int64_t s, char *out, size_t len);

/*
 * Count the entries of a typed list (separated by commas, spaces, tabs or
 * newlines) without allocating.
 */
size_t	job_list_count(const char *text);

#endif
