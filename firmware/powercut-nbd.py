#!/usr/bin/env python3
"""powercut-nbd.py: an SD card with a volatile write cache, as an NBD server.

Serves one disk image file over NBD (fixed newstyle handshake, simple
replies) on a Unix socket, one client at a time, for QEMU's nbd block
driver; firmware/powercut-test.sh puts it between the emulated board and
the card image. A write is kept in memory, not in the file: reads see it,
the file does not. NBD_CMD_FLUSH (and a write with FUA, taken as a flush
followed by the write) applies every kept write to the file in the order
they came. A connection that ends without NBD_CMD_DISC is a power cut:
what was never flushed is lost, either all of it ("none" kept) or a random
subset, each write kept with probability one half and applied in order
("random"), as a card's controller may have written some of its cache
out before the power went. With --policy mixed the cuts alternate.

One JSON line per connection goes to stdout when it ends: writes, bytes,
flushes, and at a cut the writes and bytes lost and kept.
  powercut-nbd.py --image FILE --socket PATH [--policy none|random|mixed]
                  [--seed N]
"""
import argparse
import json
import os
import random
import socket
import struct
import sys

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
OPT_REPLY_MAGIC = 0x3E889045565A9
REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698
FLAG_FIXED_NEWSTYLE = 1
FLAG_NO_ZEROES = 2
OPT_EXPORT_NAME = 1
OPT_ABORT = 2
OPT_GO = 7
OPT_INFO = 6
REP_ACK = 1
REP_INFO = 3
REP_ERR_UNSUP = 0x80000001
INFO_EXPORT = 0
TFLAG_HAS_FLAGS = 1
TFLAG_SEND_FLUSH = 4
TFLAG_SEND_FUA = 8
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH = 0, 1, 2, 3
CMD_FLAG_FUA = 1
EINVAL = 22
SECTOR = 512


def recv_exact(conn, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


class Card:
    """The image file and the writes not yet flushed to it."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR)
        self.size = os.fstat(self.fd).st_size
        self.pending = []   # (offset, data) in the order written
        self.overlay = {}   # sector -> its newest unflushed 512 bytes

    def write(self, off, data):
        self.pending.append((off, data))
        for i in range(0, len(data), SECTOR):
            self.overlay[(off + i) // SECTOR] = data[i:i + SECTOR]

    def read(self, off, length):
        buf = bytearray(os.pread(self.fd, length, off))
        if self.overlay:
            first, last = off // SECTOR, (off + length - 1) // SECTOR
            for s in range(first, last + 1):
                d = self.overlay.get(s)
                if d is not None:
                    lo = s * SECTOR - off
                    buf[lo:lo + SECTOR] = d
        return bytes(buf)

    def flush(self, keep=None):
        """Apply the pending writes (those keep(i) allows) to the file."""
        kept = 0
        for i, (off, data) in enumerate(self.pending):
            if keep is None or keep(i):
                os.pwrite(self.fd, data, off)
                kept += 1
        lost = len(self.pending) - kept
        self.pending, self.overlay = [], {}
        return kept, lost


def handshake(conn, card):
    """Fixed newstyle negotiation; returns once the client chose the export."""
    conn.sendall(struct.pack(">QQH", NBDMAGIC, IHAVEOPT,
                             FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES))
    cflags = struct.unpack(">I", recv_exact(conn, 4))[0]
    tflags = TFLAG_HAS_FLAGS | TFLAG_SEND_FLUSH | TFLAG_SEND_FUA
    while True:
        magic, opt, length = struct.unpack(">QII", recv_exact(conn, 16))
        if magic != IHAVEOPT:
            raise EOFError
        payload = recv_exact(conn, length) if length else b""
        if opt == OPT_EXPORT_NAME:
            tail = b"" if cflags & FLAG_NO_ZEROES else b"\0" * 124
            conn.sendall(struct.pack(">QH", card.size, tflags) + tail)
            return
        if opt in (OPT_GO, OPT_INFO):
            info = struct.pack(">HQH", INFO_EXPORT, card.size, tflags)
            conn.sendall(struct.pack(">QIII", OPT_REPLY_MAGIC, opt, REP_INFO,
                                     len(info)) + info)
            conn.sendall(struct.pack(">QIII", OPT_REPLY_MAGIC, opt, REP_ACK, 0))
            if opt == OPT_GO:
                return
            continue
        if opt == OPT_ABORT:
            raise EOFError
        conn.sendall(struct.pack(">QIII", OPT_REPLY_MAGIC, opt, REP_ERR_UNSUP, 0))


def reply(conn, handle, err=0, data=b""):
    conn.sendall(struct.pack(">IIQ", SIMPLE_REPLY_MAGIC, err, handle) + data)


def serve(conn, card, stats):
    """Transmission phase; returns True on NBD_CMD_DISC, False on a cut."""
    while True:
        try:
            magic, flags, cmd, handle, off, length = struct.unpack(
                ">IHHQQI", recv_exact(conn, 28))
        except (EOFError, ConnectionError):
            return False
        if magic != REQUEST_MAGIC:
            return False
        if cmd == CMD_WRITE:
            try:
                data = recv_exact(conn, length)
            except (EOFError, ConnectionError):
                return False
            if off + length > card.size:
                reply(conn, handle, EINVAL)
                continue
            if flags & CMD_FLAG_FUA:
                card.flush()
                stats["flushes"] += 1
            card.write(off, data)
            if flags & CMD_FLAG_FUA:
                card.flush()
            stats["writes"] += 1
            stats["bytes"] += length
            reply(conn, handle)
        elif cmd == CMD_READ:
            if off + length > card.size:
                reply(conn, handle, EINVAL)
                continue
            reply(conn, handle, 0, card.read(off, length))
        elif cmd == CMD_FLUSH:
            card.flush()
            stats["flushes"] += 1
            reply(conn, handle)
        elif cmd == CMD_DISC:
            return True
        else:
            reply(conn, handle, EINVAL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", required=True)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--policy", choices=("none", "random", "mixed"), default="mixed")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    card = Card(args.image)
    if os.path.exists(args.socket):
        os.unlink(args.socket)
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(args.socket)
    lsock.listen(1)
    print(json.dumps({"ready": True, "size": card.size}), flush=True)
    cuts = 0
    while True:
        conn, _ = lsock.accept()
        stats = {"writes": 0, "bytes": 0, "flushes": 0}
        try:
            handshake(conn, card)
            clean = serve(conn, card, stats)
        except (EOFError, ConnectionError):
            clean = False
        conn.close()
        pend = len(card.pending)
        pbytes = sum(len(d) for _, d in card.pending)
        if clean:
            card.flush()
            stats.update(end="disconnect", unflushed=pend)
        else:
            policy = args.policy
            if policy == "mixed":
                policy = ("none", "random")[cuts % 2]
            cuts += 1
            keep = (lambda i: False) if policy == "none" else \
                (lambda i: rng.random() < 0.5)
            kept, lost = card.flush(keep)
            stats.update(end="cut", policy=policy, unflushed=pend,
                         unflushed_bytes=pbytes, kept=kept, lost=lost)
        print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    sys.exit(main())
