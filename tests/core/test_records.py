"""pagedlab.records: where a benchmark run's files go, and how its rows and summary are written."""

import csv
import datetime

import pytest

from pagedlab import perf_lab, records


def test_a_run_folder_is_the_device_then_the_date(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "RESULTS", tmp_path)
    folder = records.run_folder("NVIDIA H200 (SXM, 141 GB)")
    assert folder == tmp_path / f"NVIDIA_H200_SXM_141_GB_{datetime.date.today():%Y-%m-%d}" and folder.is_dir()
    assert records.run_folder("cpu", tmp_path / "given") == tmp_path / "given" and (tmp_path / "given").is_dir()


def test_the_reader_of_recorded_runs_takes_the_newest_folder(tmp_path):
    # perf_lab orders the runs by the date that ends the folder's name: the writer must put it there.
    for day, ms in (("2026-01-02", "2.0"), ("2025-12-31", "1.0")):
        folder = records.run_folder("GPU", tmp_path / f"GPU_{day}")
        records.write_rows(folder / "flash_attention.csv", [dict(
            provider="triton", mode="fwd", dtype="bf16", causal="True", head_dim="128", n="4096",
            config_ms=f"fwd 128x64 w4 s3={ms}")], ["provider", "mode", "dtype", "causal", "head_dim", "n", "config_ms"])
    name, times = perf_lab.recorded_forward_timings(tmp_path)
    assert name.endswith("2026-01-02") and times == {(128, 64, 4, 3): 2.0}


def test_rows_are_on_disk_as_soon_as_they_are_measured(tmp_path):
    path, on_disk = tmp_path / "rows.csv", []

    def measured():
        yield {"n": 1, "ms": 0.5}
        yield {"n": 2, "ms": 0.7}
        on_disk.extend(csv.DictReader(open(path)))  # what a run killed while measuring the third point leaves
        yield {"n": 3, "ms": 0.9}

    records.write_rows(path, measured(), ["n", "ms"])
    assert on_disk == [{"n": "1", "ms": "0.5"}, {"n": "2", "ms": "0.7"}]
    assert len(list(csv.DictReader(open(path)))) == 3


def test_a_row_with_an_unknown_key_is_refused(tmp_path):
    with pytest.raises(ValueError, match="ms"):
        records.write_rows(tmp_path / "rows.csv", [{"n": 1, "ms": 2}], ["n"])


def test_publish_writes_and_prints_the_summary(tmp_path, capsys):
    records.publish("# Summary\n", tmp_path / "summary.md")
    assert (tmp_path / "summary.md").read_text() == "# Summary\n"
    assert capsys.readouterr().out == f"# Summary\n\nresults in {tmp_path}\n"
