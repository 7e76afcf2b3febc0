"""A free TCP port on the loopback for a server that a script or a test starts: the one helper that
scripts/compare_outputs.py, tests/serve_common.py and tests/docs_blocks.py import (tests reach it through
sys.path, as scripts do not import from tests/)."""
import socket


def free_port():
    """A port no socket is bound to right now (the kernel's pick for port 0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
