include("$(PORT_DIR)/manifest.py")
