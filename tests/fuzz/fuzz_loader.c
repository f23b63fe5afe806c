/*
 * libFuzzer target: the loader alone, ~20x the executions per second of fuzz_model.c (which also
 * prepares and invokes). mn_model_init verifies the buffer; then, for every subgraph, every
 * accessor a host tool or the binding calls on a loaded model is walked: inputs and outputs,
 * every tensor (descriptor, name, constant data read to its last byte), every operator (code,
 * info, operands of each list, custom options read to their last byte). Built as fuzz_model is
 * (clang -fsanitize=fuzzer,address,undefined, -fno-sanitize-recover=all: tests/engine/Makefile),
 * so an out-of-bounds read of the buffer is a crash.
 *
 * Invariants (each a trap): a rejected buffer leaves a message; a tensor descriptor's constant
 * data lies inside the buffer; every operand index is -1 or a tensor of the subgraph; every input
 * and output index is a tensor of the subgraph.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "micronn.h"

#define REQUIRE(c) do { if (!(c)) { \
    fprintf(stderr, "fuzz_loader.c:%d: invariant broken: %s\n", __LINE__, #c); __builtin_trap(); } } while (0)

static volatile uint8_t sink;

static void touch(const void *p, size_t n) {
    const uint8_t *b = (const uint8_t *)p;
    uint8_t x = 0;
    for (size_t i = 0; i < n; i++) {
        x ^= b[i];
    }
    sink = x;
}

static void walk(const mn_model_t *m, const uint8_t *data, size_t size) {
    const size_t n_tensors = mn_model_num_tensors(m);
    for (size_t i = 0; i < mn_model_num_inputs(m); i++) {
        const int32_t t = mn_model_input_index(m, i);
        REQUIRE(t >= 0 && (size_t)t < n_tensors);
    }
    for (size_t i = 0; i < mn_model_num_outputs(m); i++) {
        const int32_t t = mn_model_output_index(m, i);
        REQUIRE(t >= 0 && (size_t)t < n_tensors);
    }
    for (size_t i = 0; i < n_tensors; i++) {
        mn_tensor_t d;
        const char *name = mn_model_tensor_name(m, i);
        REQUIRE(name != NULL);
        touch(name, strlen(name));
        if (mn_model_tensor(m, i, &d) != MN_OK || !d.data) {
            continue;
        }
        const size_t bytes = mn_tensor_bytes(&d);
        const uint8_t *p = (const uint8_t *)d.data;
        REQUIRE(p >= data && bytes <= size && (size_t)(p - data) <= size - bytes);
        touch(p, bytes);
    }
    for (size_t op = 0; op < mn_model_num_ops(m); op++) {
        int32_t builtin;
        const char *custom;
        mn_op_info_t info;
        if (mn_model_op_code(m, op, &builtin, &custom) == MN_OK && custom) {
            touch(custom, strlen(custom));
        }
        if (mn_model_op_info(m, op, &info) == MN_OK) {
            touch(info.name, strlen(info.name));
        }
        for (int which = MN_OP_INPUTS; which <= MN_OP_INTERMEDIATES; which++) {
            int32_t t;
            for (size_t k = 0; mn_model_op_tensor(m, op, which, k, &t) == MN_OK; k++) {
                REQUIRE(t >= -1 && (t < 0 || (size_t)t < n_tensors));
            }
        }
        size_t len = 0;
        const uint8_t *opts = mn_model_op_custom_options(m, op, &len);
        if (opts) {
            REQUIRE(opts >= data && len <= size && (size_t)(opts - data) <= size - len);
            touch(opts, len);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static mn_model_t m;
    if (mn_model_init(&m, data, size) != MN_OK) {
        REQUIRE(m.err.msg[0] != 0);
        return 0;
    }
    walk(&m, data, size);
    for (size_t k = 1; k < mn_model_num_subgraphs(&m); k++) {
        static mn_model_t sub;
        if (mn_model_subgraph(&m, k, &sub) == MN_OK) {
            walk(&sub, data, size);
        }
    }
    return 0;
}
