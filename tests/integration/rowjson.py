"""rowjson.py — an events row's JSON, for the tests that read the store's
file directly (src/store/rowjson.h, src/nostr/event_pack.h).

A row written since migration 015 keeps its JSON in `packed` (a form byte,
then for forms 1 and 2 the signature's 64 bytes and the text without the
id, pubkey and signature hex, which go back where they were) and '' in
`json`; an older row keeps its text in `json` and NULL in `packed`.
COLS is the column list row_json takes, size_sql() the served size as SQL.
"""

COLS = "json, packed, id, pubkey"


def size_sql(p=""):
    """The bytes of JSON a row serves, as SQL (STORE_ROW_JSON_BYTES)."""
    return (f"(CASE WHEN {p}packed IS NULL THEN length(CAST({p}json AS BLOB)) "
            f"ELSE length({p}packed) + CASE substr({p}packed, 1, 1) "
            f"WHEN x'01' THEN 191 WHEN x'02' THEN 179 ELSE -1 END END)")


def row_json(text, packed, rid, pubkey):
    """The JSON text of a row from its COLS values."""
    if packed is None:
        return text
    form, blob = packed[0], bytes(packed)
    if form == 0:
        return blob[1:].decode()
    if form == 1:
        sig, rest = blob[1:65], blob[65:]
        n = len(rest) + 256
        at = [7, 83, n - 130]
    elif form == 2:
        at = [int.from_bytes(blob[1 + 4 * i:5 + 4 * i], "little") for i in range(3)]
        sig, rest = blob[13:77], blob[77:]
    else:
        raise ValueError(f"unknown packed form {form}")
    runs = sorted(zip(at, [bytes(rid).hex(), bytes(pubkey).hex(), sig.hex()]))
    out, pos, r = [], 0, 0
    for a, h in runs:
        out.append(rest[r:r + a - pos])
        out.append(h.encode())
        r += a - pos
        pos = a + len(h)
    out.append(rest[r:])
    return b"".join(out).decode()
