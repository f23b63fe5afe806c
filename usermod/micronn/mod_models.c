// micronn.models: the models built into this firmware (make variable MICRONN_MODELS).
//
// micronn_models.h is generated at build time by `python3 -m micronn_tools.convert --table`
// (host_tools/micronn_tools/convert.py): every model is a 16-byte aligned const array in flash and
// a static `bytes` object whose data pointer is that array, so Model(micronn.models[name]) reads
// the model in place and costs no heap. Keys are static (non-interned) str objects, so this file
// needs no qstrs and is compiled without qstr extraction (SRC_USERMOD_LIB_C).
#include "py/obj.h"
#include "py/objstr.h"
#include "modmicronn.h"

#include "micronn_models.h"

MICRONN_BUILD_FLAGS_OF(mod_models);

#if MICRONN_NUM_MODELS == 0
static const mp_rom_map_elem_t micronn_models_table[1] = {
    { MP_ROM_NONE, MP_ROM_NONE },
};
#endif

const mp_obj_dict_t micronn_models_dict = {
    .base = {&mp_type_dict},
    .map = {
        .all_keys_are_qstrs = 0,
        .is_fixed = 1,
        .is_ordered = 1,
        .used = MICRONN_NUM_MODELS,
        .alloc = MICRONN_NUM_MODELS,
        .table = (mp_map_elem_t *)(mp_rom_map_elem_t *)micronn_models_table,
    },
};
