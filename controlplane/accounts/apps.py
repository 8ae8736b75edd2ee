from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Users' API tokens (hashed, expiring, revocable) and the audit records of logins, failures and lockouts."""

    name = "controlplane.accounts"
    label = "accounts"
    verbose_name = "Accounts and API tokens"

    def ready(self) -> None:
        # drf-spectacular registers the token's security scheme as the class is defined, i.e. by this import.
        import controlplane.accounts.schema  # noqa: F401
        from controlplane.accounts import signals

        signals.connect()
