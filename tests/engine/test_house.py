"""One statement of each rule: the sampler's fast path follows the roles of SamplingParams' fields, "decode" has
one definition (``Sequence.is_decoding``), the fork rule one (``Request.awaiting_fork``)."""

import dataclasses

import pytest
import torch

from pagedlab.engine import LLMEngine, SamplingParams
from pagedlab.engine.sampler import Row, sample
from pagedlab.models.tiny_gpt import GPTConfig, TinyGPT

GREEDY = dict(temperature=0)
# For each "logits" field, a value that moves the argmax of LOGITS off token 1 (row: prompt [1], output [1],
# EOS 1, the bad word's single token 1).
CHANGES_ARGMAX = dict(presence_penalty=1.0, frequency_penalty=1.0, repetition_penalty=2.0, bad_words=["x"],
                      min_tokens=2, logit_bias={2: 10.0}, allowed_token_ids=[2])
LOGITS = torch.tensor([[0.0, 1.0, 0.9, 0.5]])


def test_every_field_has_a_role():
    roles = {f.name: f.metadata.get("role") for f in dataclasses.fields(SamplingParams)}
    assert set(roles.values()) == {"logits", "draw", "output"}, roles
    assert {n for n, r in roles.items() if r == "logits"} == set(CHANGES_ARGMAX)


@pytest.mark.parametrize("field", sorted(CHANGES_ARGMAX))
def test_a_logits_field_is_never_skipped_by_the_fast_path(field):
    """The fast path took the raw argmax for greedy rows unless one of eight fields, listed by hand, was set."""
    params = SamplingParams(**GREEDY, **{field: CHANGES_ARGMAX[field]})
    row = Row(params, [1], [1], 0, eos_token_id=1, bad_words=((1,),) if field == "bad_words" else ())
    assert not params.leaves_logits_alone(1)
    assert sample(LOGITS, [row]) != [1]


@pytest.mark.parametrize("change", [dict(top_k=1), dict(top_p=0.1), dict(min_p=0.5), dict(seed=3), dict(n=2),
                                    dict(stop=["x"]), dict(logprobs=1), dict(ignore_eos=True), dict(max_tokens=2),
                                    dict(min_tokens=1)])
def test_draw_and_output_fields_keep_the_fast_path(change):
    params = SamplingParams(**GREEDY, **change)
    assert params.leaves_logits_alone(1)
    assert sample(LOGITS, [Row(params, [1], [1], 0, eos_token_id=1)]) == [1]


def test_decode_has_one_definition():
    """A prompt's last token computed alone (a one-token chunk) is no decode, for the scheduler and the metrics."""
    torch.manual_seed(0)
    model = TinyGPT(GPTConfig(vocab_size=64, n_positions=64, d_model=32, n_layers=1, n_heads=2)).eval()
    engine = LLMEngine(model, num_blocks=16, block_size=4, attention_backend="torch", max_num_seqs=4,
                       max_num_batched_tokens=8)
    engine.add_request(list(range(1, 10)), SamplingParams(**GREEDY, max_tokens=3))
    seen = []
    while engine.has_unfinished_requests():
        (seq,) = engine.scheduler.running[0].seqs if engine.scheduler.running else engine.scheduler.waiting[0].seqs
        seen.append(seq.is_decoding)
        engine.step()
    assert [(m.num_prefill_tokens, m.num_decode_tokens) for m in engine.metrics] == [(8, 0), (1, 0), (0, 1), (0, 1)]
    assert seen == [False, False, True, True]


def test_the_fork_rule_is_the_requests():
    torch.manual_seed(0)
    model = TinyGPT(GPTConfig(vocab_size=64, n_positions=64, d_model=32, n_layers=1, n_heads=2)).eval()
    engine = LLMEngine(model, num_blocks=16, block_size=4, attention_backend="torch")
    engine.add_request([1, 2, 3], SamplingParams(n=3, temperature=1.0, seed=0, max_tokens=2), request_id="r")
    request = engine.scheduler.waiting[0]
    assert request.awaiting_fork
    engine.step()
    assert not request.awaiting_fork and len(request.seqs) == 3
