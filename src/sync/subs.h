/*
 * subs.h — helpers the planners share to turn author lists into REQ
 * filters: chunks of at most SYNC_AUTHORS_PER_FILTER authors, at most
 * SYNC_FILTERS_PER_SUB filters per subscription. They only build filters;
 * they never open a subscription or touch the store.
 */
#ifndef CACHEBOX_SYNC_SUBS_H
#define CACHEBOX_SYNC_SUBS_H

#include <stddef.h>
#include <stdint.h>

struct filter;

/*
 * Fill f (filter_init'ed here) with authors[0..n) (1 <= n <=
 * FILTER_MAX_AUTHORS, copied), kinds[0..nkinds) when nkinds > 0, and
 * since when since >= 0. 0, or -1 on allocation failure (f owns nothing).
 */
int	sync_filter_authors(struct filter *f, const uint8_t (*authors)[32],
	    size_t n, const uint16_t *kinds, size_t nkinds, int64_t since);

/*
 * Fill up to SYNC_FILTERS_PER_SUB filters of out with the authors from
 * *pos on (advancing *pos), SYNC_AUTHORS_PER_FILTER per filter. Returns
 * the number of filters filled (0 when *pos == n), or -1 on allocation
 * failure (out owns nothing then).
 */
int	sync_filters_chunk(struct filter *out, const uint8_t (*authors)[32],
	    size_t n, size_t *pos, const uint16_t *kinds, size_t nkinds,
	    int64_t since);

/* filter_free each of f[0..n). */
void	sync_filters_free(struct filter *f, size_t n);

/*
 * Split the comma-separated list text into normalised relay URLs: a
 * malloc'd array of malloc'd strings into *out, repeats and entries that
 * do not normalise skipped. Returns the count (*out NULL when 0).
 */
size_t	sync_urls_parse(const char *text, char ***out);
void	sync_urls_free(char **urls, size_t n);

#endif
