"""The grader checks itself: before grading, each of its source files against the hashes it was installed with.

A learner's code graded with ``--unsafe`` runs as the grader's user and can append to ``pagedlab/grading/run.py``;
every later run, of any class, would then run that code. So the grader refuses to start when one of its files
differs from :data:`pagedlab.grading.manifest.SHA256` (written when the grader changes, and checked by the tests
to be up to date) or, for an installed wheel, from the hashes in the package's ``RECORD``, and names the file.

This catches a grader changed on disk since it was installed; it cannot stop code that rewrites the manifest too:
grade with the sandbox, and as a user who cannot write the installed package.

Usage: ``python -m pagedlab.grading.integrity --write`` after changing the grader on purpose.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.py"


class Changed(RuntimeError):
    """A source file of the grader differs from the one it was installed with (the message names it)."""


def sources() -> dict[str, str]:
    """``{file name: sha256}`` of every Python source of ``pagedlab.grading`` except the manifest itself."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(HERE.glob("*.py"))
            if p != MANIFEST}


def _recorded() -> dict[str, str]:
    """``{file name: sha256}`` of ``pagedlab/grading/*.py`` in the installed distribution's RECORD (a wheel install;
    an editable install records no source file, and then this is empty)."""
    try:
        files = metadata.distribution("pagedlab").files or []
    except metadata.PackageNotFoundError:
        return {}
    out = {}
    for f in files:
        parts = Path(str(f)).parts
        if parts[:2] == ("pagedlab", "grading") and len(parts) == 3 and f.hash is not None and f.hash.mode == "sha256":
            if Path(f.locate()).resolve().parent != HERE:
                return {}  # the record describes another copy than the one running
            out[parts[2]] = base64.urlsafe_b64decode(f.hash.value + "==").hex()
    return out


def verify() -> None:
    """Raise :class:`Changed` naming the first file of the grader that differs from its installed hash.

    Raises:
        Changed: a file added, removed or changed since the manifest (or the wheel's RECORD) was written.
    """
    from pagedlab.grading.manifest import SHA256

    now = sources()
    for expected, origin in ((SHA256, "its manifest (pagedlab/grading/manifest.py)"),
                             ({k: v for k, v in _recorded().items() if k != MANIFEST.name}, "the installed wheel")):
        if not expected:
            continue
        for name in sorted(set(now) | set(expected)):
            if now.get(name) != expected.get(name):
                what = "is new" if name not in expected else "is missing" if name not in now else "was changed"
                raise Changed(f"pagedlab/grading/{name} {what} since the grader was installed (checked against "
                              f"{origin}): a learner's code run with --unsafe may have written it. Reinstall the "
                              "course, or, if you changed the grader yourself, run "
                              "`python -m pagedlab.grading.integrity --write`")


def write() -> Path:
    """Write the manifest of the grader's sources as they are now."""
    lines = ['"""sha256 of each source of pagedlab.grading, checked before grading (pagedlab.grading.integrity).',
             "", 'Written by `python -m pagedlab.grading.integrity --write`; do not edit by hand."""', "",
             "SHA256 = {"]
    lines += [f"    {name!r}: {digest!r}," for name, digest in sources().items()]
    MANIFEST.write_text("\n".join(lines + ["}", ""]), encoding="utf-8")
    return MANIFEST


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m pagedlab.grading.integrity --write")
    print(f"wrote {write()}")
