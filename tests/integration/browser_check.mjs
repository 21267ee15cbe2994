// browser_check.mjs — drives Debian's chromium (through playwright-core,
// no browser download) against a running cacheboxd: the status page must
// show the live values of /api/status, a mutating form must work with the
// admin token (and fail without the right one), and a screenshot is saved.
// The custom jobs card: a preset fills the form, its dry run is shown
// before the job can be created, the job's progress bar reaches 100 %, and
// another job (on a relay that never answers) is cancelled from the table.
// Usage: node browser_check.mjs BASE_URL TOKEN SCREENSHOT USER_DATA_DIR MUTE_RELAY_URL
// Prints "ok - ..." / "FAIL - ..." lines; exits 1 if anything failed.
import { chromium } from 'playwright-core';

const [base, token, shot, userDir, muteRelay] = process.argv.slice(2);
let fails = 0;
const ok = (d) => console.log('ok - ' + d);
const fail = (d) => { fails++; console.log('FAIL - ' + d); };
const check = (d, cond, detail) => (cond ? ok(d) : fail(d + (detail ? ': ' + detail : '')));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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
  const before = await page.textContent('#result').catch(() => '');
  await page.click('#job-create');
  await page.waitForFunction((b) => /job \d+ created/.test(document.querySelector('#result').textContent) &&
    document.querySelector('#result').textContent !== b, before, { timeout: 15000 });
  return Number((await page.textContent('#result')).match(/job (\d+) created/)[1]);
}

async function jobsCard(page) {
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
  await page.fill('#job-form textarea[name="relays"]', muteRelay);
  const stuck = await createFromForm(page);
  const sj = await api_show(stuck);
  check('the form sent what it showed', sj.filter.kinds.join() === '1' && sj.batch_mode === 'none' &&
    sj.relay_mode === 'custom' && sj.relay_list === muteRelay, JSON.stringify(sj));
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
}

async function api_show(id) {
  return api(`/api/jobs/show?job=${id}`);
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
  check('npub shown', await page.textContent('#npub') === st.npub);

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

  if ((await api('/api/help')).commands.some((c) => c.name === 'follows')) {
    [want, got] = await settle(page, 'authors',
      (s) => s.backfill.authors_total, (p) => p.$$eval('#authors tbody tr', (rows) => rows.length));
    check(`per-author table has one row per followed author (${got})`, want === got && got > 0, `page ${got}, status ${want}`);
  } else {
    check('no follows command: the author panel says so', (await page.textContent('#authors')).includes('No per-author'));
  }

  [want, got] = await settle(page, 'events',
    (s) => s.store.events.toLocaleString('en-US'), (p) => p.textContent('#store-events'));
  check(`stored events match /api/status (${got})`, want === got, `page ${got}, status ${want}`);

  const rs = (await api('/api/status')).relay_endpoint;
  check('the relay endpoint section is shown', await page.isVisible('#serve-section'));
  got = await page.textContent('#serve-summary');
  check(`it names the relay's address (${got})`, got.includes(':' + rs.port) && got.includes('read-only'), got);

  check('no script or load errors', errors.length === 0, errors.join('; '));

  // A mutating form: wrong token first (the browser logs its 401), then the right one.
  const form = page.locator('form[data-command="config set"]');
  await form.locator('input[name="key"]').fill('backfill.page_size');
  await form.locator('input[name="value"]').fill('321');
  await page.fill('#token', 'not-the-token');
  await form.locator('button').click();
  await page.waitForFunction(() => !document.querySelector('#result').hidden &&
    document.querySelector('#result').textContent.includes('config set'));
  const refused = await page.textContent('#result');
  check('wrong token: the page shows the refusal', refused.includes('wrong admin token'), refused);
  const before = await api('/api/config/get?key=backfill.page_size');
  check('wrong token: nothing changed', before.value !== '321', before.value);

  await page.fill('#token', token);
  await form.locator('button').click();
  await page.waitForFunction(() => document.querySelector('#result').textContent.includes('done'));
  const after = await api('/api/config/get?key=backfill.page_size');
  check('right token: config set took effect (via the API)', after.value === '321' && after.source === 'database',
    JSON.stringify(after));
  check('token kept in sessionStorage', await page.evaluate(() => sessionStorage.getItem('cachebox.token')) === token);

  errors.length = 0;	// the wrong token's 401 above was logged on purpose
  await jobsCard(page);
  check('no script or load errors after the jobs card', errors.length === 0, errors.join('; '));

  check('no request left the box', foreign.length === 0, foreign.join(' '));
  await page.fill('#token', '');
  await page.evaluate(() => { document.querySelector('#result').hidden = true; });
  await sleep(2200);	// one more refresh so the screenshot shows settled values
  await page.screenshot({ path: shot, fullPage: true });
  ok('screenshot saved to ' + shot);
} finally {
  await ctx.close();
}
process.exit(fails ? 1 : 0);
