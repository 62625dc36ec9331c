"""The transport: one HTTP call with a timeout, a request id, the bearer token, JSON in and
out, error mapping and retries with backoff where they are safe (as src/client/http.ts).
Standard library only (urllib); the async client runs it in a worker thread."""

import email.utils
import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from .errors import CODE_BY_STATUS, SERVER_ERROR_CODES, KnowHubError

QueryValue = Union[str, int, float, bool, Sequence[str], None]

#: Statuses a retry can fix.
TRANSIENT_STATUS = frozenset({429, 502, 503, 504})
#: Server codes a retry cannot fix even when their status looks transient.
PERMANENT_CODES = frozenset({"embedder_mismatch", "llm_not_configured", "secrets_read_only"})


@dataclass
class Request:
    """One API call. ``retry``: ``idempotent`` (repeated after network errors, timeouts, 429,
    502, 503, 504) or ``unsafe`` (repeated only after a 429, refused before anything ran).
    ``response``: ``json``, ``text`` (JSONL) or ``bytes`` (a backup file)."""

    method: str
    path: str
    query: Mapping[str, QueryValue] = field(default_factory=dict)
    body: Any = None
    retry: str = "idempotent"
    content_type: Optional[str] = None
    response: str = "json"


def _query_string(query: Mapping[str, QueryValue]) -> str:
    pairs = []
    for key, value in query.items():
        if value is None:
            continue
        if isinstance(value, bool):
            pairs.append((key, "true" if value else "false"))
        elif isinstance(value, (list, tuple)):
            if value:
                pairs.append((key, ",".join(str(v) for v in value)))
        else:
            pairs.append((key, str(value)))
    return urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date (``None`` when absent or unreadable)."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        at = email.utils.parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, at - (time.time() if now is None else now))


def _parse_json(text: str) -> Tuple[bool, Any]:
    if text.strip() == "":
        return False, None
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


def _origin(url: str) -> Tuple[str, str, Optional[int]]:
    """Scheme, host and port (the default port filled in): what decides whether two URLs share an origin."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


class _FollowRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects for every method, keeping the method and body (307/308 semantics) on the
    same origin. Across origins the bearer token is dropped, as fetch does, and a request with a
    body is not followed at all: a body (a resource's ``secure_body``, say) never goes to another origin."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        same = _origin(newurl) == _origin(req.full_url)
        if not same and req.data is not None:
            scheme, host, port = _origin(newurl)
            raise KnowHubError(
                "http_error",
                f"{req.get_method()} {urllib.parse.urlsplit(req.full_url).path} was redirected ({code}) to another origin, {scheme}://{host}:{port}: "
                "not followed, a request body is never sent to another origin",
                {"location_origin": f"{scheme}://{host}:{port}"},
                status=code,
                method=req.get_method(),
            )
        if newurl.split(":", 1)[0].lower() not in ("http", "https"):
            raise KnowHubError("http_error", f"a redirect ({code}) to a URL that is not http(s) was not followed", status=code, method=req.get_method())
        kept = {k: v for k, v in req.header_items() if k.lower() != "authorization" or same}
        return urllib.request.Request(newurl, data=req.data, headers=kept, method=req.get_method())


class Transport:
    """Sends :class:`Request` s to one server."""

    def __init__(
        self,
        base_url: str,
        token: Optional[str],
        timeout: float,
        retries: int = 2,
        backoff: float = 0.25,
        max_backoff: float = 4.0,
        max_retry_after: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.headers = dict(headers or {})
        self._opener = urllib.request.build_opener(_FollowRedirects())

    def url(self, request: Request) -> str:
        query = _query_string(request.query)
        return f"{self.base_url}{request.path}{'?' + query if query else ''}"

    def _delay(self, attempt: int) -> float:
        return random.random() * min(self.max_backoff, self.backoff * 2 ** (attempt - 1))

    def send(self, request: Request, timeout: Optional[float] = None) -> Any:
        """Sends one call (with its retries) and returns the decoded body; raises :class:`KnowHubError`."""
        url = self.url(request)
        request_id = f"req_{uuid.uuid4().hex[:20]}"
        headers: Dict[str, str] = {
            "accept": {"text": "application/x-ndjson", "bytes": "application/vnd.knowhub.backup"}.get(request.response, "application/json"),
            "user-agent": "knowhub-python",
            **self.headers,
            "x-request-id": request_id,
        }
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        data: Optional[bytes] = None
        if request.body is not None:
            if request.content_type and isinstance(request.body, str):
                data = request.body.encode("utf-8")
            else:
                data = json.dumps(request.body, ensure_ascii=False).encode("utf-8")
            headers["content-type"] = request.content_type or "application/json"
        seconds = self.timeout if timeout is None else timeout
        attempt = 0
        while True:
            attempt += 1
            context = {"method": request.method, "path": request.path, "request_id": request_id, "attempts": attempt}
            can_retry = attempt <= self.retries
            http_request = urllib.request.Request(url, data=data, headers=headers, method=request.method)
            try:
                with self._opener.open(http_request, timeout=seconds) as response:
                    status = response.status
                    raw = response.read()
                    response_headers = response.headers
            except urllib.error.HTTPError as error:
                status = error.code
                raw = error.read()
                response_headers = error.headers
            except (urllib.error.URLError, OSError, socket.timeout, http.client.HTTPException) as error:
                reason = getattr(error, "reason", error)
                timed_out = isinstance(reason, (socket.timeout, TimeoutError)) or isinstance(error, (socket.timeout, TimeoutError))
                failure = (
                    KnowHubError("timeout", f"{request.method} {request.path} timed out after {seconds} s", {"timeout_s": seconds}, **context)
                    if timed_out
                    else KnowHubError("network_error", f"{request.method} {request.path} failed: {reason}", **context)
                )
                if request.retry == "idempotent" and can_retry:
                    time.sleep(self._delay(attempt))
                    continue
                raise failure from error
            answered_id = response_headers.get("x-request-id") or request_id
            if 200 <= status < 300:
                if request.response == "bytes":
                    return raw
                text = raw.decode("utf-8")
                if request.response == "text":
                    return text
                ok, value = _parse_json(text)
                if not ok:
                    raise KnowHubError(
                        "invalid_response", f"{request.method} {request.path}: the response is not JSON", status=status, request_id=answered_id,
                        method=request.method, path=request.path, attempts=attempt,
                    )
                return value
            error = self._response_error(status, raw, response_headers, answered_id, context)
            transient = status in TRANSIENT_STATUS and (error.server_code or error.code) not in PERMANENT_CODES
            if not (transient and can_retry and (request.retry == "idempotent" or status == 429)):
                raise error
            delay = self._delay(attempt)
            if error.retry_after is not None:
                if error.retry_after > self.max_retry_after:
                    raise error
                delay = error.retry_after
            time.sleep(delay)

    @staticmethod
    def _response_error(status: int, raw: bytes, headers: Any, request_id: str, context: Dict[str, Any]) -> KnowHubError:
        retry_after = parse_retry_after(headers.get("retry-after"))
        ok, value = _parse_json(raw.decode("utf-8", errors="replace"))
        body = value.get("error") if ok and isinstance(value, dict) else None
        base: Dict[str, Any] = {
            "status": status,
            "request_id": request_id,
            "method": context["method"],
            "path": context["path"],
            "retry_after": retry_after,
            "attempts": context["attempts"],
        }
        if isinstance(body, dict) and isinstance(body.get("code"), str) and isinstance(body.get("message"), str):
            details = body.get("details") if isinstance(body.get("details"), dict) else {}
            if body["code"] in SERVER_ERROR_CODES:
                return KnowHubError(body["code"], body["message"], details, **base)
            return KnowHubError("http_error", body["message"], details, server_code=body["code"], **base)
        code = CODE_BY_STATUS.get(status, "http_error")
        return KnowHubError(code, f"{context['method']} {context['path']} failed with HTTP {status}", **base)
