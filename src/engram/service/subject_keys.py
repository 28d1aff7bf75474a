"""Per-subject vault keys (crypto-shredding, SPEC 6.5). A personal value written for a user is sealed under
that user's own data key, and the data keys live in a directory outside the database (``subject_keys_dir``,
by default ``<data dir>/subject-keys``, beside and not inside the PostgreSQL cluster), each wrapped by the
vault's keyring. Forgetting the user destroys the file: the sealed copies in every database backup, taken
before or after, can no longer be opened by anyone, since no backup of the database holds the key.

File names are keyed hashes of tenant and user (the directory's own random salt), so a listing reveals
neither. Back this directory up apart from the database, and only as long as deletions may be undone: a
copy of the directory from before a deletion brings the deleted values back (docs/security.md).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from engram.errors import VaultLocked
from engram.service.keyring import NONCE, Keyring

_SALT = ".salt"


class SubjectKeys:
    def __init__(self, folder: Path, keyring: Keyring) -> None:
        self.folder = folder
        self.keyring = keyring
        self._cache: dict[str, bytes] = {}
        self._salt_bytes: bytes | None = None

    def _salt(self) -> bytes:
        """The directory's salt, read once (made the first time)."""
        if self._salt_bytes is None:
            path = self.folder / _SALT
            if not path.exists():
                self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                self._write_new(path, secrets.token_bytes(32))
            self._salt_bytes = path.read_bytes()
        return self._salt_bytes

    @staticmethod
    def _write_new(path: Path, data: bytes) -> bool:
        """Create ``path`` with ``data`` unless it exists (another process won); durable once it returns."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return True

    def key_id(self, tenant_id: str, subject: str) -> str:
        digest = hmac.new(self._salt(), f"{tenant_id}\x1f{subject}".encode(), hashlib.sha256).hexdigest()
        return "sk_" + digest[:40]

    def _path(self, key_id: str) -> Path:
        return self.folder / f"{key_id}.key"

    def _aad(self, key_id: str) -> bytes:
        return b"engram subject key " + key_id.encode()

    def dek(self, key_id: str) -> bytes | None:
        """The data key ``key_id`` names, or None when it was destroyed (or never made)."""
        if key_id in self._cache:
            return self._cache[key_id]
        path = self._path(key_id)
        if not path.exists():
            return None
        ring_key, _, wrapped = path.read_bytes().partition(b"\n")
        vault_key = next((k for k in self.keyring.keys if k.key_id == ring_key.decode()), None)
        if vault_key is None:
            raise VaultLocked(f"subject key {key_id} is wrapped by vault key {ring_key.decode()!r}, not configured")
        try:
            dek = AESGCM(vault_key.seal_key).decrypt(wrapped[:NONCE], wrapped[NONCE:], self._aad(key_id))
        except InvalidTag as exc:
            raise VaultLocked(f"subject key {key_id} does not open: altered, or another vault key") from exc
        self._cache[key_id] = dek
        return dek

    def ensure(self, tenant_id: str, subject: str) -> tuple[str, bytes]:
        """The subject's key id and data key, made now if it has none."""
        key_id = self.key_id(tenant_id, subject)
        found = self.dek(key_id)
        if found is not None:
            return key_id, found
        dek = secrets.token_bytes(32)
        self._write_new(self._path(key_id), self._wrap(key_id, dek))
        made = self.dek(key_id)  # ours, or a racing process's
        assert made is not None
        return key_id, made

    def _wrap(self, key_id: str, dek: bytes) -> bytes:
        nonce = secrets.token_bytes(NONCE)
        current = self.keyring.current
        return current.key_id.encode() + b"\n" + nonce + AESGCM(current.seal_key).encrypt(nonce, dek, self._aad(key_id))

    def destroy(self, tenant_id: str, subject: str) -> bool:
        """Delete the subject's key for good; whether there was one."""
        key_id = self.key_id(tenant_id, subject)
        self._cache.pop(key_id, None)
        try:
            self._path(key_id).unlink()
        except FileNotFoundError:
            return False
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(fd)  # the removal itself is durable
        finally:
            os.close(fd)
        return True

    def rewrap(self) -> int:
        """Wrap every subject key under the keyring's current key (``engram vault rotate``); how many were."""
        done = 0
        for path in sorted(self.folder.glob("sk_*.key")) if self.folder.exists() else []:
            key_id = path.stem
            if path.read_bytes().partition(b"\n")[0].decode() == self.keyring.current.key_id:
                continue
            dek = self.dek(key_id)
            if dek is None:
                continue
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(self._wrap(key_id, dek))
            os.replace(tmp, path)
            done += 1
        return done


def seal(dek: bytes, aad: bytes, plain: str) -> bytes:
    nonce = secrets.token_bytes(NONCE)
    return nonce + AESGCM(dek).encrypt(nonce, plain.encode(), aad)


def open_sealed(dek: bytes, aad: bytes, sealed: bytes) -> str:
    return AESGCM(dek).decrypt(sealed[:NONCE], sealed[NONCE:], aad).decode()
