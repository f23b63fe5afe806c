"""Filesystem round trip of the largest file the board holds, verified by sha256 on the board."""
import hashlib
import random

import pytest

from micronn_tools.board import NoSpaceError

BIG = "hil_big.bin"
FULL = "hil_full.bin"
OVERFLOW = "hil_overflow.bin"


def _free_bytes(board):
    bsize, bavail = board.eval("(s[0], s[4])", pre="import os\ns = os.statvfs('.')")
    return bsize, bsize * bavail


def _remove(board, *names):
    for name in names:
        board.exec(f"import os\ntry:\n os.remove({name!r})\nexcept OSError:\n pass")


def _margin(bsize, free):
    """Space littlefs needs for itself (directory pairs, a file's skip list)."""
    return max(16 * bsize, free // 50)


def test_large_file_round_trip(board, hil_fs_bytes):
    """Host → board → host with sha256 checks on both sides.

    Uploads run at UART-in speed (under QEMU on a busy host: 5-50 KB/s), so by default the file
    is capped at 128 KiB (``--hil-fs-bytes max`` uses all free space); test_fill_filesystem
    covers the whole capacity."""
    spec = board.spec
    _remove(board, BIG, OVERFLOW, FULL)
    bsize, free = _free_bytes(board)
    size = free - _margin(bsize, free)
    if spec is not None and spec.fs_bytes:
        floor = 300 * 1024 if spec.fs_bytes >= 512 * 1024 else spec.fs_bytes // 2
        assert size >= floor, f"only {size} bytes fit on a {spec.fs_bytes}-byte filesystem"
    if hil_fs_bytes:
        size = min(size, hil_fs_bytes)
    data = random.Random(size).randbytes(size)
    seen = []
    try:
        digest = board.put(data, BIG, progress=lambda done, total: seen.append((done, total)))
        assert digest == hashlib.sha256(data).hexdigest()
        assert seen and seen[-1] == (size, size)
        assert all(a[0] < b[0] for a, b in zip(seen, seen[1:])), "progress went backwards"
        assert board.sha256(BIG) == (size, digest)
        assert board.get(BIG) == data
    finally:
        _remove(board, BIG)


PATTERN = """
with open({name!r}, 'wb') as f:
    for k in range({n} // 1024):
        f.write((b'%08x' % k) * 128)
    f.write(((b'%08x' % ({n} // 1024)) * 128)[:{n} % 1024])
"""


def _pattern(n):
    blocks = [(b"%08x" % k) * 128 for k in range(n // 1024 + 1)]
    return b"".join(blocks)[:n]


def test_fill_filesystem(board):
    """A file as large as the filesystem allows, written on the board (uploading megabytes over
    the UART would take minutes) and checked by the board's sha256 against the host's copy of
    the same pattern. The transfer path is covered by test_large_file_round_trip."""
    _remove(board, BIG, OVERFLOW, FULL)
    bsize, free = _free_bytes(board)
    if board.spec is None or not board.spec.fs_bytes:  # UNIX: no fixed size; 4 MB is plenty
        free = min(free, 4 << 20)
    size = free - _margin(bsize, free)
    try:
        board.exec(PATTERN.format(name=FULL, n=size), timeout=300)
        want = _pattern(size)
        assert board.sha256(FULL, timeout=120) == (size, hashlib.sha256(want).hexdigest())
        if board.spec is not None and board.spec.fs_bytes:
            _, left = _free_bytes(board)
            assert left <= _margin(bsize, free) + 8 * bsize, "the filesystem was not filled"
    finally:
        _remove(board, FULL)


FILL = """
import os
b = bytearray(4096)
with open('hil_fill.bin', 'wb') as f:
    left = {n}
    while left > 0:
        left -= f.write(b if left >= 4096 else b[:left])
"""


@pytest.mark.serial_only
def test_put_that_does_not_fit_fails_and_leaves_nothing(board):
    """A full filesystem is an error, never a silently truncated file."""
    _remove(board, BIG, FULL, OVERFLOW, "hil_fill.bin")
    bsize, free = _free_bytes(board)
    try:
        # Fill most of it on the board itself (fast), so the failing transfer is short.
        board.exec(FILL.format(n=max(0, free - 32 * bsize)), timeout=120)
        _, left = _free_bytes(board)
        data = bytes(range(256)) * ((left + 16 * bsize) // 256)
        # refused up front (statvfs), and, without that check, when the board runs out of space
        for check_space in (True, False):
            with pytest.raises(NoSpaceError) as e:
                board.put(data, OVERFLOW, check_space=check_space)
            assert "ENOSPC" in str(e.value) or "28" in str(e.value), str(e.value)
            assert board.eval("s", pre=f"import os\ns = [n for n in os.listdir() if "
                                       f"n.startswith({OVERFLOW!r})]") == []
            assert _free_bytes(board)[1] == left, "the partial file's space was not given back"
    finally:
        _remove(board, OVERFLOW, "hil_fill.bin")
