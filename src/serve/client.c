/*
 * client.c — one client of the relay endpoint: its WebSocket (ws_serve),
 * its state, the dispatch of its messages (a table by type), NIP-42 AUTH
 * and the EVENTs it may write. Subscriptions are sub.c's, NIP-77
 * sessions neg.c's.
 *
 * It never frees a client inside the client's own callbacks (peer_on_close
 * only marks it; the server reaps it at the top of the loop), never
 * answers a message it could not read with more than one NOTICE or
 * CLOSED, and never lets what waits for a client grow past
 * RELAYD_SEND_QUEUE_MAX: a send refused there cuts the client off.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/boxnames.h"
#include "net/tls.h"
#include "net/ws.h"
#include "net/ws_serve.h"
#include "nostr/event.h"
#include "nostr/nip19.h"
#include "serve/serve_int.h"
#include "serve/wire.h"
#include "store/events.h"
#include "store/follows.h"
#include "sync/ingest.h"

#define AUTH_KIND	22242

static int
client_ok(struct client *c, const uint8_t id[32], bool accepted,
    const char *msg)
{
	buf_reset(&c->srv->frame);
	if (wire_ok(&c->srv->frame, id, accepted, msg) == -1)
		return -1;
	return client_send_frame(c);
}

/* ---- keys ----------------------------------------------------------------- */

/* Whether pk is one of the comma-separated keys (npub or hex) of list. */
static bool
key_in_list(const char *list, const uint8_t pk[32])
{
	char		 item[128];
	uint8_t		 k[32];
	const char	*p = list;
	size_t		 n;

	while (*p != '\0') {
		n = strcspn(p, ",");
		if (n < sizeof(item)) {
			memcpy(item, p, n);
			item[n] = '\0';
			if (nip19_pubkey_parse(item, k) == 0 &&
			    memcmp(k, pk, 32) == 0)
				return true;
		}
		p += n + (p[n] == ',');
	}
	return false;
}

/* relay.auth: whether a client authenticated as pk may read. */
static bool
may_read_as(const struct serve *srv, const uint8_t pk[32])
{
	return key_in_list(config_get(srv->cfg, "follow.roots"), pk) ||
	    key_in_list(config_get(srv->cfg, "relay.readers"), pk);
}

/*
 * relay.accept: NULL when an event signed by pk may be stored, else the
 * OK message that refuses it.
 */
static const char *
write_refusal(struct serve *srv, const uint8_t pk[32])
{
	const char		*accept = config_get(srv->cfg, "relay.accept");
	struct store_follow	 f;

	if (strcmp(accept, "none") == 0)
		return "blocked: read-only cache";
	if (key_in_list(config_get(srv->cfg, "follow.roots"), pk))
		return NULL;
	if (strcmp(accept, "roots") == 0)
		return "blocked: only events signed by the box's roots are "
		    "stored here";
	if (store_follow_get(srv->st, pk, &f) == 1 && !f.stale)
		return NULL;
	return "blocked: only events signed by keys the box follows are "
	    "stored here";
}

/* ---- EVENT and AUTH ------------------------------------------------------- */

/* The id and pubkey an event object claims (unverified). 0 or -1. */
static int
event_claimed(const struct wire_msg *m, uint8_t id[32], uint8_t pk[32])
{
	const cJSON	*ev = cJSON_GetArrayItem(m->root, 1);
	const cJSON	*i = cJSON_GetObjectItemCaseSensitive(ev, "id");
	const cJSON	*p = cJSON_GetObjectItemCaseSensitive(ev, "pubkey");

	if (!cJSON_IsString(i) || !cJSON_IsString(p) ||
	    hex_decode(i->valuestring, strlen(i->valuestring), id, 32) == -1 ||
	    hex_decode(p->valuestring, strlen(p->valuestring), pk, 32) == -1)
		return -1;
	return 0;
}

/* NIP-70: whether the event object of m carries the tag ["-"]. */
static bool
event_protected(const struct wire_msg *m)
{
	const cJSON	*tags = cJSON_GetObjectItemCaseSensitive(
			    cJSON_GetArrayItem(m->root, 1), "tags");
	const cJSON	*t;

	cJSON_ArrayForEach(t, tags) {
		if (cJSON_IsString(t->child) &&
		    strcmp(t->child->valuestring, "-") == 0)
			return true;
	}
	return false;
}

static void client_challenge_send(struct client *);

/*
 * NIP-70: NULL when a protected event signed by pk may be taken from c
 * (c authenticated as pk), else the OK message that refuses it. A client
 * that has not authenticated is sent a challenge with the refusal, so it
 * can, whatever relay.auth is.
 */
static const char *
protected_refusal(struct client *c, const uint8_t pk[32])
{
	if (c->authed && memcmp(c->auth_pubkey, pk, 32) == 0)
		return NULL;
	if (c->authed)
		return "restricted: a protected event (NIP-70) is taken only "
		    "from its author, and this connection authenticated as "
		    "another key";
	client_challenge_send(c);
	return "auth-required: a protected event (NIP-70) is taken only "
	    "from its author: authenticate as it (NIP-42) and send it again";
}

static const char *
ingest_answer(enum ingest_result r, const struct ingest_info *info,
    bool *accepted)
{
	*accepted = r == INGEST_NEW || r == INGEST_DUPLICATE;
	switch (r) {
	case INGEST_NEW:
		return "";
	case INGEST_DUPLICATE:
		if (info->not_kept == STORE_INSERT_OLDER)
			return "duplicate: a newer version of this event is "
			    "held";
		if (info->not_kept == STORE_INSERT_EXPIRED) {
			*accepted = false;
			return "invalid: this event has expired (NIP-40)";
		}
		return "duplicate: already have this event";
	case INGEST_INVALID:
		return info->why != EVENT_OK ? event_result_str(info->why) :
		    "invalid: an event with this id is stored with another "
		    "author, time or kind";
	case INGEST_TOO_LARGE:
		return "invalid: event too large";
	default:
		return "error: the event could not be stored";
	}
}

static void
client_event(struct client *c, struct wire_msg *m)
{
	struct serve		*srv = c->srv;
	struct ingest_info	 info;
	enum ingest_result	 r;
	const char		*why;
	uint8_t			 id[32], pk[32];
	bool			 ok;

	if (event_claimed(m, id, pk) == -1) {
		srv->stats.writes_refused++;
		client_notice(c, "invalid: the event has no readable id or "
		    "pubkey");
		return;
	}
	if ((why = write_refusal(srv, pk)) != NULL) {
		srv->stats.writes_refused++;
		client_ok(c, id, false, why);
		return;
	}
	if (event_protected(m) && (why = protected_refusal(c, pk)) != NULL) {
		srv->stats.writes_refused++;
		srv->stats.protected_refused++;
		client_ok(c, id, false, why);
		return;
	}
	r = ingest_event_json(srv->ing, m->event, m->event_len, NULL, 0,
	    INGEST_CLIENT, NULL, &info);
	why = ingest_answer(r, &info, &ok);
	/*
	 * OK true promises the event is kept: commit ingest's batch before
	 * saying so (a crash inside the batch would lose it).
	 */
	if (r == INGEST_NEW && ingest_flush(srv->ing) == -1) {
		ok = false;
		why = "error: the event could not be stored; try again";
		r = INGEST_ERROR;
	}
	if (r == INGEST_NEW)
		srv->stats.writes_accepted++;
	else if (!ok)
		srv->stats.writes_refused++;
	client_ok(c, id, ok, why);
}

/*
 * Whether the tag name of ev has the value want, or (want NULL) a value
 * that is a ws:// or wss:// URL of this box (net/boxnames.h).
 */
static bool
has_tag(const struct serve *srv, const struct event *ev, const char *name,
    const char *want)
{
	const cJSON	*t, *k, *v;

	for (t = ev->tags != NULL ? ev->tags->child : NULL; t != NULL;
	    t = t->next) {
		if ((k = t->child) == NULL || (v = k->next) == NULL ||
		    strcmp(k->valuestring, name) != 0)
			continue;
		if (want == NULL ? boxnames_relay_url_ok(srv->cfg,
		    v->valuestring) : strcmp(v->valuestring, want) == 0)
			return true;
	}
	return false;
}

/* NIP-42: why an AUTH event is refused, or NULL when it proves its key. */
static const char *
auth_check(struct client *c, const struct event *ev)
{
	int64_t	now = clock_wall_s();

	if (c->challenge[0] == '\0')
		return "invalid: this relay sent no challenge (relay.auth is "
		    "none)";
	if (ev->kind != AUTH_KIND)
		return "invalid: an AUTH event has kind 22242";
	if (ev->created_at < now - RELAYD_AUTH_WINDOW_S ||
	    ev->created_at > now + RELAYD_AUTH_WINDOW_S)
		return "invalid: created_at is too far from now";
	if (!has_tag(c->srv, ev, "challenge", c->challenge))
		return "invalid: the challenge tag does not match";
	if (!has_tag(c->srv, ev, "relay", NULL))
		return "invalid: the relay tag does not name this relay (its "
		    "ws:// or wss:// URL: cachebox.local, its host name, an "
		    "address of the box or a name of box.names)";
	return NULL;
}

static void
client_auth(struct client *c, struct wire_msg *m)
{
	struct event		 ev;
	struct buf		 scratch;
	enum event_result	 er;
	const char		*why;

	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	er = event_validate(&ev, m->event, m->event_len, RELAYD_MAX_MSG_BYTES,
	    clock_wall_s(), &scratch);
	buf_free(&scratch);
	if (er != EVENT_OK) {
		client_ok(c, ev.id, false, event_result_str(er));
		return;
	}
	if ((why = auth_check(c, &ev)) != NULL) {
		client_ok(c, ev.id, false, why);
		event_free(&ev);
		return;
	}
	c->authed = true;
	memcpy(c->auth_pubkey, ev.pubkey, 32);
	/* relay.auth = none: reads stay open whoever authenticates */
	c->may_read = c->may_read || may_read_as(c->srv, ev.pubkey);
	log_info("relay: client %s authenticated%s", c->addr, c->may_read ?
	    "" : " with a key that may not read");
	client_ok(c, ev.id, true, "");
	event_free(&ev);
}

/* ---- dispatch ------------------------------------------------------------- */

/* Reads are refused before AUTH when relay.auth = owners. */
static const char *
read_refusal(struct client *c)
{
	if (c->may_read || strcmp(config_get(c->srv->cfg, "relay.auth"),
	    "owners") != 0)
		return NULL;
	return c->authed ? "restricted: this key may not read from this relay" :
	    "auth-required: this relay serves its owners only (NIP-42)";
}

static void
d_req(struct client *c, struct wire_msg *m)
{
	const char	*why;

	if ((why = read_refusal(c)) != NULL) {
		client_closed(c, m->subid, why);
		return;
	}
	sub_req(c, m);
}

static void
d_count(struct client *c, struct wire_msg *m)
{
	const char	*why;

	if ((why = read_refusal(c)) != NULL) {
		client_closed(c, m->subid, why);
		return;
	}
	sub_count(c, m);
}

static void
d_close(struct client *c, struct wire_msg *m)
{
	sub_close_msg(c, m->subid);
}

static void
d_neg_open(struct client *c, struct wire_msg *m)
{
	const char	*why;

	if ((why = read_refusal(c)) != NULL) {
		buf_reset(&c->srv->frame);
		if (wire_neg_err(&c->srv->frame, m->subid, why) == 0)
			client_send_frame(c);
		return;
	}
	neg_open(c, m);
}

static void
d_neg_close(struct client *c, struct wire_msg *m)
{
	neg_close(c, m->subid);
}

static const struct {
	enum wire_type	 type;
	void		(*fn)(struct client *, struct wire_msg *);
} dispatch[] = {
	{ WIRE_REQ, d_req },
	{ WIRE_CLOSE, d_close },
	{ WIRE_EVENT, client_event },
	{ WIRE_COUNT, d_count },
	{ WIRE_AUTH, client_auth },
	{ WIRE_NEG_OPEN, d_neg_open },
	{ WIRE_NEG_MSG, neg_msg },
	{ WIRE_NEG_CLOSE, d_neg_close },
};

/* Answer a message that was refused: CLOSED, NEG-ERR or NOTICE. */
static void
client_refused(struct client *c, const struct wire_msg *m, const char *why)
{
	c->srv->stats.bad_messages++;
	c->refused++;
	if (m->subid[0] != '\0' && (m->type == WIRE_REQ ||
	    m->type == WIRE_COUNT)) {
		client_closed(c, m->subid, why);
		return;
	}
	if (m->subid[0] != '\0' && (m->type == WIRE_NEG_OPEN ||
	    m->type == WIRE_NEG_MSG)) {
		buf_reset(&c->srv->frame);
		if (wire_neg_err(&c->srv->frame, m->subid, why) == 0)
			client_send_frame(c);
		return;
	}
	client_notice(c, why);
}

static void
peer_on_message(struct ws_peer *p, const char *msg, size_t len, void *arg)
{
	struct client	*c = arg;
	struct wire_msg	 m;
	char		 why[RELAYD_NOTICE_MAX];
	size_t		 i;

	if (c->state != CLIENT_OPEN)
		return;
	c->last_msg_ms = loop_now_ms(c->srv->loop);
	if (wire_parse(&m, msg, len, RELAYD_MAX_FILTERS, why,
	    sizeof(why)) == -1) {
		client_refused(c, &m, why);
		return;
	}
	for (i = 0; i < sizeof(dispatch) / sizeof(dispatch[0]); i++)
		if (dispatch[i].type == m.type) {
			dispatch[i].fn(c, &m);
			break;
		}
	wire_free(&m);
}

static void
peer_on_too_big(struct ws_peer *p, uint64_t declared, void *arg)
{
	struct client	*c = arg;
	char		 why[RELAYD_NOTICE_MAX];

	c->srv->stats.bad_messages++;
	snprintf(why, sizeof(why), "error: a message of %llu bytes is over "
	    "this relay's limit of %d bytes (NIP-11 max_message_length); "
	    "closing", (unsigned long long)declared, RELAYD_MAX_MSG_BYTES);
	client_notice(c, why);
}

static void
peer_on_drain(struct ws_peer *p, void *arg)
{
	struct client	*c = arg;

	c->paused = false;
	sub_resume_client(c);
}

static void
peer_on_close(struct ws_peer *p, int code, const char *reason, void *arg)
{
	struct client	*c = arg;

	log_debug("relay: client %s closed: %d %s", c->addr, code, reason);
	sub_free_all(c);
	client_set_state(c, CLIENT_DEAD);
}

/* ---- life ------------------------------------------------------------------ */

/*
 * A fresh challenge, sent once per connection: at once with relay.auth =
 * owners, else with the first refusal that asks for AUTH (NIP-70).
 */
static void
client_challenge_send(struct client *c)
{
	uint8_t	b[RELAYD_CHALLENGE_BYTES];

	if (c->challenge[0] != '\0')
		return;
	if (tls_random(b, sizeof(b)) == -1)
		return;		/* no challenge: reads stay refused */
	hex_encode(b, sizeof(b), c->challenge, sizeof(c->challenge));
	buf_reset(&c->srv->frame);
	if (wire_auth(&c->srv->frame, c->challenge) == 0)
		client_send_frame(c);
}

static void
client_challenge(struct client *c)
{
	c->may_read = strcmp(config_get(c->srv->cfg, "relay.auth"),
	    "owners") != 0;
	if (!c->may_read)
		client_challenge_send(c);
}

struct client *
client_new(struct serve *srv, int fd, const char *extra, size_t extra_len,
    struct MHD_UpgradeResponseHandle *urh, const char *addr)
{
	static const struct ws_peer_cbs	cbs = {
		peer_on_message, peer_on_too_big, peer_on_drain, peer_on_close
	};
	const struct ws_peer_opts	o = {
		.max_msg_bytes = RELAYD_MAX_MSG_BYTES,
		.input = &srv->input,
		.send_high_water = RELAYD_SEND_HIGH_WATER,
		.send_queue_max = RELAYD_SEND_QUEUE_MAX,
		.ping_ms = RELAYD_PING_MS,
		.dead_ms = RELAYD_DEAD_MS,
		.linger_ms = RELAYD_CLOSE_LINGER_MS,
	};
	struct client			*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->srv = srv;
	c->fd = fd;
	c->urh = urh;
	c->connected_ms = c->last_msg_ms = loop_now_ms(srv->loop);
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	TAILQ_INIT(&c->subs);
	TAILQ_INIT(&c->negs);
	if ((c->peer = ws_peer_new(srv->loop, fd, extra, extra_len, &o, &cbs,
	    c)) == NULL) {
		free(c);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&srv->clients, c, entry);
	srv->nclients++;
	srv->stats.connections++;
	client_challenge(c);
	return c;
}

void
client_free(struct client *c)
{
	struct serve	*srv = c->srv;

	sub_free_all(c);
	if (c->peer != NULL) {
		srv->stats.bytes_out += ws_peer_bytes_out(c->peer);
		ws_peer_free(c->peer);
	}
	TAILQ_REMOVE(&srv->clients, c, entry);
	srv->nclients--;
	free(c);
}
