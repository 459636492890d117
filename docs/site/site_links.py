"""Where the course lives online, derived from ``pagedlab.notebook.REPO_URL`` alone.

``REPO_URL`` is ``https://github.com/<owner>/<repo>``, optionally pinned with ``@<tag>`` (what Colab installs).
The site is GitHub Pages' address for that repository. Every launch button (Colab, Binder, the notebook on GitHub)
opens the release ``REPO_URL`` pins, the one the notebooks' install cell installs, so that what a button opens and
what it installs agree; ``main`` when ``REPO_URL`` pins none.
"""

from __future__ import annotations

import re

from pagedlab.notebook import REPO_URL

_GITHUB = re.compile(r"^https://github\.com/(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+?)(?:\.git)?(?:@(?P<ref>[\w./-]+))?$")


def parts(repo_url: str) -> dict[str, str | None]:
    """``{"owner", "repo", "ref"}`` of a ``REPO_URL`` (``ref``: the tag after ``@``, or None).

    Raises:
        ValueError: ``repo_url`` is not ``https://github.com/<owner>/<repo>[@<tag>]``.
    """
    match = _GITHUB.match(repo_url)
    if match is None:
        raise ValueError(f"repo_url must look like https://github.com/<owner>/<repo>[@<tag>], got {repo_url!r}")
    return match.groupdict()


def repository(repo_url: str) -> str:
    """``https://github.com/<owner>/<repo>``: ``repo_url`` without its pinned ref.

    Raises:
        ValueError: ``repo_url`` is not a GitHub repository URL.
    """
    found = parts(repo_url)
    return f"https://github.com/{found['owner']}/{found['repo']}"


def pinned_ref(repo_url: str) -> str | None:
    """The tag (or branch) after ``@`` in ``repo_url``, or None when it is not pinned."""
    return parts(repo_url)["ref"]


def site_url(repo_url: str) -> str:
    """The GitHub Pages address of the repository, with a trailing slash (``https://<owner>.github.io/<repo>/``)."""
    found = parts(repo_url)
    return f"https://{found['owner'].lower()}.github.io/{found['repo']}/"


def launch_ref(repo_url: str) -> str:
    """What the launch buttons open: the tag ``repo_url`` pins, else ``main``."""
    return pinned_ref(repo_url) or "main"


# The ref of every launch button and link to a notebook, from the course's own REPO_URL.
BRANCH = launch_ref(REPO_URL)
