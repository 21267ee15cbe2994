#!/usr/bin/env python3
"""notify_sink.py — the service manager's end of sd_notify(3) for tests.

    notify_sink.py SOCKET OUT [CMD...]

Binds an AF_UNIX datagram socket at SOCKET (a path, or @name in the abstract
namespace), writes one JSON line to OUT for each datagram received
({"msg": text}), and on the first datagram holding READY=1 runs CMD once,
before reading the next datagram, writing {"ready_probe": exit status}.
CMD therefore sees the daemon exactly as it was when it said it was ready.
Runs until killed.
"""
import json
import socket
import subprocess
import sys


def main():
    path, out = sys.argv[1], sys.argv[2]
    cmd = sys.argv[3:]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind("\0" + path[1:] if path.startswith("@") else path)
    probed = False
    with open(out, "a", buffering=1) as f:
        f.write(json.dumps({"bound": path}) + "\n")
        while True:
            msg = s.recv(65536).decode("utf-8", "replace")
            f.write(json.dumps({"msg": msg}) + "\n")
            if not probed and cmd and "READY=1" in msg.split("\n"):
                probed = True
                rc = subprocess.run(cmd).returncode
                f.write(json.dumps({"ready_probe": rc}) + "\n")


if __name__ == "__main__":
    main()
