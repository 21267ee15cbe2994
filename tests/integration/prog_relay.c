/*
 * prog_relay.c — drives the relay pool against live relays for the
 * integration scripts. One subscription per URL with the filter given;
 * every event is validated as ingest would (id, signature) and the result
 * reported back to the pool. Runs until N relays reached EOSE or closed
 * (default: all), or the timeout; then prints one line per relay:
 *
 *   relay URL state=S eose=0|1 closed=REASON events=N valid=N invalid=N
 *     resent=N reqs=N auth=N authenticated=0|1 notices=N bad=N dropped=N
 *     failures=N ok=-|1|0 last_error=...
 *
 * Options: -t seconds, -p pace_ms, -k (a fresh key: answer AUTH),
 * -P (first publish a new kind-1 event and subscribe to its id), -n N,
 * -f FILTER (JSON), -d DIR (record in DIR's store), -b backoff_base_ms,
 * -N (no NIP-11 fetch), -c CA (tls.ca_file).
 *
 * "prog_relay -M N [-c CA] URL" instead adds N relays URL/m1 .. URL/mN
 * (distinct URLs, one server), waits until all are open and idle, and
 * prints the heap (mallinfo2) they hold through the pool: relay, ws, TLS
 * and socket state, the CA chain excepted (shared by every connection).
 * Exit 0 when N relays finished, 1 on timeout, 2 on usage errors.
 */
#include <malloc.h>
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
#include "relay/relay.h"
#include "store/store.h"
#include "sync/ingest.h"
#include "sync/relays_obs.h"

#define MAX_RELAYS	8

struct target {
	const char	*url;
	struct pool_sub	*sub;
	int		 eose;
	char		 closed[128];
	unsigned	 events, valid, invalid;
	int		 ok;		/* -1 none, 0 refused, 1 accepted */
	uint8_t		 pub_id[32];
	int		 published;
	unsigned	 resent;
};

static struct target	 targets[MAX_RELAYS];
static size_t		 ntargets;
static struct pool	*pool;
static struct buf	 scratch;
static struct filter	 filt;
static struct nostr_key	 key;
static int		 have_key, publish;

static void
on_event(struct pool_sub *s, struct relay_msg *m, void *arg)
{
	struct target	*t = arg;
	struct event	 ev;

	t->events++;
	if (m->event_raw == NULL || event_validate(&ev, m->event_raw,
	    m->event_raw_len, 1024 * 1024, clock_wall_s(), &scratch) !=
	    EVENT_OK) {
		t->invalid++;
		pool_sub_note_invalid(s);
		return;
	}
	t->valid++;
	event_free(&ev);
}

static void
on_eose(struct pool_sub *s, void *arg)
{
	struct target	*t = arg;

	t->eose = 1;
	t->resent = pool_sub_resent(s);
}

static void
on_closed(struct pool_sub *s, enum relay_reason r, const char *msg, void *arg)
{
	struct target	*t = arg;

	(void)r;
	snprintf(t->closed, sizeof(t->closed), "%s", msg[0] ? msg : "?");
	t->resent = pool_sub_resent(s);
	t->sub = NULL;
}

static const struct pool_sub_cbs cbs = { on_event, on_eose, on_closed };

static void
subscribe(struct target *t)
{
	struct filter	f;
	char		json[128], hex[65];

	if (publish) {
		hex_encode(t->pub_id, 32, hex, sizeof(hex));
		snprintf(json, sizeof(json), "{\"ids\":[\"%s\"]}", hex);
		if (filter_parse_text(&f, json, strlen(json), json, sizeof(json)) == -1)
			exit(2);
		t->sub = pool_sub_open(pool, t->url, &f, 1, &cbs, t);
		filter_free(&f);
	} else
		t->sub = pool_sub_open(pool, t->url, &filt, 1, &cbs, t);
	if (t->sub == NULL)
		exit(2);
}

static void
on_ok(const uint8_t id[32], bool ok, enum relay_reason r, const char *msg,
    void *arg)
{
	struct target	*t = arg;

	(void)id;
	(void)r;
	t->ok = ok ? 1 : 0;
	if (!ok)
		snprintf(t->closed, sizeof(t->closed), "publish: %s", msg);
	else
		subscribe(t);
}

/* Publish once the relay is open (pool_publish refuses before). */
static void
try_publish(struct target *t)
{
	struct event	ev;
	struct buf	b;
	char		content[64];

	if (t->published)
		return;
	snprintf(content, sizeof(content), "prog_relay %lld",
	    (long long)clock_wall_s());
	if (event_create(&ev, &key, 1, clock_wall_s(), NULL, content) !=
	    EVENT_OK)
		exit(2);
	buf_init(&b, 65536);
	if (event_to_json(&ev, &b) == -1)
		exit(2);
	if (pool_publish(pool, t->url, buf_cstr(&b), b.len, on_ok, t) == 0) {
		t->published = 1;
		memcpy(t->pub_id, ev.id, 32);
	}
	buf_free(&b);
	event_free(&ev);
}

static void
report(const struct target *t)
{
	struct pool_relay_info	i;

	if (pool_relay_info_url(pool, t->url, &i) == -1)
		return;
	printf("relay %s state=%s eose=%d closed=%s events=%u valid=%u "
	    "invalid=%u resent=%u reqs=%llu auth=%llu authenticated=%d "
	    "notices=%llu bad=%llu dropped=%llu failures=%u ok=%s "
	    "last_error=%s\n", t->url, i.state_name, t->eose,
	    t->closed[0] ? t->closed : "-", t->events, t->valid, t->invalid,
	    t->resent, (unsigned long long)i.reqs, (unsigned long long)i.auth,
	    i.authenticated, (unsigned long long)i.notices,
	    (unsigned long long)i.invalid, (unsigned long long)i.dropped,
	    i.failures, t->ok < 0 ? "-" : t->ok ? "1" : "0",
	    i.last_error[0] ? i.last_error : "-");
}

static size_t
finished(void)
{
	size_t	i, n = 0;

	for (i = 0; i < ntargets; i++)
		if (targets[i].eose || targets[i].closed[0])
			n++;
	return n;
}

/* How many of the pool's relays are open. */
static size_t
open_count(void)
{
	struct pool_relay_info	 info;
	size_t			 i, n = 0;

	for (i = 0; pool_relay_info(pool, i, &info) == 0; i++)
		n += info.state == RELAY_OPEN;
	return n;
}

/* The -M mode: heap held by n idle open relays; 0, or 1 if not all open. */
static int
mem(struct loop *loop, const char *base, int n, const char *ca)
{
	struct tls_ctx		*keep = NULL;
	struct mallinfo2	 a, b;
	char			 url[URL_MAX_BYTES + 1], err[128];
	uint64_t		 end;
	size_t			 held;
	int			 i;

	if (n < 1 || n > 1000)
		return 2;
	/* The CA set is loaded once for all connections: keep it outside. */
	if (strncmp(base, "wss:", 4) == 0 &&
	    (keep = tls_ctx_get(ca, err, sizeof(err))) == NULL) {
		fprintf(stderr, "prog_relay: %s\n", err);
		return 2;
	}
	malloc_trim(0);
	a = mallinfo2();
	for (i = 1; i <= n; i++) {
		snprintf(url, sizeof(url), "%s/m%d", base, i);
		if (pool_relay_add(pool, url, RELAY_ROLE_CUSTOM) == NULL)
			return 2;
	}
	end = clock_mono_ms() + 20000;
	while (open_count() < (size_t)n && clock_mono_ms() < end)
		(void)loop_run_once(loop, 20);
	for (i = 0; i < 5; i++)
		(void)loop_run_once(loop, 10);
	b = mallinfo2();
	held = b.uordblks - a.uordblks;
	printf("mem: %zu of %d idle %s relays open through the pool hold %zu "
	    "heap bytes, %zu per relay (struct relay %zu)\n", open_count(), n,
	    keep != NULL ? "wss" : "ws", held, held / (size_t)n,
	    sizeof(struct relay));
	tls_ctx_put(keep);
	return open_count() == (size_t)n ? 0 : 1;
}

int
main(int argc, char **argv)
{
	struct pool_opts	 o;
	struct loop		*loop;
	struct store		*st = NULL;
	struct ingest		*ing = NULL;
	struct relays_obs	*obs = NULL;
	const char		*ftext = "{\"kinds\":[1],\"limit\":50}";
	const char		*dir = NULL;
	char			 err[256];
	uint8_t			 sk[32];
	uint64_t		 end;
	size_t			 want = 0, i;
	int			 c, secs = 20, mem_n = 0;

	memset(&o, 0, sizeof(o));
	while ((c = getopt(argc, argv, "t:p:kPn:f:d:b:Nc:M:")) != -1) {
		switch (c) {
		case 't': secs = atoi(optarg); break;
		case 'p': o.conf.pace_ms = (uint32_t)atoi(optarg); break;
		case 'k': have_key = 1; break;
		case 'P': publish = have_key = 1; break;
		case 'n': want = (size_t)atoi(optarg); break;
		case 'f': ftext = optarg; break;
		case 'd': dir = optarg; break;
		case 'b': o.conf.backoff_base_ms = (uint32_t)atoi(optarg); break;
		case 'N': o.no_nip11 = true; break;
		case 'c': o.conf.ca_file = optarg; break;
		case 'M': mem_n = atoi(optarg); break;
		default: return 2;
		}
	}
	log_init(stderr, LOG_LEVEL_INFO);
	for (; optind < argc && ntargets < MAX_RELAYS; optind++) {
		targets[ntargets].ok = -1;
		targets[ntargets++].url = argv[optind];
	}
	if (ntargets == 0 || filter_parse_text(&filt, ftext, strlen(ftext),
	    err, sizeof(err)) == -1) {
		fprintf(stderr, "usage: prog_relay [opts] URL... (%s)\n", err);
		return 2;
	}
	if (want == 0 || want > ntargets)
		want = ntargets;
	if (have_key) {
		if (tls_random(sk, sizeof(sk)) == -1 || key_from_secret(&key, sk) == -1)
			return 2;
		o.conf.key = &key;
	}
	if (dir != NULL && store_open(&st, dir, err, sizeof(err)) == -1) {
		fprintf(stderr, "store: %s\n", err);
		return 2;
	}
	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	if ((loop = loop_new()) == NULL || (o.conf.dns = dns_new(loop)) == NULL)
		return 2;
	if (st != NULL && (ing = ingest_new(loop, st)) != NULL &&
	    (obs = relays_obs_new(st, ing)) != NULL)
		o.observer = relays_obs_observer(obs);
	o.conf.ping_ms = 2000;
	o.conf.dead_ms = 6000;
	o.conf.ratelimit_base_ms = 300;
	if ((pool = pool_new(loop, &o)) == NULL)
		return 2;
	if (mem_n != 0)
		c = mem(loop, targets[0].url, mem_n, o.conf.ca_file);
	for (i = 0; mem_n == 0 && i < ntargets; i++) {
		if (pool_relay_add(pool, targets[i].url, RELAY_ROLE_CUSTOM) == NULL)
			return 2;
		if (!publish)
			subscribe(&targets[i]);
	}
	end = clock_mono_ms() + (uint64_t)secs * 1000;
	while (mem_n == 0 && finished() < want && clock_mono_ms() < end) {
		if (loop_run_once(loop, 50) == -1)
			break;
		for (i = 0; publish && i < ntargets; i++)
			try_publish(&targets[i]);
	}
	for (i = 0; mem_n == 0 && i < ntargets; i++)
		report(&targets[i]);
	fflush(stdout);
	if (mem_n == 0)
		c = finished() >= want ? 0 : 1;
	/* Releases every connection before returning: no extra round. */
	pool_free(pool);
	relays_obs_free(obs);
	ingest_free(ing);
	dns_free(o.conf.dns);
	loop_free(loop);
	store_close(st);
	filter_free(&filt);
	buf_free(&scratch);
	return c;
}
