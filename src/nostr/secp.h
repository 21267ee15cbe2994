/*
 * secp.h — the one libsecp256k1 context of the process.
 * The context is created on first use and randomized with getrandom()
 * (blinding for signing); it lives until exit and is never freed, so a
 * pointer handed out stays valid. Nothing here signs or verifies by itself.
 */
#ifndef CACHEBOX_NOSTR_SECP_H
#define CACHEBOX_NOSTR_SECP_H

#include <stddef.h>
#include <stdint.h>

#include <secp256k1.h>

/*
 * The process-wide context, created and randomized on the first call.
 * NULL only if creation or the randomness source failed (logged). Owned
 * here; callers must not destroy it. Not thread-safe on the first call,
 * which is fine for a single-threaded daemon.
 */
const secp256k1_context *nostr_secp(void);

/*
 * Fill out with n bytes from the kernel CSPRNG (getrandom, retried on
 * EINTR and short reads). 0, or -1 with errno set.
 */
int	nostr_random(uint8_t *out, size_t n);

#endif
