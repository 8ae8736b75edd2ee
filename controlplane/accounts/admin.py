"""The admin lists every API token (never a secret) and revokes any; tokens are created with the API or the command,
which show the secret once."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from controlplane.accounts import services
from controlplane.accounts.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # not subscriptable at run time
    list_display = ("prefix", "name", "user", "created", "expiry")
    search_fields = ("user__username", "name")
    fields = ("prefix", "name", "user", "created", "expiry")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: ApiToken) -> None:
        services.revoke(obj, request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset.select_related("user"):
            services.revoke(token, request.user)
