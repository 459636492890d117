"""``logprobs=-1`` and ``prompt_logprobs=-1`` give every vocabulary entry its text (vLLM's ``decoded_token``,
``vllm/v1/engine/logprobs.py``) without decoding the vocabulary one entry at a time at every position."""

import torch

from pagedlab.engine import LLMEngine, SamplingParams
from pagedlab.models.tiny_gpt import GPTConfig, TinyGPT

VOCAB = 128


class CountingTokenizer:
    """Each token's text is ``<id>``; counts the calls."""

    eos_token_id = None

    def __init__(self):
        self.decodes = self.batch_decodes = 0

    def decode(self, ids, **options):
        self.decodes += 1
        return "".join(f"<{i}>" for i in ids)

    def batch_decode(self, batch, **options):
        self.batch_decodes += 1
        return ["".join(f"<{i}>" for i in ids) for ids in batch]


def test_whole_vocabulary_logprobs_decode_the_vocabulary_once():
    torch.manual_seed(0)
    model = TinyGPT(GPTConfig(vocab_size=VOCAB, n_positions=64, d_model=32, n_layers=1, n_heads=2)).eval()
    tok = CountingTokenizer()
    engine = LLMEngine(model, num_blocks=16, block_size=4, attention_backend="torch", tokenizer=tok, max_logprobs=-1)
    params = SamplingParams(temperature=0, max_tokens=4, logprobs=-1, prompt_logprobs=-1)
    out = engine.generate([[1, 2, 3, 4, 5, 6]] * 2, params, use_tqdm=False)
    positions = [d for o in out for d in o.outputs[0].logprobs + o.prompt_logprobs[1:]]
    assert len(positions) == 2 * (4 + 5) and all(len(d) == VOCAB for d in positions)
    assert all(lp.decoded_token == f"<{t}>" for d in positions for t, lp in d.items())
    # The detokenizer's two decodes per generated token, and one batch_decode of the vocabulary for the engine.
    assert tok.batch_decodes == 1 and tok.decodes <= 2 * 2 * 4, (tok.decodes, tok.batch_decodes)
    few = engine.generate([[1, 2, 3]], SamplingParams(temperature=0, max_tokens=2, logprobs=2), use_tqdm=False)
    assert [lp.decoded_token for lp in few[0].outputs[0].logprobs[0].values()][0] == f"<{few[0].outputs[0].token_ids[0]}>"
