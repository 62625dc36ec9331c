"""The package builds with its own backend (standard library only) into a wheel with py.typed, no
dependencies (the integrations' frameworks only as extras) and Python >= 3.9; the documented install works in a fresh venv with no package index;
and its error codes are the TypeScript client's."""

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

from support import NODE, PACKAGE_ROOT, REPO

import knowhub
from knowhub import CLIENT_ERROR_CODES, ERROR_CODES, SERVER_ERROR_CODES

EXPECTED = {f"knowhub/{m}" for m in ("__init__.py", "client.py", "errors.py", "tools.py", "wrap.py", "_http.py", "_unicode.py", "_tool_specs.py", "py.typed")}
EXPECTED |= {f"knowhub/integrations/{m}" for m in ("__init__.py", "_require.py", "_store_map.py", "langgraph.py", "langchain.py")}
#: Nothing is required to install the package; each framework comes with its extra, only when asked for.
EXTRAS = [
    "Provides-Extra: langchain",
    'Requires-Dist: langchain-core>=1.0,<2; extra == "langchain"',
    "Provides-Extra: langgraph",
    'Requires-Dist: langgraph>=1.0,<2; extra == "langgraph"',
]


def requirements(metadata: str) -> list:
    """The core metadata's lines about what the package needs (none) and its extras bring."""
    return [line for line in metadata.splitlines() if line.startswith(("Requires-Dist:", "Provides-Extra:"))]


class PackageTest(unittest.TestCase):
    def test_builds_with_its_own_backend(self) -> None:
        """A wheel and an sdist from the in-tree backend, in a Python run without site-packages (``-S``:
        no setuptools, no wheel), from a copy of the folder."""
        work = tempfile.mkdtemp(prefix="knowhub-build-")
        try:
            source = os.path.join(work, "src")
            shutil.copytree(PACKAGE_ROOT, source, ignore=shutil.ignore_patterns("__pycache__", "tests", "build", "*.egg-info"))
            out = os.path.join(work, "dist")
            os.makedirs(out)
            script = "import sys; sys.path.insert(0, '_backend'); import knowhub_backend as b; print(b.build_sdist(sys.argv[1])); print(b.build_wheel(sys.argv[1]))"
            done = subprocess.run([sys.executable, "-S", "-c", script, out], cwd=source, capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr[-2000:])
            sdist, wheel = done.stdout.strip().splitlines()
            with tarfile.open(os.path.join(out, sdist)) as tar:
                names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
                info = tar.extractfile(f"knowhub-{knowhub.__version__}/PKG-INFO").read().decode()  # type: ignore[union-attr]
            self.assertLessEqual(EXPECTED | {"pyproject.toml", "_backend/knowhub_backend.py"}, names)
            self.assertIn("Requires-Python: >=3.9", info)
            self.assertEqual(requirements(info), EXTRAS)
            self.assertEqual(wheel, f"knowhub-{knowhub.__version__}-py3-none-any.whl")
            with zipfile.ZipFile(os.path.join(out, wheel)) as z:
                self.assertLessEqual(EXPECTED, set(z.namelist()))
                metadata = z.read(f"knowhub-{knowhub.__version__}.dist-info/METADATA").decode()
                record = z.read(f"knowhub-{knowhub.__version__}.dist-info/RECORD").decode()
            self.assertEqual(requirements(metadata), EXTRAS)
            self.assertIn("Name: knowhub", metadata)
            self.assertIn("knowhub/client.py,sha256=", record)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def test_reads_pyproject_without_tomllib_as_tomllib_does(self) -> None:
        try:
            import tomllib  # type: ignore[import-not-found]
        except ImportError:
            self.skipTest("tomllib arrived in Python 3.11")
        sys.path.insert(0, os.path.join(PACKAGE_ROOT, "_backend"))
        try:
            import knowhub_backend  # type: ignore[import-not-found]
        finally:
            sys.path.pop(0)
        with open(os.path.join(PACKAGE_ROOT, "pyproject.toml"), "rb") as f:
            data = f.read()
        self.assertEqual(knowhub_backend.read_project_table(data.decode()), tomllib.loads(data.decode())["project"])

    def test_the_documented_install_works_in_a_fresh_venv(self) -> None:
        """docs/python.md's ``pip install`` line, as written, in a new venv (the pip and setuptools its
        Python bundles; setuptools 65 has no bdist_wheel), with no package index (``--no-index``)."""
        with open(os.path.join(REPO, "docs", "python.md"), encoding="utf-8") as f:
            doc = f.read()
        lines = [line.split("#")[0].strip() for line in re.findall(r"^pip install .*$", doc, re.M)]
        self.assertEqual(lines, ["pip install ./clients/python"])
        work = tempfile.mkdtemp(prefix="knowhub-venv-")
        try:
            venv = os.path.join(work, "venv")
            subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True)
            python = os.path.join(venv, "bin", "python")
            args = lines[0].split()[2:]
            done = subprocess.run([python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", *args], cwd=REPO, capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
            used = subprocess.run([python, "-c", "import knowhub, os; print(knowhub.__version__, os.path.dirname(knowhub.__file__))"], cwd=work, capture_output=True, text=True, check=True)
            version, where = used.stdout.split()
            self.assertEqual(version, knowhub.__version__)
            self.assertTrue(where.startswith(venv), where)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def test_error_codes_are_the_typescript_clients(self) -> None:
        script = (
            "const { ErrorCode } = await import('./dist/core/errors.js');"
            "const { ClientErrorCode } = await import('./dist/client/errors.js');"
            "console.log(JSON.stringify({ server: Object.values(ErrorCode), client: Object.values(ClientErrorCode) }))"
        )
        done = subprocess.run([NODE, "--input-type=module", "-e", script], cwd=REPO, capture_output=True, text=True, check=True)
        import json

        codes = json.loads(done.stdout)
        self.assertEqual(set(SERVER_ERROR_CODES), set(codes["server"]))
        self.assertEqual(set(CLIENT_ERROR_CODES), set(codes["client"]))
        self.assertEqual(ERROR_CODES, SERVER_ERROR_CODES | CLIENT_ERROR_CODES)


if __name__ == "__main__":
    unittest.main()
