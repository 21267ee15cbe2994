// browser_check.mjs — drives Debian's chromium (through playwright-core,
// no browser download) against a running cacheboxd: the status page must
// show the live values of /api/status, a mutating form must work with the
// admin token (and fail without the right one), and a screenshot is saved.
// The custom jobs card: a preset fills the form, its dry run is shown
// before the job can be created, the job's progress bar reaches 100 %, and
// another job (on a relay that never answers) is cancelled from the table.
// The author table: named by kind 0 (PROFILE_PK's newest, PROFILE_NAME),
// paged and searched by the daemon; the chart of events stored per minute;
// a relay error before a reconnect shown as past (RELAY_HTTP is kicked);
// roots, relays, uplink and backfill cards answer as text next to their
// form, and resetting everyone's backfill asks first. A dry run says
// "1 first request", warns of a time window without dates, and never of
// kind 1 when no kinds are given; a job's details group its 12 cancelled
// batches in one row; Delete asks first and deletes. No change is offered
// that names a file the daemon writes; Download backup saves the copy
// (to BACKUP_OUT) under the daemon's name. A change without the password
// says so in words, never "Authorization: Bearer". The Summary says what
// the box is doing as the status does. At 390x844 the page must not
// scroll sideways.
// Usage: node browser_check.mjs BASE_URL TOKEN SCREENSHOT USER_DATA_DIR MUTE_RELAY_URL
// (environment: PROFILE_PK, PROFILE_NAME, RELAY_HTTP, BACKUP_OUT)
// Prints "ok - ..." / "FAIL - ..." lines; exits 1 if anything failed.
import { chromium } from 'playwright-core';

const [base, token, shot, userDir, muteRelay] = process.argv.slice(2);
const { PROFILE_PK: profilePk, PROFILE_NAME: profileName, RELAY_HTTP: relayHttp, BACKUP_OUT: backupOut } = process.env;
let fails = 0;
const ok = (d) => console.log('ok - ' + d);
const fail = (d) => { fails++; console.log('FAIL - ' + d); };
const check = (d, cond, detail) => (cond ? ok(d) : fail(d + (detail ? ': ' + detail : '')));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Show one of the page's views (Summary, Relays, Authors, Jobs, Settings)
// by its header link, as a person would.
async function view(page, name) {
  await page.click(`header a[href="#${name}"]`);
  await page.waitForFunction((v) => !document.querySelector('#view-' + v).hidden, name);
}

async function api(path) {
  const r = await fetch(base + path, { cache: 'no-store' });
  return r.json();
}

// Poll until the page shows what /api/status says at that moment (the page
// refreshes every 2 s, so one status may lag; the values settle as the
// backfill ends).
async function settle(page, what, fromStatus, fromPage, seconds = 30) {
  let want, got;
  for (let i = 0; i < seconds * 4; i++) {
    want = fromStatus(await api('/api/status'));
    got = await fromPage(page);
    if (JSON.stringify(want) === JSON.stringify(got)) return [want, got];
    await sleep(250);
  }
  return [want, got];
}

async function post(path, body) {
  const r = await fetch(base + path, { method: 'POST', body: JSON.stringify(body),
    headers: { 'Authorization': 'Bearer ' + token, 'Content-Type': 'application/json' } });
  return r.json();
}

// Create a job from what the form holds: dry run first, then create; the
// job's number from the result line.
async function createFromForm(page) {
  await page.click('#job-dry-run');
  await page.waitForFunction(() => !document.querySelector('#job-dry').hidden &&
    document.querySelector('#job-dry').textContent.includes('Dry run'), null, { timeout: 15000 });
  const before = await page.textContent('#job-result').catch(() => '');
  await page.click('#job-create');
  await page.waitForFunction((b) => /job \d+ created/.test(document.querySelector('#job-result').textContent) &&
    document.querySelector('#job-result').textContent !== b, before, { timeout: 15000 });
  return Number((await page.textContent('#job-result')).match(/job (\d+) created/)[1]);
}

async function jobsCard(page) {
  await view(page, 'jobs');
  await page.fill('#token', token);
  check('the jobs card is shown', await page.isVisible('#jobs-section'));
  const presets = await page.$$eval('#job-presets button', (b) => b.map((x) => x.dataset.preset));
  check(`five preset buttons (${presets.join(', ')})`, presets.length === 5);
  await page.click('#job-presets button[data-preset="relay-lists"]');
  check('the preset fills the form', await page.inputValue('#job-form input[name="kinds"]') === '10002' &&
    await page.inputValue('#job-form select[name="authors_source"]') === 'all' &&
    await page.inputValue('#job-form input[name="label"]') === 'Backfill relay lists');
  check('no job without a dry run', await page.isDisabled('#job-create'));
  await page.click('#job-dry-run');
  await page.waitForFunction(() => !document.querySelector('#job-dry').hidden &&
    document.querySelector('#job-dry').textContent.includes('Dry run'), null, { timeout: 15000 });
  const dry = await page.textContent('#job-dry');
  const api = await post('/api/jobs/dry-run', { preset: 'relay-lists' });	/* the same settings */
  check(`the dry run is shown: ${api.batches} batches, ${api.authors} authors`,
    dry.includes(`batches${api.batches.toLocaleString('en-US')} (authors`) &&
    dry.includes(`authors${api.authors.toLocaleString('en-US')}`), dry);
  check('a dry run enables the job', !(await page.isDisabled('#job-create')));
  await dryRunWords(page);
  await page.click('#job-presets button[data-preset="relay-lists"]');
  await page.click('#job-dry-run');
  await page.waitForFunction(() => !document.querySelector('#job-dry').hidden &&
    document.querySelector('#job-dry').textContent.includes('Dry run'), null, { timeout: 15000 });
  await page.fill('#job-form input[name="batch_size"]', '7');
  check('a change asks for a new dry run', await page.isDisabled('#job-create'));
  await page.fill('#job-form input[name="batch_size"]', '');
  const id = await createFromForm(page);
  ok(`job ${id} created from the preset`);
  const full = await page.waitForFunction((n) => {
    const r = document.querySelector(`#jobs tr[data-job="${n}"]`);
    return r && parseFloat(r.querySelector('.fill').style.width) === 100 &&
      r.dataset.status !== 'running' && r.dataset.status !== 'pending';
  }, id, { timeout: 60000 }).then(() => true, () => false);
  const shown = await page.$eval(`#jobs tr[data-job="${id}"]`, (r) => [r.dataset.status,
    r.querySelector('.fill').style.width, r.children[3].textContent]);
  const job = await api_show(id);
  check(`its progress bar reaches 100 % (${shown.join(' ')})`, full &&
    job.batches_done === job.batches_total && job.batches_total === api.batches &&
    shown[0] === job.status, JSON.stringify(job));

  // Another job, on a relay that accepts requests and never answers.
  await page.evaluate(() => document.querySelector('#job-form').reset());
  await page.fill('#job-form input[name="label"]', 'never answered');
  await page.fill('#job-form input[name="kinds"]', '1');
  await page.selectOption('#job-form select[name="authors_source"]', 'all');
  await page.fill('#job-form input[name="batch_size"]', '1');
  await page.fill('#job-form textarea[name="relays"]', muteRelay);
  const stuck = await createFromForm(page);
  const sj = await api_show(stuck);
  check(`the form sent what it showed (${sj.batches_total} batches)`, sj.filter.kinds.join() === '1' && sj.batch_mode === 'authors' &&
    sj.batch_size === 1 && sj.batches_total > 1 && sj.relay_mode === 'custom' && sj.relay_list === muteRelay, JSON.stringify(sj));
  const running = await page.waitForFunction((n) =>
    document.querySelector(`#jobs tr[data-job="${n}"]`)?.dataset.status === 'running', stuck,
  { timeout: 30000 }).then(() => true, () => false);
  check(`job ${stuck} runs (and waits for its relay)`, running);
  await page.click(`#jobs tr[data-job="${stuck}"] button[data-action="cancel"]`);
  const cancelled = await page.waitForFunction((n) =>
    document.querySelector(`#jobs tr[data-job="${n}"]`)?.dataset.status === 'cancelled', stuck,
  { timeout: 15000 }).then(() => true, () => false);
  check(`cancelled from the table (API: ${(await api_show(stuck)).status})`, cancelled &&
    (await api_show(stuck)).status === 'cancelled');
  await page.click(`#jobs tr[data-job="${stuck}"] button[data-action="details"]`);
  await page.waitForFunction(() => !document.querySelector('#job-detail').hidden &&
    document.querySelector('#job-detail tbody tr'), null, { timeout: 15000 });
  const detail = await page.textContent('#job-detail');
  check('the detail view lists its batches with relay and status',
    detail.includes(muteRelay) && detail.includes('cancelled'), detail);
  const groups = await page.$$eval('#job-detail tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
  check(`its ${sj.batches_total} cancelled batches are one row, not ${sj.batches_total}`, groups.length === 1 &&
    groups[0][0] === String(sj.batches_total) && groups[0][1] === 'cancelled' && groups[0][4] === '0–' + (sj.batches_total - 1),
    JSON.stringify(groups));
  await deleteJob(page, stuck);
}

// The dry run's words: one request is "1 first request"; the "from date
// range" preset without dates warns of it; no kinds warns of every kind,
// never of kind 1.
async function dryRunWords(page) {
  const dry = async () => {
    await page.evaluate(() => { document.querySelector('#job-dry').textContent = ''; });
    await page.click('#job-dry-run');
    await page.waitForFunction(() => document.querySelector('#job-dry').textContent.includes('Dry run'), null, { timeout: 15000 });
    return page.textContent('#job-dry');
  };
  await page.click('#job-presets button[data-preset="profiles-date-range"]');
  let text = await dry();
  check('one request reads "1 first request"', /requests1 first request \(/.test(text), text);
  check('the date-range preset without dates says so', text.includes('since, until: no dates'), text);
  await page.evaluate(() => document.querySelector('#job-form').reset());
  await page.fill('#job-form input[name="since"]', '2020-01-01T00:00');
  text = await dry();
  check('no kinds: warned of every kind, not of kind 1', text.includes('every kind') && !text.includes('kind 1'), text);
}

// Delete from the jobs table: asked first, Keep keeps it, Yes deletes it.
async function deleteJob(page, id) {
  const row = `#jobs tr[data-job="${id}"]`;
  const shown = (sel) => page.waitForSelector(sel, { timeout: 15000 }).then(() => true, () => false);
  await page.click(`${row} button[data-action="delete"]`);
  check('Delete asks first', await shown(`${row} button[data-action="delete-yes"]`));
  await page.click(`${row} button[data-action="delete-no"]`);
  check('Keep keeps the job', await shown(`${row} button[data-action="delete"]`) && (await api_show(id)).job === id);
  await page.click(`${row} button[data-action="delete"]`);
  await shown(`${row} button[data-action="delete-yes"]`);
  await page.click(`${row} button[data-action="delete-yes"]`);
  const gone = await page.waitForFunction((r) => !document.querySelector(r), row, { timeout: 15000 }).then(() => true, () => false);
  const said = await page.textContent('#job-result');
  check(`Yes deletes it (${said})`, gone && said === `job ${id} deleted` && (await api_show(id)).error === 'jobs show: no such job',
    JSON.stringify(await api_show(id)));
}

async function api_show(id) {
  return api(`/api/jobs/show?job=${id}`);
}

const waitFor = (page, fn, arg, timeout = 30000) =>
  page.waitForFunction(fn, arg, { timeout }).then(() => true, () => false);
const rowKeys = (page) => page.$$eval('#authors tr[data-pubkey]', (rows) => rows.map((r) => r.dataset.pubkey));

async function authorTable(page) {
  await view(page, 'authors');
  const total = (await api('/api/status')).backfill.authors_total;
  const named = await waitFor(page, ([pk, name]) =>
    document.querySelector(`#authors tr[data-pubkey="${pk}"] .name`)?.textContent === name,
  [profilePk, profileName], 60000);
  check(`the author whose new kind 0 was published is shown as "${profileName}"`, named,
    await page.$eval(`#authors tr[data-pubkey="${profilePk}"]`, (r) => r.textContent).catch((e) => e.message));
  const others = await waitFor(page, (n) => [...document.querySelectorAll('#authors tr[data-pubkey] .name')]
    .filter((x) => /^author\d+$/.test(x.textContent)).length === n, total - 1, 60000);
  const names = await page.$$eval('#authors tr[data-pubkey] .name', (n) => n.map((x) => x.textContent));
  check(`the others by their dataset names (${names.slice(0, 3).join(', ')}, …)`, others, names.join(', '));
  const history = await waitFor(page, () => [...document.querySelectorAll('#authors tr[data-pubkey] .history')]
    .every((h) => /^history back to \d{4}-\d\d-\d\d$/.test(h.textContent)), null, 60000);
  check('every author shows "history back to <date>"', history,
    (await page.$$eval('#authors .history', (h) => h.map((x) => x.textContent))).join('; '));
  await page.click(`#authors tr[data-pubkey="${profilePk}"] button[data-action="details"]`);
  const detail = await waitFor(page, (pk) => document.querySelector(`#authors tr[data-detail="${pk}"] tbody tr`), profilePk);
  check('its per-relay detail opens', detail);

  // Pages of 10: the daemon pages, in its order.
  await page.selectOption('#authors-limit', '10');
  const want1 = (await api('/api/follows?offset=0&limit=10')).follows.map((f) => f.pubkey);
  const want2 = (await api('/api/follows?offset=10&limit=10')).follows.map((f) => f.pubkey);
  let ok1 = await waitFor(page, (n) => document.querySelectorAll('#authors tr[data-pubkey]').length === n, want1.length);
  const got1 = await rowKeys(page);
  const range1 = await page.textContent('#authors-range');
  await page.click('#authors-next');
  const ok2 = await waitFor(page, (first) => document.querySelector('#authors tr[data-pubkey]')?.dataset.pubkey === first, want2[0]);
  const got2 = await rowKeys(page);
  const range2 = await page.textContent('#authors-range');
  check(`paging: "${range1}" then "${range2}", rows as the API pages them`, ok1 && ok2 &&
    JSON.stringify(got1) === JSON.stringify(want1) && JSON.stringify(got2) === JSON.stringify(want2) &&
    range1 === `1–10 of ${total}` && range2 === `11–${total} of ${total}` && await page.isDisabled('#authors-next'),
  `${got1.length}+${got2.length} rows, total ${total}`);

  // Search: part of a name, an npub prefix, nothing.
  await page.fill('#author-q', profileName.slice(0, 10).toLowerCase());
  ok1 = await waitFor(page, (pk) => {
    const rows = document.querySelectorAll('#authors tr[data-pubkey]');
    return rows.length === 1 && rows[0].dataset.pubkey === pk;
  }, profilePk);
  check(`search "${profileName.slice(0, 10).toLowerCase()}" finds just that author`, ok1, (await rowKeys(page)).join(' '));
  const other = (await api('/api/follows?offset=3&limit=1')).follows[0];
  await page.fill('#author-q', other.npub.slice(0, 14));
  ok1 = await waitFor(page, (pk) => [...document.querySelectorAll('#authors tr[data-pubkey]')].some((r) => r.dataset.pubkey === pk), other.pubkey);
  const byNpub = (await api('/api/follows?q=' + other.npub.slice(0, 14))).follows.map((f) => f.pubkey);
  check(`search by npub prefix ${other.npub.slice(0, 14)}`, ok1 && JSON.stringify(await rowKeys(page)) === JSON.stringify(byNpub));
  await page.fill('#author-q', 'nobody-has-this-name');
  ok1 = await waitFor(page, () => document.querySelector('#authors tbody').textContent.includes('no followed author matches'));
  check('a search that matches nobody says so', ok1);
  await page.fill('#author-q', '');
  await page.selectOption('#authors-limit', '25');
  await waitFor(page, (n) => document.querySelectorAll('#authors tr[data-pubkey]').length === n, total);
}

async function chart(page) {
  await view(page, 'summary');
  check('the chart section is shown', await page.isVisible('#chart-section'));
  await page.click('#chart-range button[data-range="6h"]');
  const drawn = await waitFor(page, () => Number(document.querySelector('#chart').dataset.total) > 0);
  const m = await api('/api/ingest/minutes');
  const total = m.minutes.reduce((a, b) => a + b, 0);
  const shown = await page.$eval('#chart', (c) => Number(c.dataset.total));
  const inked = await page.$eval('#chart', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
    return n;
  });
  check(`the chart draws ${shown} events stored (API: ${total} in ${m.minutes.length} minutes), ${inked} pixels`,
    drawn && shown > 0 && shown <= total && m.minutes.length === 360 && inked > 500);
  check('the ingest rate is shown', /\d+\.\d events\/s now/.test(await page.textContent('#ingest-rate')),
    await page.textContent('#ingest-rate'));
}

async function relayErrorPast(page) {
  await view(page, 'relays');
  const url = relayHttp.replace(/^http/, 'ws');
  await waitFor(page, (u) => document.querySelector(`#relays tr[data-url="${u}"]`)?.children[2].textContent === 'open', url);
  await fetch(relayHttp + '/kick', { method: 'POST' });
  const past = await waitFor(page, (u) => {
    const td = document.querySelector(`#relays tr[data-url="${u}"] td[data-error]`);
    return td && td.dataset.error === 'past' && td.textContent.includes('before the last open');
  }, url, 60000);
  const r = (await api('/api/status')).relays.find((x) => x.url === url);
  check(`a relay error before the reconnect reads as past (${r.last_error}, at ${r.last_error_at}, open ${r.last_open_at})`,
    past && r.last_error_at <= r.last_open_at && r.state === 'open', JSON.stringify(r));
}

async function adminCards(page) {
  await view(page, 'settings');
  await page.fill('#token', token);
  // Roots: listed with the name, added and removed with the name in the answer.
  const rootsShown = await waitFor(page, () => /author0/.test(document.querySelector('#roots-list').textContent));
  check('the root is listed by name', rootsShown, await page.textContent('#roots-list'));
  const npub = (await api('/api/follows?q=' + profilePk)).follows[0].npub;
  await page.fill('#root-add input[name="key"]', npub);
  await page.click('#root-add button');
  let ok1 = await waitFor(page, (n) => document.querySelector('#roots-result').textContent.startsWith('added ' + n), profileName);
  check('adding a root answers with its name', ok1, await page.textContent('#roots-result'));
  await page.click(`#roots-list li[data-npub="${npub}"] button`);
  ok1 = await waitFor(page, () => document.querySelector('#roots-result').textContent.startsWith('removed'));
  check('a root is removed from its list', ok1 && !(await api('/api/roots/list')).roots.some((r) => r.npub === npub),
    await page.textContent('#roots-result'));

  // Relays: added with a role, shown with it in the table.
  await view(page, 'relays');
  const spare = 'ws://127.0.0.1:9';
  await page.fill('#relay-add input[name="url"]', spare);
  await page.selectOption('#relay-add select[name="role"]', 'custom');
  await page.click('#relay-add button');
  ok1 = await waitFor(page, (u) => document.querySelector('#relay-result').textContent.startsWith('added ' + u + ' as custom') &&
    document.querySelector(`#relays tr[data-url="${u}"] select`)?.value === 'custom', spare);
  check('a relay is added from its form with its role, the answer as text', ok1, await page.textContent('#relay-result') +
    ' ' + JSON.stringify((await api('/api/status')).relays.map((r) => [r.url, r.role])) +
    ' ' + await page.$$eval('#relays tr[data-url]', (rows) => rows.map((r) => r.dataset.url + ' ' + r.children[1].innerHTML).join(' | ')));

  // Backup: no form naming a file the daemon writes; the download saves a copy.
  await view(page, 'settings');
  check('no form for backup to a file on the page (the other forms are)', await page.locator('form[data-command="backup"]').count() === 0 &&
    await page.locator('form[data-command="config set"]').count() === 1);
  check('the backup card is shown', await page.isVisible('#backup-card'));
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click('#backup-download')]);
  await download.saveAs(backupOut);
  const name = download.suggestedFilename();
  check(`Download backup saves the copy under the daemon's name (${name})`, /^cachebox-backup-\d{8}-\d{6}\.db$/.test(name));
  const said = await waitFor(page, () => document.querySelector('#backup-result').textContent.startsWith('the copy is ready'));
  check('and says so in words', said, await page.textContent('#backup-result'));

  // Uplink: none configured, said in words.
  await page.click('#uplink-check');
  ok1 = await waitFor(page, () => document.querySelector('#uplink-result').textContent.startsWith('no uplink configured'));
  check('the uplink test says there is none', ok1, await page.textContent('#uplink-result'));

  // Everyone's backfill: nothing happens before the confirmation (the
  // drained author's cursors stay where they are).
  const cursors = async () => JSON.stringify((await api('/api/follows?author=' + profilePk)).follows[0].relays
    .map((r) => [r.url, r.state, r.until]));
  const before = await cursors();
  await page.click('#reset-all');
  check('resetting everyone asks for confirmation first', await page.isVisible('#reset-confirm') &&
    await page.isVisible('#reset-all-yes'));
  await page.click('#reset-all-no');
  const still = await cursors();
  check('cancel resets nothing', !(await page.isVisible('#reset-confirm')) && still === before &&
    (await page.textContent('#backfill-result')).includes('nothing was reset'), before + ' then ' + still);
  await page.click('#reset-all');
  await page.click('#reset-all-yes');
  ok1 = await waitFor(page, () => /^reset \d+ relay cursors/.test(document.querySelector('#backfill-result').textContent));
  check('confirmed, the reset runs and answers in words', ok1, await page.textContent('#backfill-result'));
}

async function noSideways(page, where) {
  const [sw, cw] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  check(`${where}: no horizontal overflow (scrollWidth ${sw} <= clientWidth ${cw})`, sw <= cw);
}

const ctx = await chromium.launchPersistentContext(userDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
    '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
});
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  // Anything not from the box itself would mean the page is not offline-safe.
  const foreign = [];
  page.on('request', (r) => { if (!r.url().startsWith(base)) foreign.push(r.url()); });

  await page.goto(base + '/', { waitUntil: 'domcontentloaded' });
  const st = await api('/api/status');
  await page.waitForFunction(() => document.querySelector('#version').textContent !== '…', null, { timeout: 10000 });
  check('version shown', await page.textContent('#version') === st.version);
  check('npub shown', await page.$eval('#npub', (e) => e.dataset.npub) === st.npub);

  // Wait for the backfill to reach the page: some authors, some relays.
  let [want, got] = await settle(page, 'progress',
    (s) => (s.backfill.authors_total > 0 ? `${s.backfill.authors_complete.toLocaleString('en-US')} / ${s.backfill.authors_total.toLocaleString('en-US')}` : 'none yet'),
    (p) => p.textContent('#progress-text'), 60);
  check(`progress text matches /api/status (${got})`, want === got, `page ${got}, status ${want}`);
  [want, got] = await settle(page, 'bar',
    (s) => Math.round(1000 * s.backfill.authors_complete / s.backfill.authors_total) / 10,
    async (p) => Math.round(10 * parseFloat(await p.$eval('#progress-bar', (e) => e.style.width))) / 10);
  check(`progress bar width ${got}% follows the counts`, want === got, `want ${want}%`);

  [want, got] = await settle(page, 'relays',
    (s) => s.relays.map((r) => [r.url, r.state, r.events.toLocaleString('en-US')]),
    (p) => p.$$eval('#relays tbody tr[data-url]', (rows) => rows.map((r) =>
      [r.children[0].textContent, r.children[2].textContent, r.children[3].textContent])));
  check(`relay table rows match /api/status (${got.length} relays)`, JSON.stringify(want) === JSON.stringify(got) && got.length > 0,
    `page ${JSON.stringify(got)} status ${JSON.stringify(want)}`);

  await view(page, 'authors');
  [want, got] = await settle(page, 'authors',
    (s) => s.backfill.authors_total, (p) => p.$$eval('#authors tr[data-pubkey]', (rows) => rows.length));
  check(`per-author table has one row per followed author (${got})`, want === got && got > 0, `page ${got}, status ${want}`);
  check('no placeholder reads like an answer', !(await page.textContent('body')).includes('in this version'));

  await view(page, 'summary');
  [want, got] = await settle(page, 'events',
    (s) => s.store.events.toLocaleString('en-US'), (p) => p.textContent('#store-events'));
  check(`stored events match /api/status (${got})`, want === got, `page ${got}, status ${want}`);

  [want, got] = await settle(page, 'activity',
    (s) => s.idle ? 'idle' : (s.recovery || {}).waiting ? 'waiting' : 'working',
    (p) => p.$eval('#activity', (e) => e.dataset.state).catch(() => 'no #activity'));
  const activity = await page.textContent('#activity', { timeout: 1000 }).catch(() => '');
  check(`the Summary says what the box is doing as the status does (${activity})`, want === got &&
    activity.startsWith(got === 'idle' ? 'Idle' : 'W'), `page ${got}, status ${want}`);

  const rs = (await api('/api/status')).relay_endpoint;
  check('the relay endpoint section is shown', await page.isVisible('#serve-section'));
  got = await page.textContent('#serve-summary');
  check(`it names the relay's address (${got})`, got.includes(':' + rs.port) && got.includes('read-only'), got);

  check('no script or load errors', errors.length === 0, errors.join('; '));

  // A mutating form: wrong token first (the browser logs its 401), then the right one.
  await view(page, 'settings');
  const form = page.locator('form[data-command="config set"]');
  await form.locator('input[name="key"]').fill('backfill.page_size');
  await form.locator('input[name="value"]').fill('321');
  await page.fill('#token', 'not-the-token');
  await form.locator('button').click();
  const out = form.locator('output');
  await page.waitForFunction(() => document.querySelector('form[data-command="config set"] output').textContent.includes('config set:'));
  const refused = await out.textContent();
  check('wrong token: the page shows the refusal', refused.includes('wrong admin password'), refused);
  const before = await api('/api/config/get?key=backfill.page_size');
  check('wrong token: nothing changed', before.value !== '321', before.value);

  await page.fill('#token', token);
  await form.locator('button').click();
  await page.waitForFunction(() => document.querySelector('form[data-command="config set"] output').textContent.includes('done'));
  const after = await api('/api/config/get?key=backfill.page_size');
  check('right token: config set took effect (via the API)', after.value === '321' && after.source === 'database',
    JSON.stringify(after));
  const said = await out.textContent();
  check(`the result is text next to the form (${said})`, said === 'config set: done, backfill.page_size = 321 (from the database)', said);
  check('token kept in sessionStorage', await page.evaluate(() => sessionStorage.getItem('cachebox.token')) === token);

  await page.fill('#token', '');
  await form.locator('button').click();
  await page.waitForFunction(() => document.querySelector('form[data-command="config set"] output').textContent.includes('admin password'));
  const missing = await out.textContent();
  check(`no password: the page says so in words (${missing})`, missing.includes('this change needs the admin password: type it') &&
    !/Authorization|Bearer|token/.test(missing), missing);
  await page.fill('#token', token);
  check('the field is called the admin password', /admin password/.test(await page.textContent('#token-bar')) &&
    !/admin token/.test(await page.textContent('#token-bar')), await page.textContent('#token-bar'));
  errors.length = 0;	// the wrong and missing passwords' 401 above were logged on purpose
  await authorTable(page);
  await chart(page);
  await relayErrorPast(page);
  await jobsCard(page);
  check('no script or load errors after the jobs card', errors.length === 0, errors.join('; '));
  await adminCards(page);
  check('no script or load errors after the admin cards', errors.length === 0, errors.join('; '));

  check('no request left the box', foreign.length === 0, foreign.join(' '));
  await page.fill('#token', '');
  await page.evaluate(() => { document.querySelector('#result').hidden = true; });
  await sleep(2200);	// one more refresh so the screenshot shows settled values
  await page.screenshot({ path: shot, fullPage: true });
  ok('screenshot saved to ' + shot);
  await noSideways(page, '1280 wide');

  // A phone: 390 px wide, everything loaded, an author's detail open.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload({ waitUntil: 'domcontentloaded' });
  await view(page, 'authors');
  await waitFor(page, () => document.querySelectorAll('#authors tr[data-pubkey]').length > 0 &&
    document.querySelectorAll('#relays tr[data-url]').length > 0 && !document.querySelector('#jobs-section').hidden);
  await page.click('#authors tr[data-pubkey] button[data-action="details"]');
  await waitFor(page, () => document.querySelector('#authors tr.detail-row'));
  await sleep(2200);
  await noSideways(page, '390x844');
  const wide = await page.evaluate(() => [...document.querySelectorAll('body *')].filter((e) =>
    e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !e.closest('.scroll'))
    .slice(0, 5).map((e) => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className));
  check('390x844: nothing outside a scrolling box reaches past the screen', wide.length === 0, wide.join(' '));
  const phone = shot.replace(/\.png$/, '-390.png');
  await page.screenshot({ path: phone, fullPage: true });
  ok('screenshot saved to ' + phone);
} finally {
  await ctx.close();
}
process.exit(fails ? 1 : 0);
