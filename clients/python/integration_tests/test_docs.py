"""docs/integrations.md's Python examples (```python runnable```) run as written, each in its own Python
process of this venv, against the real server, as seed 003's agent in an org of its own (nothing else there)."""

import json
import os
import re
import subprocess
import sys
import unittest
from typing import List, Tuple

from hub import hub, server

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PAGE = os.path.join(REPO, "docs", "integrations.md")


def examples() -> List[Tuple[str, str]]:
    """The page's runnable Python blocks, each with the heading above it."""
    with open(PAGE, encoding="utf-8") as f:
        text = f.read()
    found = []
    for match in re.finditer(r"^```python runnable\n(.*?)^```", text, re.M | re.S):
        heading = re.findall(r"^## (.+)$", text[: match.start()], re.M)[-1]
        found.append((heading, match.group(1)))
    return found


class DocsExamplesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        token = json.loads(server().cli("token", "create", "--agent", "research_agent", "--org", "docs", "--perm", "read,write", "--json"))["token"]
        cls.env = {**os.environ, "KNOWHUB_URL": hub()["url"], "KNOWHUB_TOKEN": token, "PYTHONPATH": os.path.join(REPO, "clients", "python")}

    def run_example(self, heading: str) -> str:
        code = dict(examples())[heading]
        done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=self.env, capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, f"{heading}:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def test_the_page_has_one_example_per_python_framework(self) -> None:
        self.assertEqual([h for h, _ in examples()], ["LangGraph: the store", "LangChain: tools and a retriever"])
        for _, code in examples():
            self.assertLessEqual(len(code.strip().splitlines()), 12)

    def test_the_langgraph_example(self) -> None:
        out = self.run_example("LangGraph: the store")
        self.assertEqual(out, "Deploy billing: drain the old pods before switching the load balancer.\n")

    def test_the_langchain_example(self) -> None:
        lines = self.run_example("LangChain: tools and a retriever").splitlines()
        saved = re.match(r"^Saved (knowledge-\d{14}-[a-z0-9]{4}) \(types strategy; scopes org:docs; owner agent:research_agent", lines[0])
        self.assertIsNotNone(saved, lines[0])
        self.assertTrue(any(line.startswith("Found ") for line in lines), lines)
        self.assertIn(f'id="{saved.group(1)}"', "\n".join(lines))  # type: ignore[union-attr]
        self.assertTrue(lines[-1].startswith("Drain the old pods first. knowledge-"), lines[-1])


if __name__ == "__main__":
    unittest.main()
