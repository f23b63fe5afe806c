"""The builtin ops a set of models needs, as the engine itself reads them.

    python -m micronn_tools.opset a.tflite b.tflite     ->  "CONV_2D DEPTHWISE_CONV_2D ..."

`make firmware MODELS=...` uses this to link only those kernels (MICRONN_OPS). Custom ops are
reported on stderr and make it fail: the engine has no custom kernels to link.
"""
import sys

from . import engine


def ops_used(model_bytes_list):
    """Sorted builtin op names used by the models; raises ValueError for custom ops."""
    names, custom = set(), set()
    for data in model_bytes_list:
        for op in engine.Model(data).ops():
            (custom if op["builtin"] == 32 else names).add(op["name"])
    if custom:
        raise ValueError("custom ops have no kernels in this engine: " + ", ".join(sorted(custom)))
    return sorted(names)


def main(argv=None):
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print("usage: python -m micronn_tools.opset MODEL.tflite ...", file=sys.stderr)
        return 2
    try:
        blobs = []
        for p in paths:
            with open(p, "rb") as f:
                blobs.append(f.read())
        print(" ".join(ops_used(blobs)))
    except (OSError, ValueError, engine.MicronnError) as e:
        print("micronn opset: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
