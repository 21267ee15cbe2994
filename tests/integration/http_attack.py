#!/usr/bin/env python3
"""http_attack.py — hostile HTTP clients against cacheboxd's status page,
with a well-behaved poller measuring /api/status meanwhile.

  http_attack.py PORT slowloris CONNS SECONDS
      CONNS connections send a request head one byte every 2 s.
  http_attack.py PORT idle CONNS SECONDS
      CONNS connections are opened and held without a byte.
  http_attack.py PORT slowbody CONNS SECONDS TOKEN
      CONNS authorized POSTs declare a body and send it a byte every 2 s.

Prints one JSON line: the poller's answers, failures, p50/p99/max latency
in ms, and what the attack connections saw (closed by the server or not).
Exit 0 always; the caller judges the figures.
"""
import json, socket, sys, threading, time

port = int(sys.argv[1]); mode = sys.argv[2]
conns = int(sys.argv[3]); secs = float(sys.argv[4])
token = sys.argv[5] if len(sys.argv) > 5 else ""
stop = threading.Event()
closed_by_server = [0]
opened = [0]
lock = threading.Lock()

def attacker_slow(head):
    """Send head one byte every 2 s until the server closes or we stop."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        return
    with lock:
        opened[0] += 1
    s.settimeout(0.2)
    i = 0
    last = 0.0
    while not stop.is_set():
        now = time.monotonic()
        if now - last >= 2.0 and i < len(head):
            try:
                s.send(head[i:i + 1]); i += 1; last = now
            except OSError:
                with lock: closed_by_server[0] += 1
                return
        try:
            b = s.recv(4096)
            if not b:
                with lock: closed_by_server[0] += 1
                return
        except socket.timeout:
            pass
        except OSError:
            with lock: closed_by_server[0] += 1
            return
    s.close()

def attacker_idle_all(n):
    """Open n connections (a few at a time) and hold them."""
    socks = []
    for _ in range(n):
        if stop.is_set():
            break
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.setblocking(False)
            socks.append(s)
            with lock: opened[0] += 1
        except OSError:
            time.sleep(0.01)
    while not stop.is_set():
        time.sleep(0.2)
    for s in socks:
        try:
            b = s.recv(1)
            if b == b"":
                closed_by_server[0] += 1
        except BlockingIOError:
            pass
        except OSError:
            closed_by_server[0] += 1
        s.close()

def get_status():
    """One GET /api/status; True when a full 200 answer came back."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.settimeout(10)
        s.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        return data.startswith(b"HTTP/1.1 200") and b'"version"' in data
    except OSError:
        return False

retried = [0]

def poll_status(results):
    """Poll like a page does: a connection the server dropped before it
    read the request (pushed out in a flood) is tried again at once, as
    browsers do for a GET; the latency counts every try."""
    while not stop.is_set():
        t0 = time.monotonic()
        ok = False
        for attempt in range(5):
            if get_status():
                ok = True
                break
            retried[0] += 1
        results.append((ok, (time.monotonic() - t0) * 1000))
        time.sleep(0.25)

def main():
    threads = []
    if mode == "slowloris":
        head = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: " + b"a" * 200
        for _ in range(conns):
            threads.append(threading.Thread(target=attacker_slow, args=(head,)))
    elif mode == "slowbody":
        head = (b"POST /api/log/level HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                + token.encode() + b"\r\nContent-Length: 60000\r\n\r\n" + b"{" + b" " * 59999)
        for _ in range(conns):
            threads.append(threading.Thread(target=attacker_slow_body, args=(head,)))
    elif mode == "idle":
        threads.append(threading.Thread(target=attacker_idle_all, args=(conns,)))
    for t in threads:
        t.daemon = True
        t.start()
    time.sleep(1.0)      # the attack is under way before the first poll
    results = []
    poller = threading.Thread(target=poll_status, args=(results,), daemon=True)
    poller.start()
    time.sleep(secs)
    stop.set()
    poller.join(15)
    for t in threads:
        t.join(5)
    lat = sorted(ms for ok, ms in results if ok)
    def pct(p):
        return round(lat[min(len(lat) - 1, int(p * len(lat)))], 1) if lat else None
    print(json.dumps({"mode": mode, "polls": len(results),
                      "answered": sum(1 for ok, _ in results if ok),
                      "failed": sum(1 for ok, _ in results if not ok),
                      "p50_ms": pct(0.5), "p99_ms": pct(0.99),
                      "max_ms": round(lat[-1], 1) if lat else None,
                      "retried": retried[0],
                      "attack_opened": opened[0],
                      "attack_closed_by_server": closed_by_server[0]}))

def attacker_slow_body(head):
    """Send the head at once, then the body one byte every 2 s."""
    hl = head.index(b"\r\n\r\n") + 4
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(head[:hl])
    except OSError:
        return
    with lock:
        opened[0] += 1
    s.settimeout(0.2)
    i = hl; last = 0.0
    while not stop.is_set():
        now = time.monotonic()
        if now - last >= 2.0:
            try:
                s.send(head[i:i + 1]); i += 1; last = now
            except OSError:
                with lock: closed_by_server[0] += 1
                return
        try:
            b = s.recv(4096)
            if not b:
                with lock: closed_by_server[0] += 1
                return
        except socket.timeout:
            pass
        except OSError:
            with lock: closed_by_server[0] += 1
            return
    s.close()

main()
