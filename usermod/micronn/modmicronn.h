// Shared declarations of the _micronn MicroPython module (Model, Interpreter, Tensor).
// The engine (engine/micronn.h) has no MicroPython dependency; these files bind it to Python.
#ifndef MICROPY_INCLUDED_MICRONN_MODMICRONN_H
#define MICROPY_INCLUDED_MICRONN_MODMICRONN_H

#include "py/obj.h"
#include "micronn.h"

// Each binding file records the engine settings it was compiled with (MICRONN_BUILD_FLAGS_OF):
// micronn.build_config() compares them with the engine's own (mn_build_flags()), so a binding
// object left from a build under other settings is reported, not silently linked and run.
#define MICRONN_BINDING_FILES(X) X(modmicronn) X(mod_model) X(mod_models) X(mod_interp) \
    X(mod_tensor) X(mod_arena) X(mod_pyops)
#define MICRONN_BUILD_FLAGS_DECL(f) extern const uint32_t micronn_build_flags_##f;
MICRONN_BINDING_FILES(MICRONN_BUILD_FLAGS_DECL)
#define MICRONN_BUILD_FLAGS_OF(f) const uint32_t micronn_build_flags_##f = MN_BUILD_FLAGS

// micronn.Model: a verified, zero-copy view of a TFLite flatbuffer held by `buf`.
typedef struct _micronn_model_obj_t {
    mp_obj_base_t base;
    mp_obj_t buf;               // the immutable object holding the model (bytes, read-only memoryview)
    mn_model_t model;
} micronn_model_obj_t;

// micronn.Interpreter: engine interpreter state plus the arena it owns or borrows.
typedef struct _micronn_interp_obj_t {
    mp_obj_base_t base;
    mp_obj_t model;             // micronn_model_obj_t (interp.model points into it)
    mp_obj_t arena_obj;         // user arena object, or mp_const_none
    uint8_t *arena_alloc;       // arena allocated by us (head of a GC block), or NULL
    void *arena_buf;            // user arena: its buffer address when given (NULL once it moved)
    size_t arena_len;
    mp_obj_t inputs;            // tuple of Tensor, created once so input()/output() never allocate
    mp_obj_t outputs;
    bool profile;
    mp_obj_t shared;            // micronn.Arena shared with other Interpreters, or mp_const_none
    mp_obj_t pers_obj;          // split arenas: user buffer holding the persistent part, or None
    void *pers_buf;             // its address when given (NULL once it moved)
    uint8_t *pers_alloc;        // split arenas: persistent buffer allocated by us, or NULL
    size_t pers_len;
    mn_interp_t interp;
} micronn_interp_obj_t;

// micronn.Arena: one arena several Interpreters share (mod_arena.c).
typedef struct _micronn_arena_obj_t {
    mp_obj_base_t base;
    uint8_t *alloc;             // heap block
    size_t alloc_len;
    uint8_t *buf;               // aligned start
    size_t size;                // aligned usable bytes
    size_t persistent;          // persistent parts of its Interpreters, stacked down from the end
    size_t nonpersistent;       // the largest non-persistent part among them
    size_t interps;
    mp_obj_t owner;             // Interpreter whose activations the shared part holds, or None
} micronn_arena_obj_t;

// micronn.Tensor: a view of one engine tensor; keeps its interpreter alive.
typedef struct _micronn_tensor_obj_t {
    mp_obj_base_t base;
    mp_obj_t interp;            // micronn_interp_obj_t
    int32_t index;              // model tensor index
} micronn_tensor_obj_t;

extern const mp_obj_type_t micronn_type_model;
extern const mp_obj_type_t micronn_type_interpreter;
extern const mp_obj_type_t micronn_type_tensor;
extern const mp_obj_type_t micronn_type_arena;

// Shared arenas (mod_arena.c). micronn_get_arena: the Arena, or NULL if obj is something else.
micronn_arena_obj_t *micronn_get_arena(mp_obj_t obj);
// The part of the Arena a new Interpreter may prepare in (its persistent part goes at the end).
void micronn_arena_region(micronn_arena_obj_t *a, uint8_t **buf, size_t *len);
// Account a prepared Interpreter; false (and *need = the Arena size needed) if its persistent
// part would overlap another Interpreter's activations.
bool micronn_arena_commit(micronn_arena_obj_t *a, mp_obj_t interp, const mn_arena_stats_t *st, size_t *need);
// Before using an Interpreter's activations: inputs take the shared part over (input = true),
// anything else raises RuntimeError when another Interpreter has used the shared part since.
void micronn_arena_claim(micronn_arena_obj_t *a, mp_obj_t interp, bool input);
// Before a data access of a Tensor of `interp` (no-op unless it shares an Arena).
void micronn_interp_claim(mp_obj_t interp, const mn_tensor_t *t);

// Built-in models (mod_models.c, generated table).
extern const mp_obj_dict_t micronn_models_dict;

// Raise the Python exception matching an engine status, with the engine's message.
NORETURN void micronn_raise(mn_status_t status, const char *msg);
mp_obj_t micronn_exception(mn_status_t status, const char *msg);

// Raise RuntimeError when a user arena (arena=bytearray) was resized or moved since the
// Interpreter was made; from then on the Interpreter refuses every use.
void micronn_interp_check(mp_obj_t interp);

// New Tensor object for tensor `index` of a prepared interpreter.
mp_obj_t micronn_tensor_new(mp_obj_t interp, int32_t index, mn_tensor_t *t);

// Model object of any argument: a Model, or anything with the buffer protocol.
micronn_model_obj_t *micronn_get_model(mp_obj_t obj);

// Exact arena size (bytes) for `model` with `cfg`, via the engine's dry run.
size_t micronn_arena_needed(const mn_model_t *model, const mn_config_t *cfg);
// Set cfg's patch stage to the one mn_patch_choose finds (none if no stage helps); raises on errors.
void micronn_patches_config(const mn_model_t *model, mn_config_t *cfg);
// The same dry run's figures (persistent, nonpersistent, temp_peak, needed).
void micronn_arena_stats(const mn_model_t *model, const mn_config_t *cfg, mn_arena_stats_t *out);

// Engine configuration for the keyword options shared by Interpreter() and Model.arena_needed().
void micronn_config_init(mn_config_t *cfg, bool profile, bool preserve_all, bool reuse_inputs);

// Python custom ops (mod_pyops.c): add the registered ones to cfg->ops; re-raise the exception a
// Python op raised during the last invoke (no-op when there is none).
void micronn_pyops_config(mn_config_t *cfg);
void micronn_pyops_reraise(void);
MP_DECLARE_CONST_FUN_OBJ_2(micronn_register_op_obj);
MP_DECLARE_CONST_FUN_OBJ_0(micronn_registered_ops_obj);

// Profiler clock (see modmicronn.c): NULL when this port has none.
extern const mn_ticks_fn micronn_ticks_fn;
extern const uint64_t micronn_ticks_mask;

// Tuple of a tensor's dimensions.
mp_obj_t micronn_shape_tuple(const mn_tensor_t *t);

// (name, shape, dtype, scale, zero_point) of a tensor descriptor.
mp_obj_t micronn_tensor_info(const mn_tensor_t *t, const char *name);

// Typecode of the buffer protocol for an engine dtype ('b', 'f', ...).
char micronn_dtype_typecode(int32_t dtype);

#endif // MICROPY_INCLUDED_MICRONN_MODMICRONN_H
