#!/usr/bin/env python3
"""jobs_kill.py — when to kill cacheboxd in the job crash tests.

  committed DB
      print what the store holds committed for the job: its pages (or
      windows) and its finished batches, as "PAGES FINISHED".
  wait PORT_FILE DB BASE_PAGES WANT_PAGES WANT_FINISHED
      wait for the run's API, then until the job counts WANT_PAGES pages
      (committed or not), the store holds more committed pages than
      BASE_PAGES (read before the run began) and at least WANT_FINISHED
      finished batches;
      or until the job ended. Polled every 20 ms, so a kill that follows
      lands at a random point of the page being filled.

Each condition is on progress, not on time: every run moves the job on
by at least one committed page, whatever the machine's speed.
"""
import json
import os
import sqlite3
import sys
import time
import urllib.request

FINISHED = "('complete', 'incomplete', 'failed')"


def committed(db_file):
    try:
        c = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=10)
        pages = c.execute("SELECT coalesce(sum(requests), 0) FROM jobs").fetchone()[0]
        done = c.execute("SELECT count(*) FROM job_batches WHERE status IN "
                         + FINISHED).fetchone()[0]
        c.close()
        return pages, done
    except sqlite3.Error:
        return 0, 0


def wait(port_file, db_file, base_pages, want_pages, want_finished):
    end = time.monotonic() + 300
    while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
        if time.monotonic() > end:
            return 1
        time.sleep(0.02)
    base = f"http://127.0.0.1:{open(port_file).read().strip()}/api"
    while time.monotonic() < end:
        try:
            j = json.load(urllib.request.urlopen(f"{base}/jobs/list", timeout=10))
        except OSError:
            return 1
        job = j["jobs"][0] if j["jobs"] else None
        if job is None or job["status"] not in ("pending", "running"):
            return 0
        if job["requests"] >= want_pages:
            pages, done = committed(db_file)
            if pages > base_pages and done >= want_finished:
                return 0
        time.sleep(0.02)
    return 1


def main():
    if sys.argv[1:2] == ["committed"]:
        print(*committed(sys.argv[2]))
        return 0
    if sys.argv[1:2] == ["wait"]:
        return wait(sys.argv[2], sys.argv[3], *map(int, sys.argv[4:7]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
