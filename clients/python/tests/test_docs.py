"""The Python examples of the documentation run as written against a real server: every ```python
block of clients/python/README.md and docs/python.md (top-level ``await`` allowed)."""

import os
import re
import subprocess
import sys
import unittest

from support import PACKAGE_ROOT, REPO, shared

RUNNER = """
import ast, asyncio, sys
source = sys.stdin.read()
result = eval(compile(source, "<example>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), {"__name__": "__main__"})
if asyncio.iscoroutine(result):
    asyncio.run(result)
"""


def python_blocks(path: str) -> list:
    with open(path, encoding="utf-8") as f:
        return re.findall(r"^```python\n(.*?)^```", f.read(), flags=re.S | re.M)


class DocsExamplesTest(unittest.TestCase):
    def run_blocks(self, path: str, at_least: int) -> None:
        blocks = python_blocks(path)
        self.assertGreaterEqual(len(blocks), at_least, path)
        env = {**os.environ, "KNOWHUB_URL": shared().url, "PYTHONPATH": PACKAGE_ROOT}
        env.pop("KNOWHUB_TOKEN", None)
        for block in blocks:
            with self.subTest(block=block.splitlines()[0]):
                done = subprocess.run([sys.executable, "-c", RUNNER], input=block, env=env, capture_output=True, text=True, encoding="utf-8", timeout=120)
                self.assertEqual(done.returncode, 0, f"{path}:\n{block}\n{done.stderr}")

    def test_package_readme(self) -> None:
        self.run_blocks(os.path.join(PACKAGE_ROOT, "README.md"), 2)

    def test_docs_python(self) -> None:
        self.run_blocks(os.path.join(REPO, "docs", "python.md"), 5)

    def test_the_readme_example_is_five_lines(self) -> None:
        first = python_blocks(os.path.join(PACKAGE_ROOT, "README.md"))[0]
        self.assertEqual(len([line for line in first.splitlines() if line.strip()]), 5)


if __name__ == "__main__":
    unittest.main()
