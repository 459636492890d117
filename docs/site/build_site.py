"""Build the course site (``make site``): the stored notebooks as static HTML, executed by nothing.

Usage::

    python docs/site/build_site.py                    # into build/site/html
    PAGEDLAB_SITE_SOLUTIONS=0 python docs/site/build_site.py   # without solutions/ (make site SOLUTIONS=0)

Steps: lay out a source folder (``build/site/src``: this folder's ``index.md`` with the navigation written in the
course's order, and copies of ``notebooks/``, ``exercises/``, ``solutions/`` unless left out, ``docs/``'s pictures
and guide pages, and ``README.md``, whose course map the landing page includes); put MathJax into its ``_vendor``
folder, which conf.py adds to the static files (``npm install mathjax@MATHJAX_VERSION`` once, into
``build/site/npm``, copied from there afterwards; ``$PAGEDLAB_MATHJAX`` may name a package folder instead); run
``sphinx-build -W`` (any warning fails). Nothing is fetched when a page is read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import course_map  # noqa: E402

BUILD = ROOT / "build" / "site"
MATHJAX_VERSION = "4.1.3"
# What the pages load: the TeX-to-HTML component, what it loads on demand, and the CHTML font.
# (Not sre/, the speech-rule engine: conf.py turns speech and enrichment off.)
MATHJAX_FILES = ["tex-chtml.js", "input", "output", "ui", "a11y", "LICENSE"]
FONT = "mathjax-newcm-font"
VENDOR = "_vendor"      # in the source folder: conf.py serves it as static files (the pages' _static/mathjax)
# index.md's placeholder for the navigation, which stage() writes in the course's order (course_map).
TOCTREES = "<!-- toctrees -->"
# Pages of docs/ that the site shows, in this order, each where it exists (another change may not have added it yet).
GUIDES = ["docs/instructors.md", "docs/publishing.md", "docs/threat_model.md", "docs/grading_record.md"]


def stage(src: Path, solutions: bool) -> None:
    """Lay out Sphinx's source folder ``src`` (emptied first)."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    # Copies, not symbolic links: MyST resolves a notebook's relative links (../exercises/...) from its real path.
    for name in ["notebooks", "exercises"] + (["solutions"] if solutions else []):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(ROOT / "docs", src / "docs", ignore=shutil.ignore_patterns("site", "*.md"))
    guides = [name for name in GUIDES if (ROOT / name).is_file()]
    for name in guides:
        shutil.copy2(ROOT / name, src / name)
    shutil.copy2(ROOT / "README.md", src / "README.md")
    index = (HERE / "index.md").read_text(encoding="utf-8")
    if TOCTREES not in index:
        raise RuntimeError(f"{HERE / 'index.md'} lost its {TOCTREES} line, where the navigation goes")
    (src / "index.md").write_text(index.replace(TOCTREES, toctrees(solutions, guides)), encoding="utf-8")


def toctrees(solutions: bool, guides: list[str]) -> str:
    """The landing page's (hidden) toctrees, which make the sidebar and Previous/Next: the course (each lecture,
    then its exercises), the guides in ``guides`` (paths ending in .md), then the solutions, in their own section."""
    stems = {folder: sorted(p.stem for p in (ROOT / folder).glob("*.ipynb")) for folder in ["notebooks", "exercises"]}
    sections = [("Course: each lecture, then its exercises",
                 course_map.course_order(stems["notebooks"], stems["exercises"]))]
    if guides:
        sections.append(("For instructors", [name.removesuffix(".md") for name in guides]))
    if solutions:
        sections.append(("Solutions", [f"solutions/{p.stem}" for p in sorted((ROOT / "solutions").glob("*.ipynb"))]))
    return "\n".join(f"```{{toctree}}\n:caption: {caption}\n:hidden:\n\n" + "\n".join(docs) + "\n```\n"
                     for caption, docs in sections)


def mathjax_package(cache: Path) -> Path:
    """The npm package folder of MathJax ``MATHJAX_VERSION`` (installed into ``cache`` the first time).

    Raises:
        RuntimeError: npm is missing or the install failed (the message says what to do).
    """
    if os.environ.get("PAGEDLAB_MATHJAX"):
        return Path(os.environ["PAGEDLAB_MATHJAX"])
    package = cache / "node_modules" / "mathjax"
    manifest = package / "package.json"
    if manifest.exists() and f'"version": "{MATHJAX_VERSION}"' in manifest.read_text():
        return package
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("the site serves MathJax itself and gets it with npm, which is not installed: "
                           "apt-get install npm (or set PAGEDLAB_MATHJAX to a mathjax package folder)")
    cache.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", "--no-save",
                           f"mathjax@{MATHJAX_VERSION}"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"npm install mathjax@{MATHJAX_VERSION} failed:\n{done.stderr}")
    return package


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    (shutil.copytree if source.is_dir() else shutil.copyfile)(source, target)


def vendor_mathjax(package: Path, static: Path) -> None:
    """Copy what the pages load from the MathJax package (and its font package beside it) into ``static``."""
    for name in MATHJAX_FILES:
        _copy(package / name, static / "mathjax" / name)
    font = package.parent / "@mathjax" / FONT
    for name in ["chtml.js", "chtml"]:
        _copy(font / name, static / "mathjax" / "fonts" / FONT / name)


def build(out: Path = BUILD, solutions: bool = True, quiet: bool = True) -> Path:
    """Build the site into ``out / "html"`` and return that folder.

    Raises:
        RuntimeError: MathJax could not be had.
        subprocess.CalledProcessError: Sphinx failed or warned (its output says where).
    """
    src, html = out / "src", out / "html"
    stage(src, solutions)
    vendor_mathjax(mathjax_package(out / "npm"), src / VENDOR)
    if html.exists():
        shutil.rmtree(html)      # a page left from an earlier build (solutions since left out) must not stay
    # -E: read every notebook again (a cached doctree would keep what conf.py's code did last time).
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-W", "--keep-going", "-c", str(HERE),
               "-d", str(out / "doctrees"), str(src), str(html)] + (["-q"] if quiet else [])
    subprocess.run(command, check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
    return html


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=BUILD, help="build folder (default: build/site)")
    parser.add_argument("--verbose", action="store_true", help="show Sphinx's progress")
    args = parser.parse_args(argv)
    solutions = os.environ.get("PAGEDLAB_SITE_SOLUTIONS", "1") != "0"
    start = time.monotonic()
    try:
        html = build(args.out, solutions, quiet=not args.verbose)
    except RuntimeError as error:
        print(f"make site: {error}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as error:
        print(f"make site: Sphinx failed (exit {error.returncode}); its messages are above", file=sys.stderr)
        return 1
    size = sum(p.stat().st_size for p in html.rglob("*") if p.is_file())
    where = html.relative_to(ROOT) if html.is_relative_to(ROOT) else html
    print(f"site built in {time.monotonic() - start:.1f} s: {where} "
          f"({size / 1e6:.1f} MB{'' if solutions else ', without solutions'}); open index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
