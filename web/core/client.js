// core/client.js — the page's side of the workers (model/worker.js, train/worker.js,
// layer/worker.js): starts them (from their own module files when served, from the code the
// single-file page carries otherwise) and speaks to them through protocol.js; and reads the
// shipped models' bytes and the Train tab's inputs (fetched when served, decoded from the
// single-file page: embedded.js).
import { embedded, embeddedBytes } from './embedded.js';
import { Client } from './protocol.js';

  // The models that come with the page. The single-file page carries the first inside it; the
  // served page has them all.
  const SHIPPED = [
    { name: 'stories260K', model: 'gen/models/stories260K.bin', tokenizer: 'gen/models/tok512.bin', examples: 'stories',
      kind: 'llama2c', embedded: 'stories260K' },
    { name: 'minimind-fortunes', model: 'gen/models/minimind-fortunes/model.safetensors',
      config: 'gen/models/minimind-fortunes/config.json', tokenizer: 'gen/models/minimind-fortunes/tokenizer.json',
      examples: 'fortunes', kind: 'safetensors' },
  ];
  const singleFile = () => !!embedded;
  // The indexes of the shipped models this page has.
  const available = () => SHIPPED.map((m, i) => i).filter((i) => !singleFile() || SHIPPED[i].embedded);

  async function fetchBytes(url) {
    const r = await fetch(url);
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    return new Uint8Array(await r.arrayBuffer());
  }

  // The bytes of shipped model i: {name, model, tokenizer, examples}.
  async function shippedBytes(i) {
    const m = SHIPPED[i];
    const files = m.embedded && embedded && embedded[m.embedded];
    const base = { name: m.name, examples: m.examples, kind: m.kind };
    if (files) {
      const [model, tokenizer] = await Promise.all([embeddedBytes(files.model), embeddedBytes(files.tokenizer)]);
      return { ...base, model, tokenizer };
    }
    const [model, tokenizer, config] = await Promise.all([fetchBytes(m.model), fetchBytes(m.tokenizer),
      m.config ? fetchBytes(m.config) : Promise.resolve(null)]);
    return { ...base, model, tokenizer, config };
  }

  // The Train tab's inputs: MiniMind's tokenizer and the built-in text (fetched when served,
  // inflated from the single-file page).
  const TRAIN_FILES = { tokenizer: ['gen/models/minimind-fortunes/tokenizer.json', 'trainTokenizer'],
    sample: ['gen/models/minimind-fortunes/train-sample.txt', 'trainSample'] };
  async function trainBytes(which) {
    const [url, key] = TRAIN_FILES[which];
    return embedded ? embeddedBytes(embedded[key]) : fetchBytes(url);
  }

  // A worker of the single-file page, whose code (one classic script, compressed) is inflated
  // first: a port like a Worker's whose messages wait, in their order, until the worker has
  // started; if it cannot start, onerror says why.
  class InflatingWorker {
    constructor(code) {
      this.onmessage = null;
      this.onerror = null;
      this.waiting = [];
      this.worker = null;
      embeddedBytes(code).then((bytes) => {
        const url = URL.createObjectURL(new Blob([bytes], { type: 'text/javascript' }));
        this.worker = new Worker(url);
        URL.revokeObjectURL(url);
        this.worker.onmessage = (e) => this.onmessage && this.onmessage(e);
        this.worker.onerror = (e) => this.onerror && this.onerror(e);
        for (const [message, transfer] of this.waiting) this.worker.postMessage(message, transfer);
        this.waiting = null;
      }).catch((e) => this.onerror && this.onerror({ message: `the worker did not start: ${e.message || e}` }));
    }
    postMessage(message, transfer = []) {
      if (this.worker) this.worker.postMessage(message, transfer);
      else this.waiting.push([message, transfer]);
    }
  }

  // A worker: the model view's (model/worker.js), the Train tab's (train/worker.js) or the layer
  // view's (layer/worker.js), a module worker when served; the single-file page carries each
  // one's modules as one classic script.
  const WORKERS = { model: 'model/worker.js', train: 'train/worker.js', layer: 'layer/worker.js' };
  function startWorker(kind = 'model') {
    if (embedded) return new InflatingWorker(embedded.workers[kind]);
    return new Worker(WORKERS[kind], { type: 'module' });
  }

  // The worker is started as soon as this script runs, so that it starts up while the rest of
  // the page loads; the first client takes it.
  let early = null;
  try {
    if (typeof Worker === 'function' && typeof document !== 'undefined') early = startWorker('model');
  } catch (_e) {
    early = null; // started again (and its error shown) by the client
  }

  // A worker's client (protocol.js) that starts the core in it first (more: what else its init
  // takes).
  class WorkerClient extends Client {
    init(wasm, more = {}) { const copy = wasm.slice(); return this.request('init', { ...more, wasm: copy }, [copy.buffer]); }
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

  class LayerClient extends WorkerClient {
    constructor() { super(startWorker('layer')); }
  }

export { ModelClient, TrainClient, LayerClient, SHIPPED, shippedBytes, available, trainBytes };
