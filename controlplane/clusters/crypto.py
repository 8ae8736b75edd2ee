"""Cluster credentials at rest: Fernet tokens under ``settings.MIRRORPLANE_CREDENTIALS_KEY``."""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


class CredentialsError(RuntimeError):
    """A stored credential that the configured key cannot decrypt (the key was changed)."""


def _fernet() -> Fernet:
    return Fernet(settings.MIRRORPLANE_CREDENTIALS_KEY)


def encrypt(secret: str) -> str:
    return "" if not secret else _fernet().encrypt(secret.encode()).decode()


def decrypt(token: str) -> str:
    if not token:
        return ""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        # The token is not echoed: the message may end up in a log line or a response.
        raise CredentialsError("stored credentials cannot be decrypted with MIRRORPLANE_CREDENTIALS_KEY") from None
