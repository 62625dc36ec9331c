"""The one check each integration module makes before importing its framework: a clear error that names
the extra to install, instead of a bare ``No module named 'langgraph'`` from deep inside the module."""

import importlib
from types import ModuleType


def require(module: str, extra: str, integration: str) -> ModuleType:
    """Imports ``module``, or raises :class:`ModuleNotFoundError` saying which extra brings it.

    A framework that is installed but fails to import for a reason of its own (one of its own
    dependencies missing) raises its own error: only the framework's absence is reworded.

    >>> require("json", "none", "test").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        missing = (error.name or "").split(".")[0]
        if missing != module.split(".")[0]:
            raise
        raise ModuleNotFoundError(
            f"knowhub.integrations.{integration} needs the {module} package, which is not installed: "
            f"pip install 'knowhub[{extra}]' (or pip install {module})",
            name=module,
        ) from error
