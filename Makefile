# Makefile — the build rules of AttnLab. build.sh is the entry point (it picks the goal and runs
# `make -j2`); `make all|native|asan|wasm|page|fuzz` does the same. V=1 prints every command.
# Only what changed since the last build is rebuilt: an object when its source, a header it
# includes (the compiler's -MMD -MP dependency files, next to the objects) or its variant's flags
# changed; a library or program when one of its objects or its list of objects changed (so a
# deleted source leaves no stale object linked in); the page when a file of web/, the wasm or
# Chart.js changed.

.DELETE_ON_ERROR:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules --no-builtin-variables
.DEFAULT_GOAL := all

# CC from the environment (or the command line) wins, as in `CC=clang bash build.sh native`.
CC := $(if $(filter environment command line,$(origin CC)),$(CC),gcc)
EMCC := emcc
FUZZCC := clang
Q := $(if $(filter 1,$(V)),,@)
show = $(if $(Q),@printf '  %-7s %s\n' '$(1)' '$(2)')

# The core is C11 with libc/libm only. -ffp-contract=off keeps every float operation a single
# IEEE operation, as the PyTorch kernels we reproduce do (no silent multiply-add fusion).
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror=implicit-function-declaration
BASE := -std=c11 -ffp-contract=off $(WARN) -Icore -Icore/include
native_flags := -O3 -g
asan_flags := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
fuzz_flags := -std=c11 -O1 -g -ffp-contract=off $(WARN) -Icore -Icore/include \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

# The library is every layer of core/LAYERS but cli/ (the command line), linked bottom layer
# first, then any folder not listed (tests/architecture.test.mjs refuses one); a layer's gen/
# subfolder holds its generated C. A new .c file, or a new tests/test_*.c, is built without
# editing this file.
LAYERS := $(filter-out cli,$(shell sed -n 's/^\([a-z]*\):.*/\1/p' core/LAYERS))
CORE_DIRS := $(LAYERS) \
    $(filter-out $(LAYERS) cli include,$(notdir $(patsubst %/,%,$(wildcard core/*/))))
CORE_SRC := $(foreach d,$(CORE_DIRS),$(sort $(wildcard core/$(d)/*.c core/$(d)/gen/*.c)))
CLI_SRC := $(sort $(wildcard core/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_NAMES := $(notdir $(TEST_SRC:.c=))
FUZZ_NAMES := fuzz_safetensors fuzz_decimal fuzz_llama2c fuzz_pth fuzz_tokenizer_json

# objs <dir>,<sources>: the objects of <sources> in <dir> (core/model/rope.c -> <dir>/core/model/rope.o).
objs = $(patsubst %.c,$(1)/%.o,$(2))

# A record holds text that outputs depend on (a variant's flags, a list of objects). It is
# rewritten only when that text changes, so what depends on it is rebuilt exactly then.
# record <file>,<text>
define record
@mkdir -p $(dir $(1))
@printf '%s\n' '$(call quote,$(2))' | cmp -s - $(1) 2>/dev/null || \
    { [ ! -e $(1) ] || echo '  changed $(1): rebuilding what depends on it'; printf '%s\n' '$(call quote,$(2))' > $(1); }
endef
# quote <text>: <text> for the inside of a shell's single quotes.
quote = $(subst ','\'',$(strip $(1)))

.PHONY: all native asan wasm page fuzz faults FORCE
FORCE:

all: native asan wasm faults
page: build/attnlab dist/attnlab.html web/gen/attnlab-threads.wasm
	@echo 'up to date: build/attnlab, web/gen/attnlab.wasm, web/gen/attnlab-threads.wasm, dist/attnlab.html'

# c_variant <name>,<dir>: the core as <dir>/libattnlab.a, the CLI as <dir>/attnlab and each
# test as <dir>/tests/<name>, compiled with $(CC) $(BASE) $(<name>_flags). A test program whose
# source is gone is removed (the node tests run every program they find).
define c_variant
$(1)_LIB_OBJ := $(call objs,$(2)/obj,$(CORE_SRC))
$(1)_CLI_OBJ := $(call objs,$(2)/obj,$(CLI_SRC))
$(1)_TEST_OBJ := $(call objs,$(2)/obj,$(TEST_SRC))
$(1)_TESTS := $(TEST_NAMES:%=$(2)/tests/%)
DEPS += $$(patsubst %.o,%.d,$$($(1)_LIB_OBJ) $$($(1)_CLI_OBJ) $$($(1)_TEST_OBJ))

$(1): $(2)/attnlab $$($(1)_TESTS)
	$$(Q)rm -f $$(filter-out $$($(1)_TESTS),$$(wildcard $(2)/tests/*))
	@echo 'up to date: $(2)/attnlab, $(2)/libattnlab.a, $(2)/tests/'

$(2)/obj/flags: FORCE
	$$(call record,$$@,$$(CC) $$(BASE) $$($(1)_flags))
$(2)/obj/objects: FORCE
	$$(call record,$$@,$$($(1)_LIB_OBJ) $$($(1)_CLI_OBJ))

$$($(1)_LIB_OBJ) $$($(1)_CLI_OBJ) $$($(1)_TEST_OBJ): $(2)/obj/%.o: %.c $(2)/obj/flags
	$$(call show,CC,$$@)
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(BASE) $$($(1)_flags) -MMD -MP -c $$< -o $$@

# Rebuilt from the current list of objects, never updated in place.
$(2)/libattnlab.a: $$($(1)_LIB_OBJ) $(2)/obj/objects
	$$(call show,AR,$$@)
	$$(Q)rm -f $$@
	$$(Q)ar rcs $$@ $$($(1)_LIB_OBJ)

$(2)/attnlab: $$($(1)_CLI_OBJ) $(2)/libattnlab.a $(2)/obj/objects
	$$(call show,LD,$$@)
	$$(Q)$$(CC) $$(BASE) $$($(1)_flags) $$($(1)_CLI_OBJ) $(2)/libattnlab.a -lm -o $$@

$$($(1)_TESTS): $(2)/tests/%: $(2)/obj/tests/%.o $(2)/libattnlab.a
	$$(call show,LD,$$@)
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(BASE) $$($(1)_flags) $$< $(2)/libattnlab.a -lm -o $$@
endef

$(eval $(call c_variant,native,build))
$(eval $(call c_variant,asan,build/asan))

# The page's live checks against a broken core: the library built with -DAL_FAULTS (the
# deliberate bugs of core/base/fault.h, compiled out everywhere else) and linked with
# tests/faults/test_faults.c only.
faults_flags := -O1 -g -DAL_FAULTS
FAULTS_OBJ := $(call objs,build/faults/obj,$(CORE_SRC) tests/faults/test_faults.c)
DEPS += $(FAULTS_OBJ:.o=.d)

faults: build/faults/test_faults
	@echo 'up to date: build/faults/test_faults'

build/faults/obj/flags: FORCE
	$(call record,$@,$(CC) $(BASE) $(faults_flags))
build/faults/obj/objects: FORCE
	$(call record,$@,$(FAULTS_OBJ))

$(FAULTS_OBJ): build/faults/obj/%.o: %.c build/faults/obj/flags
	$(call show,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE) $(faults_flags) -MMD -MP -c $< -o $@

build/faults/test_faults: $(FAULTS_OBJ) build/faults/obj/objects
	$(call show,LD,$@)
	$(Q)$(CC) $(BASE) $(faults_flags) $(FAULTS_OBJ) -lm -o $@

# The C entry points the page calls: the functions of the ABI list (abi_list.h, whose rows
# web/attnlab-api.js wraps, one wrapper per row; al_heap_in_use reads mallinfo for it), and the
# allocator the binding uses.
ABI_LIST := $(firstword $(wildcard core/*/abi_list.h))
lparen := (
WASM_EXPORTS := $(shell sed -n '/^[#]define AL_ABI_FUNCTIONS/,/^$$/s/^ *F[$(lparen)]\(al_[a-z0-9_]*\),.*/\1/p' $(ABI_LIST)) malloc free

# The forward pass's inner loops, the GEMM, the softmax, the reductions (QK-Norm's sums), the
# norms and RoPE, are built for speed (-O2; -O3's extra unrolling bought nothing measurable
# under V8 and cost 6 KB; reduce, norm and rope at -O2 made the seeds' prefill of 128 tokens
# ~10% faster for 7 KB); the rest of the forward pass (attention, kv_cache) at -Os; everything
# else (loaders, demos, text, checks) at -Oz.
WASM_SPEED := gemm softmax fma_peak reduce norm rope
WASM_FORWARD := attention kv_cache
wasm_opt = $(if $(filter $(1),$(WASM_FORWARD)),-Os,$(if $(filter $(1),$(WASM_SPEED)),-O2,-Oz))
WASM_CFLAGS = -std=c11 $(1) -msimd128 -ffp-contract=off -DNDEBUG $(WARN) -Icore -Icore/include

comma := ,
space := $(subst ,, )
WASM_EXPORTED := [$(subst $(space),$(comma),$(patsubst %,"_%",$(strip $(WASM_EXPORTS))))]
# A standalone module with no Emscripten JS runtime: web/wasm-loader.js instantiates it.
# emmalloc is a small allocator (the core allocates only when a session or file changes).
# Linked with -Oz (Binaryen's size passes): -O3 here was at most ~5% faster on MiniMind
# prefill, within run-to-run noise, and 7 KB larger.
WASM_LINK_FLAGS = -Oz -msimd128 --no-entry -sSTANDALONE_WASM=1 \
    -sMALLOC=emmalloc -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=16MB -sMAXIMUM_MEMORY=2GB \
    -sTOTAL_STACK=1MB -sEXPORTED_FUNCTIONS='$(1)'
WASM_LINK = $(EMCC) $(call WASM_LINK_FLAGS,$(WASM_EXPORTED)) $(WASM_OBJ) -o web/gen/attnlab.wasm

# The threaded build, web/gen/attnlab-threads.wasm, for the served page where it is
# cross-origin isolated (dist/attnlab.html keeps the one-thread build): the same sources with
# atomics and bulk memory (a shared memory needs both), AL_WASM_THREADS (kernels/pool.c: the
# host's threads; kernels/gemm.c: a copy of its buffers per thread), its memory imported and
# shared, and the entry points through which web/core/wasm-loader.js starts the threads.
WASM_THREAD_EXPORTS := al_wasm_thread_block al_wasm_thread_stack_top al_wasm_thread_init_tls al_wasm_thread_run al_wasm_threads
WASM_THREADS_EXPORTED := [$(subst $(space),$(comma),$(patsubst %,"_%",$(strip $(WASM_EXPORTS) $(WASM_THREAD_EXPORTS))))]
WASM_THREADS_OBJ := $(call objs,build/wasm-threads,$(CORE_SRC))
WASM_THREADS_LINK = $(EMCC) $(call WASM_LINK_FLAGS,$(WASM_THREADS_EXPORTED)) -Wl,--shared-memory,--import-memory \
    $(WASM_THREADS_OBJ) -o web/gen/attnlab-threads.wasm
wasm_threads_cflags = $(call WASM_CFLAGS,$(1)) -matomics -mbulk-memory -DAL_WASM_THREADS
DEPS += $(WASM_THREADS_OBJ:.o=.d)

# Emscripten 3.1.6's JS optimizer needs Debian's node modules (acorn) on NODE_PATH.
export NODE_PATH := /usr/share/nodejs

WASM_OBJ := $(call objs,build/wasm,$(CORE_SRC))
DEPS += $(WASM_OBJ:.o=.d)

wasm: dist/attnlab.html web/gen/attnlab-threads.wasm
	@echo 'up to date: web/gen/attnlab.wasm, web/gen/attnlab-threads.wasm, dist/attnlab.html'

build/wasm/flags: FORCE
	$(call record,$@,$(EMCC) $(call WASM_CFLAGS,-Oz) -O2: $(WASM_SPEED) -Os: $(WASM_FORWARD))
build/wasm/link: FORCE
	$(call record,$@,$(WASM_LINK))

$(WASM_OBJ): build/wasm/%.o: %.c build/wasm/flags
	$(call show,EMCC,$@)
	@mkdir -p $(@D)
	$(Q)$(EMCC) $(call WASM_CFLAGS,$(call wasm_opt,$(notdir $*))) -MMD -MP -c $< -o $@

web/gen/attnlab.wasm: $(WASM_OBJ) build/wasm/link
	$(call show,EMCC,$@)
	@mkdir -p $(@D)
	$(Q)rm -f web/gen/attnlab.js
	$(Q)$(WASM_LINK)

build/wasm-threads/flags: FORCE
	$(call record,$@,$(EMCC) $(call wasm_threads_cflags,-Oz) -O2: $(WASM_SPEED) -Os: $(WASM_FORWARD))
build/wasm-threads/link: FORCE
	$(call record,$@,$(WASM_THREADS_LINK))

$(WASM_THREADS_OBJ): build/wasm-threads/%.o: %.c build/wasm-threads/flags
	$(call show,EMCC,$@)
	@mkdir -p $(@D)
	$(Q)$(EMCC) $(call wasm_threads_cflags,$(call wasm_opt,$(notdir $*))) -MMD -MP -c $< -o $@

web/gen/attnlab-threads.wasm: $(WASM_THREADS_OBJ) build/wasm-threads/link
	$(call show,EMCC,$@)
	@mkdir -p $(@D)
	$(Q)$(WASM_THREADS_LINK)

# Front-end packages are vendored from node_modules: the page loads nothing from the network.
web/vendor/chart.umd.js: node_modules/chart.js/dist/chart.umd.js
	$(call show,CP,$@)
	@mkdir -p $(@D)
	$(Q)cp $< $@

# The shipped model, served beside the page (and embedded in the single-file page).
SHIPPED_MODELS := web/gen/models/stories260K.bin web/gen/models/tok512.bin
web/gen/models/%: models/stories260K/%
	$(call show,CP,$@)
	@mkdir -p $(@D)
	$(Q)cp $< $@
# The second, served beside the page only (the single file keeps to its 2.5 MB).
SERVED_MODELS := $(addprefix web/gen/models/minimind-fortunes/,config.json model.safetensors tokenizer.json train-sample.txt)
web/gen/models/minimind-fortunes/%: models/minimind-fortunes/%
	$(call show,CP,$@)
	@mkdir -p $(@D)
	$(Q)cp -L $< $@

# The single-file page: every file of web/ (bundle.mjs inlines the modules main.js and the
# workers import), the wasm, Chart.js and the shipped model.
WEB_SRC := $(shell find web -type f ! -path 'web/gen/*' ! -path 'web/vendor/*')
dist/attnlab.html: $(WEB_SRC) web/gen/attnlab.wasm web/vendor/chart.umd.js $(SHIPPED_MODELS) $(SERVED_MODELS)
	$(Q)node web/bundle.mjs

# The libFuzzer harnesses link the core's objects directly (no archive), built with clang.
FUZZ_CORE_OBJ := $(call objs,build/fuzz/obj,$(CORE_SRC))
FUZZ_MAIN_OBJ := $(call objs,build/fuzz/obj,$(FUZZ_NAMES:%=tests/fuzz/%.c))
FUZZ_BIN := $(FUZZ_NAMES:%=build/fuzz/%)
DEPS += $(FUZZ_CORE_OBJ:.o=.d) $(FUZZ_MAIN_OBJ:.o=.d)

fuzz: $(FUZZ_BIN)
	@echo 'up to date: $(FUZZ_BIN)'

build/fuzz/obj/flags: FORCE
	$(call record,$@,$(FUZZCC) $(fuzz_flags))
build/fuzz/obj/objects: FORCE
	$(call record,$@,$(FUZZ_CORE_OBJ))

$(FUZZ_CORE_OBJ) $(FUZZ_MAIN_OBJ): build/fuzz/obj/%.o: %.c build/fuzz/obj/flags
	$(call show,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(FUZZCC) $(fuzz_flags) -MMD -MP -c $< -o $@

$(FUZZ_BIN): build/fuzz/%: build/fuzz/obj/tests/fuzz/%.o $(FUZZ_CORE_OBJ) build/fuzz/obj/objects
	$(call show,LD,$@)
	$(Q)$(FUZZCC) $(fuzz_flags) $(FUZZ_CORE_OBJ) $< -lm -o $@

-include $(DEPS)
