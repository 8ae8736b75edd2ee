#!/usr/bin/env python
"""Django's command-line utility for the Mirrorplane control plane."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        # Load settings up front so a malformed environment variable is reported in one line.
        settings.INSTALLED_APPS  # noqa: B018
    except ImproperlyConfigured as exc:
        sys.exit(f"Mirrorplane configuration error: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
