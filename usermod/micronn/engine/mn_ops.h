/*
 * Every builtin kernel the engine source has, whether or not a build links it: one line per op,
 * in alphabetical order. Included several times (no include guard) with MN_OP defined as needed.
 *
 *   MN_OP(NAME, OPTIONS, VERSION, DTYPES)
 *     NAME     builtin operator (MN_BUILTIN_<NAME>; the kernel is mn_kernel_<NAME>, selected by
 *              MICRONN_OP_<NAME> in mn_config.h)
 *     OPTIONS  the builtin options table the op carries (MN_OPTIONS_<OPTIONS>; NONE for none).
 *              A model whose operator has another options table is refused before prepare.
 *     VERSION  highest opcode version whose semantics the kernel implements (TFLite's
 *              op_version.cc); a model with a higher version is refused. Features of lower
 *              versions that the kernel lacks (a dtype, ...) are refused by its prepare.
 *     DTYPES   dtype combinations the kernel implements, space separated: the dtype of input 0 (x for
 *              SELECT / SELECT_V2),
 *              "->out" when output 0 has another dtype, "x8" for int8 weights (int16x8). The
 *              support matrix (`micronn ops`, README) is this column; tests/engine/ops/
 *              test_op_matrix.py runs every combination listed here against the oracle.
 * Adding an op: this line, the MICRONN_OP_<NAME> block in mn_config.h, kernels/reference/<op>.c.
 */
MN_OP(ABS, AbsOptions, 5, "int8 int16 int32 float32")
MN_OP(ADD, AddOptions, 3, "int8 int16 float32 int32")
MN_OP(AVERAGE_POOL_2D, Pool2DOptions, 3, "int8 int16 float32")
MN_OP(CAST, CastOptions, 6, "float32->float32 float32->int8 float32->uint8 float32->int16 float32->int32 float32->bool int8->float32 int8->int8 int8->uint8 int8->int16 int8->int32 int8->bool uint8->float32 uint8->int8 uint8->uint8 uint8->int16 uint8->int32 uint8->bool int16->float32 int16->int8 int16->uint8 int16->int16 int16->int32 int16->bool int32->float32 int32->int8 int32->uint8 int32->int16 int32->int32 int32->bool bool->float32 bool->int8 bool->uint8 bool->int16 bool->int32 bool->bool")
MN_OP(CEIL, NONE, 1, "float32")
MN_OP(CONV_2D, Conv2DOptions, 6, "int8 float32")
MN_OP(COS, CosOptions, 1, "float32")
MN_OP(DEPTHWISE_CONV_2D, DepthwiseConv2DOptions, 3, "int8 float32")
MN_OP(DEQUANTIZE, DequantizeOptions, 5, "int8->float32 uint8->float32 int16->float32 float16->float32")
MN_OP(DIV, DivOptions, 2, "float32 int32")
MN_OP(ELU, NONE, 1, "int8 float32")
MN_OP(EQUAL, EqualOptions, 4, "int8->bool uint8->bool int16->bool int32->bool float32->bool bool")
MN_OP(EXP, ExpOptions, 2, "int8 int16 float32")
MN_OP(FLOOR, NONE, 1, "float32")
MN_OP(FLOOR_DIV, FloorDivOptions, 3, "int8 int16 int32 float32")
MN_OP(FLOOR_MOD, FloorModOptions, 2, "int8 int16 int32 float32")
MN_OP(FULLY_CONNECTED, FullyConnectedOptions, 6, "int8 float32")
MN_OP(GELU, GeluOptions, 2, "int8 int16 float32")
MN_OP(GREATER, GreaterOptions, 2, "int8->bool uint8->bool int16->bool int32->bool float32->bool")
MN_OP(GREATER_EQUAL, GreaterEqualOptions, 3, "int8->bool uint8->bool int16->bool int32->bool float32->bool")
MN_OP(HARD_SWISH, HardSwishOptions, 1, "int8 float32")
MN_OP(L2_NORMALIZATION, L2NormOptions, 2, "int8 float32")
MN_OP(LEAKY_RELU, LeakyReluOptions, 2, "int8 int16 float32")
MN_OP(LESS, LessOptions, 3, "int8->bool uint8->bool int16->bool int32->bool float32->bool")
MN_OP(LESS_EQUAL, LessEqualOptions, 2, "int8->bool uint8->bool int16->bool int32->bool float32->bool")
MN_OP(LOG, NONE, 2, "int8 int16 float32")
MN_OP(LOGICAL_AND, LogicalAndOptions, 1, "bool")
MN_OP(LOGICAL_NOT, LogicalNotOptions, 1, "bool")
MN_OP(LOGICAL_OR, LogicalOrOptions, 1, "bool")
MN_OP(LOGISTIC, NONE, 3, "int8 int16 float32")
MN_OP(LOG_SOFTMAX, LogSoftmaxOptions, 2, "int8 float32")
MN_OP(MAXIMUM, MaximumMinimumOptions, 4, "int8 int16 int32 float32")
MN_OP(MAX_POOL_2D, Pool2DOptions, 3, "int8 int16 float32")
MN_OP(MINIMUM, MaximumMinimumOptions, 4, "int8 int16 int32 float32")
MN_OP(MUL, MulOptions, 4, "int8 int16 int32 float32")
MN_OP(NEG, NegOptions, 2, "int8 int16 int32 float32")
MN_OP(NOT_EQUAL, NotEqualOptions, 2, "int8->bool uint8->bool int16->bool int32->bool float32->bool bool")
MN_OP(PRELU, NONE, 1, "int8 float32")
MN_OP(QUANTIZE, QuantizeOptions, 2, "float32->int8 float32->uint8 float32->int16 int8->int8 int8->uint8 uint8->int8 int16->int8 int16->int16 int16->int32 int32->int8 int32->int16 uint8->uint8")
MN_OP(RELU, NONE, 3, "int8 int16 float32")
MN_OP(RELU6, NONE, 3, "int8 int16 float32")
MN_OP(RELU_0_TO_1, NONE, 1, "int8 float32")
MN_OP(RELU_N1_TO_1, NONE, 2, "int8 float32")
MN_OP(RESHAPE, ReshapeOptions, 1, "int8 int16 int32 float32")
MN_OP(ROUND, NONE, 1, "float32")
MN_OP(RSQRT, NONE, 3, "int8 int16 float32")
MN_OP(SELECT, SelectOptions, 3, "int8 int16 int32 uint8 float32 bool")
MN_OP(SELECT_V2, SelectV2Options, 1, "int8 int16 int32 uint8 float32 bool")
MN_OP(SIN, NONE, 1, "float32")
MN_OP(SOFTMAX, SoftmaxOptions, 3, "int8 int8->int16 int16 float32")
MN_OP(SQRT, NONE, 2, "int8 int16 float32")
MN_OP(SQUARE, SquareOptions, 1, "float32")
MN_OP(SQUARED_DIFFERENCE, SquaredDifferenceOptions, 2, "int8 int32 float32")
MN_OP(SUB, SubOptions, 5, "int8 int16 int32 float32")
MN_OP(SVDF, SVDFOptions, 3, "int8 float32")
MN_OP(TANH, NONE, 3, "int8 int16 float32")
MN_OP(UNIDIRECTIONAL_SEQUENCE_LSTM, UnidirectionalSequenceLSTMOptions, 1, "int8 float32")
