/*
 * ws.h — the WebSocket client connection (RFC 6455) that the relay pool and
 * the uplink use: ws:// or wss:// URL in, text messages out and in, one
 * object per connection, everything driven by the loop.
 *
 * Life of a connection: ws_connect() -> (resolve, connect, TLS, upgrade,
 * each step told by on_stage) -> on_open -> on_message... -> on_close.
 * If opening fails, on_error runs
 * instead of on_open and nothing else follows. Once open, the end is always
 * reported by exactly one on_close (code 1006 when the connection was lost
 * without a close frame).
 *
 * Releasing it, by where the owner stands:
 * - outside this connection's callbacks: ws_destroy() closes the transport
 *   and frees everything before it returns (the shutdown path uses this,
 *   since no later loop round will run);
 * - inside them: ws_mute() now (no callback after it), then ws_destroy()
 *   from the owner's own reap point (a loop hook, a timer, its _free);
 * - inside them, with no reap point of its own: ws_free(), which mutes and
 *   releases on a later loop round. Anything still marked that way when
 *   the loop is freed is leaked, so owners that can be torn down at
 *   shutdown use the first two.
 */
#ifndef CACHEBOX_NET_WS_H
#define CACHEBOX_NET_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

struct loop;
struct dns;
struct ws_conn;

enum ws_state {
	WS_RESOLVING = 0,	/* looking up the host name */
	WS_CONNECTING,		/* TCP connecting (every address in turn) */
	WS_TLS,			/* TLS handshake and certificate check */
	WS_UPGRADING,		/* HTTP Upgrade sent, waiting for the 101 */
	WS_OPEN,
	WS_CLOSING,		/* close frame sent, waiting for the peer's */
	WS_CLOSED,		/* finished; only ws_free() remains */
};

/* Close codes used by this module (RFC 6455 section 7.4.1). */
#define WS_CODE_NORMAL		1000
#define WS_CODE_GOING_AWAY	1001
#define WS_CODE_PROTOCOL	1002
#define WS_CODE_ABNORMAL	1006	/* never sent: connection lost */
#define WS_CODE_BAD_DATA	1007	/* text that is not UTF-8 */
#define WS_CODE_POLICY		1008	/* the peer broke a rule of ours */
#define WS_CODE_TOO_BIG		1009
#define WS_CODE_TRY_AGAIN	1013	/* busy: come back later */

/* Length of Sec-WebSocket-Accept / base64 of a 20-byte SHA-1. */
#define WS_ACCEPT_LEN		28
/* Length of Sec-WebSocket-Key / base64 of 16 random bytes. */
#define WS_KEY_LEN		24

struct ws_opts {
	struct dns	*dns;		 /* resolver; needed for host names */
	const char	*ca_file;	 /* NULL or "": system CA bundle */
	size_t		 max_msg_bytes;	 /* 0: WS_MAX_MSG_BYTES_DEFAULT */
	size_t		 send_high_water; /* 0: WS_SEND_HIGH_WATER_DEFAULT */
	size_t		 send_queue_max; /* 0: WS_SEND_QUEUE_MAX_DEFAULT */
	uint32_t	 open_timeout_ms; /* 0: WS_OPEN_TIMEOUT_MS */
	uint32_t	 attempt_ms;	 /* per-address TCP connect, 0: default */
};

/* Every callback is optional (NULL). None runs after ws_free/mute/destroy. */
struct ws_cbs {
	void	(*on_open)(struct ws_conn *, void *arg);
	/* One whole text message (reassembled); valid during the call. */
	void	(*on_message)(struct ws_conn *, const char *msg, size_t len,
		    void *arg);
	/* The connection ended after on_open; reason may be "". */
	void	(*on_close)(struct ws_conn *, int code, const char *reason,
		    void *arg);
	/* Opening failed (DNS, TCP, TLS, upgrade, timeout). */
	void	(*on_error)(struct ws_conn *, const char *reason, void *arg);
	/* The send queue fell back below the high-water mark. */
	void	(*on_drain)(struct ws_conn *, void *arg);
	/*
	 * The opening moved on to state (CONNECTING, TLS or UPGRADING; the
	 * first state is ws_state() right after ws_connect, OPEN is on_open).
	 * The owner may read state here but must not ws_free() inside it.
	 */
	void	(*on_stage)(struct ws_conn *, enum ws_state state, void *arg);
};

/*
 * Start connecting to url (ws:// or wss://). opts may be NULL for all
 * defaults (then only IP literals can be dialled); it is copied, but the
 * dns it names must outlive the connection. Callbacks run from the loop,
 * never from inside this call. Returns the connection (free it with
 * ws_free), or NULL with a reason in err when the URL is bad or memory or
 * the CA file is missing.
 */
struct ws_conn	*ws_connect(struct loop *, const char *url,
		    const struct ws_opts *, const struct ws_cbs *, void *arg,
		    char *err, size_t errlen);

/*
 * Queue one text message. Returns 0 when queued, 1 when queued but the
 * queue is now above the high-water mark (slow down: reading from this
 * peer is paused until on_drain), or -1 when refused: not open, or the
 * queue would exceed send_queue_max.
 */
int		 ws_send_text(struct ws_conn *, const char *msg, size_t len);
/* Queue a ping (the pong is counted in ws_pongs()). 0 or -1. */
int		 ws_ping(struct ws_conn *);
/*
 * Start the close handshake with code and reason (at most 123 bytes).
 * When open, on_close follows once the peer answers or WS_CLOSE_TIMEOUT_MS
 * passes. Before open, the attempt is abandoned silently.
 */
void		 ws_close(struct ws_conn *, int code, const char *reason);
/*
 * Release the connection on a later loop round (safe inside its
 * callbacks; no callback runs after this call).
 */
void		 ws_free(struct ws_conn *);
/*
 * Stop every callback, read, write and deadline of the connection, keeping
 * its memory and socket until ws_destroy(). Safe inside its callbacks.
 */
void		 ws_mute(struct ws_conn *);
/*
 * Release the connection now (a muted one too): a queued close frame gets
 * one non-blocking write, then the socket is closed and the memory freed.
 * Never call it inside one of this connection's own callbacks, nor after
 * ws_free(). NULL is ignored.
 */
void		 ws_destroy(struct ws_conn *);

enum ws_state	 ws_state(const struct ws_conn *);
const char	*ws_state_name(enum ws_state);
/* Bytes queued for sending and not yet written to the transport. */
size_t		 ws_queued_bytes(const struct ws_conn *);
/* Pongs received so far. */
uint64_t	 ws_pongs(const struct ws_conn *);
/* The URL this connection was made for. */
const char	*ws_url(const struct ws_conn *);

#endif
