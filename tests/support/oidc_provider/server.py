"""Start and stop the test OpenID Connect provider (this package) as a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.support import processes

ROOT = Path(__file__).resolve().parents[3]


class OidcProvider:
    """django-oidc-provider on ``http://127.0.0.1:<port>``, its state under ``state_dir``."""

    def __init__(self, state_dir: Path, port: int) -> None:
        self.state_dir = state_dir
        self.port = port
        self.issuer = f"http://127.0.0.1:{port}"
        self._process: subprocess.Popen[bytes] | None = None

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL"))}
        env.update(
            DJANGO_SETTINGS_MODULE="tests.support.oidc_provider.settings", OIDC_PROVIDER_STATE=str(self.state_dir)
        )
        return env

    def start(self, users: dict[str, str], client_id: str, client_secret: str, redirect_uri: str) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.set_groups({})
        spec = self.state_dir / "spec.json"
        spec.write_text(
            json.dumps(
                {"users": users, "client_id": client_id, "client_secret": client_secret, "redirect_uri": redirect_uri}
            ),
            encoding="utf-8",
        )
        run = [sys.executable, "-m", "tests.support.oidc_provider.setup", str(spec)]
        subprocess.run(run, cwd=ROOT, env=self._env(), check=True, timeout=120)
        log = (self.state_dir / "server.log").open("wb")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "django", "runserver", f"127.0.0.1:{self.port}", "--noreload"],
            cwd=ROOT,
            env=self._env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self._wait_for_discovery(deadline=time.monotonic() + 60)

    def _wait_for_discovery(self, deadline: float) -> None:
        while True:
            try:
                self.discovery()
                return
            except OSError:
                if self._process is not None and self._process.poll() is not None:
                    raise RuntimeError(f"the OIDC provider exited; see {self.state_dir / 'server.log'}") from None
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def discovery(self) -> dict[str, Any]:
        url = f"{self.issuer}/.well-known/openid-configuration"
        with urllib.request.urlopen(url, timeout=5) as response:
            document: dict[str, Any] = json.load(response)
        return document

    def set_groups(self, groups: dict[str, list[str]]) -> None:
        """The ``groups`` claim of each user from now on."""
        (self.state_dir / "groups.json").write_text(json.dumps(groups), encoding="utf-8")

    def stop(self) -> None:
        processes.stop(self._process)
        self._process = None
