#!/usr/bin/env python3
"""drain_check.py — judge a finished author drain against relaysim's truth.

Reads relaysim's ready line and config (relay i of the config fills the
dataset's kind 10002 placeholder "i"), the dataset's authors and their write
relays, and the daemon's SQLite store, then checks:
  * every id a correct drain can page (relaysim's "pageable" truth, per
    author over the author's bootstrap and write relays) is stored;
  * every stored id was asked for (relaysim's "match" truth over the same
    relays), so no unrequested event slipped in;
  * every (author, relay) whose pageable set is smaller than what the relay
    holds has an incomplete cursor with the expected reason, and no author
    with such a relay is complete;
  * on a relay that ignores until, an author whose whole history there is
    smaller than a page the relay has shown it returns (the largest
    min(history, page size) over the authors drained there) is complete:
    the relay sent all of it at once; with --until-both at least one such
    author and at least one truly incomplete one must exist;
  * with --ratio NAMES: events_sent / distinct_events_sent <= 1.05 there.
Prints one "ok - ..." or "FAIL - ..." line per check; exit 1 on any failure.
It only talks to the loopback URLs of the ready line.
"""
import argparse
import json
import sqlite3
import sys
import urllib.parse
import urllib.request

import rowjson

REASON_UNTIL = "relay ignores until"
REASON_BURST = "same-second burst over the relay cap"

fails = 0


def report(good, what):
    global fails
    print(("ok - " if good else "FAIL - ") + what)
    if not good:
        fails += 1


def get(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read().decode()


def truth(http, mode, author, relays, page_limit):
    q = urllib.parse.urlencode({"mode": mode, "format": "json",
                                "filter": json.dumps({"authors": [author]}),
                                "relays": ",".join(relays),
                                "page_limit": str(page_limit)})
    return set(json.loads(get(f"{http}/truth?{q}"))["ids"])


def load_world(args):
    ready = next(json.loads(l) for l in open(args.ready) if '"ready"' in l)
    cfg = json.load(open(args.config))
    byname = {r["name"]: r for r in ready["relays"]}
    names = [rc["name"] for rc in cfg["relays"]]
    rcs = {rc["name"]: rc for rc in cfg["relays"]}
    meta = json.load(open(ready["dataset"]["meta"]))
    return ready, byname, names, rcs, meta


def drain_relays(author, names, boots):
    out = list(boots)
    for tok in author["write_relays"]:
        if tok.isdigit() and int(tok) < len(names) and names[int(tok)] not in out:
            out.append(names[int(tok)])
    return out


def page_size(rc, page_limit):
    """E of relaysim's pageable rule 2 for a filter without a limit."""
    e = page_limit
    for k in ("max_limit", "cap"):
        if rc.get(k):
            e = min(e, rc[k])
    return e


def expected_reason(rc):
    if rc.get("ignore_until"):
        return REASON_UNTIL
    if rc.get("burst") or rc.get("bursts"):
        return REASON_BURST
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ready", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--bootstrap", required=True, help="relay names, comma-separated")
    ap.add_argument("--ratio", default="", help="well-behaved relay names")
    ap.add_argument("--page-limit", type=int, default=500)
    ap.add_argument("--stored-out", help="write stored event JSON here, one per line")
    ap.add_argument("--quiet-ok", action="store_true")
    ap.add_argument("--until-both", action="store_true",
                    help="require complete and incomplete authors on until-ignoring relays")
    args = ap.parse_args()

    ready, byname, names, rcs, meta = load_world(args)
    http = ready["relays"][0]["http"]
    boots = [b for b in args.bootstrap.split(",") if b]
    url2name = {r["url"]: r["name"] for r in ready["relays"]}

    db = sqlite3.connect(args.db)
    stored = {row[0].hex() for row in db.execute("SELECT id FROM events")}
    cursors = {}
    for pk, relay, complete, reason, gap in db.execute(
            "SELECT pubkey, relay, complete, incomplete_reason, gap_since FROM cursors"):
        cursors[(pk.hex(), url2name.get(relay, relay))] = (complete, reason, gap)

    want, allowed = set(), set()
    hidden_authors = set()
    sets = {}
    for a in meta["authors"]:
        for r in drain_relays(a, names, boots):
            sets[(a["pubkey"], r)] = (
                truth(http, "pageable", a["pubkey"], [r], args.page_limit),
                truth(http, "match", a["pubkey"], [r], 0))
    # The page each relay proves it returns: its largest answer to one author.
    proven = {}
    for (pk, r), (p, m) in sets.items():
        e = page_size(rcs[r], args.page_limit)
        proven[r] = max(proven.get(r, 0), min(len(m), e))
    until_done = until_inc = 0
    for a in meta["authors"]:
        pk = a["pubkey"]
        rels = drain_relays(a, names, boots)
        for r in rels:
            p, m = sets[(pk, r)]
            want |= p
            allowed |= m
            row = cursors.get((pk, r))
            if row is None:
                report(False, f"author {a['index']} has a cursor on {r}")
                continue
            complete, reason, gap = row
            if len(m) > len(p):
                hidden_authors.add(pk)
                exp = expected_reason(rcs[r])
                if exp == REASON_UNTIL:
                    until_inc += 1
                report(complete == 0 and reason == exp,
                       f"author {a['index']} on {r}: {len(m) - len(p)} unpageable, "
                       f"recorded incomplete '{reason}' (want '{exp}')")
            elif rcs[r].get("ignore_until") and len(m) < proven[r]:
                until_done += 1
                report(complete == 1,
                       f"author {a['index']} on {r}: all {len(m)} sent below the "
                       f"proven page of {proven[r]}, complete "
                       f"({'yes' if complete else reason})")
            elif not args.quiet_ok:
                report(complete == 1 or reason is not None,
                       f"author {a['index']} on {r}: finished ({'complete' if complete else reason})")
    if args.until_both:
        report(until_done >= 1 and until_inc >= 1,
               f"until-ignoring relays: {until_done} authors complete below "
               f"the cap, {until_inc} truly incomplete (want >= 1 of each)")
    missing = want - stored
    report(not missing, f"all {len(want)} pageable events stored "
           f"({len(missing)} missing{': ' + ', '.join(sorted(missing)[:3]) if missing else ''})")
    extra = stored - allowed
    report(not extra, f"no unrequested event stored ({len(extra)} extra of {len(stored)})")

    # Authors: none complete wrongly; complete + incomplete = total.
    total = complete_n = incomplete_n = 0
    for a in meta["authors"]:
        rows = [v for (pk, _), v in cursors.items() if pk == a["pubkey"]]
        total += 1
        if rows and all(c == 1 for c, _, _ in rows):
            complete_n += 1
            report(a["pubkey"] not in hidden_authors,
                   f"author {a['index']} complete and nothing hidden from it")
        elif rows and all(c == 1 or r is not None for c, r, _ in rows):
            incomplete_n += 1
    report(complete_n + incomplete_n == total,
           f"complete {complete_n} + incomplete {incomplete_n} = total {total}")

    for name in [n for n in args.ratio.split(",") if n]:
        s = json.loads(get(f"{byname[name]['http']}/stats"))
        ratio = s["events_sent"] / max(1, s["distinct_events_sent"])
        report(ratio <= 1.05, f"{name}: sent {s['events_sent']} / distinct "
               f"{s['distinct_events_sent']} = {ratio:.4f} <= 1.05")

    if args.stored_out:
        with open(args.stored_out, "w") as f:
            for row in db.execute(f"SELECT {rowjson.COLS} FROM events"):
                f.write(rowjson.row_json(*row) + "\n")
    print(json.dumps({"stored": len(stored), "pageable": len(want),
                      "complete": complete_n, "incomplete": incomplete_n,
                      "total": total}))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
