// programs.mjs — the one list of the C test programs (tests/test_*.c, built into build/tests and
// build/asan/tests), with the arguments each is run with. native.test.mjs runs every one in both
// builds (and checks that no built program is missing from this list); valgrind.test.mjs runs
// them under memcheck with `valgrind` arguments: the same as `args` when absent, null to skip.
export const PROGRAMS = {
  test_core: { args: ['tests/fixtures/kernels.safetensors', 'tests/fixtures/attn_flops/flops.txt'] },
  test_rng: { args: ['tests/fixtures/rng/rng_golden.txt'] },
  test_format: { args: ['tests/fixtures/format/tensor_repr.txt'] },
  test_safetensors: { args: ['tests/malformed'] },
  // The two long arithmetic sweeps allocate next to nothing and take minutes under valgrind.
  test_pow: { args: ['tests/fixtures/pow/pow_golden.txt'], valgrind: null },
  test_trig: { args: ['tests/fixtures/trig/trig_golden.txt'], valgrind: null },
  test_softmax: { args: ['tests/fixtures/softmax/softmax_golden.txt'] },
  test_fuzz_replay: { args: ['tests/malformed/fuzz', 'tests/fuzz/seeds'] },
  test_fuzz_tokenizer: { args: ['tests/fuzz/seeds_tokenizer'] },
  // A sweep too: under valgrind 1000 random values per sweep instead of the full count.
  test_print: { args: [], valgrind: ['1000'] },
  test_abi: { args: [] },
  test_null_err: { args: [] },
  test_demo: { args: [] },
  test_model: { args: ['models/stories260K/stories260K.bin', 'tests/fixtures/model_flops/flops.txt'] },
  test_experiments: { args: ['models/stories260K/stories260K.bin', 'tests/fixtures/minimind/moe_top2_norm'] },
  test_weights: { args: ['tests/fixtures/minimind', 'models/stories260K/stories260K.bin'],
    valgrind: ['tests/fixtures/minimind', 'models/stories260K/stories260K.bin', 'short'] },
  test_model_lab: { args: ['models/stories260K/stories260K.bin', 'models/stories260K/tok512.bin'] },
  // Runs the CLI beside its folder for each case; under valgrind the CLI would run untraced,
  // and test_model_lab covers the lab's memory.
  test_generate: { args: ['models/stories260K/stories260K.bin', 'models/stories260K/tok512.bin', 'models/minimind-fortunes'],
    valgrind: null },
  test_sampler: { args: [] },
  test_sampler_limit: { args: [] },
  // Under valgrind without the default run of 1000 steps (the ablated induction head's).
  test_train_lab: { args: ['models/minimind-tokenizer/tokenizer.json', 'models/minimind-fortunes/train-sample.txt'],
    valgrind: ['models/minimind-tokenizer/tokenizer.json', 'models/minimind-fortunes/train-sample.txt', '--quick'] },
  test_train_loop: { args: ['models/minimind-tokenizer/tokenizer.json', 'models/minimind-fortunes/train-sample.txt'] },
  test_train: { args: ['dense_gqa_tied', 'dense_mha_untied', 'moe_top2_norm', 'moe_top1', 'interleaved_noqk', 'attn_only'].map((c) => `tests/fixtures/train/${c}`) },
  test_tokenizer: { args: ['models/stories260K/tok512.bin'] },
  // The malformed .pth files are built in the program; the fixtures' .pth files must read.
  test_pth: { args: ['tests/fixtures/minimind/pth_dense_tied/model.pth', 'tests/fixtures/minimind/pth_moe_top2/model.pth',
    'tests/fixtures/minimind/pth_shared_tied/model.pth', 'tests/fixtures/minimind/pth_attn_only/model.pth'] },
  // Under valgrind (memcheck is some 30 times slower) fewer truncations and byte changes.
  test_tokenizer_hf: {
    args: ['models/minimind-tokenizer/tokenizer.json'],
    valgrind: ['models/minimind-tokenizer/tokenizer.json', '--fewer'],
  },
  test_tokenizer_train: { args: [] },
};

// The arguments of a program under valgrind, or null if it is not run there.
export function valgrindArgs(name) {
  const p = PROGRAMS[name];
  return p.valgrind === undefined ? p.args : p.valgrind;
}
