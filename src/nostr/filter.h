/*
 * filter.h — NIP-01 filters: parse (from cJSON or text), serialize back to
 * JSON, and match against a parsed event. Planners build filters to ask
 * relays; custom jobs take them from users, so parse errors say exactly
 * which key is wrong. Every list is bounded by a FILTER_MAX_* constant.
 *
 * Semantics: within a filter every present condition must hold; within a
 * list any entry may match. ids and authors are exact 64-hex values
 * (prefixes are refused). A present but empty list matches nothing.
 */
#ifndef CACHEBOX_NOSTR_FILTER_H
#define CACHEBOX_NOSTR_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/limits.h"

struct event;

/* One "#x" condition: the event needs a tag [x, v, ...] with v in values. */
struct filter_tag {
	char		  letter;	/* a-z or A-Z */
	char		**values;	/* owned, NUL-terminated each */
	size_t		  nvalues;
};

struct filter {
	uint8_t		(*ids)[32];	/* owned */
	size_t		  nids;
	uint8_t		(*authors)[32];	/* owned */
	size_t		  nauthors;
	uint16_t	 *kinds;	/* owned */
	size_t		  nkinds;
	struct filter_tag tags[FILTER_MAX_TAG_KEYS];
	size_t		  ntags;
	int64_t		  since;
	int64_t		  until;
	uint64_t	  limit;
	unsigned	  has;		/* FILTER_HAS_* bits */
	int		  sorted;	/* lists sorted: filter_sort() */
};

#define FILTER_HAS_IDS		0x01u
#define FILTER_HAS_AUTHORS	0x02u
#define FILTER_HAS_KINDS	0x04u
#define FILTER_HAS_SINCE	0x08u
#define FILTER_HAS_UNTIL	0x10u
#define FILTER_HAS_LIMIT	0x20u

void	filter_init(struct filter *);
/* Release every list; the filter is empty (matches everything) again. */
void	filter_free(struct filter *);

/*
 * The heap f holds, in bytes: every list and tag value, each allocation
 * counted as glibc's malloc keeps it (8 bytes of header, rounded up to
 * 16, at least 32). What a caller charges to whoever asked for it.
 */
size_t	filter_mem(const struct filter *f);

/*
 * Parse the filter object obj into f (initialised here). 0, or -1 with a
 * one-line reason in err, e.g. "ids: entry 3 is not 64 lowercase hex
 * digits", "unknown key \"author\"", "kinds: more than 100 entries"; f
 * then owns nothing. obj stays the caller's.
 */
int	filter_parse(struct filter *f, const cJSON *obj, char *err,
	    size_t errlen);
/* Same, from JSON text[0..len). */
int	filter_parse_text(struct filter *f, const char *text, size_t len,
	    char *err, size_t errlen);

/*
 * Append f as a compact JSON object (keys in the order ids, authors,
 * kinds, #x..., since, until, limit; absent keys omitted). 0, or -1 if
 * out's max was reached.
 */
int	filter_to_json(const struct filter *f, struct buf *out);

/* 1 if the parsed event ev satisfies f, else 0. limit is not a condition. */
int	filter_match(const struct filter *f, const struct event *ev);

/*
 * Sort f's lists (ids, authors, kinds, each tag's values) and drop
 * repeated entries, so the matchers below and filter_match look entries
 * up by binary search: a filter checked against every new event (a
 * relay client's live subscription) costs log n per list, not n. What f
 * matches does not change.
 */
void	filter_sort(struct filter *f);
/*
 * The single conditions, for callers that hold an event's fields without
 * a parsed event (the store's queries): 1 if the condition holds or f has
 * no such condition, else 0.
 */
int	filter_match_id(const struct filter *f, const uint8_t id[32]);
int	filter_match_author(const struct filter *f, const uint8_t pubkey[32]);
int	filter_match_kind(const struct filter *f, uint32_t kind);
int	filter_match_time(const struct filter *f, int64_t created_at);
/* 1 if ev satisfies every "#x" condition of f (or f has none). */
int	filter_match_tags(const struct filter *f, const struct event *ev);

#endif
