"""Wrong KV-cache sizes planted in solutions/ex05_kv_cache_size.ipynb: the factor 2, the bytes per element, query
heads for KV heads, GB for GiB, the rounding of how many requests fit."""

from __future__ import annotations

from planted import Plant


BUGS: dict[str, Plant] = {
    "forgot the factor 2 for K and V": Plant(
        {"formula-work": "def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):\n"
                         "    return num_layers * num_kv_heads * head_dim * num_tokens * batch * bytes_per_element"},
        1, "a key AND a value"),
    "assumed fp16 whatever bytes_per_element says": Plant(
        {"formula-work": "def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):\n"
                         "    return 2 * num_layers * num_kv_heads * head_dim * num_tokens * batch * 2"},
        2, "use the bytes_per_element argument"),
    "query heads instead of KV heads (GQA)": Plant(
        {"models-work": "def kv_bytes_per_token(model, dtype):\n"
                        "    return kv_cache_bytes(model.num_layers, model.num_heads, model.head_dim, 1, 1, dtype.itemsize)"},
        3, "only KV heads are cached"),
    "bits instead of bytes per element": Plant(
        {"models-work": "def kv_bytes_per_token(model, dtype):\n"
                        "    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, torch.finfo(dtype).bits)"},
        3, "bits, not bytes"),
    "GB (10**9) instead of GiB (2**30)": Plant(
        {"fit-work": "def max_concurrent_requests(budget_gib, model, max_len, dtype):\n"
                     "    return int(budget_gib * 10**9 // (kv_bytes_per_token(model, dtype) * max_len))"},
        4, r"a GiB is 2\*\*30 bytes"),
    "rounded to the nearest request instead of down": Plant(
        {"fit-work": "def max_concurrent_requests(budget_gib, model, max_len, dtype):\n"
                     "    return round(budget_gib * GiB / (kv_bytes_per_token(model, dtype) * max_len))"},
        4, "round down"),
    "a float count (floor division of the float budget)": Plant(
        {"fit-work": "def max_concurrent_requests(budget_gib, model, max_len, dtype):\n"
                     "    return budget_gib * GiB // (kv_bytes_per_token(model, dtype) * max_len)"},
        4, r"12\.5 GiB for OPT-13B: got 8\.0, a float: a number of requests is an int"),
}
