/*
 * names.h — the names authors give themselves in their profiles (kind 0),
 * read from the store for the surfaces: the page's author table and its
 * search, the roots list. A bounded cache in memory keeps parsed names so
 * a listing refreshed every few seconds costs no query per author; storing
 * a new kind 0 drops its author's entry.
 */
#ifndef CACHEBOX_STORE_NAMES_H
#define CACHEBOX_STORE_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * The name pubkey's newest stored kind 0 gives (its content's
 * "display_name", else "name", else "displayName"), control characters
 * dropped, cut at a character to at most STORE_NAME_MAX_BYTES bytes, into
 * out (outlen > STORE_NAME_MAX_BYTES). 1 with the name, 0 when no kind 0
 * is stored or it names nobody (out is ""), -1 on a store error (logged).
 */
int	store_profile_name(struct store *, const uint8_t pubkey[32], char *out,
	    size_t outlen);

/*
 * Drop pubkey's cached name (its kind 0 changed). Only the store calls it.
 * The cache is freed by its own hook when the store closes.
 */
void	store_names_forget(struct store *, const uint8_t pubkey[32]);

#endif
