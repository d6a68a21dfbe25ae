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

/** "1 file", "2 files": a count with its noun agreeing. */
export const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A canvas inside a figure-sized wrapper, for plots.js: its text alternative starts with
 * the title, and plots.js adds what the chart shows each time it is drawn. */
export function plotBox(title) {
  const canvas = h('canvas', { role: 'img', 'aria-label': title, dataset: { title } });
  return { box: h('div', { class: 'plot' }, canvas), canvas };
}

/** A table in a box that scrolls sideways when the table is wider, and then says so
 * under it in words (phones show no scroll bar until one scrolls). */
export function scrollTable(table) {
  const wrap = h('div', { class: 'table-wrap' }, table);
  const hint = h('p', { class: 'scroll-hint', hidden: true }, 'Wider than the screen: scroll the table sideways for the rest →');
  if (typeof ResizeObserver === 'function') {
    const observer = new ResizeObserver(() => {
      hint.hidden = wrap.scrollWidth <= wrap.clientWidth;
    });
    observer.observe(wrap);
    observer.observe(table);
  }
  return h('div', { class: 'table-scroll' }, wrap, hint);
}
