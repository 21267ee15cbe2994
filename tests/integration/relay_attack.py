#!/usr/bin/env python3
"""relay_attack.py — hostile clients of cacheboxd's own relay, on raw
sockets (no WebSocket library: frames are written by hand, so nothing
smooths over what is sent).

  relay_attack.py PORT badinput
      One connection per case; prints one JSON object: for each case what
      came back (NOTICE, CLOSED, close code and reason).
  relay_attack.py PORT conns N
      N connections at once, each asking for the upgrade; prints how many
      were upgraded and how many refused with an HTTP status and a reason
      (and how many neither: closed without a word).
  relay_attack.py PORT slow SECONDS
      A client with a tiny receive buffer subscribes to everything and
      never reads; after SECONDS prints whether the server cut it off.
  relay_attack.py PORT inputbudget N
      N connections each send the first 120,000-byte fragment of a
      message and no more; prints how many the relay closed
      with 1013 (its input budget spent), how many still answer a ping
      in the middle of their message, and, once all are gone, whether a
      large message on a new connection is served.
  relay_attack.py PORT publish EVENT_JSON
      Sends one EVENT and prints the relay's OK answer.
  relay_attack.py PORT negidle
      Two clients open NIP-77 sessions and leave them; a third is refused
      a session while they hold both, then each of the two waits (up to
      90 s) for the server to end its idle session, and the third tries
      again. Prints what each was told.
  relay_attack.py PORT negkeep
      One client opens a NIP-77 session, then a second one on the same
      connection, then keeps the first alive with a NEG-MSG every 5 s until
      the relay ends it (at most 150 s). Prints the answers to both opens,
      how many NEG-MSGs were answered and how the session ended.
  relay_attack.py PORT fairslots
      One client sends 20 COUNTs of 10 filters that read the whole store
      (then a bad message, whose NOTICE says all 20 were read); another,
      connected already, then sends a small REQ. Prints how many COUNT
      answers the first had received when the second got its EOSE.
  relay_attack.py PORT memory N HOLD
      N connections, one after another, each send 20 REQs of 3 filters x
      8 tag letters x 1,000 two-character values (about 120 KB each) and
      read the 20 answers; while all are held, a new connection sends a
      small REQ. After HOLD more seconds all close. Prints how many REQs
      were answered EOSE and CLOSED, the reasons, and the small REQ's
      answer.

Exit 0 always; the caller judges the figures.
"""
import base64, json, os, socket, struct, sys, threading, time

port = int(sys.argv[1])
mode = sys.argv[2]


def frame(payload, op=1, fin=True, declared=None):
    """A masked client frame; declared overrides the length field."""
    n = len(payload) if declared is None else declared
    b = bytes([(0x80 if fin else 0) | op])
    if n < 126:
        b += bytes([0x80 | n])
    elif n < 65536:
        b += bytes([0x80 | 126]) + struct.pack('>H', n)
    else:
        b += bytes([0x80 | 127]) + struct.pack('>Q', n)
    mask = os.urandom(4)
    return b + mask + bytes(p ^ mask[i % 4] for i, p in enumerate(payload))


def connect(rcvbuf=None, timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(timeout)
    s.connect(('127.0.0.1', port))
    return s


def handshake(s):
    """Ask for the upgrade; (status, head, body or rest)."""
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n'
               'Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n'
               'Sec-WebSocket-Version: 13\r\n\r\n' % key).encode())
    data = b''
    while b'\r\n\r\n' not in data:
        b = s.recv(4096)
        if not b:
            break
        data += b
    head, _, rest = data.partition(b'\r\n\r\n')
    parts = head.split(b' ', 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    if status != 101:
        try:
            while True:
                b = s.recv(4096)
                if not b:
                    break
                rest += b
        except OSError:
            pass
    return status, head.decode('latin-1'), rest


class Reader:
    """Unmasked server frames from a socket."""
    def __init__(self, s, rest=b''):
        self.s, self.buf = s, rest

    def _need(self, n):
        while len(self.buf) < n:
            b = self.s.recv(65536)
            if not b:
                raise EOFError
            self.buf += b

    def next(self):
        """(opcode, payload) of the next frame; raises EOFError/timeout."""
        self._need(2)
        op, n = self.buf[0] & 15, self.buf[1] & 127
        off = 2
        if n == 126:
            self._need(4)
            n, off = struct.unpack('>H', self.buf[2:4])[0], 4
        elif n == 127:
            self._need(10)
            n, off = struct.unpack('>Q', self.buf[2:10])[0], 10
        self._need(off + n)
        p = self.buf[off:off + n]
        self.buf = self.buf[off + n:]
        return op, p


def exchange(frames, until_close=True, limit=30, timeout=5):
    """Send frames on a fresh connection; what came back: messages and close."""
    s = connect(timeout=timeout)
    status, _, rest = handshake(s)
    out = {'status': status, 'messages': [], 'close': None}
    for f in frames:
        try:
            s.sendall(f)
        except OSError:
            break
    r = Reader(s, rest)
    try:
        while len(out['messages']) < limit:
            op, p = r.next()
            if op == 1:
                out['messages'].append(json.loads(p.decode()))
            elif op == 8:
                code = struct.unpack('>H', p[:2])[0] if len(p) >= 2 else 1005
                out['close'] = [code, p[2:].decode('utf-8', 'replace')]
                break
            if not until_close and len(out['messages']) >= 1:
                break
    except (EOFError, OSError):
        pass
    s.close()
    return out


def badinput():
    req = lambda *a: frame(json.dumps(list(a)).encode())
    hexkey = lambda i: '%064x' % i
    res = {}
    res['malformed'] = exchange([frame(b'["REQ", "a", {'),
                                 req('REQ', 'ok', {'limit': 1})],
                                until_close=False, limit=2)
    res['unknown_verb'] = exchange([req('FROB', 'x'),
                                    req('REQ', 'ok', {'limit': 0})],
                                   until_close=False, limit=2)
    res['not_array'] = exchange([frame(b'{"REQ": 1}')], until_close=False)
    res['bad_filter'] = exchange([req('REQ', 'f', {'kinds': ['one']})],
                                 until_close=False)
    res['many_authors'] = exchange([req('REQ', 'a1500', {
        'authors': [hexkey(i) for i in range(1500)]})], until_close=False)
    big = json.dumps(['REQ', 'a100k', {'authors': [hexkey(i)
                     for i in range(100000)]}]).encode()
    res['authors_100k'] = exchange([frame(big)], limit=3)
    res['authors_100k']['bytes'] = len(big)
    res['oversized'] = exchange([frame(b'x' * 200, declared=1 << 30)],
                                limit=3)
    res['invalid_utf8'] = exchange([frame(b'["REQ","\xff\xfe",{}]')], limit=3)
    res['binary'] = exchange([frame(b'\x00\x01', op=2),
                              req('REQ', 'ok', {'limit': 0})],
                             until_close=False, limit=2)
    # 10,000 subscriptions on one connection: every answer counted.
    s = connect(timeout=20)
    status, _, rest = handshake(s)
    # Written from a thread while this one reads: the relay stops reading
    # a client whose answers pile up unread.
    data = b''.join(req('REQ', 's%d' % i, {'kinds': [65535], 'limit': 0})
                    for i in range(10000))
    threading.Thread(target=s.sendall, args=(data,), daemon=True).start()
    r = Reader(s, rest)
    eose = closed = 0
    reasons = set()
    try:
        while eose + closed < 10000:
            op, p = r.next()
            m = json.loads(p.decode()) if op == 1 else None
            if m and m[0] == 'EOSE':
                eose += 1
            elif m and m[0] == 'CLOSED':
                closed += 1
                reasons.add(m[2])
    except (EOFError, OSError):
        pass
    s.close()
    res['subs_10000'] = {'eose': eose, 'closed': closed,
                         'reasons': sorted(reasons)}
    print(json.dumps(res))


def conns(n):
    socks, upgraded, refused, silent = [], 0, 0, 0
    reasons = {}
    pending = []
    for _ in range(n):
        try:
            s = connect(timeout=10)
        except OSError:
            silent += 1
            continue
        key = base64.b64encode(os.urandom(16)).decode()
        try:
            s.sendall(('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n'
                       'Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n'
                       'Sec-WebSocket-Version: 13\r\n\r\n' % key).encode())
        except OSError:
            pass
        pending.append(s)
    for s in pending:
        try:
            data = b''
            while b'\r\n\r\n' not in data:
                b = s.recv(4096)
                if not b:
                    break
                data += b
            if data.startswith(b'HTTP/1.1 101'):
                upgraded += 1
                socks.append(s)
                continue
            head, _, body = data.partition(b'\r\n\r\n')
            try:
                while True:
                    b = s.recv(4096)
                    if not b:
                        break
                    body += b
            except OSError:
                pass
            status = head.split(b' ')[1].decode() if head else ''
            if status and body:
                refused += 1
                why = json.loads(body.decode()).get('error', '')
                reasons[status + ' ' + why] = reasons.get(status + ' ' + why, 0) + 1
            else:
                silent += 1
            s.close()
        except OSError:
            silent += 1
    print(json.dumps({'opened': len(pending), 'upgraded': upgraded,
                      'refused_with_reason': refused, 'silent': silent,
                      'reasons': reasons}))
    sys.stdout.flush()
    time.sleep(float(sys.argv[4]) if len(sys.argv) > 4 else 0)
    for s in socks:
        s.close()


def slow(seconds):
    s = connect(rcvbuf=4096)
    status, _, rest = handshake(s)
    s.sendall(frame(json.dumps(['REQ', 'flood', {}]).encode()))
    print(json.dumps({'status': status, 'subscribed': True}))
    sys.stdout.flush()
    time.sleep(seconds)
    # Now read what is there: a cut connection ends in EOF or a reset.
    s.settimeout(5)
    got, closed = 0, False
    try:
        while True:
            b = s.recv(65536)
            if not b:
                closed = True
                break
            got += len(b)
    except socket.timeout:
        pass
    except OSError:
        closed = True
    print(json.dumps({'closed_by_server': closed, 'bytes_read': got}))


def inputbudget(n, expect_held=8):
    """Wait (up to 60 s) until all but expect_held are refused, then ping
    the rest; a refusal beyond those shows as a missing pong."""
    import select
    socks = []
    for i in range(n):
        s = connect(timeout=10)
        status, _, rest = handshake(s)
        # The first fragment of a message, whole: a ping may follow it.
        s.sendall(frame(b'x' * 120000, fin=False))
        socks.append((s, Reader(s, rest)))
    refused, reasons, left = 0, set(), list(socks)
    deadline = time.time() + 60
    while refused < n - expect_held and time.time() < deadline:
        ready, _, _ = select.select([s for s, _ in left], [], [], 1)
        for s, r in [x for x in left if x[0] in ready]:
            left.remove((s, r))
            try:
                op, p = r.next()
            except (EOFError, OSError):
                continue
            if op == 8 and len(p) >= 2:
                code = struct.unpack('>H', p[:2])[0]
                refused += code == 1013
                reasons.add('%d %s' % (code, p[2:].decode()))
    pongs = 0
    for s, r in left:
        s.settimeout(10)
        try:
            s.sendall(frame(b'p', op=9))
            op, p = r.next()
            pongs += op == 10
        except (EOFError, OSError):
            pass
    for s, _ in socks:
        s.close()
    # Once the relay has seen those connections end, their bytes are free.
    big = ['REQ', 'big', {'authors': ['%064x' % i for i in range(1000)],
                          'limit': 1}]
    for attempt in range(1, 31):
        after = exchange([frame(json.dumps(big).encode())], until_close=False)
        if after['messages']:
            break
        time.sleep(1)
    print(json.dumps({'refused_1013': refused, 'reasons': sorted(reasons),
                      'holding_answer_ping': pongs,
                      'after': after['messages'][:1], 'attempts': attempt}))


def negidle():
    # An initiator's first message over an empty range: protocol version
    # 0x61, one range up to infinity (timestamp 0, empty id prefix) given
    # as an empty IdList.
    first = '6100000200'
    neg = lambda sub: frame(json.dumps(
        ['NEG-OPEN', sub, {'kinds': [65535]}, first]).encode())

    def opened(sub):
        s = connect(timeout=10)
        status, _, rest = handshake(s)
        s.sendall(neg(sub))
        r = Reader(s, rest)
        op, p = r.next()
        return s, r, json.loads(p.decode())

    a, ra, ma = opened('a')
    b, rb, mb = opened('b')
    c, rc, mc = opened('c')
    c.close()
    told = []
    for s, r in ((a, ra), (b, rb)):
        s.settimeout(90)
        try:
            op, p = r.next()
            told.append(json.loads(p.decode()))
        except (EOFError, OSError) as e:
            told.append(str(e))
    d, rd, md = opened('d')
    for s in (a, b, d):
        s.close()
    print(json.dumps({'a': ma[0], 'b': mb[0], 'c': mc, 'idle': told,
                      'after': md[0]}))


def negkeep():
    first = '6100000200'
    msg = lambda verb, sub, *rest: frame(json.dumps(
        [verb, sub] + list(rest)).encode())
    s = connect(timeout=10)
    status, _, rest = handshake(s)
    r = Reader(s, rest)

    def answer():
        while True:
            op, p = r.next()
            if op == 1:
                return json.loads(p.decode())

    s.sendall(msg('NEG-OPEN', 'k1', {'kinds': [65535]}, first))
    one = answer()
    s.sendall(msg('NEG-OPEN', 'k2', {'kinds': [65535]}, first))
    two = answer()
    if two[0] == 'NEG-MSG':
        s.sendall(msg('NEG-CLOSE', 'k2'))
    fed, end, start = 0, None, time.monotonic()
    s.settimeout(5)
    while end is None and time.monotonic() - start < 150:
        try:
            s.sendall(msg('NEG-MSG', 'k1', first))
            m = answer()
            if m[0] == 'NEG-MSG':
                fed += 1
                time.sleep(5)
            else:
                end = m
        except socket.timeout:
            continue
        except (EOFError, OSError) as e:
            end = str(e)
    s.close()
    print(json.dumps({'first': one[0], 'second': two, 'fed': fed,
                      'end': end}))


def fairslots():
    h = connect(timeout=60)
    _, _, hrest = handshake(h)
    v = connect(timeout=60)
    _, _, vrest = handshake(v)
    hr, vr = Reader(h, hrest), Reader(v, vrest)
    filters = [{'since': i} for i in range(10)]
    for j in range(20):
        h.sendall(frame(json.dumps(['COUNT', 'c%d' % j] + filters).encode()))
    h.sendall(frame(b'["FROB"]'))
    seen, lock, done = [], threading.Lock(), threading.Event()

    def read_hostile():
        try:
            while True:
                op, p = hr.next()
                if op != 1:
                    continue
                m = json.loads(p.decode())
                with lock:
                    seen.append(m[0])
                if m[0] == 'NOTICE':
                    done.set()
                if seen.count('COUNT') == 20:
                    return
        except (EOFError, OSError):
            done.set()

    t = threading.Thread(target=read_hostile)
    t.start()
    done.wait(60)
    with lock:
        before_req = seen.count('COUNT')
    v.sendall(frame(b'["REQ","v",{"kinds":[65534],"limit":1}]'))
    answer = None
    try:
        while answer is None:
            op, p = vr.next()
            if op == 1:
                answer = json.loads(p.decode())
    except (EOFError, OSError) as e:
        answer = str(e)
    with lock:
        at_eose = seen.count('COUNT')
    t.join(120)
    h.close(); v.close()
    print(json.dumps({'answer': answer, 'counts_before_req': before_req,
                      'counts_at_eose': at_eose,
                      'counts_total': seen.count('COUNT')}))


def memory(n, hold):
    alpha = 'abcdefghijklmnopqrstuvwxyz0123456789'
    vals = [a + b for a in alpha for b in alpha][:1000]
    filt = {'#' + l: vals for l in 'abcdefgh'}
    socks, eose, closed, reasons, closes = [], 0, 0, set(), []
    for i in range(n):
        s = connect(timeout=60)
        status, _, rest = handshake(s)
        if status != 101:
            closes.append(status)
            continue
        for j in range(20):
            s.sendall(frame(json.dumps(['REQ', 'm%d' % j, filt, filt, filt],
                                       separators=(',', ':')).encode()))
        r = Reader(s, rest)
        got = 0
        try:
            while got < 20:
                op, p = r.next()
                if op == 8:
                    closes.append(struct.unpack('>H', p[:2])[0])
                    break
                if op != 1:
                    continue
                m = json.loads(p.decode())
                if m[0] == 'EOSE':
                    eose += 1; got += 1
                elif m[0] == 'CLOSED':
                    closed += 1; got += 1; reasons.add(m[2])
        except (EOFError, OSError) as e:
            closes.append(str(e))
        socks.append(s)
    small = exchange([frame(b'["REQ","small",{"kinds":[65534],"limit":1}]')],
                     until_close=False, limit=1)
    time.sleep(hold)
    for s in socks:
        s.close()
    print(json.dumps({'eose': eose, 'closed': closed,
                      'reasons': sorted(reasons), 'closes': closes,
                      'small': small['messages'][0] if small['messages']
                      else small['close']}))


if mode == 'badinput':
    badinput()
elif mode == 'conns':
    conns(int(sys.argv[3]))
elif mode == 'slow':
    slow(float(sys.argv[3]))
elif mode == 'inputbudget':
    inputbudget(int(sys.argv[3]))
elif mode == 'publish':
    out = exchange([frame(json.dumps(['EVENT', json.loads(sys.argv[3])])
                          .encode())], until_close=False, limit=1)
    print(json.dumps(out['messages'][0] if out['messages'] else out['close']))
elif mode == 'negidle':
    negidle()
elif mode == 'negkeep':
    negkeep()
elif mode == 'fairslots':
    fairslots()
elif mode == 'memory':
    memory(int(sys.argv[3]), float(sys.argv[4]))
