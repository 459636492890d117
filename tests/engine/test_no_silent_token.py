"""No silent wrong token: NaN refused wherever a number is taken, a draw never leaves the kept tokens, and a step
with nothing to draw refused with the request's parameters named.

References read: ``vllm/sampling_params.py`` (``logit_bias`` clipped to [-100, 100]), ``vllm/v1/sample/sampler.py``
and ``vllm/v1/sample/ops/topk_topp_sampler.py`` (greedy is an argmax; sampling draws from a float32 softmax: a
row of -inf gives NaN and token 0, which this engine refuses instead).
"""

import math
import re

import pytest
import torch

from pagedlab.engine import LLMEngine, SamplingParams
from pagedlab.engine import sampler
from pagedlab.engine.sampler import Row, sample
from pagedlab.models.tiny_gpt import GPTConfig, TinyGPT

NAN = float("nan")
VOCAB = 128


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return TinyGPT(GPTConfig(vocab_size=VOCAB, n_positions=64, d_model=32, n_layers=1, n_heads=2)).eval()


@pytest.mark.parametrize("field", ["presence_penalty", "frequency_penalty", "repetition_penalty", "temperature",
                                   "top_p", "min_p"])
def test_nan_float_fields_are_refused(field):
    """``vllm/sampling_params.py``: every float field has a range; NaN is in none."""
    with pytest.raises(ValueError, match=field):
        SamplingParams(**{field: NAN})


def test_a_nan_logit_bias_is_refused_and_an_infinite_one_clipped():
    """``vllm/sampling_params.py`` clips each bias to [-100, 100]; NaN was clipped to -100 silently."""
    with pytest.raises(ValueError, match=r"logit_bias\[1\].*nan"):
        SamplingParams(logit_bias={1: NAN})
    assert SamplingParams(logit_bias={1: math.inf, 2: -math.inf}).logit_bias == {1: 100.0, 2: -100.0}


@pytest.mark.parametrize("setting", ["swap_space", "kv_cache_space", "watermark", "gpu_memory_utilization"])
def test_nan_engine_settings_are_refused(model, setting):
    with pytest.raises(ValueError, match=setting):
        LLMEngine(model, **{setting: NAN})


@pytest.mark.parametrize("u", [1 - 2 ** -25, 1 - 2 ** -53, 0.0])
@pytest.mark.parametrize("params", [dict(top_k=3), dict(allowed_token_ids=[5, 9]), dict(top_p=0.2)],
                         ids=["top_k", "allowed", "top_p"])
def test_a_draw_at_either_end_of_the_unit_interval_stays_in_the_kept_set(monkeypatch, u, params):
    """A float32 draw of 1 - 2^-25 is 1.0 and picked the vocabulary's last id, whatever was kept."""
    monkeypatch.setattr(sampler, "uniform", lambda *args: u)
    logits = torch.randn(4, VOCAB, generator=torch.Generator().manual_seed(1)) * 3
    logits[:, -1] = -30.0                               # the last id is never among the kept
    rows = [Row(SamplingParams(seed=0, **params), [1], [], 0) for _ in range(4)]
    picked = sample(logits, rows)
    if "top_k" in params:
        kept = [set(r.topk(3).indices.tolist()) for r in logits]
    elif "allowed_token_ids" in params:
        kept = [{5, 9}] * 4
    else:
        probs = torch.softmax(logits, dim=-1)
        kept = []
        for p in probs:
            order = p.argsort(descending=True).tolist()
            mass, keep = 0.0, set()
            for t in order:
                keep.add(t)
                mass += float(p[t])
                if mass >= 0.2:
                    break
            kept.append(keep)
    assert all(t in k for t, k in zip(picked, kept)), (picked, kept)


def test_a_request_with_every_token_masked_is_refused(model):
    """``allowed_token_ids`` all forbidden by ``min_tokens``: vLLM V1 emits token 0 (the argmax of a row of -inf);
    the engine refuses the request, naming the parameters, and keeps nothing."""
    engine = LLMEngine(model, num_blocks=16, block_size=4, attention_backend="torch")
    params = SamplingParams(temperature=0, allowed_token_ids=[7], stop_token_ids=[7], min_tokens=2, max_tokens=4)
    with pytest.raises(ValueError, match=r"allowed_token_ids=\[7\].*min_tokens=2.*stop_token_ids=\[7\]"):
        engine.add_request([1, 2, 3], params)
    assert not engine.has_unfinished_requests()
    ok = engine.generate([[1, 2, 3]], SamplingParams(temperature=0, allowed_token_ids=[7, 8], stop_token_ids=[7],
                                                     min_tokens=2, max_tokens=4), use_tqdm=False)
    assert ok[0].outputs[0].token_ids[:2] == [8, 8]


def test_a_step_with_every_token_masked_raises_naming_the_parameters():
    """A two-token bad word masks the one allowed token only after its first token: found at the draw."""
    logits = torch.zeros(2, VOCAB)
    params = SamplingParams(temperature=0, allowed_token_ids=[5])
    rows = [Row(params, [1], [4], 0, bad_words=((4, 5),)), Row(SamplingParams(temperature=0), [1], [], 0)]
    with pytest.raises(ValueError, match=r"every token is masked.*allowed_token_ids=\[5\]"):
        sample(logits, rows)
    rows[0] = Row(params, [1], [3], 0, bad_words=((4, 5),))
    assert sample(logits, rows)[0] == 5


class WordTokenizer:
    """Token ``t`` is the word ``w<t>``; a text is words split at spaces (bad words need a tokenizer)."""

    eos_token_id = None

    def encode(self, text, add_special_tokens=False):
        return [int(w[1:]) for w in text.split()]

    def decode(self, ids, **options):
        return " ".join(f"w{i}" for i in ids)


def test_a_step_that_would_mask_every_token_changes_nothing_and_names_the_request(model):
    """``allowed_token_ids=[5]`` with the bad word ``"w5 w5"``: after one 5 the next 5 is masked, so nothing is left
    to draw. The step refuses before it schedules: every request, sequence and block as before (a request waiting
    to be admitted too); the caller aborts the named request, and the others generate what they generate alone."""
    good, settings = [[1, 2, 3, 4, 5], [9, 8, 7]], dict(num_blocks=16, block_size=4, attention_backend="torch",
                                                        watermark=0.0, tokenizer=WordTokenizer())
    greedy = SamplingParams(temperature=0, max_tokens=6)
    alone = [o.outputs[0].token_ids for o in LLMEngine(model, **settings).generate(good, greedy, use_tqdm=False)]
    engine = LLMEngine(model, **settings)
    bad = SamplingParams(temperature=0, max_tokens=4, allowed_token_ids=[5], bad_words=["w5 w5"])
    engine.add_request(good[0], greedy, request_id="a")
    engine.add_request([6, 6, 6], bad, request_id="bad")
    engine.step()                                       # both prefill; "bad" draws its one 5
    engine.add_request(good[1], greedy, request_id="b")  # waits for the next step's admission
    s, m = engine.scheduler, engine.block_manager

    def state():
        return (m.num_free_blocks, sorted(map(str, m.seq_ids)), [[r.request_id for r in q] for q in
                (s.waiting, s.running, s.swapped)], {r.request_id: [(list(q.token_ids), q.num_computed) for q in r.seqs]
                                                     for r in (*s.waiting, *s.running)}, len(engine.metrics))

    before = state()
    with pytest.raises(ValueError) as failed:
        engine.step()
    assert state() == before, "the step that raised changed the engine"
    assert re.search(r"'bad'.*\[5\].*allowed_token_ids=\[5\].*bad_words=\['w5 w5'\]", str(failed.value)), failed.value
    held = len(m.table(("bad", 0)).block_ids)
    engine.abort_request("bad")
    assert held and m.num_free_blocks == before[0] + held, "the aborted request's blocks were not given back"
    outputs = {}
    while engine.has_unfinished_requests():
        outputs.update((o.request_id, o.outputs[0].token_ids) for o in engine.step() if o.finished)
    assert [outputs["a"], outputs["b"]] == alone
    assert m.num_free_blocks == m.num_blocks and not m.seq_ids
    # Through generate: the call raises and leaves nothing queued, every block free.
    with pytest.raises(ValueError, match=r"allowed_token_ids=\[5\]"):
        engine.generate([good[0], [6, 6, 6]], [greedy, bad], use_tqdm=False)
    assert not engine.has_unfinished_requests() and m.num_free_blocks == m.num_blocks and not m.seq_ids
