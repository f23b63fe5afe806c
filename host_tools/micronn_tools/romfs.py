"""ROMFS images (MicroPython 1.25's read-only, memory-mapped filesystem) with aligned file data.

A file in a ROMFS is a slice of the memory the image lives in (flash on a real board), so
``micronn.load('/rom/model.tflite')`` hands the engine that memory directly: no heap copy. The
engine reads int32/float tensor data in place only when it is aligned, so unlike
``mpremote romfs build`` this builder starts every file's data on an ``align``-byte boundary of
the image (the ROMFS region itself is aligned on every board), by a padding record in front of
it. The format is MicroPython's (extmod/vfs_rom.c): records ``kind, length, payload`` with
unsigned LEB128-style big-endian varints; a varint may carry leading 0x80 bytes, which is what
makes every length here a fixed 4 bytes so that offsets are known before the image is built.
"""
import os

HEADER = b"\xd2\xcd\x31"  # the FILESYSTEM record kind (0x14a6b1) as a varint
KIND_PADDING = 1
KIND_DATA_VERBATIM = 2
KIND_FILE = 5
_LEN_BYTES = 4  # fixed-width lengths: up to 2^28 - 1 bytes per record


def _uint(value, width=None):
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.insert(0, 0x80 | (value & 0x7F))
        value >>= 7
    if width is not None:
        if len(out) > width:
            raise ValueError(f"ROMFS record too large ({width * 7}-bit length)")
        out = [0x80] * (width - len(out)) + out
    return bytes(out)


def build_image(files, align=16):
    """ROMFS image holding ``files`` (``[(name, bytes), ...]`` or ``{name: bytes}``) in its root
    directory, each file's data starting at a multiple of ``align`` from the image start."""
    items = list(files.items()) if isinstance(files, dict) else list(files)
    names = [n for n, _ in items]
    if len(set(names)) != len(names):
        raise ValueError("duplicate file names in the ROMFS image")
    head = len(HEADER) + _LEN_BYTES
    body = bytearray()
    for name, data in items:
        if not name or "/" in name or not name.isascii():
            raise ValueError(f"ROMFS file name must be plain ASCII without '/': {name!r}")
        data = bytes(data)
        raw = name.encode()
        prefix = _uint(len(raw)) + raw
        # file record header (kind + length) + name, then optional padding, then the data record
        start = head + len(body) + 1 + _LEN_BYTES + len(prefix)
        data_at = start + 1 + _LEN_BYTES
        pad = b""
        gap = -data_at % align
        if gap:
            gap = gap if gap >= 2 else gap + align  # a padding record takes 2 bytes at least
            pad = _uint(KIND_PADDING) + _uint(gap - 2) + bytes(gap - 2)
        payload = prefix + pad + _uint(KIND_DATA_VERBATIM) + _uint(len(data), _LEN_BYTES) + data
        body += _uint(KIND_FILE) + _uint(len(payload), _LEN_BYTES) + payload
    return HEADER + _uint(len(body), _LEN_BYTES) + bytes(body)


def build_from_paths(paths, align=16):
    """Image of the given local files, each under its base name."""
    return build_image([(os.path.basename(p), open(p, "rb").read()) for p in paths], align)


def file_offsets(image):
    """``{name: (offset, size)}`` of the files in an image's root (for tests and checks)."""
    def uint(pos):
        v = 0
        while True:
            b = image[pos]
            pos += 1
            v = (v << 7) | (b & 0x7F)
            if not b & 0x80:
                return v, pos

    if image[:3] != HEADER:
        raise ValueError("not a ROMFS image")
    size, pos = uint(3)
    end, out = pos + size, {}
    while pos < end:
        kind, pos = uint(pos)
        length, pos = uint(pos)
        nxt = pos + length
        if kind == KIND_FILE:
            nlen, p = uint(pos)
            name = image[p:p + nlen].decode()
            p += nlen
            while p < nxt:
                k, p = uint(p)
                ln, p = uint(p)
                if k == KIND_DATA_VERBATIM:
                    out[name] = (p, ln)
                    break
                p += ln
        pos = nxt
    return out
