/*
 * setup_code.h — the first-run setup code: a short one-time secret that
 * proves physical presence. It is shown only at the box (its console, its
 * login screen, its log) and typed on the status page, with a new admin
 * token, while no admin token is set.
 *
 * SETUP_CODE_CHARS characters of Crockford's base 32 (digits and capital
 * letters without I, L, O and U), 5 random bits each, shown in groups of
 * five ("7KQ2M-XW4HD"). What a person types is read leniently: lower case,
 * spaces and dashes are fine, and O, I and L read as 0, 1 and 1.
 *
 * Everything here is plain state and arithmetic on a caller's monotonic
 * clock, so expiry and the limiter are tested without waiting. It never
 * logs: the code must reach only the places its caller chooses.
 */
#ifndef CACHEBOX_CORE_SETUP_CODE_H
#define CACHEBOX_CORE_SETUP_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

#define SETUP_CODE_ALPHABET	"0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#define SETUP_CODE_GROUP	5	/* characters between two dashes as shown */
/* Bytes of the shown form ("7KQ2M-XW4HD"), with its NUL. */
#define SETUP_CODE_TEXT_MAX	(SETUP_CODE_CHARS + SETUP_CODE_CHARS / \
				SETUP_CODE_GROUP + 1)

struct setup_code {
	char		code[SETUP_CODE_CHARS + 1];	/* "" when none is valid */
	uint64_t	expires_ms;	/* valid before this (monotonic) */
	uint64_t	window_ms;	/* start of the counting window */
	unsigned	failures;	/* wrong codes in it, every address */
};

enum setup_check {
	SETUP_CHECK_OK = 0,
	SETUP_CHECK_WRONG,	/* compared, not the code (counted) */
	SETUP_CHECK_NONE,	/* no valid code: none made, used or expired */
	SETUP_CHECK_LOCKED,	/* SETUP_CODE_FAILURES lately: not compared */
};

/* No code, no failures. */
void		 setup_code_init(struct setup_code *);
/*
 * Make a fresh code from the system's CSPRNG (getrandom), valid for
 * SETUP_CODE_TTL_MS from now_ms; it replaces any earlier one. 0, or -1
 * when no random bytes could be had (then there is no code).
 */
int		 setup_code_make(struct setup_code *, uint64_t now_ms);
/*
 * The generator apart from its randomness: the code that the
 * SETUP_CODE_CHARS bytes rnd make (each byte's low 5 bits pick a
 * character, so every character is equally likely).
 */
void		 setup_code_from_bytes(struct setup_code *,
		    const uint8_t rnd[SETUP_CODE_CHARS], uint64_t now_ms);
/* True while a code is valid at now_ms. */
bool		 setup_code_valid(const struct setup_code *, uint64_t now_ms);
/* Milliseconds the code stays valid from now_ms, 0 if none is. */
uint64_t	 setup_code_left_ms(const struct setup_code *, uint64_t now_ms);
/*
 * Milliseconds until wrong codes are compared again, from now_ms: 0 unless
 * SETUP_CODE_FAILURES came within the current window.
 */
uint64_t	 setup_code_locked_ms(const struct setup_code *,
		    uint64_t now_ms);
/* Forget the code (used, or no longer wanted). Failures are kept. */
void		 setup_code_drop(struct setup_code *);
/*
 * The code as shown, in groups of SETUP_CODE_GROUP joined by dashes,
 * into out (at least SETUP_CODE_TEXT_MAX bytes); "" when there is none.
 */
void		 setup_code_format(const struct setup_code *, char *out,
		    size_t outlen);
/*
 * Check what was typed at now_ms. An expired code is dropped here. No
 * valid code: SETUP_CHECK_NONE. SETUP_CODE_FAILURES wrong codes within
 * SETUP_CODE_WINDOW_MS: SETUP_CHECK_LOCKED, nothing compared, and
 * *wait_ms (when not NULL) gets the time until the window ends.
 * Otherwise the normalized input is compared with the code over its whole
 * length whatever differs (the time depends only on what was typed), and
 * a wrong one is counted. A right code stays valid: the caller drops it
 * once it has been used.
 */
enum setup_check setup_code_check(struct setup_code *, const char *typed,
		    uint64_t now_ms, uint64_t *wait_ms);

#endif
