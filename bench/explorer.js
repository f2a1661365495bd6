// explorer.js - times the explorer in Chromium: from a change of the seed to
// the recomputed, rebuilt and laid-out tables, at 4 and 32 tokens. Used by
// bench/run.js; a frame at 60 Hz is 16.7 ms.
import { start } from '../tests/browser.js';

export async function explorerTimings({ rounds = 9 } = {}) {
  const env = await start();
  try {
    const { page } = await env.page();
    await page.goto(`${env.base}/`);
    await page.waitForFunction(() => document.querySelector('attention-explorer')?.state);
    const out = [];
    for (const tokens of [4, 32]) {
      const words = Array.from({ length: tokens }, (_, i) => `t${i}`).join(' ');
      const ms = await page.evaluate(async ([text, n]) => {
        const el = document.querySelector('attention-explorer');
        el.setAttribute('tokens', text);
        await new Promise((r) => el.addEventListener('attention-change', r, { once: true }));
        const times = [];
        for (let i = 0; i < n; i++) {
          const t0 = performance.now();
          el.seed = 100 + i;
          await new Promise((r) => el.addEventListener('attention-change', r, { once: true }));
          void el.shadowRoot.querySelector('.view').offsetHeight; // force style and layout
          times.push(performance.now() - t0);
        }
        return times.sort((a, b) => a - b)[Math.floor(n / 2)];
      }, [words, rounds * 3]);
      out.push({ tokens, ms });
    }
    return out;
  } finally {
    await env.close();
  }
}
