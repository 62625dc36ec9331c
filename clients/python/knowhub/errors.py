"""The client's one error class, :class:`KnowHubError`, and the codes it can carry.

The codes are the TypeScript client's (``knowhub/client``): the server's error codes
(``src/core/errors.ts``) and the client's own for failures that never got a KnowHub answer.
Check errors by ``code``::

    try:
        kh.get("knowledge-x")
    except KnowHubError as e:
        if e.code == "not_found":
            ...
"""

from typing import Any, Dict, FrozenSet, List, Mapping, Optional

#: The server's codes (HTTP status in the comment), as in src/core/errors.ts.
SERVER_ERROR_CODES: FrozenSet[str] = frozenset(
    {
        "validation_error",  # 400: details["issues"] lists every problem with its path
        "unauthenticated",  # 401
        "forbidden",  # 403
        "not_found",  # 404: also for what exists but the caller may not see
        "conflict",  # 409
        "too_large",  # 413
        "confirmation_required",  # 409
        "rate_limited",  # 429
        "invalid_scope",  # 400
        "invalid_import",  # 400
        "embedder_mismatch",  # 503
        "embedder_failed",  # 502
        "llm_not_configured",  # 501
        "llm_failed",  # 502
        "llm_timeout",  # 504
        "llm_invalid_output",  # 502
        "config_error",  # 500
        "secrets_read_only",  # 503
        "database_error",  # 500
        "database_unavailable",  # 503
        "internal_error",  # 500
    }
)

#: The client's own codes, as in src/client/errors.ts.
CLIENT_ERROR_CODES: FrozenSet[str] = frozenset(
    {
        "network_error",  # no HTTP response: connection refused or reset, DNS failure
        "timeout",  # no response within the timeout
        "aborted",  # the call was cancelled
        "invalid_response",  # a 2xx whose body is not JSON
        "http_error",  # a non-2xx without a KnowHub error body, or with a code this client does not know
    }
)

#: Every code a :class:`KnowHubError` can carry.
ERROR_CODES: FrozenSet[str] = SERVER_ERROR_CODES | CLIENT_ERROR_CODES

#: The code a plain HTTP status stands for when the response has no KnowHub error body.
CODE_BY_STATUS: Mapping[int, str] = {
    400: "validation_error",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    413: "too_large",
    429: "rate_limited",
}


class KnowHubError(Exception):
    """A failed call: ``code`` (see :data:`ERROR_CODES`), ``message`` and ``details``.

    ``status`` is the HTTP status (``None`` without a response), ``request_id`` the
    ``X-Request-Id``, ``server_code`` the server's code when it is not one this client
    knows (``code`` is then ``http_error``), ``retry_after`` the seconds a 429 asked to wait.
    """

    def __init__(
        self,
        code: str,
        message: str,
        details: Optional[Dict[str, Any]] = None,
        *,
        status: Optional[int] = None,
        request_id: Optional[str] = None,
        method: Optional[str] = None,
        path: Optional[str] = None,
        server_code: Optional[str] = None,
        retry_after: Optional[float] = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: Dict[str, Any] = dict(details or {})
        self.status = status
        self.request_id = request_id
        self.method = method
        self.path = path
        self.server_code = server_code
        self.retry_after = retry_after
        self.attempts = attempts

    @property
    def issues(self) -> List[Dict[str, str]]:
        """The ``{path, message}`` issues of a ``validation_error`` (``details["issues"]``), or ``[]``."""
        found = self.details.get("issues")
        if not isinstance(found, list):
            return []
        return [
            {"path": str(i.get("path", "")), "message": i["message"]}
            for i in found
            if isinstance(i, dict) and isinstance(i.get("message"), str)
        ]

    def to_dict(self) -> Dict[str, Any]:
        """The error as the API's error body shows it (plus ``status`` and ``request_id`` when known)."""
        out: Dict[str, Any] = {"code": self.code, "message": self.message, "details": self.details}
        if self.status is not None:
            out["status"] = self.status
        if self.request_id is not None:
            out["request_id"] = self.request_id
        return out

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def __repr__(self) -> str:
        return f"KnowHubError(code={self.code!r}, message={self.message!r}, status={self.status!r})"
