/*
 * Engine measurements on a 32-bit Cortex-M under QEMU (-icount shift=0: 1 instruction = 1 ns):
 * arena bytes (persistent / non-persistent / needed) on the real target ABI, instructions for
 * prepare, for invoke with the reference kernels, and for invoke with every kernel replaced by a
 * no-op (pure interpreter overhead). Models are read from the host through semihosting.
 * Build/run: make -C tests/engine arm-bench
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>

#include "micronn.h"
#include "mn_kernel.h"

#define SYST_CSR (*(volatile uint32_t *)0xE000E010)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018)

extern int _start(void);
/* -nostartfiles drops crti/crtn: newlib still calls these. */
void _init(void) {}
void _fini(void) {}
extern uint32_t __stack;

__attribute__((naked, noreturn)) void reset_handler(void) {
    __asm volatile("ldr r0, =__stack\n mov sp, r0\n bl _start\n b .");
}
static void fault(void) {
    puts("fault");
    exit(3);
}
__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&__stack, reset_handler, fault, fault, fault, fault, fault, 0, 0, 0, 0, fault, fault, 0, fault, fault,
};

/* SysTick on the processor clock; QEMU's mps2 runs it at 25 MHz = 40 instructions per tick. */
#define INSN_PER_TICK 40
static void tick_start(void) {
    SYST_RVR = 0xffffff;
    SYST_CVR = 0;
    SYST_CSR = 5;
}
static uint32_t ticks(void) {
    return SYST_CVR;
}
static uint32_t elapsed(uint32_t t0) {
    return ((t0 - SYST_CVR) & 0xffffff) * INSN_PER_TICK;
}

static mn_status_t noop_eval(mn_ctx_t *ctx, mn_node_t *node) {
    (void)ctx;
    (void)node;
    return MN_OK;
}
static const mn_kernel_t noop = { NULL, NULL, noop_eval, NULL };

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = memalign(16, (size_t)n);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* With the patch stage mn_patch_choose finds (reuse_inputs): its arena, and the instructions of
 * the choice (dry runs) and of an invoke. */
static void bench_patches(const mn_model_t *m) {
    mn_config_t cfg;
    mn_patch_choice_t c;
    memset(&cfg, 0, sizeof cfg);
    cfg.flags = MN_CFG_REUSE_INPUTS;
    size_t work_len = mn_dry_run_work_hint(m);
    void *work = malloc(work_len);
    uint32_t t0 = ticks();
    mn_status_t s = mn_patch_choose(m, &cfg, work, work_len, &c, NULL);
    uint32_t t_choose = elapsed(t0);
    free(work);
    if (s != MN_OK || !c.rows) {
        return;
    }
    cfg.patch_first = c.first;
    cfg.patch_last = c.last;
    cfg.patch_rows = c.rows;
    uint8_t *arena = memalign(16, c.arena);
    static mn_interp_t it;
    if (!arena || mn_interp_init(&it, m, arena, c.arena, &cfg) != MN_OK || mn_interp_prepare(&it) != MN_OK) {
        printf("  patches: %s\n", it.err.msg);
        free(arena);
        return;
    }
    for (size_t i = 0; i < mn_interp_num_inputs(&it); i++) {
        memset(mn_interp_input(&it, i)->data, 0, mn_tensor_bytes(mn_interp_input(&it, i)));
    }
    mn_interp_invoke(&it);
    t0 = ticks();
    mn_interp_invoke(&it);
    uint32_t t_inv = elapsed(t0);
    mn_interp_deinit(&it);
    free(arena);
    printf("  patches (reuse-inputs): ops %u..%u rows %s%u, MACs %lu -> %lu | needed %6u (without %6u) "
        "choose %9lu invoke %10lu insns\n", (unsigned)c.first, (unsigned)c.last,
        c.rows == MN_PATCH_STREAM ? "stream/" : "", c.rows == MN_PATCH_STREAM ? 0u : (unsigned)c.rows,
        (unsigned long)c.macs, (unsigned long)c.macs_patched, (unsigned)c.arena, (unsigned)c.arena_without,
        (unsigned long)t_choose, (unsigned long)t_inv);
}

static void bench(const char *dir, const char *name) {
    char path[256];
    size_t len;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    uint8_t *buf = read_file(path, &len);
    if (!buf) {
        printf("%s: cannot read\n", path);
        return;
    }
    static mn_model_t m;
    uint32_t t0 = ticks();
    mn_status_t s = mn_model_init(&m, buf, len);
    uint32_t t_verify = elapsed(t0);
    if (s != MN_OK) {
        printf("%s: %s\n", name, m.err.msg);
        return;
    }
    size_t work_len = mn_dry_run_work_hint(&m), need = 0;
    void *work = malloc(work_len);
    mn_error_t err;
    t0 = ticks();
    s = mn_arena_needed(&m, NULL, work, work_len, &need, &err);
    uint32_t t_size = elapsed(t0);
    /* Arena with MN_CFG_REUSE_INPUTS (inputs not kept after invoke, as TFLM). */
    mn_config_t rcfg;
    size_t need_reuse = 0;
    memset(&rcfg, 0, sizeof rcfg);
    rcfg.flags = MN_CFG_REUSE_INPUTS;
    if (s == MN_OK) {
        mn_arena_needed(&m, &rcfg, work, work_len, &need_reuse, NULL);
    }
    free(work);
    if (s != MN_OK) {
        printf("%-30s %s\n", name, err.msg);
        free(buf);
        return;
    }
    uint8_t *arena = memalign(16, need);
    static mn_interp_t it;
    mn_interp_init(&it, &m, arena, need, NULL);
    t0 = ticks();
    s = mn_interp_prepare(&it);
    uint32_t t_prep = elapsed(t0);
    if (s != MN_OK) {
        printf("%s: %s\n", name, it.err.msg);
        return;
    }
    for (size_t i = 0; i < mn_interp_num_inputs(&it); i++) {
        memset(mn_interp_input(&it, i)->data, 0, mn_tensor_bytes(mn_interp_input(&it, i)));
    }
    mn_interp_invoke(&it);
    t0 = ticks();
    s = mn_interp_invoke(&it);
    uint32_t t_inv = elapsed(t0);
    mn_arena_stats_t st;
    mn_interp_stats(&it, &st);
    mn_interp_deinit(&it);

    /* Same model, every op a no-op kernel: the interpreter's own cost per invoke. */
    mn_registration_t regs[16];
    size_t nr = 0;
    for (size_t i = 0; i < mn_model_num_ops(&m) && nr < 16; i++) {
        mn_op_info_t oi;
        mn_model_op_info(&m, i, &oi);
        size_t k = 0;
        while (k < nr && regs[k].builtin != oi.builtin) {
            k++;
        }
        if (k == nr) {
            regs[nr].builtin = oi.builtin;
            regs[nr].custom_name = NULL;
            regs[nr].kernel = &noop;
            nr++;
        }
    }
    mn_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ops = regs;
    cfg.n_ops = nr;
    mn_interp_init(&it, &m, arena, need, &cfg);
    t0 = ticks();
    mn_interp_prepare(&it);
    uint32_t t_noop_prep = elapsed(t0);
    mn_interp_invoke(&it);
    t0 = ticks();
    mn_interp_invoke(&it);
    uint32_t t_noop = elapsed(t0);
    mn_interp_deinit(&it);
    printf("%-30s persistent %6u nonpersistent %6u needed %6u (reuse-inputs %6u) | verify %8lu sizing %8lu "
        "prepare %9lu (engine part %8lu) invoke %10lu noop-invoke %6lu insns\n",
        name, (unsigned)st.persistent, (unsigned)st.nonpersistent, (unsigned)st.needed, (unsigned)need_reuse,
        (unsigned long)t_verify, (unsigned long)t_size,
        (unsigned long)t_prep, (unsigned long)t_noop_prep, (unsigned long)t_inv, (unsigned long)t_noop);
    free(arena);
    bench_patches(&m);
    free(buf);
}

int main(void) {
    static const char *models[] = {
        "hello_world_int8.tflite", "hello_world_float.tflite", "person_detect.tflite", "keyword_scrambled.tflite",
        "micro_speech_quantized.tflite", "simple_add_model.tflite", "trained_lstm_int8.tflite",
    };
    tick_start();
    printf("sizeof: mn_tensor_t %u, mn_node_t %u, mn_interp_t %u, mn_model_t %u\n", (unsigned)sizeof(mn_tensor_t),
        (unsigned)sizeof(mn_node_t), (unsigned)sizeof(mn_interp_t), (unsigned)sizeof(mn_model_t));
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        bench(MODELS_DIR, models[i]);
    }
    return 0;
}
