// layer/facts.js — the core's answers the layer lab's controls and charts need without a core
// on the page's thread: for every head count and KV head count, what the layer view's worker
// (worker.js, op init) asked the core once — the head_dim bound, the nearest KV head count the
// core allows, the KV head counts it allows and how they share (MHA, GQA, MQA).
  let facts = null;

  function set(answer) {
    facts = answer;
  }

  const answered = (value, what) => {
    if (value === undefined || value === null) throw new Error(`the core gave no ${what}`);
    return value;
  };
  const known = () => answered(facts, 'answers yet: the layer view\'s worker has not started');

  // The core's answers ui/state.js's coreRelations asks.
  const relations = {
    headDimMost: (heads) => answered(known().headDimMost[heads], `head_dim bound for ${heads} heads`),
    kvNearest: (heads, kv) => answered((known().kvNearest[heads] || [])[kv], `KV head count near ${kv} for ${heads} heads`),
  };
  // The KV head counts the core allows for a head count.
  const kvChoices = (heads) => answered(known().kvChoices[heads], `KV head counts for ${heads} heads`);
  // 'mha' | 'gqa' | 'mqa': how a head count shares its KV heads (al_kv_sharing_of).
  const kvSharing = (heads, kv) => answered((known().kvSharing[heads] || [])[kv], `KV sharing of ${kv} for ${heads} heads`);

export { set, relations, kvChoices, kvSharing };
