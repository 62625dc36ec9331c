"""One real ``knowhub start`` for the integration tests (tests/support.py's ``Server``, in token mode),
with a token for alice of org acme and one for eve of org evil, stopped at exit."""

import atexit
import json
import os
import sys
from typing import Dict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

from support import Server  # noqa: E402

_hub: Dict[str, object] = {}


def hub() -> Dict[str, str]:
    """``{"url", "alice", "eve"}``: the server's URL and the two tokens (read and write each)."""
    if not _hub:
        server = Server()
        atexit.register(server.stop)
        make = lambda user, org: json.loads(server.cli("token", "create", "--user", user, "--org", org, "--perm", "read,write", "--json"))["token"]  # noqa: E731
        _hub.update(server=server, url=server.url, alice=make("alice", "acme"), eve=make("eve", "evil"))
    return {k: v for k, v in _hub.items() if isinstance(v, str)}


def server() -> Server:
    hub()
    return _hub["server"]  # type: ignore[return-value]
