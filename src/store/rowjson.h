/*
 * rowjson.h — the JSON of an events row (docs/ARCHITECTURE.md section 5),
 * private to src/store/. A row written since migration 015 keeps its
 * event's JSON in `packed` (nostr/event_pack.h: the id, public key and
 * signature cut out, put back from the row's own id and pubkey columns)
 * and an empty `json`; a row written before keeps the text in `json` and
 * a NULL `packed` until the background conversion (store_pack_step,
 * store/events.h) reaches it. Every reader of a row's JSON goes through store_row_json,
 * so both kinds read the same, and nothing else in the store looks at
 * either column.
 */
#ifndef CACHEBOX_STORE_ROWJSON_H
#define CACHEBOX_STORE_ROWJSON_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "core/buf.h"

struct store;

/*
 * The columns store_row_json reads, in this order, for a SELECT list: p
 * is "" or a table alias with its dot ("e.").
 */
#define STORE_ROW_JSON_COLS(p)	p "json, " p "packed, " p "id, " p "pubkey"
#define STORE_ROW_JSON_NCOLS	4

/*
 * The bytes of JSON a row serves, as an SQL expression over its columns
 * (event_pack_json_len in SQL: a packed form's size plus its constant).
 * The delete trigger of migration 015 holds the same expression.
 */
#define STORE_ROW_JSON_BYTES(p)						\
	"(CASE WHEN " p "packed IS NULL THEN length(CAST(" p "json AS "	\
	"BLOB)) ELSE length(" p "packed) + CASE substr(" p "packed, 1, 1) "	\
	"WHEN x'01' THEN 191 WHEN x'02' THEN 179 ELSE -1 END END)"

/*
 * Append the JSON of the current row of stmt to out, reading the
 * STORE_ROW_JSON_NCOLS columns from col on (STORE_ROW_JSON_COLS). 0, or
 * -1 when out cannot hold it or the row is damaged (logged, rate-limited).
 */
int	store_row_json(sqlite3_stmt *stmt, int col, struct buf *out);

/*
 * The packed form of json[0..len) for the row (id, pubkey), in a buffer
 * the store owns: valid until the next call. NULL (logged) when it
 * cannot be made.
 */
const struct buf *store_row_pack(struct store *, const uint8_t id[32],
	    const uint8_t pubkey[32], const char *json, size_t len);

#endif
