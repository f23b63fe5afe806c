/*
 * Layer 0: the op registry (mn_registry.c): builtin and custom kernels by opcode, the user's
 * mn_config_t.ops first.
 */
#ifndef MN_REGISTRY_H
#define MN_REGISTRY_H

#include "mn_kernel.h"

const mn_kernel_t *mn_registry_find(const mn_config_t *cfg, int32_t builtin, const char *custom_name);
/* The registry entry (user's cfg->ops first), usable or not; NULL if the engine has no kernel.
 * A builtin kernel's entry is built in *buf. */
const mn_registration_t *mn_registry_lookup(const mn_config_t *cfg, int32_t builtin, const char *custom_name,
    mn_registration_t *buf);

#endif /* MN_REGISTRY_H */
