"""Exercise 5's checks catch the plausible wrong KV-cache formulas, model readings and unit mistakes: the FIRST
failing check names each one."""

from pathlib import Path

import pytest

from nbrun import assert_first_failure, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex05_kv_cache_size.ipynb"

SIGNATURE = {
    "formula-work": "def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):\n",
    "models-work": "def kv_bytes_per_token(model, dtype):\n",
    "fit-work": "def max_concurrent_requests(budget_gib, model, max_len, dtype):\n",
}

# (cell, body, title of the first failing check, regex of its message)
BUGS = {
    "forgot the factor 2 for K and V": (
        "formula-work", "    return num_layers * num_kv_heads * head_dim * num_tokens * batch * bytes_per_element",
        "Check 1: the LLaMA-7B example", "a key AND a value"),
    "assumed fp16 whatever bytes_per_element says": (
        "formula-work", "    return 2 * num_layers * num_kv_heads * head_dim * num_tokens * batch * 2",
        "Check 2: other element sizes", "use the bytes_per_element argument"),
    "query heads instead of KV heads (GQA)": (
        "models-work", "    return kv_cache_bytes(model.num_layers, model.num_heads, model.head_dim, 1, 1, dtype.itemsize)",
        "Check 3: three models, two with grouped-query attention", "only KV heads are cached"),
    "bits instead of bytes per element": (
        "models-work",
        "    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, torch.finfo(dtype).bits)",
        "Check 3: three models, two with grouped-query attention", "bits, not bytes"),
    "GB (10**9) instead of GiB (2**30)": (
        "fit-work", "    return int(budget_gib * 10**9 // (kv_bytes_per_token(model, dtype) * max_len))",
        "Check 4: whole requests in a budget", "a GiB is 2\\*\\*30 bytes"),
    "rounded to the nearest request instead of down": (
        "fit-work", "    return round(budget_gib * GiB / (kv_bytes_per_token(model, dtype) * max_len))",
        "Check 4: whole requests in a budget", "round down"),
    "a float count (floor division of the float budget)": (
        "fit-work", "    return budget_gib * GiB // (kv_bytes_per_token(model, dtype) * max_len)",
        "Check 4: whole requests in a budget", r"12\.5 GiB for OPT-13B: got 8\.0, a float: a number of requests is an int"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    cell, body, title, pattern = BUGS[bug]
    assert_first_failure(NB, {cell: SIGNATURE[cell] + body}, title, pattern)


def test_solution_passes():
    ns = run_cells(NB)
    assert ns["max_concurrent_requests"](12, ns["OPT_13B"], 2048, ns["torch"].float16) == 7
