"""Non-volatile storage of emulated boards: littlefs and ROMFS live in a file-backed storage image
and survive restarts of QEMU (a power cycle), and models on ROMFS are used in place.

Every test session starts from empty images of its own (tests/conftest.py sets
MICRONN_STORAGE_DIR), so nothing here depends on an earlier run."""
import hashlib
import os

import pytest

from micronn_tools import romfs
from micronn_tools.board import QemuBoard, TransferError

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "..", "shared", "models")
NAME = "hil_persist.bin"
MODEL = "keyword_scrambled.tflite"  # 34,576 bytes: the heap check needs a model far above noise


def _model():
    with open(os.path.join(MODELS, MODEL), "rb") as f:
        return f.read()


def _needs_qemu(board):
    if not isinstance(board, QemuBoard):
        pytest.skip("needs an emulated board (QEMU restarts)")


def _needs_romfs(board):
    if not board.spec.raw.get("romfs_bytes"):
        pytest.skip(f"{board.name} has no ROMFS region (board.json romfs_bytes)")


def test_storage_image_is_per_session(board):
    """The board runs on this session's own storage image, under build/ (isolation)."""
    _needs_qemu(board)
    if board.spec.storage_bytes is None:
        pytest.skip(f"{board.name}: no file-backed storage (see README, Boards)")
    path = board.spec.storage_path
    assert str(path).startswith(os.environ["MICRONN_STORAGE_DIR"])
    assert board.qemu.storage_file == os.path.abspath(path)
    if board.spec.storage_region is None:  # file-backed RAM (a region is saved at QEMU's stop)
        assert os.path.getsize(path) == board.spec.storage_bytes


def test_file_survives_qemu_restart(board):
    """A file copied to the board is still there, byte for byte, after QEMU was stopped and
    started again (QemuBoard.hard_reset restarts the emulator process)."""
    _needs_qemu(board)
    if board.spec.storage_bytes is None:
        pytest.skip(f"{board.name}: no storage image (board.json qemu.storage)")
    data = os.urandom(5000)
    digest = board.put(data, NAME)
    restarts = board.restarts
    try:
        board.hard_reset()
        assert board.restarts == restarts + 1
        assert board.sha256(NAME) == (len(data), digest)
    finally:
        board.remove(NAME)


def test_romfs_image_layout():
    """Host side: the image mounts as MicroPython's format says and aligns every file's data."""
    files = [("a.tflite", b"\x01" * 5), ("b.bin", os.urandom(70000)), ("c", b"")]
    img = romfs.build_image(files)
    offsets = romfs.file_offsets(img)
    for name, data in files:
        off, size = offsets[name]
        assert off % 16 == 0 and img[off:off + size] == data
    with pytest.raises(ValueError):
        romfs.build_image([("x", b""), ("x", b"")])


def test_romfs_model_is_used_in_place(board):
    """micronn flash --romfs's deploy: the model is on /rom, loading it does not grow the heap by
    the model's size (a littlefs copy of it does), it runs like the same model from RAM, and it
    is still there after a QEMU restart."""
    _needs_romfs(board)
    data = _model()
    board.romfs_deploy(romfs.build_image([(MODEL, data)]), timeout=120)
    assert board.eval("os.listdir('/rom')", pre="import os") == [MODEL]
    measure = (
        "import gc, micronn\n"
        "gc.collect()\n"
        "_a = gc.mem_free()\n"
        "_m = micronn.load({path!r})\n"
        "gc.collect()\n"
        "print(_a - gc.mem_free())\n")
    grown = int(board.exec(measure.format(path="/rom/" + MODEL)).split()[-1])
    assert grown < 1024, f"loading from /rom grew the heap by {grown} bytes"
    # the same model as a regular file is read into the heap: the check above can fail
    board.put(data, "hil_model.tflite")
    try:
        copied = int(board.exec(measure.format(path="hil_model.tflite")).split()[-1])
    finally:
        board.remove("hil_model.tflite")
    assert copied >= len(data)
    run = ("import micronn\n"
           "_it = micronn.Interpreter(micronn.load({src}))\n"
           "_t = _it.input(0)\n"
           "_t[:] = bytes((_i * 7) & 255 for _i in range(_t.nbytes))\n"
           "_it.invoke()\n"
           "print(bytes(_it.output(0)).hex())\n")
    in_place = board.exec(run.format(src=repr("/rom/" + MODEL)))
    from_ram = board.exec(run.format(src="bytes(memoryview(open('/rom/%s', 'rb')))" % MODEL))
    assert in_place == from_ram and in_place.strip()
    if isinstance(board, QemuBoard):
        board.hard_reset()
        got = board.eval("hashlib.sha256(open('/rom/%s', 'rb').read()).digest()" % MODEL,
                         pre="import hashlib")
        assert got == hashlib.sha256(data).digest()


def test_romfs_refuses_an_image_too_large(board):
    _needs_romfs(board)
    size = board.romfs_size()
    assert size == board.spec.raw["romfs_bytes"]
    with pytest.raises(TransferError):
        board.romfs_deploy(romfs.build_image([("big.bin", bytes(size))]))


def test_romfs_deploy_in_acknowledged_chunks(board):
    """The path real boards take (one exec per base64 chunk, no UART back-pressure needed)
    writes the same image as the emulated boards' streamed one."""
    import types
    from micronn_tools.board import Board
    _needs_romfs(board)
    with open(os.path.join(MODELS, "hello_world_int8.tflite"), "rb") as f:
        data = f.read()
    img = romfs.build_image([("hw.tflite", data), ("odd.bin", b"\x03\x1b" * 2501)])
    board._rom_write = types.MethodType(Board._rom_write, board)
    try:
        board.romfs_deploy(img)
    finally:
        del board._rom_write
    got = board.eval("open('/rom/odd.bin', 'rb').read() == b'\\x03\\x1b' * 2501 and "
                     "len(open('/rom/hw.tflite', 'rb').read())")
    assert got == len(data)
