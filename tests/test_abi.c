/* test_abi.c — the binding description (core/app/abi_list.h, al_abi_json) against the compiler:
 * each listed field has the size of its listed type, the listed fields of a struct laid out in
 * order with natural alignment land exactly on the compiler's offsets and give the struct's
 * size (so a field added, removed, resized or reordered in C without the list fails here), and
 * the JSON is whole; each enum a function may take or return is 4 bytes (an i32). (Each
 * function row is checked against its declaration when abi.c compiles.) With --print it writes the JSON to stdout, which tests/abi.test.mjs
 * compares with the structs' declarations and with the WebAssembly build's own. */
#include "attnlab.h"
#include "app/abi_list.h"
#include "check.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t type_size(const char *type, size_t member_size) {
    if (!strcmp(type, "i32") || !strcmp(type, "f32")) return 4;
    if (!strcmp(type, "i64") || !strcmp(type, "f64")) return 8;
    if (!strcmp(type, "char")) return member_size; /* a char array: any length */
    return 0;
}
static size_t type_align(const char *type) { return !strcmp(type, "char") ? 1 : type_size(type, 0); }
static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* The layout being replayed: the offset the next field would get, the largest alignment. */
static const char *cur_struct;
static size_t cur_size, next_offset, max_align;

static void end_struct(void) {
    if (!cur_struct) return;
    CHECK(align_up(next_offset, max_align) == cur_size,
          "%s: the listed fields end at %zu (%zu with padding) but the struct has %zu bytes: a field "
          "is missing from core/app/abi_list.h", cur_struct, next_offset, align_up(next_offset, max_align),
          cur_size);
}

static void begin_struct(const char *name, size_t size) {
    end_struct();

    /* An enum is passed as an i32 (abi.c gives its parameters that kind). */
#define ENUM(name, ctype) CHECK(sizeof(ctype) == 4, "enum %s (%s) is %zu bytes, not 4", #name, #ctype, sizeof(ctype));
#define VALUE(constant, label)
    AL_ABI_ENUMS(ENUM, VALUE)
#undef ENUM
#undef VALUE
    cur_struct = name, cur_size = size, next_offset = 0, max_align = 1;
}

static void field(const char *member, size_t offset, const char *type, size_t member_size) {
    const size_t size = type_size(type, member_size);
    CHECK(size == member_size, "%s.%s is %zu bytes, listed as %s", cur_struct, member, member_size, type);
    const size_t align = type_align(type);
    const size_t want = align_up(next_offset, align ? align : 1);
    CHECK(offset == want, "%s.%s is at offset %zu; after the fields listed before it, expected %zu",
          cur_struct, member, offset, want);
    next_offset = offset + member_size;
    if (align > max_align) max_align = align;
}

int main(int argc, char **argv) {
#define STRUCT(name, ctype) begin_struct(#name, sizeof(ctype));
#define FIELD(ctype, member, type) \
    field(#member, offsetof(ctype, member), #type, sizeof(((ctype *)0)->member));
    AL_ABI_STRUCTS(STRUCT, FIELD)
#undef STRUCT
#undef FIELD
    end_struct();

    /* An enum is passed as an i32 (abi.c gives its parameters that kind). */
#define ENUM(name, ctype) CHECK(sizeof(ctype) == 4, "enum %s (%s) is %zu bytes, not 4", #name, #ctype, sizeof(ctype));
#define VALUE(constant, label)
    AL_ABI_ENUMS(ENUM, VALUE)
#undef ENUM
#undef VALUE

    const int64_t len = al_abi_json(NULL, 0);
    CHECK(len > 100, "al_abi_json size query: %lld", (long long)len);
    CHECK(al_abi_json(NULL, 5) == -1, "NULL buffer with a capacity accepted");
    char *json = malloc((size_t)len + 1);
    CHECK(json && al_abi_json(json, len + 1) == len && strlen(json) == (size_t)len, "al_abi_json fill");
    char small[16];
    CHECK(al_abi_json(small, sizeof small) == len && strlen(small) == sizeof small - 1, "truncated");
    if (json && argc > 1 && !strcmp(argv[1], "--print")) {
        fputs(json, stdout);
        free(json);
        return check_failures ? 1 : 0;
    }
    free(json);
    CHECK_DONE();
}
