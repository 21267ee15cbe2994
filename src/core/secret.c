/*
 * secret.c — the admin token rule and its salted hash (secret.h). It owns
 * no state. It must never log, store or echo a token, and never compare
 * hashes with an early exit.
 *
 * PBKDF2-HMAC-SHA256 with ADMIN_TOKEN_HASH_ITERATIONS rounds: enough that a
 * copied database does not give up a weak token at once, few enough that
 * one check costs a few milliseconds on a Pi (the loop runs it for every
 * mutating web call; the web server limits wrong guesses per peer).
 */
#include <sys/random.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/md.h>
#include <mbedtls/pkcs5.h>

#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/secret.h"

#define SECRET_SCHEME		"pbkdf2-sha256"
#define SECRET_HASH_BYTES	32
#define SECRET_TOKEN_CHARS	"abcdefghijklmnopqrstuvwxyz" \
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/"

/* A stored value taken apart. */
struct secret_parts {
	unsigned	iterations;
	uint8_t		salt[ADMIN_TOKEN_SALT_BYTES];
	uint8_t		hash[SECRET_HASH_BYTES];
};

int
secret_token_check(const char *token, char *err, size_t errlen)
{
	size_t	n = strlen(token);

	if (n < ADMIN_TOKEN_MIN_CHARS || n > ADMIN_TOKEN_MAX_CHARS) {
		snprintf(err, errlen, "the admin password needs %d to %d characters",
		    ADMIN_TOKEN_MIN_CHARS, ADMIN_TOKEN_MAX_CHARS);
		return -1;
	}
	if (token[strspn(token, SECRET_TOKEN_CHARS)] != '\0') {
		snprintf(err, errlen, "the admin password may only use letters, "
		    "digits "
		    "and - . _ ~ + /");
		return -1;
	}
	return 0;
}

/* Split "scheme$iter$salt$hash" into p. 0, or -1 if it is not that. */
static int
secret_parse(const char *s, struct secret_parts *p)
{
	const char	*salt, *hash;
	char		*end;
	unsigned long	 it;

	if (strncmp(s, SECRET_SCHEME "$", sizeof(SECRET_SCHEME)) != 0)
		return -1;
	s += sizeof(SECRET_SCHEME);
	it = strtoul(s, &end, 10);
	if (end == s || *end != '$' || it == 0 || it > 10000000)
		return -1;
	salt = end + 1;
	if ((hash = strchr(salt, '$')) == NULL ||
	    hex_decode(salt, (size_t)(hash - salt), p->salt,
	    sizeof(p->salt)) == -1 ||
	    hex_decode(hash + 1, strlen(hash + 1), p->hash,
	    sizeof(p->hash)) == -1)
		return -1;
	p->iterations = (unsigned)it;
	return 0;
}

bool
secret_is_hash(const char *s)
{
	struct secret_parts	p;

	return secret_parse(s, &p) == 0;
}

/* PBKDF2-HMAC-SHA256 of the len bytes at pw under p's salt and rounds. */
static int
secret_derive(const struct secret_parts *p, const char *pw, size_t len,
    uint8_t out[SECRET_HASH_BYTES])
{
	mbedtls_md_context_t	ctx;
	int			rc;

	mbedtls_md_init(&ctx);
	rc = mbedtls_md_setup(&ctx, mbedtls_md_info_from_type(MBEDTLS_MD_SHA256),
	    1);
	if (rc == 0)
		rc = mbedtls_pkcs5_pbkdf2_hmac(&ctx, (const unsigned char *)pw,
		    len, p->salt, sizeof(p->salt), p->iterations,
		    SECRET_HASH_BYTES, out);
	mbedtls_md_free(&ctx);
	return rc == 0 ? 0 : -1;
}

int
secret_hash(const char *token, char *out, size_t outlen)
{
	struct secret_parts	p = { .iterations = ADMIN_TOKEN_HASH_ITERATIONS };
	char			salt[2 * ADMIN_TOKEN_SALT_BYTES + 1];
	char			hash[2 * SECRET_HASH_BYTES + 1];
	int			n;

	if (getrandom(p.salt, sizeof(p.salt), 0) != (ssize_t)sizeof(p.salt)) {
		log_warn("secret: no random bytes for a salt");
		return -1;
	}
	if (secret_derive(&p, token, strlen(token), p.hash) == -1) {
		log_warnx("secret: cannot hash the token");
		return -1;
	}
	hex_encode(p.salt, sizeof(p.salt), salt, sizeof(salt));
	hex_encode(p.hash, sizeof(p.hash), hash, sizeof(hash));
	n = snprintf(out, outlen, SECRET_SCHEME "$%u$%s$%s", p.iterations,
	    salt, hash);
	return n > 0 && (size_t)n < outlen ? 0 : -1;
}

bool
secret_verify(const char *stored, const char *presented, size_t len)
{
	struct secret_parts	p;
	uint8_t			got[SECRET_HASH_BYTES], diff = 0;
	size_t			i;

	if (secret_parse(stored, &p) == -1 ||
	    secret_derive(&p, presented, len, got) == -1)
		return false;
	for (i = 0; i < sizeof(got); i++)
		diff |= got[i] ^ p.hash[i];
	return diff == 0;
}
