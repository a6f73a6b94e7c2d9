"""Tag filters on the read path that find both spellings, ``key:value`` and ``key=value``.

Old data says ``topic=infra``, new data ``topic:infra`` (memwarden canonicalizes on write); a
search in either spelling must find both, with the exact semantics of every ``tags_match`` mode
(``policies/tagfilter.py`` states them). A tag's spellings are the tag as written plus its key and
value joined by ``:`` and by ``=`` (split at the first of either; a tag without one, or with an
empty key or value, has one spelling). The rewrite, per mode, over tags ``t1..tn`` with spelling
sets ``S(ti)``:

* ``any`` / ``any_strict``: the union of every ``S(ti)``, same mode — a memory holds one of the
  tags in some spelling exactly when it holds one of the union.
* ``all_strict``: an AND of ORs, ``{"and": [{"tags": S(ti), "match": "any_strict"}, ...]}``.
* ``all``: the same, OR-ed with "untagged" (``{"tags": [], "match": "exact"}``), which ``all``
  admits.
* ``exact``: the memory's tag set equals the query's up to spelling — an OR of ``exact`` leaves,
  one per choice of a non-empty subset of ``S(ti)`` for every tag (a memory may carry both
  spellings of one tag). That is 3^n leaves for n two-spelling tags; past :data:`MAX_EXACT_LEAVES`
  the query is refused rather than silently narrowed.

**memwarden's labels are invisible to a filter that does not name them.** memwarden adds a
``topic:`` and a ``stage:`` tag to every memory it writes; a client's filter that names neither key
must select what it would had memwarden added none (:class:`LabelSpace`): ``any`` and ``all`` admit
untagged memories, so they also admit memories whose only tags are one topic and one stage (an OR of
``exact`` leaves, one per topic × stage × separator: a deployment that changed its separator holds
labels in both); an ``exact`` leaf also matches its tags, as memwarden writes them (canonical, in
either separator), plus one topic and stage in the same separator. ``any_strict`` and ``all_strict`` are not
affected by tags a memory has beyond the filter's. A filter that names ``topic:`` or ``stage:``
uses the labels as they are.

Top-level ``tags`` in an all-mode or ``exact`` become a ``tag_groups`` entry (Hindsight's
``tag_groups`` list is AND-ed, and ``tags`` and ``tag_groups`` are mutually exclusive, so a
request carrying both is left for the backend to refuse). Leaves inside ``tag_groups`` are
rewritten the same way, keeping their other keys (``resolve``). Pure functions, no I/O.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memwarden.policies.tags import canonicalize_tags

ANY_MODES = ("any", "any_strict")
MAX_EXACT_LEAVES = 81  # four two-spelling tags
MAX_LEAVES = 1024  # an exact filter with the label combinations: past this, refused
_SPLIT = re.compile(r"^([^:=]*)[:=](.*)$", re.S)


class TagQueryError(ValueError):
    """A tag filter that cannot be normalized (the message says why, for a 400)."""


@dataclass(frozen=True)
class LabelSpace:
    """The label tags memwarden writes: every (topic, stage) pair, in either separator.

    memwarden writes its labels and canonicalizes the client's tags with one separator, the
    configured one; a deployment that changed it holds older memories in the other (``topic=infra``
    beside ``topic:infra``). A label-blind filter looks past both."""

    keys: frozenset[str]
    topics: tuple[str, ...]
    stages: tuple[str, ...]
    separator: str = ":"

    @classmethod
    def of(cls, topics: Sequence[str], stages: Sequence[str], separator: str = ":") -> LabelSpace:
        return cls(frozenset({"topic", "stage"}), tuple(topics), tuple(stages), separator)

    @property
    def separators(self) -> tuple[str, str]:
        """The configured separator first, then the other one."""
        return (self.separator, "=" if self.separator == ":" else ":")

    @property
    def combos(self) -> tuple[tuple[str, str], ...]:
        """Every (topic, stage) pair as memwarden writes it, in each separator."""
        return tuple(
            (f"topic{sep}{t}", f"stage{sep}{s}") for sep in self.separators for t in self.topics for s in self.stages
        )

    def with_labels(self, tags: Sequence[str]) -> list[list[str]]:
        """Every tag set a memory written through memwarden holds when the client sent ``tags``:
        the tags canonical in one separator plus one label pair in the same separator."""
        out = []
        for sep in self.separators:
            written = canonicalize_tags(tags, separator=sep)
            out += [[*written, f"topic{sep}{t}", f"stage{sep}{s}"] for t in self.topics for s in self.stages]
        return out

    def named_in(self, tags: Sequence[str]) -> bool:
        """Whether a filter over ``tags`` names a label (then it sees the labels): a label key with
        a value of the vocabulary. A client's own ``topic:homelab`` — a value memwarden never writes
        as a label, kept as the client's tag — leaves the filter label-blind."""
        for tag in tags:
            match = _SPLIT.match(tag)
            if match is None:
                continue
            key, value = match.group(1).strip().casefold(), match.group(2).strip().casefold().replace(" ", "_")
            if key in self.keys and value in (self.topics if key == "topic" else self.stages):
                return True
        return False


def spellings(tag: str) -> list[str]:
    """The tag as written first, then its ``key:value`` and ``key=value`` forms."""
    match = _SPLIT.match(tag)
    if not match or not match.group(1).strip() or not match.group(2).strip():
        return [tag]
    key, value = match.groups()
    return list(dict.fromkeys([tag, f"{key}:{value}", f"{key}={value}"]))


def _varies(tags: Sequence[str]) -> bool:
    return any(len(spellings(t)) > 1 for t in tags)


def _union(tags: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(s for t in tags for s in spellings(t)))


def _subsets(options: list[str]) -> list[list[str]]:
    return [list(c) for r in range(1, len(options) + 1) for c in itertools.combinations(options, r)]


def rewrite_leaf(
    tags: Sequence[str], mode: str, extra: Mapping[str, Any] | None = None, labels: LabelSpace | None = None
) -> dict[str, Any]:
    """One ``{tags, match}`` filter as a group node matching every spelling and, with ``labels``,
    blind to memwarden's labels unless it names them. ``extra`` (e.g. ``resolve``) is carried onto
    each generated leaf."""
    node = _spelled(tags, mode, extra)
    if labels is None or labels.named_in(tags) or mode in ("any_strict", "all_strict"):
        return node
    more = dict(extra or {})
    if mode in ("any", "all"):
        if not tags:
            return node  # no filter at all
        label_only = [{"tags": list(combo), "match": "exact", **more} for combo in labels.combos]
        return {"or": [node, *label_only]}
    leaves = node.get("or", [node])
    # A memory that carries labels was written through memwarden: its tags are canonical.
    with_labels = [{"tags": held, "match": "exact", **more} for held in labels.with_labels(tags)]
    if len(leaves) + len(with_labels) > MAX_LEAVES:
        raise TagQueryError(
            f"tags_match 'exact' over {len(tags)} tags needs {len(leaves) + len(with_labels)} alternatives to"
            f" look past memwarden's topic and stage labels (at most {MAX_LEAVES}); use fewer tags"
        )
    return {"or": [*leaves, *with_labels]}


def _spelled(tags: Sequence[str], mode: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One ``{tags, match}`` filter as a group node matching every spelling."""
    more = dict(extra or {})
    tags = list(dict.fromkeys(tags))
    if not _varies(tags) or (mode != "exact" and not tags):
        return {"tags": tags, "match": mode, **more}
    if mode in ANY_MODES:
        return {"tags": _union(tags), "match": mode, **more}
    if mode in ("all", "all_strict"):
        every = {"and": [{"tags": spellings(t), "match": "any_strict", **more} for t in tags]}
        if mode == "all_strict":
            return every
        return {"or": [{"tags": [], "match": "exact", **more}, every]}
    if mode == "exact":
        choices = [_subsets(spellings(t)) for t in tags]
        count = 1
        for c in choices:
            count *= len(c)
        if count > MAX_EXACT_LEAVES:
            raise TagQueryError(
                f"tags_match 'exact' over {len(tags)} key:value tags needs {count} alternatives to cover both"
                f" spellings (at most {MAX_EXACT_LEAVES}); use fewer tags or one spelling in the data"
            )
        leaves = [
            {"tags": list(dict.fromkeys(s for part in combo for s in part)), "match": "exact", **more}
            for combo in itertools.product(*choices)
        ]
        return {"or": leaves}
    raise TagQueryError(f"tags_match must be one of any, all, any_strict, all_strict, exact, got {mode!r}")


def _rewrite_group(node: Any, labels: LabelSpace | None) -> Any:
    if not isinstance(node, dict):
        return node  # the backend answers a malformed group
    if "tags" in node and isinstance(node["tags"], list) and all(isinstance(t, str) for t in node["tags"]):
        extra = {k: v for k, v in node.items() if k not in ("tags", "match")}
        return rewrite_leaf(node["tags"], str(node.get("match", "any_strict")), extra, labels)
    for key in ("and", "or"):
        if key in node and isinstance(node[key], list):
            return {**node, key: [_rewrite_group(c, labels) for c in node[key]]}
    if "not" in node:
        return {**node, "not": _rewrite_group(node["not"], labels)}
    return node


MAX_GROUP_DEPTH = 16  # and/or/not inside each other
MAX_GROUP_NODES = 1024  # nodes of a tag_groups tree, leaves included
MAX_FILTER_TAGS = 256  # tags named by one filter (top-level tags, or all the leaves together)
MAX_TAG_CHARS = 512  # one tag


def check_filter_size(request: Mapping[str, Any]) -> None:
    """Raise :class:`TagQueryError` for a tag filter past the limits above: a recall may not make
    the backend walk a tree of any size (a tree 400 levels deep broke the store's filter)."""
    tags = request.get("tags")
    named = list(tags) if isinstance(tags, list) else []
    nodes = 0
    stack: list[tuple[Any, int]] = (
        [(g, 1) for g in request.get("tag_groups") or []] if isinstance(request.get("tag_groups"), list) else []
    )
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if depth > MAX_GROUP_DEPTH:
            raise TagQueryError(f"tag_groups nest more than {MAX_GROUP_DEPTH} levels deep")
        if nodes > MAX_GROUP_NODES:
            raise TagQueryError(f"tag_groups hold more than {MAX_GROUP_NODES} groups and leaves")
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("tags"), list):
            named.extend(node["tags"])
        for key in ("and", "or"):
            if isinstance(node.get(key), list):
                stack.extend((child, depth + 1) for child in node[key])
        if "not" in node:
            stack.append((node["not"], depth + 1))
    if len(named) > MAX_FILTER_TAGS:
        raise TagQueryError(f"a tag filter may name at most {MAX_FILTER_TAGS} tags, this one names {len(named)}")
    for tag in named:
        if isinstance(tag, str) and len(tag) > MAX_TAG_CHARS:
            raise TagQueryError(f"a tag in a filter is {len(tag)} characters long, at most {MAX_TAG_CHARS}")


def normalize_request(request: Mapping[str, Any], labels: LabelSpace | None = None) -> tuple[dict[str, Any], bool]:
    """A recall body whose tag filters match both spellings and, with ``labels``, look past
    memwarden's labels unless they name them; and whether anything changed.

    Raises :class:`TagQueryError` when a filter is past :func:`check_filter_size`'s limits or an
    ``exact`` filter is too wide to rewrite."""
    check_filter_size(request)
    out = dict(request)
    tags, groups = request.get("tags"), request.get("tag_groups")
    if tags and groups:
        return out, False  # mutually exclusive: the backend's 400
    mode = request.get("tags_match") or "any"
    if isinstance(tags, list) and all(isinstance(t, str) for t in tags) and isinstance(mode, str):
        blind = labels is not None and not labels.named_in(tags) and mode in ("any", "all", "exact")
        # (A request that also carries ``tag_groups``, even an empty list, is the backend's to judge.)
        if blind and (tags or mode == "exact") and groups is None:
            out.pop("tags", None)
            out.pop("tags_match", None)
            out["tag_groups"] = [rewrite_leaf(tags, mode, None, labels)]
        elif _varies(tags):
            if mode in ANY_MODES:
                out["tags"] = _union(tags)
            else:
                out.pop("tags")
                out.pop("tags_match", None)
                out["tag_groups"] = [rewrite_leaf(tags, mode)]
    if isinstance(groups, list):
        out["tag_groups"] = [_rewrite_group(g, labels) for g in groups]
    return out, out != dict(request)


MAX_LIST_QUERIES = 128  # a list filter fanned out over more queries than this is refused


def list_filters(tags: Sequence[str], mode: str, labels: LabelSpace | None = None) -> list[tuple[list[str], str]]:
    """For routes that take only ``tags`` + ``tags_match`` (``GET .../memories/list``): the
    queries whose union is the normalized filter. One query for the any-modes (the union of
    spellings); for the others, one per choice of spellings (fanned out, merged by id). With
    ``labels``, a filter that names none also gets the label-only memories (``any``, ``all``: one
    ``exact`` query per topic × stage × separator) or its tags plus each label pair (``exact``)."""
    tags = list(dict.fromkeys(tags))
    queries = _list_spelled(tags, mode)
    blind = labels is not None and not labels.named_in(tags) and mode in ("any", "all", "exact")
    if labels is None or not blind or (not tags and mode != "exact"):
        return queries
    if mode == "exact":  # labelled memories were written through memwarden: canonical tags
        queries = [*queries, *((held, "exact") for held in labels.with_labels(tags))]
    else:
        queries = [*queries, *((list(combo), "exact") for combo in labels.combos)]
    if len(queries) > MAX_LIST_QUERIES:
        raise TagQueryError(
            f"this list filter needs {len(queries)} queries to look past memwarden's topic and stage labels"
            f" (at most {MAX_LIST_QUERIES}); use recall with tag_groups, or fewer tags"
        )
    return queries


def _list_spelled(tags: list[str], mode: str) -> list[tuple[list[str], str]]:
    if not _varies(tags):
        return [(tags, mode)]
    if mode in ANY_MODES:
        return [(_union(tags), mode)]
    node = rewrite_leaf(tags, mode)
    if mode == "exact":
        return [(leaf["tags"], "exact") for leaf in node["or"]]
    # all / all_strict: every memory holding each tag in some spelling holds one choice of single
    # spellings (and may hold more): the all-mode query per choice, unioned, is the same set.
    return [(list(choice), mode) for choice in itertools.product(*(spellings(t) for t in tags))]
