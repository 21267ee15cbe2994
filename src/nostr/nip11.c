/*
 * nip11.c — reads a relay information document into struct nip11_info.
 *
 * A table names every field we keep, where it lives (top level or inside
 * "limitation") and how it is read; one small reader per value type.
 * A field of the wrong type is skipped, never an error: relays publish
 * all sorts of documents and none of them should cost us the connection.
 * This file must never keep a pointer into the cJSON tree past
 * nip11_parse, and never accept a body over NIP11_MAX_DOC_BYTES.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/json.h"
#include "core/jsonscan.h"
#include "core/limits.h"
#include "nostr/nip11.h"

enum nip11_ftype {
	NIP11_F_STRING,
	NIP11_F_INT,
	NIP11_F_BOOL,
	NIP11_F_NIPS,
	NIP11_F_NEGENTROPY,
};

static const struct nip11_field {
	const char		*key;
	bool			 limitation;	/* inside "limitation" */
	enum nip11_ftype	 type;
	size_t			 off;
} nip11_fields[] = {
	{ "name", false, NIP11_F_STRING, offsetof(struct nip11_info, name) },
	{ "software", false, NIP11_F_STRING,
	    offsetof(struct nip11_info, software) },
	{ "version", false, NIP11_F_STRING,
	    offsetof(struct nip11_info, version) },
	{ "supported_nips", false, NIP11_F_NIPS, 0 },
	{ "negentropy", false, NIP11_F_NEGENTROPY,
	    offsetof(struct nip11_info, negentropy) },
	{ "max_limit", true, NIP11_F_INT,
	    offsetof(struct nip11_info, max_limit) },
	{ "max_subscriptions", true, NIP11_F_INT,
	    offsetof(struct nip11_info, max_subscriptions) },
	{ "max_message_length", true, NIP11_F_INT,
	    offsetof(struct nip11_info, max_message_length) },
	{ "max_event_tags", true, NIP11_F_INT,
	    offsetof(struct nip11_info, max_event_tags) },
	{ "max_content_length", true, NIP11_F_INT,
	    offsetof(struct nip11_info, max_content_length) },
	{ "auth_required", true, NIP11_F_BOOL,
	    offsetof(struct nip11_info, auth_required) },
	{ "payment_required", true, NIP11_F_BOOL,
	    offsetof(struct nip11_info, payment_required) },
};
#define NIP11_NFIELDS	(sizeof(nip11_fields) / sizeof(nip11_fields[0]))

/* A non-negative whole number that fits int64_t, or -1. */
static int64_t
json_count(const cJSON *v)
{
	int64_t	n;

	return json_int(v, 0, INT64_MAX, &n) == 0 ? n : -1;
}

/* Copy s, cut to NIP11_MAX_STRING bytes without splitting a character. */
static void
read_string(const cJSON *v, char *out)
{
	size_t	n;

	if (!cJSON_IsString(v) || v->valuestring == NULL)
		return;
	n = strnlen(v->valuestring, NIP11_MAX_STRING + 1);
	if (n > NIP11_MAX_STRING) {
		n = NIP11_MAX_STRING;
		/* Back off continuation bytes (10xxxxxx) to a lead byte. */
		while (n > 0 && ((unsigned char)v->valuestring[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out, v->valuestring, n);
	out[n] = '\0';
}

static void
read_int(const cJSON *v, int64_t *out)
{
	int64_t	n = json_count(v);

	if (n >= 0)
		*out = n;
}

static void
read_bool(const cJSON *v, bool *out)
{
	if (cJSON_IsBool(v))
		*out = cJSON_IsTrue(v);
}

/* Integers in [0, INT_MAX]; other items are skipped, the rest dropped. */
static void
read_nips(const cJSON *v, struct nip11_info *info)
{
	const cJSON	*item;
	int64_t		 n;

	if (!cJSON_IsArray(v))
		return;
	cJSON_ArrayForEach(item, v) {
		if (info->nsupported_nips == NIP11_MAX_NIPS)
			break;
		n = json_count(item);
		if (n < 0 || n > NIP11_MAX_NIP_NUMBER)
			continue;
		info->supported_nips[info->nsupported_nips++] = (int)n;
	}
}

/* A version number, or true for "some version" (1). */
static void
read_negentropy(const cJSON *v, int *out)
{
	int64_t	n = json_count(v);

	if (cJSON_IsTrue(v))
		*out = 1;
	else if (n >= 0 && n <= NIP11_MAX_NIP_NUMBER)
		*out = (int)n;
}

static void
read_field(const struct nip11_field *f, const cJSON *v,
    struct nip11_info *info)
{
	char	*base = (char *)info;

	switch (f->type) {
	case NIP11_F_STRING:
		read_string(v, base + f->off);
		break;
	case NIP11_F_INT:
		read_int(v, (int64_t *)(void *)(base + f->off));
		break;
	case NIP11_F_BOOL:
		read_bool(v, (bool *)(void *)(base + f->off));
		break;
	case NIP11_F_NIPS:
		read_nips(v, info);
		break;
	case NIP11_F_NEGENTROPY:
		read_negentropy(v, (int *)(void *)(base + f->off));
		break;
	}
}

static void
set_err(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", msg);
}

/* 0 with info filled, or -1 with the reason in err. */
int
nip11_parse(const char *doc, size_t len, struct nip11_info *info, char *err,
    size_t errlen)
{
	cJSON		*root;
	const cJSON	*lim, *v;
	size_t		 i;

	memset(info, 0, sizeof(*info));
	if (len > NIP11_MAX_DOC_BYTES) {
		set_err(err, errlen, "relay information document too large");
		return -1;
	}
	if (jsonscan_check(doc, len, NIP11_MAX_JSON_VALUES,
	    NIP11_MAX_JSON_DEPTH, NULL) != JSONSCAN_OK) {
		set_err(err, errlen, "relay information document holds too "
		    "many values");
		return -1;
	}
	if ((root = cJSON_ParseWithLength(doc, len)) == NULL) {
		set_err(err, errlen, "relay information document is not JSON");
		return -1;
	}
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		set_err(err, errlen,
		    "relay information document is not a JSON object");
		return -1;
	}
	lim = cJSON_GetObjectItemCaseSensitive(root, "limitation");
	for (i = 0; i < NIP11_NFIELDS; i++) {
		const struct nip11_field *f = &nip11_fields[i];

		if (f->limitation && !cJSON_IsObject(lim))
			continue;
		v = cJSON_GetObjectItemCaseSensitive(f->limitation ? lim : root,
		    f->key);
		if (v != NULL)
			read_field(f, v, info);
	}
	cJSON_Delete(root);
	return 0;
}

/* True if nip is in supported_nips, or nip is 77 and negentropy is set. */
bool
nip11_supports(const struct nip11_info *info, int nip)
{
	size_t	i;

	for (i = 0; i < info->nsupported_nips; i++)
		if (info->supported_nips[i] == nip)
			return true;
	return nip == 77 && info->negentropy > 0;
}
