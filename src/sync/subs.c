/*
 * subs.c — author chunks into filters and URL lists into normalised URLs
 * for the planners. Pure helpers: no loop, no pool, no SQL.
 */
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "nostr/filter.h"
#include "store/follows.h"
#include "sync/subs.h"

int
sync_filter_authors(struct filter *f, const uint8_t (*authors)[32], size_t n,
    const uint16_t *kinds, size_t nkinds, int64_t since)
{
	filter_init(f);
	if (n == 0 || n > FILTER_MAX_AUTHORS || nkinds > FILTER_MAX_KINDS)
		return -1;
	if ((f->authors = malloc(n * 32)) == NULL)
		return -1;
	memcpy(f->authors, authors, n * 32);
	f->nauthors = n;
	f->has |= FILTER_HAS_AUTHORS;
	if (nkinds > 0) {
		if ((f->kinds = malloc(nkinds * sizeof(*kinds))) == NULL) {
			filter_free(f);
			return -1;
		}
		memcpy(f->kinds, kinds, nkinds * sizeof(*kinds));
		f->nkinds = nkinds;
		f->has |= FILTER_HAS_KINDS;
	}
	if (since >= 0) {
		f->since = since;
		f->has |= FILTER_HAS_SINCE;
	}
	filter_sort(f);	/* an event is matched by binary search */
	return 0;
}

int
sync_filters_chunk(struct filter *out, const uint8_t (*authors)[32], size_t n,
    size_t *pos, const uint16_t *kinds, size_t nkinds, int64_t since)
{
	int	nf = 0;
	size_t	take;

	while (*pos < n && nf < SYNC_FILTERS_PER_SUB) {
		take = n - *pos;
		if (take > SYNC_AUTHORS_PER_FILTER)
			take = SYNC_AUTHORS_PER_FILTER;
		if (sync_filter_authors(&out[nf], authors + *pos, take, kinds,
		    nkinds, since) == -1) {
			sync_filters_free(out, (size_t)nf);
			return -1;
		}
		*pos += take;
		nf++;
	}
	return nf;
}

void
sync_filters_free(struct filter *f, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		filter_free(&f[i]);
}

/* Whether url is among urls[0..n). */
static int
url_known(char **urls, size_t n, const char *url)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(urls[i], url) == 0)
			return 1;
	return 0;
}

size_t
sync_urls_parse(const char *text, char ***out)
{
	char	**urls = NULL, **grown, item[URL_MAX_BYTES + 1],
		  norm[URL_MAX_BYTES + 1];
	size_t	  n = 0, len;
	const char *p = text, *e;

	*out = NULL;
	while (p != NULL && *p != '\0') {
		e = strchr(p, ',');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		while (len > 0 && (*p == ' ' || *p == '\t'))
			p++, len--;
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len > 0 && len <= URL_MAX_BYTES) {
			memcpy(item, p, len);
			item[len] = '\0';
			if (store_relay_url_normalise(item, norm,
			    sizeof(norm)) == 0 && !url_known(urls, n, norm) &&
			    (grown = realloc(urls, (n + 1) * sizeof(*urls))) !=
			    NULL) {
				urls = grown;
				if ((urls[n] = strdup(norm)) != NULL)
					n++;
			}
		}
		p = e != NULL ? e + 1 : NULL;
	}
	*out = urls;
	if (n == 0) {
		free(urls);
		*out = NULL;
	}
	return n;
}

void
sync_urls_free(char **urls, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(urls[i]);
	free(urls);
}
