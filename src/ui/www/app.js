// cachebox status page: polls GET /api/status every two seconds and draws
// it; the command list (GET /api/help) decides which optional panels exist
// and which forms are offered, so new commands appear without a page edit.
// Runs offline: no framework, no remote resource.
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
  $('#npub').textContent = st.npub || '';
  const idle = $('#idle');
  idle.textContent = st.idle ? 'idle' : 'working';
  idle.className = 'badge ' + (st.idle ? 'ok' : 'warn');
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
  $('#rss').textContent = fmtBytes(st.rss_bytes);
  $('#rss-text').textContent = 'budget ' + fmtBytes(st.rss_budget_bytes);
  setBar('#rss-bar', st.rss_bytes || 0, st.rss_budget_bytes || 0, true);
  drawUplink(st.uplink, st.inbox || {});
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
    ['lag', fmtDuration(up ? up.oldest_pending_age_s : inbox.oldest_pending_age_s)],
  ];
  if (up && typeof up.forward_rate === 'number') rows.push(['rate', up.forward_rate.toFixed(1) + ' ev/s']);
  if (up && up.last_error) rows.push(['last error', up.last_error]);
  $('#uplink-kv').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
}

function drawRelays(relays) {
  const tbody = $('#relays tbody');
  $('#relay-count').textContent = '(' + relays.length + ')';
  if (relays.length === 0) {
    tbody.replaceChildren(el('tr', {}, el('td', { class: 'empty', colspan: '7', text: 'no relays yet' })));
    return;
  }
  tbody.replaceChildren(...relays.map((r) => el('tr', { 'data-url': r.url },
    el('td', { class: 'url', text: r.url }),
    el('td', { text: r.role || '' }),
    el('td', {}, el('span', { class: 'badge ' + stateClass(r.state), text: r.state })),
    el('td', { class: 'num', text: fmtInt(r.events) }),
    el('td', { text: r.negentropy || '' }),
    el('td', { text: r.health || '' }),
    el('td', { class: 'err', text: r.last_error || '' }))));
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
  target.replaceChildren(el('table', {},
    el('thead', {}, el('tr', {}, ...cols.map((c) => el('th', { class: typeof rows[0][c] === 'number' ? 'num' : '', text: c.replace(/_/g, ' ') })))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...cols.map((c) => cell(r, c)))))));
  return rows;
}

async function drawAuthors() {
  const name = ['follows list', 'follows'].find(hasCommand);
  if (!name) return;
  try {
    const rows = drawTable($('#authors'), await getJSON(apiPath(name)), 'nobody followed yet');
    $('#author-count').textContent = '(' + rows.length + ')';
  } catch (e) {
    $('#authors').replaceChildren(el('p', { class: 'quiet', text: e.message }));
  }
}

async function drawDeadLetters() {
  const name = ['uplink deadletter', 'uplink dead-letter list', 'uplink deadletter list'].find(hasCommand);
  if (!name) return;
  $('#deadletter-section').hidden = false;
  try {
    drawTable($('#deadletters'), await getJSON(apiPath(name)), 'none');
  } catch (e) {
    $('#deadletters').replaceChildren(el('p', { class: 'quiet', text: e.message }));
  }
}

async function refresh() {
  try {
    const st = await getJSON('/api/status');
    drawHeader(st);
    drawCards(st);
    drawRelays(st.relays || []);
    await Promise.all([drawAuthors(), drawDeadLetters(), drawRecovery(st)]);
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

async function submit(ev, cmd) {
  ev.preventDefault();
  const form = ev.target, body = {};
  for (const input of form.querySelectorAll('input[name]'))
    if (input.value !== '') body[input.name] = input.value;
  const button = form.querySelector('button');
  button.disabled = true;
  try {
    const r = await fetch(apiPath(cmd.name), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Authorization': 'Bearer ' + $('#token').value },
      body: JSON.stringify(body),
    });
    const answer = await r.json();
    if (!r.ok) showResult(cmd.name + ': ' + (answer.error || 'HTTP ' + r.status), true);
    else showResult(cmd.name + ': done\n' + JSON.stringify(answer, null, 2), false);
  } catch (e) {
    showResult(cmd.name + ': ' + e.message, true);
  } finally {
    button.disabled = false;
  }
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
    el('div', { class: 'row' }, ...inputs, el('button', { type: 'submit', text: 'Run' })));
  form.addEventListener('submit', (ev) => submit(ev, cmd));
  return form;
}

async function setup() {
  const token = $('#token');
  token.value = sessionStorage.getItem(TOKEN_KEY) || '';
  token.addEventListener('input', () => sessionStorage.setItem(TOKEN_KEY, token.value));
  try {
    commands = (await getJSON('/api/help')).commands || [];
    $('#forms').replaceChildren(...commands.filter((c) => c.mutating && !c.console_only).map(buildForm));
    const keys = (await getJSON('/api/config/list')).config || [];
    $('#config-keys').replaceChildren(...keys.map((k) => el('option', { value: k.key })));
  } catch (e) {
    showResult('cannot list the commands: ' + e.message, true);
  }
  refresh();
}

document.addEventListener('DOMContentLoaded', setup);
