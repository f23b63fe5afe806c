"""micronn_tools.convert on the host (no board needed): forms, names, the firmware model table."""
import os
import re
import subprocess
import sys

import pytest

from devhelp import model_bytes, model_path
from micronn_tools import convert

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("stem,name", [("person_detect", "person_detect"), ("my-model.v2", "my_model_v2"),
                                       ("3d net", "_3d_net"), ("", "model")])
def test_sanitize_name(stem, name):
    assert convert.sanitize_name(stem + ".tflite") == name


def _c_array_bytes(text):
    body = text[text.index("{") + 1:text.index("};")]
    return bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", body))


def test_forms(tmp_path):
    data = model_bytes("hello_world_int8")
    assert convert.convert(data, tmp_path / "hw.c") == "hw"
    c = (tmp_path / "hw.c").read_text()
    assert "__attribute__((aligned(16)))" in c and f"const size_t hw_len = {len(data)};" in c
    assert _c_array_bytes(c) == data
    convert.convert(data, tmp_path / "hw.h", name="hello")
    h = (tmp_path / "hw.h").read_text()
    assert "static const uint8_t hello[" in h and _c_array_bytes(h) == data
    convert.convert(data, tmp_path / "hw.bin")
    assert (tmp_path / "hw.bin").read_bytes() == data
    convert.convert(data, tmp_path / "hw.py")
    ns = {}
    exec((tmp_path / "hw.py").read_text(), ns)
    assert ns["hw"] == data
    with pytest.raises(convert.ConvertError):
        convert.convert(data, tmp_path / "hw.txt")
    with pytest.raises(convert.ConvertError):
        convert.convert(b"not a model at all", tmp_path / "x.bin")


def test_c_form_compiles(tmp_path):
    data = model_bytes("hello_world_int8")
    convert.convert(data, tmp_path / "m.c")
    (tmp_path / "main.c").write_text(
        '#include <stdint.h>\n#include <stddef.h>\n#include <stdio.h>\n'
        'extern const uint8_t m[]; extern const size_t m_len;\n'
        'int main(void){ printf("%u %u\\n", (unsigned)m_len, (unsigned)((uintptr_t)m % 16)); return 0; }\n')
    exe = tmp_path / "a.out"
    subprocess.run(["cc", "-o", str(exe), str(tmp_path / "main.c"), str(tmp_path / "m.c")], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(len(data)), "0"]


def test_table_cli(tmp_path):
    out = tmp_path / "micronn_models.h"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "host_tools"))
    subprocess.run([sys.executable, "-m", "micronn_tools.convert", "--table", str(out),
                    model_path("hello_world_int8"), model_path("simple_add_model"),
                    model_path("hello_world_int8")], check=True, env=env)
    text = out.read_text()
    assert "#define MICRONN_NUM_MODELS (2)" in text
    assert '"hello_world_int8"' in text and '"simple_add_model"' in text
    assert text.count("__attribute__((aligned(16)))") == 2
    subprocess.run([sys.executable, "-m", "micronn_tools.convert", "--table", str(out)], check=True, env=env)
    assert "#define MICRONN_NUM_MODELS (0)" in out.read_text()


def test_cli_single(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "host_tools"))
    subprocess.run([sys.executable, "-m", "micronn_tools.convert", model_path("hello_world_float"),
                    "-o", str(tmp_path / "out.bin")], check=True, env=env)
    assert (tmp_path / "out.bin").read_bytes() == model_bytes("hello_world_float")
