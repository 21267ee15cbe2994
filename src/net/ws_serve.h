/*
 * ws_serve.h — the server end of a WebSocket connection (RFC 6455): a
 * socket whose HTTP upgrade the caller already answered (the relay
 * endpoint does it through libmicrohttpd), framed by wslay in server
 * mode, driven by the loop. The client end is ws.h; both leave every
 * frame to wslay.
 *
 * What a peer can cost is bounded here: a message is assembled in one
 * buffer of at most max_msg_bytes, and a frame that would take a message
 * past it is refused by its declared length, before its payload is read
 * (the owner may queue last words, then the connection closes with 1009
 * and a reason); what waits to be sent is counted (ws_peer_queued) and
 * reading stops while it is above send_high_water, so a peer that sends
 * without reading is not read either; a peer silent for ping_ms is
 * pinged and one silent for dead_ms is dropped.
 *
 * The socket stays the caller's: ws_peer never closes it (libmicrohttpd
 * must, through its upgrade handle). The end of the connection is told by
 * exactly one on_close; the owner then frees the peer outside its
 * callbacks (ws_peer_free) and closes the socket its own way.
 */
#ifndef CACHEBOX_NET_WS_SERVE_H
#define CACHEBOX_NET_WS_SERVE_H

#include <stddef.h>
#include <stdint.h>

struct loop;
struct ws_peer;

/*
 * Bytes of messages being received over every peer sharing it, counted
 * by the lengths their frames declare, so many peers each sending a large
 * message slowly cannot together hold more than max. A frame that would
 * take held past max closes its connection (1013, try again later) before
 * its payload is read; a message's bytes are given back when it has been
 * handled or its connection ends.
 */
struct ws_input_budget {
	size_t		held;
	size_t		max;
};

struct ws_peer_opts {
	size_t		max_msg_bytes;	/* largest message taken, bytes */
	struct ws_input_budget *input;	/* shared, or NULL: none */
	size_t		send_high_water; /* reading pauses above, bytes queued */
	size_t		send_queue_max;	/* ws_peer_send_text refuses once past it */
	uint32_t	ping_ms;	/* silence before a ping */
	uint32_t	dead_ms;	/* silence before the connection is dropped */
	uint32_t	linger_ms;	/* after our close: wait for the peer's */
};

/* Every callback may be NULL. None runs after on_close. */
struct ws_peer_cbs {
	/* One whole text message (valid during the call). */
	void	(*on_message)(struct ws_peer *, const char *msg, size_t len,
		    void *arg);
	/*
	 * A frame declared a message of declared bytes, over the limit: the
	 * connection closes (1009) right after this call, which may queue a
	 * last message with ws_peer_send_text.
	 */
	void	(*on_too_big)(struct ws_peer *, uint64_t declared, void *arg);
	/* The send queue fell back below send_high_water. */
	void	(*on_drain)(struct ws_peer *, void *arg);
	/*
	 * The connection is over (close handshake done, timed out, lost or
	 * aborted). code is the close code that ended it: ours when we
	 * closed, the peer's when it did, 1006 when the transport was lost.
	 */
	void	(*on_close)(struct ws_peer *, int code, const char *reason,
		    void *arg);
};

/*
 * Serve the WebSocket on fd (non-blocking, already upgraded); extra[0..
 * extra_len) are bytes the HTTP server read past the request head (the
 * first frames), copied here. NULL on allocation failure (fd untouched).
 */
struct ws_peer	*ws_peer_new(struct loop *, int fd, const void *extra,
		    size_t extra_len, const struct ws_peer_opts *,
		    const struct ws_peer_cbs *, void *arg);
/*
 * Stop watching the socket and free everything (not the socket). Never
 * inside one of the peer's own callbacks. NULL is ignored.
 */
void		 ws_peer_free(struct ws_peer *);

/*
 * Queue one text message (copied). 0 when queued, 1 when queued and the
 * queue is now above send_high_water (reading pauses until on_drain), -1
 * when refused: closing, or the queue is past send_queue_max already (so
 * it never holds more than send_queue_max and one message).
 */
int		 ws_peer_send_text(struct ws_peer *, const char *msg,
		    size_t len);
/*
 * Start the close handshake with code and reason (cut to 123 bytes):
 * what is queued goes first, then the close frame; on_close follows once
 * the peer answers or linger_ms pass.
 */
void		 ws_peer_close(struct ws_peer *, int code, const char *reason);
/*
 * End now without a handshake (a peer that does not read cannot be sent
 * a close frame): what is queued is dropped, on_close runs from a later
 * loop round with code and reason.
 */
void		 ws_peer_abort(struct ws_peer *, int code, const char *reason);

/* Bytes queued and not yet written to the socket. */
size_t		 ws_peer_queued(const struct ws_peer *);
/* Bytes written to the socket so far. */
uint64_t	 ws_peer_bytes_out(const struct ws_peer *);
/* Whether the connection is still open for messages (not closing). */
int		 ws_peer_open(const struct ws_peer *);
/*
 * How long bytes have waited without the peer taking any (0 when nothing
 * waits): a peer that reads, however slowly, never stalls for long.
 */
uint64_t	 ws_peer_stalled_ms(const struct ws_peer *, uint64_t now_ms);

#endif
