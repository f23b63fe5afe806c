/*
 * libFuzzer target: the engine's whole path on an arbitrary buffer, as a board takes it:
 * verify -> op check -> arena sizing (dry run) -> prepare in an arena of exactly that size ->
 * invoke -> reset (-> invoke again for models with state). Invokes are bounded by should_stop
 * (MAX_POLLS), so a WHILE that never ends cannot hang the fuzzer. Built with clang -fsanitize=fuzzer,address,undefined and
 * -fno-sanitize-recover=all (tests/engine/Makefile, `make fuzz`), so any out-of-bounds access,
 * undefined behaviour or broken invariant below is a crash.
 *
 * Invariants checked (each a trap): a rejected model or failed call leaves a message; the dry
 * run's size is enough for a real prepare; every prepared tensor the caller can see lies in the
 * arena or the model; an invoke of a prepared interpreter fails only with a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "micronn.h"

/* Bigger arenas are skipped: the target is the engine's logic, not the host's allocator. */
#define MAX_ARENA (4u << 20)
#define MAX_WORK (1u << 20)
#define MAX_OPS 512

#define REQUIRE(c) do { if (!(c)) { \
    fprintf(stderr, "fuzz_model.c:%d: invariant broken: %s\n", __LINE__, #c); __builtin_trap(); } } while (0)

/* A WHILE whose cond never says false would run forever: every invoke gets a budget of polls of
 * should_stop (one before each op, nested subgraphs' included, and each WHILE iteration). */
#define MAX_POLLS 100000
static unsigned polls;
static int out_of_budget(void *user) {
    (void)user;
    return ++polls > MAX_POLLS;
}

/* The planner and input reuse come from the input's size, so mutations explore all of them. */
static void config_for(size_t size, mn_config_t *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->should_stop = out_of_budget;
    static const uint8_t planners[4] = { MN_PLANNER_GREEDY, MN_PLANNER_NO_REUSE, MN_PLANNER_OFFLINE,
        MN_PLANNER_GREEDY };
    cfg->planner = planners[size & 3];
    cfg->flags = (size & 3) == 3 ? MN_CFG_REUSE_INPUTS : 0;
}

/* Valid models can take minutes to invoke under the sanitizers (a MAX_POOL_2D with a 4608 x 8
 * window over a 2.6 MB tensor): their invoke is skipped. The bound of an op's work is its output's
 * elements times its largest input's elements per output channel (last dimension): at least the
 * multiply-accumulates of a convolution, pooling, fully-connected or batch matmul op, and about
 * the input size for elementwise ones. The shared models' bounds are at most 3e8. */
#define MAX_INVOKE_WORK 1e9
static double op_work(const mn_model_t *m, size_t op) {
    mn_op_info_t info;
    int32_t t;
    mn_tensor_t d;
    if (mn_model_op_info(m, op, &info) != MN_OK || mn_model_op_tensor(m, op, MN_OP_OUTPUTS, 0, &t) != MN_OK
        || t < 0 || mn_model_tensor(m, (size_t)t, &d) != MN_OK) {
        return 0.0;
    }
    const double out = (double)mn_tensor_count(&d);
    const double channels = d.ndim && d.dims[d.ndim - 1] > 0 ? (double)d.dims[d.ndim - 1] : 1.0;
    double per_channel = 1.0;
    for (int32_t k = 0; k < info.n_inputs; k++) {
        if (mn_model_op_tensor(m, op, MN_OP_INPUTS, (size_t)k, &t) == MN_OK && t >= 0
            && mn_model_tensor(m, (size_t)t, &d) == MN_OK) {
            const double n = (double)mn_tensor_count(&d) / channels;
            per_channel = n > per_channel ? n : per_channel;
        }
    }
    return out * per_channel;
}

static int too_slow(const mn_model_t *m) {
    double work = 0.0;
    for (size_t i = 0; i < mn_model_num_ops(m); i++) {
        work += op_work(m, i);
    }
    return work > MAX_INVOKE_WORK;
}

static int inside(const void *p, size_t n, const void *base, size_t len) {
    const uint8_t *a = p, *b = base;
    return a >= b && n <= len && (size_t)(a - b) <= len - n;
}

/* Every tensor the caller can reach: data inside the arena or the model (constants). Returns 1 if
 * the model has state (variable tensors). */
static int check_tensors(mn_interp_t *it, const uint8_t *data, size_t size, const uint8_t *arena, size_t arena_size) {
    int stateful = 0;
    for (size_t i = 0; i < mn_interp_num_tensors(it); i++) {
        mn_tensor_t *t = mn_interp_tensor(it, i);
        REQUIRE(t != NULL);
        REQUIRE(t->ndim <= MN_MAX_DIMS);
        size_t bytes = mn_tensor_bytes(t);
        if (t->data && bytes) {
            REQUIRE(inside(t->data, bytes, arena, arena_size) || inside(t->data, bytes, data, size));
        }
        stateful |= (t->flags & MN_TF_VARIABLE) != 0;
    }
    return stateful;
}

static void fill_inputs(mn_interp_t *it, const uint8_t *data, size_t size) {
    for (size_t i = 0; i < mn_interp_num_inputs(it); i++) {
        mn_tensor_t *t = mn_interp_input(it, i);
        REQUIRE(t != NULL);
        if (!t->data) {
            continue;
        }
        uint8_t *d = t->data;
        for (size_t k = 0, n = mn_tensor_bytes(t); k < n; k++) {
            d[k] = data[(k * 31 + i) % size];
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static mn_model_t m;
    if (mn_model_init(&m, data, size) != MN_OK) {
        REQUIRE(m.err.msg[0] != 0);
        return 0;
    }
    mn_config_t cfg;
    config_for(size, &cfg);

    /* Op check, as `micronn inspect` runs it (a dry run that prepares every op). */
    size_t n_ops = mn_model_num_ops(&m), work_size = mn_dry_run_work_hint(&m), need = 0, failed = 0;
    static mn_op_check_t res[MAX_OPS];
    mn_error_t err;
    mn_status_t s = MN_ERR_ARENA;
    while (n_ops <= MAX_OPS && work_size <= MAX_WORK) {
        void *work = malloc(work_size);
        s = mn_check_ops(&m, &cfg, work, work_size, res, MAX_OPS, &failed, &need, &err);
        free(work);
        if (s != MN_ERR_ARENA || need <= work_size) {
            break;
        }
        work_size = need;
    }
    if (s != MN_OK && s != MN_ERR_ARENA) {
        /* failed ops each with a message, or a model-level problem in err */
        REQUIRE(failed > 0 || err.msg[0] != 0);
    }
    if (s == MN_OK || (s == MN_ERR_UNSUPPORTED && failed > 0)) {
        for (size_t i = 0; i < n_ops; i++) {
            REQUIRE((res[i].status == MN_OK) == (res[i].msg[0] == 0));
        }
    }

    /* Arena size by the dry run. */
    size_t needed = 0;
    work_size = mn_dry_run_work_hint(&m);
    s = MN_ERR_ARENA;
    while (work_size <= MAX_WORK) {
        void *work = malloc(work_size);
        s = mn_arena_needed(&m, &cfg, work, work_size, &needed, &err);
        free(work);
        if (s != MN_ERR_ARENA || needed <= work_size) {
            break;
        }
        work_size = needed;
    }
    if (s != MN_OK) {
        REQUIRE(work_size > MAX_WORK || err.msg[0] != 0);
        return 0;
    }
    if (needed > MAX_ARENA) {
        return 0;
    }

    /* A real prepare in exactly that many bytes (malloc'd at that size: ASan guards both ends). */
    uint8_t *arena = malloc(needed ? needed : 1);
    static mn_interp_t it;
    REQUIRE(mn_interp_init(&it, &m, arena, needed, &cfg) == MN_OK);
    s = mn_interp_prepare(&it);
    /* The dry run said this size works. */
    REQUIRE(s == MN_OK);
    int stateful = check_tensors(&it, data, size, arena, needed);
    for (size_t i = 0; i < n_ops && !stateful; i++) {
        mn_op_info_t info;   /* resource variables and CALL_ONCE keep state across invokes too */
        stateful = mn_model_op_info(&m, i, &info) == MN_OK && (info.builtin == 129 || info.builtin == 142);
    }
    fill_inputs(&it, data, size);
    polls = 0;
    if (too_slow(&m)) {
        /* prepared and checked; not run */
    } else if (mn_interp_invoke(&it) != MN_OK) {
        REQUIRE(it.err.msg[0] != 0);
    } else {
        for (size_t i = 0; i < mn_interp_num_outputs(&it); i++) {
            mn_tensor_t *t = mn_interp_output(&it, i);
            REQUIRE(t != NULL);
        }
        REQUIRE(mn_interp_reset(&it) == MN_OK);
        /* Invoke again from the reset state: only models with state can behave differently (invoke
         * costs most of each run, so stateless models skip it). */
        polls = 0;
        if (stateful && mn_interp_invoke(&it) != MN_OK) {
            REQUIRE(it.err.msg[0] != 0);
        }
    }
    mn_interp_deinit(&it);
    free(arena);
    return 0;
}
