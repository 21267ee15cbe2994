/*
 * stream.h — one outgoing byte stream: URL host resolved (dns), connected
 * (tcp) and, for wss/https, wrapped in verified TLS (tls). The WebSocket
 * client and the HTTP client both sit on it, so they never know whether
 * bytes travel in clear or through TLS.
 */
#ifndef CACHEBOX_NET_STREAM_H
#define CACHEBOX_NET_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct loop;
struct dns;
struct url;
struct stream;

#define STREAM_AGAIN	(-2)	/* nothing now; wait for on_io */

enum stream_state {
	STREAM_RESOLVING = 0,
	STREAM_CONNECTING,
	STREAM_HANDSHAKE,	/* TLS */
	STREAM_READY,
	STREAM_FAILED,
};

struct stream_opts {
	struct dns	*dns;		/* needed for host names */
	const char	*ca_file;	/* NULL or "": system bundle */
	uint32_t	 attempt_ms;	/* per-address connect timeout, 0: default */
};

/*
 * Callbacks, all from the loop. Exactly one of on_ready / on_error ends
 * the opening; after on_ready, on_io reports every fd event (the owner
 * then reads and writes until STREAM_AGAIN). The stream may be closed from
 * inside any of them except on_stage.
 *
 * on_stage (optional) reports each later step of the opening: CONNECTING
 * once the name resolved, HANDSHAKE once TCP connected for TLS. The first
 * state (RESOLVING for a host name, CONNECTING for an IP literal) is set
 * by stream_open and read with stream_state(); READY and FAILED are told
 * by on_ready and on_error. The owner must not close the stream inside
 * on_stage.
 */
struct stream_cbs {
	void	(*on_ready)(void *arg);
	void	(*on_error)(void *arg, const char *reason);
	void	(*on_io)(void *arg, short revents);
	void	(*on_stage)(void *arg, enum stream_state);
};

/*
 * Start opening a stream to u. Returns the stream, or NULL with a reason in
 * err (no callback runs then). Free with stream_close().
 */
struct stream	*stream_open(struct loop *, const struct url *u,
		    const struct stream_opts *, const struct stream_cbs *,
		    void *arg, char *err, size_t errlen);
/* Tear down at any state (TLS close_notify best effort, socket closed). */
void		 stream_close(struct stream *);

/* > 0 bytes, 0 at end of stream, STREAM_AGAIN, or -1 (stream_reason()). */
ssize_t		 stream_read(struct stream *, void *buf, size_t len);
/* > 0 bytes taken, STREAM_AGAIN, or -1 (stream_reason()). */
ssize_t		 stream_write(struct stream *, const void *buf, size_t len);
/* Which events the owner waits for once READY. */
void		 stream_want(struct stream *, bool rd, bool wr);
/* Decrypted bytes buffered inside TLS that poll cannot see. */
size_t		 stream_pending(const struct stream *);
enum stream_state stream_state(const struct stream *);
const char	*stream_reason(const struct stream *);

#endif
