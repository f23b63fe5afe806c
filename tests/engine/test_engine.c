/*
 * C unit tests of the engine core (built with ASan + UBSan by tests/engine/Makefile).
 * Usage: test_engine MODELS_DIR
 *
 * Covers: reader/verifier on real, truncated, bit-flipped and hand-damaged buffers; arena
 * accounting and exhaustion messages; planners (no overlap of live buffers, greedy result);
 * interpreter life cycle with fake kernels (call order, persistent/scratch/temp memory, profiler);
 * real kernels on all models (arena sizes, person_detect on the reference images).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mn_graph.h"
#include "mn_registry.h"
#include "kernels/reference/mn_ref.h"

static int failures, checks;
static const char *models_dir = "../shared/models";
static int fuzz_scale = 1;   /* FUZZ_SCALE=N in the environment multiplies the bit-flip rounds */

#define CHECK(cond) do { checks++; if (!(cond)) { failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_MSG(cond, ...) do { checks++; if (!(cond)) { failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static const char *model_names[] = {
    "hello_world_int8.tflite", "hello_world_float.tflite", "person_detect.tflite",
    "keyword_scrambled.tflite", "micro_speech_quantized.tflite", "simple_add_model.tflite",
    "trained_lstm_int8.tflite",
};
#define N_MODELS (sizeof model_names / sizeof model_names[0])

static uint8_t *read_file(const char *name, size_t *len) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", models_dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n ? (size_t)n : 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) {
        exit(2);
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static uint32_t rng_state = 12345;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* ---- fake kernels ---------------------------------------------------------------------------- */

typedef struct {
    int32_t scratch;
    uint32_t magic;
    int32_t *order_log;
} fake_data_t;

static int32_t call_log[64];
static int n_calls;

static mn_status_t fake_init(mn_ctx_t *ctx, mn_node_t *node) {
    fake_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->magic = 0xfeed0000u + mn_node_index(ctx, node);
    node->user_data = d;
    return MN_OK;
}

static mn_status_t fake_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    fake_data_t *d = node->user_data;
    mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0);
    if (!in || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing tensor");
    }
    if (in->data && !(in->flags & MN_TF_CONST)) {
        return mn_fail(ctx, MN_ERR_KERNEL, "non-constant data visible in prepare");
    }
    uint8_t *tmp = mn_alloc_temp(ctx, 1000);
    if (!tmp) {
        return MN_ERR_ARENA;
    }
    memset(tmp, 0xab, 1000);
    int32_t act = mn_opt_i8(node, MN_FC_ACTIVATION, 0);
    if (act < 0 || act > MN_ACT_SIGN_BIT || !node->options) {
        return mn_fail(ctx, MN_ERR_KERNEL, "bad options (activation %d)", (int)act);
    }
    return mn_request_scratch(ctx, 256 + 16 * mn_node_index(ctx, node), &d->scratch);
}

static mn_status_t fake_eval(mn_ctx_t *ctx, mn_node_t *node) {
    fake_data_t *d = node->user_data;
    if (d->magic != 0xfeed0000u + mn_node_index(ctx, node)) {
        return mn_fail(ctx, MN_ERR_KERNEL, "persistent data clobbered");
    }
    uint8_t *s = mn_get_scratch(ctx, d->scratch);
    if (!s) {
        return mn_fail(ctx, MN_ERR_KERNEL, "no scratch");
    }
    memset(s, 0x5a, 256 + 16 * mn_node_index(ctx, node));
    mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0);
    /* out = in + 1 on the first byte: a chain of 3 ops adds 3. */
    ((int8_t *)out->data)[0] = (int8_t)(((int8_t *)in->data)[0] + 1);
    if (n_calls < 64) {
        call_log[n_calls++] = (int32_t)mn_node_index(ctx, node);
    }
    return MN_OK;
}

static int n_frees;
static void fake_free(mn_ctx_t *ctx, mn_node_t *node) {
    fake_data_t *d = node->user_data;
    (void)ctx;
    /* user_data is NULL after a dry run released it; otherwise it must still be intact */
    CHECK(!d || d->magic == 0xfeed0000u + mn_node_index(ctx, node));
    n_frees++;
}

static const mn_kernel_t fake_fc = { fake_init, fake_prepare, fake_eval, fake_free, NULL };
static const mn_registration_t fake_ops[] = { { MN_BUILTIN_FULLY_CONNECTED, NULL, &fake_fc, 0, 0, NULL } };

static uint64_t fake_clock;
static uint64_t fake_ticks(void *user) {
    (void)user;
    return fake_clock += 10;
}

static mn_status_t failing_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    (void)node;
    return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input dtype %s not supported (param %d)", mn_dtype_name(MN_INT16), 42);
}
static const mn_kernel_t failing_fc = { NULL, failing_prepare, fake_eval, NULL, NULL };
static const mn_registration_t failing_ops[] = { { MN_BUILTIN_FULLY_CONNECTED, NULL, &failing_fc, 0, 0, NULL } };

/* ---- tests ------------------------------------------------------------------------------------ */

static void test_load_models(void) {
    static const struct { const char *name; uint32_t ops; } expect[] = {
        { "hello_world_int8.tflite", 3 }, { "person_detect.tflite", 31 }, { "keyword_scrambled.tflite", 15 },
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        size_t len;
        uint8_t *b = read_file(expect[i].name, &len);
        mn_model_t m;
        CHECK_MSG(mn_model_init(&m, b, len) == MN_OK, "%s: %s", expect[i].name, m.err.msg);
        CHECK_MSG(mn_model_num_ops(&m) == expect[i].ops, "%s: %zu ops", expect[i].name, mn_model_num_ops(&m));
        mn_op_info_t info;
        CHECK(mn_model_op_info(&m, 0, &info) == MN_OK && info.name && info.name[0] != '?');
        free(b);
    }
}

static void test_verifier_handmade(void) {
    size_t len;
    uint8_t *b = read_file("hello_world_int8.tflite", &len);
    mn_model_t m;
    uint8_t *c = malloc(len);

    CHECK(mn_model_init(&m, b, 4) == MN_ERR_MODEL);
    CHECK(strstr(m.err.msg, "too short") != NULL);

    memcpy(c, b, len);
    memcpy(c + 4, "TFL2", 4);
    CHECK(mn_model_init(&m, c, len) == MN_ERR_MODEL && strstr(m.err.msg, "TFL3"));

    memcpy(c, b, len);
    c[0] = 0xff; c[1] = 0xff; c[2] = 0xff; c[3] = 0x7f;   /* root offset far outside */
    CHECK(mn_model_init(&m, c, len) == MN_ERR_MODEL && strstr(m.err.msg, "root"));

    memcpy(c, b, len);
    uint32_t root = mn_ld_u32(c);
    int32_t so = mn_ld_i32(c + root);
    c[root] = (uint8_t)(so + 0x40000000);                  /* vtable offset garbage */
    c[root + 3] = 0x40;
    CHECK(mn_model_init(&m, c, len) == MN_ERR_MODEL);

    /* Every vector length field set to 0xffffffff in turn: must be rejected, never read. */
    memcpy(c, b, len);
    CHECK(mn_model_init(&m, c, len) == MN_OK);
    uint32_t positions[] = { m.tensors - 4, m.ops - 4, m.buffers - 4, m.opcodes - 4, m.inputs - 4 };
    for (size_t i = 0; i < sizeof positions / sizeof positions[0]; i++) {
        memcpy(c, b, len);
        memset(c + positions[i], 0xff, 4);
        CHECK_MSG(mn_model_init(&m, c, len) == MN_ERR_MODEL, "vector %zu: %s", i, m.err.msg);
    }
    /* Absurd shape: first dimension of tensor 0 set to 2^30 (size overflow or buffer mismatch). */
    memcpy(c, b, len);
    CHECK(mn_model_init(&m, c, len) == MN_OK);
    uint32_t t0 = mn_model_tensor_table(&m, 0), nd;
    uint32_t shape = fb_vec(c, t0, F_T_SHAPE, &nd);
    for (uint32_t d = 0; d < nd; d++) {
        c[shape + 4 * d + 3] = 0x40;
    }
    CHECK_MSG(mn_model_init(&m, c, len) == MN_ERR_MODEL, "%s", m.err.msg);
    CHECK(strstr(m.err.msg, "tensor 0") != NULL);
    /* Negative dimension. */
    memcpy(c, b, len);
    mn_model_init(&m, c, len);
    c[shape + 3] = 0x80;
    CHECK(mn_model_init(&m, c, len) == MN_ERR_MODEL && strstr(m.err.msg, "negative"));
    free(c);
    free(b);
}

/* Run the full pipeline on a (possibly damaged) buffer; any outcome but a crash is fine. */
static int run_any(const uint8_t *buf, size_t len, const mn_config_t *cfg) {
    mn_model_t m;
    if (mn_model_init(&m, buf, len) != MN_OK) {
        CHECK(m.err.msg[0] != 0);
        return 0;
    }
    static uint8_t arena[512 * 1024];
    mn_interp_t it;
    if (mn_interp_init(&it, &m, arena, sizeof arena, cfg) != MN_OK || mn_interp_prepare(&it) != MN_OK) {
        CHECK(it.err.msg[0] != 0);
        mn_interp_deinit(&it);
        return 1;
    }
    for (size_t i = 0; i < mn_interp_num_inputs(&it); i++) {
        mn_tensor_t *t = mn_interp_input(&it, i);
        if (t && t->data) {
            memset(t->data, 1, mn_tensor_bytes(t));
        }
    }
    mn_status_t s = mn_interp_invoke(&it);
    CHECK(s == MN_OK || it.err.msg[0] != 0);
    mn_interp_deinit(&it);
    return 2;
}

static void test_fuzz(void) {
    for (size_t k = 0; k < N_MODELS; k++) {
        size_t len;
        uint8_t *b = read_file(model_names[k], &len);
        int stats[3] = { 0, 0, 0 };
        /* Truncations: every length up to 2 KB, then ~300 points spread over the file. Each copy is
         * malloc'd at its exact size so ASan catches any read past the end. */
        size_t step = len > 2048 ? (len - 2048) / 300 + 1 : 1;
        for (size_t n = 0; n < len; n += (n < 2048 ? 1 : step)) {
            uint8_t *c = malloc(n ? n : 1);
            memcpy(c, b, n);
            stats[run_any(c, n, NULL)]++;
            free(c);
        }
        /* Random bit flips (1..4 bits) over the whole file. */
        int flips = (len > 200000 ? 150 : 400) * fuzz_scale;
        uint8_t *c = malloc(len);
        for (int i = 0; i < flips; i++) {
            memcpy(c, b, len);
            int nb = 1 + (int)(rnd() % 4);
            for (int j = 0; j < nb; j++) {
                size_t pos = rnd() % len;
                c[pos] ^= (uint8_t)(1u << (rnd() % 8));
            }
            /* Alternate planners: no-reuse gives every tensor its own red-zoned block. */
            mn_config_t cfg = { 0 };
            cfg.planner = (uint8_t)(i & 1 ? MN_PLANNER_NO_REUSE : MN_PLANNER_GREEDY);
            stats[run_any(c, len, &cfg)]++;
        }
        /* Flips concentrated in the flatbuffer metadata (everything but big weight blobs): the
         * first and last 4 KB hold most tables and vtables. */
        for (int i = 0; i < flips; i++) {
            memcpy(c, b, len);
            size_t pos = rnd() % (len < 8192 ? len : 8192);
            if (pos >= 4096 && len > 8192) {
                pos = len - 8192 + pos;
            }
            c[pos] ^= (uint8_t)(1u << (rnd() % 8));
            stats[run_any(c, len, NULL)]++;
        }
        free(c);
        printf("  fuzz %-30s rejected %5d, prepare failed %4d, ran %4d\n", model_names[k], stats[0], stats[1], stats[2]);
        free(b);
    }
}

static void test_planner(void) {
    /* Five buffers over four ops; check no two live-at-once buffers overlap in memory. */
    mn_plan_buf_t bufs[6] = {
        { 64, 0, 0, 1, 0, 0, 0, 0 }, { 32, 0, 1, 2, 1, 0, 0, 0 }, { 48, 0, 2, 3, 2, 0, 0, 0 },
        { 16, 0, 0, 3, 3, 0, 0, 0 }, { 64, 0, 3, 3, 4, 0, 0, 0 }, { 128, 0, 1, 1, 5, 0, 0, 0 },
    };
    int32_t work[12];
    size_t total = mn_plan(bufs, 6, MN_PLANNER_GREEDY, work, 0);
    for (int i = 0; i < 6; i++) {
        for (int j = i + 1; j < 6; j++) {
            int live = bufs[i].first <= bufs[j].last && bufs[j].first <= bufs[i].last;
            int mem = bufs[i].offset < bufs[j].offset + bufs[j].size && bufs[j].offset < bufs[i].offset + bufs[j].size
                && bufs[j].offset < bufs[i].offset + bufs[i].size;
            CHECK_MSG(!(live && mem), "buffers %d and %d overlap", i, j);
        }
    }
    /* Peak live set: op 1 has 64+32+16+128 = 240 live; greedy must reach it exactly here. */
    CHECK_MSG(total == 240, "greedy total %zu", total);
    size_t total2 = mn_plan(bufs, 6, MN_PLANNER_NO_REUSE, work, 0);
    CHECK(total2 == 64 + 32 + 48 + 16 + 64 + 128);
    /* Fixed (offline) buffer stays where it is and others avoid it. */
    mn_plan_buf_t fx[2] = { { 32, 100, 0, 1, 0, 1, 0, 0 }, { 200, 0, 0, 1, 1, 0, 0, 0 } };
    total = mn_plan(fx, 2, MN_PLANNER_GREEDY, work, 0);
    CHECK(fx[0].offset == 100 && fx[1].offset == 132 && total == 332);
    /* A convolution's output (1) over its dying input (0), starting at most 32 below it: the
     * input goes first (larger) at 0, the output cannot start 32 below 0, so above it (112
     * bytes); moved to the front of the order (it reaches the peak), the output goes first at 0
     * and the input 32 above it (96); with the output larger that is the greedy order itself. */
    mn_plan_buf_t sl[2] = { { 64, 0, 0, 1, 0, 0, 0, 0 }, { 48, 0, 1, 2, 1, 0, 1, -32 } };
    total = mn_plan(sl, 2, MN_PLANNER_GREEDY, work, 0);
    CHECK_MSG(sl[1].offset == 0 && sl[0].offset == 32 && total == 96, "%zu %zu", sl[1].offset, total);
    sl[1].size = 96;
    total = mn_plan(sl, 2, MN_PLANNER_GREEDY, work, 0);
    CHECK_MSG(sl[1].offset == 0 && sl[0].offset == 32 && total == 96, "%zu %zu", sl[0].offset, total);
}

/* Whether a and b may sit where they are: not alive together, apart, or a convolution's output
 * over its input within its shift. */
static int plan_pair_ok(const mn_plan_buf_t *a, const mn_plan_buf_t *b) {
    int live = a->first <= b->last && b->first <= a->last;
    int mem = a->offset < b->offset + b->size && b->offset < a->offset + a->size;
    int slides = (a->over == b->id + 1 && (long long)a->offset - (long long)b->offset <= a->shift)
        || (b->over == a->id + 1 && (long long)b->offset - (long long)a->offset <= b->shift);
    return !(live && mem) || slides;
}

/* mn_conv_slide against every output row, on random geometries. */
static void test_conv_slide(void) {
    for (int iter = 0; iter < 3000; iter++) {
        mn_conv_geom_t g;
        memset(&g, 0, sizeof g);
        g.batches = 1 + (int)(rnd() % 3);
        g.in_h = 1 + (int)(rnd() % 20);
        g.in_w = 1 + (int)(rnd() % 9);
        g.in_c = 1 + (int)(rnd() % 9);
        g.out_w = 1 + (int)(rnd() % 9);
        g.out_c = 1 + (int)(rnd() % 9);
        g.stride_h = 1 + (int)(rnd() % 3);
        g.pad_h = (int)(rnd() % 4);
        g.out_h = 1 + (int)(rnd() % (g.in_h + 4));
        size_t es_in = 1 + rnd() % 4, es_out = 1 + rnd() % 4;
        long long in_row = (long long)g.in_w * g.in_c * (long long)es_in, out_row = (long long)g.out_w * g.out_c * (long long)es_out;
        long long best = 0;
        int have = 0;
        for (int b = 0; b < g.batches; b++) {
            for (int y = 0; y < g.out_h; y++) {
                long long first = (long long)y * g.stride_h - g.pad_h;
                first = first < 0 ? 0 : first > g.in_h ? g.in_h : first;
                long long room = ((long long)b * g.in_h + first) * in_row - ((long long)b * g.out_h + y + 1) * out_row;
                if (!have || room < best) {
                    best = room;
                    have = 1;
                }
            }
        }
        long long got = (long long)mn_conv_slide(&g, es_in, es_out);
        CHECK_MSG(got == best, "iter %d: slide %lld, every row %lld", iter, got, best);
    }
}

typedef struct {
    mn_plan_buf_t *b;
    size_t off[64];
} arr_src_t;
static int arr_get(void *c, int32_t k, mn_plan_buf_t *out) {
    *out = ((arr_src_t *)c)->b[k];
    return out->size != 0;
}
static void arr_set(void *c, int32_t k, size_t o) {
    ((arr_src_t *)c)->off[k] = o + 1;
}
static int arr_getoff(void *c, int32_t k, size_t *o) {
    size_t v = ((arr_src_t *)c)->off[k];
    *o = v ? v - 1 : 0;
    return v != 0;
}
static void arr_clear(void *c, int32_t k) {
    ((arr_src_t *)c)->off[k] = 0;
}

/* The memory-less planner must place exactly like the fast one (random problems). */
static void test_planner_equivalence(void) {
    for (int iter = 0; iter < 300; iter++) {
        mn_plan_buf_t a[40], b[40];
        int32_t n = 1 + (int32_t)(rnd() % 40), work[80];
        for (int32_t i = 0; i < n; i++) {
            int32_t f = (int32_t)(rnd() % 20);
            a[i].size = 16 * (1 + rnd() % 8);
            a[i].first = f;
            a[i].last = f + (int32_t)(rnd() % 6);
            a[i].id = i;
            a[i].fixed = (iter % 3 == 0) && (rnd() % 7 == 0);
            a[i].offset = a[i].fixed ? 16 * (rnd() % 10) : 0;
            a[i].over = 0;
            a[i].shift = 0;
            /* now and then a convolution's output over a buffer dying where it starts */
            for (int32_t j = 0; j < i && iter % 2 == 0 && !a[i].fixed; j++) {
                if (a[j].last == a[i].first && a[j].first < a[i].first && rnd() % 2 == 0) {
                    a[i].over = j + 1;
                    a[i].shift = 16 * ((int32_t)(rnd() % 9) - 6);
                    break;
                }
            }
            b[i] = a[i];
        }
        int kind = iter % 4 == 1 ? MN_PLANNER_NO_REUSE : MN_PLANNER_GREEDY;
        /* with its moves the greedy planner is never higher; without (temporaries that would
         * not fit the plan) it places as the memory-less one */
        mn_plan_buf_t m[40];
        memcpy(m, a, sizeof a);
        size_t t0 = mn_plan(m, n, kind, work, 0);
        size_t t1 = mn_plan(a, n, kind, work, SIZE_MAX);
        CHECK_MSG(t0 <= t1, "iter %d: moves %zu > %zu", iter, t0, t1);
        arr_src_t s0;
        memset(&s0, 0, sizeof s0);
        s0.b = b;
        mn_plan_src_t src0 = { arr_get, arr_set, arr_getoff, arr_clear, &s0, n };
        CHECK_MSG(mn_plan_nomem(&src0, kind, 0) == t0, "iter %d: memory-less moves differ", iter);
        for (int32_t i = 0; i < n; i++) {
            CHECK_MSG(s0.off[i] == m[i].offset + 1, "iter %d buf %d (moves)", iter, (int)i);
        }
        for (int32_t i = 0; i < n; i++) {
            for (int32_t j = i + 1; j < n && kind == MN_PLANNER_GREEDY && !m[i].fixed && !m[j].fixed; j++) {
                CHECK_MSG(plan_pair_ok(&m[i], &m[j]), "iter %d: moved buffers %d and %d overlap", iter, (int)i, (int)j);
            }
        }
        arr_src_t s;
        memset(&s, 0, sizeof s);
        s.b = b;
        mn_plan_src_t src = { arr_get, arr_set, arr_getoff, arr_clear, &s, n };
        size_t t2 = mn_plan_nomem(&src, kind, SIZE_MAX);
        CHECK_MSG(t1 == t2, "iter %d: totals %zu vs %zu", iter, t1, t2);
        for (int32_t i = 0; i < n; i++) {
            CHECK_MSG(s.off[i] == a[i].offset + 1, "iter %d buf %d", iter, (int)i);
            for (int32_t j = i + 1; j < n && kind == MN_PLANNER_GREEDY && !a[i].fixed && !a[j].fixed; j++) {
                CHECK_MSG(plan_pair_ok(&a[i], &a[j]), "iter %d: buffers %d and %d overlap", iter, (int)i, (int)j);
            }
            /* first fit: a non-fixed buffer one alignment step lower would collide (or be < 0) */
            if (kind == MN_PLANNER_GREEDY && !a[i].fixed && a[i].offset >= 16) {
                mn_plan_buf_t lower = a[i];
                lower.offset -= 16;
                int clash = 0;
                for (int32_t j = 0; j < n && !clash; j++) {
                    clash = j != i && (a[j].fixed || a[j].size > a[i].size || (a[j].size == a[i].size
                        && (a[j].first < a[i].first || (a[j].first == a[i].first && j < i))))
                        && !plan_pair_ok(&lower, &a[j]);
                }
                CHECK_MSG(clash, "iter %d: buffer %d at %zu could go 16 lower", iter, (int)i, a[i].offset);
            }
        }
    }
}

static void test_arena_and_fake_kernels(void) {
    size_t len;
    uint8_t *b = read_file("hello_world_int8.tflite", &len);
    mn_model_t m;
    CHECK(mn_model_init(&m, b, len) == MN_OK);
    mn_config_t cfg = { 0 };
    cfg.ops = fake_ops;
    cfg.n_ops = 1;
    cfg.ticks = fake_ticks;

    size_t need = 0;
    mn_error_t err;
    static uint8_t work[64 * 1024];
    CHECK_MSG(mn_arena_needed(&m, &cfg, work, sizeof work, &need, &err) == MN_OK, "%s", err.msg);
    CHECK(need > 0 && need < 8192);

    /* Exactly the reported size works, at any alignment of the arena start. */
    for (int mis = 0; mis < 16; mis += 5) {
        uint8_t *arena = malloc(need + 16);
        mn_interp_t it;
        CHECK(mn_interp_init(&it, &m, arena + mis, need, &cfg) == MN_OK);
        CHECK_MSG(mn_interp_prepare(&it) == MN_OK, "misalign %d: %s", mis, it.err.msg);
        mn_tensor_t *in = mn_interp_input(&it, 0);
        CHECK(in && in->data && mn_tensor_bytes(in) == 1 && in->dtype == MN_INT8);
        ((int8_t *)in->data)[0] = 40;
        n_calls = 0;
        CHECK_MSG(mn_interp_invoke(&it) == MN_OK, "%s", it.err.msg);
        CHECK(((int8_t *)mn_interp_output(&it, 0)->data)[0] == 43);
        CHECK(((int8_t *)in->data)[0] == 40);   /* input kept its value */
        CHECK(n_calls == 3 && call_log[0] == 0 && call_log[1] == 1 && call_log[2] == 2);
        mn_op_profile_t p;
        CHECK(mn_interp_profile(&it, 1, &p) == MN_OK && p.calls == 1 && p.ticks == 10);
        CHECK(strcmp(p.name, "FULLY_CONNECTED") == 0);
        mn_arena_stats_t st;
        mn_interp_stats(&it, &st);
        CHECK(st.n_scratch == 3 && st.needed == need && st.persistent > 0 && st.nonpersistent > 0);
        mn_interp_deinit(&it);
        free(arena);
    }
    /* One byte less than needed (at the worst alignment) fails with the exact figure. */
    uint8_t *arena = malloc(need);
    int n_at_least = 0, n_tries = 0;
    for (size_t less = 1; less < need; less += less < 64 ? 1 : 97) {
        mn_interp_t it;
        mn_interp_init(&it, &m, arena + 1, need - 1 - less, &cfg);
        mn_status_t s = mn_interp_prepare(&it);
        CHECK_MSG(s == MN_ERR_ARENA, "less %zu: %s", less, it.err.msg);
        char expect[64];
        snprintf(expect, sizeof expect, "need %zu bytes", need);
        const char *al = strstr(it.err.msg, "at least ");
        if (!al) {
            CHECK_MSG(strstr(it.err.msg, expect) != NULL, "%s", it.err.msg);
        } else {
            /* only when the arena cannot even hold the dry run; then a true lower bound */
            CHECK_MSG(strtoul(al + 9, NULL, 10) <= need, "%s", it.err.msg);
            n_at_least++;
            CHECK_MSG(strstr(it.err.msg, "arena too small: need") != NULL, "%s", it.err.msg);
        }
        CHECK(mn_interp_invoke(&it) == MN_ERR_STATE);
        mn_interp_deinit(&it);
        n_tries++;
    }
    printf("  exhaustion: %d of %d too-small arenas got an exact figure\n", n_tries - n_at_least, n_tries);
    free(arena);

    /* Kernel error messages name op index, op, and what the kernel said. */
    static uint8_t big[64 * 1024];
    cfg.ops = failing_ops;
    mn_interp_t it;
    mn_interp_init(&it, &m, big, sizeof big, &cfg);
    CHECK(mn_interp_prepare(&it) == MN_ERR_UNSUPPORTED);
    CHECK_MSG(strcmp(it.err.msg, "op 0 FULLY_CONNECTED: input dtype int16 not supported (param 42)") == 0, "%s",
        it.err.msg);

    /* No-reuse planner: more memory, all tensors distinct. */
    cfg.ops = fake_ops;
    mn_interp_t a, r;
    mn_interp_init(&a, &m, big, sizeof big / 2, &cfg);
    CHECK(mn_interp_prepare(&a) == MN_OK);
    cfg.planner = MN_PLANNER_NO_REUSE;
    mn_interp_init(&r, &m, big + sizeof big / 2, sizeof big / 2, &cfg);
    CHECK(mn_interp_prepare(&r) == MN_OK);
    CHECK(r.stats.nonpersistent >= a.stats.nonpersistent);
    for (size_t i = 0; i < mn_interp_num_tensors(&r); i++) {
        for (size_t j = i + 1; j < mn_interp_num_tensors(&r); j++) {
            /* (a constant's descriptor is a view the next lookup overwrites: keep the pointer) */
            const void *x = mn_interp_tensor(&r, i)->data, *y = mn_interp_tensor(&r, j)->data;
            CHECK(!x || !y || x != y);
        }
    }
    free(b);
}

/* should_stop: polled before each op; stops the invoke there and leaves the interpreter usable. */
static int stop_polls, stop_at;
static int stop_after(void *user) {
    CHECK(user == &stop_at);
    return stop_polls++ == stop_at;
}

static void test_should_stop(void) {
    size_t len;
    uint8_t *b = read_file("hello_world_int8.tflite", &len);
    mn_model_t m;
    CHECK(mn_model_init(&m, b, len) == MN_OK);
    mn_config_t cfg = { 0 };
    cfg.ops = fake_ops;
    cfg.n_ops = 1;
    cfg.should_stop = stop_after;
    cfg.stop_user = &stop_at;
    static uint8_t arena[64 * 1024];
    mn_interp_t it;
    CHECK(mn_interp_init(&it, &m, arena, sizeof arena, &cfg) == MN_OK);
    CHECK_MSG(mn_interp_prepare(&it) == MN_OK, "%s", it.err.msg);
    CHECK(stop_polls == 0);   /* prepare never polls */
    for (stop_at = 0; stop_at < 3; stop_at++) {
        stop_polls = 0;
        n_calls = 0;
        ((int8_t *)mn_interp_input(&it, 0)->data)[0] = 40;
        CHECK(mn_interp_invoke(&it) == MN_ERR_ABORTED);
        CHECK_MSG(n_calls == stop_at, "stop_at %d: %d ops ran", stop_at, n_calls);
        char expect[32];
        snprintf(expect, sizeof expect, "op %d FULLY_CONNECTED: ", stop_at);
        CHECK_MSG(strncmp(it.err.msg, expect, strlen(expect)) == 0 && strstr(it.err.msg, "stopped"), "%s",
            it.err.msg);
        CHECK(it.invokes == 0);
        /* The next invoke runs every op and gives the right answer. */
        stop_polls = -100;
        n_calls = 0;
        CHECK_MSG(mn_interp_invoke(&it) == MN_OK, "%s", it.err.msg);
        CHECK(n_calls == 3 && stop_polls == -97 && it.err.status == MN_OK && it.err.msg[0] == '\0');
        CHECK(((int8_t *)mn_interp_output(&it, 0)->data)[0] == 43);
        it.invokes = 0;
    }
    mn_interp_deinit(&it);
    free(b);
}

static void test_unsupported(void) {
    size_t len;
    uint8_t *b = read_file("hello_world_int8.tflite", &len);
    mn_model_t m;
    mn_model_init(&m, b, len);
    /* Turn op code 0 into SVDF's neighbour LSH_PROJECTION (15), which no build provides. */
    uint32_t oc = fb_vec_table(b, m.opcodes, 0);
    uint32_t p = fb_field(b, oc, F_OC_BUILTIN_CODE);
    uint32_t q = fb_field(b, oc, F_OC_DEPRECATED_CODE);
    if (p) {
        b[p] = 15;
    }
    if (q) {
        b[q] = 15;
    }
    mn_model_init(&m, b, len);
    static uint8_t arena[32768];
    mn_interp_t it;
    mn_interp_init(&it, &m, arena, sizeof arena, NULL);
    CHECK(mn_interp_prepare(&it) == MN_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(it.err.msg, "op 0 LSH_PROJECTION: micronn has no kernel for LSH_PROJECTION yet (builtin 15)") != NULL, "%s", it.err.msg);
    free(b);
}

/* ---- mn_check_ops / mn_model_op_tensor (support diagnostics for `micronn inspect`) ---------- */

static mn_status_t picky_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    void *p = mn_alloc_persistent(ctx, 64);     /* released again when the op fails */
    (void)p;
    if (mn_node_index(ctx, node) == 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 activations not supported");
    }
    return MN_OK;
}
static mn_status_t picky_eval(mn_ctx_t *ctx, mn_node_t *node) {
    (void)ctx;
    (void)node;
    return MN_OK;
}
static const mn_kernel_t picky_kernel = { NULL, picky_prepare, picky_eval, NULL, NULL };
static const mn_registration_t picky_ops[] = { { 9 /* FULLY_CONNECTED */, NULL, &picky_kernel, 0, 0, NULL } };

static void test_check_ops(void) {
    static uint8_t work[256 * 1024];
    mn_op_check_t res[64];
    size_t failed = 99, need = 0;
    mn_error_t err;
    /* Real models: every op prepares; operand indices match the op's operand counts. */
    for (size_t k = 0; k < N_MODELS; k++) {
        size_t len;
        uint8_t *b = read_file(model_names[k], &len);
        mn_model_t m;
        CHECK(mn_model_init(&m, b, len) == MN_OK);
        CHECK(mn_model_num_ops(&m) <= 64);
        mn_status_t s = mn_check_ops(&m, NULL, work, sizeof work, res, 64, &failed, &need, &err);
        size_t arena_need = 0;
        mn_status_t s2 = mn_arena_needed(&m, NULL, work, sizeof work, &arena_need, NULL);
        /* same verdict as a dry run */
        CHECK_MSG((s == MN_OK) == (s2 == MN_OK), "%s: check %d, dry run %d", model_names[k], s, s2);
        CHECK_MSG(s != MN_OK || failed == 0, "%s", model_names[k]);
        for (size_t i = 0; i < mn_model_num_ops(&m); i++) {
            mn_op_info_t info;
            int32_t t;
            mn_model_op_info(&m, i, &info);
            CHECK(s != MN_OK || (res[i].status == MN_OK && res[i].msg[0] == 0));
            CHECK(mn_model_op_tensor(&m, i, MN_OP_INPUTS, (size_t)info.n_inputs, &t) == MN_ERR_ARG);
            CHECK(mn_model_op_tensor(&m, i, MN_OP_OUTPUTS, (size_t)info.n_outputs, &t) == MN_ERR_ARG);
            for (int32_t j = 0; j < info.n_outputs; j++) {
                CHECK(mn_model_op_tensor(&m, i, MN_OP_OUTPUTS, (size_t)j, &t) == MN_OK
                    && t >= 0 && (size_t)t < mn_model_num_tensors(&m));
            }
            for (int32_t j = 0; j < info.n_inputs; j++) {
                CHECK(mn_model_op_tensor(&m, i, MN_OP_INPUTS, (size_t)j, &t) == MN_OK
                    && t >= -1 && t < (int32_t)mn_model_num_tensors(&m));
            }
        }
        CHECK(mn_model_op_tensor(&m, mn_model_num_ops(&m), MN_OP_INPUTS, 0, &(int32_t){0}) == MN_ERR_ARG);
        CHECK(mn_model_op_tensor(&m, 0, 3, 0, &(int32_t){0}) == MN_ERR_ARG);
        free(b);
    }
    CHECK(mn_tensor_struct_size() == sizeof(mn_tensor_t));
    /* hello_world_int8: op 0 reads the model input, op 2 writes the model output. */
    size_t len;
    uint8_t *b = read_file("hello_world_int8.tflite", &len);
    mn_model_t m;
    mn_model_init(&m, b, len);
    int32_t t = -5;
    CHECK(mn_model_op_tensor(&m, 0, MN_OP_INPUTS, 0, &t) == MN_OK && t == mn_model_input_index(&m, 0));
    CHECK(mn_model_op_tensor(&m, 2, MN_OP_OUTPUTS, 0, &t) == MN_OK && t == mn_model_output_index(&m, 0));
    /* A kernel that refuses op 1 only: op 1 fails with its message, ops 0 and 2 still pass. */
    mn_config_t cfg = { 0 };
    cfg.ops = picky_ops;
    cfg.n_ops = 1;
    CHECK(mn_check_ops(&m, &cfg, work, sizeof work, res, 64, &failed, &need, &err) == MN_ERR_UNSUPPORTED);
    CHECK(failed == 1 && res[0].status == MN_OK && res[2].status == MN_OK);
    CHECK_MSG(res[1].status == MN_ERR_UNSUPPORTED
        && strcmp(res[1].msg, "op 1 FULLY_CONNECTED: int16 activations not supported") == 0, "%s", res[1].msg);
    /* Too few result slots, too small a work buffer. */
    CHECK(mn_check_ops(&m, NULL, work, sizeof work, res, 2, &failed, &need, &err) == MN_ERR_ARG);
    CHECK(mn_check_ops(&m, NULL, work, 64, res, 64, &failed, &need, &err) == MN_ERR_ARENA && need > 64);
    CHECK(mn_check_ops(&m, NULL, work, need + 4096, res, 64, &failed, NULL, NULL) == MN_OK && failed == 0);
    /* No kernel at all for every op (opcode turned into LSH_PROJECTION): all three recorded. */
    uint32_t oc = fb_vec_table(b, m.opcodes, 0);
    uint32_t p = fb_field(b, oc, F_OC_BUILTIN_CODE), q = fb_field(b, oc, F_OC_DEPRECATED_CODE);
    if (p) {
        b[p] = 15;
    }
    if (q) {
        b[q] = 15;
    }
    mn_model_init(&m, b, len);
    CHECK(mn_check_ops(&m, NULL, work, sizeof work, res, 64, &failed, &need, &err) == MN_ERR_UNSUPPORTED);
    CHECK(failed == 3);
    for (int i = 0; i < 3; i++) {
        CHECK_MSG(res[i].status == MN_ERR_UNSUPPORTED && strstr(res[i].msg, "micronn has no kernel for LSH_PROJECTION yet"),
            "%s", res[i].msg);
    }
    free(b);
}

/* Every constant left without a record reads back, through the op's slot, exactly as the
 * model describes it; returns how many there were. */
static size_t check_const_views(mn_interp_t *it, const mn_model_t *m) {
    size_t n = 0;
    for (uint32_t i = 0; it->rec_of && i < it->n_nodes; i++) {
        const mn_node_t *node = &it->nodes[i];
        for (int j = 0; j < mn_num_inputs(node); j++) {
            const int32_t t = node->inputs[j];
            if (t < 0 || it->rec_of[t] != MN_NO_REC) {
                continue;
            }
            mn_tensor_t ref, *v = mn_input(it, node, j);
            CHECK(mn_model_tensor(m, (size_t)t, &ref) == MN_OK);
            CHECK(v != &ref && v->data == ref.data && v->ndim == ref.ndim && v->dtype == ref.dtype);
            CHECK(v->flags == ref.flags && v->quant == ref.quant && v->q_dim == ref.q_dim);
            CHECK(ref.ndim == 0 || memcmp(v->dims, ref.dims, sizeof(int32_t) * ref.ndim) == 0);
            CHECK(mn_tensor_bytes(v) > 0 && (v->flags & MN_TF_CONST));
            CHECK(mn_input_data(it, node, j) == ref.data);
            n++;
        }
    }
    return n;
}

static void test_real_models(void) {
    printf("  %-30s %10s %10s %10s %10s %8s\n", "model", "persist", "nonpers", "needed", "copied", "status");
    for (size_t k = 0; k < N_MODELS; k++) {
        size_t len;
        uint8_t *b = read_file(model_names[k], &len);
        mn_model_t m;
        CHECK(mn_model_init(&m, b, len) == MN_OK);
        static uint8_t work[512 * 1024];
        size_t need = 0;
        mn_error_t err;
        mn_status_t s = mn_arena_needed(&m, NULL, work, sizeof work, &need, &err);
        if (s != MN_OK) {
            printf("  %-30s %s\n", model_names[k], err.msg);
            free(b);
            continue;
        }
        uint8_t *arena = malloc(need);
        mn_interp_t it;
        mn_interp_init(&it, &m, arena, need, NULL);
        s = mn_interp_prepare(&it);
        CHECK_MSG(s == MN_OK, "%s: %s", model_names[k], it.err.msg);
        if (s == MN_OK) {
            for (size_t i = 0; i < mn_interp_num_inputs(&it); i++) {
                memset(mn_interp_input(&it, i)->data, 0, mn_tensor_bytes(mn_interp_input(&it, i)));
            }
            s = mn_interp_invoke(&it);
            CHECK_MSG(s == MN_OK, "%s: %s", model_names[k], it.err.msg);
            /* (simple_add has no constants) */
            CHECK_MSG(check_const_views(&it, &m) > 0 || strstr(model_names[k], "simple_add"),
                "%s: every constant has a record", model_names[k]);
        }
        printf("  %-30s %10zu %10zu %10zu %10zu %8s\n", model_names[k], it.stats.persistent, it.stats.nonpersistent,
            it.stats.needed, it.stats.copied_bytes, s == MN_OK ? "ok" : "FAIL");
        mn_interp_deinit(&it);
        free(arena);
        free(b);
    }
}

int main(int argc, char **argv) {
    if (argc > 1) {
        models_dir = argv[1];
    }
    if (getenv("FUZZ_SCALE")) {
        fuzz_scale = atoi(getenv("FUZZ_SCALE"));
    }
    if (getenv("FUZZ_SEED")) {
        rng_state = (uint32_t)strtoul(getenv("FUZZ_SEED"), NULL, 0) | 1u;
    }
    printf("load models\n");
    test_load_models();
    printf("verifier (hand-damaged buffers)\n");
    test_verifier_handmade();
    printf("planner\n");
    test_planner();
    test_planner_equivalence();
    test_conv_slide();
    printf("arena + fake kernels\n");
    test_arena_and_fake_kernels();
    printf("should_stop (abort between ops)\n");
    test_should_stop();
    printf("unsupported op\n");
    test_unsupported();
    printf("support diagnostics (mn_check_ops)\n");
    test_check_ops();
    printf("real models\n");
    test_real_models();
    printf("fuzz (truncations, bit flips)\n");
    test_fuzz();
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
