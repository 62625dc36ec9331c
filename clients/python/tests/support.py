"""A real ``knowhub start`` for the tests (node bin/knowhub.js, a temp data folder, ``--port 0``),
and the TypeScript side as an oracle (its MCP tools at ``/mcp``, its wrappers through node)."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)  # clients/python
REPO = os.path.dirname(os.path.dirname(PACKAGE_ROOT))
sys.path.insert(0, PACKAGE_ROOT)

NODE = shutil.which("node") or "node"


def node_env(data_dir: str, **extra: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOWHUB_") and k != "DATABASE_URL"}
    env.update(
        KNOWHUB_DATA_DIR=data_dir,
        KNOWHUB_EMBEDDER="hashed",
        KNOWHUB_SECRET_KEY="AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=",
        KNOWHUB_LOG_LEVEL="warn",
        NO_COLOR="1",
    )
    env.update(extra)
    return env


class Server:
    """``knowhub start --host 127.0.0.1 --port 0 --no-packs`` on a new data folder; ``url`` once it listens."""

    def __init__(self, **env: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="knowhub-python-")
        self.env = node_env(os.path.join(self.dir, "data"), **env)
        self.process = subprocess.Popen(
            [NODE, os.path.join(REPO, "bin", "knowhub.js"), "start", "--host", "127.0.0.1", "--port", "0", "--no-packs"],
            cwd=self.dir,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.stderr: List[str] = []
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()  # type: ignore[arg-type]
        self.url = self._wait_for_url(60.0)

    def _wait_for_url(self, timeout: float) -> str:
        found: Dict[str, str] = {}

        def read() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                match = re.search(r"KnowHub listening on (http://\S+?)(?: |$)", line)
                if match and "url" not in found:
                    found["url"] = match.group(1)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.time() + timeout
        while time.time() < deadline:
            if "url" in found:
                return found["url"]
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("knowhub start did not print its URL:\n" + "".join(self.stderr))

    def cli(self, *args: str) -> str:
        """A one-shot ``knowhub`` command beside the server (it runs on the server through the lock file)."""
        done = subprocess.run(
            [NODE, os.path.join(REPO, "bin", "knowhub.js"), *args], cwd=self.dir, env=self.env, capture_output=True, text=True, encoding="utf-8"
        )
        if done.returncode != 0:
            raise RuntimeError(f"knowhub {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
        return done.stdout

    def mcp_call(self, name: str, arguments: Dict[str, Any], token: Optional[str] = None) -> Dict[str, Any]:
        """The TypeScript tool's answer to the same call: ``tools/call`` on the server's MCP endpoint."""
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}).encode()
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.url + "/mcp", data=body, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read().decode("utf-8"))
        if "error" in answer:
            raise RuntimeError(f"MCP error: {answer['error']}")
        return answer["result"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def ts_oracle(calls: List[Dict[str, Any]]) -> List[Any]:
    """The TypeScript wrappers (dist/core) on the same inputs: ``[{"fn": "neutralise", "arg": "…"}]``."""
    done = subprocess.run(
        [NODE, os.path.join(HERE, "wrap-oracle.mjs")], input=json.dumps(calls), capture_output=True, text=True, encoding="utf-8", check=True
    )
    return json.loads(done.stdout)
