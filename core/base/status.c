/* status.c — names of status codes and the one-line error messages every fallible call can
 * hand back to its caller (the CLI prints them, the page shows them). */
#include "base/internal.h"

#include <math.h>

const char *al_status_str(al_status s) {
    switch (s) {
    case AL_OK: return "ok";
    case AL_ERR_ARG: return "invalid argument";
    case AL_ERR_CONFIG: return "invalid configuration";
    case AL_ERR_LIMIT: return "size limit exceeded";
    case AL_ERR_NOMEM: return "out of memory";
    case AL_ERR_SHAPE: return "shape mismatch";
    case AL_ERR_CAPACITY: return "capacity exceeded";
    case AL_ERR_FORMAT: return "malformed file";
    case AL_ERR_DTYPE: return "unsupported dtype";
    case AL_ERR_MISSING: return "missing tensor";
    case AL_ERR_NONFINITE: return "non-finite value";
    case AL_ERR_IO: return "I/O error";
    }
    return "unknown status";
}

al_status al_fail(al_error *err, al_status status, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        al_vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = status;
        err->file = AL_FILE_NONE; /* a fresh error: the caller that knows the file says so (al_fail_in) */
    }
    return status;
}

al_status al_fail_in(al_error *err, al_file_role file, al_status status) {
    if (err && status != AL_OK) err->file = file;
    return status;
}

int al_mul_ok(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0) return 0;
    if (a != 0 && b > INT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

int al_parse_finite(const char *s, double *out) {
    double v;
    const char *end = s ? al_decimal_parse(s, &v) : NULL;
    if (!end || *end != '\0' || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

al_status al_ok(al_error *err) {
    if (err) {
        err->status = AL_OK;
        err->msg[0] = '\0';
        err->file = AL_FILE_NONE;
    }
    return AL_OK;
}
