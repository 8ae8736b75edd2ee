"""``/api/v1/tokens/``: a user lists, creates and revokes their own API tokens; an admin sees and revokes anyone's."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from controlplane.accounts import services
from controlplane.accounts.api.serializers import ApiTokenSerializer, IssuedTokenSerializer, TokenRequestSerializer
from controlplane.accounts.models import ApiToken
from controlplane.core.permissions import ADMIN, IsViewer, has_role


@extend_schema_view(
    list=extend_schema(parameters=[OpenApiParameter("user", str, description="exact user name of the owner")])
)
class ApiTokenViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet[ApiToken]
):
    """Any role manages its own tokens; another user's token is a 404, except to an admin."""

    queryset = ApiToken.objects.none()
    serializer_class = ApiTokenSerializer
    permission_classes = [IsViewer]

    def get_queryset(self) -> QuerySet[ApiToken]:
        tokens = services.live_tokens()
        if not has_role(self.request.user, ADMIN):
            tokens = tokens.filter(user=self.request.user.pk)
        owner = self.request.query_params.get("user")
        return tokens.filter(user__username=owner) if owner else tokens

    @extend_schema(request=TokenRequestSerializer, responses={201: IssuedTokenSerializer})
    def create(self, request: Request) -> Response:
        refusal = services.refusal_to_issue(request.user)  # type: ignore[arg-type]  # IsViewer: signed in
        if refusal is not None:
            raise PermissionDenied(refusal)
        asked = TokenRequestSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        presented = request.auth if isinstance(request.auth, ApiToken) else None
        token, secret = services.issue(
            request.user,  # type: ignore[arg-type]  # IsViewer admits only signed-in users
            request.user,
            hours=asked.validated_data.get("expiry_hours"),
            name=asked.validated_data["name"],
            not_after=presented.expiry if presented is not None else None,
        )
        token.token = secret  # shown this once, never stored
        return Response(IssuedTokenSerializer(token).data, status=status.HTTP_201_CREATED)

    def perform_destroy(self, instance: ApiToken) -> None:
        services.revoke(instance, self.request.user)

    def get_serializer_class(self) -> type[BaseSerializer[ApiToken]]:
        return IssuedTokenSerializer if self.action == "create" else ApiTokenSerializer
