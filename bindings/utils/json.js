// The nesting of JSON data read from files and given by callers (untrusted):
// measured without recursion, so that data nested 100,000 deep is refused
// naming the path of its first value too deep, never a stack overflow
// (RangeError) in recursive code that reads or copies it.

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** A path for messages (normalizer.normalizers[0], added_tokens[3]["odd key"]); its first 120 characters when long. */
function pathOf(keys) {
  let out = '';
  for (const k of keys) {
    out += typeof k === 'number' ? `[${k}]` : IDENTIFIER.test(k) ? `${out ? '.' : ''}${k}` : `[${JSON.stringify(k)}]`;
    if (out.length > 120) return `${out.slice(0, 120)}...`;
  }
  return out;
}

/**
 * The path of the first object or array in `value` nested more than `limit`
 * deep (the value itself, when an object or array, is at depth 1), or null
 * when none is. Own enumerable keys only, as JSON.stringify reads them.
 */
export function nestedTooDeep(value, limit) {
  if (value === null || typeof value !== 'object') return null;
  const open = (v) => ({ v, keys: Array.isArray(v) ? null : Object.keys(v), i: 0 });
  const frames = [open(value)];
  while (frames.length) {
    const f = frames[frames.length - 1];
    if (f.i >= (f.keys ? f.keys.length : f.v.length)) {
      frames.pop();
      continue;
    }
    const key = f.keys ? f.keys[f.i] : f.i;
    f.i++;
    const child = f.v[key];
    if (child === null || typeof child !== 'object') continue;
    if (frames.length >= limit) return pathOf(frames.map((g) => (g.keys ? g.keys[g.i - 1] : g.i - 1)));
    frames.push(open(child));
  }
  return null;
}
