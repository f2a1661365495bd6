// page.js - index.html's script: the explorer's settings live in the URL, so
// a view can be shared. Reads ?tokens=...&seed=... into attributes on load and
// writes them back after every change, each change a history entry (Back and
// Forward read them again) except a model's head chosen, which replaces the
// entry; the settings table says which.
import './explorer.js';
import { SETTINGS, parseSetting } from './worked/settings.js';

const explorer = document.getElementById('explorer');
const PARAMS = SETTINGS.filter((s) => s.url);

// A boolean in the address is "1" or "0" as the page writes it, or present
// with no value, "true" or "false" as people type it; anything else
// ("causal=maybe") is refused with a notice and the setting keeps its default.
const BOOLEAN_TEXTS = ['', '1', '0', 'true', 'false'];
const notice = document.getElementById('url-notice');

// Sets the explorer's attributes from an address's query: those it names,
// and (on Back or Forward) removes those it does not.
function applyQuery(search, { clear }) {
  const query = new URLSearchParams(search);
  const refused = [];
  for (const s of PARAMS) {
    const value = query.get(s.attr);
    if (value === null || (s.kind === 'bool' && !BOOLEAN_TEXTS.includes(value))) {
      if (value !== null) refused.push(`${s.attr}=${value}: ${s.attr} takes 1 or 0 (or true, false); it stays ${explorer.hasAttribute(s.attr) && !clear ? 'on' : 'off'}`);
      if (clear) explorer.removeAttribute(s.attr);
      continue;
    }
    if (s.kind === 'bool') explorer.toggleAttribute(s.attr, parseSetting(s, value));
    else if (explorer.getAttribute(s.attr) !== value) explorer.setAttribute(s.attr, value);
  }
  if (notice) {
    notice.textContent = refused.join('. ');
    notice.hidden = refused.length === 0;
  }
  return query.get('mask');
}

let pendingMask = applyQuery(location.search, { clear: false });
// The first address the page writes is the one it was opened with, tidied:
// it replaces that entry. Later changes are the learner's: each adds one, so
// Back returns to the setting before.
let replaceNext = true;

window.addEventListener('popstate', () => {
  replaceNext = true;
  pendingMask = applyQuery(location.search, { clear: true });
  if (pendingMask === null) explorer.mask = null;
});

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
  if (url === `${location.pathname}${location.search}${location.hash}`) {
    replaceNext = false;
    return;
  }
  if (replaceNext || onlyBrowsing(location.search, `?${search}`)) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  replaceNext = false;
}

// Choosing another head of a model is browsing, not a setting: arrowing
// through twelve heads must not take twelve presses of Back to leave.
const BROWSING = ['model-head'];
function onlyBrowsing(before, after) {
  const rest = (search) => {
    const q = new URLSearchParams(search);
    for (const key of BROWSING) q.delete(key);
    q.sort();
    return q.toString();
  };
  return rest(before) === rest(after);
}

// The introduction for the mode shown: a model's own (data-mode="model:<name>"),
// else the one for any model, else the one for the random draws.
const ledes = [...document.querySelectorAll('.lede[data-mode]')];
const modal = [...document.querySelectorAll('[data-shown-in]')];
function showLede() {
  const model = explorer.getAttribute('model');
  const modes = model ? [`model:${model}`, 'model'] : ['draws'];
  const shown = modes.map((m) => ledes.find((p) => p.dataset.mode === m)).find(Boolean);
  for (const p of ledes) p.hidden = p !== shown;
  // Sentences true of some modes only (data-shown-in="draws", "model", "model:<name>").
  for (const n of modal) n.hidden = !n.dataset.shownIn.split(' ').some((m) => modes.includes(m));
}
showLede();

explorer.addEventListener('attention-change', (event) => {
  showLede();
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
  // The address the page was opened (or gone Back) to is tidied at once, so a
  // change that follows within the pause is an entry of its own.
  if (replaceNext) writeURL(event.detail);
  else writeTimer = setTimeout(writeURL, 150, event.detail);
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
