// npm_relay_load.mjs — fills the npm relay's database for relay_serve.sh:
// every event of a JSONL file through EventRepositorySqlite.upsert, the
// repository's own insert path (what the relay runs for an accepted
// EVENT, without its signature check: the file was signed and checked by
// the box's ingest), with the file's syncs off while it loads, and the
// events committed LOAD_BATCH at a time: upsert runs its statements in a
// transaction of its own for each event, which is made a no-op here while
// one outer transaction holds a batch (a commit per event loaded a
// million events at about 400 a second, most of an hour). The statements
// and the rows they write are the repository's. Prints
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
const LOAD_BATCH = 10000;
const kdb = repo.db;
if (typeof kdb?.transaction !== 'function')
	throw new Error('npm_relay_load: the repository has no Kysely db to batch');
kdb.transaction = () => ({ execute: (fn) => fn(kdb) });
const sql = repo.getDatabase();
const t0 = process.hrtime.bigint();
let n = 0;
const lines = createInterface({ input: createReadStream(jsonl), crlfDelay: Infinity });
for await (const line of lines) {
	if (!line)
		continue;
	if (n % LOAD_BATCH === 0)
		sql.exec('BEGIN');
	await repo.upsert(JSON.parse(line));
	if (++n % LOAD_BATCH === 0)
		sql.exec('COMMIT');
}
if (sql.inTransaction)
	sql.exec('COMMIT');
await repo.destroy();
console.log(JSON.stringify({ loaded: n,
    seconds: Number(process.hrtime.bigint() - t0) / 1e9 }));
