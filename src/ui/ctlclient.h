/*
 * ctlclient.h — cacheboxctl's client for daemon commands.
 */
#ifndef CACHEBOX_UI_CTLCLIENT_H
#define CACHEBOX_UI_CTLCLIENT_H

/*
 * Run the command named by the leading words of argv (e.g. "config set
 * KEY VALUE") on the daemon whose state directory is dir, and print the
 * answer: indented "name: value" lines, or the JSON itself when flags
 * (enum render_flag) or a word "--json" among argv say so; the words
 * --json and --relays are taken out wherever they stand. A group's name
 * alone ("jobs") lists the group's commands without asking the daemon.
 * Returns the exit status: 0, 1 (the daemon answered an error or could
 * not be reached), 2 (usage).
 */
int	ctlclient_run(const char *dir, int argc, char **argv, unsigned flags);

#endif
