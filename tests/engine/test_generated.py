"""Generated engine files are what their generators write now (one place per fact: the op lists)."""
import pathlib
import subprocess
import sys

ENGINE = pathlib.Path(__file__).resolve().parents[2] / "usermod" / "micronn" / "engine"


def test_op_selection_defaults_are_current():
    r = subprocess.run([sys.executable, str(ENGINE / "tools" / "gen_opsel.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_listed_op_has_a_default():
    import re
    opsel = (ENGINE / "mn_opsel.h").read_text()
    listed = re.findall(r"^MN_OP\((\w+),", (ENGINE / "mn_ops.h").read_text(), re.M) + \
        re.findall(r"^MN_CUSTOM_OP\((\w+),", (ENGINE / "mn_custom_ops.h").read_text(), re.M)
    assert len(listed) > 100
    for name in listed:
        assert "#define MICRONN_OP_%s MICRONN_OPS_ALL" % name in opsel
