// Translation of the regular expressions found in tokenizer.json (Rust compiles
// them with Oniguruma, Ruby syntax, UTF-8) into JS RegExps that match the same
// text. Oniguruma's shorthand classes are Unicode-aware (\s is White_Space, \d is
// Nd, \w is L|M|Nd|Pc) while JS's are ASCII; `.` excludes only \n; ^ and $ are
// line anchors for \n only. Anything whose meaning cannot be reproduced exactly
// (atomic groups, possessive quantifiers, nested classes, \G, case-insensitive
// classes...) is refused with UNSUPPORTED_MODEL rather than approximated.

import { SwapformerError } from '../utils/errors.js';
import { regExpMatcher } from './normalized-string.js';

const WORD = '\\p{L}\\p{M}\\p{Nd}\\p{Pc}';
const HEX = '0-9a-fA-F';
const hex = (c) => `\\u{${c.codePointAt(0).toString(16)}}`;

/** Escapes a literal string for a JS RegExp with the u flag. */
export function escapeRegex(s) {
  return Array.from(s, (c) => (/[\p{L}\p{N}]/u.test(c) ? c : hex(c))).join('');
}

/** Whether a \p{name} is a valid JS property escape, trying Script= for script names. */
function propertyEscape(name, negated) {
  const p = negated ? 'P' : 'p';
  for (const candidate of [name, `Script=${name}`]) {
    try { new RegExp(`\\${p}{${candidate}}`, 'u'); return `\\${p}{${candidate}}`; } catch { /* try the next spelling */ }
  }
  return null;
}

/**
 * Translates an Oniguruma pattern into a JS RegExp source; `refuse(reason)` throws.
 * Inside a (?i:...) group only literals are allowed, ASCII letters becoming [xX].
 */
function translate(src, refuse) {
  let out = '';
  let i = 0;
  let inClass = false;
  let ciDepth = 0;        // > 0 inside (?i: ... )
  const groupIsCi = [];   // for each open group, whether it opened a (?i: ...)

  const readEscape = () => {
    const x = src[i + 1];
    if (x === undefined) refuse('a trailing backslash');
    i += 2;
    switch (x) {
      case 'd': return '\\p{Nd}';
      case 'D': return '\\P{Nd}';
      case 's': return '\\p{White_Space}';
      case 'S': return '\\P{White_Space}';
      case 'w': return inClass ? WORD : `[${WORD}]`;
      case 'h': return inClass ? HEX : `[${HEX}]`;
      case 'W': if (inClass) refuse('\\W inside a class'); return `[^${WORD}]`;
      case 'H': if (inClass) refuse('\\H inside a class'); return `[^${HEX}]`;
      case 'n': case 'r': case 't': case 'f': case 'v': return `\\${x}`;
      case 'a': return '\\x07';
      case 'e': return '\\x1b';
      case 'p': case 'P': {
        const m = /^\{(\^?)([A-Za-z_][A-Za-z0-9_ =-]*)\}/.exec(src.slice(i));
        if (!m) refuse('a malformed \\p{...}');
        i += m[0].length;
        if (ciDepth > 0) refuse('\\p{...} inside (?i:...)');
        const escape = propertyEscape(m[2], (x === 'P') !== (m[1] === '^'));
        if (escape === null) refuse(`the property \\p{${m[2]}}`);
        return escape;
      }
      case 'x': {
        const braced = /^\{([0-9a-fA-F]{1,8})\}/.exec(src.slice(i));
        if (braced) { i += braced[0].length; return `\\u{${braced[1]}}`; }
        const plain = /^[0-9a-fA-F]{1,2}/.exec(src.slice(i));
        if (!plain) refuse('a malformed \\x escape');
        i += plain[0].length;
        return `\\u{${plain[0]}}`;
      }
      case 'u': {
        const m = /^[0-9a-fA-F]{4}/.exec(src.slice(i));
        if (!m) refuse('a malformed \\u escape');
        i += 4;
        return `\\u{${m[0]}}`;
      }
      case 'A': if (inClass) break; return '(?<![\\s\\S])';
      case 'z': if (inClass) break; return '(?![\\s\\S])';
      case 'Z': if (inClass) break; return '(?=\\n?(?![\\s\\S]))';
      case 'b': if (inClass) return '\\x08'; return `(?:(?<=[${WORD}])(?![${WORD}])|(?<![${WORD}])(?=[${WORD}]))`;
      case 'B': if (inClass) break; return `(?:(?<=[${WORD}])(?=[${WORD}])|(?<![${WORD}])(?![${WORD}]))`;
      case 'k': {
        const m = /^<([A-Za-z_]\w*)>/.exec(src.slice(i));
        if (!m || inClass) break;
        i += m[0].length;
        return `\\k<${m[1]}>`;
      }
      default:
        if (/[1-9]/.test(x) && !inClass) return `\\${x}`;
        if (!/[A-Za-z0-9]/.test(x)) {
          const c = String.fromCodePoint(src.codePointAt(i - 1));
          i += c.length - 1;
          return hex(c);
        }
    }
    return refuse(`the escape \\${x}`);
  };

  const caseless = (c) => {
    if (/[A-Za-z]/.test(c)) return `[${c.toLowerCase()}${c.toUpperCase()}]`;
    if (/\p{L}/u.test(c)) refuse('a non-ASCII letter inside (?i:...)');
    return /[\p{L}\p{N}]/u.test(c) ? c : hex(c);
  };

  while (i < src.length) {
    const c = String.fromCodePoint(src.codePointAt(i));
    if (c === '\\') { out += readEscape(); continue; }
    if (inClass) {
      if (c === ']') { inClass = false; out += ']'; i++; continue; }
      if (c === '[') refuse('a nested character class');
      if (c === '&' && src[i + 1] === '&') refuse('a class intersection (&&)');
      out += c === '-' ? '-' : (/[\p{L}\p{N}]/u.test(c) ? c : hex(c));
      i += c.length;
      continue;
    }
    switch (c) {
      case '[': {
        if (ciDepth > 0) refuse('a character class inside (?i:...)');
        inClass = true;
        out += '[';
        i++;
        if (src[i] === '^') { out += '^'; i++; }
        if (src[i] === ']') { out += '\\]'; i++; }
        continue;
      }
      case '(': {
        if (src[i + 1] !== '?') { groupIsCi.push(false); out += '('; i++; continue; }
        const rest = src.slice(i + 2);
        const named = /^<([A-Za-z_]\w*)>|^'([A-Za-z_]\w*)'/.exec(rest);
        if (/^(:|=|!|<=|<!)/.test(rest)) {
          const head = /^(:|=|!|<=|<!)/.exec(rest)[0];
          groupIsCi.push(false); out += `(?${head}`; i += 2 + head.length;
        } else if (named) {
          groupIsCi.push(false); out += `(?<${named[1] ?? named[2]}>`; i += 2 + named[0].length;
        } else if (rest.startsWith('i:')) {
          groupIsCi.push(true); ciDepth++; out += '(?:'; i += 4;
        } else if (rest.startsWith('#')) {
          const end = src.indexOf(')', i);
          if (end < 0) refuse('an unterminated comment');
          i = end + 1;
        } else {
          refuse(`the group (?${rest.slice(0, 2)}`);
        }
        continue;
      }
      case ')': if (groupIsCi.pop()) ciDepth--; out += ')'; i++; continue;
      case '.': out += '[^\\n]'; i++; continue;
      case '^': out += '(?<![^\\n])'; i++; continue;
      case '$': out += '(?![^\\n])'; i++; continue;
      case '*': case '+': case '?': {
        out += c; i++;
        if (src[i] === '+') refuse('a possessive quantifier');
        if (src[i] === '?') { out += '?'; i++; }
        continue;
      }
      case '{': {
        const m = /^\{(\d+(,\d*)?|,\d+)\}/.exec(src.slice(i));
        if (!m) { out += '\\{'; i++; continue; }
        out += m[0].startsWith('{,') ? `{0${m[0].slice(1)}` : m[0];
        i += m[0].length;
        if (src[i] === '+') refuse('a possessive quantifier');
        if (src[i] === '?') { out += '?'; i++; }
        continue;
      }
      case '|': out += '|'; i++; continue;
      default:
        out += ciDepth > 0 ? caseless(c) : (/[\p{L}\p{N}]/u.test(c) ? c : hex(c));
        i += c.length;
    }
  }
  if (inClass) refuse('an unterminated character class');
  return out;
}

/**
 * Compiles an Oniguruma pattern from tokenizer.json into a global Unicode JS RegExp.
 * `field` names the JSON field for the error message.
 */
export function compileRegex(pattern, field) {
  const refuse = (reason) => {
    throw new SwapformerError('UNSUPPORTED_MODEL',
      `tokenizer.json: ${field} = ${JSON.stringify(pattern)} is not supported (${reason})`);
  };
  if (typeof pattern !== 'string') refuse('not a string');
  const source = translate(pattern, refuse);
  try {
    return regExpMatcher(new RegExp(source, 'gu'));
  } catch (e) {
    return refuse(e.message);
  }
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
