/*
 * apply.h — what a configuration change means to the running daemon.
 * Every surface that changes a run-time key (config set, relays/roots
 * edits, SIGHUP) calls app_config_changed() afterwards, so a key takes
 * effect the same way whichever surface changed it.
 */
#ifndef CACHEBOX_UI_APPLY_H
#define CACHEBOX_UI_APPLY_H

struct app;

/*
 * Apply the current value of key to the running parts; key NULL applies
 * every run-time key (after a reload). Keys that need a restart and keys
 * read on every use need nothing here.
 */
void	app_config_changed(struct app *, const char *key);

#endif
