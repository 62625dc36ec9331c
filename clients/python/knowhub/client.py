"""``KnowHub`` and ``AsyncKnowHub``: a method for every endpoint of the KnowHub HTTP API, with
the names and arguments of seed 003 (search, save, update, batch_update, list, slim,
resource_save, resource_get, goals) and the rest of the API beside them.

Both share one definition (:class:`_Api`): each method builds its request and hands it to
``_send``, which the sync client sends and the async client sends in a worker thread."""

import asyncio
import os
import re
import urllib.parse
from typing import Any, AsyncIterator, Awaitable, Dict, Generic, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar

from ._http import QueryValue, Request, Transport
from .errors import KnowHubError

#: The server's default address (``knowhub start``).
DEFAULT_URL = "http://127.0.0.1:8420"
#: Default timeout of each attempt, in seconds.
DEFAULT_TIMEOUT = 30.0

Json = Dict[str, Any]
J = TypeVar("J")  # what a JSON call returns: Json, or an awaitable of it
T = TypeVar("T")  # text (JSONL)
B = TypeVar("B")  # bytes (a backup)
L = TypeVar("L")  # a list of JSON objects


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


#: "Leave this field out" where ``None`` means something (``resource_update(secure_body=None)`` removes the secret).
UNSET: Any = _Unset()

_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._@+~-]{0,127}$")


def resource_path(resource_id: str) -> str:
    """The URL path of a resource id, one segment at a time, refusing ids the server would refuse.

    >>> resource_path("code/selenium/login")
    'code/selenium/login'
    """
    problem = None
    if resource_id == "":
        problem = "resource id is empty"
    elif len(resource_id) > 512:
        problem = "resource id is longer than 512 characters"
    elif "\0" in resource_id or "\\" in resource_id:
        problem = "resource id contains a NUL character or a backslash"
    elif resource_id.startswith("/"):
        problem = "resource id starts with /"
    elif len(resource_id.split("/")) > 32:
        problem = "resource id has more than 32 segments"
    else:
        for segment in resource_id.split("/"):
            if segment in ("", ".", ".."):
                problem = "resource id has an empty, . or .. segment"
                break
            if not _SEGMENT.match(segment):
                problem = "each segment of a resource id starts with a letter, digit or _ and holds only letters, digits and . _ @ + ~ -"
                break
    if problem:
        raise KnowHubError("validation_error", f"Invalid resource id: {problem}", {"issues": [{"path": "id", "message": problem}]})
    return "/".join(urllib.parse.quote(s, safe="") for s in resource_id.split("/"))


def knowledge_path(knowledge_id: str) -> str:
    """``/api/knowledge/{id}``, encoded; refuses ids the server would refuse before sending."""
    if knowledge_id in ("", ".", "..") or len(knowledge_id) > 128:
        raise KnowHubError(
            "validation_error", "Invalid knowledge id", {"issues": [{"path": "id", "message": "knowledge ids are 1-128 characters and not . or .."}]}
        )
    return f"/api/knowledge/{urllib.parse.quote(knowledge_id, safe='')}"


def _tag_pairs(tags: Optional[Mapping[str, str]]) -> Optional[List[str]]:
    """A tag filter as the API takes it: ``key:value`` pairs."""
    return None if tags is None else [f"{k}:{v}" for k, v in tags.items()]


def _body(**fields: Any) -> Json:
    """A request body without the fields left out (``None`` or :data:`UNSET`)."""
    return {k: v for k, v in fields.items() if v is not None and v is not UNSET}


class _Api(Generic[J, T, B, L]):
    """Every endpoint, once. ``_send`` decides how a request goes out."""

    _transport: Transport

    def _send(self, request: Request) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def url(self) -> str:
        """The base URL calls go to."""
        return self._transport.base_url

    # -- meta --------------------------------------------------------------------------
    def healthz(self) -> J:
        """``GET /healthz``: ``{"status": "ok", "version": …}`` (no token needed)."""
        return self._send(Request("GET", "/healthz"))

    def openapi(self) -> J:
        """``GET /api/openapi.json``: the API's OpenAPI 3.1 document."""
        return self._send(Request("GET", "/api/openapi.json"))

    # -- knowledge (seed 003) ----------------------------------------------------------
    def search(
        self,
        query: str,
        top_k: int = 5,
        min_score: int = 3,
        types: Optional[Sequence[str]] = None,
        *,
        explain: Optional[bool] = None,
        mode: Optional[str] = None,
        rerank: Optional[bool] = None,
        routing: Optional[str] = None,
        expand: Optional[str] = None,
        order: Optional[str] = None,
        visibility: Optional[Sequence[str]] = None,
        tags: Optional[Mapping[str, str]] = None,
        as_of: Optional[str] = None,
        include: Optional[Sequence[str]] = None,
    ) -> J:
        """``GET /api/knowledge/search?q&top_k&min_score&types``: ``{"results": [...], "count": n}``.

        ``order``: ``relevance`` (default), ``scope`` (seed 002's order) or ``quality`` (seed 003's);
        ``visibility``: only entries of these (``private``, ``shared``, ``org``, ``public``);
        ``tags``: only entries with every one of these tags (``{"category": "preference"}``);
        ``as_of``: what was true at this date; ``include``: also ``superseded`` and/or ``expired`` entries, marked.
        """
        q: Dict[str, QueryValue] = {"q": query, "top_k": top_k, "min_score": min_score, "types": types}
        q.update(explain=explain, mode=mode, rerank=rerank, routing=routing, expand=expand, order=order, visibility=visibility, tags=_tag_pairs(tags))
        q.update(as_of=as_of, include=include)
        return self._send(Request("GET", "/api/knowledge/search", q))

    def save(
        self,
        task: str,
        content: str,
        types: Optional[Sequence[str]] = None,
        tags: Optional[Mapping[str, Any]] = None,
        scopes: Optional[Sequence[str]] = None,
        owner: Optional[str] = None,
        source: Optional[Mapping[str, Any]] = None,
        score: Optional[int] = None,
        confidence: Optional[float] = None,
        message_id: Optional[str] = None,
        resource_ids: Optional[Sequence[str]] = None,
        *,
        id: Optional[str] = None,
        type: Optional[str] = None,
        visibility: Optional[str] = None,
        eval: Optional[Mapping[str, Any]] = None,
        created_at: Optional[str] = None,
        updated_at: Optional[str] = None,
        valid_from: Optional[str] = None,
        expires_at: Optional[str] = None,
    ) -> J:
        """``POST /api/knowledge``: the saved entry (never retried after a network error: it could be saved twice).

        The seeds' records load as written: ``kh.save(**record)`` with seed 002's ``type``, ``visibility``
        and ``eval``, or seed 003's ``id``, ``eval``, ``created_at``, ``updated_at``. An ``id`` makes the
        create idempotent (``existed: True`` when it was saved already); what the server does not take
        from a client (feedback counts, the record's times) comes back in ``ignored``.
        """
        body = _body(
            task=task, content=content, types=list(types) if types is not None else None, tags=tags, scopes=scopes, owner=owner,
            source=source, score=score, confidence=confidence, message_id=message_id, resource_ids=resource_ids, id=id, type=type,
            visibility=visibility, eval=eval, created_at=created_at, updated_at=updated_at, valid_from=valid_from, expires_at=expires_at,
        )
        return self._send(Request("POST", "/api/knowledge", body=body, retry="unsafe"))

    def get(self, knowledge_id: str, *, expand: Optional[str] = None) -> J:
        """``GET /api/knowledge/{id}``: one entry (``expand="resources"`` adds the referenced resources)."""
        return self._send(Request("GET", knowledge_path(knowledge_id), {"expand": expand}))

    def update(
        self,
        knowledge_id: str,
        add_helpful_case: Optional[Mapping[str, Any]] = None,
        add_harmful_case: Optional[Mapping[str, Any]] = None,
        update_score: Optional[int] = None,
        evolve_feedback: Optional[str] = None,
    ) -> J:
        """``PUT /api/knowledge/{id}``: feedback (a helpful or harmful case, a score, an evolution). The entry."""
        body = _body(add_helpful_case=add_helpful_case, add_harmful_case=add_harmful_case, update_score=update_score, evolve_feedback=evolve_feedback)
        additive = any(k in body for k in ("add_helpful_case", "add_harmful_case", "evolve_feedback"))
        return self._send(Request("PUT", knowledge_path(knowledge_id), body=body, retry="unsafe" if additive else "idempotent"))

    def batch_update(self, feedback_list: Sequence[Mapping[str, Any]]) -> J:
        """``POST /api/knowledge/batch_update``: ``{"updated": n, "results": [...]}``, one result per item."""
        return self._send(Request("POST", "/api/knowledge/batch_update", body={"feedback_list": list(feedback_list)}, retry="unsafe"))

    def list(
        self,
        limit: int = 10,
        types: Optional[Sequence[str]] = None,
        scopes: Optional[Sequence[str]] = None,
        *,
        status: Optional[Sequence[str]] = None,
        cursor: Optional[str] = None,
        expand: Optional[str] = None,
        visibility: Optional[Sequence[str]] = None,
        tags: Optional[Mapping[str, str]] = None,
    ) -> J:
        """``GET /api/knowledge?limit&types&scopes``: ``{"items": [...], "count": n, "next_cursor": …}``, newest first."""
        q: Dict[str, QueryValue] = {"limit": limit, "types": types, "scopes": scopes, "status": status, "cursor": cursor, "expand": expand}
        q.update(visibility=visibility, tags=_tag_pairs(tags))
        return self._send(Request("GET", "/api/knowledge", q))

    def edit(
        self,
        knowledge_id: str,
        *,
        task: Optional[str] = None,
        content: Optional[str] = None,
        types: Optional[Sequence[str]] = None,
        tags: Optional[Mapping[str, Any]] = None,
        scopes: Optional[Sequence[str]] = None,
        resource_ids: Optional[Sequence[str]] = None,
        reason: Optional[str] = None,
    ) -> J:
        """``PATCH /api/knowledge/{id}``: an edit by the owner; the previous version is kept."""
        body = _body(task=task, content=content, types=types, tags=tags, scopes=scopes, resource_ids=resource_ids, reason=reason)
        return self._send(Request("PATCH", knowledge_path(knowledge_id), body=body, retry="unsafe"))

    def delete(self, knowledge_id: str) -> J:
        """``DELETE /api/knowledge/{id}``: ``{"id": …, "deleted": true}``."""
        return self._send(Request("DELETE", knowledge_path(knowledge_id)))

    def versions(self, knowledge_id: str) -> J:
        """``GET /api/knowledge/{id}/versions``: ``{"id": …, "versions": [...]}``, oldest first."""
        return self._send(Request("GET", knowledge_path(knowledge_id) + "/versions"))

    def archive(self, knowledge_id: str) -> J:
        """``POST /api/knowledge/{id}/archive``."""
        return self._send(Request("POST", knowledge_path(knowledge_id) + "/archive", retry="unsafe"))

    def restore(self, knowledge_id: str) -> J:
        """``POST /api/knowledge/{id}/restore``."""
        return self._send(Request("POST", knowledge_path(knowledge_id) + "/restore", retry="unsafe"))

    def unmerge(self, knowledge_id: str) -> J:
        """``POST /api/knowledge/{id}/unmerge``: undoes a slim merge."""
        return self._send(Request("POST", knowledge_path(knowledge_id) + "/unmerge", retry="unsafe"))

    def slim(
        self,
        model: Optional[str] = None,
        *,
        threshold: Optional[float] = None,
        min_overlap: Optional[float] = None,
        dry_run: Optional[bool] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> J:
        """``POST /api/knowledge/slim``: merges near-duplicates (``dry_run=True`` only reports the plan)."""
        body = _body(model=model, threshold=threshold, min_overlap=min_overlap, dry_run=dry_run, limit=limit, cursor=cursor)
        return self._send(Request("POST", "/api/knowledge/slim", body=body, retry="unsafe"))

    def extract(self, messages: Sequence[Mapping[str, Any]], *, mode: Optional[str] = None, context: Optional[Mapping[str, Any]] = None) -> J:
        """``POST /api/knowledge/extract``: knowledge from a conversation (needs the server's LLM: ``llm_not_configured`` otherwise)."""
        body = _body(messages=list(messages), mode=mode, context=context)
        return self._send(Request("POST", "/api/knowledge/extract", body=body, retry="unsafe"))

    def export_jsonl(self) -> T:
        """``GET /api/knowledge/export``: every visible entry with its history, one JSON object a line."""
        return self._send(Request("GET", "/api/knowledge/export", response="text"))

    def import_jsonl(self, jsonl: str, *, mode: Optional[str] = None, on_conflict: Optional[str] = None) -> J:
        """``POST /api/knowledge/import``: JSONL as :meth:`export_jsonl` writes it (all or nothing unless ``mode="partial"``)."""
        request = Request(
            "POST", "/api/knowledge/import", {"mode": mode, "on_conflict": on_conflict}, body=jsonl, content_type="application/x-ndjson", retry="unsafe"
        )
        return self._send(request)

    # -- resources (seed 003) ----------------------------------------------------------
    def resource_save(
        self,
        id: str,
        title: str,
        body: Optional[str] = None,
        secure_body: Optional[str] = None,
        content_type: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        scopes: Optional[Sequence[str]] = None,
        owner: Optional[str] = None,
    ) -> J:
        """``POST /api/resource``: creates the resource, or updates the caller's own with this id."""
        payload = _body(
            id=id, title=title, body=body, secure_body=secure_body, content_type=content_type, metadata=metadata, scopes=scopes, owner=owner
        )
        return self._send(Request("POST", "/api/resource", body=payload, retry="unsafe"))

    def resource_get(self, id: str, *, include_secret: bool = False, owner: Optional[str] = None) -> J:
        """``GET /api/resource/{id}``. ``secure_body`` only when asked (``include_secret=True``) and allowed (``secrets:read``)."""
        return self._send(Request("GET", f"/api/resource/{resource_path(id)}", {"include_secret": include_secret, "owner": owner}))

    def resource_update(
        self,
        id: str,
        *,
        title: Any = UNSET,
        body: Any = UNSET,
        secure_body: Any = UNSET,
        content_type: Any = UNSET,
        metadata: Any = UNSET,
        scopes: Any = UNSET,
        new_owner: Any = UNSET,
        owner: Optional[str] = None,
    ) -> J:
        """``PUT /api/resource/{id}``: the fields given change; ``secure_body=None`` removes the secret.
        ``owner`` picks whose resource (``?owner=``); ``new_owner`` gives it a new owner."""
        fields = {"title": title, "body": body, "content_type": content_type, "metadata": metadata, "scopes": scopes, "owner": new_owner}
        payload: Json = {k: v for k, v in fields.items() if v is not UNSET and v is not None}
        if secure_body is not UNSET:
            payload["secure_body"] = secure_body
        return self._send(Request("PUT", f"/api/resource/{resource_path(id)}", {"owner": owner}, body=payload))

    def resource_delete(self, id: str, *, owner: Optional[str] = None) -> J:
        """``DELETE /api/resource/{id}``: ``{"id", "owner", "deleted": true}``."""
        return self._send(Request("DELETE", f"/api/resource/{resource_path(id)}", {"owner": owner}))

    def resource_list(
        self,
        limit: Optional[int] = None,
        *,
        prefix: Optional[str] = None,
        content_type: Optional[Sequence[str]] = None,
        scopes: Optional[Sequence[str]] = None,
        owner: Optional[str] = None,
        expired: Optional[bool] = None,
        cursor: Optional[str] = None,
    ) -> J:
        """``GET /api/resource``: one page of summaries (never bodies or secrets)."""
        q: Dict[str, QueryValue] = {"limit": limit, "prefix": prefix, "content_type": content_type, "scopes": scopes, "owner": owner}
        q.update(expired=expired, cursor=cursor)
        return self._send(Request("GET", "/api/resource", q))

    # -- agent (seed 004) and goals (seed 003) -----------------------------------------
    def agent_context(
        self,
        agent: str,
        task: Optional[str] = None,
        knowledge_files: Optional[Sequence[str]] = None,
        budget: Optional[int] = None,
        language: Optional[str] = None,
    ) -> J:
        """``POST /api/agent/context``: an agent's starting context (``messages`` and the budget report)."""
        body = _body(agent=agent, task=task, knowledge_files=knowledge_files, budget=budget, language=language)
        return self._send(Request("POST", "/api/agent/context", body=body))

    def agent_document_write(
        self,
        agent: str,
        name: str,
        content: str,
        scopes: Optional[Sequence[str]] = None,
        expected_version: Optional[int] = None,
    ) -> J:
        """``PUT /api/agents/{agent}/documents/{name}``: store one of an agent's documents on the server (``knowledge.md``,
        ``self_awareness.md``, ``compact.md``, ``system_prompt.md``), a new version each time. A server keeps remote agents
        per org and never reads its own home for a caller: store an agent before asking for its context."""
        body = _body(content=content, scopes=scopes, expected_version=expected_version)
        path = f"/api/agents/{urllib.parse.quote(agent, safe='')}/documents/{urllib.parse.quote(name, safe='')}"
        return self._send(Request("PUT", path, body=body, retry="unsafe"))

    def agent_document(self, agent: str, name: str, version: Optional[int] = None) -> J:
        """``GET /api/agents/{agent}/documents/{name}``: one stored document (its newest version, or ``version``)."""
        path = f"/api/agents/{urllib.parse.quote(agent, safe='')}/documents/{urllib.parse.quote(name, safe='')}"
        return self._send(Request("GET", path, {"version": version} if version is not None else {}))

    def goal(
        self,
        action: str,
        trace_id: str,
        goal_id: Optional[str] = None,
        parent_id: Optional[str] = None,
        description: Optional[str] = None,
        summary: Optional[str] = None,
        top_k: Optional[int] = None,
        min_score: Optional[int] = None,
        language: Optional[str] = None,
    ) -> J:
        """``POST /api/goals``: the goal tool (``create | focus | complete | abandon | show``); the tree, with ``text`` for a model."""
        body = _body(
            action=action, trace_id=trace_id, goal_id=goal_id, parent_id=parent_id, description=description, summary=summary, top_k=top_k,
            min_score=min_score, language=language,
        )
        return self._send(Request("POST", "/api/goals", body=body, retry="idempotent" if action == "show" else "unsafe"))

    def goal_create(self, trace_id: str, description: str, parent_id: Optional[str] = None) -> J:
        """A new goal in the trace's tree (``goal_id`` ``1``, ``1.1``, …)."""
        return self.goal("create", trace_id, parent_id=parent_id, description=description)

    def goal_focus(self, trace_id: str, goal_id: str, top_k: int = 3, min_score: int = 3, language: Optional[str] = None) -> J:
        """Focuses a goal: the server searches knowledge with its description (top_k 3, min_score 3) and attaches it (``knowledge``)."""
        return self.goal("focus", trace_id, goal_id=goal_id, top_k=top_k, min_score=min_score, language=language)

    def goal_complete(self, trace_id: str, goal_id: str, summary: Optional[str] = None) -> J:
        """Completes a goal with a summary."""
        return self.goal("complete", trace_id, goal_id=goal_id, summary=summary)

    def goal_abandon(self, trace_id: str, goal_id: str, summary: Optional[str] = None) -> J:
        """Abandons a goal with the reason."""
        return self.goal("abandon", trace_id, goal_id=goal_id, summary=summary)

    def goal_show(self, trace_id: str) -> J:
        """The trace's goal tree."""
        return self.goal("show", trace_id)

    # -- admin ---------------------------------------------------------------------------
    def me(self) -> J:
        """``GET /api/me``: the caller — its principal and its role (to check a token, and for the tools' defaults)."""
        return self._send(Request("GET", "/api/me"))

    def status(self) -> J:
        """``GET /api/status`` (admin): database, embedder, entries, and the caller's principal."""
        return self._send(Request("GET", "/api/status"))

    def token_create(
        self,
        *,
        user: Optional[str] = None,
        agent: Optional[str] = None,
        project: Optional[str] = None,
        team: Optional[str] = None,
        org: Optional[str] = None,
        permissions: Optional[Sequence[str]] = None,
        name: Optional[str] = None,
        expires_at: Optional[str] = None,
    ) -> J:
        """``POST /api/tokens`` (admin): a new API token; ``token`` is shown in this answer only."""
        body = _body(user=user, agent=agent, project=project, team=team, org=org, permissions=permissions, name=name, expires_at=expires_at)
        return self._send(Request("POST", "/api/tokens", body=body, retry="unsafe"))

    def token_list(self) -> L:
        """``GET /api/tokens`` (admin): every token's record, never the tokens themselves."""
        return self._send(Request("GET", "/api/tokens", response="items"))

    def token_revoke(self, token_id: str) -> J:
        """``POST /api/tokens/{id}/revoke`` (admin)."""
        return self._send(Request("POST", f"/api/tokens/{urllib.parse.quote(token_id, safe='')}/revoke"))

    def reown(
        self, from_: str, to: Optional[str] = None, scopes: Optional[Sequence[str]] = None, dry_run: Optional[bool] = None, reason: Optional[str] = None
    ) -> J:
        """``POST /api/reown`` (admin): every entry of owner ``from_`` to owner ``to`` and/or shared with ``scopes``."""
        body = _body(**{"from": from_}, to=to, scopes=scopes, dry_run=dry_run, reason=reason)
        return self._send(Request("POST", "/api/reown", body=body))

    def forget(self, principal: str, *, dry_run: bool = False, force: bool = False) -> J:
        """``DELETE /api/principals/{principal}`` (hub operator; an org admin: users of its org): forgets ``user:ID`` everywhere.

        Answers a receipt of counts (never content); ``dry_run=True`` counts and changes nothing. A user
        of whom nothing is stored is ``not_found`` unless ``force=True``.
        """
        query = "&".join(name for name, on in (("dry_run=true", dry_run), ("force=true", force)) if on)
        query = f"?{query}" if query else ""
        return self._send(Request("DELETE", f"/api/principals/{urllib.parse.quote(principal, safe=':')}{query}"))

    def purge(self, *, merged_older_than: Optional[str] = None, archived_older_than: Optional[str] = None, dry_run: Optional[bool] = None) -> J:
        """``POST /api/admin/purge`` (admin): merged and archived entries older than the ages (``"90d"``, ``"12h"``) for good."""
        body = _body(merged_older_than=merged_older_than, archived_older_than=archived_older_than, dry_run=dry_run)
        return self._send(Request("POST", "/api/admin/purge", body=body))

    def user_profile(self, user_id: str) -> J:
        """``GET /api/users/{id}/profile``: a user's profile, current view (the user itself, its org admin, the hub operator)."""
        return self._send(Request("GET", f"/api/users/{urllib.parse.quote(user_id, safe='')}/profile"))

    def backup(self) -> B:
        """``POST /api/admin/backup`` (admin): a backup file of the embedded database, as bytes."""
        return self._send(Request("POST", "/api/admin/backup", response="bytes"))


def _setting_error(field: str, problem: str) -> KnowHubError:
    return KnowHubError("validation_error", f"Invalid {field}: {problem}", {"issues": [{"path": field, "message": problem}]})


def _checked_url(url: str) -> str:
    """An ``http://`` or ``https://`` URL with a host; anything else (``file://``, no scheme) is refused here, not at the first call."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        shown = f"{parts.scheme}://" if "://" in url else "a URL without a scheme"
        raise _setting_error("url", f"a KnowHub server's URL starts with http:// or https://, not {shown}")
    if not parts.hostname:
        raise _setting_error("url", "the URL has no host")
    return url.strip()


#: What a token may hold: visible ASCII (what an HTTP header carries), as ``knowhub token create`` prints them.
_TOKEN = re.compile(r"^[\x21-\x7e]+$")


def _checked_token(token: Optional[str]) -> Optional[str]:
    """The token without the whitespace around it (a trailing newline from a file); never echoed in an error."""
    if token is None:
        return None
    stripped = token.strip()
    if stripped == "":
        return None
    if not _TOKEN.match(stripped):
        raise _setting_error("token", "the token holds a space, a control character or a non-ASCII character, which an HTTP header cannot carry (the token is not shown)")
    return stripped


def _settings(url: Optional[str], token: Optional[str]) -> Tuple[str, Optional[str]]:
    base = _checked_url(url or os.environ.get("KNOWHUB_URL") or DEFAULT_URL)
    return base, _checked_token(token if token is not None else (os.environ.get("KNOWHUB_TOKEN") or None))


class KnowHub(_Api[Json, str, bytes, List[Json]]):
    """A client of one KnowHub server. No I/O until the first call.

    ``url`` and ``token`` default to ``KNOWHUB_URL`` / ``KNOWHUB_TOKEN`` (then ``http://127.0.0.1:8420``,
    no token: local mode). ``timeout`` is per attempt, in seconds; idempotent calls are retried
    ``retries`` times after network errors, timeouts, 429, 502, 503 and 504.

    >>> kh = KnowHub()  # doctest: +SKIP
    >>> kh.search("selenium login blocked")["results"]  # doctest: +SKIP
    """

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        retries: int = 2,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        base, secret = _settings(url, token)
        self._transport = Transport(base, secret, timeout, retries=retries, headers=headers)

    def _send(self, request: Request) -> Any:
        if request.response == "items":
            return self._transport.send(Request(request.method, request.path, request.query, request.body, request.retry))["items"]
        return self._transport.send(request)

    def list_all(
        self, limit: int = 100, types: Optional[Sequence[str]] = None, scopes: Optional[Sequence[str]] = None, *, status: Optional[Sequence[str]] = None
    ) -> Iterator[Json]:
        """Every entry matching, page after page (``limit`` is the page size)."""
        cursor: Optional[str] = None
        while True:
            page = self.list(limit, types, scopes, status=status, cursor=cursor)
            yield from page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def __enter__(self) -> "KnowHub":
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class AsyncKnowHub(_Api[Awaitable[Json], Awaitable[str], Awaitable[bytes], Awaitable[List[Json]]]):
    """:class:`KnowHub` for asyncio: the same methods, awaited. Each call runs the standard
    library's blocking HTTP in a worker thread (``asyncio.to_thread``), so the event loop never blocks.

    >>> kh = AsyncKnowHub()  # doctest: +SKIP
    >>> (await kh.search("selenium login blocked"))["results"]  # doctest: +SKIP
    """

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        retries: int = 2,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        self._sync = KnowHub(url, token, timeout, retries=retries, headers=headers)
        self._transport = self._sync._transport

    def _send(self, request: Request) -> Any:
        return asyncio.to_thread(self._sync._send, request)

    async def list_all(
        self, limit: int = 100, types: Optional[Sequence[str]] = None, scopes: Optional[Sequence[str]] = None, *, status: Optional[Sequence[str]] = None
    ) -> AsyncIterator[Json]:
        """Every entry matching, page after page (``limit`` is the page size)."""
        cursor: Optional[str] = None
        while True:
            page = await self.list(limit, types, scopes, status=status, cursor=cursor)
            for item in page["items"]:
                yield item
            cursor = page.get("next_cursor")
            if not cursor:
                return

    async def __aenter__(self) -> "AsyncKnowHub":
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None
