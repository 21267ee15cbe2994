/*
 * prog_interop.c — the relay pool against a relay written by someone else
 * (npm_relay.mjs: @nostr-relay/core on its SQLite repository), started by
 * test_npm_relay_interop.sh, which passes its URL as the only argument.
 * Everything goes through the pool API a planner uses:
 *
 *   publish N fresh signed notes      -> N x OK true, no prefix
 *   publish the first one again       -> OK true "duplicate: ..."
 *   publish a note with a bad sig     -> OK false "invalid: ..."
 *   publish a note with a wrong id    -> OK false "invalid: ..."
 *   REQ {authors: [ours]}             -> exactly the N notes, then EOSE
 *   REQ {authors, limit: 2}           -> the 2 newest, then EOSE
 *   publish one more while both live  -> it arrives on both after EOSE
 *
 * and the relay's counters in pool_relay_info() match those numbers.
 * Prints one "ok"/"not ok" line per check; exit 1 if any failed, 2 when it
 * could not even start.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/tls.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "nostr/key.h"
#include "relay/pool.h"

#define NOTES		5
#define WAIT_MS		10000

static struct loop	*L;
static struct pool	*P;
static const char	*url;
static struct nostr_key	 key;
static struct buf	 scratch;
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

/* Run the loop until *flag or ms pass; whether the flag was set. */
static bool
wait_for(const bool *flag, uint64_t ms)
{
	uint64_t	 end = clock_mono_ms() + ms;

	while (!*flag && clock_mono_ms() < end)
		if (loop_run_once(L, 50) == -1)
			break;
	return *flag;
}

/* One publish and its answer. */
struct pub {
	bool			 done, accepted;
	enum relay_reason	 reason;
	char			 text[256];
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

/* A new signed kind-1 note at created_at; how = 's' bad sig, 'i' bad id. */
static void
make_note(struct event *ev, int64_t created_at, int n, char how)
{
	char	 content[64];

	snprintf(content, sizeof(content), "interop note %d at %lld", n,
	    (long long)created_at);
	if (event_create(ev, &key, 1, created_at, NULL, content) != EVENT_OK) {
		fprintf(stderr, "prog_interop: event_create failed\n");
		exit(2);
	}
	if (how == 's')
		ev->sig[10] ^= 0x01;
	else if (how == 'i')
		ev->id[31] ^= 0x01;
}

/* Publish ev through the pool and wait for its OK into p. */
static void
publish(const struct event *ev, struct pub *p)
{
	struct buf	 b;

	memset(p, 0, sizeof(*p));
	buf_init(&b, 65536);
	if (event_to_json(ev, &b) == -1 ||
	    pool_publish(P, url, buf_cstr(&b), b.len, on_ok, p) == -1) {
		snprintf(p->text, sizeof(p->text), "pool_publish refused");
		p->done = true;
	} else
		(void)wait_for(&p->done, WAIT_MS);
	buf_free(&b);
}

/* One subscription: the events it got (ids in order) and EOSE. */
struct sub {
	struct pool_sub	*h;
	bool		 eose, closed;
	unsigned	 events, valid, after_eose;
	uint8_t		 ids[NOTES + 4][32];
	char		 why[128];
};

static void
on_event(struct pool_sub *s, struct relay_msg *m, void *arg)
{
	struct sub	*u = arg;
	struct event	 ev;

	(void)s;
	if (u->eose)
		u->after_eose++;
	if (m->event_raw == NULL || event_validate(&ev, m->event_raw,
	    m->event_raw_len, 65536, clock_wall_s(), &scratch) != EVENT_OK)
		return;
	if (u->events < NOTES + 4)
		memcpy(u->ids[u->events], ev.id, 32);
	u->events++;
	u->valid++;
	event_free(&ev);
}

static void
on_eose(struct pool_sub *s, void *arg)
{
	(void)s;
	((struct sub *)arg)->eose = true;
}

static void
on_closed(struct pool_sub *s, enum relay_reason r, const char *text, void *arg)
{
	struct sub	*u = arg;

	(void)s;
	(void)r;
	u->closed = true;
	snprintf(u->why, sizeof(u->why), "%s", text);
}

static const struct pool_sub_cbs sub_cbs = { on_event, on_eose, on_closed };

static void
subscribe(struct sub *u, const char *json)
{
	struct filter	 f;
	char		 err[128];

	memset(u, 0, sizeof(*u));
	if (filter_parse_text(&f, json, strlen(json), err, sizeof(err)) == -1) {
		fprintf(stderr, "prog_interop: filter %s: %s\n", json, err);
		exit(2);
	}
	u->h = pool_sub_open(P, url, &f, 1, &sub_cbs, u);
	filter_free(&f);
	if (u->h == NULL) {
		fprintf(stderr, "prog_interop: pool_sub_open refused\n");
		exit(2);
	}
}

static bool
relay_open(void)
{
	struct pool_relay_info	 i;
	uint64_t		 end = clock_mono_ms() + WAIT_MS;

	while (clock_mono_ms() < end) {
		if (pool_relay_info_url(P, url, &i) == 0 &&
		    i.state == RELAY_OPEN)
			return true;
		(void)loop_run_once(L, 50);
	}
	return false;
}

static void
scenario(void)
{
	struct event		 notes[NOTES + 1], bad;
	struct pub		 p;
	struct sub		 all, two;
	struct pool_relay_info	 i;
	char			 pk[65], fj[256];
	int64_t			 t0 = clock_wall_s() - 100;
	int			 n, accepted = 0;

	for (n = 0; n <= NOTES; n++)
		make_note(&notes[n], t0 + n, n, 0);
	for (n = 0; n < NOTES; n++) {
		publish(&notes[n], &p);
		if (p.accepted && p.reason == RELAY_REASON_NONE)
			accepted++;
		else
			printf("# note %d: accepted=%d \"%s\"\n", n, p.accepted,
			    p.text);
	}
	check(accepted == NOTES, "%d new notes: OK true without a prefix (%d)",
	    NOTES, accepted);
	publish(&notes[0], &p);
	check(p.done && p.accepted && p.reason == RELAY_REASON_DUPLICATE &&
	    strncmp(p.text, "duplicate:", 10) == 0,
	    "the same note again: OK true duplicate (accepted=%d \"%s\")",
	    p.accepted, p.text);
	make_note(&bad, t0, 100, 's');
	publish(&bad, &p);
	check(p.done && !p.accepted && p.reason == RELAY_REASON_INVALID,
	    "bad signature: OK false invalid (accepted=%d \"%s\")", p.accepted,
	    p.text);
	event_free(&bad);
	make_note(&bad, t0, 101, 'i');
	publish(&bad, &p);
	check(p.done && !p.accepted && p.reason == RELAY_REASON_INVALID,
	    "wrong id: OK false invalid (accepted=%d \"%s\")", p.accepted,
	    p.text);
	event_free(&bad);

	hex_encode(key.pubkey, 32, pk, sizeof(pk));
	snprintf(fj, sizeof(fj), "{\"authors\":[\"%s\"]}", pk);
	subscribe(&all, fj);
	snprintf(fj, sizeof(fj), "{\"authors\":[\"%s\"],\"limit\":2}", pk);
	subscribe(&two, fj);
	(void)wait_for(&all.eose, WAIT_MS);
	(void)wait_for(&two.eose, WAIT_MS);
	check(all.eose && !all.closed && all.events == NOTES &&
	    all.valid == NOTES, "REQ authors: %d valid notes then EOSE "
	    "(events=%u valid=%u eose=%d %s)", NOTES, all.events, all.valid,
	    all.eose, all.why);
	for (n = 0; n < NOTES && n < (int)all.events; n++)
		if (memcmp(all.ids[n], notes[NOTES - 1 - n].id, 32) != 0)
			break;
	check(n == NOTES, "REQ authors: newest first, the ids published "
	    "(%d in order)", n);
	check(two.eose && two.events == 2 &&
	    memcmp(two.ids[0], notes[NOTES - 1].id, 32) == 0 &&
	    memcmp(two.ids[1], notes[NOTES - 2].id, 32) == 0,
	    "REQ limit 2: the two newest then EOSE (events=%u)", two.events);

	publish(&notes[NOTES], &p);
	check(p.accepted && p.reason == RELAY_REASON_NONE,
	    "one more note while subscribed: OK true (\"%s\")", p.text);
	{
		uint64_t end = clock_mono_ms() + WAIT_MS;

		while ((all.after_eose < 1 || two.after_eose < 1) &&
		    clock_mono_ms() < end)
			(void)loop_run_once(L, 50);
	}
	check(all.after_eose == 1 && two.after_eose == 1 &&
	    memcmp(all.ids[NOTES], notes[NOTES].id, 32) == 0,
	    "live: the new note arrived once on each subscription after EOSE "
	    "(%u, %u)", all.after_eose, two.after_eose);

	if (pool_relay_info_url(P, url, &i) == -1) {
		check(false, "relay info");
		return;
	}
	check(i.state == RELAY_OPEN && i.failures == 0 &&
	    i.reqs == 2 && i.eose == 2 && i.events == NOTES + 2 + 2 &&
	    i.invalid == 0 && i.dropped == 0 && i.closed == 0 &&
	    i.subs_open == 2 && i.subs_queued == 0,
	    "pool counters: state=%s failures=%u reqs=%llu eose=%llu "
	    "events=%llu invalid=%llu dropped=%llu closed=%llu open=%zu",
	    i.state_name, i.failures, (unsigned long long)i.reqs,
	    (unsigned long long)i.eose, (unsigned long long)i.events,
	    (unsigned long long)i.invalid, (unsigned long long)i.dropped,
	    (unsigned long long)i.closed, i.subs_open);
	pool_sub_close(all.h);
	pool_sub_close(two.h);
	for (n = 0; n <= NOTES; n++)
		event_free(&notes[n]);
}

int
main(int argc, char **argv)
{
	struct pool_opts	 o;
	uint8_t			 sk[32];

	if (argc != 2) {
		fprintf(stderr, "usage: prog_interop ws://HOST:PORT\n");
		return 2;
	}
	url = argv[1];
	log_init(stderr, LOG_LEVEL_INFO);
	if (tls_random(sk, sizeof(sk)) == -1 || key_from_secret(&key, sk) == -1)
		return 2;
	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	memset(&o, 0, sizeof(o));
	o.no_nip11 = true;	/* the library serves WebSocket only */
	if ((L = loop_new()) == NULL || (P = pool_new(L, &o)) == NULL ||
	    pool_relay_add(P, url, RELAY_ROLE_CUSTOM) == NULL)
		return 2;
	check(relay_open(), "%s: open through the pool", url);
	if (failures == 0)
		scenario();
	printf("%d failed\n", failures);
	pool_free(P);		/* synchronous: no round needed after it */
	loop_free(L);
	buf_free(&scratch);
	return failures > 0;
}
