// page.js - index.html's script: the explorer's settings live in the URL, so
// a view can be shared. Reads ?tokens=...&seed=... into attributes on load and
// writes them back after every change.
import './explorer.js';

const explorer = document.getElementById('explorer');
const PARAMS = ['tokens', 'seed', 'd-model', 'dk', 'dv', 'heads', 'kv-heads', 'scale', 'step'];

const query = new URLSearchParams(location.search);
for (const name of PARAMS) {
  const value = query.get(name);
  if (value !== null) explorer.setAttribute(name, value);
}
if (query.get('causal') === '1') explorer.setAttribute('causal', '');
const mask = query.get('mask');
let pendingMask = mask;

explorer.addEventListener('attention-change', (event) => {
  if (pendingMask !== null) {
    // Rows of 0/1 separated by dots, applied once the token count is known.
    const rows = pendingMask.split('.').map((r) => [...r].map((c) => c === '1'));
    pendingMask = null;
    if (rows.length === event.detail.tokens.length && rows.every((r) => r.length === rows.length)) {
      explorer.mask = rows;
      return;
    }
  }
  const next = new URLSearchParams();
  for (const name of PARAMS) {
    if (explorer.hasAttribute(name)) next.set(name, explorer.getAttribute(name));
  }
  if (explorer.causal) next.set('causal', '1');
  if (event.detail.mask) next.set('mask', event.detail.mask.map((r) => r.map((x) => (x ? '1' : '0')).join('')).join('.'));
  const search = next.toString();
  const url = `${location.pathname}${search ? `?${search}` : ''}${location.hash}`;
  if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', url);
});
