/* abi.c — al_abi_json: the list in abi_list.h as JSON, for bindings (the WebAssembly page's
 * JavaScript reads every struct offset, enum value, limit, entry point and array shape from it,
 * never from its own copy). Offsets and sizes come from the compiler that built this core; each
 * function row is checked against its declaration here, at compile time. The lists are expanded
 * into tables and printed by one loop each (a printf per field would cost 16 KB of code). */
#include "attnlab/app.h"
#include "app/abi_list.h"
#include "base/text.h"

#include <stddef.h>
#ifdef __EMSCRIPTEN__
#include <malloc.h> /* mallinfo: the one system header past libc and libm (tests/architecture.test.mjs) */
#endif

/* A struct (type NULL: name and size of the struct) or one of its fields. */
typedef struct {
    const char *name;
    const char *type;
    int32_t offset;
    int32_t size;
} abi_entry;

static const abi_entry STRUCTS[] = {
#define STRUCT(name, ctype) {#name "\0" #ctype, NULL, 0, (int32_t)sizeof(ctype)},
#define FIELD(ctype, member, type) \
    {#member, #type, (int32_t)offsetof(ctype, member), (int32_t)sizeof(((ctype *)0)->member)},
    AL_ABI_STRUCTS(STRUCT, FIELD)
#undef STRUCT
#undef FIELD
};

/* An enum (label NULL: its name) or one of its values. */
typedef struct {
    const char *name;
    const char *label;
    int64_t value;
} abi_value;

static const abi_value ENUMS[] = {
#define ENUM(name, ctype) {#name "\0" #ctype, NULL, 0},
#define VALUE(constant, label) {NULL, #label, (int64_t)(constant)},
    AL_ABI_ENUMS(ENUM, VALUE)
#undef ENUM
#undef VALUE
};

/* Each function row against the declaration the compiler has: the address of the function has
 * exactly the type its row spells, or the build stops here naming the function. */
#define FUNCTION(name, result, ...)                                                            \
    _Static_assert(_Generic(&name, result(*)(__VA_ARGS__): 1, default: 0),                     \
                   #name ": its declaration differs from its row in abi_list.h");
AL_ABI_FUNCTIONS(FUNCTION)
#undef FUNCTION

/* A function: its name, its result's C type and its parameters as written in the row. */
typedef struct {
    const char *name;
    const char *result;
    const char *params;
} abi_function;

static const abi_function FUNCTIONS[] = {
#define FUNCTION(name, result, ...) {#name, #result, #__VA_ARGS__},
    AL_ABI_FUNCTIONS(FUNCTION)
#undef FUNCTION
};

/* The shape of the array a function writes through one of its parameters. */
typedef struct {
    const char *function;
    const char *param;
    const char *dims;
} abi_shape;

static const abi_shape SHAPES[] = {
#define SHAPE(function, param, dims) {#function, #param, dims},
    AL_ABI_SHAPES(SHAPE)
#undef SHAPE
};

static const abi_value LIMITS[] = {
#define LIMIT(constant) {#constant, NULL, (int64_t)(constant)},
    AL_ABI_LIMITS(LIMIT)
#undef LIMIT
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The kind a binding passes a value of C type `type` (n bytes, spaces trimmed) as: a pointer
 * is an address, an enum an i32; NULL for a type the binding cannot pass. */
static const char *kind_of(const char *type, size_t n) {
    static const char *const SCALARS[][2] = {
        {"int64_t", "i64"}, {"uint64_t", "i64"}, {"int32_t", "i32"}, {"int", "i32"},
        {"double", "f64"},  {"float", "f32"},    {"size_t", "size"}, {"void", "void"},
    };
    if (memchr(type, '*', n)) return "ptr";
    for (size_t i = 0; i < COUNT(SCALARS); i++)
        if (strlen(SCALARS[i][0]) == n && !memcmp(type, SCALARS[i][0], n)) return SCALARS[i][1];
    for (size_t i = 0; i < COUNT(ENUMS); i++) {
        const char *ctype = ENUMS[i].label ? NULL : ENUMS[i].name + strlen(ENUMS[i].name) + 1;
        if (ctype && strlen(ctype) == n && !memcmp(type, ctype, n)) return "i32";
    }
    return NULL;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }
static int is_ident(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* One parameter as written ("const float *x", "int64_t n") as ["x", "ptr", "const float *"]:
 * its name is the last identifier, its type what comes before. */
static void print_param(al_text *o, const char *p, size_t n) {
    while (n && is_space(*p)) p++, n--;
    while (n && is_space(p[n - 1])) n--;
    size_t name = n;
    while (name && is_ident(p[name - 1])) name--;
    size_t type = name;
    while (type && is_space(p[type - 1])) type--;
    const char *kind = kind_of(p, type);
    al_text_printf(o, "[\"%.*s\", \"%s\", \"%.*s\"]", (int)(n - name), p + name, kind ? kind : "?",
                   (int)type, p);
}

int64_t al_abi_json(char *buf, int64_t cap) {
    if (cap < 0 || (!buf && cap > 0)) return -1;
    al_text o;
    al_text_init(&o, buf, (size_t)cap);
    const char *sep = "";

    al_text_printf(&o, "{\"structs\": {");
    for (size_t i = 0; i < COUNT(STRUCTS); i++) {
        const abi_entry *e = &STRUCTS[i];
        if (!e->type) { /* "name\0ctype": the struct's short name, then its C name */
            al_text_printf(&o, "%s\"%s\": {\"ctype\": \"%s\", \"size\": %d, \"fields\": {",
                           i ? "}}, " : "", e->name, e->name + strlen(e->name) + 1, (int)e->size);
            sep = "";
            continue;
        }
        al_text_printf(&o, "%s\"%s\": [%d, \"%s\", %d]", sep, e->name, (int)e->offset, e->type,
                       (int)e->size);
        sep = ", ";
    }
    al_text_printf(&o, "}}}, \"enums\": {");
    for (size_t i = 0; i < COUNT(ENUMS); i++) {
        const abi_value *v = &ENUMS[i];
        if (!v->label) { /* "name\0ctype" */
            al_text_printf(&o, "%s\"%s\": {", i ? "}, " : "", v->name);
            sep = "";
            continue;
        }
        al_text_printf(&o, "%s\"%s\": %lld", sep, v->label, (long long)v->value);
        sep = ", ";
    }
    al_text_printf(&o, "}}, \"enum_ctypes\": {");
    sep = "";
    for (size_t i = 0; i < COUNT(ENUMS); i++) {
        if (ENUMS[i].label) continue;
        al_text_printf(&o, "%s\"%s\": \"%s\"", sep, ENUMS[i].name, ENUMS[i].name + strlen(ENUMS[i].name) + 1);
        sep = ", ";
    }
    al_text_printf(&o, "}, \"functions\": {");
    for (size_t i = 0; i < COUNT(FUNCTIONS); i++) {
        const abi_function *f = &FUNCTIONS[i];
        const char *kind = kind_of(f->result, strlen(f->result));
        al_text_printf(&o, "%s\"%s\": {\"result\": [\"%s\", \"%s\"], \"args\": [", i ? "]}, " : "", f->name,
                       kind ? kind : "?", f->result);
        if (!strcmp(f->params, "void")) continue;
        for (const char *p = f->params, *end; *p; p = *end ? end + 1 : end) {
            end = strchr(p, ',');
            if (!end) end = p + strlen(p);
            al_text_printf(&o, "%s", p == f->params ? "" : ", ");
            print_param(&o, p, (size_t)(end - p));
        }
    }
    al_text_printf(&o, "]}}, \"shapes\": {");
    for (size_t i = 0; i < COUNT(SHAPES); i++)
        al_text_printf(&o, "%s\"%s %s\": \"%s\"", i ? ", " : "", SHAPES[i].function, SHAPES[i].param,
                       SHAPES[i].dims);
    al_text_printf(&o, "}, \"limits\": {");
    for (size_t i = 0; i < COUNT(LIMITS); i++)
        al_text_printf(&o, "%s\"%s\": %lld", i ? ", " : "", LIMITS[i].name, (long long)LIMITS[i].value);
    al_text_printf(&o, "}}");
    return (int64_t)o.len;
}

int64_t al_heap_in_use(void) {
#ifdef __EMSCRIPTEN__
    /* emmalloc counts in uordblks every allocated region whole and the 8-byte header of every
     * free region (ordblks + smblks of them): the headers are taken out. */
    const struct mallinfo mi = mallinfo();
    const int64_t region_header = 8;
    return (int64_t)mi.uordblks - region_header * ((int64_t)mi.ordblks + mi.smblks);
#else
    return -1;
#endif
}
