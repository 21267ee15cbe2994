/*
 * console.h — the command console on a serial line (the USB gadget's
 * ttyGS0, a USB-serial adapter) or on stdin/stdout ("-"). It runs the
 * command table, console-only commands included: being at the console is
 * physical access, the root of trust that sets the admin token.
 */
#ifndef CACHEBOX_UI_CONSOLE_H
#define CACHEBOX_UI_CONSOLE_H

#include <stddef.h>

struct app;
struct console;

#define CONSOLE_PROMPT		"cachebox> "
#define CONSOLE_DROP_MARK	"[... output dropped ...]"

/*
 * Serve the console on path ("-" for stdin/stdout) from app->loop. A tty
 * is set raw, 115200 8N1, and restored by console_free(). A device that
 * cannot be opened yet (or hangs up later) is retried every
 * CONSOLE_REOPEN_MS. NULL with a message in err only when out of memory.
 */
struct console	*console_open(struct app *, const char *path, char *err,
		    size_t errlen);
/* Restore the terminal, stop watching it, close it. NULL is fine. */
void		 console_free(struct console *);
/*
 * Show text (lines ending in "\n") to whoever is at the console, between
 * two prompts: something the daemon says on its own, not an answer. The
 * line being typed is shown again after it. Nothing happens while no
 * device is open; NULL is fine.
 */
void		 console_notice(struct console *, const char *text);

#endif
