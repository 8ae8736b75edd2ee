"""Serves ``vendor/plotly.min.js`` from the installed plotly package, so the UI needs no CDN and the repository
does not carry a 4 MB copy. ``collectstatic`` collects it like any other static file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, overload

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import CheckMessage, Error
from django.core.files.storage import FileSystemStorage

PLOTLY_PATH = "vendor/plotly.min.js"
PLOTLY_FILE = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


class PlotlyFinder(BaseFinder):
    """Finds exactly one file: ``vendor/plotly.min.js``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(PLOTLY_FILE.parent), base_url="/static/vendor/")
        self.storage.prefix = "vendor"  # type: ignore[attr-defined]  # how collectstatic names prefixed files

    def check(self, **kwargs: Any) -> list[CheckMessage]:
        if PLOTLY_FILE.is_file():
            return []
        return [Error(f"plotly.min.js not found at {PLOTLY_FILE}; install requirements/base.txt", id="ui.E001")]

    @overload
    def find(self, path: str, find_all: Literal[False] = False) -> str | None: ...

    @overload
    def find(self, path: str, find_all: Literal[True]) -> list[str]: ...

    def find(self, path: str, find_all: bool = False) -> str | list[str] | None:
        if path != PLOTLY_PATH:
            return [] if find_all else None
        return [str(PLOTLY_FILE)] if find_all else str(PLOTLY_FILE)

    def list(self, ignore_patterns: Any) -> Iterator[tuple[str, FileSystemStorage]]:
        yield PLOTLY_FILE.name, self.storage
