/*
 * setup_code.c — the first-run setup code (setup_code.h): making it,
 * showing it, checking what was typed against it, its expiry and the
 * limiter of wrong guesses from every address together. It owns only the
 * struct it is handed; it must never log the code or compare it with an
 * early exit.
 *
 * Guessing: 50 bits (32^10, about 1.1e15 codes). At most
 * SETUP_CODE_FAILURES wrong codes are compared per SETUP_CODE_WINDOW_MS,
 * however many addresses send them, so at most 600 in a code's 30
 * minutes: one chance in 1.9e12 for a code, in 1.1e8 even over a year of
 * fresh codes guessed at the full rate.
 */
#include <sys/random.h>

#include <ctype.h>
#include <string.h>

#include "core/setup_code.h"

_Static_assert(sizeof(SETUP_CODE_ALPHABET) - 1 == 32,
    "the setup code alphabet has 32 characters (5 bits each)");

void
setup_code_init(struct setup_code *sc)
{
	memset(sc, 0, sizeof(*sc));
}

void
setup_code_from_bytes(struct setup_code *sc,
    const uint8_t rnd[SETUP_CODE_CHARS], uint64_t now_ms)
{
	size_t	i;

	for (i = 0; i < SETUP_CODE_CHARS; i++)
		sc->code[i] = SETUP_CODE_ALPHABET[rnd[i] & 31];
	sc->code[SETUP_CODE_CHARS] = '\0';
	sc->expires_ms = now_ms + SETUP_CODE_TTL_MS;
}

int
setup_code_make(struct setup_code *sc, uint64_t now_ms)
{
	uint8_t	rnd[SETUP_CODE_CHARS];

	setup_code_drop(sc);
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -1;
	setup_code_from_bytes(sc, rnd, now_ms);
	memset(rnd, 0, sizeof(rnd));
	return 0;
}

bool
setup_code_valid(const struct setup_code *sc, uint64_t now_ms)
{
	return sc->code[0] != '\0' && now_ms < sc->expires_ms;
}

uint64_t
setup_code_left_ms(const struct setup_code *sc, uint64_t now_ms)
{
	return setup_code_valid(sc, now_ms) ? sc->expires_ms - now_ms : 0;
}

uint64_t
setup_code_locked_ms(const struct setup_code *sc, uint64_t now_ms)
{
	if (sc->failures < SETUP_CODE_FAILURES ||
	    now_ms >= sc->window_ms + SETUP_CODE_WINDOW_MS)
		return 0;
	return sc->window_ms + SETUP_CODE_WINDOW_MS - now_ms;
}

void
setup_code_drop(struct setup_code *sc)
{
	memset(sc->code, 0, sizeof(sc->code));
	sc->expires_ms = 0;
}

void
setup_code_format(const struct setup_code *sc, char *out, size_t outlen)
{
	size_t	i, n = 0;

	if (outlen == 0)
		return;
	for (i = 0; sc->code[0] != '\0' && i < SETUP_CODE_CHARS &&
	    n + 2 < outlen; i++) {
		if (i > 0 && i % SETUP_CODE_GROUP == 0)
			out[n++] = '-';
		out[n++] = sc->code[i];
	}
	out[n] = '\0';
}

/* One typed character as the alphabet spells it, '\0' if it is none. */
static char
canon_char(unsigned char c)
{
	c = (unsigned char)toupper(c);
	if (c == 'O')
		return '0';
	if (c == 'I' || c == 'L')
		return '1';
	return c != '\0' && strchr(SETUP_CODE_ALPHABET, c) != NULL ?
	    (char)c : '\0';
}

/*
 * typed in the alphabet's spelling into out, spaces and dashes left out.
 * 0, or -1 when it is not SETUP_CODE_CHARS characters of the alphabet
 * (out is then still filled, so the comparison costs the same).
 */
static int
normalize(const char *typed, char out[SETUP_CODE_CHARS])
{
	size_t	n = 0;
	int	bad = 0;
	char	c;

	memset(out, 0, SETUP_CODE_CHARS);
	for (; *typed != '\0'; typed++) {
		if (*typed == ' ' || *typed == '-')
			continue;
		if ((c = canon_char((unsigned char)*typed)) == '\0')
			bad = 1;
		if (n < SETUP_CODE_CHARS)
			out[n] = c;
		n++;
	}
	return bad || n != SETUP_CODE_CHARS ? -1 : 0;
}

/* A wrong code, counted in the current window (a new one if it ended). */
static void
count_failure(struct setup_code *sc, uint64_t now_ms)
{
	if (sc->failures == 0 || now_ms >= sc->window_ms + SETUP_CODE_WINDOW_MS) {
		sc->window_ms = now_ms;
		sc->failures = 0;
	}
	sc->failures++;
}

enum setup_check
setup_code_check(struct setup_code *sc, const char *typed, uint64_t now_ms,
    uint64_t *wait_ms)
{
	char		got[SETUP_CODE_CHARS];
	unsigned char	diff;
	uint64_t	locked;
	size_t		i;

	if (!setup_code_valid(sc, now_ms)) {
		setup_code_drop(sc);
		return SETUP_CHECK_NONE;
	}
	if ((locked = setup_code_locked_ms(sc, now_ms)) > 0) {
		if (wait_ms != NULL)
			*wait_ms = locked;
		return SETUP_CHECK_LOCKED;
	}
	diff = normalize(typed, got) == -1;
	for (i = 0; i < SETUP_CODE_CHARS; i++)
		diff |= (unsigned char)(got[i] ^ sc->code[i]);
	memset(got, 0, sizeof(got));
	if (diff != 0) {
		count_failure(sc, now_ms);
		return SETUP_CHECK_WRONG;
	}
	return SETUP_CHECK_OK;
}
