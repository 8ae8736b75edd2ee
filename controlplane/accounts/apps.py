from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Users' API tokens (hashed, expiring, revocable) and the audit records of logins, failures and lockouts."""

    name = "controlplane.accounts"
    label = "accounts"
    verbose_name = "Accounts and API tokens"

    def ready(self) -> None:
        from controlplane.accounts import signals

        signals.connect()
