"""Choices of the flows app, spelled as MM2 properties files spell them."""

from __future__ import annotations

from django.db import models


class ReplicationPolicyClass(models.TextChoices):
    DEFAULT = "DefaultReplicationPolicy", "Default (remote topics are source.topic)"
    IDENTITY = "IdentityReplicationPolicy", "Identity (remote topics keep their names)"


class OffsetSyncsTopicLocation(models.TextChoices):
    SOURCE = "source", "source"
    TARGET = "target", "target"


class UseDefaultsFrom(models.TextChoices):
    SOURCE = "source", "source: copy the source's default"
    TARGET = "target", "target: keep the target's default"


class OnDataLoss(models.TextChoices):
    FAIL = "fail", "fail: stop the task"
    CONTINUE = "continue", "continue: report, then resume at the log start"
