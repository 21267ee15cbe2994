/*
 * prog_relay_faults.c — one fault scenario of the relay pool against
 * tests/relaysim, for test_relay_faults.sh:
 *
 *   prog_relay_faults [-c CA] [-d DIR] [-S PID] SCENARIO NAME=URL...
 *
 * Each scenario builds its own pool (options to suit), drives it through
 * the planners' API and prints "ok - ..." / "not ok - ..." per check, plus
 * "fact NAME KEY=VALUE" lines that the script compares with relaysim's own
 * counters (the independent side). Exit 1 if a check failed, 2 on usage.
 *
 *   publish    OK true, duplicate, invalid signature, publish_reject
 *              reasons (blocked, rate-limited then accepted)
 *   tls        a verified wss chain; a wrong host name and an untrusted CA
 *              refused, in backoff with the reason as last_error
 *   oversized  a frame over max_msg_bytes closes that connection (1009),
 *              which reconnects and finishes; another relay unaffected
 *   fifo       5 subscriptions under an advertised cap of 2: each waits
 *              its turn, never more than 2 open, all reach EOSE in order
 *   dead       relaysim frozen (SIGSTOP PID) after EOSE: pings go
 *              unanswered, dead_ms ends the connection; thawed, the pool
 *              reconnects and the subscription runs again
 *   slow       a relay slower than dead_ms that answers pings stays open
 *   forged     unrequested events reach the subscription that got them;
 *              wrong-id copies fail validation and are counted invalid
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
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
#include "nostr/event.h"
#include "nostr/filter.h"
#include "nostr/key.h"
#include "relay/pool.h"
#include "store/store.h"
#include "sync/relays_obs.h"

#define MAX_TARGETS	16
#define MAX_SUBS	8
#define WAIT_MS		20000

struct target {
	const char	*name;
	const char	*url;
};

/* One subscription and everything it saw. */
struct sub {
	struct pool_sub	*h;
	struct filter	 f;
	char		 id[72];
	unsigned	 events, valid, invalid, matched, unmatched, foreign;
	unsigned	 eoses, eose_order;
	bool		 closed, close_on_eose;
	char		 why[160];
	unsigned	 resent;
};

static struct loop	*L;
static struct dns	*D;
static struct store	*S;
static struct relays_obs *OBS;		/* records into S, when given */
static struct pool	*P;
static struct nostr_key	 key;
static struct buf	 scratch;
static struct target	 targets[MAX_TARGETS];
static size_t		 ntargets;
static const char	*ca;
static pid_t		 frozen_pid;
static unsigned		 eose_seq;
static int		 failures;

static void	check(bool, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

static void
check(bool ok, const char *fmt, ...)
{
	va_list	 ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

static const char *
url_of(const char *name)
{
	size_t	 i;

	for (i = 0; i < ntargets; i++)
		if (strcmp(targets[i].name, name) == 0)
			return targets[i].url;
	fprintf(stderr, "prog_relay_faults: no relay named %s\n", name);
	exit(2);
}

static void
fact(const char *name, const char *k, unsigned long long v)
{
	printf("fact %s %s=%llu\n", name, k, v);
}

/* A pool for one scenario; o's zero fields take the defaults. */
static void
pool_start(struct pool_opts *o)
{
	o->conf.dns = D;
	o->conf.ca_file = ca;
	if (OBS != NULL)
		o->observer = relays_obs_observer(OBS);
	if ((P = pool_new(L, o)) == NULL)
		exit(2);
}

static void
pool_stop(void)
{
	pool_free(P);		/* synchronous: no round needed after it */
	P = NULL;
}

static bool
info(const char *name, struct pool_relay_info *i)
{
	return pool_relay_info_url(P, url_of(name), i) == 0;
}

/* Run the loop until pred() or ms pass; the last pred(). */
static bool
wait_until(bool (*pred)(void *), void *arg, uint64_t ms)
{
	uint64_t	 end = clock_mono_ms() + ms;

	while (!pred(arg) && clock_mono_ms() < end)
		if (loop_run_once(L, 20) == -1)
			break;
	return pred(arg);
}

static bool
is_open(void *name)
{
	struct pool_relay_info	 i;

	return info(name, &i) && i.state == RELAY_OPEN;
}

static bool
all_eose(void *arg)
{
	struct sub	**s = arg;

	for (; *s != NULL; s++)
		if ((*s)->eoses == 0 && !(*s)->closed)
			return false;
	return true;
}

/* Subscription callbacks: validate as ingest would, match the filter. */
static void
on_event(struct pool_sub *h, struct relay_msg *m, void *arg)
{
	struct sub	*s = arg;
	struct event	 ev;

	s->events++;
	if (m->subid == NULL || strcmp(m->subid, pool_sub_id(h)) != 0)
		s->foreign++;
	if (m->event_raw == NULL || event_validate(&ev, m->event_raw,
	    m->event_raw_len, 1024 * 1024, clock_wall_s(), &scratch) !=
	    EVENT_OK) {
		s->invalid++;
		pool_sub_note_invalid(h);
		return;
	}
	s->valid++;
	if (filter_match(&s->f, &ev))
		s->matched++;
	else
		s->unmatched++;
	event_free(&ev);
}

static void
on_eose(struct pool_sub *h, void *arg)
{
	struct sub	*s = arg;

	s->eoses++;
	s->eose_order = ++eose_seq;
	s->resent = pool_sub_resent(h);
	if (s->close_on_eose) {
		pool_sub_close(h);
		s->h = NULL;
	}
}

static void
on_closed(struct pool_sub *h, enum relay_reason r, const char *text, void *arg)
{
	struct sub	*s = arg;

	(void)r;
	s->closed = true;
	s->resent = pool_sub_resent(h);
	snprintf(s->why, sizeof(s->why), "%s", text);
	s->h = NULL;
}

static const struct pool_sub_cbs sub_cbs = { on_event, on_eose, on_closed };

static void
sub_open(struct sub *s, const char *name, const char *json)
{
	char	 err[128];

	memset(s, 0, sizeof(*s));
	if (filter_parse_text(&s->f, json, strlen(json), err, sizeof(err)) == -1) {
		fprintf(stderr, "prog_relay_faults: %s: %s\n", json, err);
		exit(2);
	}
	if ((s->h = pool_sub_open(P, url_of(name), &s->f, 1, &sub_cbs, s)) ==
	    NULL)
		exit(2);
	snprintf(s->id, sizeof(s->id), "%s", pool_sub_id(s->h));
}

static void
sub_done(struct sub *s)
{
	if (s->h != NULL)
		pool_sub_close(s->h);
	s->h = NULL;
	filter_free(&s->f);
}

/* One publish and its OK. */
struct pub {
	bool			 done, accepted;
	enum relay_reason	 reason;
	char			 text[160];
};

static void
on_ok(const uint8_t id[32], bool accepted, enum relay_reason reason,
    const char *text, void *arg)
{
	struct pub	*p = arg;

	(void)id;
	p->done = true;
	p->accepted = accepted;
	p->reason = reason;
	snprintf(p->text, sizeof(p->text), "%s", text);
}

static bool
pub_done(void *arg)
{
	return ((struct pub *)arg)->done;
}

/* A fresh note (n makes it unique); bad_sig flips one signature bit. */
static void
note(struct event *ev, int n, bool bad_sig)
{
	char	 content[64];

	snprintf(content, sizeof(content), "faults note %d %lld", n,
	    (long long)clock_wall_s());
	if (event_create(ev, &key, 1, clock_wall_s(), NULL, content) != EVENT_OK)
		exit(2);
	if (bad_sig)
		ev->sig[5] ^= 0x10;
}

static void
publish(const char *name, const struct event *ev, struct pub *p)
{
	struct buf	 b;

	memset(p, 0, sizeof(*p));
	buf_init(&b, 65536);
	if (event_to_json(ev, &b) == -1 || pool_publish(P, url_of(name),
	    buf_cstr(&b), b.len, on_ok, p) == -1) {
		snprintf(p->text, sizeof(p->text), "refused by the pool");
		p->done = true;
	} else
		(void)wait_until(pub_done, p, WAIT_MS);
	buf_free(&b);
}

static bool
pub_is(const struct pub *p, bool accepted, enum relay_reason reason,
    const char *text)
{
	return p->done && p->accepted == accepted && p->reason == reason &&
	    (text == NULL || strcmp(p->text, text) == 0);
}

static void
scenario_publish(void)
{
	struct pool_opts	 o = { 0 };
	struct event		 a, b, bad;
	struct pub		 p;

	pool_start(&o);
	pool_relay_add(P, url_of("pubok"), RELAY_ROLE_UPLINK);
	pool_relay_add(P, url_of("rejb"), RELAY_ROLE_UPLINK);
	pool_relay_add(P, url_of("rejr"), RELAY_ROLE_UPLINK);
	check(wait_until(is_open, "pubok", WAIT_MS) &&
	    wait_until(is_open, "rejb", WAIT_MS) &&
	    wait_until(is_open, "rejr", WAIT_MS), "publish relays open");
	note(&a, 1, false);
	note(&b, 2, false);
	note(&bad, 3, true);
	publish("pubok", &a, &p);
	check(pub_is(&p, true, RELAY_REASON_NONE, ""),
	    "pubok: new note OK true (%d \"%s\")", p.accepted, p.text);
	publish("pubok", &a, &p);
	check(pub_is(&p, true, RELAY_REASON_DUPLICATE, NULL) &&
	    strncmp(p.text, "duplicate:", 10) == 0,
	    "pubok: same note again OK true duplicate (\"%s\")", p.text);
	publish("pubok", &bad, &p);
	check(pub_is(&p, false, RELAY_REASON_INVALID, "invalid: bad signature"),
	    "pubok: bad signature OK false invalid (\"%s\")", p.text);
	publish("rejb", &a, &p);
	check(pub_is(&p, false, RELAY_REASON_BLOCKED, "blocked: not here"),
	    "rejb: OK false blocked (\"%s\")", p.text);
	publish("rejr", &a, &p);
	check(pub_is(&p, false, RELAY_REASON_RATE_LIMITED,
	    "rate-limited: slow down"), "rejr: first OK false rate-limited "
	    "(\"%s\")", p.text);
	publish("rejr", &b, &p);
	check(pub_is(&p, true, RELAY_REASON_NONE, ""),
	    "rejr: next note OK true (\"%s\")", p.text);
	check(is_open("rejr") && is_open("rejb") && is_open("pubok"),
	    "rejections cost no connection");
	event_free(&a);
	event_free(&b);
	event_free(&bad);
	pool_stop();
}

static bool
in_backoff(void *name)
{
	struct pool_relay_info	 i;

	return info(name, &i) && i.state == RELAY_BACKOFF;
}

static void
scenario_tls(void)
{
	struct pool_opts	 o = { .conf.backoff_base_ms = 60000 };
	struct pool_relay_info	 i;
	bool			 got;
	struct sub		 ok, wrong, rogue;
	struct sub		*all[] = { &ok, NULL };

	pool_start(&o);
	pool_relay_add(P, url_of("tlsok"), RELAY_ROLE_CUSTOM);
	pool_relay_add(P, url_of("tlswrong"), RELAY_ROLE_CUSTOM);
	pool_relay_add(P, url_of("tlsrogue"), RELAY_ROLE_CUSTOM);
	sub_open(&ok, "tlsok", "{\"kinds\":[1],\"limit\":10}");
	sub_open(&wrong, "tlswrong", "{\"kinds\":[1],\"limit\":10}");
	sub_open(&rogue, "tlsrogue", "{\"kinds\":[1],\"limit\":10}");
	(void)wait_until(all_eose, all, WAIT_MS);
	check(ok.eoses == 1 && ok.valid == 10 && ok.invalid == 0,
	    "tlsok: verified chain, 10 valid events and EOSE (%u, %u)",
	    ok.eoses, ok.valid);
	(void)wait_until(in_backoff, "tlswrong", WAIT_MS);
	(void)wait_until(in_backoff, "tlsrogue", WAIT_MS);
	got = info("tlswrong", &i);
	check(got && i.state == RELAY_BACKOFF &&
	    i.failures == 1 && strcmp(i.last_error, "host name mismatch") == 0 &&
	    i.subs_queued == 1 && i.reqs == 0 && wrong.events == 0,
	    "tlswrong: refused, state %s, failures %u, last_error \"%s\"",
	    i.state_name, i.failures, i.last_error);
	got = info("tlsrogue", &i);
	check(got && i.state == RELAY_BACKOFF &&
	    i.failures == 1 &&
	    strcmp(i.last_error, "certificate not trusted") == 0 &&
	    i.subs_queued == 1 && i.reqs == 0 && rogue.events == 0,
	    "tlsrogue: refused, state %s, failures %u, last_error \"%s\"",
	    i.state_name, i.failures, i.last_error);
	sub_done(&ok);
	sub_done(&wrong);
	sub_done(&rogue);
	pool_stop();
}

static void
scenario_oversized(void)
{
	struct pool_opts	 o = { .conf.backoff_base_ms = 200,
				       .conf.max_msg_bytes = 65536 };
	struct pool_relay_info	 i;
	bool			 got;
	struct sub		 big, plain;
	struct sub		*all[] = { &big, &plain, NULL };

	pool_start(&o);
	pool_relay_add(P, url_of("big"), RELAY_ROLE_CUSTOM);
	pool_relay_add(P, url_of("plain"), RELAY_ROLE_CUSTOM);
	sub_open(&big, "big", "{\"kinds\":[1],\"limit\":20}");
	sub_open(&plain, "plain", "{\"kinds\":[1],\"limit\":20}");
	(void)wait_until(all_eose, all, WAIT_MS);
	got = info("big", &i);
	check(got && big.eoses == 1 && big.valid == 20 &&
	    big.resent == 1 && i.reqs == 2 && i.failures == 0 &&
	    i.state == RELAY_OPEN && strcmp(i.last_error,
	    "connection closed (1009: message too big)") == 0,
	    "big: closed 1009, reconnected, REQ resent, 20 events and EOSE "
	    "(eose %u valid %u resent %u reqs %llu last_error \"%s\")",
	    big.eoses, big.valid, big.resent, (unsigned long long)i.reqs,
	    i.last_error);
	got = info("plain", &i);
	check(got && plain.eoses == 1 && plain.valid == 20 &&
	    plain.resent == 0 && i.reqs == 1 && i.failures == 0 &&
	    i.last_error[0] == '\0' && i.state == RELAY_OPEN,
	    "plain: unaffected (eose %u valid %u resent %u reqs %llu \"%s\")",
	    plain.eoses, plain.valid, plain.resent,
	    (unsigned long long)i.reqs, i.last_error);
	sub_done(&big);
	sub_done(&plain);
	pool_stop();
}

static void
scenario_fifo(void)
{
	struct pool_opts	 o = { 0 };
	struct pool_relay_info	 i;
	bool			 got;
	struct sub		 s[5];
	struct sub		*all[6];
	size_t			 n, max_open = 0, max_queued = 0;
	uint64_t		 end;
	bool			 order = true;

	pool_start(&o);
	pool_relay_add(P, url_of("cap2"), RELAY_ROLE_CUSTOM);
	for (n = 0; n < 5; n++) {
		sub_open(&s[n], "cap2", "{\"kinds\":[1],\"limit\":5}");
		s[n].close_on_eose = true;	/* a drain step's life */
		all[n] = &s[n];
	}
	all[5] = NULL;
	end = clock_mono_ms() + WAIT_MS;
	while (!all_eose(all) && clock_mono_ms() < end) {
		(void)loop_run_once(L, 20);
		if (info("cap2", &i)) {
			max_open = i.subs_open > max_open ? i.subs_open : max_open;
			if (i.subs_open > 0 && i.subs_queued > max_queued)
				max_queued = i.subs_queued;
		}
	}
	for (n = 0; n < 5; n++)
		order = order && s[n].eoses == 1 && s[n].eose_order == n + 1 &&
		    s[n].valid == 5 && !s[n].closed;
	check(order, "cap2: 5 subscriptions reached EOSE, in FIFO order");
	got = info("cap2", &i);
	check(got && max_open == 2 && i.max_subscriptions == 2 &&
	    i.reqs == 5 && i.closed == 0 && i.subs_open == 0 &&
	    i.subs_queued == 0, "cap2: NIP-11 cap 2, at most %zu open, "
	    "reqs %llu, CLOSED %llu", max_open,
	    (unsigned long long)i.reqs, (unsigned long long)i.closed);
	check(max_queued == 3, "cap2: 3 waited behind the 2 open (%zu)",
	    max_queued);
	for (n = 0; n < 5; n++)
		sub_done(&s[n]);
	pool_stop();
}

static bool
dead_seen(void *name)
{
	struct pool_relay_info	 i;

	return info(name, &i) && strncmp(i.last_error, "dead peer: ", 11) == 0;
}

static bool
two_eose(void *arg)
{
	return ((struct sub *)arg)->eoses >= 2;
}

static void
scenario_dead(void)
{
	struct pool_opts	 o = { .conf.ping_ms = 300,
				       .conf.dead_ms = 1500,
				       .conf.backoff_base_ms = 200 };
	struct pool_relay_info	 i;
	bool			 got;
	struct sub		 s;
	struct sub		*all[] = { &s, NULL };
	bool			 dead;

	if (frozen_pid <= 0) {
		check(false, "dead: needs -S PID");
		return;
	}
	pool_start(&o);
	pool_relay_add(P, url_of("frozen"), RELAY_ROLE_CUSTOM);
	sub_open(&s, "frozen", "{\"kinds\":[1],\"limit\":5}");
	check(wait_until(all_eose, all, WAIT_MS) && s.eoses == 1,
	    "frozen: first EOSE");
	if (kill(frozen_pid, SIGSTOP) == -1) {
		check(false, "dead: SIGSTOP: %s", strerror(errno));
		return;
	}
	dead = wait_until(dead_seen, "frozen", WAIT_MS);
	(void)info("frozen", &i);
	check(dead && i.state != RELAY_OPEN && i.failures >= 1,
	    "frozen: dead peer detected (state %s, failures %u, \"%s\")",
	    i.state_name, i.failures, i.last_error);
	(void)kill(frozen_pid, SIGCONT);
	(void)wait_until(two_eose, &s, WAIT_MS + 30000);
	got = info("frozen", &i);
	check(got && s.eoses == 2 && s.resent == 1 &&
	    i.reqs == 2 && i.state == RELAY_OPEN && i.failures == 0,
	    "frozen: thawed, reconnected, REQ resent, EOSE again (eose %u "
	    "resent %u reqs %llu state %s)", s.eoses, s.resent,
	    (unsigned long long)i.reqs, i.state_name);
	sub_done(&s);
	pool_stop();
}

static void
scenario_slow(void)
{
	struct pool_opts	 o = { .conf.ping_ms = 300,
				       .conf.dead_ms = 1500,
				       .conf.backoff_base_ms = 200 };
	struct pool_relay_info	 i;
	bool			 got;
	struct sub		 slow, fast;
	struct sub		*all[] = { &slow, &fast, NULL };

	pool_start(&o);
	pool_relay_add(P, url_of("slow"), RELAY_ROLE_CUSTOM);
	pool_relay_add(P, url_of("plain"), RELAY_ROLE_CUSTOM);
	sub_open(&slow, "slow", "{\"kinds\":[1],\"limit\":20}");
	sub_open(&fast, "plain", "{\"kinds\":[1],\"limit\":20}");
	(void)wait_until(all_eose, all, WAIT_MS);
	check(fast.eoses == 1 && slow.eoses == 1 &&
	    fast.eose_order < slow.eose_order,
	    "plain finished first, slow did not hold it (order %u < %u)",
	    fast.eose_order, slow.eose_order);
	got = info("slow", &i);
	check(got && slow.valid == 20 && slow.resent == 0 &&
	    i.reqs == 1 && i.failures == 0 && i.last_error[0] == '\0' &&
	    i.state == RELAY_OPEN,
	    "slow: answered after more than dead_ms, kept alive by pongs "
	    "(valid %u resent %u reqs %llu \"%s\")", slow.valid, slow.resent,
	    (unsigned long long)i.reqs, i.last_error);
	sub_done(&slow);
	sub_done(&fast);
	pool_stop();
}

static void
scenario_forged(void)
{
	struct pool_opts	 o = { 0 };
	struct pool_relay_info	 i;
	bool			 got;
	struct sub		 u, w;
	struct sub		*all[] = { &u, &w, NULL };

	pool_start(&o);
	pool_relay_add(P, url_of("unreq"), RELAY_ROLE_CUSTOM);
	pool_relay_add(P, url_of("wrongid"), RELAY_ROLE_CUSTOM);
	sub_open(&u, "unreq", "{\"kinds\":[1],\"limit\":40}");
	sub_open(&w, "wrongid", "{\"kinds\":[1],\"limit\":40}");
	(void)wait_until(all_eose, all, WAIT_MS);
	got = info("unreq", &i);
	check(got && u.eoses == 1 && u.matched == 40 &&
	    u.unmatched >= 1 && u.events == 40 + u.unmatched &&
	    u.invalid == 0 && u.foreign == 0 && i.events == u.events &&
	    i.failures == 0, "unreq: 40 matching and %u unrequested events, "
	    "all on subscription %s (events %u, pool %llu)", u.unmatched, u.id,
	    u.events, (unsigned long long)i.events);
	fact("unreq", "unrequested_sent", u.unmatched);
	got = info("wrongid", &i);
	check(got && w.eoses == 1 && w.valid == 40 &&
	    w.matched == 40 && w.invalid >= 1 && w.events == 40 + w.invalid &&
	    i.invalid == w.invalid && i.failures == 0 &&
	    i.state == RELAY_OPEN, "wrongid: 40 valid, %u wrong-id "
	    "copies refused and counted (pool invalid %llu), connection kept",
	    w.invalid, (unsigned long long)i.invalid);
	fact("wrongid", "forged_sent", w.invalid);
	sub_done(&u);
	sub_done(&w);
	pool_stop();
}

static const struct {
	const char	*name;
	void		(*run)(void);
} scenarios[] = {
	{ "publish", scenario_publish },
	{ "tls", scenario_tls },
	{ "oversized", scenario_oversized },
	{ "fifo", scenario_fifo },
	{ "dead", scenario_dead },
	{ "slow", scenario_slow },
	{ "forged", scenario_forged },
};

int
main(int argc, char **argv)
{
	const char	*dir = NULL;
	char		*eq, err[256];
	uint8_t		 sk[32];
	size_t		 i;
	int		 c;

	while ((c = getopt(argc, argv, "c:d:S:")) != -1) {
		switch (c) {
		case 'c': ca = optarg; break;
		case 'd': dir = optarg; break;
		case 'S': frozen_pid = (pid_t)atoi(optarg); break;
		default: return 2;
		}
	}
	if (optind >= argc)
		return 2;
	for (c = optind + 1; c < argc && ntargets < MAX_TARGETS; c++) {
		if ((eq = strchr(argv[c], '=')) == NULL)
			return 2;
		*eq = '\0';
		targets[ntargets].name = argv[c];
		targets[ntargets++].url = eq + 1;
	}
	log_init(stderr, LOG_LEVEL_INFO);
	if (tls_random(sk, sizeof(sk)) == -1 || key_from_secret(&key, sk) == -1)
		return 2;
	if (dir != NULL && store_open(&S, dir, err, sizeof(err)) == -1) {
		fprintf(stderr, "store: %s\n", err);
		return 2;
	}
	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	if ((L = loop_new()) == NULL || (D = dns_new(L)) == NULL)
		return 2;
	if (S != NULL && (OBS = relays_obs_new(S, NULL)) == NULL)
		return 2;
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (strcmp(scenarios[i].name, argv[optind]) == 0)
			break;
	if (i == sizeof(scenarios) / sizeof(scenarios[0])) {
		fprintf(stderr, "prog_relay_faults: unknown scenario %s\n",
		    argv[optind]);
		return 2;
	}
	scenarios[i].run();
	relays_obs_free(OBS);
	dns_free(D);
	loop_free(L);
	store_close(S);
	buf_free(&scratch);
	return failures > 0;
}
