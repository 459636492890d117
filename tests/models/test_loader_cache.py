"""The model cache under real processes: two conversions at once, and a conversion killed half way.

Each conversion runs in a process of its own, as two notebooks on two test workers do. transformers' GGUF readers
are replaced by a small random Llama (the real dequantization runs at setup, ``python -m pagedlab.loader``), so a
conversion takes a second and the tests can decide when it happens.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pagedlab import loader

# A conversion in a process of its own. argv: gguf path, folder for flags, name, mode ("convert" or "die").
# "convert" holds the conversion until every process named in PAGEDLAB_TEST_PEERS has reached convert_gguf, so that
# they meet at the lock; "die" stops for good half way through writing the weights, to be killed there.
DRIVER = r'''
import json, sys, time
from pathlib import Path
import safetensors.torch, torch, transformers
from pagedlab import loader

gguf, flags, name, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
peers = [p for p in sys.argv[5:]]

def small_llama(*args, **kwargs):
    for peer in peers:                                   # everyone is at the lock (or past it) before we convert
        while not (flags / f"ready-{peer}").exists():
            time.sleep(0.05)
    time.sleep(1.0)                                      # the others are now blocked on the lock, if there is one
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    (flags / f"converting-{name}").touch()
    return transformers.LlamaForCausalLM(config).eval()

class Tokenizer:
    def save_pretrained(self, folder):
        Path(folder, "tokenizer.json").write_text('{"fake": true}')

transformers.AutoModelForCausalLM.from_pretrained = small_llama
transformers.AutoTokenizer.from_pretrained = lambda *a, **k: Tokenizer()
if mode == "die":
    def save_half(tensors, filename, metadata=None):
        Path(filename).write_bytes(b"\0" * 4096)          # half a weights file...
        (flags / f"writing-{name}").touch()
        time.sleep(600)                                  # ...and here it is killed
    safetensors.torch.save_file = save_half

(flags / f"ready-{name}").touch()
folder, converted = loader.convert_gguf(gguf)  # stderr is a pipe: no progress bars
weights = safetensors.torch.load_file(folder / "model.safetensors")
print("RESULT " + json.dumps({"folder": str(folder), "converted": converted,
                              "weights": sorted((k, float(v.double().sum())) for k, v in weights.items())}))
'''


@pytest.fixture
def scene(tmp_path):
    """A GGUF-looking file, an empty cache, a folder for the processes' flags, and a way to start a conversion."""
    gguf, flags, cache = tmp_path / "tiny.gguf", tmp_path / "flags", tmp_path / "cache"
    gguf.write_bytes(b"GGUF" + os.urandom(64))
    flags.mkdir()
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "PAGEDLAB_CACHE": str(cache), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(loader.__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}

    def start(name: str, mode: str = "convert", peers: tuple[str, ...] = ()) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(driver), str(gguf), str(flags), name, mode, *peers],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    return gguf, flags, cache, start


def _result(proc: subprocess.Popen) -> tuple[dict, str]:
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, f"the conversion process failed:\n{out}\n{err[-3000:]}"
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):]), out


def _leftovers(cache: Path, folder: Path) -> list[str]:
    """Everything in the cache but the finished folder and the lock files: temporary folders of dead writers."""
    return sorted(p.name for p in cache.iterdir() if p != folder and not p.name.endswith(".lock"))


def test_two_processes_converting_at_once_convert_once_and_agree(scene):
    gguf, flags, cache, start = scene
    a, b = start("a", peers=("a", "b")), start("b", peers=("a", "b"))
    (ra, out_a), (rb, out_b) = _result(a), _result(b)
    assert [ra["converted"], rb["converted"]].count(True) == 1, (
        f"both processes converted (a: {ra['converted']}, b: {rb['converted']}): the second must wait for the first")
    waited = out_b if ra["converted"] else out_a
    assert "pagedlab: waiting for another process" in waited, waited
    assert ra["folder"] == rb["folder"] and ra["weights"] == rb["weights"]
    folder = Path(ra["folder"])
    assert loader._manifest_holds(folder) and _leftovers(cache, folder) == []
    assert len(list(flags.glob("converting-*"))) == 1, "the model was built twice"


def test_a_conversion_killed_half_way_is_redone_and_never_loaded(scene):
    gguf, flags, cache, start = scene
    dying = start("dying", mode="die")
    deadline = time.monotonic() + 120
    while not (flags / "writing-dying").exists():
        assert dying.poll() is None, dying.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the conversion never started writing"
        time.sleep(0.05)
    dying.send_signal(signal.SIGKILL)
    dying.wait(timeout=30)
    assert any(p.name.startswith(f".{gguf.stem}-") and p.is_dir() for p in cache.iterdir()), "nothing half written"

    # A finished-looking folder from a writer that did not rename atomically: config.json, half the weights.
    folder = cache / f"{gguf.stem}-{loader.file_sha256(gguf)[:16]}"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\0" * 100)

    result, out = _result(start("again"))
    assert result["converted"], "a half-written cache folder was taken for a finished one"
    assert Path(result["folder"]) == folder and loader._manifest_holds(folder)
    assert _leftovers(cache, folder) == [], f"a killed conversion's temporary folder is left: {_leftovers(cache, folder)}"
    assert out.count("pagedlab: converting") == 1


def test_a_damaged_manifest_or_a_truncated_file_is_not_a_finished_conversion(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"x" * 10)
    assert not loader._manifest_holds(folder)                                   # no manifest
    (folder / loader.MANIFEST).write_text(json.dumps({"files": {"model.safetensors": 10}}))
    assert loader._manifest_holds(folder)
    (folder / "model.safetensors").write_bytes(b"x" * 9)
    assert not loader._manifest_holds(folder)                                   # truncated
    for text in ("{", "[]", '{"files": {}}', '{"files": {"model.safetensors": "ten"}}'):
        (folder / loader.MANIFEST).write_text(text)
        assert not loader._manifest_holds(folder), text
