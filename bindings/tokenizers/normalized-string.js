// NormalizedString: a string being normalized, with the alignment of every
// normalized code unit back to the original string, and the patterns used to split
// or replace inside it. A port of the semantics of Rust's
// tokenizers/src/tokenizer/normalizer.rs and pattern.rs: Rust keeps one alignment
// per UTF-8 byte of the normalized string, we keep one per UTF-16 code unit; the
// units of a code point always share their alignment, so every offset that
// reaches the caller is the same up to the unit conversion. Quirks of Rust's
// algorithms (which character an inserted one is aligned to, zero-width
// alignments) are reproduced on purpose: the offsets must agree exactly.
//
// Memory: an alignment is one Int32 per unit. Rust's (start, end) pairs always
// are the span of one original code point or an empty span, so v >= 0 stands for
// the code point that starts at v and v < 0 for the empty span at -v - 1. A
// string that no normalizer changed keeps no array at all (its alignment is the
// identity, computed when asked). Rewrites write into shared scratch buffers and
// allocate only the result.

import { isWhitespace, normalizeWithChanges } from './unicode.js';

/** Units of the code point that starts at s[i] (2 for a surrogate pair). */
export function unitsAt(s, i) {
  const u = s.charCodeAt(i);
  return u >= 0xD800 && u <= 0xDBFF && (s.charCodeAt(i + 1) & 0xFC00) === 0xDC00 ? 2 : 1;
}

/** The start of the code point that s[i] belongs to (i - 1 for the second unit of a pair). */
function codePointStart(s, i) {
  return i > 0 && (s.charCodeAt(i) & 0xFC00) === 0xDC00 && (s.charCodeAt(i - 1) & 0xFC00) === 0xD800 ? i - 1 : i;
}

/** The alignment value of an empty span at p. */
const zeroWidth = (p) => -p - 1;
const spanStart = (v) => (v >= 0 ? v : -v - 1);

// ------------------------------------------------------------------ building strings

/** Growable scratch buffers for the units and alignments being written (one rewrite at a time). */
let scratchUnits = new Uint16Array(1024);
let scratchAlign = new Int32Array(1024);
const CHUNK = 8192;

/** The units and alignment values written by a rewrite. */
class Output {
  constructor(expected) {
    this.k = 0;
    this.reserve(expected);
  }

  reserve(extra) {
    const need = this.k + extra;
    if (need <= scratchUnits.length) return;
    let size = scratchUnits.length;
    while (size < need) size *= 2;
    const units = new Uint16Array(size);
    units.set(scratchUnits.subarray(0, this.k));
    const align = new Int32Array(size);
    align.set(scratchAlign.subarray(0, this.k));
    scratchUnits = units;
    scratchAlign = align;
  }

  unit(u, a) {
    if (this.k === scratchUnits.length) this.reserve(1);
    scratchUnits[this.k] = u;
    scratchAlign[this.k++] = a;
  }

  string(s, a) {
    this.reserve(s.length);
    for (let i = 0; i < s.length; i++) { scratchUnits[this.k] = s.charCodeAt(i); scratchAlign[this.k++] = a; }
  }

  /** Units [from, to) of ns with their own alignments. */
  copy(ns, from, to) {
    this.reserve(to - from);
    const src = ns.normalized;
    for (let i = from; i < to; i++) { scratchUnits[this.k] = src.charCodeAt(i); scratchAlign[this.k++] = ns.alignAt(i); }
  }

  text() {
    if (this.k <= CHUNK) return String.fromCharCode.apply(null, scratchUnits.subarray(0, this.k));
    const parts = [];
    for (let i = 0; i < this.k; i += CHUNK) parts.push(String.fromCharCode.apply(null, scratchUnits.subarray(i, Math.min(this.k, i + CHUNK))));
    return parts.join('');
  }

  /** Sets ns to `prefix units of ns + what was written + units of ns from suffixFrom`. */
  into(ns, prefix = 0, suffixFrom = ns.normalized.length) {
    const n = ns.normalized.length;
    const body = this.text();
    const align = new Int32Array(prefix + this.k + (n - suffixFrom));
    for (let i = 0; i < prefix; i++) align[i] = ns.alignAt(i);
    align.set(scratchAlign.subarray(0, this.k), prefix);
    for (let i = suffixFrom; i < n; i++) align[prefix + this.k + i - suffixFrom] = ns.alignAt(i);
    ns.normalized = prefix === 0 && suffixFrom === n ? body : ns.normalized.slice(0, prefix) + body + ns.normalized.slice(suffixFrom);
    ns.align = align;
    ns.base = -1;
    // A long text's rewrite does not keep its scratch buffers alive afterwards.
    if (scratchUnits.length > 1 << 16) { scratchUnits = new Uint16Array(1024); scratchAlign = new Int32Array(1024); }
  }
}

/**
 * Rust's transform_range over normalized units [start, end) of a string, fed one
 * [char, change] at a time: change 0 replaces the next character, +1 inserts
 * (aligned with the previous one), -N replaces the next character and removes the
 * N following ones; `initialOffset` characters are removed first.
 */
class Rewrite {
  constructor(ns, start, end, initialOffset) {
    this.ns = ns;
    this.start = start;
    this.end = end;
    this.offset = start;
    this.out = new Output(end - start + 16);
    for (let r = 0; r < initialOffset && this.offset < end; r++) this.skip();
  }

  /** Moves past the next old character (a removal). */
  skip() {
    this.offset += this.offset + 1 < this.end ? unitsAt(this.ns.normalized, this.offset) : 1;
  }

  /** The alignment for a character with this change, moving past the old characters it replaces. */
  alignFor(change) {
    const { ns } = this;
    if (change > 0) return this.offset < 1 ? zeroWidth(ns.origStart) : ns.alignAt(this.offset - 1);
    // Past the end of the string Rust's alignments give (0, 0).
    const a = this.offset < ns.normalized.length ? ns.alignAt(this.offset) : zeroWidth(0);
    if (this.offset < this.end) this.skip();
    for (let j = 0; j < -change && this.offset < this.end; j++) this.skip();
    return a;
  }

  push(c, change) { this.out.string(c, this.alignFor(change)); }
  pushUnit(u, change) { this.out.unit(u, this.alignFor(change)); }

  /** push(c, 0) for each character of the old units [offset, offset + units): they stay as they are. */
  keepUnits(units) {
    this.out.copy(this.ns, this.offset, this.offset + units);
    this.offset += units;
  }

  finish() { this.out.into(this.ns, this.start, this.end); }
}

// ------------------------------------------------------------------ patterns

// A pattern is { segments(s, fn) }: fn(start, end, isMatch) for consecutive
// pieces covering s, positions in UTF-16 units (an empty s gives one empty
// non-match).

/** Calls fn for the matches and the gaps between them, from a list of matches given by `each(s, onMatch)`. */
function withGaps(s, each, fn) {
  if (s.length === 0) { fn(0, 0, false); return; }
  let prev = 0;
  each(s, (start, end) => {
    if (prev !== start) fn(prev, start, false);
    fn(start, end, true);
    prev = end;
  });
  if (prev !== s.length) fn(prev, s.length, false);
}

/** A pattern matching single characters for which `test(char)` is true. */
export function charPattern(test) {
  return {
    segments(s, fn) {
      withGaps(s, (_, onMatch) => {
        for (let i = 0; i < s.length;) {
          const n = unitsAt(s, i);
          if (test(n === 1 ? s[i] : s.slice(i, i + 2))) onMatch(i, i + n);
          i += n;
        }
      }, fn);
    },
  };
}

/**
 * A pattern from a matcher whose exec(s, from) finds the first match at or after
 * `from` (setting .start and .end), iterated as the Rust `onig` crate does: an
 * empty match right where the previous match ended is skipped by advancing one
 * character. A matcher with begin(s) is told when a new string starts.
 */
export function regexPattern(matcher) {
  return {
    segments(s, fn) {
      matcher.begin?.(s);
      withGaps(s, (_, onMatch) => {
        let searchFrom = 0;
        let lastMatchEnd = -1;
        while (searchFrom <= s.length && matcher.exec(s, searchFrom)) {
          const { start, end } = matcher;
          if (start === end && end === lastMatchEnd) {
            searchFrom += searchFrom < s.length ? unitsAt(s, searchFrom) : 1;
            continue;
          }
          onMatch(start, end);
          searchFrom = end;
          lastMatchEnd = end;
        }
      }, fn);
    },
  };
}

/** A matcher over a trusted JS RegExp (with the g and u flags) of our own. */
export function regExpMatcher(regex) {
  return {
    start: 0, end: 0,
    exec(s, from) {
      regex.lastIndex = from;
      const m = regex.exec(s);
      if (m === null) return false;
      this.start = m.index;
      this.end = m.index + m[0].length;
      return true;
    },
  };
}

/** The same pattern with matches and non-matches swapped. */
export function invertPattern(pattern) {
  return { segments: (s, fn) => pattern.segments(s, (a, b, isMatch) => fn(a, b, !isMatch)) };
}

// ------------------------------------------------------------------ NormalizedString

export class NormalizedString {
  /**
   * Rust keeps alignments relative to its piece of the original plus the piece's
   * shift; we keep them absolute (positions in the whole input sequence), which is
   * the same once Rust adds the shift back, and lets a slice share its parent's
   * alignment array.
   * @param {string} original      the whole input sequence
   * @param {string} normalized
   * @param {Int32Array|null} align one value per unit of `normalized` (see the top), or null:
   * @param {number} base           the identity, unit i being original[base + i] (-1 with an array)
   * @param {number} origStart      where this piece of the input starts
   * @param {number} origEnd        and ends
   */
  constructor(original, normalized, align, base, origStart, origEnd) {
    this.original = original;
    this.normalized = normalized;
    this.align = align;
    this.base = base;
    this.origStart = origStart;
    this.origEnd = origEnd;
  }

  /** A NormalizedString whose normalized form is the string itself. */
  static from(s) {
    return new NormalizedString(s, s, null, 0, 0, s.length);
  }

  get() { return this.normalized; }
  get length() { return this.normalized.length; }
  isEmpty() { return this.normalized.length === 0; }
  /** [start, end] of this piece in the whole input. */
  offsetsOriginal() { return [this.origStart, this.origEnd]; }

  /** The alignment value of unit i. */
  alignAt(i) {
    return this.align !== null ? this.align[i] : codePointStart(this.original, this.base + i);
  }

  /** [start, end) in the input of unit i. */
  spanStart(i) { return spanStart(this.alignAt(i)); }
  spanEnd(i) {
    const v = this.alignAt(i);
    return v >= 0 ? v + unitsAt(this.original, v) : -v - 1;
  }

  /**
   * A normalized range [s, e) as a range of the input, or null (Rust's
   * convert_offsets; an empty range comes back as the same positions, shifted).
   */
  normalizedToOriginal(s, e) {
    if (s === e) return [this.origStart + s, this.origStart + e];
    if (s > e || e > this.normalized.length) return null;
    return [this.spanStart(s), this.spanEnd(e - 1)];
  }

  /** An input range [s, e) as a range of `normalized`, or null (Rust's convert_offsets). */
  originalToNormalized(s, e) {
    if (s === e) return [s - this.origStart, e - this.origStart];
    if (s > e) return null;
    let start = null, end = null;
    const n = this.normalized.length;
    for (let i = 0; i < n; i++) {
      const v = this.alignAt(i);
      const a0 = spanStart(v), a1 = v >= 0 ? v + unitsAt(this.original, v) : a0;
      if (e < a1) break;
      // Zero-width alignments never start a range (as in Rust).
      if (start === null && s <= a0 && a0 !== a1) start = i;
      end = i + 1;
    }
    if (start !== null && end !== null) return [start, end];
    if (start !== null) return [start, start];
    if (end !== null) return [end, end];
    return null;
  }

  /** The slice covering normalized units [s, e) (Rust's slice(Range::Normalized)). */
  slice(s, e) {
    const [os, oe] = this.normalizedToOriginal(s, e);
    const align = this.align === null ? null : this.align.subarray(s, e);
    return new NormalizedString(this.original, this.normalized.slice(s, e), align, align === null ? this.base + s : -1, os, s === e ? os : oe);
  }

  /** A rewrite of the whole string as Rust's transform (Range::Original(..)), or null when that range is empty. */
  rewrite(initialOffset = 0) {
    const range = this.originalToNormalized(this.origStart, this.origEnd);
    return range === null ? null : new Rewrite(this, range[0], range[1], initialOffset);
  }

  /** transform() with the changes given by `feed(rewrite)` (Rust's transform over the whole string). */
  transformWith(feed, initialOffset = 0) {
    const r = this.rewrite(initialOffset);
    if (r === null) return this;
    feed(r);
    r.finish();
    return this;
  }

  /**
   * Whether transform() covers the whole string. It does unless the first unit has a
   * zero-width alignment; then the general path reproduces what Rust does.
   */
  coversAll() {
    return this.normalized.length > 0 && this.alignAt(0) >= 0;
  }

  /**
   * Maps each character to a string whose characters all keep the alignment of the
   * source character (what transform() gives for changes [0, +1, +1, ...]); an
   * empty string removes the character.
   */
  flatMap(fn) {
    const src = this.normalized;
    const n = src.length;
    if (!this.coversAll()) {
      return this.transformWith((r) => {
        for (let i = 0; i < n;) {
          const c = src.slice(i, i + unitsAt(src, i));
          const d = fn(c);
          for (let j = 0; j < d.length;) { const m = unitsAt(d, j); r.push(d.slice(j, j + m), j > 0 ? 1 : 0); j += m; }
          i += c.length;
        }
      });
    }
    // Written only from the first change on: most passes (cleaning, lowercasing ASCII...) change nothing.
    let out = null;
    let kept = 0; // units [kept, i) are unchanged and not written yet
    for (let i = 0; i < n;) {
      const m = unitsAt(src, i);
      const c = m === 1 ? src[i] : src.slice(i, i + 2);
      const d = fn(c);
      if (d !== c) {
        out ??= new Output(n + 16);
        out.copy(this, kept, i);
        if (d.length > 0) out.string(d, this.alignAt(i));
        kept = i + m;
      }
      i += m;
    }
    if (out === null) return this;
    out.copy(this, kept, n);
    out.into(this);
    return this;
  }

  /** Maps each character to one character. */
  map(fn) { return this.flatMap(fn); }

  /** Unicode normalization: form is NFC, NFD, NFKC or NFKD. */
  unicodeNormalize(form) {
    const s = this.normalized;
    if (s.normalize(form) !== s) return this.transformWith((r) => normalizeWithChanges(s, form, r));
    // Unchanged; Rust's transform still runs, which matters where it does not cover the whole string.
    if (!this.coversAll()) this.transformWith((r) => { for (let i = 0; i < s.length;) { const m = unitsAt(s, i); r.push(s.slice(i, i + m), 0); i += m; } });
    return this;
  }

  /** Lowercases character by character, as Rust's char::to_lowercase (no final-sigma rule). */
  lowercase() { return this.flatMap(lowercaseChar); }

  /** Keeps the characters for which keep(c) is true; kept characters keep their alignment. */
  filter(keep) {
    if (this.coversAll()) return this.flatMap((c) => (keep(c) ? c : ''));
    // Rust's transform with change -N on a kept character for the N removed after it.
    const src = this.normalized;
    let lead = 0;
    while (lead < src.length && !keep(src.slice(lead, lead + unitsAt(src, lead)))) lead += unitsAt(src, lead);
    let removedStart = 0;
    for (let i = 0; i < lead; i += unitsAt(src, i)) removedStart++;
    return this.transformWith((r) => {
      for (let i = lead; i < src.length;) {
        const m = unitsAt(src, i);
        const c = src.slice(i, i + m);
        i += m;
        let removed = 0;
        while (i < src.length && !keep(src.slice(i, i + unitsAt(src, i)))) { removed++; i += unitsAt(src, i); }
        r.push(c, -removed);
      }
    }, removedStart);
  }

  /** Prepends `s`, aligned with the first character. */
  prepend(s) {
    if (this.normalized.length === 0) return this;
    const first = this.normalized.slice(0, unitsAt(this.normalized, 0));
    const r = new Rewrite(this, 0, first.length, 0);
    for (let i = 0; i < s.length;) { const m = unitsAt(s, i); r.push(s.slice(i, i + m), i === 0 ? 0 : 1); i += m; }
    r.push(first, 1);
    r.finish();
    return this;
  }

  /** Replaces every match of `pattern` by `content`; each inserted character takes the alignment of the last replaced one. */
  replace(pattern, content) {
    let out = null;
    let lastEnd = 0;
    pattern.segments(this.normalized, (start, end, isMatch) => {
      if (!isMatch) return;
      out ??= new Output(this.normalized.length + 16);
      out.copy(this, lastEnd, start);
      // An empty match at the very start: Rust's (0, 0) of the piece.
      out.string(content, end < 1 ? zeroWidth(this.origStart) : this.alignAt(end - 1));
      lastEnd = end;
    });
    if (out === null) return this;
    out.copy(this, lastEnd, this.normalized.length);
    out.into(this);
    return this;
  }

  /** Removes leading and/or trailing whitespace. */
  strip(left, right) {
    const isSpace = isWhitespace;
    const src = this.normalized;
    let lead = 0, leadChars = 0, trail = src.length;
    if (left) while (lead < src.length && isSpace(src.slice(lead, lead + unitsAt(src, lead)))) { lead += unitsAt(src, lead); leadChars++; }
    if (right) {
      while (trail > lead) {
        const p = codePointStart(src, trail - 1);
        if (!isSpace(src.slice(p, trail))) break;
        trail = p;
      }
    }
    if (lead === 0 && trail === src.length) return this;
    // Rust marks the trailing removal on the last kept character only when its
    // (byte-length based) index test happens to hit; dropping the tail is the same.
    return this.transformWith((r) => {
      if (r.offset === lead) { r.keepUnits(trail - lead); return; }
      for (let i = lead; i < trail;) { const m = unitsAt(src, i); r.push(src.slice(i, i + m), 0); i += m; }
    }, leadChars);
  }

  /**
   * Splits on `pattern` (Rust's NormalizedString::split) with a behavior among
   * Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous, and calls
   * emit(slice) for each non-empty piece, in order.
   */
  split(pattern, behavior, emit) {
    const piece = (a, b) => { if (a < b) emit(this.slice(a, b)); };
    // The piece waiting for what follows (Contiguous, MergedWith*): [start, end], or start -1.
    let pendingStart = -1, pendingEnd = 0, prevMatch = false;
    const flush = () => { if (pendingStart >= 0) piece(pendingStart, pendingEnd); pendingStart = -1; };
    let on;
    switch (behavior) {
      case 'Isolated': on = (a, b) => piece(a, b); break;
      case 'Removed': on = (a, b, isMatch) => { if (!isMatch) piece(a, b); }; break;
      case 'Contiguous':
      case 'MergedWithPrevious': {
        const join = behavior === 'Contiguous' ? (isMatch) => isMatch === prevMatch : (isMatch) => isMatch && !prevMatch;
        on = (a, b, isMatch) => {
          if (pendingStart >= 0 && join(isMatch)) pendingEnd = b;
          else { flush(); pendingStart = a; pendingEnd = b; }
          prevMatch = isMatch;
        };
        break;
      }
      case 'MergedWithNext':
        // Rust folds from the end: a match is glued to the piece after it when that one is not a match.
        on = (a, b, isMatch) => {
          if (pendingStart >= 0 && prevMatch && !isMatch) { pendingEnd = b; prevMatch = false; flush(); return; }
          flush();
          pendingStart = a; pendingEnd = b; prevMatch = isMatch;
          if (!isMatch) flush();
        };
        break;
      default: throw new Error(`unknown split behavior ${behavior}`);
    }
    pattern.segments(this.normalized, on);
    flush();
  }
}

const lowercaseCache = new Map();
/** char::to_lowercase of one character (ASCII without a lookup). */
function lowercaseChar(c) {
  const u = c.charCodeAt(0);
  if (u < 0x80) return u >= 0x41 && u <= 0x5A ? String.fromCharCode(u + 32) : c;
  let d = lowercaseCache.get(c);
  if (d === undefined) {
    d = c.toLowerCase();
    if (lowercaseCache.size < 65536) lowercaseCache.set(c, d);
  }
  return d;
}
