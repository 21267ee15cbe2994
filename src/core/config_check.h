/*
 * config_check.h — the value checks of the configuration table, private to
 * src/core/config*.c: each type's parser, which also produces the text and
 * number a value is kept as. Checks of what higher layers parse (relay
 * URLs, public keys, the uplink URL) are lent to the table by them
 * (config_lend_check), so core/ includes nothing of theirs.
 */
#ifndef CACHEBOX_CORE_CONFIG_CHECK_H
#define CACHEBOX_CORE_CONFIG_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/limits.h"

#define KIB	((int64_t)1024)
#define MIB	(KIB * 1024)
#define GIB	(MIB * 1024)

/* A value after its check: the text to store and its number, if any. */
struct cfg_parsed {
	char	text[CONFIG_MAX_VALUE + 1];
	int64_t	num;
};

/*
 * Trim value, refuse control characters and over-long values, then run
 * the check of d's type. 0 with *out filled, or -1 with a message naming
 * the key in err (never repeating a secret).
 */
int	cfg_parse(const struct cfg_def *d, const char *value,
	    struct cfg_parsed *out, char *err, size_t errlen);
/* cfg_parse of d's built-in default, trusted where no check is lent yet. */
int	cfg_parse_default(const struct cfg_def *d, struct cfg_parsed *out,
	    char *err, size_t errlen);
/* The n bytes at *s without leading and trailing white space. */
void	cfg_trim(const char **s, size_t *n);

#endif
