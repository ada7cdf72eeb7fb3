/* tensor_format.c — the text PyTorch 1.13 prints for a tensor (repr / str / f"{t}") and for a
 * torch.Size, reproduced character for character so the demos read exactly like the tutorial
 * scripts. The logic mirrors torch/_tensor_str.py with the default print options; the
 * comments name the Python function each piece comes from.
 *
 * Invalid arguments (negative ndim or dimension, a NULL shape or NULL data for a non-empty
 * tensor, more than MAX_PRINT_DIMS dimensions, an element count beyond int64) give an empty
 * string and a return value of 0: a valid repr is never empty. */

#include "attnlab/torch.h"
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/internal.h"

/* torch.set_printoptions(profile="default") */
#define PRINT_PRECISION 4    /* digits after the point, in fixed and scientific notation */
#define PRINT_THRESHOLD 1000 /* more elements than this: summarise dimensions with "..." */
#define PRINT_EDGEITEMS 3    /* elements kept at each end of a summarised dimension */
#define PRINT_LINEWIDTH 80

#define TENSOR_PREFIX "tensor("
#define TENSOR_INDENT 7 /* strlen(TENSOR_PREFIX): nested rows line up under the first '[' */

/* The printer recurses once per dimension; this bounds the stack. */
#define MAX_PRINT_DIMS 64

/* Longest single element: "%.0f" of FLT_MAX has 39 digits, plus a sign and the int-mode '.'.
 * Fixed notation never sees more than 1e8 (larger values switch to scientific). */
#define ELEMENT_TEXT_MAX 64

/* ------------------------------------------------------------------------------------------
 * Output sink: counts every byte like snprintf, stores what fits, remembers where the last
 * line starts (torch decides where suffixes go from the length of the last line).
 * ------------------------------------------------------------------------------------------ */

typedef struct {
    char *buf;
    size_t cap;
    size_t len;          /* full length produced so far, also past cap */
    size_t last_newline; /* offset of the last '\n'; valid when has_newline */
    int has_newline;
} text_sink;

static void sink_write(text_sink *sink, const char *text, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (sink->len + 1 < sink->cap) sink->buf[sink->len] = text[i]; /* keep room for NUL */
        if (text[i] == '\n') {
            sink->last_newline = sink->len;
            sink->has_newline = 1;
        }
        sink->len++;
    }
}

static void sink_puts(text_sink *sink, const char *text) { sink_write(sink, text, strlen(text)); }

static void sink_spaces(text_sink *sink, int count) {
    for (int i = 0; i < count; i++) sink_write(sink, " ", 1);
}

static size_t sink_finish(text_sink *sink) {
    if (sink->cap > 0) sink->buf[sink->len < sink->cap ? sink->len : sink->cap - 1] = '\0';
    return sink->len;
}

/* Python's len() counts code points; a suffix could carry UTF-8, so skip continuation bytes. */
static size_t utf8_length(const char *text, size_t n) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80) count++;
    return count;
}

/* ------------------------------------------------------------------------------------------
 * _Formatter: one number format for the whole tensor, chosen from the printed elements.
 * ------------------------------------------------------------------------------------------ */

typedef struct {
    const float *values;  /* float32 data, or NULL for an int64 tensor */
    const int64_t *ints;  /* int64 data when values is NULL */
    int int_mode;         /* every nonzero finite value is integral: printed "3." */
    int sci_mode;         /* "%.4e" for everything */
    int max_width;        /* elements are right-aligned to this width */
} tensor_formatter;

/* The element's text before padding, as Python's str.format would write it; returns its
 * length. al_snprintf (base/print.c), like Python's float formatting, rounds the exact binary value
 * correctly (ties to even), so "%.4f" / "%.4e" on the double agree with '{:.4f}' / '{:.4e}'. */
static int format_element_text(const tensor_formatter *fmt, int64_t index,
                               char text[ELEMENT_TEXT_MAX]) {
    int n;
    if (!fmt->values) {
        n = al_snprintf(text, ELEMENT_TEXT_MAX, "%" PRId64, fmt->ints[index]);
    } else {
        double v = (double)fmt->values[index];
        /* Python writes "nan" whatever the sign bit, where glibc would write "-nan". */
        if (isnan(v)) n = al_snprintf(text, ELEMENT_TEXT_MAX, "nan");
        else if (isinf(v)) n = al_snprintf(text, ELEMENT_TEXT_MAX, v < 0 ? "-inf" : "inf");
        else if (fmt->sci_mode) n = al_snprintf(text, ELEMENT_TEXT_MAX, "%.*e", PRINT_PRECISION, v);
        /* The '.' marks a float tensor whose values happen to be integers ("1., 0."). */
        else if (fmt->int_mode) n = al_snprintf(text, ELEMENT_TEXT_MAX, "%.0f.", v);
        else n = al_snprintf(text, ELEMENT_TEXT_MAX, "%.*f", PRINT_PRECISION, v);
    }
    if (n < 0) n = 0;
    if (n >= ELEMENT_TEXT_MAX) n = ELEMENT_TEXT_MAX - 1; /* unreachable, see ELEMENT_TEXT_MAX */
    return n;
}

static void write_element(text_sink *sink, const tensor_formatter *fmt, int64_t index) {
    char text[ELEMENT_TEXT_MAX];
    int n = format_element_text(fmt, index, text);
    /* Wider than max_width is possible ("-0.", "-inf" are not measured): no padding then. */
    sink_spaces(sink, fmt->max_width - n);
    sink_write(sink, text, (size_t)n);
}

/* Calls visit(ctx, flat_index) for each element that will be printed, in order: with
 * summarisation, only the first and last PRINT_EDGEITEMS of every longer dimension. This is
 * get_summarized_data, which is what _Formatter measures. */
typedef void (*element_visitor)(void *ctx, int64_t flat_index);

static void visit_printed(const int64_t *shape, const int64_t *strides, int ndim, int64_t offset,
                          int summarize, element_visitor visit, void *ctx) {
    if (ndim == 0) {
        visit(ctx, offset);
        return;
    }
    int64_t n = shape[0];
    for (int64_t i = 0; i < n; i++) {
        if (summarize && n > 2 * PRINT_EDGEITEMS && i == PRINT_EDGEITEMS) i = n - PRINT_EDGEITEMS;
        visit_printed(shape + 1, strides + 1, ndim - 1, offset + i * strides[0], summarize, visit,
                      ctx);
    }
}

/* Statistics of the nonzero finite values: torch keeps 0, -0, nan and ±inf out of them. */
typedef struct {
    const float *values;
    int64_t count;
    double min_abs, max_abs;
    int all_integral;
} float_stats;

static void collect_float_stats(void *ctx, int64_t index) {
    float_stats *st = ctx;
    float v = st->values[index];
    if (!isfinite(v) || v == 0.0f) return;
    double a = fabs((double)v);
    if (st->count == 0 || a < st->min_abs) st->min_abs = a;
    if (st->count == 0 || a > st->max_abs) st->max_abs = a;
    if (ceilf(v) != v) st->all_integral = 0;
    st->count++;
}

typedef struct {
    tensor_formatter *fmt;
} width_pass;

static void measure_width(void *ctx, int64_t index) {
    tensor_formatter *fmt = ((width_pass *)ctx)->fmt;
    if (fmt->values) {
        float v = fmt->values[index];
        if (!isfinite(v) || v == 0.0f) return; /* only nonzero finite values set the width */
    }
    char text[ELEMENT_TEXT_MAX];
    int n = format_element_text(fmt, index, text);
    if (n > fmt->max_width) fmt->max_width = n;
}

static tensor_formatter formatter_create(const float *values, const int64_t *ints,
                                         const int64_t *shape, const int64_t *strides, int ndim,
                                         int summarize) {
    tensor_formatter fmt = {values, ints, 1, 0, 1};
    if (values) {
        float_stats st = {values, 0, 0.0, 0.0, 1};
        visit_printed(shape, strides, ndim, 0, summarize, collect_float_stats, &st);
        if (st.count == 0) return fmt; /* nothing to measure: int mode, width 1 */
        fmt.int_mode = st.all_integral;
        /* A spread of more than three decades, or very large or (for fractions) very small
         * magnitudes, cannot share one fixed-point column: use scientific notation. */
        double ratio = st.max_abs / st.min_abs;
        if (fmt.int_mode) fmt.sci_mode = ratio > 1000.0 || st.max_abs > 1.0e8;
        else fmt.sci_mode = ratio > 1000.0 || st.max_abs > 1.0e8 || st.min_abs < 1.0e-4;
    }
    width_pass pass = {&fmt};
    visit_printed(shape, strides, ndim, 0, summarize, measure_width, &pass);
    return fmt;
}

/* ------------------------------------------------------------------------------------------
 * _tensor_str_with_formatter / _vector_str: the nested brackets.
 * A summarised dimension has 2·EDGEITEMS + 1 items, the middle one being the ellipsis.
 * ------------------------------------------------------------------------------------------ */

static int64_t item_count(int64_t n, int summarize) {
    return summarize && n > 2 * PRINT_EDGEITEMS ? 2 * PRINT_EDGEITEMS + 1 : n;
}

/* Index along the dimension of item k, or -1 for the ellipsis. */
static int64_t item_index(int64_t k, int64_t n, int summarize) {
    if (!(summarize && n > 2 * PRINT_EDGEITEMS) || k < PRINT_EDGEITEMS) return k;
    if (k == PRINT_EDGEITEMS) return -1;
    return n - (2 * PRINT_EDGEITEMS + 1) + k;
}

static void write_vector(text_sink *sink, const tensor_formatter *fmt, int64_t n, int64_t stride,
                         int64_t offset, int indent, int summarize) {
    /* Each element takes its width plus ", "; as many as fit in the line width after the
     * indent, at least one. The ellipsis item counts as an element. */
    int element_length = fmt->max_width + 2;
    int64_t per_line = (PRINT_LINEWIDTH - indent) / element_length;
    if (per_line < 1) per_line = 1;
    int64_t items = item_count(n, summarize);
    sink_puts(sink, "[");
    for (int64_t k = 0; k < items; k++) {
        if (k > 0 && k % per_line == 0) {
            sink_puts(sink, ",\n");
            sink_spaces(sink, indent + 1);
        } else if (k > 0) {
            sink_puts(sink, ", ");
        }
        int64_t i = item_index(k, n, summarize);
        if (i < 0) sink_puts(sink, " ...");
        else write_element(sink, fmt, offset + i * stride);
    }
    sink_puts(sink, "]");
}

static void write_slices(text_sink *sink, const tensor_formatter *fmt, const int64_t *shape,
                         const int64_t *strides, int ndim, int64_t offset, int indent,
                         int summarize) {
    if (ndim == 0) {
        write_element(sink, fmt, offset);
        return;
    }
    if (ndim == 1) {
        write_vector(sink, fmt, shape[0], strides[0], offset, indent, summarize);
        return;
    }
    int64_t items = item_count(shape[0], summarize);
    sink_puts(sink, "[");
    for (int64_t k = 0; k < items; k++) {
        if (k > 0) {
            /* One line break per remaining dimension minus one: a blank line between the
             * matrices of a 3-D tensor, two between the blocks of a 4-D one. */
            sink_puts(sink, ",");
            for (int d = 1; d < ndim; d++) sink_puts(sink, "\n");
            sink_spaces(sink, indent + 1);
        }
        int64_t i = item_index(k, shape[0], summarize);
        if (i < 0) sink_puts(sink, "...");
        else write_slices(sink, fmt, shape + 1, strides + 1, ndim - 1, offset + i * strides[0],
                          indent + 1, summarize);
    }
    sink_puts(sink, "]");
}

/* ------------------------------------------------------------------------------------------
 * _add_suffixes: ", key=value" after the last ']' if the line stays within the line width,
 * otherwise on a new line under the first '['.
 * ------------------------------------------------------------------------------------------ */

/* torch measures the last line as len(s) - s.rfind("\n") + 1, which is two more than its
 * length (and len(s) + 2 without a newline). Kept as is: placement depends on it. */
static size_t torch_last_line_length(const text_sink *sink) {
    return sink->has_newline ? sink->len - sink->last_newline + 1 : sink->len + 2;
}

static void write_suffix(text_sink *sink, size_t *last_line_len, const char *text, size_t n) {
    size_t length = utf8_length(text, n);
    if (*last_line_len + length + 2 > PRINT_LINEWIDTH) {
        sink_puts(sink, ",\n");
        sink_spaces(sink, TENSOR_INDENT);
        *last_line_len = TENSOR_INDENT + length;
    } else {
        sink_puts(sink, ", ");
        *last_line_len += length + 2;
    }
    sink_write(sink, text, n);
}

/* True if text starts with "identifier=", the shape of every torch suffix (grad_fn=...,
 * requires_grad=..., size=..., dtype=...). */
static int starts_with_key(const char *text) {
    const char *p = text;
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_')) return 0;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '_')
        p++;
    return *p == '=';
}

/* The caller's suffix, e.g. ", grad_fn=<SelectBackward0>", holds one or more torch suffixes,
 * each introduced by ", " and a key; each is placed by torch's rule. Text that does not start
 * with ", " is appended as given. */
static void write_caller_suffix(text_sink *sink, size_t *last_line_len, const char *suffix) {
    if (!suffix || !*suffix) return;
    if (strncmp(suffix, ", ", 2) != 0) {
        sink_puts(sink, suffix);
        return;
    }
    const char *start = suffix + 2;
    for (;;) {
        const char *end = start;
        while (*end && !(end[0] == ',' && end[1] == ' ' && starts_with_key(end + 2))) end++;
        write_suffix(sink, last_line_len, start, (size_t)(end - start));
        if (!*end) break;
        start = end + 2;
    }
}

/* ------------------------------------------------------------------------------------------
 * Public entry points
 * ------------------------------------------------------------------------------------------ */

/* Checks the shape and computes the element count without overflow. */
static int shape_numel(const int64_t *shape, int ndim, int64_t *numel) {
    if (ndim < 0 || ndim > MAX_PRINT_DIMS || (ndim > 0 && !shape)) return 0;
    int has_zero = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return 0;
        if (shape[d] == 0) has_zero = 1;
    }
    int64_t n = 1;
    if (!has_zero) {
        for (int d = 0; d < ndim; d++) {
            if (n > INT64_MAX / shape[d]) return 0;
            n *= shape[d];
        }
    }
    *numel = has_zero ? 0 : n;
    return 1;
}

/* A refused call: an empty string where there is room, and -1. */
static int64_t refused(char *buf, size_t cap) {
    if (buf && cap > 0) buf[0] = '\0';
    return -1;
}

int64_t al_format_tensor(char *buf, size_t cap, const float *data, const int64_t *ints,
                        const int64_t *shape, int ndim, const char *suffix) {
    int64_t numel;
    if (!shape_numel(shape, ndim, &numel)) return refused(buf, cap);
    const float *values = ints ? NULL : data;
    if (numel > 0 && !values && !ints) return refused(buf, cap);

    text_sink sink = {buf, buf ? cap : 0, 0, 0, 0};
    sink_puts(&sink, TENSOR_PREFIX);
    if (numel == 0) {
        sink_puts(&sink, "[]");
        size_t last_line_len = torch_last_line_length(&sink);
        /* An empty tensor shows its shape unless it is 1-D (as NumPy does), and its dtype
         * when that is not the default float32, since no element reveals it. */
        if (ndim != 1) {
            char size_text[32 + MAX_PRINT_DIMS * 24];
            size_t n = (size_t)al_snprintf(size_text, sizeof size_text, "size=(");
            for (int d = 0; d < ndim; d++)
                n += (size_t)al_snprintf(size_text + n, sizeof size_text - n, "%s%" PRId64,
                                         d > 0 ? ", " : "", shape[d]);
            n += (size_t)al_snprintf(size_text + n, sizeof size_text - n, ")");
            write_suffix(&sink, &last_line_len, size_text, n);
        }
        if (ints) write_suffix(&sink, &last_line_len, "dtype=torch.int64", 17);
        write_caller_suffix(&sink, &last_line_len, suffix);
        sink_puts(&sink, ")");
        return (int64_t)sink_finish(&sink);
    }

    int64_t strides[MAX_PRINT_DIMS];
    int64_t stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = stride;
        stride *= shape[d];
    }
    int summarize = numel > PRINT_THRESHOLD;
    tensor_formatter fmt = formatter_create(values, ints, shape, strides, ndim, summarize);
    write_slices(&sink, &fmt, shape, strides, ndim, 0, TENSOR_INDENT, summarize);

    size_t last_line_len = torch_last_line_length(&sink);
    write_caller_suffix(&sink, &last_line_len, suffix);
    sink_puts(&sink, ")");
    return (int64_t)sink_finish(&sink);
}

int64_t al_format_size(char *buf, size_t cap, const int64_t *shape, int ndim) {
    if (ndim < 0 || (ndim > 0 && !shape)) return refused(buf, cap);
    text_sink sink = {buf, buf ? cap : 0, 0, 0, 0};
    sink_puts(&sink, "torch.Size([");
    for (int d = 0; d < ndim; d++) {
        char number[24];
        if (d > 0) sink_puts(&sink, ", ");
        al_snprintf(number, sizeof number, "%" PRId64, shape[d]);
        sink_puts(&sink, number);
    }
    sink_puts(&sink, "])");
    return (int64_t)sink_finish(&sink);
}
