/*
 * negentropy.c — owns the negentropy protocol v1 codec and both roles of a
 * reconciliation: varints, bounds, fingerprints, splitting a range into
 * buckets, the frame-size limit, and the sorted item vector they read.
 * It must never trust a length a peer declares before checking it against
 * the bytes actually left (and the named limits), never allocate in
 * proportion to anything but the message in hand, never keep the have and
 * need ids it finds (they go to the caller's callbacks), and never end the
 * process: a bad message fails its own session with a reason.
 *
 * The messages it writes are the ones the reference implementation writes,
 * byte for byte, with one deliberate difference: when the frame-size limit
 * cuts a message short, the closing Fingerprint range covers exactly the
 * items from the last bound written to infinity, which is the range it
 * describes on the wire. (The reference fingerprints only the items after
 * the range it was working on, so the items of that range are folded into
 * the closing range on the peer's side but not on its own; in rare cases
 * the two can agree while the peer lacks some of them.)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/sha256.h>

#include "nostr/negentropy.h"

#define NEG_BUCKETS		16	/* ranges a mismatching range is split into */
#define NEG_IDLIST_BELOW	(2 * NEG_BUCKETS) /* ranges with fewer items are sent as IdList */
#define NEG_STORAGE_FIRST	1024	/* items of the first allocation */
#define NEG_VERSION_LOW		0x60	/* version bytes of the protocol family */
#define NEG_VERSION_HIGH	0x6f

enum neg_mode {
	NEG_MODE_SKIP = 0,
	NEG_MODE_FINGERPRINT = 1,
	NEG_MODE_IDLIST = 2,
};

/* A range's upper bound: a timestamp and an id prefix, zero-padded. */
struct neg_bound {
	uint64_t	ts;
	uint8_t		id[NEG_ID_BYTES];
	size_t		len;		/* bytes of id on the wire, <= 32 */
};

/* A bounds-checked cursor over one incoming message. */
struct neg_reader {
	const uint8_t	*p;
	size_t		 len;
	size_t		 pos;
};

/* The state of one neg_reconcile call. */
struct neg_pass {
	struct neg_session	*s;
	struct neg_reader	 in;
	struct buf		*out;
	const struct neg_ids	*ids;
	struct neg_bound	 prev;	/* upper bound of the previous range */
	struct neg_bound	 cur;	/* upper bound of this range */
	size_t			 lower;	/* items of this range: [lower, upper) */
	size_t			 upper;
	size_t			 kept;	/* index at the last bound written to out */
	struct neg_bound	 kept_at; /* that bound */
	bool			 skip;	/* ranges skipped since then, not yet written */
};

/* ---- Errors ----------------------------------------------------------- */

static int	neg_fail(struct neg_session *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

/* Record why the session's last call failed; returns -1. */
static int
neg_fail(struct neg_session *s, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	(void)vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
	return -1;
}

const char *
neg_session_reason(const struct neg_session *s)
{
	return s->reason;
}

/* ---- Varints ---------------------------------------------------------- */

/* Encode v at the end of d[0..NEG_VARINT_MAX_DIGITS); returns where it
 * starts. */
static size_t
neg_varint_encode(uint64_t v, uint8_t d[NEG_VARINT_MAX_DIGITS])
{
	size_t	n = NEG_VARINT_MAX_DIGITS;

	do {
		d[--n] = (uint8_t)(v & 0x7f);
		if (n != NEG_VARINT_MAX_DIGITS - 1)
			d[n] |= 0x80;
		v >>= 7;
	} while (v != 0);
	return n;
}

int
neg_varint_put(struct buf *out, uint64_t v)
{
	uint8_t	d[NEG_VARINT_MAX_DIGITS];
	size_t	at;

	at = neg_varint_encode(v, d);
	return buf_append(out, d + at, sizeof(d) - at);
}

int
neg_varint_get(const uint8_t *p, size_t len, uint64_t *v)
{
	uint64_t	acc = 0;
	size_t		i;

	for (i = 0; i < len && i < NEG_VARINT_MAX_DIGITS; i++) {
		if (acc > (UINT64_MAX >> 7))
			return -1;
		acc = (acc << 7) | (p[i] & 0x7f);
		if ((p[i] & 0x80) == 0) {
			*v = acc;
			return (int)i + 1;
		}
	}
	return -1;
}

/* ---- Reading a message ------------------------------------------------ */

/* Why neg_varint_get refused p[0..len). */
static const char *
neg_varint_why(const uint8_t *p, size_t len)
{
	size_t	i;

	for (i = 0; i < len && i < NEG_VARINT_MAX_DIGITS; i++)
		if ((p[i] & 0x80) == 0)
			return "value past 64 bits";
	return i < NEG_VARINT_MAX_DIGITS ? "message ends inside it" :
	    "more than 10 digits";
}

/* Decode a varint at the cursor into *v; 0, or -1 (reason set). */
static int
neg_read_varint(struct neg_pass *p, const char *what, uint64_t *v)
{
	struct neg_reader	*r = &p->in;
	int			 n;

	n = neg_varint_get(r->p + r->pos, r->len - r->pos, v);
	if (n == -1)
		return neg_fail(p->s, "bad varint (%s) at byte %zu: %s", what,
		    r->pos, neg_varint_why(r->p + r->pos, r->len - r->pos));
	r->pos += (size_t)n;
	return 0;
}

/* The next n bytes at the cursor, or NULL (reason set) if fewer are left. */
static const uint8_t *
neg_read_bytes(struct neg_pass *p, size_t n, const char *what)
{
	struct neg_reader	*r = &p->in;
	const uint8_t		*at;

	if (n > r->len - r->pos) {
		neg_fail(p->s, "message ends inside %s at byte %zu "
		    "(%zu bytes needed, %zu left)", what, r->pos, n,
		    r->len - r->pos);
		return NULL;
	}
	at = r->p + r->pos;
	r->pos += n;
	return at;
}

/* ---- Storage ---------------------------------------------------------- */

void
neg_storage_init(struct neg_storage *st, size_t max)
{
	memset(st, 0, sizeof(*st));
	st->max = max;
}

void
neg_storage_free(struct neg_storage *st)
{
	free(st->items);
	neg_storage_init(st, st->max);
}

/* Room for one more item; 0, or -1 at max or out of memory. */
static int
neg_storage_grow(struct neg_storage *st)
{
	struct neg_item	*p;
	size_t		 ncap;

	if (st->count < st->cap)
		return 0;
	if (st->count >= st->max)
		return -1;
	ncap = st->cap == 0 ? NEG_STORAGE_FIRST : st->cap * 2;
	if (ncap > st->max)
		ncap = st->max;
	if ((p = realloc(st->items, ncap * sizeof(*p))) == NULL)
		return -1;
	st->items = p;
	st->cap = ncap;
	return 0;
}

int
neg_storage_add(struct neg_storage *st, uint64_t created_at,
    const uint8_t id[NEG_ID_BYTES])
{
	struct neg_item	*it;

	if (st->sealed || created_at == NEG_TS_INFINITY ||
	    neg_storage_grow(st) == -1)
		return -1;
	it = &st->items[st->count++];
	it->created_at = created_at;
	memcpy(it->id, id, NEG_ID_BYTES);
	return 0;
}

static int
neg_item_cmp(const struct neg_item *a, const struct neg_item *b)
{
	if (a->created_at != b->created_at)
		return a->created_at < b->created_at ? -1 : 1;
	return memcmp(a->id, b->id, NEG_ID_BYTES);
}

static int
neg_item_qcmp(const void *a, const void *b)
{
	return neg_item_cmp(a, b);
}

void
neg_storage_seal(struct neg_storage *st)
{
	size_t	i, keep;

	for (i = 1; i < st->count; i++)
		if (neg_item_cmp(&st->items[i - 1], &st->items[i]) > 0)
			break;
	if (i < st->count)
		qsort(st->items, st->count, sizeof(*st->items), neg_item_qcmp);
	for (i = 1, keep = st->count > 0; i < st->count; i++)
		if (neg_item_cmp(&st->items[keep - 1], &st->items[i]) != 0)
			st->items[keep++] = st->items[i];
	st->count = keep;
	st->sealed = true;
}

/* ---- Fingerprints ----------------------------------------------------- */

#define NEG_LIMBS	(NEG_ID_BYTES / 8)	/* 64-bit limbs of a 256-bit sum */

/* sum += id: 256-bit integers, id little-endian bytes, mod 2^256. */
static void
neg_sum_add(uint64_t sum[NEG_LIMBS], const uint8_t id[NEG_ID_BYTES])
{
	uint64_t	v, carry = 0;
	size_t		i, b;

	for (i = 0; i < NEG_LIMBS; i++) {
		for (v = 0, b = 8; b-- > 0;)
			v = (v << 8) | id[i * 8 + b];
		sum[i] += carry;
		carry = sum[i] < carry;
		sum[i] += v;
		carry += sum[i] < v;
	}
}

int
neg_fingerprint(const struct neg_storage *st, size_t lo, size_t hi,
    uint8_t fp[NEG_FP_BYTES])
{
	uint64_t	sum[NEG_LIMBS] = { 0 };
	uint8_t		in[NEG_ID_BYTES + NEG_VARINT_MAX_DIGITS], hash[32];
	uint8_t		d[NEG_VARINT_MAX_DIGITS];
	size_t		i, at;

	if (lo > hi || hi > st->count)
		return -1;
	for (i = lo; i < hi; i++)
		neg_sum_add(sum, st->items[i].id);
	for (i = 0; i < NEG_ID_BYTES; i++)
		in[i] = (uint8_t)(sum[i / 8] >> (8 * (i % 8)));
	at = neg_varint_encode(hi - lo, d);
	memcpy(in + NEG_ID_BYTES, d + at, sizeof(d) - at);
	if (mbedtls_sha256_ret(in, NEG_ID_BYTES + sizeof(d) - at, hash, 0) != 0)
		return -1;
	memcpy(fp, hash, NEG_FP_BYTES);
	return 0;
}

/* ---- Bounds ----------------------------------------------------------- */

static int
neg_bound_cmp(const struct neg_bound *a, const struct neg_bound *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return memcmp(a->id, b->id, NEG_ID_BYTES);
}

/* 1 if the item sorts before the bound (the bound is exclusive). */
static int
neg_item_below(const struct neg_item *it, const struct neg_bound *b)
{
	if (it->created_at != b->ts)
		return it->created_at < b->ts;
	return memcmp(it->id, b->id, NEG_ID_BYTES) < 0;
}

/* The first index in [lo, count) whose item is not below b. */
static size_t
neg_lower_index(const struct neg_storage *st, size_t lo,
    const struct neg_bound *b)
{
	size_t	hi = st->count, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (neg_item_below(&st->items[mid], b))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The bound at infinity (or at zero, before everything). */
static void
neg_bound_at(struct neg_bound *b, uint64_t ts)
{
	memset(b, 0, sizeof(*b));
	b->ts = ts;
}

/* The shortest bound above prev that is not above cur (prev < cur). */
static void
neg_bound_between(struct neg_bound *b, const struct neg_item *prev,
    const struct neg_item *cur)
{
	size_t	shared = 0;

	neg_bound_at(b, cur->created_at);
	if (prev->created_at != cur->created_at)
		return;
	while (shared < NEG_ID_BYTES - 1 && prev->id[shared] == cur->id[shared])
		shared++;
	b->len = shared + 1;
	memcpy(b->id, cur->id, b->len);
}

/* The bound just at an item: the item is the first one not below it. */
static void
neg_bound_item(struct neg_bound *b, const struct neg_item *it)
{
	b->ts = it->created_at;
	memcpy(b->id, it->id, NEG_ID_BYTES);
	b->len = NEG_ID_BYTES;
}

/* Append b to out, its timestamp relative to the previous one written. */
static int
neg_bound_put(struct neg_session *s, struct buf *out,
    const struct neg_bound *b)
{
	uint64_t	code;

	if (b->ts == NEG_TS_INFINITY)
		code = 0;
	else
		code = b->ts - s->ts_out + 1;
	s->ts_out = b->ts;
	if (neg_varint_put(out, code) == -1 ||
	    neg_varint_put(out, b->len) == -1)
		return -1;
	return buf_append(out, b->id, b->len);
}

/* Decode the bound at the cursor into p->cur; 0, or -1 (reason set). */
static int
neg_bound_get(struct neg_pass *p)
{
	struct neg_bound	*b = &p->cur;
	uint64_t		 code, len;
	const uint8_t		*prefix;

	if (neg_read_varint(p, "bound timestamp", &code) == -1)
		return -1;
	if (code == 0)
		b->ts = NEG_TS_INFINITY;
	else if (code - 1 > NEG_TS_INFINITY - p->s->ts_in)
		return neg_fail(p->s, "bound timestamp overflows at byte %zu",
		    p->in.pos);
	else
		b->ts = p->s->ts_in + (code - 1);
	p->s->ts_in = b->ts;
	if (neg_read_varint(p, "bound id length", &len) == -1)
		return -1;
	if (len > NEG_ID_BYTES)
		return neg_fail(p->s, "bound id prefix of %llu bytes (at most "
		    "%d) at byte %zu", (unsigned long long)len, NEG_ID_BYTES,
		    p->in.pos);
	if ((prefix = neg_read_bytes(p, (size_t)len, "a bound id")) == NULL)
		return -1;
	memset(b->id, 0, sizeof(b->id));
	memcpy(b->id, prefix, (size_t)len);
	b->len = (size_t)len;
	return 0;
}

/* ---- Writing ranges --------------------------------------------------- */

/* Append mode and payload of a Fingerprint range over items[lo..hi). */
static int
neg_put_fingerprint(const struct neg_session *s, struct buf *out, size_t lo,
    size_t hi)
{
	uint8_t	fp[NEG_FP_BYTES];

	if (neg_fingerprint(s->st, lo, hi, fp) == -1 ||
	    neg_varint_put(out, NEG_MODE_FINGERPRINT) == -1)
		return -1;
	return buf_append(out, fp, sizeof(fp));
}

/* Append an IdList range up to b holding items[lo..hi). */
static int
neg_put_idlist(struct neg_session *s, struct buf *out,
    const struct neg_bound *b, size_t lo, size_t hi)
{
	size_t	i;

	if (neg_bound_put(s, out, b) == -1 ||
	    neg_varint_put(out, NEG_MODE_IDLIST) == -1 ||
	    neg_varint_put(out, hi - lo) == -1)
		return -1;
	for (i = lo; i < hi; i++)
		if (buf_append(out, s->st->items[i].id, NEG_ID_BYTES) == -1)
			return -1;
	return 0;
}

/*
 * Describe items[lo..hi), whose range ends at b, to the peer: as an IdList
 * below NEG_IDLIST_BELOW items, otherwise as NEG_BUCKETS Fingerprint
 * ranges of nearly equal size (the first ones one item larger).
 */
static int
neg_split(struct neg_session *s, struct buf *out, size_t lo, size_t hi,
    const struct neg_bound *b)
{
	const struct neg_item	*items = s->st->items;
	struct neg_bound	 next;
	size_t			 n = hi - lo, i, cur = lo, end;

	if (n < NEG_IDLIST_BELOW)
		return neg_put_idlist(s, out, b, lo, hi);
	for (i = 0; i < NEG_BUCKETS; i++) {
		end = cur + n / NEG_BUCKETS + (i < n % NEG_BUCKETS ? 1 : 0);
		if (end == hi)
			next = *b;
		else
			neg_bound_between(&next, &items[end - 1], &items[end]);
		if (neg_bound_put(s, out, &next) == -1 ||
		    neg_put_fingerprint(s, out, cur, end) == -1)
			return -1;
		cur = end;
	}
	return 0;
}

/* Write the Skip range the pending skipped ranges make, if any. */
static int
neg_flush_skip(struct neg_pass *p, struct buf *out)
{
	if (!p->skip)
		return 0;
	p->skip = false;
	if (neg_bound_put(p->s, out, &p->prev) == -1)
		return -1;
	return neg_varint_put(out, NEG_MODE_SKIP);
}

/* 1 if a message of n bytes leaves no room for the closing range. */
static int
neg_over_frame(const struct neg_session *s, size_t n)
{
	return s->frame_limit != 0 &&
	    n > s->frame_limit - NEG_FRAME_RESERVE_BYTES;
}

/* ---- Reconciling one range -------------------------------------------- */

static int
neg_on_skip(struct neg_pass *p)
{
	p->skip = true;
	return 0;
}

static int
neg_on_fingerprint(struct neg_pass *p)
{
	const uint8_t	*theirs;
	uint8_t		 ours[NEG_FP_BYTES];

	if ((theirs = neg_read_bytes(p, NEG_FP_BYTES, "a fingerprint")) ==
	    NULL)
		return -1;
	if (neg_fingerprint(p->s->st, p->lower, p->upper, ours) == -1)
		return neg_fail(p->s, "cannot compute a fingerprint");
	if (memcmp(theirs, ours, NEG_FP_BYTES) == 0) {
		p->skip = true;
		return 0;
	}
	if (neg_flush_skip(p, &p->s->range) == -1 ||
	    neg_split(p->s, &p->s->range, p->lower, p->upper, &p->cur) == -1)
		return neg_fail(p->s, "reply larger than %d bytes",
		    NEG_MAX_MSG_BYTES);
	return 0;
}

static int
neg_id_pcmp(const void *a, const void *b)
{
	return memcmp(*(const uint8_t *const *)a, *(const uint8_t *const *)b,
	    NEG_ID_BYTES);
}

/* Report the peer's ids not marked seen, once each (sorted, so repeats
 * are neighbours). */
static void
neg_report_need(const struct neg_pass *p, const uint8_t **sorted,
    const uint8_t *seen, size_t n)
{
	size_t	i, j;
	bool	any;

	for (i = 0; i < n; i = j) {
		any = false;
		for (j = i; j < n && memcmp(sorted[i], sorted[j],
		    NEG_ID_BYTES) == 0; j++)
			any = any || seen[j];
		if (!any && p->ids != NULL && p->ids->need != NULL)
			p->ids->need(p->ids->arg, sorted[i]);
	}
}

/*
 * Initiator: compare the peer's n ids at theirs (32 bytes each) with ours
 * in [lower, upper): ours alone are "have", theirs alone "need". The
 * peer's ids are sorted through an index of n pointers and n flags, so
 * the work is (n + ours) log n whatever the peer sends.
 */
static int
neg_idlist_diff(struct neg_pass *p, const uint8_t *theirs, size_t n)
{
	const uint8_t	**sorted, **hit;
	uint8_t		 *seen;
	size_t		  i;

	if ((sorted = malloc(n * (sizeof(*sorted) + 1) + 1)) == NULL)
		return neg_fail(p->s, "out of memory for an id list of %zu "
		    "ids", n);
	seen = (uint8_t *)(sorted + n);
	memset(seen, 0, n);
	for (i = 0; i < n; i++)
		sorted[i] = theirs + i * NEG_ID_BYTES;
	qsort(sorted, n, sizeof(*sorted), neg_id_pcmp);
	for (i = p->lower; i < p->upper; i++) {
		const uint8_t	*ours = p->s->st->items[i].id;

		hit = n == 0 ? NULL : bsearch(&ours, sorted, n,
		    sizeof(*sorted), neg_id_pcmp);
		if (hit != NULL)
			seen[hit - sorted] = 1;
		else if (p->ids != NULL && p->ids->have != NULL)
			p->ids->have(p->ids->arg, ours);
	}
	neg_report_need(p, sorted, seen, n);
	free(sorted);
	return 0;
}

/*
 * Responder: answer with our own ids of the range, as many as fit under
 * the frame-size limit; if they do not all fit, the range answered ends
 * at the first id left out. Written to out directly.
 */
static int
neg_idlist_answer(struct neg_pass *p)
{
	struct neg_session	*s = p->s;
	struct neg_bound	 end = p->cur;
	size_t			 fit = p->lower;

	if (neg_flush_skip(p, &s->range) == -1)
		return -1;
	while (fit < p->upper && !neg_over_frame(s, p->out->len +
	    (fit - p->lower) * NEG_ID_BYTES))
		fit++;
	if (fit < p->upper) {
		neg_bound_item(&end, &s->st->items[fit]);
		p->upper = fit;
	}
	if (buf_append(p->out, s->range.data, s->range.len) == -1 ||
	    neg_put_idlist(s, p->out, &end, p->lower, p->upper) == -1)
		return -1;
	buf_reset(&s->range);
	p->kept = p->upper;
	p->kept_at = end;
	return 0;
}

static int
neg_on_idlist(struct neg_pass *p)
{
	const uint8_t	*ids;
	uint64_t	 n;

	if (neg_read_varint(p, "id list length", &n) == -1)
		return -1;
	if (n > (p->in.len - p->in.pos) / NEG_ID_BYTES)
		return neg_fail(p->s, "id list of %llu ids but %zu bytes left "
		    "at byte %zu", (unsigned long long)n,
		    p->in.len - p->in.pos, p->in.pos);
	ids = neg_read_bytes(p, (size_t)n * NEG_ID_BYTES, "an id list");
	if (p->s->role == NEG_INITIATOR) {
		p->skip = true;
		return neg_idlist_diff(p, ids, (size_t)n);
	}
	if (neg_idlist_answer(p) == -1)
		return neg_fail(p->s, "reply larger than %zu bytes",
		    p->out->max);
	return 0;
}

/* Handlers by mode; a mode past the table is refused. */
static int (*const neg_mode_fns[])(struct neg_pass *) = {
	[NEG_MODE_SKIP] = neg_on_skip,
	[NEG_MODE_FINGERPRINT] = neg_on_fingerprint,
	[NEG_MODE_IDLIST] = neg_on_idlist,
};

/* Decode one range and reconcile it into s->range (or out). 0, or -1. */
static int
neg_range(struct neg_pass *p)
{
	uint64_t	mode;
	size_t		at;

	if (neg_bound_get(p) == -1)
		return -1;
	if (neg_bound_cmp(&p->cur, &p->prev) < 0)
		return neg_fail(p->s, "bound out of order at byte %zu",
		    p->in.pos);
	at = p->in.pos;
	if (neg_read_varint(p, "mode", &mode) == -1)
		return -1;
	if (mode >= sizeof(neg_mode_fns) / sizeof(neg_mode_fns[0]))
		return neg_fail(p->s, "unknown mode %llu at byte %zu",
		    (unsigned long long)mode, at);
	p->upper = neg_lower_index(p->s->st, p->lower, &p->cur);
	return neg_mode_fns[mode](p);
}

/*
 * The frame is full: end the message with one Fingerprint range from the
 * last bound written to infinity, covering exactly the items in it.
 * Unless that bound is already past infinity without a prefix (a peer may
 * send one at infinity with an id prefix): then no item is left to cover
 * and the closing bound would be out of order.
 */
static int
neg_close_frame(struct neg_pass *p)
{
	struct neg_bound	inf;

	neg_bound_at(&inf, NEG_TS_INFINITY);
	if (neg_bound_cmp(&inf, &p->kept_at) < 0)
		return 0;
	if (neg_bound_put(p->s, p->out, &inf) == -1 ||
	    neg_put_fingerprint(p->s, p->out, p->kept, p->s->st->count) == -1)
		return neg_fail(p->s, "reply larger than %zu bytes",
		    p->out->max);
	return 0;
}

/* Reconcile every range of the message after its version byte. */
static int
neg_ranges(struct neg_pass *p)
{
	struct neg_session	*s = p->s;

	while (p->in.pos < p->in.len) {
		buf_reset(&s->range);
		if (neg_range(p) == -1)
			return -1;
		if (neg_over_frame(s, p->out->len + s->range.len))
			return neg_close_frame(p);
		if (s->range.len > 0) {
			if (buf_append(p->out, s->range.data,
			    s->range.len) == -1)
				return neg_fail(s, "reply larger than %zu "
				    "bytes", p->out->max);
			p->kept = p->upper;
			p->kept_at = p->cur;
		}
		p->lower = p->upper;
		p->prev = p->cur;
	}
	return 0;
}

/* ---- Sessions --------------------------------------------------------- */

int
neg_session_init(struct neg_session *s, const struct neg_storage *st,
    enum neg_role role, size_t frame_limit)
{
	memset(s, 0, sizeof(*s));
	s->st = st;
	s->role = role;
	s->frame_limit = frame_limit;
	buf_init(&s->range, NEG_MAX_MSG_BYTES);
	if (!st->sealed)
		return neg_fail(s, "storage not sealed");
	if (frame_limit != 0 && (frame_limit < NEG_FRAME_MIN_BYTES ||
	    frame_limit > NEG_MAX_MSG_BYTES))
		return neg_fail(s, "frame-size limit %zu outside %d..%d",
		    frame_limit, NEG_FRAME_MIN_BYTES, NEG_MAX_MSG_BYTES);
	return 0;
}

void
neg_session_free(struct neg_session *s)
{
	buf_free(&s->range);
}

enum neg_status
neg_initiate(struct neg_session *s, struct buf *out)
{
	struct neg_bound	inf;

	s->reason[0] = '\0';
	if (s->role != NEG_INITIATOR || s->initiated) {
		neg_fail(s, "initiate: %s", s->role != NEG_INITIATOR ?
		    "session is a responder" : "already initiated");
		return NEG_ERROR;
	}
	s->initiated = true;
	s->ts_out = 0;
	neg_bound_at(&inf, NEG_TS_INFINITY);
	buf_reset(out);
	if (buf_putc(out, NEG_PROTOCOL_V1) == -1 ||
	    neg_split(s, out, 0, s->st->count, &inf) == -1) {
		neg_fail(s, "initiate: message larger than %zu bytes",
		    out->max);
		return NEG_ERROR;
	}
	return NEG_SEND;
}

/* Check the version byte. 0 to go on, 1 when the answer is the bare
 * version byte (a responder's downgrade offer), or -1 (reason set). */
static int
neg_version(struct neg_session *s, const uint8_t *msg, size_t len)
{
	if (len == 0)
		return neg_fail(s, "empty message (no version byte)");
	if (len > NEG_MAX_MSG_BYTES)
		return neg_fail(s, "message of %zu bytes (at most %d)", len,
		    NEG_MAX_MSG_BYTES);
	if (msg[0] < NEG_VERSION_LOW || msg[0] > NEG_VERSION_HIGH)
		return neg_fail(s, "invalid protocol version byte 0x%02x",
		    msg[0]);
	if (msg[0] == NEG_PROTOCOL_V1)
		return 0;
	if (s->role == NEG_INITIATOR)
		return neg_fail(s, "peer asks for unsupported protocol "
		    "version %d", msg[0] - NEG_VERSION_LOW);
	return 1;
}

/* May this session take a message now? 0, or -1 (reason set). */
static int
neg_ready(struct neg_session *s)
{
	if (s->role == NEG_INITIATOR && !s->initiated)
		return neg_fail(s, "reconcile before initiate");
	if (s->done)
		return neg_fail(s, "reconciliation already complete");
	return 0;
}

enum neg_status
neg_reconcile(struct neg_session *s, const uint8_t *msg, size_t len,
    struct buf *out, const struct neg_ids *ids)
{
	struct neg_pass		p;
	int			v;

	s->reason[0] = '\0';
	buf_reset(out);
	if (neg_ready(s) == -1 || (v = neg_version(s, msg, len)) == -1)
		return NEG_ERROR;
	if (buf_putc(out, NEG_PROTOCOL_V1) == -1) {
		neg_fail(s, "output buffer too small");
		return NEG_ERROR;
	}
	if (v == 1)
		return NEG_SEND;
	memset(&p, 0, sizeof(p));
	p.s = s;
	p.in = (struct neg_reader){ .p = msg, .len = len, .pos = 1 };
	p.out = out;
	p.ids = ids;
	s->ts_in = s->ts_out = 0;
	s->rounds++;
	if (neg_ranges(&p) == -1)
		return NEG_ERROR;
	if (s->role == NEG_INITIATOR && out->len == 1) {
		s->done = true;
		return NEG_DONE;
	}
	return NEG_SEND;
}

/* ---- Time windows ----------------------------------------------------- */

int
neg_window_next(const uint64_t *ts, size_t n, uint64_t since,
    size_t max_items, struct neg_window *w)
{
	size_t	k;

	w->since = since;
	if (n <= max_items) {
		w->until = NEG_TS_INFINITY;
		w->count = n;
		return 0;
	}
	for (k = max_items; k > 0 && ts[k - 1] == ts[k]; k--)
		;
	if (k == 0)
		return -1;
	w->until = ts[k] - 1;
	w->count = k;
	return 1;
}

uint64_t
neg_rounds_bound(uint64_t n, size_t frame_limit)
{
	uint64_t	depth = 1, m, frames = 0;

	for (m = NEG_IDLIST_BELOW; m < n; m *= NEG_BUCKETS)
		depth++;
	if (frame_limit > NEG_FRAME_RESERVE_BYTES)
		frames = n * (NEG_ID_BYTES + 8) / (frame_limit -
		    NEG_FRAME_RESERVE_BYTES);
	return 2 * (depth + 1) + frames;
}
