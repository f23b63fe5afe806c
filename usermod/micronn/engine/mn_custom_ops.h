/*
 * Custom-op kernels built into the engine: one line per op. Included several times (no include
 * guard) with MN_CUSTOM_OP defined as needed, like mn_ops.h.
 *
 *   MN_CUSTOM_OP(SYM, VERSION, DTYPES)
 *     SYM      the custom code string exactly as the model's OperatorCode.custom_code holds it,
 *              which must be a C identifier. The kernel is the const mn_kernel_t
 *              mn_kernel_<SYM> in kernels/custom/<sym>.c, selected by MICRONN_OP_<SYM>
 *              (default MICRONN_OPS_ALL; `make firmware MODELS=...` sets it when a model uses
 *              the op, as for builtin ops).
 *     VERSION  highest opcode version the kernel implements.
 *     DTYPES   dtype combinations, as in mn_ops.h (reporting only).
 *
 * Adding a custom op at build time: this line plus kernels/custom/<name>.c (kernels/signal/ for
 * TFLM's signal library) (kernels/custom/atan2.c
 * is the documented example), then `python tools/gen_opsel.py` (its default in mn_opsel.h). At
 * run time, kernels can also be passed in mn_config_t.ops.
 * Custom codes that are not identifiers (e.g. "ethos-u") can only be registered at run time.
 */
MN_CUSTOM_OP(Atan2, 1, "float32")
MN_CUSTOM_OP(micronn_subgraph, 1, "any")
MN_CUSTOM_OP(CIRCULAR_BUFFER, 1, "int8")
MN_CUSTOM_OP(TFLite_Detection_PostProcess, 1, "float32 uint8")
/* TFLM's signal library (kernels/signal/: the audio front end of micro_speech) */
MN_CUSTOM_OP(SignalWindow, 1, "int16")
MN_CUSTOM_OP(SignalFftAutoScale, 1, "int16")
MN_CUSTOM_OP(SignalRfft, 1, "int16 int32")
MN_CUSTOM_OP(SignalEnergy, 1, "int16")
MN_CUSTOM_OP(SignalFilterBank, 1, "uint32")
MN_CUSTOM_OP(SignalFilterBankSquareRoot, 1, "uint64")
MN_CUSTOM_OP(SignalFilterBankSpectralSubtraction, 1, "uint32")
MN_CUSTOM_OP(SignalPCAN, 1, "uint32")
MN_CUSTOM_OP(SignalFilterBankLog, 1, "uint32")
MN_CUSTOM_OP(SignalDelay, 1, "int16")
MN_CUSTOM_OP(SignalFramer, 1, "int16")
MN_CUSTOM_OP(SignalStacker, 1, "int16")
MN_CUSTOM_OP(SignalOverlapAdd, 1, "int16 float32")
