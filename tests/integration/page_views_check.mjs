// page_views_check.mjs — each view of the status page at 390x844 and
// 1280x900 in Debian's chromium (playwright-core, no browser download):
// reached by its header link; no horizontal overflow of the page or of
// any box in it (a table cut on the right is a box wider than it shows);
// no relay URL nor any word of a table cell or of a button broken over
// lines (a root with no profile name beside its Remove button); the
// summary about one screen tall at 1280 and saying what the box is doing
// as the status does; every control (button, input, select,
// textarea, link) of the view inside the screen's width, at least 16 px
// in each direction, and the element found at its centre once scrolled
// to (nothing covers it). The summary's chart of 24 hours must draw the
// events stored before the daemon's restart and say the uptime the header
// says. A screenshot of each view at each width.
// Usage: node page_views_check.mjs BASE_URL TOKEN SHOT_DIR USER_DATA_DIR STORED_BEFORE
// Prints "ok - ..." / "FAIL - ..." lines; exits 1 if anything failed.
import { chromium } from 'playwright-core';

const [base, token, shotDir, userDir, storedBefore] = process.argv.slice(2);
let fails = 0;
const ok = (d) => console.log('ok - ' + d);
const fail = (d) => { fails++; console.log('FAIL - ' + d); };
const check = (d, cond, detail) => (cond ? ok(d) : fail(d + (detail ? ': ' + detail : '')));
const VIEWS = ['summary', 'relays', 'authors', 'jobs', 'settings'];
// What each view must have drawn before it is judged.
const READY = {
  summary: () => Number(document.querySelector('#chart')?.dataset.total) > 0 &&
    document.querySelector('#store-events').textContent !== '–',
  relays: () => document.querySelectorAll('#relays tr[data-url]').length > 0,
  authors: () => document.querySelectorAll('#authors tr[data-pubkey]').length > 1,
  jobs: () => document.querySelectorAll('#job-presets button').length > 0 &&
    document.querySelector('#jobs tr[data-job]') !== null,
  settings: () => document.querySelectorAll('#roots-list li').length > 0 &&
    document.querySelectorAll('#forms form').length > 0,
};

// The judgement of what is on screen, run in the page.
function judge() {
  const vw = document.documentElement.clientWidth;
  const shown = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : '') +
    (e.textContent ? ' "' + e.textContent.trim().slice(0, 24) + '"' : '');
  const out = { pageWide: document.documentElement.scrollWidth > vw, boxes: [], urls: [], urlsSeen: 0 };
  for (const e of document.querySelectorAll('body *')) {
    if (!shown(e)) continue;
    const cs = getComputedStyle(e);
    if ((cs.overflowX === 'auto' || cs.overflowX === 'scroll' || cs.overflowX === 'hidden') && e.scrollWidth > e.clientWidth + 1 && e.tagName !== 'CANVAS')
      out.boxes.push(name(e) + ' ' + e.scrollWidth + '>' + e.clientWidth);
  }
  // Every text node holding a relay URL: its characters on one line.
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const m = n.textContent.match(/wss?:\/\/[^\s,;)]+/);
    if (!m || !shown(n.parentElement)) continue;
    out.urlsSeen++;
    const range = document.createRange();
    range.setStart(n, m.index);
    range.setEnd(n, m.index + m[0].length);
    const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
    if (tops.size > 1) out.urls.push(m[0] + ' on ' + tops.size + ' lines in ' + name(n.parentElement));
  }
  // Every word of a table cell (a name, a number, an npub) or of a button
  // ("Remove") on one line.
  out.words = [];
  for (const td of document.querySelectorAll('td, button')) {
    if (!shown(td)) continue;
    const tw = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n = tw.nextNode(); n; n = tw.nextNode()) {
      for (const m of n.textContent.matchAll(/\S{2,}/g)) {
        const range = document.createRange();
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) out.words.push(m[0] + ' in ' + name(n.parentElement));
      }
    }
  }
  out.height = document.documentElement.scrollHeight;
  return out;
}

async function controls(page, view) {
  const sel = `#view-${view} button, #view-${view} input, #view-${view} select, #view-${view} textarea, #view-${view} a, header a, header button`;
  const n = await page.$$eval(sel, (els) => els.length);
  const bad = [];
  let seen = 0;
  for (let i = 0; i < n; i++) {
    const h = (await page.$$(sel))[i];
    const r = await h.evaluate((e) => {
      const shown = e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden' && e.type !== 'hidden';
      if (!shown) return null;
      e.scrollIntoView({ block: 'center', inline: 'nearest' });
      const b = e.getBoundingClientRect(), vw = document.documentElement.clientWidth;
      const at = document.elementFromPoint(Math.min(b.left + b.width / 2, vw - 1), b.top + b.height / 2);
      const label = e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.name ? '[' + e.name + ']' : '') +
        ' "' + (e.textContent || e.placeholder || '').trim().slice(0, 20) + '"';
      const why = [];
      if (b.left < -1 || b.right > vw + 1) why.push(`past the screen (${Math.round(b.left)}..${Math.round(b.right)} of ${vw})`);
      if (b.width < 16 || b.height < 16) why.push(`too small (${Math.round(b.width)}x${Math.round(b.height)})`);
      if (!(at === e || e.contains(at) || (at && at.closest('label') && at.closest('label').contains(e)))) why.push('covered by ' + (at ? at.tagName.toLowerCase() + (at.id ? '#' + at.id : '') : 'nothing'));
      return { label, why };
    });
    if (r === null) continue;
    seen++;
    if (r.why.length) bad.push(r.label + ': ' + r.why.join(', '));
  }
  return { seen, bad };
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
  await page.goto(base + '/', { waitUntil: 'domcontentloaded' });
  await page.evaluate((t) => sessionStorage.setItem('cachebox.token', t), token);

  for (const [w, h] of [[1280, 900], [390, 844]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.goto(base + '/', { waitUntil: 'domcontentloaded' });
    for (const view of VIEWS) {
      const where = `${w}px ${view}`;
      const link = page.locator(`header a[href="#${view}"]`);
      // Without its link (an older page), the view is judged by its address.
      if (await link.count() !== 1) {
        fail(`${where}: a header link to #${view}`);
        await page.goto(`${base}/#${view}`, { waitUntil: 'domcontentloaded' });
      } else
        await link.click();
      const ready = await page.waitForFunction(READY[view], null, { timeout: 20000 }).then(() => true, () => false);
      check(`${where}: the view is shown from its header link and drawn`, ready &&
        await page.evaluate((v) => location.hash === '#' + v, view));
      const others = await page.$$eval('.view', (vs, v) => vs.filter((e) => e.dataset.view !== v && !e.hidden).map((e) => e.id), view);
      check(`${where}: no other view is shown`, others.length === 0, others.join(' '));
      await page.waitForTimeout(2300);	// one more refresh: settled values
      const j = await page.evaluate(judge);
      check(`${where}: no horizontal overflow of the page`, !j.pageWide);
      check(`${where}: no box wider than it shows`, j.boxes.length === 0, j.boxes.slice(0, 4).join('; '));
      check(`${where}: no relay URL broken over lines (${j.urlsSeen} seen)`, j.urls.length === 0, j.urls.slice(0, 3).join('; '));
      check(`${where}: no word of a table cell or a button broken over lines`, j.words.length === 0, j.words.slice(0, 4).join('; '));
      if (view === 'summary' && w === 1280)
        check(`${where}: the summary fits about one screen (${j.height} px tall)`, j.height <= 1300);
      if (view === 'summary') {
        // The page refreshes on its own; the status may change between a
        // refresh and our fetch, so wait (a few refreshes at most) for one
        // moment where the page says what the status says.
        const agree = await page.waitForFunction(async () => {
          const st = await (await fetch('/api/status')).json();
          const a = document.querySelector('#activity');
          const want = st.idle ? 'idle' : (st.recovery || {}).waiting ? 'waiting' : 'working';
          return a !== null && a.dataset.state === want && a.textContent.startsWith(st.idle ? 'Idle' : 'W');
        }, null, { timeout: 15000, polling: 500 }).then(() => true, () => false);
        const [said, state] = await page.evaluate(() => [document.querySelector('#activity')?.textContent,
          document.querySelector('#activity')?.dataset.state]);
        check(`${where}: the summary says what the box is doing as the status does (${said})`, agree, `${state} ${said}`);
      }
      const c = await controls(page, view);
      check(`${where}: every control reachable (${c.seen} controls)`, c.bad.length === 0 && c.seen > 0, c.bad.slice(0, 4).join('; '));
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.waitForTimeout(300);
      await page.screenshot({ path: `${shotDir}/page-${view}-${w}.png` });
      if (view === 'summary') {
        if (w === 1280 && await page.locator('#chart-range button[data-range="24h"]').count() === 1) {
          await page.click('#chart-range button[data-range="24h"]');
          await page.waitForFunction(() => document.querySelector('#chart').dataset.range === '24h');
          await page.waitForTimeout(2300);
        }
        const [total, st, note, up] = await page.evaluate(async () => [Number(document.querySelector('#chart').dataset.total),
          await (await fetch('/api/status')).json(), document.querySelector('#chart-note').textContent,
          document.querySelector('#uptime').textContent]);
        check(`${where}: the 24 h chart draws the ${storedBefore} events stored before the restart (${total}; since start: ${st.ingest.stored})`,
          total === Number(storedBefore) && st.ingest.stored === 0);
        check(`${where}: the chart's words say the uptime the header says (${up}: ${note})`, note.includes('up ' + up), note);
      }
    }
  }
  check('no script or load errors', errors.length === 0, errors.join('; '));
} finally {
  await ctx.close();
}
process.exit(fails ? 1 : 0);
