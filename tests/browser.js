// browser.js - shared by the browser tests: Debian's Chromium driven by
// playwright-core (no downloaded browsers), pages served by scripts/serve.js
// with the strict Content-Security-Policy.
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { PAGE_FILES, serve } from '../scripts/serve.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const OUTPUT = fileURLToPath(new URL('./output/', import.meta.url));

/**
 * Starts a server on a free port and a headless Chromium. Without `dir` it
 * serves what npm start serves plus the test pages in tests/pages/.
 */
export async function start({ dir } = {}) {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  }
  mkdirSync(OUTPUT, { recursive: true });
  const server = await serve({ port: 0, ...(dir ? { dir } : { only: [...PAGE_FILES, '/tests/pages/'] }) });
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
