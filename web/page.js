// page.js - index.html's script: the explorer's settings live in the URL, so
// a view can be shared. Reads ?tokens=...&seed=... into attributes on load and
// writes them back after every change; the settings table says which.
import './explorer.js';
import { SETTINGS, parseSetting } from './worked/settings.js';

const explorer = document.getElementById('explorer');
const PARAMS = SETTINGS.filter((s) => s.url);

const query = new URLSearchParams(location.search);
for (const s of PARAMS) {
  const value = query.get(s.attr);
  if (value === null) continue;
  // A boolean is "1" in the address the page writes and a present attribute
  // on the element; a hand-typed "?causal" or "causal=true" is on too, as the
  // attribute would be (parseSetting: only "0" and "false" are off).
  if (s.kind === 'bool') explorer.toggleAttribute(s.attr, parseSetting(s, value));
  else explorer.setAttribute(s.attr, value);
}
let pendingMask = query.get('mask');

// Writing the address costs more than a whole recompute, so during a slider
// drag it is written once the changes pause.
let writeTimer = 0;
function writeURL(detail) {
  const next = new URLSearchParams();
  const bare = []; // present with no value (rope): "?rope", as typed, not "?rope="
  for (const s of PARAMS) {
    if (!explorer.hasAttribute(s.attr)) continue;
    const value = s.kind === 'bool' ? '1' : explorer.getAttribute(s.attr);
    if (value === '') bare.push(encodeURIComponent(s.attr));
    else next.set(s.attr, value);
  }
  if (detail.mask) next.set('mask', detail.mask.map((r) => r.map((x) => (x ? '1' : '0')).join('')).join('.'));
  const search = [next.toString(), ...bare].filter(Boolean).join('&');
  const url = `${location.pathname}${search ? `?${search}` : ''}${location.hash}`;
  if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', url);
}

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
  clearTimeout(writeTimer);
  writeTimer = setTimeout(writeURL, 150, event.detail);
});

// The embed section lists the attributes from the same table.
const list = document.getElementById('attribute-list');
if (list) {
  list.replaceChildren(...SETTINGS.flatMap((s, k) => {
    const code = document.createElement('code');
    code.textContent = s.attr;
    code.title = s.help;
    return k === 0 ? [code] : [', ', code];
  }));
}
