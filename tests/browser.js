// browser.js - shared by the browser tests: Debian's Chromium driven by
// playwright-core (no downloaded browsers), pages served by scripts/serve.js
// with the strict Content-Security-Policy; waiting for an explorer to settle,
// reading what it shows, and axe-core runs.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { PAGE_FILES, serve } from '../scripts/serve.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const OUTPUT = fileURLToPath(new URL('./output/', import.meta.url));

/**
 * Starts a server on a free port and a headless Chromium. Without `dir` it
 * serves what npm start serves plus the test pages in tests/pages/;
 * `isolate` makes its pages cross-origin isolated (scripts/serve.js).
 */
export async function start({ dir, isolate = false } = {}) {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  }
  mkdirSync(OUTPUT, { recursive: true });
  const server = await serve({ port: 0, isolate, ...(dir ? { dir } : { only: [...PAGE_FILES, '/tests/pages/'] }) });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base,
    browser,
    async page(options = {}) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
      const page = await context.newPage();
      const problems = [];
      page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
      page.on('console', (msg) => {
        // Failed loads are reported with their URL by the response handler below.
        if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) problems.push(`console error: ${msg.text()}`);
      });
      page.on('response', (res) => {
        // Browsers ask for /favicon.ico on their own; a page without one is fine.
        if (res.status() >= 400 && !res.url().endsWith('/favicon.ico')) problems.push(`HTTP ${res.status()}: ${res.url()}`);
      });
      page.on('dialog', (d) => {
        problems.push(`dialog: ${d.message()}`);
        d.dismiss();
      });
      return { page, problems, context };
    },
    async close() {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// ---- the explorer in a page -------------------------------------------------

/** The explorer's tag, the selector of the one on index.html. */
export const EXPLORER = 'attention-explorer';

/**
 * Waits until every element matching `host` has computed and rendered (it
 * has a state and a section), then for a frame: an update is one microtask
 * after a change, so a change made before the call is on screen after it.
 */
/**
 * A page (tests/pages/model.html, which loads the explorer and the model)
 * whose one explorer is replaced by `<attention-explorer ${attrs}>`; the
 * caller waits for what it needs drawn.
 */
export async function openWith(env, attrs, pageOptions) {
  const { page, problems, context } = await env.page(pageOptions);
  await page.goto(`${env.base}/tests/pages/model.html`);
  await page.evaluate((a) => {
    const main = document.querySelector('main');
    main.querySelector('attention-explorer').remove();
    const tmp = document.createElement('div');
    tmp.innerHTML = `<attention-explorer ${a}></attention-explorer>`;
    main.append(tmp.firstElementChild);
  }, attrs);
  return { page, problems, context };
}

export async function settled(page, host = EXPLORER) {
  await page.waitForFunction((sel) => {
    const els = [...document.querySelectorAll(sel)];
    return els.length > 0 && els.every((el) => el.state && el.shadowRoot.querySelector('section.step'));
  }, host);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
}

/** The text of every number cell of one table, row by row. */
export const cellTexts = (page, id, host = EXPLORER) => page.$$eval(`${host} table[data-id="${id}"] tbody tr`, (rows) =>
  rows.map((r) => [...r.querySelectorAll('td[data-i]')].map((td) => td.textContent)));

/** The popover's formula, whether it is hidden, and the text of its figure of operands. */
export const popover = (page, host = EXPLORER) => page.$eval(host, (el) => {
  const p = el.shadowRoot.querySelector('.popover');
  return { text: (p.querySelector('.formula') ?? p).textContent, hidden: p.hidden, figure: p.querySelector('.figure')?.textContent ?? '' };
});

/** The title of a saved SVG: its 16 px lines joined (it wraps to the picture's width). */
export const svgTitle = (svg) => [...svg.matchAll(/font-size="16" fill="#000">([^<]*)</g)].map((m) => m[1]).join(' ');

/** Records Content-Security-Policy violations from the first script on; cspViolations reads them. */
export async function watchCSP(page) {
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective}: ${e.blockedURI}`));
  });
}

export const cspViolations = (page) => page.evaluate(() => window.__violations);

let axe;
/**
 * axe-core's serious and critical violations on the page, one line each.
 * axe is injected as a script, which the page's own CSP rightly refuses:
 * open the page with `bypassCSP: true`.
 */
export async function axeViolations(page) {
  axe ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.addScriptTag({ content: axe });
  return page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  });
}
