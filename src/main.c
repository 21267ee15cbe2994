/*
 * main.c — cacheboxd: parse the command line, build the configuration in
 * its precedence order, open the state directory, the database and the box
 * key, wire the parts of struct app together and run the loop.
 *
 * Start-up errors (a bad key, an unwritable state directory, a database
 * that is not ours or is too new) end the process with one line on stderr
 * and exit status 1; nothing the daemon refuses is ever overwritten. After
 * start-up nothing here may exit: a failing part logs and carries on.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/dns.h"
#include "net/sdnotify.h"
#include "nostr/nip19.h"
#include "relay/pool.h"
#include "serve/serve.h"
#include "store/checkpoint.h"
#include "store/ckpt_proc.h"
#include "store/config_store.h"
#include "store/store.h"
#include "sync/backup.h"
#include "sync/ctx.h"
#include "sync/drain.h"
#include "sync/follow.h"
#include "sync/ingest.h"
#include "sync/jobs.h"
#include "sync/live.h"
#include "sync/negsync.h"
#include "sync/relays_obs.h"
#include "sync/retention.h"
#include "sync/sweep.h"
#include "ui/cmd_data.h"
#include "ui/commands.h"
#include "ui/console.h"
#include "ui/ctlsock.h"
#include "ui/download.h"
#include "ui/firstrun.h"
#include "ui/reply.h"
#include "uplink/uplink.h"
#include "ui/http.h"

#define DEFAULT_STATE_DIR	"/var/lib/cachebox"

enum {
	OPT_SET = 256,
	OPT_CONSOLE,
	OPT_EXIT_IDLE,
	OPT_CHECK,
	OPT_VERSION,
	OPT_HELP,
};

struct options {
	const char	*dir;
	const char	*config_file;
	const char	*console;
	char		**sets;
	int		 nsets;
	int		 exit_when_idle;
	int		 check_only;
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: cacheboxd [-d DIR] [-c FILE] [--set KEY=VALUE]... "
	    "[--console TTY|-]\n"
	    "                 [--exit-when-idle] [--check-config] "
	    "[--version] [--help]\n"
	    "\n"
	    "  -d DIR            state directory: database, box key, control "
	    "socket\n"
	    "                    (default " DEFAULT_STATE_DIR ")\n"
	    "  -c FILE           configuration file of 'key = value' lines\n"
	    "  --set KEY=VALUE   set one key; repeatable; wins over -c and the "
	    "database\n"
	    "  --console TTY|-   serve the command console on a tty, or on "
	    "stdin/stdout\n"
	    "  --exit-when-idle  exit 0 once there is no work left\n"
	    "  --check-config    validate the configuration and exit\n"
	    "  --version         print the version and exit\n");
}

static int
parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "set",		required_argument, NULL, OPT_SET },
		{ "console",		required_argument, NULL, OPT_CONSOLE },
		{ "exit-when-idle",	no_argument,	   NULL, OPT_EXIT_IDLE },
		{ "check-config",	no_argument,	   NULL, OPT_CHECK },
		{ "version",		no_argument,	   NULL, OPT_VERSION },
		{ "help",		no_argument,	   NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int	ch;

	memset(o, 0, sizeof(*o));
	o->dir = DEFAULT_STATE_DIR;
	if ((o->sets = calloc((size_t)argc, sizeof(char *))) == NULL)
		fatal("calloc");
	while ((ch = getopt_long(argc, argv, "d:c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd': o->dir = optarg; break;
		case 'c': o->config_file = optarg; break;
		case OPT_SET: o->sets[o->nsets++] = optarg; break;
		case OPT_CONSOLE: o->console = optarg; break;
		case OPT_EXIT_IDLE: o->exit_when_idle = 1; break;
		case OPT_CHECK: o->check_only = 1; break;
		case OPT_VERSION:
			printf("cacheboxd %s\n", CACHEBOX_VERSION);
			exit(0);
		case 'h':
		case OPT_HELP:
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "cacheboxd: unexpected argument '%s'\n",
		    argv[optind]);
		usage(stderr);
		return -1;
	}
	return 0;
}

/*
 * The configuration from the file and the command line (the database
 * layer comes later, once the store is open). NULL after printing why.
 */
static struct config *
config_from_options(const struct options *o)
{
	struct config	*cfg;
	char		 err[512];
	int		 i;

	if ((cfg = config_new()) == NULL)
		fatalx("out of memory");
	if (o->config_file != NULL &&
	    config_load_file(cfg, o->config_file, err, sizeof(err)) == -1)
		goto bad;
	for (i = 0; i < o->nsets; i++)
		if (config_set_arg(cfg, o->sets[i], err, sizeof(err)) == -1)
			goto bad;
	if (o->console != NULL && config_set(cfg, "console.tty", o->console,
	    CFG_SRC_CLI, err, sizeof(err)) == -1)
		goto bad;
	return cfg;
bad:
	fprintf(stderr, "cacheboxd: %s\n", err);
	config_free(cfg);
	return NULL;
}

/*
 * Files of the state directory that hold secrets or the cache: an older
 * version, or an admin's copy, may have left them readable by others.
 */
static const char *const state_files[] = {
	STORE_DB_NAME, STORE_DB_NAME "-wal", STORE_DB_NAME "-shm",
	STORE_DB_NAME "-journal", "http.port", "relay.port",
};

/* chmod 0600 every state file that others may read; log each one. */
static void
state_files_tighten(const char *dir)
{
	char		path[PATH_MAX];
	struct stat	st;
	size_t		i;

	for (i = 0; i < sizeof(state_files) / sizeof(state_files[0]); i++) {
		if (snprintf(path, sizeof(path), "%s/%s", dir,
		    state_files[i]) >= (int)sizeof(path) ||
		    lstat(path, &st) == -1 || !S_ISREG(st.st_mode) ||
		    (st.st_mode & 077) == 0)
			continue;
		if (chmod(path, 0600) == -1)
			log_warn("cannot make %s private (mode %03o)", path,
			    (unsigned)(st.st_mode & 0777));
		else
			log_info("%s was mode %03o; now 0600", path,
			    (unsigned)(st.st_mode & 0777));
	}
}

/*
 * The directory itself is the admin's choice (a package may make it
 * 0750 for a group that reads logs), so it is not changed, only named.
 */
static void
state_dir_check_mode(const char *dir)
{
	struct stat	st;

	if (stat(dir, &st) == 0 && (st.st_mode & 077) != 0)
		log_warnx("state directory %s is mode %03o: other users can "
		    "see its names; every file cacheboxd creates there is "
		    "0600, but 'chmod 700 %s' is safer", dir,
		    (unsigned)(st.st_mode & 0777), dir);
}

/*
 * Create the state directory if needed (0700) and check we can write it;
 * warn when others can look into it and make its files private.
 */
static int
state_dir_ready(const char *dir)
{
	char	probe[PATH_MAX];
	int	n;

	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		fprintf(stderr, "cacheboxd: state directory %s: %s\n", dir,
		    strerror(errno));
		return -1;
	}
	n = snprintf(probe, sizeof(probe), "%s/.", dir);
	if (n < 0 || (size_t)n >= sizeof(probe) || access(probe, W_OK | X_OK) == -1) {
		fprintf(stderr, "cacheboxd: state directory %s is not writable: %s\n",
		    dir, n < 0 || (size_t)n >= sizeof(probe) ? "path too long" :
		    strerror(errno));
		return -1;
	}
	state_dir_check_mode(dir);
	return 0;
}

static int
open_state(struct app *app)
{
	char	err[512];

	if (state_dir_ready(app->state_dir) == -1)
		return -1;
	if (store_open(&app->store, app->state_dir, err, sizeof(err)) == 0)
		state_files_tighten(app->state_dir);	/* ours, now known */
	if (app->store == NULL ||
	    store_config_load(app->store, app->cfg, err, sizeof(err)) == -1 ||
	    key_load_or_create(app->state_dir, &app->key, err, sizeof(err)) == -1) {
		fprintf(stderr, "cacheboxd: %s\n", err);
		return -1;
	}
	store_set_cache_kib(app->store, config_get_int(app->cfg, "store.cache_kib"));
	nip19_encode32(NIP19_NPUB, app->key.pubkey, app->npub, sizeof(app->npub));
	return 0;
}

static void
apply_log_level(const struct config *cfg)
{
	enum log_level	lvl;

	if (log_level_parse(config_get(cfg, "log.level"), &lvl) == 0)
		log_set_level(lvl);
}

/*
 * SIGHUP: read the configuration file again. Keys that may change at run
 * time take their new value; the others are reported as needing a restart.
 */
static void
reload_config(struct app *app)
{
	struct options	 o = { 0 };
	struct config	*fresh;
	char		 err[512];

	o.config_file = app->config_file;
	o.sets = app->sets;
	o.nsets = app->nsets;
	if ((fresh = config_from_options(&o)) == NULL) {
		log_warnx("reload: configuration refused, keeping the old one");
		return;
	}
	if (store_config_load(app->store, fresh, err, sizeof(err)) == -1) {
		log_warnx("reload: %s", err);
		config_free(fresh);
		return;
	}
	config_adopt(app->cfg, fresh);
	config_free(fresh);
	app_config_changed(app, NULL);
	firstrun_token_changed(app->firstrun);
	log_info("configuration reloaded");
}

static void
on_signal(struct loop *loop, int signo, void *arg)
{
	struct app	*app = arg;

	if (signo == SIGHUP) {
		reload_config(app);
		return;
	}
	log_info("signal %d: shutting down", signo);
	app->stopping = true;
	loop_stop(loop);
}

static void
idle_check(struct loop *loop, void *arg)
{
	struct app	*app = arg;

	if (store_damaged(app->store)) {
		log_err("the store is damaged: exiting (--exit-when-idle)");
		app->exit_status = 1;
		loop_stop(loop);
		return;
	}
	if (app_idle(app)) {
		log_info("idle: no work left, exiting (--exit-when-idle)");
		loop_stop(loop);
		return;
	}
	loop_timer_add(loop, IDLE_CHECK_MS, idle_check, app);
}

/* The first run's sinks (firstrun.h): the console, the page, the store. */
static void
firstrun_notice(void *arg, const char *text)
{
	struct app	*app = arg;

	console_notice(app->console, text);
}

static unsigned
firstrun_page_port(void *arg)
{
	struct app	*app = arg;

	return app->http != NULL ? http_port(app->http) : 0;
}

static cJSON *
firstrun_store_token(void *arg, const char *token)
{
	return commands_config_store(arg, CONFIG_ADMIN_TOKEN, token,
	    CMD_FROM_WEB);
}

/*
 * The status page and API, and the serial console when one is configured.
 * Neither is worth refusing to start over: a busy port is logged and the
 * box runs on (the console can fix http.listen); a console device that is
 * not there yet is retried by the console itself.
 */
static int
start_surfaces(struct app *app)
{
	const char	*listen = config_get(app->cfg, "http.listen");
	const char	*tty = config_get(app->cfg, "console.tty");
	char		 err[512];
	const struct firstrun_sinks out = {
		.notice = firstrun_notice,
		.page_port = firstrun_page_port,
		.store_token = firstrun_store_token,
		.arg = app,
	};

	if (*listen != '\0' &&
	    (app->http = http_start(app, listen, err, sizeof(err))) == NULL)
		log_warnx("%s; running without the status page", err);
	if (app->http != NULL && (app->firstrun = firstrun_start(app, &out)) == NULL)
		log_warnx("setup: out of memory: no setup code");
	if (*tty != '\0' &&
	    (app->console = console_open(app, tty, err, sizeof(err))) == NULL) {
		fprintf(stderr, "cacheboxd: %s\n", err);
		return -1;
	}
	return 0;
}

/*
 * Backpressure for the drain and the jobs: the store is over store.max_bytes, while
 * retention evicts (a moment, in steady state at the budget) or for as
 * long as it has nothing left it may evict (an uplink outage holding the
 * inbox, or protected kinds alone). Live stays on: it is small and cannot
 * be asked again later.
 */
static bool
store_full(void *retention)
{
	return retention_state(retention) != RETENTION_WITHIN;
}

/*
 * The relay pool, ingest and the planners on top of them: the follow
 * graph tells the drain and the live stream when the followed set or a
 * relay list changed.
 */
static int
start_sync(struct app *app)
{
	struct pool_opts	o;
	struct sync_ctx		cx;

	memset(&o, 0, sizeof(o));
	if ((app->dns = dns_new(app->loop)) == NULL)
		log_warnx("no resolver: only IP literals can be dialled");
	else if (dns_set_servers(app->dns,
	    config_get(app->cfg, "dns.servers")) == -1) {
		fprintf(stderr, "cacheboxd: dns.servers: cannot use '%s'\n",
		    config_get(app->cfg, "dns.servers"));
		return -1;
	}
	app_store_lend(app);
	if ((app->ingest = ingest_new(app->loop, app->store)) == NULL ||
	    (app->relays_obs = relays_obs_new(app->store,
	    app->ingest)) == NULL) {
		fprintf(stderr, "cacheboxd: cannot start ingest\n");
		return -1;
	}
	/* Without it SQLite checkpoints inside the commits, as before. */
	if ((app->ckpt = store_ckpt_new(app->loop, app->store,
	    (int)config_get_int(app->cfg, "store.checkpoint_mib") *
	    (1024 * 1024 / STORE_PAGE_BYTES))) == NULL)
		log_warnx("store: checkpoints stay inside the commits");
	else if (store_ckpt_use_process(app->ckpt) == -1)
		log_warnx("store: checkpoints stay in the loop");
	o.conf.dns = app->dns;
	o.conf.ca_file = config_get(app->cfg, "tls.ca_file");
	o.conf.key = &app->key;
	o.conf.pace_ms = (uint32_t)config_get_int(app->cfg, "backfill.pace_ms");
	o.conf.backoff_cap_ms = (uint32_t)config_get_int(app->cfg,
	    "relay.backoff_max_ms");
	o.observer = relays_obs_observer(app->relays_obs);
	if ((app->pool = pool_new(app->loop, &o)) == NULL) {
		fprintf(stderr, "cacheboxd: cannot start the relay pool\n");
		return -1;
	}
	app_ingest_configure(app);
	app->follow = follow_new(app->loop, app->pool, app->ingest,
	    app->store, app->cfg);
	cx = (struct sync_ctx){ .loop = app->loop, .pool = app->pool,
	    .ing = app->ingest, .st = app->store, .cfg = app->cfg,
	    .follow = app->follow };
	app->drain = drain_new(&cx);
	app->negsync = negsync_new(&cx);
	app->live = live_new(&cx);
	app->retention = retention_new(app->loop, app->store, app->ingest,
	    app->cfg);
	app->sweep = sweep_new(app->loop, app->store, app->ingest);
	app->jobs = jobs_new(&cx);
	/* After ingest: its hook steps once ingest's has committed. */
	app->backup = backup_new(app->loop, app->store);
	if (app->backup != NULL)
		app->download = download_new(app->loop, app->backup,
		    app->state_dir);
	if (app->follow == NULL || app->drain == NULL || app->live == NULL ||
	    app->negsync == NULL || app->jobs == NULL || app->backup == NULL ||
	    app->download == NULL ||
	    app->retention == NULL || app->sweep == NULL ||
	    follow_listen(app->follow, drain_sync, app->drain) == -1 ||
	    follow_listen(app->follow, live_sync, app->live) == -1) {
		fprintf(stderr, "cacheboxd: out of memory\n");
		return -1;
	}
	drain_set_hold(app->drain, store_full, app->retention);
	jobs_set_hold(app->jobs, store_full, app->retention);
	drain_set_negsync(app->drain, app->negsync);
	jobs_set_negsync(app->jobs, app->negsync);
	follow_start(app->follow);
	return 0;
}

/*
 * The box's own relay on relay.listen (empty: none). Like the status
 * page, not worth refusing to start over: a busy port is logged and the
 * box runs on without it.
 */
static void
start_relay(struct app *app)
{
	struct serve_opts	o = { 0 };
	char			err[512];

	o.listen = config_get(app->cfg, "relay.listen");
	if (*o.listen == '\0')
		return;
	o.loop = app->loop;
	o.store = app->store;
	o.ingest = app->ingest;
	o.cfg = app->cfg;
	o.pubkey = app->key.pubkey;
	o.state_dir = app->state_dir;
	if ((app->serve = serve_start(&o, err, sizeof(err))) == NULL) {
		log_warnx("%s; running without the relay endpoint", err);
		return;
	}
	app_section_add(app, "relay_endpoint", serve_status_json, app->serve);
}

/*
 * The uplink follows uplink.url by itself (none while it is empty), so it
 * is always made; a driver that cannot run shows why in the status. It
 * keeps a relay pool of its own (a forced reconnect of the owner's relay
 * must not touch the planners' subscriptions) and tells ingest whether to
 * queue new events.
 */
static int
start_uplink(struct app *app)
{
	struct uplink_opts	o = { 0 };

	o.loop = app->loop;
	o.store = app->store;
	o.cfg = app->cfg;
	o.key = &app->key;
	o.dns = app->dns;
	o.relay_observer = relays_obs_observer(app->relays_obs);
	o.target_changed = app_uplink_target_changed;
	o.target_arg = app;
	o.pick = uplink_driver_for;
	if ((app->uplink = uplink_new(&o)) == NULL ||
	    uplink_start(app->uplink) == -1) {
		fprintf(stderr, "cacheboxd: cannot set up the uplink\n");
		return -1;
	}
	return 0;
}

static int
start_parts(struct app *app)
{
	struct ctlsock_stream	stream;
	char			path[256], err[512];

	if ((app->loop = loop_new()) == NULL ||
	    loop_signals(app->loop, on_signal, app) == -1) {
		fprintf(stderr, "cacheboxd: cannot set up the event loop\n");
		return -1;
	}
	app->started_ms = clock_mono_ms();
	if (ctlsock_path(app->state_dir, path, sizeof(path)) == -1) {
		fprintf(stderr, "cacheboxd: state directory path too long\n");
		return -1;
	}
	app->ctl = ctlsock_listen(app->loop, path, commands_ctl_handler, app,
	    err, sizeof(err));
	if (app->ctl == NULL) {
		fprintf(stderr, "cacheboxd: %s\n", err);
		return -1;
	}
	if (start_surfaces(app) == -1 || start_sync(app) == -1)
		return -1;
	cmd_data_stream_ops(app, &stream);
	ctlsock_set_stream(app->ctl, &stream);
	if (start_uplink(app) == -1)
		return -1;
	start_relay(app);
	if (app->exit_when_idle)
		loop_timer_add(app->loop, 0, idle_check, app);
	return 0;
}

static void
stop_parts(struct app *app)
{
	console_free(app->console);
	firstrun_free(app->firstrun);
	if (app->serve != NULL)
		app_section_del(app, app->serve);
	serve_free(app->serve);
	http_free(app->http);
	ctlsock_free(app->ctl);
	uplink_free(app->uplink);
	live_free(app->live);
	jobs_free(app->jobs);
	drain_free(app->drain);
	negsync_free(app->negsync);
	sweep_free(app->sweep);
	retention_free(app->retention);
	download_free(app->download);
	backup_free(app->backup);
	follow_free(app->follow);
	pool_free(app->pool);
	relays_obs_free(app->relays_obs);
	ingest_free(app->ingest);
	store_ckpt_free(app->ckpt);
	dns_free(app->dns);
	store_close(app->store);
	loop_free(app->loop);
	config_free(app->cfg);
	key_clear(&app->key);
}

/* Everything after the command line; returns the exit status. */
static int
run(struct options *o)
{
	struct app	 app = { 0 };
	struct sdnotify	*notify;
	int		 rc;

	if ((app.cfg = config_from_options(o)) == NULL)
		return 1;
	if (o->check_only) {
		printf("configuration OK\n");
		config_free(app.cfg);
		return 0;
	}
	apply_log_level(app.cfg);
	app.state_dir = o->dir;
	app.config_file = o->config_file;
	app.sets = o->sets;
	app.nsets = o->nsets;
	app.exit_when_idle = o->exit_when_idle;
	if (open_state(&app) == -1 || start_parts(&app) == -1) {
		stop_parts(&app);
		return 1;
	}
	apply_log_level(app.cfg);
	log_info("cacheboxd %s started; state %s; box key %s", CACHEBOX_VERSION,
	    app.state_dir, app.npub);
	/* Under systemd (Type=notify): ready now that the store is open and
	 * the surfaces listen; a watchdog keep-alive while the loop turns. */
	notify = sdnotify_open(app.loop, getenv("NOTIFY_SOCKET"),
	    getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"), app_summary, &app);
	sdnotify_ready(notify);
	rc = loop_run(app.loop) == 0 ? app.exit_status : 1;
	sdnotify_stopping(notify);
	sdnotify_free(notify);
	stop_parts(&app);
	log_info("stopped");
	return rc;
}

int
main(int argc, char **argv)
{
	struct options	o;
	int		rc;

	/*
	 * Every file the daemon creates is private, whatever umask it was
	 * started with: the database holds the admin token's hash and the
	 * cache, the state directory the box key.
	 */
	umask(077);
	log_init(stderr, LOG_LEVEL_INFO);
	/* The checkpoint process: the daemon's binary run again (ckpt_proc.h). */
	if (argc > 1 && strcmp(argv[1], CKPT_PROC_ARG) == 0)
		return ckpt_proc_main(argc, argv);
	app_config_lend_checks();
	if (parse_args(argc, argv, &o) == -1) {
		free(o.sets);
		return 2;
	}
	rc = run(&o);
	free(o.sets);
	return rc;
}
