#!/usr/bin/env node
// docs-images.js - makes the README's pictures in docs/ from the page as it
// is: docs/train.png, the Train part after 128 steps toward a painted
// "previous token" target, with the lines view and weights it moved; and
// docs/model-view.png, the shipped model's heads on the README's sentence
// after Repeat; and docs/explorer-english.png, the trained English encoder on
// the handbook's sentence with "sat" masked. Needs Chromium (as the browser tests do):
// node scripts/docs-images.js
import { fileURLToPath } from 'node:url';

import { EXPLORER as E, settled, start } from '../tests/browser.js';

const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));
const STEPS = 128;

const only = process.argv.slice(2);
const wanted = (name) => only.length === 0 || only.includes(name);

const env = await start();
try {
  if (wanted('explorer')) await explorerView(env);
  if (wanted('train')) await trainView(env);
  if (wanted('model-view')) await modelView(env);
  if (wanted('explorer-english')) await englishView(env);
} finally {
  await env.close();
}

// The page as a learner first sees it: the toolbar, the lines view and the
// weights of "the cat sat there", at a laptop's width.
async function explorerView(env) {
  const { page, problems, context } = await env.page({ viewport: { width: 1100, height: 900 }, colorScheme: 'light', reducedMotion: 'reduce' });
  await page.goto(`${env.base}/`);
  await settled(page);
  await page.mouse.move(0, 0);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const clip = await page.$eval(E, (el) => {
    const host = el.getBoundingClientRect(), lead = el.shadowRoot.querySelector('section.lead').getBoundingClientRect();
    return { x: host.left + window.scrollX, y: host.top + window.scrollY, width: host.width, height: lead.bottom - host.top + 8 };
  });
  await page.screenshot({ path: `${DOCS}explorer.png`, clip, fullPage: true });
  if (problems.length) throw new Error(problems.join('\n'));
  await context.close();
  console.log(`wrote ${DOCS}explorer.png`);
}

async function trainView(env) {
  const { page, problems, context } = await env.page({ viewport: { width: 1288, height: 1100 }, colorScheme: 'light', reducedMotion: 'reduce' });
  await page.goto(`${env.base}/?tokens=the+cat+sat+on+the+mat&seed=7&train=1`);
  await settled(page);
  await page.$eval(E, (el) => { el.show = 'lines weights'; });
  await settled(page);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.train-target td[data-i]'), E);
  await page.locator(`${E} .train select[aria-label="target"]`).selectOption('paint');
  for (let i = 0; i < 6; i++) await page.locator(`${E} .train-target td[data-i="${i}"][data-j="${Math.max(i - 1, 0)}"]`).click();
  await page.evaluate(([sel, n]) => {
    const step = [...document.querySelector(sel).shadowRoot.querySelectorAll('.train button')].find((b) => b.textContent === 'Step');
    for (let s = 0; s < n; s++) step.click();
  }, [E, STEPS]);
  await settled(page);
  await page.mouse.move(0, 0);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  // From the toolbar down to the end of the weights (the steps after them are not the point).
  const clip = await page.$eval(E, (el) => {
    const host = el.getBoundingClientRect(), lead = el.shadowRoot.querySelector('section.lead').getBoundingClientRect();
    return { x: host.left + window.scrollX, y: host.top + window.scrollY, width: host.width, height: lead.bottom - host.top + 8 };
  });
  await page.screenshot({ path: `${DOCS}train.png`, clip, fullPage: true });
  if (problems.length) throw new Error(problems.join('\n'));
  await context.close();
  console.log(`wrote ${DOCS}train.png`);
}

// The README's model embed at a 720 px tutorial column, after Repeat, its
// strongest induction head chosen (the default).
async function modelView(env) {
  const { page, problems, context } = await env.page({ viewport: { width: 720, height: 1100 }, colorScheme: 'light', reducedMotion: 'reduce' });
  await page.goto(`${env.base}/?tokens=the+cat+sat+on+the+mat+with+my+friend&model=induction`);
  await settled(page);
  // The README's embed: its parts and controls (the page's URL sets neither).
  await page.$eval(E, (el) => el.set({ show: 'model lines', controls: 'minimal' }));
  await settled(page);
  await page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.model-row button'), E);
  await page.locator(`${E} button`, { hasText: 'Repeat' }).click();
  await page.waitForFunction((sel) => document.querySelector(sel).state?.tokens.length === 18, E);
  await settled(page);
  await page.mouse.move(0, 0);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.$eval(E, (el) => el.scrollIntoView());
  const clip = await page.$eval(E, (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
  });
  await page.screenshot({ path: `${DOCS}model-view.png`, clip, fullPage: true });
  if (problems.length) throw new Error(problems.join('\n'));
  await context.close();
  console.log(`wrote ${DOCS}model-view.png`);
}

// The handbook's page switched to trained weights, "sat" masked: the weights
// switch, every head with its label and baseline, the guesses, at a laptop's width.
async function englishView(env) {
  const { page, problems, context } = await env.page({ viewport: { width: 1100, height: 900 }, colorScheme: 'light', reducedMotion: 'reduce' });
  await page.goto(`${env.base}/?model=english&model-mask=2`);
  await page.waitForFunction((sel) => document.querySelector(sel)?.shadowRoot.querySelector('.mask-panel[data-masked="true"]'), E, { timeout: 120_000 });
  await settled(page);
  await page.mouse.move(0, 0);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const clip = await page.$eval(E, (el) => {
    const host = el.getBoundingClientRect(), part = el.shadowRoot.querySelector('.model-part').getBoundingClientRect();
    return { x: host.left + window.scrollX, y: host.top + window.scrollY, width: host.width, height: part.bottom - host.top + 8 };
  });
  await page.screenshot({ path: `${DOCS}explorer-english.png`, clip, fullPage: true });
  if (problems.length) throw new Error(problems.join('\n'));
  await context.close();
  console.log(`wrote ${DOCS}explorer-english.png`);
}
