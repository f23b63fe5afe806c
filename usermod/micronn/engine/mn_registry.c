/*
 * Op registry: builtin code / custom name -> kernel, fixed at compile time.
 *
 * mn_ops.h lists every kernel the engine source has. Each kernel is referenced only when its
 * MICRONN_OP_<NAME> macro is set (mn_config.h), so a firmware built with a subset links only
 * those kernels, yet still knows the others exist ("built without X" vs "no kernel for X"). With
 * GCC/Clang the references are weak: a selected kernel whose file is not part of the build
 * resolves to NULL and is reported as not built in, instead of breaking the link (define
 * MICRONN_STRICT_KERNELS=1 to get link errors instead).
 */
#include "mn_registry.h"
#include "mn_util.h"

#if (defined(__GNUC__) || defined(__clang__)) && !MICRONN_STRICT_KERNELS
#define MN_WEAK __attribute__((weak))
#else
#define MN_WEAK
#endif

#if MICRONN_OP_INFO
#define MN_DTYPES(s) s
#else
#define MN_DTYPES(s) NULL
#endif

#define MN_OP(NAME, OPTIONS, VERSION, DTYPES) extern const mn_kernel_t mn_kernel_##NAME MN_WEAK;
#include "mn_ops.h"
#undef MN_OP

/* The builtin kernels, compactly: per op of mn_ops.h its code, version, options type and whether
 * it is selected (a byte each: they fit, checked below), and apart the kernels of the selected ops
 * only, in the same order (a deselected kernel is not referenced at all, and costs no pointer).
 * MN_IF_SELECTED keeps its argument when MICRONN_OP_<NAME> is 1 (mn_config.h: 0 or 1). */
typedef struct {
    uint8_t builtin;
    uint8_t max_version;
    uint8_t options_type;
    uint8_t selected;
} mn_builtin_entry_t;

#define MN_OP(NAME, OPTIONS, VERSION, DTYPES) \
    { MN_BUILTIN_##NAME, VERSION, MN_OPTIONS_##OPTIONS, MICRONN_OP_##NAME ? 1 : 0 },
static const mn_builtin_entry_t mn_builtin_ops[] = {
#include "mn_ops.h"
    { 0, 0, 0, 0 },  /* keeps the array non-empty */
};
#undef MN_OP

#define MN_IF_SELECTED(sel, x) MN_IF_SELECTED_(sel, x)
#define MN_IF_SELECTED_(sel, x) MN_IF_SELECTED_##sel(x)
#define MN_IF_SELECTED_0(x)
#define MN_IF_SELECTED_1(x) x,
#define MN_OP(NAME, OPTIONS, VERSION, DTYPES) MN_IF_SELECTED(MICRONN_OP_##NAME, &mn_kernel_##NAME)
static const mn_kernel_t *const mn_builtin_kernels[] = {
#include "mn_ops.h"
    NULL,
};
#undef MN_OP

/* Their dtype lists, apart: only mn_op_kernel_info reads them, so a firmware that never calls it
 * (the MicroPython module) links neither the array nor the strings (arrays, not literals: each
 * its own section for the linker to drop, where literals would share one with the names that
 * stay). */
#if MICRONN_OP_INFO
#define MN_OP(NAME, OPTIONS, VERSION, DTYPES) static const char mn_dtypes_##NAME[] = DTYPES;
#include "mn_ops.h"
#undef MN_OP
#endif
#define MN_OP(NAME, OPTIONS, VERSION, DTYPES) MN_DTYPES(mn_dtypes_##NAME),
static const char *const mn_builtin_dtypes[] = {
#include "mn_ops.h"
    NULL,
};
#undef MN_OP

/* The codes and versions fit the byte fields (checked at compile time). */
#define MN_OP(NAME, OPTIONS, VERSION, DTYPES) \
    typedef char mn_fits_##NAME[MN_BUILTIN_##NAME <= 0xff && VERSION <= 0xff && MN_OPTIONS_##OPTIONS <= 0xff ? 1 : -1];
#include "mn_ops.h"
#undef MN_OP

#define MN_N_BUILTIN_OPS (sizeof mn_builtin_ops / sizeof mn_builtin_ops[0] - 1)

/* The builtin entry for a builtin code, as a registration in *out; NULL if the engine has none. */
static const mn_registration_t *builtin_lookup(int32_t builtin, mn_registration_t *out) {
    size_t k = 0;   /* index in mn_builtin_kernels */
    for (size_t i = 0; i < MN_N_BUILTIN_OPS; k += mn_builtin_ops[i++].selected) {
        const mn_builtin_entry_t *e = &mn_builtin_ops[i];
        if (e->builtin == builtin) {
            out->builtin = builtin;
            out->custom_name = NULL;
            out->kernel = e->selected ? mn_builtin_kernels[k] : NULL;
            out->max_version = e->max_version;
            out->options_type = e->options_type;
            out->dtypes = NULL;   /* not needed for lookups (mn_op_kernel_info has them) */
            return out;
        }
    }
    return NULL;
}

/* Custom ops built in (mn_custom_ops.h): looked up by their custom code string. */
#define MN_CUSTOM_OP(SYM, VERSION, DTYPES) extern const mn_kernel_t mn_kernel_##SYM MN_WEAK;
#include "mn_custom_ops.h"
#undef MN_CUSTOM_OP

#define MN_CUSTOM_OP(SYM, VERSION, DTYPES) \
    { MN_BUILTIN_CUSTOM, #SYM, MICRONN_OP_##SYM ? &mn_kernel_##SYM : NULL, VERSION, MN_OPTIONS_NONE, NULL },
static const mn_registration_t mn_custom_ops[] = {
#include "mn_custom_ops.h"
    { -1, NULL, NULL, 0, 0, NULL },
};
#undef MN_CUSTOM_OP

/* Their dtype lists, apart (as the builtin ones). */
#if MICRONN_OP_INFO
#define MN_CUSTOM_OP(SYM, VERSION, DTYPES) static const char mn_custom_dtypes_##SYM[] = DTYPES;
#include "mn_custom_ops.h"
#undef MN_CUSTOM_OP
#endif
#define MN_CUSTOM_OP(SYM, VERSION, DTYPES) MN_DTYPES(mn_custom_dtypes_##SYM),
static const char *const mn_custom_dtypes[] = {
#include "mn_custom_ops.h"
    NULL,
};
#undef MN_CUSTOM_OP

#define MN_N_CUSTOM_OPS (sizeof mn_custom_ops / sizeof mn_custom_ops[0] - 1)

static const mn_registration_t *find_in(const mn_registration_t *r, size_t n, int32_t builtin, const char *custom) {
    for (size_t i = 0; i < n; i++) {
        if (r[i].builtin != builtin) {
            continue;
        }
        if (builtin != MN_BUILTIN_CUSTOM) {
            return &r[i];
        }
        if (custom && r[i].custom_name && strcmp(custom, r[i].custom_name) == 0) {
            return &r[i];
        }
    }
    return NULL;
}

static int usable(const mn_registration_t *r) {
    return r && r->kernel && r->kernel->eval;
}

const mn_registration_t *mn_registry_lookup(const mn_config_t *cfg, int32_t builtin, const char *custom_name,
    mn_registration_t *buf) {
    const mn_registration_t *r = NULL;
    if (cfg && cfg->ops) {
        r = find_in(cfg->ops, cfg->n_ops, builtin, custom_name);
    }
    if (!usable(r)) {
        const mn_registration_t *b = builtin == MN_BUILTIN_CUSTOM
            ? find_in(mn_custom_ops, MN_N_CUSTOM_OPS, builtin, custom_name)
            : builtin_lookup(builtin, buf);
        if (b) {
            r = b;
        }
    }
    return r;
}

const mn_kernel_t *mn_registry_find(const mn_config_t *cfg, int32_t builtin, const char *custom_name) {
    mn_registration_t buf;
    const mn_registration_t *r = mn_registry_lookup(cfg, builtin, custom_name, &buf);
    return usable(r) ? r->kernel : NULL;
}

int mn_op_supported(const mn_config_t *cfg, int32_t builtin, const char *custom_name) {
    return mn_registry_find(cfg, builtin, custom_name) != NULL;
}

int mn_op_kernel_state(const mn_config_t *cfg, int32_t builtin, const char *custom_name) {
    mn_registration_t buf;
    const mn_registration_t *r = mn_registry_lookup(cfg, builtin, custom_name, &buf);
    return usable(r) ? MN_KERNEL_LINKED : r ? MN_KERNEL_NOT_BUILT : MN_KERNEL_NONE;
}

int mn_op_kernel_info(size_t i, mn_op_kernel_info_t *out) {
    if (i >= MN_N_BUILTIN_OPS || !out) {
        return 0;
    }
    const mn_builtin_entry_t *e = &mn_builtin_ops[i];
    size_t k = 0;   /* index in mn_builtin_kernels */
    for (size_t j = 0; j < i; j++) {
        k += mn_builtin_ops[j].selected;
    }
    const mn_kernel_t *kernel = e->selected ? mn_builtin_kernels[k] : NULL;
    out->builtin = e->builtin;
    out->max_version = e->max_version;
    out->options_type = e->options_type;
    out->dtypes = mn_builtin_dtypes[i];
    out->linked = kernel && kernel->eval;
    return 1;
}

int mn_custom_op_info(size_t i, const char **name, mn_op_kernel_info_t *out) {
    if (i >= MN_N_CUSTOM_OPS || !out || !name) {
        return 0;
    }
    const mn_registration_t *r = &mn_custom_ops[i];
    *name = r->custom_name;
    out->builtin = r->builtin;
    out->max_version = r->max_version;
    out->options_type = r->options_type;
    out->dtypes = mn_custom_dtypes[i];
    out->linked = usable(r);
    return 1;
}

const char *mn_custom_op_hint(const char *custom_name) {
    /* Vela replaces the part of a model it compiles for the NPU with one "ethos-u" op holding the
     * NPU command stream; only an Ethos-U driver registered for that name can run it. */
    if (custom_name && strcmp(custom_name, "ethos-u") == 0) {
        return "compiled for an Arm Ethos-U NPU; this board has none; convert the model without Vela";
    }
    return NULL;
}

uint32_t mn_build_flags(void) {
    return MN_BUILD_FLAGS;
}
