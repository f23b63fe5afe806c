"""Host-side tools for micronn (the `micronn` CLI, board control, test harness support)."""
import os

__version__ = "0.1.0"


def repo_root():
    """The micronn checkout this package was installed from (editable install)."""
    env = os.environ.get("MICRONN_ROOT")
    if env:
        return os.path.abspath(env)
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
