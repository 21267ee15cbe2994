/*
 * event_worst.c — the memory and time one hostile or extreme event costs
 * on the ingest path, at the default limits.max_event_bytes (256 KiB) and
 * at its ceiling (1 MiB). For each shape the event is built as large as
 * the limit allows, signed (so a shape the limits let through goes all
 * the way to the signature check), wrapped in ["EVENT","s",{...}] and
 * taken the way a relay frame is: relay_msg_parse (value pre-scan, then
 * cJSON), the byte limit ingest applies, event_from_cjson (field and tag
 * checks), event_to_json_id (canonical JSON and SHA-256) and
 * event_check_sig. The shapes:
 *   empty-tags     "tags":[[],[],...]
 *   tiny-items     tags of EVENT_MAX_TAG_ITEMS empty strings each
 *   one-char-tags  "tags":[["a"],["a"],...]
 *   numbers        an unknown member "x":[0,0,0,...] (not a tag at all)
 *   nesting        an unknown member of arrays nested 900 deep, repeated
 *   esc-u0001      content of \u0001 escapes (6 bytes in, 1 decoded)
 *   esc-quote      content of \" escapes
 *   raw-controls   content of raw 0x01 bytes (6x longer once canonical)
 *   follow-list    legitimate: ["p",hex,relay,petname] tags, at most
 *                  EVENT_MAX_TAGS of them
 *   long-note      legitimate: plain text content
 *   worst-valid    as many values as RELAY_MSG_MAX_VALUES lets through
 *                  (tags of empty strings) and plain content for the
 *                  rest of the bytes: the most a valid event can cost
 *   worst-controls the same values, content of raw 0x01 bytes: the most
 *                  an event the limits let parse can cost
 * Each shape runs in a child process of its own, so its peak resident
 * size (VmHWM, reset with /proc/self/clear_refs before the path) is its
 * own; printed are the bytes, the values the pre-scan counts (whole text,
 * no limit), the outcome, the best of three wall-clock times of the path,
 * the resident size before it and the peak during it. Not pass/fail.
 *
 *   usage: event_worst [SHAPE]
 */
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/sha256.h>
#include <secp256k1.h>
#include <secp256k1_schnorrsig.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/jsonscan.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/key.h"
#include "nostr/secp.h"
#include "relay/msg.h"

#define BENCH_NOW	1700000000
#define BENCH_RUNS	3
#define BENCH_OVERHEAD	512	/* bytes of an event besides tags, content, extra */
#define BENCH_NEST	900	/* depth of the nesting shape (cJSON stops at 1000) */

/* The variable parts of one event; canon is the content as NIP-01 writes it. */
struct shape_text {
	struct buf	tags, content, canon, extra;
};

typedef void	(*shape_fn)(struct shape_text *, size_t budget);

static void
repeat(struct buf *b, const char *first, const char *rest, const char *end,
    size_t budget)
{
	size_t	n = strlen(rest), tail = strlen(end);

	if (buf_puts(b, first) == -1)
		abort();
	while (b->len + n + tail <= budget)
		if (buf_puts(b, rest) == -1)
			abort();
	if (buf_puts(b, end) == -1)
		abort();
}

static void
shape_empty_tags(struct shape_text *t, size_t budget)
{
	repeat(&t->tags, "[[]", ",[]", "]", budget);
}

static void
shape_tiny_items(struct shape_text *t, size_t budget)
{
	char	rest[4 * EVENT_MAX_TAG_ITEMS + 8], first[sizeof(rest) + 1];
	size_t	i;

	strcpy(rest, ",[\"\"");
	for (i = 1; i < EVENT_MAX_TAG_ITEMS; i++)
		strcat(rest, ",\"\"");
	strcat(rest, "]");
	snprintf(first, sizeof(first), "[%s", rest + 1);
	repeat(&t->tags, first, rest, "]", budget);
}

static void
shape_one_char_tags(struct shape_text *t, size_t budget)
{
	repeat(&t->tags, "[[\"a\"]", ",[\"a\"]", "]", budget);
}

static void
shape_numbers(struct shape_text *t, size_t budget)
{
	if (buf_puts(&t->tags, "[]") == -1)
		abort();
	repeat(&t->extra, ",\"x\":[0", ",0", "]", budget);
}

static void
shape_nesting(struct shape_text *t, size_t budget)
{
	char	first[2 * BENCH_NEST + 8], rest[2 * BENCH_NEST + 2];

	memset(rest, '[', BENCH_NEST + 1);
	memset(rest + BENCH_NEST + 1, ']', BENCH_NEST);
	rest[0] = ',';
	rest[2 * BENCH_NEST + 1] = '\0';
	snprintf(first, sizeof(first), ",\"x\":[%s", rest + 1);
	if (buf_puts(&t->tags, "[]") == -1)
		abort();
	repeat(&t->extra, first, rest, "]", budget);
}

static void
shape_esc_u0001(struct shape_text *t, size_t budget)
{
	if (buf_puts(&t->tags, "[]") == -1)
		abort();
	repeat(&t->content, "", "\\u0001", "", budget);
	if (buf_append(&t->canon, t->content.data, t->content.len) == -1)
		abort();
}

static void
shape_esc_quote(struct shape_text *t, size_t budget)
{
	if (buf_puts(&t->tags, "[]") == -1)
		abort();
	repeat(&t->content, "", "\\\"", "", budget);
	if (buf_append(&t->canon, t->content.data, t->content.len) == -1)
		abort();
}

static void
shape_raw_controls(struct shape_text *t, size_t budget)
{
	size_t	i;

	if (buf_puts(&t->tags, "[]") == -1)
		abort();
	repeat(&t->content, "", "\x01", "", budget);
	for (i = 0; i < t->content.len; i++)
		if (buf_puts(&t->canon, "\\u0001") == -1)
			break;	/* too long to be canonical: id is garbage */
}

static void
shape_follow_list(struct shape_text *t, size_t budget)
{
	char	tag[160], hex[65];
	uint8_t	pk[32];
	size_t	n;

	if (buf_putc(&t->tags, '[') == -1)
		abort();
	for (n = 0; n < EVENT_MAX_TAGS; n++) {
		memset(pk, 0, sizeof(pk));
		memcpy(pk, &n, sizeof(n));
		hex_encode(pk, 32, hex, sizeof(hex));
		snprintf(tag, sizeof(tag), "%s[\"p\",\"%s\","
		    "\"wss://relay.example.com/\",\"friend%zu\"]", n ? "," : "",
		    hex, n);
		if (t->tags.len + strlen(tag) + 1 > budget)
			break;
		(void)buf_puts(&t->tags, tag);
	}
	(void)buf_putc(&t->tags, ']');
}

static void
shape_long_note(struct shape_text *t, size_t budget)
{
	if (buf_puts(&t->tags, "[[\"t\",\"nostr\"]]") == -1)
		abort();
	repeat(&t->content, "", "the quick brown fox jumps over the lazy dog. ",
	    "", budget);
	(void)buf_append(&t->canon, t->content.data, t->content.len);
}

/*
 * Tags of EVENT_MAX_TAG_ITEMS empty strings, as many as keep the frame
 * within RELAY_MSG_MAX_VALUES: the most nodes the limits let through.
 */
static void
tags_at_value_limit(struct shape_text *t)
{
	size_t	n, i, per = EVENT_MAX_TAG_ITEMS + 1;

	n = (RELAY_MSG_MAX_VALUES - 32) / per;
	(void)buf_putc(&t->tags, '[');
	for (; n > 0; n--) {
		(void)buf_putc(&t->tags, '[');
		for (i = 0; i < EVENT_MAX_TAG_ITEMS; i++)
			(void)buf_puts(&t->tags, i ? ",\"\"" : "\"\"");
		(void)buf_puts(&t->tags, n > 1 ? "]," : "]");
	}
	(void)buf_putc(&t->tags, ']');
}

static void
shape_worst_valid(struct shape_text *t, size_t budget)
{
	tags_at_value_limit(t);
	repeat(&t->content, "", "the quick brown fox jumps over the lazy dog. ",
	    "", budget - t->tags.len);
	(void)buf_append(&t->canon, t->content.data, t->content.len);
}

static void
shape_worst_controls(struct shape_text *t, size_t budget)
{
	size_t	i;

	tags_at_value_limit(t);
	repeat(&t->content, "", "\x01", "", budget - t->tags.len);
	for (i = 0; i < t->content.len; i++)
		if (buf_puts(&t->canon, "\\u0001") == -1)
			break;
}

static const struct shape {
	const char	*name;
	shape_fn	 fn;
} shapes[] = {
	{ "empty-tags", shape_empty_tags },
	{ "tiny-items", shape_tiny_items },
	{ "one-char-tags", shape_one_char_tags },
	{ "numbers", shape_numbers },
	{ "nesting", shape_nesting },
	{ "esc-u0001", shape_esc_u0001 },
	{ "esc-quote", shape_esc_quote },
	{ "raw-controls", shape_raw_controls },
	{ "follow-list", shape_follow_list },
	{ "long-note", shape_long_note },
	{ "worst-valid", shape_worst_valid },
	{ "worst-controls", shape_worst_controls },
};

/* The frame of a signed event made of t's parts into out. */
static void
build_frame(struct shape_text *t, const struct nostr_key *key, struct buf *out)
{
	mbedtls_sha256_context	 sha;
	struct buf		 ser;
	uint8_t			 id[32], sig[64];
	char			 idhex[65], pkhex[65], sighex[129];

	hex_encode(key->pubkey, 32, pkhex, sizeof(pkhex));
	buf_init(&ser, 16 * EVENT_MAX_BYTES_CEILING);
	if (buf_printf(&ser, "[0,\"%s\",%d,1,", pkhex, BENCH_NOW) == -1 ||
	    buf_append(&ser, t->tags.data, t->tags.len) == -1 ||
	    buf_puts(&ser, ",\"") == -1 ||
	    buf_append(&ser, t->canon.data, t->canon.len) == -1 ||
	    buf_puts(&ser, "\"]") == -1)
		abort();
	mbedtls_sha256_init(&sha);
	if (mbedtls_sha256_starts_ret(&sha, 0) != 0 ||
	    mbedtls_sha256_update_ret(&sha, ser.data, ser.len) != 0 ||
	    mbedtls_sha256_finish_ret(&sha, id) != 0)
		abort();
	mbedtls_sha256_free(&sha);
	buf_free(&ser);
	if (!secp256k1_schnorrsig_sign32(nostr_secp(), sig, id, &key->keypair,
	    NULL))
		abort();
	hex_encode(id, 32, idhex, sizeof(idhex));
	hex_encode(sig, 64, sighex, sizeof(sighex));
	if (buf_printf(out, "[\"EVENT\",\"s\",{\"id\":\"%s\",\"pubkey\":\"%s\","
	    "\"created_at\":%d,\"kind\":1,\"tags\":", idhex, pkhex,
	    BENCH_NOW) == -1 ||
	    buf_append(out, t->tags.data, t->tags.len) == -1 ||
	    buf_puts(out, ",\"content\":\"") == -1 ||
	    buf_append(out, t->content.data, t->content.len) == -1 ||
	    buf_printf(out, "\",\"sig\":\"%s\"", sighex) == -1 ||
	    buf_append(out, t->extra.data, t->extra.len) == -1 ||
	    buf_puts(out, "}]") == -1)
		abort();
}

/* The ingest path up to the signature; what became of the event. */
static const char *
run_path(const char *frame, size_t len, size_t limit, struct buf *canon)
{
	static char		 why[64];
	struct relay_msg	 m;
	struct event		 ev;
	enum relay_msg_err	 e;
	enum event_result	 er;
	uint8_t			 id[32];
	const char		*r;

	if ((e = relay_msg_parse(&m, frame, len, len + 1)) != RELAY_MSG_PARSED) {
		snprintf(why, sizeof(why), "frame refused: %s",
		    relay_msg_err_str(e));
		return why;
	}
	if (m.event_raw_len > limit) {
		relay_msg_free(&m);
		return "over max_event_bytes";
	}
	if ((er = event_from_cjson(&ev, relay_msg_take_event(&m))) != EVENT_OK) {
		relay_msg_free(&m);
		return event_result_str(er);
	}
	buf_reset(canon);
	if (event_to_json_id(&ev, canon, id) == -1)
		r = "canonical form over EVENT_SERIAL_MAX_BYTES";
	else if (memcmp(id, ev.id, 32) != 0)
		r = event_result_str(EVENT_ID_MISMATCH);
	else if ((er = event_check_sig(&ev)) != EVENT_OK)
		r = event_result_str(er);
	else
		r = "valid";
	event_free(&ev);
	relay_msg_free(&m);
	return r;
}

/* A "Vm...:" line of /proc/self/status, in KiB. */
static long
vm_kib(const char *field)
{
	FILE	*f = fopen("/proc/self/status", "r");
	char	 line[128];
	long	 v = -1;
	size_t	 n = strlen(field);

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, n) == 0 && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Let VmHWM start again from the current resident size. */
static void
reset_peak(void)
{
	FILE	*f = fopen("/proc/self/clear_refs", "w");

	if (f != NULL) {
		fputs("5", f);
		fclose(f);
	}
}

static double
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One shape at one limit, in this (child) process. */
static void
measure(const struct shape *sh, size_t limit, const struct nostr_key *key)
{
	struct shape_text	 t;
	struct buf		 frame, canon;
	size_t			 values = 0, budget = limit - BENCH_OVERHEAD;
	const char		*res = "";
	double			 best = 0, t0, dt;
	long			 before, peak;
	int			 i;

	buf_init(&t.tags, 2 * limit);
	buf_init(&t.content, 2 * limit);
	buf_init(&t.canon, 8 * limit);
	buf_init(&t.extra, 2 * limit);
	buf_init(&frame, 4 * limit);
	buf_init(&canon, EVENT_SERIAL_MAX_BYTES);
	sh->fn(&t, budget);
	build_frame(&t, key, &frame);
	(void)jsonscan_check((const char *)frame.data, frame.len, (size_t)-1,
	    (size_t)-1, &values);
	buf_free(&t.tags);
	buf_free(&t.content);
	buf_free(&t.canon);
	buf_free(&t.extra);
	before = vm_kib("VmRSS");
	reset_peak();
	for (i = 0; i < BENCH_RUNS; i++) {
		t0 = now_ms();
		res = run_path((const char *)frame.data, frame.len, limit,
		    &canon);
		dt = now_ms() - t0;
		if (i == 0 || dt < best)
			best = dt;
	}
	peak = vm_kib("VmHWM");
	printf("%-14s %5zuk %8zu %7zu %8.2f %8ld %8ld %8ld  %s\n", sh->name,
	    limit / 1024, frame.len, values, best, before, peak, peak - before,
	    res);
	buf_free(&frame);
	buf_free(&canon);
}

int
main(int argc, char **argv)
{
	static const size_t	 limits[] = { 256 * 1024, EVENT_MAX_BYTES_CEILING };
	struct nostr_key	 key;
	uint8_t			 sk[32];
	size_t			 i, j;
	pid_t			 pid;

	memset(sk, 7, sizeof(sk));
	if (key_from_secret(&key, sk) == -1)
		return 1;
	printf("%-14s %6s %8s %7s %8s %8s %8s %8s  %s\n", "shape", "limit",
	    "bytes", "values", "best_ms", "rss_kib", "peak_kib", "delta",
	    "outcome");
	fflush(stdout);
	for (j = 0; j < sizeof(limits) / sizeof(limits[0]); j++)
		for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
			if (argc > 1 && strcmp(argv[1], shapes[i].name) != 0)
				continue;
			if ((pid = fork()) == -1)
				return 1;
			if (pid == 0) {
				measure(&shapes[i], limits[j], &key);
				fflush(stdout);
				_exit(0);
			}
			(void)waitpid(pid, NULL, 0);
		}
	return 0;
}
