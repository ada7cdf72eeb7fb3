/* zip.h — the directory of a zip archive held in memory, for the .pth reader: stored
 * (uncompressed) entries only, sizes and offsets from the central directory (ZIP64 records
 * accepted), every offset checked against the archive. Internal to the core, not public API. */
#ifndef ATTNLAB_ZIP_H
#define ATTNLAB_ZIP_H

#include "attnlab/io.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uint8_t *name; /* [name_len], inside the archive, not NUL-terminated */
    size_t name_len;
    const uint8_t *data; /* [size], inside the archive: the stored bytes */
    size_t size;
    uint32_t crc32;      /* as the central directory gives it (0: not computed, as
                          * torch.save writes with compute_crc32 off) */
} al_zip_entry;

/* Reads the central directory of the archive bytes[size] and checks every entry: stored, not
 * encrypted, its local header where the directory says with the same name, its data inside
 * the archive before the directory; names unique. *entries receives a malloc'd array of
 * *count entries sorted by name (bytewise), to release with free(); it points into `bytes`. */
al_status al_zip_read(const uint8_t *bytes, size_t size, al_zip_entry **entries, int64_t *count,
                      al_error *err);

/* The entry named name[name_len], or NULL. */
const al_zip_entry *al_zip_find(const al_zip_entry *entries, int64_t count, const char *name,
                                size_t name_len);

/* s[0, len) for a one-line message (pth.c's too): printable ASCII as is, any other byte as
 * \xNN, cut with "..." past AL_ZIP_SHOWN_MAX bytes. Returns out. */
#define AL_ZIP_SHOWN_MAX 80
#define AL_ZIP_SHOWN_BUF (AL_ZIP_SHOWN_MAX + 8)
const char *al_zip_show(char out[AL_ZIP_SHOWN_BUF], const uint8_t *s, size_t len);

/* The CRC-32 of zip (and zlib, and Ethernet): reflected polynomial 0xEDB88320. */
uint32_t al_zip_crc32(const uint8_t *data, size_t n);

#endif
