/*
 * ctlsock.h — the daemon's control socket, the transport cacheboxctl uses.
 *
 * A Unix stream socket, mode 0600, in the state directory. One request per
 * connection: the client writes one line of JSON
 *	{"cmd":"status","args":{...}}
 * and the daemon answers with one JSON document and a newline, then closes.
 * The socket owns the transport only; what a command means is decided by
 * the handler the daemon installs (the command table).
 */
#ifndef CACHEBOX_UI_CTLSOCK_H
#define CACHEBOX_UI_CTLSOCK_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

struct loop;
struct ctlsock;

/*
 * Run one command. args may be NULL. Returns a new JSON reply the caller
 * (the socket) owns and frees; NULL means "out of memory" and is answered
 * with an error object.
 */
typedef cJSON	*(*ctlsock_handler)(const char *cmd, const cJSON *args, void *arg);

/*
 * Streaming commands (cacheboxctl import): a request line with
 * "stream": true is followed by any number of lines, each handed to line()
 * as it arrives (a line over max_line bytes is skipped and reported with
 * text NULL); when the client shuts its side down, end() gives the one
 * reply. begin() returns the command's session, or NULL with a reason in
 * err when cmd does not stream or cannot start now. At most one stream
 * runs at a time.
 */
struct ctlsock_stream {
	size_t	  max_line;
	void	*(*begin)(const char *cmd, const cJSON *args, void *arg,
		    char *err, size_t errlen);
	void	 (*line)(void *session, const char *text, size_t len);
	cJSON	*(*end)(void *session);
	/* true: read no more of the stream for now (looked at again soon) */
	bool	 (*busy)(void *arg);
	void	 *arg;
};

/* The socket path for a state directory: DIR/cacheboxd.sock. */
int		 ctlsock_path(const char *dir, char *out, size_t outlen);

/*
 * Listen on path (a stale socket file left by a crash is replaced; a live
 * daemon answering there makes this fail). NULL with a message in err.
 */
struct ctlsock	*ctlsock_listen(struct loop *, const char *path, ctlsock_handler,
		    void *arg, char *err, size_t errlen);
/* Take streaming commands through ops (copied). */
void		 ctlsock_set_stream(struct ctlsock *,
		    const struct ctlsock_stream *ops);
/* Close every client, remove the socket file, free. NULL is fine. */
void		 ctlsock_free(struct ctlsock *);

/*
 * Client side, blocking (cacheboxctl only): send one request and return the
 * parsed reply, owned by the caller. NULL with a message in err.
 */
/*
 * Client side of a streaming command: connect, send the request line,
 * then every line of in (as it is read, never more than max_line at a
 * time in memory), shut down and return the reply. NULL with err.
 */
cJSON		*ctlsock_call_stream(const char *path, const char *cmd,
		    const cJSON *args, FILE *in, size_t max_line, char *err,
		    size_t errlen);
cJSON		*ctlsock_call(const char *path, const char *cmd, const cJSON *args,
		    char *err, size_t errlen);

#endif
