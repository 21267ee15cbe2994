// first_run_check.mjs — the first run in Debian's chromium (through
// playwright-core) against a cacheboxd with no admin token: the setup card
// is shown, a wrong code is refused on the card, two different passwords
// are caught before anything is sent, the code the box showed (read by the
// calling script from the daemon's output) sets the password, a mutating
// form then works with it, the used code no longer does, and a reload no
// longer shows the card. Saves a screenshot of the card.
// Usage: node first_run_check.mjs BASE_URL CODE PASSWORD USER_DATA_DIR SCREENSHOT
// Prints "ok - ..." / "FAIL - ..." lines; exits 1 if anything failed.
import { chromium } from 'playwright-core';

const [base, code, password, userDir, shot] = process.argv.slice(2);
let fails = 0;
const ok = (d) => console.log('ok - ' + d);
const fail = (d) => { fails++; console.log('FAIL - ' + d); };
const check = (d, cond, detail) => (cond ? ok(d) : fail(d + (detail ? ': ' + detail : '')));

async function api(path, init) {
  const r = await fetch(base + path, { cache: 'no-store', ...init });
  return [r.status, await r.json()];
}

// Fill the card and send it; the text the card answers with.
async function submitCard(page, typed, pw, pw2) {
  await page.fill('#setup-code', typed);
  await page.fill('#setup-token', pw);
  await page.fill('#setup-token2', pw2);
  const before = await page.textContent('#setup-result');
  await page.click('#setup-submit');
  await page.waitForFunction((b) => {
    const r = document.querySelector('#setup-result');
    return !r.hidden && r.textContent !== b;
  }, before, { timeout: 10000 });
  return page.textContent('#setup-result');
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
  let setupPosts = 0;
  page.on('request', (r) => { if (r.method() === 'POST' && r.url() === base + '/api/setup') setupPosts++; });

  await page.goto(base + '/', { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('#setup-section', { state: 'visible', timeout: 10000 });
  ok('no admin token: the setup card is shown');
  const note = await page.textContent('#setup-note');
  check(`the card says how long the code lasts (${note})`, /valid for (29m|30m)/.test(note), note);
  check('the page never holds the code', !(await page.content()).includes(code));
  await page.screenshot({ path: shot, fullPage: false });
  ok('screenshot saved to ' + shot);
  await page.setViewportSize({ width: 390, height: 844 });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  check(`at 390 px wide the card causes no sideways scrolling (${wide})`, wide <= 390, String(wide));
  await page.setViewportSize({ width: 1280, height: 900 });

  let said = await submitCard(page, code, password, password + 'x');
  check('two different passwords are caught on the page', said.includes('differ') && setupPosts === 0, said);

  said = await submitCard(page, 'ZZZZZ-ZZZZZ', password, password);
  check('a wrong code is refused on the card', said === 'wrong setup code' &&
    await page.$eval('#setup-result', (e) => e.classList.contains('error')), said);
  check('nothing changed: still no token', (await api('/api/setup'))[1].needed === true);

  said = await submitCard(page, code.toLowerCase(), password, password);
  check('the code the box showed sets the password', said.includes('admin password is set'), said);
  check('the form is gone', await page.isHidden('#setup-form'));
  check('the tab keeps the password as its admin token',
    await page.inputValue('#token') === password &&
    await page.evaluate(() => sessionStorage.getItem('cachebox.token')) === password);

  // A mutating command through the page (its Settings view), with the password just set.
  await page.click('header a[href="#settings"]');
  const form = page.locator('form[data-command="log level"]');
  await form.locator('input[name="level"]').fill('debug');
  await form.locator('button').click();
  await page.waitForFunction(() => /^log level: (done|.*refused|.*token)/.test(
    document.querySelector('form[data-command="log level"] output').textContent), null, { timeout: 10000 });
  const result = await page.textContent('form[data-command="log level"] output');
  const [, lvl] = await api('/api/config/get?key=log.level');
  check('a mutating form works with it', result.includes('log level: done') &&
    lvl.value === 'debug' && lvl.source === 'database', result + ' ' + JSON.stringify(lvl));

  const [st, again] = await api('/api/setup', { method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ code, token: 'another-password-123' }) });
  check(`the used code no longer works (${st})`, st === 409 && /already/.test(again.error), JSON.stringify(again));
  const [, bearer] = await api('/api/log/level', { method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + password },
    body: JSON.stringify({ level: 'info' }) });
  check('the password is the bearer token of the API', bearer.level === 'info', JSON.stringify(bearer));

  const answered = page.waitForResponse((r) => r.url() === base + '/api/setup', { timeout: 10000 });
  await page.reload({ waitUntil: 'domcontentloaded' });
  await answered;
  await page.waitForTimeout(200);
  check('after a reload the card is not shown', await page.isHidden('#setup-section'));

  const unexpected = errors.filter((e) => !/status of 403/.test(e));
  check('no script errors (only the wrong code\'s 403)', unexpected.length === 0, unexpected.join('; '));
} finally {
  await ctx.close();
}
process.exit(fails === 0 ? 0 : 1);
