# Frozen modules every micronn board carries.
import os

freeze("$(PORT_DIR)/modules")

# py_lib/ is maintained separately and may not exist yet; this manifest runs
# with the port directory as its working directory.
if os.path.exists("../py_lib/manifest.py"):
    include("$(PORT_DIR)/../py_lib/manifest.py")
