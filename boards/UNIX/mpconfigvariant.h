// micronn's variant of MicroPython's unix port: the host build used to run the engine and
// on-device Python layer without an emulator (tests, sanitizers). Built out of tree with
// VARIANT_DIR=<repo>/boards/UNIX; see README.md.

// The same feature level as upstream's "standard" variant.
#define MICROPY_CONFIG_ROM_LEVEL (MICROPY_CONFIG_ROM_LEVEL_EXTRA_FEATURES)

// hashlib.sha256 is what the host tools use to verify transferred files.
#define MICROPY_PY_HASHLIB_SHA256 (1)

// The unix port's shared settings ("variants/" is reachable through the port's -I.).
#include "variants/mpconfigvariant_common.h"

// Ctrl-C (SIGINT) as on the boards: a pending KeyboardInterrupt that the VM, and micronn's engine
// between two ops (mn_config_t.should_stop), act on. The common unix setting raises it straight
// from the signal handler instead, which can cut a kernel or an allocation in half.
#undef MICROPY_ASYNC_KBD_INTR
#define MICROPY_ASYNC_KBD_INTR (0)
