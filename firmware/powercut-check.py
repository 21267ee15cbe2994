#!/usr/bin/env python3
"""powercut-check.py: what a power cut left of cachebox's database.

Reads a copy of cachebox.db and its -wal as the card held them after a cut
(firmware/powercut-test.sh dumps them from the replayed root file system)
and prints one JSON line: the WAL's frames (those of its current run, those
up to its last commit whose checksums chain, i.e. what SQLite's recovery
keeps, and all in the file, earlier runs' included), then,
after SQLite opened the copy (which recovers the WAL), PRAGMA
integrity_check, the events stored and the cursor rows still draining.
Exits 1 when integrity_check is not "ok".
  powercut-check.py DB
"""
import json
import os
import sqlite3
import struct
import sys

WAL_MAGIC = (0x377F0682, 0x377F0683)


def wal_checksum(data, s0, s1, big):
    fmt = (">" if big else "<") + "%dI" % (len(data) // 4)
    words = struct.unpack(fmt, data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def wal_frames(path):
    """(frames of the WAL's current run, frames up to its last valid commit,
    frames in the file).

    After a checkpoint the WAL starts over from its start with new salts,
    and the file keeps the frames of its earlier runs past the new ones
    (already copied into the database): the current run ends at the first
    frame whose salts are not the header's.
    """
    if not os.path.exists(path) or os.path.getsize(path) < 32:
        return 0, 0, 0
    with open(path, "rb") as f:
        data = f.read()
    magic, _, psize, _, salt1, salt2, c0, c1 = struct.unpack(">8I", data[:32])
    if magic not in WAL_MAGIC:
        return 0, 0, 0
    big = magic & 1
    s0, s1 = wal_checksum(data[:24], 0, 0, big)
    if (s0, s1) != (c0, c1):
        return 0, 0, 0
    fsize = 24 + psize
    total = (len(data) - 32) // fsize
    current = committed = 0
    chained = True
    for i in range(total):
        off = 32 + i * fsize
        pgno, commit, fs1, fs2, fc0, fc1 = struct.unpack(">6I", data[off:off + 24])
        if (fs1, fs2) != (salt1, salt2):
            break
        current = i + 1
        if not chained:
            continue
        s0, s1 = wal_checksum(data[off:off + 8], s0, s1, big)
        s0, s1 = wal_checksum(data[off + 24:off + fsize], s0, s1, big)
        if (s0, s1) != (fc0, fc1):
            chained = False
        elif commit:
            committed = i + 1
    return current, committed, total


def main():
    db = sys.argv[1]
    current, committed, total = wal_frames(db + "-wal")
    out = {"wal_frames": current, "wal_committed": committed,
           "wal_file_frames": total}
    con = sqlite3.connect(db)
    try:
        out["integrity"] = "; ".join(r[0] for r in con.execute("PRAGMA integrity_check"))
        out["events"] = con.execute("SELECT count(*) FROM events").fetchone()[0]
        out["draining"] = con.execute(
            "SELECT count(*) FROM cursors WHERE complete = 0 AND "
            "incomplete_reason IS NULL").fetchone()[0]
    except sqlite3.DatabaseError as e:
        out["integrity"] = "error: %s" % e
    print(json.dumps(out))
    return 0 if out["integrity"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
