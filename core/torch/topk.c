/* topk.c — torch.topk(largest=True) of one row as PyTorch 1.13's CPU kernel orders it
 * (aten/src/ATen/native/TopKImpl.h): (value, index) pairs in a queue, then, for k · 64 > n,
 * std::nth_element(q, q + k - 1, q + n) with "NaN or greater" as the order, and with sorted=True
 * std::sort over the first k - 1 only (the k-th is in place already). The first k pairs are the
 * result. With sorted=False that order is whatever libstdc++'s introselect leaves, so it is
 * spelled out here: median-of-three pivots and Hoare partitions while more than 3 pairs remain,
 * then an insertion sort. */
#include "torch/topk.h"

#include <assert.h>
#include <math.h>

typedef struct {
    float value;
    int64_t index;
} pair;

/* comp(a, b): a goes before b. */
static int before(const pair *a, const pair *b) {
    return (isnan(a->value) && !isnan(b->value)) || a->value > b->value;
}

static void swap(pair *a, pair *b) {
    const pair t = *a;
    *a = *b;
    *b = t;
}

/* std::__insertion_sort on [first, last). */
static void insertion_sort(pair *first, pair *last) {
    if (first == last) return;
    for (pair *i = first + 1; i != last; i++) {
        const pair v = *i;
        if (before(&v, first)) {
            for (pair *p = i; p != first; p--) p[0] = p[-1];
            *first = v;
        } else { /* __unguarded_linear_insert */
            pair *at = i;
            while (before(&v, at - 1)) {
                at[0] = at[-1];
                at--;
            }
            *at = v;
        }
    }
}

/* std::__move_median_to_first(result, a, b, c). */
static void median_to_first(pair *result, pair *a, pair *b, pair *c) {
    if (before(a, b)) {
        if (before(b, c)) swap(result, b);
        else if (before(a, c)) swap(result, c);
        else swap(result, a);
    } else if (before(a, c)) swap(result, a);
    else if (before(b, c)) swap(result, c);
    else swap(result, b);
}

/* std::__unguarded_partition(first, last, pivot). */
static pair *partition(pair *first, pair *last, const pair *pivot) {
    for (;;) {
        while (before(first, pivot)) first++;
        last--;
        while (before(pivot, last)) last--;
        if (!(first < last)) return first;
        swap(first, last);
        first++;
    }
}

/* std::nth_element's __introselect. Each partition leaves at least one pair fewer, so for
 * n <= 8 the range is down to 3 within 2·floor(log2 n) rounds: its heap-select fallback for
 * a spent depth limit never runs, and is left out. */
static void nth_element(pair *first, pair *nth, pair *last) {
    while (last - first > 3) {
        pair *mid = first + (last - first) / 2;
        median_to_first(first, first + 1, mid, last - 1);
        pair *cut = partition(first + 1, last, first);
        if (cut <= nth) first = cut;
        else last = cut;
    }
    insertion_sort(first, last);
}

void al_topk_torch(int64_t *idx, float *val, const float *x, int64_t n, int64_t k, int sorted) {
    enum { MAX_N = 8 };
    assert(k >= 1 && k <= n && n <= MAX_N);
    pair q[MAX_N];
    for (int64_t j = 0; j < n; j++) q[j] = (pair){x[j], j};
    nth_element(q, q + k - 1, q + n);
    if (sorted) insertion_sort(q, q + k - 1); /* std::sort of < 16 pairs is an insertion sort */
    for (int64_t j = 0; j < k; j++) {
        idx[j] = q[j].index;
        if (val) val[j] = q[j].value;
    }
}
