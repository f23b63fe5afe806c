# micronn: the _micronn user C module for MicroPython's cmake-based ports (esp32, rp2).
#   idf.py -D USER_C_MODULES=<repo>/usermod/micropython.cmake [-D MICRONN_MODELS="a.tflite;b.tflite"]
#          [-D MICRONN_OPS="CONV_2D;SOFTMAX"] build
# (<repo>/usermod/micropython.cmake includes this file; a micropython.cmake listing several
# modules can include either.)
#
# Same settings as micropython.mk:
#   MICRONN_MODELS      .tflite files (or directories: every *.tflite in them) built into the
#                       firmware as micronn.models[<stem>]; list separated by ';' or spaces.
#   MICRONN_MODELS_DIR  used when MICRONN_MODELS is not set.
#   MICRONN_OPS         builtin ops whose kernels are linked (default: all).
#   MICRONN_TYPES       type families of the kernels with several dtype paths (int8 int16 float32
#                       hybrid; default: all).
#   MICRONN_KERNELS     optimized kernel backends (engine/kernels/<name>/), default "generic";
#                       "reference": none.
#   MICRONN_VARIANTS    optimized variants linked, by name ("dsp.conv_s8;generic.fc_s8", e.g. from
#                       micronn_tools.opset --variants); "none": none; default (or "all"): every one.
#   MICRONN_COPT        compile options for the engine's kernels (not their prepare-time files:
#                       *_prepare.c, mn_variants.c, ref_glue.c) and mn_quant.c only, default "-O2"
#                       (ports build for size; the engine's loops are about 2x faster at -O2).
#                       Empty: the port's.
#   MICRONN_CORE_COPT   the same for the rest of the engine (verifier, interpreter setup, planner:
#                       not per-inference work); default empty: the port's.
#   MICRONN_PATCHES     1/0: patch-based execution; MICRONN_DELEGATE 1/0: delegation (default:
#                       mn_config.h's, i.e. with every op).
# All can also come from the environment. The model table is generated at configure time
# (python3 -m micronn_tools.convert --table); changing a listed model file re-runs the configure step.
# The double-precision exp/floor/round the engine needs come from MicroPython's lib/libm_dbl
# under micronn_ names (libm/), as in micropython.mk.

set(MICRONN_DIR ${CMAKE_CURRENT_LIST_DIR})
get_filename_component(MICRONN_ROOT ${MICRONN_DIR}/../.. ABSOLUTE)
set(MICRONN_GEN ${CMAKE_BINARY_DIR}/micronn_gen)

if(NOT DEFINED MICRONN_MODELS AND DEFINED ENV{MICRONN_MODELS})
    set(MICRONN_MODELS $ENV{MICRONN_MODELS})
endif()
if(NOT DEFINED MICRONN_MODELS)
    if(NOT DEFINED MICRONN_MODELS_DIR AND DEFINED ENV{MICRONN_MODELS_DIR})
        set(MICRONN_MODELS_DIR $ENV{MICRONN_MODELS_DIR})
    endif()
    set(MICRONN_MODELS "${MICRONN_MODELS_DIR}")
endif()
if(NOT DEFINED MICRONN_VARIANTS AND DEFINED ENV{MICRONN_VARIANTS})
    set(MICRONN_VARIANTS $ENV{MICRONN_VARIANTS})
endif()
if(NOT DEFINED MICRONN_OPS AND DEFINED ENV{MICRONN_OPS})
    set(MICRONN_OPS $ENV{MICRONN_OPS})
endif()
if(NOT DEFINED MICRONN_TYPES AND DEFINED ENV{MICRONN_TYPES})
    set(MICRONN_TYPES $ENV{MICRONN_TYPES})
endif()
if(NOT DEFINED MICRONN_PATCHES AND DEFINED ENV{MICRONN_PATCHES})
    set(MICRONN_PATCHES $ENV{MICRONN_PATCHES})
endif()
if(NOT DEFINED MICRONN_DELEGATE AND DEFINED ENV{MICRONN_DELEGATE})
    set(MICRONN_DELEGATE $ENV{MICRONN_DELEGATE})
endif()
if(NOT DEFINED MICRONN_KERNELS AND DEFINED ENV{MICRONN_KERNELS})
    set(MICRONN_KERNELS $ENV{MICRONN_KERNELS})
endif()
if(NOT DEFINED MICRONN_KERNELS)
    set(MICRONN_KERNELS generic)
endif()
if(NOT DEFINED MICRONN_COPT)
    if(DEFINED ENV{MICRONN_COPT})
        set(MICRONN_COPT $ENV{MICRONN_COPT})
    else()
        set(MICRONN_COPT -O2)
    endif()
endif()
separate_arguments(MICRONN_COPT)
separate_arguments(MICRONN_MODELS)
separate_arguments(MICRONN_OPS)
separate_arguments(MICRONN_KERNELS)
separate_arguments(MICRONN_TYPES)
list(REMOVE_ITEM MICRONN_KERNELS reference)

# Expand directories, resolve relative paths against the repo root.
set(MICRONN_MODEL_FILES)
foreach(path ${MICRONN_MODELS})
    if(NOT IS_ABSOLUTE ${path} AND NOT EXISTS ${path})
        set(path ${MICRONN_ROOT}/${path})
    endif()
    get_filename_component(path ${path} ABSOLUTE)
    if(IS_DIRECTORY ${path})
        file(GLOB found ${path}/*.tflite)
        list(SORT found)
        list(APPEND MICRONN_MODEL_FILES ${found})
    elseif(EXISTS ${path})
        list(APPEND MICRONN_MODEL_FILES ${path})
    else()
        message(FATAL_ERROR "micronn: MICRONN_MODELS: no such file: ${path}")
    endif()
endforeach()

find_package(Python3 COMPONENTS Interpreter REQUIRED)
file(MAKE_DIRECTORY ${MICRONN_GEN})
execute_process(
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${MICRONN_ROOT}/host_tools
            ${Python3_EXECUTABLE} -m micronn_tools.convert --table ${MICRONN_GEN}/micronn_models.h
            ${MICRONN_MODEL_FILES}
    RESULT_VARIABLE micronn_gen_result
)
if(NOT micronn_gen_result EQUAL 0)
    message(FATAL_ERROR "micronn: generating the built-in model table failed")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
    ${MICRONN_MODEL_FILES} ${MICRONN_ROOT}/host_tools/micronn_tools/convert.py)

# The engine's source list is written once, in engine/engine.mk: its pattern lines are read here.
set(MICRONN_ENGINE_DIR ${MICRONN_DIR}/engine)
file(STRINGS ${MICRONN_ENGINE_DIR}/engine.mk micronn_engine_mk REGEX "^MICRONN_[A-Z]+_PATTERNS := ")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${MICRONN_ENGINE_DIR}/engine.mk)
foreach(line ${micronn_engine_mk})
    string(REGEX REPLACE "^(MICRONN_[A-Z]+_PATTERNS) := (.*)$" "\\1" name "${line}")
    string(REGEX REPLACE "^(MICRONN_[A-Z]+_PATTERNS) := (.*)$" "\\2" value "${line}")
    separate_arguments(value)
    set(${name} ${value})
endforeach()
# A pattern as a regular expression over absolute paths (for the hot/cold lists below).
function(micronn_pattern_regex out)
    set(res)
    string(REGEX REPLACE "([][.+?^$()|\\\\])" "\\\\\\1" dir "${MICRONN_ENGINE_DIR}")
    foreach(p ${ARGN})
        string(REPLACE "." "\\." p "${p}")
        string(REPLACE "*" ".*" p "${p}")
        list(APPEND res "^${dir}/${p}$")
    endforeach()
    list(JOIN res "|" res)
    set(${out} "${res}" PARENT_SCOPE)
endfunction()
set(MICRONN_ENGINE_SRC)
foreach(p ${MICRONN_ENGINE_PATTERNS})
    file(GLOB found ${MICRONN_ENGINE_DIR}/${p})
    list(SORT found)
    list(APPEND MICRONN_ENGINE_SRC ${found})
endforeach()
list(REMOVE_DUPLICATES MICRONN_ENGINE_SRC)
set(micronn_backend_defs)
foreach(k ${MICRONN_KERNELS})
    if(NOT IS_DIRECTORY ${MICRONN_DIR}/engine/kernels/${k})
        message(FATAL_ERROR "micronn: MICRONN_KERNELS: no backend ${k} (engine/kernels/${k}/)")
    endif()
    file(GLOB found ${MICRONN_DIR}/engine/kernels/${k}/*.c)
    list(APPEND MICRONN_ENGINE_SRC ${found})
    string(TOUPPER ${k} k_upper)
    list(APPEND micronn_backend_defs MICRONN_KERNELS_${k_upper}=1)
endforeach()

set(MICRONN_LIBM_SRC
    ${MICRONN_DIR}/libm/exp.c
    ${MICRONN_DIR}/libm/floor.c
    ${MICRONN_DIR}/libm/round.c
    ${MICRONN_DIR}/libm/scalbn.c
)
# Per source, so only the engine's kernels, mn_quant.c and mn_const.c (what runs per inference) are built at
# -O2 (options on the INTERFACE library would reach every file of the firmware); they come after
# the target's own flags, so they win. The rest of the engine keeps the port's (size) setting, or
# MICRONN_CORE_COPT, as in micropython.mk.
if(NOT DEFINED MICRONN_CORE_COPT AND DEFINED ENV{MICRONN_CORE_COPT})
    set(MICRONN_CORE_COPT $ENV{MICRONN_CORE_COPT})
endif()
separate_arguments(MICRONN_CORE_COPT)
micronn_pattern_regex(micronn_hot_re ${MICRONN_HOT_PATTERNS})
micronn_pattern_regex(micronn_cold_re ${MICRONN_COLD_PATTERNS})
set(MICRONN_HOT_SRC ${MICRONN_ENGINE_SRC})
list(FILTER MICRONN_HOT_SRC INCLUDE REGEX "${micronn_hot_re}")
# (prepare-time code in kernels/ keeps the port's setting, as in micropython.mk)
list(FILTER MICRONN_HOT_SRC EXCLUDE REGEX "${micronn_cold_re}")
set(MICRONN_CORE_SRC ${MICRONN_ENGINE_SRC})
list(REMOVE_ITEM MICRONN_CORE_SRC ${MICRONN_HOT_SRC})
if(MICRONN_COPT)
    set_source_files_properties(${MICRONN_HOT_SRC} PROPERTIES COMPILE_OPTIONS "${MICRONN_COPT}")
endif()
if(MICRONN_CORE_COPT)
    set_source_files_properties(${MICRONN_CORE_SRC} PROPERTIES COMPILE_OPTIONS "${MICRONN_CORE_COPT}")
endif()
# Third-party code (see micropython.mk).
set_source_files_properties(${MICRONN_LIBM_SRC} PROPERTIES COMPILE_OPTIONS "-w")

add_library(usermod_micronn INTERFACE)

target_sources(usermod_micronn INTERFACE
    ${MICRONN_DIR}/modmicronn.c
    ${MICRONN_DIR}/mod_model.c
    ${MICRONN_DIR}/mod_interp.c
    ${MICRONN_DIR}/mod_tensor.c
    ${MICRONN_DIR}/mod_arena.c
    ${MICRONN_DIR}/mod_pyops.c
    ${MICRONN_DIR}/mod_models.c
    ${MICRONN_ENGINE_SRC}
    ${MICRONN_LIBM_SRC}
)

target_include_directories(usermod_micronn INTERFACE
    ${MICRONN_DIR}
    ${MICRONN_DIR}/engine
    ${MICRONN_DIR}/engine/kernels/reference
    ${MICRONN_GEN}
)

target_compile_definitions(usermod_micronn INTERFACE MICRONN_OWN_LIBM_DBL=1)

if(MICRONN_OPS)
    set(micronn_op_defs MICRONN_OPS_ALL=0)
    foreach(op ${MICRONN_OPS})
        list(APPEND micronn_op_defs MICRONN_OP_${op}=1)
    endforeach()
    target_compile_definitions(usermod_micronn INTERFACE ${micronn_op_defs})
endif()

if(MICRONN_TYPES)
    set(micronn_type_defs MICRONN_TYPES_ALL=0)
    foreach(t ${MICRONN_TYPES})
        if(NOT t MATCHES "^(int8|int16|float32|hybrid)$")
            message(FATAL_ERROR "micronn: MICRONN_TYPES: unknown type family ${t}; known: int8 int16 float32 hybrid")
        endif()
        string(TOUPPER ${t} t_upper)
        list(APPEND micronn_type_defs MICRONN_TYPE_${t_upper}=1)
    endforeach()
    target_compile_definitions(usermod_micronn INTERFACE ${micronn_type_defs})
endif()

separate_arguments(MICRONN_VARIANTS)
list(REMOVE_ITEM MICRONN_VARIANTS all)
if(MICRONN_VARIANTS)
    set(micronn_variant_defs MICRONN_VARIANTS_ALL=0)
    foreach(v ${MICRONN_VARIANTS})
        if(NOT v STREQUAL "none")
            string(REPLACE "." "_" v_flag ${v})
            list(APPEND micronn_variant_defs MICRONN_VARIANT_${v_flag}=1)
        endif()
    endforeach()
    target_compile_definitions(usermod_micronn INTERFACE ${micronn_variant_defs})
endif()

if(NOT "${MICRONN_PATCHES}" STREQUAL "")
    target_compile_definitions(usermod_micronn INTERFACE MICRONN_PATCHES=${MICRONN_PATCHES})
endif()

if(NOT "${MICRONN_DELEGATE}" STREQUAL "")
    target_compile_definitions(usermod_micronn INTERFACE MICRONN_DELEGATE=${MICRONN_DELEGATE})
endif()

if(micronn_backend_defs)
    target_compile_definitions(usermod_micronn INTERFACE ${micronn_backend_defs})
endif()

target_link_libraries(usermod INTERFACE usermod_micronn)
