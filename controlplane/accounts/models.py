"""A user's API token, stored as knox stores it: the SHA-512 digest of the secret and the secret's first characters."""

from __future__ import annotations

from django.db import models
from knox.models import AbstractAuthToken
from knox.settings import CONSTANTS

# Characters of the secret shown to tell tokens apart: "mp_" and 8 hex digits, 32 of the secret's 256 random bits.
SHOWN_PREFIX_LENGTH = 11
MAX_NAME_LENGTH = 100


class ApiToken(AbstractAuthToken):  # type: ignore[misc]  # knox ships no annotations
    """A user's API token: acts with the user's role until it expires, is revoked, or the user's password changes.

    knox keys its token by the digest; an integer id here gives the API and the audit log a short, secret-free name
    for it. ``token_key`` (the secret's first 15 characters) is knox's lookup index and is never shown whole.
    """

    id = models.BigAutoField(primary_key=True)
    digest = models.CharField(max_length=CONSTANTS.DIGEST_LENGTH, unique=True)
    name = models.CharField(max_length=MAX_NAME_LENGTH, blank=True, default="")

    class Meta:
        ordering = ["-created", "-id"]
        verbose_name = "API token"

    @property
    def prefix(self) -> str:
        return str(self.token_key)[:SHOWN_PREFIX_LENGTH]

    def __str__(self) -> str:
        return f"{self.prefix}… of {self.user}"
