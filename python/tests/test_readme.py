"""python/README.md's example runs as it stands, against the binary's bundled example
extensions, with a stand-in for tqdm (any bar with its attributes will do)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any, List

import pytest
from conftest import REPO, sdk_extension, write_manifest

import octet_host


class Bar:
    """What the example's ``tqdm(unit=...)`` is here."""

    made: List["Bar"] = []

    def __init__(self, **options: Any) -> None:
        self.total = None
        self.n = 0.0
        self.descriptions: List[str] = []
        Bar.made.append(self)

    def __enter__(self) -> "Bar":
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def update(self, n: float = 1) -> None:
        self.n += n

    def set_description(self, desc: Any = None, refresh: bool = True) -> None:
        self.descriptions.append(str(desc))


def test_the_readme_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = (REPO / "python" / "README.md").read_text()
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "workspace").mkdir()
    sdk_extension(tmp_path / "extensions")
    write_manifest(
        tmp_path / "extensions",
        "notes",
        f"""name = "notes"
version = "0.1.0"
api_version = "0.4"

[entrypoint]
command = {json.dumps(octet_host.find_binary())}
args = ["__extension", "notes"]

[contributes]
tools = ["save_draft"]
notifications = true
""",
    )
    fake = types.ModuleType("tqdm")
    fake.tqdm = Bar  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tqdm", fake)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out
    assert "saved" in printed and "remember the milk" in printed, printed
    assert "''" in printed, "the example's composer was cleared"
    (bar,) = Bar.made
    assert bar.total == 5 and bar.n == 5
