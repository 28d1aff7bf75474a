"""The vault's keys (SPEC 4.5): AES-256-GCM seals each value, an HMAC-SHA256 finds it again; both derived
from a key of the configuration (``ENGRAM_VAULT_KEYS``), never stored in the database.

``ENGRAM_VAULT_KEYS`` is a comma-separated list of ``id:base64`` (32 random bytes each); the first seals new
values, the others still open old ones until ``engram vault rotate`` has sealed everything again under the
first. Unset, a key is generated once into ``<data dir>/vault-keys`` (mode 0600): fine on a laptop; a
server should take its keys from a secret manager (docs/admission.md).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from engram.errors import ConfigurationError, VaultLocked

KEY_FILE = "vault-keys"
_KEY_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
NONCE = 12


def _derive(secret: bytes, purpose: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"engram vault " + purpose).derive(secret)


@dataclass(frozen=True)
class VaultKey:
    key_id: str
    seal_key: bytes = field(repr=False)
    index_key: bytes = field(repr=False)

    @classmethod
    def from_secret(cls, key_id: str, secret: bytes) -> VaultKey:
        if not _KEY_ID.match(key_id):
            raise ConfigurationError(f"vault key id {key_id!r}: use 1-64 letters, digits, '_', '.' or '-'")
        if len(secret) != 32:
            raise ConfigurationError(f"vault key {key_id!r} must be 32 bytes (base64 of 32 random bytes)")
        return cls(key_id, _derive(secret, b"seal"), _derive(secret, b"index"))


def _aad(tenant_id: str, kind: str, ordinal: int) -> bytes:
    # A sealed value opens only in its own row: moved to another tenant or placeholder, it fails its tag.
    return f"{tenant_id}\x00{kind}\x00{ordinal}".encode()


value_aad = _aad  # for the per-subject copies (service/subject_keys.py): bound to their row the same way


@dataclass(frozen=True)
class Keyring:
    """The vault's keys, the current one first."""

    keys: tuple[VaultKey, ...]

    @property
    def current(self) -> VaultKey:
        return self.keys[0]

    @classmethod
    def parse(cls, text: str) -> Keyring:
        keys: list[VaultKey] = []
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            key_id, sep, encoded = part.partition(":")
            if not sep:
                raise ConfigurationError("ENGRAM_VAULT_KEYS: each key is id:base64, separated by commas")
            try:
                secret = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ConfigurationError(f"vault key {key_id!r} is not valid base64") from exc
            keys.append(VaultKey.from_secret(key_id, secret))
        if not keys:
            raise ConfigurationError("ENGRAM_VAULT_KEYS holds no key")
        if len({k.key_id for k in keys}) != len(keys):
            raise ConfigurationError("ENGRAM_VAULT_KEYS names a key id twice")
        return cls(tuple(keys))

    @classmethod
    def from_file(cls, folder: Path) -> Keyring:
        """The data directory's key file, created with a new key the first time."""
        path = folder / KEY_FILE
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            line = f"k1:{base64.b64encode(secrets.token_bytes(32)).decode()}\n"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # another process made it first
                pass
            else:
                with os.fdopen(fd, "w") as f:
                    f.write(line)
        return cls.parse(path.read_text().strip())

    def blind(self, tenant_id: str, kind: str, normal: str) -> dict[str, bytes]:
        """The value's keyed hash under each key (a value sealed under an older key is found by that key's)."""
        message = f"{tenant_id}\x00{kind}\x00{normal}".encode()
        return {k.key_id: hmac.new(k.index_key, message, hashlib.sha256).digest() for k in self.keys}

    def seal(self, tenant_id: str, kind: str, ordinal: int, value: str) -> tuple[str, bytes]:
        nonce = secrets.token_bytes(NONCE)
        sealed = AESGCM(self.current.seal_key).encrypt(nonce, value.encode(), _aad(tenant_id, kind, ordinal))
        return self.current.key_id, nonce + sealed

    def open(self, tenant_id: str, kind: str, ordinal: int, key_id: str, sealed: bytes) -> str:
        key = next((k for k in self.keys if k.key_id == key_id), None)
        if key is None:
            raise VaultLocked(
                f"vault key {key_id!r} is not configured: add it to ENGRAM_VAULT_KEYS (after the current key) "
                "until `engram vault rotate` has sealed its values again"
            )
        try:
            plain = AESGCM(key.seal_key).decrypt(sealed[:NONCE], sealed[NONCE:], _aad(tenant_id, kind, ordinal))
        except InvalidTag as exc:
            raise VaultLocked(f"a vault value ({kind} {ordinal}) does not open: altered, or another key") from exc
        return plain.decode()


def new_key_line(key_id: str = "k1") -> str:
    """A fresh ``id:base64`` key for ENGRAM_VAULT_KEYS (``engram vault new-key``)."""
    return f"{key_id}:{base64.b64encode(secrets.token_bytes(32)).decode()}"
