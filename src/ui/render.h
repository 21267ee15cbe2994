/*
 * render.h — an answer of the command table shown to a person: indented
 * "name: value" lines, the same on cacheboxctl and the serial console.
 */
#ifndef CACHEBOX_UI_RENDER_H
#define CACHEBOX_UI_RENDER_H

#include <cjson/cJSON.h>

struct buf;

/*
 * Append the human rendering of v to out, each line ending in nl ("\n",
 * or "\r\n" for a raw terminal). 0, or -1 when out is full (what fitted
 * stays).
 */
int	render_human(struct buf *out, const cJSON *v, const char *nl);
/*
 * The answer of command name: `help` as a compact table of commands, any
 * other as render_human(). Same return as render_human().
 */
int	render_answer(struct buf *out, const char *name, const cJSON *v,
	    const char *nl);

#endif
