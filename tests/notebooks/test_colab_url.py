"""Colab installs the course from one URL, `pagedlab.notebook.REPO_URL`: everything that names it agrees."""

import re
import tomllib
from pathlib import Path

from pagedlab.notebook import REPO_URL, SETUP_CELL

ROOT = Path(__file__).resolve().parents[2]
REPO = REPO_URL.split("@")[0].removesuffix(".git")   # without a pinned ref


def test_setup_cell_installs_from_repo_url():
    assert f'"pagedlab @ git+{REPO_URL}"' in SETUP_CELL


def test_pyproject_names_the_same_repository():
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Repository"] == REPO, f"pyproject.toml's Repository URL differs from REPO_URL ({REPO})"


def test_readme_colab_links_open_the_same_repository():
    readme = (ROOT / "README.md").read_text()
    owner_repo = REPO.removeprefix("https://github.com/")
    links = re.findall(r"colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/", readme)
    assert links, "README names no Colab link"
    assert set(links) == {owner_repo}, f"README's Colab links open {set(links)}, REPO_URL is {owner_repo}"
