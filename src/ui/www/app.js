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

// The box's own relay (relay.listen): who reads it and what it sent.
async function drawServe(st) {
  const r = st.relay_endpoint;
  if (!r) {
    $('#serve-section').hidden = true;
    return;
  }
  $('#serve-section').hidden = false;
  $('#serve-count').textContent = '(' + fmtInt(r.clients) + ' of ' + fmtInt(r.max_clients) + ' clients)';
  $('#serve-summary').textContent = 'ws://' + (r.loopback_only ? r.listen.replace(/:[^:]*$/, '') : location.hostname) + ':' + r.port +
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
  if (!hasCommand('clients') || r.clients === 0) {
    $('#serve-clients').replaceChildren();
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
  const answer = await r.json();
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
    ['requests', fmtInt(a.requests) + ' first requests (each batch then pages on until its relay has nothing older)'],
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
    showResult('jobs new: job ' + answer.job + ' created with ' + answer.batches + ' batches', false);
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

async function jobAction(name, id) {
  try {
    const { ok, answer } = await postCommand(name, { job: String(id) });
    showResult(name + ' ' + id + ': ' + (ok ? 'done' : answer.error || 'refused'), !ok);
    await drawJobs();
  } catch (e) {
    showResult(name + ': ' + e.message, true);
  }
}

function jobRow(j) {
  const pct = j.batches_total > 0 ? 100 * j.batches_done / j.batches_total : (j.status === 'complete' ? 100 : 0);
  const fill = el('div', { class: 'fill' + (pct >= 100 ? ' done' : '') });
  fill.style.width = pct.toFixed(1) + '%';
  const actions = el('td', {});
  const button = (label, action, cls) => {
    const b = el('button', { type: 'button', 'data-action': action, class: cls || '', text: label });
    b.addEventListener('click', () => action === 'details' ? showDetail(j.job) : jobAction('jobs ' + action, j.job));
    actions.append(b);
  };
  if (j.status === 'pending' || j.status === 'running' || j.next_run_at) button('Cancel', 'cancel');
  if (j.status === 'failed' || j.status === 'cancelled') button('Retry', 'retry');
  button('Details', 'details', 'secondary');
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

async function showDetail(id) {
  const box = $('#job-detail');
  detailJob = id;
  try {
    const j = await getJSON(apiPath('jobs show') + '?job=' + id);
    const counts = Object.entries(j.batch_counts || {}).filter(([, n]) => n > 0).map(([k, n]) => n + ' ' + k).join(', ');
    const close = el('button', { type: 'button', class: 'secondary', text: 'Close' });
    close.addEventListener('click', () => { detailJob = null; box.hidden = true; });
    const rows = (j.batches || []).map((b) => el('tr', { 'data-batch': String(b.index) },
      el('td', { class: 'num', text: String(b.index) }),
      el('td', { class: 'url', text: b.relay }),
      el('td', {}, el('span', { class: 'badge ' + jobStateClass(b.status), text: b.status })),
      el('td', { class: 'err', text: b.reason || '' }),
      el('td', { class: 'num', text: String(b.attempts) }),
      el('td', { class: 'num', text: fmtInt(b.pages) }),
      el('td', { class: 'num', text: fmtInt(b.events_fetched) })));
    box.hidden = false;
    box.replaceChildren(
      el('div', { class: 'row' }, el('h3', { text: 'Job ' + j.job + ': ' + j.label + ' — ' + j.status }), close),
      el('p', { class: 'quiet', text: j.summary + ' · ' + counts + (j.every ? ' · every ' + j.every : '') }),
      ...(j.error ? [el('p', { class: 'err', text: j.error })] : []),
      rows.length ? el('table', {},
        el('thead', {}, el('tr', {}, ...['batch', 'relay', 'status', 'reason', 'attempts', 'pages', 'events'].map((h) => el('th', { text: h })))),
        el('tbody', {}, ...rows)) : el('p', { class: 'quiet', text: 'every batch complete' }));
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

async function refresh() {
  try {
    const st = await getJSON('/api/status');
    drawHeader(st);
    drawCards(st);
    drawRelays(st.relays || []);
    await Promise.all([drawAuthors(), drawDeadLetters(), drawRecovery(st), drawServe(st), drawJobs()]);
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
    // Jobs have a card of their own.
    $('#forms').replaceChildren(...commands.filter((c) => c.mutating && !c.console_only &&
      !c.name.startsWith('jobs ')).map(buildForm));
    await setupJobs();
    const keys = (await getJSON('/api/config/list')).config || [];
    $('#config-keys').replaceChildren(...keys.map((k) => el('option', { value: k.key })));
  } catch (e) {
    showResult('cannot list the commands: ' + e.message, true);
  }
  refresh();
}

document.addEventListener('DOMContentLoaded', setup);
