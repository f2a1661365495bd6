// pool.js - attention on several cores: a pool of workers (Node worker
// threads, browser module Workers), each with its own instance of one
// compiled module, behind the same calls as the synchronous API, as Promises.
// The public entry (attention-wasm/pool); the pool lives in web/pool/:
// pool.js schedules calls, planner.js decides how a call is split (pure),
// workers.js starts and talks to the workers, which run web/pool-worker.js.

export { AttentionPool, createAttentionPool } from './pool/pool.js';
