/*
 * tls.h — TLS client sessions (mbedTLS 2.28) over non-blocking sockets.
 * Configurations are shared: one mbedtls_ssl_config and parsed CA chain per
 * CA file, reference-counted, so a hundred connections hold one copy of the
 * trust store. The random generator is seeded once per process.
 */
#ifndef CACHEBOX_NET_TLS_H
#define CACHEBOX_NET_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/limits.h"

/* The trust store used when tls.ca_file is empty. */
#define TLS_SYSTEM_CA_FILE	"/etc/ssl/certs/ca-certificates.crt"

/* Returned by tls_handshake, tls_read and tls_write. */
#define TLS_WANT_READ	(-2)	/* call again once the fd is readable */
#define TLS_WANT_WRITE	(-3)	/* call again once the fd is writable */

struct tls_ctx;
struct tls_conn;

/*
 * The shared configuration for ca_file (NULL or "" for the system bundle),
 * created on first use. Returns a reference to drop with tls_ctx_put(), or
 * NULL with a reason in err when the file cannot be read or holds no
 * usable certificate.
 */
struct tls_ctx	*tls_ctx_get(const char *ca_file, char *err, size_t errlen);
void		 tls_ctx_put(struct tls_ctx *);

/*
 * Fill buf with len bytes from the process CTR_DRBG (seeded on first use).
 * 0, or -1 when the generator cannot be seeded or fails.
 */
int		 tls_random(void *buf, size_t len);

/*
 * A client session on connected non-blocking fd (not owned: the caller
 * closes it after tls_conn_free). host is the URL host: a name is sent as
 * SNI and verified against the certificate's names; an IP literal (ip, of
 * iplen 4 or 16 bytes) gets no SNI and is verified against the
 * certificate's IP address entries. NULL on failure (logged).
 */
struct tls_conn	*tls_conn_new(struct tls_ctx *, int fd, const char *host,
		    const uint8_t *ip, size_t iplen);
void		 tls_conn_free(struct tls_conn *);

/*
 * Advance the handshake: 0 when done and verified, TLS_WANT_READ or
 * TLS_WANT_WRITE, or -1 with a reason in tls_reason() ("certificate not
 * trusted", "host name mismatch", ...).
 */
int		 tls_handshake(struct tls_conn *);
/*
 * Bytes read (> 0), 0 when the peer closed (close_notify or EOF),
 * TLS_WANT_READ / TLS_WANT_WRITE, or -1 with tls_reason().
 */
ssize_t		 tls_read(struct tls_conn *, void *buf, size_t len);
/* Bytes written (> 0), TLS_WANT_READ / TLS_WANT_WRITE, or -1. */
ssize_t		 tls_write(struct tls_conn *, const void *buf, size_t len);
/* Decrypted bytes held inside mbedTLS: poll will not announce them. */
size_t		 tls_pending(const struct tls_conn *);
/* Send close_notify, best effort (never waits). */
void		 tls_close_notify(struct tls_conn *);
/* Why the last call failed; "" if it did not. */
const char	*tls_reason(const struct tls_conn *);

#endif
