"""The OpenAPI schema is complete: every view declares its responses, so drf-spectacular guesses nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.controlplane.test_settings_from_env import REPO

# The UI's read endpoints, the last views that had no serializer: each now names its response component.
UI_READS = {
    "/api/v1/dashboard/": "Dashboard",
    "/api/v1/flows/{id}/history/": "FlowHistory",
    "/api/v1/flows/{id}/checkpoint-freshness/": "FlowCheckpoints",
    "/api/v1/flows/{id}/reports/": "FlowReports",
}


def test_schema_generation_has_no_errors_or_warnings_and_validates(tmp_path: Path) -> None:
    # A fresh process: drf-spectacular counts errors and warnings in a global that other tests' schema requests
    # would already have filled. --fail-on-warn fails on either; --validate checks the result against OpenAPI 3.
    out = tmp_path / "schema.yaml"
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "controlplane.settings", "MIRRORPLANE_STATE_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "spectacular", "--fail-on-warn", "--validate", "--file", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Schema generation summary" not in result.stderr, result.stderr
    paths = yaml.safe_load(out.read_text())["paths"]
    for path, component in UI_READS.items():
        response = paths[path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert response == {"$ref": f"#/components/schemas/{component}"}, path
