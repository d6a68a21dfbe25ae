// A simple built-in tokenizer: words or characters to ids, with a fixed
// vocabulary so that the same word always gets the same id, whatever the
// sentence ("dog bites man" and "man bites dog" are permutations of the same ids).
//
//   words:      lower-cased words and punctuation marks; the first ids are a
//               built-in list of common words, the rest are hash buckets for
//               any other word (shown as "word→#id").
//   characters: printable ASCII (32..126) gets ids 1..95; anything else is 0 (unknown).

const WORDS = `
the a an and or but not no of to in on at by for with from as is are was were be been being
it its this that these those there here he she they we you i me him her them us my your his our their
who what which when where why how all any some each every one two three four five six seven eight nine ten
dog man cat bird fish woman child boy girl king queen house tree car book ball food water sun moon
bites bit bite chases chased chase sees saw see likes liked like eats ate eat loves loved love gives gave give
runs ran run has have had do does did says said goes went go makes made make takes took take knows knew know
big small old new good bad first last long short red blue green black white happy sad fast slow hot cold
up down out over under after before then than so if very too also just only more most less again still
time day year way thing word words sentence order position token model attention layer head
transformer encoder position positions vector vectors same different swap plugin
. , ! ? ; : ' " ( ) -
`
  .trim()
  .split(/\s+/);

export const WORD_VOCAB_SIZE = 256;
export const CHAR_VOCAB_SIZE = 96;

function fnv1a(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function wordTokenizer() {
  const known = new Map();
  for (const w of WORDS) if (!known.has(w)) known.set(w, known.size);
  const buckets = WORD_VOCAB_SIZE - known.size;
  if (buckets < 16) throw new Error('tokenizer: the built-in word list leaves too few hash buckets');
  const byId = [...known.keys()];
  return {
    mode: 'words',
    vocabSize: WORD_VOCAB_SIZE,
    knownWords: known.size,
    encode(text) {
      const pieces = text.toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?|[^\s\p{L}\p{N}]/gu) ?? [];
      return pieces.map((piece) => {
        const id = known.get(piece);
        if (id !== undefined) return { text: piece, id, known: true };
        return { text: piece, id: known.size + (fnv1a(piece) % buckets), known: false };
      });
    },
    label(id) {
      return id < byId.length ? byId[id] : `#${id}`;
    },
  };
}

function charTokenizer() {
  return {
    mode: 'characters',
    vocabSize: CHAR_VOCAB_SIZE,
    encode(text) {
      return Array.from(text, (ch) => {
        const c = ch.codePointAt(0);
        const known = c >= 32 && c <= 126;
        return { text: ch, id: known ? c - 31 : 0, known };
      });
    },
    label(id) {
      return id === 0 ? '<unk>' : String.fromCharCode(id + 31);
    },
  };
}

/** A tokenizer: {mode, vocabSize, encode(text) -> [{text, id, known}], label(id)}. */
export function createTokenizer(mode) {
  if (mode === 'words') return wordTokenizer();
  if (mode === 'characters') return charTokenizer();
  throw new Error(`tokenizer: unknown mode '${mode}'`);
}

/** How a token is shown on a plot axis or in a chip (spaces made visible). */
export function displayToken(token) {
  if (token.text === ' ') return '␣';
  return token.text;
}
