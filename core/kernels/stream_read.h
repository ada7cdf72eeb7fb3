/* kernels/stream_read.h — how fast this core reads memory, measured: the ceiling of any step
 * that must read its weights once (a decode step). Not public API. */
#ifndef ATTNLAB_KERNELS_STREAM_READ_H
#define ATTNLAB_KERNELS_STREAM_READ_H

#include <stdint.h>

/* GB/s (10⁹ bytes) of the fastest of `passes` sums of buf [n] (after one untimed pass), read
 * with the widest loads this machine has (AVX-512, AVX2, else 16 float accumulators the
 * compiler vectorises: SSE2 on x86-64, SIMD128 in WebAssembly); the lanes of one load are written to
 * *lanes if not NULL, the sum read to *sink (so the reads are not optimised away). buf is
 * aligned to 64 bytes and n a multiple of 64 floats. */
double al_stream_read_gb_per_s(const float *buf, int64_t n, int passes, int *lanes, float *sink);

#endif
