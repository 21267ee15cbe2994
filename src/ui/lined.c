/*
 * lined.c — the console's line editing and word splitting. Pure functions
 * on bytes: no descriptors, no allocation, so the fuzzer drives them
 * directly. Every byte a terminal sends is accepted or ignored; nothing
 * here can make the line longer than CONSOLE_MAX_LINE.
 */
#include <string.h>

#include "core/buf.h"
#include "ui/lined.h"

#define CTRL_C		0x03
#define CTRL_U		0x15
#define BS		0x08
#define ESC		0x1b
#define DEL		0x7f

void
lined_init(struct lined *ld)
{
	memset(ld, 0, sizeof(*ld));
}

static void
echo_str(struct buf *echo, const char *s)
{
	if (echo != NULL)
		buf_puts(echo, s);
}

/* Remove the last character: a UTF-8 lead byte and its continuations. */
static void
erase_char(struct lined *ld, struct buf *echo)
{
	if (ld->len == 0 || ld->too_long)
		return;
	while (ld->len > 1 && ((unsigned char)ld->line[ld->len - 1] & 0xc0) ==
	    0x80)
		ld->len--;
	ld->len--;
	ld->line[ld->len] = '\0';
	echo_str(echo, "\b \b");
}

static void
erase_line(struct lined *ld, struct buf *echo)
{
	while (ld->len > 0 && !ld->too_long)
		erase_char(ld, echo);
	ld->len = 0;
	ld->too_long = 0;
	ld->line[0] = '\0';
}

static void
keep(struct lined *ld, unsigned char c, struct buf *echo)
{
	if (ld->too_long)
		return;
	if (ld->len >= CONSOLE_MAX_LINE) {
		ld->too_long = 1;
		echo_str(echo, "\a");
		return;
	}
	ld->line[ld->len++] = (char)c;
	ld->line[ld->len] = '\0';
	if (echo != NULL)
		buf_putc(echo, c);
}

/* Skip the bytes of an escape sequence; 1 while inside one. */
static int
in_escape(struct lined *ld, unsigned char c)
{
	if (ld->esc == 1) {
		ld->esc = c == '[' || c == 'O' ? 2 : 0;
		return 1;
	}
	if (ld->esc == 2) {
		if (c >= 0x40 && c <= 0x7e)
			ld->esc = 0;
		return 1;
	}
	if (c == ESC) {
		ld->esc = 1;
		return 1;
	}
	return 0;
}

static enum lined_event
end_line(struct lined *ld, struct buf *echo)
{
	enum lined_event	ev = ld->too_long ? LINED_TOO_LONG : LINED_LINE;

	echo_str(echo, "\r\n");
	ld->done = 1;
	if (ev == LINED_TOO_LONG) {
		ld->len = 0;
		ld->line[0] = '\0';
	}
	return ev;
}

enum lined_event
lined_feed(struct lined *ld, unsigned char c, struct buf *echo)
{
	int	after_cr = ld->after_cr;

	ld->after_cr = 0;
	if (c == '\n' && after_cr)
		return LINED_NONE;	/* the LF of a CR LF: the line has ended */
	if (ld->done) {
		ld->done = ld->too_long = 0;
		ld->len = 0;
		ld->line[0] = '\0';
	}
	if (in_escape(ld, c))
		return LINED_NONE;
	switch (c) {
	case '\r':
		ld->after_cr = 1;
		return end_line(ld, echo);
	case '\n':
		return end_line(ld, echo);
	case CTRL_C:
		echo_str(echo, "^C\r\n");
		ld->len = 0;
		ld->too_long = 0;
		ld->line[0] = '\0';
		return LINED_CANCEL;
	case CTRL_U:
		erase_line(ld, echo);
		return LINED_NONE;
	case BS:
	case DEL:
		erase_char(ld, echo);
		return LINED_NONE;
	}
	if (c >= 0x20)
		keep(ld, c, echo);
	return LINED_NONE;
}

/* Copy one quoted run starting after the quote q; returns past the close. */
static char *
quoted(char *p, char **w, char q)
{
	while (*p != '\0' && *p != q) {
		if (q == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\'))
			p++;
		*(*w)++ = *p++;
	}
	return *p == q ? p + 1 : NULL;
}

int
lined_split(char *line, char **argv, int max, const char **err)
{
	char	*p = line, *w;
	int	 argc = 0;

	for (;;) {
		p += strspn(p, " \t");
		if (*p == '\0')
			return argc;
		if (argc == max) {
			*err = "too many words";
			return -1;
		}
		argv[argc++] = w = p;
		while (*p != '\0' && *p != ' ' && *p != '\t') {
			if (*p == '"' || *p == '\'') {
				char q = *p++;

				if ((p = quoted(p, &w, q)) == NULL) {
					*err = "unclosed quote";
					return -1;
				}
			} else
				*w++ = *p++;
		}
		if (*p != '\0')
			p++;
		*w = '\0';
	}
}
