// ground.js - what a figure is drawn on. A figure has no background of its
// own: it lies on the article's, so its palette (ink, lines, heatmap) follows
// how light that ground is, not the reader's system setting. A light-only
// article read under a dark system keeps dark ink on its light page, and a
// dark article under a light system gets the dark palette.

/**
 * The first opaque background from `node` outward (through shadow hosts):
 * what the figure and its popover lie on. The page's canvas colour when
 * nothing has one.
 */
export function groundColor(node) {
  for (let n = node.getRootNode?.().host ?? node; n; n = n.parentElement ?? n.getRootNode?.().host) {
    const bg = getComputedStyle(n).backgroundColor;
    if (bg && !/^transparent$|^rgba\(.*,\s*0\)$/.test(bg)) return bg;
  }
  return canvasColor(node.ownerDocument ?? document);
}

// The canvas colour the page paints under everything (light unless the page
// opts into a dark color-scheme), read from a probe.
function canvasColor(doc) {
  const probe = doc.createElement('span');
  probe.style.backgroundColor = 'Canvas';
  doc.documentElement.append(probe);
  const bg = getComputedStyle(probe).backgroundColor;
  probe.remove();
  return bg;
}

/** 'dark' when a CSS rgb()/rgba() colour is dark (relative luminance below 0.4), else 'light'. */
export function schemeOf(color) {
  const m = /rgba?\(\s*([\d.]+)[ ,]+([\d.]+)[ ,]+([\d.]+)/.exec(color);
  if (!m) return 'light';
  const lin = (c) => {
    const s = Number(c) / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * lin(m[1]) + 0.7152 * lin(m[2]) + 0.0722 * lin(m[3]);
  return luminance < 0.4 ? 'dark' : 'light';
}

/** The palette a figure at `node` takes: 'light' or 'dark'. */
export function groundScheme(node) {
  return schemeOf(groundColor(node));
}
