/*
 * libFuzzer target: the FlexBuffers reader (engine/mn_flexbuf.c) on its own, the custom options
 * blob of TFLite custom ops (fuzz_model reaches it too, through the CIRCULAR_BUFFER and
 * TFLite_Detection_PostProcess seeds, but at a fraction of the rate). The input is the blob: the
 * root map is opened, every entry's key and value read (each conversion tried), and the keys the
 * engine's kernels look up are found. Built as the other targets (ASan + UBSan, every report a
 * crash): a read outside the blob is a crash.
 *
 * Invariants (each a trap): a key is a NUL-terminated string inside the blob, the bytes of a scalar
 * value (of an entry, or found by key) are inside the blob.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mn_flexbuf.h"

#define REQUIRE(c) do { if (!(c)) { \
    fprintf(stderr, "fuzz_flexbuf.c:%d: invariant broken: %s\n", __LINE__, #c); __builtin_trap(); } } while (0)

static volatile uint64_t sink;   /* (unsigned: sums wrap) */

static const char *const keys[] = { "cycles_max", "max_detections", "max_classes_per_detection",
    "detections_per_class", "use_regular_nms", "nms_score_threshold", "nms_iou_threshold", "num_classes",
    "y_scale", "x_scale", "h_scale", "w_scale", "" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* an exact-size copy, so that ASan sees one byte past the blob */
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    mn_flex_map_t m;
    if (mn_flex_root_map(buf, size, &m) == MN_FLEX_OK) {
        for (uint32_t i = 0; i < m.count; i++) {
            const char *k;
            mn_flex_value_t v;
            if (mn_flex_at(&m, i, &k, &v) != MN_FLEX_OK) {
                continue;
            }
            REQUIRE((const uint8_t *)k >= buf && (const uint8_t *)k + strlen(k) < buf + size);
            REQUIRE(!v.p || (v.p >= buf && v.p + v.width <= buf + size));
            int64_t x;
            double f;
            bool b;
            if (mn_flex_value_i64(&v, &x) == MN_FLEX_OK) sink += (uint64_t)x;
            if (mn_flex_value_f64(&v, &f) == MN_FLEX_OK) sink += f == f;
            if (mn_flex_value_bool(&v, &b) == MN_FLEX_OK) sink += b;
            mn_flex_value_t w;
            if (mn_flex_find(&m, k, &w) == MN_FLEX_OK) {   /* the first entry with that key */
                REQUIRE(!w.p || (w.p >= buf && w.p + w.width <= buf + size));
            }
        }
        for (size_t j = 0; j < sizeof keys / sizeof keys[0]; j++) {
            int32_t i32 = 0;
            float f32 = 0;
            bool b = false;
            sink += (uint64_t)mn_flex_i32(&m, keys[j], &i32) + (uint64_t)i32;
            sink += (uint64_t)mn_flex_f32(&m, keys[j], &f32) + (f32 == f32);
            sink += (uint64_t)mn_flex_bool(&m, keys[j], &b) + b;
        }
    }
    free(buf);
    return 0;
}
