/*
 * names.c — profile names from stored kind 0 events (names.h). The cache
 * is an open-addressed table of STORE_NAMES_CACHE entries (about 80 bytes
 * each), allocated at the first lookup; when it is three-quarters full it
 * is emptied and refills as names are asked for, so it never grows. An
 * entry whose kind 0 changed is kept with its key and marked stale, so a
 * probe never needs tombstones. Lookups on a miss read the partial index
 * events_replaceable (EVENTS_SQL_NEWEST_REPLACEABLE) themselves; nothing
 * here writes. The cache hangs in the store's STORE_CACHE_NAMES slot with
 * names_free as its hook, so store.c never calls in here and events.c,
 * which drops a name when a kind 0 is stored, is never called back.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "core/limits.h"
#include "core/log.h"
#include "store/names.h"
#include "store/rowjson.h"
#include "store/store_sql.h"

#if (STORE_NAMES_CACHE & (STORE_NAMES_CACHE - 1)) != 0
#error "STORE_NAMES_CACHE must be a power of two"
#endif

struct name_entry {
	uint8_t		pubkey[32];
	bool		used;
	bool		fresh;		/* name is what the store says now */
	char		name[STORE_NAME_MAX_BYTES + 1];
};

struct store_names {
	struct name_entry	*e;
	size_t			 used;
};

/* The slot of pubkey, or the empty slot where it would go. */
static struct name_entry *
names_slot(struct store_names *n, const uint8_t pk[32])
{
	size_t	i, mask = STORE_NAMES_CACHE - 1;

	/* A public key is already uniformly distributed. */
	i = ((size_t)pk[0] | (size_t)pk[1] << 8 | (size_t)pk[2] << 16) & mask;
	while (n->e[i].used && memcmp(n->e[i].pubkey, pk, 32) != 0)
		i = (i + 1) & mask;
	return &n->e[i];
}

/*
 * Copy at most STORE_NAME_MAX_BYTES bytes of s into out, dropping control
 * characters and cutting before a character that would not fit.
 */
static void
name_copy(char *out, const char *s)
{
	size_t			 n = 0, len;
	const unsigned char	*p = (const unsigned char *)s;

	while (*p != '\0') {
		len = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 :
		    *p >= 0xc0 ? 2 : 1;
		if (n + len > STORE_NAME_MAX_BYTES)
			break;
		if (strnlen((const char *)p, len) < len)
			break;
		if (*p >= 0x20 && *p != 0x7f) {
			memcpy(out + n, p, len);
			n += len;
		}
		p += len;
	}
	/* Names padded with spaces read as what they hold. */
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

/* The name in a kind 0 event's JSON into out ("" when none). */
static void
name_parse(const char *json, size_t len, char *out)
{
	static const char *const fields[] = { "display_name", "name",
	    "displayName" };
	cJSON		*ev, *content = NULL;
	const char	*c, *v;
	size_t		 i;

	out[0] = '\0';
	if ((ev = cJSON_ParseWithLength(json, len)) == NULL)
		return;
	c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev,
	    "content"));
	if (c != NULL)
		content = cJSON_Parse(c);
	for (i = 0; content != NULL && i < sizeof(fields) / sizeof(fields[0]);
	    i++) {
		v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		    content, fields[i]));
		if (v == NULL)
			continue;
		name_copy(out, v + strspn(v, " \t\r\n"));
		if (out[0] != '\0')
			break;
	}
	cJSON_Delete(content);
	cJSON_Delete(ev);
}

/* Look pubkey up in the store into out. 1, 0 or -1 as store_profile_name. */
static int
name_load(struct store *st, const uint8_t pk[32], char *out)
{
	sqlite3_stmt	*stmt;
	struct buf	 json;
	int		 rc;

	out[0] = '\0';
	if ((stmt = store_stmt(st, EVENTS_SQL_NEWEST_REPLACEABLE)) == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, pk, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 2, 0) != SQLITE_OK) {
		store_bind_fail(st, stmt, "names newest");
		return -1;
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		buf_init(&json, EVENT_SERIAL_MAX_BYTES);
		if (store_row_json(stmt, 0, &json) == 0)
			name_parse((const char *)json.data, json.len, out);
		buf_free(&json);
	} else if (rc != SQLITE_DONE)
		log_warnx("store: names newest: %s",
		    sqlite3_errmsg(store_db(st)));
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -1;
	return out[0] != '\0';
}

static void
names_free(void *arg)
{
	struct store_names	*n = arg;

	free(n->e);
	free(n);
}

static struct store_names *
names_get(struct store *st)
{
	struct store_cache	*slot = store_cache_slot(st, STORE_CACHE_NAMES);
	struct store_names	*n;

	if (slot->data != NULL)
		return slot->data;
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	if ((n->e = calloc(STORE_NAMES_CACHE, sizeof(*n->e))) == NULL) {
		free(n);
		return NULL;
	}
	slot->data = n;
	slot->free = names_free;
	return n;
}

int
store_profile_name(struct store *st, const uint8_t pubkey[32], char *out,
    size_t outlen)
{
	struct store_names	*n = names_get(st);
	struct name_entry	*e;
	char			 name[STORE_NAME_MAX_BYTES + 1];
	int			 rc;

	if (outlen <= STORE_NAME_MAX_BYTES)
		return -1;
	if (n != NULL && (e = names_slot(n, pubkey))->used && e->fresh) {
		memcpy(out, e->name, strlen(e->name) + 1);
		return out[0] != '\0';
	}
	if ((rc = name_load(st, pubkey, name)) == -1)
		return -1;
	memcpy(out, name, strlen(name) + 1);
	if (n == NULL)
		return rc;
	if (n->used >= STORE_NAMES_CACHE / 4 * 3) {
		memset(n->e, 0, STORE_NAMES_CACHE * sizeof(*n->e));
		n->used = 0;
	}
	if (!(e = names_slot(n, pubkey))->used) {
		memcpy(e->pubkey, pubkey, 32);
		e->used = true;
		n->used++;
	}
	e->fresh = true;
	memcpy(e->name, name, sizeof(e->name));
	return rc;
}

void
store_names_forget(struct store *st, const uint8_t pubkey[32])
{
	struct store_names	*n = store_cache_slot(st, STORE_CACHE_NAMES)->data;
	struct name_entry	*e;

	if (n != NULL && (e = names_slot(n, pubkey))->used)
		e->fresh = false;
}
