/*
 * prog_neg.c — drives NIP-77 sessions through the real relay pool
 * (pool_neg_open, pool_neg_send, pool_sub_close) against live relays for
 * test_neg_client.sh, with the C negentropy code as the initiator. One set
 * of items is read from a file of "created_at hex-id" lines and sealed
 * once; each URL gets -n sessions over the filter -f. It prints, as they
 * are found (an id may come twice under a frame-size limit):
 *
 *   have K ID | need K ID                    session K's ids
 *   lost K TEXT                              session K lost (-r: reopened)
 *
 * and at the end one line per session and per relay:
 *
 *   session K url=URL end=E rounds=R resent=N text=TEXT
 *   relay URL state=S neg_opens=N neg_msgs_in=N neg_msgs_out=N
 *     neg_errs=N notices=N reqs=N invalid=N
 *
 * E is done (reconciled, NEG-CLOSE sent), err, closed, notice, bad_msg,
 * lost (on_err's why), codec (our codec refused a message), send (the pool
 * refused our NEG-MSG) or silent (-p: a REQ sent after the sessions was
 * answered while a session still had no reply; it is then closed). The
 * run ends when every session ended and a last REQ per relay was answered
 * (so the relay has seen every NEG-CLOSE), or after -t seconds (exit 1).
 *
 * Options: -i FILE (items, required), -f FILTER (JSON, default {}),
 * -n N sessions per URL, -F frame-size limit (0: none), -k (a fresh key:
 * answer AUTH), -N (no NIP-11 fetch), -b backoff_base_ms, -r (reopen a
 * lost session once), -p (the probe REQ above), -t seconds (60).
 * Exit 0 when every session ended, 1 on timeout, 2 on usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/dns.h"
#include "net/tls.h"
#include "nostr/filter.h"
#include "nostr/key.h"
#include "nostr/negentropy.h"
#include "relay/pool.h"

#define MAX_TARGETS	8
#define MAX_SESSIONS	64
#define ITEM_LINE	256

struct target {
	const char	*url;
	struct pool_sub	*probe;
	bool		 synced;	/* the final REQ was answered */
};

struct sess {
	int			 k;
	struct target		*t;
	struct pool_sub		*sub;
	struct neg_session	 ns;
	const char		*end;		/* NULL while it runs */
	char			 text[256];
	unsigned		 rounds, resent;
	bool			 reopened;
};

static struct target		 targets[MAX_TARGETS];
static size_t			 ntargets;
static struct sess		 sessions[MAX_SESSIONS];
static size_t			 nsessions;
static struct pool		*pool;
static struct neg_storage	 items;
static struct filter		 filt;
static struct buf		 out;
static size_t			 frame_limit;
static int			 reopen;

static const char *const end_names[] = {
	[POOL_NEG_END_ERR] = "err",
	[POOL_NEG_END_CLOSED] = "closed",
	[POOL_NEG_END_NOTICE] = "notice",
	[POOL_NEG_END_BAD_MSG] = "bad_msg",
	[POOL_NEG_END_LOST] = "lost",
};

static void	sess_start(struct sess *);

static void
print_id(const char *what, const struct sess *s, const uint8_t id[32])
{
	char	hex[65];

	hex_encode(id, 32, hex, sizeof(hex));
	printf("%s %d %s\n", what, s->k, hex);
}

static void
on_have(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	print_id("have", arg, id);
}

static void
on_need(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	print_id("need", arg, id);
}

/* The session is over for the driver: record why, free the codec's state. */
static void
sess_end(struct sess *s, const char *end, const char *text)
{
	s->end = end;
	snprintf(s->text, sizeof(s->text), "%s", text);
	s->resent = s->sub != NULL ? pool_sub_resent(s->sub) : s->resent;
	neg_session_free(&s->ns);
}

static void
on_msg(struct pool_sub *sub, const uint8_t *msg, size_t len, void *arg)
{
	struct sess		*s = arg;
	const struct neg_ids	 ids = { on_have, on_need, s };
	enum neg_status		 st;

	s->rounds++;
	st = neg_reconcile(&s->ns, msg, len, &out, &ids);
	if (st == NEG_SEND && pool_neg_send(sub, out.data, out.len) == 0)
		return;
	if (st == NEG_DONE)
		sess_end(s, "done", "-");
	else if (st == NEG_ERROR)
		sess_end(s, "codec", neg_session_reason(&s->ns));
	else
		sess_end(s, "send", "pool_neg_send refused");
	pool_sub_close(sub);		/* NEG-CLOSE */
	s->sub = NULL;
}

static void
on_err(struct pool_sub *sub, enum pool_neg_end why, const char *text,
    void *arg)
{
	struct sess	*s = arg;

	s->resent = pool_sub_resent(sub);
	s->sub = NULL;
	if (why == POOL_NEG_END_LOST && reopen && !s->reopened) {
		printf("lost %d %s\n", s->k, text);
		neg_session_free(&s->ns);
		s->reopened = true;
		s->rounds = 0;
		sess_start(s);		/* a new session: queued until back */
		return;
	}
	sess_end(s, end_names[why], text);
}

static const struct pool_neg_cbs neg_cbs = { on_msg, on_err };

static void
sess_start(struct sess *s)
{
	if (neg_session_init(&s->ns, &items, NEG_INITIATOR, frame_limit) ==
	    -1 || neg_initiate(&s->ns, &out) != NEG_SEND) {
		fprintf(stderr, "prog_neg: %s\n", neg_session_reason(&s->ns));
		exit(2);
	}
	s->sub = pool_neg_open(pool, s->t->url, &filt, out.data, out.len,
	    &neg_cbs, s);
	if (s->sub == NULL)
		exit(2);
}

/* -p: the relay answered a REQ sent after the sessions: who never heard? */
static void
probe_eose(struct pool_sub *sub, void *arg)
{
	struct target	*t = arg;
	size_t		 i;

	for (i = 0; i < nsessions; i++) {
		struct sess	*s = &sessions[i];

		if (s->t != t || s->end != NULL || s->rounds > 0)
			continue;
		sess_end(s, "silent", "no answer before the later REQ's EOSE");
		pool_sub_close(s->sub);	/* NEG-CLOSE */
		s->sub = NULL;
	}
	pool_sub_close(sub);
	t->probe = NULL;
}

static const struct pool_sub_cbs probe_cbs = { NULL, probe_eose, NULL };

/*
 * After the sessions: one more REQ per relay, answered after everything
 * sent before it (NEG-CLOSEs included), so the relay's counters are final
 * when the run ends.
 */
static void
sync_eose(struct pool_sub *sub, void *arg)
{
	struct target	*t = arg;

	t->synced = true;
	pool_sub_close(sub);
}

static void
sync_closed(struct pool_sub *sub, enum relay_reason r, const char *m,
    void *arg)
{
	struct target	*t = arg;

	(void)sub;
	(void)r;
	(void)m;
	t->synced = true;
}

static const struct pool_sub_cbs sync_cbs = { NULL, sync_eose, sync_closed };

static size_t
unsynced(void)
{
	size_t	i, n = 0;

	for (i = 0; i < ntargets; i++)
		n += !targets[i].synced;
	return n;
}

static void
load_items(const char *path)
{
	char			 line[ITEM_LINE], hex[ITEM_LINE];
	unsigned long long	 ts;
	uint8_t			 id[NEG_ID_BYTES];
	FILE			*fp;

	if ((fp = fopen(path, "r")) == NULL) {
		perror(path);
		exit(2);
	}
	neg_storage_init(&items, NEG_MAX_ITEMS);
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "%llu %255s", &ts, hex) != 2 ||
		    hex_decode(hex, strlen(hex), id, sizeof(id)) == -1 ||
		    neg_storage_add(&items, ts, id) == -1) {
			fprintf(stderr, "prog_neg: bad item line: %s", line);
			exit(2);
		}
	}
	fclose(fp);
	neg_storage_seal(&items);
}

static size_t
running(void)
{
	size_t	i, n = 0;

	for (i = 0; i < nsessions; i++)
		n += sessions[i].end == NULL;
	return n;
}

static void
report(void)
{
	struct pool_relay_info	 info;
	size_t			 i;

	for (i = 0; i < nsessions; i++) {
		const struct sess	*s = &sessions[i];

		printf("session %d url=%s end=%s rounds=%u resent=%u text=%s\n",
		    s->k, s->t->url, s->end != NULL ? s->end : "running",
		    s->rounds, s->resent, s->end != NULL ? s->text : "-");
	}
	for (i = 0; i < ntargets; i++) {
		if (pool_relay_info_url(pool, targets[i].url, &info) == -1)
			continue;
		printf("relay %s state=%s neg_opens=%llu neg_msgs_in=%llu "
		    "neg_msgs_out=%llu neg_errs=%llu notices=%llu reqs=%llu "
		    "invalid=%llu\n", info.url, info.state_name,
		    (unsigned long long)info.neg_opens,
		    (unsigned long long)info.neg_msgs_in,
		    (unsigned long long)info.neg_msgs_out,
		    (unsigned long long)info.neg_errs,
		    (unsigned long long)info.notices,
		    (unsigned long long)info.reqs,
		    (unsigned long long)info.invalid);
	}
}

int
main(int argc, char **argv)
{
	struct pool_opts	 o;
	struct loop		*loop;
	struct nostr_key	 key;
	struct filter		 probe;
	const char		*ftext = "{}", *ipath = NULL;
	char			 err[256];
	uint8_t			 sk[32];
	uint64_t		 end;
	size_t			 i, j, per = 1;
	int			 c, secs = 60, have_key = 0, probe_req = 0;

	memset(&o, 0, sizeof(o));
	while ((c = getopt(argc, argv, "i:f:n:F:kNb:rpt:")) != -1) {
		switch (c) {
		case 'i': ipath = optarg; break;
		case 'f': ftext = optarg; break;
		case 'n': per = (size_t)atoi(optarg); break;
		case 'F': frame_limit = (size_t)atoi(optarg); break;
		case 'k': have_key = 1; break;
		case 'N': o.no_nip11 = true; break;
		case 'b': o.conf.backoff_base_ms = (uint32_t)atoi(optarg); break;
		case 'r': reopen = 1; break;
		case 'p': probe_req = 1; break;
		case 't': secs = atoi(optarg); break;
		default: return 2;
		}
	}
	log_init(stderr, LOG_LEVEL_INFO);
	for (; optind < argc && ntargets < MAX_TARGETS; optind++)
		targets[ntargets++].url = argv[optind];
	if (ipath == NULL || ntargets == 0 || per < 1 ||
	    per * ntargets > MAX_SESSIONS || filter_parse_text(&filt, ftext,
	    strlen(ftext), err, sizeof(err)) == -1 ||
	    filter_parse_text(&probe, "{\"limit\":0}", 11, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "usage: prog_neg -i ITEMS [opts] URL...\n");
		return 2;
	}
	load_items(ipath);
	buf_init(&out, NEG_MAX_MSG_BYTES);
	if (have_key) {
		if (tls_random(sk, sizeof(sk)) == -1 ||
		    key_from_secret(&key, sk) == -1)
			return 2;
		o.conf.key = &key;
	}
	if ((loop = loop_new()) == NULL || (o.conf.dns = dns_new(loop)) == NULL ||
	    (pool = pool_new(loop, &o)) == NULL)
		return 2;
	for (i = 0; i < ntargets; i++) {
		if (pool_relay_add(pool, targets[i].url, RELAY_ROLE_CUSTOM) ==
		    NULL)
			return 2;
		for (j = 0; j < per; j++) {
			struct sess	*s = &sessions[nsessions];

			s->k = (int)nsessions++;
			s->t = &targets[i];
			sess_start(s);
		}
		/* Queued behind the sessions: the relay answers it after. */
		if (probe_req && (targets[i].probe = pool_sub_open(pool,
		    targets[i].url, &probe, 1, &probe_cbs, &targets[i])) == NULL)
			return 2;
	}
	end = clock_mono_ms() + (uint64_t)secs * 1000;
	while (running() > 0 && clock_mono_ms() < end)
		if (loop_run_once(loop, 50) == -1)
			break;
	for (i = 0; running() == 0 && i < ntargets; i++)
		if (pool_sub_open(pool, targets[i].url, &probe, 1, &sync_cbs,
		    &targets[i]) == NULL)
			return 2;
	while (running() == 0 && unsynced() > 0 && clock_mono_ms() < end)
		if (loop_run_once(loop, 50) == -1)
			break;
	report();
	fflush(stdout);
	c = running() == 0 && unsynced() == 0 ? 0 : 1;
	for (i = 0; i < nsessions; i++)
		if (sessions[i].end == NULL)
			neg_session_free(&sessions[i].ns);
	pool_free(pool);
	dns_free(o.conf.dns);
	loop_free(loop);
	neg_storage_free(&items);
	filter_free(&filt);
	filter_free(&probe);
	buf_free(&out);
	return c;
}
