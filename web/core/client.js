// model/client.js — the page's side of the workers (model/worker.js, train/worker.js): starts
// them (from their own files when served, from the sources the single-file page carries
// otherwise), sends them requests and returns their answers as promises; and reads the shipped
// models' bytes and the Train tab's inputs (fetched when served, decoded from the single-file
// page).
(function (root) {
  'use strict';

  // The models that come with the page. The single-file page carries the first inside it; the
  // served page has them all.
  const SHIPPED = [
    { name: 'stories260K', model: 'gen/models/stories260K.bin', tokenizer: 'gen/models/tok512.bin', examples: 'stories',
      kind: 'llama2c', embedded: 'ATTNLAB_STORIES260K' },
    { name: 'minimind-fortunes', model: 'gen/models/minimind-fortunes/model.safetensors',
      config: 'gen/models/minimind-fortunes/config.json', tokenizer: 'gen/models/minimind-fortunes/tokenizer.json',
      examples: 'fortunes', kind: 'safetensors' },
  ];
  const singleFile = () => !!root.ATTNLAB_STORIES260K;
  // The indexes of the shipped models this page has.
  const available = () => SHIPPED.map((m, i) => i).filter((i) => !singleFile() || SHIPPED[i].embedded);

  function base64Bytes(text) {
    const bin = atob(text);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return bytes;
  }

  async function fetchBytes(url) {
    const r = await fetch(url);
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    return new Uint8Array(await r.arrayBuffer());
  }

  // The bytes of shipped model i: {name, model, tokenizer, examples}.
  async function shippedBytes(i) {
    const m = SHIPPED[i];
    const embedded = m.embedded && root[m.embedded];
    const base = { name: m.name, examples: m.examples, kind: m.kind };
    if (embedded) return { ...base, model: base64Bytes(embedded.model), tokenizer: base64Bytes(embedded.tokenizer) };
    const [model, tokenizer, config] = await Promise.all([fetchBytes(m.model), fetchBytes(m.tokenizer),
      m.config ? fetchBytes(m.config) : Promise.resolve(null)]);
    return { ...base, model, tokenizer, config };
  }

  // The Train tab's inputs: MiniMind's tokenizer and the built-in text (fetched when served;
  // in the single-file page gzip-compressed, base64 text).
  const TRAIN_FILES = { tokenizer: ['gen/models/minimind-fortunes/tokenizer.json', 'ATTNLAB_TRAIN_TOKENIZER_GZ'],
    sample: ['gen/models/minimind-fortunes/train-sample.txt', 'ATTNLAB_TRAIN_SAMPLE_GZ'] };
  async function trainBytes(which) {
    const [url, embedded] = TRAIN_FILES[which];
    if (!root[embedded]) return fetchBytes(url);
    const stream = new Blob([base64Bytes(root[embedded])]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  // A worker: the model view's (model/worker.js) or the Train tab's (train/worker.js); the
  // single-file page carries each one's scripts as one text.
  const WORKERS = { model: ['model/worker.js', 'ATTNLAB_WORKER_SOURCE'], train: ['train/worker.js', 'ATTNLAB_TRAIN_WORKER_SOURCE'] };
  function startWorker(kind = 'model') {
    const [file, source] = WORKERS[kind];
    if (root[source]) {
      const url = URL.createObjectURL(new Blob([root[source]], { type: 'text/javascript' }));
      const worker = new Worker(url);
      URL.revokeObjectURL(url);
      return worker;
    }
    return new Worker(file);
  }

  // The worker is started as soon as this script runs, so that it starts up while the rest of
  // the page loads; the first client takes it.
  let early = null;
  try {
    if (typeof Worker === 'function' && typeof document !== 'undefined') early = startWorker('model');
  } catch (_e) {
    early = null; // started again (and its error shown) by the client
  }

  // Requests to a worker as promises; anything else it sends goes to onEvent.
  class WorkerClient {
    constructor(worker) {
      this.worker = worker;
      this.onEvent = null;
      this.pending = new Map();
      this.next = 1;
      this.worker.onmessage = (e) => {
        const { id, ok, result, error } = e.data;
        if (id === undefined) {
          if (this.onEvent) this.onEvent(e.data);
          return;
        }
        const p = this.pending.get(id);
        if (!p) return;
        this.pending.delete(id);
        if (ok) p.resolve(result);
        else p.reject(new Error(error));
      };
      this.worker.onerror = (e) => {
        for (const p of this.pending.values()) p.reject(new Error(e.message || 'the worker stopped'));
        this.pending.clear();
      };
    }
    request(op, args = {}, transfer = []) {
      const id = this.next++;
      return new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.worker.postMessage({ id, op, args }, transfer);
      });
    }
    init(wasm) { const copy = wasm.slice(); return this.request('init', { wasm: copy }, [copy.buffer]); }
  }

  class ModelClient extends WorkerClient {
    constructor() {
      super(early || startWorker('model'));
      early = null;
    }
    load(files) {
      const list = [files.model, files.config, files.tokenizer].filter(Boolean).map((b) => b.buffer);
      return this.request('load', files, list);
    }
  }

  class TrainClient extends WorkerClient {
    constructor() { super(startWorker('train')); }
  }

  const api = { ModelClient, TrainClient, SHIPPED, shippedBytes, available, trainBytes };
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.AttnLabModelClient = api;
})(typeof globalThis !== 'undefined' ? globalThis : this);
