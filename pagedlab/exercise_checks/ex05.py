"""Exercise 5's checks: the KV-cache size formula, real models (GQA), and whole requests in a budget.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included:

* ``kv_cache_bytes``: positive ints; ``num_layers`` 1 to 96, ``num_kv_heads`` 1 (one KV head) to 64, ``head_dim``
  1 to 256, ``num_tokens`` 1 (the smallest the text states; the reference refuses 0) to 32K, ``batch`` 1 to 64,
  ``bytes_per_element`` 1 (fp8), 2 (fp16, bf16) and 4 (fp32). The result is an exact int.
* ``kv_bytes_per_token``: every model of ``pagedlab.memory.PRESETS``, MHA (LLaMA-7B, OPT-13B) and GQA (Llama-3-8B,
  Llama-2-70B, SmolLM2-135M, whose ``head_dim`` is 64), and a made-up one with a single KV head; the dtypes
  ``torch.float32``, ``float16``, ``bfloat16`` and ``float8_e4m3fn`` (4, 2, 2 and 1 bytes). An int.
* ``max_concurrent_requests``: the same models and dtypes; ``max_len`` 1, one drawn below the model's context window
  and the context window itself (the reservation is the ``max_len`` argument, not ``model.max_len``); budgets in GiB,
  whole or not: 0 (zero room), one byte short of one reservation, exactly k reservations (an exact fit), one byte
  short of k, and k and a half. An int.
"""

from __future__ import annotations

import math
import numbers
import random

import torch

from ..memory import GB, PRESETS, GiB, LLAMA2_70B, LLAMA3_8B, LLAMA_7B, OPT_13B, ModelShape
from ..memory import kv_cache_bytes as formula


FACTORS = ("num_layers", "num_kv_heads", "head_dim", "num_tokens", "batch", "bytes_per_element")
"""The arguments of ``kv_cache_bytes``, each a factor of the product."""


def _formula_hint(kv_cache_bytes, args: dict, got, expected: int) -> str:
    """Which factor a wrong ``kv_cache_bytes(**args)`` left out or counted twice, derived from what it returns: each
    argument doubled in turn, a factor the result ignores leaves it the same, one counted twice quadruples it (with 32
    layers and 32 KV heads, a result 1/32 of the expected names the one really missing)."""
    if not isinstance(got, numbers.Real) or got != got or got <= 0:
        return "2 x num_layers x num_kv_heads x head_dim x num_tokens x batch x bytes_per_element."
    if got * 2 == expected:
        return "every token stores a key AND a value vector: multiply by 2."
    ignored, twice = [], []
    for name in FACTORS:
        try:
            doubled = kv_cache_bytes(**{**args, name: 2 * args[name]})
        except Exception:  # noqa: BLE001 - only a hint: the learner's error is for a call of the check to report
            continue
        if doubled == got:
            ignored.append(name)
        elif doubled == 4 * got:
            twice.append(name)
    nbytes = args["bytes_per_element"]
    if ignored == ["bytes_per_element"] and got * nbytes == expected * 2:
        return (f"your result does not change with bytes_per_element: it is what 2 bytes per element give; use the "
                f"bytes_per_element argument ({nbytes} here) instead of assuming fp16.")
    parts = []
    if ignored:
        names = " and ".join(ignored)
        missing = math.prod(args[name] for name in ignored)
        parts.append(f"your result does not change with {names} (doubling {'it' if len(ignored) == 1 else 'each'} "
                     f"gives the same {got:,})"
                     + (f": {' and '.join(f'{name} = {args[name]}' for name in ignored)} "
                        f"{'is' if len(ignored) == 1 else 'are'} missing from the product" if got * missing == expected
                        else f": multiply by {names}"))
    if twice:
        parts.append(f"doubling {' or '.join(twice)} quadruples your result: {' and '.join(twice)} "
                     f"{'is' if len(twice) == 1 else 'are'} counted twice")
    return ("; ".join(parts) + "." if parts else
            "2 x num_layers x num_kv_heads x head_dim x num_tokens x batch x bytes_per_element.")


def check_llama_7b(kv_cache_bytes) -> None:
    """Check 1: the LLaMA-7B example."""
    __tracebackhide__ = True
    args = dict(num_layers=32, num_kv_heads=32, head_dim=128, num_tokens=32 * 1024, batch=16, bytes_per_element=2)
    got = kv_cache_bytes(**args)
    expected = 274_877_906_944
    assert got != expected // 2, (
        f"got {got:,} bytes, exactly half of the expected {expected:,}. "
        "Hint: every token stores a key AND a value vector: multiply by 2.")
    assert got == expected, (
        f"LLaMA-7B, fp16, batch 16, 32K tokens: expected {expected:,} bytes (256 GiB), got {got:,} "
        f"({_how_much(got, expected)}). Hint: {_formula_hint(kv_cache_bytes, args, got, expected)}")


def check_element_sizes(kv_cache_bytes) -> None:
    """Check 2: other element sizes."""
    __tracebackhide__ = True
    for bytes_per_element, expected in [(4, 18_480), (1, 4_620)]:
        args = dict(num_layers=2, num_kv_heads=3, head_dim=5, num_tokens=7, batch=11,
                    bytes_per_element=bytes_per_element)
        got = kv_cache_bytes(**args)
        assert got * bytes_per_element != expected * 2, (
            f"with bytes_per_element={bytes_per_element} you return {got:,}, what 2 bytes per element would give "
            f"(expected {expected:,}). Hint: use the bytes_per_element argument instead of assuming fp16.")
        assert got == expected, (f"2 layers, 3 KV heads, head_dim 5, 7 tokens, batch 11, {bytes_per_element} bytes "
                                 f"per element: expected {expected:,} bytes, got {got:,} ({_how_much(got, expected)}). "
                                 f"Hint: {_formula_hint(kv_cache_bytes, args, got, expected)}")


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
        assert got == expected, (f"{model.name}, {dtype}: expected {expected:,} bytes per token, got {got:,} "
                                 f"({_how_much(got, expected)}). Hint: {_per_token_hint(got, model, dtype)}")


def _fit_mistakes(budget_gib: float, per_token: int, max_len: int, num_layers: int) -> dict[str, tuple[int, str]]:
    """What each plausible wrong ``max_concurrent_requests`` returns for this budget and reservation, with the hint
    that names it: {mistake: (its count of requests, hint)}."""
    per_request = per_token * max_len
    budget = budget_gib * GiB                       # exact: a power of two multiplies
    fit = budget / per_request
    return {
        "GB": (int(budget_gib * GB // per_request),
               f"that is a budget of {budget_gib} GB (10**9 bytes); a GiB is 2**30 bytes."),
        "int(budget)": (int(budget_gib) * GiB // per_request,
                        f"that is what fits in int(budget_gib) = {int(budget_gib)} GiB: the budget was truncated to "
                        f"whole GiB before the conversion; convert it whole (budget_gib * 2**30 bytes), and round "
                        f"down only the number of requests."),
        "round": (round(fit), f"{fit:.2f} reservations fit, and a part of a reservation runs no request: round down."),
        "max_len + 1": (int(budget // (per_token * (max_len + 1))),
                        f"that is what fits when each request reserves max_len + 1 = {max_len + 1} tokens; it "
                        f"reserves max_len = {max_len} (the tokens of the prompt and of the output together)."),
        "one layer": (int(budget // (per_request // num_layers)),
                      f"that is what fits when a token holds {per_token // num_layers:,} bytes, its K and V in one "
                      f"layer; it holds {per_token:,} over all {num_layers} layers: use kv_bytes_per_token(model, "
                      f"dtype)."),
        "no K and V": (int(budget // (per_request // 2)),
                       "that is what fits when a token holds a key OR a value; it holds both: use "
                       "kv_bytes_per_token(model, dtype)."),
        "<": (max(math.ceil(fit) - 1, 0),
              f"the budget holds {fit:g} reservations exactly, to the byte: an exact fit runs them all (no < where <= "
              f"belongs)."),
    }


def _fit_hint(max_concurrent_requests, cases, gots: list, first: int, per_tokens: list) -> str:
    """The mistake that best explains a wrong count of requests, derived from what the learner's function returns: of
    the :func:`_fit_mistakes` that give its count at case ``first``, the one that also gives its counts at the most
    other cases and at three more budgets for the same reservation (one byte short of max_len + 1 tokens, exactly one
    reservation, one and a half): at the check's cases an exact fit counted with < and one token too many reserved
    agree, those budgets tell them apart."""
    budget_gib, model, max_len, dtype, _ = cases[first]
    per_token = per_tokens[first]
    mistakes = _fit_mistakes(budget_gib, per_token, max_len, model.num_layers)
    candidates = [name for name, (count, _) in mistakes.items() if count == gots[first]]
    if not candidates:
        return ("the budget in bytes (budget_gib * 2**30), floor-divided by the bytes of one reservation "
                "(kv_bytes_per_token(model, dtype) * max_len), as an int.")
    per_request = per_token * max_len
    points = [(case[0], case[2], per_tokens[i], case[1].num_layers, gots[i]) for i, case in enumerate(cases)
              if gots[i] is not None]
    for probe in (per_token * (max_len + 1) - 1, per_request, per_request * 3 // 2):
        try:
            got = max_concurrent_requests(probe / GiB, model, max_len, dtype)
            points.append((probe / GiB, max_len, per_token, model.num_layers, got))
        except Exception:  # noqa: BLE001 - only a hint
            pass

    def agreement(name):
        return sum(_fit_mistakes(b, t, n, layers)[name][0] == got for b, n, t, layers, got in points)

    return mistakes[max(candidates, key=agreement)][1]


def check_whole_requests(max_concurrent_requests, kv_bytes_per_token) -> None:
    """Check 4: whole requests in a budget."""
    __tracebackhide__ = True
    cases = [(60, LLAMA3_8B, 8192, torch.bfloat16, 60), (12, OPT_13B, 2048, torch.float16, 7),
             (1, OPT_13B, 2048, torch.float16, 0), (12.5, OPT_13B, 2048, torch.float16, 8)]
    gots: list = [None] * len(cases)
    per_tokens = [kv_bytes_per_token(model, dtype) for _, model, _, dtype, _ in cases]
    for i, (budget_gib, model, max_len, dtype, expected) in enumerate(cases):
        got = gots[i] = max_concurrent_requests(budget_gib, model, max_len, dtype)
        if got != expected:
            for j in range(i + 1, len(cases)):          # the later cases too, to tell the mistakes apart
                try:
                    gots[j] = max_concurrent_requests(*cases[j][:4])
                except Exception:  # noqa: BLE001 - only a hint
                    pass
            raise AssertionError(
                f"{budget_gib} GiB for {model.name} at max_len {max_len}: expected {expected} requests, got {got} "
                f"({_how_much(got, expected)}). Hint: "
                f"{_fit_hint(max_concurrent_requests, cases, gots, i, per_tokens)}")
        assert isinstance(got, int), (
            f"{budget_gib} GiB for {model.name}: got {got!r}, a {type(got).__name__}: a number of requests is an int "
            f"(floor division of a float, such as a budget in GiB times 2**30, is still a float).")


MQA_SHAPE = ModelShape("one-KV-head model", num_layers=6, num_heads=12, num_kv_heads=1, head_dim=80, max_len=1024,
                       source="made up: multi-query attention, every query head shares one KV head")
"""A shape of the stated space that no real model of the presets has: a single KV head, a head_dim of 80."""


def _dtypes() -> list[torch.dtype]:
    """The cache dtypes the instructions name: fp32, fp16, bf16 and fp8 (where this torch has it)."""
    fp8 = [torch.float8_e4m3fn] if hasattr(torch, "float8_e4m3fn") else []
    return [torch.float32, torch.float16, torch.bfloat16, *fp8]


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _how_much(got, expected) -> str:
    """How far ``got`` is from ``expected``, as a ratio when that reads better than a difference."""
    if not isinstance(got, numbers.Real) or got != got:
        return "not a number"
    if expected and got and max(got / expected, expected / got) >= 1.5:
        ratio = got / expected
        return f"{ratio:.4g}x the expected" if ratio > 1 else f"1/{1 / ratio:.4g} of the expected"
    return f"off by {got - expected:+,}"


def _shape(model: ModelShape) -> str:
    return (f"{model.name} ({model.num_layers} layers, {model.num_heads} query heads, {model.num_kv_heads} KV heads, "
            f"head_dim {model.head_dim}, max_len {model.max_len})")


def _per_token_hint(got, model: ModelShape, dtype: torch.dtype) -> str:
    """Which argument a wrong per-token size took wrongly, from the sizes each mistake gives."""
    size = dtype.itemsize

    def per_token(layers=model.num_layers, heads=model.num_kv_heads, head_dim=model.head_dim, nbytes=size, kv=2):
        return kv * layers * heads * head_dim * nbytes

    if got == per_token(heads=model.num_heads):
        return (f"that is {model.num_heads} query heads: {model.name} caches {model.num_kv_heads} KV heads "
                f"(model.num_kv_heads).")
    if got == per_token(nbytes=8 * size):
        return "that is bits, not bytes: use dtype.itemsize."
    if got == per_token(nbytes=2):
        return (f"that is 2 bytes per element; {dtype} stores {size}: take the size from the dtype argument "
                f"(dtype.itemsize), for every dtype.")
    if got == per_token(head_dim=128):
        return f"that is a head_dim of 128; {model.name}'s is {model.head_dim}: use model.head_dim."
    if got == per_token(kv=1):
        return "a key AND a value per layer and KV head: the factor 2."
    return "2 x num_layers x num_kv_heads x head_dim x dtype.itemsize, with the model's own fields."


def check_over_the_space(kv_cache_bytes, kv_bytes_per_token, max_concurrent_requests) -> None:
    """Check 5: your three functions against the formula on inputs drawn from the whole stated space (the module
    docstring), MHA, GQA and one-KV-head models, every dtype, boundaries included: the first input where yours
    differs, what it returned and by how much."""
    __tracebackhide__ = True
    rng = random.Random(5)
    # kv_cache_bytes: every argument at its smallest (1) and at its largest, then seeded draws
    ranges = dict(num_layers=(1, 96), num_kv_heads=(1, 64), head_dim=(1, 256), num_tokens=(1, 32 * 1024),
                  batch=(1, 64))
    cases = [{name: lo for name, (lo, hi) in ranges.items()}, {name: hi for name, (lo, hi) in ranges.items()}]
    cases += [{name: rng.randint(lo, hi) for name, (lo, hi) in ranges.items()} for _ in range(60)]
    for args in cases:
        for nbytes in (1, 2, 4):
            args = {**args, "bytes_per_element": nbytes}
            call = "kv_cache_bytes(" + ", ".join(f"{k}={v}" for k, v in args.items()) + ")"
            expected, got = formula(**args), kv_cache_bytes(**args)
            assert _is_int(got), (f"{call} returned {got!r}, a {type(got).__name__}: a number of bytes is an exact "
                                  f"int (a / makes a float; multiply ints).")
            assert got == expected, (
                f"{call}: expected {expected:,} bytes, got {got:,} ({_how_much(got, expected)}). Hint: "
                f"{_formula_hint(kv_cache_bytes, args, got, expected)}")
    models = [*PRESETS.values(), MQA_SHAPE]
    for model in models:
        for dtype in _dtypes():
            expected = model.kv_bytes_per_token(dtype.itemsize)
            got = kv_bytes_per_token(model, dtype)
            call = f"kv_bytes_per_token({_shape(model)}, {dtype})"
            assert _is_int(got), (
                f"{call} returned {got!r}, a {type(got).__name__}: a number of bytes is an int. Hint: "
                f"torch.finfo(dtype).bits / 8 is a float; dtype.itemsize is the int number of bytes.")
            assert got == expected, (f"{call}: expected {expected:,} bytes per token, got {got:,} "
                                     f"({_how_much(got, expected)}). Hint: {_per_token_hint(got, model, dtype)}")
    for model in models:
        for dtype in _dtypes():
            per_token = model.kv_bytes_per_token(dtype.itemsize)
            for max_len in (1, rng.randint(2, model.max_len - 1), model.max_len):
                per_request = per_token * max_len
                k = rng.randint(1, 64)
                for budget_bytes, what in [
                        (0, "no budget at all"), (per_request - 1, "one byte short of one reservation"),
                        (k * per_request, f"exactly {k} reservation(s)"),
                        (k * per_request - 1, f"one byte short of {k} reservations"),
                        (k * per_request + per_request // 2, f"{k} and a half reservations")]:
                    budget_gib = budget_bytes / GiB        # exact: a power of two divides
                    expected = budget_bytes // per_request
                    call = f"max_concurrent_requests({budget_gib!r}, {_shape(model)}, max_len={max_len}, {dtype})"
                    got = max_concurrent_requests(budget_gib, model, max_len, dtype)
                    assert _is_int(got), (
                        f"{call} returned {got!r}, a {type(got).__name__}: a number of requests is an int (floor "
                        f"division of a float, such as a budget in GiB times 2**30, is still a float).")
                    if got == expected:
                        continue
                    if got == budget_bytes // (per_token * model.max_len) and max_len != model.max_len:
                        hint = (f"that many reservations of model.max_len = {model.max_len} tokens fit: each request "
                                f"reserves the max_len argument ({max_len}), which a server chooses.")
                    elif got == budget_bytes // (model.kv_bytes_per_token(2) * max_len) and dtype.itemsize != 2:
                        hint = (f"that is what fits at 2 bytes per element; {dtype} stores {dtype.itemsize}: size "
                                f"the tokens with the dtype argument (kv_bytes_per_token(model, dtype)).")
                    elif got == int(budget_gib * GB // per_request):
                        hint = f"that is a budget of {budget_gib} GB (10**9 bytes); a GiB is 2**30 bytes."
                    elif budget_bytes % per_request == 0 and got == expected - 1:
                        hint = ("the budget holds the reservations exactly, to the byte: an exact fit runs them all "
                                "(no < where <= belongs).")
                    elif got == expected + 1:
                        hint = "a part of a reservation runs no request: round down."
                    else:
                        hint = "the budget in bytes (budget_gib * 2**30), floor-divided by max_len tokens' bytes."
                    raise AssertionError(
                        f"{call}, a budget of {what} ({budget_bytes:,} bytes; one request reserves "
                        f"{per_request:,}): expected {expected} requests, got {got} ({_how_much(got, expected)}). "
                        f"Hint: {hint}")
