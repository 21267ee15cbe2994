/*
 * cacheboxctl — the command-line tool. Offline subcommands (event verify,
 * event sign, nip19 decode/encode, negentropy harness) run here without a
 * daemon; every other
 * command goes to the running daemon through ctl_daemon_command(). This
 * file must never print a secret key it did not decode on request, and
 * never read a line past the event size limit into memory.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/hex.h"
#include "core/json.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "nostr/key.h"
#include "nostr/neg_harness.h"
#include "nostr/nip19.h"
#include "store/scan.h"
#include "store/store.h"
#include "store/withdrawn.h"
#include "ui/ctlclient.h"
#include "ui/ctlsock.h"
#include "ui/render.h"

#define CTL_EXIT_USAGE	2
#define CTL_DEFAULT_DIR	"/var/lib/cachebox"

struct ctl {
	const char	*dir;		/* -d DIR, or NULL for the default */
	size_t		 max_event;	/* limits.max_event_bytes */
	int		 json;		/* --json, anywhere on the line */
};

static void
ctl_usage(FILE *fp)
{
	fprintf(fp,
	    "usage: cacheboxctl [-d DIR] [--json] COMMAND [ARG...]\n"
	    "       cacheboxctl --version | --help\n"
	    "offline commands:\n"
	    "  event verify [FILE]          check JSON events, one per line\n"
	    "  event sign --key FILE        sign JSON templates, one per line\n"
	    "  nip19 decode STRING          show what a NIP-19 string holds\n"
	    "  nip19 encode npub|nsec|note HEX\n"
	    "  negentropy harness           NIP-77 conformance line protocol on\n"
	    "                               stdin/stdout (FRAMESIZELIMIT bytes)\n"
	    "  export [--filter JSON] [FILE|-]  stored events as JSONL, newest\n"
	    "                               first (reads the database; the daemon\n"
	    "                               may run)\n"
	    "  export --roots-history [FILE|-]  the roots' earlier profiles,\n"
	    "                               follow lists and relay lists kept\n"
	    "                               aside, as JSONL\n"
	    "data commands (through the daemon):\n"
	    "  import FILE|-                JSONL events, each verified and stored\n"
	    "  backup FILE                  a consistent copy of the database\n"
	    "daemon commands (--json anywhere: the JSON answer):\n"
	    "  help                         every command of the daemon\n"
	    "  GROUP                        the commands of a group, e.g. jobs\n"
	    "  status                       what the box is doing, at a glance\n"
	    "  follows [--relays]           one line per author (--relays:\n"
	    "                               each relay's cursor)\n"
	    "  config list | get KEY | set KEY VALUE\n");
}

/* ---- Daemon commands ------------------------------------------------ */

/*
 * Send the command named by argv to the daemon behind ctl->dir (default
 * /var/lib/cachebox) and print its answer. Returns the exit status.
 */
static int
ctl_daemon_command(const struct ctl *ctl, int argc, char **argv)
{
	return ctlclient_run(ctl->dir != NULL ? ctl->dir : CTL_DEFAULT_DIR,
	    argc, argv, ctl->json ? RENDER_JSON : 0);
}

/* ---- Line input ----------------------------------------------------- */

/*
 * Read one line (without its newline) into line, at most max bytes.
 * 1 for a line, 0 at end of input, -1 for a line longer than max (the
 * rest of it is skipped so the next call starts at the next line).
 */
static int
ctl_read_line(FILE *fp, struct buf *line, size_t max)
{
	int	c, over = 0, any = 0;

	buf_reset(line);
	while ((c = getc(fp)) != EOF) {
		any = 1;
		if (c == '\n')
			break;
		if (!over && (line->len >= max || buf_putc(line, c) == -1))
			over = 1;
	}
	if (!any)
		return 0;
	if (line->len > 0 && line->data[line->len - 1] == '\r')
		line->data[--line->len] = '\0';
	return over ? -1 : 1;
}

/* 1 if the line holds only blanks. */
static int
ctl_blank(const struct buf *line)
{
	size_t	i;

	for (i = 0; i < line->len; i++)
		if (line->data[i] != ' ' && line->data[i] != '\t')
			return 0;
	return 1;
}

/* ---- event verify --------------------------------------------------- */

/* Check one line; print the verdict. 0 valid, 1 invalid. */
static int
ctl_verify_one(const struct ctl *ctl, const struct buf *line,
    struct buf *scratch)
{
	struct event		 ev;
	enum event_result	 r;
	char			 hex[65];

	r = event_validate(&ev, (const char *)line->data, line->len,
	    ctl->max_event, clock_wall_s(), scratch);
	(void)hex_encode(ev.id, sizeof(ev.id), hex, sizeof(hex));
	if (r == EVENT_OK) {
		printf("valid %s\n", hex);
		event_free(&ev);
		return 0;
	}
	printf("invalid %s %s\n", ev.id_ok ? hex : "?", event_result_str(r));
	return 1;
}

static int
ctl_event_verify(const struct ctl *ctl, int argc, char **argv)
{
	struct buf	 line, scratch;
	FILE		*fp = stdin;
	int		 r, bad = 0;

	if (argc > 1) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (argc == 1 && strcmp(argv[0], "-") != 0 &&
	    (fp = fopen(argv[0], "r")) == NULL) {
		fprintf(stderr, "cacheboxctl: %s: %s\n", argv[0],
		    strerror(errno));
		return 1;
	}
	buf_init(&line, ctl->max_event);
	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	while ((r = ctl_read_line(fp, &line, ctl->max_event)) != 0) {
		if (r == -1) {
			printf("invalid ? %s\n",
			    event_result_str(EVENT_TOO_LARGE));
			bad = 1;
		} else if (!ctl_blank(&line))
			bad |= ctl_verify_one(ctl, &line, &scratch);
	}
	buf_free(&line);
	buf_free(&scratch);
	if (fp != stdin)
		fclose(fp);
	return bad;
}

/* ---- event sign ----------------------------------------------------- */

/*
 * Sign one template {kind, created_at?, tags?, content?} and print the
 * event. created_at defaults to now, tags to [], content to "".
 */
static int
ctl_sign_one(const struct nostr_key *key, const struct buf *line,
    struct buf *out, unsigned long lineno)
{
	cJSON			*t;
	const cJSON		*v;
	struct event		 ev;
	enum event_result	 r;
	int64_t			 kind = 0, created_at = clock_wall_s();
	const char		*content = "", *why = NULL;

	if ((t = cJSON_ParseWithLength((const char *)line->data,
	    line->len)) == NULL || !cJSON_IsObject(t))
		why = "not a JSON object";
	else if (json_int(cJSON_GetObjectItemCaseSensitive(t, "kind"), 0,
	    65535, &kind) == -1)
		why = "kind must be an integer from 0 to 65535";
	else if ((v = cJSON_GetObjectItemCaseSensitive(t, "created_at")) !=
	    NULL && json_int(v, INT64_MIN, INT64_MAX, &created_at) == -1)
		why = "created_at must be an integer";
	else if ((v = cJSON_GetObjectItemCaseSensitive(t, "content")) !=
	    NULL && (!cJSON_IsString(v) || (content = v->valuestring) == NULL))
		why = "content must be a string";
	if (why == NULL) {
		v = cJSON_GetObjectItemCaseSensitive(t, "tags");
		r = event_create(&ev, key, (uint32_t)kind, created_at, v,
		    content);
		if (r != EVENT_OK)
			why = event_result_str(r);
	}
	cJSON_Delete(t);
	if (why != NULL) {
		fprintf(stderr, "cacheboxctl: line %lu: %s\n", lineno, why);
		return 1;
	}
	buf_reset(out);
	r = event_to_json(&ev, out) == 0 ? EVENT_OK : EVENT_TOO_LARGE;
	event_free(&ev);
	if (r != EVENT_OK) {
		fprintf(stderr, "cacheboxctl: line %lu: event too large\n",
		    lineno);
		return 1;
	}
	printf("%s\n", buf_cstr(out));
	return 0;
}

static int
ctl_event_sign(const struct ctl *ctl, int argc, char **argv)
{
	struct nostr_key	 key;
	struct buf		 line, out;
	char			 err[512];
	unsigned long		 lineno = 0;
	int			 r, bad = 0;

	if (argc != 2 || strcmp(argv[0], "--key") != 0) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (key_load_file(argv[1], &key, err, sizeof(err)) == -1) {
		fprintf(stderr, "cacheboxctl: %s\n", err);
		return 1;
	}
	buf_init(&line, ctl->max_event);
	buf_init(&out, EVENT_SERIAL_MAX_BYTES);
	while ((r = ctl_read_line(stdin, &line, ctl->max_event)) != 0) {
		lineno++;
		if (r == -1) {
			fprintf(stderr, "cacheboxctl: line %lu: too large\n",
			    lineno);
			bad = 1;
		} else if (!ctl_blank(&line))
			bad |= ctl_sign_one(&key, &line, &out, lineno);
	}
	key_clear(&key);
	buf_free(&line);
	buf_free(&out);
	return bad;
}

/* ---- nip19 ---------------------------------------------------------- */

static void
ctl_print_hex(const char *label, const uint8_t *b)
{
	char	hex[65];

	(void)hex_encode(b, 32, hex, sizeof(hex));
	printf("%s %s\n", label, hex);
}

static int
ctl_nip19_decode(const char *text)
{
	static struct nip19_entity	 e;
	static const char *const	 keyname[] = {
		[NIP19_NPUB] = "pubkey", [NIP19_NSEC] = "seckey",
		[NIP19_NOTE] = "id", [NIP19_NPROFILE] = "pubkey",
		[NIP19_NEVENT] = "id", [NIP19_NADDR] = NULL,
	};
	enum nip19_err			 err;
	size_t				 i;

	if ((err = nip19_decode(text, &e)) != NIP19_OK) {
		fprintf(stderr, "cacheboxctl: %s\n", nip19_strerror(err));
		return 1;
	}
	printf("type %s\n", nip19_type_prefix(e.type));
	if (keyname[e.type] != NULL)
		ctl_print_hex(keyname[e.type], e.key);
	if (e.type == NIP19_NADDR)
		printf("identifier %s\n", e.identifier);
	if (e.has_author)
		ctl_print_hex("author", e.author);
	if (e.has_kind)
		printf("kind %u\n", (unsigned)e.kind);
	for (i = 0; i < e.nrelays; i++)
		printf("relay %s\n", e.relays[i]);
	return 0;
}

static int
ctl_nip19_encode(const char *type, const char *hex)
{
	static const struct {
		const char	*name;
		enum nip19_type	 type;
	} types[] = {
		{ "npub", NIP19_NPUB }, { "nsec", NIP19_NSEC },
		{ "note", NIP19_NOTE },
	};
	uint8_t		b[32];
	char		out[NIP19_KEY_CHARS + 1];
	size_t		i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(type, types[i].name) == 0)
			break;
	if (i == sizeof(types) / sizeof(types[0])) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (hex_decode(hex, strlen(hex), b, sizeof(b)) == -1) {
		fprintf(stderr, "cacheboxctl: expected 64 lowercase hex "
		    "digits\n");
		return 1;
	}
	if (nip19_encode32(types[i].type, b, out, sizeof(out)) != NIP19_OK) {
		fprintf(stderr, "cacheboxctl: cannot encode\n");
		return 1;
	}
	printf("%s\n", out);
	return 0;
}

static int
ctl_nip19(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	if (argc == 2 && strcmp(argv[0], "decode") == 0)
		return ctl_nip19_decode(argv[1]);
	if (argc == 3 && strcmp(argv[0], "encode") == 0)
		return ctl_nip19_encode(argv[1], argv[2]);
	ctl_usage(stderr);
	return CTL_EXIT_USAGE;
}

static int
ctl_event(const struct ctl *ctl, int argc, char **argv)
{
	if (argc >= 1 && strcmp(argv[0], "verify") == 0)
		return ctl_event_verify(ctl, argc - 1, argv + 1);
	if (argc >= 1 && strcmp(argv[0], "sign") == 0)
		return ctl_event_sign(ctl, argc - 1, argv + 1);
	ctl_usage(stderr);
	return CTL_EXIT_USAGE;
}

/* ---- negentropy harness -------------------------------------------- */

/*
 * The frame-size limit from FRAMESIZELIMIT, as the reference harnesses
 * read it: unset or empty is 0 (none). 0, or -1 if it is not a number.
 */
static int
ctl_frame_limit(size_t *limit)
{
	const char		*v = getenv("FRAMESIZELIMIT");
	char			*end;
	unsigned long long	 n;

	*limit = 0;
	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || *v == '-' || n > SIZE_MAX)
		return -1;
	*limit = (size_t)n;
	return 0;
}

static int
ctl_negentropy(const struct ctl *ctl, int argc, char **argv)
{
	size_t	limit;

	(void)ctl;
	if (argc != 1 || strcmp(argv[0], "harness") != 0) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (ctl_frame_limit(&limit) == -1) {
		fprintf(stderr, "cacheboxctl: FRAMESIZELIMIT is not a number\n");
		return CTL_EXIT_USAGE;
	}
	return neg_harness_run(stdin, stdout, stderr, limit);
}

/* ---- export ------------------------------------------------------- */

/* Parse --filter: one filter object, or an array of them. */
static int
ctl_export_filters(const char *text, struct filter **out, size_t *n)
{
	cJSON		*j = NULL;
	const cJSON	*e;
	char		 err[256];
	size_t		 i = 0, want;

	if (text == NULL)
		text = "{}";
	if ((j = cJSON_Parse(text)) == NULL ||
	    (!cJSON_IsObject(j) && !cJSON_IsArray(j))) {
		fprintf(stderr, "cacheboxctl: --filter: not a JSON object or "
		    "array of objects\n");
		cJSON_Delete(j);
		return -1;
	}
	want = cJSON_IsArray(j) ? (size_t)cJSON_GetArraySize(j) : 1;
	if (want == 0 || (*out = calloc(want, sizeof(**out))) == NULL) {
		fprintf(stderr, "cacheboxctl: --filter: no filter\n");
		cJSON_Delete(j);
		return -1;
	}
	for (e = cJSON_IsArray(j) ? j->child : j; e != NULL && i < want;
	    e = e->next, i++) {
		if (filter_parse(&(*out)[i], e, err, sizeof(err)) == -1) {
			fprintf(stderr, "cacheboxctl: --filter: %s\n", err);
			while (i > 0)
				filter_free(&(*out)[--i]);
			free(*out);
			cJSON_Delete(j);
			return -1;
		}
		filter_sort(&(*out)[i]);
	}
	*n = want;
	cJSON_Delete(j);
	return 0;
}

struct ctl_export {
	FILE		*out;
	uint64_t	 n;
	int		 failed;
};

static int
ctl_export_row(void *arg, const struct store_scan_row *row, const char *json,
    size_t len)
{
	struct ctl_export	*x = arg;

	if (fwrite(json, 1, len, x->out) != len || putc('\n', x->out) == EOF) {
		x->failed = 1;
		return 1;
	}
	x->n++;
	return 0;
}

static FILE *
ctl_export_open(const char *file)
{
	int	fd;
	FILE	*f;

	if (file == NULL || strcmp(file, "-") == 0)
		return stdout;
	if ((fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		fprintf(stderr, "cacheboxctl: %s: %s\n", file, strerror(errno));
		if (fd != -1)
			close(fd);
		return NULL;
	}
	return f;
}

static int
ctl_history_row(void *arg, const uint8_t pubkey[32], uint32_t kind,
    int64_t created_at, const char *json, size_t len)
{
	struct ctl_export	*x = arg;

	(void)pubkey;
	(void)kind;
	(void)created_at;
	if (fwrite(json, 1, len, x->out) != len || putc('\n', x->out) == EOF) {
		x->failed = 1;
		return 1;
	}
	x->n++;
	return 0;
}

/*
 * --roots-history: the superseded versions of the roots' kinds 0, 3 and
 * 10002 the box kept aside, as JSON lines, newest first (a follow list a
 * client wiped can be published again from one of them).
 */
static int
ctl_export_history(const struct ctl *ctl, int argc, char **argv)
{
	struct ctl_export	 x = { NULL, 0, 0 };
	struct store		*st;
	char			 err[512];
	int64_t			 n = -1;

	if (argc > 1) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (store_open_readonly(&st, ctl->dir != NULL ? ctl->dir :
	    CTL_DEFAULT_DIR, err, sizeof(err)) == -1) {
		fprintf(stderr, "cacheboxctl: %s\n", err);
		return 1;
	}
	if ((x.out = ctl_export_open(argc == 1 ? argv[0] : NULL)) != NULL)
		n = store_roots_history_list(st, NULL, -1, SIZE_MAX,
		    ctl_history_row, &x);
	store_close(st);
	if (x.out != NULL && (fflush(x.out) == EOF || x.failed))
		n = -1;
	if (x.out != NULL && x.out != stdout)
		fclose(x.out);
	if (n < 0) {
		fprintf(stderr, "cacheboxctl: export of the roots' history "
		    "failed\n");
		return 1;
	}
	fprintf(stderr, "cacheboxctl: exported %lld versions kept aside\n",
	    (long long)n);
	return 0;
}

/*
 * Every stored event (or those of --filter, within its limits) as one
 * JSON line each, newest first. The database is read beside the daemon;
 * each step of the scan is one short read transaction, so the WAL is
 * never held back for the length of the export. Events stored after the
 * export began are not in it.
 */
static int
ctl_export(const struct ctl *ctl, int argc, char **argv)
{
	struct store_scan_opts	 o = { .with_json = true };
	struct ctl_export	 x = { NULL, 0, 0 };
	struct store		*st;
	struct store_scan	*sc = NULL;
	struct filter		*f = NULL;
	const char		*ftext = NULL, *file = NULL;
	char			 err[512];
	size_t			 n = 0, i;
	int64_t			 snap = 0;
	int			 a = 0, rc = -1;

	if (argc >= 1 && strcmp(argv[0], "--roots-history") == 0)
		return ctl_export_history(ctl, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[0], "--filter") == 0) {
		ftext = argv[1];
		a = 2;
	}
	if (argc - a > 1) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	file = argc - a == 1 ? argv[a] : NULL;
	if (ctl_export_filters(ftext, &f, &n) == -1)
		return CTL_EXIT_USAGE;
	if (store_open_readonly(&st, ctl->dir != NULL ? ctl->dir :
	    CTL_DEFAULT_DIR, err, sizeof(err)) == -1) {
		fprintf(stderr, "cacheboxctl: %s\n", err);
		goto out;
	}
	if ((x.out = ctl_export_open(file)) != NULL &&
	    (sc = store_scan_new(st, f, n, &o)) != NULL)
		while ((rc = store_scan_step(sc, EXPORT_SLICE_ROWS,
		    ctl_export_row, &x)) == 1 && !x.failed)
			;
	snap = sc != NULL ? store_scan_snapshot(sc) : 0;
	store_scan_free(sc);
	store_close(st);
	if (x.out != NULL && (fflush(x.out) == EOF || x.failed))
		rc = -1;
	if (x.out != NULL && x.out != stdout)
		fclose(x.out);
	if (rc == 0)
		fprintf(stderr, "cacheboxctl: exported %llu events (stored up "
		    "to row %lld)\n", (unsigned long long)x.n, (long long)snap);
	else
		fprintf(stderr, "cacheboxctl: export failed after %llu events\n",
		    (unsigned long long)x.n);
out:
	for (i = 0; i < n; i++)
		filter_free(&f[i]);
	free(f);
	return rc == 0 ? 0 : 1;
}

/* ---- import and backup (through the daemon) ---------------------- */

static int
ctl_sock(const struct ctl *ctl, char *path, size_t len)
{
	if (ctlsock_path(ctl->dir != NULL ? ctl->dir : CTL_DEFAULT_DIR, path,
	    len) == -1) {
		fprintf(stderr, "cacheboxctl: state directory path too long\n");
		return -1;
	}
	return 0;
}

static double
ctl_num(const cJSON *o, const char *name)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Print an answer; 1 when it is an error. */
static int
ctl_error(const cJSON *r)
{
	const cJSON	*e = cJSON_GetObjectItemCaseSensitive(r, "error");

	if (!cJSON_IsString(e))
		return 0;
	fprintf(stderr, "cacheboxctl: %s\n", e->valuestring);
	return 1;
}

static void
ctl_print_json(const cJSON *r)
{
	char	*text;

	if ((text = cJSON_Print(r)) != NULL) {
		printf("%s\n", text);
		free(text);
	}
}

static void
ctl_import_print(const cJSON *r)
{
	const cJSON	*l, *e;

	printf("lines: %.0f\nstored: %.0f\nduplicate: %.0f\nwithdrawn: %.0f\n"
	    "ephemeral: %.0f\ninvalid: %.0f\nerrors: %.0f\n",
	    ctl_num(r, "lines"), ctl_num(r, "stored"), ctl_num(r, "duplicate"),
	    ctl_num(r, "withdrawn"), ctl_num(r, "ephemeral"),
	    ctl_num(r, "invalid"), ctl_num(r, "errors"));
	l = cJSON_GetObjectItemCaseSensitive(r, "invalid_lines");
	cJSON_ArrayForEach(e, l) {
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(e, "reason");

		printf("  line %.0f: %s\n", ctl_num(e, "line"),
		    cJSON_IsString(why) ? why->valuestring : "?");
	}
}

/*
 * Send FILE (or stdin) to the daemon line by line; every event goes
 * through ingest there. Exit 1 when any line was refused or not stored.
 */
static int
ctl_import(const struct ctl *ctl, int argc, char **argv)
{
	char	 path[256], err[512];
	FILE	*in = stdin;
	cJSON	*r;
	int	 json = ctl->json, rc;

	if (argc != 1) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (strcmp(argv[0], "-") != 0 && (in = fopen(argv[0], "r")) == NULL) {
		fprintf(stderr, "cacheboxctl: %s: %s\n", argv[0],
		    strerror(errno));
		return 1;
	}
	if (ctl_sock(ctl, path, sizeof(path)) == -1)
		return CTL_EXIT_USAGE;
	r = ctlsock_call_stream(path, "import", NULL, in, IMPORT_MAX_LINE_BYTES,
	    err, sizeof(err));
	if (in != stdin)
		fclose(in);
	if (r == NULL) {
		fprintf(stderr, "cacheboxctl: %s\n", err);
		return 1;
	}
	if ((rc = ctl_error(r)) == 0) {
		if (json)
			ctl_print_json(r);
		else
			ctl_import_print(r);
		rc = ctl_num(r, "invalid") > 0 || ctl_num(r, "errors") > 0;
	}
	cJSON_Delete(r);
	return rc;
}

static void
ctl_sleep_ms(long ms)
{
	struct timespec	ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* The absolute form of file (its directory must exist). */
static int
ctl_abspath(const char *file, char *out, size_t len)
{
	char		 dir[PATH_MAX], real[PATH_MAX];
	const char	*slash = strrchr(file, '/'), *base;

	if (slash == NULL) {
		snprintf(dir, sizeof(dir), ".");
		base = file;
	} else {
		snprintf(dir, sizeof(dir), "%.*s", slash == file ? 1 :
		    (int)(slash - file), file);
		base = slash + 1;
	}
	if (*base == '\0' || realpath(dir, real) == NULL)
		return -1;
	return snprintf(out, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real,
	    base) < (int)len ? 0 : -1;
}

/*
 * Ask the daemon for an online backup to FILE and wait for it: the copy
 * runs in steps on the daemon's loop while it keeps working.
 */
static int
ctl_backup(const struct ctl *ctl, int argc, char **argv)
{
	char		 path[256], file[PATH_MAX], err[512];
	const cJSON	*state;
	cJSON		*args, *r;
	int		 rc = 1;

	if (argc != 1) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (ctl_abspath(argv[0], file, sizeof(file)) == -1) {
		fprintf(stderr, "cacheboxctl: %s: no such directory\n", argv[0]);
		return 1;
	}
	if (ctl_sock(ctl, path, sizeof(path)) == -1 ||
	    (args = cJSON_CreateObject()) == NULL)
		return CTL_EXIT_USAGE;
	cJSON_AddStringToObject(args, "file", file);
	r = ctlsock_call(path, "backup", args, err, sizeof(err));
	cJSON_Delete(args);
	while (r != NULL && !ctl_error(r)) {
		state = cJSON_GetObjectItemCaseSensitive(r, "state");
		if (cJSON_IsString(state) && strcmp(state->valuestring,
		    "running") != 0) {
			if (strcmp(state->valuestring, "done") == 0) {
				rc = 0;
				if (ctl->json)
					ctl_print_json(r);
				else
					printf("backup: %s (%.0f pages)\n",
					    file, ctl_num(r, "pages_total"));
			} else if (!ctl_error(r))
				fprintf(stderr, "cacheboxctl: backup %s\n",
				    state->valuestring);
			break;
		}
		cJSON_Delete(r);
		ctl_sleep_ms(100);
		r = ctlsock_call(path, "backup status", NULL, err, sizeof(err));
	}
	if (r == NULL)
		fprintf(stderr, "cacheboxctl: %s\n", err);
	cJSON_Delete(r);
	return rc;
}

/* ---- main ----------------------------------------------------------- */

/*
 * Whether the words name a daemon command longer than the offline one
 * they begin with ("backup status" against "backup FILE").
 */
static bool
ctl_daemon_words(int argc, char **argv)
{
	int	i;

	if (argc < 2 || strcmp(argv[0], "backup") != 0 ||
	    strcmp(argv[1], "status") != 0)
		return false;
	for (i = 2; i < argc; i++)
		if (strncmp(argv[i], "--", 2) != 0)
			return false;
	return true;
}

/* Offline commands; anything else is a daemon command. */
static const struct ctl_cmd {
	const char	*name;
	int		(*fn)(const struct ctl *, int, char **);
	int		 json;		/* has a --json form */
} ctl_cmds[] = {
	{ "backup", ctl_backup, 1 },
	{ "event", ctl_event, 0 },
	{ "export", ctl_export, 0 },
	{ "import", ctl_import, 1 },
	{ "negentropy", ctl_negentropy, 0 },
	{ "nip19", ctl_nip19, 0 },
};

/* Take every "--json" word out of argv[from..]; 1 if there was one. */
static int
ctl_take_json(int *argc, char **argv, int from)
{
	int	i, n = from, found = 0;

	for (i = from; i < *argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			found = 1;
		else
			argv[n++] = argv[i];
	}
	*argc = n;
	return found;
}

static int
ctl_offline(const struct ctl *ctl, const struct ctl_cmd *c, int argc,
    char **argv)
{
	if (ctl->json && !c->json) {
		fprintf(stderr, "cacheboxctl: %s prints no JSON answer (its "
		    "output is already one line per item)\n", c->name);
		return CTL_EXIT_USAGE;
	}
	return c->fn(ctl, argc, argv);
}

/* limits.max_event_bytes at its built-in default (offline: no database). */
static size_t
ctl_max_event(void)
{
	struct config	*cfg;
	int64_t		 v = EVENT_MAX_BYTES_CEILING;

	if ((cfg = config_new()) != NULL) {
		v = config_get_int(cfg, "limits.max_event_bytes");
		config_free(cfg);
	}
	if (v <= 0 || v > EVENT_MAX_BYTES_CEILING)
		v = EVENT_MAX_BYTES_CEILING;
	return (size_t)v;
}

int
main(int argc, char **argv)
{
	struct ctl	ctl = { .dir = NULL, .max_event = 0 };
	size_t		i;
	int		a = 1;

	umask(077);			/* an export holds the cache */
	signal(SIGPIPE, SIG_IGN);	/* a daemon that hangs up is an error */
	ctl.json = ctl_take_json(&argc, argv, 1);
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "-d") == 0 && a + 1 < argc)
			ctl.dir = argv[++a];
		else if (strcmp(argv[a], "-h") == 0 ||
		    strcmp(argv[a], "--help") == 0) {
			ctl_usage(stdout);
			return 0;
		} else if (strcmp(argv[a], "--version") == 0) {
			printf("cacheboxctl %s\n", CACHEBOX_VERSION);
			return 0;
		} else {
			ctl_usage(stderr);
			return CTL_EXIT_USAGE;
		}
	}
	if (a == argc) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	ctl.max_event = ctl_max_event();
	/* "backup status" is the daemon's, not a backup to a file "status". */
	for (i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++)
		if (strcmp(argv[a], ctl_cmds[i].name) == 0 &&
		    !ctl_daemon_words(argc - a, argv + a))
			return ctl_offline(&ctl, &ctl_cmds[i], argc - a - 1,
			    argv + a + 1);
	return ctl_daemon_command(&ctl, argc - a, argv + a);
}
