// NormalizedString: a string being normalized, with the alignment of every
// normalized code unit back to the original string, and the patterns used to split
// or replace inside it. A port of the semantics of Rust's
// tokenizers/src/tokenizer/normalizer.rs and pattern.rs: Rust keeps one alignment
// per UTF-8 byte of the normalized string, we keep one per UTF-16 code unit; the
// characters of a code point always share their alignment, so every offset that
// reaches the caller is the same up to the unit conversion. Quirks of Rust's
// algorithms (which character an inserted one is aligned to, zero-width
// alignments) are reproduced on purpose: the offsets must agree exactly.

import { isWhitespace, normalizeWithChanges } from './unicode.js';

// ------------------------------------------------------------------ patterns

/** One match list entry: [start, end, isMatch], positions in UTF-16 units. */

/** A pattern matching single characters for which `test(char)` is true. */
export function charPattern(test) {
  return {
    findMatches(s) {
      if (s.length === 0) return [[0, 0, false]];
      const out = [];
      let last = 0;
      let i = 0;
      for (const c of s) {
        if (test(c)) {
          if (last < i) out.push([last, i, false]);
          out.push([i, i + c.length, true]);
          last = i + c.length;
        }
        i += c.length;
      }
      if (i > last) out.push([last, i, false]);
      return out;
    },
  };
}

/**
 * A pattern from a JS RegExp (with the `g` and `u` flags), iterated as the Rust
 * `onig` crate does: an empty match right where the previous match ended is
 * skipped by advancing one character.
 */
export function regexPattern(regex) {
  return {
    findMatches(s) {
      if (s.length === 0) return [[0, 0, false]];
      const out = [];
      let prev = 0;
      let searchFrom = 0;
      let lastMatchEnd = -1;
      while (searchFrom <= s.length) {
        regex.lastIndex = searchFrom;
        const m = regex.exec(s);
        if (m === null) break;
        const start = m.index;
        const end = start + m[0].length;
        if (start === end && end === lastMatchEnd) {
          const cp = s.codePointAt(searchFrom);
          searchFrom += cp === undefined ? 1 : cp > 0xFFFF ? 2 : 1;
          continue;
        }
        if (prev !== start) out.push([prev, start, false]);
        out.push([start, end, true]);
        prev = end;
        searchFrom = end;
        lastMatchEnd = end;
      }
      if (prev !== s.length) out.push([prev, s.length, false]);
      return out;
    },
  };
}

/** The same pattern with matches and non-matches swapped. */
export function invertPattern(pattern) {
  return { findMatches: (s) => pattern.findMatches(s).map(([a, b, m]) => [a, b, !m]) };
}

// ------------------------------------------------------------------ NormalizedString

/** Concatenates Int32Arrays. */
function joinAlign(parts) {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Int32Array(n);
  let k = 0;
  for (const p of parts) { out.set(p, k); k += p.length; }
  return out;
}

export class NormalizedString {
  /**
   * Rust keeps alignments relative to its piece of the original plus the piece's
   * shift; we keep them absolute (positions in the whole input sequence), which is
   * the same once Rust adds the shift back, and lets a slice share its parent's
   * alignment array.
   * @param {string} normalized
   * @param {Int32Array} align  [start, end] in the input for each unit of `normalized`, flattened
   * @param {number} origStart  where this piece of the input starts
   * @param {number} origEnd    and ends
   */
  constructor(normalized, align, origStart, origEnd) {
    this.normalized = normalized;
    this.align = align;
    this.origStart = origStart;
    this.origEnd = origEnd;
  }

  /** A NormalizedString whose normalized form is the string itself. */
  static from(s) {
    const align = new Int32Array(s.length * 2);
    for (let i = 0; i < s.length;) {
      const n = s.codePointAt(i) > 0xFFFF ? 2 : 1;
      for (let k = 0; k < n; k++) { align[2 * (i + k)] = i; align[2 * (i + k) + 1] = i + n; }
      i += n;
    }
    return new NormalizedString(s, align, 0, s.length);
  }

  get() { return this.normalized; }
  get length() { return this.normalized.length; }
  isEmpty() { return this.normalized.length === 0; }
  /** [start, end] of this piece in the whole input. */
  offsetsOriginal() { return [this.origStart, this.origEnd]; }

  /**
   * A normalized range [s, e) as a range of the input, or null (Rust's
   * convert_offsets; an empty range comes back as the same positions, shifted).
   */
  normalizedToOriginal(s, e) {
    if (s === e) return [this.origStart + s, this.origStart + e];
    if (s > e || e > this.normalized.length) return null;
    return [this.align[2 * s], this.align[2 * (e - 1) + 1]];
  }

  /** An input range [s, e) as a range of `normalized`, or null (Rust's convert_offsets). */
  originalToNormalized(s, e) {
    if (s === e) return [s - this.origStart, e - this.origStart];
    if (s > e) return null;
    let start = null, end = null;
    const n = this.normalized.length;
    for (let i = 0; i < n; i++) {
      const a0 = this.align[2 * i], a1 = this.align[2 * i + 1];
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
    return new NormalizedString(this.normalized.slice(s, e), this.align.subarray(2 * s, 2 * e), os, s === e ? os : oe);
  }

  /**
   * Replaces normalized units [nStart, nEnd) by `dest`, a list of [char, change]:
   * change 0 replaces the next character, +1 inserts (aligned with the previous
   * one), -N replaces the next character and removes the N following ones;
   * `initialOffset` characters are removed first. (Rust's transform_range.)
   */
  transformRange(nStart, nEnd, dest, initialOffset) {
    const replaced = Array.from(this.normalized.slice(nStart, nEnd));
    let r = 0;
    let offset = nStart;
    for (; r < initialOffset && r < replaced.length; r++) offset += replaced[r].length;
    let units = 0;
    for (const [c] of dest) units += c.length;
    const align = new Int32Array(2 * units);
    let k = 0;
    let text = '';
    for (const [c, change] of dest) {
      let a0, a1;
      if (change > 0) {
        // Rust aligns a character inserted at the very start with (0, 0) of its piece.
        if (offset < 1) { a0 = this.origStart; a1 = this.origStart; } else { a0 = this.align[2 * (offset - 1)]; a1 = this.align[2 * (offset - 1) + 1]; }
      } else {
        a0 = this.align[2 * offset]; a1 = this.align[2 * offset + 1];
        if (r < replaced.length) offset += replaced[r++].length;
        for (let j = 0; j < -change && r < replaced.length; j++) offset += replaced[r++].length;
      }
      for (let j = 0; j < c.length; j++) { align[k++] = a0; align[k++] = a1; }
      text += c;
    }
    this.align = joinAlign([this.align.subarray(0, 2 * nStart), align, this.align.subarray(2 * nEnd)]);
    this.normalized = this.normalized.slice(0, nStart) + text + this.normalized.slice(nEnd);
  }

  /** transformRange over the whole string (Rust's transform: Range::Original(..)). */
  transform(dest, initialOffset) {
    const range = this.originalToNormalized(this.origStart, this.origEnd);
    if (range !== null) this.transformRange(range[0], range[1], dest, initialOffset);
  }

  /**
   * Whether transform() covers the whole string. It does unless the first unit has a
   * zero-width alignment; then the general path reproduces what Rust does.
   */
  coversAll() {
    return this.normalized.length > 0 && this.align[0] !== this.align[1];
  }

  /**
   * Maps each character to a string whose characters all keep the alignment of the
   * source character: what transform() gives for changes [0, +1, +1, ...].
   */
  flatMap(fn) {
    if (!this.coversAll()) {
      const dest = [];
      for (const c of this.normalized) Array.from(fn(c)).forEach((d, i) => dest.push([d, i > 0 ? 1 : 0]));
      this.transform(dest, 0);
      return this;
    }
    // Built lazily: most passes (cleaning, lowercasing ASCII...) change nothing.
    const n = this.normalized.length;
    let text = null;
    let align = null;
    let k = 0;
    for (let i = 0; i < n;) {
      const c = String.fromCodePoint(this.normalized.codePointAt(i));
      const d = fn(c);
      if (text === null) {
        if (d === c) { i += c.length; continue; }
        text = this.normalized.slice(0, i);
        align = new Int32Array(2 * n + 16);
        align.set(this.align.subarray(0, 2 * i));
        k = 2 * i;
      }
      if (k + 2 * d.length > align.length) {
        const grown = new Int32Array(2 * align.length + 2 * d.length);
        grown.set(align);
        align = grown;
      }
      for (let j = 0; j < d.length; j++) { align[k++] = this.align[2 * i]; align[k++] = this.align[2 * i + 1]; }
      text += d;
      i += c.length;
    }
    if (text === null) return this;
    this.normalized = text;
    this.align = align.subarray(0, k);
    return this;
  }

  /** Maps each character to one character. */
  map(fn) { return this.flatMap(fn); }

  /** Unicode normalization: form is NFC, NFD, NFKC or NFKD. */
  unicodeNormalize(form) {
    const changes = normalizeWithChanges(this.normalized, form);
    if (changes !== null) this.transform(changes, 0);
    else if (!this.coversAll()) this.transform(Array.from(this.normalized, (c) => [c, 0]), 0);
    return this;
  }

  /** Lowercases character by character, as Rust's char::to_lowercase (no final-sigma rule). */
  lowercase() { return this.flatMap((c) => c.toLowerCase()); }

  /** Keeps the characters for which keep(c) is true; kept characters keep their alignment. */
  filter(keep) {
    if (!this.coversAll()) {
      const dest = [];
      let removed = 0, removedStart = 0, last = null;
      for (const c of this.normalized) {
        if (keep(c)) {
          if (last !== null) dest.push([last, -removed]); else removedStart = removed;
          last = c;
          removed = 0;
        } else removed++;
      }
      if (last !== null) dest.push([last, -removed]);
      this.transform(dest, removedStart);
      return this;
    }
    return this.flatMap((c) => (keep(c) ? c : ''));
  }

  /** Prepends `s`, aligned with the first character. */
  prepend(s) {
    if (this.normalized.length === 0) return this;
    const first = String.fromCodePoint(this.normalized.codePointAt(0));
    const dest = Array.from(s).map((c, i) => [c, i === 0 ? 0 : 1]);
    dest.push([first, 1]);
    this.transformRange(0, first.length, dest, 0);
    return this;
  }

  /** Replaces every match of `pattern` by `content`; each inserted character takes the alignment of the last replaced one. */
  replace(pattern, content) {
    let text = '';
    const parts = [];
    let lastEnd = 0;
    for (const [start, end, isMatch] of pattern.findMatches(this.normalized)) {
      if (!isMatch) continue;
      text += this.normalized.slice(lastEnd, start);
      parts.push(this.align.subarray(2 * lastEnd, 2 * start));
      const inserted = new Int32Array(2 * content.length);
      // An empty match at the very start: Rust's (0, 0) of the piece.
      const a0 = end < 1 ? this.origStart : this.align[2 * (end - 1)];
      const a1 = end < 1 ? this.origStart : this.align[2 * (end - 1) + 1];
      for (let k = 0; k < content.length; k++) { inserted[2 * k] = a0; inserted[2 * k + 1] = a1; }
      parts.push(inserted);
      text += content;
      lastEnd = end;
    }
    if (lastEnd === 0 && parts.length === 0) return this;
    text += this.normalized.slice(lastEnd);
    parts.push(this.align.subarray(2 * lastEnd));
    this.normalized = text;
    this.align = joinAlign(parts);
    return this;
  }

  /** Removes leading and/or trailing whitespace. */
  strip(left, right) {
    const chars = Array.from(this.normalized);
    let lead = 0, trail = 0;
    if (left) while (lead < chars.length && isWhitespace(chars[lead])) lead++;
    if (right) while (trail < chars.length && isWhitespace(chars[chars.length - 1 - trail])) trail++;
    if (lead === 0 && trail === 0) return this;
    const dest = [];
    for (let i = lead; i < chars.length - trail; i++) dest.push([chars[i], 0]);
    // Rust marks the trailing removal on the last kept character only when its
    // (byte-length based) index test happens to hit; dropping the tail is the same.
    this.transform(dest, lead);
    return this;
  }

  /**
   * Splits on `pattern` (Rust's NormalizedString::split) with a behavior among
   * Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous.
   */
  split(pattern, behavior) {
    const matches = pattern.findMatches(this.normalized);
    let splits;
    switch (behavior) {
      case 'Isolated': splits = matches.map(([a, b]) => [a, b, false]); break;
      case 'Removed': splits = matches; break;
      case 'Contiguous': splits = mergeRuns(matches, (isMatch, prev) => isMatch === prev); break;
      case 'MergedWithPrevious': splits = mergeRuns(matches, (isMatch, prev) => isMatch && !prev); break;
      case 'MergedWithNext': splits = mergeWithNext(matches); break;
      default: throw new Error(`unknown split behavior ${behavior}`);
    }
    const out = [];
    for (const [a, b, remove] of splits) if (!remove) out.push(this.slice(a, b));
    return out;
  }
}

/** Extends the previous split over the current match when `join(isMatch, previousWasMatch)`. */
function mergeRuns(matches, join) {
  const acc = [];
  let prev = false;
  for (const [a, b, isMatch] of matches) {
    if (join(isMatch, prev) && acc.length > 0) acc[acc.length - 1][1] = b;
    else acc.push([a, b, false]);
    prev = isMatch;
  }
  return acc;
}

/** MergedWithNext: each match is glued to the split that follows it. */
function mergeWithNext(matches) {
  const acc = [];
  let prev = false;
  for (let i = matches.length - 1; i >= 0; i--) {
    const [a, b, isMatch] = matches[i];
    if (isMatch && !prev && acc.length > 0) acc[acc.length - 1][0] = a;
    else acc.push([a, b, false]);
    prev = isMatch;
  }
  return acc.reverse();
}
