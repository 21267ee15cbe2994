/*
 * fuzz_console_line.c — every byte a serial line can deliver, through the
 * console's line discipline and word splitter: lines never pass
 * CONSOLE_MAX_LINE, one byte never echoes more than a full line's erasure
 * (the echo buffer the console gives it), and every
 * line that ends is split into words that lie inside it and name a
 * command (or not) without running anything.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/limits.h"
#include "ui/commands.h"
#include "ui/lined.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_line(char *line)
{
	char			*argv[CONSOLE_MAX_WORDS], copy[CONSOLE_MAX_LINE + 1];
	char			 msg[256];
	const char		*err;
	const struct command	*c;
	size_t			 len = strlen(line);
	int			 argc, i, used = 0;
	cJSON			*args;

	if (len > CONSOLE_MAX_LINE)
		abort();
	memcpy(copy, line, len + 1);
	argc = lined_split(copy, argv, CONSOLE_MAX_WORDS, &err);
	if (argc < -1 || argc > CONSOLE_MAX_WORDS)
		abort();
	for (i = 0; i < argc; i++)
		if (argv[i] < copy || argv[i] + strlen(argv[i]) > copy + len)
			abort();
	if (argc <= 0 || (c = commands_match(argc, argv, &used)) == NULL)
		return;
	if (used < 1 || used > argc)
		abort();
	args = commands_build_args(c, argc - used, argv + used, msg,
	    sizeof(msg));
	cJSON_Delete(args);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lined	ld;
	struct buf	echo;
	size_t		i;

	lined_init(&ld);
	/* one byte echoes at most a full line erased by Ctrl-U */
	buf_init(&echo, 3 * CONSOLE_MAX_LINE + 16);
	for (i = 0; i < size; i++) {
		size_t before = 0;

		if (lined_feed(&ld, data[i], &echo) == LINED_LINE)
			check_line(ld.line);
		if (echo.len - before > 3 * CONSOLE_MAX_LINE + 4 ||
		    ld.len > CONSOLE_MAX_LINE)
			abort();
		buf_reset(&echo);
	}
	buf_free(&echo);
	return 0;
}
