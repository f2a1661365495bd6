// dom.js - the two DOM helpers the explorer's modules share. Text
// only ever goes in through textContent or attribute values, never as HTML.

const SVG_NS = 'http://www.w3.org/2000/svg';

function fill(node, props, children) {
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.setAttribute('class', value);
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, '');
    else if (value !== false && value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

/** An HTML element: el('button', { type: 'button', text: 'Save', onclick }, ...children). */
export function el(tag, props = {}, ...children) {
  return fill(document.createElement(tag), props, children);
}

/** An SVG element, with the same props as el. */
export function svg(tag, props = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), props, children);
}
