"""``python -m tests.support.oidc_provider.setup SPEC.json``: the provider's database, signing key, users, client.

SPEC holds ``users`` (name to password), ``client_id``, ``client_secret`` and ``redirect_uri``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import django


def main(spec_path: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.support.oidc_provider.settings")
    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from oidc_provider.models import Client, ResponseType

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    call_command("migrate", verbosity=0)
    call_command("creatersakey", verbosity=0)
    for name, password in spec["users"].items():
        User.objects.create_user(name, email=f"{name}@example.org", password=password)
    client = Client.objects.create(
        name="mirrorplane",
        client_type="confidential",
        client_id=spec["client_id"],
        client_secret=spec["client_secret"],
        jwt_alg="RS256",
        require_consent=False,
    )
    client.redirect_uris = [spec["redirect_uri"]]
    client.save()
    client.response_types.add(ResponseType.objects.get(value="code"))


if __name__ == "__main__":
    main(sys.argv[1])
