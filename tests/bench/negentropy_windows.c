/*
 * negentropy_windows.c — what reconciling one author's 1,000,000-event
 * history costs the box in memory. The daemon never holds such a set: it
 * reconciles consecutive time windows of at most NEGSYNC_WINDOW_ITEMS of
 * its own items (sync/negsync.c). This does the same steps the same way
 * against a real store, and prints the peak RSS of the process that does
 * them next to the 16 MiB budget.
 *
 *   1. A child process fills DIR/cachebox.db (a real store, every
 *      migration) with ITEMS events of one author, timestamps spread over
 *      ITEMS / 4 seconds so seconds hold several events; it exits, so what
 *      filling cost is not counted.
 *   2. A second child plays the relay: it holds the relay's whole set
 *      (ITEMS events of which PCT % differ from the box's: half only on the
 *      box, half only on the relay) and answers each window's session over
 *      a socketpair as a NIP-77 responder, on the window's items only.
 *   3. This process opens the store as the daemon does (store.cache_kib at
 *      its default), then for each window: reads at most
 *      NEGSYNC_WINDOW_ITEMS + 1 timestamps from the store's index, picks
 *      the window with neg_window_next, loads the window's items into a
 *      capped neg_storage, and reconciles it under NEGSYNC_FRAME_BYTES.
 *
 * Prints windows, round trips, bytes up and down, have/need (which must
 * equal what the sets were made with), CPU seconds and VmHWM before and
 * after reconciling. Not a pass/fail test; it exits 1 only if the
 * reconciliation itself went wrong.
 *
 *   usage: negentropy_windows DIR [ITEMS [PCT]]   (1000000, 1)
 *   DIR is made if absent and must not hold another store's database.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/limits.h"
#include "nostr/negentropy.h"
#include "store/events.h"
#include "store/rules.h"
#include "store/store.h"

#define BENCH_LINE	256
#define BENCH_T0	1600000000ULL	/* first created_at */

/* Frames between this process and the relay child. */
enum bench_op {
	OP_OPEN = 1,		/* since, until, message */
	OP_MSG,			/* message */
	OP_QUIT,
};

struct bench_hdr {
	uint32_t	op;
	uint32_t	len;		/* message bytes after the header */
	uint64_t	since, until;	/* OP_OPEN: the window, inclusive */
};

/*
 * have/need ids seen, each counted once: with a frame-size limit an id may
 * be reported again in a later round. An open-addressing table sized for
 * the difference the sets were made with (the daemon keeps no such table:
 * its fetch queue is NEGSYNC_QUEUE_IDS ids; this costs the process a few
 * hundred KiB more than the daemon would use, counted in its peak).
 */
struct bench_counts {
	uint8_t		*slots;		/* cap ids of 32 bytes, all zero = free */
	size_t		 cap;
	unsigned long	 have, need, repeats;
};

struct ts_list {
	uint64_t	*ts;
	size_t		 n;
};

static double
bench_cpu(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
bench_wall(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A field of /proc/self/status in KiB, or 0. */
static long
bench_status_kib(const char *field)
{
	char	line[BENCH_LINE];
	size_t	len = strlen(field);
	long	kib = 0;
	FILE	*fp;

	if ((fp = fopen("/proc/self/status", "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, field, len) == 0 && line[len] == ':') {
			kib = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(fp);
	return kib;
}

static void
die(const char *what)
{
	fprintf(stderr, "negentropy_windows: %s: %s\n", what,
	    errno != 0 ? strerror(errno) : "failed");
	exit(1);
}

/* splitmix64 */
static uint64_t
bench_rand(uint64_t *s)
{
	uint64_t	z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The i-th event of the made history, the same in every process: its
 * created_at, id, and which side holds it (1 box only, 2 relay only, 3
 * both). Ids are made from i, so any process can walk the history again.
 */
static int
bench_item(uint64_t i, size_t n, double pct, uint64_t *ts,
    uint8_t id[NEG_ID_BYTES])
{
	uint64_t	s = i * 0x2545f4914f6cdd1dULL + 7, r, half;
	size_t		k;

	*ts = BENCH_T0 + bench_rand(&s) % (n / 4 + 1);
	for (k = 0; k < NEG_ID_BYTES; k += 8) {
		r = bench_rand(&s);
		memcpy(id + k, &r, 8);
	}
	half = (uint64_t)(pct * 10000 / 2);
	r = bench_rand(&s) % 1000000;
	return r < half ? 1 : r < 2 * half ? 2 : 3;
}

/* Step 1: the box's store, in a child. */
static void
bench_fill(const char *dir, size_t n, double pct)
{
	static const uint8_t	pk[32] = { 0xcb };
	struct store_event_row	row;
	struct store		*st;
	uint8_t			id[NEG_ID_BYTES];
	uint64_t		ts, i;
	char			err[256];
	int			rc;

	if (store_open(&st, dir, err, sizeof(err)) == -1) {
		fprintf(stderr, "negentropy_windows: %s\n", err);
		_exit(1);
	}
	memset(&row, 0, sizeof(row));
	row.pubkey = pk;
	row.id = id;
	row.kind = 1;
	row.json = "{}";
	row.json_len = 2;
	row.source = "backfill";
	row.received_at = (int64_t)BENCH_T0;
	if (store_begin(st) == -1)
		_exit(1);
	for (i = 0; i < n; i++) {
		if ((bench_item(i, n, pct, &ts, id) & 1) == 0)
			continue;
		row.created_at = (int64_t)ts;
		if ((rc = store_event_insert(st, &row, false)) == -1)
			_exit(1);
		if (i % 100000 == 99999 && (store_commit(st) == -1 ||
		    store_begin(st) == -1))
			_exit(1);
	}
	if (store_commit(st) == -1)
		_exit(1);
	store_close(st);
	_exit(0);
}

static int
read_full(int fd, void *p, size_t len)
{
	uint8_t	*b = p;
	ssize_t	 r;

	while (len > 0) {
		if ((r = read(fd, b, len)) <= 0) {
			if (r == -1 && errno == EINTR)
				continue;
			return -1;
		}
		b += r;
		len -= (size_t)r;
	}
	return 0;
}

static int
write_full(int fd, const void *p, size_t len)
{
	const uint8_t	*b = p;
	ssize_t		 r;

	while (len > 0) {
		if ((r = write(fd, b, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		b += r;
		len -= (size_t)r;
	}
	return 0;
}

static int
send_frame(int fd, const struct bench_hdr *h, const void *msg)
{
	if (write_full(fd, h, sizeof(*h)) == -1 ||
	    write_full(fd, msg, h->len) == -1)
		return -1;
	return 0;
}

/* First index of items at or after ts. */
static size_t
bench_lower(const struct neg_storage *st, uint64_t ts)
{
	size_t	lo = 0, hi = st->count, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->items[mid].created_at < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Step 2: the relay, in a child, answering on fd. */
static void
bench_relay(int fd, size_t n, double pct)
{
	struct neg_storage	all, view;
	struct neg_session	sess;
	struct bench_hdr	h;
	struct buf		out;
	uint8_t			id[NEG_ID_BYTES], *in;
	uint64_t		ts, i;
	bool			live = false;
	size_t			lo, hi;

	neg_storage_init(&all, n);
	for (i = 0; i < n; i++)
		if (bench_item(i, n, pct, &ts, id) & 2)
			(void)neg_storage_add(&all, ts, id);
	neg_storage_seal(&all);
	buf_init(&out, NEG_MAX_MSG_BYTES);
	if ((in = malloc(NEG_MAX_MSG_BYTES)) == NULL)
		_exit(1);
	for (;;) {
		if (read_full(fd, &h, sizeof(h)) == -1 || h.op == OP_QUIT)
			break;
		if (h.len > NEG_MAX_MSG_BYTES ||
		    read_full(fd, in, h.len) == -1)
			_exit(1);
		if (h.op == OP_OPEN) {
			if (live)
				neg_session_free(&sess);
			lo = bench_lower(&all, h.since);
			hi = h.until == NEG_TS_INFINITY ? all.count :
			    bench_lower(&all, h.until + 1);
			view = all;		/* borrows all's items */
			view.items = all.items + lo;
			view.count = view.cap = view.max = hi - lo;
			if (neg_session_init(&sess, &view, NEG_RESPONDER,
			    NEGSYNC_FRAME_BYTES) == -1)
				_exit(1);
			live = true;
		}
		if (!live || neg_reconcile(&sess, in, h.len, &out,
		    NULL) != NEG_SEND)
			_exit(1);
		h.op = OP_MSG;
		h.len = (uint32_t)out.len;
		if (send_frame(fd, &h, out.data) == -1)
			_exit(1);
	}
	_exit(0);
}

static int
collect_ts(int64_t created_at, const uint8_t id[32], void *arg)
{
	struct ts_list	*l = arg;

	(void)id;
	l->ts[l->n++] = (uint64_t)created_at;
	return 0;
}

static int
collect_item(int64_t created_at, const uint8_t id[32], void *arg)
{
	return neg_storage_add(arg, (uint64_t)created_at, id) == 0 ? 0 : 1;
}

/* 1 if id was not seen before (now it is), 0 if it was. */
static int
count_once(struct bench_counts *c, const uint8_t id[NEG_ID_BYTES])
{
	static const uint8_t	zero[NEG_ID_BYTES];
	size_t			i;
	uint64_t		h;

	memcpy(&h, id, sizeof(h));
	for (i = h % c->cap;; i = (i + 1) % c->cap) {
		uint8_t	*slot = c->slots + i * NEG_ID_BYTES;

		if (memcmp(slot, id, NEG_ID_BYTES) == 0) {
			c->repeats++;
			return 0;
		}
		if (memcmp(slot, zero, NEG_ID_BYTES) == 0) {
			memcpy(slot, id, NEG_ID_BYTES);
			return 1;
		}
	}
}

static void
count_have(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	struct bench_counts	*c = arg;

	c->have += (unsigned long)count_once(c, id);
}

static void
count_need(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	struct bench_counts	*c = arg;

	c->need += (unsigned long)count_once(c, id);
}

int
main(int argc, char **argv)
{
	static const uint8_t	pk[32] = { 0xcb };
	struct ts_list		l;
	struct bench_counts	c;
	struct neg_ids		ids = { count_have, count_need, &c };
	struct neg_storage	set;
	struct neg_session	sess;
	struct neg_window	w;
	struct bench_hdr	h;
	struct store		*st;
	struct buf		out;
	unsigned long		windows = 0, rounds = 0, want_have = 0,
				want_need = 0, box_items = 0;
	size_t			n, up = 0, down = 0, biggest = 0;
	double			pct, cpu0, wall0;
	uint64_t		i, ts;
	uint8_t			id[NEG_ID_BYTES], *in;
	char			err[256], path[4096];
	long			hwm_open;
	enum neg_status		rc;
	int			sv[2], status, side, more;
	pid_t			pid;

	if (argc < 2) {
		fprintf(stderr, "usage: negentropy_windows DIR [ITEMS [PCT]]\n");
		return 2;
	}
	n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
	pct = argc > 3 ? strtod(argv[3], NULL) : 1.0;
	if (n < 1 || pct < 0 || pct > 100) {
		fprintf(stderr, "negentropy_windows: bad ITEMS or PCT\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		side = bench_item(i, n, pct, &ts, id);
		want_have += side == 1;
		want_need += side == 2;
		box_items += side != 2;
	}
	memset(&c, 0, sizeof(c));
	c.cap = 2 * (want_have + want_need) + 1;
	if ((c.slots = calloc(c.cap, NEG_ID_BYTES)) == NULL)
		die("calloc");
	if (mkdir(argv[1], 0700) == -1 && errno != EEXIST)
		die(argv[1]);
	snprintf(path, sizeof(path), "%s/cachebox.db", argv[1]);
	if (access(path, F_OK) == 0)
		printf("reusing %s (made by an earlier run with the same "
		    "ITEMS and PCT, it is assumed)\n", path);
	else {
		printf("filling %s with %lu events of one author...\n", path,
		    box_items);
		fflush(stdout);
		if ((pid = fork()) == -1)
			die("fork");
		if (pid == 0)
			bench_fill(argv[1], n, pct);
		if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "negentropy_windows: filling failed\n");
			return 1;
		}
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		die("socketpair");
	fflush(stdout);
	if ((pid = fork()) == -1)
		die("fork");
	if (pid == 0) {
		close(sv[0]);
		bench_relay(sv[1], n, pct);
	}
	close(sv[1]);

	if (store_open(&st, argv[1], err, sizeof(err)) == -1) {
		fprintf(stderr, "negentropy_windows: %s\n", err);
		return 1;
	}
	buf_init(&out, NEGSYNC_FRAME_BYTES);
	if ((in = malloc(NEG_MAX_MSG_BYTES)) == NULL ||
	    (l.ts = calloc(NEGSYNC_WINDOW_ITEMS + 1, sizeof(*l.ts))) == NULL)
		die("malloc");
	hwm_open = bench_status_kib("VmHWM");
	cpu0 = bench_cpu();
	wall0 = bench_wall();
	w.since = 0;
	do {
		/* As step_pick_window, then step_open. */
		l.n = 0;
		if (store_events_author_items(st, pk, (int64_t)w.since, -1,
		    NEGSYNC_WINDOW_ITEMS + 1, collect_ts, &l) < 0)
			die("store");
		if ((more = neg_window_next(l.ts, l.n, w.since,
		    NEGSYNC_WINDOW_ITEMS, &w)) == -1)
			die("a second holds more than a window");
		neg_storage_init(&set, NEGSYNC_WINDOW_ITEMS);
		if (store_events_author_items(st, pk, (int64_t)w.since,
		    more ? (int64_t)w.until : -1, NEGSYNC_WINDOW_ITEMS,
		    collect_item, &set) < 0)
			die("store");
		neg_storage_seal(&set);
		if (set.count > biggest)
			biggest = set.count;
		if (neg_session_init(&sess, &set, NEG_INITIATOR,
		    NEGSYNC_FRAME_BYTES) == -1)
			die(neg_session_reason(&sess));
		windows++;
		h.op = OP_OPEN;
		h.since = w.since;
		h.until = more ? w.until : NEG_TS_INFINITY;
		rc = neg_initiate(&sess, &out);
		while (rc == NEG_SEND) {
			h.len = (uint32_t)out.len;
			up += out.len;
			if (send_frame(sv[0], &h, out.data) == -1 ||
			    read_full(sv[0], &h, sizeof(h)) == -1 ||
			    h.len > NEG_MAX_MSG_BYTES ||
			    read_full(sv[0], in, h.len) == -1)
				die("relay");
			down += h.len;
			rounds++;
			rc = neg_reconcile(&sess, in, h.len, &out, &ids);
			h.op = OP_MSG;
		}
		if (rc != NEG_DONE)
			die(neg_session_reason(&sess));
		neg_session_free(&sess);
		neg_storage_free(&set);
		if (more)
			w.since = w.until + 1;
	} while (more);

	printf("one author, %zu events made, %.2f %% on one side only: the box "
	    "holds %lu, the relay %lu\n", n, pct, box_items,
	    (unsigned long)(n - want_have));
	printf("  windows %lu (at most %d of the box's items each; largest "
	    "%zu), round trips %lu\n", windows, NEGSYNC_WINDOW_ITEMS, biggest,
	    rounds);
	printf("  frame limit %d bytes: up %zu bytes, down %zu bytes\n",
	    NEGSYNC_FRAME_BYTES, up, down);
	printf("  have %lu (made %lu), need %lu (made %lu), reported again "
	    "in a later round %lu%s\n", c.have, want_have, c.need, want_need,
	    c.repeats, c.have == want_have && c.need == want_need ? "" :
	    "  WRONG");
	printf("  reconciling: CPU %.2f s, wall %.2f s (store reads "
	    "included; the relay child not)\n", bench_cpu() - cpu0,
	    bench_wall() - wall0);
	printf("  peak RSS (VmHWM) of the reconciling process: %ld KiB after "
	    "opening the store, %ld KiB at the end; budget 16384 KiB\n",
	    hwm_open, bench_status_kib("VmHWM"));
	h.op = OP_QUIT;
	h.len = 0;
	(void)send_frame(sv[0], &h, NULL);
	(void)waitpid(pid, &status, 0);
	store_close(st);
	buf_free(&out);
	free(in);
	free(l.ts);
	free(c.slots);
	return c.have == want_have && c.need == want_need ? 0 : 1;
}
