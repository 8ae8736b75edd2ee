from __future__ import annotations

from django.apps import AppConfig


class JobsConfig(AppConfig):
    """Background jobs of slow requests (connectivity checks, previews): queued, claimed once, polled for.

    A base app: the apps whose work runs as jobs register their kinds with it (``services.register``) and it
    imports none of them.
    """

    name = "controlplane.jobs"
    label = "jobs"
    verbose_name = "Background jobs"
