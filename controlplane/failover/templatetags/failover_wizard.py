"""The wizard page's step list, from the step table (``failover/steps.py``): the page's script reads it instead of
keeping a copy of its own."""

from __future__ import annotations

from django import template
from django.utils.html import json_script
from django.utils.safestring import SafeString

from controlplane.failover import steps

register = template.Library()


@register.simple_tag
def wizard_steps() -> SafeString:
    """``<script type="application/json" id="wizard-steps">``: every step's name, label and how it is re-run."""
    return json_script(steps.as_json(), "wizard-steps")
