/*
 * cmd_sync.c — `follows` and `backfill reset`. Progress is read through
 * the store's follows and cursors families; a reset goes through the drain
 * so steps in flight for the author are dropped before its cursors move
 * back. These handlers never write SQL themselves and never block beyond
 * the store's reads; a listing stops after FOLLOWS_LIST_MAX_CURSORS cursor
 * rows (and says so) so a reply stays within CTL_MAX_REPLY.
 */
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/minring.h"
#include "nostr/nip19.h"
#include "store/cursors.h"
#include "store/follows.h"
#include "store/names.h"
#include "sync/drain.h"
#include "sync/ingest.h"
#include "sync/negsync.h"
#include "sync/recovery.h"
#include "ui/cmd_sync.h"
#include "ui/commands.h"
#include "ui/reply.h"
#include "ui/status.h"

struct listing {
	struct app	*app;
	cJSON		*list;
	size_t		 rows;
	bool		 truncated;
	bool		 failed;	/* a store read failed: answer an error */
	/* a search: the text asked (lower case), matches seen, page wanted */
	char		 q[FOLLOWS_QUERY_MAX_BYTES + 1];
	int64_t		 total, offset, limit;
};

struct author_progress {
	cJSON		*relays;
	size_t		 n, complete, incomplete;
	size_t		*rows;
	int64_t		 oldest;	/* least until of a started cursor; 0: none */
};

/*
 * args[name] as an integer in [lo, hi] into *out: a JSON number or a
 * decimal string (the console and a query string give strings); def when
 * absent, null or empty. 0, or -1 when it is something else.
 */
static int
arg_count(const cJSON *args, const char *name, int64_t lo, int64_t hi,
    int64_t def, int64_t *out)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(args, name);
	char		*end;
	long long	 n;

	*out = def;
	if (v == NULL || cJSON_IsNull(v) ||
	    (cJSON_IsString(v) && v->valuestring[0] == '\0'))
		return 0;
	if (cJSON_IsNumber(v))
		return json_int(v, lo, hi, out);
	if (!cJSON_IsString(v))
		return -1;
	n = strtoll(v->valuestring, &end, 10);
	if (*end != '\0' || n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

/* The author named by args["author"] into pk: 1 given, 0 absent, -1 bad. */
static int
arg_author(const cJSON *args, uint8_t pk[32])
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(args, "author");

	if (v == NULL || cJSON_IsNull(v) ||
	    (cJSON_IsString(v) && v->valuestring[0] == '\0'))
		return 0;
	if (!cJSON_IsString(v) || nip19_pubkey_parse(v->valuestring, pk) == -1)
		return -1;
	return 1;
}

static int
add_cursor(const struct store_cursor *c, void *arg)
{
	struct author_progress	*ap = arg;
	cJSON			*r;

	ap->n++;
	if (c->state == STORE_CURSOR_COMPLETE)
		ap->complete++;
	else if (c->state == STORE_CURSOR_INCOMPLETE)
		ap->incomplete++;
	if (c->started && (ap->oldest == 0 || c->until_cursor < ap->oldest))
		ap->oldest = c->until_cursor;
	if (*ap->rows >= FOLLOWS_LIST_MAX_CURSORS ||
	    (r = cJSON_CreateObject()) == NULL)
		return 0;
	(*ap->rows)++;
	cJSON_AddStringToObject(r, "url", c->relay);
	cJSON_AddStringToObject(r, "state", store_cursor_state_name(c->state));
	if (c->started)
		cJSON_AddNumberToObject(r, "until", (double)c->until_cursor);
	else
		cJSON_AddNullToObject(r, "until");
	cJSON_AddNumberToObject(r, "pages", (double)c->pages);
	cJSON_AddNumberToObject(r, "events", (double)c->events);
	cJSON_AddNumberToObject(r, "new_events", (double)c->new_events);
	cJSON_AddNumberToObject(r, "stalls", (double)c->stalls);
	if (c->reason[0] != '\0')
		cJSON_AddStringToObject(r, "reason", c->reason);
	if (c->has_gap)
		cJSON_AddNumberToObject(r, "gap_since", (double)c->gap_since);
	cJSON_AddItemToArray(ap->relays, r);
	return 0;
}

static const char *
author_state(const struct author_progress *ap)
{
	/* No row: no relay known for the author, counted incomplete. */
	if (ap->n == 0)
		return "incomplete";
	if (ap->complete == ap->n)
		return "complete";
	if (ap->complete + ap->incomplete == ap->n)
		return "incomplete";
	return "draining";
}

static int
add_follow(const struct store_follow *f, void *arg)
{
	struct listing		*l = arg;
	struct author_progress	 ap = { 0 };
	char			 hex[65], npub[96];
	char			 name[STORE_NAME_MAX_BYTES + 1];
	int64_t			 stored;
	cJSON			*a;

	if ((a = cJSON_CreateObject()) == NULL) {
		l->failed = true;
		return 1;
	}
	hex_encode(f->pubkey, 32, hex, sizeof(hex));
	nip19_encode32(NIP19_NPUB, f->pubkey, npub, sizeof(npub));
	cJSON_AddStringToObject(a, "pubkey", hex);
	cJSON_AddStringToObject(a, "npub", npub);
	if (store_profile_name(l->app->store, f->pubkey, name,
	    sizeof(name)) == 1)
		cJSON_AddStringToObject(a, "name", name);
	else
		cJSON_AddNullToObject(a, "name");
	cJSON_AddBoolToObject(a, "is_root", f->is_root);
	cJSON_AddBoolToObject(a, "stale", f->stale);
	cJSON_AddNumberToObject(a, "events_fetched", (double)f->events_fetched);
	if ((stored = store_author_events(l->app->store, f->pubkey)) < 0)
		l->failed = true;
	cJSON_AddNumberToObject(a, "events_stored", (double)(stored < 0 ? 0 :
	    stored));
	ap.relays = cJSON_CreateArray();
	ap.rows = &l->rows;
	/* A failed read would show the author with fewer relays than it has. */
	if (store_cursors_each(l->app->store, f->pubkey, add_cursor, &ap) ==
	    -1)
		l->failed = true;
	if (ap.n > (size_t)cJSON_GetArraySize(ap.relays))
		l->truncated = true;
	cJSON_AddStringToObject(a, "state", author_state(&ap));
	if (ap.n == 0)
		cJSON_AddStringToObject(a, "reason",
		    STORE_CURSOR_REASON_NORELAY);
	if (ap.oldest > 0)
		cJSON_AddNumberToObject(a, "history_back_to",
		    (double)ap.oldest);
	else
		cJSON_AddNullToObject(a, "history_back_to");
	cJSON_AddNumberToObject(a, "relays_complete", (double)ap.complete);
	cJSON_AddNumberToObject(a, "relays_incomplete", (double)ap.incomplete);
	cJSON_AddItemToObject(a, "relays", ap.relays);
	cJSON_AddItemToArray(l->list, a);
	return 0;
}

/* Whether ASCII-lower-cased text holds q (lower case) as a substring. */
static bool
text_holds(const char *text, const char *q)
{
	size_t	i, j, n = strlen(q);

	for (i = 0; text[i] != '\0'; i++) {
		for (j = 0; j < n && text[i + j] != '\0'; j++)
			if ((text[i + j] >= 'A' && text[i + j] <= 'Z' ?
			    text[i + j] + 32 : text[i + j]) != q[j])
				break;
		if (j == n)
			return true;
	}
	return false;
}

/*
 * Whether f matches the search: its npub or hex key starts with q, or its
 * profile name holds it (from the store's name cache).
 */
static bool
follow_matches(struct listing *l, const struct store_follow *f)
{
	char	key[96], name[STORE_NAME_MAX_BYTES + 1];
	size_t	n = strlen(l->q);

	if (nip19_encode32(NIP19_NPUB, f->pubkey, key, sizeof(key)) ==
	    NIP19_OK && strncmp(key, l->q, n) == 0)
		return true;
	if (hex_encode(f->pubkey, 32, key, sizeof(key)) == 0 &&
	    strncmp(key, l->q, n) == 0)
		return true;
	return store_profile_name(l->app->store, f->pubkey, name,
	    sizeof(name)) == 1 && text_holds(name, l->q);
}

/* store_follows_each: count the matches, list those of the page asked. */
static int
add_match(const struct store_follow *f, void *arg)
{
	struct listing	*l = arg;

	if (!follow_matches(l, f))
		return 0;
	if (l->total >= l->offset && l->total < l->offset + l->limit &&
	    add_follow(f, l) != 0)
		return 1;
	l->total++;
	return 0;
}

/* args["q"], trimmed and lower-cased, into l->q. 0, or -1 when too long. */
static int
arg_query(const cJSON *args, struct listing *l)
{
	const char	*q = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(args, "q"));
	size_t		 n, i;

	l->q[0] = '\0';
	if (q == NULL)
		return 0;
	q += strspn(q, " \t");
	for (n = strlen(q); n > 0 && (q[n - 1] == ' ' || q[n - 1] == '\t'); n--)
		;
	if (n > FOLLOWS_QUERY_MAX_BYTES)
		return -1;
	for (i = 0; i < n; i++)
		l->q[i] = q[i] >= 'A' && q[i] <= 'Z' ? q[i] + 32 : q[i];
	l->q[n] = '\0';
	return 0;
}

/* One author's row (args["author"]), or NULL with *err set. */
static cJSON *
follows_one(struct listing *l, const uint8_t pk[32], cJSON *r)
{
	struct store_follow	f;

	if (store_follow_get(l->app->store, pk, &f) != 1) {
		cJSON_Delete(r);
		return commands_error("follows: not a followed author");
	}
	(void)add_follow(&f, l);	/* 1 only stops a listing; failed is read */
	l->total = 1;
	return r;
}

cJSON *
cmd_follows(struct app *app, const cJSON *args, enum cmd_origin from)
{
	struct listing		 l = { .app = app };
	uint8_t			 pk[32];
	int64_t			 active, stale;
	cJSON			*r;
	int			 which = arg_author(args, pk), rc;

	if (which == -1)
		return commands_error("follows: author must be an npub or 64 "
		    "hex digits");
	if (arg_count(args, "offset", 0, INT64_MAX / 2, 0, &l.offset) == -1 ||
	    arg_count(args, "limit", 1, FOLLOWS_PAGE_MAX,
	    FOLLOWS_PAGE_DEFAULT, &l.limit) == -1)
		return commands_error("follows: offset must be 0 or more, "
		    "limit 1 to %d", FOLLOWS_PAGE_MAX);
	if (arg_query(args, &l) == -1)
		return commands_error("follows: q is longer than %d bytes",
		    FOLLOWS_QUERY_MAX_BYTES);
	if ((r = cJSON_CreateObject()) == NULL)
		return NULL;
	l.list = cJSON_AddArrayToObject(r, "follows");
	if (which == 1) {
		if ((r = follows_one(&l, pk, r)) == NULL ||
		    commands_is_error(r))
			return r;
		rc = 0;
	} else if (l.q[0] != '\0')
		rc = store_follows_each(app->store, false, add_match, &l);
	else if ((rc = store_follows_count(app->store, &active, &stale)) == 0) {
		l.total = active;
		rc = store_follows_page(app->store, l.offset, l.limit,
		    add_follow, &l);
	}
	if (rc == -1 || l.failed) {
		cJSON_Delete(r);
		return commands_error("follows: the store failed");
	}
	cJSON_AddNumberToObject(r, "total", (double)l.total);
	cJSON_AddNumberToObject(r, "offset", (double)(which == 1 ? 0 :
	    l.offset));
	cJSON_AddNumberToObject(r, "limit", (double)l.limit);
	if (l.q[0] != '\0')
		cJSON_AddStringToObject(r, "q", l.q);
	cJSON_AddBoolToObject(r, "truncated", l.truncated);
	return r;
}

cJSON *
cmd_backfill_reset(struct app *app, const cJSON *args, enum cmd_origin from)
{
	uint8_t		 pk[32];
	int		 which = arg_author(args, pk);
	int64_t		 n;
	cJSON		*r;

	if (which == -1)
		return commands_error("backfill reset: author must be an npub "
		    "or 64 hex digits");
	if (app->drain == NULL)
		return commands_error("backfill reset: the drain is not "
		    "running");
	if ((n = drain_reset(app->drain, which == 1 ? pk : NULL)) < 0)
		return commands_error("backfill reset: the store failed");
	if ((r = cJSON_CreateObject()) != NULL)
		cJSON_AddNumberToObject(r, "reset", (double)n);
	return r;
}

struct rec_listing {
	struct app	*app;
	cJSON		*list;
	int64_t		 pending, expired;
};

static int
add_recovery(const struct recovery_summary *s, void *arg)
{
	struct rec_listing	*l = arg;
	cJSON			*r;

	l->pending += s->pending;
	l->expired += s->expired;
	if ((r = cJSON_CreateObject()) == NULL)
		return 1;
	cJSON_AddStringToObject(r, "relay", s->relay);
	cJSON_AddNumberToObject(r, "pending", (double)s->pending);
	cJSON_AddBoolToObject(r, "in_flight", s->in_flight);
	cJSON_AddNumberToObject(r, "next_attempt", s->pending > 0 &&
	    !s->in_flight ? (double)(s->next_attempt_ms / 1000) : 0);
	cJSON_AddNumberToObject(r, "expired", (double)s->expired);
	cJSON_AddNumberToObject(r, "attempts", (double)s->attempts);
	cJSON_AddNumberToObject(r, "recovered", (double)s->recovered);
	cJSON_AddBoolToObject(r, "can_restore_health", s->can_restore_health);
	cJSON_AddStringToObject(r, "health", recovery_health_name(s->health));
	cJSON_AddStringToObject(r, "negentropy", negsync_support_name(
	    negsync_support(l->app->negsync, s->relay)));
	cJSON_AddItemToArray(l->list, r);
	return cJSON_GetArraySize(l->list) >= RECOVERY_LIST_MAX ? 1 : 0;
}

cJSON *
cmd_recovery(struct app *app, const cJSON *args, enum cmd_origin from)
{
	struct rec_listing	 l = { .app = app };
	cJSON			*r;

	if (app->negsync == NULL)
		return commands_error("recovery: the planners are not running");
	if ((r = cJSON_CreateObject()) == NULL)
		return NULL;
	l.list = cJSON_AddArrayToObject(r, "recovery");
	if (recovery_each(negsync_recovery(app->negsync), add_recovery,
	    &l) == -1) {
		cJSON_Delete(r);
		return commands_error("recovery: cannot read the index");
	}
	cJSON_AddNumberToObject(r, "pending", (double)l.pending);
	cJSON_AddNumberToObject(r, "expired", (double)l.expired);
	return r;
}

cJSON *
cmd_ingest_minutes(struct app *app, const cJSON *args, enum cmd_origin from)
{
	uint32_t	 counts[INGEST_MINUTES];
	uint64_t	 now = clock_mono_ms();
	int64_t		 n;
	cJSON		*r, *list;
	size_t		 i, known;

	if (arg_count(args, "minutes", 1, INGEST_MINUTES, INGEST_MINUTES,
	    &n) == -1)
		return commands_error("ingest minutes: minutes must be 1 to %d",
		    INGEST_MINUTES);
	if (app->ingest == NULL)
		return commands_error("ingest minutes: ingest is not running");
	minring_read(ingest_minutes(app->ingest), now, counts, (size_t)n);
	known = minring_known(ingest_minutes(app->ingest), now);
	if ((r = cJSON_CreateObject()) == NULL ||
	    (list = cJSON_AddArrayToObject(r, "minutes")) == NULL) {
		cJSON_Delete(r);
		return NULL;
	}
	for (i = 0; i < (size_t)n; i++)
		cJSON_AddItemToArray(list, cJSON_CreateNumber(counts[i]));
	cJSON_AddNumberToObject(r, "known", (double)(known < (size_t)n ?
	    known : (size_t)n));
	cJSON_AddNumberToObject(r, "minute_elapsed_s",
	    (double)(now % MINRING_MINUTE_MS / 1000));
	cJSON_AddNumberToObject(r, "rate_per_s", status_ingest_rate(app));
	return r;
}

cJSON *
cmd_ingest_history(struct app *app, const cJSON *args, enum cmd_origin from)
{
	int64_t		 counts[INGEST_HISTORY_S / INGEST_HISTORY_BUCKET_S];
	int64_t		 hours, first, since;
	size_t		 i, nb;
	cJSON		*r, *list;

	(void)from;
	if (arg_count(args, "hours", 1, INGEST_HISTORY_S / 3600, 24,
	    &hours) == -1)
		return commands_error("ingest history: hours must be 1 to %d",
		    INGEST_HISTORY_S / 3600);
	nb = (size_t)(hours * 3600 / INGEST_HISTORY_BUCKET_S);
	if (status_history(app, counts, nb, &first, &since) == -1)
		return commands_error("ingest history: no history: %s",
		    clock_wall_s() < INGEST_HISTORY_WALL_MIN_S ? "the clock is "
		    "not set yet" : "the store cannot be read");
	if ((r = cJSON_CreateObject()) == NULL ||
	    (list = cJSON_AddArrayToObject(r, "counts")) == NULL) {
		cJSON_Delete(r);
		return NULL;
	}
	for (i = 0; i < nb; i++)
		cJSON_AddItemToArray(list, cJSON_CreateNumber(
		    (double)counts[i]));
	cJSON_AddNumberToObject(r, "bucket_s", INGEST_HISTORY_BUCKET_S);
	cJSON_AddNumberToObject(r, "first", (double)first);
	cJSON_AddNumberToObject(r, "now", (double)clock_wall_s());
	if (since != 0)
		cJSON_AddNumberToObject(r, "since", (double)since);
	else
		cJSON_AddNullToObject(r, "since");
	return r;
}
