"""pytest plugin: which board(s) tests run on, and the ``board`` fixture.

Options:
  --board NAME[,NAME...]|all   emulated board(s) from boards/*/board.json (default: the default
                               board; ``all`` = every emulated board; ``UNIX`` = the unix port).
                               With --port or labgrid, NAME says which board.json describes the
                               real board (so tests can compare sizes etc.).
  --port P                     a real board on a serial port: any pyserial URL
                               (/dev/ttyACM0, socket://host:port, rfc2217://host:port).
  --lg-env env.yaml            (labgrid's own option) use the serial port of labgrid's target:
                               RawSerialPort/USBSerialPort → its device, NetworkSerialPort →
                               rfc2217:// (or socket:// for protocol "raw").

Fixtures:
  board       a micronn_tools.board.Board, parametrized over the selected boards. The connection
              (and QEMU) is session-scoped per xdist worker, started on first use and stopped at
              session end; after a test that timed out, crashed the board or failed, the board is
              checked and hard-reset if it does not answer, so later tests are unaffected.
  board_spec  the BoardSpec (board.json) of ``board``; skips the test when unknown (--port
              without --board).

Parallel runs: ``pytest -n 2`` (pytest.ini sets ``--dist loadgroup``) keeps all tests of one
board on one worker (see pytest_xdist_make_scheduler), so each board boots once per run and
boards run side by side.
"""
import os
import sys
from dataclasses import dataclass
from typing import Optional

import pytest

# Test helpers (oracle.py, ...) and the host package, importable from every test directory.
_TESTS = os.path.dirname(os.path.abspath(__file__))
for _p in (_TESTS, os.path.join(os.path.dirname(_TESTS), "host_tools")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from micronn_tools import boards
from micronn_tools.board import Board, QemuBoard, SerialBoard, UnixBoard


@dataclass(frozen=True)
class BoardTarget:
    """One entry of the ``board`` parametrization: how to reach one board."""

    kind: str  # "qemu" | "unix" | "port" | "labgrid"
    spec: Optional[boards.BoardSpec]
    port: Optional[str] = None

    @property
    def id(self):
        if self.kind in ("qemu", "unix"):
            return self.spec.name
        return f"{self.kind}-{self.spec.name}" if self.spec else self.kind


def pytest_addoption(parser):
    group = parser.getgroup("micronn", "micronn boards")
    group.addoption("--board", action="store", default=None, metavar="NAME[,NAME...]|all",
                    help="board(s) to run board tests on (default: the default board; "
                         "'all': every emulated board)")
    group.addoption("--port", action="store", default=None, metavar="URL",
                    help="run board tests on a real board at this pyserial URL/path")
    group.addoption("--ci-slice", action="store_true", default=False,
                    help="CI's fixed slice (make test): port tests on one board per UART driver, "
                         "backend-bound sweeps on one board per kernel backend, full_only tests "
                         "skipped (make test-full runs everything)")
    group.addoption("--hil-fs-bytes", action="store", default="131072", metavar="N|max",
                    help="size of the host->board file round trip in tests/hil/test_fs.py "
                         "(default 128 KiB: uploads run at UART speed; 'max': all free space)")


def pytest_configure(config):
    # Emulated boards keep littlefs and ROMFS in a storage image that outlives QEMU. Each test
    # session starts from empty images of its own, so no test sees files an earlier run or a
    # developer's `make run` left behind. Each xdist worker gets a subdirectory of the session's:
    # one QEMU at a time owns an image, and a board another worker kept open would otherwise
    # make this worker's QEMU of that board run on a private copy whose writes do not persist.
    import tempfile
    # The suite boots the test firmware (make firmware-test builds it in build/test/<BOARD>), never
    # what `make firmware` / `make demo` left in build/<BOARD>; MICRONN_BUILD_DIR overrides.
    os.environ.setdefault("MICRONN_BUILD_DIR", str(boards.build_dir() / "test"))
    if not os.environ.get("MICRONN_STORAGE_DIR"):
        base = boards.build_dir() / "test-storage"
        base.mkdir(parents=True, exist_ok=True)
        os.environ["MICRONN_STORAGE_DIR"] = config._micronn_storage = tempfile.mkdtemp(
            prefix="session-", dir=base)
    elif os.environ.get("PYTEST_XDIST_WORKER") and not os.environ.get("MICRONN_STORAGE_WORKER"):
        os.environ["MICRONN_STORAGE_WORKER"] = os.environ["PYTEST_XDIST_WORKER"]
        os.environ["MICRONN_STORAGE_DIR"] = tempfile.mkdtemp(
            prefix=os.environ["PYTEST_XDIST_WORKER"] + "-", dir=os.environ["MICRONN_STORAGE_DIR"])
    config.addinivalue_line("markers", "emulated_only: needs an emulated board (QEMU)")
    config.addinivalue_line("markers", "needs_firmware(**features): needs a firmware built with "
                                       "these build_config() values (e.g. delegate=True)")
    config.addinivalue_line("markers", "serial_only: needs a board with a raw REPL "
                                       "(emulated or real; not UNIX)")
    config.addinivalue_line("markers", "full_only(why): a long check outside CI's slice "
                                       "(--ci-slice skips it; make test-full runs it)")
    if config.getoption("--board") or config.getoption("--port"):
        _targets(config)  # a bad board name is a usage error, reported once, up front


def pytest_unconfigure(config):
    storage = getattr(config, "_micronn_storage", None)
    if storage:
        import shutil
        shutil.rmtree(storage, ignore_errors=True)
        os.environ.pop("MICRONN_STORAGE_DIR", None)


def _labgrid_active(config):
    return bool(getattr(config.option, "lg_env", None) or os.environ.get("LG_ENV"))


def _spec_names(config):
    opt = config.getoption("--board")
    if not opt:
        return None
    names = []
    for part in opt.split(","):
        part = part.strip()
        if part == "all":
            names += [b.name for b in boards.emulated_boards()]
        elif part:
            names.append(part)
    return list(dict.fromkeys(names))


def _targets(config):
    """The selected boards, computed once per session (UsageError on a bad name)."""
    cached = getattr(config, "_micronn_targets", None)
    if cached is not None:
        return cached
    try:
        names = _spec_names(config)
        specs = [boards.get(n) for n in names] if names else None
        port = config.getoption("--port")
        if port or _labgrid_active(config):
            if specs and len(specs) > 1:
                raise pytest.UsageError("--port/labgrid talk to one board: give at most one "
                                        "--board NAME to describe it")
            kind = "port" if port else "labgrid"
            targets = [BoardTarget(kind, specs[0] if specs else None, port)]
        else:
            specs = specs or [boards.default()]
            if not specs:
                raise pytest.UsageError("--board all: no emulated boards in boards/")
            targets = [BoardTarget("qemu" if s.emulated else "unix", s) for s in specs]
    except boards.BoardConfigError as e:
        raise pytest.UsageError(str(e)) from None
    config._micronn_targets = targets
    return targets


def pytest_generate_tests(metafunc):
    if "board_target" in metafunc.fixturenames:
        targets = _targets(metafunc.config)
        metafunc.parametrize("board_target", targets, ids=[t.id for t in targets],
                             scope="session")


# CI's slice (--ci-slice, what `make test` runs; `make test-full` runs everything). Tests of the
# port's console link and filesystem run on the first selected board of each UART driver (the
# others link the same port code and driver: mpconfigboard.mk's UART_DRIVER); sweeps whose result
# depends on the kernels run on the first selected board of each kernel backend set
# (MICRONN_KERNELS). Every other board test runs on every board.
PER_UART_DRIVER = ("tests/hil/test_transfer.py", "tests/hil/test_mpremote.py",
                   "tests/hil/test_harness.py", "tests/hil/test_fs.py")
PER_KERNEL_BACKENDS = ("tests/device/test_device_delegate.py", "tests/device/test_device_gen.py")


def _slice_skip(config, item, target):
    """Why CI's slice leaves this test out, or None."""
    mark = item.get_closest_marker("full_only")
    if mark:
        return "CI slice: " + (mark.args[0] if mark.args else "a long check") + " (make test-full)"
    if target is None or target.kind != "qemu":
        return None
    path = item.nodeid.split("::")[0]
    for files, fact in ((PER_UART_DRIVER, "uart_driver"), (PER_KERNEL_BACKENDS, "kernel_backends")):
        if path in files:
            same = [t.spec.name for t in _targets(config) if t.kind == "qemu"
                    and getattr(t.spec, fact) == getattr(target.spec, fact)]
            if same and same[0] != target.spec.name:
                return (f"CI slice: {same[0]} runs it ({fact} {getattr(target.spec, fact)} as "
                        f"{target.spec.name}; make test-full runs every board)")
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        target = getattr(getattr(item, "callspec", None), "params", {}).get("board_target")
        if config.getoption("--ci-slice"):
            why = _slice_skip(config, item, target)
            if why:
                item.add_marker(pytest.mark.skip(reason=why))
                continue
        if target is None:
            continue
        if item.get_closest_marker("emulated_only") and target.kind != "qemu":
            item.add_marker(pytest.mark.skip(reason="needs an emulated board"))
        if item.get_closest_marker("serial_only") and target.kind == "unix":
            item.add_marker(pytest.mark.skip(reason="the UNIX board has no raw REPL/device"))


# Tests that build into the same directories run on one worker, one after the other.
SHARED_BUILD_DIRS = {
    "tests/docs/": "builds:upstream-docs",
    "tests/build/test_upstream_ports.py": "builds:upstream-docs",
    "tests/build/test_op_selection.py": "builds:test-builds",
    "tests/build/test_frozen_py_model.py": "builds:test-builds",
}
# Work units that take minutes each (firmware and harness builds), handed out before the board
# groups so that none of them is left to run alone at the end (longest first, as in LPT
# scheduling); the other units follow, the largest first.
LONG_UNITS_FIRST = ("builds:", "tests/build/", "tests/kernels/", "tests/fuzz/")


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadgroup`` (pytest.ini): one xdist work unit per board.

    All tests of a board then run on one worker, which boots that board once. (xdist's own
    ``xdist_group`` marks cannot do this here: xdist 3.8 renames ``item._nodeid``, which
    pytest 9 no longer reads.) Tests that take no board are scheduled one by one, except
    those sharing build directories (SHARED_BUILD_DIRS)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    import re
    from collections import OrderedDict
    from xdist.scheduler import LoadScopeScheduling

    try:
        names = set(boards.names())
    except boards.BoardConfigError:
        names = set()
    param_re = re.compile(r"\[([^\]]*)\]$")

    class LongFirstQueue(OrderedDict):
        """xdist's queue of work units, handing out LONG_UNITS_FIRST before the rest."""

        def popitem(self, last=True):
            if last or not self:
                return super().popitem(last)

            def rank(scope):
                for i, prefix in enumerate(LONG_UNITS_FIRST):
                    if scope.startswith(prefix):
                        return (0, i, -len(self[scope]))
                return (1, 0, -len(self[scope]))

            scope = min(self, key=rank)
            return scope, self.pop(scope)

    class BoardScheduling(LoadScopeScheduling):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.workqueue = LongFirstQueue()

        def _split_scope(self, nodeid):
            nodeid = nodeid.split("@", 1)[0]
            for prefix, group in SHARED_BUILD_DIRS.items():
                if nodeid.startswith(prefix):
                    return group
            m = param_re.search(nodeid)
            for part in (m.group(1).split("-") if m else ()):
                if part in names:
                    return "board:" + part
            return nodeid

    return BoardScheduling(config, log)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


def _labgrid_url(request):
    """The pyserial URL of labgrid's target's serial port (kept thin on purpose)."""
    from labgrid.resource import NetworkSerialPort
    from labgrid.resource.base import SerialPort
    target = request.getfixturevalue("target")
    for res in target.resources:
        if isinstance(res, NetworkSerialPort):
            scheme = "rfc2217" if res.protocol == "rfc2217" else "socket"
            return f"{scheme}://{res.host}:{res.port}", res.speed
        if isinstance(res, SerialPort) and getattr(res, "port", None):
            return res.port, res.speed
    raise pytest.UsageError(f"labgrid target {target.name!r} has no serial port resource "
                            "(RawSerialPort, USBSerialPort or NetworkSerialPort)")


def _connect(target, request) -> Board:
    spec = target.spec
    if target.kind == "port":
        return SerialBoard(target.port, spec=spec)
    if target.kind == "labgrid":
        url, speed = _labgrid_url(request)
        return SerialBoard(url, spec=spec, baudrate=speed)
    if not spec.firmware_path.is_file():
        pytest.fail(f"{spec.name}: firmware {spec.firmware_path} does not exist; {REMEDY}",
                    pytrace=False)
    return QemuBoard(spec) if target.kind == "qemu" else UnixBoard(spec)


# What `make firmware-test` builds: the suite's emulated boards must boot exactly this.
TEST_FIRMWARE = {"ops_all": True, "types": ["int8", "int16", "float32", "hybrid"],
                 "variants_all": True, "patches": True, "delegate": True, "mismatch": []}
REMEDY = "rebuild it with `make firmware-test`"


def _models_dir():
    from pathlib import Path
    from micronn_tools import repo_root
    return Path(os.environ.get("MICRONN_MODELS_DIR") or Path(repo_root()).parent / "shared" / "models")


def firmware_config(conn):
    """The booted firmware's build_config() (asked once per connection), or None when the
    firmware has none (not built from this tree)."""
    if not hasattr(conn, "_micronn_build_config"):
        try:
            conn._micronn_build_config = conn.eval(
                "(__import__('_micronn').build_config(), sorted(__import__('_micronn').models))")
        except Exception:  # noqa: BLE001 - an old or foreign firmware: reported by the caller
            conn._micronn_build_config = None
    return conn._micronn_build_config


def _test_firmware_problem(conn, target):
    """Why the firmware an emulated board booted is not the test firmware, or None."""
    got = firmware_config(conn)
    where = f"{target.spec.name}: {target.spec.firmware_path}"
    if got is None:
        return f"{where} has no micronn.build_config(): not a firmware of this tree; {REMEDY}"
    cfg, models = got
    wrong = [f"{k} {cfg.get(k)!r} (the suite needs {v!r})" for k, v in TEST_FIRMWARE.items()
             if cfg.get(k) != v]
    missing = sorted({p.stem for p in _models_dir().glob("*.tflite")} - set(models))
    if missing:
        wrong.append("built-in models lack " + ", ".join(missing))
    if not wrong:
        return None
    return f"{where} is not the test suite's firmware: " + "; ".join(wrong) + f"; {REMEDY}"


# Open board connections of this worker, by target id: a board's QEMU is suspended while the
# worker runs tests of other boards or none (pytest_runtest_teardown), instead of spinning.
_LIVE = {}


def _target_id(item):
    t = getattr(getattr(item, "callspec", None), "params", {}).get("board_target") if item else None
    return t.id if t is not None else None


def pytest_runtest_teardown(item, nextitem):
    tid = _target_id(item)
    if tid in _LIVE and _target_id(nextitem) != tid:
        suspend = getattr(_LIVE[tid], "suspend", None)
        if suspend:
            suspend()


@pytest.fixture(scope="session")
def _board_conn(board_target, request):
    conn = _connect(board_target, request)
    _LIVE[board_target.id] = conn
    try:
        if board_target.kind in ("qemu", "unix"):
            problem = _test_firmware_problem(conn, board_target)
            if problem:
                pytest.fail(problem, pytrace=False)
        yield conn
    finally:
        _LIVE.pop(board_target.id, None)
        conn.close()


def _check_needs_firmware(conn, node):
    """A test marked needs_firmware(feature=value, ...) fails at once, naming what the booted
    firmware lacks and how to build one that has it (a real board may run any firmware)."""
    marks = list(node.iter_markers("needs_firmware"))
    if not marks:
        return
    got = firmware_config(conn)
    cfg = got[0] if got else {}
    for mark in marks:
        for key, want in mark.kwargs.items():
            if cfg.get(key) != want:
                pytest.fail(f"this test needs a firmware with {key}={want!r}, the board's has "
                            f"{cfg.get(key)!r}: build it with `make firmware-test` (or "
                            f"`make firmware ... OPS=all`)", pytrace=False)


def _healthy(conn):
    ping = getattr(conn, "ping", None)
    return ping() if ping else True


@pytest.fixture
def board(_board_conn, request) -> Board:
    conn = _board_conn
    if getattr(conn, "dirty", False) and not _healthy(conn):
        conn.hard_reset()
    _check_needs_firmware(conn, request.node)
    yield conn
    rep = getattr(request.node, "rep_call", None)
    if getattr(conn, "dirty", False) or (rep is not None and rep.failed):
        if not _healthy(conn):
            conn.hard_reset()


@pytest.fixture
def hil_fs_bytes(request):
    """Cap for the upload round-trip test; None = as much as the filesystem holds."""
    value = request.config.getoption("--hil-fs-bytes")
    return None if value == "max" else int(value, 0)


@pytest.fixture
def board_spec(board) -> boards.BoardSpec:
    if board.spec is None:
        pytest.skip("board.json of this board is unknown (pass --board NAME with --port or labgrid)")
    return board.spec
