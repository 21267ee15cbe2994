/*
 * lined.h — the console's line discipline and word splitter, apart from
 * any device: bytes typed in, what the terminal should echo, and whole
 * lines out. Printable bytes are kept and echoed; backspace or DEL erases
 * one character (a whole UTF-8 sequence); Ctrl-U erases the line; Ctrl-C
 * abandons it; CR, LF or CR LF ends it; terminal escape sequences (arrow
 * keys) are skipped; a line over CONSOLE_MAX_LINE bytes is refused whole.
 */
#ifndef CACHEBOX_UI_LINED_H
#define CACHEBOX_UI_LINED_H

#include <stddef.h>

#include "core/limits.h"

struct buf;

enum lined_event {
	LINED_NONE = 0,		/* nothing finished yet */
	LINED_LINE,		/* ld->line holds a complete line */
	LINED_CANCEL,		/* Ctrl-C: the line was abandoned */
	LINED_TOO_LONG,		/* the line ended and was over the limit */
};

struct lined {
	char	line[CONSOLE_MAX_LINE + 1];	/* NUL-terminated */
	size_t	len;
	int	too_long;	/* more was typed than fits */
	int	after_cr;	/* the last byte ended a line with CR */
	int	esc;		/* 0, 1 after ESC, 2 inside a CSI/SS3 sequence */
	int	done;		/* a line was handed out; start afresh */
};

void			lined_init(struct lined *);
/*
 * Take one typed byte. What the terminal should show is appended to echo
 * when echo is not NULL (lines end in "\r\n"; erasing is "\b \b"). After
 * LINED_LINE, ld->line is valid until the next call.
 */
enum lined_event	lined_feed(struct lined *, unsigned char c,
			    struct buf *echo);
/*
 * Split line in place into at most max words at spaces and tabs; "..."
 * (with \" and \\) or '...' keeps spaces inside a word and may be empty.
 * Returns the number of words (pointers into line), or -1 with a static
 * message in *err (an unclosed quote, too many words).
 */
int			lined_split(char *line, char **argv, int max,
			    const char **err);

#endif
