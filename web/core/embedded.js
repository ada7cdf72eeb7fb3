// core/embedded.js — what the single-file page (dist/attnlab.html) carries inside it, written
// there by bundle.mjs as one JSON block (the script element of type application/json whose id
// is attnlab-embedded), every file gzip-compressed, then base64:
//   wasm                     attnlab.wasm
//   workers: {model, train, layer}  each worker's modules as one classic script (run from a blob)
//   stories260K              {model, tokenizer}: the first shipped model
//   trainTokenizer, trainSample  the Train tab's inputs
// null on the served page, which fetches its files (and in a worker, which is sent them).
const block = typeof document === 'object' ? document.getElementById('attnlab-embedded') : null;
const embedded = block ? JSON.parse(block.textContent) : null;

function base64Bytes(text) {
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

// The bytes of one embedded file: its base64 text decoded, then inflated.
async function embeddedBytes(text) {
  const stream = new Blob([base64Bytes(text)]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export { embedded, embeddedBytes };
