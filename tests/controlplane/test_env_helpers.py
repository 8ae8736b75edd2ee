from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from controlplane.env import env_bool, env_choice, env_int, env_list, env_secret, env_str

VAR = "MIRRORPLANE_TEST_VALUE"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VAR, raising=False)
    monkeypatch.delenv(f"{VAR}_FILE", raising=False)


def test_unset_and_empty_variables_yield_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert env_str(VAR, "fallback") == "fallback"
    monkeypatch.setenv(VAR, "  ")
    assert env_str(VAR, "fallback") == "fallback"
    assert env_bool(VAR, True) is True
    assert env_int(VAR, 7) == 7
    assert env_list(VAR, ["a"]) == ["a"]
    assert env_secret(VAR) is None


def test_str_is_read_stripped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, " value ")
    assert env_str(VAR, "fallback") == "value"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ("YES", True), ("1", True), ("on", True), ("false", False), ("No", False), ("0", False)],
)
def test_bool_accepts_the_usual_spellings(monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    monkeypatch.setenv(VAR, raw)
    assert env_bool(VAR, not expected) is expected


def test_malformed_bool_names_the_variable_and_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "maybe")
    with pytest.raises(ImproperlyConfigured) as excinfo:
        env_bool(VAR, True)
    assert str(excinfo.value) == f"{VAR}: expected a boolean (true/false/1/0/yes/no), got 'maybe'"


def test_int_parses_and_rejects_non_integers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "42")
    assert env_int(VAR, 0) == 42
    monkeypatch.setenv(VAR, "4.2")
    with pytest.raises(ImproperlyConfigured, match=f"^{VAR}: expected an integer, got '4.2'$"):
        env_int(VAR, 0)


def test_list_splits_on_commas_and_drops_blank_items(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "a.example, b.example,,  ")
    assert env_list(VAR, []) == ["a.example", "b.example"]


def test_choice_matches_case_insensitively_and_rejects_others(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "warning")
    assert env_choice(VAR, "INFO", ["INFO", "WARNING"]) == "WARNING"
    monkeypatch.setenv(VAR, "loud")
    with pytest.raises(ImproperlyConfigured, match=f"^{VAR}: expected one of INFO, WARNING, got 'loud'$"):
        env_choice(VAR, "INFO", ["INFO", "WARNING"])


def test_secret_is_read_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "s3cret")
    assert env_secret(VAR, "default") == "s3cret"


def test_secret_is_read_from_the_file_named_by_the_file_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text("from-a-file\n")
    monkeypatch.setenv(f"{VAR}_FILE", str(secret_file))
    assert env_secret(VAR) == "from-a-file"


def test_secret_file_that_cannot_be_read_names_the_file_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(f"{VAR}_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match=f"^{VAR}_FILE: cannot read secret"):
        env_secret(VAR)


def test_empty_secret_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text("\n")
    monkeypatch.setenv(f"{VAR}_FILE", str(secret_file))
    with pytest.raises(ImproperlyConfigured, match=f"^{VAR}_FILE: the file .* is empty$"):
        env_secret(VAR)


def test_secret_given_both_inline_and_as_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text("one")
    monkeypatch.setenv(VAR, "two")
    monkeypatch.setenv(f"{VAR}_FILE", str(secret_file))
    with pytest.raises(ImproperlyConfigured, match=f"^{VAR}: set either {VAR} or {VAR}_FILE, not both$"):
        env_secret(VAR)
