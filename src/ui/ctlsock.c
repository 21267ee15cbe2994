/*
 * ctlsock.c — the control socket between cacheboxctl and cacheboxd.
 *
 * Owns the listening Unix socket and its short-lived client connections:
 * read one bounded request line, hand it to the handler, write the reply,
 * close. It must never block the loop: every client fd is non-blocking, a
 * request longer than CTL_MAX_REQUEST is refused before more is read, and a
 * client that stalls for CTL_IO_TIMEOUT_MS is dropped. Clients are freed in
 * a loop hook, never inside their own callback.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/utf8.h"
#include "ui/ctlsock.h"

struct ctl_client {
	struct ctlsock		*owner;
	int			 fd;
	int			 closing;
	uint64_t		 timer;
	struct buf		 in;
	char			*out;
	size_t			 outlen, outpos;
	void			*session;	/* a streaming command's */
	uint64_t		 busy_timer;	/* reading resumes */
	int			 skipping;	/* a stream line over the limit */
	struct ctl_client	*next;
};

struct ctlsock {
	struct loop		*loop;
	int			 fd;
	char			 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	ctlsock_handler		 handler;
	void			*arg;
	struct ctlsock_stream	 ops;
	struct ctl_client	*streaming;	/* the one stream, or NULL */
	struct ctl_client	*clients;
	int			 nclients;
};

static void	client_close(struct ctl_client *);

int
ctlsock_path(const char *dir, char *out, size_t outlen)
{
	size_t	max = sizeof(((struct sockaddr_un *)0)->sun_path);
	int	n;

	n = snprintf(out, outlen, "%s/cacheboxd.sock", dir);
	if (n < 0 || (size_t)n >= outlen || (size_t)n >= max)
		return -1;
	return 0;
}

static int
sockaddr_for(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return -1;
	memcpy(sun->sun_path, path, strlen(path) + 1);
	return 0;
}

/* 1 if a live daemon answers on path, 0 if not (stale or absent). */
static int
someone_listening(const struct sockaddr_un *sun)
{
	int	fd, r;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	r = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	close(fd);
	return r == 0;
}

static void
client_timeout(struct loop *loop, void *arg)
{
	struct ctl_client *c = arg;

	c->timer = 0;
	log_debug("ctl: client timed out");
	client_close(c);
}

/* End a stream whose client went away: its reply is dropped. */
static void
stream_abandon(struct ctl_client *c)
{
	if (c->session == NULL)
		return;
	cJSON_Delete(c->owner->ops.end(c->session));
	c->session = NULL;
	c->owner->streaming = NULL;
}

static void
client_close(struct ctl_client *c)
{
	if (c->closing)
		return;
	c->closing = 1;
	stream_abandon(c);
	loop_fd_del(c->owner->loop, c->fd);
	loop_timer_clear(c->owner->loop, &c->timer);
	loop_timer_clear(c->owner->loop, &c->busy_timer);
}

static void
client_reply(struct ctl_client *c, cJSON *reply)
{
	char	*text;

	if (reply == NULL) {
		reply = cJSON_CreateObject();
		cJSON_AddStringToObject(reply, "error", "out of memory");
	}
	text = utf8_repair(cJSON_PrintUnformatted(reply));
	cJSON_Delete(reply);
	if (text == NULL || strlen(text) + 1 > CTL_MAX_REPLY) {
		free(text);
		text = strdup("{\"error\":\"reply too large\"}");
		if (text == NULL) {
			client_close(c);
			return;
		}
	}
	c->outlen = strlen(text) + 1;
	text[c->outlen - 1] = '\n';	/* the NUL becomes the line end */
	c->out = text;
	loop_fd_set_events(c->owner->loop, c->fd, POLLOUT);
}

static cJSON *
error_reply(const char *msg)
{
	cJSON	*r = cJSON_CreateObject();

	if (r != NULL)
		cJSON_AddStringToObject(r, "error", msg);
	return r;
}

/*
 * Hand the stream's bytes to the session line by line. A line over
 * max_line is skipped as it arrives (never buffered whole) and reported
 * once with text NULL.
 */
static void
stream_feed(struct ctl_client *c, const uint8_t *p, size_t n)
{
	const struct ctlsock_stream	*ops = &c->owner->ops;
	const uint8_t			*nl;
	size_t				 len;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		len = nl != NULL ? (size_t)(nl - p) : n;
		if (!c->skipping && buf_append(&c->in, p, len) == -1) {
			c->skipping = 1;
			buf_reset(&c->in);
			ops->line(c->session, NULL, 0);
		}
		if (nl == NULL)
			return;
		if (!c->skipping)
			ops->line(c->session, (const char *)c->in.data,
			    c->in.len);
		c->skipping = 0;
		buf_reset(&c->in);
		p = nl + 1;
		n -= len + 1;
	}
}

/* The client shut its side down: the last line, then the one reply. */
static void
stream_end(struct ctl_client *c)
{
	void	*session = c->session;

	if (!c->skipping && c->in.len > 0)
		c->owner->ops.line(session, (const char *)c->in.data, c->in.len);
	c->session = NULL;
	c->owner->streaming = NULL;
	client_reply(c, c->owner->ops.end(session));
}

/* A request line with "stream": true. 0 when the stream began. */
static int
stream_begin(struct ctl_client *c, const char *cmd, const cJSON *args,
    size_t linelen)
{
	struct ctlsock	*cs = c->owner;
	struct buf	 rest;
	char		 err[256] = "this command does not stream";

	if (cs->ops.begin == NULL || cs->streaming != NULL ||
	    (c->session = cs->ops.begin(cmd, args, cs->ops.arg, err,
	    sizeof(err))) == NULL) {
		client_reply(c, error_reply(cs->streaming != NULL ?
		    "another import is running" : err));
		return -1;
	}
	cs->streaming = c;
	rest = c->in;		/* the request line and what followed it */
	buf_init(&c->in, cs->ops.max_line);
	stream_feed(c, rest.data + linelen + 1, rest.len - linelen - 1);
	buf_free(&rest);
	return 0;
}

static void
client_dispatch(struct ctl_client *c, size_t linelen)
{
	cJSON		*req, *cmd;
	const cJSON	*args;

	req = cJSON_ParseWithLength((const char *)c->in.data, linelen);
	cmd = req ? cJSON_GetObjectItemCaseSensitive(req, "cmd") : NULL;
	if (!cJSON_IsString(cmd)) {
		client_reply(c, error_reply("malformed request: expected "
		    "{\"cmd\":\"...\",\"args\":{...}}"));
		cJSON_Delete(req);
		return;
	}
	args = cJSON_GetObjectItemCaseSensitive(req, "args");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "stream")))
		(void)stream_begin(c, cmd->valuestring, args, linelen);
	else
		client_reply(c, c->owner->handler(cmd->valuestring, args,
		    c->owner->arg));
	cJSON_Delete(req);
}

static void
client_timeout(struct loop *, void *);

static void
stream_resume(struct loop *loop, void *arg)
{
	struct ctl_client	*c = arg;

	c->busy_timer = 0;
	if (!c->closing)
		loop_fd_set_events(loop, c->fd, POLLIN);
}

/*
 * A stream's bytes: fed as they come; its deadline moves with them. While
 * the stream's consumer is busy nothing is read: the sender waits in its
 * socket buffer (and the deadline waits with it).
 */
static void
stream_read(struct ctl_client *c)
{
	/*
	 * Small reads: every line read is verified and stored before the loop
	 * looks at anything else, so a read is one slice of the loop's time
	 * (the rest waits in the socket for the next turn).
	 */
	static uint8_t	chunk[IMPORT_READ_BYTES];
	ssize_t		n;

	if (c->owner->ops.busy != NULL && c->owner->ops.busy(c->owner->ops.arg)) {
		loop_fd_set_events(c->owner->loop, c->fd, 0);
		if (c->busy_timer == 0)
			c->busy_timer = loop_timer_add(c->owner->loop,
			    IMPORT_BUSY_RETRY_MS, stream_resume, c);
		loop_timer_clear(c->owner->loop, &c->timer);
		c->timer = loop_timer_add(c->owner->loop, CTL_IO_TIMEOUT_MS,
		    client_timeout, c);
		return;
	}
	n = read(c->fd, chunk, sizeof(chunk));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		client_close(c);
		return;
	}
	loop_timer_clear(c->owner->loop, &c->timer);
	c->timer = loop_timer_add(c->owner->loop, CTL_IO_TIMEOUT_MS,
	    client_timeout, c);
	if (n == 0)
		stream_end(c);
	else
		stream_feed(c, chunk, (size_t)n);
}

static void
client_read(struct ctl_client *c)
{
	uint8_t	 chunk[4096];
	uint8_t	*nl;
	ssize_t	 n;

	if (c->session != NULL) {
		stream_read(c);
		return;
	}
	n = read(c->fd, chunk, sizeof(chunk));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(c);
		return;
	}
	if (buf_append(&c->in, chunk, (size_t)n) == -1) {
		client_reply(c, error_reply("request too large"));
		return;
	}
	nl = memchr(c->in.data, '\n', c->in.len);
	if (nl != NULL)
		client_dispatch(c, (size_t)(nl - c->in.data));
}

static void
client_write(struct ctl_client *c)
{
	ssize_t	n;

	n = write(c->fd, c->out + c->outpos, c->outlen - c->outpos);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(c);
		return;
	}
	c->outpos += (size_t)n;
	if (c->outpos == c->outlen)
		client_close(c);
}

static void
client_io(struct loop *loop, int fd, short revents, void *arg)
{
	struct ctl_client *c = arg;

	if (c->closing)
		return;
	if (c->out != NULL) {
		if (revents & (POLLOUT | POLLERR | POLLHUP))
			client_write(c);
		return;
	}
	if (revents & (POLLIN | POLLERR | POLLHUP))
		client_read(c);
}

static void
client_free(struct ctl_client *c)
{
	stream_abandon(c);
	close(c->fd);
	buf_free(&c->in);
	free(c->out);
	free(c);
}

/* Loop hook: free the clients that closed since the last round. */
static void
ctlsock_reap(struct loop *loop, void *arg)
{
	struct ctlsock		*cs = arg;
	struct ctl_client	**pp = &cs->clients, *c;

	while ((c = *pp) != NULL) {
		if (c->closing) {
			*pp = c->next;
			cs->nclients--;
			client_free(c);
		} else
			pp = &c->next;
	}
}

static void
ctlsock_accept(struct loop *loop, int fd, short revents, void *arg)
{
	struct ctlsock		*cs = arg;
	struct ctl_client	*c;
	int			 cfd;

	cfd = accept(fd, NULL, NULL);
	if (cfd == -1) {
		if (errno != EAGAIN && errno != EINTR)
			log_warn("ctl: accept");
		return;
	}
	if (fcntl(cfd, F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(cfd, F_SETFD, FD_CLOEXEC) == -1) {
		log_warn("ctl: fcntl");
		close(cfd);
		return;
	}
	if (cs->nclients >= CTL_MAX_CLIENTS || (c = calloc(1, sizeof(*c))) == NULL) {
		log_warnx_rl("ctl: too many clients, refusing one");
		close(cfd);
		return;
	}
	c->owner = cs;
	c->fd = cfd;
	buf_init(&c->in, CTL_MAX_REQUEST);
	if (loop_fd_add(loop, cfd, POLLIN, client_io, c) == -1) {
		client_free(c);
		return;
	}
	c->timer = loop_timer_add(loop, CTL_IO_TIMEOUT_MS, client_timeout, c);
	c->next = cs->clients;
	cs->clients = c;
	cs->nclients++;
}

static int
listen_on(struct ctlsock *cs, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un	sun;
	mode_t			old;
	int			r;

	if (sockaddr_for(path, &sun) == -1) {
		snprintf(err, errlen, "%.200s: control socket path too long", path);
		return -1;
	}
	if (someone_listening(&sun)) {
		snprintf(err, errlen, "%s: another cacheboxd is running on this "
		    "state directory", path);
		return -1;
	}
	unlink(path);
	cs->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (cs->fd == -1) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0177);	/* the socket is created 0600 */
	r = bind(cs->fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (r == -1 || chmod(path, 0600) == -1 || listen(cs->fd, 16) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	memcpy(cs->path, sun.sun_path, sizeof(cs->path));
	return 0;
}

struct ctlsock *
ctlsock_listen(struct loop *loop, const char *path, ctlsock_handler handler,
    void *arg, char *err, size_t errlen)
{
	struct ctlsock	*cs;

	if ((cs = calloc(1, sizeof(*cs))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cs->loop = loop;
	cs->fd = -1;
	cs->handler = handler;
	cs->arg = arg;
	if (listen_on(cs, path, err, errlen) == -1 ||
	    loop_fd_add(loop, cs->fd, POLLIN, ctlsock_accept, cs) == -1 ||
	    loop_hook_add(loop, ctlsock_reap, cs) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "control socket: cannot watch");
		if (cs->fd != -1) {
			loop_fd_del(loop, cs->fd);
			close(cs->fd);
		}
		free(cs);
		return NULL;
	}
	return cs;
}

void
ctlsock_set_stream(struct ctlsock *cs, const struct ctlsock_stream *ops)
{
	cs->ops = *ops;
}

void
ctlsock_free(struct ctlsock *cs)
{
	struct ctl_client *c;

	if (cs == NULL)
		return;
	while ((c = cs->clients) != NULL) {
		cs->clients = c->next;
		loop_fd_del(cs->loop, c->fd);
		loop_timer_clear(cs->loop, &c->timer);
		loop_timer_clear(cs->loop, &c->busy_timer);
		client_free(c);
	}
	loop_hook_del(cs->loop, ctlsock_reap, cs);
	loop_fd_del(cs->loop, cs->fd);
	close(cs->fd);
	unlink(cs->path);
	free(cs);
}

static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
read_reply(int fd, struct buf *b)
{
	char	chunk[8192];
	ssize_t	n;

	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		if (buf_append(b, chunk, (size_t)n) == -1)
			return -1;
	}
}

static char *
request_text(const char *cmd, const cJSON *args, int stream)
{
	cJSON	*req = cJSON_CreateObject();
	char	*text;

	if (req == NULL)
		return NULL;
	cJSON_AddStringToObject(req, "cmd", cmd);
	if (stream)
		cJSON_AddTrueToObject(req, "stream");
	if (args != NULL)
		cJSON_AddItemToObject(req, "args", cJSON_Duplicate(args, 1));
	text = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	return text;
}

/* Connect to the daemon's socket at path. The descriptor, or -1 with err. */
static int
ctl_dial(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un	sun;
	int			fd;

	if (sockaddr_for(path, &sun) == -1) {
		snprintf(err, errlen, "%.200s: path too long", path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		snprintf(err, errlen, "cannot reach cacheboxd at %s: %s "
		    "(is the daemon running with this state directory?)", path,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

cJSON *
ctlsock_call(const char *path, const char *cmd, const cJSON *args, char *err,
    size_t errlen)
{
	struct buf		 b;
	char			*text;
	cJSON			*reply = NULL;
	int			 fd, ok;

	if ((fd = ctl_dial(path, err, errlen)) == -1)
		return NULL;
	text = request_text(cmd, args, 0);
	buf_init(&b, CTL_MAX_REPLY);
	ok = text != NULL && write_all(fd, text, strlen(text)) == 0 &&
	    write_all(fd, "\n", 1) == 0 && read_reply(fd, &b) == 0;
	close(fd);
	free(text);
	if (ok)
		reply = cJSON_ParseWithLength((const char *)b.data, b.len);
	if (reply == NULL)
		snprintf(err, errlen, "no valid reply from cacheboxd at %s", path);
	buf_free(&b);
	return reply;
}

/* Copy in to fd in chunks, as it is read. 0 or -1. */
static int
copy_stream(FILE *in, int fd)
{
	char	chunk[64 * 1024];
	size_t	n;

	while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
		if (write_all(fd, chunk, n) == -1)
			return -1;
	return ferror(in) ? -1 : 0;
}

cJSON *
ctlsock_call_stream(const char *path, const char *cmd, const cJSON *args,
    FILE *in, size_t max_line, char *err, size_t errlen)
{
	struct buf		 b;
	char			*text;
	cJSON			*reply = NULL;
	int			 fd, ok;

	(void)max_line;		/* the daemon bounds each line it keeps */
	if ((fd = ctl_dial(path, err, errlen)) == -1)
		return NULL;
	text = request_text(cmd, args, 1);
	buf_init(&b, CTL_MAX_REPLY);
	ok = text != NULL && write_all(fd, text, strlen(text)) == 0 &&
	    write_all(fd, "\n", 1) == 0;
	/* A refusal comes at once and closes: read it rather than writing on. */
	ok = ok && copy_stream(in, fd) == 0;
	shutdown(fd, SHUT_WR);
	if (read_reply(fd, &b) == 0)
		reply = cJSON_ParseWithLength((const char *)b.data, b.len);
	close(fd);
	free(text);
	if (reply == NULL)
		snprintf(err, errlen, "no valid reply from cacheboxd at %s%s",
		    path, ok ? "" : " (the stream was cut)");
	buf_free(&b);
	return reply;
}
