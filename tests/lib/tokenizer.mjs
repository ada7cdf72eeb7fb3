// tokenizer.mjs — llama2.c's tokenizer.bin read in JavaScript (max_token_length, then per token
// a float32 score, an int32 length and the bytes), for tests that check the CLI against the
// file itself, and the way `attnlab tokenize --pieces` shows a piece on its one line, written
// out here from its description in core/cli/cmd_tokenize.c (not derived from the C).
import { readFileSync } from 'node:fs';

export function readTokenizerBin(path) {
  const b = readFileSync(path);
  const pieces = [], scores = [];
  let o = 4;
  while (o < b.length) {
    scores.push(b.readFloatLE(o));
    const len = b.readInt32LE(o + 4);
    pieces.push(b.subarray(o + 8, o + 8 + len));
    o += 8 + len;
  }
  return { maxTokenLength: b.readInt32LE(0), pieces, scores };
}

// The length of the well-formed UTF-8 character at b[i] and its code point, or null.
function utf8At(b, i) {
  const c = b[i];
  if (c < 0x80) return { len: 1, cp: c };
  const len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (!len || i + len > b.length) return null;
  let cp = c & (0xFF >> (len + 1));
  for (let k = 1; k < len; k++) {
    if ((b[i + k] & 0xC0) !== 0x80) return null;
    cp = (cp << 6) | (b[i + k] & 0x3F);
  }
  const min = [0, 0, 0x80, 0x800, 0x10000][len];
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return null;
  return { len, cp };
}

const hidden = (cp) => cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || (cp >= 0x200B && cp <= 0x200F) ||
  (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp === 0xFEFF;
const hex = (n, width) => n.toString(16).toUpperCase().padStart(width, '0');

// A piece (bytes) as --pieces prints it: a space as ▁ (U+2581), a backslash as \\, a real ▁ as
// \u{2581}, \n \t \r, hidden characters and bytes that are not UTF-8 as \xNN or \u{NNNN}.
export function showPiece(bytes) {
  const b = Buffer.from(bytes);
  let out = '';
  for (let i = 0; i < b.length;) {
    const ch = utf8At(b, i);
    if (!ch) {
      out += `\\x${hex(b[i], 2)}`;
      i++;
      continue;
    }
    const { len, cp } = ch;
    if (cp === 0x20) out += '\u2581';
    else if (cp === 0x5C) out += '\\\\';
    else if (cp === 0x2581) out += '\\u{2581}';
    else if (cp === 0x0A) out += '\\n';
    else if (cp === 0x09) out += '\\t';
    else if (cp === 0x0D) out += '\\r';
    else if (hidden(cp)) out += cp < 0x100 ? `\\x${hex(cp, 2)}` : `\\u{${hex(cp, 4)}}`;
    else out += b.subarray(i, i + len).toString('utf8');
    i += len;
  }
  return out;
}
