// cpu.js - the CPU a benchmark ran on, as every benchmark prints it beside
// its ratios. A virtual machine's model name can be as bare as "AMD EPYC"
// for two generations whose cores differ (Zen 4 and Zen 5 here), so the
// name carries the family and model numbers from /proc/cpuinfo, and the core
// where they are known.
import { readFileSync } from 'node:fs';
import os from 'node:os';

// x86 family and model numbers of the cores these benchmarks met or may.
const CORES = [
  { vendor: 'AuthenticAMD', family: 23, models: [0x00, 0x2f], name: 'Zen / Zen+' },
  { vendor: 'AuthenticAMD', family: 23, models: [0x30, 0xff], name: 'Zen 2' },
  { vendor: 'AuthenticAMD', family: 25, models: [0x00, 0x0f], name: 'Zen 3' },
  { vendor: 'AuthenticAMD', family: 25, models: [0x10, 0x1f], name: 'Zen 4' },
  { vendor: 'AuthenticAMD', family: 25, models: [0x20, 0x5f], name: 'Zen 3' },
  { vendor: 'AuthenticAMD', family: 25, models: [0x60, 0xaf], name: 'Zen 4' },
  { vendor: 'AuthenticAMD', family: 26, models: [0x00, 0xff], name: 'Zen 5' },
  { vendor: 'GenuineIntel', family: 6, models: [85, 85], name: 'Skylake / Cascade Lake' },
  { vendor: 'GenuineIntel', family: 6, models: [106, 106], name: 'Ice Lake' },
  { vendor: 'GenuineIntel', family: 6, models: [143, 143], name: 'Sapphire Rapids' },
  { vendor: 'GenuineIntel', family: 6, models: [207, 207], name: 'Emerald Rapids' },
];

let cached = null;

/** The CPU's model name, with its core, family and model where /proc/cpuinfo says: "AMD EPYC (Zen 4; family 25, model 17)". */
export function cpuModel() {
  if (cached !== null) return cached;
  const name = os.cpus()[0]?.model.trim() || 'unknown CPU';
  let info = '';
  try {
    info = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return (cached = name);
  }
  const field = (key) => info.match(new RegExp(`^${key}\\s*:\\s*(.*)$`, 'm'))?.[1].trim();
  const vendor = field('vendor_id'), family = Number(field('cpu family')), model = Number(field('model'));
  if (!Number.isInteger(family) || !Number.isInteger(model)) return (cached = name);
  const core = CORES.find((c) => c.vendor === vendor && c.family === family && model >= c.models[0] && model <= c.models[1]);
  return (cached = `${name} (${core ? `${core.name}; ` : ''}family ${family}, model ${model})`);
}

/**
 * Waits until this process is quiet: less than a tenth of a core busy over
 * 10 ms, across all its threads (at most `maxMs`). Contenders that spin
 * after their work (onnxruntime-web's thread pool keeps its threads
 * spinning for tens of milliseconds after a run) would otherwise take a core
 * from whichever contender runs next; the wait is outside every timing.
 */
export async function settle(maxMs = 500) {
  const t0 = performance.now();
  for (;;) {
    const c0 = process.cpuUsage(), w0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const c = process.cpuUsage(c0), wall = performance.now() - w0;
    if ((c.user + c.system) / 1000 < 0.1 * wall || performance.now() - t0 > maxMs) return performance.now() - t0;
  }
}
