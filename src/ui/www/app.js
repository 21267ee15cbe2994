// cachebox status page: polls GET /api/status every two seconds and draws
// it; the command list (GET /api/help) decides which optional panels exist
// and which forms are offered, so new commands appear without a page edit.
// Views (Summary, Relays, Authors, Jobs, Settings) are hash routes
// (#relays...): one is shown at a time, and a refresh fetches only what the
// shown view draws beyond the status document.
// Tasks with a form of their own (roots, relays, uplink, backfill reset,
// jobs) show their result next to that form, as text. Runs offline: no
// framework, no remote resource.
'use strict';

const REFRESH_MS = 2000;
const TOKEN_KEY = 'cachebox.token';
const $ = (sel) => document.querySelector(sel);

let commands = [];	// from /api/help

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

function apiPath(name) {
  return '/api/' + name.split(' ').join('/');
}

async function getJSON(path) {
  const r = await fetch(path, { cache: 'no-store' });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || ('HTTP ' + r.status));
  return body;
}

function hasCommand(name) {
  return commands.some((c) => c.name === name);
}

function fmtInt(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : '–';
}

function fmtBytes(n) {
  if (typeof n !== 'number') return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + ' ' + units[i];
}

// A Unix time as a date (UTC), e.g. 2021-03-04.
function fmtDate(t) {
  return typeof t === 'number' && t > 0 ? new Date(t * 1000).toISOString().slice(0, 10) : '–';
}

function shortKey(k) {
  return typeof k === 'string' && k.length > 24 ? k.slice(0, 12) + '…' + k.slice(-6) : (k || '');
}

// A command's answer as lines of text for a person: "name: value", lists
// by their names or first fields. Never raw JSON.
function describe(a) {
  const word = (k) => k.replace(/_/g, ' ');
  const short = (v) => {
    if (v === null || v === undefined) return '–';
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (typeof v === 'number') return fmtInt(v);
    if (Array.isArray(v)) return v.length === 0 ? 'none' : v.map(short).join(', ');
    if (typeof v === 'object') return String(v.name || v.url || v.npub || v.key ||
      Object.values(v).filter((x) => typeof x !== 'object').slice(0, 2).join(' '));
    return String(v);
  };
  if (a === null || typeof a !== 'object') return short(a);
  return Object.entries(a).map(([k, v]) => word(k) + ': ' + short(v)).join('\n');
}

// Show text in a form's result (an <output> next to it).
function setOut(out, text, isError) {
  out.textContent = text;
  out.classList.toggle('error', !!isError);
  out.classList.toggle('ok', !isError);
}

function fmtDuration(s) {
  if (typeof s !== 'number') return '–';
  const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600);
  const m = Math.floor(s % 3600 / 60);
  if (d > 0) return d + 'd ' + h + 'h';
  if (h > 0) return h + 'h ' + m + 'm';
  if (m > 0) return m + 'm ' + (s % 60) + 's';
  return s + 's';
}

// A bar of part/whole: a budget turns amber past 80 % and red past 95 %,
// a progress bar turns green when complete.
function setBar(id, part, whole, isBudget) {
  const bar = $(id);
  const pct = whole > 0 ? Math.min(100, 100 * part / whole) : 0;
  bar.style.width = pct.toFixed(1) + '%';
  bar.classList.toggle('warn', isBudget && pct >= 80 && pct < 95);
  bar.classList.toggle('bad', isBudget && pct >= 95);
  bar.classList.toggle('done', !isBudget && pct >= 100);
}

function stateClass(state) {
  if (/^(open|ready|connected|idle|up|ok|running)$/.test(state)) return 'ok';
  if (/^(new|connecting|configured|opening|auth|backoff|waiting|paused)/.test(state)) return 'warn';
  if (/^(off|none)$/.test(state)) return '';
  return 'bad';
}

function drawHeader(st) {
  $('#version').textContent = st.version;
  $('#uptime').textContent = fmtDuration(st.uptime_s);
  $('#npub').textContent = shortKey(st.npub || '');
  $('#npub').title = 'the box\'s public key: ' + (st.npub || '');
  $('#npub').dataset.npub = st.npub || '';
  const idle = $('#idle');
  const waiting = (st.recovery || {}).waiting;
  idle.textContent = st.idle ? 'idle' : waiting ? 'waiting' : 'working';
  idle.className = 'badge ' + (st.idle ? 'ok' : 'warn');
  drawActivity(st);
}

// A Unix time as "12:34 UTC", and the time here where the browser knows it.
function fmtClock(t) {
  const d = new Date(t * 1000);
  const utc = d.toISOString().slice(11, 16) + ' UTC';
  if (new Date().getTimezoneOffset() === 0) return utc;
  return utc + ' (' + d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) + ' here)';
}

// What the box is doing, in words, at the top of the Summary: idle, what
// keeps it busy, and what it waits for while recovery holds idle back
// (status recovery.waiting: ids a relay reported, asked again at a time).
function drawActivity(st) {
  const p = $('#activity');
  const b = st.backfill || {}, cur = (st.jobs || {}).current, w = (st.recovery || {}).waiting;
  const parts = [];
  if (b.authors_draining > 0) parts.push('backfill: ' + fmtInt(b.authors_draining) + ' author' +
    (b.authors_draining === 1 ? '' : 's') + ' draining');
  if (cur) parts.push('job ' + cur.job + ' (' + cur.label + ') running');
  if (st.uplink && st.uplink.url && (st.inbox || {}).pending > 0) parts.push('uplink: ' + fmtInt(st.inbox.pending) + ' events to forward');
  const kids = [];
  if (st.idle) kids.push(el('b', { text: 'Idle' }), ': nothing left to fetch or forward.');
  else if (parts.length || !w) kids.push(el('b', { text: 'Working' }), parts.length ? ': ' + parts.join('; ') + '.' : '.', w ? ' ' : '');
  if (!st.idle && w) kids.push(el('b', { text: 'Waiting' }), ' for ' + fmtInt(w.ids) + ' id' + (w.ids === 1 ? '' : 's') + ' from relay ',
    el('span', { class: 'url-inline', title: w.relay, text: w.relay }), ' until ' + fmtClock(w.until) + '.');
  p.replaceChildren(...kids);
  p.dataset.state = st.idle ? 'idle' : w ? 'waiting' : 'working';
}

function drawCards(st) {
  const b = st.backfill || {};
  $('#progress-text').textContent = fmtInt(b.authors_complete) + ' / ' + fmtInt(b.authors_total);
  $('#incomplete').textContent = fmtInt(b.authors_incomplete);
  setBar('#progress-bar', b.authors_complete || 0, b.authors_total || 0, false);
  const s = st.store || {};
  $('#store-events').textContent = fmtInt(s.events);
  $('#store-text').textContent = fmtBytes(s.bytes) + ' of ' + fmtBytes(s.max_bytes);
  setBar('#store-bar', s.bytes || 0, s.max_bytes || 0, true);
  const w = st.writes || {};
  $('#store-writes').textContent = 'written since start ' + fmtBytes(w.bytes) +
    (typeof w.bytes_per_stored_event === 'number' ? ', ' + fmtBytes(w.bytes_per_stored_event) + ' per event stored' : '');
  drawRules(st);
  $('#rss').textContent = fmtBytes(st.rss_bytes);
  $('#rss-text').textContent = 'budget ' + fmtBytes(st.rss_budget_bytes);
  setBar('#rss-bar', st.rss_bytes || 0, st.rss_budget_bytes || 0, true);
  drawUplink(st.uplink, st.inbox || {});
}

// What the authors' rules kept out or removed since start (status
// ingest.*, rules.removed.* and relay_endpoint.protected_refused).
function drawRules(st) {
  const i = st.ingest || {}, r = (st.rules || {}).removed || {};
  const sum = (a, b) => (typeof a === 'number' ? a : 0) + (typeof b === 'number' ? b : 0);
  const parts = [['superseded', sum(i.superseded, r.superseded)], ['deleted', sum(i.deleted, r.deleted)],
    ['expired', sum(i.expired, r.expired)], ['vanished', sum(i.vanished, r.vanished)],
    ['ephemeral', i.ephemeral], ['protected refused', (st.relay_endpoint || {}).protected_refused]]
    .filter(([, v]) => typeof v === 'number' && v > 0).map(([k, v]) => k + ' ' + fmtInt(v));
  $('#store-rules').textContent = parts.length ? 'withdrawn by their authors: ' + parts.join(', ') : '';
}

function drawUplink(up, inbox) {
  const state = up && up.state ? up.state : 'none';
  const s = $('#uplink-state');
  s.textContent = state;
  s.className = 'big';
  $('#uplink-url').textContent = up && up.url ? up.url : 'no uplink configured';
  const rows = [
    ['pending', fmtInt(inbox.pending)],
    ['forwarded', fmtInt(inbox.forwarded)],
    ['dead letters', fmtInt(inbox.rejected)],
    ['skipped: others\' protected (NIP-70)', fmtInt(inbox.skipped_protected)],
    ['lag', fmtDuration(up ? up.oldest_pending_age_s : inbox.oldest_pending_age_s)],
  ];
  if (up && typeof up.forward_rate === 'number') rows.push(['rate', up.forward_rate.toFixed(1) + ' ev/s']);
  if (up && up.last_error) rows.push(['last error', up.last_error]);
  $('#uplink-kv').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
}

// An error from before the relay's last successful open is history, not
// its state now: shown muted, with its time.
function relayError(r) {
  if (!r.last_error) return el('td', { class: 'err', 'data-error': 'none' });
  const past = typeof r.last_open_at === 'number' && typeof r.last_error_at === 'number' &&
    (r.last_error_at < r.last_open_at || (r.last_error_at === r.last_open_at && r.state === 'open'));
  const when = typeof r.last_error_at === 'number' ? ago(r.last_error_at) : 'time unknown';
  const td = el('td', { class: past ? 'err past' : 'err', 'data-error': past ? 'past' : 'current' },
    el('span', { text: r.last_error }),
    el('div', { class: 'small', text: past ? when + ', before the last open ' + ago(r.last_open_at) : when }));
  if (typeof r.last_error_at === 'number') td.title = new Date(r.last_error_at * 1000).toLocaleString();
  return td;
}

const ROLES = ['bootstrap', 'outbox', 'custom'];

function relayRole(r) {
  if (!hasCommand('relays role') || !ROLES.includes(r.role)) return el('td', { text: r.role || '' });
  const sel = el('select', { 'aria-label': 'role of ' + r.url, 'data-role': r.role },
    ...ROLES.map((x) => el('option', { value: x, text: x })));
  sel.value = r.role;
  sel.addEventListener('change', () => runCommand('relays role', { url: r.url, role: sel.value },
    $('#relay-result'), () => r.url + ' is now ' + sel.value).then(refreshSoon));
  return el('td', {}, sel);
}

function relayActions(r) {
  const td = el('td', {});
  // A bootstrap relay is one of relays.bootstrap: removing takes it off that list.
  if (r.role === 'bootstrap' && hasCommand('relays remove')) {
    const b = el('button', { type: 'button', class: 'secondary', 'data-action': 'remove', text: 'Remove' });
    b.addEventListener('click', () => runCommand('relays remove', { url: r.url }, $('#relay-result'),
      (a) => r.url + ' removed from the bootstrap relays' + (a.note ? '\n' + a.note : '')).then(refreshSoon));
    td.append(b);
  }
  return td;
}

function drawRelays(relays) {
  const tbody = $('#relays tbody');
  $('#relay-count').textContent = '(' + relays.length + ')';
  if (tbody.contains(document.activeElement)) return;	// a select in use
  if (relays.length === 0) {
    tbody.replaceChildren(el('tr', {}, el('td', { class: 'empty', colspan: '8', text: 'no relays yet' })));
    return;
  }
  tbody.replaceChildren(...relays.map((r) => el('tr', { 'data-url': r.url },
    el('td', { class: 'url', text: r.url }),
    relayRole(r),
    el('td', {}, el('span', { class: 'badge ' + stateClass(r.state), text: r.state })),
    el('td', { class: 'num', text: fmtInt(r.events) }),
    el('td', { text: r.negentropy_why ? r.negentropy + ': ' + r.negentropy_why : r.negentropy || '' }),
    el('td', { text: r.health || '' }),
    relayError(r),
    relayActions(r))));
}

// ---- events stored --------------------------------------------------------
// 6 h: GET /api/ingest/minutes (per minute, in memory since the daemon
// started). 24 h and 7 d: GET /api/ingest/history (per 10 minutes, kept in
// the database across restarts; 7 d drawn per hour). Bars on a canvas, no
// library.

const RANGES = {
  '6h': { hours: 6, label: 'per minute' },
  '24h': { hours: 24, label: 'per 10 minutes' },
  '7d': { hours: 168, label: 'per hour' },
};
const CHART_KEY = 'cachebox.chart';
let chartRange = RANGES[localStorage.getItem(CHART_KEY)] ? localStorage.getItem(CHART_KEY) : '24h';

function niceMax(n) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(n, 1))));
  return [1, 2, 5, 10].map((m) => m * p).find((m) => m >= n);
}

// counts: oldest first, the running bucket last; known: how many of the
// newest are real (the rest is before counting began); hours: the span.
function drawBars(counts, known, hours) {
  const c = $('#chart');
  const w = c.clientWidth, h = c.clientHeight, dpr = window.devicePixelRatio || 1;
  if (w === 0) return;
  c.width = Math.round(w * dpr);
  c.height = Math.round(h * dpr);
  const g = c.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  const css = getComputedStyle(document.documentElement);
  const color = (v) => css.getPropertyValue(v).trim();
  const n = counts.length;
  const left = 44, top = 8, bottom = 20, right = 6;
  const pw = w - left - right, ph = h - top - bottom;
  const max = niceMax(Math.max(...counts));
  g.font = '11px system-ui, sans-serif';
  g.fillStyle = color('--muted');
  g.strokeStyle = color('--line');
  g.lineWidth = 1;
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  for (const f of [0, 0.5, 1]) {
    const y = Math.round(top + ph - f * ph) + 0.5;
    g.beginPath(); g.moveTo(left, y); g.lineTo(left + pw, y); g.stroke();
    g.fillText(fmtInt(max * f), left - 6, y);
  }
  g.textAlign = 'center';
  g.textBaseline = 'top';
  // Ticks: hours for 6 h, every 3 h (6 h on a phone) for 24 h, days for 7 d.
  const days = hours > 48, unit = days ? 24 : 1;
  const step = days ? 1 : hours <= 6 ? (pw < 300 ? 2 : 1) : (pw < 400 ? 6 : 3);
  for (let i = 0; i * unit <= hours; i += step) {
    const x = left + pw * (1 - i * unit / hours);
    g.fillText(i === 0 ? 'now' : '−' + i + (days ? 'd' : 'h'), Math.min(Math.max(x, left + 12), left + pw - 12), top + ph + 5);
  }
  const bw = pw / n;
  g.fillStyle = color('--accent');
  let total = 0, bars = 0;
  counts.forEach((v, i) => {
    if (i < n - known || v === 0) return;
    const bh = Math.max(1, v / max * ph);
    g.fillRect(left + i * bw, top + ph - bh, Math.max(bw - (bw > 3 ? 1 : 0), 1), bh);
    total += v;
    bars++;
  });
  c.dataset.total = String(total);
  c.dataset.bars = String(bars);
  c.dataset.range = chartRange;
}

// The chart's words agree with the header: both read st.uptime_s of the
// same status document.
async function drawChart(st) {
  const r = RANGES[chartRange];
  for (const b of document.querySelectorAll('#chart-range button'))
    b.setAttribute('aria-pressed', String(b.dataset.range === chartRange));
  const ing = st.ingest || {};
  $('#chart-sums').textContent = typeof ing.stored_24h === 'number' ?
    fmtInt(ing.stored_24h) + ' in 24 h · ' + fmtInt(ing.stored_7d) + ' in 7 days' : '';
  if (chartRange === '6h') {
    const m = await getJSON(apiPath('ingest minutes'));
    const known = Math.min(m.known, m.minutes.length);
    drawBars(m.minutes, known, r.hours);
    const lastHour = m.minutes.slice(-60).reduce((a, b) => a + b, 0);
    $('#chart-note').textContent = r.label + ': ' + fmtInt(lastHour) + ' stored in the last hour' +
      (known < m.minutes.length ? '; counting since the daemon started ' + fmtDuration(st.uptime_s) + ' ago' : '');
    return;
  }
  const hist = await getJSON(apiPath('ingest history') + '?hours=' + r.hours);
  let counts = hist.counts, per = hist.bucket_s;
  if (chartRange === '7d') {	// 10-minute buckets summed by the hour
    const k = Math.max(1, Math.round(3600 / per)), out = [];
    for (let i = 0; i < counts.length; i += k) out.push(counts.slice(i, i + k).reduce((a, b) => a + b, 0));
    counts = out;
    per *= k;
  }
  const first = hist.now - (counts.length - 1) * per - hist.now % per;
  const known = hist.since === null ? 0 : Math.min(counts.length, Math.max(0, Math.floor((hist.now - hist.since) / per) + 1));
  drawBars(counts, hist.since === null ? counts.length : known, r.hours);
  const sum = counts.reduce((a, b) => a + b, 0);
  $('#chart-note').textContent = r.label + ': ' + fmtInt(sum) + ' stored in the last ' + (chartRange === '7d' ? '7 days' : '24 hours') +
    (hist.since !== null && hist.since > first ? '; kept since ' + fmtWhen(hist.since) : '') +
    ' (the daemon up ' + fmtDuration(st.uptime_s) + ')';
}

// A Unix time as UTC and, where the browser knows it, local time.
function fmtWhen(t) {
  const d = new Date(t * 1000);
  const utc = d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  const local = d.toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  return new Date().getTimezoneOffset() === 0 ? utc : utc + ' (' + local + ' here)';
}

async function drawIngest(st) {
  if (!hasCommand('ingest minutes')) return;
  $('#chart-section').hidden = false;
  const rate = st.ingest && typeof st.ingest.rate_per_s === 'number' ? st.ingest.rate_per_s : null;
  $('#ingest-rate').textContent = rate === null ? '' : '(' + rate.toFixed(1) + ' events/s now)';
  try {
    if (!hasCommand('ingest history') && chartRange !== '6h') chartRange = '6h';
    await drawChart(st);
  } catch (e) {
    $('#chart-note').textContent = e.message;
  }
}

function setupChart() {
  for (const b of document.querySelectorAll('#chart-range button')) {
    if (b.dataset.range !== '6h' && !hasCommand('ingest history')) b.hidden = true;
    b.addEventListener('click', () => {
      chartRange = b.dataset.range;
      localStorage.setItem(CHART_KEY, chartRange);
      if (lastStatus) drawIngest(lastStatus);
    });
  }
}

// Ids relays reported (NIP-77) and did not deliver, being fetched again.
async function drawRecovery(st) {
  const rec = st.recovery;
  if (!rec || !hasCommand('recovery')) {
    $('#recovery-section').hidden = true;
    return;
  }
  $('#recovery-section').hidden = false;
  $('#recovery-summary').textContent = fmtInt(rec.pending) + ' ids pending, ' +
    fmtInt(rec.expired) + ' given up, ' + fmtInt(rec.recovered) + ' recovered since start';
  try {
    const rows = drawTable($('#recovery'), await getJSON(apiPath('recovery')),
      'nothing to recover: every id a relay reported has arrived');
    $('#recovery-count').textContent = '(' + rows.length + ')';
  } catch (e) {
    $('#recovery').replaceChildren(el('p', { class: 'quiet', text: e.message }));
  }
}

// The box's own relay (relay.listen): who reads it and what it sent. The
// summary has its address and counters; the Relays view lists its clients.
async function drawServe(st, view) {
  const r = st.relay_endpoint;
  if (!r) {
    $('#serve-section').hidden = true;
    $('#serve-card').hidden = true;
    $('#clients-section').hidden = true;
    return;
  }
  const addr = 'ws://' + (r.loopback_only ? r.listen.replace(/:[^:]*$/, '') : location.hostname) + ':' + r.port;
  $('#serve-section').hidden = false;
  $('#serve-card').hidden = false;
  $('#serve-clients-now').textContent = fmtInt(r.clients) + ' / ' + fmtInt(r.max_clients);
  $('#serve-addr').textContent = addr;
  $('#serve-count').textContent = '(' + fmtInt(r.clients) + ' of ' + fmtInt(r.max_clients) + ' clients)';
  $('#serve-summary').textContent = addr +
    ' \u2014 ' + (r.accept === 'none' ? 'read-only' : 'accepts events signed by ' + r.accept) +
    (r.auth === 'owners' ? ', readers must authenticate (NIP-42)' : '') +
    (r.tag_index_ready ? '' : '; tag index still filling');
  const rows = [
    ['subscriptions', fmtInt(r.subscriptions) + ' (' + fmtInt(r.subscriptions_live) + ' live)'],
    ['REQs served', fmtInt(r.reqs)],
    ['events sent', fmtInt(r.events_sent)],
    ['bytes out', fmtBytes(r.bytes_out)],
    ['writes refused', fmtInt(r.writes_refused)],
    ['slow readers cut', fmtInt(r.cut_slow)],
  ];
  $('#serve-kv').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
  $('#clients-section').hidden = !hasCommand('clients');
  if (view !== 'relays' || !hasCommand('clients')) return;
  if (r.clients === 0) {
    $('#serve-clients').replaceChildren(el('p', { class: 'quiet', text: 'no client is reading the relay now' }));
    return;
  }
  try {
    drawTable($('#serve-clients'), await getJSON(apiPath('clients')), 'no clients');
  } catch (e) {
    $('#serve-clients').replaceChildren(el('p', { class: 'quiet', text: e.message }));
  }
}

// Any answer holding an array of objects, drawn as a table of its fields.
function drawTable(target, answer, emptyText) {
  const rows = Object.values(answer).find((v) => Array.isArray(v)) || [];
  if (rows.length === 0) {
    target.replaceChildren(el('p', { class: 'quiet', text: emptyText }));
    return rows;
  }
  let cols = Object.keys(rows[0]).filter((k) => typeof rows[0][k] !== 'object' || rows[0][k] === null);
  if (cols.includes('npub')) cols = cols.filter((c) => c !== 'pubkey' && c !== 'hex');
  cols = cols.slice(0, 9);
  const isKey = (c) => c === 'npub' || c === 'pubkey' || c === 'id';
  const show = (v) => typeof v === 'boolean' ? (v ? 'yes' : 'no') : typeof v === 'number' ? fmtInt(v) : (v == null ? '' : String(v));
  const cell = (r, c) => {
    const text = show(r[c]);
    if (isKey(c) && text.length > 24)
      return el('td', { class: 'url', title: text, text: text.slice(0, 14) + '…' + text.slice(-6) });
    return el('td', { class: typeof r[c] === 'number' ? 'num' : (c === 'url' ? 'url' : ''), text });
  };
  target.replaceChildren(el('div', { class: 'scroll' }, el('table', {},
    el('thead', {}, el('tr', {}, ...cols.map((c) => el('th', { class: typeof rows[0][c] === 'number' ? 'num' : '', text: c.replace(/_/g, ' ') })))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...cols.map((c) => cell(r, c))))))));
  return rows;
}

// ---- authors ---------------------------------------------------------------
// A page of GET /api/follows (offset, limit, q): the daemon searches and
// pages, so a refresh costs one page, never the whole followed set.

const authors = { offset: 0, limit: 25, q: '', open: new Set(), seq: 0, timer: null };

function authorStateClass(s) {
  return { complete: 'ok', draining: 'warn', incomplete: 'bad' }[s] || '';
}

function authorDetail(f) {
  const rows = (f.relays || []).map((r) => el('tr', {},
    el('td', { class: 'url', text: r.url }),
    el('td', {}, el('span', { class: 'badge ' + authorStateClass(r.state === 'draining' ? 'draining' : r.state), text: r.state })),
    el('td', { text: r.until === null ? 'not started' : fmtDate(r.until) }),
    el('td', { class: 'num', text: fmtInt(r.pages) }),
    el('td', { class: 'num', text: fmtInt(r.events) }),
    el('td', { class: 'err', text: (r.reason || '') + (r.gap_since ? ' (gap at ' + fmtDate(r.gap_since) + ')' : '') })));
  return el('tr', { class: 'detail-row', 'data-detail': f.pubkey }, el('td', { colspan: '6' },
    el('div', { class: 'small', text: f.npub }),
    rows.length ? el('div', { class: 'scroll' }, el('table', {},
      el('thead', {}, el('tr', {}, ...['relay', 'state', 'back to', 'pages', 'events', 'reason'].map((h) => el('th', { text: h })))),
      el('tbody', {}, ...rows))) :
      el('p', { class: 'quiet', text: f.reason || 'no relay known for this author yet' })));
}

function authorRow(f) {
  const open = authors.open.has(f.pubkey);
  const toggle = el('button', { type: 'button', class: 'secondary', 'data-action': 'details', text: open ? 'Hide' : 'Relays' });
  toggle.addEventListener('click', () => {
    if (authors.open.has(f.pubkey)) authors.open.delete(f.pubkey); else authors.open.add(f.pubkey);
    drawAuthors();
  });
  const nrelays = (f.relays || []).length;
  const tr = el('tr', { 'data-pubkey': f.pubkey, 'data-state': f.state },
    el('td', { class: 'author' },
      el('div', { class: 'name' + (f.name ? '' : ' quiet'), text: f.name || shortKey(f.npub), title: f.npub }),
      el('div', { class: 'small npub', text: (f.is_root ? 'root · ' : '') + shortKey(f.npub) })),
    el('td', {}, el('span', { class: 'badge ' + authorStateClass(f.state), text: f.state }),
      f.reason ? el('div', { class: 'small', text: f.reason }) : null),
    el('td', { class: 'num', text: fmtInt(f.events_stored), title: 'events stored (its own drain received ' + fmtInt(f.events_fetched) + ')' }),
    el('td', { class: 'history', text: f.history_back_to ? 'history back to ' + fmtDate(f.history_back_to) : 'not started' }),
    el('td', { text: nrelays ? fmtInt(f.relays_complete) + ' of ' + fmtInt(nrelays) + ' complete' : 'none' }),
    el('td', {}, toggle));
  return open ? [tr, authorDetail(f)] : [tr];
}

async function drawAuthors() {
  if (!hasCommand('follows')) return;
  $('#authors-section').hidden = false;
  const seq = ++authors.seq;
  const qs = new URLSearchParams({ offset: String(authors.offset), limit: String(authors.limit) });
  if (authors.q) qs.set('q', authors.q);
  let a;
  try {
    a = await getJSON(apiPath('follows') + '?' + qs);
  } catch (e) {
    if (seq === authors.seq) $('#authors tbody').replaceChildren(el('tr', {}, el('td', { class: 'empty', colspan: '6', text: e.message })));
    return;
  }
  if (seq !== authors.seq) return;	// a newer page or search was asked meanwhile
  if (a.total > 0 && authors.offset >= a.total) {
    authors.offset = Math.floor((a.total - 1) / authors.limit) * authors.limit;
    return drawAuthors();
  }
  const rows = a.follows || [];
  $('#author-count').textContent = '(' + fmtInt(a.total) + (authors.q ? ' matching' : '') + ')';
  $('#authors-range').textContent = rows.length ? fmtInt(authors.offset + 1) + '–' + fmtInt(authors.offset + rows.length) + ' of ' + fmtInt(a.total) : '';
  $('#authors-prev').disabled = authors.offset === 0;
  $('#authors-next').disabled = authors.offset + authors.limit >= a.total;
  const empty = authors.q ? 'no followed author matches “' + authors.q + '”' : 'nobody followed yet: add a root below';
  $('#authors tbody').replaceChildren(...(rows.length ? rows.flatMap(authorRow) :
    [el('tr', {}, el('td', { class: 'empty', colspan: '6', text: empty }))]));
}

function setupAuthors() {
  $('#author-q').addEventListener('input', () => {
    clearTimeout(authors.timer);
    authors.timer = setTimeout(() => {
      authors.q = $('#author-q').value.trim();
      authors.offset = 0;
      drawAuthors();
    }, 250);
  });
  $('#authors-prev').addEventListener('click', () => {
    authors.offset = Math.max(0, authors.offset - authors.limit);
    drawAuthors();
  });
  $('#authors-limit').addEventListener('change', () => {
    authors.limit = Number($('#authors-limit').value);
    authors.offset = 0;
    drawAuthors();
  });
  $('#authors-next').addEventListener('click', () => {
    authors.offset += authors.limit;
    drawAuthors();
  });
}

// ---- administration cards ------------------------------------------------

// Run a mutating command and say how it went in out: okText(answer) on
// success, the refusal otherwise. The answer, or null.
async function runCommand(name, body, out, okText) {
  setOut(out, 'running ' + name + '…', false);
  try {
    const { ok, answer } = await postCommand(name, body);
    if (!ok) {
      setOut(out, name + ': ' + (answer.error || 'refused'), true);
      return null;
    }
    setOut(out, okText ? okText(answer) : name + ': done\n' + describe(answer), false);
    return answer;
  } catch (e) {
    setOut(out, name + ': ' + e.message, true);
    return null;
  }
}

function refreshSoon() {
  setTimeout(() => getJSON('/api/status').then((st) => drawRelays(st.relays || [])).catch(() => {}), 300);
}

function rootLabel(r) {
  return r.name ? r.name + ' (' + shortKey(r.npub) + ')' : (r.npub || r.invalid);
}

async function drawRoots() {
  if (!hasCommand('roots list')) return;
  $('#roots-card').hidden = false;
  const list = $('#roots-list');
  if (list.contains(document.activeElement)) return;
  try {
    const roots = (await getJSON(apiPath('roots list'))).roots || [];
    list.replaceChildren(...(roots.length ? roots.map((r) => {
      const b = el('button', { type: 'button', class: 'secondary', 'data-action': 'remove', text: 'Remove' });
      b.addEventListener('click', () => runCommand('roots remove', { key: r.npub || r.invalid }, $('#roots-result'),
        (a) => 'removed ' + rootLabel(r) + ': the people only this root followed are no longer followed' +
          (a.note ? '\n' + a.note : '')).then(drawRoots));
      return el('li', { 'data-npub': r.npub || '' },
        el('span', {}, el('b', { text: r.name || (r.invalid ? 'not a key' : 'no profile name yet') }),
          el('span', { class: 'small npub', title: r.npub || '', text: ' ' + shortKey(r.npub || r.invalid) })), b);
    }) : [el('li', { class: 'quiet', text: 'no roots: the box follows nobody' })]));
  } catch (e) {
    list.replaceChildren(el('li', { class: 'quiet', text: e.message }));
  }
}

async function addRoot(ev) {
  ev.preventDefault();
  const input = ev.target.elements.key, key = input.value.trim();
  const a = await runCommand('roots add', { key }, $('#roots-result'), (r) => 'added ' +
    (r.name ? r.name + ' (' + shortKey(r.npub) + ')' : (r.npub || key) +
      ': no profile (kind 0) of this key is stored yet; its name shows once one arrives') +
    (r.note ? '\n' + r.note : ''));
  if (a) input.value = '';
  drawRoots();
}

const UPLINK_UP = /^(open|sending|ready)$/;

// Watch the uplink for up to seconds and say whether it connects.
async function testUplink(out, seconds) {
  setOut(out, 'testing the uplink…', false);
  let u = {};
  for (let i = 0; i <= seconds * 2; i++) {
    try {
      u = (await getJSON(apiPath('uplink status'))).uplink || {};
    } catch (e) {
      setOut(out, 'uplink status: ' + e.message, true);
      return;
    }
    if (!u.url) return setOut(out, 'no uplink configured: events stay in the local store only', false);
    if (UPLINK_UP.test(u.state)) return setOut(out, 'connected to ' + u.url + ' (' + u.state + ')', false);
    if (u.state === 'failed' || (u.state === 'backoff' && u.last_error))
      return setOut(out, 'not connected to ' + u.url + ': ' + (u.last_error || u.state), true);
    await new Promise((r) => setTimeout(r, 500));
  }
  setOut(out, 'still ' + u.state + ' after ' + seconds + ' s' + (u.last_error ? ': ' + u.last_error : ''), true);
}

async function saveUplink(ev) {
  ev.preventDefault();
  const url = ev.target.elements.url.value.trim();
  const out = $('#uplink-result');
  if (!await runCommand('config set', { key: 'uplink.url', value: url }, out, (a) => a.note || 'saved')) return;
  await testUplink(out, 10);
}

async function deadAction(seq) {
  await runCommand('uplink retry', seq ? { seq: String(seq) } : {}, $('#dead-result'),
    (a) => fmtInt(a.retried) + ' dead letter' + (a.retried === 1 ? '' : 's') + ' sent again');
  drawDeadLetters();
}

async function drawDeadLetters(st) {
  if (!hasCommand('uplink deadletter')) return;
  $('#uplink-card').hidden = false;
  if (st && st.uplink) $('#uplink-now').textContent = st.uplink.url ? st.uplink.url + ' (' + st.uplink.state + ')' : 'none';
  if ($('#deadletters').contains(document.activeElement)) return;
  try {
    const d = await getJSON(apiPath('uplink deadletter'));
    const dead = d.dead || [];
    $('#dead-count').textContent = '(' + fmtInt(d.total) + ')';
    $('#dead-retry-all').hidden = !(d.total > 0 && hasCommand('uplink retry'));
    if (dead.length === 0) {
      $('#deadletters').replaceChildren(el('p', { class: 'quiet', text: 'none: the uplink took everything it was sent' }));
      return;
    }
    $('#deadletters').replaceChildren(el('table', {},
      el('thead', {}, el('tr', {}, ...['event', 'kind', 'reason', 'tries', 'last try', ''].map((h) => el('th', { text: h })))),
      el('tbody', {}, ...dead.map((x) => {
        const b = el('button', { type: 'button', class: 'secondary', 'data-action': 'retry', text: 'Retry' });
        b.addEventListener('click', () => deadAction(x.seq));
        return el('tr', { 'data-seq': String(x.seq) },
          el('td', { class: 'url', title: x.id, text: shortKey(x.id) }),
          el('td', { class: 'num', text: String(x.kind) }),
          el('td', { class: 'err', text: x.reason }),
          el('td', { class: 'num', text: fmtInt(x.attempts) }),
          el('td', { text: ago(x.last_attempt_at) }),
          el('td', {}, hasCommand('uplink retry') ? b : null));
      }))));
  } catch (e) {
    $('#deadletters').replaceChildren(el('p', { class: 'quiet', text: e.message }));
  }
}

function setupBackfill() {
  if (!hasCommand('backfill reset')) return;
  $('#backfill-card').hidden = false;
  const out = $('#backfill-result');
  $('#reset-one').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const author = ev.target.elements.author.value.trim();
    runCommand('backfill reset', { author }, out, (a) => 'reset ' + fmtInt(a.reset) +
      ' relay cursor' + (a.reset === 1 ? '' : 's') + ' of ' + shortKey(author) + ': its history drains again');
  });
  // Destructive for everyone: asked for again in the page before it runs.
  $('#reset-all').addEventListener('click', () => {
    $('#reset-confirm').hidden = false;
    $('#reset-all').disabled = true;
    setOut(out, 'confirm below, or cancel', false);
  });
  const close = () => { $('#reset-confirm').hidden = true; $('#reset-all').disabled = false; };
  $('#reset-all-no').addEventListener('click', () => { close(); setOut(out, 'cancelled: nothing was reset', false); });
  $('#reset-all-yes').addEventListener('click', async () => {
    close();
    await runCommand('backfill reset', {}, out, (a) => 'reset ' + fmtInt(a.reset) +
      ' relay cursors: every author\'s history drains again from the newest event');
  });
}

function setupAdminCards() {
  $('#root-add').addEventListener('submit', addRoot);
  if (hasCommand('relays add')) {
    $('#relay-add').hidden = false;
    $('#relay-add').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const f = ev.target, url = f.elements.url.value.trim(), role = f.elements.role.value;
      runCommand('relays add', { url, role }, $('#relay-result'), (a) => 'added ' + url + ' as ' + role +
        (a.note ? '\n' + a.note : ''))
        .then((a) => { if (a) f.elements.url.value = ''; refreshSoon(); });
    });
  }
  $('#uplink-form').addEventListener('submit', saveUplink);
  $('#uplink-check').addEventListener('click', () => testUplink($('#uplink-result'), 10));
  $('#dead-retry-all').addEventListener('click', () => deadAction(0));
  setupBackfill();
  setupBackup();
}

// Download backup: the daemon copies the database in steps (backup
// download), the page follows the copy (backup status) and, once it is
// done, fetches it with its one-time path: the browser saves the file.
function setupBackup() {
  if (!hasCommand('backup download')) return;
  $('#backup-card').hidden = false;
  $('#backup-download').addEventListener('click', downloadBackup);
}

async function downloadBackup() {
  const out = $('#backup-result'), button = $('#backup-download');
  button.disabled = true;
  try {
    const a = await runCommand('backup download', {}, out, () => 'copying the database…');
    if (!a) return;
    let s = a;
    while (s.state === 'running') {
      setOut(out, 'copying the database: ' + fmtInt(s.pages_done) + ' of ' + fmtInt(s.pages_total) + ' pages', false);
      await new Promise((r) => setTimeout(r, 500));
      s = await getJSON(apiPath('backup status'));
    }
    if (s.state !== 'done') return setOut(out, 'the copy failed: ' + (s.error || s.state), true);
    const link = el('a', { href: a.download, download: '' });
    document.body.append(link);
    link.click();
    link.remove();
    setOut(out, 'the copy is ready (' + fmtInt(s.pages_total) + ' pages): your browser saves it as ' +
      'cachebox-backup-<date>.db; it can be fetched once', false);
  } catch (e) {
    setOut(out, 'backup download: ' + e.message, true);
  } finally {
    button.disabled = false;
  }
}

// ---- custom jobs ------------------------------------------------------------
// The seed's form: preset buttons fill it, a dry run (POST /api/jobs/dry-run) shows
// what the job would do, and "Create job" sends the very settings that dry
// run saw. The table polls /api/jobs/list; a detail view shows a job's
// unfinished batches with their reasons.

let dryKey = null;		// the form's settings of the last good dry run
let detailJob = null;		// the job whose detail view is open

function jobArgs() {
  const body = {};
  for (const e of $('#job-form').elements) {
    if (!e.name) continue;
    if (e.type === 'checkbox') { body[e.name] = e.checked ? 'true' : 'false'; continue; }
    const v = e.value.trim();
    if (v !== '') body[e.name] = v;
  }
  // A typed list speaks for itself: a manual source, a custom relay mode.
  if (body.authors_source === 'none') delete body.authors_source;
  if (body.relay_mode === 'bootstrap') delete body.relay_mode;
  return body;
}

async function postCommand(name, body) {
  const r = await fetch(apiPath(name), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Authorization': 'Bearer ' + $('#token').value },
    body: JSON.stringify(body),
  });
  let answer = await r.json();
  // The API's words for a client; a person typed no password yet.
  if (r.status === 401 && !$('#token').value)
    answer = { error: 'this change needs the admin password: type it in the admin password field above' };
  return { ok: r.ok, answer };
}

function formChanged() {
  const same = dryKey !== null && JSON.stringify(jobArgs()) === dryKey;
  $('#job-create').disabled = !same;
}

function drawDry(a) {
  const box = $('#job-dry');
  box.hidden = false;
  box.classList.remove('error');
  const items = a.batch_mode === 'ids' ? ['ids', a.ids, a.ids_first] :
    a.batch_mode === 'authors' ? ['authors', a.authors, a.authors_first] : null;
  const facts = [
    ['batches', fmtInt(a.batches) + ' (' + a.batch_mode + (a.batch_mode === 'none' ? ': a time window, one per relay' : ', ' + a.batch_size + ' per batch') + ')'],
    ['requests', fmtInt(a.requests) + ' first request' + (a.requests === 1 ? '' : 's') +
      ' (each batch then pages on until its relay has nothing older)'],
    ['estimated', fmtDuration(a.estimated_s) + ' at ' + a.pace_ms + ' ms between requests to one relay'],
    ['relays', (a.relays || []).map((r) => r.url + ' (' + r.batches + ')').join(', ') || 'none'],
  ];
  if (items) facts.splice(1, 0, [items[0], fmtInt(items[1]) + ((items[2] || []).length ? ': ' + items[2].join(', ') + (items[1] > items[2].length ? ', …' : '') : '')]);
  if (a.every) facts.push(['repeats', 'every ' + a.every]);
  box.replaceChildren(el('b', { text: 'Dry run: nothing was sent or stored.' }),
    el('dl', { class: 'kv' }, ...facts.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })])),
    ...(a.warnings || []).map((w) => el('p', { class: 'warn-text', text: '⚠ ' + w })));
}

function dryError(msg) {
  const box = $('#job-dry');
  box.hidden = false;
  box.classList.add('error');
  box.textContent = msg;
}

async function dryRun() {
  const body = jobArgs();
  dryKey = null;
  formChanged();
  try {
    const { ok, answer } = await postCommand('jobs dry-run', body);
    if (!ok) return dryError(answer.error || 'refused');
    drawDry(answer);
    dryKey = JSON.stringify(body);
    formChanged();
  } catch (e) {
    dryError(e.message);
  }
}

async function createJob(ev) {
  ev.preventDefault();
  const body = jobArgs();
  if (JSON.stringify(body) !== dryKey) return dryError('run a dry run of these settings first');
  try {
    const { ok, answer } = await postCommand('jobs new', body);
    if (!ok) return dryError(answer.error || 'refused');
    setOut($('#job-result'), 'jobs new: job ' + answer.job + ' created with ' + answer.batches + ' batches', false);
    dryKey = null;
    formChanged();
    await drawJobs();
  } catch (e) {
    dryError(e.message);
  }
}

function applyPreset(p) {
  const f = $('#job-form');
  f.reset();
  // The button only fills the form: what is sent is what the form shows.
  f.elements.label.value = p.title;
  f.elements.kinds.value = p.kinds;
  f.elements.authors_source.value = p.authors_source;
  f.elements.only_missing_kind0.checked = p.only_missing_kind0 === 'true';
  f.elements.relay_mode.value = p.relay_mode;
  $('#job-dry').hidden = true;
  dryKey = null;
  formChanged();
}

function jobStateClass(s) {
  return { complete: 'ok', running: 'warn', pending: 'warn', incomplete: 'warn', failed: 'bad' }[s] || '';
}

function ago(t) {
  return typeof t === 'number' ? fmtDuration(Math.max(0, Math.round(Date.now() / 1000 - t))) + ' ago' : '–';
}

let deleteAsk = null;		// the job whose Delete waits for a confirmation

async function jobAction(name, id) {
  try {
    const { ok, answer } = await postCommand(name, { job: String(id) });
    const done = name === 'jobs delete' ? 'job ' + id + ' deleted' : name + ' ' + id + ': done';
    setOut($('#job-result'), ok ? done : name + ' ' + id + ': ' + (answer.error || 'refused'), !ok);
    if (ok && name === 'jobs delete' && detailJob === id) {
      detailJob = null;
      $('#job-detail').hidden = true;
    }
    await drawJobs();
  } catch (e) {
    setOut($('#job-result'), name + ': ' + e.message, true);
  }
}

function jobRow(j) {
  const pct = j.batches_total > 0 ? 100 * j.batches_done / j.batches_total : (j.status === 'complete' ? 100 : 0);
  const fill = el('div', { class: 'fill' + (pct >= 100 ? ' done' : '') });
  fill.style.width = pct.toFixed(1) + '%';
  const actions = el('td', {});
  const button = (label, action, cls, run) => {
    const b = el('button', { type: 'button', 'data-action': action, class: cls || '', text: label });
    b.addEventListener('click', run || (() => action === 'details' ? showDetail(j.job) : jobAction('jobs ' + action, j.job)));
    actions.append(b);
  };
  const redraw = () => drawJobs();
  if (deleteAsk === j.job) {
    // Deleting forgets the job and its batches: asked again in the row.
    actions.append(el('span', { class: 'small', text: 'Delete job ' + j.job + '? ' }));
    button('Yes, delete', 'delete-yes', 'danger', () => { deleteAsk = null; jobAction('jobs delete', j.job); });
    button('Keep', 'delete-no', 'secondary', () => { deleteAsk = null; redraw(); });
  } else {
    if (j.status === 'pending' || j.status === 'running' || j.next_run_at) button('Cancel', 'cancel');
    if (j.status === 'failed' || j.status === 'cancelled') button('Retry', 'retry');
    button('Details', 'details', 'secondary');
    if (j.status !== 'running' && hasCommand('jobs delete'))
      button('Delete', 'delete', 'secondary', () => { deleteAsk = j.job; redraw(); });
  }
  return el('tr', { 'data-job': String(j.job), 'data-status': j.status },
    el('td', { class: 'num', text: String(j.job) }),
    el('td', { text: j.label }),
    el('td', { class: 'url', text: j.summary }),
    el('td', {}, el('div', { class: 'small', text: fmtInt(j.batches_done) + ' / ' + fmtInt(j.batches_total) + ' batches' }),
      el('div', { class: 'bar' }, fill)),
    el('td', { class: 'num', text: fmtInt(j.events_fetched) }),
    el('td', { class: 'status' }, el('span', { class: 'badge ' + jobStateClass(j.status), text: j.status + (j.every ? ' · every ' + j.every : '') })),
    el('td', { text: ago(j.started_at) }),
    actions);
}

async function drawJobs() {
  if (!hasCommand('jobs list')) return;
  $('#jobs-section').hidden = false;
  try {
    const jobs = (await getJSON(apiPath('jobs list'))).jobs || [];
    $('#job-count').textContent = '(' + jobs.length + ')';
    $('#jobs tbody').replaceChildren(...(jobs.length ? jobs.map(jobRow) :
      [el('tr', {}, el('td', { class: 'empty', colspan: '8', text: 'no jobs yet' }))]));
    if (detailJob !== null) await showDetail(detailJob);
  } catch (e) {
    $('#jobs tbody').replaceChildren(el('tr', {}, el('td', { class: 'empty', colspan: '8', text: e.message })));
  }
}

// The unfinished batches of a job, grouped by status, relay and reason:
// 80 cancelled batches of one relay are one row, not 80.
const DETAIL_GROUPS = 10;

function batchGroups(batches) {
  const groups = new Map();
  for (const b of batches) {
    const why = b.reason || b.why || '';
    const key = b.status + '\n' + b.relay + '\n' + why;
    const g = groups.get(key) || { status: b.status, relay: b.relay, why, n: 0, lo: b.index, hi: b.index, events: 0 };
    g.n++;
    g.lo = Math.min(g.lo, b.index);
    g.hi = Math.max(g.hi, b.index);
    g.events += b.events_fetched || 0;
    groups.set(key, g);
  }
  return [...groups.values()];
}

async function showDetail(id) {
  const box = $('#job-detail');
  detailJob = id;
  try {
    const j = await getJSON(apiPath('jobs show') + '?job=' + id);
    const counts = Object.entries(j.batch_counts || {}).filter(([, n]) => n > 0).map(([k, n]) => n + ' ' + k).join(', ');
    const close = el('button', { type: 'button', class: 'secondary', text: 'Close' });
    close.addEventListener('click', () => { detailJob = null; box.hidden = true; });
    const groups = batchGroups(j.batches || []);
    const rows = groups.slice(0, DETAIL_GROUPS).map((g) => el('tr', { 'data-group': g.status + ' ' + g.relay },
      el('td', { class: 'num', text: fmtInt(g.n) }),
      el('td', {}, el('span', { class: 'badge ' + jobStateClass(g.status), text: g.status })),
      el('td', { class: 'url', text: g.relay }),
      el('td', { class: 'err', text: g.why }),
      el('td', { text: g.lo === g.hi ? String(g.lo) : g.lo + (g.n === g.hi - g.lo + 1 ? '–' : '…') + g.hi }),
      el('td', { class: 'num', text: fmtInt(g.events) })));
    const more = groups.length - rows.length;
    box.hidden = false;
    box.replaceChildren(
      el('div', { class: 'row' }, el('h3', { text: 'Job ' + j.job + ': ' + j.label + ' — ' + j.status }), close),
      el('p', { class: 'quiet', text: j.summary + ' · ' + counts + (j.every ? ' · every ' + j.every : '') }),
      ...(j.error ? [el('p', { class: 'err', text: j.error })] : []),
      rows.length ? el('div', { class: 'scroll' }, el('table', {},
        el('thead', {}, el('tr', {}, ...['batches', 'status', 'relay', 'reason', 'numbers', 'events'].map((h) => el('th', { text: h })))),
        el('tbody', {}, ...rows))) : el('p', { class: 'quiet', text: 'every batch complete' }),
      ...(more > 0 || j.batches_truncated ? [el('p', { class: 'quiet', text: (more > 0 ? 'and ' + more + ' more group' +
        (more === 1 ? '' : 's') + '; ' : '') + 'cacheboxctl jobs show ' + j.job + ' --json lists every batch' }) ] : []));
  } catch (e) {
    box.hidden = false;
    box.textContent = e.message;
  }
}

async function setupJobs() {
  if (!hasCommand('jobs new')) return;
  $('#jobs-section').hidden = false;
  try {
    for (const p of (await getJSON(apiPath('jobs presets'))).presets || []) {
      const b = el('button', { type: 'button', 'data-preset': p.name, text: p.title });
      b.addEventListener('click', () => applyPreset(p));
      $('#job-presets').append(b);
    }
  } catch (e) {
    $('#job-presets').append(el('span', { class: 'quiet', text: e.message }));
  }
  const f = $('#job-form');
  f.addEventListener('input', formChanged);
  f.addEventListener('change', formChanged);
  f.addEventListener('submit', createJob);
  $('#job-dry-run').addEventListener('click', dryRun);
}

// ---- views ----------------------------------------------------------------

const VIEWS = ['summary', 'relays', 'authors', 'jobs', 'settings'];
let lastStatus = null;

function currentView() {
  const v = location.hash.replace(/^#\/?/, '');
  return VIEWS.includes(v) ? v : 'summary';
}

function showView() {
  const v = currentView();
  for (const e of document.querySelectorAll('.view')) e.hidden = e.dataset.view !== v;
  for (const a of document.querySelectorAll('#nav a'))
    if (a.dataset.view === v) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  // Changes need the admin password: asked for on every view that changes something.
  $('#token-bar').hidden = v === 'summary';
  document.body.dataset.view = v;
  document.title = 'cachebox' + (v === 'summary' ? '' : ' · ' + v[0].toUpperCase() + v.slice(1));
  if (lastStatus) drawView(lastStatus).catch(() => {});
}

// Table cells as labelled fields: on a phone a table row becomes a card
// and each cell shows its column's name (data-label, from the header).
function labelCells(root) {
  for (const table of (root || document).querySelectorAll('table')) {
    const heads = [...table.querySelectorAll(':scope > thead th')].map((th) => th.textContent);
    for (const tr of table.querySelectorAll(':scope > tbody > tr'))
      [...tr.children].forEach((td, i) => {
        if (heads[i] && !td.hasAttribute('colspan')) td.dataset.label = heads[i];
      });
  }
}

// What the shown view draws beyond the header and the status cards.
async function drawView(st) {
  const v = currentView();
  const parts = [drawServe(st, v)];
  if (v === 'summary') parts.push(drawIngest(st));
  if (v === 'relays') parts.push(drawRecovery(st));
  if (v === 'authors') parts.push(drawAuthors());
  if (v === 'jobs') parts.push(drawJobs());
  if (v === 'settings') parts.push(drawRoots(), drawDeadLetters(st));
  await Promise.all(parts);
}

async function refresh() {
  try {
    const st = await getJSON('/api/status');
    lastStatus = st;
    drawHeader(st);
    drawCards(st);
    drawRelays(st.relays || []);
    await drawView(st);
    $('#updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (e) {
    $('#updated').textContent = 'no answer: ' + e.message;
  } finally {
    setTimeout(refresh, REFRESH_MS);
  }
}

// ---- forms for the mutating commands -------------------------------------

function params(cmd) {
  return cmd.params.split(' ').filter(Boolean).map((p) => ({
    name: p.replace(/^\[|\]$/g, ''), optional: p.startsWith('['),
  }));
}

function showResult(text, isError) {
  const r = $('#result');
  r.hidden = false;
  r.textContent = text;
  r.classList.toggle('error', isError);
}

// What a generic form says when its command went through.
function doneText(cmd, a) {
  if (cmd.name === 'config set')
    return 'config set: done, ' + a.key + ' = ' + (a.value === '' ? '(empty)' : a.value) + ' (from the ' + a.source + ')' +
      (a.note ? '\n' + a.note : '');
  return cmd.name + ': done\n' + describe(a);
}

async function submit(ev, cmd) {
  ev.preventDefault();
  const form = ev.target, body = {};
  for (const input of form.querySelectorAll('input[name]'))
    if (input.value !== '') body[input.name] = input.value;
  const button = form.querySelector('button');
  button.disabled = true;
  await runCommand(cmd.name, body, form.querySelector('output'), (a) => doneText(cmd, a));
  button.disabled = false;
}

function buildForm(cmd) {
  const inputs = params(cmd).map((p) => el('input', {
    name: p.name, placeholder: p.name + (p.optional ? ' (optional)' : ''),
    'aria-label': p.name, autocomplete: 'off', spellcheck: 'false',
    ...(p.optional ? {} : { required: '' }),
    ...(cmd.name === 'config set' && p.name === 'key' ? { list: 'config-keys' } : {}),
  }));
  const form = el('form', { 'data-command': cmd.name },
    el('h3', { text: cmd.name }), el('p', { text: cmd.help }),
    el('div', { class: 'row' }, ...inputs, el('button', { type: 'submit', text: 'Run' })),
    el('output', { class: 'form-result' }));
  form.addEventListener('submit', (ev) => submit(ev, cmd));
  return form;
}

const OWN_FORMS = ['roots add', 'roots remove', 'relays add', 'relays remove', 'relays role',
  'uplink retry', 'backfill reset', 'backup download'];

// ---- first run: the setup code --------------------------------------------

// While no admin password is set, the setup card takes the code the box
// shows at the box (the page never sees it) and a new password; once set,
// it is kept for this tab as if typed in the admin password field.
async function setupCard() {
  const say = (text, isError) => {
    const r = $('#setup-result');
    r.hidden = false;
    r.textContent = text;
    r.classList.toggle('error', isError);
  };
  const s = await getJSON('/api/setup').catch(() => ({ needed: false }));
  $('#setup-section').hidden = !s.needed;
  if (!s.needed) return;
  $('#setup-note').textContent = 'The code is valid for ' + fmtDuration(s.expires_in_s) +
    ' more and works once; the password needs 12 to 256 letters, digits or - . _ ~ + /.' +
    (s.locked_s > 0 ? ' Too many wrong codes lately: wait ' + s.locked_s + ' s.' : '');
  $('#setup-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const token = $('#setup-token').value;
    if (token !== $('#setup-token2').value) return say('The two passwords differ.', true);
    const button = $('#setup-submit');
    button.disabled = true;
    try {
      const r = await fetch('/api/setup', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ code: $('#setup-code').value, token }) });
      const answer = await r.json();
      if (!r.ok) return say(answer.error || 'HTTP ' + r.status, true);
      $('#token').value = token;
      sessionStorage.setItem(TOKEN_KEY, token);
      $('#setup-form').hidden = true;
      $('#setup-note').hidden = true;
      say('The admin password is set; this tab uses it for changes.', false);
    } catch (e) {
      say(e.message, true);
    } finally {
      button.disabled = false;
    }
  });
}

async function setup() {
  const token = $('#token');
  token.value = sessionStorage.getItem(TOKEN_KEY) || '';
  token.addEventListener('input', () => sessionStorage.setItem(TOKEN_KEY, token.value));
  try {
    commands = (await getJSON('/api/help')).commands || [];
    // Jobs, roots, relays, the uplink and backfill resets have forms of their own.
    // Only what the web may run: no console-only command, no form naming a file the daemon writes.
    $('#forms').replaceChildren(...commands.filter((c) => c.mutating && !c.console_only && c.web !== false &&
      !c.name.startsWith('jobs ') && !OWN_FORMS.includes(c.name)).map(buildForm));
    setupAuthors();
    setupChart();
    setupAdminCards();
    await setupJobs();
    const keys = (await getJSON('/api/config/list')).config || [];
    $('#config-keys').replaceChildren(...keys.map((k) => el('option', { value: k.key })));
  } catch (e) {
    showResult('cannot list the commands: ' + e.message, true);
  }
  setupCard();
  window.addEventListener('hashchange', showView);
  // Label the cells of every table drawn, whoever drew it.
  let labelling = false;
  new MutationObserver(() => {
    if (labelling) return;
    labelling = true;
    requestAnimationFrame(() => { labelling = false; labelCells(document); });
  }).observe($('main'), { childList: true, subtree: true });
  showView();
  refresh();
}

document.addEventListener('DOMContentLoaded', setup);
