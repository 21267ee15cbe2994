#!/usr/bin/env python3
"""scale.py — the scale harness behind tests/bench/scale.sh (read that
file's header for what is measured and how to run it).

For every follow count F a relaysim network of 20 relays serves a dataset
of F authors (author 0, the root, follows the others). For every store
size E a store of E events by those same F authors is built once through
the real ingest path (prog_relayd gen with the dataset's keys) and kept in
DATA. Each cell (E, F) then runs cacheboxd on a copy of its store:
start-up, a drain of the network stopped with SIGTERM part-way and resumed
by a second start, one live event, request latencies of the surfaces, and
one retention round at a budget set a little under the store's size.
Prints one line per cell as it goes, then the growth table. Judges
nothing.
"""
import http.client
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time

BUILD, SRC, DATA = sys.argv[1], sys.argv[2], sys.argv[3]
SIZES = [int(x) for x in sys.argv[4].split(",")]
FOLLOWS = [int(x) for x in sys.argv[5].split(",")]
NRELAYS = 20
NBOOT = 4
INGEST_COMMIT_S = 5	# an ingest batch commits within this (core/limits.h)
REQS = int(os.environ.get("SCALE_REQS", "300"))
DAEMON = os.environ.get("CACHEBOXD", f"{BUILD}/src/cacheboxd")
CTL = os.environ.get("CACHEBOXCTL", f"{BUILD}/src/cacheboxctl")
GEN = f"{BUILD}/tests/integration/prog_relayd"
TESTS = f"{SRC}/tests"
TCK = os.sysconf("SC_CLK_TCK")
MIN_BUDGET = 16 * 1024 * 1024
ROOT_FOLLOWS = 2500
# SCALE_WRAP: a command the daemon runs under (a heap profiler, say).
WRAP = os.environ.get("SCALE_WRAP", "").split()
# SCALE_SET: more settings for the daemon, KEY=VALUE separated by spaces.
SETS = os.environ.get("SCALE_SET", "").split()


def log(*a):
    print(*a, flush=True)


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def proc_cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TCK


def proc_io(pid):
    for line in open(f"/proc/{pid}/io"):
        k, v = line.split(":")
        if k == "write_bytes":
            return int(v)
    return 0


def proc_hwm(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


class Relaysim:
    def __init__(self, follows):
        # Every author lists write relays among the 20 (relaysim:N is
        # relay rN); the box knows 4 of them as bootstrap relays and
        # reaches the others through the authors' lists, as a box does.
        cfg = {"dataset": {"authors": follows, "events": 3 * follows,
                           "seed": 17,
                           "relays": [str(i) for i in range(NRELAYS)]},
               "cache_dir": f"{DATA}/relaysim-cache",
               "relays": [{"name": "r0", "ipv6": False}] +
               [{"name": f"r{i}", "ipv6": False,
                 "subset": {"fraction": 0.3, "seed": i}}
                for i in range(1, NRELAYS)]}
        self.cfg = f"{DATA}/sim-{follows}.json"
        with open(self.cfg, "w") as f:
            json.dump(cfg, f)
        self.ready = f"{DATA}/sim-{follows}.ready"
        self.p = subprocess.Popen(
            ["node", f"{TESTS}/relaysim/relaysim.mjs", "--config", self.cfg],
            stdout=open(self.ready, "w"), stderr=open(self.ready + ".err", "w"),
            env=dict(os.environ, NODE_PATH=f"{TESTS}/node_modules"))
        for _ in range(12000):
            try:
                r = json.loads(open(self.ready).readline())
                break
            except (ValueError, OSError):
                if self.p.poll() is not None:
                    sys.exit("relaysim did not start: " +
                             open(self.ready + ".err").read())
                time.sleep(0.1)
        self.urls = [x["url"] for x in r["relays"]]
        self.meta = json.load(open(r["dataset"]["meta"]))
        self.total = r["dataset"]["events"]
        self.ready_line = r
        self.roots = self.make_roots()
        self.keys = f"{DATA}/keys-{follows}.txt"
        with open(self.keys, "w") as f:
            for a in self.meta["authors"]:
                f.write(a["seckey"] + "\n")

    def make_roots(self):
        """Roots whose kind 3s list the dataset's authors, ROOT_FOLLOWS
        each (an event has at most 4,096 tags, so 5,000 follows take two
        roots, as a household's keys would), published to r0. Their
        public keys."""
        env = dict(os.environ, NODE_PATH=f"{TESTS}/node_modules")
        sign = f"{TESTS}/integration/sign_events.mjs"
        authors = [a["pubkey"] for a in self.meta["authors"]]
        roots, tmpl = [], []
        for i in range(0, len(authors), ROOT_FOLLOWS):
            sk, pk = subprocess.run(["node", sign, "keygen"], env=env,
                                    capture_output=True, text=True,
                                    check=True).stdout.split()
            roots.append(pk)
            tmpl.append(json.dumps({"sk": sk, "kind": 3, "created_at":
                                    int(time.time()) - 60, "content": "",
                                    "tags": [["p", a] for a in
                                             authors[i:i + ROOT_FOLLOWS]]}))
        out = subprocess.run(["node", sign], input="\n".join(tmpl) + "\n",
                             env=env, capture_output=True, text=True,
                             check=True).stdout
        path = self.cfg + ".roots.jsonl"
        open(path, "w").write(out)
        self.query("publish", "r0", path)
        return roots

    def query(self, *args, stdin=None):
        return subprocess.run(
            ["node", f"{TESTS}/relaysim/query.mjs", "--ready", self.ready,
             *args], input=stdin, capture_output=True, text=True,
            env=dict(os.environ, NODE_PATH=f"{TESTS}/node_modules"),
            check=True).stdout

    def stop(self):
        self.p.terminate()
        self.p.wait()


def store_template(events, follows, sim):
    d = f"{DATA}/store-{events}-{follows}"
    if os.path.exists(f"{d}/complete"):
        return d, None
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(f"{d}/box", mode=0o700)
    t0 = time.monotonic()
    subprocess.run([GEN, "gen", f"{d}/box", str(events), "1", "@" + sim.keys,
                    f"{d}/events.jsonl"], check=True, stdout=subprocess.DEVNULL)
    gen_s = time.monotonic() - t0
    open(f"{d}/complete", "w").write(f"{gen_s:.1f}\n")
    return d, gen_s


class Daemon:
    def __init__(self, state, sim, logf):
        for f in ("http.port", "relay.port"):
            if os.path.exists(f"{state}/{f}"):
                os.unlink(f"{state}/{f}")
        t0 = time.monotonic()
        self.p = subprocess.Popen(
            WRAP + [DAEMON, "-d", state, "--set",
             "relays.bootstrap=" + ",".join(sim.urls[:NBOOT]), "--set",
             "follow.roots=" + ",".join(sim.roots), "--set",
             "backfill.pace_ms=0",
             "--set", "http.listen=127.0.0.1:0", "--set",
             "relay.listen=127.0.0.1:0", "--set", "log.level=info"]
            + [a for kv in SETS for a in ("--set", kv)],
            stderr=open(logf, "a"), stdout=subprocess.DEVNULL)
        self.state = state
        while not os.path.exists(f"{state}/http.port"):
            if self.p.poll() is not None:
                sys.exit(f"cacheboxd exited: see {logf}")
            time.sleep(0.005)
        self.port = int(open(f"{state}/http.port").read())
        self.conn = None
        while True:
            try:
                self.get("/api/status")
                break
            except OSError:
                time.sleep(0.005)
        self.startup = time.monotonic() - t0

    def get(self, path):
        """One GET on a kept-alive connection: (seconds, decoded JSON)."""
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                       timeout=60)
            try:
                t0 = time.monotonic()
                self.conn.request("GET", path)
                r = self.conn.getresponse()
                body = r.read()
                dt = time.monotonic() - t0
                if r.status != 200:
                    raise OSError(f"GET {path}: {r.status}")
                return dt, json.loads(body)
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise OSError(f"GET {path} failed")

    def status(self):
        return self.get("/api/status")[1]

    def figures(self):
        return proc_cpu(self.p.pid), proc_io(self.p.pid), proc_hwm(self.p.pid)

    def stop(self):
        """SIGTERM; CPU seconds and bytes written over the whole run, the
        checkpoint at close included (read before the exit is reaped)."""
        if self.conn is not None:
            self.conn.close()
        self.p.send_signal(signal.SIGTERM)
        # Wait for the exit without reaping it: /proc/PID stays readable.
        os.waitid(os.P_PID, self.p.pid, os.WEXITED | os.WNOWAIT)
        cpu, io = proc_cpu(self.p.pid), proc_io(self.p.pid)
        self.p.wait()
        return cpu, io


def checkpoint_bytes(state):
    """Checkpoint the daemon's WAL from here: the bytes this process wrote
    doing it (what the daemon's next checkpoint would have written)."""
    before = proc_io(os.getpid())
    db = sqlite3.connect(f"{state}/cachebox.db", timeout=30)
    busy, frames, copied = db.execute(
        "PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    db.close()
    if busy or frames != copied:
        log(f"# checkpoint incomplete: {frames} frames, {copied} copied")
    return proc_io(os.getpid()) - before


def wait_until(fn, limit_s, step=0.05):
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return None


def live_event(sim, state):
    """Publish a note by author 1 to its first write relay; seconds until
    it is stored."""
    tmpl = json.dumps({"sk": sim.meta["authors"][1]["seckey"], "kind": 1,
                       "created_at": int(time.time()), "content":
                       f"scale live {time.time()}", "tags": []})
    ev = subprocess.run(["node", f"{TESTS}/integration/sign_events.mjs"],
                        input=tmpl + "\n", capture_output=True, text=True,
                        check=True,
                        env=dict(os.environ, NODE_PATH=f"{TESTS}/node_modules"))
    line = ev.stdout.strip().splitlines()[0]
    eid = json.loads(line)["id"]
    path = f"{state}/live.jsonl"
    open(path, "w").write(line + "\n")
    db = sqlite3.connect(f"file:{state}/cachebox.db?mode=ro", uri=True,
                         timeout=30)
    t0 = time.monotonic()
    wr = sim.meta["authors"][1].get("write_relays") or ["0"]
    sim.query("publish", f"r{wr[0]}", path)
    got = wait_until(lambda: db.execute(
        "SELECT 1 FROM events WHERE id = ?", (bytes.fromhex(eid),)
    ).fetchone(), 60, 0.01)
    db.close()
    return time.monotonic() - t0 if got else None


def latencies(d, paths):
    out = []
    for p in paths:
        out.append(d.get(p)[0])
    return out


def relay_latency(d, jsonl):
    port = int(open(f"{d.state}/relay.port").read())
    r = subprocess.run(["node", f"{TESTS}/bench/relay_bench.mjs", "latency",
                        f"ws://127.0.0.1:{port}", jsonl, str(REQS)],
                       capture_output=True, text=True, check=True,
                       env=dict(os.environ, NODE_PATH=f"{TESTS}/node_modules"))
    j = json.loads(r.stdout.strip().splitlines()[-1])
    return j["p50_ms"] / 1000, j["p99_ms"] / 1000


def ctl_follows(state):
    t = []
    for _ in range(5):
        t0 = time.monotonic()
        subprocess.run([CTL, "-d", state, "follows"], check=True,
                       stdout=subprocess.DEVNULL)
        t.append(time.monotonic() - t0)
    return statistics.median(t)


def retention_round(d):
    """Lower the budget 3% under the store; time the eviction round."""
    st = d.status()["store"]
    budget = int(st["bytes"] * 0.97)
    if budget < MIN_BUDGET:
        return None, 0
    subprocess.run([CTL, "-d", d.state, "config", "set",
                    "store.max_bytes", str(budget)], check=True,
                   stdout=subprocess.DEVNULL)
    if not wait_until(lambda: d.status()["store"]["retention"] == "evicting",
                      30, 0.01):
        return None, 0
    t0 = time.monotonic()
    wait_until(lambda: d.status()["store"]["retention"] != "evicting", 3600,
               0.01)
    return time.monotonic() - t0, d.status()["store"]["evicted"]


def cell(events, follows, sim):
    tpl, gen_s = store_template(events, follows, sim)
    run = f"{DATA}/run"
    shutil.rmtree(run, ignore_errors=True)
    os.makedirs(run, mode=0o700)
    shutil.copy(f"{tpl}/box/cachebox.db", f"{run}/cachebox.db")
    # Start from a cold page cache, as after a reboot. A fresh copy sits
    # in the page cache in large folios, and a kernel that keeps them whole
    # (ext4 on Linux 6.x) counts, and writes back, a whole folio for each
    # 4 KiB page the daemon then writes into it: 71.6 KB written per
    # drained event at a million events and 5,000 follows, 23.3 KB cold.
    fd = os.open(f"{run}/cachebox.db", os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    logf = f"{DATA}/run-{events}-{follows}.log"
    open(logf, "w").close()
    r = {"events": events, "follows": follows, "gen_s": gen_s}

    d = Daemon(run, sim, logf)
    r["startup_s"] = d.startup
    e0 = events	# the store as generated (the first fetches race a status read)
    expect = sim.total
    # Drain: SIGTERM once a third of the network's events are in.
    killed_at = wait_until(lambda: (lambda n: n - e0 >= expect // 3 and n)(
        d.status()["store"]["events"]), 1800, 0.02)
    hwm1 = d.figures()[2]
    cpu1, io1 = d.stop()
    r["killed_after"] = (killed_at or e0) - e0
    d = Daemon(run, sim, logf)
    r["restart_s"] = d.startup
    t0 = time.monotonic()
    wait_until(lambda: d.status()["idle"], 3600, 0.1)
    r["resume_s"] = time.monotonic() - t0
    cpu2, io2, hwm2 = d.figures()
    n = d.status()["store"]["events"]
    # Idle means nothing is left to fetch or commit: nothing more arrives.
    time.sleep(INGEST_COMMIT_S + 1)
    r["late"] = d.status()["store"]["events"] - n
    if r["late"]:
        log(f"# {events}-{follows}: {r['late']} events stored after idle")
    r["drained"] = n - e0
    r["expected"] = expect
    # The first run's checkpoint at close is in io1; what the second left in
    # the WAL is checkpointed here, so each figure has both of its writes.
    io2 += checkpoint_bytes(run)
    r["cpu_per_event"] = (cpu1 + cpu2) / max(1, r["drained"])
    r["written_per_event"] = (io1 + io2) / max(1, r["drained"])
    if os.environ.get("SCALE_STOP_AT_IDLE"):	# for a write trace of the drain
        d.stop()
        log(f"# {events}-{follows}: stopped at idle, drained {r['drained']}, "
            f"{r['written_per_event']:.0f} bytes written and "
            f"{r['cpu_per_event'] * 1e6:.0f} µs of CPU per drained event, "
            f"peak RSS {max(hwm1, hwm2) / 1048576:.1f} MiB")
        return None
    r["live_s"] = live_event(sim, run)
    r["hwm_drain"] = max(hwm1, d.figures()[2])

    r["status"] = latencies(d, ["/api/status"] * REQS)
    pages = max(1, follows // 50)
    r["page"] = latencies(d, [f"/api/follows?offset={(i * 7919) % pages * 50}"
                                 f"&limit=50" for i in range(REQS)])
    q = latencies(d, [f"/api/follows?q=author%20{i * 37 % follows}&limit=50"
                      for i in range(31)])
    r["search_first"], r["search"] = q[0], q[1:]
    r["ctl_follows_s"] = ctl_follows(run)
    r["relay"] = relay_latency(d, f"{tpl}/events.jsonl")
    r["hwm_surfaces"] = d.figures()[2]
    checkpoint_bytes(run)	# what came before is not the round's
    io_before = d.figures()[1]
    r["retention_s"], r["evicted"] = retention_round(d)
    time.sleep(INGEST_COMMIT_S + 1)	# its last steps commit in ingest's batch
    io_round = d.figures()[1] - io_before + checkpoint_bytes(run)
    r["written_per_evicted"] = (io_round / r["evicted"] if r["evicted"]
                                else None)
    st = d.status()["store"]
    r["db_per_event"] = (os.path.getsize(f"{run}/cachebox.db") +
                         os.path.getsize(f"{run}/cachebox.db-wal")) / st["events"]
    r["json_per_event"] = st["bytes"] / st["events"]
    r["hwm_retention"] = d.figures()[2]
    d.stop()
    return r


def ms(v):
    return f"{v * 1000:.1f}" if v is not None else "-"


def line(r):
    return (f"| {r['events']:,} | {r['follows']:,} "
            f"| {r['hwm_drain'] / 1048576:.1f} / {r['hwm_surfaces'] / 1048576:.1f}"
            f" / {r['hwm_retention'] / 1048576:.1f} "
            f"| {r['startup_s'] * 1000:.0f} / {r['restart_s'] * 1000:.0f} "
            f"| {r['drained']:,}/{r['expected']:,} "
            f"| {r['cpu_per_event'] * 1e6:.0f} "
            f"| {r['written_per_event']:.0f} "
            f"| {r['db_per_event']:.0f} ({r['json_per_event']:.0f}) "
            f"| {ms(pct(r['status'], 50))} / {ms(pct(r['status'], 99))} "
            f"| {ms(pct(r['page'], 50))} / {ms(pct(r['page'], 99))} "
            f"| {ms(r['search_first'])} / {ms(pct(r['search'], 50))} "
            f"| {ms(r['ctl_follows_s'])} "
            f"| {ms(r['relay'][0])} / {ms(r['relay'][1])} "
            f"| {ms(r['live_s'])} "
            f"| {ms(r['retention_s'])} ({r['evicted']:,}) "
            f"| {r['written_per_evicted'] or 0:.0f} |")


HEAD = ("| events | follows | peak RSS MiB: drain / surfaces / retention | start-up / restart ms "
        "| drained / expected | CPU µs per drained event "
        "| bytes written per drained event | DB bytes per event (JSON) "
        "| /api/status p50 / p99 ms | follows page p50 / p99 ms "
        "| search first / p50 ms | cacheboxctl follows ms "
        "| relay REQ p50 / p99 ms | live ms | retention round ms (evicted) "
        "| bytes written per evicted event |\n"
        "|" + "---|" * 16)


def main():
    rows = []
    for f in FOLLOWS:
        t0 = time.monotonic()
        sim = Relaysim(f)
        log(f"# follows {f}: relaysim ready in {time.monotonic() - t0:.1f} s, "
            f"{sim.total} events on {len(sim.urls)} relays")
        try:
            for e in SIZES:
                r = cell(e, f, sim)
                if r is None:
                    continue
                rows.append(r)
                if r["gen_s"] is not None:
                    log(f"# store {e}-{f} generated through ingest in "
                        f"{r['gen_s']:.0f} s")
                if len(rows) == 1:
                    log(HEAD)
                log(line(r))
                json.dump(rows, open(f"{DATA}/scale.json", "w"), default=str)
        finally:
            sim.stop()
    log("\n" + HEAD)
    for r in rows:
        log(line(r))


main()
