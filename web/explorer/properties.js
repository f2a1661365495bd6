// properties.js - the element's properties that mirror its attributes, one
// per row of the settings table.

import { HANDBOOK, defaultScale } from '../worked/computation.js';
import { CONTROLS, PARTS, SETTINGS, STEPS, parseSetting } from '../worked/settings.js';

// Numbers read back the value in use (defaults filled in; rope its theta or
// null), booleans the attribute's presence, the Train part's settings their
// attribute's value (null when absent or not valid: the part's default);
// null or undefined removes the attribute.
const DEFAULTS = {
  tokens: (self) => self.getAttribute('tokens') ?? HANDBOOK.tokens.join(' '),
  dv: (self) => self.config?.dv ?? self.dk,
  kvHeads: (self) => self.config?.kvHeads ?? self.heads,
  scale: (self) => self.config?.scale ?? defaultScale(self.dk),
  // RoPE's theta in use, or null when off (its attribute may say "" for 10000).
  rope: (self) => self.config?.rope?.theta ?? null,
};
function ownSetting(setting, text) {
  if (text === null) return null;
  try {
    return parseSetting(setting, text);
  } catch {
    return null;
  }
}
/** Defines one accessor per setting on `prototype` (the element's). */
export function defineSettingProperties(prototype) {
  for (const s of SETTINGS) {
    const get = s.kind === 'bool'
      ? function () { return this.hasAttribute(s.attr) && this.getAttribute(s.attr) !== 'false' && this.getAttribute(s.attr) !== '0'; }
      : s.key === 'step'
        ? function () { const v = this.getAttribute('step'); return v !== null && STEPS.includes(v) ? v : 'all'; }
        : s.key === 'show'
          ? function () { const v = this.getAttribute('show'); return v === null ? PARTS.join(' ') : v; }
          : s.key === 'controls'
            ? function () { const v = this.getAttribute('controls'); return CONTROLS.includes(v) ? v : 'full'; }
            : DEFAULTS[s.key]
              ? function () { return DEFAULTS[s.key](this); }
              : s.compute
                ? function () { return this.config?.[s.key] ?? HANDBOOK[s.key]; }
                : function () { return ownSetting(s, this.getAttribute(s.attr)); };
    const set = s.kind === 'bool'
      ? function (value) { this.toggleAttribute(s.attr, Boolean(value)); }
      : s.kind === 'rope'
        ? function (value) {
          // true or a theta turns it on, false or null off.
          if (value === null || value === undefined || value === false) this.removeAttribute(s.attr);
          else this.setAttribute(s.attr, value === true ? '' : String(value));
        }
      : function (value) {
        if (value === null || value === undefined || (s.key === 'step' && value === 'all')) this.removeAttribute(s.attr);
        else this.setAttribute(s.attr, Array.isArray(value) ? value.join(' ') : String(value));
      };
    Object.defineProperty(prototype, s.key, { get, set, configurable: true, enumerable: false });
  }
}
