"""The engine's CPU optimizations keep the model's results: oneDNN-packed linear weights and the per-step decode plan.

Token-exactness end to end is ``tests/engine/test_llm.py``'s (SmolLM2 and a random Llama through the engine, which
packs the weights and plans the decodes); these check the pieces on their own, against plain PyTorch.
"""

import copy

import pytest
import torch
from torch.nn import functional as F

from pagedlab.attention import paged_decode_reference
from pagedlab.engine.backends import torch_decode_attention, torch_decode_plan
from pagedlab.engine.model_runner import pack_linear_weights
from pagedlab.testing import random_paged_batch


def small_mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(24, 40), torch.nn.SiLU(), torch.nn.Linear(40, 8, bias=False))


def test_packed_layers_compute_what_f_linear_computes_and_see_new_weights():
    model = small_mlp()
    x = torch.randn(3, 5, 24)
    with torch.no_grad():
        want = model(x)
    if not pack_linear_weights(model):
        pytest.skip("this PyTorch has no oneDNN linear operators: the engine keeps F.linear")
    assert all(type(m.forward).__name__ == "_PackedLinear"
               for m in model.modules() if isinstance(m, torch.nn.Linear))
    with torch.inference_mode():
        got = model(x)
    err = (want - got).abs().max().item()
    assert err < 1e-5, err                                   # NaN fails too
    with torch.no_grad():                                    # weights loaded again: the next call repacks
        model[0].weight.copy_(torch.randn_like(model[0].weight))
        changed = model(x)
        plain = F.linear(F.silu(F.linear(x, model[0].weight, model[0].bias)), model[2].weight)
    assert (changed - plain).abs().max().item() < 1e-5
    assert (changed - want).abs().max().item() > 1e-2      # the new weight really changed the output


def test_one_row_takes_the_plain_product_under_the_plain_rule():
    """Under "plain", one row (batch-1 decode) is F.linear's matrix-vector product, bit for bit, and nothing is
    packed; two rows are packed."""
    model = small_mlp()
    if not pack_linear_weights(model, few_rows="plain"):
        pytest.skip("this PyTorch has no oneDNN linear operators: the engine keeps F.linear")
    layer = model[0]
    for x in (torch.randn(1, 24), torch.randn(1, 1, 24), torch.randn(24)):
        with torch.inference_mode():
            assert torch.equal(layer(x), F.linear(x, layer.weight, layer.bias))
    assert layer.forward.packed is None
    with torch.inference_mode():
        layer(torch.randn(2, 24))
    assert layer.forward.packed is not None


@pytest.mark.parametrize("shape", [(1, 24), (1, 1, 24), (24,), (2, 24), (3, 1, 24), (0, 24)])
def test_few_rows_padded_give_each_row_its_own_result(shape):
    """Under "padded", 1 to 3 rows go through the packed kernel with zero rows added: each row's result is F.linear's
    up to rounding, shaped like F.linear's, and does not depend on the rows beside it."""
    model = small_mlp()
    if not pack_linear_weights(model, few_rows="padded"):
        pytest.skip("this PyTorch has no oneDNN linear operators: the engine keeps F.linear")
    layer, x = model[0], torch.randn(shape)
    with torch.inference_mode():
        got, want = layer(x), F.linear(x, layer.weight, layer.bias)
        assert got.shape == want.shape
        assert x.numel() == 0 or (got - want).abs().max().item() < 1e-5      # NaN fails too
        if x.dim() > 1 and x.shape[0] > 1:                                  # a row alone: its result unchanged
            assert torch.equal(layer(x[:1]), got[:1])
    assert layer.forward.packed is not None


def test_the_few_rows_rule_is_one_of_two_and_checked():
    model = small_mlp()
    if not pack_linear_weights(model):
        pytest.skip("this PyTorch has no oneDNN linear operators: the engine keeps F.linear")
    rules = {m.forward.few_rows for m in model if isinstance(m, torch.nn.Linear)}
    assert len(rules) == 1 and rules <= {"plain", "padded"}                 # measured once, for every layer
    with pytest.raises(ValueError, match="few_rows must be None, 'plain' or 'padded', got 'fast'"):
        pack_linear_weights(small_mlp(), few_rows="fast")


def test_packed_layers_still_train():
    model = small_mlp()
    pack_linear_weights(model)
    model(torch.randn(4, 24)).sum().backward()               # with gradients on, F.linear runs
    assert model[0].weight.grad is not None and model[0].weight.grad.abs().sum() > 0


@pytest.mark.parametrize("block_size", [4, 8])
def test_one_plan_serves_every_layer_and_ignores_poisoned_slots(block_size):
    # Unused slots and table padding hold NaN/inf (poison): the plan's whole-block reads must never let them through.
    q, k, v, tables, lens = random_paged_batch([1, 5, 16, 17, 40], block_size=block_size, heads=6, kv_heads=2,
                                               head_dim=32)
    plan = torch_decode_plan(tables, lens, block_size, (int(lens.max()), int(lens.sum())))
    for scale in (1.0, -0.5):                                # two "layers": other K/V, the same plan
        k2 = torch.where(torch.isfinite(k), k * scale, k)
        want = paged_decode_reference(q, k2, v, tables, lens)
        got = torch_decode_attention(q, k2, v, tables, lens, plan=plan)
        err = (want - got).abs().max().item()
        assert err < 1e-5, err


def test_a_tied_output_layer_is_packed_over_the_embedding():
    from pagedlab.models.llama import Llama, LlamaConfig

    torch.manual_seed(0)
    model = Llama(LlamaConfig(vocab_size=64, d_model=32, n_heads=4, n_kv_heads=2, head_dim=8, d_ff=48)).eval()
    x = torch.randint(0, 64, (2, 7))
    plain = copy.deepcopy(model)
    with torch.no_grad():
        want = model(x)
    names = sorted(model.state_dict())
    packed = pack_linear_weights(model)
    if not packed:
        pytest.skip("this PyTorch has no oneDNN linear operators: the engine keeps F.linear")
    assert packed == 7 * 2 + 1 and type(model.lm_head).__name__ == "_PackedLinear"
    assert sorted(model.state_dict()) == names                    # no new weight to save or load
    with torch.no_grad():
        err = (model(x) - want).abs().max().item()
        assert err < 1e-5, err
        for m in (model, plain):                                   # the tied head follows the embedding
            m.embed_tokens.weight.mul_(-1)
        flipped, plain_flipped = model(x), plain(x)
    assert (flipped - want).abs().max().item() > 1e-2
    err = (flipped - plain_flipped).abs().max().item()
    assert err < 1e-5, err
