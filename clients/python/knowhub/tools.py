"""The agent tools of seed 003 (``agent/tools/builtin/knowledge.py``), for Python agents:
``knowledge_search``, ``knowledge_save``, ``knowledge_update``, ``knowledge_batch_update``,
``knowledge_list``, ``knowledge_slim``, ``resource_save`` with the seed's signatures and
defaults, plus ``knowledge_extract``, ``resource_get``, ``goal`` and the goal focus helper
``focus_goal``. Each is async and returns a :class:`ToolResult` ``(title, output, metadata)``:
``output`` is the text for the model — byte for byte what the TypeScript tools (and the MCP
server) return, knowledge wrapped as data — and ``metadata["items"]`` holds the entries.

The tools are one HTTP call each; the logic is on the server. The module-level functions use a
client built from ``KNOWHUB_URL`` / ``KNOWHUB_TOKEN`` (see :func:`configure`); :class:`Tools`
binds them to a client of your own. :func:`openai_tools` and :func:`anthropic_tools` give the
same tools as JSON Schema for function calling, from one definition (``_tool_specs.py``,
generated from the TypeScript tools), and :func:`call_tool` runs a model's call by name."""

import copy
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ._tool_specs import SPECS
from .client import AsyncKnowHub, Json
from .errors import KnowHubError
from .wrap import js_fixed, js_string, js_trim, neutralise, wrap_entries, wrap_resource

#: The model name seed 003 passes to knowledge_slim by default (accepted; unused without an LLM).
DEFAULT_SLIM_MODEL = "google/gemini-2.0-flash-001"


@dataclass
class ToolResult:
    """What a tool returns (seed 003's ``ToolResult``): a ``title``, the ``output`` text for the model,
    and ``metadata``: the API's answer, with ``items`` (the entries found, saved or attached).
    ``is_error``: the call failed and ``output`` says why (``error [code]: message``).
    ``len(result)`` is the number of items, as the seed's goal tool counts them."""

    title: str
    output: str
    metadata: Dict[str, Any] = field(default_factory=dict)
    is_error: bool = False

    def __len__(self) -> int:
        return len(self.metadata.get("items") or [])


def _count(n: int, one: str, many: Optional[str] = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


_LLM_FAILURES = {
    "llm_failed": "The LLM endpoint failed",
    "llm_timeout": "The LLM endpoint did not answer in time",
    "llm_invalid_output": "The LLM answered something unusable",
}
_HIDDEN_CODES = {"internal_error", "database_error", "config_error"}


def tool_error_text(error: BaseException) -> str:
    """A failed call as text a model can read (as ``toolErrorText`` in src/tools/toolkit.ts): ``error [code]: message``
    and every field issue; internal failures get a generic message."""
    if not isinstance(error, KnowHubError) or error.code in _HIDDEN_CODES:
        return "error [internal_error]: Internal error (details are in the server log)"
    if error.code == "embedder_failed":
        return "error [embedder_failed]: The embedding provider failed; try again later"
    if error.code in _LLM_FAILURES:
        return f"error [{error.code}]: {_LLM_FAILURES[error.code]}; nothing was changed, try again later"
    lines = [f"error [{error.code}]: {error.message}"]
    issues = error.issues
    if len(issues) > 1:
        lines += [f"- {i['path']}: {i['message']}" for i in issues]
    return "\n".join(lines)


def _failed(name: str, error: KnowHubError) -> ToolResult:
    return ToolResult(f"{name} failed", tool_error_text(error), {"error": error.to_dict(), "items": []}, is_error=True)


def _with_items(data: Mapping[str, Any], items: Sequence[Any]) -> Dict[str, Any]:
    return {**data, "items": list(items)}


_SCOPE_KINDS = ("user", "project", "agent", "team", "org")


def _member_scopes(principal: Mapping[str, Any]) -> List[str]:
    return [f"{kind}:{principal[kind]}" for kind in _SCOPE_KINDS if principal.get(kind)]


def _not_that_agent(principal: Mapping[str, Any], agent_id: str) -> KnowHubError:
    own = _member_scopes(principal)
    org = f" --org {principal['org']}" if principal.get("org") else ""
    return KnowHubError(
        "forbidden",
        f"knowledge_save would save as agent:{agent_id} (seed 003's default owner: the agent that learned it), but this caller is not that agent "
        f"(its ids: {', '.join(own) or 'none'}). Use an agent token — `knowhub token create --agent {agent_id}{org}` (in local mode KNOWHUB_AGENT={agent_id}) — "
        "or pass owner explicitly (one of your ids), or leave agent_id out.",
        {"agent_id": agent_id, "your_ids": own, "fix": f"knowhub token create --agent {agent_id}{org}"},
    )


class Tools:
    """The tools bound to one client and its defaults (as the TypeScript toolkit's ``defaults``):
    ``scopes`` and ``owner`` of saved entries and resources, ``submitted_by`` of saved entries.
    Left unset, ``knowledge_save`` saves as seed 003's agent code does: scopes the caller's org,
    owner ``agent:<agent_id>`` — when the caller may act as that agent; otherwise a ``forbidden``
    result saying how to get an agent token (never another owner in silence)."""

    def __init__(
        self,
        client: Optional[AsyncKnowHub] = None,
        *,
        scopes: Optional[Sequence[str]] = None,
        owner: Optional[str] = None,
        submitted_by: Optional[str] = None,
    ) -> None:
        self.client = client if client is not None else AsyncKnowHub()
        self.scopes = list(scopes) if scopes else None
        self.owner = owner
        self.submitted_by = submitted_by
        self._me: Optional[Json] = None

    async def _whoami(self) -> Json:
        if self._me is None:
            self._me = await self.client.me()
        return self._me

    async def _save_target(self, scopes: Optional[List[str]], owner: Optional[str], agent_id: Optional[str]) -> Tuple[Optional[List[str]], Optional[str]]:
        """Seed 003's defaults (src/tools/save-defaults.ts in TypeScript, in the same words): the caller's org, ``agent:<agent_id>``."""
        scopes = scopes or self.scopes
        owner = owner or self.owner
        if scopes and owner:
            return scopes, owner
        me = await self._whoami()
        principal = me["principal"]
        if not scopes and principal.get("org"):
            scopes = [f"org:{principal['org']}"]
        agent = agent_id or principal.get("agent")
        # A reader may save nothing: the server says so, in its words, before any default matters.
        if owner or not agent or me.get("role") == "reader":
            return scopes, owner
        if me.get("role") != "operator" and f"agent:{agent}" not in _member_scopes(principal):
            raise _not_that_agent(principal, agent)
        return scopes, f"agent:{agent}"

    async def knowledge_search(
        self,
        query: str,
        top_k: int = 5,
        min_score: int = 3,
        types: Optional[List[str]] = None,
        order: Optional[str] = None,
        mode: Optional[str] = None,
        as_of: Optional[str] = None,
        include: Optional[List[str]] = None,
    ) -> ToolResult:
        """``GET /api/knowledge/search``: the entries as data; ``metadata["items"]`` the results (``order``: relevance, scope or quality;
        ``mode``: ``hybrid`` or ``recall``; ``as_of``: what was true then; ``include``: ``superseded``, ``expired``)."""
        query = js_trim(query)
        try:
            recall = "recall" if mode == "recall" else None  # as the TypeScript tool: hybrid is the server's default
            response = await self.client.search(query, top_k, min_score, types, order=order, mode=recall, as_of=as_of, include=include)
        except KnowHubError as error:
            return _failed("knowledge_search", error)
        n = response["count"]
        if n == 0:
            text = f'No knowledge found for "{neutralise(query)}" (min_score {min_score}).'
        else:
            text = f'Found {_count(n, "entry", "entries")} for "{neutralise(query)}":\n{wrap_entries(response["results"])}'
        return ToolResult(f"📚 {_count(n, 'entry', 'entries')}", text, _with_items(response, response["results"]))

    async def knowledge_save(
        self,
        task: str,
        content: str,
        types: List[str],
        tags: Optional[Dict[str, str]] = None,
        scopes: Optional[List[str]] = None,
        owner: Optional[str] = None,
        source_name: str = "",
        source_category: str = "exp",
        urls: Optional[List[str]] = None,
        agent_id: str = "research_agent",
        submitted_by: str = "",
        score: int = 3,
        message_id: str = "",
        resource_ids: Optional[List[str]] = None,
    ) -> ToolResult:
        """``POST /api/knowledge`` (seed 003's signature; ``resource_ids`` links resources saved with :meth:`resource_save`)."""
        source = {
            "name": source_name,
            "category": source_category,
            "urls": list(urls or []),
            "agent_id": agent_id,
            "submitted_by": submitted_by or (self.submitted_by or ""),
            "message_id": message_id,
        }
        try:
            scopes, owner = await self._save_target(scopes, owner, agent_id)
            entry = await self.client.save(
                js_trim(task), content, types, tags=tags, scopes=scopes, owner=owner, source=source, score=score,
                message_id=message_id, resource_ids=list(resource_ids or []),
            )
        except KnowHubError as error:
            return _failed("knowledge_save", error)
        text = (
            f"Saved {entry['id']} (types {', '.join(entry['types'])}; scopes {', '.join(entry['scopes'])}; owner {entry['owner']}; "
            f"score {js_string(entry['eval']['score'])})."
        )
        return ToolResult("✅ Knowledge saved", text, _with_items(entry, [entry]))

    async def knowledge_update(
        self,
        knowledge_id: str,
        add_helpful_case: Optional[Dict[str, Any]] = None,
        add_harmful_case: Optional[Dict[str, Any]] = None,
        update_score: Optional[int] = None,
        evolve_feedback: Optional[str] = None,
    ) -> ToolResult:
        """``PUT /api/knowledge/{id}``: a helpful or harmful case, a new score, or an evolution (needs the server's LLM)."""
        try:
            entry = await self.client.update(knowledge_id, add_helpful_case, add_harmful_case, update_score, evolve_feedback)
        except KnowHubError as error:
            return _failed("knowledge_update", error)
        e = entry["eval"]
        quality = e["score"] + e["helpful"] - 2 * e["harmful"]
        text = (
            f"Updated {entry['id']}: score {js_string(e['score'])}, helpful {js_string(e['helpful'])}, harmful {js_string(e['harmful'])} "
            f"(quality {js_string(quality)}), version {js_string(entry['version'])}."
        )
        evolve = entry.get("evolve")
        if evolve:  # whether the rewrite was kept, and why not (issue 43)
            text += (
                " The content was rewritten."
                if evolve["status"] == "applied"
                else f" The content was not rewritten ({evolve['status']}): {neutralise(evolve.get('reason') or '')}."
            )
        return ToolResult("✅ Knowledge updated", text, _with_items(entry, [entry]))

    async def knowledge_batch_update(self, feedback_list: List[Dict[str, Any]]) -> ToolResult:
        """``POST /api/knowledge/batch_update``: ``[{knowledge_id, is_helpful, case?}]``."""
        items = [
            {"knowledge_id": i["knowledge_id"], "is_helpful": i["is_helpful"], **({"case": i["case"]} if i.get("case") is not None else {})}
            for i in feedback_list
        ]
        try:
            result = await self.client.batch_update(items)
        except KnowHubError as error:
            return _failed("knowledge_batch_update", error)
        lines = [f"Recorded feedback on {result['updated']} of {_count(len(result['results']), 'entry', 'entries')}."]
        for failure in (r for r in result["results"] if not r.get("ok")):
            err = failure.get("error") or {}
            lines.append(f"- {failure['knowledge_id']}: [{err.get('code') or 'error'}] {err.get('message') or 'failed'}")
        return ToolResult("✅ Feedback recorded", "\n".join(lines), _with_items(result, []))

    async def knowledge_list(self, limit: int = 10, types: Optional[List[str]] = None, scopes: Optional[List[str]] = None) -> ToolResult:
        """``GET /api/knowledge``: the newest entries you can see, as data."""
        try:
            page = await self.client.list(limit, types, scopes)
        except KnowHubError as error:
            return _failed("knowledge_list", error)
        more = "\n(More entries exist: raise limit or narrow by types/scopes.)" if page.get("next_cursor") else ""
        n = page["count"]
        text = "No knowledge entries." if n == 0 else f"{_count(n, 'entry', 'entries')}:\n{wrap_entries(page['items'])}{more}"
        return ToolResult(f"📚 {_count(n, 'entry', 'entries')}", text, _with_items(page, page["items"]))

    async def user_profile(self, user: str) -> ToolResult:
        """``GET /api/users/{id}/profile``: a user's profile, current view; each category's current entries as data."""
        try:
            profile = await self.client.user_profile(user)
        except KnowHubError as error:
            return _failed("user_profile", error)
        sections: List[str] = []
        items: List[Dict[str, Any]] = []
        for category in ("preference", "background", "habit", "constraint"):
            entries = profile["categories"][category]
            items += entries
            if not entries:
                sections.append(f"{category}: none")
                continue
            views = [{**e, "types": ["user_profile"], "resource_ids": [], "eval": {"score": e["score"], "helpful": e["helpful"], "harmful": e["harmful"]}} for e in entries]
            confidence = ", ".join("%.2f" % e["confidence"] for e in entries)
            sections.append(f"{category} ({_count(len(entries), 'entry', 'entries')}, confidence {confidence}):\n{wrap_entries(views)}")
        changes = len([e for e in profile["timeline"] if e["event"] != "recorded"])
        current = profile["counts"]["current"]
        head = f"Profile of {profile['user']}: {_count(current, 'current entry', 'current entries')}, {_count(changes, 'change')} in the timeline."
        return ToolResult(f"👤 {_count(current, 'current entry', 'current entries')}", "\n".join([head, *sections]), _with_items(profile, items))

    async def knowledge_slim(self, model: str = DEFAULT_SLIM_MODEL, dry_run: bool = False) -> ToolResult:
        """``POST /api/knowledge/slim``: merges near-duplicates (``dry_run=True`` reports the plan)."""
        try:
            result = await self.client.slim(model, dry_run=dry_run)
        except KnowHubError as error:
            return _failed("knowledge_slim", error)
        groups = [
            f"- {' + '.join(g['merged_ids'])}{' → ' + g['kept_id'] if g.get('kept_id') else ''} (similarity {js_fixed(g['similarity'], 2)})"
            for g in result["groups"]
        ]
        if result["dry_run"]:
            head = f"Dry run: {_count(len(result['groups']), 'group')} of near-duplicates among {result['considered']} entries would be merged."
        else:
            head = (
                f"Merged {_count(result['merged'], 'entry', 'entries')} into {_count(len(result['groups']), 'new entry', 'new entries')} "
                f"(compared {result['considered']})."
            )
        skipped = [f"- skipped {', '.join(s['ids'])}: {s['message']}" for s in result["skipped"]]
        tail = []
        if result.get("truncated"):
            tail.append(
                f"(Only the newest {result['considered']} entries were compared; older ones were not. The HTTP API continues with "
                f"cursor={result.get('next_cursor') or ''}, the CLI with knowhub slim --cursor.)"
            )
        return ToolResult("🧹 Knowledge slimmed", "\n".join([head, *groups, *skipped, *tail]), _with_items(result, []))

    async def knowledge_extract(
        self, messages: List[Dict[str, Any]], mode: str = "propose", trace_id: Optional[str] = None, secrets_scope: Optional[str] = None
    ) -> ToolResult:
        """``POST /api/knowledge/extract``: knowledge from a conversation (``propose`` reports, ``save`` writes; needs the server's LLM).
        ``secrets_scope``: who may read the conversation's secrets (``user`` by default; ``project``, ``agent``, ``team``, ``org``)."""
        context = {k: v for k, v in (("trace_id", trace_id), ("secrets_scope", secrets_scope)) if v}
        try:
            result = await self.client.extract(messages, mode=mode, context=context or None)
        except KnowHubError as error:
            return _failed("knowledge_extract", error)
        verbs = (
            {"add": "added", "update": "updated", "noop": "confirmed"}
            if result["mode"] == "save"
            else {"add": "would add", "update": "would update", "noop": "would confirm"}
        )
        lines = [
            f"- {verbs[i['action']]} {i.get('id') or 'a new entry'} [{', '.join(i['types'])}] {neutralise(i['task'])}: {i['reason']}" for i in result["items"]
        ]
        if not result["items"]:
            head = "Nothing worth keeping was found in the conversation."
        else:
            head = f"{_count(len(result['items']), 'proposal')} from the conversation ({_count(result['llm_calls'], 'LLM call')}):"
        secrets = []
        if result["secrets_found"] > 0:
            stored = f" (stored in {', '.join(result['resources_created'])})" if result["resources_created"] else ""
            secrets.append(f"{_count(result['secrets_found'], 'secret')} kept out of the entries{stored}.")
        refused = [f"- refused {r['action']} of {r.get('existing_id') or 'no entry'}: {neutralise(r['reason'])}" for r in result.get("refused", [])]
        # What the conversation does not support (or the model got wrong) is not kept: said, with why (issue 43).
        dropped = [f"- not kept: {neutralise(d['task'])}: {neutralise(d['reason'])}" for d in result.get("dropped", [])]
        return ToolResult("🧠 Knowledge extracted", "\n".join([head, *lines, *refused, *dropped, *secrets]), dict(result))

    async def resource_save(
        self,
        id: str,
        title: str,
        body: str = "",
        secure_body: Optional[str] = None,
        content_type: str = "text",
        metadata: Optional[Dict[str, Any]] = None,
        scopes: Optional[List[str]] = None,
        owner: Optional[str] = None,
    ) -> ToolResult:
        """``POST /api/resource``: code, a credential, a cookie, text; secrets in ``secure_body`` (encrypted at rest)."""
        try:
            resource = await self.client.resource_save(
                id, js_trim(title), body, secure_body, content_type, metadata, scopes or self.scopes, owner or self.owner
            )
        except KnowHubError as error:
            return _failed("resource_save", error)
        safe = {k: v for k, v in resource.items() if k != "secure_body"}
        secret = "; secret stored encrypted" if safe.get("has_secret") else ""
        text = f"Saved resource {safe['id']} ({safe['content_type']}; scopes {', '.join(safe['scopes'])}{secret})."
        return ToolResult("✅ Resource saved", text, _with_items(safe, []))

    async def resource_get(self, id: str, include_secret: bool = False) -> ToolResult:
        """``GET /api/resource/{id}``: the resource as data (the secret only when asked for and allowed)."""
        try:
            resource = await self.client.resource_get(id, include_secret=include_secret)
        except KnowHubError as error:
            return _failed("resource_get", error)
        note = ""
        if include_secret and resource.get("has_secret") and resource.get("secure_body") is None:
            note = "\n(The secret was not returned: you may not read secrets in this resource's scopes.)"
        return ToolResult(f"📄 {resource['id']}", wrap_resource(resource) + note, _with_items(resource, []))

    async def goal(
        self,
        action: str,
        trace_id: str,
        goal_id: Optional[str] = None,
        parent_id: Optional[str] = None,
        description: Optional[str] = None,
        summary: Optional[str] = None,
        top_k: int = 3,
        min_score: int = 3,
    ) -> ToolResult:
        """``POST /api/goals``: the goal tree of a trace (``create | focus | complete | abandon | show``). ``focus``
        searches knowledge with the goal's description and shows it under "📚 Related knowledge";
        ``metadata["items"]`` is that knowledge."""
        try:
            tree = await self.client.goal(action, trace_id, goal_id, parent_id, description, summary, top_k, min_score)
        except KnowHubError as error:
            return _failed("goal", error)
        title = "✅ Goal focused" if action == "focus" else f"🎯 Goal tree ({action})"
        return ToolResult(title, tree["text"], _with_items(tree, tree["knowledge"]))

    async def focus_goal(self, trace_id: str, goal_id: str, top_k: int = 3, min_score: int = 3) -> ToolResult:
        """Seed 003's ``focus_goal``: focuses the goal; its related knowledge (searched with the goal's
        description, ``top_k`` 3, ``min_score`` 3) is ``metadata["items"]``, and ``output`` the tree with it."""
        return await self.goal("focus", trace_id, goal_id=goal_id, top_k=top_k, min_score=min_score)

    async def get_knowledge(self, *args: Any, **kwargs: Any) -> ToolResult:
        """Seed 002's name for :meth:`knowledge_search` (the same arguments and answer)."""
        return await self.knowledge_search(*args, **kwargs)

    async def save_knowledge(self, *args: Any, **kwargs: Any) -> ToolResult:
        """Seed 002's name for :meth:`knowledge_save` (the same arguments and answer)."""
        return await self.knowledge_save(*args, **kwargs)

    async def call_tool(self, name: str, arguments: Optional[Mapping[str, Any]] = None) -> ToolResult:
        """Runs a model's tool call by name (unknown tools and arguments answer ``validation_error`` / ``not_found`` as text);
        seed 002's ``get_knowledge`` and ``save_knowledge`` are answered as ``knowledge_search`` and ``knowledge_save``."""
        name = SEED_002_ALIASES.get(name, name)
        spec = next((s for s in SPECS if s["name"] == name), None)
        if spec is None:
            names = ", ".join(s["name"] for s in SPECS)
            return _failed(name, KnowHubError("not_found", f'Unknown tool "{name}" (available: {names})', {"tool": name}))
        args = dict(arguments or {})
        properties = spec["parameters"].get("properties", {})
        issues = [{"path": k, "message": f'Unrecognized key: "{k}"'} for k in args if k not in properties]
        issues += [{"path": k, "message": "Required"} for k in spec["parameters"].get("required", []) if k not in args]
        if issues:
            message = f"Invalid arguments of {name}: " + "; ".join(f"{i['path']}: {i['message']}" for i in issues)
            return _failed(name, KnowHubError("validation_error", message, {"issues": issues}))
        method = getattr(self, name)
        return await method(**args)


#: Seed 002's names for two of seed 003's tools.
SEED_002_ALIASES: Dict[str, str] = {"get_knowledge": "knowledge_search", "save_knowledge": "knowledge_save"}


def _specs() -> List[Dict[str, Any]]:
    return copy.deepcopy(SPECS)


def openai_tools() -> List[Dict[str, Any]]:
    """The tools for the OpenAI Chat Completions API (``tools=[...]``) and compatible endpoints."""
    return [{"type": "function", "function": spec} for spec in _specs()]


def openai_responses_tools() -> List[Dict[str, Any]]:
    """The tools for the OpenAI Responses API."""
    return [{"type": "function", **spec} for spec in _specs()]


def anthropic_tools() -> List[Dict[str, Any]]:
    """The tools for the Anthropic Messages API (``input_schema``)."""
    return [{"name": s["name"], "description": s["description"], "input_schema": s["parameters"]} for s in _specs()]


_default: Optional[Tools] = None


def configure(client: Optional[AsyncKnowHub] = None, **defaults: Any) -> Tools:
    """Sets the client (default: ``AsyncKnowHub()`` from ``KNOWHUB_URL`` / ``KNOWHUB_TOKEN``) and defaults
    (``scopes``, ``owner``, ``submitted_by``) of the module-level tool functions."""
    global _default
    _default = Tools(client, **defaults)
    return _default


def _tools() -> Tools:
    return _default if _default is not None else configure()


async def knowledge_search(
    query: str,
    top_k: int = 5,
    min_score: int = 3,
    types: Optional[List[str]] = None,
    order: Optional[str] = None,
    mode: Optional[str] = None,
    as_of: Optional[str] = None,
    include: Optional[List[str]] = None,
) -> ToolResult:
    """Seed 003 ``knowledge_search`` → ``GET /api/knowledge/search``."""
    return await _tools().knowledge_search(query, top_k, min_score, types, order, mode, as_of, include)


async def knowledge_save(
    task: str,
    content: str,
    types: List[str],
    tags: Optional[Dict[str, str]] = None,
    scopes: Optional[List[str]] = None,
    owner: Optional[str] = None,
    source_name: str = "",
    source_category: str = "exp",
    urls: Optional[List[str]] = None,
    agent_id: str = "research_agent",
    submitted_by: str = "",
    score: int = 3,
    message_id: str = "",
    resource_ids: Optional[List[str]] = None,
) -> ToolResult:
    """Seed 003 ``knowledge_save`` → ``POST /api/knowledge``."""
    return await _tools().knowledge_save(
        task, content, types, tags, scopes, owner, source_name, source_category, urls, agent_id, submitted_by, score, message_id, resource_ids
    )


async def knowledge_update(
    knowledge_id: str,
    add_helpful_case: Optional[Dict[str, Any]] = None,
    add_harmful_case: Optional[Dict[str, Any]] = None,
    update_score: Optional[int] = None,
    evolve_feedback: Optional[str] = None,
) -> ToolResult:
    """Seed 003 ``knowledge_update`` → ``PUT /api/knowledge/{id}``."""
    return await _tools().knowledge_update(knowledge_id, add_helpful_case, add_harmful_case, update_score, evolve_feedback)


async def knowledge_batch_update(feedback_list: List[Dict[str, Any]]) -> ToolResult:
    """Seed 003 ``knowledge_batch_update`` → ``POST /api/knowledge/batch_update``."""
    return await _tools().knowledge_batch_update(feedback_list)


async def knowledge_list(limit: int = 10, types: Optional[List[str]] = None, scopes: Optional[List[str]] = None) -> ToolResult:
    """Seed 003 ``knowledge_list`` → ``GET /api/knowledge``."""
    return await _tools().knowledge_list(limit, types, scopes)


async def knowledge_slim(model: str = DEFAULT_SLIM_MODEL, dry_run: bool = False) -> ToolResult:
    """Seed 003 ``knowledge_slim`` → ``POST /api/knowledge/slim``."""
    return await _tools().knowledge_slim(model, dry_run)


async def knowledge_extract(
    messages: List[Dict[str, Any]], mode: str = "propose", trace_id: Optional[str] = None, secrets_scope: Optional[str] = None
) -> ToolResult:
    """``knowledge_extract`` → ``POST /api/knowledge/extract``."""
    return await _tools().knowledge_extract(messages, mode, trace_id, secrets_scope)


async def resource_save(
    id: str,
    title: str,
    body: str = "",
    secure_body: Optional[str] = None,
    content_type: str = "text",
    metadata: Optional[Dict[str, Any]] = None,
    scopes: Optional[List[str]] = None,
    owner: Optional[str] = None,
) -> ToolResult:
    """Seed 003 ``resource_save`` → ``POST /api/resource``."""
    return await _tools().resource_save(id, title, body, secure_body, content_type, metadata, scopes, owner)


async def resource_get(id: str, include_secret: bool = False) -> ToolResult:
    """``resource_get`` → ``GET /api/resource/{id}``."""
    return await _tools().resource_get(id, include_secret)


async def goal(
    action: str,
    trace_id: str,
    goal_id: Optional[str] = None,
    parent_id: Optional[str] = None,
    description: Optional[str] = None,
    summary: Optional[str] = None,
    top_k: int = 3,
    min_score: int = 3,
) -> ToolResult:
    """Seed 003's ``goal`` tool → ``POST /api/goals``."""
    return await _tools().goal(action, trace_id, goal_id, parent_id, description, summary, top_k, min_score)


async def focus_goal(trace_id: str, goal_id: str, top_k: int = 3, min_score: int = 3) -> ToolResult:
    """Seed 003's goal focus: ``metadata["items"]`` is the knowledge attached to the goal."""
    return await _tools().focus_goal(trace_id, goal_id, top_k, min_score)


async def get_knowledge(*args: Any, **kwargs: Any) -> ToolResult:
    """Seed 002's name for :func:`knowledge_search`."""
    return await _tools().knowledge_search(*args, **kwargs)


async def save_knowledge(*args: Any, **kwargs: Any) -> ToolResult:
    """Seed 002's name for :func:`knowledge_save`."""
    return await _tools().knowledge_save(*args, **kwargs)


async def call_tool(name: str, arguments: Optional[Mapping[str, Any]] = None) -> ToolResult:
    """Runs a model's tool call by name with the module's client."""
    return await _tools().call_tool(name, arguments)


__all__ = [
    "DEFAULT_SLIM_MODEL", "SEED_002_ALIASES", "ToolResult", "Tools", "anthropic_tools", "call_tool", "configure", "focus_goal", "get_knowledge", "goal",
    "knowledge_batch_update", "save_knowledge",
    "knowledge_extract", "knowledge_list", "knowledge_save", "knowledge_search", "knowledge_slim", "knowledge_update", "openai_responses_tools",
    "openai_tools", "resource_get", "resource_save", "tool_error_text",
]  # fmt: skip
