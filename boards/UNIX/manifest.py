# Frozen modules of the micronn UNIX board. Paths are relative to this file's directory
# (makemanifest changes into it); $(MICRONN_ROOT) is set by mpconfigvariant.mk.
import os

include("$(MPY_DIR)/extmod/asyncio")

# py_lib/ (the on-device `micronn` package) is maintained separately and may not exist yet.
if os.path.exists("../../py_lib/manifest.py"):
    include("$(MICRONN_ROOT)/py_lib/manifest.py")
