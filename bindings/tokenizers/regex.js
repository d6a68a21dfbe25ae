// The regular expressions of tokenizer.json (Split pre-tokenizers, Replace
// normalizers and decoders). Rust compiles them with Oniguruma (Ruby syntax,
// UTF-8): its shorthand classes are Unicode-aware (\s is White_Space, \d is Nd,
// \w is L|M|Nd|Pc) while JS's are ASCII; `.` excludes only \n; ^ and $ are line
// anchors for \n only. Anything whose meaning cannot be reproduced exactly
// (atomic groups, possessive quantifiers, nested classes, \G, backreferences,
// case-insensitive classes...) is refused with UNSUPPORTED_MODEL rather than
// approximated.
//
// A pattern is parsed into a tree (below), which runs on one of two matchers,
// never on a JS RegExp (whose backtracking has no bound: `(a+)+$` on 34
// characters does not return):
// - the stock patterns of real tokenizers (GPT-2's byte-level split, GPT-4 /
//   Llama 3's, Qwen 2's) on hand-written linear scanners (regex-stock.js);
// - any other on a backtracking machine that never explores a state twice and
//   counts its steps (regex-vm.js): linear in the text for every pattern without
//   lookarounds, and past its budget (proportional to the text and the pattern)
//   a SwapformerError UNSUPPORTED_MODEL naming the field, where Oniguruma stops at
//   its retry limit with an error of its own.
// The tree also prints as the JS RegExp of the same meaning (jsSource), which the
// tests compare both matchers with.

import { SwapformerError } from '../utils/errors.js';
import { compileProgram, CharSet } from './regex-vm.js';
import { stockMatcher } from './regex-stock.js';

const WORD = '\\p{L}\\p{M}\\p{Nd}\\p{Pc}';
const HEX = '0-9a-fA-F';
const hex = (c) => `\\u{${c.codePointAt(0).toString(16)}}`;
/** A literal character in a JS source (escaped unless a letter or a digit). */
const literal = (c) => (/[\p{L}\p{N}]/u.test(c) ? c : hex(c));

/** The deepest nesting of groups we parse (each level is a recursion of the parser and the compiler). */
const MAX_NESTING = 100;

// ------------------------------------------------------------------ the tree
//
// { k: 'char', set: CharSet }               one code point of the set
// { k: 'seq', items } / { k: 'alt', items }  concatenation / ordered alternation
// { k: 'rep', body, min, max, lazy }        max is Infinity when unbounded
// { k: 'assert', kind }                     '^' '$' 'A' 'z' 'Z' 'b' 'B'
// { k: 'look', body, behind, negate }       (?=) (?!) (?<=) (?<!)

/** Whether a \p{name} is a valid JS property escape, trying Script= for script names. */
function propertyEscape(name, negated) {
  const p = negated ? 'P' : 'p';
  for (const candidate of [name, `Script=${name}`]) {
    try { new RegExp(`\\${p}{${candidate}}`, 'u'); return `\\${p}{${candidate}}`; } catch { /* try the next spelling */ }
  }
  return null;
}


/**
 * Parses an Oniguruma pattern into the tree; `refuse(reason)` throws. Inside a
 * (?i:...) group only literals are allowed, ASCII letters becoming [xX].
 */
export function parse(src, refuse) {
  let i = 0;

  /** A one-character node; a class JS refuses (a range such as [a-\d]) is refused. */
  const charNode = (source) => {
    try { return { k: 'char', set: CharSet.of(source) }; } catch (e) { return refuse(e.message); }
  };

  /** An escape after the backslash at src[i]: the JS source of a class item (inClass) or a node. */
  const escape = (inClass, ci) => {
    const x = src[i + 1];
    if (x === undefined) refuse('a trailing backslash');
    i += 2;
    const cls = (source) => (inClass ? source : charNode(source));
    switch (x) {
      case 'd': return cls('\\p{Nd}');
      case 'D': return cls('\\P{Nd}');
      case 's': return cls('\\p{White_Space}');
      case 'S': return cls('\\P{White_Space}');
      case 'w': return inClass ? WORD : charNode(`[${WORD}]`);
      case 'h': return inClass ? HEX : charNode(`[${HEX}]`);
      case 'W': if (inClass) refuse('\\W inside a class'); return charNode(`[^${WORD}]`);
      case 'H': if (inClass) refuse('\\H inside a class'); return charNode(`[^${HEX}]`);
      case 'n': case 'r': case 't': case 'f': case 'v': return cls(`\\${x}`);
      case 'a': return cls('\\x07');
      case 'e': return cls('\\x1b');
      case 'p': case 'P': {
        const m = /^\{(\^?)([A-Za-z_][A-Za-z0-9_ =-]*)\}/.exec(src.slice(i, i + 80));
        if (!m) refuse('a malformed \\p{...}');
        i += m[0].length;
        if (ci) refuse('\\p{...} inside (?i:...)');
        const escaped = propertyEscape(m[2], (x === 'P') !== (m[1] === '^'));
        if (escaped === null) refuse(`the property \\p{${m[2]}}`);
        return cls(escaped);
      }
      case 'x': {
        const braced = /^\{([0-9a-fA-F]{1,8})\}/.exec(src.slice(i, i + 12));
        const plain = braced ? null : /^[0-9a-fA-F]{1,2}/.exec(src.slice(i, i + 2));
        if (!braced && !plain) refuse('a malformed \\x escape');
        const digits = braced ? braced[1] : plain[0];
        if (parseInt(digits, 16) > 0x10FFFF) refuse('a code point above U+10FFFF');
        i += (braced ?? plain)[0].length;
        return cls(`\\u{${digits}}`);
      }
      case 'u': {
        const m = /^[0-9a-fA-F]{4}/.exec(src.slice(i, i + 4));
        if (!m) refuse('a malformed \\u escape');
        i += 4;
        return cls(`\\u{${m[0]}}`);
      }
      case 'A': case 'z': case 'Z': case 'B':
        if (inClass) break;
        return { k: 'assert', kind: x };
      case 'b': return inClass ? '\\x08' : { k: 'assert', kind: 'b' };
      case 'k': if (!inClass) refuse('a backreference'); break;
      default:
        if (/[1-9]/.test(x) && !inClass) refuse('a backreference');
        if (!/[A-Za-z0-9]/.test(x)) {
          const c = String.fromCodePoint(src.codePointAt(i - 1));
          i += c.length - 1;
          return cls(hex(c));
        }
    }
    return refuse(`the escape \\${x}`);
  };

  /** A class [...] from src[i] === '['. */
  const charClass = () => {
    let out = '[';
    i++;
    if (src[i] === '^') { out += '^'; i++; }
    if (src[i] === ']') { out += '\\]'; i++; }
    for (;;) {
      if (i >= src.length) refuse('an unterminated character class');
      const c = String.fromCodePoint(src.codePointAt(i));
      if (c === ']') { i++; break; }
      if (c === '\\') { out += escape(true, false); continue; }
      if (c === '[') refuse('a nested character class');
      if (c === '&' && src[i + 1] === '&') refuse('a class intersection (&&)');
      out += c === '-' ? '-' : literal(c);
      i += c.length;
    }
    return charNode(`${out}]`);
  };

  const caseless = (c) => {
    if (/[A-Za-z]/.test(c)) return charNode(`[${c.toLowerCase()}${c.toUpperCase()}]`);
    if (/\p{L}/u.test(c)) refuse('a non-ASCII letter inside (?i:...)');
    return charNode(literal(c));
  };

  /** A quantifier at src[i] as [min, max], or null; moves past it. */
  const quantifier = () => {
    const c = src[i];
    if (c === '*' || c === '+' || c === '?') { i++; return [c === '+' ? 1 : 0, c === '?' ? 1 : Infinity]; }
    if (c !== '{') return null;
    const m = /^\{(\d*)(,?)(\d*)\}/.exec(src.slice(i, i + 24));
    if (!m || (m[1] === '' && (m[2] === '' || m[3] === ''))) return null;
    i += m[0].length;
    const min = m[1] === '' ? 0 : Number(m[1]);
    const max = m[2] === '' ? min : m[3] === '' ? Infinity : Number(m[3]);
    if (max < min) refuse('a quantifier {n,m} with m < n');
    if (min > 100000 || (max !== Infinity && max > 100000)) refuse('a repetition count above 100000');
    return [min, max];
  };

  /** An alternation up to the end of the pattern or the ')' closing the current group. */
  const alternation = (depth, ci) => {
    const items = [sequence(depth, ci)];
    while (src[i] === '|') { i++; items.push(sequence(depth, ci)); }
    return items.length === 1 ? items[0] : { k: 'alt', items };
  };

  const sequence = (depth, ci) => {
    const items = [];
    while (i < src.length && src[i] !== '|' && src[i] !== ')') {
      const node = atom(depth, ci);
      if (node === null) continue; // a comment
      const q = quantifier();
      if (q === null) { items.push(node); continue; }
      if (node.k === 'assert' || node.k === 'look') refuse('a quantified assertion');
      let lazy = false;
      if (src[i] === '+') refuse('a possessive quantifier');
      if (src[i] === '?') { lazy = true; i++; }
      if (quantifier() !== null) refuse('a quantifier after a quantifier');
      items.push({ k: 'rep', body: node, min: q[0], max: q[1], lazy });
    }
    return items.length === 1 ? items[0] : { k: 'seq', items };
  };

  const group = (depth, ci) => {
    if (depth >= MAX_NESTING) refuse(`groups nested more than ${MAX_NESTING} deep`);
    i++; // (
    let node;
    if (src[i] !== '?') node = alternation(depth + 1, ci);
    else {
      const rest = src.slice(i + 1, i + 40);
      const look = /^(=|!|<=|<!)/.exec(rest);
      const named = /^<([A-Za-z_]\w*)>|^'([A-Za-z_]\w*)'/.exec(rest);
      if (rest.startsWith(':')) { i += 2; node = alternation(depth + 1, ci); }
      else if (look) {
        i += 1 + look[0].length;
        node = { k: 'look', body: alternation(depth + 1, ci), behind: look[0][0] === '<', negate: look[0].endsWith('!') };
      } else if (named) { i += 1 + named[0].length; node = alternation(depth + 1, ci); }
      else if (rest.startsWith('i:')) { i += 3; node = alternation(depth + 1, true); }
      else if (rest.startsWith('#')) {
        const end = src.indexOf(')', i);
        if (end < 0) refuse('an unterminated comment');
        i = end + 1;
        return null;
      } else refuse(`the group (?${rest.slice(0, 2)}`);
    }
    if (src[i] !== ')') refuse('an unterminated group');
    i++;
    return node;
  };

  const atom = (depth, ci) => {
    const c = String.fromCodePoint(src.codePointAt(i));
    switch (c) {
      case '\\': return escape(false, ci);
      case '[': if (ci) refuse('a character class inside (?i:...)'); return charClass();
      case '(': return group(depth, ci);
      case '.': i++; return charNode('[^\\n]');
      case '^': i++; return { k: 'assert', kind: '^' };
      case '$': i++; return { k: 'assert', kind: '$' };
      case '*': case '+': case '?': refuse('a quantifier with nothing to repeat'); break;
      case '{': if (quantifier() !== null) refuse('a quantifier with nothing to repeat'); i++; return charNode('\\{');
      default: i += c.length; return ci ? caseless(c) : charNode(literal(c));
    }
    return null;
  };

  const tree = alternation(0, false);
  if (i < src.length) refuse('an unmatched )');
  return tree;
}

// ------------------------------------------------------------------ the JS RegExp of a tree

const ASSERT_SOURCE = {
  '^': '(?<![^\\n])', $: '(?![^\\n])', A: '(?<![\\s\\S])', z: '(?![\\s\\S])', Z: '(?=\\n?(?![\\s\\S]))',
  b: `(?:(?<=[${WORD}])(?![${WORD}])|(?<![${WORD}])(?=[${WORD}]))`,
  B: `(?:(?<=[${WORD}])(?=[${WORD}])|(?<![${WORD}])(?![${WORD}]))`,
};

/** The source of a JS RegExp (u flag) that matches what the tree does. */
export function jsSource(node) {
  switch (node.k) {
    case 'char': return node.set.source;
    case 'seq': return node.items.map((n) => (n.k === 'alt' ? `(?:${jsSource(n)})` : jsSource(n))).join('');
    case 'alt': return node.items.map(jsSource).join('|');
    case 'rep': {
      const { min, max } = node;
      const q = min === 0 && max === Infinity ? '*' : min === 1 && max === Infinity ? '+' : min === 0 && max === 1 ? '?'
        : max === Infinity ? `{${min},}` : min === max ? `{${min}}` : `{${min},${max}}`;
      return `(?:${jsSource(node.body)})${q}${node.lazy ? '?' : ''}`;
    }
    case 'assert': return ASSERT_SOURCE[node.kind];
    case 'look': return `(?${node.behind ? '<' : ''}${node.negate ? '!' : '='}${jsSource(node.body)})`;
    default: throw new Error(`unknown node ${node.k}`);
  }
}

/** The error for a pattern we cannot run, naming the field. */
function refusal(pattern, field) {
  return (reason) => {
    throw new SwapformerError('UNSUPPORTED_MODEL',
      `tokenizer.json: ${field} = ${JSON.stringify(pattern.length > 200 ? `${pattern.slice(0, 200)}...` : pattern)} is not supported (${reason})`);
  };
}

/** The tree of a pattern, checked to mean the same as its JS translation (which JS must accept). */
function checkedTree(pattern, refuse) {
  if (typeof pattern !== 'string') refuse('not a string');
  const tree = parse(pattern, refuse);
  try { new RegExp(jsSource(tree), 'u'); } catch (e) { refuse(e.message); }
  return tree;
}

/** The JS RegExp (flags gu) of the same meaning as an Oniguruma pattern: what the tests compare the matchers with. */
export function jsRegExp(pattern, field = 'pattern') {
  return new RegExp(jsSource(checkedTree(pattern, refusal(pattern, field))), 'gu');
}

/**
 * Compiles an Oniguruma pattern from tokenizer.json into a matcher for
 * regexPattern: exec(s, from) finds the first match at or after `from` (sets
 * .start and .end). `field` names the JSON field for the error messages.
 */
export function compileRegex(pattern, field) {
  const refuse = refusal(pattern, field);
  const tree = checkedTree(pattern, refuse);
  return stockMatcher(pattern) ?? compileProgram(tree, refuse);
}

const isLow = (u) => (u & 0xFC00) === 0xDC00;
const isHigh = (u) => (u & 0xFC00) === 0xD800;

/**
 * A matcher of the literal string `t` (a Split or Replace pattern {String}):
 * Knuth-Morris-Pratt over UTF-16 units, linear in the text whatever `t` is. Like
 * a Unicode RegExp, a match never starts or ends inside a surrogate pair.
 */
export function literalMatcher(t) {
  const m = t.length;
  const fail = new Int32Array(m + 1);
  fail[0] = -1;
  for (let i = 1, k = -1; i <= m; i++) {
    while (k >= 0 && t.charCodeAt(k) !== t.charCodeAt(i - 1)) k = fail[k];
    fail[i] = ++k;
  }
  const splitsPair = (s, p) => p > 0 && p < s.length && isHigh(s.charCodeAt(p - 1)) && isLow(s.charCodeAt(p));
  return {
    start: 0, end: 0,
    exec(s, from) {
      if (m === 0) { this.start = this.end = from; return true; }
      for (let i = from, k = 0; i < s.length; i++) {
        while (k >= 0 && t.charCodeAt(k) !== s.charCodeAt(i)) k = fail[k];
        if (++k === m) {
          const start = i + 1 - m;
          if (!splitsPair(s, start) && !splitsPair(s, i + 1)) { this.start = start; this.end = i + 1; return true; }
          k = fail[k];
        }
      }
      return false;
    },
  };
}
