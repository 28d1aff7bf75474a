"""Personal data and the vault (SPEC 4.5): what a write's text fields hold of it is replaced by placeholders
stable per tenant and value (``EMAIL_1``, ``PERSON_A``) before hashing, embedding and storing; the real values
are sealed in the vault. Reads, lists and recall show placeholders; ``reveal`` (admins, or keys created with
``can_reveal``) puts the values back. A recall's query is masked with the same placeholders, so that it
matches what was stored and its receipt holds none of the values.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from engram.errors import EngramError
from engram.model.admission import AdmissionPolicy, Admitted
from engram.model.decision import SEVERITY, Admission, Reason
from engram.model.memory import Memory, MemoryInput
from engram.model.text import normalise_whitespace
from engram.policy import names as ner
from engram.policy.pii import PLACEHOLDER, PREFIX, Found, find_structured, merge, parse_placeholder, placeholder
from engram.policy.pii import replace as replace_found
from engram.service.admission import rejection
from engram.service.core import Core
from engram.service.keyring import Keyring, value_aad
from engram.service.subject_keys import open_sealed, seal
from engram.store import vault

Key = tuple[str, str]  # (kind, normal form)


@dataclass
class _Fields:
    """The text fields of one item that personal data is looked for in, by path."""

    texts: dict[str, str]

    @classmethod
    def of(cls, item: MemoryInput) -> _Fields:
        texts: dict[str, str] = {"content": item.content}
        if item.summary:
            texts["summary"] = item.summary
        for i, tag in enumerate(item.tags):
            texts[f"tags[{i}]"] = tag
        if item.source.ref:
            texts["source.ref"] = item.source.ref
        _walk(item.metadata, "metadata", texts)
        return cls(texts)


def _walk(value: Any, path: str, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _walk(v, f"{path}.{k}", out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _walk(v, f"{path}[{i}]", out)
    elif isinstance(value, str):
        out[path] = value


def _rebuild(value: Any, path: str, new: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _rebuild(v, f"{path}.{k}", new) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebuild(v, f"{path}[{i}]", new) for i, v in enumerate(value)]
    if isinstance(value, str):
        return new.get(path, value)
    return value


async def detect(policy: AdmissionPolicy, items: Sequence[MemoryInput]) -> list[dict[str, list[Found]]]:
    """Each item's finds by field path: structured kinds everywhere; names in content and summary, and
    wherever else those names are written (a metadata ``speaker``, a tag)."""
    kinds = [k for k in policy.pii_kinds if k != "person"]
    fields = [_Fields.of(item) for item in items]
    out: list[dict[str, list[Found]]] = [
        {path: find_structured(text, kinds) for path, text in f.texts.items()} for f in fields
    ]
    if "person" in policy.pii_kinds and ner.available():
        where = [(i, path) for i, f in enumerate(fields) for path in ("content", "summary") if path in f.texts]
        texts = [fields[i].texts[path] for i, path in where]
        found = await asyncio.to_thread(ner.find_names, texts) if texts else []
        for (i, path), names in zip(where, found, strict=True):
            out[i][path] = merge(out[i][path], names)
        for i, f in enumerate(fields):
            people = {n.value.casefold(): n for part in ("content", "summary") for n in out[i].get(part, [])
                      if n.kind == "person"}  # fmt: skip
            for other, text in f.texts.items():
                # A source.ref is a locator: a name inside a URL stays, or the link breaks.
                if people and other not in ("content", "summary", "source.ref"):
                    out[i][other] = merge(out[i][other], list(_written(text, people)))
    return [{path: f for path, f in item.items() if f} for item in out]


def _written(text: str, people: dict[str, Found]) -> Iterator[Found]:
    """Where these names appear in ``text`` (whole words, any case)."""
    for value, name in people.items():
        for m in re.finditer(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE):
            yield Found("person", m.start(), m.end(), m.group(), name.normal)


def _kinds(finds: dict[str, list[Found]]) -> str:
    return ", ".join(sorted({f.kind for found in finds.values() for f in found}))


async def mask_items(
    engram: Core, tenant_id: str, policy: AdmissionPolicy, admitted: list[Admitted]
) -> tuple[list[Admitted], dict[int, EngramError]]:
    """The admitted items with their personal data replaced by placeholders (or refused, per policy)."""
    if policy.pii == "off" or not admitted:
        return admitted, {}
    finds = await detect(policy, [a.item for a in admitted])
    kept: list[Admitted] = []
    refused: dict[int, EngramError] = {}
    to_mask: list[tuple[Admitted, dict[str, list[Found]]]] = []
    for a, found in zip(admitted, finds, strict=True):
        if not found:
            kept.append(a)
            continue
        first = next(iter(found))
        if policy.pii == "reject":
            reason = Reason(code="pii", check="pii", decision="reject", field=first, detail=_kinds(found))
        elif policy.pii_retention_required and a.item.policy.retention_reason is None:
            reason = Reason(
                code="pii_without_retention_reason", check="pii", decision="reject", field=first,
                detail=f"{_kinds(found)}; send policy.retention_reason to keep personal data",
            )  # fmt: skip
        else:
            to_mask.append((a, found))
            continue
        refused[a.index] = rejection(_with(a.admission, [reason]))
    if to_mask:
        keys: dict[Key, str] = {
            (f.kind, f.normal): f.value for _, found in to_mask for fs in found.values() for f in fs
        }
        holders: dict[Key, set[str | None]] = {}
        for a, found in to_mask:  # who wrote each value: its copy is sealed under that user's own key
            for fs in found.values():
                for f in fs:
                    holders.setdefault((f.kind, f.normal), set()).add(a.item.user_id)
        names = await assign(engram, tenant_id, keys, holders)
        kept += [_masked(a, found, names) for a, found in to_mask]
    return sorted(kept, key=lambda a: a.index), refused


def _with(admission: Admission, reasons: list[Reason], masked: Sequence[str] = ()) -> Admission:
    every = [*admission.reasons, *reasons]
    decision = max((r.decision for r in every), key=SEVERITY.index, default="admit")
    return Admission(decision=decision, reasons=every, masked=sorted({*admission.masked, *masked}))


def _masked(a: Admitted, found: dict[str, list[Found]], names: dict[Key, str]) -> Admitted:
    item = a.item
    new = {path: replace_found(_Fields.of(item).texts[path], fs, names) for path, fs in found.items()}
    changes: dict[str, Any] = {"policy": item.policy.model_copy(update={"contains_pii": True})}
    if "content" in new:
        changes["content"] = normalise_whitespace(new["content"])
    if "summary" in new:
        changes["summary"] = new["summary"]
    if any(p.startswith("tags[") for p in new):
        changes["tags"] = list(dict.fromkeys(new.get(f"tags[{i}]", t) for i, t in enumerate(item.tags)))
    if "source.ref" in new:
        changes["source"] = item.source.model_copy(update={"ref": new["source.ref"]})
    if any(p.startswith("metadata") for p in new):
        changes["metadata"] = _rebuild(item.metadata, "metadata", new)
    reasons = [
        Reason(code="pii_masked", check="pii", decision="admit_redacted", field=path,
               detail=", ".join(sorted({f.kind for f in fs})))
        for path, fs in found.items()
    ]  # fmt: skip
    masked = [names[(f.kind, f.normal)] for fs in found.values() for f in fs]
    return Admitted(a.index, item.model_copy(update=changes), _with(a.admission, reasons, masked))


async def assign(
    engram: Core, tenant_id: str, values: dict[Key, str], holders: dict[Key, set[str | None]] | None = None
) -> dict[Key, str]:
    """A placeholder for each value: the one it has in the tenant's vault, else a new one. The value is sealed
    under the data key of each user who wrote it (``holders``; ``service.subject_keys``), and under the
    tenant's keyring only when a write without a user holds it."""
    ring = engram.keyring
    holders = holders or {key: {None} for key in values}
    hashes = {key: ring.blind(tenant_id, *key) for key in values}
    wanted = [(key[0], h) for key, by_key in hashes.items() for h in by_key.values()]
    async with engram.db.tenant(tenant_id) as conn:
        ordinals = await _known(conn, tenant_id, hashes, wanted)
        missing = [key for key in values if key not in ordinals]
        if missing:
            await vault.lock(conn, tenant_id)
            ordinals.update(await _known(conn, tenant_id, hashes, wanted))  # a racing writer's
            missing = [key for key in values if key not in ordinals]
            last = await vault.last_ordinals(conn, tenant_id, sorted({k for k, _ in missing}))
            entries: list[vault.NewEntry] = []
            for kind, normal in missing:
                last[kind] = last.get(kind, 0) + 1
                ordinals[(kind, normal)] = last[kind]
                shared: bytes | None = None
                key_id = ring.current.key_id
                if None in holders.get((kind, normal), {None}):
                    key_id, shared = ring.seal(tenant_id, kind, last[kind], _plain(normal, values[(kind, normal)]))
                entries.append(vault.NewEntry(kind, last[kind], hashes[(kind, normal)][key_id], key_id, shared))
            await vault.insert(conn, tenant_id, entries)
        copies: list[vault.Copy] = []
        for key, ordinal in ordinals.items():
            plain = _plain(key[1], values[key])
            for subject in sorted(s for s in holders.get(key, set()) if s is not None):
                subject_key, dek = engram.subject_keys.ensure(tenant_id, subject)
                copies.append(vault.Copy(key[0], ordinal, subject_key,
                                         seal(dek, value_aad(tenant_id, key[0], ordinal), plain)))  # fmt: skip
            if key not in missing and None in holders.get(key, set()):
                key_id, shared = ring.seal(tenant_id, key[0], ordinal, plain)
                await vault.seal_shared(conn, tenant_id, key[0], ordinal, key_id, shared)
        await vault.add_copies(conn, tenant_id, copies)
        engram.vault_used.put(tenant_id, True)
    return {key: placeholder(key[0], ordinal) for key, ordinal in ordinals.items()}


async def _known(conn: Any, tenant_id: str, hashes: dict[Key, dict[str, bytes]], wanted: list[Any]) -> dict[Key, int]:
    found = await vault.find(conn, tenant_id, wanted)
    out: dict[Key, int] = {}
    for key, by_key in hashes.items():
        hit = next((found[(key[0], h)] for h in by_key.values() if (key[0], h) in found), None)
        if hit is not None:
            out[key] = hit
    return out


def _plain(normal: str, value: str) -> str:
    # The normal form is sealed with the value as written: a rotation hashes it again under the new key.
    return json.dumps([normal, value], ensure_ascii=False)


async def values_of(engram: Core, tenant_id: str, placeholders: Sequence[str]) -> dict[str, str]:
    """The real values behind these placeholders (VaultLocked when a key is missing). A value sealed only
    under the keys of users since forgotten opens no more: its placeholder stays."""
    pairs = [p for p in (parse_placeholder(x) for x in placeholders) if p is not None]
    async with engram.db.tenant(tenant_id) as conn:
        rows = await vault.fetch(conn, tenant_id, pairs)
        private = [(r.kind, r.ordinal) for r in rows if r.sealed is None]
        copies = await vault.copies(conn, tenant_id, private)
    ring = engram.keyring
    out: dict[str, str] = {}
    for r in rows:
        if r.sealed is not None:
            out[placeholder(r.kind, r.ordinal)] = json.loads(
                ring.open(tenant_id, r.kind, r.ordinal, r.key_id, r.sealed)
            )[1]
    for c in copies:
        name = placeholder(c.kind, c.ordinal)
        dek = engram.subject_keys.dek(c.subject_key)
        if name in out or dek is None:
            continue
        out[name] = json.loads(open_sealed(dek, value_aad(tenant_id, c.kind, c.ordinal), c.sealed))[1]
    return out


def revealed(memory: Memory, values: dict[str, str]) -> Memory:
    """The memory with its placeholders replaced by their values."""
    mine = {p: v for p, v in values.items() if p in memory.admission.masked}
    if not mine:
        return memory

    def put_back(text: str) -> str:
        return PLACEHOLDER.sub(lambda m: mine.get(m.group(), m.group()), text)

    return memory.model_copy(
        update={
            "content": put_back(memory.content),
            "summary": put_back(memory.summary) if memory.summary else memory.summary,
            "tags": [put_back(t) for t in memory.tags],
            "metadata": _map_strings(memory.metadata, put_back),
            "source": memory.source.model_copy(
                update={"ref": put_back(memory.source.ref) if memory.source.ref else memory.source.ref}
            ),
        }
    )


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, dict):
        return {k: _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    return fn(value) if isinstance(value, str) else value


_POSSESSIVE = re.compile(r"['\u2019]s?$")
_WORD = re.compile(r"[^\W\d_][\w'\u2019-]*")


async def mask_query(engram: Core, tenant_id: str, policy: AdmissionPolicy, text: str) -> str:
    """A recall query with the tenant's placeholders for the values its vault knows; structured values it
    does not know become their kind (``EMAIL``): no memory holds them, and the receipt must not."""
    if policy.pii == "off":
        return text
    structured = find_structured(text, [k for k in policy.pii_kinds if k != "person"])
    candidates: dict[Key, list[Found]] = {}
    for f in structured:
        candidates.setdefault((f.kind, f.normal), []).append(f)
    if "person" in policy.pii_kinds:
        for f in _name_candidates(text, structured):
            candidates.setdefault((f.kind, f.normal), []).append(f)
    if not candidates:
        return text
    known: dict[Key, int] = {}
    if await _has_values(engram, tenant_id):
        ring = engram.keyring
        hashes = {key: ring.blind(tenant_id, *key) for key in candidates}
        wanted = [(k[0], h) for k, hs in hashes.items() for h in hs.values()]
        async with engram.db.tenant(tenant_id) as conn:
            known = await _known(conn, tenant_id, hashes, wanted)
    chosen: list[Found] = []
    names: dict[Key, str] = {}
    for key, finds in sorted(candidates.items(), key=lambda kv: -max(f.end - f.start for f in kv[1])):
        if key in known:
            names[key] = placeholder(key[0], known[key])
        elif key[0] != "person":
            names[key] = PREFIX[key[0]]
        else:
            continue
        chosen += [f for f in finds if not any(f.start < c.end and c.start < f.end for c in chosen)]
    return replace_found(text, chosen, names) if chosen else text


async def _has_values(engram: Core, tenant_id: str) -> bool:
    """Whether the tenant's vault holds anything (cached: most tenants' recalls then cost no lookup)."""
    found = engram.vault_used.get(tenant_id)
    if found is None:
        async with engram.db.tenant(tenant_id) as conn:
            found = await vault.any_values(conn, tenant_id)
        engram.vault_used.put(tenant_id, found)
    return found


def _name_candidates(text: str, structured: list[Found]) -> list[Found]:
    """Each run of capitalised words, and every part of it up to four words: a name the vault knows is
    among them ("how does Priya Raman want ..." looks up "Priya Raman", "Priya" and "Raman")."""
    runs: list[list[re.Match[str]]] = []
    previous_end = -1
    for w in _WORD.finditer(text[:2000]):
        if not w.group()[0].isupper() or any(w.start() < s.end and s.start < w.end() for s in structured):
            previous_end = -1
            continue
        if previous_end >= 0 and not text[previous_end : w.start()].strip():
            runs[-1].append(w)
        else:
            runs.append([w])
        previous_end = w.end()
    out: list[Found] = []
    for run in runs:
        for i in range(len(run)):
            for j in range(i + 1, min(len(run), i + 4) + 1):
                start = run[i].start()
                value = _POSSESSIVE.sub("", text[start : run[j - 1].end()])
                if value:
                    out.append(Found("person", start, start + len(value), value, " ".join(value.casefold().split())))
    return out[:400]


async def rotate(engram: Core, tenant_id: str, batch: int = 500) -> int:
    """Seal the tenant's vault values again under the current key; returns how many were."""
    ring: Keyring = engram.keyring
    done = 0
    while True:
        async with engram.db.tenant(tenant_id) as conn:
            rows = await vault.not_under(conn, tenant_id, ring.current.key_id, batch)
            entries = []
            for r in rows:
                assert r.sealed is not None  # not_under reads only the tenant-wide copies
                normal, value = json.loads(ring.open(tenant_id, r.kind, r.ordinal, r.key_id, r.sealed))
                key_id, sealed = ring.seal(tenant_id, r.kind, r.ordinal, _plain(normal, value))
                value_hash = ring.blind(tenant_id, r.kind, normal)[key_id]
                entries.append(vault.NewEntry(r.kind, r.ordinal, value_hash, key_id, sealed))
            await vault.reseal(conn, tenant_id, entries)
        done += len(rows)
        if len(rows) < batch:
            engram.subject_keys.rewrap()  # the users' data keys, wrapped under the current key too
            return done
