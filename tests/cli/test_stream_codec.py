"""The streamed put's wire encoding (host_tools/micronn_tools/board.py: _escape on the host,
_mn.recv on the board, micronn_tools/_mn_board.py), checked without a board by the UNIX build reading the stream on stdin."""
import subprocess

import pytest


def test_stream_codec_on_block_boundaries(tmp_path):
    """The streamed put's escaping (host _escape, board _mn.recv) round-trips any byte, also
    when an escape pair straddles the board's block boundary. Run by the UNIX build with the
    stream on its stdin: no board needed, every boundary position forced."""
    from micronn_tools import boards
    from micronn_tools.board import _HELPER, _escape
    try:
        exe = boards.get("UNIX").require_firmware()
    except boards.FirmwareMissing as e:
        pytest.fail(str(e), pytrace=False)
    block = 16
    for shift in range(block + 1):
        data = bytes(range(7)) * 3 + b"A" * shift + b"\x03\x1b" * 20 + b"\x1b@\x1bA\x1b" + bytes(range(256))
        enc = _escape(data)
        script = tmp_path / "recv.py"
        script.write_text(_HELPER + f"_mn.recv('out.bin', {len(enc)}, {block})\n")
        subprocess.run([str(exe), str(script)], input=enc, cwd=tmp_path, check=True, timeout=30)
        assert (tmp_path / "out.bin").read_bytes() == data, f"shift {shift}"


def test_stream_has_no_repl_control_characters():
    """Data still on its way when the board resets reaches its REPL: it must not hold the
    characters that switch REPL modes or soft-reset (Ctrl-A..Ctrl-E)."""
    from micronn_tools.board import _escape
    enc = _escape(bytes(range(256)) * 4)
    assert not set(enc) & {1, 2, 3, 4, 5}
    assert all(enc[i + 1] in b"@ABCDE" for i in range(len(enc)) if enc[i] == 0x1b)


def test_helper_version_is_current():
    """V in _mn_board.py is the helper's version (helper_id): a test firmware whose frozen helper
    is another version is not used (the host pastes its own); an edit without a new V would be."""
    from micronn_tools.board import _HELPER, _HELPER_V, helper_id
    assert _HELPER_V.search(_HELPER).group(1) == helper_id(), \
        f"host_tools/micronn_tools/_mn_board.py: set V = '{helper_id()}'"


def test_helper_binds_one_global(tmp_path):
    """Pasted on a board, the helper adds one name to the REPL's globals (tests fill them under
    heap_lock) and nothing else."""
    from micronn_tools import boards
    from micronn_tools.board import _HELPER
    exe = boards.get("UNIX").require_firmware()
    script = tmp_path / "g.py"
    script.write_text("_g = set(globals())\n" + _HELPER + "print(sorted(set(globals()) - _g - {'_g'}))\n")
    out = subprocess.run([str(exe), str(script)], cwd=tmp_path, check=True, timeout=30,
                         capture_output=True, text=True).stdout
    assert out.strip() == "['_mn']"
