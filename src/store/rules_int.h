/*
 * rules_int.h — what the rules' two files share (store/rules.c, the door
 * and the rules themselves; store/rules_steps.c, the bounded steps that
 * remove what one insert cannot): the view of one event the rules read
 * and the helpers the steps call. Private to those two files; the steps
 * call the door's file, never the other way.
 */
#ifndef CACHEBOX_STORE_RULES_INT_H
#define CACHEBOX_STORE_RULES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/limits.h"

struct store;
struct store_rules_stats;

/* What the rules read of one event: its row and what its tags say. */
struct rev {
	const uint8_t	*id;
	const uint8_t	*pubkey;
	uint32_t	 kind;
	int64_t		 created_at;
	const cJSON	*tags;
	const char	*json;
	size_t		 len;
	int64_t		 expires_at;		/* -1: none */
	uint8_t		 rcpt[RULES_MAX_RECIPIENTS][32];	/* a gift wrap's p */
	size_t		 nrcpt;
};

/* A stored version: its id and time. */
struct version {
	uint8_t		id[32];
	int64_t		created_at;
};

struct versions {
	struct version	*v;
	size_t		 n, cap;
};

/* The rules' counters beside the connection (never NULL). */
struct store_rules_stats *rules_stats_of(struct store *);
/* Fill e from an event's fields and tags (borrowed). */
void	rules_rev_init(struct rev *e, const uint8_t *id, const uint8_t *pubkey,
	    uint32_t kind, int64_t created_at, const cJSON *tags,
	    const char *json, size_t len);
/* Kinds 0, 3, 10000-19999 and 30000-39999. */
bool	rules_replaceable(uint32_t kind);
/*
 * Remove the stored event id (of pubkey, kind, created_at) for why,
 * leaving its tombstone (and a floor under its key when it is a version
 * withdrawn for another reason than a newer one); *count (may be NULL)
 * counts it. 0 or -1.
 */
int	rules_remove_withdraw(struct store *, const uint8_t id[32],
	    const uint8_t pubkey[32], uint32_t kind, int64_t created_at, int why,
	    int64_t now, uint64_t *count);
/*
 * Where e stands among the other stored versions of its key: 1 it is the
 * newest (the versions it replaces into olds, which the caller frees), 0
 * a stored one replaces it, -1 on error.
 */
int	rules_key_standing(struct store *, const struct rev *e,
	    struct versions *olds);
/*
 * Keep a superseded version of a root's kind 0, 3 or 10002 aside (json
 * NULL: read from the stored row id). 0 or -1.
 */
int	rules_keep_aside(struct store *, const uint8_t id[32],
	    const uint8_t pubkey[32], uint32_t kind, int64_t created_at,
	    const char *json, size_t len);
/* The effects of a stored e (a kind 5's deletions, a kind 62). 0 or -1. */
int	rules_apply_effects(struct store *, const struct rev *e, int64_t now);

#endif
