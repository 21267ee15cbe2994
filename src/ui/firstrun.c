/*
 * firstrun.c — the first-run flow (firstrun.h): the setup code's life on
 * the loop (made, shown at the box, expired by a timer, voided once a
 * token is set), the file for the login screen, what the "setup" commands
 * (cmd_box.c) read, and the redemption the web server calls. It calls no
 * surface: the console, the page's port and the config store are sinks
 * it is given when it starts. The code itself, its checks and
 * its limiter are core/setup_code.c's.
 *
 * It must never put the code anywhere a network peer can read: not in an
 * answer of a surface other than the console, not in the status. The log
 * carries it because the log is the board's journal, which only root and
 * the journal's readers see, like the console and the login screen.
 *
 * The login-screen file is written in place (truncate, write, close) so a
 * path unit watching it for a close after writing sees every change; it
 * is 0600 whatever the umask, and never followed if it is a link. A file
 * with nothing to say is emptied, not removed: getty shows nothing.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/secret.h"
#include "core/setup_code.h"
#include "ui/firstrun.h"

struct firstrun {
	struct app		*app;
	struct firstrun_sinks	 out;
	struct setup_code	 sc;
	uint64_t		 expire_timer;	/* 0: none */
	char			 path[PATH_MAX];	/* DIR/setup-code.issue */
};

/* No token is set and one may be set at run time. */
static bool
setup_open(const struct app *app)
{
	return *config_get(app->cfg, CONFIG_ADMIN_TOKEN) == '\0' &&
	    config_source(app->cfg, CONFIG_ADMIN_TOKEN) <= CFG_SRC_DB;
}

static uint64_t
now_ms(const struct firstrun *fr)
{
	return loop_now_ms(fr->app->loop);
}

/* ---- the file for the login screen ------------------------------------ */

/*
 * Put text into the file ("" empties it, and makes none that is not
 * there). Failures are logged: the console and the log still show it.
 */
static void
issue_write(struct firstrun *fr, const char *text)
{
	int	fd, flags = O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC;
	size_t	len = strlen(text), off = 0;
	ssize_t	n = 0;

	if (len > 0)
		flags |= O_CREAT;
	if ((fd = open(fr->path, flags, 0600)) == -1) {
		if (errno != ENOENT)
			log_warn("setup: %s", fr->path);
		return;
	}
	if (fchmod(fd, 0600) == -1)
		log_warn("setup: chmod %s", fr->path);
	while (off < len && (n = write(fd, text + off, len - off)) > 0)
		off += (size_t)n;
	if (off < len)
		log_warn("setup: write %s", fr->path);
	if (close(fd) == -1)
		log_warn("setup: close %s", fr->path);
}

/*
 * Where the page is, for the login screen: the box's mDNS name and its
 * address (agetty replaces \4 with the IPv4 address of the box).
 */
static void
page_urls(const struct firstrun *fr, char *out, size_t outlen)
{
	char		host[256] = "cachebox";
	unsigned	port = fr->out.page_port(fr->out.arg);

	if (gethostname(host, sizeof(host) - 1) == -1 || host[0] == '\0')
		snprintf(host, sizeof(host), "cachebox");
	host[strcspn(host, ".")] = '\0';
	snprintf(out, outlen, "http://%s.local:%u/  or  http://\\4:%u/", host,
	    port, port);
}

/* The login screen while setup waits for someone to ask for a code. */
static void
issue_waiting(struct firstrun *fr)
{
	char	urls[320], text[640];

	page_urls(fr, urls, sizeof(urls));
	snprintf(text, sizeof(text), "cachebox: no admin password is set "
	    "yet. Open the status page for a setup code:\n  %s\n\n", urls);
	issue_write(fr, text);
}

/* ---- the code's life ---------------------------------------------------- */

static void
on_expire(struct loop *loop, void *arg)
{
	struct firstrun	*fr = arg;

	fr->expire_timer = 0;
	setup_code_drop(&fr->sc);
	if (!setup_open(fr->app)) {
		issue_write(fr, "");
		return;
	}
	log_info("setup: the setup code expired; the status page or 'setup "
	    "code' on the console makes a new one");
	issue_waiting(fr);
}

/* The code is out of use: used, voided or the daemon stops. */
static void
code_gone(struct firstrun *fr)
{
	loop_timer_clear(fr->app->loop, &fr->expire_timer);
	setup_code_drop(&fr->sc);
	issue_write(fr, "");
}

size_t
firstrun_console_text(const struct firstrun *fr, char *out, size_t outlen)
{
	char	code[SETUP_CODE_TEXT_MAX];
	int	n;

	if (outlen > 0)
		out[0] = '\0';
	if (fr == NULL || !setup_code_valid(&fr->sc, now_ms(fr)))
		return 0;
	setup_code_format(&fr->sc, code, sizeof(code));
	n = snprintf(out, outlen, "setup: no admin password is set. Setup code: "
	    "%s\nsetup: valid %d minutes from when it was made, once: type it "
	    "with a new admin password on the status page, or set the password "
	    "here (admin-token set)\n", code, SETUP_CODE_TTL_MS / 60000);
	return n > 0 && (size_t)n < outlen ? (size_t)n : 0;
}

/* Show the new code at the box: console, log, login screen. */
static void
announce(struct firstrun *fr)
{
	char	code[SETUP_CODE_TEXT_MAX], urls[320], text[1024];
	int	min = SETUP_CODE_TTL_MS / 60000;

	setup_code_format(&fr->sc, code, sizeof(code));
	log_warnx("setup: no admin password is set; setup code %s (valid %d "
	    "minutes, once): type it with a new admin password on the status "
	    "page", code, min);
	if (firstrun_console_text(fr, text, sizeof(text)) > 0)
		fr->out.notice(fr->out.arg, text);
	page_urls(fr, urls, sizeof(urls));
	snprintf(text, sizeof(text), "cachebox setup code: %s\n"
	    "Type it with a new admin password on the status page:\n  %s\n"
	    "It is valid %d minutes and works once.\n\n", code, urls, min);
	issue_write(fr, text);
}

/* A fresh code, shown. 0, or -1 when there is no randomness (logged). */
static int
code_make(struct firstrun *fr)
{
	loop_timer_clear(fr->app->loop, &fr->expire_timer);
	if (setup_code_make(&fr->sc, now_ms(fr)) == -1) {
		log_warn("setup: no random bytes for a setup code");
		return -1;
	}
	fr->expire_timer = loop_timer_add(fr->app->loop, SETUP_CODE_TTL_MS,
	    on_expire, fr);
	announce(fr);
	return 0;
}

/* A valid code when setup is open, made if need be. */
static bool
code_ready(struct firstrun *fr)
{
	if (!setup_open(fr->app))
		return false;
	return setup_code_valid(&fr->sc, now_ms(fr)) || code_make(fr) == 0;
}

struct firstrun *
firstrun_start(struct app *app, const struct firstrun_sinks *out)
{
	struct firstrun	*fr;

	if ((fr = calloc(1, sizeof(*fr))) == NULL)
		return NULL;
	fr->app = app;
	fr->out = *out;
	setup_code_init(&fr->sc);
	snprintf(fr->path, sizeof(fr->path), "%s/%s", app->state_dir,
	    FIRSTRUN_ISSUE_FILE);
	if (!code_ready(fr))
		issue_write(fr, "");	/* a code an earlier run left */
	return fr;
}

void
firstrun_free(struct firstrun *fr)
{
	if (fr == NULL)
		return;
	code_gone(fr);
	free(fr);
}

void
firstrun_token_changed(struct firstrun *fr)
{
	bool	live;

	if (fr == NULL)
		return;
	if (setup_open(fr->app)) {
		code_ready(fr);
		return;
	}
	live = fr->sc.code[0] != '\0';
	code_gone(fr);		/* also the "open the page" text of an expired one */
	if (live)
		log_info("setup: an admin password is set; setup is over and the "
		    "setup code is void");
}

/* ---- redeeming the code --------------------------------------------- */

/* The outcome of a code that was compared. */
static enum firstrun_result
checked(struct firstrun *fr, enum setup_check c, uint64_t wait_ms,
    char *msg, size_t msglen, unsigned *wait_s)
{
	switch (c) {
	case SETUP_CHECK_OK:
		return FIRSTRUN_DONE;
	case SETUP_CHECK_NONE:
		code_make(fr);
		snprintf(msg, msglen, "that setup code is no longer valid "
		    "(expired or used): a new one is shown on the box's console "
		    "and login screen");
		return FIRSTRUN_NO_CODE;
	case SETUP_CHECK_LOCKED:
		*wait_s = (unsigned)((wait_ms + 999) / 1000);
		snprintf(msg, msglen, "too many wrong setup codes lately; try "
		    "again in %u s", *wait_s);
		return FIRSTRUN_LOCKED;
	case SETUP_CHECK_WRONG:
		break;
	}
	if (fr->sc.failures == SETUP_CODE_FAILURES)
		log_warnx("setup: %d wrong setup codes within %d s; none is "
		    "checked until then", SETUP_CODE_FAILURES,
		    SETUP_CODE_WINDOW_MS / 1000);
	else
		log_info_rl("setup: a wrong setup code from the web");
	snprintf(msg, msglen, "wrong setup code");
	return FIRSTRUN_WRONG;
}

enum firstrun_result
firstrun_redeem(struct firstrun *fr, const char *code, const char *token,
    char *msg, size_t msglen, unsigned *wait_s)
{
	enum firstrun_result	 res;
	enum setup_check	 c;
	uint64_t		 wait_ms = 0;
	cJSON			*e;

	*wait_s = 0;
	if (fr == NULL || !setup_open(fr->app)) {
		snprintf(msg, msglen, "an admin password is set already: setup "
		    "is over (the console's admin-token set changes it)");
		return FIRSTRUN_CLOSED;
	}
	if (secret_token_check(token, msg, msglen) == -1)
		return FIRSTRUN_BAD_TOKEN;
	c = setup_code_check(&fr->sc, code, now_ms(fr), &wait_ms);
	res = checked(fr, c, wait_ms, msg, msglen, wait_s);
	if (res != FIRSTRUN_DONE)
		return res;
	code_gone(fr);		/* used, whatever storing the token does */
	if ((e = fr->out.store_token(fr->out.arg, token)) != NULL) {
		snprintf(msg, msglen, "%s", cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(e, "error")));
		cJSON_Delete(e);
		issue_waiting(fr);
		return FIRSTRUN_FAILED;
	}
	log_info("setup: the admin password was set on the status page with the "
	    "setup code");
	snprintf(msg, msglen, "the admin password is set");
	return FIRSTRUN_DONE;
}

/* ---- what the setup commands read ----------------------------------------- */

bool
firstrun_open(const struct firstrun *fr)
{
	return fr != NULL && setup_open(fr->app);
}

bool
firstrun_code_ready(struct firstrun *fr)
{
	return fr != NULL && code_ready(fr);
}

void
firstrun_code(const struct firstrun *fr, struct firstrun_code *out)
{
	uint64_t	now = now_ms(fr);

	setup_code_format(&fr->sc, out->text, sizeof(out->text));
	out->left_s = setup_code_left_ms(&fr->sc, now) / 1000;
	out->locked_s = (setup_code_locked_ms(&fr->sc, now) + 999) / 1000;
}
