/*
 * ingest.c — the whole ingest path into SQLite against bare BIP-340
 * verification of the same events, measured in one run. Signs N events
 * here (200 authors, kind-1-like content and tags), wraps each in an
 * ["EVENT", sub, {...}] frame, then times:
 *   (a) secp256k1_schnorrsig_verify alone on pre-parsed keys, ids, sigs;
 *   (b) frame parse + ingest_event (size, dedup, parse, id, verify,
 *       policy, canonical JSON, insert) into a fresh store in a temporary
 *       directory (real file, WAL), driven by a real loop: R events per
 *       loop round, the loop's hook and deadline committing batches as
 *       in the daemon. Two commit policies, each in its own store:
 *       "policy" (INGEST_COMMIT_MIN_MS / INGEST_COMMIT_EVENTS) and
 *       "every round" (a commit per round: what the daemon did before);
 * (a) and (b) alternate chunk by chunk (VERIFY_CHUNK events) over the same
 * events so that both see the same load on the machine; each run gives
 * one ratio a/b per policy, and min / median / max over the runs are
 * printed (the machine may be shared: read the median, compare only
 * figures from one run);
 *   (c) the same frames again: duplicates, first with the recent-id set
 *       warm, then through a fresh ingest (store lookups only);
 *   (d) where the time goes: the path's stages cut off one after another
 *       (parse; + canonical JSON and SHA-256; + signature check; + a bare
 *       SQLite append of the row into a table with no index and no
 *       constraint, WAL and synchronous=NORMAL like the store, a commit
 *       every INGEST_COMMIT_EVENTS) over the same events, each alternated
 *       chunk by chunk with bare verification like (b). The last stage is
 *       the floor of any path that stores rows in SQLite: no dedup, no
 *       index, nothing the drain could query.
 * Also the bytes this process wrote to disk per 1,000 stored events
 * (write_bytes of /proc/self/io; while ingesting, then including the
 * checkpoint at close) and the commits. Times are the process's CPU time
 * (user + system, so the writes count) or wall time with -w. Not
 * pass/fail.
 *
 *   usage: ingest [-w] [EVENTS [RUNS [ROUND_EVENTS]]]   (defaults 5000, 5, 50)
 */
#define _XOPEN_SOURCE 700	/* nftw */

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <secp256k1.h>
#include <sqlite3.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "nostr/event.h"
#include "nostr/key.h"
#include "nostr/secp.h"
#include "relay/msg.h"
#include "store/events.h"
#include "store/store.h"
#include "store/store_sql.h"
#include "sync/ingest.h"

#define BENCH_AUTHORS	200
#define BENCH_NOW	1700000000
#define BENCH_MAX_RUNS	64
#define VERIFY_CHUNK	500	/* events verified, then ingested, in turn */

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

/*
 * Feed frames [0, n) in loop rounds of round_events (loop may be NULL: no
 * rounds); want is every result.
 */
static double
run_ingest(struct ingest *ing, struct loop *loop, const struct sample *s,
    size_t n, size_t round_events, enum ingest_result want)
{
	struct relay_msg	msg;
	double			t0 = wall_s();
	size_t			i;

	for (i = 0; i < n; i++) {
		if (loop != NULL && i % round_events == 0 &&
		    loop_run_once(loop, 0) == -1)
			abort();
		if (relay_msg_parse(&msg, s[i].frame, s[i].len,
		    WS_MAX_MSG_BYTES_DEFAULT) != RELAY_MSG_PARSED)
			abort();
		if (ingest_event(ing, &msg, NULL, 0, INGEST_BACKFILL,
		    "wss://bench.example", NULL) != want)
			abort();
		relay_msg_free(&msg);
	}
	return wall_s() - t0;
}

/*
 * Verify and ingest alternate chunk by chunk over the same events, so
 * both see the same load on the machine; each sum is one figure.
 */
static void
run_interleaved(struct ingest *ing, struct loop *loop, const struct sample *s,
    size_t n, size_t round_events, enum ingest_result want, double *verify_s,
    double *ingest_s)
{
	size_t	i, m;

	*verify_s = *ingest_s = 0;
	for (i = 0; i < n; i += m) {
		m = n - i < VERIFY_CHUNK ? n - i : VERIFY_CHUNK;
		*verify_s += run_verify(s + i, m);
		*ingest_s += run_ingest(ing, loop, s + i, m, round_events,
		    want);
	}
	if (ingest_flush(ing) == -1)
		abort();
}

/* How far run_stage takes each event down the ingest path. */
enum stage { STAGE_PARSE, STAGE_ID, STAGE_SIG, STAGE_APPEND, NSTAGES };

static const char *const stage_names[NSTAGES] = {
	"parse (frame, cJSON, event fields)",
	"+ canonical JSON and SHA-256 (id)",
	"+ signature check (no store)",
	"+ bare SQLite append (no index)",
};

/* The floor table of STAGE_APPEND: the events columns, nothing else. */
static sqlite3 *
append_open(const char *dir)
{
	char	 path[256];
	sqlite3	*db;

	snprintf(path, sizeof(path), "%s/append.db", dir);
	if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db,
	    "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
	    "CREATE TABLE t (id BLOB, pubkey BLOB, kind INTEGER, "
	    "created_at INTEGER, source TEXT, first_relay TEXT, "
	    "received_at INTEGER, json TEXT);", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	return db;
}

/* Append ev (its JSON in json) to the floor table, committing as ingest. */
static void
append_row(sqlite3 *db, sqlite3_stmt *ins, const struct event *ev,
    const struct buf *json, size_t *batch)
{
	if (*batch == 0 && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) !=
	    SQLITE_OK)
		abort();
	if (sqlite3_bind_blob(ins, 1, ev->id, 32, SQLITE_STATIC) ||
	    sqlite3_bind_blob(ins, 2, ev->pubkey, 32, SQLITE_STATIC) ||
	    sqlite3_bind_int64(ins, 3, ev->kind) ||
	    sqlite3_bind_int64(ins, 4, ev->created_at) ||
	    sqlite3_bind_text(ins, 5, "backfill", -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(ins, 6, "wss://bench.example", -1,
	    SQLITE_STATIC) || sqlite3_bind_int64(ins, 7, BENCH_NOW) ||
	    sqlite3_bind_text(ins, 8, (const char *)json->data, (int)json->len,
	    SQLITE_STATIC) || sqlite3_step(ins) != SQLITE_DONE ||
	    sqlite3_reset(ins) != SQLITE_OK)
		abort();
	if (++*batch == INGEST_COMMIT_EVENTS) {
		if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
			abort();
		*batch = 0;
	}
}

/*
 * Frames [0, n) through the path up to and including stage st (db, ins
 * and batch: the floor table, for STAGE_APPEND).
 */
static double
run_stage(const struct sample *s, size_t n, enum stage st, struct buf *json,
    sqlite3 *db, sqlite3_stmt *ins, size_t *batch)
{
	struct relay_msg	msg;
	struct event		ev;
	uint8_t			id[32];
	double			t0 = wall_s();
	size_t			i;

	for (i = 0; i < n; i++) {
		if (relay_msg_parse(&msg, s[i].frame, s[i].len,
		    WS_MAX_MSG_BYTES_DEFAULT) != RELAY_MSG_PARSED)
			abort();
		event_init(&ev);
		if (event_from_cjson(&ev, relay_msg_take_event(&msg)) !=
		    EVENT_OK)
			abort();
		buf_reset(json);
		if (st >= STAGE_ID && (event_to_json_id(&ev, json, id) == -1 ||
		    memcmp(id, ev.id, 32) != 0))
			abort();
		if (st >= STAGE_SIG && event_check_sig(&ev) != EVENT_OK)
			abort();
		if (st >= STAGE_APPEND)
			append_row(db, ins, &ev, json, batch);
		event_free(&ev);
		relay_msg_free(&msg);
	}
	return wall_s() - t0;
}

static int	rm_entry(const char *, const struct stat *, int, struct FTW *);

/*
 * Ratio verify / stage for each stage, chunks alternated as in (b); the
 * floor table lives in a temporary directory of its own.
 */
static void
run_stages(const struct sample *s, size_t n, double ratio[NSTAGES])
{
	char		 dir[] = "/tmp/bench_append.XXXXXX";
	struct buf	 json;
	sqlite3		*db;
	sqlite3_stmt	*ins;
	double		 v, t;
	size_t		 i, m, batch = 0;
	int		 st;

	if (mkdtemp(dir) == NULL)
		abort();
	db = append_open(dir);
	if (sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?1, ?2, ?3, ?4, "
	    "?5, ?6, ?7, ?8)", -1, &ins, NULL) != SQLITE_OK)
		abort();
	buf_init(&json, EVENT_SERIAL_MAX_BYTES + 64);
	for (st = 0; st < NSTAGES; st++) {
		v = t = 0;
		for (i = 0; i < n; i += m) {
			m = n - i < VERIFY_CHUNK ? n - i : VERIFY_CHUNK;
			v += run_verify(s + i, m);
			t += run_stage(s + i, m, (enum stage)st, &json, db,
			    ins, &batch);
		}
		ratio[st] = v / t;
	}
	if ((batch > 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) !=
	    SQLITE_OK) || sqlite3_finalize(ins) != SQLITE_OK ||
	    sqlite3_close(db) != SQLITE_OK)
		abort();
	buf_free(&json);
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

/* One store's figures. */
struct result {
	double		ratio;		/* verify time / ingest time */
	double		ingest_s;
	long long	written, written_close;
	uint64_t	commits;
	int64_t		db_bytes;
};

/* A fresh store and loop; a commit policy of 0 ms means every round. */
static void
one_store(const struct sample *s, size_t n, size_t round_events,
    uint64_t min_ms, size_t events, struct result *r, double *dup_warm_s,
    double *dup_cold_s)
{
	char		 dir[] = "/tmp/bench_ingest.XXXXXX", err[256];
	struct store	*st;
	struct ingest	*ing;
	struct loop	*loop;
	long long	 w0, w1;
	int64_t		 count;
	double		 v, t;

	if (mkdtemp(dir) == NULL || store_open(&st, dir, err,
	    sizeof(err)) == -1 || (loop = loop_new()) == NULL ||
	    (ing = ingest_new(loop, st)) == NULL) {
		fprintf(stderr, "ingest bench: %s\n", err);
		exit(1);
	}
	ingest_commit_policy(ing, min_ms, events);
	w0 = write_bytes();
	run_interleaved(ing, loop, s, n, round_events, INGEST_NEW, &v,
	    &r->ingest_s);
	w1 = write_bytes();
	r->ratio = v / r->ingest_s;
	r->commits = ingest_stats(ing)->transactions;
	if (ingest_stats(ing)->stored != n || ingest_stats(ing)->sig_checks != n)
		abort();
	if (dup_warm_s != NULL) {
		run_interleaved(ing, NULL, s, n, 0, INGEST_DUPLICATE, &v, &t);
		*dup_warm_s = t;
	}
	ingest_free(ing);
	if (dup_cold_s != NULL) {
		if ((ing = ingest_new(NULL, st)) == NULL)
			abort();
		run_interleaved(ing, NULL, s, n, 0, INGEST_DUPLICATE, &v, &t);
		*dup_cold_s = t;
		if (ingest_stats(ing)->sig_checks != 0)
			abort();
		ingest_free(ing);
	}
	if (store_events_totals(st, &count, &r->db_bytes) == -1 ||
	    count != (int64_t)n)
		abort();
	store_close(st);
	loop_free(loop);
	r->written = w1 - w0;
	r->written_close = write_bytes() - w0;
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Ratios of the runs, then bytes and commits of the median run. */
static void
print_policy(const char *name, struct result *r, int runs, size_t n)
{
	double		 x[BENCH_MAX_RUNS];
	int		 i;

	for (i = 0; i < runs; i++)
		x[i] = r[i].ratio;
	qsort(x, (size_t)runs, sizeof(x[0]), cmp_double);
	for (i = 0; i < runs && r[i].ratio != x[runs / 2]; i++)
		;
	printf("%-12s ratio min %.2f median %.2f max %.2f  %8.0f events/s  "
	    "commits %llu  written/1,000 events %lld B (%lld B with the "
	    "checkpoint at close)\n", name, x[0], x[runs / 2], x[runs - 1],
	    n / r[i].ingest_s, (unsigned long long)r[i].commits,
	    r[i].written * 1000 / (long long)n,
	    r[i].written_close * 1000 / (long long)n);
}

int
main(int argc, char **argv)
{
	size_t		 n, round_events, total = 0, k;
	int		 runs, i;
	struct sample	*s;
	struct result	 pol[BENCH_MAX_RUNS], every[BENCH_MAX_RUNS];
	double		 stage[NSTAGES][BENCH_MAX_RUNS], x[BENCH_MAX_RUNS];
	int		 st;
	double		 verify_best = 0, dup_warm = 0, dup_cold = 0, w, c;

	if (argc > 1 && strcmp(argv[1], "-w") == 0) {
		bench_clock = CLOCK_MONOTONIC;
		argc--;
		argv++;
	}
	n = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
	runs = argc > 2 ? atoi(argv[2]) : 5;
	round_events = argc > 3 ? strtoul(argv[3], NULL, 10) : 50;

	if (n == 0 || runs < 1 || runs > BENCH_MAX_RUNS || round_events == 0) {
		fprintf(stderr, "usage: ingest [-w] [EVENTS [RUNS (1..%d) "
		    "[ROUND_EVENTS]]]\n", BENCH_MAX_RUNS);
		return 2;
	}
	log_init(stderr, LOG_LEVEL_WARN);
	if ((s = calloc(n, sizeof(*s))) == NULL)
		return 1;
	make_samples(s, n);
	for (k = 0; k < n; k++)
		total += s[k].len;
	for (i = 0; i < runs; i++) {
		one_store(s, n, round_events, INGEST_COMMIT_MIN_MS,
		    INGEST_COMMIT_EVENTS, &pol[i], &w, &c);
		if (i == 0 || w < dup_warm)
			dup_warm = w;
		if (i == 0 || c < dup_cold)
			dup_cold = c;
		one_store(s, n, round_events, 0, 1, &every[i], NULL, NULL);
		run_stages(s, n, x);
		for (st = 0; st < NSTAGES; st++)
			stage[st][i] = x[st];
		w = run_verify(s, n);
		if (i == 0 || w < verify_best)
			verify_best = w;
	}
	printf("events: %zu (%d authors), mean frame %zu bytes, %zu events "
	    "per loop round, %d runs, %s time\n", n, BENCH_AUTHORS, total / n,
	    round_events, runs, bench_clock == CLOCK_MONOTONIC ? "wall" : "CPU");
	printf("bare verify: %.0f events/s (best run)\n", n / verify_best);
	printf("ingest/verify (goal >= 0.70), commits, disk bytes:\n");
	print_policy("policy", pol, runs, n);
	print_policy("every round", every, runs, n);
	printf("where the time goes (median over the runs; share = time of "
	    "a bare verify / time of the path up to there):\n");
	for (st = 0; st < NSTAGES; st++) {
		qsort(stage[st], (size_t)runs, sizeof(double), cmp_double);
		printf("  %-36s verify/path %.2f  (%.2f verify per event)\n",
		    stage_names[st], stage[st][runs / 2],
		    1 / stage[st][runs / 2]);
	}
	for (i = 0; i < runs; i++)
		x[i] = pol[i].ratio;
	qsort(x, (size_t)runs, sizeof(double), cmp_double);
	printf("  %-36s verify/path %.2f  (%.2f verify per event)\n",
	    "+ dedup probe, insert, commits", x[runs / 2], 1 / x[runs / 2]);
	printf("duplicates, recent-id set warm: %10.0f events/s\n",
	    n / dup_warm);
	printf("duplicates, store lookups only: %10.0f events/s\n",
	    n / dup_cold);
	printf("JSON stored per 1,000 events: %lld bytes\n",
	    (long long)pol[0].db_bytes * 1000 / (long long)n);
	for (k = 0; k < n; k++)
		free(s[k].frame);
	free(s);
	return 0;
}
