"""``manage.py token create|list|revoke USER``: API tokens from the command line."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.management.base import BaseCommand, CommandError, CommandParser

from controlplane.accounts import services
from controlplane.accounts.models import MAX_NAME_LENGTH, ApiToken


def _positive(value: str) -> int:
    hours = int(value)
    if hours < 1:
        raise ValueError(value)
    return hours


class Command(BaseCommand):
    help = (
        "create USER prints a new API token of USER once (stdout: the token alone); list USER shows their tokens "
        "without secrets; revoke USER deletes all their tokens, or one with --id."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="create a token and print it once")
        create.add_argument("username")
        create.add_argument(
            "--expiry-hours",
            type=_positive,
            default=None,
            help="hours until it expires (default: MIRRORPLANE_TOKEN_TTL_HOURS)",
        )
        create.add_argument("--name", default="", help="a name to tell it apart")
        listing = actions.add_parser("list", help="list the user's tokens, without secrets")
        listing.add_argument("username")
        revoke = actions.add_parser("revoke", help="revoke all the user's tokens, or one with --id")
        revoke.add_argument("username")
        revoke.add_argument("--id", type=int, default=None, dest="token_id", help="revoke only this token")

    def handle(self, *args: Any, **options: Any) -> None:
        user = _user(options["username"])
        if options["action"] == "create":
            self._create(user, options["expiry_hours"], options["name"])
        elif options["action"] == "list":
            self._list(user)
        else:
            self._revoke(user, options["token_id"])

    def _create(self, user: AbstractBaseUser, hours: int | None, name: str) -> None:
        if len(name) > MAX_NAME_LENGTH:
            raise CommandError(f"--name: at most {MAX_NAME_LENGTH} characters")
        token, secret = services.issue(user, None, hours=hours, name=name)
        self.stdout.write(secret)
        owner, expiry = user.get_username(), _minute(token.expiry)
        self.stderr.write(f"Token {token.id} ({token.prefix}…) of {owner}, expires {expiry}. It is not shown again.")

    def _list(self, user: AbstractBaseUser) -> None:
        for token in services.live_tokens().filter(user=user):
            fields = (token.id, f"{token.prefix}…", _minute(token.created), _minute(token.expiry), token.name)
            self.stdout.write("\t".join(str(field) for field in fields))

    def _revoke(self, user: AbstractBaseUser, token_id: int | None) -> None:
        if token_id is None:
            count = services.revoke_all(user, None)
        else:
            token = ApiToken.objects.filter(user=user, id=token_id).select_related("user").first()
            if token is None:
                raise CommandError(f"--id: {user.get_username()} has no token {token_id}")
            services.revoke(token, None)
            count = 1
        self.stdout.write(f"Revoked {count} token{'' if count == 1 else 's'} of {user.get_username()}.")


def _minute(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment is not None else "never"


def _user(username: str) -> AbstractBaseUser:
    model = get_user_model()
    try:
        user: AbstractBaseUser = model._default_manager.get_by_natural_key(username)
    except model.DoesNotExist:
        raise CommandError(f"username: no user named {username!r}") from None
    return user
