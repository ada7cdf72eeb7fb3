/* base/fault.h — deliberate bugs for the tests of the page's live checks and of the refusals
 * no valid input can reach. A build with -DAL_FAULTS (build/faults, for tests only) can switch
 * on one of the faults below at run time, each a plausible bug in the forward pass or a read
 * that fails, so a test can show that the check meant to catch it turns red. In every other build AL_FAULT(f) is the constant 0 and the faulty branches are
 * compiled out. */
#ifndef ATTNLAB_BASE_FAULT_H
#define ATTNLAB_BASE_FAULT_H

typedef enum {
    AL_FAULT_NONE = 0,
    AL_FAULT_GQA_MODULO,   /* query head h reads KV head h % n_kv instead of h / n_rep */
    AL_FAULT_CACHE_BYTES,  /* the cache reports 4 bytes more than it holds */
    AL_FAULT_ROPE_SCALE,   /* RoPE rotates and also scales by 1.001 */
    AL_FAULT_ROPE_ABSOLUTE,/* RoPE's angle grows with m² instead of m */
    AL_FAULT_MASK_LEAK,    /* the causal mask lets each query see one key of the future */
    AL_FAULT_SOFTMAX_NORM, /* softmax rows sum to 1.001 */
    AL_FAULT_CACHE_DRIFT,  /* a decode step scales its scores by one ulp more than a prefill */
    AL_FAULT_WEIGHT_READ,  /* the GGUF writer's read of each attn_k weight fails (returns -1) */
    AL_FAULT_COUNT
} al_fault_id;

#ifdef AL_FAULTS
extern al_fault_id al_fault_active; /* the fault switched on (AL_FAULT_NONE: none) */
#define AL_FAULT(f) (al_fault_active == (f))
#else
#define AL_FAULT(f) 0
#endif

#endif
