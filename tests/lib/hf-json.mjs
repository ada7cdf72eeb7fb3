// hf-json.mjs — Hugging Face tokenizer.json pieces for the tests, written from the format's
// description (not derived from the C): GPT-2's bytes_to_unicode (ByteLevel's alphabet) and a
// small tokenizer of MiniMind's kind to change field by field.

// Byte b's character: the printable bytes ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) as themselves,
// the 68 others from U+0100 on, in byte order.
export const CHAR_OF_BYTE = [];
export const BYTE_OF_CHAR = new Map();
{
  let k = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    CHAR_OF_BYTE[b] = String.fromCodePoint(printable ? b : 0x100 + k++);
    BYTE_OF_CHAR.set(CHAR_OF_BYTE[b], b);
  }
}

// Text (UTF-8) as ByteLevel's characters.
export const byteLevel = (text) => [...Buffer.from(text, 'utf8')].map((b) => CHAR_OF_BYTE[b]).join('');

// The 256 bytes (ids 0..255, byte order), "he" 256 from the merge h + e, and the added token
// <|x|> 257; pre-tokenizer and decoder ByteLevel, as MiniMind's file has them.
export function small() {
  const vocab = {};
  CHAR_OF_BYTE.forEach((ch, b) => { vocab[ch] = b; });
  vocab.he = 256;
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 257, content: '<|x|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: [['h', 'e']] },
  };
}

// small() with these added tokens instead of <|x|>: a content the vocabulary has keeps its id
// there, the others take the ids after the vocabulary's, in order (as the format asks).
export function withAdded(contents) {
  const o = small();
  const like = o.added_tokens[0];
  let next = Object.keys(o.model.vocab).length;
  o.added_tokens = contents.map((content) => ({ ...like, id: o.model.vocab[content] ?? next++, content }));
  return o;
}

// n added tokens that all start with '<' (<|t0|>, <|t1|>, ...), and "<<": a tokenizer that made
// encoding cost text x added tokens while every place tried each token with its first byte.
export const manyAdded = (n) => withAdded([...Array.from({ length: n - 1 }, (_, k) => `<|t${k}|>`), '<<']);
