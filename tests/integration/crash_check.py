#!/usr/bin/env python3
"""crash_check.py — after a SIGKILL, check that no drain cursor points past
data that was not committed.

For every cursor row (author, relay) of the store: a complete or incomplete
row must have every event relaysim calls pageable for that author on that
relay in the store; a row still draining with until_cursor U must have every
pageable event created after U (the events at second U itself may still be
coming: the cursor is inclusive, the next page starts at U again). Prints
one summary line (JSON) and exits 1 on any violation. Loopback only.
"""
import argparse
import json
import sqlite3
import sys
import urllib.parse
import urllib.request


def pageable(http, author, relay, since, page_limit):
    f = {"authors": [author]}
    if since is not None:
        f["since"] = since
    q = urllib.parse.urlencode({"mode": "pageable", "format": "json",
                                "filter": json.dumps(f), "relays": relay,
                                "page_limit": str(page_limit)})
    with urllib.request.urlopen(f"{http}/truth?{q}", timeout=60) as r:
        return set(json.loads(r.read())["ids"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ready", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--page-limit", type=int, default=500)
    args = ap.parse_args()
    ready = next(json.loads(l) for l in open(args.ready) if '"ready"' in l)
    url2name = {r["url"]: r["name"] for r in ready["relays"]}
    http = ready["relays"][0]["http"]
    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    stored = {row[0].hex() for row in db.execute("SELECT id FROM events")}
    rows = list(db.execute("SELECT pubkey, relay, until_cursor, complete, "
                           "incomplete_reason FROM cursors"))
    bad, draining, started = [], 0, 0
    for pk, relay, until, complete, reason in rows:
        name = url2name.get(relay)
        if name is None:
            bad.append(f"cursor on unknown relay {relay}")
            continue
        finished = complete == 1 or reason is not None
        if not finished:
            draining += 1
        if until is None and not finished:
            continue
        started += 1
        since = None if finished else until + 1
        miss = pageable(http, pk.hex(), name, since, args.page_limit) - stored
        if miss:
            bad.append(f"{pk.hex()[:16]} on {name}: cursor {until} "
                       f"({'finished' if finished else 'draining'}) but "
                       f"{len(miss)} pageable events missing")
    print(json.dumps({"cursors": len(rows), "started": started,
                      "draining": draining, "stored": len(stored),
                      "violations": bad[:5], "nviolations": len(bad)}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
