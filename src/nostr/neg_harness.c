/*
 * neg_harness.c — owns the conformance line protocol of neg_harness.h: it
 * parses command lines, keeps one storage and one session, and prints what
 * the codec decides. It must never read a line longer than a hex message
 * of NEG_MAX_MSG_BYTES into memory, never take more than
 * NEG_HARNESS_MAX_ITEMS items, and never print a message longer than the
 * frame-size limit (it checks the codec's output, as the reference
 * harnesses do).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/limits.h"
#include "nostr/neg_harness.h"
#include "nostr/negentropy.h"

#define NH_TS_DIGITS	20	/* decimal digits of a 64-bit created_at */

struct nh {
	struct neg_storage	 st;
	struct neg_session	 s;
	bool			 session;	/* s is set up */
	size_t			 frame_limit;
	struct buf		 line;
	struct buf		 msg;		/* a decoded msg line */
	struct buf		 reply;
	FILE			*out;
	char			 why[NEG_REASON_MAX + 64];
};

/* Record the reason of a failed command; returns -1. */
static int
nh_fail(struct nh *h, const char *why)
{
	(void)snprintf(h->why, sizeof(h->why), "%s", why);
	return -1;
}

/*
 * Read one line without its newline (or \r\n) into h->line. 1 for a
 * line, 0 at end of input, -1 for a line past NEG_HARNESS_MAX_LINE.
 */
static int
nh_read_line(struct nh *h, FILE *in)
{
	char	chunk[NEG_HARNESS_READ_CHUNK];
	size_t	n;
	bool	any = false;

	buf_reset(&h->line);
	while (fgets(chunk, sizeof(chunk), in) != NULL) {
		any = true;
		n = strlen(chunk);
		if (buf_append(&h->line, chunk, n) == -1)
			return -1;
		if (n > 0 && chunk[n - 1] == '\n')
			break;
	}
	while (h->line.len > 0 && (h->line.data[h->line.len - 1] == '\n' ||
	    h->line.data[h->line.len - 1] == '\r'))
		h->line.data[--h->line.len] = '\0';
	return any ? 1 : 0;
}

/* Print "<tag>,<hex of b[0..n)>\n". */
static void
nh_print_hex(FILE *out, const char *tag, const uint8_t *b, size_t n)
{
	char	hex[2 * NEG_HARNESS_HEX_CHUNK + 1];
	size_t	at, k;

	fputs(tag, out);
	fputc(',', out);
	for (at = 0; at < n; at += k) {
		k = n - at < NEG_HARNESS_HEX_CHUNK ? n - at :
		    NEG_HARNESS_HEX_CHUNK;
		(void)hex_encode(b + at, k, hex, sizeof(hex));
		fwrite(hex, 1, 2 * k, out);
	}
	fputc('\n', out);
}

static void
nh_have(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	nh_print_hex(arg, "have", id, NEG_ID_BYTES);
}

static void
nh_need(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	nh_print_hex(arg, "need", id, NEG_ID_BYTES);
}

/* A created_at: 1 to 20 decimal digits, below NEG_TS_INFINITY. */
static int
nh_parse_ts(const char *s, size_t len, uint64_t *ts)
{
	char	tmp[NH_TS_DIGITS + 1], *end;
	size_t	i;

	if (len == 0 || len > NH_TS_DIGITS)
		return -1;
	for (i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	errno = 0;
	*ts = strtoull(tmp, &end, 10);
	return errno != 0 || *ts == NEG_TS_INFINITY ? -1 : 0;
}

/* item,<created_at>,<hex id> (args is what follows "item,"). */
static int
nh_item(struct nh *h, const char *args, size_t len)
{
	const char	*comma = memchr(args, ',', len);
	uint8_t		 id[NEG_ID_BYTES];
	uint64_t	 ts;

	if (h->st.sealed)
		return nh_fail(h, "item after seal");
	if (comma == NULL || nh_parse_ts(args, (size_t)(comma - args),
	    &ts) == -1)
		return nh_fail(h, "item: bad created_at");
	len -= (size_t)(comma - args) + 1;
	if (hex_decode(comma + 1, len, id, sizeof(id)) == -1)
		return nh_fail(h, "item: id is not 64 lowercase hex digits");
	if (neg_storage_add(&h->st, ts, id) == -1)
		return nh_fail(h, "item: set full (NEG_HARNESS_MAX_ITEMS)");
	return 0;
}

static int
nh_seal(struct nh *h, const char *args, size_t len)
{
	if (len != 0 || h->st.sealed)
		return nh_fail(h, len != 0 ? "seal takes no argument" :
		    "already sealed");
	neg_storage_seal(&h->st);
	return 0;
}

/* Set the session up in role, once, after seal. */
static int
nh_session(struct nh *h, enum neg_role role)
{
	if (!h->st.sealed)
		return nh_fail(h, "not sealed");
	if (h->session)
		return 0;
	if (neg_session_init(&h->s, &h->st, role, h->frame_limit) == -1)
		return nh_fail(h, neg_session_reason(&h->s));
	h->session = true;
	return 0;
}

/* Print the reply as a msg line (after checking the frame-size limit). */
static int
nh_send(struct nh *h)
{
	if (h->frame_limit != 0 && h->reply.len > h->frame_limit)
		return nh_fail(h, "frame-size limit exceeded");
	nh_print_hex(h->out, "msg", h->reply.data, h->reply.len);
	fflush(h->out);
	return 0;
}

static int
nh_initiate(struct nh *h, const char *args, size_t len)
{
	if (len != 0)
		return nh_fail(h, "initiate takes no argument");
	if (h->session)
		return nh_fail(h, "initiate after msg or twice");
	if (nh_session(h, NEG_INITIATOR) == -1)
		return -1;
	if (neg_initiate(&h->s, &h->reply) != NEG_SEND)
		return nh_fail(h, neg_session_reason(&h->s));
	return nh_send(h);
}

/* Decode hex[0..len) into h->msg. 0, or -1. */
static int
nh_unhex(struct nh *h, const char *hex, size_t len)
{
	uint8_t	chunk[NEG_HARNESS_HEX_CHUNK];
	size_t	at, k;

	buf_reset(&h->msg);
	if (len % 2 != 0)
		return -1;
	for (at = 0; at < len; at += k) {
		k = len - at < 2 * NEG_HARNESS_HEX_CHUNK ? len - at :
		    2 * NEG_HARNESS_HEX_CHUNK;
		if (hex_decode(hex + at, k, chunk, k / 2) == -1 ||
		    buf_append(&h->msg, chunk, k / 2) == -1)
			return -1;
	}
	return 0;
}

static int
nh_msg(struct nh *h, const char *hex, size_t len)
{
	struct neg_ids	ids = { nh_have, nh_need, h->out };
	enum neg_status	r;

	if (!h->session && nh_session(h, NEG_RESPONDER) == -1)
		return -1;
	if (nh_unhex(h, hex, len) == -1)
		return nh_fail(h, "msg: not lowercase hex of at most "
		    "NEG_MAX_MSG_BYTES bytes");
	r = neg_reconcile(&h->s, h->msg.data, h->msg.len, &h->reply, &ids);
	if (r == NEG_ERROR)
		return nh_fail(h, neg_session_reason(&h->s));
	if (r == NEG_DONE) {
		fputs("done\n", h->out);
		fflush(h->out);
		return 0;
	}
	return nh_send(h);
}

static const struct nh_cmd {
	const char	*name;
	int		(*fn)(struct nh *, const char *, size_t);
} nh_cmds[] = {
	{ "item", nh_item },
	{ "seal", nh_seal },
	{ "initiate", nh_initiate },
	{ "msg", nh_msg },
};

/* Run one non-blank line. 0, or -1 with h->why set. */
static int
nh_line(struct nh *h)
{
	const char	*text = (const char *)h->line.data;
	size_t		 i, n;

	for (i = 0; i < sizeof(nh_cmds) / sizeof(nh_cmds[0]); i++) {
		n = strlen(nh_cmds[i].name);
		if (strncmp(text, nh_cmds[i].name, n) != 0 ||
		    (text[n] != ',' && text[n] != '\0'))
			continue;
		if (text[n] == '\0')
			return nh_cmds[i].fn(h, text + n, 0);
		return nh_cmds[i].fn(h, text + n + 1, h->line.len - n - 1);
	}
	return nh_fail(h, "unknown command");
}

int
neg_harness_run(FILE *in, FILE *out, FILE *err, size_t frame_limit)
{
	struct nh	h;
	unsigned long	lineno = 0;
	int		r, rc = 0;

	memset(&h, 0, sizeof(h));
	neg_storage_init(&h.st, NEG_HARNESS_MAX_ITEMS);
	buf_init(&h.line, NEG_HARNESS_MAX_LINE);
	buf_init(&h.msg, NEG_MAX_MSG_BYTES);
	buf_init(&h.reply, NEG_MAX_MSG_BYTES);
	h.frame_limit = frame_limit;
	h.out = out;
	while (rc == 0 && (r = nh_read_line(&h, in)) != 0) {
		lineno++;
		if (r == -1)
			rc = nh_fail(&h, "line too long");
		else if (h.line.len > 0)
			rc = nh_line(&h);
	}
	fflush(out);
	if (rc != 0)
		fprintf(err, "negentropy harness: line %lu: %s\n", lineno,
		    h.why);
	if (h.session)
		neg_session_free(&h.s);
	neg_storage_free(&h.st);
	buf_free(&h.line);
	buf_free(&h.msg);
	buf_free(&h.reply);
	return rc != 0 ? 1 : 0;
}
