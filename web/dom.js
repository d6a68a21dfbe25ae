// Tiny DOM helpers shared by the page's sections.

/** h('div', {class: 'x', onclick: fn}, child, 'text', [more]) -> Element */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A <select> filled with options; values are strings. */
export function setOptions(select, values, labels = values) {
  const keep = select.value;
  select.replaceChildren(...values.map((v, i) => h('option', { value: String(v) }, labels[i])));
  if (values.map(String).includes(keep)) select.value = keep;
}

/** A readable line for a SwapformerError (or any error). */
export function errorText(e) {
  return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? e);
}

/** A canvas inside a figure-sized wrapper, for plots.js. */
export function plotBox(label) {
  const canvas = h('canvas', { role: 'img', 'aria-label': label });
  return { box: h('div', { class: 'plot' }, canvas), canvas };
}
