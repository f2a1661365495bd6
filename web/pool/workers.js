// workers.js - the pool's worker layer: starts workers (Node worker threads,
// browser module Workers) running web/pool-worker.js, each with an instance
// of one compiled module; hands queued jobs to idle ones; turns their
// answers and errors back into results and TypeErrors or RangeErrors; and
// replaces a worker that dies.
//
// A job is { call, message, transfer, deliver(result), settled? }; call is
// shared by the jobs of one pool call: { failed, fail(err), finished? }
// (finished: the call needs none of its jobs that have not started, which
// are then skipped, as those of a failed call are); settled(), when
// given, runs once the job will not run any more (answered, skipped because
// its call failed, or its worker stopped): the shared-memory path frees a
// call's memory only then. A worker holds one job
// at a time and keeps Node running only while it does (or while it starts,
// which createAttentionPool awaits). Jobs that must run
// on one worker (where a KV cache's part lives) wait in that worker's own
// queue, in order, and go before the shared queue's.

// Jobs that will not run: each one's call fails with err (once per call),
// and each is settled.
function failJobs(jobs, err) {
  for (const job of jobs) {
    job.call.fail(err);
    job.settled?.();
  }
}

export const isNode = typeof process !== 'undefined' && process.versions?.node !== undefined && typeof window === 'undefined';

/**
 * How long a started worker has to answer with its instance (its "ready")
 * before the pool gives up on it: loading and instantiating the compiled
 * module takes well under a second, so this is only reached by a worker that
 * loaded but will never answer (a wrong `worker` script), which would
 * otherwise leave createAttentionPool pending for ever.
 */
export const WORKER_START_MS = 10000;

// The main thread's node flags that name its main program: the source given
// with -e or -p, --input-type for that source, a REPL, a syntax check, the
// test runner, watch mode. A worker runs a file of its own, and one that
// inherits these refuses to start ("--input-type can only be used with
// string input via --eval, --print, or STDIN"). The ones with a value may
// have it in the next argument.
const MAIN_PROGRAM_FLAGS = new Set(['--input-type', '-e', '--eval', '-p', '--print', '-i', '--interactive', '-c', '--check',
  '--test', '--watch', '--watch-path', '--watch-preserve-output']);
const WITH_VALUE = new Set(['--input-type', '-e', '--eval', '-p', '--print', '--watch-path']);

/**
 * The node flags a worker gets: the main thread's `execArgv` without those
 * that name the main program, or undefined when there are none of those
 * (then Node's own inheritance applies, which also carries the V8 and
 * process-wide flags that an explicit list may not name).
 */
export function workerExecArgv(execArgv) {
  const out = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i];
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    if (!MAIN_PROGRAM_FLAGS.has(name)) out.push(arg);
    else if (eq < 0 && WITH_VALUE.has(name)) i++;
  }
  return out.length === execArgv.length ? undefined : out;
}

// A Node worker with the filtered flags. Node refuses to be given V8 flags
// and process-wide ones (--experimental-wasm-relaxed-simd, --max-old-space-size,
// --title) in an explicit list, naming them; they hold for the whole process,
// the worker included, so they are dropped and the worker made again.
function nodeWorker(Worker, url) {
  let execArgv = workerExecArgv(process.execArgv);
  for (;;) {
    try {
      return new Worker(url, execArgv === undefined ? {} : { execArgv });
    } catch (err) {
      const named = err?.code === 'ERR_WORKER_INVALID_EXEC_ARGV' && execArgv !== undefined ? /flags: (.*)$/.exec(err.message) : null;
      const refused = new Set(named ? named[1].split(', ') : []);
      if (!execArgv?.some((a) => refused.has(a))) throw err;
      execArgv = execArgv.filter((a) => !refused.has(a));
    }
  }
}

/** Default thread count: os.availableParallelism() in Node, navigator.hardwareConcurrency elsewhere. */
export async function defaultThreads() {
  if (isNode) {
    const osName = 'node:os';
    const os = await import(/* webpackIgnore: true */ /* @vite-ignore */ osName);
    return os.availableParallelism?.() ?? os.cpus().length;
  }
  return Math.max(1, globalThis.navigator?.hardwareConcurrency ?? 1);
}

// One worker, Node or browser, behind one small interface; url null is the
// package's own web/pool-worker.js. In a browser that worker starts from the
// literal `new Worker(new URL('../pool-worker.js', import.meta.url), ...)`:
// the form Vite, webpack 5 and Rollup recognise, so a bundle carries the
// worker with its imports instead of copying it as a raw file. The Node
// module specifiers are in variables so browser bundlers leave them alone.
async function spawn(url, onMessage, onDeath) {
  let dead = false;
  const die = (err) => {
    if (!dead) {
      dead = true;
      onDeath(err);
    }
  };
  if (isNode) {
    const name = 'node:worker_threads';
    const { Worker } = await import(/* webpackIgnore: true */ /* @vite-ignore */ name);
    const at = url ?? new URL('../pool-worker.js', import.meta.url);
    const w = nodeWorker(Worker, typeof at === 'string' ? new URL(at, `file://${process.cwd()}/`) : at);
    w.on('message', onMessage);
    w.on('error', (err) => die(err));
    w.on('exit', (code) => die(new Error(`exited with code ${code}`)));
    return {
      post: (m, t) => w.postMessage(m, t),
      terminate() {
        dead = true;
        return w.terminate();
      },
      // An idle pool does not keep Node running.
      ref: () => w.ref(),
      unref: () => w.unref(),
    };
  }
  const w = url === null
    ? new Worker(new URL('../pool-worker.js', import.meta.url), { type: 'module' })
    : new Worker(url, { type: 'module' });
  w.onmessage = (event) => onMessage(event.data);
  w.onerror = (event) => {
    event.preventDefault?.();
    die(new Error(event.message || 'the worker failed to load or threw'));
  };
  w.onmessageerror = () => die(new Error('a message could not be read'));
  return {
    post: (m, t) => w.postMessage(m, t),
    terminate() {
      dead = true;
      w.terminate();
    },
    ref() {},
    unref() {},
  };
}

/**
 * The `call` of a job: shared by the jobs of one pool call, it rejects with
 * the first error any of them meets, and later ones find it failed.
 */
export function newCall(reject) {
  const call = {
    failed: false,
    fail(err) {
      if (!call.failed) {
        call.failed = true;
        reject(err);
      }
    },
  };
  return call;
}

const ERRORS = { TypeError, RangeError };

// An error a worker reported as { name, message }, as the same class.
function rebuild(error, prefix) {
  const E = ERRORS[error.name] ?? Error;
  return new E(prefix ? `${prefix}: ${error.message}` : error.message);
}

/**
 * Workers at `url` (null: web/pool-worker.js), each with an instance of
 * `module`, taking jobs from one queue; init() gives the extra fields of
 * each worker's init message.
 */
export class Workers {
  #url;
  #module;
  #slots = [];
  #queue = [];
  #nextId = 1;
  #disposed = false;

  // What each new worker's init message carries besides the module (the
  // shared-memory path's memory, threads module and that worker's stack).
  #init;

  constructor(url, module, init = () => ({})) {
    this.#url = url;
    this.#module = module;
    this.#init = init;
  }

  /** Starts `count` workers; resolves when each has its instance. */
  start(count) {
    return Promise.all(Array.from({ length: count }, () => this.#addSlot()));
  }

  /** The worker started `index`-th (0 <= index < count), for jobs that must run where their data is. */
  slot(index) {
    return this.#slots[index];
  }

  /**
   * Queues jobs for one worker (a slot()): they run in order, before the
   * jobs of the shared queue. When that worker has stopped, they fail.
   */
  submitTo(slot, jobs) {
    if (slot.dead || this.#disposed) {
      failJobs(jobs, new Error('attention-wasm pool: the worker for this call has stopped'));
      return;
    }
    for (const job of jobs) slot.own.push({ id: this.#nextId++, ...job });
    this.#pump();
  }

  /** Queues jobs and hands them to idle workers; once disposed, they fail. */
  submit(jobs) {
    if (this.#disposed) {
      failJobs(jobs, new Error('attention-wasm pool: this pool was disposed; call createAttentionPool() for a new one'));
      return;
    }
    for (const job of jobs) this.#queue.push({ id: this.#nextId++, ...job });
    this.#pump();
  }

  /** Stops the workers: jobs running or queued fail with `err`. */
  dispose(err) {
    this.#disposed = true;
    for (const slot of this.#slots.splice(0)) {
      slot.dead = true;
      failJobs([...(slot.job ? [slot.job] : []), ...slot.own.splice(0)], err);
      slot.handle?.terminate();
    }
    failJobs(this.#queue.splice(0), err);
  }

  // A new worker with its instance; resolves when it is ready.
  async #addSlot() {
    // own: jobs only this worker may take; dead: it stopped (what it held is gone).
    const slot = { handle: null, job: null, ready: false, own: [], dead: false };
    this.#slots.push(slot);
    let readyResolve, readyReject;
    const ready = new Promise((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    let timer = null;
    const onMessage = (data) => {
      if (data.type === 'ready') {
        clearTimeout(timer);
        slot.ready = true;
        slot.handle.unref();
        readyResolve();
        this.#pump();
      } else if (data.type === 'failed') {
        readyReject(rebuild(data, 'createAttentionPool: a worker could not load the module'));
      } else {
        this.#done(slot, data);
      }
    };
    const onDeath = (err) => {
      clearTimeout(timer);
      readyReject(new Error(`createAttentionPool: a worker failed to start: ${err.message}`));
      this.#died(slot, err);
    };
    slot.handle = await spawn(this.#url, onMessage, onDeath);
    // The worker itself keeps Node running while it starts; the timer need not.
    timer = setTimeout(() => {
      if (slot.ready || slot.dead) return;
      const err = new Error(`createAttentionPool: a worker did not answer within ${WORKER_START_MS / 1000} s of starting ` +
        `(${String(this.#url)} loaded but sent no "ready"; the worker option must point at web/pool-worker.js)`);
      readyReject(err);
      this.#died(slot, err);
      slot.handle.terminate();
    }, WORKER_START_MS);
    timer.unref?.();
    slot.handle.post({ type: 'init', module: this.#module, ...this.#init() });
    return ready;
  }

  // A worker died: its call fails, and a new worker takes its place.
  #died(slot, err) {
    const i = this.#slots.indexOf(slot);
    if (i < 0) return;
    this.#slots.splice(i, 1);
    slot.dead = true;
    const job = slot.job;
    slot.job = null;
    if (job) failJobs([job], new Error(`attention-wasm pool: a worker stopped during this call (${err.message}); the pool has replaced it, later calls work`));
    failJobs(slot.own.splice(0), new Error(`attention-wasm pool: the worker for this call stopped (${err.message})`));
    if (this.#disposed || !slot.ready) return; // a worker that never started is not retried
    this.#addSlot().catch(() => {
      // No worker could start again: calls waiting for one must not wait forever.
      if (this.#slots.length === 0) failJobs(this.#queue.splice(0), new Error('attention-wasm pool: no worker could be started'));
    });
  }

  #done(slot, data) {
    const job = slot.job;
    this.#idle(slot);
    if (job && job.id === data.id) {
      if (data.error) job.call.fail(rebuild(data.error));
      else job.deliver(data.result);
      job.settled?.();
    }
    this.#pump();
  }

  #idle(slot) {
    slot.job = null;
    slot.handle.unref();
  }

  // Hands queued jobs to idle workers, each its own jobs first. A job whose
  // message cannot be posted fails its call and leaves its worker idle.
  #pump() {
    for (const slot of this.#slots) {
      if (!slot.ready || slot.job) continue;
      const next = (queue) => {
        let job;
        while ((job = queue.shift()) !== undefined && (job.call.failed || job.call.finished)) job.settled?.();
        return job;
      };
      const job = next(slot.own) ?? next(this.#queue);
      if (job === undefined) continue;
      slot.job = job;
      slot.handle.ref();
      try {
        slot.handle.post({ id: job.id, ...job.message }, job.transfer);
      } catch (err) {
        this.#idle(slot);
        job.call.fail(err);
        job.settled?.();
        // The same slot takes the next job.
        return this.#pump();
      }
    }
  }
}
