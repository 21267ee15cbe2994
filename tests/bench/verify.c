/*
 * verify.c — how close the event ingest path comes to bare BIP-340
 * verification. Builds N signed events in memory (random keys, content
 * sizes and tags shaped like real kind-1 traffic), then times:
 *   (a) secp256k1_schnorrsig_verify alone, on pre-parsed keys, ids, sigs;
 *   (b) event_validate on the JSON text: parse, canonical serialization,
 *       SHA-256, key parse, verify;
 * and prints events/s for both and the ratio b/a. Each run times (a) and
 * (b) back to back, so the two see the same load; the best rates and the
 * min / median / max of the runs' ratios are printed (on a shared
 * machine read the median). Time is the thread's CPU time, so other
 * processes distort the figures less. Not a pass/fail test.
 *
 *   usage: verify [EVENTS [RUNS]]   (defaults 2000 and 9)
 */
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
#include "nostr/event.h"
#include "nostr/key.h"
#include "nostr/secp.h"

#define BENCH_KEYS	200	/* distinct authors */
#define BENCH_MAX_RUNS	64
#define BENCH_NOW	1700000000

struct sample {
	char			*json;
	size_t			 len;
	uint8_t			 id[32];
	uint8_t			 sig[64];
	secp256k1_xonly_pubkey	 pk;
};

/* CPU seconds used by this thread. */
static double
now_s(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Content of a plausible length: mostly short notes, some long posts. */
static char *
make_content(unsigned r)
{
	static const char *const words[] = { "nostr ", "relay ", "caf\xc3\xa9 ",
	    "\xf0\x9f\xa4\x99 ", "\"quoted\" ", "line\n", "https://x.y/z ",
	    "tab\t", "\xe2\x9a\xa1 ", "zap " };
	size_t	 want = r % 10 < 7 ? 40 + r % 280 : 500 + r % 3000, len = 0;
	char	*s = malloc(want + 32);

	if (s == NULL)
		abort();
	s[0] = '\0';
	while (len < want) {
		const char *w = words[(r = r * 1103515245 + 12345) >> 16 & 7];

		strcpy(s + len, w);
		len += strlen(w);
	}
	return s;
}

/* Tags: a few e/p references with hex values, sometimes t tags. */
static cJSON *
make_tags(unsigned r)
{
	cJSON	*tags = cJSON_CreateArray(), *t;
	char	 hex[65];
	uint8_t	 b[32];
	unsigned i, n = r % 8;

	for (i = 0; i < n; i++) {
		if (nostr_random(b, sizeof(b)) == -1)
			abort();
		(void)hex_encode(b, 32, hex, sizeof(hex));
		t = cJSON_CreateArray();
		cJSON_AddItemToArray(t, cJSON_CreateString(i % 3 == 2 ? "t" :
		    i % 2 ? "p" : "e"));
		cJSON_AddItemToArray(t, cJSON_CreateString(i % 3 == 2 ?
		    "nostr" : hex));
		if (i % 2 == 0 && i % 3 != 2)
			cJSON_AddItemToArray(t,
			    cJSON_CreateString("wss://relay.example.com"));
		cJSON_AddItemToArray(tags, t);
	}
	return tags;
}

static void
make_samples(struct sample *s, size_t n)
{
	struct nostr_key	*keys = calloc(BENCH_KEYS, sizeof(*keys));
	const secp256k1_context	*ctx = nostr_secp();
	uint8_t			 sk[32];
	struct event		 ev;
	struct buf		 b;
	cJSON			*tags;
	char			*content;
	size_t			 i, total = 0;

	if (keys == NULL || ctx == NULL)
		abort();
	for (i = 0; i < BENCH_KEYS; i++)
		if (nostr_random(sk, 32) == -1 || key_from_secret(&keys[i], sk))
			abort();
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	for (i = 0; i < n; i++) {
		tags = make_tags((unsigned)i * 7919u);
		content = make_content((unsigned)i * 2654435761u);
		if (event_create(&ev, &keys[i % BENCH_KEYS], 1,
		    BENCH_NOW - (int64_t)i, tags, content) != EVENT_OK)
			abort();
		buf_reset(&b);
		if (event_to_json(&ev, &b) == -1 ||
		    (s[i].json = strdup(buf_cstr(&b))) == NULL)
			abort();
		s[i].len = b.len;
		total += b.len;
		memcpy(s[i].id, ev.id, 32);
		memcpy(s[i].sig, ev.sig, 64);
		if (!secp256k1_xonly_pubkey_parse(ctx, &s[i].pk, ev.pubkey))
			abort();
		event_free(&ev);
		cJSON_Delete(tags);
		free(content);
	}
	buf_free(&b);
	free(keys);
	printf("events: %zu, authors: %d, mean JSON size: %zu bytes\n", n,
	    BENCH_KEYS, total / n);
}

static double
run_bare(const struct sample *s, size_t n)
{
	const secp256k1_context	*ctx = nostr_secp();
	double			 t0 = now_s();
	size_t			 i;

	for (i = 0; i < n; i++)
		if (!secp256k1_schnorrsig_verify(ctx, s[i].sig, s[i].id, 32,
		    &s[i].pk))
			abort();
	return (double)n / (now_s() - t0);
}

static double
run_full(const struct sample *s, size_t n, struct buf *scratch)
{
	struct event	ev;
	double		t0 = now_s();
	size_t		i;

	for (i = 0; i < n; i++) {
		if (event_validate(&ev, s[i].json, s[i].len,
		    EVENT_MAX_BYTES_CEILING, BENCH_NOW, scratch) != EVENT_OK)
			abort();
		event_free(&ev);
	}
	return (double)n / (now_s() - t0);
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	size_t		 n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
	int		 runs = argc > 2 ? atoi(argv[2]) : 9, r;
	struct sample	*s;
	struct buf	 scratch;
	double		 a = 0, b = 0, x, y, ratio[BENCH_MAX_RUNS];

	if (n == 0 || runs <= 0 || runs > BENCH_MAX_RUNS ||
	    (s = calloc(n, sizeof(*s))) == NULL) {
		fprintf(stderr, "usage: verify [EVENTS [RUNS (1..%d)]]\n",
		    BENCH_MAX_RUNS);
		return 2;
	}
	make_samples(s, n);
	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	for (r = 0; r < runs; r++) {
		if ((x = run_bare(s, n)) > a)
			a = x;
		if ((y = run_full(s, n, &scratch)) > b)
			b = y;
		ratio[r] = y / x;
	}
	qsort(ratio, (size_t)runs, sizeof(ratio[0]), cmp_double);
	printf("(a) bare schnorrsig_verify:          %10.0f events/s\n", a);
	printf("(b) parse + id + verify from JSON:   %10.0f events/s\n", b);
	printf("ratio b/a of the best rates: %.3f\n", b / a);
	printf("ratio b/a per run: min %.3f median %.3f max %.3f (%d runs, "
	    "goal >= 0.85)\n", ratio[0], ratio[runs / 2], ratio[runs - 1],
	    runs);
	buf_free(&scratch);
	while (n-- > 0)
		free(s[n].json);
	free(s);
	return 0;
}
