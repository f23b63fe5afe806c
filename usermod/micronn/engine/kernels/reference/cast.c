/* CAST reference kernel: element-wise static_cast between float32, int8, uint8, int16, int32,
 * uint32 and bool, as LiteRT (quantization parameters are ignored). Integer narrowing wraps; float -> integer
 * truncates toward zero and saturates to the target type (NaN gives its maximum); anything ->
 * bool is x != 0. */
#include <string.h>

#include "../../micronn.h"
#include "mn_ref.h"

#if MICRONN_OP_CAST

/* float -> integer in [lo, hi], truncating toward zero and saturating; NaN gives hi (LiteRT). */
static inline int32_t f2i(float x, int32_t lo, int32_t hi) {
    if (x != x || x >= (float)hi + 1.0f) {
        return hi;
    }
    return x <= (float)lo ? lo : (int32_t)x;
}
#define F2I_S8(x) f2i(x, INT8_MIN, INT8_MAX)
#define F2I_U8(x) f2i(x, 0, UINT8_MAX)
#define F2I_S16(x) f2i(x, INT16_MIN, INT16_MAX)
#define F2I_S32(x) f2i(x, INT32_MIN, INT32_MAX)

/* float -> uint32, truncating toward zero and saturating to [0, UINT32_MAX]; NaN gives the maximum. */
static inline uint32_t f2u32(float x) {
    if (x != x || x >= 4294967296.0f) {
        return UINT32_MAX;
    }
    return x <= 0.0f ? 0u : (uint32_t)x;
}
#define F2I_U32(x) f2u32(x)

#define SAME(x) (x)
#define SAME_S8 SAME
#define SAME_U8 SAME
#define SAME_S16 SAME
#define SAME_S32 SAME
#define SAME_U32 SAME

#define CAST_LOOP(TIN, TOUT, EXPR) \
    { \
        const TIN *a = (const TIN *)in; \
        TOUT *b = (TOUT *)out; \
        for (size_t i = 0; i < n; ++i) { \
            const TIN x = a[i]; \
            b[i] = (TOUT)(EXPR); \
        } \
    } \
    break;

#define CAST_TO(TIN, CONV) \
    switch (to) { \
        case MN_FLOAT32: CAST_LOOP(TIN, float, x) \
        case MN_INT8: CAST_LOOP(TIN, int8_t, (uint8_t)CONV##_S8(x)) \
        case MN_UINT8: CAST_LOOP(TIN, uint8_t, (uint8_t)CONV##_U8(x)) \
        case MN_INT16: CAST_LOOP(TIN, int16_t, (uint16_t)CONV##_S16(x)) \
        case MN_INT32: CAST_LOOP(TIN, int32_t, CONV##_S32(x)) \
        case MN_UINT32: CAST_LOOP(TIN, uint32_t, CONV##_U32(x)) \
        default: CAST_LOOP(TIN, uint8_t, x != 0) /* bool */ \
    }

/* from / to: MN_FLOAT32, MN_INT8, MN_UINT8, MN_INT16, MN_INT32, MN_UINT32 or MN_BOOL (one byte,
 * 0 / 1). */
void mn_cast(size_t n, int from, int to, const void *in, void *out) {
    if (from == to) {
        memmove(out, in, n * mn_dtype_size(from));
        return;
    }
    switch (from) {
        case MN_FLOAT32: CAST_TO(float, F2I) break;
        case MN_INT8: CAST_TO(int8_t, SAME) break;
        case MN_INT16: CAST_TO(int16_t, SAME) break;
        case MN_INT32: CAST_TO(int32_t, SAME) break;
        case MN_UINT32: CAST_TO(uint32_t, SAME) break;
        default: CAST_TO(uint8_t, SAME) break;  /* uint8, bool */
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    size_t n;
    uint8_t from, to;
} cast_data_t;

static int cast_type_ok(int t) {
    return t == MN_FLOAT32 || t == MN_INT8 || t == MN_UINT8 || t == MN_INT16 || t == MN_INT32 || t == MN_UINT32 ||
        t == MN_BOOL;
}

static mn_status_t cast_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    const size_t n = mn_tensor_count(in);
    if (mn_tensor_count(out) != n) {
        return mn_fail(ctx, MN_ERR_MODEL, "output size differs from input size");
    }
    if (!cast_type_ok(in->dtype) || !cast_type_ok(out->dtype)) {
        return ref_fail_combo(ctx, in, out);
    }
    REF_ALLOC(d, cast_data_t, ctx, 1);
    d->n = n;
    d->from = in->dtype;
    d->to = out->dtype;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t cast_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const cast_data_t *d = (const cast_data_t *)node->user_data;
    mn_cast(d->n, d->from, d->to, mn_input(ctx, node, 0)->data, mn_output(ctx, node, 0)->data);
    return MN_OK;
}

const mn_kernel_t mn_kernel_CAST = { NULL, cast_prepare, cast_eval, NULL, NULL };

#endif /* MICRONN_OP_CAST */
