// uplink_peer.mjs — peers for the NIP-01 uplink tests, on 127.0.0.1 only.
//
//   node uplink_peer.mjs silent              a relay that takes EVENTs and
//                                            never answers OK
//   node uplink_peer.mjs close-after K       a relay that drops the TCP
//                                            connection (no close frame, no
//                                            OK) when the K-th EVENT of its
//                                            first connection arrives, then
//                                            answers every EVENT normally
//   node uplink_peer.mjs auth-gate A B       a relay that wants NIP-42 AUTH
//                                            (a challenge as each connection
//                                            opens) before it takes an EVENT,
//                                            takes a protected event (NIP-70,
//                                            a tag named "-") only from its
//                                            author, and after AUTH still
//                                            answers "auth-required:" to every
//                                            event of pubkey A and
//                                            "restricted:" to every event of
//                                            pubkey B (hex)
//   node uplink_peer.mjs query URL IDS_FILE  ask the relay at URL for the
//                                            ids in IDS_FILE (one per line)
//                                            and print those it holds
//
// The relays print one line when listening: {"ready":true,"url":...}, and
// answer GET /ids (every distinct id stored, one per line), GET /received
// (every distinct id of an EVENT received) and GET /stats ({"received",
// "stored", "duplicates", "connections", and for auth-gate "auth_ok",
// "auth_required", "protected_foreign" (protected events of another key
// than the connection's AUTH), "max_frames" (the most EVENT frames of one
// id)}) on the same port. A relay here checks nothing but the id's shape
// and, for AUTH, the kind and the challenge: the uplink, not event
// validation, is under test. SIGTERM ends it.
import http from 'node:http';
import fs from 'node:fs';
import { WebSocketServer, WebSocket } from 'ws';

const QUERY_IDS_PER_FILTER = 100;

// The "auth-gate" relay's answer to an EVENT (null: take it), counted.
function gate(conn, ev, stats, gated) {
  if (conn.authed === null) {
    stats.auth_required++;
    return 'auth-required: publishing needs authentication';
  }
  const prot = Array.isArray(ev.tags) && ev.tags.some((t) => Array.isArray(t) && t[0] === '-');
  if (prot && ev.pubkey !== conn.authed) {
    stats.protected_foreign++;
    return 'auth-required: this event may only be published by its author';
  }
  if (ev.pubkey === gated.authRequired)
    return 'auth-required: members only, and this author is not one';
  if (ev.pubkey === gated.restricted)
    return 'restricted: this author may not publish here';
  return null;
}

function onAuth(ws, conn, msg, stats) {
  const ev = msg[1];
  const id = typeof ev?.id === 'string' ? ev.id : '';
  const challenge = Array.isArray(ev?.tags) &&
      (ev.tags.find((t) => Array.isArray(t) && t[0] === 'challenge') || [])[1];
  if (ev?.kind !== 22242 || challenge !== conn.challenge)
    return ws.send(JSON.stringify(['OK', id, false, 'invalid: not an AUTH for this challenge']));
  conn.authed = ev.pubkey;
  stats.auth_ok++;
  ws.send(JSON.stringify(['OK', id, true, '']));
}

function serve(mode, k, gated) {
  const stored = new Set();
  const received = new Set();
  const frames = new Map();
  const stats = { received: 0, stored: 0, duplicates: 0, connections: 0,
    auth_ok: 0, auth_required: 0, protected_foreign: 0, max_frames: 0 };
  const server = http.createServer((req, res) => {
    if (req.url === '/ids') {
      res.end([...stored].join('\n') + (stored.size ? '\n' : ''));
    } else if (req.url === '/received') {
      res.end([...received].join('\n') + (received.size ? '\n' : ''));
    } else if (req.url === '/stats') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(stats));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => {
    const first = stats.connections++ === 0;
    const conn = { authed: null, challenge: `c${stats.connections}-${Date.now()}` };
    let events = 0;
    ws.on('error', () => {});
    if (mode === 'auth-gate')
      ws.send(JSON.stringify(['AUTH', conn.challenge]));
    ws.on('message', (data) => {
      let msg;
      try { msg = JSON.parse(data.toString('utf8')); } catch { return; }
      if (mode === 'auth-gate' && Array.isArray(msg) && msg[0] === 'AUTH')
        return onAuth(ws, conn, msg, stats);
      if (!Array.isArray(msg) || msg[0] !== 'EVENT' || typeof msg[1]?.id !== 'string')
        return;
      stats.received++;
      events++;
      received.add(msg[1].id);
      frames.set(msg[1].id, (frames.get(msg[1].id) || 0) + 1);
      stats.max_frames = Math.max(stats.max_frames, frames.get(msg[1].id));
      if (mode === 'silent')
        return;
      if (mode === 'auth-gate') {
        const why = gate(conn, msg[1], stats, gated);
        if (why !== null)
          return ws.send(JSON.stringify(['OK', msg[1].id, false, why]));
      }
      if (mode === 'close-after' && first && events === k) {
        ws._socket.destroy();
        return;
      }
      if (mode === 'close-after' && first && events > k)
        return;
      const id = msg[1].id;
      if (!/^[0-9a-f]{64}$/.test(id))
        return ws.send(JSON.stringify(['OK', id, false, 'invalid: bad id']));
      if (stored.has(id)) {
        stats.duplicates++;
        return ws.send(JSON.stringify(['OK', id, true, 'duplicate: have it']));
      }
      stored.add(id);
      stats.stored++;
      ws.send(JSON.stringify(['OK', id, true, '']));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    process.stdout.write(JSON.stringify({ ready: true, url: `ws://127.0.0.1:${port}`,
      http: `http://127.0.0.1:${port}` }) + '\n');
  });
  process.on('SIGTERM', () => process.exit(0));
}

async function query(url, file) {
  const ids = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length === 64);
  const ws = new WebSocket(url);
  await new Promise((ok, bad) => { ws.on('open', ok); ws.on('error', bad); });
  const found = new Set();
  let pending = null;
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString('utf8'));
    if (msg[0] === 'EVENT')
      found.add(msg[2].id);
    else if ((msg[0] === 'EOSE' || msg[0] === 'CLOSED') && pending)
      pending();
  });
  for (let i = 0; i < ids.length; i += QUERY_IDS_PER_FILTER) {
    const chunk = ids.slice(i, i + QUERY_IDS_PER_FILTER);
    await new Promise((ok) => {
      pending = ok;
      ws.send(JSON.stringify(['REQ', 'q', { ids: chunk, limit: chunk.length }]));
    });
    ws.send(JSON.stringify(['CLOSE', 'q']));
  }
  ws.close();
  process.stdout.write([...found].sort().join('\n') + (found.size ? '\n' : ''));
}

const [mode, a, b] = process.argv.slice(2);
if (mode === 'silent')
  serve('silent', 0);
else if (mode === 'close-after')
  serve('close-after', Number(a));
else if (mode === 'auth-gate')
  serve('auth-gate', 0, { authRequired: a, restricted: b });
else if (mode === 'query')
  await query(a, b);
else {
  process.stderr.write('usage: uplink_peer.mjs silent | close-after K | auth-gate A B | query URL IDS_FILE\n');
  process.exit(2);
}
