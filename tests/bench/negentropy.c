/*
 * negentropy.c — what a NIP-77 reconciliation costs the C codec: an
 * initiator and a responder in one process reconcile two sets, without a
 * frame-size limit and with the common limits (60000 and 4096 bytes on
 * both sides). Prints per run the bytes up (initiator to responder) and
 * down, the round trips, the have/need counts, and the CPU time of the
 * reconciliation alone (the sets are built and sealed before the clock
 * starts); then the peak RSS of the process (VmHWM), which holds both
 * sets, and what the sets themselves take. Not a pass/fail test.
 *
 *   usage: negentropy SET1 SET2       two files of "created_at,hex id" lines
 *          negentropy [ITEMS [PCT]]   made here: ITEMS items (100000), of
 *                                     which PCT % (1) are on one side only
 *
 * tests/bench/negentropy.sh runs this on the same sets as the JavaScript
 * reference, so the figures can be read side by side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/hex.h"
#include "nostr/negentropy.h"

#define BENCH_LINE	256
#define BENCH_MAX_ITEMS	NEG_HARNESS_MAX_ITEMS

struct bench_run {
	unsigned long	rounds, have, need;
	size_t		up, down;
	double		cpu_s;
};

/* CPU seconds used by this process. */
static double
bench_cpu(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* VmHWM of this process in KiB, or 0. */
static long
bench_hwm_kib(void)
{
	char	line[BENCH_LINE];
	long	kib = 0;
	FILE	*fp;

	if ((fp = fopen("/proc/self/status", "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(fp);
	return kib;
}

static void
bench_load(struct neg_storage *st, const char *path)
{
	char			 line[BENCH_LINE], *comma;
	uint8_t			 id[NEG_ID_BYTES];
	unsigned long long	 ts;
	FILE			*fp;

	if ((fp = fopen(path, "r")) == NULL) {
		perror(path);
		exit(1);
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if ((comma = strchr(line, ',')) == NULL ||
		    sscanf(line, "%llu", &ts) != 1 ||
		    hex_decode(comma + 1, strlen(comma + 1), id, 32) == -1 ||
		    neg_storage_add(st, ts, id) == -1) {
			fprintf(stderr, "%s: bad line: %s\n", path, line);
			exit(1);
		}
	}
	fclose(fp);
}

/* splitmix64, for the sets made here. */
static uint64_t
bench_rand(uint64_t *s)
{
	uint64_t	z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* n items, timestamps over n seconds; pct % on one side only (half each). */
static void
bench_make(struct neg_storage *a, struct neg_storage *b, size_t n,
    double pct)
{
	uint64_t	seed = 1, ts, r, half = (uint64_t)(pct * 10000 / 2);
	uint8_t		id[NEG_ID_BYTES];
	size_t		i, k;

	for (i = 0; i < n; i++) {
		ts = 1677970534 + bench_rand(&seed) % n;
		for (k = 0; k < NEG_ID_BYTES; k += 8) {
			r = bench_rand(&seed);
			memcpy(id + k, &r, 8);
		}
		/* Per million: [0, half) on a only, [half, 2 half) on b only. */
		r = bench_rand(&seed) % 1000000;
		if (r < half || r >= 2 * half)
			(void)neg_storage_add(a, ts, id);
		if (r >= half)
			(void)neg_storage_add(b, ts, id);
	}
}

static void
bench_count(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	(void)id;
	(*(unsigned long *)arg)++;
}

static void
bench_have(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	bench_count(&((struct bench_run *)arg)->have, id);
}

static void
bench_need(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	bench_count(&((struct bench_run *)arg)->need, id);
}

/* Reconcile a (initiator) with b (responder) under one frame limit. */
static int
bench_run(const struct neg_storage *a, const struct neg_storage *b,
    size_t limit, struct bench_run *r)
{
	struct neg_session	sa, sb;
	struct neg_ids		ids = { bench_have, bench_need, r };
	struct buf		m1, m2;
	enum neg_status		st;
	double			t0;

	memset(r, 0, sizeof(*r));
	buf_init(&m1, NEG_MAX_MSG_BYTES);
	buf_init(&m2, NEG_MAX_MSG_BYTES);
	if (neg_session_init(&sa, a, NEG_INITIATOR, limit) == -1 ||
	    neg_session_init(&sb, b, NEG_RESPONDER, limit) == -1)
		return -1;
	t0 = bench_cpu();
	st = neg_initiate(&sa, &m1);
	while (st == NEG_SEND) {
		r->up += m1.len;
		if (neg_reconcile(&sb, m1.data, m1.len, &m2, NULL) != NEG_SEND)
			return -1;
		r->down += m2.len;
		r->rounds++;
		st = neg_reconcile(&sa, m2.data, m2.len, &m1, &ids);
	}
	r->cpu_s = bench_cpu() - t0;
	neg_session_free(&sa);
	neg_session_free(&sb);
	buf_free(&m1);
	buf_free(&m2);
	return st == NEG_DONE ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static const size_t	limits[] = { 0, 60000, 4096 };
	struct neg_storage	a, b;
	struct bench_run	r;
	size_t			i;

	neg_storage_init(&a, BENCH_MAX_ITEMS);
	neg_storage_init(&b, BENCH_MAX_ITEMS);
	if (argc == 3 && strchr(argv[1], '/') != NULL) {
		bench_load(&a, argv[1]);
		bench_load(&b, argv[2]);
	} else
		bench_make(&a, &b, argc > 1 ? strtoul(argv[1], NULL, 10) :
		    100000, argc > 2 ? strtod(argv[2], NULL) : 1.0);
	neg_storage_seal(&a);
	neg_storage_seal(&b);
	printf("C codec, in one process: initiator %zu items, responder %zu "
	    "items\n", a.count, b.count);
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		if (bench_run(&a, &b, limits[i], &r) == -1) {
			fprintf(stderr, "reconciliation failed\n");
			return 1;
		}
		printf("  frame limit %6zu: have %lu need %lu, %lu round trips, "
		    "up %zu bytes, down %zu bytes, CPU %.3f s\n", limits[i],
		    r.have, r.need, r.rounds, r.up, r.down, r.cpu_s);
	}
	printf("  peak RSS (VmHWM) %ld KiB; the two sets take %zu KiB\n",
	    bench_hwm_kib(), (a.cap + b.cap) * sizeof(struct neg_item) / 1024);
	neg_storage_free(&a);
	neg_storage_free(&b);
	return 0;
}
