# Frozen modules every micronn board carries.
import os

freeze("$(PORT_DIR)/modules")

# The board side of the host tools' file transfers (micronn_tools/_mn_board.py): imported after
# each reset instead of pasted over the UART, when its version matches the host's.
module("_mn_board.py", base_path="$(PORT_DIR)/../host_tools/micronn_tools")

# py_lib/ is maintained separately and may not exist yet; this manifest runs
# with the port directory as its working directory.
if os.path.exists("../py_lib/manifest.py"):
    include("$(PORT_DIR)/../py_lib/manifest.py")
