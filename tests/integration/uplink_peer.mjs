// uplink_peer.mjs — peers for the NIP-01 uplink tests, on 127.0.0.1 only.
//
//   node uplink_peer.mjs silent              a relay that takes EVENTs and
//                                            never answers OK
//   node uplink_peer.mjs close-after K       a relay that drops the TCP
//                                            connection (no close frame, no
//                                            OK) when the K-th EVENT of its
//                                            first connection arrives, then
//                                            answers every EVENT normally
//   node uplink_peer.mjs query URL IDS_FILE  ask the relay at URL for the
//                                            ids in IDS_FILE (one per line)
//                                            and print those it holds
//
// The relays print one line when listening: {"ready":true,"url":...}, and
// answer GET /ids (every distinct id stored, one per line) and GET /stats
// ({"received", "stored", "duplicates", "connections"}) on the same port.
// A relay here checks nothing but the id's shape: the uplink, not event
// validation, is under test. SIGTERM ends it.
import http from 'node:http';
import fs from 'node:fs';
import { WebSocketServer, WebSocket } from 'ws';

const QUERY_IDS_PER_FILTER = 100;

function serve(mode, k) {
  const stored = new Set();
  const stats = { received: 0, stored: 0, duplicates: 0, connections: 0 };
  const server = http.createServer((req, res) => {
    if (req.url === '/ids') {
      res.end([...stored].join('\n') + (stored.size ? '\n' : ''));
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
    let events = 0;
    ws.on('error', () => {});
    ws.on('message', (data) => {
      let msg;
      try { msg = JSON.parse(data.toString('utf8')); } catch { return; }
      if (!Array.isArray(msg) || msg[0] !== 'EVENT' || typeof msg[1]?.id !== 'string')
        return;
      stats.received++;
      events++;
      if (mode === 'silent')
        return;
      if (first && events === k) {
        ws._socket.destroy();
        return;
      }
      if (first && events > k)
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
else if (mode === 'query')
  await query(a, b);
else {
  process.stderr.write('usage: uplink_peer.mjs silent | close-after K | query URL IDS_FILE\n');
  process.exit(2);
}
