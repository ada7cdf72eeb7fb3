/* zip.h — the directory of a zip archive read from an al_byte_source, for the .pth reader:
 * stored (uncompressed) entries only, sizes and offsets from the central directory (ZIP64
 * records accepted), every offset checked against the archive. Only the tail, the central
 * directory and each local header are read: an entry's bytes stay in the file until asked for.
 * Internal to the core, not public API. */
#ifndef ATTNLAB_ZIP_H
#define ATTNLAB_ZIP_H

#include "attnlab/io.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uint8_t *name; /* [name_len], in the directory's copy (al_zip.dir), not NUL-terminated */
    size_t name_len;
    uint64_t data_at;    /* where the stored bytes start in the archive */
    uint64_t size;       /* how many there are: data_at + size <= the central directory's offset */
    uint32_t crc32;      /* as the central directory gives it (0: not computed, as
                          * torch.save writes with compute_crc32 off) */
} al_zip_entry;

typedef struct {
    al_zip_entry *entries; /* [count], sorted by name (bytewise) */
    int64_t count;
    uint8_t *dir;          /* the central directory's bytes, which the names point into */
} al_zip;

/* Reads the central directory of the archive src and checks every entry: stored, not
 * encrypted, its local header where the directory says with the same name, its data inside
 * the archive before the directory; names unique. Free *out with al_zip_free (also after a
 * failure, when it is empty). */
al_status al_zip_read(const al_byte_source *src, al_zip *out, al_error *err);
void al_zip_free(al_zip *z);

/* The entry named name[name_len], or NULL. */
const al_zip_entry *al_zip_find(const al_zip *z, const char *name, size_t name_len);

/* dst[n] = the bytes [at, at + n) of entry e (the caller keeps at + n <= e->size). */
al_status al_zip_entry_bytes(const al_byte_source *src, const al_zip_entry *e, uint64_t at, void *dst, size_t n,
                             al_error *err);
/* Entry e's bytes against its CRC-32 (0: not computed, as torch.save writes with
 * compute_crc32 off, and as torch.load never checks), read AL_ZIP_CHUNK bytes at a time. */
#define AL_ZIP_CHUNK ((size_t)1 << 16)
al_status al_zip_check_crc(const al_byte_source *src, const al_zip_entry *e, al_error *err);

/* Bytes held in memory as a source (the whole-bytes APIs read through it): *m must outlive
 * the source. */
typedef struct {
    const uint8_t *bytes; /* [size] */
    size_t size;
} al_memory;
al_byte_source al_memory_source(const al_memory *m);

/* s[0, len) for a one-line message (pth.c's too): printable ASCII as is, any other byte as
 * \xNN, cut with "..." past AL_ZIP_SHOWN_MAX bytes. Returns out. */
#define AL_ZIP_SHOWN_MAX 80
#define AL_ZIP_SHOWN_BUF (AL_ZIP_SHOWN_MAX + 8)
const char *al_zip_show(char out[AL_ZIP_SHOWN_BUF], const uint8_t *s, size_t len);

/* The CRC-32 of zip (and zlib, and Ethernet): reflected polynomial 0xEDB88320. al_zip_crc32
 * of data[n]; al_zip_crc32_update carries one on over the next n bytes (start from 0). */
uint32_t al_zip_crc32(const uint8_t *data, size_t n);
uint32_t al_zip_crc32_update(uint32_t crc, const uint8_t *data, size_t n);

#endif
