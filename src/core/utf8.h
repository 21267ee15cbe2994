/*
 * utf8.h — UTF-8 checking and repair. Whatever the daemon writes as JSON
 * must be valid UTF-8, but many of its strings come from peers (a relay's
 * NOTICE, a command argument): cJSON copies bytes as they are. Every JSON
 * text that leaves the daemon is passed through utf8_repair() once, where
 * it is printed, so no source can be forgotten.
 */
#ifndef CACHEBOX_CORE_UTF8_H
#define CACHEBOX_CORE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * True when the len bytes at s are well-formed UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF).
 */
bool	 utf8_valid(const char *s, size_t len);

/*
 * s (NUL-terminated) with every ill-formed byte sequence replaced by
 * U+FFFD. Returns s itself when it is valid, else a new string from
 * malloc (s is then freed); NULL, with s freed, when out of memory.
 * Written for a malloc'd JSON text: take what cJSON_Print* returned.
 */
char	*utf8_repair(char *s);

#endif
