"""The package as installed: its generated module matches the schema, it carries its
own binary, and it is the installed copy the tests import."""

from __future__ import annotations

import importlib.util
import inspect
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Dict, List

from conftest import REPO

import octet_host
import octet_host.aio
from octet_host import errors


def generated(*outputs: str) -> str:
    """What python/tools/generate.py prints for the repository's schema and ``outputs``."""
    generator = REPO / "python" / "tools" / "generate.py"
    schema = REPO / "docs" / "serve-protocol.schema.json"
    return subprocess.run(
        [sys.executable, str(generator), str(schema), *outputs],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_the_generated_modules_match_the_schema() -> None:
    package = Path(octet_host.__file__)
    fix = "run `python3 python/tools/generate.py` and commit the result"
    assert package.with_name("_generated.py").read_text() == generated("-"), fix
    assert package.with_name("_error_codes.py").read_text() == generated(os.devnull, "-"), fix
    operations = generated(os.devnull, os.devnull, "-")
    assert package.with_name("_operations.py").read_text() == operations, fix


def test_both_apis_have_the_same_methods_with_the_same_parameters() -> None:
    def surface(cls: type) -> Dict[str, List[str]]:
        return {
            name: [str(p) for p in inspect.signature(member).parameters.values()]
            for name, member in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_")
        }

    sync, asyncio = surface(octet_host.Host), surface(octet_host.aio.Host)
    assert sync == asyncio
    assert set(octet_host.OPS) <= set(sync) | {"shutdown"}, set(octet_host.OPS) - set(sync)


def test_the_package_is_typed() -> None:
    assert Path(octet_host.__file__).with_name("py.typed").exists()


def test_every_error_code_of_the_docs_has_its_exception() -> None:
    doc = (REPO / "docs" / "serve-protocol.md").read_text()

    def section(title: str) -> str:
        return doc.split(title, 1)[1].split("\n#", 1)[0]

    codes = set()
    for title in ("### Control-line errors", "### Call errors (in `result` lines)"):
        for line in section(title).splitlines():
            if line.startswith("| `"):
                codes.add(line.split("|")[1].strip().strip("`"))
    start = section("### Start and reload errors").split("Details", 1)[0]
    # The paragraph names two members of initialize_rejected's error in passing.
    codes |= {c for c in start.replace("\n", " ").split("`")[1::2] if c.isidentifier()}
    codes -= {"rpc_code", "data"}
    assert len(codes) > 30, codes
    missing = codes - set(errors.ERROR_CLASSES)
    assert missing == set(), sorted(missing)


def test_the_installed_binary_is_found_first() -> None:
    if os.environ.get("OCTET_HOST_TEST_INSTALLED") != "1":
        return  # a development run points OCTET_HOST_BIN at target/release
    scripts = Path(sysconfig.get_path("scripts"))
    assert Path(octet_host.find_binary()) == scripts / "octet-host"
    spec = importlib.util.find_spec("octet_host")
    assert spec is not None and spec.origin is not None
    assert not Path(spec.origin).is_relative_to(REPO / "python"), spec.origin
