// A backtracking machine for the regular expressions of tokenizer.json (regex.js
// parses them) with the same leftmost-first answers as Oniguruma and a JS
// RegExp, whose work is bounded:
// - A state is (instruction, position). Where several paths meet (a loop head,
//   the end of an alternation: the instructions with more than one way in), a
//   state already explored is not explored again: it failed, and would fail
//   again (nothing else is remembered along a path: there are no captures or
//   backreferences). Every path into any other instruction comes from one of
//   those, so each state runs at most once: a search costs at most the program's
//   length times the text's, and `(a+)+$`, `(a|a)*$`... run in linear time.
//   (A repeated part that can match the empty string is refused: there
//   Oniguruma and a JS RegExp disagree.)
// - The record of explored states survives from one match to the next (a state
//   at or after the end of a match that was explored failed), except at the
//   match's end, where it was on the successful path.
// - Lookarounds are sub-searches with records of their own; they alone can make
//   the work grow faster than the text, which a budget of steps (proportional
//   to the text and the program) bounds: past it, a SwapformerError.


// ------------------------------------------------------------------ character sets

const setCache = new Map();

/**
 * A set of code points given by a JS class source (`[...]`, `\p{...}` or one
 * escaped character), tested through the RegExp of that source once per block of
 * 256 code points (then a table lookup), astral code points one by one.
 */
export class CharSet {
  static of(source) {
    let set = setCache.get(source);
    if (set === undefined) { set = new CharSet(source); setCache.set(source, set); }
    return set;
  }

  constructor(source) {
    this.source = source;
    this.regex = new RegExp(`^(?:${source})$`, 'u');
    this.blocks = new Array(256);
    this.astral = new Map();
  }

  has(cp) {
    if (cp < 0x10000) {
      let block = this.blocks[cp >> 8];
      if (block === undefined) {
        block = new Uint8Array(256);
        const base = cp & ~255;
        for (let k = 0; k < 256; k++) block[k] = this.regex.test(String.fromCharCode(base + k)) ? 1 : 0;
        this.blocks[cp >> 8] = block;
      }
      return block[cp & 255] === 1;
    }
    let r = this.astral.get(cp);
    if (r === undefined) {
      r = this.regex.test(String.fromCodePoint(cp));
      if (this.astral.size < 4096) this.astral.set(cp, r);
    }
    return r;
  }
}

const CHAR = 0, SPLIT = 1, JMP = 2, ASSERT = 3, LOOK = 4, MATCH = 5;

/** The longest program we build (a counted repetition is unrolled). */
const MAX_PROGRAM = 1 << 16;
/** Memo entries (Int32) per record at most: 16 MB. */
const MEMO_CAP = 1 << 22;
/** Pending alternatives at most (a greedy loop leaves one per iteration): 8M, 64 MB. */
const MAX_STACK = 1 << 24;

const WORD = /^[\p{L}\p{M}\p{Nd}\p{Pc}]$/u;

/** The instructions a tree compiles to, for the size check before anything is unrolled. */
function programSize(node) {
  switch (node.k) {
    case 'char': case 'assert': return 1;
    case 'seq': return node.items.reduce((n, x) => n + programSize(x), 0);
    case 'alt': return node.items.reduce((n, x) => n + programSize(x) + 2, 0);
    case 'rep': {
      const body = programSize(node.body) + 2;
      return node.max === Infinity ? body * (node.min + 1) : body * node.max + 1;
    }
    case 'look': return 1 + programSize(node.body) + 2;
    default: throw new Error(`unknown node ${node.k}`);
  }
}

/** [min, max] code points a tree matches (max Infinity when unbounded). */
function width(node) {
  switch (node.k) {
    case 'char': return [1, 1];
    case 'assert': case 'look': return [0, 0];
    case 'seq': return node.items.map(width).reduce(([a, b], [c, d]) => [a + c, b + d], [0, 0]);
    case 'alt': return node.items.map(width).reduce(([a, b], [c, d]) => [Math.min(a, c), Math.max(b, d)]);
    case 'rep': { const [a, b] = width(node.body); return [a * node.min, node.max === Infinity ? (b === 0 ? 0 : Infinity) : b * node.max]; }
    default: throw new Error(`unknown node ${node.k}`);
  }
}

/** The sets a match can start with, or null when the tree can match the empty string. */
function firstSets(node) {
  const walk = (n) => {
    switch (n.k) {
      case 'char': return { sets: [n.set], nullable: false };
      case 'assert': case 'look': return { sets: [], nullable: true };
      case 'seq': {
        const sets = [];
        for (const item of n.items) {
          const f = walk(item);
          sets.push(...f.sets);
          if (!f.nullable) return { sets, nullable: false };
        }
        return { sets, nullable: true };
      }
      case 'alt': {
        const fs = n.items.map(walk);
        return { sets: fs.flatMap((f) => f.sets), nullable: fs.some((f) => f.nullable) };
      }
      case 'rep': { const f = walk(n.body); return { sets: f.sets, nullable: n.min === 0 || f.nullable }; }
      default: throw new Error(`unknown node ${n.k}`);
    }
  };
  const f = walk(node);
  return f.nullable ? null : [...new Set(f.sets)];
}

/**
 * The record of explored states of one search: for each position, a column of
 * one mark per meeting instruction. Columns sit in a ring indexed by position
 * (positions behind the search are never visited again), which doubles while a
 * search keeps more positions live, up to MEMO_CAP entries; past that the oldest
 * live column is reused (its states may then run again: the budget still holds).
 */
class Memo {
  constructor(slots) {
    this.slots = Math.max(1, slots);
    this.size = 0;
    this.gen = 1;
    this.id = 0;
  }

  alloc(size) {
    this.size = size;
    this.colPos = new Int32Array(size).fill(-1);
    this.colGen = new Int32Array(size);
    this.colId = new Int32Array(size);
    this.marks = new Int32Array(size * this.slots);
  }

  /** Forgets everything (a new text, or a new lookaround evaluation). */
  reset() {
    if (++this.gen > 0x3FFFFFFF) { this.gen = 1; if (this.size) this.colGen.fill(0); }
  }

  /** Forgets position p (it was on a successful path). */
  forget(p) {
    if (this.size && this.colPos[p & (this.size - 1)] === p) this.colPos[p & (this.size - 1)] = -1;
  }

  grow() {
    const size = 2 * this.size;
    if (size * this.slots > MEMO_CAP) return false;
    const { colPos, colGen, colId, marks, slots } = this;
    this.alloc(size);
    for (let c = 0; c < colPos.length; c++) {
      if (colGen[c] !== this.gen || colPos[c] < 0) continue;
      const d = colPos[c] & (size - 1);
      this.colPos[d] = colPos[c]; this.colGen[d] = this.gen; this.colId[d] = colId[c];
      this.marks.set(marks.subarray(c * slots, c * slots + slots), d * slots);
    }
    return true;
  }

  /** Marks state (slot, p) explored; false when it already was. Positions below `floor` are behind the search. */
  visit(slot, p, floor) {
    if (this.size === 0) this.alloc(Math.max(16, Math.min(1024, MEMO_CAP / this.slots)));
    let c = p & (this.size - 1);
    if (this.colPos[c] !== p || this.colGen[c] !== this.gen) {
      while (this.colGen[c] === this.gen && this.colPos[c] >= floor && this.colPos[c] !== p && this.grow()) c = p & (this.size - 1);
      if (this.colPos[c] !== p || this.colGen[c] !== this.gen) {
        if (++this.id > 0x7FFFFFF0) { this.id = 1; this.marks.fill(0); }
        this.colPos[c] = p; this.colGen[c] = this.gen; this.colId[c] = this.id;
      }
    }
    const k = c * this.slots + slot;
    if (this.marks[k] === this.colId[c]) return false;
    this.marks[k] = this.colId[c];
    return true;
  }
}

/** Compiles a tree (regex.js) into a matcher; `refuse(reason)` throws for a program too large to build. */
export function compileProgram(tree, refuse) {
  if (programSize(tree) > MAX_PROGRAM) refuse(`more than ${MAX_PROGRAM} instructions once its repetitions are unrolled`);
  const op = [], a = [], b = [], sets = [], looks = [];
  const emit = (o, x = 0, y = 0) => { op.push(o); a.push(x); b.push(y); return op.length - 1; };
  const setIndex = new Map();

  const compile = (node) => {
    switch (node.k) {
      case 'char': {
        if (!setIndex.has(node.set)) { setIndex.set(node.set, sets.length); sets.push(node.set); }
        emit(CHAR, setIndex.get(node.set));
        return;
      }
      case 'seq': for (const item of node.items) compile(item); return;
      case 'alt': {
        const jumps = [];
        node.items.forEach((item, k) => {
          if (k === node.items.length - 1) { compile(item); return; }
          const split = emit(SPLIT);
          a[split] = op.length;
          compile(item);
          jumps.push(emit(JMP));
          b[split] = op.length;
        });
        for (const j of jumps) a[j] = op.length;
        return;
      }
      case 'rep': {
        const { body, min, max, lazy } = node;
        // Oniguruma ends a loop at an iteration that matched nothing, a JS RegExp fails that iteration: refused where they differ.
        if (max > min && width(body)[0] === 0) refuse('a repetition of something that can match the empty string');
        for (let k = 0; k < min; k++) compile(body);
        if (max === Infinity) {
          const head = emit(SPLIT);
          const start = op.length;
          compile(body);
          emit(JMP, head);
          if (lazy) { a[head] = op.length; b[head] = start; } else { a[head] = start; b[head] = op.length; }
          return;
        }
        const exits = [];
        for (let k = min; k < max; k++) {
          const split = emit(SPLIT);
          exits.push(split);
          const start = op.length;
          compile(body);
          if (lazy) b[split] = start; else a[split] = start;
        }
        for (const s of exits) { if (lazy) a[s] = op.length; else b[s] = op.length; }
        return;
      }
      case 'assert': emit(ASSERT, node.kind.charCodeAt(0)); return;
      case 'look': {
        const alternatives = node.behind && node.body.k === 'alt' ? node.body.items : [node.body];
        const entry = { behind: node.behind, negate: node.negate, alternatives: alternatives.map((n) => ({ node: n, pc: -1, width: 0 })) };
        for (const alt of entry.alternatives) {
          if (!node.behind) continue;
          const [lo, hi] = width(alt.node);
          if (lo !== hi) refuse('a look-behind of variable length');
          alt.width = lo;
        }
        emit(LOOK, looks.length);
        looks.push(entry);
        return;
      }
      default: throw new Error(`unknown node ${node.k}`);
    }
  };
  compile(tree);
  emit(MATCH);
  // Lookaround bodies: sub-programs after the main one (a body may hold lookarounds of its own).
  for (let k = 0; k < looks.length; k++) {
    for (const alt of looks[k].alternatives) { alt.pc = op.length; compile(alt.node); emit(MATCH); }
  }

  // The instructions with more than one way in: their states are recorded.
  const ways = new Int32Array(op.length);
  for (let pc = 0; pc < op.length; pc++) {
    if (op[pc] === CHAR || op[pc] === ASSERT || op[pc] === LOOK) ways[pc + 1]++;
    else if (op[pc] === SPLIT) { ways[a[pc]]++; ways[b[pc]]++; } else if (op[pc] === JMP) ways[a[pc]]++;
  }
  const slot = new Int32Array(op.length).fill(-1);
  let slots = 0;
  for (let pc = 0; pc < op.length; pc++) if (ways[pc] > 1) slot[pc] = slots++;
  return new Machine({
    op: Int32Array.from(op), a: Int32Array.from(a), b: Int32Array.from(b), sets, looks, slot, slots,
    first: firstSets(tree), refuse,
  });
}

/** The code point at s[p] (a lone surrogate is its own code point). */
function codePointAt(s, p) {
  const u = s.charCodeAt(p);
  if ((u & 0xFC00) === 0xD800 && (s.charCodeAt(p + 1) & 0xFC00) === 0xDC00) return ((u - 0xD800) << 10) + (s.charCodeAt(p + 1) - 0xDC00) + 0x10000;
  return u;
}

class Machine {
  constructor(program) {
    Object.assign(this, program);
    this.memo = new Memo(this.slots);
    this.lookMemos = this.looks.map(() => new Memo(this.slots));
    this.stack = new Int32Array(256);
    this.sp = 0;
    this.s = '';
    this.budget = 0;
    this.limit = 0;
    this.start = 0;
    this.end = 0;
    const [only] = this.first ?? [];
    // One literal BMP character to start with: indexOf finds the candidates.
    this.firstChar = this.first?.length === 1 && /^\\u\{[0-9a-f]{1,4}\}$|^[\p{L}\p{N}]$/u.test(only.source)
      ? String.fromCodePoint(only.source.startsWith('\\') ? parseInt(only.source.slice(3, -1), 16) : only.source.codePointAt(0)) : null;
    // (Not a surrogate: indexOf would find one inside a pair.)
    if (this.firstChar !== null && (this.firstChar.length !== 1 || (this.firstChar.charCodeAt(0) & 0xF800) === 0xD800)) this.firstChar = null;
  }

  /** A new text: the records are forgotten and the budget set from its length. */
  begin(s) {
    this.s = s;
    this.memo.reset();
    this.limit = 1e6 + 16 * (this.op.length + 1) * (s.length + 1);
    this.budget = this.limit;
  }

  overBudget() {
    return this.refuse(`matching it on a text of ${this.s.length} characters took more than ${this.limit} steps; `
      + 'swapformer bounds the work, as Oniguruma stops at its retry limit');
  }

  /** The first match at or after `from` (leftmost, then by priority): sets start and end. */
  exec(s, from) {
    const n = s.length;
    for (let p = from; p <= n;) {
      if (this.first !== null) {
        if (this.firstChar !== null) {
          p = s.indexOf(this.firstChar, p);
          if (p < 0) return false;
        } else {
          while (p < n && !this.startsHere(p)) p += (s.charCodeAt(p) & 0xFC00) === 0xD800 && (s.charCodeAt(p + 1) & 0xFC00) === 0xDC00 ? 2 : 1;
          if (p >= n) return false;
        }
      }
      const e = this.run(0, p, this.memo, p);
      if (e >= 0) {
        this.start = p;
        this.end = e;
        this.memo.forget(e);
        return true;
      }
      if (p === n) break;
      p += (s.charCodeAt(p) & 0xFC00) === 0xD800 && (s.charCodeAt(p + 1) & 0xFC00) === 0xDC00 ? 2 : 1;
    }
    return false;
  }

  startsHere(p) {
    const cp = codePointAt(this.s, p);
    for (const set of this.first) if (set.has(cp)) return true;
    return false;
  }

  push(pc, p) {
    if (this.sp + 2 > this.stack.length) {
      if (this.stack.length >= MAX_STACK) throw this.overBudget();
      const grown = new Int32Array(2 * this.stack.length);
      grown.set(this.stack);
      this.stack = grown;
    }
    this.stack[this.sp++] = pc;
    this.stack[this.sp++] = p;
  }

  /** The end of the first match of the program from pc, anchored at p, or -1. */
  run(pc0, p0, memo, floor) {
    const { s, op, a, b, slot, sets } = this;
    const n = s.length;
    const base = this.sp;
    this.push(pc0, p0);
    while (this.sp > base) {
      let p = this.stack[--this.sp];
      let pc = this.stack[--this.sp];
      step: for (;;) {
        if (--this.budget < 0) throw this.overBudget();
        if (slot[pc] >= 0 && !memo.visit(slot[pc], p, floor)) break;
        switch (op[pc]) {
          case CHAR: {
            if (p >= n) break step;
            const cp = codePointAt(s, p);
            if (!sets[a[pc]].has(cp)) break step;
            p += cp > 0xFFFF ? 2 : 1;
            pc++;
            continue;
          }
          case SPLIT: this.push(b[pc], p); pc = a[pc]; continue;
          case JMP: pc = a[pc]; continue;
          case ASSERT: if (!this.assertion(a[pc], p)) break step; pc++; continue;
          case LOOK: if (!this.look(a[pc], p)) break step; pc++; continue;
          case MATCH: this.sp = base; return p;
          default: throw new Error(`bad instruction ${op[pc]}`);
        }
      }
    }
    return -1;
  }

  isWordAt(p) { return p >= 0 && p < this.s.length && WORD.test(String.fromCodePoint(codePointAt(this.s, p))); }

  wordBefore(p) {
    if (p <= 0) return false;
    const s = this.s;
    const q = p > 1 && (s.charCodeAt(p - 1) & 0xFC00) === 0xDC00 && (s.charCodeAt(p - 2) & 0xFC00) === 0xD800 ? p - 2 : p - 1;
    return this.isWordAt(q);
  }

  assertion(kind, p) {
    const { s } = this;
    const n = s.length;
    switch (kind) {
      case 0x5E: return p === 0 || s.charCodeAt(p - 1) === 10;            // ^
      case 0x24: return p === n || s.charCodeAt(p) === 10;                // $
      case 0x41: return p === 0;                                          // \A
      case 0x7A: return p === n;                                          // \z
      case 0x5A: return p === n || (p === n - 1 && s.charCodeAt(p) === 10); // \Z
      case 0x62: return this.wordBefore(p) !== this.isWordAt(p);          // \b
      case 0x42: return this.wordBefore(p) === this.isWordAt(p);          // \B
      default: throw new Error(`bad assertion ${kind}`);
    }
  }

  /** Whether lookaround k holds at p. */
  look(k, p) {
    const entry = this.looks[k];
    const memo = this.lookMemos[k];
    let found = false;
    for (const alt of entry.alternatives) {
      let q = p;
      if (entry.behind) {
        // Back by the alternative's fixed width in characters.
        for (let w = 0; w < alt.width && q >= 0; w++) {
          q -= q > 1 && (this.s.charCodeAt(q - 1) & 0xFC00) === 0xDC00 && (this.s.charCodeAt(q - 2) & 0xFC00) === 0xD800 ? 2 : 1;
        }
        if (q < 0) continue;
      }
      memo.reset();
      const e = this.run(alt.pc, q, memo, q);
      if (e >= 0 && (!entry.behind || e === p)) { found = true; break; }
    }
    return found !== entry.negate;
  }
}
