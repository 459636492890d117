"""The model registry: a checkpoint's ``architectures`` finds its family, and the model built from the
checkpoint's config and weights gives Hugging Face's logits (small random models, no download)."""

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
from transformers import logging as hf_logging

from pagedlab.models.llama import Llama
from pagedlab.models.registry import FAMILIES, build, family
from pagedlab.models.tiny_gpt import TinyGPT

hf_logging.set_verbosity_error()


def small_hf(architecture):
    torch.manual_seed(0)
    if architecture == "GPT2LMHeadModel":
        hf = GPT2LMHeadModel(GPT2Config(vocab_size=96, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                                        bos_token_id=0, eos_token_id=0, initializer_range=0.3))
    else:
        hf = LlamaForCausalLM(LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                          num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                                          max_position_embeddings=32, initializer_range=0.3))
    hf.config.architectures = [architecture]    # what save_pretrained writes into config.json
    return hf.eval()


@pytest.mark.parametrize("architecture, cls", [("GPT2LMHeadModel", TinyGPT), ("LlamaForCausalLM", Llama)])
def test_the_registry_builds_each_family_from_its_checkpoint(architecture, cls):
    hf = small_hf(architecture)
    assert family(hf.config) is cls
    model = build(hf.config, hf.state_dict())
    assert type(model) is cls and not model.training
    x = torch.randint(0, 96, (2, 11), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        err = (hf(x).logits - model(x)).abs().max().item()
    assert err < 1e-5, f"{cls.__name__} built by the registry differs from Hugging Face by {err}"  # NaN fails too


def test_the_first_registered_architecture_wins_and_unknown_ones_are_named():
    hf = small_hf("LlamaForCausalLM")
    hf.config.architectures = ["SomethingElse", "LlamaForCausalLM"]
    assert family(hf.config) is Llama
    hf.config.architectures = ["MambaForCausalLM"]
    with pytest.raises(ValueError, match=r"\['MambaForCausalLM'\].*LlamaForCausalLM"):
        family(hf.config)
    hf.config.architectures = None
    with pytest.raises(ValueError, match="architectures"):
        build(hf.config, hf.state_dict())


def test_weights_that_do_not_fit_are_refused_by_name():
    hf = small_hf("GPT2LMHeadModel")
    weights = dict(hf.state_dict())
    del weights["transformer.h.1.mlp.c_fc.weight"]
    with pytest.raises(ValueError, match="blocks.1.c_fc.weight"):
        build(hf.config, weights)


def test_every_family_has_the_registry_entry_point():
    for name, cls in FAMILIES.items():
        assert callable(getattr(cls, "from_checkpoint", None)), f"{name}: {cls.__name__} has no from_checkpoint"
