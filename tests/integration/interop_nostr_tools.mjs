// interop_nostr_tools.mjs — the nostr-tools side of the event interop test
// (driven by test_interop_nostr_tools.sh).
//   gen                 sign varied events with fresh keys, print JSON lines
//   templates           print event templates (kind, created_at, tags, content)
//   check TPL SIGNED    verifyEvent every signed line and compare it with its
//                       template; prints "ok N" or the mismatches, exit 1 on any
//   tamper FILE         for each signed line print "REASON<TAB>JSON" with one
//                       field changed and the reason cacheboxctl must give
import { readFileSync } from 'node:fs';
import { finalizeEvent, generateSecretKey, getEventHash, verifyEvent } from 'nostr-tools/pure';

const NOW = Math.floor(Date.now() / 1000);

// Content pieces covering every NIP-01 escape, control characters, '/',
// DEL, multibyte UTF-8 of every length, and characters JSON writers treat
// specially elsewhere (U+2028, U+2029).
const pieces = [
  'hello', ' ', '"quoted"', 'back\\slash', 'new\nline', 'cr\rlf', 'tab\there',
  'bs\bff\f', 'ctl\u0001\u0007\u000b\u001b\u001f', 'slash/</script>', 'del\u007f',
  'caf\u00e9', '\u65e5\u672c\u8a9e', '\u{1F600}\u{1F44D}\u{1F3FD}', 'e\u0301',
  '\u05e9\u05dc\u05d5\u05dd', 'line\u2028sep\u2029', '\u20ac', '\u{10FFFF}', '{"json":[1,2]}',
];

function content(i) {
  if (i % 10 === 0) return '';
  let s = '';
  const n = (i * 7) % 40 + 1;
  for (let k = 0; k < n; k++) s += pieces[(i * 31 + k * 17) % pieces.length];
  if (i % 13 === 5) s = s.repeat(200); // some long posts
  return s;
}

function tags(i) {
  const t = [];
  const n = i % 5 === 4 ? 150 + i : (i * 3) % 9;
  for (let k = 0; k < n; k++) {
    switch (k % 5) {
      case 0: t.push(['e', 'ab'.repeat(32), 'wss://relay.example.com', 'reply']); break;
      case 1: t.push(['p', 'cd'.repeat(32)]); break;
      case 2: t.push(['t', pieces[(i + k) % pieces.length]]); break;
      case 3: t.push(['d']); break;
      default: t.push(['x', '', 'a"b', 'c\\d', '\u{1F600}']);
    }
  }
  if (i % 11 === 3) t.push([]);
  return t;
}

const kinds = [0, 1, 1, 1, 3, 7, 1984, 10002, 30023, 20001, 9735, 65535];

function template(i) {
  return {
    kind: kinds[i % kinds.length],
    created_at: i === 1 ? 0 : NOW - i * 3600,
    tags: tags(i),
    content: content(i),
  };
}

function lines(file) {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
}

const N = 50;
const [mode, a, b] = process.argv.slice(2);

if (mode === 'gen') {
  for (let i = 0; i < N; i++) {
    const sk = generateSecretKey();
    console.log(JSON.stringify(finalizeEvent(template(i), sk)));
  }
} else if (mode === 'templates') {
  for (let i = 0; i < N; i++) console.log(JSON.stringify(template(i)));
} else if (mode === 'check') {
  const tpl = lines(a).map((l) => JSON.parse(l));
  const got = lines(b).map((l) => JSON.parse(l));
  let bad = 0;
  if (tpl.length !== got.length) {
    console.log(`count mismatch: ${tpl.length} templates, ${got.length} signed`);
    bad++;
  }
  got.forEach((ev, i) => {
    const t = tpl[i] || {};
    const same = ev.kind === t.kind && ev.created_at === t.created_at &&
      ev.content === t.content && JSON.stringify(ev.tags) === JSON.stringify(t.tags);
    if (!same) { console.log(`line ${i + 1}: fields differ from the template`); bad++; }
    if (getEventHash(ev) !== ev.id) { console.log(`line ${i + 1}: id differs`); bad++; }
    if (!verifyEvent(ev)) { console.log(`line ${i + 1}: verifyEvent false`); bad++; }
  });
  if (bad === 0) console.log(`ok ${got.length}`);
  process.exit(bad ? 1 : 0);
} else if (mode === 'tamper') {
  const flip = (h, k) => h.slice(0, k) + (h[k] === '0' ? '1' : '0') + h.slice(k + 1);
  lines(a).forEach((l, i) => {
    const ev = JSON.parse(l);
    const out = (reason, e) => console.log(`${reason}\t${JSON.stringify(e)}`);
    out('invalid: id mismatch', { ...ev, content: ev.content + '!' });
    out('invalid: id mismatch', { ...ev, id: flip(ev.id, i % 64) });
    out('invalid: bad signature', { ...ev, sig: flip(ev.sig, (i * 5) % 128) });
    out('invalid: id mismatch', { ...ev, pubkey: flip(ev.pubkey, (i * 3) % 64) });
    out('invalid: id mismatch', { ...ev, tags: [...ev.tags, ['t', 'added']] });
    out('invalid: malformed id', { ...ev, id: ev.id.toUpperCase() });
    out('invalid: malformed sig', { ...ev, sig: ev.sig.slice(2) });
  });
  // Signed correctly but an hour ahead of now.
  const future = finalizeEvent({ ...template(2), created_at: NOW + 3600 }, generateSecretKey());
  console.log(`invalid: created_at too far in the future\t${JSON.stringify(future)}`);
} else {
  console.error('usage: interop_nostr_tools.mjs gen|templates|check TPL SIGNED|tamper FILE');
  process.exit(2);
}
