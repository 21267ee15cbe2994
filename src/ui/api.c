/*
 * api.c — the meaning of the web API (paths, arguments, the bearer token,
 * Prometheus text), without any transport. Everything a request carries is
 * peer input: lengths are bounded by the caller (HTTP_API_MAX_BODY_BYTES)
 * and every JSON value is type-checked before a command sees it. Nothing
 * here runs a command or keeps state.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/embed.h"
#include "core/limits.h"
#include "core/secret.h"
#include "ui/api.h"
#include "ui/commands.h"

#define METRIC_PREFIX		"cachebox"

const struct command *
api_command_for_path(const char *path)
{
	char	name[API_MAX_PATH];
	size_t	len, i;

	if (strncmp(path, API_PREFIX, strlen(API_PREFIX)) != 0)
		return NULL;
	path += strlen(API_PREFIX);
	if ((len = strlen(path)) == 0 || len >= sizeof(name) ||
	    path[0] == '/' || path[len - 1] == '/' || strstr(path, "//") ||
	    strchr(path, ' '))
		return NULL;
	for (i = 0; i <= len; i++)
		name[i] = path[i] == '/' ? ' ' : path[i];
	return commands_find(name);
}

const struct embed_file *
api_asset_for_path(const char *path)
{
	const struct embed_file	*f;

	if (strcmp(path, "/") == 0)
		path = "/index.html";
	if (path[0] != '/' || strchr(path + 1, '/') != NULL)
		return NULL;
	for (f = ui_www_files; f->name != NULL; f++)
		if (strcmp(f->name, path + 1) == 0)
			return f;
	return NULL;
}

const char *
api_content_type(const char *name)
{
	static const struct { const char *ext, *type; } types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".ico", "image/x-icon" },
		{ ".json", "application/json" },
	};
	const char	*dot = strrchr(name, '.');
	size_t		 i;

	for (i = 0; dot != NULL && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return "application/octet-stream";
}

/* ---- arguments ------------------------------------------------------- */

static int
param_index(const struct command_param *p, int n, const char *name)
{
	int	i;

	for (i = 0; i < n; i++)
		if (strcmp(p[i].name, name) == 0)
			return i;
	return -1;
}

/* The text of a string, number or boolean argument into out; -1 otherwise. */
static int
arg_text(const cJSON *v, char *out, size_t outlen, const char **text)
{
	if (cJSON_IsString(v))
		*text = v->valuestring;
	else if (cJSON_IsBool(v))
		*text = cJSON_IsTrue(v) ? "true" : "false";
	else if (cJSON_IsNumber(v)) {
		if (json_is_integer(v->valuedouble))
			snprintf(out, outlen, "%lld", (long long)v->valuedouble);
		else
			snprintf(out, outlen, "%.17g", v->valuedouble);
		*text = out;
	} else
		return -1;
	return 0;
}

static int
add_checked(const struct command *c, const struct command_param *p, int n,
    cJSON *args, const cJSON *v, char *err, size_t errlen)
{
	char		 num[64];
	const char	*text;

	if (v->string == NULL || param_index(p, n, v->string) == -1) {
		snprintf(err, errlen, "%s: unknown argument '%.64s' (takes: %s)",
		    c->name, v->string ? v->string : "", c->params[0] ?
		    c->params : "no arguments");
		return -1;
	}
	if (cJSON_GetObjectItemCaseSensitive(args, v->string) != NULL) {
		snprintf(err, errlen, "%s: argument '%s' given twice", c->name,
		    v->string);
		return -1;
	}
	if (arg_text(v, num, sizeof(num), &text) == -1) {
		snprintf(err, errlen, "%s: argument '%s' must be a string",
		    c->name, v->string);
		return -1;
	}
	if (cJSON_AddStringToObject(args, v->string, text) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

cJSON *
api_args_check(const struct command *c, const cJSON *given, char *err,
    size_t errlen)
{
	struct command_param	 p[COMMAND_MAX_PARAMS];
	const cJSON		*v;
	cJSON			*args;
	int			 i, n = commands_params(c, p, COMMAND_MAX_PARAMS);

	if (!cJSON_IsObject(given)) {
		snprintf(err, errlen, "the body must be a JSON object");
		return NULL;
	}
	if ((args = cJSON_CreateObject()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cJSON_ArrayForEach(v, given)
		if (add_checked(c, p, n, args, v, err, errlen) == -1)
			goto bad;
	for (i = 0; i < n; i++)
		if (!p[i].optional &&
		    cJSON_GetObjectItemCaseSensitive(args, p[i].name) == NULL) {
			snprintf(err, errlen, "%s: missing \"%s\"", c->name,
			    p[i].name);
			goto bad;
		}
	return args;
bad:
	cJSON_Delete(args);
	return NULL;
}

static int
all_space(const char *p, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if (strchr(" \t\r\n", p[i]) == NULL || p[i] == '\0')
			return 0;
	return 1;
}

cJSON *
api_body_args(const struct command *c, const char *body, size_t len,
    char *err, size_t errlen)
{
	const char	*end = NULL;
	cJSON		*v, *args;

	if (all_space(body, len)) {
		v = cJSON_CreateObject();
		args = v ? api_args_check(c, v, err, errlen) : NULL;
		cJSON_Delete(v);
		return args;
	}
	v = cJSON_ParseWithLengthOpts(body, len, &end, 0);
	if (v == NULL || end == NULL || end < body ||
	    !all_space(end, len - (size_t)(end - body))) {
		snprintf(err, errlen, "malformed JSON body%s", v == NULL ?
		    "" : ": text after the object");
		cJSON_Delete(v);
		return NULL;
	}
	args = api_args_check(c, v, err, errlen);
	cJSON_Delete(v);
	return args;
}

/* ---- the bearer token -------------------------------------------------- */

enum api_auth
api_auth_check(const char *token, const char *header)
{
	size_t	len;

	if (token == NULL || *token == '\0')
		return API_AUTH_NO_TOKEN;
	if (header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
		return API_AUTH_MISSING;
	header += 7;
	header += strspn(header, " ");
	len = strlen(header);
	while (len > 0 && header[len - 1] == ' ')
		len--;
	if (len == 0)
		return API_AUTH_MISSING;
	return secret_verify(token, header, len) ? API_AUTH_OK :
	    API_AUTH_WRONG;
}

/* ---- Prometheus text --------------------------------------------------- */

enum metric_type { METRIC_GAUGE, METRIC_COUNTER };

/*
 * What each field of the status document is in /metrics: its place in
 * the document (path; a field of every row of an array is "relays[].x"),
 * its metric name, counter (only grows while the daemon runs; ends in
 * _total) or gauge (a level that may fall), and its HELP text. An entry
 * with a label is one series of a labelled family; the entries of a
 * family follow each other, as their fields do in the document. name NULL:
 * the field is left out on purpose. A field missing here still comes out,
 * as a gauge whose HELP says it is not described (METRIC_UNDESCRIBED), so
 * a new status field is seen; the metrics test refuses that HELP.
 */
struct metric_def {
	const char		*path;
	const char		*name;
	enum metric_type	 type;
	const char		*label, *lvalue;
	const char		*help;
};

#define GAUGE(p, n, h)		{ p, n, METRIC_GAUGE, NULL, NULL, h }
#define COUNTER(p, n, h)	{ p, n, METRIC_COUNTER, NULL, NULL, h }
#define FAMILY(p, n, t, l, v, h) { p, n, t, l, v, h }
#define LEFT_OUT(p)		{ p, NULL, METRIC_GAUGE, NULL, NULL, NULL }

#define METRIC_UNDESCRIBED	"not described yet"

static const struct metric_def metric_defs[] = {
	GAUGE("uptime_s", "cachebox_uptime_seconds",
	    "Seconds since cacheboxd started."),
	GAUGE("rss_bytes", "cachebox_rss_bytes",
	    "Resident memory of cacheboxd, bytes."),
	GAUGE("idle", "cachebox_idle", "1 when no sync work is left (follow "
	    "lists read, every author complete or recorded incomplete, no job "
	    "to run, no id for recovery to fetch again within "
	    "recovery.settle_s, retention settled, and a configured uplink "
	    "has taken "
	    "every queued event; events left queued while no uplink is "
	    "configured, in cachebox_inbox_pending, do not count), else 0."),
	LEFT_OUT("backfill.authors_total"),	/* the sum of the three below */
	FAMILY("backfill.authors_complete", "cachebox_backfill_authors",
	    METRIC_GAUGE, "state", "complete", "Followed authors by backfill "
	    "state: complete on every relay, recorded incomplete on some "
	    "relay, or still draining."),
	FAMILY("backfill.authors_incomplete", "cachebox_backfill_authors",
	    METRIC_GAUGE, "state", "incomplete", NULL),
	FAMILY("backfill.authors_draining", "cachebox_backfill_authors",
	    METRIC_GAUGE, "state", "draining", NULL),
	GAUGE("store.events", "cachebox_store_events",
	    "Events in the local store."),
	GAUGE("store.bytes", "cachebox_store_bytes",
	    "Bytes of event JSON in the local store."),
	GAUGE("store.state", "cachebox_store_state",
	    "1, labelled with the store's state (ok or damaged)."),
	COUNTER("store.evicted", "cachebox_store_evicted_total",
	    "Events retention evicted to keep the store under its budget."),
	GAUGE("store.pack_left", "cachebox_store_pack_left",
	    "Rows of an older store not yet packed (they are served all the "
	    "same)."),
	GAUGE("store.max_bytes", "cachebox_store_max_bytes",
	    "The store's budget (store.max_bytes), bytes."),
	GAUGE("relays[].state", "cachebox_relay_state",
	    "1, labelled with the relay connection's state."),
	COUNTER("relays[].events", "cachebox_relay_events_total",
	    "Events received from the relay."),
	COUNTER("relays[].reqs", "cachebox_relay_reqs_total",
	    "REQ messages sent to the relay."),
	COUNTER("relays[].invalid", "cachebox_relay_invalid_total",
	    "Invalid events and frames received from the relay."),
	COUNTER("relays[].cut_invalid", "cachebox_relay_cut_invalid_total",
	    "Connections to the relay cut because its input was mostly "
	    "invalid."),
	COUNTER("relays[].unrequested", "cachebox_relay_unrequested_total",
	    "Events from the relay that no filter of their subscription "
	    "asked for (dropped before their signature is checked)."),
	COUNTER("relays[].dropped", "cachebox_relay_dropped_total",
	    "Events from the relay for a subscription not open."),
	GAUGE("relays[].subs_open", "cachebox_relay_subs_open",
	    "Subscriptions open on the relay now."),
	GAUGE("relays[].subs_queued", "cachebox_relay_subs_queued",
	    "Subscriptions waiting for a free slot on the relay."),
	GAUGE("relays[].recovery_pending", "cachebox_relay_recovery_pending",
	    "Event ids waiting to be fetched again from the relay."),
	GAUGE("relays[].last_open_at",
	    "cachebox_relay_last_open_timestamp_seconds",
	    "When the relay's connection last opened (Unix time, 0 never)."),
	GAUGE("relays[].last_error_at",
	    "cachebox_relay_last_error_timestamp_seconds",
	    "When the relay's last error happened (Unix time, 0 none)."),
	LEFT_OUT("ingest.rate_per_s"),		/* rate() of stored_total */
	GAUGE("ingest.stored_24h", "cachebox_ingest_stored_last_day",
	    "Events stored in the last 24 hours, kept across restarts (by "
	    "buckets of 10 minutes, the running one included)."),
	GAUGE("ingest.stored_7d", "cachebox_ingest_stored_last_week",
	    "Events stored in the last 7 days, kept across restarts."),
	LEFT_OUT("ingest.history_since"),	/* a time, not a measure */
	COUNTER("ingest.received", "cachebox_ingest_received_total",
	    "Events handed to ingest (relays, jobs, recovery, the box's relay "
	    "clients, imports); each lands in one of stored .. errors."),
	COUNTER("ingest.stored", "cachebox_ingest_stored_total",
	    "Events ingest stored as new."),
	COUNTER("ingest.duplicates", "cachebox_ingest_duplicates_total",
	    "Events ingest found already stored (no signature check)."),
	COUNTER("ingest.invalid", "cachebox_ingest_invalid_total",
	    "Events ingest dropped: malformed, bad id or bad signature."),
	COUNTER("ingest.too_large", "cachebox_ingest_too_large_total",
	    "Events ingest dropped: over limits.max_event_bytes."),
	COUNTER("ingest.unrequested", "cachebox_ingest_unrequested_total",
	    "Events ingest dropped: no filter of their subscription matched."),
	COUNTER("ingest.errors", "cachebox_ingest_errors_total",
	    "Events ingest could not store: the store failed."),
	COUNTER("ingest.superseded", "cachebox_ingest_superseded_total",
	    "Events ingest did not store because a newer version of their "
	    "replaceable or addressable key is held."),
	COUNTER("ingest.replaced", "cachebox_ingest_replaced_total",
	    "Events ingest stored that replaced an older version of their key "
	    "(the older one was removed)."),
	COUNTER("ingest.expired", "cachebox_ingest_expired_total",
	    "Events ingest did not store because they had expired when they "
	    "arrived (NIP-40)."),
	COUNTER("ingest.ephemeral", "cachebox_ingest_ephemeral_total",
	    "Ephemeral events (kinds 20000-29999) passed to live subscribers "
	    "and never stored."),
	COUNTER("ingest.deleted", "cachebox_ingest_deleted_total",
	    "Events ingest did not store because their author deleted them "
	    "(NIP-09)."),
	COUNTER("ingest.vanished", "cachebox_ingest_vanished_total",
	    "Events ingest did not store because their author asked to vanish "
	    "(NIP-62)."),
	COUNTER("ingest.withdrawn", "cachebox_ingest_withdrawn_total",
	    "Copies of events withdrawn before, refused by their tombstone "
	    "without a signature check."),
	COUNTER("rules.removed.superseded",
	    "cachebox_rules_removed_superseded_total",
	    "Stored events removed because a newer version of their key came."),
	COUNTER("rules.removed.deleted", "cachebox_rules_removed_deleted_total",
	    "Stored events removed because their author deleted them (NIP-09)."),
	COUNTER("rules.removed.expired", "cachebox_rules_removed_expired_total",
	    "Stored events removed at their expiration (NIP-40)."),
	COUNTER("rules.removed.vanished",
	    "cachebox_rules_removed_vanished_total",
	    "Stored events removed because their author asked to vanish "
	    "(NIP-62)."),
	COUNTER("rules.removed.ephemeral",
	    "cachebox_rules_removed_ephemeral_total",
	    "Ephemeral events an older store held, removed by its conversion."),
	COUNTER("rules.kept_aside", "cachebox_rules_kept_aside_total",
	    "Superseded versions of the roots' kinds 0, 3 and 10002 kept aside "
	    "(cacheboxctl roots history)."),
	GAUGE("rules.tombstones", "cachebox_rules_tombstones",
	    "Ids of withdrawn events remembered, so they are never fetched "
	    "again."),
	GAUGE("rules.vanished_authors", "cachebox_rules_vanished_authors",
	    "Authors who asked to vanish (NIP-62)."),
	GAUGE("rules.vanish_pending", "cachebox_rules_vanish_pending",
	    "Requests to vanish whose events are still being removed."),
	GAUGE("rules.conversion_left", "cachebox_rules_conversion_left",
	    "Events of a store made before the rules still to be brought to "
	    "them."),
	COUNTER("ingest.sig_checks", "cachebox_ingest_sig_checks_total",
	    "Signature verifications ingest ran."),
	COUNTER("ingest.transactions", "cachebox_ingest_transactions_total",
	    "Store transactions ingest committed."),
	COUNTER("ingest.lost_batches", "cachebox_ingest_lost_batches_total",
	    "Ingest batches whose commit failed (their events are asked "
	    "again)."),
	COUNTER("writes.bytes", "cachebox_written_bytes_total",
	    "Bytes cacheboxd wrote to storage since it started (the kernel's "
	    "count, or the store's pages where the kernel keeps none)."),
	GAUGE("writes.bytes_per_stored_event",
	    "cachebox_written_bytes_per_stored_event",
	    "Bytes written since start per event stored since start."),
	COUNTER("loop.turns", "cachebox_loop_turns_total",
	    "Turns of cacheboxd's one loop (the work between two waits in "
	    "poll, during which a request waits)."),
	LEFT_OUT("loop.turn_max_ms"),	/* milliseconds: the status's only */
	FAMILY("loop.turns_over_ms.10", "cachebox_loop_turns_long_total",
	    METRIC_COUNTER, "over", "10ms", "Turns of the loop longer than "
	    "the bound in the label."),
	FAMILY("loop.turns_over_ms.50", "cachebox_loop_turns_long_total",
	    METRIC_COUNTER, "over", "50ms", NULL),
	FAMILY("loop.turns_over_ms.100", "cachebox_loop_turns_long_total",
	    METRIC_COUNTER, "over", "100ms", NULL),
	FAMILY("loop.turns_over_ms.250", "cachebox_loop_turns_long_total",
	    METRIC_COUNTER, "over", "250ms", NULL),
	FAMILY("loop.turns_over_ms.1000", "cachebox_loop_turns_long_total",
	    METRIC_COUNTER, "over", "1000ms", NULL),
	GAUGE("rss_budget_bytes", "cachebox_rss_budget_bytes",
	    "The resident memory cacheboxd is built to stay under, bytes."),
	COUNTER("negentropy.steps", "cachebox_negentropy_steps_total",
	    "NIP-77 reconciliation steps started."),
	FAMILY("negentropy.complete", "cachebox_negentropy_steps_ended_total",
	    METRIC_COUNTER, "result", "complete", "NIP-77 steps ended, by "
	    "result: complete, recovering (some ids did not come), refused "
	    "(the relay does not reconcile), failed (cut short)."),
	FAMILY("negentropy.recovering", "cachebox_negentropy_steps_ended_total",
	    METRIC_COUNTER, "result", "recovering", NULL),
	FAMILY("negentropy.refused", "cachebox_negentropy_steps_ended_total",
	    METRIC_COUNTER, "result", "refused", NULL),
	FAMILY("negentropy.failed", "cachebox_negentropy_steps_ended_total",
	    METRIC_COUNTER, "result", "failed", NULL),
	COUNTER("negentropy.sessions", "cachebox_negentropy_sessions_total",
	    "NEG-OPEN sessions sent to relays (one per time window)."),
	COUNTER("negentropy.bytes_out", "cachebox_negentropy_sent_bytes_total",
	    "Bytes of NIP-77 messages sent to relays."),
	COUNTER("negentropy.bytes_in",
	    "cachebox_negentropy_received_bytes_total",
	    "Bytes of NIP-77 messages received from relays."),
	COUNTER("negentropy.need", "cachebox_negentropy_need_total",
	    "Event ids a relay had and the box lacked, found by "
	    "reconciliation."),
	COUNTER("negentropy.fetched", "cachebox_negentropy_fetched_total",
	    "Of those, events that arrived by an exact-id fetch."),
	COUNTER("negentropy.withdrawn", "cachebox_negentropy_withdrawn_total",
	    "Of those, ids withdrawn here (superseded, deleted, expired): "
	    "never fetched again."),
	COUNTER("negentropy.over_budget",
	    "cachebox_negentropy_over_budget_total",
	    "NIP-77 sessions ended because a relay passed their budget of "
	    "rounds, bytes or time (the relay is then paged)."),
	GAUGE("recovery.pending", "cachebox_recovery_pending",
	    "Event ids in the recovery index waiting to be fetched again."),
	GAUGE("recovery.expired", "cachebox_recovery_expired",
	    "Event ids in the recovery index given up on."),
	GAUGE("recovery.in_flight", "cachebox_recovery_in_flight",
	    "Relays with a recovery fetch running now."),
	GAUGE("recovery.relays", "cachebox_recovery_relays",
	    "Relays with ids in the recovery index."),
	COUNTER("recovery.attempts", "cachebox_recovery_attempts_total",
	    "Recovery fetches started."),
	COUNTER("recovery.recovered", "cachebox_recovery_recovered_total",
	    "Event ids recovery fetched."),
	COUNTER("recovery.registered", "cachebox_recovery_registered_total",
	    "Event ids handed to recovery."),
	LEFT_OUT("recovery.waiting.ids"),	/* of one relay, with its url */
	LEFT_OUT("recovery.waiting.until"),	/* a time, not a measure */
	FAMILY("jobs.pending", "cachebox_jobs", METRIC_GAUGE, "status",
	    "pending", "Custom jobs held, by status."),
	FAMILY("jobs.running", "cachebox_jobs", METRIC_GAUGE, "status",
	    "running", NULL),
	FAMILY("jobs.complete", "cachebox_jobs", METRIC_GAUGE, "status",
	    "complete", NULL),
	FAMILY("jobs.incomplete", "cachebox_jobs", METRIC_GAUGE, "status",
	    "incomplete", NULL),
	FAMILY("jobs.failed", "cachebox_jobs", METRIC_GAUGE, "status",
	    "failed", NULL),
	FAMILY("jobs.cancelled", "cachebox_jobs", METRIC_GAUGE, "status",
	    "cancelled", NULL),
	GAUGE("jobs.scheduled", "cachebox_jobs_scheduled",
	    "Custom jobs that repeat on a schedule."),
	GAUGE("jobs.events_fetched", "cachebox_jobs_events_fetched",
	    "Events the jobs held fetched, the last run of each (falls when a "
	    "job is deleted or run again)."),
	GAUGE("jobs.events_new", "cachebox_jobs_events_new",
	    "Of those, events that were new to the store."),
	GAUGE("jobs.in_flight", "cachebox_jobs_in_flight",
	    "Job requests waiting for relays now."),
	LEFT_OUT("jobs.current.job"),		/* an id, not a quantity */
	GAUGE("jobs.current.batches_total", "cachebox_jobs_current_batches",
	    "Batches of the running job."),
	GAUGE("jobs.current.batches_done", "cachebox_jobs_current_batches_done",
	    "Batches of the running job done."),
	GAUGE("jobs.current.events_fetched",
	    "cachebox_jobs_current_events_fetched",
	    "Events the running job fetched so far."),
	GAUGE("http.port", "cachebox_http_port",
	    "TCP port of the status page and API."),
	GAUGE("http.loopback_only", "cachebox_http_loopback_only",
	    "1 when the status page listens on loopback only."),
	GAUGE("http.connections", "cachebox_http_connections",
	    "HTTP connections open now."),
	GAUGE("http.max_connections", "cachebox_http_max_connections",
	    "HTTP connections served at once at most."),
	COUNTER("http.accepted", "cachebox_http_accepted_total",
	    "HTTP connections accepted."),
	COUNTER("http.refused", "cachebox_http_refused_total",
	    "HTTP requests with a bad head, answered with an error."),
	COUNTER("http.evicted", "cachebox_http_evicted_total",
	    "HTTP connections pushed out by a newer one at the limit."),
	COUNTER("http.timed_out", "cachebox_http_timed_out_total",
	    "HTTP connections cut for being too slow."),
	COUNTER("http.turned_away", "cachebox_http_turned_away_total",
	    "HTTP connections refused at the connection limit."),
	GAUGE("relay_endpoint.port", "cachebox_relay_endpoint_port",
	    "TCP port of the box's own relay."),
	GAUGE("relay_endpoint.loopback_only",
	    "cachebox_relay_endpoint_loopback_only",
	    "1 when the box's relay listens on loopback only."),
	GAUGE("relay_endpoint.clients", "cachebox_relay_endpoint_clients",
	    "Clients connected to the box's relay now."),
	GAUGE("relay_endpoint.max_clients",
	    "cachebox_relay_endpoint_max_clients",
	    "Clients the box's relay serves at once at most."),
	GAUGE("relay_endpoint.subscriptions",
	    "cachebox_relay_endpoint_subscriptions",
	    "Subscriptions the relay's clients hold open now."),
	GAUGE("relay_endpoint.subscriptions_live",
	    "cachebox_relay_endpoint_subscriptions_live",
	    "Of those, subscriptions past their stored events, sent live ones."),
	GAUGE("relay_endpoint.queries_running",
	    "cachebox_relay_endpoint_queries_running",
	    "Store queries the box's relay is serving in slices now."),
	GAUGE("relay_endpoint.negentropy_sessions",
	    "cachebox_relay_endpoint_negentropy_sessions",
	    "NIP-77 sessions the relay's clients hold open now."),
	GAUGE("relay_endpoint.queued_bytes",
	    "cachebox_relay_endpoint_queued_bytes",
	    "Bytes waiting to be written to the relay's clients now."),
	COUNTER("relay_endpoint.connections",
	    "cachebox_relay_endpoint_connections_total",
	    "WebSocket clients the box's relay accepted."),
	COUNTER("relay_endpoint.reqs", "cachebox_relay_endpoint_reqs_total",
	    "REQ messages the box's relay served."),
	COUNTER("relay_endpoint.counts", "cachebox_relay_endpoint_counts_total",
	    "COUNT messages the box's relay answered."),
	COUNTER("relay_endpoint.negentropy",
	    "cachebox_relay_endpoint_negentropy_total",
	    "NIP-77 sessions the box's relay opened for clients."),
	COUNTER("relay_endpoint.events_sent",
	    "cachebox_relay_endpoint_events_sent_total",
	    "EVENT messages sent to the relay's clients (stored and live)."),
	COUNTER("relay_endpoint.live_sent",
	    "cachebox_relay_endpoint_live_sent_total",
	    "Of those, live events."),
	COUNTER("relay_endpoint.bytes_out",
	    "cachebox_relay_endpoint_sent_bytes_total",
	    "Bytes written to the relay's clients."),
	COUNTER("relay_endpoint.writes_accepted",
	    "cachebox_relay_endpoint_writes_accepted_total",
	    "EVENTs from the relay's clients stored."),
	COUNTER("relay_endpoint.writes_refused",
	    "cachebox_relay_endpoint_writes_refused_total",
	    "EVENTs from the relay's clients refused (read-only, key, "
	    "invalid)."),
	COUNTER("relay_endpoint.protected_refused",
	    "cachebox_relay_endpoint_protected_refused_total",
	    "Of those, protected events (NIP-70) not sent by their "
	    "authenticated author."),
	COUNTER("relay_endpoint.bad_messages",
	    "cachebox_relay_endpoint_bad_messages_total",
	    "Malformed or refused messages from the relay's clients."),
	COUNTER("relay_endpoint.cut_slow",
	    "cachebox_relay_endpoint_cut_slow_total",
	    "Relay clients cut off for not reading what they asked for."),
	COUNTER("relay_endpoint.refused_full",
	    "cachebox_relay_endpoint_refused_full_total",
	    "Relay clients refused because the relay was full."),
	COUNTER("relay_endpoint.refused_memory",
	    "cachebox_relay_endpoint_refused_memory_total",
	    "Subscriptions and NIP-77 sessions refused because their filters "
	    "would pass the per-connection or the all-connections filter "
	    "memory cap."),
	GAUGE("relay_endpoint.filter_bytes",
	    "cachebox_relay_endpoint_filter_bytes",
	    "Bytes of filters held by every client's subscriptions and NIP-77 "
	    "sessions together."),
	GAUGE("relay_endpoint.filter_bytes_max",
	    "cachebox_relay_endpoint_filter_bytes_max",
	    "The all-connections cap on those bytes."),
	COUNTER("relay_endpoint.nip11", "cachebox_relay_endpoint_nip11_total",
	    "NIP-11 documents the box's relay served."),
	GAUGE("relay_endpoint.tag_index_ready",
	    "cachebox_relay_endpoint_tag_index_ready",
	    "1 when the tag index for tag filters is built."),
	GAUGE("uplink.state", "cachebox_uplink_state",
	    "1, labelled with the uplink's state."),
	LEFT_OUT("uplink.forward_rate"),	/* rate() of the counter below */
	COUNTER("uplink.forwarded_session", "cachebox_uplink_forwarded_total",
	    "Events the uplink accepted since the daemon started."),
	COUNTER("uplink.rejected_session", "cachebox_uplink_rejected_total",
	    "Events the uplink refused since the daemon started."),
	GAUGE("uplink.oldest_pending_age_s",
	    "cachebox_uplink_oldest_pending_age_seconds",
	    "Age of the oldest event waiting for the uplink, seconds."),
	GAUGE("uplink.queueing_store", "cachebox_uplink_queueing_store",
	    "1 while the events already stored are being queued for a new "
	    "uplink."),
	GAUGE("inbox.pending", "cachebox_inbox_pending",
	    "Events waiting to go to the uplink."),
	COUNTER("inbox.forwarded", "cachebox_inbox_forwarded_total",
	    "Events the uplink accepted since the store began (kept across "
	    "restarts)."),
	GAUGE("inbox.rejected", "cachebox_inbox_dead_letters",
	    "Events the uplink refused, held as dead letters (falls on "
	    "retry)."),
	COUNTER("inbox.skipped_protected",
	    "cachebox_inbox_skipped_protected_total",
	    "Protected events (NIP-70) of other authors the uplink did not "
	    "forward (the box may republish only its own), since the store "
	    "began."),
	GAUGE("inbox.oldest_pending_age_s",
	    "cachebox_inbox_oldest_pending_age_seconds",
	    "Age of the oldest event waiting for the uplink, seconds."),
};

#undef GAUGE
#undef COUNTER
#undef FAMILY
#undef LEFT_OUT

/* What the writer keeps between fields: the family whose head it wrote. */
struct metrics_out {
	struct buf	*out;
	char		 family[METRIC_MAX_NAME];
};

static const struct metric_def *
metric_def_for(const char *path)
{
	size_t	i;

	for (i = 0; i < sizeof(metric_defs) / sizeof(metric_defs[0]); i++)
		if (strcmp(metric_defs[i].path, path) == 0)
			return &metric_defs[i];
	return NULL;
}

/*
 * The entry for path, or a gauge for an undescribed field: "cachebox_" and
 * the path with every run of characters outside [A-Za-z0-9] made one '_'.
 * NULL when the field is left out.
 */
static const struct metric_def *
metric_for(const char *path, struct metric_def *tmp, char *name,
    size_t namelen)
{
	const struct metric_def	*d = metric_def_for(path);
	const char		*p;
	size_t			 n;

	if (d != NULL)
		return d->name != NULL ? d : NULL;
	n = (size_t)snprintf(name, namelen, "%s_", METRIC_PREFIX);
	for (p = path; *p != '\0' && n + 2 < namelen; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9'))
			name[n++] = *p;
		else if (name[n - 1] != '_')
			name[n++] = '_';
	}
	name[n] = '\0';
	*tmp = (struct metric_def){ path, name, METRIC_GAUGE, NULL, NULL,
	    NULL };
	return tmp;
}

/* The HELP of d's family (its first entry carries it), or NULL. */
static const char *
metric_help(const struct metric_def *d)
{
	size_t	i;

	for (i = 0; d->help == NULL &&
	    i < sizeof(metric_defs) / sizeof(metric_defs[0]); i++)
		if (metric_defs[i].name != NULL && metric_defs[i].help != NULL &&
		    strcmp(metric_defs[i].name, d->name) == 0)
			return metric_defs[i].help;
	return d->help;
}

/* HELP and TYPE, once per family. */
static int
metric_head(struct metrics_out *w, const struct metric_def *d,
    const char *path)
{
	const char	*help = metric_help(d);

	if (strcmp(w->family, d->name) == 0)
		return 0;
	snprintf(w->family, sizeof(w->family), "%s", d->name);
	if (help != NULL && buf_printf(w->out, "# HELP %s %s\n", d->name,
	    help) == -1)
		return -1;
	if (help == NULL && buf_printf(w->out, "# HELP %s Status field "
	    "%s, " METRIC_UNDESCRIBED ".\n", d->name, path) == -1)
		return -1;
	return buf_printf(w->out, "# TYPE %s %s\n", d->name,
	    d->type == METRIC_COUNTER ? "counter" : "gauge");
}

static int
metric_value(struct buf *out, const cJSON *v)
{
	if (cJSON_IsBool(v))
		return buf_puts(out, cJSON_IsTrue(v) ? " 1\n" : " 0\n");
	if (json_is_integer(v->valuedouble))
		return buf_printf(out, " %lld\n", (long long)v->valuedouble);
	return buf_printf(out, " %.17g\n", v->valuedouble);
}

/* A label value with \, " and newline escaped. */
static int
label_value(struct buf *out, const char *s)
{
	for (; *s != '\0'; s++) {
		if ((*s == '\\' || *s == '"') && buf_putc(out, '\\') == -1)
			return -1;
		if (*s == '\n') {
			if (buf_puts(out, "\\n") == -1)
				return -1;
		} else if (buf_putc(out, *s) == -1)
			return -1;
	}
	return 0;
}

/* ,key="value" (the first one opens the braces: *sep starts as "{"). */
static int
label_add(struct buf *out, const char **sep, const char *key,
    const char *value)
{
	if (buf_printf(out, "%s%s=\"", *sep, key) == -1 ||
	    label_value(out, value) == -1 || buf_putc(out, '"') == -1)
		return -1;
	*sep = ",";
	return 0;
}

/*
 * One sample: the name, the row's url/role/name/kind labels, the entry's
 * own label, then for a state string state="..." and the value 1, else
 * the number or boolean v.
 */
static int
metric_sample(struct buf *out, const struct metric_def *d, const cJSON *row,
    const cJSON *v)
{
	static const char *const keys[] = { "url", "role", "name", "kind" };
	const char	*s, *sep = "{";
	size_t		 i;

	if (buf_puts(out, d->name) == -1)
		return -1;
	for (i = 0; row != NULL && i < sizeof(keys) / sizeof(keys[0]); i++) {
		s = cJSON_GetStringValue(cJSON_GetObjectItem(row, keys[i]));
		if (s != NULL && label_add(out, &sep, keys[i], s) == -1)
			return -1;
	}
	if (d->label != NULL && label_add(out, &sep, d->label, d->lvalue) == -1)
		return -1;
	if (cJSON_IsString(v) && label_add(out, &sep, "state",
	    v->valuestring) == -1)
		return -1;
	if (*sep == ',' && buf_putc(out, '}') == -1)
		return -1;
	return cJSON_IsString(v) ? buf_puts(out, " 1\n") : metric_value(out, v);
}

/* A number, a boolean, or a string field named state. */
static int
field_wanted(const cJSON *v)
{
	return cJSON_IsNumber(v) || cJSON_IsBool(v) ||
	    (cJSON_IsString(v) && strcmp(v->string, "state") == 0);
}

/* Every row's value of one field, as one family. */
static int
rows_field(struct metrics_out *w, const char *path, const cJSON *rows,
    const char *field)
{
	const struct metric_def	*d;
	struct metric_def	 tmp;
	const cJSON		*row, *v;
	char			 sub[METRIC_MAX_PATH], name[METRIC_MAX_NAME];

	if (snprintf(sub, sizeof(sub), "%s[].%s", path, field) >=
	    (int)sizeof(sub) ||
	    (d = metric_for(sub, &tmp, name, sizeof(name))) == NULL)
		return 0;
	if (metric_head(w, d, sub) == -1)
		return -1;
	cJSON_ArrayForEach(row, rows) {
		v = cJSON_GetObjectItemCaseSensitive(row, field);
		if (v != NULL && field_wanted(v) &&
		    metric_sample(w->out, d, row, v) == -1)
			return -1;
	}
	return 0;
}

/* An array of objects: one family per field any row has. */
static int
metrics_rows(struct metrics_out *w, const char *path, const cJSON *rows)
{
	const char	*seen[METRIC_MAX_FIELDS];
	const cJSON	*row, *v;
	size_t		 nseen = 0, i;

	cJSON_ArrayForEach(row, rows) {
		cJSON_ArrayForEach(v, row) {
			if (v->string == NULL || !field_wanted(v))
				continue;
			for (i = 0; i < nseen; i++)
				if (strcmp(seen[i], v->string) == 0)
					break;
			if (i < nseen || nseen == METRIC_MAX_FIELDS)
				continue;
			seen[nseen++] = v->string;
			if (rows_field(w, path, rows, v->string) == -1)
				return -1;
		}
	}
	return 0;
}

static int
metrics_object(struct metrics_out *w, const char *path, const cJSON *obj)
{
	const struct metric_def	*d;
	struct metric_def	 tmp;
	const cJSON		*v;
	char			 sub[METRIC_MAX_PATH], name[METRIC_MAX_NAME];

	cJSON_ArrayForEach(v, obj) {
		if (v->string == NULL || snprintf(sub, sizeof(sub), "%s%s%s",
		    path, *path ? "." : "", v->string) >= (int)sizeof(sub))
			continue;	/* no status path is that long */
		if (field_wanted(v)) {
			if ((d = metric_for(sub, &tmp, name,
			    sizeof(name))) != NULL &&
			    (metric_head(w, d, sub) == -1 ||
			    metric_sample(w->out, d, NULL, v) == -1))
				return -1;
		} else if (cJSON_IsObject(v)) {
			if (metrics_object(w, sub, v) == -1)
				return -1;
		} else if (cJSON_IsArray(v) && cJSON_IsObject(v->child)) {
			if (metrics_rows(w, sub, v) == -1)
				return -1;
		}
	}
	return 0;
}

int
api_metrics(const cJSON *status, struct buf *out)
{
	struct metrics_out	 w = { out, "" };
	const char		*version;

	version = cJSON_GetStringValue(cJSON_GetObjectItem(status, "version"));
	if (buf_puts(out, "# HELP cachebox_info Version of cacheboxd.\n"
	    "# TYPE cachebox_info gauge\ncachebox_info{version=\"") == -1 ||
	    label_value(out, version ? version : "") == -1 ||
	    buf_puts(out, "\"} 1\n") == -1)
		return -1;
	return metrics_object(&w, "", status);
}
