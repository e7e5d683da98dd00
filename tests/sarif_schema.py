"""The SARIF 2.1.0 JSON schema, from a registry package, fetched once into the test cache.

``@microsoft/jest-sarif`` (npm, MIT) ships the schema as
``lib/schemas/sarif-2.1.0-rtm.5.json``; ``npm pack`` fetches the package without installing or
running anything. In CI (``CI`` set) a failed fetch fails the test; elsewhere it skips.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from typing import Any

import pytest

from tests.releases import location

PACKAGE = "@microsoft/jest-sarif@1.0.0-beta.0"
MEMBER = "package/lib/schemas/sarif-2.1.0-rtm.5.json"


def sarif_schema() -> dict[str, Any]:
    """The schema, as a dict."""
    # beside the releases' cache, not in it: that folder is sgtrace's own cache, which holds only its parts
    target = location().with_name(location().name + "-schemas") / "sarif-2.1.0-rtm.5.json"
    if not target.is_file():
        _fetch(target)
    schema: dict[str, Any] = json.loads(target.read_text())
    return schema


def _fetch(target: Any) -> None:
    work = target.parent / ".sarif-fetch"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        npm = shutil.which("npm")
        if npm is None:
            raise OSError("npm is not installed")
        proc = subprocess.run([npm, "pack", PACKAGE, "--silent"], cwd=work, capture_output=True, text=True, timeout=120)
        tarballs = list(work.glob("*.tgz"))
        if proc.returncode != 0 or not tarballs:
            raise OSError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "npm pack failed")
        with tarfile.open(tarballs[0]) as bundle:
            source = bundle.extractfile(MEMBER)
            if source is None:
                raise OSError(f"{MEMBER} not in {PACKAGE}")
            partial = target.with_suffix(".part")
            partial.write_bytes(source.read())
            os.replace(partial, target)
    except (OSError, subprocess.SubprocessError, tarfile.TarError, KeyError) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must reach the npm registry for the SARIF schema: {exc}")
        pytest.skip(f"SARIF schema not available outside CI: {exc}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def assert_valid_sarif(document: dict[str, Any]) -> None:
    """Fail with every schema violation listed."""
    import jsonschema

    validator = jsonschema.Draft4Validator(sarif_schema())
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors, "\n".join(errors[:20])
