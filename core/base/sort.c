/* sort.c — al_sort, the core's qsort: heapsort. In place, O(n log n) comparisons in the worst
 * case whatever the input (a crafted file cannot make it quadratic), no allocation, no
 * recursion, and a fraction of the size of libc's qsort in the WebAssembly build.
 *
 * Not stable: elements that compare equal may end in any order, so callers whose results must
 * not depend on it give their comparison a tie-break (see io/safetensors.c).
 *
 * The array is viewed as a binary tree, element i having children 2i+1 and 2i+2. First every
 * subtree is made a max-heap (each parent ≥ its children), from the last parent up to the root;
 * then, n−1 times, the root (the largest remaining element) is swapped to the end of the
 * unsorted part, which shrinks by one, and the new root is sifted down to restore the heap. */
#include "base/internal.h"

#include <stddef.h>

static void swap_bytes(unsigned char *a, unsigned char *b, size_t size) {
    for (size_t i = 0; i < size; i++) {
        const unsigned char t = a[i];
        a[i] = b[i];
        b[i] = t;
    }
}

/* Moves element `root` down the heap of the first n elements until it is ≥ its children. */
static void sift_down(unsigned char *base, size_t root, size_t n, size_t size,
                      int (*cmp)(const void *, const void *)) {
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && cmp(base + child * size, base + (child + 1) * size) < 0) child++;
        if (cmp(base + root * size, base + child * size) >= 0) return;
        swap_bytes(base + root * size, base + child * size, size);
        root = child;
    }
}

void al_sort(void *array, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
    unsigned char *base = array;
    if (n < 2) return;
    for (size_t parent = n / 2; parent-- > 0;) sift_down(base, parent, n, size, cmp);
    for (size_t end = n - 1; end > 0; end--) {
        swap_bytes(base, base + end * size, size);
        sift_down(base, 0, end, size, cmp);
    }
}
