# Frozen on-device package `micronn` (wraps the _micronn C module).
# Included by port/manifest.py and boards/UNIX/manifest.py.
package("micronn", opt=3)
