// npm_relay_load.mjs — fills the npm relay's database for relay_serve.sh:
// every event of a JSONL file through EventRepositorySqlite.upsert, the
// repository's own insert path (what the relay runs for an accepted
// EVENT, without its signature check: the file was signed and checked by
// the box's ingest), with the file's syncs off while it loads. Prints
// {"loaded": N, "seconds": S}.
//
//   node npm_relay_load.mjs DB_FILE EVENTS.jsonl
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import sqliteRepo from '@nostr-relay/event-repository-sqlite';

const [dbFile, jsonl] = process.argv.slice(2);
const repo = new sqliteRepo.EventRepositorySqlite(dbFile);
await repo.init();
// Only how fast the rows reach the disk changes: the same statements write
// the same rows (the relay later opens the file with its own settings).
repo.getDatabase().pragma('journal_mode = WAL');
repo.getDatabase().pragma('synchronous = OFF');
const t0 = process.hrtime.bigint();
let n = 0;
const lines = createInterface({ input: createReadStream(jsonl), crlfDelay: Infinity });
for await (const line of lines) {
	if (!line)
		continue;
	await repo.upsert(JSON.parse(line));
	n++;
}
await repo.destroy();
console.log(JSON.stringify({ loaded: n,
    seconds: Number(process.hrtime.bigint() - t0) / 1e9 }));
