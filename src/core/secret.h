/*
 * secret.h — the admin token: the one rule a token must follow, and the
 * salted hash that is all the daemon keeps of it (in memory and in the
 * database). The token itself is never stored: whoever reads the database
 * learns a salt and a PBKDF2-HMAC-SHA256 output, not the token.
 *
 * Stored form (printable, fits a config value):
 *	pbkdf2-sha256$<iterations>$<salt, 32 hex>$<hash, 64 hex>
 */
#ifndef CACHEBOX_CORE_SECRET_H
#define CACHEBOX_CORE_SECRET_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes of the stored form, with its NUL. */
#define SECRET_HASH_TEXT_MAX	160

/*
 * Check token against the one rule (ADMIN_TOKEN_MIN_CHARS to
 * ADMIN_TOKEN_MAX_CHARS characters of letters, digits and - . _ ~ + /).
 * 0, or -1 with a message in err (which never repeats the token).
 */
int	secret_token_check(const char *token, char *err, size_t errlen);

/* True when s has the shape of a stored hash (not checked further). */
bool	secret_is_hash(const char *s);

/*
 * Hash token with a fresh random salt into out (the stored form).
 * 0, or -1 when no random bytes or no hash could be had (logged).
 */
int	secret_hash(const char *token, char *out, size_t outlen);

/*
 * True when the len bytes at presented hash, under stored's salt and
 * iterations, to stored's hash. The comparison of the hashes takes the
 * same time wherever they differ. False for a malformed stored value.
 */
bool	secret_verify(const char *stored, const char *presented, size_t len);

#endif
