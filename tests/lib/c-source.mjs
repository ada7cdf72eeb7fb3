// c-source.mjs — just enough reading of C source for the tests that check the code against
// itself: comments stripped, argument lists split, and the public functions that take an
// `al_error *` found in core/include/attnlab/*.h.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './run.mjs';

export const withoutComments = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

// "a, f(b, c), d" -> ["a", "f(b, c)", "d"]: the arguments or parameters of one call or declaration.
export function splitArguments(text) {
  const out = [];
  let depth = 0, start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(text.slice(start).trim());
  return out;
}

// The public functions (core/include/attnlab/*.h) that take an `al_error *`: name -> its index.
export function functionsTakingErrors() {
  const dir = join(ROOT, 'core', 'include', 'attnlab');
  const headers = readdirSync(dir).filter((f) => f.endsWith('.h')).map((f) => readFileSync(join(dir, f), 'utf8'));
  const text = withoutComments(headers.join('\n'));
  const found = new Map();
  for (const m of text.matchAll(/\b(al_\w+)\s*\((?!\s*\*)([^;{}]*)\)\s*;/g)) {
    // A typedef of a function pointer (the generator's forward pass) names a type, not a call,
    // and a function pointer's declaration, `al_status (*draw)(..., al_error *err);`, no function.
    const statement = text.slice(Math.max(text.lastIndexOf(';', m.index), text.lastIndexOf('}', m.index)) + 1, m.index);
    if (/\btypedef\b/.test(statement)) continue;
    const at = splitArguments(m[2]).findIndex((p) => /\bal_error\s*\*/.test(p));
    if (at >= 0) found.set(m[1], at);
  }
  return found;
}

// The argument lists of every call of `name` in C source text.
export function callsOf(text, name) {
  const calls = [];
  for (const m of text.matchAll(new RegExp(`\\b${name}\\s*\\(`, 'g'))) {
    let depth = 1, i = m.index + m[0].length;
    for (const start = i; i < text.length; i++) {
      if (text[i] === '(') depth++;
      else if (text[i] === ')' && --depth === 0) {
        calls.push(splitArguments(text.slice(start, i)));
        break;
      }
    }
  }
  return calls;
}
