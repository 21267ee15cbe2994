/*
 * tls.c — owns mbedTLS for cachebox: the process random generator, the
 * shared client configurations (one per CA file) and the client sessions.
 * Sessions do their I/O through bio callbacks on a non-blocking fd and
 * report WANT_READ / WANT_WRITE upwards; tls.c must never block, never poll
 * and never own the socket. Verification is never optional: the chain
 * must lead to the configured CAs and the certificate must name the host.
 *
 * mbedTLS 2.28 matches a host name against dNSName entries (and the CN) but
 * ignores iPAddress entries, so for an IP literal no name is set and the
 * iPAddress entries of the verified peer certificate are compared here.
 *
 * Memory: Debian's 2.28 build has no MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH, so
 * each session allocates fixed input and output record buffers of about
 * 16.6 KiB each whatever maximum fragment length is negotiated; asking the
 * server for a smaller fragment would save nothing here and is not done.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mbedtls/asn1.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/oid.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include "core/log.h"
#include "net/tls.h"

struct tls_ctx {
	char			 path[1024];	/* "" for unused slots */
	unsigned		 refs;
	mbedtls_x509_crt	 ca;
	mbedtls_ssl_config	 conf;
};

struct tls_conn {
	struct tls_ctx		*ctx;
	int			 fd;
	uint8_t			 ip[16];
	size_t			 iplen;		/* 0 for a host name */
	bool			 verified_ip;
	mbedtls_ssl_context	 ssl;
	char			 reason[TLS_REASON_MAX];
};

static struct tls_ctx		 tls_ctxs[TLS_MAX_CA_SETS];
static mbedtls_entropy_context	 tls_entropy;
static mbedtls_ctr_drbg_context	 tls_drbg;
static int			 tls_drbg_ready;

static int
tls_rng_init(void)
{
	static const char	 pers[] = "cachebox";
	int			 rc;

	if (tls_drbg_ready)
		return 0;
	mbedtls_entropy_init(&tls_entropy);
	mbedtls_ctr_drbg_init(&tls_drbg);
	rc = mbedtls_ctr_drbg_seed(&tls_drbg, mbedtls_entropy_func,
	    &tls_entropy, (const unsigned char *)pers, sizeof(pers) - 1);
	if (rc != 0) {
		log_warnx("tls: cannot seed random generator (-0x%04x)", -rc);
		mbedtls_ctr_drbg_free(&tls_drbg);
		mbedtls_entropy_free(&tls_entropy);
		return -1;
	}
	tls_drbg_ready = 1;
	return 0;
}

int
tls_random(void *buf, size_t len)
{
	if (tls_rng_init() == -1)
		return -1;
	return mbedtls_ctr_drbg_random(&tls_drbg, buf, len) == 0 ? 0 : -1;
}

static int
tls_ctx_load(struct tls_ctx *c, const char *path, char *err, size_t errlen)
{
	int	 rc;

	mbedtls_x509_crt_init(&c->ca);
	mbedtls_ssl_config_init(&c->conf);
	rc = mbedtls_x509_crt_parse_file(&c->ca, path);
	if (rc < 0 || c->ca.version == 0) {
		snprintf(err, errlen, "cannot load CA file %s (-0x%04x)", path,
		    rc < 0 ? -rc : 0);
		goto fail;
	}
	if (rc > 0)
		log_info("tls: %s: %d certificates skipped (unparsable)", path, rc);
	rc = mbedtls_ssl_config_defaults(&c->conf, MBEDTLS_SSL_IS_CLIENT,
	    MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (rc != 0) {
		snprintf(err, errlen, "TLS configuration failed (-0x%04x)", -rc);
		goto fail;
	}
	mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
	mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
	mbedtls_ssl_conf_rng(&c->conf, mbedtls_ctr_drbg_random, &tls_drbg);
	mbedtls_ssl_conf_min_version(&c->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
	    MBEDTLS_SSL_MINOR_VERSION_3);
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->refs = 1;
	return 0;
fail:
	mbedtls_ssl_config_free(&c->conf);
	mbedtls_x509_crt_free(&c->ca);
	return -1;
}

struct tls_ctx *
tls_ctx_get(const char *ca_file, char *err, size_t errlen)
{
	struct tls_ctx	*free_slot = NULL;
	size_t		 i;

	if (ca_file == NULL || ca_file[0] == '\0')
		ca_file = TLS_SYSTEM_CA_FILE;
	if (strlen(ca_file) >= sizeof(tls_ctxs[0].path)) {
		snprintf(err, errlen, "CA file name too long");
		return NULL;
	}
	if (tls_rng_init() == -1) {
		snprintf(err, errlen, "cannot seed random generator");
		return NULL;
	}
	for (i = 0; i < TLS_MAX_CA_SETS; i++) {
		if (tls_ctxs[i].refs > 0 && strcmp(tls_ctxs[i].path, ca_file) == 0) {
			tls_ctxs[i].refs++;
			return &tls_ctxs[i];
		}
		if (tls_ctxs[i].refs == 0 && free_slot == NULL)
			free_slot = &tls_ctxs[i];
	}
	if (free_slot == NULL) {
		snprintf(err, errlen, "more than %d CA files in use",
		    TLS_MAX_CA_SETS);
		return NULL;
	}
	if (tls_ctx_load(free_slot, ca_file, err, errlen) == -1)
		return NULL;
	return free_slot;
}

void
tls_ctx_put(struct tls_ctx *c)
{
	if (c == NULL || c->refs == 0 || --c->refs > 0)
		return;
	mbedtls_ssl_config_free(&c->conf);
	mbedtls_x509_crt_free(&c->ca);
	c->path[0] = '\0';
}

static int
tls_bio_send(void *arg, const unsigned char *buf, size_t len)
{
	struct tls_conn	*t = arg;
	ssize_t		 n;

	n = send(t->fd, buf, len, MSG_NOSIGNAL);
	if (n >= 0)
		return (int)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	if (errno == EPIPE || errno == ECONNRESET)
		return MBEDTLS_ERR_NET_CONN_RESET;
	return MBEDTLS_ERR_NET_SEND_FAILED;
}

static int
tls_bio_recv(void *arg, unsigned char *buf, size_t len)
{
	struct tls_conn	*t = arg;
	ssize_t		 n;

	n = recv(t->fd, buf, len, 0);
	if (n >= 0)
		return (int)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_READ;
	if (errno == ECONNRESET)
		return MBEDTLS_ERR_NET_CONN_RESET;
	return MBEDTLS_ERR_NET_RECV_FAILED;
}

struct tls_conn *
tls_conn_new(struct tls_ctx *c, int fd, const char *host, const uint8_t *ip,
    size_t iplen)
{
	struct tls_conn	*t;
	int		 rc;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		log_warn("tls: calloc");
		return NULL;
	}
	t->ctx = c;
	t->fd = fd;
	mbedtls_ssl_init(&t->ssl);
	if ((rc = mbedtls_ssl_setup(&t->ssl, &c->conf)) != 0)
		goto fail;
	if (ip != NULL && (iplen == 4 || iplen == 16)) {
		memcpy(t->ip, ip, iplen);
		t->iplen = iplen;
	} else if ((rc = mbedtls_ssl_set_hostname(&t->ssl, host)) != 0)
		goto fail;
	mbedtls_ssl_set_bio(&t->ssl, t, tls_bio_send, tls_bio_recv, NULL);
	c->refs++;
	return t;
fail:
	log_warnx("tls: session setup failed (-0x%04x)", -rc);
	mbedtls_ssl_free(&t->ssl);
	free(t);
	return NULL;
}

void
tls_conn_free(struct tls_conn *t)
{
	if (t == NULL)
		return;
	mbedtls_ssl_free(&t->ssl);
	tls_ctx_put(t->ctx);
	free(t);
}

/* The failures of a chain verification, most fundamental first. */
static void
tls_verify_reason(struct tls_conn *t, uint32_t flags)
{
	static const struct {
		uint32_t	 flag;
		const char	*what;
	} tab[] = {
		{ MBEDTLS_X509_BADCERT_NOT_TRUSTED,	"certificate not trusted" },
		{ MBEDTLS_X509_BADCERT_EXPIRED,		"certificate expired" },
		{ MBEDTLS_X509_BADCERT_FUTURE,		"certificate not yet valid" },
		{ MBEDTLS_X509_BADCERT_REVOKED,		"certificate revoked" },
		{ MBEDTLS_X509_BADCERT_CN_MISMATCH,	"host name mismatch" },
		{ MBEDTLS_X509_BADCERT_KEY_USAGE,	"certificate key usage wrong" },
		{ MBEDTLS_X509_BADCERT_EXT_KEY_USAGE,	"certificate not for TLS servers" },
		{ MBEDTLS_X509_BADCERT_BAD_MD,		"certificate hash too weak" },
		{ MBEDTLS_X509_BADCERT_BAD_KEY,		"certificate key too weak" },
	};
	size_t	 i, off = 0;

	t->reason[0] = '\0';
	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (!(flags & tab[i].flag))
			continue;
		snprintf(t->reason + off, sizeof(t->reason) - off, "%s%s",
		    off > 0 ? ", " : "", tab[i].what);
		off = strlen(t->reason);
	}
	if (off == 0)
		snprintf(t->reason, sizeof(t->reason),
		    "certificate verification failed (flags 0x%x)", flags);
}

static void
tls_lib_reason(struct tls_conn *t, const char *what, int rc)
{
	char	 e[96];

	mbedtls_strerror(rc, e, sizeof(e));
	snprintf(t->reason, sizeof(t->reason), "%s: %s", what, e);
}

/*
 * Does one GeneralNames entry list (the SAN extension value, p..end) hold
 * an iPAddress equal to ip? Uses mbedTLS' ASN.1 readers for every length.
 */
static int
tls_san_has_ip(unsigned char *p, const unsigned char *end, const uint8_t *ip,
    size_t iplen)
{
	size_t	 len;
	int	 tag;

	if (mbedtls_asn1_get_tag(&p, end, &len,
	    MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) != 0)
		return 0;
	end = p + len;
	while (p < end) {
		tag = *p++;
		if (mbedtls_asn1_get_len(&p, end, &len) != 0)
			return 0;
		if (tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7) && len == iplen &&
		    memcmp(p, ip, iplen) == 0)
			return 1;
		p += len;
	}
	return 0;
}

/* Walk the certificate's extensions to the subjectAltName one. */
static int
tls_cert_has_ip(const mbedtls_x509_crt *crt, const uint8_t *ip, size_t iplen)
{
	unsigned char		*p = crt->v3_ext.p, *ext_end, *oid;
	const unsigned char	*end = p + crt->v3_ext.len;
	size_t			 len, oidlen;
	int			 crit;

	if (p == NULL || mbedtls_asn1_get_tag(&p, end, &len,
	    MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) != 0)
		return 0;
	end = p + len;
	while (p < end) {
		if (mbedtls_asn1_get_tag(&p, end, &len,
		    MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) != 0)
			return 0;
		ext_end = p + len;
		if (mbedtls_asn1_get_tag(&p, ext_end, &oidlen, MBEDTLS_ASN1_OID) != 0)
			return 0;
		oid = p;
		p += oidlen;
		(void)mbedtls_asn1_get_bool(&p, ext_end, &crit);
		if (mbedtls_asn1_get_tag(&p, ext_end, &len,
		    MBEDTLS_ASN1_OCTET_STRING) != 0)
			return 0;
		if (oidlen == MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME) &&
		    memcmp(oid, MBEDTLS_OID_SUBJECT_ALT_NAME, oidlen) == 0)
			return tls_san_has_ip(p, p + len, ip, iplen);
		p = ext_end;
	}
	return 0;
}

int
tls_handshake(struct tls_conn *t)
{
	const mbedtls_x509_crt	*peer;
	int			 rc;

	rc = mbedtls_ssl_handshake(&t->ssl);
	if (rc == MBEDTLS_ERR_SSL_WANT_READ)
		return TLS_WANT_READ;
	if (rc == MBEDTLS_ERR_SSL_WANT_WRITE)
		return TLS_WANT_WRITE;
	if (rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
		tls_verify_reason(t, mbedtls_ssl_get_verify_result(&t->ssl));
		return -1;
	}
	if (rc != 0) {
		tls_lib_reason(t, "TLS handshake failed", rc);
		return -1;
	}
	if (t->iplen > 0 && !t->verified_ip) {
		peer = mbedtls_ssl_get_peer_cert(&t->ssl);
		if (peer == NULL || !tls_cert_has_ip(peer, t->ip, t->iplen)) {
			snprintf(t->reason, sizeof(t->reason),
			    "host name mismatch (IP address not in certificate)");
			return -1;
		}
		t->verified_ip = true;
	}
	return 0;
}

ssize_t
tls_read(struct tls_conn *t, void *buf, size_t len)
{
	int	 rc;

	rc = mbedtls_ssl_read(&t->ssl, buf, len);
	if (rc > 0)
		return rc;
	if (rc == 0 || rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY)
		return 0;
	if (rc == MBEDTLS_ERR_SSL_WANT_READ)
		return TLS_WANT_READ;
	if (rc == MBEDTLS_ERR_SSL_WANT_WRITE)
		return TLS_WANT_WRITE;
	tls_lib_reason(t, "TLS read failed", rc);
	return -1;
}

ssize_t
tls_write(struct tls_conn *t, const void *buf, size_t len)
{
	int	 rc;

	rc = mbedtls_ssl_write(&t->ssl, buf, len);
	if (rc >= 0)
		return rc;
	if (rc == MBEDTLS_ERR_SSL_WANT_READ)
		return TLS_WANT_READ;
	if (rc == MBEDTLS_ERR_SSL_WANT_WRITE)
		return TLS_WANT_WRITE;
	tls_lib_reason(t, "TLS write failed", rc);
	return -1;
}

size_t
tls_pending(const struct tls_conn *t)
{
	return mbedtls_ssl_get_bytes_avail(&t->ssl);
}

void
tls_close_notify(struct tls_conn *t)
{
	(void)mbedtls_ssl_close_notify(&t->ssl);
}

const char *
tls_reason(const struct tls_conn *t)
{
	return t->reason;
}
