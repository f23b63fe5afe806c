/*
 * Layer 1: the verified model as the layers above see it: mn_verify.c accepts a buffer
 * (mn_model_init), mn_model.c reads it. Calls go down to mn_fb.h and layer 0 only.
 */
#ifndef MN_MODELVIEW_H
#define MN_MODELVIEW_H

#include "mn_fb.h"

/* Metadata name of the per-op tables a host tool stores in the model (mn_tables.c). */
#define MN_TABLES_METADATA "micronn_quant_v1"

/* ---- model helpers (mn_model.c) ----------------------------------------------------------- */

uint32_t mn_model_op_table(const mn_model_t *m, uint32_t op);
uint32_t mn_model_tensor_table(const mn_model_t *m, uint32_t t);
/* Builtin code and custom name of an opcode table. */
int32_t mn_opcode_builtin(const uint8_t *b, uint32_t oc);
/* Data of buffer `index`: pointer and size (NULL/0 when empty). */
const uint8_t *mn_model_buffer(const mn_model_t *m, uint32_t index, size_t *size);
/* Metadata entry by name: buffer data, or NULL. */
const uint8_t *mn_model_metadata(const mn_model_t *m, const char *name, size_t *size);

/* mn_opt_str of an options table of model view m (mn_options.c; nodes built outside an interpreter). */
bool mn_opt_str_in(const mn_model_t *m, const mn_node_t *node, int field, const char **out);

#endif /* MN_MODELVIEW_H */
