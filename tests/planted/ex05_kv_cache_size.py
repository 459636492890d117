"""Wrong KV-cache sizes planted in solutions/ex05_kv_cache_size.ipynb: the factor 2, the layers or the batch left
out, the bytes per element, query heads for KV heads, GB for GiB, the rounding of how many requests fit, the budget
truncated to whole GiB, max_len + 1 tokens reserved; and those only Check 5 (the whole input space) sees: the model's
context window for the max_len argument, fp16 whatever the dtype, fp8 counted as 2 bytes, a float byte count, a
head_dim of 128 for every model."""

from __future__ import annotations

from planted import Plant


BUGS: dict[str, Plant] = {
    "forgot the factor 2 for K and V": Plant(
        {"formula-work": "def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):\n"
                         "    return num_layers * num_kv_heads * head_dim * num_tokens * batch * bytes_per_element"},
        1, "a key AND a value"),
    "the layers factor dropped": Plant(
        {"formula-work": "def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):\n"
                         "    return 2 * num_kv_heads * head_dim * num_tokens * batch * bytes_per_element"},
        1, r"got 8,589,934,592.*1/32 of the expected.*Hint: your result does not change with num_layers.*"
           r"num_layers = 32 is missing"),
    "batch not multiplied": Plant(
        {"formula-work": "def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):\n"
                         "    return 2 * num_layers * num_kv_heads * head_dim * num_tokens * bytes_per_element"},
        1, r"got 17,179,869,184.*1/16 of the expected.*Hint: your result does not change with batch.*batch = 16 is "
           r"missing"),
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
    "int(budget_gib) truncated before the conversion": Plant(
        {"fit-work": "def max_concurrent_requests(budget_gib, model, max_len, dtype):\n"
                     "    return int(int(budget_gib) * GiB // (kv_bytes_per_token(model, dtype) * max_len))"},
        4, r"12\.5 GiB for OPT-13B.*expected 8 requests, got 7.*Hint: that is what fits in int\(budget_gib\) = 12 GiB"),
    "max_len + 1 tokens reserved": Plant(
        {"fit-work": "def max_concurrent_requests(budget_gib, model, max_len, dtype):\n"
                     "    return int(budget_gib * GiB // (kv_bytes_per_token(model, dtype) * (max_len + 1)))"},
        4, r"60 GiB for Llama-3-8B.*expected 60 requests, got 59.*Hint: that is what fits when each request reserves "
           r"max_len \+ 1 = 8193 tokens"),
    "the model's context window instead of the max_len argument": Plant(
        {"fit-work": "def max_concurrent_requests(budget_gib, model, max_len, dtype):\n"
                     "    return int(budget_gib * GiB // (kv_bytes_per_token(model, dtype) * model.max_len))"},
        5, r"max_concurrent_requests\(.*max_len=1, .*expected 62 requests, got 0.*reserves the max_len argument"),
    "the model's fp16 size whatever the dtype (ModelShape.kv_bytes_per_token())": Plant(
        {"fit-work": "def max_concurrent_requests(budget_gib, model, max_len, dtype):\n"
                     "    return int(budget_gib * GiB // (model.kv_bytes_per_token() * max_len))"},
        5, r"max_concurrent_requests\(.*torch\.float32\).*expected 0 requests, got 1.*at 2 bytes per element"),
    "fp8 counted as 2 bytes (4 for fp32, else 2)": Plant(
        {"models-work": "def kv_bytes_per_token(model, dtype):\n"
                        "    nbytes = 4 if dtype == torch.float32 else 2\n"
                        "    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, nbytes)"},
        5, r"kv_bytes_per_token\(LLaMA-7B .*torch\.float8_e4m3fn\): expected 262,144 bytes per token, got 524,288 "
           r"\(2x the expected\)\. Hint: that is 2 bytes per element"),
    "a float byte count (bits / 8)": Plant(
        {"models-work": "def kv_bytes_per_token(model, dtype):\n"
                        "    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1,\n"
                        "                          torch.finfo(dtype).bits / 8)"},
        5, r"kv_bytes_per_token\(LLaMA-7B .*torch\.float32\) returned 1048576\.0, a float"),
    "a head_dim of 128 for every model": Plant(
        {"models-work": "def kv_bytes_per_token(model, dtype):\n"
                        "    return kv_cache_bytes(model.num_layers, model.num_kv_heads, 128, 1, 1, dtype.itemsize)"},
        5, r"kv_bytes_per_token\(SmolLM2-135M .*got 92,160 \(2x the expected\)\. Hint: that is a head_dim of 128"),
}
