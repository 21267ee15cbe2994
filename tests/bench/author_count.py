#!/usr/bin/env python3
# author_count.py — what counting one author's stored events costs (the
# Authors table and `follows` show it for every author of a page): the
# migrations applied to a fresh database, N events of one author among N
# of 200 others, then the daemon's count over events_pubkey_time timed
# warm, best of 20. Usage: author_count.py [N] (default 100000).
import os, sqlite3, sys, tempfile, time, glob

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(tempfile.mkdtemp(), "count.db")
db = sqlite3.connect(path)
for f in sorted(glob.glob(os.path.join(here, "../../sql/sqlite/*.sql"))):
    db.executescript(open(f).read())
one = bytes(range(32))
rows = ((os.urandom(32), one if i % 2 == 0 else bytes([i % 200]) * 32,
        1, 1600000000 + i // 2, "backfill", None, 0, "{}")
        for i in range(2 * n))
db.executemany("INSERT INTO events (id, pubkey, kind, created_at, source, "
               "first_relay, received_at, json) VALUES (?,?,?,?,?,?,?,?)", rows)
db.commit()
q = "SELECT count(*) FROM events INDEXED BY events_pubkey_time WHERE pubkey = ?"
best = None
for _ in range(20):
    t = time.perf_counter()
    got = db.execute(q, (one,)).fetchone()[0]
    dt = time.perf_counter() - t
    best = dt if best is None or dt < best else best
assert got == n, got
print(f"{n} events of one author among {2 * n}: count {best * 1000:.2f} ms")
