// page_text_check.mjs — one line of the status page in Debian's chromium
// (playwright-core): loads BASE_URL/#VIEW and waits until the text of
// SELECTOR matches the regular expression PATTERN (the page redraws from
// /api/status every 2 s), up to SECONDS.
// Usage: node page_text_check.mjs BASE_URL VIEW SELECTOR PATTERN SECONDS USER_DATA_DIR
// Prints "ok - ..." or "FAIL - ..." with the text last seen; exits 1 on FAIL.
import { chromium } from 'playwright-core';

const [base, view, selector, pattern, seconds, userDir] = process.argv.slice(2);
const ctx = await chromium.launchPersistentContext(userDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
    '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
});
let ok = false, text = '';
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  await page.goto(`${base}/#${view}`, { waitUntil: 'domcontentloaded' });
  ok = await page.waitForFunction(([sel, re]) => new RegExp(re).test(document.querySelector(sel)?.textContent || ''),
    [selector, pattern], { timeout: Number(seconds) * 1000 }).then(() => true, () => false);
  text = await page.textContent(selector).catch((e) => e.message);
} finally {
  await ctx.close();
}
console.log(`${ok ? 'ok' : 'FAIL'} - ${selector} on #${view} reads /${pattern}/ (${text})`);
process.exit(ok ? 0 : 1);
