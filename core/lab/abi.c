/* abi.c — al_abi_json: the list in abi_list.h as JSON, for bindings (the WebAssembly page's
 * JavaScript reads every struct offset, enum value and limit from it, never from its own
 * copy). Offsets and sizes come from the compiler that built this core. */
#include "lab/abi_list.h"
#include "torch/text.h"

#include <stddef.h>

#define AL_ABI_SIZEOF_MEMBER(ctype, member) sizeof(((ctype *)0)->member)

int64_t al_abi_json(char *buf, int64_t cap) {
    if (cap < 0 || (!buf && cap > 0)) return -1;
    al_text o;
    al_text_init(&o, buf, (size_t)cap);
    const char *sep = ""; /* before the next struct / enum / limit */
    const char *field_sep = "";

    al_text_printf(&o, "{\"structs\": {");
#define STRUCT(name, ctype)                                                                 \
    al_text_printf(&o, "%s\"%s\": {\"ctype\": \"%s\", \"size\": %zu, \"fields\": {", sep,   \
                   #name, #ctype, sizeof(ctype));                                           \
    sep = "}}, ";                                                                           \
    field_sep = "";
#define FIELD(ctype, member, type)                                                          \
    al_text_printf(&o, "%s\"%s\": [%zu, \"%s\", %zu]", field_sep, #member,                  \
                   offsetof(ctype, member), #type, AL_ABI_SIZEOF_MEMBER(ctype, member));    \
    field_sep = ", ";
    AL_ABI_STRUCTS(STRUCT, FIELD)
#undef STRUCT
#undef FIELD
    al_text_printf(&o, "}}}, \"enums\": {");

    sep = "";
#define ENUM(name)                                                                          \
    al_text_printf(&o, "%s\"%s\": {", sep, #name);                                          \
    sep = "}, ";                                                                            \
    field_sep = "";
#define VALUE(constant, label)                                                              \
    al_text_printf(&o, "%s\"%s\": %d", field_sep, #label, (int)(constant));                 \
    field_sep = ", ";
    AL_ABI_ENUMS(ENUM, VALUE)
#undef ENUM
#undef VALUE
    al_text_printf(&o, "}}, \"limits\": {");

    sep = "";
#define LIMIT(constant)                                                                     \
    al_text_printf(&o, "%s\"%s\": %lld", sep, #constant, (long long)(constant));            \
    sep = ", ";
    AL_ABI_LIMITS(LIMIT)
#undef LIMIT
    al_text_printf(&o, "}}");
    return (int64_t)o.len;
}
