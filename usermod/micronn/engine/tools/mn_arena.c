/*
 * mn_arena: the arena a model needs, computed by the engine itself.
 *
 *     mn_arena MODEL.tflite [--reuse-inputs] [--patches]
 *
 * Prints one JSON object: {"bytes": N, "persistent": P, "nonpersistent": Q, "pointer_bits": B,
 * "kernel_persistent": K, "op_persistent": [bytes of op 0, op 1, ...]}; with --patches (the patch
 * stage mn_patch_choose finds) also "patch": [first op, last op, rows] or null.
 * Built with -m32 it reports exactly what a 32-bit microcontroller needs (struct sizes and
 * alignment as on the board), which a 64-bit host library cannot. Exit status: 0 ok, 1 engine
 * error (message on stderr), 2 usage or file error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "micronn.h"

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    unsigned char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
            *len = fread(buf, 1, (size_t)n, f);
        }
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    int reuse = 0, patches = 0;
    for (int i = 2; i < argc; i++) {
        reuse |= strcmp(argv[i], "--reuse-inputs") == 0;
        patches |= strcmp(argv[i], "--patches") == 0;
    }
    if (argc < 2 || argc - 2 != reuse + patches) {
        fprintf(stderr, "usage: mn_arena MODEL.tflite [--reuse-inputs] [--patches]\n");
        return 2;
    }
    size_t len = 0;
    unsigned char *buf = read_file(argv[1], &len);
    if (!buf) {
        fprintf(stderr, "mn_arena: cannot read %s\n", argv[1]);
        return 2;
    }
    static mn_model_t model;
    if (mn_model_init(&model, buf, len) != MN_OK) {
        fprintf(stderr, "%s\n", mn_model_error(&model));
        return 1;
    }
    mn_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.planner = MN_PLANNER_OFFLINE;   /* the model's own plan if it has one, as the board does */
    cfg.flags = reuse ? MN_CFG_REUSE_INPUTS : 0;

    // A real prepare in an arena of the dry-run size: the same path the board takes, and it
    // gives the persistent / non-persistent split.
    size_t work_size = mn_dry_run_work_hint(&model), needed = 0;
    mn_error_t err;
    mn_status_t s;
    mn_patch_choice_t choice;
    memset(&choice, 0, sizeof choice);
    for (; patches;) {
        void *work = malloc(work_size);
        s = mn_patch_choose(&model, &cfg, work, work_size, &choice, &err);
        free(work);
        if (s != MN_ERR_ARENA || choice.arena <= work_size) {
            break;
        }
        work_size = choice.arena;
    }
    cfg.patch_first = choice.first;
    cfg.patch_last = choice.last;
    cfg.patch_rows = choice.rows;
    for (;;) {
        void *work = malloc(work_size);
        s = mn_arena_needed(&model, &cfg, work, work_size, &needed, &err);
        free(work);
        if (s != MN_ERR_ARENA || needed <= work_size) {
            break;
        }
        work_size = needed;
    }
    if (s != MN_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    static mn_interp_t it;
    void *arena = malloc(needed);
    mn_arena_stats_t st;
    if (mn_interp_init(&it, &model, arena, needed, &cfg) != MN_OK || mn_interp_prepare(&it) != MN_OK
        || mn_interp_stats(&it, &st) != MN_OK) {
        fprintf(stderr, "%s\n", mn_interp_error(&it));
        return 1;
    }
    printf("{\"bytes\": %lu, \"persistent\": %lu, \"nonpersistent\": %lu, \"pointer_bits\": %u, "
        "\"kernel_persistent\": %lu, \"op_persistent\": [", (unsigned long)needed, (unsigned long)st.persistent,
        (unsigned long)st.nonpersistent, (unsigned)(8 * sizeof(void *)), (unsigned long)st.kernel_persistent);
    for (size_t i = 0; i < mn_interp_num_ops(&it); i++) {
        mn_op_profile_t p;
        mn_interp_profile(&it, i, &p);
        printf("%s%lu", i ? ", " : "", (unsigned long)p.persistent);
    }
    printf("], \"kernels\": [");   /* the optimized backends whose scratch the figure includes */
    for (size_t i = 0; mn_kernel_backend(i); i++) {
        printf("%s\"%s\"", i ? ", " : "", mn_kernel_backend(i));
    }
    printf("]");
    if (patches) {
        if (choice.rows) {
            printf(", \"patch\": [%u, %u, %u]", (unsigned)choice.first, (unsigned)choice.last, (unsigned)choice.rows);
        } else {
            printf(", \"patch\": null");
        }
    }
    printf("}\n");
    mn_interp_deinit(&it);
    free(arena);
    free(buf);
    return 0;
}
