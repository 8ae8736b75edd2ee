"""WSGI entry point of the control plane (gunicorn in deployments, runserver in ``make demo``)."""

from __future__ import annotations

import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")

application = get_wsgi_application()

# Import every view now rather than on the first request, then move the ~130k long-lived objects of Django, DRF
# and the apps out of the cyclic collector's view: each full collection traversed them all, which made a request
# now and then 100 ms slower than its median (bench/README.md, "Control-plane API").
get_resolver().url_patterns  # noqa: B018 (loads the URLconf)
gc.collect()
gc.freeze()
