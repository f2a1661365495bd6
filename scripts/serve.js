#!/usr/bin/env node
// serve.js - npm start: builds the wasm when needed, then serves what the
// page needs (index.html, web/, dist/) on http://localhost:8080 (or $PORT)
// with the strict Content-Security-Policy the explorer is made to work under,
// and application/wasm for .wasm. Everything else in the project (.git/,
// tests/, c/, node_modules/) is 404, also with HOST=0.0.0.0.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ensureBuilt } from './ensure-built.js';

const root = fileURLToPath(new URL('..', import.meta.url));

export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'";

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** The paths of the project the page needs: a file, or a folder ending in /. */
// The front page links to the figure and story pages of tests/pages/ (and the model they show).
export const PAGE_FILES = Object.freeze(['/index.html', '/web/', '/dist/', '/tests/pages/article.html', '/tests/pages/train-figure.html',
  '/tests/pages/model.html', '/tests/pages/grounds.html', '/tests/pages/story.html', '/tests/pages/english.html']);

/**
 * A static file server for `dir`; resolves to the listening http.Server.
 * `only` lists the paths it serves (PAGE_FILES for the project folder; null
 * serves all of another `dir`). Dot files and folders are never served.
 * `isolate` sends the headers that make its pages cross-origin isolated
 * (COOP same-origin, COEP require-corp), so they have SharedArrayBuffer and
 * the pool shares its memory (docs/pool.md#memory).
 */
export function serve({ dir = root, port = 8080, host = '127.0.0.1', csp = CSP, only = normalize(dir) === normalize(root) ? PAGE_FILES : null, isolate = false } = {}) {
  const server = createServer((req, res) => {
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      res.writeHead(400).end('bad request');
      return;
    }
    if (path.endsWith('/')) path += 'index.html';
    const allowed = !path.split('/').some((part) => part.startsWith('.')) &&
      (only === null || only.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p)));
    if (!allowed) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const file = normalize(join(dir, path));
    if (!file.startsWith(normalize(dir + sep)) && file !== normalize(dir)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    let stat;
    try {
      stat = statSync(file);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (stat.isDirectory()) {
      res.writeHead(301, { location: `${path}/` }).end();
      return;
    }
    const headers = {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': stat.size,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    };
    if (csp) headers['content-security-policy'] = csp;
    if (isolate) {
      headers['cross-origin-opener-policy'] = 'same-origin';
      headers['cross-origin-embedder-policy'] = 'require-corp';
      headers['cross-origin-resource-policy'] = 'same-origin';
    }
    res.writeHead(200, headers);
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  ensureBuilt();
  const port = Number(process.env.PORT ?? 8080);
  serve({ port, host: process.env.HOST ?? '127.0.0.1', isolate: process.argv.includes('--isolate') }).then(
    (server) => console.log(`attention-wasm explorer: http://localhost:${server.address().port}/  (Ctrl+C to stop)`),
    (err) => {
      console.error(`attention-wasm: cannot listen on port ${port}: ${err.message}${err.code === 'EADDRINUSE' ? ' (try PORT=8081 npm start)' : ''}`);
      process.exitCode = 1;
    },
  );
}
