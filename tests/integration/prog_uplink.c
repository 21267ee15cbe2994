/*
 * prog_uplink.c — fills a cacheboxd state directory with signed events
 * through the real ingest path (parse, id, signature, insert, inbox row),
 * for the uplink tests and benchmark. It may run while cacheboxd has the
 * same database open (SQLite WAL; each batch is one short transaction),
 * which is how a test keeps "ingest going on" during an outage.
 *
 *   prog_uplink fill DIR COUNT [BATCH [SLEEP_MS [SEED [KIND [QUEUE]]]]]
 *   prog_uplink ingest DIR < EVENTS.jsonl
 *
 * COUNT new kind-KIND (default 1) events by four authors (a replaceable
 * KIND: an author of its own per event and SEED, since the store keeps
 * one version per author and kind), created_at
 * going back one second per event from an hour ago, committed BATCH at a
 * time (default 500) with SLEEP_MS between batches (default 0). SEED
 * (default 1) makes the content, so another seed gives other ids. QUEUE 0
 * stores without inbox rows, as a box without an uplink does. Prints
 * "stored N" and exits 0 when every event was new.
 *
 * ingest stores the signed events of stdin (one JSON object a line, as
 * `cacheboxctl event sign` writes them) through the same path as a drain
 * page from ws://127.0.0.1:1/test (source backfill, with inbox rows, the
 * store's rules applied), one line at a time, committed at the end.
 * Prints "stored N of M" and exits 0 when every line was read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/limits.h"
#include "core/log.h"
#include "nostr/event.h"
#include "nostr/key.h"
#include "store/store.h"
#include "sync/ingest.h"

#define AUTHORS	4

static void
sleep_ms(long ms)
{
	struct timespec	ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (ms > 0 && nanosleep(&ts, &ts) == -1)
		;
}

static int
make_keys(struct nostr_key keys[AUTHORS])
{
	uint8_t	sec[32];
	int	i;

	for (i = 0; i < AUTHORS; i++) {
		memset(sec, 0, sizeof(sec));
		sec[0] = 0x5a;
		sec[31] = (uint8_t)(i + 1);
		if (key_from_secret(&keys[i], sec) == -1)
			return -1;
	}
	return 0;
}

/*
 * The author of event n of a replaceable kind: one key per (seed, n), so
 * that every event is the only version of its key and is kept.
 */
static int
own_key(struct nostr_key *k, long seed, long n)
{
	uint8_t	sec[32];

	memset(sec, 0, sizeof(sec));
	sec[0] = 0x5b;
	sec[1] = (uint8_t)(seed >> 8);
	sec[2] = (uint8_t)seed;
	sec[28] = (uint8_t)(n >> 24);
	sec[29] = (uint8_t)(n >> 16);
	sec[30] = (uint8_t)(n >> 8);
	sec[31] = (uint8_t)n;
	return key_from_secret(k, sec);
}

/* One new signed event as JSON in out. 0 or -1. */
static int
make_event(const struct nostr_key *k, long seed, long n, uint32_t kind,
    int64_t created_at, struct buf *out)
{
	struct event	ev;
	char		content[128];
	int		rc;

	snprintf(content, sizeof(content), "uplink test seed %ld event %ld",
	    seed, n);
	event_init(&ev);
	if (event_create(&ev, k, kind, created_at, NULL, content) != EVENT_OK)
		return -1;
	buf_reset(out);
	rc = event_to_json(&ev, out);
	event_free(&ev);
	return rc;
}

static int
fill(const char *dir, long count, long batch, long pause, long seed,
    uint32_t kind, bool queue)
{
	struct nostr_key	 keys[AUTHORS], own;
	struct store		*st;
	struct ingest		*ing;
	struct buf		 json;
	char			 err[256];
	int64_t			 base = clock_wall_s() - 3600;
	long			 i, stored = 0;
	bool			 replaceable;

	if (store_open(&st, dir, err, sizeof(err)) == -1) {
		fprintf(stderr, "prog_uplink: %s\n", err);
		return 1;
	}
	if (make_keys(keys) == -1 || (ing = ingest_new(NULL, st)) == NULL) {
		fprintf(stderr, "prog_uplink: setup failed\n");
		store_close(st);
		return 1;
	}
	ingest_configure(ing, EVENT_MAX_BYTES_CEILING, queue);
	buf_init(&json, EVENT_MAX_BYTES_CEILING);
	replaceable = event_kind_class(kind) == EVENT_CLASS_REPLACEABLE;
	for (i = 0; i < count; i++) {
		const struct nostr_key	*k = &keys[i % AUTHORS];

		if (replaceable) {
			if (own_key(&own, seed, i) == -1)
				break;
			k = &own;
		}
		if (make_event(k, seed, i, kind, base - i, &json) == -1)
			break;
		if (ingest_event_json(ing, buf_cstr(&json), json.len, NULL, 0,
		    INGEST_BACKFILL, "ws://127.0.0.1:1/test", NULL) == INGEST_NEW)
			stored++;
		if ((i + 1) % batch == 0) {
			if (ingest_flush(ing) == -1)
				break;
			sleep_ms(pause);
		}
	}
	if (ingest_flush(ing) == -1)
		stored = -1;
	buf_free(&json);
	ingest_free(ing);
	store_close(st);
	printf("stored %ld\n", stored);
	return stored == count ? 0 : 1;
}

/* The events of stdin through ingest into dir. */
static int
ingest_lines(const char *dir)
{
	struct store	*st;
	struct ingest	*ing;
	char		*line = NULL, err[256];
	size_t		 cap = 0;
	ssize_t		 len;
	long		 lines = 0, stored = 0;

	if (store_open(&st, dir, err, sizeof(err)) == -1) {
		fprintf(stderr, "prog_uplink: %s\n", err);
		return 1;
	}
	if ((ing = ingest_new(NULL, st)) == NULL) {
		store_close(st);
		return 1;
	}
	ingest_configure(ing, EVENT_MAX_BYTES_CEILING, true);
	while ((len = getline(&line, &cap, stdin)) > 0) {
		while (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0)
			continue;
		lines++;
		if (ingest_event_json(ing, line, (size_t)len, NULL, 0,
		    INGEST_BACKFILL, "ws://127.0.0.1:1/test", NULL) ==
		    INGEST_NEW)
			stored++;
	}
	free(line);
	if (ingest_flush(ing) == -1)
		stored = -1;
	ingest_free(ing);
	store_close(st);
	printf("stored %ld of %ld\n", stored, lines);
	return stored == -1 ? 1 : 0;
}

int
main(int argc, char **argv)
{
	log_init(stderr, LOG_LEVEL_WARN);
	if (argc >= 4 && strcmp(argv[1], "fill") == 0) {
		long	batch = argc > 4 ? atol(argv[4]) : 500;
		long	pause = argc > 5 ? atol(argv[5]) : 0;
		long	seed = argc > 6 ? atol(argv[6]) : 1;
		long	kind = argc > 7 ? atol(argv[7]) : 1;
		bool	queue = argc > 8 ? atol(argv[8]) != 0 : true;

		return fill(argv[2], atol(argv[3]), batch > 0 ? batch : 500,
		    pause, seed, (uint32_t)kind, queue);
	}
	if (argc == 3 && strcmp(argv[1], "ingest") == 0)
		return ingest_lines(argv[2]);
	fprintf(stderr, "usage: prog_uplink fill DIR COUNT [BATCH [SLEEP_MS "
	    "[SEED [KIND [QUEUE]]]]]\n       prog_uplink ingest DIR\n");
	return 2;
}
