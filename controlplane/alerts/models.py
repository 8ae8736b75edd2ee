"""Alert rules (global defaults and per-flow overrides), the alerts they raise, the targets told about them, and
the silences and acknowledgements that keep a notification from being sent."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q

from controlplane.alerts.choices import OPEN, AlertKind, AlertState, TargetKind


class AlertRule(models.Model):
    """A condition: the kind's value above ``threshold`` for ``for_seconds``. ``flow`` null is the global default
    of its kind; a flow's own rule of that kind replaces it for that flow (disabled: no alert for that flow)."""

    kind = models.CharField(max_length=32, choices=AlertKind.choices)
    flow = models.ForeignKey("flows.Flow", null=True, blank=True, on_delete=models.CASCADE, related_name="alert_rules")
    threshold = models.FloatField(default=0.0, help_text="fires when the value is above this")
    for_seconds = models.PositiveIntegerField(default=60, help_text="how long the condition must hold")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind", "flow_id"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "flow"], name="alertrule_one_per_flow_and_kind"),
            models.UniqueConstraint(fields=["kind"], condition=Q(flow=None), name="alertrule_one_global_per_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} ({'global' if self.flow_id is None else f'flow {self.flow_id}'})"


class Alert(models.Model):
    """One episode of a condition on one subject (a flow, a flow's consumer group, or a cluster): pending, then
    firing, then resolved.

    At most one open (pending or firing) alert per kind and subject, which the database enforces, so two
    evaluations running at once cannot open it twice."""

    kind = models.CharField(max_length=32, choices=AlertKind.choices)
    subject = models.CharField(
        max_length=255, help_text="flow:<id>, flow:<id>:group:<consumer group> (checkpoint age) or cluster:<id>"
    )
    name = models.CharField(max_length=200, help_text="the flow's name or the cluster's alias, when it began")
    flow = models.ForeignKey("flows.Flow", null=True, blank=True, on_delete=models.CASCADE, related_name="alerts")
    cluster = models.ForeignKey(
        "clusters.Cluster", null=True, blank=True, on_delete=models.CASCADE, related_name="alerts"
    )
    group = models.TextField(blank=True, default="", help_text="the consumer group (checkpoint age), else empty")
    rule = models.ForeignKey(AlertRule, null=True, blank=True, on_delete=models.SET_NULL, related_name="alerts")
    state = models.CharField(max_length=16, choices=AlertState.choices, default=AlertState.PENDING)
    value = models.FloatField(null=True, blank=True, help_text="the last value seen while the condition held")
    threshold = models.FloatField()
    message = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(help_text="when the condition was first seen")
    fired_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    acknowledged_note = models.CharField(max_length=500, blank=True, default="")
    notify_held = models.BooleanField(
        default=False, help_text="its firing was not sent (silenced): sent once no silence holds, unless acknowledged"
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "subject"], condition=Q(state__in=OPEN), name="alert_one_open_per_kind_and_subject"
            )
        ]
        indexes = [models.Index(fields=["state", "started_at"], name="alert_state_started")]

    def __str__(self) -> str:
        return f"{self.kind} {self.name} ({self.state})"


class WebhookTarget(models.Model):
    """A notification target: an HTTP endpoint that receives alerts as JSON (the Alertmanager webhook format, or
    Slack's ``{"text": ...}``), or e-mail recipients. A URL may carry a token, so it is stored encrypted like cluster
    passwords and never shown whole: only its scheme and host."""

    name = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=16, choices=TargetKind.choices, default=TargetKind.WEBHOOK)
    url_encrypted = models.TextField(editable=False, blank=True, default="")
    url_origin = models.CharField(max_length=300, editable=False, help_text="scheme://host[:port], for display")
    recipients = models.JSONField(default=list, blank=True, help_text="e-mail addresses (e-mail targets)")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_sent_at = models.DateTimeField(null=True, blank=True)
    last_status = models.IntegerField(null=True, blank=True, help_text="HTTP status of the last delivery")
    last_error = models.TextField(blank=True, default="", help_text="why the last delivery failed, or empty")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Silence(models.Model):
    """While it holds (``starts_at`` to ``ends_at``), the alerts it matches send no notification; they still show,
    marked silenced. It matches an alert of its ``rule`` or ``kind`` (at least one is set) and, when set, of its flow
    or cluster. Expiring it early sets ``ends_at`` to now; it is kept, with who made it, for the record."""

    kind = models.CharField(max_length=32, choices=AlertKind.choices, blank=True, default="")
    rule = models.ForeignKey(AlertRule, null=True, blank=True, on_delete=models.CASCADE, related_name="silences")
    flow = models.ForeignKey("flows.Flow", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    cluster = models.ForeignKey("clusters.Cluster", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=500)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()

    class Meta:
        ordering = ["-ends_at", "-id"]
        indexes = [models.Index(fields=["ends_at"], name="silence_ends_at")]

    def __str__(self) -> str:
        return f"silence {self.pk} ({self.kind or f'rule {self.rule_id}'})"

    def matches(self, alert: Alert, now: datetime) -> bool:
        return (
            self.starts_at <= now < self.ends_at
            and (not self.kind or alert.kind == self.kind)
            and (self.rule_id is None or alert.rule_id == self.rule_id)
            and (self.flow_id is None or alert.flow_id == self.flow_id)
            and (self.cluster_id is None or alert.cluster_id == self.cluster_id)
        )
