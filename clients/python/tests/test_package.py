"""The package builds with setuptools' standard backend into a wheel with py.typed, no dependencies
and Python >= 3.9; and its error codes are the TypeScript client's."""

import os
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


def builder() -> str:
    """A Python whose setuptools meets pyproject.toml's ``build-system.requires`` (setuptools >= 61, the first
    with PEP 621 metadata): this one, else ``python3`` on the PATH (an older setuptools would build an
    ``UNKNOWN-0.0.0`` package, ignoring [project])."""
    check = "import setuptools, sys; sys.exit(0 if tuple(int(p) for p in setuptools.__version__.split('.')[:2]) >= (61, 0) else 1)"
    for python in (sys.executable, shutil.which("python3")):
        if python and subprocess.run([python, "-c", check], capture_output=True).returncode == 0:
            return python
    raise AssertionError("no Python here has setuptools >= 61 (Debian: python3-setuptools) to build the package with")


class PackageTest(unittest.TestCase):
    def test_builds_with_the_standard_backend(self) -> None:
        """An sdist always (setuptools alone); a wheel too where setuptools can build one offline
        (setuptools >= 70.1, or the ``wheel`` package beside an older one)."""
        work = tempfile.mkdtemp(prefix="knowhub-build-")
        try:
            source = os.path.join(work, "src")
            shutil.copytree(PACKAGE_ROOT, source, ignore=shutil.ignore_patterns("__pycache__", "tests", "build", "*.egg-info"))
            out = os.path.join(work, "dist")
            os.makedirs(out)
            script = (
                "import importlib.util, sys, setuptools, setuptools.build_meta as b\n"
                "out = sys.argv[1]\n"  # the backend rewrites sys.argv
                "print(b.build_sdist(out))\n"
                "version = tuple(int(p) for p in setuptools.__version__.split('.')[:2])\n"
                "if version >= (70, 1) or importlib.util.find_spec('wheel'):\n"
                "    print(b.build_wheel(out))\n"
            )
            done = subprocess.run([builder(), "-c", script, out], cwd=source, capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, f"setuptools (Debian: python3-setuptools) builds the package:\n{done.stderr[-2000:]}")
            built = [line for line in done.stdout.strip().splitlines() if line.endswith((".tar.gz", ".whl"))]
            sdist = os.path.join(out, built[0])
            with tarfile.open(sdist) as tar:
                names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
                info = tar.extractfile(f"knowhub-{knowhub.__version__}/PKG-INFO").read().decode()  # type: ignore[union-attr]
            expected = {f"knowhub/{m}" for m in ("__init__.py", "client.py", "errors.py", "tools.py", "wrap.py", "_http.py", "_unicode.py", "_tool_specs.py", "py.typed")}
            self.assertLessEqual(expected, names)
            self.assertIn("Requires-Python: >=3.9", info)
            self.assertNotIn("Requires-Dist", info)
            for wheel in built[1:]:
                with zipfile.ZipFile(os.path.join(out, wheel)) as z:
                    self.assertLessEqual(expected, set(z.namelist()))
                    metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
                self.assertNotIn("Requires-Dist", metadata)
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
