// core/protocol.js — the one message protocol between the page and its workers (the model
// view's model/worker.js, the Train tab's train/worker.js, the layer view's layer/worker.js):
// requests answered as promises, and events the worker sends on its own.
//
//   page → worker   {id, op, args}                       a request (id counts up from 1)
//   worker → page   {id, ok: true, result}               its answer
//                   {id, ok: false, error}               its refusal (the error's message)
//                   {...} with no id                     an event (the Train tab's {progress})
//
// Messages are structured clones. The ArrayBuffers a request or an answer names in its transfer
// list are handed over, not copied; a SharedArrayBuffer is never in that list (it cannot be
// transferred) but travels as itself, shared by both sides: so the same messages can later carry
// shared memory (a WebAssembly.Memory of a threaded core on a cross-origin-isolated page) with no
// change here.

// What of a transfer list can be handed over: ArrayBuffers, not shared memory.
const transferable = (list) => list.filter((b) => !(typeof SharedArrayBuffer === 'function' && b instanceof SharedArrayBuffer));

// ---------------------------------------------------------------- the page's side
// Requests to a worker (a Worker, or any port with postMessage and onmessage) as promises;
// anything else it sends goes to onEvent.
class Client {
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
      this.worker.postMessage({ id, op, args }, transferable(transfer));
    });
  }
}

// Requests of which only the newest one's answer counts (a slider moved twice quickly asks
// twice): the answer to an older request, whenever it comes, resolves to null, and so does
// its refusal; so a stale answer is never drawn over a newer one.
class Newest {
  constructor(client) {
    this.client = client;
    this.asked = 0;
  }
  request(op, args = {}, transfer = []) {
    const n = ++this.asked;
    const current = () => n === this.asked;
    return this.client.request(op, args, transfer).then((result) => (current() ? result : null), (e) => {
      if (current()) throw e;
      return null;
    });
  }
}

// ---------------------------------------------------------------- the worker's side
// Answers each request with ops[op](args) (a value or a promise); transfer(result) names the
// buffers the answer hands over. A throw or a rejection is the refusal, its message said.
function serve(ops, { transfer = () => [], port = self } = {}) {
  port.onmessage = async (event) => {
    const { id, op, args } = event.data;
    try {
      if (!Object.hasOwn(ops, op)) throw new Error(`unknown request '${op}'`);
      const result = await ops[op](args || {});
      port.postMessage({ id, ok: true, result }, transferable(result ? transfer(result) : []));
    } catch (e) {
      port.postMessage({ id, ok: false, error: e.message || String(e) });
    }
  };
}

// An event from the worker (a message with no id), its buffers handed over.
function emit(message, transfer = [], port = self) {
  port.postMessage(message, transferable(transfer));
}

export { Client, Newest, serve, emit };
