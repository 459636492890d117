"""A benchmark run's records: the folder it writes into, its rows as CSV, and its summary.

Every script under ``benchmarks/`` that writes results writes them the same way, so that a later reader
(:func:`pagedlab.perf_lab.recorded_forward_timings`, a notebook's recorded readings) finds them:

* one folder per run, ``benchmarks/results/<device>_<YYYY-MM-DD>``: the device's name with every run of other
  characters made one ``_``, then the date, last, which is what orders the runs (:func:`run_folder`);
* the rows as CSV, one header line, each row on disk as soon as it is measured (:func:`write_rows`);
* a Markdown summary, written and printed (:func:`publish`).
"""

from __future__ import annotations

import csv
import datetime
import re
from collections.abc import Iterable
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
"""Where the runs are recorded, in a checkout of the repository."""


def run_folder(device_name: str, out: Path | None = None) -> Path:
    """The folder of a run on ``device_name`` today (``out`` when given), created if it is not there.

    ``run_folder("NVIDIA H200")`` is ``benchmarks/results/NVIDIA_H200_2026-12-01`` on that date.
    """
    if out is None:
        out = RESULTS / f"{re.sub(r'[^A-Za-z0-9]+', '_', device_name).strip('_')}_{datetime.date.today():%Y-%m-%d}"
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_rows(path: Path, rows: Iterable[dict], fields: list[str]) -> None:
    """Write ``rows`` (an iterable of dicts with the keys ``fields``) to the CSV file ``path`` as they come.

    Each row is flushed as soon as it is written: a run cut short (a timeout, an out-of-memory kill) still
    leaves every finished row on disk.

    Raises:
        ValueError: a row has a key that is not in ``fields`` (``csv.DictWriter``'s check).
    """
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
            f.flush()


def publish(text: str, path: Path) -> None:
    """Write the Markdown summary ``text`` to ``path``, and print it and the folder that holds the run."""
    path.write_text(text)
    print(text)
    print(f"results in {path.parent}")
