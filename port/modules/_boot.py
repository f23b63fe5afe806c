# Mount the board's littlefs filesystem at "/" (format only when mounting
# fails, so files survive soft and hard resets) and add /lib to sys.path.
import sys
import vfs
import board


def _mount():
    bdev = board.Storage()
    try:
        fs = vfs.VfsLfs2(bdev)
    except OSError:
        vfs.VfsLfs2.mkfs(bdev)
        fs = vfs.VfsLfs2(bdev)
    vfs.mount(fs, "/")


try:
    _mount()
except OSError as e:
    # Keep the REPL usable even without storage.
    print("_boot: no filesystem:", e)
sys.path.append("/lib")
del _mount, sys, vfs, board
