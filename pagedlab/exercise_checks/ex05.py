"""Exercise 5's checks: the KV-cache size formula, real models (GQA), and whole requests in a budget."""

from __future__ import annotations

import torch

from ..memory import GB, GiB, LLAMA2_70B, LLAMA3_8B, LLAMA_7B, OPT_13B


def check_llama_7b(kv_cache_bytes) -> None:
    """Check 1: the LLaMA-7B example."""
    __tracebackhide__ = True
    got = kv_cache_bytes(num_layers=32, num_kv_heads=32, head_dim=128, num_tokens=32 * 1024, batch=16,
                         bytes_per_element=2)
    expected = 274_877_906_944
    assert got != expected // 2, (
        f"got {got:,} bytes, exactly half of the expected {expected:,}. "
        "Hint: every token stores a key AND a value vector: multiply by 2.")
    assert got == expected, f"LLaMA-7B, fp16, batch 16, 32K tokens: expected {expected:,} bytes (256 GiB), got {got:,}"


def check_element_sizes(kv_cache_bytes) -> None:
    """Check 2: other element sizes."""
    __tracebackhide__ = True
    for bytes_per_element, expected in [(4, 18_480), (1, 4_620)]:
        got = kv_cache_bytes(num_layers=2, num_kv_heads=3, head_dim=5, num_tokens=7, batch=11,
                             bytes_per_element=bytes_per_element)
        assert got * bytes_per_element != expected * 2, (
            f"with bytes_per_element={bytes_per_element} you return {got:,}, what 2 bytes per element would give "
            f"(expected {expected:,}). Hint: use the bytes_per_element argument instead of assuming fp16.")
        assert got == expected, (f"2 layers, 3 KV heads, head_dim 5, 7 tokens, batch 11, {bytes_per_element} bytes "
                                 f"per element: expected {expected:,} bytes, got {got:,}")


def check_three_models(kv_bytes_per_token) -> None:
    """Check 3: three models, two with grouped-query attention."""
    __tracebackhide__ = True
    cases = [(OPT_13B, torch.float16, 819_200), (LLAMA3_8B, torch.bfloat16, 131_072),
             (LLAMA2_70B, torch.float32, 655_360),
             (LLAMA_7B, torch.float32, 1_048_576)]
    for model, dtype, expected in cases:
        got = kv_bytes_per_token(model, dtype)
        group = model.num_heads // model.num_kv_heads
        assert not (group > 1 and got == expected * group), (
            f"{model.name}: got {got:,} bytes per token, {group}x the expected {expected:,}. Hint: {model.name} uses "
            f"grouped-query attention: {model.num_heads} query heads share {model.num_kv_heads} KV heads, and only KV "
            "heads are cached: use model.num_kv_heads.")
        assert got != expected * 8, (
            f"{model.name}, {dtype}: got {got:,} bytes per token, 8x the expected {expected:,}. "
            "Hint: that is bits, not bytes: use dtype.itemsize.")
        assert got == expected, f"{model.name}, {dtype}: expected {expected:,} bytes per token, got {got:,}"


def check_whole_requests(max_concurrent_requests, kv_bytes_per_token) -> None:
    """Check 4: whole requests in a budget."""
    __tracebackhide__ = True
    cases = [(60, LLAMA3_8B, 8192, torch.bfloat16, 60), (12, OPT_13B, 2048, torch.float16, 7),
             (1, OPT_13B, 2048, torch.float16, 0), (12.5, OPT_13B, 2048, torch.float16, 8)]
    for budget_gib, model, max_len, dtype, expected in cases:
        got = max_concurrent_requests(budget_gib, model, max_len, dtype)
        per_request = kv_bytes_per_token(model, dtype) * max_len
        assert got != int(budget_gib * GB // per_request) or got == expected, (
            f"{budget_gib} GiB for {model.name}: got {got} requests, expected {expected}. Hint: that is a budget of "
            f"{budget_gib} GB (10**9 bytes); a GiB is 2**30 bytes.")
        assert got != round(budget_gib * GiB / per_request) or got == expected, (
            f"{budget_gib} GiB for {model.name}: got {got} requests, expected {expected}. Hint: "
            f"{budget_gib * GiB / per_request:.2f} reservations fit, and a part of a reservation runs no request: "
            f"round down.")
        assert got == expected, (f"{budget_gib} GiB for {model.name} at max_len {max_len}: expected {expected} "
                                 f"requests, got {got}")
        assert isinstance(got, int), (
            f"{budget_gib} GiB for {model.name}: got {got!r}, a {type(got).__name__}: a number of requests is an int "
            f"(floor division of a float, such as a budget in GiB times 2**30, is still a float).")
