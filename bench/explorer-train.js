// explorer-train.js - how smooth the page stays while a fresh model trains
// from scratch in the explorer's model view (index.html?model=induction,
// Train from scratch, Play), in Chromium: the time between painted frames
// (requestAnimationFrame deltas) over a stretch of training, and the long
// tasks (PerformanceObserver 'longtask', main-thread tasks over 50 ms), at 4
// tokens and at 20 (a 10-word sentence repeated, the natural way to watch
// induction form).
//
// The machine is shared, so absolute times move with its load; a frozen page
// shows as a median far above 16.7 ms and long tasks of hundreds of ms, which
// no load on an idle page produces. The last line is the control: the same
// page with the fresh model made but not playing, the floor the load sets.
//
//   node bench/explorer-train.js [--seconds 30] [--tokens 4,20]
import { parseArgs } from 'node:util';

import { start } from '../tests/browser.js';

const SENTENCE = ['the', 'cat', 'sat', 'on', 'the', 'mat', 'with', 'my', 'old', 'friend'];

/** The words of an n-token text: the sentence's first n, or the sentence repeated. */
export function trainingTokens(n) {
  return Array.from({ length: n }, (_, i) => SENTENCE[i % SENTENCE.length]);
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/**
 * Opens the page at `tokens` words, starts training and records `seconds` of
 * it. Returns the frame deltas (sorted), the long tasks' durations and the
 * step reached.
 */
export async function trainingFrames(env, { tokens, seconds, play = true, viewport = { width: 1366, height: 900 } }) {
  const { page, context } = await env.page({ viewport });
  try {
    await page.goto(`${env.base}/?model=induction&tokens=${trainingTokens(tokens).join('+')}`);
    const status = (re) => page.waitForFunction((source) => new RegExp(source).test(document.querySelector('attention-explorer')
      .shadowRoot.querySelector('.model-status')?.textContent ?? ''), re.source, { timeout: 120_000 });
    await status(/^Showing/);
    const button = (name) => page.locator('attention-explorer .model-train button', { hasText: name });
    await button('Train from scratch').click();
    await status(/^step 0\b/);
    if (play) await button('Play').click();
    const result = await page.evaluate((ms) => new Promise((resolve) => {
      const longTasks = [];
      const observer = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) longTasks.push(e.duration);
      });
      observer.observe({ type: 'longtask' });
      const frames = [];
      const t0 = performance.now();
      let last = t0;
      const tick = (now) => {
        frames.push(now - last);
        last = now;
        if (now - t0 < ms) requestAnimationFrame(tick);
        else {
          observer.disconnect();
          const text = document.querySelector('attention-explorer').shadowRoot.querySelector('.model-status').textContent;
          resolve({ frames, longTasks, status: text });
        }
      };
      requestAnimationFrame((now) => {
        last = now;
        requestAnimationFrame(tick);
      });
    }), seconds * 1000);
    return { ...result, frames: result.frames.sort((a, b) => a - b) };
  } finally {
    await context.close();
  }
}

/** One line of numbers for a run. */
export function summary({ frames, longTasks, status }) {
  const ms = (x) => `${x.toFixed(1)} ms`;
  return [
    `frames ${frames.length}`, `median ${ms(quantile(frames, 0.5))}`, `p95 ${ms(quantile(frames, 0.95))}`, `max ${ms(frames[frames.length - 1])}`,
    `over 100 ms ${frames.filter((f) => f > 100).length}`,
    `long tasks ${longTasks.length} (max ${longTasks.length ? ms(Math.max(...longTasks)) : '-'})`,
    `at the end: ${status.split(' · ').slice(0, 3).join(' · ')}`,
  ].join(', ');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '30' }, tokens: { type: 'string', default: '4,20' } } });
  const env = await start();
  try {
    for (const n of values.tokens.split(',').map(Number)) {
      const r = await trainingFrames(env, { tokens: n, seconds: Number(values.seconds) });
      console.log(`${n} tokens, ${values.seconds} s of training: ${summary(r)}`);
    }
    // The floor the machine's load sets: the same page, the model made, not playing.
    const idle = await trainingFrames(env, { tokens: 20, seconds: Number(values.seconds), play: false });
    console.log(`control, 20 tokens, ${values.seconds} s not playing: ${summary(idle)}`);
  } finally {
    await env.close();
  }
}
