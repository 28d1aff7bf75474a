"""Procedural memory (SPEC 6.7): write a procedure's next version, read the one in force or any earlier."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from engram.errors import EngramError, NotFoundError, ValidationError
from engram.model import Memory
from engram.model.access import Principal
from engram.model.procedure import NAME_PATTERN, Procedure, ProcedureInput, fact_key
from engram.model.validation import parse
from engram.service.reads import Reads
from engram.service.writes import remember_many


class Procedures(Reads):
    async def put_procedure(
        self,
        name: str,
        procedure: ProcedureInput | Mapping[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "library",
        principal: Principal | None = None,
    ) -> Procedure:
        """Write the procedure's next version (tenant-wide): it supersedes the one in force, which stays
        readable. The same steps and description as the version in force change nothing."""
        who = self._who(tenant, principal, actor)
        _check(name)
        given = parse(ProcedureInput, procedure)
        versions = await self._versions(who, name)
        if versions:
            now = versions[-1]
            if now.current and now.steps == given.steps and now.description == given.description:
                return now
        item = {
            "content": given.content(name), "kind": "procedural", "visibility": "tenant", "fact_key": fact_key(name),
            "source": {"type": "human_note"},
            # the name too: recall asks for the procedure in force by it (metadata {"procedure_name": name})
            "metadata": {"procedure": given.model_dump(mode="json"), "procedure_name": name},
        }  # fmt: skip
        result = (await remember_many(self, who, [item], "sync", batch=False))[0]
        if isinstance(result, EngramError):
            raise result
        return (await self._versions(who, name))[-1]

    async def procedure(
        self,
        name: str,
        *,
        version: int | None = None,
        tenant: str | None = None,
        principal: Principal | None = None,
    ) -> Procedure:
        """The version in force, or version ``version`` (1 is the first)."""
        who = self._who(tenant, principal)
        _check(name)
        versions = await self._versions(who, name)
        if version is not None:
            if not 1 <= version <= len(versions):
                raise NotFoundError(f"procedure {name!r} has {len(versions)} version(s), not {version}",
                                    field="version")  # fmt: skip
            return versions[version - 1]
        current = [v for v in versions if v.current]
        if not current:
            raise NotFoundError(f"no procedure {name!r} is in force in this tenant: PUT one first", field="name")
        return current[-1]

    async def procedure_versions(
        self, name: str, *, tenant: str | None = None, principal: Principal | None = None
    ) -> list[Procedure]:
        """Every version kept, oldest first."""
        who = self._who(tenant, principal)
        _check(name)
        return await self._versions(who, name)

    async def _versions(self, who: Principal, name: str) -> list[Procedure]:
        found: list[Memory] = []
        cursor = None
        while True:
            page = await self.list(principal=who, fact_key=fact_key(name), kind="procedural", cursor=cursor, limit=500)
            found += [m for m in page.items if m.status in ("active", "superseded")]
            cursor = page.next_cursor
            if cursor is None:
                break
        found.sort(key=lambda m: m.id)  # ids sort by creation time
        return [Procedure.of(name, i, m) for i, m in enumerate(found, 1)]


def _check(name: str) -> None:
    if not re.fullmatch(NAME_PATTERN, name):
        raise ValidationError(
            f"procedure name {name[:130]!r} is not valid: 1-120 ASCII letters, digits or _ . : @ -", field="name"
        )
