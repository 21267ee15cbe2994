#!/usr/bin/env python3
"""jobs_check.py — judge custom backfill jobs against relaysim's truth.

Reads relaysim's ready line (and config), the daemon's SQLite store, and
for every batch of the jobs asks relaysim's "pageable" truth for the
batch's own filter as one unit (--whole, as a job drains it): the job's
shared filter (kinds, #tags), its run's window (since, until), and the
batch's authors or ids taken from the job's list through its mask, on
the batch's relay. Loopback only.

  judge   every pageable event of every batch is stored and nothing else
          came from a job (stored job events == the union); a batch whose
          relay hides events (match > pageable) is incomplete with the
          relay's reason, one that hides nothing is complete (a relay that
          ignores until may leave it incomplete: it cannot prove it sent
          all); a job is complete exactly when all its batches are.
          --layout checks how the job was cut: chunks of --batch-size of
          the sorted list on each of --relays in turn, or (outbox) each
          author on its NIP-65 write relays from the dataset, else on
          --relays.
  crash   after a SIGKILL: every finished batch has its pageable set
          stored, every unfinished one everything newer than its cursor;
          with --state FILE, a batch finished before keeps its pages and
          counters (never done twice) and the file is updated.
With --match-relays a,b the named relays reconcile (NIP-77): their
batches are judged against the match truth (every event they hold), not
the pageable one, and must end complete.
Prints "ok - ..." / "FAIL - ..." lines (crash: one JSON line); exit 1 on
any failure.
"""
import argparse
import json
import sqlite3
import sys
import urllib.parse
import urllib.request

REASONS = {"burst": "same-second burst over the relay cap",
           "ignore_until": "relay ignores until"}
fails = 0


def report(good, what):
    global fails
    print(("ok - " if good else "FAIL - ") + what)
    if not good:
        fails += 1


def truth(http, mode, flt, relay, page_limit):
    q = urllib.parse.urlencode({"mode": mode, "format": "json", "whole": "1",
                                "filter": json.dumps(flt), "relays": relay,
                                "page_limit": str(page_limit)})
    with urllib.request.urlopen(f"{http}/truth?{q}", timeout=120) as r:
        return set(json.loads(r.read())["ids"])


class World:
    def __init__(self, ready_file, db_file):
        self.ready = next(json.loads(l) for l in open(ready_file)
                          if '"ready"' in l)
        self.http = self.ready["relays"][0]["http"]
        self.url2name = {r["url"]: r["name"] for r in self.ready["relays"]}
        self.db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True,
                                  timeout=30)

    def jobs(self):
        return [r[0] for r in self.db.execute("SELECT id FROM jobs ORDER BY id")]

    def job(self, jid):
        cols = ("filter_json", "batch_mode", "status", "run_since", "run_until",
                "items", "total_batches", "batch_size")
        row = self.db.execute(f"SELECT {', '.join(cols)} FROM jobs WHERE id = ?",
                              (jid,)).fetchone()
        return dict(zip(cols, row))

    def items(self, jid):
        return [r[0].hex() for r in self.db.execute(
            "SELECT item FROM job_items WHERE job_id = ? ORDER BY seq", (jid,))]

    def batches(self, jid):
        cols = ("id", "batch_index", "item_lo", "item_hi", "item_mask", "relay",
                "status", "until_cursor", "why", "error_message", "pages",
                "events_fetched", "completed_at", "gap_since")
        return [dict(zip(cols, r)) for r in self.db.execute(
            f"SELECT {', '.join(cols)} FROM job_batches WHERE job_id = ? "
            "ORDER BY batch_index", (jid,))]

    def stored(self, source=None):
        q = "SELECT lower(hex(id)), created_at FROM events"
        if source:
            q += f" WHERE source = '{source}'"
        return {r[0]: r[1] for r in self.db.execute(q)}


def batch_items(b, items):
    sel = items[b["item_lo"]:b["item_hi"]]
    if b["item_mask"] is None:
        return sel
    m = b["item_mask"]
    return [x for i, x in enumerate(sel) if m[i // 8] & (1 << (i % 8))]


def batch_filter(job, b, items, since_floor=None):
    f = json.loads(job["filter_json"])
    f.pop("limit", None)
    since = f.get("since")
    if job["run_since"] is not None and (since is None or job["run_since"] > since):
        since = job["run_since"]
    if since_floor is not None and (since is None or since_floor > since):
        since = since_floor
    if since is not None:
        f["since"] = since
    f.pop("until", None)
    if job["run_until"] is not None:
        f["until"] = job["run_until"]
    if job["batch_mode"] == "authors":
        f["authors"] = batch_items(b, items)
    elif job["batch_mode"] == "ids":
        f["ids"] = batch_items(b, items)
    return f


def load_config(path):
    return {rc["name"]: rc for rc in json.load(open(path))["relays"]} if path else {}


def check_layout(w, jid, args):
    job, items, batches = w.job(jid), w.items(jid), w.batches(jid)
    relays = [r for r in args.relays.split(",") if r]
    report(items == sorted(items), f"job {jid}: its list is in key order "
           f"({len(items)} items)")
    if args.layout == "outbox":
        meta = json.load(open(w.ready["dataset"]["meta"]))
        cfg_names = [rc["name"] for rc in json.load(open(args.config))["relays"]]
        want = {}
        for a in meta["authors"]:
            wr = [cfg_names[int(t)] for t in a["write_relays"]
                  if t.isdigit() and int(t) < len(cfg_names)]
            want[a["pubkey"]] = set(wr) if wr else set(relays)
        got = {x: set() for x in items}
        for b in batches:
            for x in batch_items(b, items):
                got[x].add(w.url2name.get(b["relay"], b["relay"]))
        bad = [x[:12] for x in items if got[x] != want.get(x, set(relays))]
        report(not bad, f"job {jid}: every author asked on exactly its write "
               f"relays (or the bootstrap ones): {len(items)} authors, "
               f"{len(batches)} batches{'; wrong: ' + ','.join(bad) if bad else ''}")
        return
    size = args.batch_size
    expect = []
    for lo in range(0, len(items), size) if job["batch_mode"] != "none" else [0]:
        hi = min(lo + size, len(items)) if job["batch_mode"] != "none" else 0
        for r in relays:
            expect.append((lo, hi, r))
    got = [(b["item_lo"], b["item_hi"], w.url2name.get(b["relay"], b["relay"]))
           for b in batches]
    report(got == expect and all(b["item_mask"] is None for b in batches),
           f"job {jid}: cut into {len(expect)} batches: chunks of {size} on "
           f"{','.join(relays)} in turn (got {len(got)})")


def judge(args):
    w = World(args.ready, args.db)
    cfg = load_config(args.config)
    jobs = [int(j) for j in args.jobs.split(",")] if args.jobs else w.jobs()
    want, allowed = set(), set()
    for jid in jobs:
        if args.layout:
            check_layout(w, jid, args)
        job, items, batches = w.job(jid), w.items(jid), w.batches(jid)
        statuses = set()
        hidden = 0
        for b in batches:
            name = w.url2name.get(b["relay"], b["relay"])
            f = batch_filter(job, b, items)
            m = truth(w.http, "match", f, name, args.page_limit)
            p = m if name in args.match_relays else \
                truth(w.http, "pageable", f, name, args.page_limit)
            want |= p
            allowed |= m
            statuses.add(b["status"])
            rc = cfg.get(name, {})
            if len(m) > len(p):
                hidden += 1
                exp = REASONS["ignore_until"] if rc.get("ignore_until") else \
                    REASONS["burst"] if rc.get("burst") or rc.get("bursts") else None
                report(b["status"] == "incomplete" and exp is not None and
                       (b["error_message"] or "").startswith(exp),
                       f"job {jid} batch {b['batch_index']} on {name}: "
                       f"{len(m) - len(p)} unpageable, {b['status']} "
                       f"'{b['error_message']}' (want '{exp}')")
            elif rc.get("ignore_until"):
                report(b["status"] == "complete" or
                       (b["status"] == "incomplete" and
                        (b["error_message"] or "").startswith(REASONS["ignore_until"])),
                       f"job {jid} batch {b['batch_index']} on {name} (ignores "
                       f"until, nothing hidden): {b['status']}")
            else:
                report(b["status"] == "complete",
                       f"job {jid} batch {b['batch_index']} on {name}: nothing "
                       f"hidden, {b['status']} {b['error_message'] or ''}")
        want_status = "complete" if statuses == {"complete"} or not batches \
            else "failed" if "failed" in statuses else "incomplete"
        report(job["status"] == want_status, f"job {jid}: {job['status']} "
               f"(batches {sorted(statuses)}; want {want_status}; {hidden} "
               f"with hidden events)")
        report(job["total_batches"] == len(batches),
               f"job {jid}: total_batches {job['total_batches']} = "
               f"{len(batches)} rows")
    stored = set(w.stored("job"))
    # An event the drain (or live) stored first keeps its source.
    missing, extra = want - set(w.stored()), stored - want
    report(not missing, f"all {len(want)} pageable events of jobs {jobs} "
           f"stored ({len(missing)} missing)")
    # Other jobs' events are the store's too: "nothing else" is judged
    # over every job there is.
    if sorted(jobs) == w.jobs():
        report(not extra, f"nothing else came from a job ({len(extra)} extra "
               f"of {len(stored)}; {len(extra - allowed)} not even matching)")
    return 1 if fails else 0


def crash(args):
    w = World(args.ready, args.db)
    stored = w.stored()
    bad, finished, unfinished, nbatches = [], {}, 0, 0
    for jid in w.jobs():
        job, items = w.job(jid), w.items(jid)
        for b in w.batches(jid):
            nbatches += 1
            name = w.url2name.get(b["relay"], b["relay"])
            done = b["status"] in ("complete", "incomplete", "failed")
            if done:
                finished[str(b["id"])] = [b["status"], b["pages"],
                                          b["events_fetched"], b["completed_at"]]
                f = batch_filter(job, b, items)
            else:
                unfinished += 1
                if b["until_cursor"] is None:
                    continue
                f = batch_filter(job, b, items, since_floor=b["until_cursor"] + 1)
            mode = "match" if name in args.match_relays else "pageable"
            miss = truth(w.http, mode, f, name, args.page_limit) - set(stored)
            if miss:
                bad.append(f"job {jid} batch {b['batch_index']} on {name} "
                           f"({b['status']}, cursor {b['until_cursor']}): "
                           f"{len(miss)} pageable events missing")
    redone = []
    if args.state:
        try:
            before = json.load(open(args.state))
        except (OSError, ValueError):
            before = {}
        for bid, v in before.items():
            if finished.get(bid) != v:
                redone.append(f"batch {bid}: {v} then {finished.get(bid)}")
        json.dump(finished, open(args.state, "w"))
    print(json.dumps({"batches": nbatches, "finished": len(finished),
                      "unfinished": unfinished, "stored": len(stored),
                      "violations": bad[:5], "nviolations": len(bad),
                      "redone": redone[:5], "nredone": len(redone)}))
    return 1 if bad or redone else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["judge", "crash"])
    ap.add_argument("--ready", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--config")
    ap.add_argument("--jobs", default="")
    ap.add_argument("--page-limit", type=int, default=500)
    ap.add_argument("--layout", choices=["plain", "outbox"])
    ap.add_argument("--relays", default="")
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--state")
    ap.add_argument("--match-relays", default="")
    args = ap.parse_args()
    args.match_relays = set(r for r in args.match_relays.split(",") if r)
    return judge(args) if args.mode == "judge" else crash(args)


if __name__ == "__main__":
    sys.exit(main())
