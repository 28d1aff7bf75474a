"""Where webhooks may go. An action's URL comes from an API caller; without a check, a key that may write could
make the worker POST to the cloud's metadata service, the database's host or anything else only the server
can reach (server-side request forgery). So private, loopback, link-local and otherwise non-public
addresses are refused unless the operator lists them, and when the operator lists hosts at all, webhooks go
only there (``ENGRAM_WEBHOOK_ALLOWED_HOSTS``).

The URL is checked when the action is written (a 400 naming ``url``) and its host's addresses again before
each attempt, since a name can come to point elsewhere. The check and the connection resolve the name
separately: a resolver that answers differently within that moment can still win the race, which an
egress proxy or firewall closes for good (docs/security.md).
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from engram.errors import ValidationError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Targets:
    """The operator's list: host names (``hooks.example.com``, ``*.corp.example``), addresses and CIDR ranges."""

    def __init__(self, allowed: Sequence[str] = ()) -> None:
        self.names: list[str] = []
        self.networks: list[Network] = []
        for entry in (e.strip().lower() for e in allowed):
            if not entry:
                continue
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.names.append(entry.rstrip("."))

    @classmethod
    def parse(cls, text: str | None) -> Targets:
        return cls((text or "").split(","))

    @property
    def restricted(self) -> bool:
        return bool(self.names or self.networks)

    def _named(self, host: str) -> bool:
        return any(fnmatch.fnmatchcase(host, pattern) for pattern in self.names)

    def _listed(self, address: Address) -> bool:
        return any(address in network for network in self.networks)

    def check_url(self, url: str) -> str:
        """The URL's host, or ValidationError(field="url") when it is malformed or plainly not allowed."""
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").rstrip(".").lower()
            parts.port  # noqa: B018  (a port that is not a number raises here)
        except ValueError as exc:
            raise ValidationError(f"not a valid URL: {exc}", field="url") from exc
        if parts.scheme not in ("http", "https") or not host:
            raise ValidationError("must be an http:// or https:// URL with a host", field="url")
        if parts.username or parts.password:
            raise ValidationError("must not carry credentials (user:password@): send them in the payload", field="url")
        literal = _address(host)
        if literal is not None:
            why = self.refusal(host, [literal])
        elif self.restricted and not self._named(host) and not self.networks:
            why = f"host {host} is not in ENGRAM_WEBHOOK_ALLOWED_HOSTS"
        else:
            why = None
        if why is not None:
            raise ValidationError(why, field="url")
        return host

    def refusal(self, host: str, addresses: Sequence[Address]) -> str | None:
        """Why a host with these addresses may not be called, or None when it may."""
        if self._named(host):
            return None  # listed by name: the operator vouches for wherever it points
        for address in addresses:
            if self._listed(address):
                continue
            if self.restricted:
                return f"host {host} ({address}) is not in ENGRAM_WEBHOOK_ALLOWED_HOSTS"
            if not address.is_global or address.is_multicast:
                return (
                    f"host {host} resolves to {address}, a private, loopback or link-local address; list it in "
                    "ENGRAM_WEBHOOK_ALLOWED_HOSTS to allow it"
                )
        return None

    async def check_on_write(self, url: str) -> None:
        """ValidationError(field="url") when the URL is not allowed; a name that does not resolve yet is let
        through (each attempt resolves it again)."""
        why = await self.check_before_sending(url)
        if why is not None and " does not resolve: " not in why:
            raise ValidationError(why, field="url")

    async def check_before_sending(self, url: str) -> str | None:
        """Why the URL may not be called now (its host resolved afresh), or None when it may."""
        try:
            host = self.check_url(url)
        except ValidationError as exc:
            return str(exc)
        literal = _address(host)
        if literal is not None:
            return None  # checked by check_url
        port = urlsplit(url).port or (443 if url.lower().startswith("https") else 80)
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            return f"host {host} does not resolve: {exc}"
        return self.refusal(host, [_unmapped(ipaddress.ip_address(info[4][0])) for info in infos])


def _address(host: str) -> Address | None:
    try:
        return _unmapped(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


def _unmapped(address: Address) -> Address:
    """An IPv4 address written as IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address
