"""The package's build backend (PEP 517, PEP 660), in the tree and on the standard library alone.

Why not setuptools: `pip install ./clients/python` must work with the pip and setuptools a fresh
Debian or venv has, offline. setuptools before 70.1 builds no wheel without the separate ``wheel``
package (``invalid command 'bdist_wheel'``), and asking for a newer one (``requires``) makes pip
fetch it from an index. This package is pure Python with no dependencies, so its wheel is a zip of
``knowhub/`` plus three metadata files: written here, it needs nothing to be installed first
(``requires = []``), on any pip since 19.1 (``backend-path``).

The metadata comes from ``pyproject.toml``'s ``[project]`` table (read with ``tomllib`` where
Python has it, 3.11+, else by the small reader below, which understands the plain
``key = "value"`` lines this file uses, and the ``[project.optional-dependencies]`` table of the
extras; a test checks both agree).
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "knowhub"
#: What goes into the sdist beside the package.
SDIST_FILES = ("pyproject.toml", "README.md", "_backend/knowhub_backend.py")
#: A fixed time for the zip entries, so the same sources give the same wheel (1980-01-01, zip's epoch).
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def project() -> Dict[str, object]:
    """The ``[project]`` table of pyproject.toml."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        data = f.read()
    try:
        import tomllib  # type: ignore[import-not-found]

        return dict(tomllib.loads(data.decode("utf-8"))["project"])
    except ImportError:
        return read_project_table(data.decode("utf-8"))


def read_project_table(text: str) -> Dict[str, object]:
    """``[project]``'s ``key = "string"``, ``key = ["a", "b"]`` (on one line or several) and ``key = { text = "…" }``,
    and ``[project.optional-dependencies]``'s ``extra = ["a", "b"]`` as ``table["optional-dependencies"]`` (Python < 3.11)."""
    table: Dict[str, object] = {}
    extras: Dict[str, object] = {}
    inside: Optional[Dict[str, object]] = None
    lines: List[str] = []
    for line in text.splitlines():
        # An array over several lines is read as one line.
        if lines and lines[-1].count("[") > lines[-1].count("]"):
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    for line in lines:
        header = re.match(r"^\[([^\]]+)\]\s*$", line)
        if header:
            inside = {"project": table, "project.optional-dependencies": extras}.get(header.group(1))
            continue
        match = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*(.+?)\s*$', line) if inside is not None else None
        if not match or inside is None:
            continue
        key, value = match.group(1), match.group(2)
        if value.startswith('"'):
            inside[key] = value.strip('"')
        elif value.startswith("["):
            inside[key] = re.findall(r'"([^"]*)"', value)
        elif value.startswith("{"):
            inside[key] = dict(re.findall(r'([A-Za-z0-9_-]+)\s*=\s*"([^"]*)"', value))
    if extras:
        table["optional-dependencies"] = extras
    return table


def metadata() -> Tuple[str, str, str]:
    """The name, the version and the core metadata (METADATA / PKG-INFO) of the package."""
    p = project()
    name, version = str(p["name"]), str(p["version"])
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if p.get("description"):
        lines.append(f"Summary: {p['description']}")
    license_ = p.get("license")
    if isinstance(license_, dict) and license_.get("text"):
        lines.append(f"License: {license_['text']}")
    for classifier in p.get("classifiers", []) or []:  # type: ignore[union-attr]
        lines.append(f"Classifier: {classifier}")
    if p.get("requires-python"):
        lines.append(f"Requires-Python: {p['requires-python']}")
    for dependency in p.get("dependencies", []) or []:  # type: ignore[union-attr]
        lines.append(f"Requires-Dist: {dependency}")
    # The extras (knowhub[langgraph], …): what each brings, only when asked for (PEP 508 marker).
    extras = p.get("optional-dependencies") or {}
    for extra in sorted(extras):  # type: ignore[union-attr]
        lines.append(f"Provides-Extra: {extra}")
        for dependency in extras[extra]:  # type: ignore[index]
            lines.append(f'Requires-Dist: {dependency}; extra == "{extra}"')
    readme = p.get("readme")
    body = ""
    if isinstance(readme, str) and os.path.exists(os.path.join(ROOT, readme)):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = "\n" + f.read()
    return name, version, "\n".join(lines) + "\n" + body


def package_files() -> List[str]:
    """The package's files, relative to the project root, in a fixed order (no caches)."""
    found = []
    for folder, dirs, files in os.walk(os.path.join(ROOT, PACKAGE)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith((".pyc", ".pyo")):
                found.append(os.path.relpath(os.path.join(folder, name), ROOT).replace(os.sep, "/"))
    return found


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(directory: str, entries: List[Tuple[str, bytes]]) -> str:
    """A wheel of ``entries`` plus its dist-info (METADATA, WHEEL, RECORD); returns its file name."""
    name, version, meta = metadata()
    info = f"{name}-{version}.dist-info"
    files = entries + [
        (f"{info}/METADATA", meta.encode("utf-8")),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: knowhub_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = "\n".join([_record_line(path, data) for path, data in files] + [f"{info}/RECORD,,"]) + "\n"
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files + [(f"{info}/RECORD", record.encode("utf-8"))]:
            entry = zipfile.ZipInfo(path, ZIP_TIME)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return filename


def _read(path: str) -> bytes:
    with open(os.path.join(ROOT, path), "rb") as f:
        return f.read()


# PEP 517 -----------------------------------------------------------------------------------------


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    return _write_wheel(wheel_directory, [(path, _read(path)) for path in package_files()])


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    """PEP 660: a wheel whose ``.pth`` file puts this folder on ``sys.path`` (``pip install -e``)."""
    return _write_wheel(wheel_directory, [(f"__editable__.{PACKAGE}.pth", (ROOT + "\n").encode("utf-8"))])


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version, meta = metadata()
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path, data in [(p, _read(p)) for p in list(SDIST_FILES) + package_files()] + [("PKG-INFO", meta.encode("utf-8"))]:
            entry = tarfile.TarInfo(f"{base}/{path}")
            entry.size = len(data)
            entry.mode = 0o644
            tar.addfile(entry, io.BytesIO(data))
    return filename
