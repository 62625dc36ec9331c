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


# -- an OpenAI-compatible stub (the one stand-in allowed: the LLM) -----------------------------
import http.server  # noqa: E402


class LlmStub:
    """A real OpenAI-compatible ``/v1/chat/completions`` on 127.0.0.1: ``respond(body)`` answers each
    request (a string is the assistant's message, a dict is the message itself). Every request is kept."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.respond = self.knowhub_tasks
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length).decode("utf-8") or "{}")
                stub.requests.append(body)
                answer = stub.respond(body)
                message = answer if isinstance(answer, dict) else {"role": "assistant", "content": answer}
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                payload = {
                    "id": f"chatcmpl-{len(stub.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "stub"),
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                }
                data = json.dumps(payload).encode("utf-8")
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def knowhub_tasks(body: Dict[str, Any]) -> str:
        """What KnowHub's own LLM tasks get: an evolved entry, a merge, extraction proposals and decisions."""
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        prompt = "\n".join(str(m.get("content")) for m in body.get("messages", []))
        if schema == "evolved_entry" or "rewrite the content of one knowledge entry" in prompt:
            return json.dumps({"content": "Use undetected_chromedriver and wait 2-5 s between requests.", "change": "added the delay"})
        if schema == "merged_entry" or "merge near-duplicate" in prompt:
            # The lead entry's text: KnowHub keeps a merged text only when the entries say it (issue 43).
            shown = str(body.get("messages", [{}, {}])[1].get("content"))
            return json.dumps({"content": json.loads(shown[shown.index("\n") + 1 :])[0]["content"]})
        if schema == "knowledge_decisions" or "free of duplicates" in prompt:
            return json.dumps({"decisions": []})
        if schema == "knowledge_proposals" or "message_ids" in prompt:
            lesson = {"types": ["strategy"], "task": "Install dependencies in this repository", "content": "Use pnpm, not npm: the lock file is pnpm-lock.yaml.",
                      "tags": {"domain": "tooling"}, "message_ids": ["m1"]}  # fmt: skip
            return json.dumps({"entries": [lesson]})
        return "unused"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


_shared: Dict[str, Any] = {}


def shared() -> Server:
    """One server for the whole run (local mode, an LLM stub, an agent home with agent ``deployer``), stopped at exit."""
    if "server" not in _shared:
        import atexit

        stub = LlmStub()
        home = tempfile.mkdtemp(prefix="knowhub-python-agents-")
        os.makedirs(os.path.join(home, "deployer"))
        with open(os.path.join(home, "deployer", "knowledge.md"), "w", encoding="utf-8") as f:
            f.write("## @deploy: ship a release\nContract: run the checks first.\n")
        server = Server(
            KNOWHUB_LLM_URL=stub.url, KNOWHUB_LLM_MODEL="stub", KNOWHUB_AGENT_HOME=home, KNOWHUB_AGENT="research_agent", KNOWHUB_ORG="cybertogether"
        )
        _shared.update(server=server, stub=stub)

        def stop() -> None:
            server.stop()
            stub.close()
            shutil.rmtree(home, ignore_errors=True)

        atexit.register(stop)
    return _shared["server"]


def shared_stub() -> LlmStub:
    shared()
    return _shared["stub"]
