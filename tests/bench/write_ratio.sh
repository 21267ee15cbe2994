#!/usr/bin/env bash
# write_ratio.sh — bytes cacheboxd writes to disk per byte of event JSON it
# stores, over a real drain, and where they go. The network is
# test_drain_faults.sh's: 10 authors, 8,000 notes, five relaysim relays with
# silent caps of 300, a NIP-11 max_limit of 500, one ignoring until, one
# holding a same-second burst over its cap, one dropping connections
# mid-page and sending forged, unrequested and malformed frames. cacheboxd
# follows the dataset's root and drains to idle (--exit-when-idle), RUNS
# times per daemon, each from an empty state directory.
#
#   tests/bench/write_ratio.sh [-v] [RUNS [DAEMON...]]    (3, build/src/cacheboxd)
#
# The drain is paced as a box paces it by default (backfill.pace_ms 1000:
# at most one request a second per relay), so events arrive in pages
# spread over time as from real relays; PACE_MS=0 drains as fast as
# loopback allows (a few large batches: the best case).
#
# Several daemons (two builds to compare) are run in turn, run by run, so
# they see the same load on the machine; figures are medians over the runs
# of each. -v adds every table and index on its own line.
#
# How the bytes are counted. The daemon runs with build/tests/bench/
# write_trace.so preloaded, which counts every byte given to write(2) and
# pwrite64(2), by file, and for the database by page: a WAL frame is charged
# to the page number in its header, a checkpoint write to the page at its
# offset (shim/write_trace.c). At exit, after the database was closed (the
# close checkpoints), it also records the process's /proc/self/io. The
# daemon's checkpoint process (run with the same environment) records its
# own, and the figures are the two added up.
#   - "write_bytes" is the kernel's figure, the one an SD card sees: pages
#     the processes dirtied (a page written twice before writeback counts
#     once; the mmap()ed -shm file counts too). The ratio is write_bytes /
#     bytes of event JSON stored (event_totals, the canonical JSON).
#   - The split is of the bytes handed to the kernel: WAL frames (header
#     and page, 24 + page size bytes each) and checkpoint writes into the
#     database, each charged to the table or index that owns the page in
#     the final database (dbstat); an index is listed under its table.
#     A page freed during the run and used again by another table is
#     charged to its last owner; pages free at the end are "(free)".
# It prints figures and asserts nothing.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export CACHEBOX_BUILD=${CACHEBOX_BUILD:-$SRC/build}
export CACHEBOXD=${CACHEBOXD:-$CACHEBOX_BUILD/src/cacheboxd}
export CACHEBOXCTL=${CACHEBOXCTL:-$CACHEBOX_BUILD/src/cacheboxctl}
export CACHEBOX_TESTS=$SRC/tests NODE_PATH=$SRC/tests/node_modules
VERBOSE=0
if [ "${1:-}" = -v ]; then VERBOSE=1; shift; fi
RUNS=${1:-3}
shift || true
DAEMONS=("$@")
[ ${#DAEMONS[@]} -gt 0 ] || DAEMONS=("$CACHEBOXD")
TRACE=$CACHEBOX_BUILD/tests/bench/write_trace.so
[ -f "$TRACE" ] || { echo "no $TRACE: build first" >&2; exit 1; }
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/relaysim/relaysim.sh"
trap 'relaysim_stop >/dev/null 2>&1; cleanup' EXIT

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 10, "events": 8000, "seed": 21},
 "relays": [
  {"name": "capped", "cap": 300, "subset": {"fraction": 0.7, "seed": 11}},
  {"name": "forger", "subset": {"fraction": 0.6, "seed": 12},
   "drop_mid_page": {"after": 150, "every": 8},
   "bad_sig": {"probability": 0.03, "seed": 1}, "wrong_id": {"probability": 0.03, "seed": 2},
   "unrequested": {"probability": 0.05, "seed": 3},
   "malformed_json": {"probability": 0.01, "seed": 4}},
  {"name": "untilbad", "ignore_until": true, "cap": 300,
   "subset": {"fraction": 0.5, "seed": 13}},
  {"name": "boot", "max_limit": 500,
   "subset": {"any": [{"kinds": [0, 3, 10002]}, {"fraction": 0.4, "seed": 14}]}},
  {"name": "burst", "cap": 300, "subset": {"fraction": 0.3, "seed": 15},
   "burst": {"created_at": 1650000000, "count": 450, "author": 2}}
 ]}
JSON
relaysim_start "$T/sim.json" 600 || exit 1
BOOT="$(relaysim_url boot),$(relaysim_url burst)"

python3 - "$T" "$TRACE" "$BOOT" "$(relaysim_q root)" "$RUNS" "$VERBOSE" \
    "${PACE_MS:-1000}" "${DAEMONS[@]}" <<'PY'
import os, sqlite3, statistics, subprocess, sys, time
tmp, trace, boot, root, runs, verbose, pace = sys.argv[1:8]
runs, verbose, daemons = int(runs), verbose == "1", sys.argv[8:]

def family(db):
    """btree name -> the table it belongs to."""
    fam = {"sqlite_schema": "sqlite_schema"}
    for name, tbl in db.execute("SELECT name, tbl_name FROM sqlite_schema "
                                "WHERE type IN ('table', 'index')"):
        fam[name] = tbl
    return fam

def one_run(daemon, state):
    out = state + ".trace"
    env = dict(os.environ, LD_PRELOAD=trace, WRITE_TRACE_OUT=out)
    args = [daemon, "-d", state, "--set", f"relays.bootstrap={boot}",
            "--set", f"follow.roots={root}", "--set", f"backfill.pace_ms={pace}",
            "--set", "backfill.page_size=500", "--set", "http.listen=127.0.0.1:0",
            "--set", "log.level=warn", "--exit-when-idle"]
    t0 = time.monotonic()
    rc = subprocess.call(args, env=env, stderr=open(state + ".log", "w"))
    wall = time.monotonic() - t0
    io, wal, dbw, files, frames = {}, {}, {}, {}, []
    r = {"rc": rc, "wall": wall, "commits": 0, "walhdr": 0, "frames": 0,
         "fsyncs": 0}
    # One block of lines per process (the daemon and its checkpoint
    # process): added up.
    for line in open(out):
        f = line.split()
        if f[0] == "io":
            io[f[1]] = io.get(f[1], 0) + int(f[2])
        elif f[0] == "wal_commits":
            r["commits"] += int(f[1])
        elif f[0] == "wal_header":
            r["walhdr"] += int(f[1])
        elif f[0] in ("wal", "db"):
            d = wal if f[0] == "wal" else dbw
            d[int(f[1])] = d.get(int(f[1]), 0) + int(f[2])
            if f[0] == "wal":
                r["frames"] += int(f[3])
        elif f[0] == "file":
            files[f[1]] = files.get(f[1], 0) + int(f[2])
        elif f[0] == "fsync":
            r["fsyncs"] += int(f[2])
        elif f[0] == "frames":
            frames += f[1:]
    db = sqlite3.connect(f"file:{state}/cachebox.db?mode=ro", uri=True)
    owner = dict((p, n) for n, p in db.execute("SELECT name, pageno FROM dbstat"))
    fam = family(db)
    r["events"], r["json"] = db.execute(
        "SELECT count, bytes FROM event_totals").fetchone()
    r["db_bytes"] = os.path.getsize(f"{state}/cachebox.db")
    r["page_size"] = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    r["write_bytes"] = io.get("write_bytes", 0)
    r["cancelled"] = io.get("cancelled_write_bytes", 0)
    by = {}	# (family, btree) -> [wal, ckpt]
    for src, k in ((wal, 0), (dbw, 1)):
        for pg, b in src.items():
            name = owner.get(pg, "(free)")
            key = (fam.get(name, name), name)
            by.setdefault(key, [0, 0])[k] += b
    r["by"] = by
    # Transactions: the frames up to each commit frame, named by the
    # tables they touched (page 1 rides along with any growth: not named);
    # any with an events or event_tags page is an ingest batch.
    txs, cur, n = {}, set(), 0
    for x in frames:
        name = owner.get(int(x.rstrip("+")), "(free)")
        cur.add(fam.get(name, name))
        n += 1
        if x.endswith("+"):
            cur.discard("sqlite_schema")
            label = ("event batches" if cur & {"events", "event_tags"}
                     else "+".join(sorted(cur)) or "sqlite_schema")
            t = txs.setdefault(label, [0, 0])
            t[0] += 1
            t[1] += n * (24 + r["page_size"])
            cur, n = set(), 0
    r["txs"] = txs
    dbfile = f"{state}/cachebox.db"
    r["wal_bytes"] = sum(wal.values()) + r["walhdr"]
    r["ckpt_bytes"] = sum(dbw.values())
    r["other"] = sum(b for p, b in files.items()
                     if p != dbfile and p != dbfile + "-wal")
    return r

results = {d: [] for d in daemons}
for i in range(runs):
    for j, d in enumerate(daemons):
        state = f"{tmp}/s{j}.{i}"
        r = one_run(d, state)
        results[d].append(r)
        print(f"run {i + 1} daemon {j + 1}: exit {r['rc']}, {r['wall']:.1f} s, "
              f"{r['events']} events, {r['json'] / 1e6:.2f} MB JSON, "
              f"write_bytes {r['write_bytes'] / 1e6:.2f} MB = "
              f"{r['write_bytes'] / r['json']:.2f} per JSON byte, "
              f"{r['commits']} commits", flush=True)

def med(rs, f):
    return statistics.median(f(r) for r in rs)

for j, d in enumerate(daemons):
    rs = results[d]
    js = med(rs, lambda r: r["json"])
    print(f"\n== daemon {j + 1}: {d}  (medians of {len(rs)} runs)")
    print(f"events stored            {med(rs, lambda r: r['events']):.0f}")
    print(f"event JSON stored        {js / 1e6:.3f} MB")
    print(f"database file            {med(rs, lambda r: r['db_bytes']) / 1e6:.3f} MB "
          f"(page size {rs[0]['page_size']})")
    print(f"wall time                {med(rs, lambda r: r['wall']):.1f} s")
    wb = med(rs, lambda r: r["write_bytes"])
    print(f"write_bytes (/proc)      {wb / 1e6:.3f} MB = "
          f"{med(rs, lambda r: r['write_bytes'] / r['json']):.2f} per JSON byte"
          f"  (cancelled {med(rs, lambda r: r['cancelled']) / 1e6:.3f} MB)")
    tot = med(rs, lambda r: r["wal_bytes"] + r["ckpt_bytes"] + r["other"])
    print(f"written (syscalls)       {tot / 1e6:.3f} MB = "
          f"{med(rs, lambda r: (r['wal_bytes'] + r['ckpt_bytes'] + r['other']) / r['json']):.2f}"
          " per JSON byte")
    print(f"  WAL                    {med(rs, lambda r: r['wal_bytes']) / 1e6:.3f} MB = "
          f"{med(rs, lambda r: r['wal_bytes'] / r['json']):.2f}  "
          f"({med(rs, lambda r: r['frames']):.0f} frames, "
          f"{med(rs, lambda r: r['commits']):.0f} commits, "
          f"{med(rs, lambda r: r['frames'] / max(1, r['commits'])):.1f} frames/commit)")
    print(f"  checkpoints (db file)  {med(rs, lambda r: r['ckpt_bytes']) / 1e6:.3f} MB = "
          f"{med(rs, lambda r: r['ckpt_bytes'] / r['json']):.2f}")
    print(f"  other files (log...)   {med(rs, lambda r: r['other']) / 1e6:.3f} MB")
    print(f"  fsync calls            {med(rs, lambda r: r['fsyncs']):.0f}")
    keys = sorted({k for r in rs for k in r["by"]},
                  key=lambda k: -med(rs, lambda r: sum(r["by"].get(k, [0, 0]))))
    fams = sorted({k[0] for k in keys},
                  key=lambda f: -med(rs, lambda r: sum(sum(v) for k, v in r["by"].items() if k[0] == f)))
    print(f"  {'WAL by transaction (tables touched)':<44}{'commits':>8}{'WAL MB':>9}")
    labels = sorted({k for r in rs for k in r["txs"]},
                    key=lambda k: -med(rs, lambda r: r["txs"].get(k, [0, 0])[1]))
    for k in labels[:12]:
        n = med(rs, lambda r: r["txs"].get(k, [0, 0])[0])
        b = med(rs, lambda r: r["txs"].get(k, [0, 0])[1])
        print(f"  {k[:44]:<44}{n:>8.0f}{b / 1e6:>9.3f}")
    print(f"  {'by table (+ its indexes)':<34}{'WAL MB':>9}{'ckpt MB':>9}"
          f"{'per JSON byte':>15}")
    for f in fams:
        w = med(rs, lambda r: sum(v[0] for k, v in r["by"].items() if k[0] == f))
        c = med(rs, lambda r: sum(v[1] for k, v in r["by"].items() if k[0] == f))
        x = med(rs, lambda r: sum(sum(v) for k, v in r["by"].items() if k[0] == f) / r["json"])
        print(f"  {f:<34}{w / 1e6:>9.3f}{c / 1e6:>9.3f}{x:>15.3f}")
        if not verbose:
            continue
        for k in keys:
            if k[0] != f:
                continue
            w = med(rs, lambda r: r["by"].get(k, [0, 0])[0])
            c = med(rs, lambda r: r["by"].get(k, [0, 0])[1])
            x = med(rs, lambda r: sum(r["by"].get(k, [0, 0])) / r["json"])
            print(f"    {k[1]:<32}{w / 1e6:>9.3f}{c / 1e6:>9.3f}{x:>15.3f}")
PY
