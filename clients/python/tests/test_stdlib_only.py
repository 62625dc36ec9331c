"""The package imports nothing outside the standard library (and nothing from this repository's tests)."""

import ast
import os
import sys
import tempfile
import unittest

from support import PACKAGE_ROOT

# Python 3.9 has no sys.stdlib_module_names: a fixed list of standard modules instead.
FALLBACK = {
    "__future__", "abc", "argparse", "array", "ast", "asyncio", "atexit", "base64", "binascii", "bisect", "builtins", "bz2", "calendar", "cgi",
    "cmath", "codecs", "collections", "concurrent", "configparser", "contextlib", "contextvars", "copy", "csv", "ctypes", "dataclasses",
    "datetime", "decimal", "difflib", "email", "enum", "errno", "fnmatch", "fractions", "functools", "gc", "getpass", "gettext", "glob",
    "gzip", "hashlib", "heapq", "hmac", "html", "http", "importlib", "inspect", "io", "ipaddress", "itertools", "json", "keyword", "locale",
    "logging", "lzma", "math", "mimetypes", "multiprocessing", "numbers", "operator", "os", "pathlib", "pickle", "platform", "pprint",
    "queue", "random", "re", "secrets", "select", "selectors", "shlex", "shutil", "signal", "socket", "socketserver", "sqlite3", "ssl",
    "stat", "statistics", "string", "struct", "subprocess", "sys", "sysconfig", "tempfile", "textwrap", "threading", "time", "timeit",
    "traceback", "types", "typing", "unicodedata", "unittest", "urllib", "uuid", "warnings", "weakref", "xml", "zipfile", "zlib", "zoneinfo",
}  # fmt: skip
STDLIB = set(getattr(sys, "stdlib_module_names", FALLBACK))


def imported_modules(path: str) -> set:
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("__import__", "import_module"):
            found.add("<dynamic import>")
    return found


class StdlibOnlyTest(unittest.TestCase):
    def test_every_module_of_the_package_imports_only_the_standard_library(self) -> None:
        package = os.path.join(PACKAGE_ROOT, "knowhub")
        files = [os.path.join(package, f) for f in sorted(os.listdir(package)) if f.endswith(".py")]
        self.assertGreater(len(files), 5)
        outside = {f"{os.path.basename(f)}: {m}" for f in files for m in imported_modules(f) if m not in STDLIB}
        self.assertEqual(outside, set())

    def test_each_integration_imports_its_own_framework_only(self) -> None:
        """knowhub.integrations: the package and its helpers import the standard library only; each module imports
        its framework (installed with the extra of the same name) and nothing else outside the standard library."""
        folder = os.path.join(PACKAGE_ROOT, "knowhub", "integrations")
        allowed = {"langgraph.py": {"langgraph"}, "langchain.py": {"langchain_core"}}
        files = sorted(f for f in os.listdir(folder) if f.endswith(".py"))
        self.assertEqual(files, ["__init__.py", "_require.py", "_store_map.py", "langchain.py", "langgraph.py"])
        for name in files:
            outside = {m for m in imported_modules(os.path.join(folder, name)) if m not in STDLIB} - ({"<dynamic import>"} if name == "_require.py" else set())
            self.assertEqual(outside, allowed.get(name, set()), name)

    def test_the_check_catches_a_third_party_import(self) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, encoding="utf-8") as f:
            f.write("import json\nimport requests\nfrom httpx import Client\nfrom . import wrap\n")
            probe = f.name
        try:
            self.assertEqual({m for m in imported_modules(probe) if m not in STDLIB}, {"requests", "httpx"})
        finally:
            os.remove(probe)

    def test_the_example_needs_nothing_else_either(self) -> None:
        example = os.path.join(os.path.dirname(os.path.dirname(PACKAGE_ROOT)), "examples", "python-agent")
        files = [os.path.join(example, f) for f in os.listdir(example) if f.endswith(".py")]
        self.assertGreater(len(files), 0)
        outside = {f"{os.path.basename(f)}: {m}" for f in files for m in imported_modules(f) if m not in STDLIB | {"knowhub"}}
        self.assertEqual(outside, set())


if __name__ == "__main__":
    unittest.main()
