/*
 * import.h — events read from a file (JSONL: one event per line, as strfry
 * export, nak or cacheboxctl export write them) taken through ingest like
 * any other: parsed, id and signature checked, stored, queued for the
 * uplink, pushed to the relay endpoint's live subscriptions. Each line is
 * counted as stored, duplicate or invalid, and the first
 * IMPORT_REPORT_INVALID invalid lines are kept with their numbers and
 * reasons for the report.
 */
#ifndef CACHEBOX_SYNC_IMPORT_H
#define CACHEBOX_SYNC_IMPORT_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct ingest;
struct import_run;

/* A new import into ing. NULL on allocation failure. */
struct import_run *import_begin(struct ingest *);
/* One line (without its newline); blank lines count for nothing. */
void		 import_line(struct import_run *, const char *text, size_t len);
/* One line longer than IMPORT_MAX_LINE_BYTES (skipped unread). */
void		 import_line_too_long(struct import_run *);
/*
 * The report {"lines", "stored", "duplicate", "invalid", "errors",
 * "invalid_lines": [{"line", "reason"}...]} (a new object) and free run.
 */
cJSON		*import_end(struct import_run *);

#endif
