/*
 * ingest.c — the whole ingest path into SQLite against bare BIP-340
 * verification of the same events, measured in one run. Signs N events
 * here (200 authors, kind-1-like content and tags), wraps each in an
 * ["EVENT", sub, {...}] frame, then times:
 *   (a) secp256k1_schnorrsig_verify alone on pre-parsed keys, ids, sigs;
 *   (b) frame parse + ingest_event (size, dedup, parse, id, verify,
 *       policy, canonical JSON, insert) into a fresh store in a temporary
 *       directory (real file, WAL), committing every BATCH events as the
 *       loop would once per round;
 * (a) and (b) alternate batch by batch over the same events so that both
 * see the same load on the machine;
 *   (c) the same frames again: duplicates, first with the recent-id set
 *       warm, then through a fresh ingest (store lookups only).
 * Prints events/s of each, the ratio b/a, and the bytes this process
 * wrote to disk per 1,000 stored events (write_bytes of /proc/self/io,
 * including the checkpoint at close). Times are the process's CPU time
 * (user + system, so the writes count) or wall time with -w; the best of
 * ROUNDS runs counts. Not pass/fail.
 *
 *   usage: ingest [-w] [EVENTS [ROUNDS [BATCH]]]   (defaults 5000, 3, 500)
 */
#define _XOPEN_SOURCE 700	/* nftw */

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "nostr/event.h"
#include "nostr/key.h"
#include "nostr/secp.h"
#include "relay/msg.h"
#include "store/events.h"
#include "store/store.h"
#include "sync/ingest.h"

#define BENCH_AUTHORS	200
#define BENCH_NOW	1700000000

struct sample {
	char			*frame;
	size_t			 len;
	uint8_t			 id[32];
	uint8_t			 sig[64];
	secp256k1_xonly_pubkey	 pk;
};

/*
 * Seconds on the clock chosen: CPU time of this (single-threaded)
 * process, user and system, so other load on the machine distorts the
 * figures less while the system time of the writes still counts; or
 * wall time with -w.
 */
static clockid_t bench_clock = CLOCK_PROCESS_CPUTIME_ID;

static double
wall_s(void)
{
	struct timespec	ts;

	clock_gettime(bench_clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* write_bytes of /proc/self/io: bytes this process caused to be written. */
static long long
write_bytes(void)
{
	FILE		*f = fopen("/proc/self/io", "r");
	char		 line[128];
	long long	 v = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "write_bytes: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Text of about the length of real notes: mostly short, some long. */
static char *
content_for(unsigned r)
{
	static const char *const w[] = { "nostr ", "relay ", "zap ",
	    "caf\xc3\xa9 ", "\xe2\x9a\xa1 ", "\"q\" ", "line\n", "https://e.x/y " };
	size_t	 want = r % 10 < 7 ? 40 + r % 280 : 400 + r % 2000, len = 0;
	char	*s = malloc(want + 32);

	if (s == NULL)
		abort();
	s[0] = '\0';
	while (len < want) {
		const char *x = w[(r = r * 1664525u + 1013904223u) >> 28 & 7];

		memcpy(s + len, x, strlen(x) + 1);
		len += strlen(x);
	}
	return s;
}

/* A few e/p tags with random hex values. */
static cJSON *
tags_for(unsigned r)
{
	cJSON	*tags = cJSON_CreateArray(), *t;
	uint8_t	 b[32];
	char	 hex[65];
	unsigned i;

	for (i = 0; i < r % 5; i++) {
		if (nostr_random(b, sizeof(b)) == -1)
			abort();
		hex_encode(b, 32, hex, sizeof(hex));
		t = cJSON_CreateArray();
		cJSON_AddItemToArray(t, cJSON_CreateString(i % 2 ? "p" : "e"));
		cJSON_AddItemToArray(t, cJSON_CreateString(hex));
		cJSON_AddItemToArray(tags, t);
	}
	return tags;
}

static void
make_samples(struct sample *s, size_t n)
{
	struct nostr_key	*keys = calloc(BENCH_AUTHORS, sizeof(*keys));
	uint8_t			 sk[32];
	struct event		 ev;
	struct buf		 b;
	cJSON			*tags;
	char			*content;
	size_t			 i;

	if (keys == NULL)
		abort();
	for (i = 0; i < BENCH_AUTHORS; i++)
		if (nostr_random(sk, 32) == -1 ||
		    key_from_secret(&keys[i], sk) == -1)
			abort();
	buf_init(&b, EVENT_SERIAL_MAX_BYTES + 64);
	for (i = 0; i < n; i++) {
		tags = tags_for((unsigned)i * 2654435761u);
		content = content_for((unsigned)i * 40503u + 7u);
		if (event_create(&ev, &keys[i % BENCH_AUTHORS], 1,
		    BENCH_NOW - (int64_t)i, tags, content) != EVENT_OK)
			abort();
		buf_reset(&b);
		if (buf_puts(&b, "[\"EVENT\",\"s1\",") == -1 ||
		    event_to_json(&ev, &b) == -1 || buf_putc(&b, ']') == -1 ||
		    (s[i].frame = strdup(buf_cstr(&b))) == NULL)
			abort();
		s[i].len = b.len;
		memcpy(s[i].id, ev.id, 32);
		memcpy(s[i].sig, ev.sig, 64);
		if (!secp256k1_xonly_pubkey_parse(nostr_secp(), &s[i].pk,
		    ev.pubkey))
			abort();
		event_free(&ev);
		cJSON_Delete(tags);
		free(content);
	}
	buf_free(&b);
	free(keys);
}

static double
run_verify(const struct sample *s, size_t n)
{
	double	t0 = wall_s();
	size_t	i;

	for (i = 0; i < n; i++)
		if (!secp256k1_schnorrsig_verify(nostr_secp(), s[i].sig,
		    s[i].id, 32, &s[i].pk))
			abort();
	return wall_s() - t0;
}

/* Feed frames [0, n) as one loop round would; want is every result. */
static double
run_ingest(struct ingest *ing, const struct sample *s, size_t n,
    enum ingest_result want)
{
	struct relay_msg	msg;
	double			t0 = wall_s();
	size_t			i;

	for (i = 0; i < n; i++) {
		if (relay_msg_parse(&msg, s[i].frame, s[i].len,
		    WS_MAX_MSG_BYTES_DEFAULT) != RELAY_MSG_PARSED)
			abort();
		if (ingest_event(ing, &msg, NULL, 0, INGEST_BACKFILL,
		    "wss://bench.example", NULL) != want)
			abort();
		relay_msg_free(&msg);
	}
	if (ingest_flush(ing) == -1)
		abort();
	return wall_s() - t0;
}

/*
 * Verify and ingest alternate batch by batch over the same events, so
 * both see the same load on the machine; each sum is one figure.
 */
static void
run_interleaved(struct ingest *ing, const struct sample *s, size_t n,
    size_t batch, enum ingest_result want, double *verify_s, double *ingest_s)
{
	size_t	i, m;

	*verify_s = *ingest_s = 0;
	for (i = 0; i < n; i += m) {
		m = n - i < batch ? n - i : batch;
		if (verify_s != NULL)
			*verify_s += run_verify(s + i, m);
		*ingest_s += run_ingest(ing, s + i, m, want);
	}
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

struct result {
	double		verify_s, ingest_s, dup_warm_s, dup_cold_s;
	long long	written, written_close;
	int64_t		db_bytes;
};

static void
one_round(const struct sample *s, size_t n, size_t batch, struct result *r)
{
	char		 dir[] = "/tmp/bench_ingest.XXXXXX", err[256];
	struct store	*st;
	struct ingest	*ing;
	long long	 w0, w1;
	int64_t		 count;
	double		 unused;

	if (mkdtemp(dir) == NULL || store_open(&st, dir, err,
	    sizeof(err)) == -1 || (ing = ingest_new(NULL, st)) == NULL) {
		fprintf(stderr, "ingest bench: %s\n", err);
		exit(1);
	}
	w0 = write_bytes();
	run_interleaved(ing, s, n, batch, INGEST_NEW, &r->verify_s,
	    &r->ingest_s);
	w1 = write_bytes();
	if (ingest_stats(ing)->stored != n || ingest_stats(ing)->sig_checks != n)
		abort();
	run_interleaved(ing, s, n, batch, INGEST_DUPLICATE, &unused,
	    &r->dup_warm_s);
	ingest_free(ing);
	if ((ing = ingest_new(NULL, st)) == NULL)
		abort();
	run_interleaved(ing, s, n, batch, INGEST_DUPLICATE, &unused,
	    &r->dup_cold_s);
	if (ingest_stats(ing)->sig_checks != 0)
		abort();
	ingest_free(ing);
	if (store_events_totals(st, &count, &r->db_bytes) == -1 ||
	    count != (int64_t)n)
		abort();
	store_close(st);
	r->written = w1 - w0;
	r->written_close = write_bytes() - w0;
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void
keep_best(struct result *best, const struct result *r, int first)
{
	if (first) {
		*best = *r;
		return;
	}
	if (r->verify_s < best->verify_s)
		best->verify_s = r->verify_s;
	if (r->ingest_s < best->ingest_s) {
		best->ingest_s = r->ingest_s;
		best->written = r->written;
		best->written_close = r->written_close;
	}
	if (r->dup_warm_s < best->dup_warm_s)
		best->dup_warm_s = r->dup_warm_s;
	if (r->dup_cold_s < best->dup_cold_s)
		best->dup_cold_s = r->dup_cold_s;
}

int
main(int argc, char **argv)
{
	size_t		 n, batch, total = 0, k;
	int		 rounds, i;
	struct sample	*s;
	struct result	 r, best = { 0 };

	if (argc > 1 && strcmp(argv[1], "-w") == 0) {
		bench_clock = CLOCK_MONOTONIC;
		argc--;
		argv++;
	}
	n = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
	rounds = argc > 2 ? atoi(argv[2]) : 3;
	batch = argc > 3 ? strtoul(argv[3], NULL, 10) : 500;

	if (n == 0 || rounds < 1 || batch == 0)
		return 2;
	log_init(stderr, LOG_LEVEL_WARN);
	if ((s = calloc(n, sizeof(*s))) == NULL)
		return 1;
	make_samples(s, n);
	for (k = 0; k < n; k++)
		total += s[k].len;
	for (i = 0; i < rounds; i++) {
		one_round(s, n, batch, &r);
		keep_best(&best, &r, i == 0);
	}
	printf("events: %zu (%d authors), mean frame %zu bytes, batch %zu, "
	    "best of %d, %s time\n", n, BENCH_AUTHORS, total / n, batch, rounds,
	    bench_clock == CLOCK_MONOTONIC ? "wall" : "CPU");
	printf("bare verify:      %10.0f events/s\n", n / best.verify_s);
	printf("ingest to SQLite: %10.0f events/s\n", n / best.ingest_s);
	printf("ratio ingest/verify: %.2f (goal >= 0.70)\n",
	    best.verify_s / best.ingest_s);
	printf("duplicates, recent-id set warm: %10.0f events/s\n",
	    n / best.dup_warm_s);
	printf("duplicates, store lookups only: %10.0f events/s\n",
	    n / best.dup_cold_s);
	printf("JSON stored per 1,000 events: %lld bytes\n",
	    (long long)best.db_bytes * 1000 / (long long)n);
	printf("disk written per 1,000 events: %lld bytes while ingesting, "
	    "%lld including the checkpoint at close\n",
	    best.written * 1000 / (long long)n,
	    best.written_close * 1000 / (long long)n);
	for (k = 0; k < n; k++)
		free(s[k].frame);
	free(s);
	return 0;
}
