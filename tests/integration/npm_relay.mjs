// npm_relay.mjs — a third-party Nostr relay for the interop test: the
// published @nostr-relay/core engine on its SQLite event repository
// (better-sqlite3), served on 127.0.0.1 by a `ws` WebSocketServer, wired
// the way the library documents: handleConnection on connect, handleMessage
// with each parsed client message, handleDisconnect on close.
//
//   node npm_relay.mjs [DB_FILE]      (default: an in-memory database)
//
// Prints one line when listening: {"ready":true,"url":"ws://127.0.0.1:PORT"}.
// SIGTERM or SIGINT closes everything and exits 0. Nothing here is shared
// with the C code under test.
import common from '@nostr-relay/common';
import core from '@nostr-relay/core';
import sqliteRepo from '@nostr-relay/event-repository-sqlite';
import { WebSocketServer } from 'ws';

const { NostrRelay } = core;
const { EventRepositorySqlite } = sqliteRepo;

const repo = new EventRepositorySqlite(process.argv[2] || ':memory:');
await repo.init();

// Both result caches are switched off so every answer comes from the
// repository: a repeated EVENT must be reported as a duplicate, not replayed
// from the cache of its first answer, and a REQ must see what was just
// stored. No hostname: NIP-42 stays off.
const relay = new NostrRelay(repo, {
  eventHandlingResultCacheTtl: 0,
  filterResultCacheTtl: 0,
  logLevel: common.LogLevel.ERROR,
});

// NPM_RELAY_PORT pins the port, so a test can stop the relay and start it
// again at the same URL with the same DB_FILE (default: any free port).
const wss = new WebSocketServer({ host: '127.0.0.1',
  port: Number(process.env.NPM_RELAY_PORT || 0) });

wss.on('connection', (ws, req) => {
  relay.handleConnection(ws, req.socket.remoteAddress);
  ws.on('message', async (data, isBinary) => {
    let msg;
    try {
      msg = JSON.parse(isBinary ? '' : data.toString('utf8'));
    } catch {
      ws.send(JSON.stringify(['NOTICE', 'invalid: not JSON']));
      return;
    }
    if (!Array.isArray(msg) || typeof msg[0] !== 'string') {
      ws.send(JSON.stringify(['NOTICE', 'invalid: not a message array']));
      return;
    }
    try {
      await relay.handleMessage(ws, msg);
    } catch (err) {
      ws.send(JSON.stringify(['NOTICE', `error: ${err.message}`]));
    }
  });
  ws.on('close', () => relay.handleDisconnect(ws));
  ws.on('error', () => {});
});

wss.on('listening', () => {
  const { port } = wss.address();
  process.stdout.write(JSON.stringify({ ready: true, url: `ws://127.0.0.1:${port}` }) + '\n');
});

async function stop() {
  for (const c of wss.clients) c.terminate();
  wss.close();
  await relay.destroy();
  await repo.destroy();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
