"""KnowHub for Python agents: a dependency-free client of the KnowHub HTTP API
(:class:`KnowHub`, :class:`AsyncKnowHub`), its error class (:class:`KnowHubError`), and the
seed-003 agent tools (:mod:`knowhub.tools`).

>>> from knowhub import KnowHub  # doctest: +SKIP
>>> kh = KnowHub()  # KNOWHUB_URL / KNOWHUB_TOKEN, else http://127.0.0.1:8420  # doctest: +SKIP
>>> entry = kh.save("Log in to site A", "Use undetected_chromedriver", ["tool"])  # doctest: +SKIP
"""

from .client import DEFAULT_TIMEOUT, DEFAULT_URL, UNSET, AsyncKnowHub, KnowHub
from .errors import CLIENT_ERROR_CODES, ERROR_CODES, SERVER_ERROR_CODES, KnowHubError
from .tools import ToolResult, Tools
from .wrap import DATA_PREAMBLE, neutralise, wrap_entries, wrap_resource

__version__ = "0.1.0"

__all__ = [
    "AsyncKnowHub", "CLIENT_ERROR_CODES", "DATA_PREAMBLE", "DEFAULT_TIMEOUT", "DEFAULT_URL", "ERROR_CODES", "KnowHub", "KnowHubError",
    "SERVER_ERROR_CODES", "ToolResult", "Tools", "UNSET", "neutralise", "wrap_entries", "wrap_resource", "__version__",
]  # fmt: skip
