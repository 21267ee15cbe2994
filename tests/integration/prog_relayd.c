/*
 * prog_relayd.c — datasets for the relay endpoint's tests and benchmark:
 * signed events of many shapes written into a cacheboxd state directory,
 * and the same events as JSONL for the independent checkers and the npm
 * relay.
 *
 *   prog_relayd gen DIR COUNT [SEED [AUTHORS [JSONL [fast]]]]
 *	COUNT events by AUTHORS authors (default 20) whose secret keys come
 *	from SEED (default 1), or, when AUTHORS is @FILE, by the authors
 *	whose secret keys FILE lists (hex, one a line: a relaysim dataset's
 *	authors, so a store can hold the history of the keys a box
 *	follows): each author's kind 0, then kind 1 notes (a
 *	third replying to an earlier event with "e" and "p" tags, some with
 *	"t" hashtags), kind 7 reactions and kind 6 reposts of earlier
 *	events, at three to a second going back from an hour ago, so that
 *	many share a second. Stored through ingest (parse, id, signature),
 *	committed in batches; with "fast" stored by store_event_insert
 *	directly, with the very JSON ingest would store (event_to_json of an
 *	event signed here), for the million-event benchmark. JSONL (a path,
 *	or "-" for none) gets every event, one per line.
 *   prog_relayd key SEED I
 *	The secret key of author I (hex), for a test that signs as them.
 *
 * Prints "stored N" and exits 0 when every event was new.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "nostr/event.h"
#include "nostr/key.h"
#include "store/events.h"
#include "store/rules.h"
#include "store/store.h"
#include "sync/ingest.h"

#define GEN_MAX_AUTHORS	10000
#define GEN_RECENT	4096	/* earlier events a reply may point at */

static const char *const hashtags[] = {
	"nostr", "cachebox", "raspberrypi", "sqlite", "relay", "bitcoin",
};

struct gen {
	struct nostr_key	*keys;
	long			 nauthors;
	uint64_t		 rng;
	uint8_t			 recent[GEN_RECENT][32];
	uint8_t			 recent_pk[GEN_RECENT][32];
	long			 nrecent;
};

static uint32_t
rnd(struct gen *g, uint32_t n)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return (uint32_t)(g->rng % n);
}

static int
author_key(long seed, long i, struct nostr_key *k)
{
	uint8_t	sec[32];

	memset(sec, 0, sizeof(sec));
	sec[0] = 0x7e;
	sec[1] = (uint8_t)seed;
	sec[2] = (uint8_t)(seed >> 8);
	sec[30] = (uint8_t)(i >> 8);
	sec[31] = (uint8_t)(i + 1);
	return key_from_secret(k, sec);
}

/* Secret keys from a file of hex lines into g->keys; the count, or -1. */
static long
file_keys(const char *path, struct nostr_key **keys)
{
	FILE	*f = fopen(path, "r");
	char	 line[256];
	uint8_t	 sec[32];
	long	 n = 0;

	if (f == NULL || (*keys = calloc(GEN_MAX_AUTHORS,
	    sizeof(**keys))) == NULL) {
		perror(path);
		return -1;
	}
	while (n < GEN_MAX_AUTHORS && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (hex_decode(line, strlen(line), sec, 32) != 0 ||
		    key_from_secret(&(*keys)[n], sec) == -1) {
			fprintf(stderr, "%s: line %ld is not a secret key\n", path,
			    n + 1);
			fclose(f);
			return -1;
		}
		n++;
	}
	fclose(f);
	return n;
}

static void
add_tag(cJSON *tags, const char *name, const char *value)
{
	cJSON	*t = cJSON_CreateArray();

	cJSON_AddItemToArray(t, cJSON_CreateString(name));
	cJSON_AddItemToArray(t, cJSON_CreateString(value));
	cJSON_AddItemToArray(tags, t);
}

/* Tags pointing at an earlier event: ["e", id], ["p", its author]. */
static void
refer(struct gen *g, cJSON *tags)
{
	char	hex[65];
	long	r = rnd(g, (uint32_t)(g->nrecent < GEN_RECENT ? g->nrecent :
		    GEN_RECENT));

	hex_encode(g->recent[r], 32, hex, sizeof(hex));
	add_tag(tags, "e", hex);
	hex_encode(g->recent_pk[r], 32, hex, sizeof(hex));
	add_tag(tags, "p", hex);
}

/* The n-th event (its author, kind, tags and content) into ev. */
static int
make_event(struct gen *g, long n, int64_t at, struct event *ev)
{
	const struct nostr_key	*k;
	cJSON			*tags = cJSON_CreateArray();
	char			 content[400];
	uint32_t		 kind = 1, r = rnd(g, 100);
	int			 rc;

	if (n < g->nauthors) {
		k = &g->keys[n];
		kind = 0;
		snprintf(content, sizeof(content), "{\"name\":\"author %ld\","
		    "\"about\":\"a generated profile\"}", n);
	} else {
		k = &g->keys[rnd(g, (uint32_t)g->nauthors)];
		if (g->nrecent > 0 && r < 15) {
			kind = 7;
			refer(g, tags);
			snprintf(content, sizeof(content), "+");
		} else if (g->nrecent > 0 && r < 20) {
			kind = 6;
			refer(g, tags);
			content[0] = '\0';
		} else {
			if (g->nrecent > 0 && r < 50)
				refer(g, tags);
			if (r % 7 == 0)
				add_tag(tags, "t", hashtags[r % 6]);
			snprintf(content, sizeof(content), "note %ld: %.*s", n,
			    (int)(40 + rnd(g, 200)), "The quick brown fox jumps "
			    "over the lazy dog while a small board caches what "
			    "its owner follows and serves it on the LAN, newest "
			    "first, then live; slow readers are cut off and "
			    "huge queries are served in slices so the loop "
			    "keeps turning for everyone else.");
		}
	}
	event_init(ev);
	rc = event_create(ev, k, kind, at, tags, content) == EVENT_OK ? 0 : -1;
	cJSON_Delete(tags);
	if (rc == 0) {
		memcpy(g->recent[g->nrecent % GEN_RECENT], ev->id, 32);
		memcpy(g->recent_pk[g->nrecent % GEN_RECENT], ev->pubkey, 32);
		g->nrecent++;
	}
	return rc;
}

/* Store json of ev the fast way (as ingest would, without verifying). */
static int
store_fast(struct store *st, const struct event *ev, const struct buf *json)
{
	struct store_event_row	row = { 0 };

	row.id = ev->id;
	row.pubkey = ev->pubkey;
	row.kind = ev->kind;
	row.created_at = ev->created_at;
	row.json = (const char *)json->data;
	row.json_len = json->len;
	row.source = "backfill";
	row.first_relay = "ws://127.0.0.1:1/gen";
	row.received_at = clock_wall_s();
	row.tags = ev->tags;
	return store_event_insert(st, &row, false);
}

static int
gen(const char *dir, long count, long seed, long nauthors,
    const char *keyfile, const char *jsonl, bool fast)
{
	struct gen	 g = { 0 };
	struct store	*st;
	struct ingest	*ing = NULL;
	struct event	 ev;
	struct buf	 json;
	FILE		*out = NULL;
	char		 err[256];
	int64_t		 base = clock_wall_s() - 3600;
	long		 i, stored = 0;
	int		 rc;

	if (keyfile != NULL && (nauthors = file_keys(keyfile, &g.keys)) < 1)
		return 2;
	if (nauthors < 1 || nauthors > GEN_MAX_AUTHORS)
		return 2;
	g.nauthors = nauthors;
	g.rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)seed;
	if (keyfile == NULL && (g.keys = calloc((size_t)nauthors,
	    sizeof(*g.keys))) == NULL)
		return 1;
	for (i = 0; keyfile == NULL && i < nauthors; i++)
		if (author_key(seed, i, &g.keys[i]) == -1)
			return 1;
	if (store_open(&st, dir, err, sizeof(err)) == -1) {
		fprintf(stderr, "prog_relayd: %s\n", err);
		return 1;
	}
	if (!fast && (ing = ingest_new(NULL, st)) == NULL)
		return 1;
	if (strcmp(jsonl, "-") != 0 && (out = fopen(jsonl, "w")) == NULL) {
		perror(jsonl);
		return 1;
	}
	buf_init(&json, EVENT_SERIAL_MAX_BYTES);
	if (fast && store_begin(st) == -1)
		return 1;
	for (i = 0; i < count; i++) {
		if (make_event(&g, i, base - (count - i) / 3, &ev) == -1)
			break;
		buf_reset(&json);
		if (event_to_json(&ev, &json) == -1)
			break;
		if (out != NULL)
			fprintf(out, "%s\n", buf_cstr(&json));
		rc = fast ? store_fast(st, &ev, &json) : 0;
		rc = fast ? (rc == STORE_INSERT_NEW ||
		    rc == STORE_INSERT_REPLACED) :
		    ingest_event_json(ing, buf_cstr(&json), json.len, NULL, 0,
		    INGEST_BACKFILL, "ws://127.0.0.1:1/gen", NULL) == INGEST_NEW;
		stored += rc;
		event_free(&ev);
		if (fast && (i + 1) % 20000 == 0 && (store_commit(st) == -1 ||
		    store_begin(st) == -1))
			break;
	}
	if (fast)
		store_commit(st);
	else
		ingest_flush(ing);
	if (out != NULL)
		fclose(out);
	buf_free(&json);
	ingest_free(ing);
	store_close(st);
	free(g.keys);
	printf("stored %ld\n", stored);
	return stored == count ? 0 : 1;
}

int
main(int argc, char **argv)
{
	struct nostr_key	k;
	char			hex[65];

	log_init(stderr, LOG_LEVEL_WARN);
	if (argc >= 4 && strcmp(argv[1], "gen") == 0)
		return gen(argv[2], atol(argv[3]), argc > 4 ? atol(argv[4]) : 1,
		    argc > 5 ? atol(argv[5]) : 20, argc > 5 && argv[5][0] == '@' ?
		    argv[5] + 1 : NULL, argc > 6 ? argv[6] : "-",
		    argc > 7 && strcmp(argv[7], "fast") == 0);
	if (argc == 4 && strcmp(argv[1], "key") == 0 &&
	    author_key(atol(argv[2]), atol(argv[3]), &k) == 0) {
		hex_encode(k.seckey, 32, hex, sizeof(hex));
		printf("%s\n", hex);
		return 0;
	}
	fprintf(stderr, "usage: prog_relayd gen DIR COUNT [SEED [AUTHORS "
	    "[JSONL [fast]]]]\n       prog_relayd key SEED I\n");
	return 2;
}
