"""Point the course at its public home, in one command (docs/publishing.md, step 1)::

    python docs/site/publish.py https://github.com/<owner>/<repo>@v<version>

Writes the new ``REPO_URL`` into ``pagedlab/notebook.py``; replaces the old repository, its GitHub Pages site and
its Colab links wherever ``README.md`` and ``pyproject.toml`` name them (the README's copy of the install cell
included); then rewrites every notebook's first cell (``python -m pagedlab.authoring.execute --setup-cell-only``,
nothing is re-executed) and regenerates ``exercises/``. The site's launch buttons and links follow ``REPO_URL`` by
themselves. ``make test`` checks that every copy agrees.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from site_links import launch_ref, parts  # noqa: E402

ROOT = HERE.parents[1]
NOTEBOOK_MODULE = Path("pagedlab") / "notebook.py"
_REPO_URL_LINE = re.compile(r'^REPO_URL = "[^"]*"$', re.MULTILINE)


def rewrite(text: str, old: str, new: str) -> str:
    """``text`` with repository ``old`` replaced by ``new`` (both ``REPO_URL`` values): the pinned URL itself, then
    ``github.com/<owner>/<repo>``, Colab's ``github/<owner>/<repo>`` (and the release it opens) and
    ``<owner>.github.io/<repo>``.

    Raises:
        ValueError: ``old`` or ``new`` is not a GitHub repository URL.
    """
    before, after = parts(old), parts(new)
    text = text.replace(old, new)
    repo = re.compile(rf"(github\.com/|colab\.research\.google\.com/github/){re.escape(before['owner'])}/"
                      rf"{re.escape(before['repo'])}(?![\w.-])")
    text = repo.sub(lambda m: f"{m.group(1)}{after['owner']}/{after['repo']}", text)
    # Colab links open the release REPO_URL pins, as the site's buttons do (site_links.launch_ref).
    colab = re.compile(rf"(colab\.research\.google\.com/github/{re.escape(after['owner'])}/{re.escape(after['repo'])}"
                       rf"/blob/){re.escape(launch_ref(old))}/")
    text = colab.sub(lambda m: f"{m.group(1)}{launch_ref(new)}/", text)
    return text.replace(f"{before['owner'].lower()}.github.io/{before['repo']}",
                        f"{after['owner'].lower()}.github.io/{after['repo']}")


def rewrite_files(root: Path, new: str) -> str:
    """Write ``new`` as ``REPO_URL`` into ``root``'s notebook module, README.md and pyproject.toml; return the old one.

    Raises:
        ValueError: ``new`` is not a GitHub repository URL (nothing is written then).
    """
    module = root / NOTEBOOK_MODULE
    source = module.read_text(encoding="utf-8")
    match = _REPO_URL_LINE.search(source)
    if match is None:
        raise ValueError(f"{module} has no line REPO_URL = \"...\"")
    old = match.group(0).split('"')[1]
    parts(new)                                      # refuse a bad URL before any file changes
    module.write_text(_REPO_URL_LINE.sub(f'REPO_URL = "{new}"', source), encoding="utf-8")
    for name in ("README.md", "pyproject.toml"):
        path = root / name
        path.write_text(rewrite(path.read_text(encoding="utf-8"), old, new), encoding="utf-8")
    return old


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo_url", help="https://github.com/<owner>/<repo>@<tag>: the repository and the release "
                                         "Colab installs")
    args = parser.parse_args(argv)
    try:
        old = rewrite_files(ROOT, args.repo_url)
    except ValueError as error:
        print(f"publish: {error}", file=sys.stderr)
        return 1
    # This checkout's pagedlab, with the new REPO_URL, whatever the environment has installed.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    for command in (["pagedlab.authoring.execute", "--setup-cell-only", "notebooks", "solutions"],
                    ["pagedlab.authoring.exercises"]):
        subprocess.run([sys.executable, "-m", *command], cwd=ROOT, env=env, check=True)
    print(f"REPO_URL: {old} -> {args.repo_url}; README.md, pyproject.toml and every notebook's first cell follow. "
          "Run make test, then commit, push and tag (docs/publishing.md).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
