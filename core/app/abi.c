/* abi.c — al_abi_json: the list in abi_list.h as JSON, for bindings (the WebAssembly page's
 * JavaScript reads every struct offset, enum value and limit from it, never from its own
 * copy). Offsets and sizes come from the compiler that built this core. The lists are expanded
 * into tables and printed by one loop each (a printf per field would cost 16 KB of code). */
#include "attnlab/app.h"
#include "app/abi_list.h"
#include "base/text.h"

#include <stddef.h>

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
#define ENUM(name) {#name, NULL, 0},
#define VALUE(constant, label) {NULL, #label, (int64_t)(constant)},
    AL_ABI_ENUMS(ENUM, VALUE)
#undef ENUM
#undef VALUE
};

static const abi_value LIMITS[] = {
#define LIMIT(constant) {#constant, NULL, (int64_t)(constant)},
    AL_ABI_LIMITS(LIMIT)
#undef LIMIT
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

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
        if (!v->label) {
            al_text_printf(&o, "%s\"%s\": {", i ? "}, " : "", v->name);
            sep = "";
            continue;
        }
        al_text_printf(&o, "%s\"%s\": %lld", sep, v->label, (long long)v->value);
        sep = ", ";
    }
    al_text_printf(&o, "}}, \"limits\": {");
    for (size_t i = 0; i < COUNT(LIMITS); i++)
        al_text_printf(&o, "%s\"%s\": %lld", i ? ", " : "", LIMITS[i].name, (long long)LIMITS[i].value);
    al_text_printf(&o, "}}");
    return (int64_t)o.len;
}
