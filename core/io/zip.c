/* zip.c — the directory of a zip archive read from an al_byte_source (APPNOTE.TXT 6.3): the end
 * record found in the file's last 64 KB, the ZIP64 end record through its locator when there is
 * one, then the central directory, read whole, and the local header each of its entries points
 * to. Only what torch.save writes is accepted: one disk, stored entries; sizes come from the
 * central directory (torch.save's local headers leave them 0 and put them in a data
 * descriptor). Every offset and length is checked against the archive before it is read, in
 * 64-bit arithmetic that cannot overflow; an entry's bytes are read only when asked for. */
#include "attnlab/io.h"
#include "base/internal.h"
#include "io/zip.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum {
    END_SIG = 0x06054b50, END_SIZE = 22, MAX_COMMENT = 0xFFFF,
    LOCATOR_SIG = 0x07064b50, LOCATOR_SIZE = 20,
    END64_SIG = 0x06064b50, END64_SIZE = 56,
    CENTRAL_SIG = 0x02014b50, CENTRAL_SIZE = 46,
    LOCAL_SIG = 0x04034b50, LOCAL_SIZE = 30,
    ZIP64_EXTRA = 0x0001
};

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

const char *al_zip_show(char out[AL_ZIP_SHOWN_BUF], const uint8_t *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, i = 0;
    for (; i < len && o + 4 <= AL_ZIP_SHOWN_MAX; i++) {
        if (s[i] >= 0x20 && s[i] < 0x7F) {
            out[o++] = (char)s[i];
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[s[i] >> 4];
            out[o++] = hex[s[i] & 15];
        }
    }
    if (i < len) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

uint32_t al_zip_crc32_update(uint32_t crc, const uint8_t *data, size_t n) {
    /* Table of the remainders of each byte value, built here: 256 · 8 steps, nothing global. */
    uint32_t table[256];
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t r = b;
        for (int k = 0; k < 8; k++) r = (r >> 1) ^ (0xEDB88320u & (0u - (r & 1)));
        table[b] = r;
    }
    crc ^= 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

uint32_t al_zip_crc32(const uint8_t *data, size_t n) { return al_zip_crc32_update(0, data, n); }

/* ---- reading ------------------------------------------------------------------------------ */

static int memory_read(void *ctx, uint64_t offset, void *dst, size_t n) {
    const al_memory *m = ctx;
    if (offset > m->size || n > m->size - offset) return -1;
    if (n) memcpy(dst, m->bytes + offset, n);
    return 0;
}

al_byte_source al_memory_source(const al_memory *m) {
    return (al_byte_source){memory_read, (void *)m, m->size};
}

/* dst[n] = the archive's bytes [at, at + n), which the caller has checked lie inside it. */
static al_status read_at(const al_byte_source *src, uint64_t at, void *dst, size_t n, al_error *err) {
    if (src->read(src->ctx, at, dst, n) == 0) return AL_OK;
    return al_fail(err, AL_ERR_IO, "zip: %zu bytes at byte %" PRIu64 " of the archive could not be read", n, at);
}

al_status al_zip_entry_bytes(const al_byte_source *src, const al_zip_entry *e, uint64_t at, void *dst, size_t n,
                             al_error *err) {
    return read_at(src, e->data_at + at, dst, n, err);
}

al_status al_zip_check_crc(const al_byte_source *src, const al_zip_entry *e, al_error *err) {
    if (e->crc32 == 0) return AL_OK;
    uint8_t *chunk = malloc(AL_ZIP_CHUNK);
    if (!chunk) return al_fail(err, AL_ERR_NOMEM, "zip: out of memory for a %zu-byte chunk", AL_ZIP_CHUNK);
    uint32_t crc = 0;
    al_status s = AL_OK;
    for (uint64_t at = 0; at < e->size && s == AL_OK; at += AL_ZIP_CHUNK) {
        const size_t n = e->size - at < AL_ZIP_CHUNK ? (size_t)(e->size - at) : AL_ZIP_CHUNK;
        if ((s = al_zip_entry_bytes(src, e, at, chunk, n, err)) == AL_OK) crc = al_zip_crc32_update(crc, chunk, n);
    }
    free(chunk);
    if (s != AL_OK || crc == e->crc32) return s;
    char shown[AL_ZIP_SHOWN_BUF];
    return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s' fails its CRC-32 check: the file is damaged",
                   al_zip_show(shown, e->name, e->name_len));
}

/* Bytewise order of names, shorter first on a common prefix: the order al_zip_find searches. */
static int name_order(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len) {
    const int c = memcmp(a, b, a_len < b_len ? a_len : b_len);
    return c ? c : a_len < b_len ? -1 : a_len > b_len;
}

static int cmp_entries(const void *x, const void *y) {
    const al_zip_entry *a = x, *b = y;
    return name_order(a->name, a->name_len, b->name, b->name_len);
}

const al_zip_entry *al_zip_find(const al_zip *z, const char *name, size_t name_len) {
    const al_zip_entry *entries = z->entries;
    int64_t lo = 0, hi = z->count; /* [lo, hi) */
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const int c = name_order(entries[mid].name, entries[mid].name_len, (const uint8_t *)name, name_len);
        if (c == 0) return &entries[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* The file's last bytes, where the end records are: the end record, its comment of up to
 * MAX_COMMENT bytes and the ZIP64 locator before it. */
enum { TAIL_MAX = LOCATOR_SIZE + END_SIZE + MAX_COMMENT };
typedef struct {
    uint8_t bytes[TAIL_MAX];
    uint64_t base; /* bytes[0] is the file's byte base */
    uint64_t size; /* the file's */
} zip_tail;

/* The end of central directory record: the last "PK\5\6" whose comment ends the file. */
static al_status find_end(const zip_tail *t, uint64_t *at, al_error *err) {
    const uint64_t size = t->size;
    if (size < END_SIZE)
        return al_fail(err, AL_ERR_FORMAT, "zip: a file of %" PRIu64 " bytes is too short to be a zip archive", size);
    uint64_t near = UINT64_MAX; /* the last signature whose comment does not end the file */
    for (uint64_t pos = size - END_SIZE;; pos--) {
        const uint8_t *r = t->bytes + (pos - t->base);
        if (le32(r) == END_SIG) {
            if (le16(r + 20) == size - pos - END_SIZE) {
                *at = pos;
                return AL_OK;
            }
            if (near == UINT64_MAX) near = pos;
        }
        if (pos == t->base || size - END_SIZE - pos == MAX_COMMENT) break;
    }
    if (near != UINT64_MAX)
        return al_fail(err, AL_ERR_FORMAT, "zip: the end record at byte %" PRIu64 " gives a comment of %u bytes, but %" PRIu64 " follow it",
                       near, (unsigned)le16(t->bytes + (near - t->base) + 20), size - near - END_SIZE);
    return al_fail(err, AL_ERR_FORMAT, "zip: no end of central directory record (not a zip archive, or cut short)");
}

/* Where the directory is, as the end records give it. */
typedef struct {
    uint64_t disk, dir_disk, entries_here, entries, dir_size, dir_offset;
    uint64_t dir_end_limit; /* the directory must end here: where the end records start */
} zip_end;

/* A field of the classic end record: 0xFFFF / 0xFFFFFFFF means "see the ZIP64 record";
 * otherwise both records must agree. */
static al_status reconcile(uint64_t *classic, uint64_t saturated, uint64_t z64, const char *what,
                           al_error *err) {
    if (*classic != saturated && *classic != z64)
        return al_fail(err, AL_ERR_FORMAT, "zip: the end record gives %s %" PRIu64 ", the ZIP64 end record %" PRIu64,
                       what, *classic, z64);
    *classic = z64;
    return AL_OK;
}

static al_status read_end(const al_byte_source *src, const zip_tail *t, uint64_t end_at, zip_end *e, al_error *err) {
    const uint8_t *r = t->bytes + (end_at - t->base); /* the locator before it is in the tail too */
    e->disk = le16(r + 4);
    e->dir_disk = le16(r + 6);
    e->entries_here = le16(r + 8);
    e->entries = le16(r + 10);
    e->dir_size = le32(r + 12);
    e->dir_offset = le32(r + 16);
    e->dir_end_limit = end_at;
    if (end_at < LOCATOR_SIZE || le32(r - LOCATOR_SIZE) != LOCATOR_SIG) return AL_OK;

    /* ZIP64: the locator just before the end record points at the ZIP64 end record. */
    const uint8_t *loc = r - LOCATOR_SIZE;
    const uint64_t locator_at = end_at - LOCATOR_SIZE, z_at = le64(loc + 8), disks = le32(loc + 16);
    if (le32(loc + 4) != 0 || disks > 1)
        return al_fail(err, AL_ERR_FORMAT, "zip: the ZIP64 locator points to disk %" PRIu32 " of %" PRIu64 "; archives split over disks are not read",
                       le32(loc + 4), disks);
    if (z_at > locator_at || locator_at - z_at < END64_SIZE)
        return al_fail(err, AL_ERR_FORMAT, "zip: the ZIP64 end record's offset %" PRIu64 " is not inside the archive", z_at);
    uint8_t z[END64_SIZE];
    al_status s = read_at(src, z_at, z, sizeof z, err);
    if (s != AL_OK) return s;
    const uint64_t record = le64(z + 4); /* bytes after this field: 44 + extensible data */
    if (le32(z) != END64_SIG)
        return al_fail(err, AL_ERR_FORMAT, "zip: no ZIP64 end record at byte %" PRIu64 " where the locator points", z_at);
    if (record < END64_SIZE - 12 || record > locator_at - z_at - 12)
        return al_fail(err, AL_ERR_FORMAT, "zip: the ZIP64 end record's size %" PRIu64 " does not fit before its locator", record);
    if ((s = reconcile(&e->disk, 0xFFFF, le32(z + 16), "disk number", err)) != AL_OK ||
        (s = reconcile(&e->dir_disk, 0xFFFF, le32(z + 20), "directory disk", err)) != AL_OK ||
        (s = reconcile(&e->entries_here, 0xFFFF, le64(z + 24), "entry count on this disk", err)) != AL_OK ||
        (s = reconcile(&e->entries, 0xFFFF, le64(z + 32), "entry count", err)) != AL_OK ||
        (s = reconcile(&e->dir_size, 0xFFFFFFFF, le64(z + 40), "directory size", err)) != AL_OK ||
        (s = reconcile(&e->dir_offset, 0xFFFFFFFF, le64(z + 48), "directory offset", err)) != AL_OK)
        return s;
    e->dir_end_limit = z_at;
    return AL_OK;
}

/* The ZIP64 extended information of a central entry (extra field 0x0001): a 64-bit value for
 * each of size, compressed size and local header offset whose 32-bit field is 0xFFFFFFFF (and
 * a 32-bit disk number for 0xFFFF), in that order. */
static al_status read_zip64_extra(const uint8_t *extra, size_t len, uint64_t *size, uint64_t *csize,
                                  uint64_t *local, uint64_t *disk, const char *shown, al_error *err) {
    size_t p = 0;
    while (p < len) {
        if (len - p < 4) return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s': its extra field is cut short", shown);
        const uint32_t id = le16(extra + p), n = le16(extra + p + 2);
        if (len - p - 4 < n) return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s': an extra block runs past its extra field", shown);
        if (id == ZIP64_EXTRA) {
            const uint8_t *b = extra + p + 4;
            uint32_t at = 0;
            uint64_t *const fields[3] = {size, csize, local};
            for (int f = 0; f < 3; f++) {
                if (*fields[f] != 0xFFFFFFFFu) continue;
                if (n - at < 8) return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s': its ZIP64 extra block lacks a 64-bit field", shown);
                *fields[f] = le64(b + at);
                at += 8;
            }
            if (*disk == 0xFFFF) {
                if (n - at < 4) return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s': its ZIP64 extra block lacks the disk number", shown);
                *disk = le32(b + at);
            }
            return AL_OK;
        }
        p += 4 + n;
    }
    return AL_OK;
}

/* One central directory entry at byte `at` of the archive, in dir (the directory's bytes from
 * its offset): checked, with its local header (read from src, its name into name_buf
 * [0xFFFF]), into *out; *next is where the following entry starts. */
static al_status read_entry(const al_byte_source *src, const uint8_t *dir, const zip_end *e, uint64_t at,
                            uint64_t index, uint8_t *name_buf, al_zip_entry *out, uint64_t *next, al_error *err) {
    const uint64_t dir_end = e->dir_offset + e->dir_size;
    if (dir_end - at < CENTRAL_SIZE)
        return al_fail(err, AL_ERR_FORMAT, "zip: central directory entry %" PRIu64 " at byte %" PRIu64 " is cut short", index, at);
    const uint8_t *h = dir + (at - e->dir_offset);
    if (le32(h) != CENTRAL_SIG)
        return al_fail(err, AL_ERR_FORMAT, "zip: no central directory entry at byte %" PRIu64 " (entry %" PRIu64 ")", at, index);
    const uint32_t flags = le16(h + 8), method = le16(h + 10), name_len = le16(h + 28);
    const uint32_t extra_len = le16(h + 30), comment_len = le16(h + 32);
    uint64_t csize = le32(h + 20), size = le32(h + 24), local = le32(h + 42), disk = le16(h + 34);
    if (dir_end - at - CENTRAL_SIZE < (uint64_t)name_len + extra_len + comment_len)
        return al_fail(err, AL_ERR_FORMAT, "zip: central directory entry %" PRIu64 "'s name and fields run past the directory", index);
    const uint8_t *name = h + CENTRAL_SIZE;
    char shown[AL_ZIP_SHOWN_BUF];
    al_zip_show(shown, name, name_len);
    al_status s = read_zip64_extra(name + name_len, extra_len, &size, &csize, &local, &disk, shown, err);
    if (s != AL_OK) return s;
    if (flags & 1) return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s' is encrypted", shown);
    if (method != 0)
        return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s' is compressed (method %u%s); only stored entries are read, as torch.save writes them",
                       shown, (unsigned)method, method == 8 ? ", deflate" : "");
    if (disk != 0) return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s' starts on disk %" PRIu64 "; archives split over disks are not read", shown, disk);
    if (csize != size)
        return al_fail(err, AL_ERR_FORMAT, "zip: stored entry '%s' has size %" PRIu64 " but compressed size %" PRIu64, shown, size, csize);

    /* The local header: before the directory, with the same name; the data right after it. */
    if (local > e->dir_offset || e->dir_offset - local < LOCAL_SIZE)
        return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s': its local header offset %" PRIu64 " is not before the central directory (byte %" PRIu64 ")",
                       shown, local, e->dir_offset);
    uint8_t l[LOCAL_SIZE];
    if ((s = read_at(src, local, l, sizeof l, err)) != AL_OK) return s;
    if (le32(l) != LOCAL_SIG) return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s': no local header at byte %" PRIu64, shown, local);
    const uint64_t data_at = local + LOCAL_SIZE + le16(l + 26) + le16(l + 28);
    if (le16(l + 8) != 0) return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s' is compressed (method %u in its local header)", shown, (unsigned)le16(l + 8));
    if (data_at > e->dir_offset)
        return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s': its local header at byte %" PRIu64 " runs into the central directory", shown, local);
    /* its name lies before data_at, inside the archive */
    if (le16(l + 26) == name_len && (s = read_at(src, local + LOCAL_SIZE, name_buf, name_len, err)) != AL_OK) return s;
    if (le16(l + 26) != name_len || memcmp(name_buf, name, name_len) != 0)
        return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s': its local header at byte %" PRIu64 " names another entry", shown, local);
    if (size > e->dir_offset - data_at)
        return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s': its %" PRIu64 " bytes at byte %" PRIu64 " run past the start of the central directory (byte %" PRIu64 ")",
                       shown, size, data_at, e->dir_offset);
    out->name = name;
    out->name_len = name_len;
    out->data_at = data_at;
    out->size = size;
    out->crc32 = le32(h + 16);
    *next = at + CENTRAL_SIZE + name_len + extra_len + comment_len;
    return AL_OK;
}

void al_zip_free(al_zip *z) {
    if (!z) return;
    free(z->entries);
    free(z->dir);
    memset(z, 0, sizeof *z);
}

/* 1. the tail and the end records in it, 2. the central directory whole, 3. each entry and
 * its local header, 4. the names sorted and unique. */
static al_status read_zip(const al_byte_source *src, al_zip *z, al_error *err) {
    zip_tail *t = malloc(sizeof *t);
    if (!t) return al_fail(err, AL_ERR_NOMEM, "zip: out of memory for the archive's last %d bytes", TAIL_MAX);
    t->size = src->size;
    const uint64_t n_tail = t->size < TAIL_MAX ? t->size : TAIL_MAX;
    t->base = t->size - n_tail;
    uint64_t end_at = 0;
    zip_end e;
    al_status s = read_at(src, t->base, t->bytes, (size_t)n_tail, err);
    if (s == AL_OK) s = find_end(t, &end_at, err);
    if (s == AL_OK) s = read_end(src, t, end_at, &e, err);
    free(t);
    if (s != AL_OK) return s;
    if (e.disk != 0 || e.dir_disk != 0 || e.entries_here != e.entries)
        return al_fail(err, AL_ERR_FORMAT, "zip: the end record names disk %" PRIu64 " (directory on disk %" PRIu64 ", %" PRIu64 " of %" PRIu64
                       " entries there); archives split over disks are not read", e.disk, e.dir_disk, e.entries_here, e.entries);
    if (e.dir_offset > e.dir_end_limit)
        return al_fail(err, AL_ERR_FORMAT, "zip: the central directory's offset %" PRIu64 " is past its end record (byte %" PRIu64 ")",
                       e.dir_offset, e.dir_end_limit);
    if (e.dir_size > e.dir_end_limit - e.dir_offset)
        return al_fail(err, AL_ERR_FORMAT, "zip: the central directory's %" PRIu64 " bytes at byte %" PRIu64 " run past its end record (byte %" PRIu64 ")",
                       e.dir_size, e.dir_offset, e.dir_end_limit);
    /* Each entry takes at least CENTRAL_SIZE bytes: a count the directory cannot hold is
     * refused before anything is allocated for it. */
    if (e.entries > e.dir_size / CENTRAL_SIZE)
        return al_fail(err, AL_ERR_FORMAT, "zip: %" PRIu64 " entries cannot fit in a central directory of %" PRIu64 " bytes", e.entries, e.dir_size);
    if (e.dir_size > SIZE_MAX) return al_fail(err, AL_ERR_LIMIT, "zip: a central directory of %" PRIu64 " bytes", e.dir_size);
    z->dir = malloc(e.dir_size ? (size_t)e.dir_size : 1);
    z->entries = malloc((size_t)(e.entries ? e.entries : 1) * sizeof *z->entries);
    uint8_t *name_buf = malloc(0xFFFF);
    if (!z->dir || !z->entries || !name_buf) s = al_fail(err, AL_ERR_NOMEM, "zip: out of memory for %" PRIu64 " entries", e.entries);
    if (s == AL_OK) s = read_at(src, e.dir_offset, z->dir, (size_t)e.dir_size, err);
    uint64_t at = e.dir_offset;
    for (uint64_t i = 0; i < e.entries && s == AL_OK; i++) s = read_entry(src, z->dir, &e, at, i, name_buf, &z->entries[i], &at, err);
    free(name_buf);
    if (s == AL_OK && at != e.dir_offset + e.dir_size)
        s = al_fail(err, AL_ERR_FORMAT, "zip: %" PRIu64 " bytes of the central directory follow its last entry", e.dir_offset + e.dir_size - at);
    if (s != AL_OK) return s;
    z->count = (int64_t)e.entries;
    al_sort(z->entries, (size_t)e.entries, sizeof *z->entries, cmp_entries);
    for (uint64_t i = 1; i < e.entries; i++)
        if (cmp_entries(&z->entries[i - 1], &z->entries[i]) == 0) {
            char shown[AL_ZIP_SHOWN_BUF];
            return al_fail(err, AL_ERR_FORMAT, "zip: entry '%s' appears twice", al_zip_show(shown, z->entries[i].name, z->entries[i].name_len));
        }
    return AL_OK;
}

al_status al_zip_read(const al_byte_source *src, al_zip *out, al_error *err) {
    if (!out) return al_fail(err, AL_ERR_ARG, "zip: NULL argument");
    memset(out, 0, sizeof *out);
    if (!src || !src->read) return al_fail(err, AL_ERR_ARG, "zip: no source");
    const al_status s = read_zip(src, out, err);
    if (s != AL_OK) al_zip_free(out);
    return s;
}
