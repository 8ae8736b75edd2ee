from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from controlplane.accounts.models import MAX_NAME_LENGTH, ApiToken
from controlplane.core.serializers import StrictInput


class ApiTokenSerializer(serializers.ModelSerializer[ApiToken]):
    """A token as listed: never its secret, only the first characters that tell it apart."""

    user = serializers.CharField(source="user.get_username", read_only=True)
    prefix = serializers.CharField(read_only=True)

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "user", "created", "expiry"]
        read_only_fields = fields


class IssuedTokenSerializer(ApiTokenSerializer):
    """A token just created, with its secret: the only time the secret is shown."""

    token = serializers.CharField(read_only=True, help_text="The secret: send it as `Authorization: Token <token>`.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "token"]
        read_only_fields = fields


class TokenRequestSerializer(StrictInput, serializers.Serializer[None]):
    """What a user asks for: an optional name and a life of at most MIRRORPLANE_TOKEN_TTL_HOURS."""

    name = serializers.CharField(required=False, allow_blank=True, max_length=MAX_NAME_LENGTH, default="")
    expiry_hours = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=settings.MIRRORPLANE_TOKEN_TTL_HOURS,
        help_text="Hours until the token expires (default and maximum: MIRRORPLANE_TOKEN_TTL_HOURS). A token used "
        "to create another cannot give it a later expiry than its own.",
    )
