// gen_demo_code.mjs — writes core/demos/gen/demo_code.c: the code of every example of the tutorial's
// two scripts (tests/reference/0N-*.py, Chinese, and 0N-*.en.py, English), verbatim, which the
// page's walkthrough shows beside the numbers the example prints (al_demo_sections).
//
// An example's code is what follows its header — the three calls print("=" * 70),
// print("<title>"), print("=" * 70) — up to the next example: the next "# ====" comment banner
// or the next header, without the blank lines around it. The closing banner has no code. The
// Chinese attention script is taken as the demo runs it: its one wrong line (the decode cost
// "O(1) 而非 O(n)") replaced by the corrected one, exactly as tests/fixtures/gen_demo.py does.
//
//     node tools/gen/gen_demo_code.mjs
//
// tests/demo-sections.test.mjs checks that the file is what this script writes today.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const OUT = join(ROOT, 'core', 'demos', 'gen', 'demo_code.c');

export const SCRIPTS = {
  basic: '02-basic-components-demo',
  attention: '03-attention-demo',
};
export const LANGS = ['zh', 'en'];

const WRONG_LINE = 'print(f"  → decode 阶段每步只需计算 1 个 token 的 Q，K/V 从缓存读取，复杂度 O(1) 而非 O(n)")';
const FIXED_LINE = 'print("  → decode 阶段每步只需为 1 个新 token 计算 Q/K/V，历史 K/V 从缓存读取：注意力要读 n 个缓存的 K，每步 O(n)；不用缓存则每步重算整段，O(n²)")';

// The script as the demo runs it.
export function script(demo, lang) {
  const file = join(ROOT, 'tests', 'reference', `${SCRIPTS[demo]}${lang === 'en' ? '.en' : ''}.py`);
  let text = readFileSync(file, 'utf8');
  if (demo === 'attention' && lang === 'zh') {
    if (text.split(WRONG_LINE).length !== 2) throw new Error(`${file}: the line to correct is not there exactly once`);
    text = text.replace(WRONG_LINE, FIXED_LINE);
  }
  return text;
}

// [{title, code}] for each header of the script, in order.
export function examples(text) {
  const header = /^print\("=" \* 70\)\nprint\("(.*)"\)\nprint\("=" \* 70\)\n/gm;
  const found = [...text.matchAll(header)];
  return found.map((m, i) => {
    const end = i + 1 < found.length ? found[i + 1].index : text.length;
    let block = text.slice(m.index + m[0].length, end);
    const banner = block.search(/^# =+$/m);
    if (banner >= 0) block = block.slice(0, banner);
    const lines = block.split('\n');
    while (lines.length && !lines[0].trim()) lines.shift();
    while (lines.length && !lines.at(-1).trim()) lines.pop();
    return { title: m[1], code: lines.join('\n') };
  });
}

// The packing demo_code.c unpacks (LZ77, byte-oriented): a token byte t < 0x80 is followed by
// t + 1 literal bytes; t >= 0x80 copies (t & 0x7F) + 3 bytes from `distance` bytes back, the
// distance in the next two bytes, little-endian. Greedy longest match over a 64 KB window
// (the Chinese and English scripts share most of their code, so the text packs ~3x).
export function pack(bytes) {
  const MIN = 3, MAX = 130, WINDOW = 65535;
  const out = [];
  const chains = new Map(); // 3-byte key -> positions, newest last
  const key = (i) => (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
  let literals = [];
  const flush = () => {
    for (let k = 0; k < literals.length; k += 128) {
      const run = literals.slice(k, k + 128);
      out.push(run.length - 1, ...run);
    }
    literals = [];
  };
  const remember = (i) => {
    if (i + 2 >= bytes.length) return;
    const k = key(i);
    if (!chains.has(k)) chains.set(k, []);
    chains.get(k).push(i);
  };
  for (let i = 0; i < bytes.length;) {
    let bestLen = 0, bestDist = 0;
    if (i + MIN <= bytes.length) {
      const candidates = chains.get(key(i)) || [];
      for (let c = candidates.length - 1; c >= 0; c--) {
        const from = candidates[c];
        if (i - from > WINDOW) break;
        let len = 0;
        while (len < MAX && i + len < bytes.length && bytes[from + len] === bytes[i + len]) len++;
        if (len > bestLen) { bestLen = len; bestDist = i - from; }
        if (len === MAX) break;
      }
    }
    if (bestLen >= MIN) {
      flush();
      out.push(0x80 | (bestLen - MIN), bestDist & 0xff, bestDist >> 8);
      for (let k = 0; k < bestLen; k++) remember(i + k);
      i += bestLen;
    } else {
      literals.push(bytes[i]);
      remember(i);
      i++;
    }
  }
  flush();
  return out;
}

// Every excerpt, NUL-terminated, in [demo][lang][section] order, and where each starts.
export function excerpts() {
  const chunks = [], table = {};
  let at = 0;
  for (const demo of Object.keys(SCRIPTS)) {
    table[demo] = {};
    for (const lang of LANGS) {
      table[demo][lang] = examples(script(demo, lang)).map((e) => {
        const bytes = Buffer.from(`${e.code}\0`, 'utf8');
        chunks.push(bytes);
        at += bytes.length;
        return at - bytes.length;
      });
    }
  }
  return { text: Buffer.concat(chunks), table };
}

export function source() {
  const { text, table } = excerpts();
  const packed = pack(text);
  const rows = [];
  for (let k = 0; k < packed.length; k += 16) rows.push(`    ${packed.slice(k, k + 16).join(', ')},`);
  const offsets = Object.keys(SCRIPTS).map((demo) => `    {\n${LANGS.map((lang) => `        {${table[demo][lang].join(', ')}},`).join('\n')}\n    },`);
  return `/* demo_code.c — the code of every example of the tutorial's two scripts, verbatim, in Chinese
 * and English, shown by the page's walkthrough beside what the example prints. Generated by
 * tools/gen/gen_demo_code.mjs from the scripts in tests/reference/: edit that script, not
 * this file. The excerpts (${text.length} bytes, NUL-terminated) are kept packed (${packed.length} bytes: LZ77,
 * see unpack) and unpacked once, the first time one is asked for. */
#include "demos/demo.h"

#include <stdint.h>

enum { CODE_TEXT_SIZE = ${text.length}, CODE_PACKED_SIZE = ${packed.length} };

static const unsigned char CODE_PACKED[CODE_PACKED_SIZE] = {
${rows.join('\n')}
};

/* [demo][lang][section]: where each excerpt starts in the unpacked text (past the last
 * section of a demo: 0, unused). */
static const uint16_t CODE_AT[2][2][AL_DEMO_MAX_SECTIONS] = {
${offsets.join('\n')}
};

/* A token byte t < 0x80 is followed by t + 1 literal bytes; t >= 0x80 copies (t & 0x7F) + 3
 * bytes from \`distance\` bytes back, the distance in the next two bytes (little-endian). Every
 * read and write is checked against the buffers' ends; 0 if the data does not fit them. */
static int unpack(char *out, size_t size, const unsigned char *in, size_t in_size) {
    size_t o = 0;
    for (size_t i = 0; i < in_size;) {
        const unsigned t = in[i++];
        if (t < 0x80) {
            if (t + 1 > in_size - i || t + 1 > size - o) return 0;
            for (unsigned k = 0; k <= t; k++) out[o++] = (char)in[i++];
        } else {
            if (in_size - i < 2) return 0;
            const size_t len = (t & 0x7F) + 3, dist = (size_t)in[i] | (size_t)in[i + 1] << 8;
            i += 2;
            if (dist == 0 || dist > o || len > size - o) return 0;
            for (size_t k = 0; k < len; k++, o++) out[o] = out[o - dist];
        }
    }
    return o == size;
}

const char *al_demo_code(al_demo demo, al_lang lang, int section) {
    /* Unpacked once into a buffer of its own (the same bytes every time, for every caller). */
    static char text[CODE_TEXT_SIZE];
    static int state; /* 0: packed, 1: unpacked, -1: the packed data is broken */
    if (state == 0) state = unpack(text, sizeof text, CODE_PACKED, sizeof CODE_PACKED) ? 1 : -1;
    if (state < 0 || (demo != AL_DEMO_BASIC && demo != AL_DEMO_ATTENTION) ||
        (lang != AL_LANG_ZH && lang != AL_LANG_EN) || section < 0 || section >= AL_DEMO_MAX_SECTIONS ||
        section >= al_demo_section_count(demo))
        return "";
    return text + CODE_AT[demo][lang][section];
}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OUT, source());
  console.log(`wrote ${OUT}`);
}
