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

/* How a person asked to see an answer: words of the console and cacheboxctl. */
enum render_flag {
	RENDER_JSON = 1 << 0,	/* --json: the JSON answer itself */
	RENDER_RELAYS = 1 << 1,	/* --relays: follows with every relay's cursor */
};

/*
 * Take the words --json and --relays out of argv wherever they stand
 * (the rest keep their order); returns the enum render_flag bits.
 */
unsigned	 render_take_flags(int *argc, char **argv);
/*
 * Check flags against command name and its arguments: NULL, or why not
 * (static). follows with an author sets RENDER_RELAYS (the one author's
 * detail is what was asked for).
 */
const char	*render_flags_check(const char *name, const cJSON *args,
		    unsigned *flags);
/* v as indented JSON, each line ending in nl. Same return as render_human(). */
int		 render_json(struct buf *out, const cJSON *v, const char *nl);
/*
 * The answer of command name as flags ask: JSON, `help` as a compact table
 * of commands (console-only ones marked), `follows` as one line per
 * author unless RENDER_RELAYS, any other as render_human(). Same return as render_human().
 */
int	render_answer(struct buf *out, const char *name, const cJSON *v,
	    unsigned flags, const char *nl);
#endif
