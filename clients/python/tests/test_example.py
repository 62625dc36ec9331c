"""examples/python-agent against a real server: the scripted steps without a model (as a command
and as a function), and the model loop against an OpenAI-compatible stub."""

import asyncio
import json
import os
import subprocess
import sys
import unittest
import uuid

from support import REPO, LlmStub, shared

sys.path.insert(0, os.path.join(REPO, "examples", "python-agent"))
import agent  # noqa: E402

from knowhub import KnowHub  # noqa: E402


class ExampleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = shared()

    def test_scripted_steps_without_a_model(self) -> None:
        task = f"Bust a CDN cache {uuid.uuid4().hex[:8]}"
        lines = []
        report = asyncio.run(agent.run_agent(task, url=self.server.url, trace_id=f"trace-{uuid.uuid4().hex[:8]}", log=lines.append))
        self.assertEqual(report["mode"], "no-model")
        self.assertEqual(
            [s["tool"] for s in report["steps"]], ["goal", "knowledge_search", "knowledge_save", "knowledge_search", "knowledge_update", "goal"]
        )
        self.assertTrue(all(s["ok"] for s in report["steps"]), report["steps"])
        saved = report["saved"]
        # The next search and the next goal focus find what was saved.
        self.assertIn(saved, report["steps"][3]["text"])
        self.assertGreaterEqual(report["focus"][1], report["focus"][0] + 1)
        self.assertEqual(KnowHub(self.server.url).get(saved)["eval"]["helpful"], 1)
        self.assertTrue(lines[0].startswith("KnowHub "))

    def test_as_a_command(self) -> None:
        env = {**os.environ, "KNOWHUB_URL": self.server.url}
        env.pop("OPENAI_MODEL", None)
        done = subprocess.run(
            [sys.executable, os.path.join(REPO, "examples", "python-agent", "agent.py"), f"Rotate API keys {uuid.uuid4().hex[:6]}"],
            env=env, capture_output=True, text=True, encoding="utf-8", timeout=120,
        )  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("→ knowledge_save(", done.stdout)
        self.assertIn("<knowledge_entries", done.stdout)

    def test_the_model_loop(self) -> None:
        task = f"Purge the CDN after deploy {uuid.uuid4().hex[:8]}"
        turns = [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "knowledge_search", "arguments": json.dumps({"query": task})}}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "knowledge_save", "arguments": json.dumps(
                    {"task": task, "content": "Purge by surrogate key.", "types": ["strategy"]})}},
                {"id": "c3", "type": "function", "function": {"name": "knowledge_search", "arguments": "{not json"}}]},
            "Done: purge by surrogate key.",
        ]  # fmt: skip
        stub = LlmStub()
        stub.respond = lambda body: turns[min(len(stub.requests), len(turns)) - 1]
        try:
            report = asyncio.run(agent.run_agent(task, url=self.server.url, model="stub-model", base_url=stub.url, log=lambda _: None))
        finally:
            stub.close()
        self.assertEqual(report["answer"], "Done: purge by surrogate key.")
        self.assertEqual([(s["tool"], s["ok"]) for s in report["steps"]], [("knowledge_search", True), ("knowledge_save", True), ("knowledge_search", False)])
        first = stub.requests[0]
        self.assertEqual(first["model"], "stub-model")
        self.assertEqual([t["function"]["name"] for t in first["tools"]][:2], ["knowledge_search", "knowledge_save"])
        # The tool results went back to the model, knowledge as data.
        tool_messages = [m for m in stub.requests[2]["messages"] if m["role"] == "tool"]
        self.assertEqual([m["tool_call_id"] for m in tool_messages], ["c1", "c2", "c3"])
        self.assertTrue(tool_messages[1]["content"].startswith("Saved knowledge-"))
        self.assertIn("not valid JSON", tool_messages[2]["content"])


if __name__ == "__main__":
    unittest.main()
