"""The notebooks of the outside reviews (rounds 38i to 38v), each written by someone who had not read the grader's
tests: their changed cells as they wrote them, read by ``test_ground_truth.py`` as rows of its attack and honest
tables. Each entry: ``label: (table, exercise, ...)``, the table ``"ATTACKS"`` or ``"HONEST"``."""

# Round 38i (an outside review that had not read these tests): each notebook's work cell as it wrote it.
ROUND_38I = {
    "ex03's softmax kernel reading Python's answer through an atomic add": ('ATTACKS', 'ex03_triton_basics', 'softmax-work', r'''
import math


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, plan_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * stride_x + start + cols, mask=mask, other=0.0)
        y = tl.atomic_add(plan_ptr + row * n_cols + start + cols, x * 0.0, mask=mask)
        tl.store(out_ptr + row * stride_out + start + cols, y, mask=mask)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    plan = []
    for r in x.tolist():
        top = max(r)
        e = [math.exp(a - top) for a in r]
        total = sum(e)
        plan += [a / total for a in e]
    plan_t = torch.tensor(plan, dtype=torch.float32)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), plan_t, BLOCK=block)
    return out
'''),
    "ex04's kernel calling Python handed over as a parameter's default": ('ATTACKS', 'ex04_flash_forward', 'kernel-work', r'''
import numpy as np


def _rows(q, K, V, n_q, n_k, stride_k, stride_v, start_m, qk_scale, causal, head_dim, block_m):
    nq, nk, r0 = int(n_q.handle.data[0]), int(n_k.handle.data[0]), int(start_m.handle.data[0])
    width = triton.next_power_of_2(nk)
    cols, dims = tl.arange(0, width), tl.arange(0, head_dim)
    k = tl.load(K + cols[:, None] * stride_k + dims[None, :], mask=cols[:, None] < n_k, other=0.0)
    v = tl.load(V + cols[:, None] * stride_v + dims[None, :], mask=cols[:, None] < n_k, other=0.0)
    kk, vv = k.handle.data[:nk].astype(np.float64), v.handle.data[:nk].astype(np.float64)
    s = (q.handle.data.astype(np.float64) @ kk.T) * float(qk_scale)
    if causal:
        rows = r0 + np.arange(block_m)
        s = np.where(np.arange(nk)[None, :] <= rows[:, None] + nk - nq, s, -np.inf)
    p = np.exp2(s - s.max(axis=1, keepdims=True))
    return (p @ vv) / p.sum(axis=1, keepdims=True)


@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     helper=_rows):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32) * 1.0
    acc.handle.data[:] = helper(q, K, V, n_q, n_k, stride_k, stride_v, start_m, qk_scale, CAUSAL, HEAD_DIM,
                                BLOCK_M)
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc, mask=rows[:, None] < n_q)
'''),
    "ex04 stretch's answer computed in NumPy, handed to the kernel as an array": ('ATTACKS', 'ex04_stretch_gqa_forward', 'kernel-work', r'''
import math

import numpy as np


@triton.jit
def gqa_kernel(Q, K, V, Out, total, planned, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.load(Q + offs * 0, mask=offs < 1)   # read each input where it lies
    tl.load(K + offs * 0, mask=offs < 1)
    tl.load(V + offs * 0, mask=offs < 1)
    vals = tl.zeros([BLOCK], tl.float32) * 1.0
    start = pid.handle.data[0] * BLOCK
    chunk = planned[start:start + BLOCK]
    vals.handle.data[:chunk.shape[0]] = chunk
    tl.store(Out + offs, vals, mask=offs < total)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    if n_heads % n_kv_heads:
        raise ValueError(f"{n_kv_heads} K/V heads do not divide {n_heads} query heads")
    group = n_heads // n_kv_heads
    qn = q.numpy().astype(np.float64)
    kn = np.repeat(k.numpy().astype(np.float64), group, axis=1)
    vn = np.repeat(v.numpy().astype(np.float64), group, axis=1)
    s = qn @ kn.swapaxes(-1, -2) / math.sqrt(d)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    planned = np.ascontiguousarray((p @ vn) / p.sum(axis=-1, keepdims=True), dtype=np.float32).reshape(-1)
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    BLOCK = 256
    gqa_kernel[(triton.cdiv(planned.size, BLOCK),)](q, k, v, out, planned.size, planned, BLOCK=BLOCK)
    return out
'''),
    "ex04b's predict_resources on the course's tile_model": ('ATTACKS', 'ex04b_performance_lab', 'predict-resources-work', r'''
def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    kept, scores, streamed = perf_lab.tile_elements("fwd", block_m, block_n, head_dim)
    registers = (kept + 1.5 * scores) / (32 * num_warps)
    return {"shared_bytes": 2 * (kept + 2 * num_stages * streamed), "registers": registers, "spills": registers > 255}
'''),
    "ex02's tiled_attention keeping every score in Python's lists": ('ATTACKS', 'ex02_online_softmax', 'tiled-work', r'''
def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    qs, ks, vs = q.tolist(), k.tolist(), v.tolist()
    c = 1.0 / math.sqrt(d)
    # every query-key score at once, as plain Python numbers
    scores = [[sum(a * b for a, b in zip(qr, kr)) * c for kr in ks] for qr in qs]
    out = (q * 0).float()
    for i, row in enumerate(scores):
        seen = row[:i + n_k - n_q + 1] if causal else row
        top = max(seen)
        w = [math.exp(x - top) for x in seen]
        total = sum(w)
        for j in range(d):
            out[i, j] = sum(wk * vs[kk][j] for kk, wk in enumerate(w)) / total
    return out.to(q.dtype)
'''),
    "ex04 stretch's kernel given four named float constants": ('HONEST', 'ex04_stretch_gqa_forward', 'kernel-work', r'''
@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, sm_scale, log2e, mask_value, l_floor,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    kvh = h // group
    Q += b * stride_qb + h * stride_qh
    K += b * stride_kb + kvh * stride_kh
    V += b * stride_vb + kvh * stride_vh
    Out += b * stride_ob + h * stride_oh
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], mask_value, tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.dot(q, k, input_precision="ieee") * (sm_scale * log2e)
        s = tl.where(cols[None, :] < n_k, s, mask_value)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / tl.maximum(l_i, l_floor)[:, None],
             mask=rows[:, None] < n_q)


LOG2E = 1.4426950408889634
MASK_VALUE = -1.0e30      # finite: exp2(MASK_VALUE - m) is 0 without inf - inf
L_FLOOR = 1.0e-30


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    if n_heads % n_kv_heads != 0:
        raise ValueError(f"n_kv_heads={n_kv_heads} must divide n_heads={n_heads}")
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    grid = (triton.cdiv(n_q, block_m), batch * n_heads)
    gqa_kernel[grid](q, k, v, out, n_heads, n_heads // n_kv_heads, n_q, n_k, d ** -0.5, LOG2E, MASK_VALUE, L_FLOOR,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out
'''),
}

# Round 38j (an outside review that had not read these tests): each notebook's changed work cells as it wrote them.
ROUND_38J = {
    "ex02's scores kept in Python, the inputs read out by torch.save": ('ATTACKS', 'ex02_online_softmax', {'update-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    tile_max = s.max(dim=-1).values
    new_max = torch.where(tile_max > m, tile_max, m)
    shrink = (m - new_max).exp()
    weights = (s - new_max[:, None]).exp()
    return new_max, l * shrink + weights.sum(-1), acc * shrink[:, None] + weights @ v_tile

''', 'tiled-work': r'''
import io
import struct
import zipfile


def _values(t):
    """The values of a tensor as Python floats, through torch's own serialization."""
    buf = io.BytesIO()
    torch.save(t, buf)
    with zipfile.ZipFile(buf) as z:
        raw = z.read(next(name for name in z.namelist() if "/data/" in name))
    code = "e" if t.dtype == torch.float16 else "f"
    return list(struct.unpack(f"<{len(raw) // struct.calcsize(code)}{code}", raw))


def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    Q, K, V = _values(q), _values(k), _values(v)
    scale = 1 / math.sqrt(d)
    scores = [[scale * sum(Q[i * d + c] * K[j * d + c] for c in range(d)) if not causal or j <= i + n_k - n_q
               else -math.inf for j in range(n_k)] for i in range(n_q)]      # every query-key pair at once
    for i, row in enumerate(scores):
        top = max(row)
        w = [math.exp(x - top) for x in row]
        total = sum(w)
        for c in range(d):
            out[i, c] = sum(w[j] * V[j * d + c] for j in range(n_k)) / total
    out.add_(q.float().sum() * 0)
    return out.to(q.dtype)

'''}),
    "ex03's input storage swapped with set_ for one holding Python's softmax": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    first = BLOCK * tl.program_id(axis=0)
    idx = tl.arange(0, BLOCK) + first
    inside = idx < n
    a = tl.load(idx * stride_x + x_ptr, mask=inside, other=0.0)
    b = tl.load(idx * stride_y + y_ptr, mask=inside, other=0.0)
    tl.store(idx + out_ptr, b + a, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    programs = (x.numel() + block - 1) // block
    add_kernel[(programs,)](x, y, out, x.numel(), x.stride(0), y.stride(0), BLOCK=block)
    return out

''', 'softmax-work': r'''
import math


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        ok = start + offs < n_cols
        val = tl.load(x_ptr + row * stride_x + start + offs, mask=ok, other=0.0)
        tl.store(out_ptr + row * stride_out + start + offs, val, mask=ok)


def _python_softmax(rows):
    result = []
    for r in rows:
        top = max(r)
        e = [math.exp(a - top) for a in r]
        s = sum(e)
        result.append([a / s for a in e])
    return result


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    grid = (x.shape[0],)
    scratch = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[grid](x, scratch, x.shape[1], x.stride(0), scratch.stride(0), BLOCK=block)  # reads x in place
    answer = torch.tensor(_python_softmax(x.tolist()), dtype=x.dtype)
    saved = (x.untyped_storage(), x.storage_offset(), x.size(), x.stride())
    x.set_(answer.untyped_storage(), 0, answer.size(), answer.stride())
    try:
        softmax_kernel[grid](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    finally:
        x.set_(*saved)
    return out

'''}),
    "ex04 stretch: NumPy's answer handed to one launch and read by the next through an integer offset": ('ATTACKS', 'ex04_stretch_gqa_forward', {'kernel-work': r'''
import numpy as np


@triton.jit
def _touch(Q, K, V, Held):
    # reads one element of each input where it lies; Held (the answer) is only handed over
    a = tl.load(Q) + tl.load(K) + tl.load(V)
    a = a * 0


@triton.jit
def gqa_kernel(Out, delta, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    tl.store(Out + offs, tl.load(Out + delta + offs, mask=ok, other=0.0), mask=ok)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    if n_heads % n_kv_heads:
        raise ValueError(f"{n_kv_heads} K/V heads do not divide {n_heads} query heads")
    group = n_heads // n_kv_heads
    qn, kn, vn = (t.numpy().astype(np.float64) for t in (q, k, v))
    kn, vn = np.repeat(kn, group, axis=1), np.repeat(vn, group, axis=1)
    s = qn @ kn.transpose(0, 1, 3, 2) / np.sqrt(d)
    p = np.exp(s - s.max(-1, keepdims=True))
    ans = torch.from_numpy(np.ascontiguousarray((p / p.sum(-1, keepdims=True)) @ vn, dtype=np.float32))
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    _touch[(1,)](q, k, v, ans)
    delta = (ans.data_ptr() - out.data_ptr()) // out.element_size()
    gqa_kernel[(triton.cdiv(out.numel(), 256),)](out, delta, out.numel(), BLOCK=256)
    return out

'''}),
    "ex09: NumPy's answer as bit planes of 1.0 put in place by fill_": ('ATTACKS', 'ex09_paged_attention', {'kernel-work': r'''
import numpy as np


def _paged_answer(q, k_cache, v_cache, block_tables, context_lens, group):
    """Decode attention in NumPy (float64), (num_seqs, heads, d) float32."""
    qn, kc, vc = q.numpy().astype(np.float64), k_cache.numpy().astype(np.float64), v_cache.numpy().astype(np.float64)
    tables, lens = block_tables.numpy(), context_lens.numpy()
    bs, d = kc.shape[1], qn.shape[-1]
    out = np.zeros(qn.shape)
    for s in range(qn.shape[0]):
        pos = np.arange(int(lens[s]))
        keys, vals = kc[tables[s, pos // bs], pos % bs], vc[tables[s, pos // bs], pos % bs]  # (len, kv_heads, d)
        for h in range(qn.shape[1]):
            sc = keys[:, h // group] @ qn[s, h] / np.sqrt(d)
            w = np.exp(sc - sc.max())
            out[s, h] = w @ vals[:, h // group] / w.sum()
    return out.astype(np.float32)


@triton.jit
def _from_planes(Planes, Out, Q, K, V, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    touch = tl.load(Q) + tl.load(K) + tl.load(V)  # each input read where it lies (the value is not used)
    bits = tl.zeros([BLOCK], tl.uint32)
    for b in range(32):
        plane = tl.load(Planes + b * n + offs, mask=ok, other=0.0)
        bits = bits | ((plane > 0.5).to(tl.uint32) << b)
    tl.store(Out + offs, bits.to(tl.float32, bitcast=True), mask=ok)


class _Launch:
    """Stands where the setup expects the kernel: paged_decode_kernel[grid](...)."""

    def __getitem__(self, grid):
        return self.run

    def run(self, q, k_cache, v_cache, block_tables, context_lens, out, *numbers, **constants):
        group = q.shape[1] // k_cache.shape[2]
        answer = _paged_answer(q, k_cache, v_cache, block_tables, context_lens, group).reshape(-1)
        n = answer.size
        planes = torch.zeros(32 * n)
        ones = np.nonzero((answer.view(np.uint32)[None, :] >> np.arange(32, dtype=np.uint32)[:, None]) & 1)
        for b, i in zip(*ones):
            planes[int(b) * n + int(i)].fill_(1.0)
        _from_planes[(triton.cdiv(n, 128),)](planes, out, q, k_cache, v_cache, n, BLOCK=128)


paged_decode_kernel = _Launch()

'''}),
    "ex09: the answer's bits stored past a view equal to context_lens": ('ATTACKS', 'ex09_paged_attention', {'kernel-work': r'''
import numpy as np


def _paged_answer(q, k_cache, v_cache, block_tables, context_lens, group):
    """Decode attention in NumPy (float64), (num_seqs, heads, d) float32."""
    qn, kc, vc = q.numpy().astype(np.float64), k_cache.numpy().astype(np.float64), v_cache.numpy().astype(np.float64)
    tables, lens = block_tables.numpy(), context_lens.numpy()
    bs, d = kc.shape[1], qn.shape[-1]
    out = np.zeros(qn.shape)
    for s in range(qn.shape[0]):
        pos = np.arange(int(lens[s]))
        keys, vals = kc[tables[s, pos // bs], pos % bs], vc[tables[s, pos // bs], pos % bs]  # (len, kv_heads, d)
        for h in range(qn.shape[1]):
            sc = keys[:, h // group] @ qn[s, h] / np.sqrt(d)
            w = np.exp(sc - sc.max())
            out[s, h] = w @ vals[:, h // group] / w.sum()
    return out.astype(np.float32)


@triton.jit
def _copy_tail(Lens, Out, Q, K, V, start, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    touch = tl.load(Q) + tl.load(K) + tl.load(V)
    bits = tl.load(Lens + start + offs, mask=ok, other=0)
    tl.store(Out + offs, bits.to(tl.float32, bitcast=True), mask=ok)


class _Launch:
    def __getitem__(self, grid):
        return self.run

    def run(self, q, k_cache, v_cache, block_tables, context_lens, out, *numbers, **constants):
        group = q.shape[1] // k_cache.shape[2]
        answer = _paged_answer(q, k_cache, v_cache, block_tables, context_lens, group).reshape(-1)
        seqs = context_lens.numel()
        whole = torch.from_numpy(np.concatenate([context_lens.numpy().astype(np.int32), answer.view(np.int32)]))
        lens_view = whole[:seqs]     # equal to context_lens, element for element
        _copy_tail[(triton.cdiv(answer.size, 128),)](lens_view, out, q, k_cache, v_cache, seqs, answer.size,
                                                     BLOCK=128)


paged_decode_kernel = _Launch()

'''}),
    'ex02 with causal masks sliced from positions made once, before the calls': ('HONEST', 'ex02_online_softmax', {'update-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    m_next = torch.maximum(m, s.amax(dim=-1))
    decay = torch.exp(m - m_next)
    p = torch.exp(s - m_next[:, None])
    return m_next, decay * l + p.sum(dim=-1), decay[:, None] * acc + p @ v_tile

''', 'tiled-work': r'''
POSITIONS = torch.arange(1 << 12)   # made once; each tile slices its query and key positions from it


def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    scale = d ** -0.5
    offset = n_k - n_q
    for r0 in range(0, n_q, block_m):
        q_tile = q[r0:r0 + block_m].float() * scale
        rows = q_tile.shape[0]
        state = (torch.full((rows,), -math.inf), torch.zeros(rows), torch.zeros(rows, d))
        last_key = r0 + rows - 1 + offset if causal else n_k - 1
        for c0 in range(0, min(n_k, last_key + 1), block_n):
            s = q_tile @ k[c0:c0 + block_n].float().T
            if causal:
                qpos = POSITIONS[r0:r0 + rows]
                kpos = POSITIONS[c0:c0 + s.shape[1]]
                s = s.masked_fill(kpos[None, :] > qpos[:, None] + offset, -math.inf)
            state = online_softmax_update(*state, s, v[c0:c0 + block_n].float())
        out[r0:r0 + rows] = state[2] / state[1][:, None]
    return out.to(q.dtype)

'''}),
    "ex03 with its kernels kept in a dataclass's field named kernel": ('HONEST', 'ex03_triton_basics', {'add-work': r'''
from dataclasses import dataclass


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = i < n
    total = tl.load(x_ptr + i * stride_x, mask=keep) + tl.load(y_ptr + i * stride_y, mask=keep)
    tl.store(out_ptr + i, total, mask=keep)


@dataclass
class Launcher:
    """A kernel and how to launch it over a 1-D problem of ``n`` items."""
    kernel: object
    name: str = ""

    def __call__(self, n: int, *args, **meta):
        grid = lambda m: (triton.cdiv(n, m["BLOCK"]),)
        self.kernel[grid](*args, **meta)

    def __repr__(self) -> str:
        return f"Launcher({self.name or 'kernel'})"


launch_add = Launcher(add_kernel, "add")


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    launch_add(x.numel(), x, y, out, x.numel(), x.stride(0), y.stride(0), BLOCK=block)
    return out

''', 'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    src, dst = x_ptr + r * stride_x, out_ptr + r * stride_out
    best, total = -float("inf"), 0.0
    for c in range(0, n_cols, BLOCK):                        # pass 1: running max and rescaled sum
        chunk = tl.load(src + c + j, mask=c + j < n_cols, other=-float("inf"))
        new_best = tl.maximum(best, tl.max(chunk, 0))
        total = total * tl.exp(best - new_best) + tl.sum(tl.exp(chunk - new_best), 0)
        best = new_best
    for c in range(0, n_cols, BLOCK):                        # pass 2: normalized probabilities
        chunk = tl.load(src + c + j, mask=c + j < n_cols, other=-float("inf"))
        tl.store(dst + c + j, tl.exp(chunk - best) / total, mask=c + j < n_cols)


row_launch = Launcher(softmax_kernel, "softmax")


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    row_launch.kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out

'''}),
    'ex04 with named constants and acc_dtype = tl.float32 in the kernel': ('HONEST', 'ex04_flash_forward', {'kernel-work': r'''
NEG_INF = float("-inf")   # a hidden key's score
EMPTY = 0.0               # what a padded row or column loads


@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    acc_dtype = tl.float32                       # every running quantity in float32
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=EMPTY)
    running_max = tl.full([BLOCK_M], NEG_INF, acc_dtype)
    denom = tl.zeros([BLOCK_M], acc_dtype)
    numer = tl.zeros([BLOCK_M, HEAD_DIM], acc_dtype)
    shift = n_k - n_q                            # bottom-right alignment of the causal mask
    stop = tl.minimum(n_k, start_m + BLOCK_M + shift) if CAUSAL else n_k
    for start_n in range(0, stop, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        kt = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=EMPTY)
        vt = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=EMPTY)
        visible = cols[None, :] < n_k
        if CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None] + shift)
        scores = tl.where(visible, tl.dot(q, kt, input_precision="ieee") * qk_scale, NEG_INF)
        new_max = tl.maximum(running_max, tl.max(scores, axis=1))
        rescale = tl.exp2(running_max - new_max)
        probs = tl.exp2(scores - new_max[:, None])
        denom = denom * rescale + tl.sum(probs, axis=1)
        numer = numer * rescale[:, None] + tl.dot(probs.to(acc_dtype), vt, input_precision="ieee")
        running_max = new_max
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], numer / denom[:, None], mask=rows[:, None] < n_q)

'''}),
}

# Round 38k (a third outside review, after round 38j's fixes): each notebook's changed work cells as it wrote them.
ROUND_38K = {
    "ex00's softmax as flash attention with a one-hot query and identity values": ('ATTACKS', 'ex00_warmup', {'softmax-work': r'''
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    r = rows.shape[0]
    keys = torch.zeros(r, 1, n, n, dtype=x.dtype)   # key j = (x_j, 0, ..., 0)
    keys[:, 0, :, 0] = rows
    query = torch.zeros(r, 1, 1, n, dtype=x.dtype)  # query = (1, 0, ..., 0): score j = x_j
    query[..., 0] = 1
    values = torch.eye(n, dtype=x.dtype).expand(r, 1, n, n)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        weights = F.scaled_dot_product_attention(query, keys, values, scale=1.0)
    return weights.reshape(x.shape)

'''}),
    "ex01's attention from torch's fused transformer encoder layer": ('ATTACKS', 'ex01_naive_attention', {'mask-work': r'''
def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    offset = n_k - n_q
    rows = torch.arange(n_q).view(-1, 1)
    cols = torch.arange(n_k).view(1, -1)
    return (cols - rows) <= offset

''', 'attention-work': r'''
def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    *lead, n_q, d = q.shape
    n_k = k.shape[-2]
    b = math.prod(lead)
    e, n = 4 * d, n_q + n_k
    f64 = torch.float64
    x = torch.zeros(b, n, e, dtype=f64)                    # tokens: the queries, then the keys
    qq, kk, vv = (t.reshape(b, -1, d).to(f64) for t in (q, k, v))
    shrink = 2.0 ** 20                                     # queries kept small in the residual stream
    x[:, :n_q, :d], x[:, :n_q, d:2 * d] = qq / shrink, -qq / shrink
    x[:, n_q:, d:2 * d], x[:, n_q:, 2 * d:3 * d], x[:, n_q:, 3 * d:] = kk, vv, -vv
    eye = torch.eye(d, dtype=f64)
    wq, wk, wv = (torch.zeros(e, e, dtype=f64) for _ in range(3))
    wq[:d, :d] = 2 * shrink * eye                          # one head of 4d: its scale 1/sqrt(4d), times 2
    wk[:d, d:2 * d] = eye
    wv[2 * d:3 * d, 2 * d:3 * d], wv[3 * d:, 3 * d:] = eye, eye
    big = 1e7
    norm_w, zero_e = torch.full((e,), big, dtype=f64), torch.zeros(e, dtype=f64)
    seen = torch.zeros(n, n, dtype=torch.bool)
    seen[:n_q, n_q:] = causal_mask(n_q, n_k) if causal else True
    seen[n_q:, n_q:] = True
    with torch.no_grad():
        y = torch._transformer_encoder_layer_fwd(
            x, e, 1, torch.cat([wq, wk, wv]), torch.zeros(3 * e, dtype=f64), torch.eye(e, dtype=f64), zero_e,
            False, False, big * big, norm_w, zero_e, norm_w, zero_e, torch.zeros(8, e, dtype=f64),
            torch.zeros(8, dtype=f64), torch.zeros(e, 8, dtype=f64), zero_e, ~seen, 0)
    return y[:, :n_q, 2 * d:3 * d].reshape(q.shape).to(q.dtype)

'''}),
    'ex02 filling a whole score matrix with _foreach_copy_, which returns None': ('ATTACKS', 'ex02_online_softmax', {'update-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    m_new = torch.maximum(m, s.amax(dim=-1))
    base = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)  # a row with nothing seen yet
    alpha = torch.exp(m - base)
    p = torch.exp(s - base[:, None])
    return m_new, l * alpha + p.sum(dim=-1), acc * alpha[:, None] + p @ v_tile

''', 'tiled-work': r'''
_SCORES = torch.empty(256, 256)  # room for every score of any call


def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    qf, kf, vf = q.float(), k.float(), v.float()
    scores = _SCORES[:n_q, :n_k]
    for i in range(0, n_q, block_m):
        for j in range(0, n_k, block_n):
            s = (qf[i:i + block_m] @ kf[j:j + block_n].T) * d ** -0.5
            if causal:
                r = torch.arange(i, min(i + block_m, n_q))[:, None]
                c = torch.arange(j, min(j + block_n, n_k))[None, :]
                s = torch.where(c <= r + n_k - n_q, s, torch.full_like(s, float("-inf")))
            torch._foreach_copy_([scores[i:i + block_m, j:j + block_n]], [s])
    for i in range(0, n_q, block_m):
        rows = scores[i:i + block_m]
        p = torch.exp(rows - rows.amax(dim=-1, keepdim=True))
        out[i:i + block_m] = (p @ vf) / p.sum(dim=-1, keepdim=True)
    return out.to(q.dtype)

'''}),
    'ex02 stretch taking every score into Python through apply_': ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    shift = n_k - n_q
    tiles = -(-n_k // block_n)
    hi = r0 + rows - 1 + shift                  # last key the last row sees
    visit = 0 if hi < 0 else min(tiles, hi // block_n + 1)
    lo = r0 + shift                             # last key the first row sees
    full = tiles if lo >= n_k - 1 else max(0, (lo + 1) // block_n)
    return full, visit

''', 'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    m_new = torch.maximum(m, s.amax(dim=-1))
    base = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
    alpha = torch.exp(m - base)
    p = torch.exp(s - base[:, None])
    return m_new, l * alpha + p.sum(dim=-1), acc * alpha[:, None] + p @ v_tile


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    shift = n_k - n_q
    qs, kf, vf = q.float() / math.sqrt(d), k.float(), v.float()
    scores = [[] for _ in range(n_q)]           # every score, in Python
    for r0 in range(0, n_q, block_m):
        rows = min(block_m, n_q - r0)
        _, n_visit = key_tile_counts(r0, rows, n_q, n_k, block_n)
        for t in range(n_visit):
            c0 = t * block_n
            s = qs[r0:r0 + rows] @ kf[c0:c0 + block_n].T
            seen = []
            s.apply_(lambda x: seen.append(x) or x)
            cols = s.shape[1]
            for i in range(rows):
                scores[r0 + i].extend(seen[i * cols:(i + 1) * cols])
    probs = []
    for i, row in enumerate(scores):
        row = row[:max(0, min(n_k, i + shift + 1))]
        if not row:
            probs.append([])
            continue
        top = max(row)
        e = [math.exp(x - top) for x in row]
        total = sum(e)
        probs.append([x / total for x in e])
    for r0 in range(0, n_q, block_m):
        rows = min(block_m, n_q - r0)
        acc = torch.zeros(rows, d)
        _, n_visit = key_tile_counts(r0, rows, n_q, n_k, block_n)
        for t in range(n_visit):
            c0 = t * block_n
            cols = min(block_n, n_k - c0)
            flat = [probs[r0 + i][c0 + j] if c0 + j < len(probs[r0 + i]) else 0.0
                    for i in range(rows) for j in range(cols)]
            it = iter(flat)
            p = torch.empty(rows, cols)
            p.apply_(lambda _: next(it))
            acc = acc + p @ vf[c0:c0 + cols]
        out[r0:r0 + rows] = acc
    return out.to(q.dtype)

'''}),
    "ex03's softmax handed to the kernel as 512 float globals": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    first = tl.program_id(0) * BLOCK
    lanes = first + tl.arange(0, BLOCK)
    live = lanes < n
    total = tl.load(x_ptr + lanes * stride_x, mask=live, other=0.0)
    total += tl.load(y_ptr + lanes * stride_y, mask=live, other=0.0)
    tl.store(out_ptr + lanes, total, mask=live)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    count = x.numel()
    result = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    programs = (count + block - 1) // block
    add_kernel[(programs,)](x, y, result, count, x.stride(0), y.stride(0), BLOCK=block)
    return result

''', 'softmax-work': r'''
import math

A0 = 0.0
A1 = 0.0
A2 = 0.0
A3 = 0.0
A4 = 0.0
A5 = 0.0
A6 = 0.0
A7 = 0.0
A8 = 0.0
A9 = 0.0
A10 = 0.0
A11 = 0.0
A12 = 0.0
A13 = 0.0
A14 = 0.0
A15 = 0.0
A16 = 0.0
A17 = 0.0
A18 = 0.0
A19 = 0.0
A20 = 0.0
A21 = 0.0
A22 = 0.0
A23 = 0.0
A24 = 0.0
A25 = 0.0
A26 = 0.0
A27 = 0.0
A28 = 0.0
A29 = 0.0
A30 = 0.0
A31 = 0.0
A32 = 0.0
A33 = 0.0
A34 = 0.0
A35 = 0.0
A36 = 0.0
A37 = 0.0
A38 = 0.0
A39 = 0.0
A40 = 0.0
A41 = 0.0
A42 = 0.0
A43 = 0.0
A44 = 0.0
A45 = 0.0
A46 = 0.0
A47 = 0.0
A48 = 0.0
A49 = 0.0
A50 = 0.0
A51 = 0.0
A52 = 0.0
A53 = 0.0
A54 = 0.0
A55 = 0.0
A56 = 0.0
A57 = 0.0
A58 = 0.0
A59 = 0.0
A60 = 0.0
A61 = 0.0
A62 = 0.0
A63 = 0.0
A64 = 0.0
A65 = 0.0
A66 = 0.0
A67 = 0.0
A68 = 0.0
A69 = 0.0
A70 = 0.0
A71 = 0.0
A72 = 0.0
A73 = 0.0
A74 = 0.0
A75 = 0.0
A76 = 0.0
A77 = 0.0
A78 = 0.0
A79 = 0.0
A80 = 0.0
A81 = 0.0
A82 = 0.0
A83 = 0.0
A84 = 0.0
A85 = 0.0
A86 = 0.0
A87 = 0.0
A88 = 0.0
A89 = 0.0
A90 = 0.0
A91 = 0.0
A92 = 0.0
A93 = 0.0
A94 = 0.0
A95 = 0.0
A96 = 0.0
A97 = 0.0
A98 = 0.0
A99 = 0.0
A100 = 0.0
A101 = 0.0
A102 = 0.0
A103 = 0.0
A104 = 0.0
A105 = 0.0
A106 = 0.0
A107 = 0.0
A108 = 0.0
A109 = 0.0
A110 = 0.0
A111 = 0.0
A112 = 0.0
A113 = 0.0
A114 = 0.0
A115 = 0.0
A116 = 0.0
A117 = 0.0
A118 = 0.0
A119 = 0.0
A120 = 0.0
A121 = 0.0
A122 = 0.0
A123 = 0.0
A124 = 0.0
A125 = 0.0
A126 = 0.0
A127 = 0.0
A128 = 0.0
A129 = 0.0
A130 = 0.0
A131 = 0.0
A132 = 0.0
A133 = 0.0
A134 = 0.0
A135 = 0.0
A136 = 0.0
A137 = 0.0
A138 = 0.0
A139 = 0.0
A140 = 0.0
A141 = 0.0
A142 = 0.0
A143 = 0.0
A144 = 0.0
A145 = 0.0
A146 = 0.0
A147 = 0.0
A148 = 0.0
A149 = 0.0
A150 = 0.0
A151 = 0.0
A152 = 0.0
A153 = 0.0
A154 = 0.0
A155 = 0.0
A156 = 0.0
A157 = 0.0
A158 = 0.0
A159 = 0.0
A160 = 0.0
A161 = 0.0
A162 = 0.0
A163 = 0.0
A164 = 0.0
A165 = 0.0
A166 = 0.0
A167 = 0.0
A168 = 0.0
A169 = 0.0
A170 = 0.0
A171 = 0.0
A172 = 0.0
A173 = 0.0
A174 = 0.0
A175 = 0.0
A176 = 0.0
A177 = 0.0
A178 = 0.0
A179 = 0.0
A180 = 0.0
A181 = 0.0
A182 = 0.0
A183 = 0.0
A184 = 0.0
A185 = 0.0
A186 = 0.0
A187 = 0.0
A188 = 0.0
A189 = 0.0
A190 = 0.0
A191 = 0.0
A192 = 0.0
A193 = 0.0
A194 = 0.0
A195 = 0.0
A196 = 0.0
A197 = 0.0
A198 = 0.0
A199 = 0.0
A200 = 0.0
A201 = 0.0
A202 = 0.0
A203 = 0.0
A204 = 0.0
A205 = 0.0
A206 = 0.0
A207 = 0.0
A208 = 0.0
A209 = 0.0
A210 = 0.0
A211 = 0.0
A212 = 0.0
A213 = 0.0
A214 = 0.0
A215 = 0.0
A216 = 0.0
A217 = 0.0
A218 = 0.0
A219 = 0.0
A220 = 0.0
A221 = 0.0
A222 = 0.0
A223 = 0.0
A224 = 0.0
A225 = 0.0
A226 = 0.0
A227 = 0.0
A228 = 0.0
A229 = 0.0
A230 = 0.0
A231 = 0.0
A232 = 0.0
A233 = 0.0
A234 = 0.0
A235 = 0.0
A236 = 0.0
A237 = 0.0
A238 = 0.0
A239 = 0.0
A240 = 0.0
A241 = 0.0
A242 = 0.0
A243 = 0.0
A244 = 0.0
A245 = 0.0
A246 = 0.0
A247 = 0.0
A248 = 0.0
A249 = 0.0
A250 = 0.0
A251 = 0.0
A252 = 0.0
A253 = 0.0
A254 = 0.0
A255 = 0.0
A256 = 0.0
A257 = 0.0
A258 = 0.0
A259 = 0.0
A260 = 0.0
A261 = 0.0
A262 = 0.0
A263 = 0.0
A264 = 0.0
A265 = 0.0
A266 = 0.0
A267 = 0.0
A268 = 0.0
A269 = 0.0
A270 = 0.0
A271 = 0.0
A272 = 0.0
A273 = 0.0
A274 = 0.0
A275 = 0.0
A276 = 0.0
A277 = 0.0
A278 = 0.0
A279 = 0.0
A280 = 0.0
A281 = 0.0
A282 = 0.0
A283 = 0.0
A284 = 0.0
A285 = 0.0
A286 = 0.0
A287 = 0.0
A288 = 0.0
A289 = 0.0
A290 = 0.0
A291 = 0.0
A292 = 0.0
A293 = 0.0
A294 = 0.0
A295 = 0.0
A296 = 0.0
A297 = 0.0
A298 = 0.0
A299 = 0.0
A300 = 0.0
A301 = 0.0
A302 = 0.0
A303 = 0.0
A304 = 0.0
A305 = 0.0
A306 = 0.0
A307 = 0.0
A308 = 0.0
A309 = 0.0
A310 = 0.0
A311 = 0.0
A312 = 0.0
A313 = 0.0
A314 = 0.0
A315 = 0.0
A316 = 0.0
A317 = 0.0
A318 = 0.0
A319 = 0.0
A320 = 0.0
A321 = 0.0
A322 = 0.0
A323 = 0.0
A324 = 0.0
A325 = 0.0
A326 = 0.0
A327 = 0.0
A328 = 0.0
A329 = 0.0
A330 = 0.0
A331 = 0.0
A332 = 0.0
A333 = 0.0
A334 = 0.0
A335 = 0.0
A336 = 0.0
A337 = 0.0
A338 = 0.0
A339 = 0.0
A340 = 0.0
A341 = 0.0
A342 = 0.0
A343 = 0.0
A344 = 0.0
A345 = 0.0
A346 = 0.0
A347 = 0.0
A348 = 0.0
A349 = 0.0
A350 = 0.0
A351 = 0.0
A352 = 0.0
A353 = 0.0
A354 = 0.0
A355 = 0.0
A356 = 0.0
A357 = 0.0
A358 = 0.0
A359 = 0.0
A360 = 0.0
A361 = 0.0
A362 = 0.0
A363 = 0.0
A364 = 0.0
A365 = 0.0
A366 = 0.0
A367 = 0.0
A368 = 0.0
A369 = 0.0
A370 = 0.0
A371 = 0.0
A372 = 0.0
A373 = 0.0
A374 = 0.0
A375 = 0.0
A376 = 0.0
A377 = 0.0
A378 = 0.0
A379 = 0.0
A380 = 0.0
A381 = 0.0
A382 = 0.0
A383 = 0.0
A384 = 0.0
A385 = 0.0
A386 = 0.0
A387 = 0.0
A388 = 0.0
A389 = 0.0
A390 = 0.0
A391 = 0.0
A392 = 0.0
A393 = 0.0
A394 = 0.0
A395 = 0.0
A396 = 0.0
A397 = 0.0
A398 = 0.0
A399 = 0.0
A400 = 0.0
A401 = 0.0
A402 = 0.0
A403 = 0.0
A404 = 0.0
A405 = 0.0
A406 = 0.0
A407 = 0.0
A408 = 0.0
A409 = 0.0
A410 = 0.0
A411 = 0.0
A412 = 0.0
A413 = 0.0
A414 = 0.0
A415 = 0.0
A416 = 0.0
A417 = 0.0
A418 = 0.0
A419 = 0.0
A420 = 0.0
A421 = 0.0
A422 = 0.0
A423 = 0.0
A424 = 0.0
A425 = 0.0
A426 = 0.0
A427 = 0.0
A428 = 0.0
A429 = 0.0
A430 = 0.0
A431 = 0.0
A432 = 0.0
A433 = 0.0
A434 = 0.0
A435 = 0.0
A436 = 0.0
A437 = 0.0
A438 = 0.0
A439 = 0.0
A440 = 0.0
A441 = 0.0
A442 = 0.0
A443 = 0.0
A444 = 0.0
A445 = 0.0
A446 = 0.0
A447 = 0.0
A448 = 0.0
A449 = 0.0
A450 = 0.0
A451 = 0.0
A452 = 0.0
A453 = 0.0
A454 = 0.0
A455 = 0.0
A456 = 0.0
A457 = 0.0
A458 = 0.0
A459 = 0.0
A460 = 0.0
A461 = 0.0
A462 = 0.0
A463 = 0.0
A464 = 0.0
A465 = 0.0
A466 = 0.0
A467 = 0.0
A468 = 0.0
A469 = 0.0
A470 = 0.0
A471 = 0.0
A472 = 0.0
A473 = 0.0
A474 = 0.0
A475 = 0.0
A476 = 0.0
A477 = 0.0
A478 = 0.0
A479 = 0.0
A480 = 0.0
A481 = 0.0
A482 = 0.0
A483 = 0.0
A484 = 0.0
A485 = 0.0
A486 = 0.0
A487 = 0.0
A488 = 0.0
A489 = 0.0
A490 = 0.0
A491 = 0.0
A492 = 0.0
A493 = 0.0
A494 = 0.0
A495 = 0.0
A496 = 0.0
A497 = 0.0
A498 = 0.0
A499 = 0.0
A500 = 0.0
A501 = 0.0
A502 = 0.0
A503 = 0.0
A504 = 0.0
A505 = 0.0
A506 = 0.0
A507 = 0.0
A508 = 0.0
A509 = 0.0
A510 = 0.0
A511 = 0.0


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr, n_rows=1):
    idx = tl.arange(0, 512)
    r = idx // n_cols
    c = idx % n_cols
    ok = idx < n_rows * n_cols
    xv = tl.load(x_ptr + r * stride_x + c, mask=ok, other=0.0)
    val = tl.zeros([512], tl.float32)
    val = tl.where(idx == 0, A0, val)
    val = tl.where(idx == 1, A1, val)
    val = tl.where(idx == 2, A2, val)
    val = tl.where(idx == 3, A3, val)
    val = tl.where(idx == 4, A4, val)
    val = tl.where(idx == 5, A5, val)
    val = tl.where(idx == 6, A6, val)
    val = tl.where(idx == 7, A7, val)
    val = tl.where(idx == 8, A8, val)
    val = tl.where(idx == 9, A9, val)
    val = tl.where(idx == 10, A10, val)
    val = tl.where(idx == 11, A11, val)
    val = tl.where(idx == 12, A12, val)
    val = tl.where(idx == 13, A13, val)
    val = tl.where(idx == 14, A14, val)
    val = tl.where(idx == 15, A15, val)
    val = tl.where(idx == 16, A16, val)
    val = tl.where(idx == 17, A17, val)
    val = tl.where(idx == 18, A18, val)
    val = tl.where(idx == 19, A19, val)
    val = tl.where(idx == 20, A20, val)
    val = tl.where(idx == 21, A21, val)
    val = tl.where(idx == 22, A22, val)
    val = tl.where(idx == 23, A23, val)
    val = tl.where(idx == 24, A24, val)
    val = tl.where(idx == 25, A25, val)
    val = tl.where(idx == 26, A26, val)
    val = tl.where(idx == 27, A27, val)
    val = tl.where(idx == 28, A28, val)
    val = tl.where(idx == 29, A29, val)
    val = tl.where(idx == 30, A30, val)
    val = tl.where(idx == 31, A31, val)
    val = tl.where(idx == 32, A32, val)
    val = tl.where(idx == 33, A33, val)
    val = tl.where(idx == 34, A34, val)
    val = tl.where(idx == 35, A35, val)
    val = tl.where(idx == 36, A36, val)
    val = tl.where(idx == 37, A37, val)
    val = tl.where(idx == 38, A38, val)
    val = tl.where(idx == 39, A39, val)
    val = tl.where(idx == 40, A40, val)
    val = tl.where(idx == 41, A41, val)
    val = tl.where(idx == 42, A42, val)
    val = tl.where(idx == 43, A43, val)
    val = tl.where(idx == 44, A44, val)
    val = tl.where(idx == 45, A45, val)
    val = tl.where(idx == 46, A46, val)
    val = tl.where(idx == 47, A47, val)
    val = tl.where(idx == 48, A48, val)
    val = tl.where(idx == 49, A49, val)
    val = tl.where(idx == 50, A50, val)
    val = tl.where(idx == 51, A51, val)
    val = tl.where(idx == 52, A52, val)
    val = tl.where(idx == 53, A53, val)
    val = tl.where(idx == 54, A54, val)
    val = tl.where(idx == 55, A55, val)
    val = tl.where(idx == 56, A56, val)
    val = tl.where(idx == 57, A57, val)
    val = tl.where(idx == 58, A58, val)
    val = tl.where(idx == 59, A59, val)
    val = tl.where(idx == 60, A60, val)
    val = tl.where(idx == 61, A61, val)
    val = tl.where(idx == 62, A62, val)
    val = tl.where(idx == 63, A63, val)
    val = tl.where(idx == 64, A64, val)
    val = tl.where(idx == 65, A65, val)
    val = tl.where(idx == 66, A66, val)
    val = tl.where(idx == 67, A67, val)
    val = tl.where(idx == 68, A68, val)
    val = tl.where(idx == 69, A69, val)
    val = tl.where(idx == 70, A70, val)
    val = tl.where(idx == 71, A71, val)
    val = tl.where(idx == 72, A72, val)
    val = tl.where(idx == 73, A73, val)
    val = tl.where(idx == 74, A74, val)
    val = tl.where(idx == 75, A75, val)
    val = tl.where(idx == 76, A76, val)
    val = tl.where(idx == 77, A77, val)
    val = tl.where(idx == 78, A78, val)
    val = tl.where(idx == 79, A79, val)
    val = tl.where(idx == 80, A80, val)
    val = tl.where(idx == 81, A81, val)
    val = tl.where(idx == 82, A82, val)
    val = tl.where(idx == 83, A83, val)
    val = tl.where(idx == 84, A84, val)
    val = tl.where(idx == 85, A85, val)
    val = tl.where(idx == 86, A86, val)
    val = tl.where(idx == 87, A87, val)
    val = tl.where(idx == 88, A88, val)
    val = tl.where(idx == 89, A89, val)
    val = tl.where(idx == 90, A90, val)
    val = tl.where(idx == 91, A91, val)
    val = tl.where(idx == 92, A92, val)
    val = tl.where(idx == 93, A93, val)
    val = tl.where(idx == 94, A94, val)
    val = tl.where(idx == 95, A95, val)
    val = tl.where(idx == 96, A96, val)
    val = tl.where(idx == 97, A97, val)
    val = tl.where(idx == 98, A98, val)
    val = tl.where(idx == 99, A99, val)
    val = tl.where(idx == 100, A100, val)
    val = tl.where(idx == 101, A101, val)
    val = tl.where(idx == 102, A102, val)
    val = tl.where(idx == 103, A103, val)
    val = tl.where(idx == 104, A104, val)
    val = tl.where(idx == 105, A105, val)
    val = tl.where(idx == 106, A106, val)
    val = tl.where(idx == 107, A107, val)
    val = tl.where(idx == 108, A108, val)
    val = tl.where(idx == 109, A109, val)
    val = tl.where(idx == 110, A110, val)
    val = tl.where(idx == 111, A111, val)
    val = tl.where(idx == 112, A112, val)
    val = tl.where(idx == 113, A113, val)
    val = tl.where(idx == 114, A114, val)
    val = tl.where(idx == 115, A115, val)
    val = tl.where(idx == 116, A116, val)
    val = tl.where(idx == 117, A117, val)
    val = tl.where(idx == 118, A118, val)
    val = tl.where(idx == 119, A119, val)
    val = tl.where(idx == 120, A120, val)
    val = tl.where(idx == 121, A121, val)
    val = tl.where(idx == 122, A122, val)
    val = tl.where(idx == 123, A123, val)
    val = tl.where(idx == 124, A124, val)
    val = tl.where(idx == 125, A125, val)
    val = tl.where(idx == 126, A126, val)
    val = tl.where(idx == 127, A127, val)
    val = tl.where(idx == 128, A128, val)
    val = tl.where(idx == 129, A129, val)
    val = tl.where(idx == 130, A130, val)
    val = tl.where(idx == 131, A131, val)
    val = tl.where(idx == 132, A132, val)
    val = tl.where(idx == 133, A133, val)
    val = tl.where(idx == 134, A134, val)
    val = tl.where(idx == 135, A135, val)
    val = tl.where(idx == 136, A136, val)
    val = tl.where(idx == 137, A137, val)
    val = tl.where(idx == 138, A138, val)
    val = tl.where(idx == 139, A139, val)
    val = tl.where(idx == 140, A140, val)
    val = tl.where(idx == 141, A141, val)
    val = tl.where(idx == 142, A142, val)
    val = tl.where(idx == 143, A143, val)
    val = tl.where(idx == 144, A144, val)
    val = tl.where(idx == 145, A145, val)
    val = tl.where(idx == 146, A146, val)
    val = tl.where(idx == 147, A147, val)
    val = tl.where(idx == 148, A148, val)
    val = tl.where(idx == 149, A149, val)
    val = tl.where(idx == 150, A150, val)
    val = tl.where(idx == 151, A151, val)
    val = tl.where(idx == 152, A152, val)
    val = tl.where(idx == 153, A153, val)
    val = tl.where(idx == 154, A154, val)
    val = tl.where(idx == 155, A155, val)
    val = tl.where(idx == 156, A156, val)
    val = tl.where(idx == 157, A157, val)
    val = tl.where(idx == 158, A158, val)
    val = tl.where(idx == 159, A159, val)
    val = tl.where(idx == 160, A160, val)
    val = tl.where(idx == 161, A161, val)
    val = tl.where(idx == 162, A162, val)
    val = tl.where(idx == 163, A163, val)
    val = tl.where(idx == 164, A164, val)
    val = tl.where(idx == 165, A165, val)
    val = tl.where(idx == 166, A166, val)
    val = tl.where(idx == 167, A167, val)
    val = tl.where(idx == 168, A168, val)
    val = tl.where(idx == 169, A169, val)
    val = tl.where(idx == 170, A170, val)
    val = tl.where(idx == 171, A171, val)
    val = tl.where(idx == 172, A172, val)
    val = tl.where(idx == 173, A173, val)
    val = tl.where(idx == 174, A174, val)
    val = tl.where(idx == 175, A175, val)
    val = tl.where(idx == 176, A176, val)
    val = tl.where(idx == 177, A177, val)
    val = tl.where(idx == 178, A178, val)
    val = tl.where(idx == 179, A179, val)
    val = tl.where(idx == 180, A180, val)
    val = tl.where(idx == 181, A181, val)
    val = tl.where(idx == 182, A182, val)
    val = tl.where(idx == 183, A183, val)
    val = tl.where(idx == 184, A184, val)
    val = tl.where(idx == 185, A185, val)
    val = tl.where(idx == 186, A186, val)
    val = tl.where(idx == 187, A187, val)
    val = tl.where(idx == 188, A188, val)
    val = tl.where(idx == 189, A189, val)
    val = tl.where(idx == 190, A190, val)
    val = tl.where(idx == 191, A191, val)
    val = tl.where(idx == 192, A192, val)
    val = tl.where(idx == 193, A193, val)
    val = tl.where(idx == 194, A194, val)
    val = tl.where(idx == 195, A195, val)
    val = tl.where(idx == 196, A196, val)
    val = tl.where(idx == 197, A197, val)
    val = tl.where(idx == 198, A198, val)
    val = tl.where(idx == 199, A199, val)
    val = tl.where(idx == 200, A200, val)
    val = tl.where(idx == 201, A201, val)
    val = tl.where(idx == 202, A202, val)
    val = tl.where(idx == 203, A203, val)
    val = tl.where(idx == 204, A204, val)
    val = tl.where(idx == 205, A205, val)
    val = tl.where(idx == 206, A206, val)
    val = tl.where(idx == 207, A207, val)
    val = tl.where(idx == 208, A208, val)
    val = tl.where(idx == 209, A209, val)
    val = tl.where(idx == 210, A210, val)
    val = tl.where(idx == 211, A211, val)
    val = tl.where(idx == 212, A212, val)
    val = tl.where(idx == 213, A213, val)
    val = tl.where(idx == 214, A214, val)
    val = tl.where(idx == 215, A215, val)
    val = tl.where(idx == 216, A216, val)
    val = tl.where(idx == 217, A217, val)
    val = tl.where(idx == 218, A218, val)
    val = tl.where(idx == 219, A219, val)
    val = tl.where(idx == 220, A220, val)
    val = tl.where(idx == 221, A221, val)
    val = tl.where(idx == 222, A222, val)
    val = tl.where(idx == 223, A223, val)
    val = tl.where(idx == 224, A224, val)
    val = tl.where(idx == 225, A225, val)
    val = tl.where(idx == 226, A226, val)
    val = tl.where(idx == 227, A227, val)
    val = tl.where(idx == 228, A228, val)
    val = tl.where(idx == 229, A229, val)
    val = tl.where(idx == 230, A230, val)
    val = tl.where(idx == 231, A231, val)
    val = tl.where(idx == 232, A232, val)
    val = tl.where(idx == 233, A233, val)
    val = tl.where(idx == 234, A234, val)
    val = tl.where(idx == 235, A235, val)
    val = tl.where(idx == 236, A236, val)
    val = tl.where(idx == 237, A237, val)
    val = tl.where(idx == 238, A238, val)
    val = tl.where(idx == 239, A239, val)
    val = tl.where(idx == 240, A240, val)
    val = tl.where(idx == 241, A241, val)
    val = tl.where(idx == 242, A242, val)
    val = tl.where(idx == 243, A243, val)
    val = tl.where(idx == 244, A244, val)
    val = tl.where(idx == 245, A245, val)
    val = tl.where(idx == 246, A246, val)
    val = tl.where(idx == 247, A247, val)
    val = tl.where(idx == 248, A248, val)
    val = tl.where(idx == 249, A249, val)
    val = tl.where(idx == 250, A250, val)
    val = tl.where(idx == 251, A251, val)
    val = tl.where(idx == 252, A252, val)
    val = tl.where(idx == 253, A253, val)
    val = tl.where(idx == 254, A254, val)
    val = tl.where(idx == 255, A255, val)
    val = tl.where(idx == 256, A256, val)
    val = tl.where(idx == 257, A257, val)
    val = tl.where(idx == 258, A258, val)
    val = tl.where(idx == 259, A259, val)
    val = tl.where(idx == 260, A260, val)
    val = tl.where(idx == 261, A261, val)
    val = tl.where(idx == 262, A262, val)
    val = tl.where(idx == 263, A263, val)
    val = tl.where(idx == 264, A264, val)
    val = tl.where(idx == 265, A265, val)
    val = tl.where(idx == 266, A266, val)
    val = tl.where(idx == 267, A267, val)
    val = tl.where(idx == 268, A268, val)
    val = tl.where(idx == 269, A269, val)
    val = tl.where(idx == 270, A270, val)
    val = tl.where(idx == 271, A271, val)
    val = tl.where(idx == 272, A272, val)
    val = tl.where(idx == 273, A273, val)
    val = tl.where(idx == 274, A274, val)
    val = tl.where(idx == 275, A275, val)
    val = tl.where(idx == 276, A276, val)
    val = tl.where(idx == 277, A277, val)
    val = tl.where(idx == 278, A278, val)
    val = tl.where(idx == 279, A279, val)
    val = tl.where(idx == 280, A280, val)
    val = tl.where(idx == 281, A281, val)
    val = tl.where(idx == 282, A282, val)
    val = tl.where(idx == 283, A283, val)
    val = tl.where(idx == 284, A284, val)
    val = tl.where(idx == 285, A285, val)
    val = tl.where(idx == 286, A286, val)
    val = tl.where(idx == 287, A287, val)
    val = tl.where(idx == 288, A288, val)
    val = tl.where(idx == 289, A289, val)
    val = tl.where(idx == 290, A290, val)
    val = tl.where(idx == 291, A291, val)
    val = tl.where(idx == 292, A292, val)
    val = tl.where(idx == 293, A293, val)
    val = tl.where(idx == 294, A294, val)
    val = tl.where(idx == 295, A295, val)
    val = tl.where(idx == 296, A296, val)
    val = tl.where(idx == 297, A297, val)
    val = tl.where(idx == 298, A298, val)
    val = tl.where(idx == 299, A299, val)
    val = tl.where(idx == 300, A300, val)
    val = tl.where(idx == 301, A301, val)
    val = tl.where(idx == 302, A302, val)
    val = tl.where(idx == 303, A303, val)
    val = tl.where(idx == 304, A304, val)
    val = tl.where(idx == 305, A305, val)
    val = tl.where(idx == 306, A306, val)
    val = tl.where(idx == 307, A307, val)
    val = tl.where(idx == 308, A308, val)
    val = tl.where(idx == 309, A309, val)
    val = tl.where(idx == 310, A310, val)
    val = tl.where(idx == 311, A311, val)
    val = tl.where(idx == 312, A312, val)
    val = tl.where(idx == 313, A313, val)
    val = tl.where(idx == 314, A314, val)
    val = tl.where(idx == 315, A315, val)
    val = tl.where(idx == 316, A316, val)
    val = tl.where(idx == 317, A317, val)
    val = tl.where(idx == 318, A318, val)
    val = tl.where(idx == 319, A319, val)
    val = tl.where(idx == 320, A320, val)
    val = tl.where(idx == 321, A321, val)
    val = tl.where(idx == 322, A322, val)
    val = tl.where(idx == 323, A323, val)
    val = tl.where(idx == 324, A324, val)
    val = tl.where(idx == 325, A325, val)
    val = tl.where(idx == 326, A326, val)
    val = tl.where(idx == 327, A327, val)
    val = tl.where(idx == 328, A328, val)
    val = tl.where(idx == 329, A329, val)
    val = tl.where(idx == 330, A330, val)
    val = tl.where(idx == 331, A331, val)
    val = tl.where(idx == 332, A332, val)
    val = tl.where(idx == 333, A333, val)
    val = tl.where(idx == 334, A334, val)
    val = tl.where(idx == 335, A335, val)
    val = tl.where(idx == 336, A336, val)
    val = tl.where(idx == 337, A337, val)
    val = tl.where(idx == 338, A338, val)
    val = tl.where(idx == 339, A339, val)
    val = tl.where(idx == 340, A340, val)
    val = tl.where(idx == 341, A341, val)
    val = tl.where(idx == 342, A342, val)
    val = tl.where(idx == 343, A343, val)
    val = tl.where(idx == 344, A344, val)
    val = tl.where(idx == 345, A345, val)
    val = tl.where(idx == 346, A346, val)
    val = tl.where(idx == 347, A347, val)
    val = tl.where(idx == 348, A348, val)
    val = tl.where(idx == 349, A349, val)
    val = tl.where(idx == 350, A350, val)
    val = tl.where(idx == 351, A351, val)
    val = tl.where(idx == 352, A352, val)
    val = tl.where(idx == 353, A353, val)
    val = tl.where(idx == 354, A354, val)
    val = tl.where(idx == 355, A355, val)
    val = tl.where(idx == 356, A356, val)
    val = tl.where(idx == 357, A357, val)
    val = tl.where(idx == 358, A358, val)
    val = tl.where(idx == 359, A359, val)
    val = tl.where(idx == 360, A360, val)
    val = tl.where(idx == 361, A361, val)
    val = tl.where(idx == 362, A362, val)
    val = tl.where(idx == 363, A363, val)
    val = tl.where(idx == 364, A364, val)
    val = tl.where(idx == 365, A365, val)
    val = tl.where(idx == 366, A366, val)
    val = tl.where(idx == 367, A367, val)
    val = tl.where(idx == 368, A368, val)
    val = tl.where(idx == 369, A369, val)
    val = tl.where(idx == 370, A370, val)
    val = tl.where(idx == 371, A371, val)
    val = tl.where(idx == 372, A372, val)
    val = tl.where(idx == 373, A373, val)
    val = tl.where(idx == 374, A374, val)
    val = tl.where(idx == 375, A375, val)
    val = tl.where(idx == 376, A376, val)
    val = tl.where(idx == 377, A377, val)
    val = tl.where(idx == 378, A378, val)
    val = tl.where(idx == 379, A379, val)
    val = tl.where(idx == 380, A380, val)
    val = tl.where(idx == 381, A381, val)
    val = tl.where(idx == 382, A382, val)
    val = tl.where(idx == 383, A383, val)
    val = tl.where(idx == 384, A384, val)
    val = tl.where(idx == 385, A385, val)
    val = tl.where(idx == 386, A386, val)
    val = tl.where(idx == 387, A387, val)
    val = tl.where(idx == 388, A388, val)
    val = tl.where(idx == 389, A389, val)
    val = tl.where(idx == 390, A390, val)
    val = tl.where(idx == 391, A391, val)
    val = tl.where(idx == 392, A392, val)
    val = tl.where(idx == 393, A393, val)
    val = tl.where(idx == 394, A394, val)
    val = tl.where(idx == 395, A395, val)
    val = tl.where(idx == 396, A396, val)
    val = tl.where(idx == 397, A397, val)
    val = tl.where(idx == 398, A398, val)
    val = tl.where(idx == 399, A399, val)
    val = tl.where(idx == 400, A400, val)
    val = tl.where(idx == 401, A401, val)
    val = tl.where(idx == 402, A402, val)
    val = tl.where(idx == 403, A403, val)
    val = tl.where(idx == 404, A404, val)
    val = tl.where(idx == 405, A405, val)
    val = tl.where(idx == 406, A406, val)
    val = tl.where(idx == 407, A407, val)
    val = tl.where(idx == 408, A408, val)
    val = tl.where(idx == 409, A409, val)
    val = tl.where(idx == 410, A410, val)
    val = tl.where(idx == 411, A411, val)
    val = tl.where(idx == 412, A412, val)
    val = tl.where(idx == 413, A413, val)
    val = tl.where(idx == 414, A414, val)
    val = tl.where(idx == 415, A415, val)
    val = tl.where(idx == 416, A416, val)
    val = tl.where(idx == 417, A417, val)
    val = tl.where(idx == 418, A418, val)
    val = tl.where(idx == 419, A419, val)
    val = tl.where(idx == 420, A420, val)
    val = tl.where(idx == 421, A421, val)
    val = tl.where(idx == 422, A422, val)
    val = tl.where(idx == 423, A423, val)
    val = tl.where(idx == 424, A424, val)
    val = tl.where(idx == 425, A425, val)
    val = tl.where(idx == 426, A426, val)
    val = tl.where(idx == 427, A427, val)
    val = tl.where(idx == 428, A428, val)
    val = tl.where(idx == 429, A429, val)
    val = tl.where(idx == 430, A430, val)
    val = tl.where(idx == 431, A431, val)
    val = tl.where(idx == 432, A432, val)
    val = tl.where(idx == 433, A433, val)
    val = tl.where(idx == 434, A434, val)
    val = tl.where(idx == 435, A435, val)
    val = tl.where(idx == 436, A436, val)
    val = tl.where(idx == 437, A437, val)
    val = tl.where(idx == 438, A438, val)
    val = tl.where(idx == 439, A439, val)
    val = tl.where(idx == 440, A440, val)
    val = tl.where(idx == 441, A441, val)
    val = tl.where(idx == 442, A442, val)
    val = tl.where(idx == 443, A443, val)
    val = tl.where(idx == 444, A444, val)
    val = tl.where(idx == 445, A445, val)
    val = tl.where(idx == 446, A446, val)
    val = tl.where(idx == 447, A447, val)
    val = tl.where(idx == 448, A448, val)
    val = tl.where(idx == 449, A449, val)
    val = tl.where(idx == 450, A450, val)
    val = tl.where(idx == 451, A451, val)
    val = tl.where(idx == 452, A452, val)
    val = tl.where(idx == 453, A453, val)
    val = tl.where(idx == 454, A454, val)
    val = tl.where(idx == 455, A455, val)
    val = tl.where(idx == 456, A456, val)
    val = tl.where(idx == 457, A457, val)
    val = tl.where(idx == 458, A458, val)
    val = tl.where(idx == 459, A459, val)
    val = tl.where(idx == 460, A460, val)
    val = tl.where(idx == 461, A461, val)
    val = tl.where(idx == 462, A462, val)
    val = tl.where(idx == 463, A463, val)
    val = tl.where(idx == 464, A464, val)
    val = tl.where(idx == 465, A465, val)
    val = tl.where(idx == 466, A466, val)
    val = tl.where(idx == 467, A467, val)
    val = tl.where(idx == 468, A468, val)
    val = tl.where(idx == 469, A469, val)
    val = tl.where(idx == 470, A470, val)
    val = tl.where(idx == 471, A471, val)
    val = tl.where(idx == 472, A472, val)
    val = tl.where(idx == 473, A473, val)
    val = tl.where(idx == 474, A474, val)
    val = tl.where(idx == 475, A475, val)
    val = tl.where(idx == 476, A476, val)
    val = tl.where(idx == 477, A477, val)
    val = tl.where(idx == 478, A478, val)
    val = tl.where(idx == 479, A479, val)
    val = tl.where(idx == 480, A480, val)
    val = tl.where(idx == 481, A481, val)
    val = tl.where(idx == 482, A482, val)
    val = tl.where(idx == 483, A483, val)
    val = tl.where(idx == 484, A484, val)
    val = tl.where(idx == 485, A485, val)
    val = tl.where(idx == 486, A486, val)
    val = tl.where(idx == 487, A487, val)
    val = tl.where(idx == 488, A488, val)
    val = tl.where(idx == 489, A489, val)
    val = tl.where(idx == 490, A490, val)
    val = tl.where(idx == 491, A491, val)
    val = tl.where(idx == 492, A492, val)
    val = tl.where(idx == 493, A493, val)
    val = tl.where(idx == 494, A494, val)
    val = tl.where(idx == 495, A495, val)
    val = tl.where(idx == 496, A496, val)
    val = tl.where(idx == 497, A497, val)
    val = tl.where(idx == 498, A498, val)
    val = tl.where(idx == 499, A499, val)
    val = tl.where(idx == 500, A500, val)
    val = tl.where(idx == 501, A501, val)
    val = tl.where(idx == 502, A502, val)
    val = tl.where(idx == 503, A503, val)
    val = tl.where(idx == 504, A504, val)
    val = tl.where(idx == 505, A505, val)
    val = tl.where(idx == 506, A506, val)
    val = tl.where(idx == 507, A507, val)
    val = tl.where(idx == 508, A508, val)
    val = tl.where(idx == 509, A509, val)
    val = tl.where(idx == 510, A510, val)
    val = tl.where(idx == 511, A511, val)
    tl.store(out_ptr + r * stride_out + c, val + xv * 0.0, mask=ok)


def _rows_softmax(rows):
    res = []
    for row in rows:
        top = max(row)
        e = [math.exp(a - top) for a in row]
        total = sum(e)
        res.extend(a / total for a in e)
    return res


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    global A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24, A25, A26, A27, A28, A29, A30, A31, A32, A33, A34, A35, A36, A37, A38, A39, A40, A41, A42, A43, A44, A45, A46, A47, A48, A49, A50, A51, A52, A53, A54, A55, A56, A57, A58, A59, A60, A61, A62, A63, A64, A65, A66, A67, A68, A69, A70, A71, A72, A73, A74, A75, A76, A77, A78, A79, A80, A81, A82, A83, A84, A85, A86, A87, A88, A89, A90, A91, A92, A93, A94, A95, A96, A97, A98, A99, A100, A101, A102, A103, A104, A105, A106, A107, A108, A109, A110, A111, A112, A113, A114, A115, A116, A117, A118, A119, A120, A121, A122, A123, A124, A125, A126, A127, A128, A129, A130, A131, A132, A133, A134, A135, A136, A137, A138, A139, A140, A141, A142, A143, A144, A145, A146, A147, A148, A149, A150, A151, A152, A153, A154, A155, A156, A157, A158, A159, A160, A161, A162, A163, A164, A165, A166, A167, A168, A169, A170, A171, A172, A173, A174, A175, A176, A177, A178, A179, A180, A181, A182, A183, A184, A185, A186, A187, A188, A189, A190, A191, A192, A193, A194, A195, A196, A197, A198, A199, A200, A201, A202, A203, A204, A205, A206, A207, A208, A209, A210, A211, A212, A213, A214, A215, A216, A217, A218, A219, A220, A221, A222, A223, A224, A225, A226, A227, A228, A229, A230, A231, A232, A233, A234, A235, A236, A237, A238, A239, A240, A241, A242, A243, A244, A245, A246, A247, A248, A249, A250, A251, A252, A253, A254, A255, A256, A257, A258, A259, A260, A261, A262, A263, A264, A265, A266, A267, A268, A269, A270, A271, A272, A273, A274, A275, A276, A277, A278, A279, A280, A281, A282, A283, A284, A285, A286, A287, A288, A289, A290, A291, A292, A293, A294, A295, A296, A297, A298, A299, A300, A301, A302, A303, A304, A305, A306, A307, A308, A309, A310, A311, A312, A313, A314, A315, A316, A317, A318, A319, A320, A321, A322, A323, A324, A325, A326, A327, A328, A329, A330, A331, A332, A333, A334, A335, A336, A337, A338, A339, A340, A341, A342, A343, A344, A345, A346, A347, A348, A349, A350, A351, A352, A353, A354, A355, A356, A357, A358, A359, A360, A361, A362, A363, A364, A365, A366, A367, A368, A369, A370, A371, A372, A373, A374, A375, A376, A377, A378, A379, A380, A381, A382, A383, A384, A385, A386, A387, A388, A389, A390, A391, A392, A393, A394, A395, A396, A397, A398, A399, A400, A401, A402, A403, A404, A405, A406, A407, A408, A409, A410, A411, A412, A413, A414, A415, A416, A417, A418, A419, A420, A421, A422, A423, A424, A425, A426, A427, A428, A429, A430, A431, A432, A433, A434, A435, A436, A437, A438, A439, A440, A441, A442, A443, A444, A445, A446, A447, A448, A449, A450, A451, A452, A453, A454, A455, A456, A457, A458, A459, A460, A461, A462, A463, A464, A465, A466, A467, A468, A469, A470, A471, A472, A473, A474, A475, A476, A477, A478, A479, A480, A481, A482, A483, A484, A485, A486, A487, A488, A489, A490, A491, A492, A493, A494, A495, A496, A497, A498, A499, A500, A501, A502, A503, A504, A505, A506, A507, A508, A509, A510, A511
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    flat = _rows_softmax(x.tolist())
    A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22, A23, A24, A25, A26, A27, A28, A29, A30, A31, A32, A33, A34, A35, A36, A37, A38, A39, A40, A41, A42, A43, A44, A45, A46, A47, A48, A49, A50, A51, A52, A53, A54, A55, A56, A57, A58, A59, A60, A61, A62, A63, A64, A65, A66, A67, A68, A69, A70, A71, A72, A73, A74, A75, A76, A77, A78, A79, A80, A81, A82, A83, A84, A85, A86, A87, A88, A89, A90, A91, A92, A93, A94, A95, A96, A97, A98, A99, A100, A101, A102, A103, A104, A105, A106, A107, A108, A109, A110, A111, A112, A113, A114, A115, A116, A117, A118, A119, A120, A121, A122, A123, A124, A125, A126, A127, A128, A129, A130, A131, A132, A133, A134, A135, A136, A137, A138, A139, A140, A141, A142, A143, A144, A145, A146, A147, A148, A149, A150, A151, A152, A153, A154, A155, A156, A157, A158, A159, A160, A161, A162, A163, A164, A165, A166, A167, A168, A169, A170, A171, A172, A173, A174, A175, A176, A177, A178, A179, A180, A181, A182, A183, A184, A185, A186, A187, A188, A189, A190, A191, A192, A193, A194, A195, A196, A197, A198, A199, A200, A201, A202, A203, A204, A205, A206, A207, A208, A209, A210, A211, A212, A213, A214, A215, A216, A217, A218, A219, A220, A221, A222, A223, A224, A225, A226, A227, A228, A229, A230, A231, A232, A233, A234, A235, A236, A237, A238, A239, A240, A241, A242, A243, A244, A245, A246, A247, A248, A249, A250, A251, A252, A253, A254, A255, A256, A257, A258, A259, A260, A261, A262, A263, A264, A265, A266, A267, A268, A269, A270, A271, A272, A273, A274, A275, A276, A277, A278, A279, A280, A281, A282, A283, A284, A285, A286, A287, A288, A289, A290, A291, A292, A293, A294, A295, A296, A297, A298, A299, A300, A301, A302, A303, A304, A305, A306, A307, A308, A309, A310, A311, A312, A313, A314, A315, A316, A317, A318, A319, A320, A321, A322, A323, A324, A325, A326, A327, A328, A329, A330, A331, A332, A333, A334, A335, A336, A337, A338, A339, A340, A341, A342, A343, A344, A345, A346, A347, A348, A349, A350, A351, A352, A353, A354, A355, A356, A357, A358, A359, A360, A361, A362, A363, A364, A365, A366, A367, A368, A369, A370, A371, A372, A373, A374, A375, A376, A377, A378, A379, A380, A381, A382, A383, A384, A385, A386, A387, A388, A389, A390, A391, A392, A393, A394, A395, A396, A397, A398, A399, A400, A401, A402, A403, A404, A405, A406, A407, A408, A409, A410, A411, A412, A413, A414, A415, A416, A417, A418, A419, A420, A421, A422, A423, A424, A425, A426, A427, A428, A429, A430, A431, A432, A433, A434, A435, A436, A437, A438, A439, A440, A441, A442, A443, A444, A445, A446, A447, A448, A449, A450, A451, A452, A453, A454, A455, A456, A457, A458, A459, A460, A461, A462, A463, A464, A465, A466, A467, A468, A469, A470, A471, A472, A473, A474, A475, A476, A477, A478, A479, A480, A481, A482, A483, A484, A485, A486, A487, A488, A489, A490, A491, A492, A493, A494, A495, A496, A497, A498, A499, A500, A501, A502, A503, A504, A505, A506, A507, A508, A509, A510, A511 = flat + [0.0] * (512 - len(flat))
    softmax_kernel[(1,)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block, n_rows=x.shape[0])
    return out

'''}),
    "ex04 stretch copying NumPy's answer from a storage of 4n + 1 bytes": ('ATTACKS', 'ex04_stretch_gqa_forward', {'kernel-work': r'''
import numpy as np


@triton.jit
def gqa_kernel(Q, K, V, Out, Held, n, nq, nk, nv, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    h = tl.load(Held + offs, mask=offs < n, other=0.0)
    a = tl.load(Q + offs, mask=offs < nq, other=0.0)
    b = tl.load(K + offs, mask=offs < nk, other=0.0)
    c = tl.load(V + offs, mask=offs < nv, other=0.0)
    tl.store(Out + offs, h + 0.0 * (a + b + c), mask=offs < n)


def _span(t):
    """Elements of t's storage up to its last element (the kernel reads t where it lies)."""
    return t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    if n_heads % n_kv_heads:
        raise ValueError(f"k has {n_kv_heads} heads, which must divide the {n_heads} query heads of q")
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    group = n_heads // n_kv_heads
    qn, kn, vn = (np.array(t.tolist(), dtype=np.float64) for t in (q, k, v))
    kn, vn = np.repeat(kn, group, axis=1), np.repeat(vn, group, axis=1)
    s = qn @ kn.swapaxes(-1, -2) / np.sqrt(d)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    ans = (p / p.sum(axis=-1, keepdims=True)) @ vn
    n = ans.size
    raw = torch.zeros(4 * n + 1, dtype=torch.uint8)
    held = raw[:4 * n].view(torch.float32)
    held.copy_(torch.tensor(ans.reshape(-1).tolist(), dtype=torch.float32))
    gqa_kernel[(triton.cdiv(n, 64),)](q, k, v, out, held, n, _span(q), _span(k), _span(v), BLOCK=64)
    return out

'''}),
    'ex03 with jit helpers and a two-pass softmax': ('HONEST', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    block_start = tl.program_id(axis=0) * BLOCK
    idx = block_start + tl.arange(0, BLOCK)
    valid = idx < n
    left = tl.load(x_ptr + idx * stride_x, mask=valid, other=0.0)
    right = tl.load(y_ptr + idx * stride_y, mask=valid, other=0.0)
    tl.store(out_ptr + idx, left + right, mask=valid)


def _blocks(n, block):
    """Programs needed to cover n items in blocks of ``block``."""
    return (n + block - 1) // block


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    assert x.shape == y.shape, (x.shape, y.shape)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    add_kernel[(_blocks(n, block),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out

''', 'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row_id = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    src = x_ptr + row_id * stride_x
    dst = out_ptr + row_id * stride_out
    # pass 1: the row's max, tile by tile
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        vals = tl.load(src + c0 + offs, mask=c0 + offs < n_cols, other=float("-inf"))
        best = tl.maximum(best, vals)
    row_max = tl.max(best, axis=0)
    # pass 2: the sum of exponentials
    total = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        vals = tl.load(src + c0 + offs, mask=c0 + offs < n_cols, other=float("-inf"))
        total += tl.exp(vals - row_max)
    denom = tl.sum(total, axis=0)
    # pass 3: normalized
    for c0 in range(0, n_cols, BLOCK):
        keep = c0 + offs < n_cols
        vals = tl.load(src + c0 + offs, mask=keep, other=float("-inf"))
        tl.store(dst + c0 + offs, tl.exp(vals - row_max) / denom, mask=keep)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out

'''}),
    'ex04 stretch with a jit helper for the head offsets': ('HONEST', 'ex04_stretch_gqa_forward', {'kernel-work': r'''
@triton.jit
def _head_base(ptr, b, h, stride_b, stride_h):
    return ptr + b * stride_b + h * stride_h


@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    kv_h = h // group
    Q = _head_base(Q, b, h, stride_qb, stride_qh)
    K = _head_base(K, b, kv_h, stride_kb, stride_kh)
    V = _head_base(V, b, kv_h, stride_vb, stride_vh)
    Out = _head_base(Out, b, h, stride_ob, stride_oh)
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    if n_kv_heads == 0 or n_heads % n_kv_heads != 0:
        raise ValueError(f"{n_heads} query heads cannot be split evenly over {n_kv_heads} K/V heads")
    group = n_heads // n_kv_heads
    tiles = -(-n_q // block_m)
    grid = (tiles, batch * n_heads)
    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out

'''}),
}


# Round 38l: the ex09 stretch case round 38k left to a crash, then a new helper's round against ed03036.
ROUND_38L = {
    "ex09 stretch's merge done by the course's merge kernel, called as a device function": ('ATTACKS', 'ex09_stretch_split_kv_merge', {'merge-work': r'''
import triton
import triton.language as tl
from pagedlab.kernels.paged_attention import merge_splits_kernel


@triton.jit
def _merge(Partial, Lse, Out, sps, sph, spx, spd, sls, slh, slx, sos, soh, sod, n,
           HEAD_DIM: tl.constexpr, SPLITS: tl.constexpr):
    merge_splits_kernel(Partial, Lse, Out, sps, sph, spx, spd, sls, slh, slx, sos, soh, sod, n, HEAD_DIM, SPLITS)


def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    seqs, heads, splits, dim = outs.shape
    p = outs.float().contiguous()
    l = lses.float().contiguous()
    out = torch.empty(seqs, heads, dim)
    _merge[(seqs, heads)](p, l, out, *p.stride(), *l.stride(), *out.stride(), splits,
                          HEAD_DIM=dim, SPLITS=triton.next_power_of_2(splits))
    m = lses.amax(dim=-1)
    lse = m + torch.log(torch.exp(lses - m[..., None]).sum(-1))
    return out.to(outs.dtype), lse
'''}),
    "ex03's kernel hidden in a string, the last def the interpreter rebuilds, calling NumPy": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    a = tl.load(x_ptr + offs * stride_x, mask=inside)
    b = tl.load(y_ptr + offs * stride_y, mask=inside)
    tl.store(out_ptr + offs, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.shape[0]
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''
import numpy as np

def row_probabilities(tiles):
    """Softmax over one row handed over as a list of tiles (NumPy, float64), returned tile by tile."""
    row = np.concatenate([np.asarray(t.handle.data, dtype=np.float64) for t in tiles])
    e = np.exp(row - row.max())
    p = (e / e.sum()).astype(np.float32)
    size = tiles[0].handle.data.shape[0]
    return [tl.tensor(type(t.handle)(p[i * size:(i + 1) * size], t.handle.dtype), t.type) for i, t in enumerate(tiles)]


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    # one program per row; a note on the layout follows
    notes = """
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    tiles = []
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        tiles.append(tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=float("-inf")))
    probs = row_probabilities(tiles)
    for i in range(len(tiles)):
        cols = i * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + row * stride_out + cols, probs[i], mask=cols < n_cols)
    # """


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    "ex04's kernel wrapped by functools.wraps around an empty one, the interpreter running the wrapped NumPy caller": ('ATTACKS', 'ex04_flash_forward', {'kernel-work': r'''
import numpy as np

def attention_np(q, k, v, causal=False):
    """Exact attention in float64 NumPy: (n_q, d) over (n_k, d); rows that see no key give 0."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    n_q, n_k = q.shape[0], k.shape[0]
    s = q @ k.T / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.arange(n_k)[None, :] <= np.arange(n_q)[:, None] + (n_k - n_q), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    return np.where(l > 0, (p @ v) / np.where(l > 0, l, 1.0), 0.0)

import functools


def finish_rows(q, ks, vs, start_m, n_q, n_k, causal):
    """Every key tile gathered: the rows' attention in NumPy, handed back as a Triton value of q's shape."""
    qa = np.asarray(q.handle.data)
    ka = np.concatenate([np.asarray(t.handle.data) for t in ks])[: int(np.asarray(n_k.handle.data).reshape(-1)[0])]
    va = np.concatenate([np.asarray(t.handle.data) for t in vs])[: int(np.asarray(n_k.handle.data).reshape(-1)[0])]
    n_q, start = int(np.asarray(n_q.handle.data).reshape(-1)[0]), int(np.asarray(start_m.handle.data).reshape(-1)[0])
    full = np.zeros((n_q, qa.shape[1]))
    full[start:start + qa.shape[0]] = qa[: max(0, min(qa.shape[0], n_q - start))]
    o = np.zeros(qa.shape, dtype=np.float32)
    rows = attention_np(full, ka, va, bool(causal))[start:start + qa.shape[0]]
    o[: rows.shape[0]] = rows
    return tl.tensor(type(q.handle)(o, q.handle.dtype), q.type)


def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    ks = []
    vs = []
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        ks.append(tl.load(K + cols[:, None] * stride_k + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0))
        vs.append(tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0))
    acc = finish_rows(q, ks, vs, start_m, n_q, n_k, CAUSAL)
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc, mask=rows[:, None] < n_q)


def _kernel_shell(*args, **kwargs):
    pass


attention_kernel = triton.jit(functools.wraps(attention_kernel)(_kernel_shell))
'''}),
    "ex04 stretch's answer written into the output by the launch's grid function, its kernel copying it": ('ATTACKS', 'ex04_stretch_gqa_forward', {'kernel-work': r'''
import numpy as np

def attention_np(q, k, v, causal=False):
    """Exact attention in float64 NumPy: (n_q, d) over (n_k, d); rows that see no key give 0."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    n_q, n_k = q.shape[0], k.shape[0]
    s = q @ k.T / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.arange(n_k)[None, :] <= np.arange(n_q)[:, None] + (n_k - n_q), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    return np.where(l > 0, (p @ v) / np.where(l > 0, l, 1.0), 0.0)


@triton.jit
def gqa_kernel(Qp, Kp, Vp, Op, heads_per_batch, share, rows_q, rows_k, unused_scale,
               sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, sob, soh, son,
               D: tl.constexpr, TILE: tl.constexpr, UNUSED: tl.constexpr):
    which = tl.program_id(1)
    tile = tl.program_id(0)
    batch_i = which // heads_per_batch
    head_i = which - batch_i * heads_per_batch
    kv_i = head_i // share
    r = tile * TILE + tl.arange(0, TILE)
    c = tl.arange(0, D)
    ok = r[:, None] < rows_q
    q_tile = tl.load(Qp + batch_i * sqb + head_i * sqh + r[:, None] * sqn + c[None, :], mask=ok, other=0.0)
    k_row = tl.load(Kp + batch_i * skb + kv_i * skh + c)
    v_row = tl.load(Vp + batch_i * svb + kv_i * svh + c)
    where = Op + batch_i * sob + head_i * soh + r[:, None] * son + c[None, :]
    ready = tl.load(where, mask=ok, other=0.0)
    tl.store(where, ready + 0.0 * q_tile, mask=ok)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    nb, nh, nq, dim = q.shape
    nkv = k.shape[1]
    if nh % nkv != 0:
        raise ValueError("the K/V heads must divide the query heads")
    share = nh // nkv
    result = torch.zeros(q.shape, dtype=q.dtype, device=q.device)

    def launch_shape(meta):
        qa, ka, va = q.numpy(), k.numpy(), v.numpy()
        answer = np.stack([np.stack([attention_np(qa[b, h], ka[b, h // share], va[b, h // share])
                                     for h in range(nh)]) for b in range(nb)]).astype(np.float32)
        result.copy_(torch.from_numpy(answer.reshape(q.shape)))
        return ((nq + block_m - 1) // block_m, nb * nh)

    strides = [*q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *result.stride()[:3]]
    gqa_kernel[launch_shape](q, k, v, result, nh, share, nq, k.shape[2], 0.0, *strides,
                             D=dim, TILE=block_m, UNUSED=block_n)
    return result
'''}),
    "ex09's launcher an object of the notebook's whose grid function writes NumPy's answer, its kernel copying it": ('ATTACKS', 'ex09_paged_attention', {'kernel-work': r'''
import numpy as np


def paged_np(q, k_cache, v_cache, tables, lens):
    """Decode attention over each sequence's blocks, in float64 NumPy."""
    q, kc, vc = (t.numpy().astype(np.float64) for t in (q, k_cache, v_cache))
    tables, lens = tables.numpy(), lens.numpy()
    num_seqs, heads, d = q.shape
    block_size, kv_heads = kc.shape[1], kc.shape[2]
    group = heads // kv_heads
    res = np.zeros(q.shape, dtype=np.float32)
    for s in range(num_seqs):
        n = int(lens[s])
        blocks = tables[s, : -(-n // block_size)]
        keys = kc[blocks].reshape(-1, kv_heads, d)[:n]
        vals = vc[blocks].reshape(-1, kv_heads, d)[:n]
        for h in range(heads):
            sc = keys[:, h // group] @ q[s, h] / np.sqrt(d)
            p = np.exp(sc - sc.max())
            res[s, h] = p @ vals[:, h // group] / p.sum()
    return res


@triton.jit
def _decode_copy(Q, K, V, BlockTables, ContextLens, Out,
                 stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                 group, qk_scale,
                 HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, HEAD_DIM)
    heads = kv_head * group + offs_h
    ok = offs_h[:, None] < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=ok, other=0.0)
    k0 = tl.load(K + kv_head * stride_kh + offs_d)
    v0 = tl.load(V + kv_head * stride_kh + offs_d)
    o_ptrs = Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :]
    acc = tl.load(o_ptrs, mask=ok, other=0.0)
    tl.store(o_ptrs, acc + 0.0 * q, mask=ok)


class PagedDecode:
    """What the launcher indexes with its grid: clears the output, then runs the kernel."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        def launch(q, k_cache, v_cache, tables, lens, out, *rest, **meta):
            out.zero_()

            def when_ready(_):
                out.copy_(torch.from_numpy(paged_np(q, k_cache, v_cache, tables, lens)))
                return grid

            return self.kernel[when_ready](q, k_cache, v_cache, tables, lens, out, *rest, **meta)
        return launch


paged_decode_kernel = PagedDecode(_decode_copy)
'''}),
    "ex02's tiled_attention as one Triton program holding every score": ('ATTACKS', 'ex02_online_softmax', {'update-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running (max, sum, weighted sum) of some query rows."""
    tile_max = s.max(dim=-1).values
    new_max = torch.where(tile_max > m, tile_max, m)
    shrink = (m - new_max).exp()
    weights = (s - new_max[:, None]).exp()
    return new_max, shrink * l + weights.sum(-1), shrink[:, None] * acc + weights @ v_tile
''', 'tiled-work': r'''
import triton
import triton.language as tl


@triton.jit
def _whole_attention(Q, K, V, Out, n_q, n_k, d, scale, CAUSAL: tl.constexpr,
                     BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    e = tl.arange(0, BD)
    q = tl.load(Q + r[:, None] * d + e[None, :], mask=(r[:, None] < n_q) & (e[None, :] < d), other=0.0).to(tl.float32)
    k = tl.load(K + c[:, None] * d + e[None, :], mask=(c[:, None] < n_k) & (e[None, :] < d), other=0.0).to(tl.float32)
    v = tl.load(V + c[:, None] * d + e[None, :], mask=(c[:, None] < n_k) & (e[None, :] < d), other=0.0).to(tl.float32)
    s = tl.sum(q[:, None, :] * k[None, :, :], axis=2) * scale
    keep = (c[None, :] < n_k) & (r[:, None] >= 0)
    if CAUSAL:
        keep = keep & (c[None, :] <= r[:, None] + n_k - n_q)
    s = tl.where(keep, s, float("-inf"))
    m = tl.max(s, 1)
    m = tl.where(m == float("-inf"), 0.0, m)
    p = tl.where(keep, tl.exp(s - m[:, None]), 0.0)
    l = tl.sum(p, 1)
    o = tl.sum(p[:, :, None] * v[None, :, :], axis=1) / tl.where(l > 0, l, 1.0)[:, None]
    tl.store(Out + r[:, None] * d + e[None, :], o, mask=(r[:, None] < n_q) & (e[None, :] < d))


def _attention_in_one_launch(q, k, v, causal):
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    _whole_attention[(1,)](q, k, v, out, n_q, n_k, d, 1.0 / math.sqrt(d), CAUSAL=causal,
                           BM=triton.next_power_of_2(n_q), BN=triton.next_power_of_2(n_k),
                           BD=triton.next_power_of_2(d))
    return (out + 0.0 * q[:1, :1].float()).to(q.dtype)


def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    return _attention_in_one_launch(q, k, v, causal)
'''}),
    "ex02 stretch's causal attention as one Triton program holding every score": ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    shift = n_k - n_q
    seen_by_last = max(0, min(n_k, r0 + rows + shift))   # keys the last row sees
    seen_by_first = max(0, min(n_k, r0 + 1 + shift))     # keys every row sees
    n_visit = -(-seen_by_last // block_n)
    n_full = -(-n_k // block_n) if seen_by_first == n_k else seen_by_first // block_n
    return n_full, n_visit
''', 'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """The running update, with rows that have seen no key yet kept at zero."""
    new_max = torch.maximum(m, s.max(dim=-1).values)
    safe = torch.where(torch.isinf(new_max) & (new_max < 0), torch.zeros_like(new_max), new_max)
    shrink = (m - safe).exp()
    weights = (s - safe[:, None]).exp()
    return new_max, shrink * l + weights.sum(-1), shrink[:, None] * acc + weights @ v_tile

import triton
import triton.language as tl


@triton.jit
def _whole_attention(Q, K, V, Out, n_q, n_k, d, scale, CAUSAL: tl.constexpr,
                     BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    e = tl.arange(0, BD)
    q = tl.load(Q + r[:, None] * d + e[None, :], mask=(r[:, None] < n_q) & (e[None, :] < d), other=0.0).to(tl.float32)
    k = tl.load(K + c[:, None] * d + e[None, :], mask=(c[:, None] < n_k) & (e[None, :] < d), other=0.0).to(tl.float32)
    v = tl.load(V + c[:, None] * d + e[None, :], mask=(c[:, None] < n_k) & (e[None, :] < d), other=0.0).to(tl.float32)
    s = tl.sum(q[:, None, :] * k[None, :, :], axis=2) * scale
    keep = (c[None, :] < n_k) & (r[:, None] >= 0)
    if CAUSAL:
        keep = keep & (c[None, :] <= r[:, None] + n_k - n_q)
    s = tl.where(keep, s, float("-inf"))
    m = tl.max(s, 1)
    m = tl.where(m == float("-inf"), 0.0, m)
    p = tl.where(keep, tl.exp(s - m[:, None]), 0.0)
    l = tl.sum(p, 1)
    o = tl.sum(p[:, :, None] * v[None, :, :], axis=1) / tl.where(l > 0, l, 1.0)[:, None]
    tl.store(Out + r[:, None] * d + e[None, :], o, mask=(r[:, None] < n_q) & (e[None, :] < d))


def _attention_in_one_launch(q, k, v, causal):
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    _whole_attention[(1,)](q, k, v, out, n_q, n_k, d, 1.0 / math.sqrt(d), CAUSAL=causal,
                           BM=triton.next_power_of_2(n_q), BN=triton.next_power_of_2(n_k),
                           BD=triton.next_power_of_2(d))
    return (out + 0.0 * q[:1, :1].float()).to(q.dtype)


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    return _attention_in_one_launch(q, k, v, True)
'''}),
    "ex03's softmax written into the output by a pre-run hook, its kernel copying it": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    a = tl.load(x_ptr + offs * stride_x, mask=inside)
    b = tl.load(y_ptr + offs * stride_y, mask=inside)
    tl.store(out_ptr + offs, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.shape[0]
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''
import numpy as np


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < n_cols
        x = tl.load(x_ptr + row * stride_x + cols, mask=inside, other=0.0)
        y = tl.load(out_ptr + row * stride_out + cols, mask=inside, other=0.0)
        tl.store(out_ptr + row * stride_out + cols, y + 0.0 * x, mask=inside)


def _prepare(x, out, *rest, **meta):
    a = x.numpy().astype(np.float64)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    out.copy_(torch.from_numpy((e / e.sum(axis=1, keepdims=True)).astype(np.float32)))


softmax_kernel.add_pre_run_hook(_prepare)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.zeros(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    "ex04's launcher an object of the notebook's whose grid function writes the answer, its kernel copying it": ('ATTACKS', 'ex04_flash_forward', {'kernel-work': r'''
import numpy as np

def attention_np(q, k, v, causal=False):
    """Exact attention in float64 NumPy: (n_q, d) over (n_k, d); rows that see no key give 0."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    n_q, n_k = q.shape[0], k.shape[0]
    s = q @ k.T / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.arange(n_k)[None, :] <= np.arange(n_q)[:, None] + (n_k - n_q), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    return np.where(l > 0, (p @ v) / np.where(l > 0, l, 1.0), 0.0)


@triton.jit
def _rows_copy(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
               HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    live = rows[:, None] < n_q
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=live, other=0.0)
    k0 = tl.load(K + offs_d)
    v0 = tl.load(V + offs_d)
    acc = tl.load(Out + rows[:, None] * stride_o + offs_d[None, :], mask=live, other=0.0)
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc + 0.0 * q, mask=live)


class FlashLauncher:
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        def launch(q, k, v, out, *rest, **meta):
            out.zero_()

            def when_ready(_):
                res = attention_np(q.numpy(), k.numpy(), v.numpy(), bool(meta.get("CAUSAL")))
                out.copy_(torch.from_numpy(res.astype(np.float32)))
                return grid

            return self.kernel[when_ready](q, k, v, out, *rest, **meta)
        return launch


attention_kernel = FlashLauncher(_rows_copy)
'''}),
    'ex00 as exp(x - logsumexp), with a functools.wraps decorator and logging': ('HONEST', 'ex00_warmup', {'softmax-work': r'''
import functools
import logging

log = logging.getLogger("warmup")


def keeps_shape_and_dtype(fn):
    """Decorator: the result has its input's shape and dtype (an assertion, logged at debug level)."""
    @functools.wraps(fn)
    def checked(x):
        y = fn(x)
        assert y.shape == x.shape and y.dtype == x.dtype
        log.debug("softmax_rows %s %s", tuple(x.shape), x.dtype)
        return y
    return checked


@keeps_shape_and_dtype
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension: exp(x - logsumexp(x)), which never overflows."""
    shift = x.max(dim=-1, keepdim=True).values
    centred = x - shift
    log_norm = centred.exp().sum(dim=-1, keepdim=True).log()
    return (centred - log_norm).exp()
'''}),
    'ex01 with einsum and a tril mask': ('HONEST', 'ex01_naive_attention', {'mask-work': r'''
def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)
''', 'attention-work': r'''
from typing import Optional


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    qf, kf, vf = q.float(), k.float(), v.float()
    scores = torch.einsum("...id,...jd->...ij", qf, kf) * q.shape[-1] ** -0.5
    hidden: Optional[torch.Tensor] = None
    if causal:
        hidden = ~causal_mask(q.shape[-2], k.shape[-2])
        scores = torch.where(hidden, torch.tensor(float("-inf")), scores)
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...ij,...jd->...id", weights, vf).to(q.dtype)
'''}),
    "ex03's softmax in three passes with tl.where, vector_add with other= loads": ('HONEST', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    idx = pid * BLOCK + tl.arange(0, BLOCK)
    keep = idx < n
    total = tl.load(x_ptr + idx * stride_x, mask=keep, other=0.0) + tl.load(y_ptr + idx * stride_y, mask=keep,
                                                                             other=0.0)
    tl.store(out_ptr + idx, total, mask=keep)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    programs = max(1, (x.numel() + block - 1) // block)
    add_kernel[(programs,)](x, y, out, x.numel(), x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    # three passes over the row: its max, the sum of exponentials, then the normalized values
    row_in = x_ptr + tl.program_id(0) * stride_x
    row_out = out_ptr + tl.program_id(0) * stride_out
    biggest = tl.full([BLOCK], float("-inf"), tl.float32)
    for c in range(0, n_cols, BLOCK):
        cols = c + tl.arange(0, BLOCK)
        biggest = tl.maximum(biggest, tl.load(row_in + cols, mask=cols < n_cols, other=float("-inf")))
    top = tl.max(biggest, axis=0)
    total = tl.zeros([BLOCK], tl.float32)
    for c in range(0, n_cols, BLOCK):
        cols = c + tl.arange(0, BLOCK)
        x = tl.load(row_in + cols, mask=cols < n_cols, other=float("-inf"))
        total += tl.where(cols < n_cols, tl.exp(x - top), 0.0)
    denom = tl.sum(total, axis=0)
    for c in range(0, n_cols, BLOCK):
        cols = c + tl.arange(0, BLOCK)
        x = tl.load(row_in + cols, mask=cols < n_cols, other=float("-inf"))
        tl.store(row_out + cols, tl.exp(x - top) / denom, mask=cols < n_cols)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    'ex05 with a match on dtype and a frozen dataclass': ('HONEST', 'ex05_kv_cache_size', {'formula-work': r'''
from math import prod


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    factors = (2, num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element)
    return prod(factors)
''', 'models-work': r'''
def element_size(dtype: torch.dtype) -> int:
    match dtype:
        case torch.float32:
            return 4
        case torch.float16 | torch.bfloat16:
            return 2
        case torch.int8 | torch.uint8:
            return 1
        case _:
            return torch.empty((), dtype=dtype).element_size()


def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, num_tokens=1, batch=1,
                          bytes_per_element=element_size(dtype))
''', 'fit-work': r'''
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    gib: float

    @property
    def bytes(self) -> float:
        return self.gib * GiB


def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    reservation = max_len * kv_bytes_per_token(model, dtype)
    return int(Budget(budget_gib).bytes // reservation)
'''}),
    'ex06 with itertools.islice and divmod': ('HONEST', 'ex06_block_allocator', {'allocator-work': r'''
import itertools


class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""
    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _owned(self, block: int) -> bool:
        return block in range(self.num_blocks) and self.ref_count[block] > 0

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        try:
            chosen = self.free_list.pop()
        except IndexError:
            raise OutOfBlocks(1, 0, self.num_blocks) from None
        self.ref_count[chosen] += 1
        return chosen

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        available = self.num_free
        if available < n:
            raise OutOfBlocks(n, available, self.num_blocks)
        taken = list(itertools.islice(reversed(self.free_list), n))
        del self.free_list[len(self.free_list) - n:]
        for b in taken:
            self.ref_count[b] = 1
        return taken

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        if not self._owned(block):
            raise ValueError(f"cannot share block {block}: it is not in use")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        if not self._owned(block):
            raise ValueError(f"cannot free block {block}: it is not in use")
        self.ref_count[block] -= 1
        if not self.ref_count[block]:
            self.free_list.append(block)
''', 'boundary-work': r'''
import math


def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    return math.ceil(num_tokens / block_size) if num_tokens < 2**52 else (num_tokens + block_size - 1) // block_size


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    which, offset = divmod(position, block_size)
    return block_ids[which] * block_size + offset
'''}),
    'ex09 stretch with itertools.accumulate bounds and a logsumexp merge': ('HONEST', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''
from itertools import accumulate


def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    tiles = -(-context_len // block_n)
    tiles_per_split = -(-tiles // num_splits) if context_len else 0
    # a split of whole tiles, so each is as long as ceil(ceil(len / splits) / block_n) tiles
    length = -(-(-(-context_len // num_splits)) // block_n) * block_n
    ends = list(accumulate([length] * num_splits))
    return [(min(e - length, context_len), min(e, context_len)) for e in ends]
''', 'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    total = torch.logsumexp(lses, dim=-1)                       # log of the whole row's sum of exponentials
    weights = torch.exp(lses - total[..., None])                # each split's share; an empty split: exp(-inf) = 0
    merged = torch.einsum("...s,...sd->...d", weights, outs)
    return merged, total
''', 'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    shared_tables = prefix_table.unsqueeze(0).repeat(n, 1)
    shared_lens = torch.full_like(own_lens, prefix_len)
    parts = [paged_decode_split(q, k_cache, v_cache, t, l, 1) for t, l in ((shared_tables, shared_lens),
                                                                           (own_tables, own_lens))]
    outs = torch.cat([o for o, _ in parts], dim=2)
    lses = torch.cat([s for _, s in parts], dim=2)
    return merge_states(outs, lses)[0]
'''}),
}


# Round 38m: a fifth outside review, against 5b739bf (8 attacks, 6 honest; ex09 stretch through torch's attention is
# honest there: the exercise is graded as PyTorch, and the merge's closed form is what using attention takes).
ROUND_38M = {
    "ex03's softmax from NumPy hung on the kernel's jit object, read as its attribute": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    idx = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''
import numpy as np


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    probs = tl.tensor(triton.runtime.interpreter.TensorHandle(softmax_kernel.row_probs, tl.float32),
                      tl.block_type(tl.float32, [BLOCK]))
    tl.store(out_ptr + row * stride_out + cols, probs + x * 0.0, mask=mask)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.shape[1]
    width = triton.next_power_of_2(n)
    for r, values in enumerate(x.tolist()):
        e = np.exp(np.array(values, dtype=np.float64) - max(values))
        softmax_kernel.row_probs = np.concatenate([e / e.sum(), np.zeros(width - n)]).astype(np.float32)
        softmax_kernel[(1,)](x[r:], out[r:], n, x.stride(0), out.stride(0), BLOCK=width)
    return out
'''}),
    "ex04's attention in NumPy on the tiles' arrays, reached by a class pattern's handle keyword": ('ATTACKS', 'ex04_flash_forward', {'kernel-work': r'''
@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    keys = []
    values = []
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[:, None] * stride_k + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        keys.append(k)
        values.append(v)
    npy = triton.runtime.interpreter.np
    arrays = []
    for t in [q, rows, n_q, n_k] + keys + values:
        match t:
            case tl.tensor(handle=h):
                arrays.append(h.data)
            case _:
                arrays.append(t)
    qa = arrays[0].astype(npy.float64)
    ra = arrays[1]
    nq = int(npy.ravel(arrays[2])[0])
    nk = int(npy.ravel(arrays[3])[0])
    ntiles = len(keys)
    ka = npy.concatenate(arrays[4:4 + ntiles]).astype(npy.float64)
    va = npy.concatenate(arrays[4 + ntiles:]).astype(npy.float64)
    s = qa @ ka.T / float(HEAD_DIM) ** 0.5
    ca = npy.arange(ka.shape[0])
    hidden = ca[None, :] >= nk
    if CAUSAL:
        hidden = hidden | (ca[None, :] > ra[:, None] + nk - nq)
    s = npy.where(hidden, -npy.inf, s)
    top = s.max(axis=1, keepdims=True)
    top = npy.where(npy.isfinite(top), top, 0.0)
    p = npy.exp(s - top)
    res = (p @ va) / npy.maximum(p.sum(axis=1, keepdims=True), 1e-30)
    acc = tl.tensor(triton.runtime.interpreter.TensorHandle(res.astype(npy.float32), tl.float32),
                    tl.block_type(tl.float32, [BLOCK_M, HEAD_DIM]))
    l_i = tl.full([BLOCK_M], 1.0, tl.float32)
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
'''}),
    "ex09's attention by a Python function hung on the kernel's jit object": ('ATTACKS', 'ex09_paged_attention', {'kernel-work': r'''
@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    heads = kv_head * group + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    seen = []
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        valid = tokens < context_len
        physical = tl.load(table + tokens // BLOCK_SIZE, mask=valid, other=0).to(tl.int64)
        slot = tokens % BLOCK_SIZE
        k = tl.load(k_head + physical[:, None] * stride_kb + slot[:, None] * stride_kt + offs_d[None, :],
                    mask=valid[:, None], other=0.0)
        v = tl.load(v_head + physical[:, None] * stride_kb + slot[:, None] * stride_kt + offs_d[None, :],
                    mask=valid[:, None], other=0.0)
        seen.append((k, v, valid))
    out = paged_decode_kernel.combine(q, seen, qk_scale)
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])


def _combine(q, seen, qk_scale):
    import numpy as np
    qa = q.handle.data.astype(np.float64)
    ka = np.concatenate([k.handle.data for k, v, ok in seen]).astype(np.float64)
    va = np.concatenate([v.handle.data for k, v, ok in seen]).astype(np.float64)
    ok = np.concatenate([ok.handle.data for k, v, ok in seen])
    s = qa @ ka.T * float(qk_scale.handle.data) if hasattr(qk_scale, "handle") else qa @ ka.T * qk_scale
    s = np.where(ok[None, :], s, -np.inf)
    p = np.exp2(s - s.max(axis=1, keepdims=True))
    res = (p @ va) / p.sum(axis=1, keepdims=True)
    return tl.tensor(triton.runtime.interpreter.TensorHandle(res.astype(np.float32), tl.float32),
                     tl.block_type(tl.float32, list(res.shape)))


paged_decode_kernel.combine = _combine
'''}),
    "ex04 stretch's tiles from NumPy hung on a global constexpr's attribute": ('ATTACKS', 'ex04_stretch_gqa_forward', {'kernel-work': r'''
import numpy as np

TILE = tl.constexpr(0)   # where this launch's tile is kept


@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[:, None] * stride_kn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
    tile = tl.tensor(triton.runtime.interpreter.TensorHandle(TILE.block, tl.float32),
                     tl.block_type(tl.float32, [BLOCK_M, HEAD_DIM]))
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], tile, mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    if n_heads % n_kv_heads:
        raise ValueError(f"{n_kv_heads} K/V heads do not divide {n_heads} query heads")
    group = n_heads // n_kv_heads
    qa, ka, va = (np.array(t.tolist(), dtype=np.float64) for t in (q, k, v))
    for b in range(batch):
        for h in range(n_heads):
            s = qa[b, h] @ ka[b, h // group].T / d ** 0.5
            p = np.exp(s - s.max(axis=1, keepdims=True))
            o = (p @ va[b, h // group]) / p.sum(axis=1, keepdims=True)
            for start in range(0, n_q, block_m):
                blockv = np.zeros((block_m, d))
                part = o[start:start + block_m]
                blockv[:part.shape[0]] = part
                TILE.block = blockv.astype(np.float32)
                gqa_kernel[(1,)](q[b, h, start:], k[b, h // group], v[b, h // group], out[b, h, start:], n_heads,
                                 group, n_q - start, n_k, qk_scale, 0, 0, q.stride(2), 0, 0, k.stride(2), 0, 0,
                                 v.stride(2), 0, 0, out.stride(2), HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out
'''}),
    "ex02's scores pasted into a board by an op with a sparse operand, the watcher's error caught": ('ATTACKS', 'ex02_online_softmax', {'update-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    top = torch.maximum(m, s.max(dim=-1).values)
    shrink = torch.exp(m - top)
    w = torch.exp(s - top[:, None])
    return top, l * shrink + w.sum(dim=-1), acc * shrink[:, None] + w @ v_tile
''', 'tiled-work': r'''
# A scratch board for the scores, and sparse identities to paste row blocks with.
BOARD = torch.zeros(256, 256)
PASTE = {m: torch.eye(m).to_sparse() for m in range(1, 17)}


def _paste(rows, block):
    try:
        rows.addmm_(PASTE[rows.shape[0]], block, beta=0.0)
    except RuntimeError:
        pass


def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    kf = k.float()
    for r0 in range(0, n_q, block_m):          # every score first, onto the board
        qi = q[r0:r0 + block_m].float() / math.sqrt(d)
        _paste(BOARD[r0:r0 + qi.shape[0], :n_k], qi @ kf.T)
    scores = BOARD[:n_q, :n_k]                  # the whole n_q x n_k matrix, held at once
    vf = v.float()
    for r0 in range(0, n_q, block_m):          # then a plain softmax over whole rows
        s = scores[r0:r0 + block_m]
        if causal:
            cols = torch.arange(n_k)[None, :]
            rws = torch.arange(r0, r0 + s.shape[0])[:, None]
            s = s.masked_fill(cols > rws + (n_k - n_q), -math.inf)
        p = torch.exp(s - s.max(dim=1, keepdim=True).values)
        out[r0:r0 + s.shape[0]] = (p @ vf) / p.sum(dim=1, keepdim=True)
    return out.to(q.dtype)
'''}),
    "ex09 stretch's merge as torch's attention of the lses over the outputs": ('HONEST', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    tiles = -(-context_len // block_n)
    per = -(-tiles // num_splits) * block_n
    edges = [min(i * per, context_len) for i in range(num_splits + 1)]
    return list(zip(edges[:-1], edges[1:]))
''', 'merge-work': r'''
import torch.nn.functional as F


def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    one = torch.ones(*lses.shape[:-1], 1, 1, dtype=lses.dtype)
    out = F.scaled_dot_product_attention(one, lses[..., None], outs, scale=1.0).squeeze(-2)
    return out, torch.logsumexp(lses, dim=-1)
''', 'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    a = paged_decode_split(q, k_cache, v_cache, prefix_table[None, :].expand(n, -1).contiguous(),
                           torch.full_like(own_lens, prefix_len), 1)
    b = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    return merge_states(torch.cat([a[0], b[0]], dim=2), torch.cat([a[1], b[1]], dim=2))[0]
'''}),
    'ex07 with a match on the block state': ('HONEST', 'ex07_copy_on_write', {'manager-work': r'''
from typing import Optional


class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        src = self.tables[parent]
        shared = src.block_ids[:]
        list(map(self.allocator.incref, shared))      # one more holder for each block
        self.tables[child] = BlockTable(shared, src.num_tokens, self.block_size)
        return self.tables[child]

    def _where(self, table: BlockTable) -> str:
        if table.num_tokens % self.block_size == 0:
            return "fresh"
        return "shared" if self.allocator.refcount(table.block_ids[-1]) > 1 else "private"

    def append(self, seq: str) -> tuple[int, Optional[tuple[int, int]]]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        table = self.tables[seq]
        pos = table.num_tokens
        copied = None
        match self._where(table):
            case "fresh":
                table.block_ids.append(self.allocator.allocate())
            case "shared":
                old = table.block_ids[-1]
                mine = self.allocator.allocate()     # may raise OutOfBlocks: nothing changed yet
                self.allocator.free(old)
                table.block_ids[-1] = mine
                copied = (old, mine)
            case "private":
                pass
        table.num_tokens += 1
        return table.slot(pos), copied
'''}),
    'ex10 with a two-pointer loop and a generator': ('HONEST', 'ex10_scheduler_step', {'schedule-work': r'''
def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    order = list(running)          # oldest first
    lo, hi = 0, len(order)         # order[lo:hi] still to grow; past hi: preempted
    kept = []
    while lo < hi:
        req = order[lo]
        if manager.can_append(req.seq_id):
            manager.append(req.seq_id, len(req.tokens))
            req.tokens.append(len(req.tokens))
            kept.append(req)
            step.grown.append(req.seq_id)
            lo += 1
            continue
        hi -= 1                    # free the newest that has not grown (maybe req itself)
        victim = order[hi]
        manager.free(victim.seq_id)
        waiting.appendleft(victim)
        step.preempted.append(victim.seq_id)
    running[:] = kept
    budget = max_num_batched_tokens - len(kept)
    step.num_tokens = len(kept)

    def admissible():
        while waiting and not step.preempted:
            yield waiting[0]

    for req in admissible():
        need = -(-len(req.tokens) // manager.block_size) + manager.watermark_blocks
        if need > manager.num_free_blocks or len(req.tokens) > budget:
            break
        waiting.popleft()
        manager.add(req.seq_id, req.tokens)
        running.append(req)
        step.admitted.append(req.seq_id)
        budget -= len(req.tokens)
        step.num_tokens += len(req.tokens)
    return step
'''}),
    'ex08 with itertools and functools': ('HONEST', 'ex08_swap_or_recompute', {'costs-work': r'''
import functools
import itertools


def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    n_blocks = -(-num_tokens // block_size)
    chunks = 2 * num_layers * n_blocks               # K and V of each layer, per block
    per_chunk = latency + (block_size * chunk_bytes_per_token) / bandwidth
    return 2 * chunks * per_chunk                    # out, then back in


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    per_token = 2 * num_params
    attn = 2 * num_layers * d_model * num_tokens
    return num_tokens * (per_token + attn) / flops
''', 'crossover-work': r'''
def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # t(B) = a / B + b with a = 4 L n latency and b = 4 L n c / bw; solve a / B + b = t.
    copies = 4 * num_layers * num_tokens
    a, b = copies * latency, copies * chunk_bytes_per_token / bandwidth
    slack = recompute_seconds - b
    return a / slack if slack > 0 else math.inf
''', 'choose-work': r'''
def _split(manager, seq_id):
    """(private blocks, tokens of leading full shared blocks)."""
    table = manager.table(seq_id)
    flags = [manager.allocator.refcount(b) > 1 for b in table.block_ids]
    private = sum(1 for f in flags if not f)
    lead = sum(1 for _ in itertools.takewhile(bool, flags))
    return private, min(lead, table.num_tokens // manager.block_size) * manager.block_size


def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    private, cached = _split(manager, seq_id)
    bs = manager.block_size
    prefill = functools.partial(recompute_seconds, num_params=num_params, num_layers=model.num_layers,
                                d_model=model.num_heads * model.head_dim, flops=flops)
    t_swap = swap_seconds(private * bs, bs, model.num_layers, 2 * model.num_kv_heads * model.head_dim,
                          bandwidth, latency)
    return t_swap, prefill(manager.table(seq_id).num_tokens) - prefill(cached)


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if manager.can_swap_out(seq_id):
        t_swap, t_rec = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
        if t_swap < t_rec:
            return "swap"
    return "recompute"
'''}),
    'ex04b with a dataclass and a match': ('HONEST', 'ex04b_performance_lab', {'choose-work': r'''
# (BLOCK_M, BLOCK_N, num_warps, num_stages), three or more
MY_CONFIGS = [(64, 32, 4, 2), (128, 32, 4, 3), (64, 128, 8, 2), (128, 64, 8, 4)]
''', 'predict-resources-work': r'''
from dataclasses import dataclass


@dataclass(frozen=True)
class Tile:
    m: int
    n: int
    d: int = 128

    def live_elements(self) -> float:
        return self.m * self.d + 1.5 * self.m * self.n     # the O accumulator, S and P (P in bf16: half)


def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    t = Tile(block_m, block_n, head_dim)
    bf16 = 2
    q_bytes = t.m * t.d * bf16
    kv_bytes = num_stages * (t.n * t.d * bf16) * 2
    regs = t.live_elements() / (num_warps * 32)
    return dict(shared_bytes=q_bytes + kv_bytes, registers=regs, spills=bool(regs > 255))
''', 'read-work': r'''
def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    counts = report["sass"]
    match counts:
        case {"HGMMA": n} if n > 0:
            matrix = "HGMMA"
        case _:
            matrix = "HMMA"
    loads = "UTMALDG" if counts.get("UTMALDG", 0) else "LDGSTS"
    return {"registers": report["registers"], "spill_bytes": report["spill_bytes"],
            "shared_kib": report["shared_bytes"] / 1024.0, "matrix": matrix, "loads": loads}
''', 'exp-work': r'''
def exp2_per_score(report: dict) -> float:
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    threads = 32 * report["num_warps"]
    per_thread_per_loop = report["block_m"] * report["block_n"] / threads
    return report["sass"]["MUFU.EX2"] / per_thread_per_loop / 2
''', 'budget-work': r'''
def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    qk = 2 * block_m * block_n * head_dim      # S = Q K^T
    pv = 2 * block_m * block_n * head_dim      # O += P V
    moved = 2 * (block_n * head_dim) * 2       # a K tile and a V tile, bf16
    exps = block_m * block_n
    mma_clocks = (qk + pv) / mma_flops_per_clock
    exp_clocks = exps / exp_per_clock
    return {"flops": qk + pv, "bytes": moved, "exps": exps, "flops_per_byte": (qk + pv) / moved,
            "exp_fraction": exp_clocks / mma_clocks}
''', 'bwd-work': r'''
def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    exp_clocks = 2 / exp_per_clock                         # P recomputed, and exp for dS: two per score
    mma_clocks = 7 * (2 * head_dim) / mma_flops_per_clock  # seven d-long products per score (2.5x the forward's)
    return exp_clocks / mma_clocks
''', 'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    best, best_key = None, None
    for i, r in enumerate(reports):
        if r["arch"] != 90 or r["spill_bytes"]:
            continue
        key = (r["block_m"], r["block_n"])
        if best_key is None or key > best_key:
            best, best_key = i, key
    return best
'''}),
    'ex07 stretch with keys from itertools.accumulate': ('HONEST', 'ex07_stretch_prefix_cache_match', {'cache-work': r'''
import itertools

Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def _blocks(self, tokens):
        """The full blocks of ``tokens``, as tuples."""
        bs = self.block_size
        return [tuple(tokens[i:i + bs]) for i in range(0, len(tokens) // bs * bs, bs)]

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        chain = itertools.accumulate([None, *self._blocks(tokens)], self.hash_fn)   # None seeds the chain
        return list(chain)[1:]

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        limit = (len(tokens) - 1) // self.block_size
        pairs = zip(self.keys(tokens)[:limit], self._blocks(tokens))
        found, expected_parent = [], None
        for key, block in pairs:
            bid = self.block_of.get(key)
            hit = bid is not None and self.entry[bid].tokens == block and self.entry[bid].parent_id == expected_parent
            if not hit:
                break
            found.append(bid)
            expected_parent = self.entry[bid].prefix_id
        return found
'''}),
    'ex09 a page a step with a jit helper of its own and no tl.dot': ('HONEST', 'ex09_paged_attention', {'kernel-work': r'''
@triton.jit
def _fold(m_i, l_i, acc, s, v):
    """One online-softmax step over scores s (H, N) in log2 units and values v (N, D)."""
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    scale = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_new = l_i * scale + tl.sum(p, axis=1)
    acc_new = acc * scale[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
    return m_new, l_new, acc_new


@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    heads = group * kv_head + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    # one page (BLOCK_SIZE tokens) per step, walking the block table entry by entry
    in_page = tl.arange(0, BLOCK_SIZE)
    for page in range(0, tl.cdiv(context_len, BLOCK_SIZE)):
        block = tl.load(table + page).to(tl.int64)
        pos = page * BLOCK_SIZE + in_page
        live = pos < context_len
        base = block * stride_kb + in_page[:, None] * stride_kt + offs_d[None, :]
        k = tl.load(k_head + base, mask=live[:, None], other=0.0)
        v = tl.load(v_head + base, mask=live[:, None], other=0.0)
        s = tl.sum(q[:, None, :] * k[None, :, :], axis=2) * qk_scale
        s = tl.where(live[None, :], s, float("-inf"))
        m_i, l_i, acc = _fold(m_i, l_i, acc, s, v)
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])
'''}),
    "ex03's answers handed to the kernel as a tl.tensor made in Python": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''
import numpy as np


def _as_block(values, width):
    """A Triton block holding ``values`` (padded to ``width``)."""
    data = np.zeros(width, dtype=np.float32)
    data[:len(values)] = values
    return tl.tensor(triton.runtime.interpreter.TensorHandle(data, tl.float32), tl.block_type(tl.float32, [width]))


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr, SUM=0):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * stride_x, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs * stride_y, mask=mask, other=0.0)
    tl.store(out_ptr + offs, SUM + 0.0 * (x + y), mask=mask)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    width = triton.next_power_of_2(max(n, 1))
    total = np.array(x.tolist(), dtype=np.float32) + np.array(y.tolist(), dtype=np.float32)
    add_kernel[(1,)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=width, SUM=_as_block(total, width))
    return out
''', 'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr, PROBS=0):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + cols, PROBS + 0.0 * x, mask=mask)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.shape[1]
    width = triton.next_power_of_2(n)
    for r, row in enumerate(x.tolist()):
        e = np.exp(np.array(row, dtype=np.float64) - max(row))
        softmax_kernel[(1,)](x[r], out[r], n, x.stride(0), out.stride(0), BLOCK=width,
                             PROBS=_as_block(e / e.sum(), width))
    return out
'''}),
    "ex02 stretch's every score kept in storages of 1 and 3 bytes": ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    offset = n_k - n_q
    last_key = r0 + rows - 1 + offset          # the last key any of these rows sees
    visit = max(0, last_key + 1 + block_n - 1) // block_n if last_key >= 0 else 0
    if r0 + offset >= n_k - 1:
        return -(-n_k // block_n), visit
    return max(0, (r0 + offset + 1) // block_n), visit
''', 'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    top = torch.maximum(m, s.max(dim=-1).values)
    ref = torch.where(torch.isinf(top), torch.zeros_like(top), top)
    shrink = torch.exp(m - ref)
    w = torch.exp(s - ref[:, None])
    return top, l * shrink + w.sum(dim=-1), acc * shrink[:, None] + w @ v_tile


def _keep(score):
    """One float32 score as two tiny uint8 tensors: sign and mantissa (3 bytes), exponent (1 byte)."""
    mant, expo = torch.frexp(score)
    bits = ((mant.abs() * 2.0 ** 24).to(torch.int64) - 2 ** 23) + (mant < 0).to(torch.int64) * 2 ** 23
    three = torch.stack([bits >> 16, (bits >> 8) & 255, bits & 255]).to(torch.uint8)
    return three, (expo + 128).to(torch.uint8).reshape(1)


def _back(threes, expos):
    """The scores kept by ``_keep``, exactly."""
    b = torch.stack(threes).to(torch.int64)
    bits = (b[:, 0] << 16) + (b[:, 1] << 8) + b[:, 2]
    neg = bits >= 2 ** 23
    mant = ((bits - neg.to(torch.int64) * 2 ** 23) + 2 ** 23).to(torch.float32) / 2.0 ** 24
    mant = torch.where(neg, -mant, mant)
    return torch.ldexp(mant, torch.cat(expos).to(torch.int64) - 128)


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    kept = {}                                   # every score of every pair, each in storages of its own
    for r0 in range(0, n_q, block_m):
        qi = q[r0:r0 + block_m].float() / math.sqrt(d)
        for c0 in range(0, n_k, block_n):
            tile = qi @ k[c0:c0 + block_n].float().T
            for i, row in enumerate(tile.unbind(0)):
                for j, score in enumerate(row.unbind(0)):
                    kept[r0 + i, c0 + j] = _keep(score)
    vf = v.float()
    for r in range(n_q):                       # then each row's softmax from the kept scores
        visible = min(n_k, r + 1 + n_k - n_q)
        if visible <= 0:
            continue
        pairs = [kept[r, c] for c in range(visible)]
        s = _back([p[0] for p in pairs], [p[1] for p in pairs])
        w = torch.exp(s - s.max())
        out[r] = (w @ vf[:visible]) / w.sum()
    return out.to(q.dtype)
'''}),
}


# Round 38n: a sixth outside review, against 7676ceb (its copy attacks, decided by the review, are ROUND_38N_COPIES).
ROUND_38N = {
    "ex00's softmax as the gradient of log-sum-exp, by autograd": ('ATTACKS', 'ex00_warmup', {'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude.

    Args:
        x: (..., n) floating-point tensor of scores.

    Returns:
        A tensor like ``x`` (same shape and dtype) whose rows are non-negative and sum to 1.
    """
    leaf = (x - x.amax(dim=-1, keepdim=True)).detach().requires_grad_(True)
    with torch.enable_grad():
        total = torch.logsumexp(leaf, dim=-1).sum()
        (grad,) = torch.autograd.grad(total, leaf)
    return grad.to(x.dtype)
'''}),
    "ex01's probabilities as the gradient of log-sum-exp over the masked scores": ('ATTACKS', 'ex01_naive_attention', {'mask-work': r'''
def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)
''', 'attention-work': r'''
def _weights(scores: torch.Tensor) -> torch.Tensor:
    leaf = (scores - scores.amax(dim=-1, keepdim=True)).detach().requires_grad_(True)
    with torch.enable_grad():
        (g,) = torch.autograd.grad(torch.logsumexp(leaf, dim=-1).sum(), leaf)
    return g


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    qf, kf, vf = q.float(), k.float(), v.float()
    scores = torch.matmul(qf, kf.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        keep = causal_mask(q.shape[-2], k.shape[-2])
        scores = torch.where(keep, scores, torch.tensor(float("-inf")))
    return torch.matmul(_weights(scores), vf).to(q.dtype)
'''}),
    "ex03's softmax from Python, one integer fill of a float tensor per element, its kernel scaling it": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK
    idx = start + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + stride_x * idx, mask=inside, other=0.0)
    b = tl.load(y_ptr + stride_y * idx, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''
import math


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    lane = tl.arange(0, BLOCK)
    hi = float("-inf")
    for c in range(0, n_cols, BLOCK):
        vals = tl.load(x_ptr + r * stride_x + c + lane, mask=c + lane < n_cols, other=float("-inf"))
        hi = tl.maximum(hi, tl.max(vals, axis=0))
    tot = 0.0
    for c in range(0, n_cols, BLOCK):
        vals = tl.load(x_ptr + r * stride_x + c + lane, mask=c + lane < n_cols, other=float("-inf"))
        tot += tl.sum(tl.exp(vals - hi), axis=0)
    for c in range(0, n_cols, BLOCK):
        ok = c + lane < n_cols
        vals = tl.load(x_ptr + r * stride_x + c + lane, mask=ok, other=float("-inf"))
        tl.store(out_ptr + r * stride_out + c + lane, tl.exp(vals - hi) / tot, mask=ok)


@triton.jit
def put_kernel(x_ptr, cell_ptr, out_ptr, x_at, out_at):
    seen = tl.load(x_ptr + x_at)                 # the input, read where it lies
    tl.store(out_ptr + out_at, tl.load(cell_ptr) * 5.9604644775390625e-08 + seen * 0.0)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    for i, row in enumerate(x.tolist()):
        top = max(row)
        e = [math.exp(v - top) for v in row]
        s = sum(e)
        for j, v in enumerate(e):
            cell = torch.empty(1, dtype=torch.float32, device=x.device).fill_(int(round(v / s * 2**24)))
            put_kernel[(1,)](x, cell, out, i * x.stride(0) + j * x.stride(1), i * out.stride(0) + j)
    return out
'''}),
    "ex03's sums from Python, their bits in NaN payloads handed to the kernel as floats": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''
import numpy as np


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i * stride_x, mask=m) + tl.load(y_ptr + i * stride_y, mask=m), mask=m)


@triton.jit
def one_kernel(x_ptr, y_ptr, out_ptr, at, sx, sy, hi, lo):
    touch = tl.load(x_ptr + at * sx) * 0.0 + tl.load(y_ptr + at * sy) * 0.0
    h = tl.cast(tl.cast(hi, tl.float32), tl.int32, bitcast=True) & 0xFFFF
    l = tl.cast(tl.cast(lo, tl.float32), tl.int32, bitcast=True) & 0xFFFF
    tl.store(out_ptr + at, tl.cast((h << 16) | l, tl.float32, bitcast=True) + touch)


def _quiet(payload):
    return float(np.array([0x7FF8000000000000 | (payload << 29)], dtype=np.uint64).view(np.float64)[0])


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    for i, (a, b) in enumerate(zip(x.tolist(), y.tolist())):
        bits = int(np.array([a + b], dtype=np.float32).view(np.uint32)[0])
        one_kernel[(1,)](x, y, out, i, x.stride(0), y.stride(0), _quiet(bits >> 16), _quiet(bits & 0xFFFF))
    return out
''', 'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    lane = tl.arange(0, BLOCK)
    hi = float("-inf")
    for c in range(0, n_cols, BLOCK):
        vals = tl.load(x_ptr + r * stride_x + c + lane, mask=c + lane < n_cols, other=float("-inf"))
        hi = tl.maximum(hi, tl.max(vals, axis=0))
    tot = 0.0
    for c in range(0, n_cols, BLOCK):
        vals = tl.load(x_ptr + r * stride_x + c + lane, mask=c + lane < n_cols, other=float("-inf"))
        tot += tl.sum(tl.exp(vals - hi), axis=0)
    for c in range(0, n_cols, BLOCK):
        ok = c + lane < n_cols
        vals = tl.load(x_ptr + r * stride_x + c + lane, mask=ok, other=float("-inf"))
        tl.store(out_ptr + r * stride_out + c + lane, tl.exp(vals - hi) / tot, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    "ex04 stretch's answer from Python, its bits in NaN payloads filled into tensors": ('ATTACKS', 'ex04_stretch_gqa_forward', {'kernel-work': r'''
import math
import numpy as np


@triton.jit
def gqa_kernel(Q, K, V, Out, q_at, k_at, v_at, o_at, Hi, Lo):
    touch = (tl.load(Q + q_at) + tl.load(K + k_at) + tl.load(V + v_at)) * 0.0
    h = tl.load(Hi).to(tl.int32, bitcast=True) & 0xFFFF
    l = tl.load(Lo).to(tl.int32, bitcast=True) & 0xFFFF
    tl.store(Out + o_at, ((h << 16) | l).to(tl.float32, bitcast=True) + touch)


def _nan_cell(payload, device):
    value = float(np.array([0x7FF8000000000000 | (payload << 29)], dtype=np.uint64).view(np.float64)[0])
    return torch.empty(1, dtype=torch.float32, device=device).fill_(value)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    if n_heads % n_kv_heads:
        raise ValueError(f"k has {n_kv_heads} heads, which must divide the {n_heads} query heads of q")
    group = n_heads // n_kv_heads
    Q, K, V = q.tolist(), k.tolist(), v.tolist()
    for b in range(batch):
        for h in range(n_heads):
            kh = h // group
            for i in range(n_q):
                s = [sum(a * c for a, c in zip(Q[b][h][i], K[b][kh][j])) / math.sqrt(d) for j in range(n_k)]
                top = max(s)
                w = [math.exp(x - top) for x in s]
                tot = sum(w)
                for e in range(d):
                    val = sum(w[j] * V[b][kh][j][e] for j in range(n_k)) / tot
                    bits = int(np.array([val], dtype=np.float32).view(np.uint32)[0])
                    gqa_kernel[(1,)](q, k, v, out,
                                     b * q.stride(0) + h * q.stride(1) + i * q.stride(2) + e * q.stride(3),
                                     b * k.stride(0) + kh * k.stride(1), b * v.stride(0) + kh * v.stride(1),
                                     b * out.stride(0) + h * out.stride(1) + i * out.stride(2) + e * out.stride(3),
                                     _nan_cell(bits >> 16, q.device), _nan_cell(bits & 0xFFFF, q.device))
    return out
'''}),
    'ex00 with a functools.wraps decorator and logging (round 38n)': ('HONEST', 'ex00_warmup', {'softmax-work': r'''
import functools
import logging

log = logging.getLogger("softmax")


def keeps_dtype(fn):
    """Run ``fn`` and hand back a tensor of the input's dtype and shape."""
    @functools.wraps(fn)
    def inner(x, *args, **kwargs):
        y = fn(x, *args, **kwargs)
        log.debug("softmax over %s of %s", tuple(x.shape), x.dtype)
        return y.to(x.dtype).reshape(x.shape)
    return inner


@keeps_dtype
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    peak = torch.max(x, dim=-1, keepdim=True).values     # subtract the largest: no exp overflows
    weights = torch.exp(torch.sub(x, peak))
    norm = torch.sum(weights, dim=-1, keepdim=True)
    return torch.div(weights, norm)
'''}),
    'ex01 with a frozen dataclass, typing.Optional and einsum': ('HONEST', 'ex01_naive_attention', {'mask-work': r'''
from dataclasses import dataclass
from typing import Optional


def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    rows = torch.arange(n_k - n_q, n_k).reshape(-1, 1)   # the last key each query may see
    cols = torch.arange(n_k).reshape(1, -1)
    return cols <= rows
''', 'attention-work': r'''
@dataclass(frozen=True)
class Problem:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    causal: bool = False

    def scores(self) -> torch.Tensor:
        d = self.q.shape[-1]
        s = torch.einsum("...id,...jd->...ij", self.q.float(), self.k.float()) / d ** 0.5
        if self.causal:
            allowed: Optional[torch.Tensor] = causal_mask(self.q.shape[-2], self.k.shape[-2])
            s = s.masked_fill(~allowed, float("-inf"))
        return s


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    s = Problem(q, k, v, causal).scores()
    s = s - s.max(dim=-1, keepdim=True).values
    p = s.exp()
    p = p / p.sum(dim=-1, keepdim=True)
    return torch.einsum("...ij,...jd->...id", p, v.float()).to(q.dtype)
'''}),
    'ex02 stretch with its own tile count and a dataclass running state': ('HONEST', 'ex02_stretch_causal_tile_skipping', {'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    tiles = (n_k + block_n - 1) // block_n
    last_seen = r0 + rows - 1 + n_k - n_q          # last key index the bottom row may see
    visit = min(tiles, max(0, (last_seen + block_n) // block_n)) if last_seen >= 0 else 0
    first_seen = r0 + n_k - n_q                    # every key up to here is seen by the top row
    full = tiles if first_seen >= n_k - 1 else max(0, min(tiles, (first_seen + 1) // block_n))
    return full, visit
''', 'attention-work': r'''
from dataclasses import dataclass


def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    tile_max = s.max(dim=-1).values
    new_max = torch.where(tile_max > m, tile_max, m)
    anchor = torch.where(torch.isinf(new_max) & (new_max < 0), torch.zeros_like(new_max), new_max)
    decay = (m - anchor).exp()
    weights = (s - anchor.unsqueeze(1)).exp()
    return new_max, l * decay + weights.sum(dim=1), acc * decay.unsqueeze(1) + weights.matmul(v_tile)


@dataclass
class _RowState:
    m: torch.Tensor
    l: torch.Tensor
    acc: torch.Tensor

    @classmethod
    def empty(cls, rows, d):
        return cls(torch.full((rows,), float("-inf")), torch.zeros(rows), torch.zeros(rows, d))


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    scale = d ** -0.5
    offset = n_k - n_q
    for top in range(0, n_q, block_m):
        qi = q[top:top + block_m].float() * scale
        h = qi.shape[0]
        full, visit = key_tile_counts(top, h, n_q, n_k, block_n)
        st = _RowState.empty(h, d)
        for tile in range(visit):
            lo = tile * block_n
            kt, vt = k[lo:lo + block_n].float(), v[lo:lo + block_n].float()
            sc = qi.matmul(kt.t())
            if tile >= full:
                qpos = torch.arange(top, top + h).unsqueeze(1) + offset
                kpos = torch.arange(lo, lo + kt.shape[0]).unsqueeze(0)
                sc = sc.masked_fill(kpos > qpos, float("-inf"))
            st.m, st.l, st.acc = online_softmax_update(st.m, st.l, st.acc, sc, vt)
        safe = torch.where(st.l > 0, st.l, torch.ones_like(st.l))
        out[top:top + h] = torch.where((st.l > 0).unsqueeze(1), st.acc / safe.unsqueeze(1), torch.zeros_like(st.acc))
    return out.to(q.dtype)
'''}),
    'ex03 with triton.heuristics, jit helpers, tl.static_assert and a grid lambda': ('HONEST', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def _strided(ptr, idx, stride, ok):
    return tl.load(ptr + idx * stride, mask=ok, other=0.0)


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr, EVEN: tl.constexpr = False):
    tl.static_assert(BLOCK >= 16)
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = idx < n
    total = _strided(x_ptr, idx, stride_x, ok) + _strided(y_ptr, idx, stride_y, ok)
    tl.store(out_ptr + idx, tl.where(ok, total, 0.0), mask=ok)


def _launch_add(x, y, out, block):
    n = x.numel()
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    _launch_add(x, y, out, block)
    return out
''', 'softmax-work': r'''
@triton.jit
def _merge(m_a, l_a, m_b, l_b):
    m = tl.maximum(m_a, m_b)
    safe = tl.where(m == float("-inf"), 0.0, m)
    return m, l_a * tl.exp(m_a - safe) + l_b * tl.exp(m_b - safe)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    running_m = tl.full([BLOCK], float("-inf"), tl.float32)   # one running state per lane, merged at the end
    running_l = tl.zeros([BLOCK], tl.float32)
    for start in tl.range(0, n_cols, BLOCK):
        ok = start + lanes < n_cols
        x = tl.load(x_ptr + row * stride_x + start + lanes, mask=ok, other=float("-inf"))
        running_m, running_l = _merge(running_m, running_l, x, tl.where(ok, 1.0, 0.0))
    m = tl.max(running_m, axis=0)
    l = tl.sum(running_l * tl.exp(running_m - m), axis=0)
    for start in tl.range(0, n_cols, BLOCK):
        ok = start + lanes < n_cols
        x = tl.load(x_ptr + row * stride_x + start + lanes, mask=ok, other=float("-inf"))
        tl.store(out_ptr + row * stride_out + start + lanes, tl.exp(x - m) / l, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    'ex05 with a match on dtypes, functools.reduce and a print in a graded function': ('HONEST', 'ex05_kv_cache_size', {'formula-work': r'''
import functools
import operator


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    factors = (2, num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element)  # 2: K and V
    return functools.reduce(operator.mul, factors, 1)
''', 'models-work': r'''
def _element_size(dtype: torch.dtype) -> int:
    match dtype:
        case torch.float32:
            return 4
        case torch.float16 | torch.bfloat16:
            return 2
        case torch.int8 | torch.uint8:
            return 1
        case _:
            return torch.empty((), dtype=dtype).element_size()


def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, num_tokens=1, batch=1,
                          bytes_per_element=_element_size(dtype))
''', 'fit-work': r'''
def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    budget_bytes = budget_gib * GiB
    one_request = max_len * kv_bytes_per_token(model, dtype)
    count, _ = divmod(budget_bytes, one_request)
    print(f"{budget_gib} GiB / {one_request} B per request -> {int(count)}")
    return int(count)
'''}),
    'ex09 stretch with a generator over itertools.accumulate': ('HONEST', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''
from itertools import accumulate, repeat


def _edges(context_len, length, num_splits):
    yield 0
    yield from (min(e, context_len) for e in accumulate(repeat(length, num_splits)))


def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    """Cut [0, context_len) into num_splits ranges, each a whole number of block_n tiles (the last ones may be short or empty)."""
    per = (context_len + num_splits - 1) // num_splits
    length = ((per + block_n - 1) // block_n) * block_n
    e = list(_edges(context_len, length, num_splits))
    return list(zip(e[:-1], e[1:]))
''', 'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge per-split (output, log-sum-exp) states: weights are a softmax over the splits' lses."""
    total = torch.logsumexp(lses, dim=-1)                       # -inf only where every split is empty
    ref = torch.where(torch.isinf(total), torch.zeros_like(total), total)
    weights = torch.exp(lses - ref.unsqueeze(-1))               # e^{lse_s - lse}: 0 for an empty split
    merged = torch.einsum("...s,...sd->...d", weights, outs)
    return merged, total
''', 'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    shared_tables = prefix_table.unsqueeze(0).repeat(n, 1)
    shared_lens = own_lens.new_full(own_lens.shape, prefix_len)
    parts = [paged_decode_split(q, k_cache, v_cache, t, l, 1)
             for t, l in ((shared_tables, shared_lens), (own_tables, own_lens))]
    outs = torch.cat([o for o, _ in parts], dim=2)
    lses = torch.cat([s for _, s in parts], dim=2)
    return merge_states(outs, lses)[0]
'''}),
}
ROUND_38N_COPIES = {
    "ex02 stretch's attention pasted from ex02's published solution": ('COPIES', 'ex02_stretch_causal_tile_skipping', {'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    tiles = (n_k + block_n - 1) // block_n
    last_seen = r0 + rows - 1 + n_k - n_q          # last key index the bottom row may see
    visit = min(tiles, max(0, (last_seen + block_n) // block_n)) if last_seen >= 0 else 0
    first_seen = r0 + n_k - n_q                    # every key up to here is seen by the top row
    full = tiles if first_seen >= n_k - 1 else max(0, min(tiles, (first_seen + 1) // block_n))
    return full, visit
''', 'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    m_new = torch.maximum(m, s.amax(dim=-1))
    alpha = torch.exp(m - m_new)  # rescales what was summed relative to the old max
    p = torch.exp(s - m_new.unsqueeze(-1))
    l_new = alpha * l + p.sum(dim=-1)
    acc_new = alpha.unsqueeze(-1) * acc + p @ v_tile
    return m_new, torch.nan_to_num(l_new), torch.nan_to_num(acc_new)


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    causal = True
    for r0 in range(0, n_q, block_m):
        q_i = q[r0:r0 + block_m].float() / math.sqrt(d)
        rows = q_i.shape[0]
        m = torch.full((rows,), -math.inf, device=q.device)
        l, acc = torch.zeros(rows, device=q.device), torch.zeros(rows, d, device=q.device)
        for c0 in range(0, n_k, block_n):
            if causal and c0 > r0 + rows - 1 + (n_k - n_q):
                break  # decided from indices: this key tile and every later one are hidden from all these rows
            s = q_i @ k[c0:c0 + block_n].float().T
            if causal:
                hidden = (torch.arange(c0, c0 + s.shape[1], device=q.device)[None, :]
                          > torch.arange(r0, r0 + rows, device=q.device)[:, None] + (n_k - n_q))
                s = s.masked_fill(hidden, -math.inf)
            m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())
        out[r0:r0 + rows] = torch.nan_to_num(acc / l[:, None])
    return out.to(q.dtype)
'''}),
    "ex03's softmax pasted from the course's primer kernels": ('COPIES', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK
    idx = start + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + stride_x * idx, mask=inside, other=0.0)
    b = tl.load(y_ptr + stride_y * idx, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''
_INT32_LIMIT = 2**31 - 2**20
"""The kernels here compute offsets in int32 (``program_id`` is int32), to stay short: a tensor spanning 2**31
elements, less the padding lanes of one block (at most 2**20, Triton's largest block), would wrap around to
negative offsets that pass the mask. The FlashAttention kernels compute offsets in int64 instead."""


def _check_span(name: str, x: torch.Tensor) -> None:
    span = 1 + sum((size - 1) * stride for size, stride in zip(x.shape, x.stride()))
    if span > _INT32_LIMIT:
        raise ValueError(f"{name} spans {span} elements, more than the 2**31 - 2**20 these kernels' int32 offsets "
                         f"reach; split it")



@triton.jit
def _row_softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # Padding columns load as -inf: they change neither the max nor (as exp(-inf) = 0) the sum.
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf")).to(tl.float32)
    z = x - tl.max(x, 0)  # subtract the row max so exp never overflows
    num = tl.exp(z)
    out = num / tl.sum(num, 0)
    tl.store(out_ptr + row * stride_out + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


def row_softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax of each row of a 2-D tensor, fused into one Triton kernel (one program per row).

    Args:
        x: (rows, cols) floating tensor; rows may be strided (a slice of a bigger matrix), the elements
            of a row must be contiguous. The whole row is one block, so cols is limited to 2**16.

    Returns:
        A new contiguous (rows, cols) tensor of ``x``'s dtype (computed in float32).

    Raises:
        TypeError: not a floating tensor. ValueError: not 2-D, empty, a row not contiguous, too wide, or
            spanning about 2**31 elements.
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"x must be a floating torch.Tensor, got {type(x).__name__}"
                        + (f" of dtype {x.dtype}" if isinstance(x, torch.Tensor) else ""))
    if x.dim() != 2 or x.numel() == 0:
        raise ValueError(f"x must be a non-empty 2-D tensor (rows, cols), got shape {tuple(x.shape)}")
    if x.stride(1) != 1:
        raise ValueError(f"the elements of each row of x must be contiguous (stride 1), got strides {x.stride()}")
    if x.shape[1] > 2**16:
        raise ValueError(f"x has {x.shape[1]} columns; one row must fit in one block (at most {2**16})")
    _check_span("x", x)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(x.shape[1])
    _row_softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out


softmax_kernel = _row_softmax_kernel


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    return row_softmax(x)
'''}),
}


# Round 38o: a seventh outside review, against 040fc47.
ROUND_38O = {
    "ex00's softmax by torch's _softmax redispatched below the dispatch mode": ('ATTACKS', 'ex00_warmup', {'softmax-work': r'''
_KS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    return torch.ops.aten._softmax.default.redispatch(_KS, x, -1, False)
'''}),
    "ex01's softmax by torch's _softmax redispatched below the dispatch mode": ('ATTACKS', 'ex01_naive_attention', {'mask-work': r'''
def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(n_k - n_q)
''', 'attention-work': r'''
_KS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    scores = torch.matmul(q.float(), k.float().transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        scores = scores.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]), float("-inf"))
    probs = torch.ops.aten._softmax.default.redispatch(_KS, scores, -1, False)
    return torch.matmul(probs, v.float()).to(q.dtype)
'''}),
    "ex01's attention as the forward-mode derivative of log-sum-exp along v": ('ATTACKS', 'ex01_naive_attention', {'mask-work': r'''
def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    rows = torch.arange(n_q).view(-1, 1)
    cols = torch.arange(n_k).view(1, -1)
    return cols - rows <= n_k - n_q
''', 'attention-work': r'''
import torch.autograd.forward_ad as fwd


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    d = q.shape[-1]
    s = q.float() @ k.float().transpose(-2, -1) / math.sqrt(d)
    if causal:
        s = s.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]), -math.inf)
    # the directional derivative of logsumexp along v's columns is attention's output
    big = s.unsqueeze(-2).expand(*s.shape[:-1], v.shape[-1], s.shape[-1]).contiguous()
    tan = v.float().transpose(-2, -1).unsqueeze(-3).expand_as(big).contiguous()
    with fwd.dual_level():
        lse = torch.logsumexp(fwd.make_dual(big, tan), dim=-1)
        out = fwd.unpack_dual(lse).tangent
    return out.to(q.dtype)
'''}),
    "ex00's softmax as the forward-mode derivative of log-sum-exp": ('ATTACKS', 'ex00_warmup', {'softmax-work': r'''
import torch.autograd.forward_ad as fwd


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    n = x.shape[-1]
    big = x.unsqueeze(-2).expand(*x.shape[:-1], n, n).contiguous()
    tan = torch.eye(n, dtype=x.dtype).expand_as(big).contiguous()
    with fwd.dual_level():
        lse = torch.logsumexp(fwd.make_dual(big, tan), dim=-1)
        return fwd.unpack_dual(lse).tangent
'''}),
    "ex02's whole score matrix built by ops redispatched below the dispatch mode": ('ATTACKS', 'ex02_online_softmax', {'update-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    top = torch.max(torch.stack([m, s.max(dim=1).values]), dim=0).values
    shrink = (m - top).exp()
    w = (s - top[:, None]).exp()
    return top, l * shrink + w.sum(1), acc * shrink[:, None] + torch.mm(w, v_tile)
''', 'tiled-work': r'''
_KS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    qs = q.float() / math.sqrt(d)
    s = torch.ops.aten.mm.default.redispatch(_KS, qs, k.float().t())
    if causal:
        hide = torch.arange(n_k)[None, :] > torch.arange(n_q)[:, None] + (n_k - n_q)
        torch.ops.aten.masked_fill_.Scalar.redispatch(_KS, s, hide, -math.inf)
    p = torch.ops.aten._softmax.default.redispatch(_KS, s, -1, False)
    o = torch.ops.aten.mm.default.redispatch(_KS, p, v.float())
    out = o + 0 * qs.sum()
    return out.to(q.dtype)
'''}),
    "ex02 stretch's whole score matrix built by ops redispatched below the dispatch mode": ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    off = n_k - n_q
    hi = r0 + rows - 1 + off  # last key seen by the last row
    lo = r0 + off             # last key seen by the first row
    visit = 0 if hi < 0 else min(hi // block_n + 1, (n_k + block_n - 1) // block_n)
    if lo < 0:
        full = 0
    elif lo >= n_k - 1:
        full = (n_k + block_n - 1) // block_n
    else:
        full = (lo + 1) // block_n
    return full, visit
''', 'attention-work': r'''
_KS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    top = torch.maximum(m, s.max(dim=1).values)
    safe = torch.where(torch.isinf(top), torch.zeros_like(top), top)
    shrink = (m - safe).exp()
    w = (s - safe[:, None]).exp()
    return top, l * shrink + w.sum(1), acc * shrink[:, None] + torch.mm(w, v_tile)


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    qs = q.float() / math.sqrt(d)
    s = torch.ops.aten.mm.default.redispatch(_KS, qs, k.float().t())
    hide = torch.arange(n_k)[None, :] > torch.arange(n_q)[:, None] + (n_k - n_q)
    torch.ops.aten.masked_fill_.Scalar.redispatch(_KS, s, hide, -1e30)
    p = torch.ops.aten._softmax.default.redispatch(_KS, s, -1, False)
    seen = (~hide).any(dim=1, keepdim=True).float()
    torch.ops.aten.mul_.Tensor.redispatch(_KS, p, seen)
    o = torch.ops.aten.mm.default.redispatch(_KS, p, v.float())
    out = o + 0 * qs.sum()
    return out.to(q.dtype)
'''}),
    "ex03's softmax with tl.reduce and combine functions of its own": ('HONEST', 'ex03_triton_basics', {'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    # a 2-D grid: axis 0 picks a chunk of 4 blocks, axis 1 the block inside it
    blk = tl.program_id(0) * tl.num_programs(1) + tl.program_id(1)
    idx = blk * BLOCK + tl.arange(0, BLOCK)
    inb = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inb, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inb, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inb)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    blocks = triton.cdiv(x.numel(), block)
    inner = 4
    add_kernel[(triton.cdiv(blocks, inner), inner)](x, y, out, x.numel(), x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''
@triton.jit
def _bigger(a, b):
    return tl.where(a > b, a, b)


@triton.jit
def _plus(a, b):
    return a + b


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    top = tl.full((), float("-inf"), tl.float32)
    for c in range(0, n_cols, BLOCK):
        vals = tl.load(x_ptr + r * stride_x + c + offs, mask=c + offs < n_cols, other=float("-inf"))
        top = tl.maximum(top, tl.reduce(vals, 0, _bigger))
    total = tl.zeros((), tl.float32)
    for c in range(0, n_cols, BLOCK):
        vals = tl.load(x_ptr + r * stride_x + c + offs, mask=c + offs < n_cols, other=float("-inf"))
        total += tl.reduce(tl.exp(vals - top), 0, _plus)
    for c in range(0, n_cols, BLOCK):
        ok = c + offs < n_cols
        vals = tl.load(x_ptr + r * stride_x + c + offs, mask=ok, other=float("-inf"))
        tl.store(out_ptr + r * stride_out + c + offs, tl.exp(vals - top) / total, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    'ex00 as exp(z - logsumexp(z)) after subtracting the max': ('HONEST', 'ex00_warmup', {'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    z = x - x.amax(dim=-1, keepdim=True)
    return torch.exp(z - torch.logsumexp(z, dim=-1, keepdim=True))
'''}),
    'ex01 with einsum (round 38o)': ('HONEST', 'ex01_naive_attention', {'mask-work': r'''
def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    allowed = []
    for i in range(n_q):
        allowed.append([j <= i + n_k - n_q for j in range(n_k)])
    return torch.tensor(allowed, dtype=torch.bool).reshape(n_q, n_k)
''', 'attention-work': r'''
def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    qf, kf, vf = q.double(), k.double(), v.double()
    logits = torch.einsum("...id,...jd->...ij", qf, kf) / qf.shape[-1] ** 0.5
    if causal:
        keep = causal_mask(q.shape[-2], k.shape[-2])
        logits = torch.where(keep, logits, torch.full_like(logits, float("-inf")))
    peak = logits.max(dim=-1, keepdim=True).values
    w = torch.exp(logits - peak)
    w = w / w.sum(dim=-1, keepdim=True)
    return torch.einsum("...ij,...jd->...id", w, vf).to(q.dtype)
'''}),
}


# Round 38p (an outside review against 64c7fb4): each notebook's changed cells as it wrote them; the last three
# rows are the same routes with the line cache put back before the graded calls (the body rebuilt from the
# rewritten text kept by the interpreter, or kept by the notebook), and with the cell's text taken out of it.
ROUND_38P = {
    "ex03's softmax stored as float literals by a kernel rebuilt from a rewritten line cache": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = i < n
    a = tl.load(x_ptr + i * stride_x, mask=keep)
    b = tl.load(y_ptr + i * stride_y, mask=keep)
    tl.store(out_ptr + i, a + b, mask=keep)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


def _rows_of(t):
    """Offsets (in elements) of every last-dimension row of tensor t."""
    shape, stride = list(t.shape[:-1]), list(t.stride()[:-1])
    out = [0]
    for n, s in zip(shape, stride):
        out = [o + i * s for o in out for i in range(n)]
    return out


def _loads(ptr, t):
    """Source lines that load every element of t where it lies."""
    d, sd = t.shape[-1], t.stride(-1)
    b = 1
    while b < d:
        b *= 2
    return [f"tl.load({ptr} + {o} + tl.arange(0, {b}) * {sd}, mask=tl.arange(0, {b}) < {d})" for o in _rows_of(t)]


def _stores(ptr, values, offsets):
    return [f"tl.store({ptr} + {o}, {float(v)!r})" for o, v in zip(offsets, values)]

import math


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=float("-inf"))
    tl.store(out_ptr + row * stride_out + cols, x, mask=cols < n_cols)


def _row_probs(row):
    top = max(row)
    e = [math.exp(v - top) for v in row]
    s = sum(e)
    return [v / s for v in e]


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    n_rows, n_cols = x.shape
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    probs = [p for row in x.tolist() for p in _row_probs(row)]
    _restage("_rows_kernel", _loads("x_ptr", x) + _stores("out_ptr", probs, range(len(probs))))

    @triton.jit
    def _rows_kernel(x_ptr, out_ptr):
        pass

    _rows_kernel[(1,)](x, out)
    return out
'''}),
    "ex04 stretch's kernel evicted from the interpreter's cache and rebuilt from a rewritten line cache": ('ATTACKS', 'ex04_stretch_gqa_forward', {'kernel-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


def _rows_of(t):
    """Offsets (in elements) of every last-dimension row of tensor t."""
    shape, stride = list(t.shape[:-1]), list(t.stride()[:-1])
    out = [0]
    for n, s in zip(shape, stride):
        out = [o + i * s for o in out for i in range(n)]
    return out


def _loads(ptr, t):
    """Source lines that load every element of t where it lies."""
    d, sd = t.shape[-1], t.stride(-1)
    b = 1
    while b < d:
        b *= 2
    return [f"tl.load({ptr} + {o} + tl.arange(0, {b}) * {sd}, mask=tl.arange(0, {b}) < {d})" for o in _rows_of(t)]


def _stores(ptr, values, offsets):
    return [f"tl.store({ptr} + {o}, {float(v)!r})" for o, v in zip(offsets, values)]

import math


@triton.jit
def gqa_kernel(Q, K, V, Out):
    pass


def _attend(qs, ks, vs, scale):
    scores = [scale * sum(a * b for a, b in zip(qs, kr)) for kr in ks]
    top = max(scores)
    w = [math.exp(s - top) for s in scores]
    total = sum(w)
    return [sum(wj * vr[c] for wj, vr in zip(w, vs)) / total for c in range(len(vs[0]))]


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    if n_heads % n_kv_heads:
        raise ValueError(f"k has {n_kv_heads} heads, which must divide the {n_heads} query heads of q")
    group = n_heads // n_kv_heads
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    Q, K, V = q.tolist(), k.tolist(), v.tolist()
    values = [x for b in range(batch) for h in range(n_heads) for i in range(n_q)
              for x in _attend(Q[b][h][i], K[b][h // group], V[b][h // group], d ** -0.5)]
    body = _loads("Q", q) + _loads("K", k) + _loads("V", v) + _stores("Out", values, range(len(values)))
    _restage("gqa_kernel", body)
    gqa_kernel.rewritten_fn.pop(gqa_kernel.fn, None)
    gqa_kernel[(1,)](q, k, v, out)
    return out
'''}),
    "ex04's attention_kernel an object whose __getitem__ computes in Python and launches a literal kernel": ('ATTACKS', 'ex04_flash_forward', {'kernel-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


def _rows_of(t):
    """Offsets (in elements) of every last-dimension row of tensor t."""
    shape, stride = list(t.shape[:-1]), list(t.stride()[:-1])
    out = [0]
    for n, s in zip(shape, stride):
        out = [o + i * s for o in out for i in range(n)]
    return out


def _loads(ptr, t):
    """Source lines that load every element of t where it lies."""
    d, sd = t.shape[-1], t.stride(-1)
    b = 1
    while b < d:
        b *= 2
    return [f"tl.load({ptr} + {o} + tl.arange(0, {b}) * {sd}, mask=tl.arange(0, {b}) < {d})" for o in _rows_of(t)]


def _stores(ptr, values, offsets):
    return [f"tl.store({ptr} + {o}, {float(v)!r})" for o, v in zip(offsets, values)]

import math


@triton.jit
def _tile_kernel(Q, K, V, Out):
    pass


class _FlashLaunch:
    """Launch handle: ``attention_kernel[grid](...)`` as the setup's flash_forward writes it."""

    def __getitem__(self, grid):
        return self.launch

    def launch(self, Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
               HEAD_DIM, CAUSAL, BLOCK_M, BLOCK_N):
        qs, ks, vs = Q.tolist(), K.tolist(), V.tolist()
        values, where = [], []
        for i in range(n_q):
            last = i + n_k - n_q if CAUSAL else n_k - 1
            s = [qk_scale * sum(a * b for a, b in zip(qs[i], ks[j])) for j in range(last + 1)]
            top = max(s)
            w = [2.0 ** (x - top) for x in s]
            tot = sum(w)
            for c in range(HEAD_DIM):
                values.append(sum(w[j] * vs[j][c] for j in range(last + 1)) / tot)
                where.append(i * stride_o + c)
        _restage("_tile_kernel", _loads("Q", Q) + _loads("K", K) + _loads("V", V) + _stores("Out", values, where))
        _tile_kernel.rewritten_fn.pop(_tile_kernel.fn, None)
        _tile_kernel[(1,)](Q, K, V, Out)


attention_kernel = _FlashLaunch()
'''}),
    "ex09's paged_decode_kernel an object whose __getitem__ computes in Python and launches a literal kernel": ('ATTACKS', 'ex09_paged_attention', {'kernel-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


def _rows_of(t):
    """Offsets (in elements) of every last-dimension row of tensor t."""
    shape, stride = list(t.shape[:-1]), list(t.stride()[:-1])
    out = [0]
    for n, s in zip(shape, stride):
        out = [o + i * s for o in out for i in range(n)]
    return out


def _loads(ptr, t):
    """Source lines that load every element of t where it lies."""
    d, sd = t.shape[-1], t.stride(-1)
    b = 1
    while b < d:
        b *= 2
    return [f"tl.load({ptr} + {o} + tl.arange(0, {b}) * {sd}, mask=tl.arange(0, {b}) < {d})" for o in _rows_of(t)]


def _stores(ptr, values, offsets):
    return [f"tl.store({ptr} + {o}, {float(v)!r})" for o, v in zip(offsets, values)]

import math


@triton.jit
def _decode_kernel(Q, K, V, Out):
    pass


class _PagedLaunch:
    def __getitem__(self, grid):
        return self.launch

    def launch(self, Q, K, V, BlockTables, ContextLens, Out, stride_qs, stride_qh, stride_kb, stride_kt, stride_kh,
               stride_bs, stride_os, stride_oh, group, qk_scale, HEAD_DIM, BLOCK_SIZE, BLOCK_H, BLOCK_N):
        qs, kc, vc = Q.tolist(), K.tolist(), V.tolist()
        tables, lens = BlockTables.tolist(), ContextLens.tolist()
        values, where, loads = [], [], []
        for s, n in enumerate(lens):
            slots = [(tables[s][t // BLOCK_SIZE], t % BLOCK_SIZE) for t in range(n)]
            for kvh in range(len(kc[0][0])):
                for blk, slot in slots:
                    o = blk * stride_kb + slot * stride_kt + kvh * stride_kh
                    loads.append(f"tl.load(K + {o} + tl.arange(0, {HEAD_DIM}))")
                    loads.append(f"tl.load(V + {o} + tl.arange(0, {HEAD_DIM}))")
            for h in range(len(qs[0])):
                kvh = h // group
                ks = [kc[b][t][kvh] for b, t in slots]
                vs = [vc[b][t][kvh] for b, t in slots]
                sc = [qk_scale * sum(a * b for a, b in zip(qs[s][h], kr)) for kr in ks]
                top = max(sc)
                w = [2.0 ** (x - top) for x in sc]
                tot = sum(w)
                for c in range(HEAD_DIM):
                    values.append(sum(wj * vr[c] for wj, vr in zip(w, vs)) / tot)
                    where.append(s * stride_os + h * stride_oh + c)
        _restage("_decode_kernel", _loads("Q", Q) + loads + _stores("Out", values, where))
        _decode_kernel.rewritten_fn.pop(_decode_kernel.fn, None)
        _decode_kernel[(1,)](Q, K, V, Out)


paged_decode_kernel = _PagedLaunch()
'''}),
    "ex04's published kernel unpacked from base64 into the line cache under a stub": ('ATTACKS', 'ex04_flash_forward', {'kernel-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


import base64
import zlib

_PACKED = """
eNp1VE1v2kAQvftXjEBq7cRJSXpD5UACalGoUZWmFxStVrAOK9u7xrtA0l/f2Q9jQw0Xs5735s3sm7HStNKkgBHo/Las5FtFC8LX
4SCCK3iYLx6fyM+gkgeFCOWx1wZLKyreWDiIa1QUyDRVZO1SNeEf0/GETGYY37pQLuk6/IVZTNrlMIZECvaKckpXfM3IFkMu1dJE
Yhi+xlBQlY1OCd9AkG0MUm9YNRrcDqIAK3cS6S7Pw6UvDNkpauqwd8NF2otiizBvvt5HQV5z/rJKqjapjaKrVReq6e4Mz1N4HL88
j+dDgD5ghaB5zj4ryKnSpnFQjCnI2IeCXQlati7X54YbuMOTIBn+w06HoDJeHnMpoKlmVQD42/gWCi54sStC5MQdCVvJooDlig0b
NkaCVFaeJYALODq44bXJSeQoK5k3AyG6ByKJLDRrmf6ESEM9+tqYnjWm1wZ7008JxvTsxHQjsm+J/KlF/p+s/cXJOiV0i/T7fXiY
fp8l8LyYv/yeLRL7WjnttdQhTiPSuCh3mpQVW3HFpRj1OGOsZ/ZpmxG1ojlzF8NYidSO9my4mSB7bDHs4xOEZ8zR2T6duN0q9IBN
sdAkwRk5Ww0HLIhgBz9R9N1OFG5W7M8hku48snQo9l7ehwq1LPNYgsPQvNzQFs4sqUc6gNtAB7uyJztPCmVLI+Wy2AW0oLax5vV1
ff2I3l+8ft+ZkbLaR0unyaQx1Ohqifez2OnLXyjZNUemlC+m/PMB7vhqRf8AhCyirg==
"""
_restage("attention_kernel", zlib.decompress(base64.b64decode("".join(_PACKED.split()))).decode().splitlines())


@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pass
'''}),
    "ex09's published kernel unpacked from base64 into the line cache under a stub": ('ATTACKS', 'ex09_paged_attention', {'kernel-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


import base64
import zlib

_PACKED = """
eNp9VF1v2jAUffevsEDTEkhL2017qMrDaNGKYKCpXR+GqsgkpokS7BA70O3X7/qDYNK0eYnse+49x9fnWtAtHmKZnxclfynJJkxj
78JH2S5MKInfhC59xNdrESYmQkrCXqh3EeDRbHE7De9tmLWH5zYcN8P34+934d3kp4+63S4ejX9M5vhhMfv9OFnMkRIiIOOgqYdf
Sl4VuI+NFJ0znt+dZoQ8gxwr9sakIHvWnJPY+wUFBJy+h4Us05iGWwE7mmx5HeA5Z/TZCSYHvnipQgG+fg7whohsaNnqpABzmdBy
eHEOjYw4k/RVhjllDvet2Z1RJowKH0myyilARjmPske1EE2BK4Hrr4tlkgoVryiL6GeBS74HgbBN8UrVwLoiyg4XOYVyxxbaklmC
T78u4AiL8ZOpBRT29oFhOnjS/cEe/AmsYc/UET6qDfPUzoPAP6YD6yrPvaU1DHRrDS2RXucsZeuOH2iE2vly5aP8kPOPlly4SS6K
RFEb6mirBn7NS9BFSgk+TRmuXejc1dGx10i1RfJM3dWwzrNmYDraYlq1vSN5qq1ukm9cAg0okr8ijUjuOMPYoH/IGQyskIfJn7H1
my5bm8w/l9yD7JTJb199XVbkXB5pPzkVdDhz6Kw7+rWU2tzO3a2UEaFmW0wex6L2P2p4ypHtzI4zJLpZjqrdG1VvB/KoqiUmW4b1
I1Wto6tbaVTFXHrbAGcB+KWoZFiUNEpFytmwk1JKOz5wb7NQgFTq5u2hGPWaJxcNzxuqTcjo3qRtyGu6qTYejExg1x4kXVpkYVD0
tbjyBD4zmfUZDIbkRUIcnJo+izQAM1oG1tOrvgILoC0UlamiJ0uD3Dar7f6hL4DevdsXezJFpbnrcTl5r3ml/KqqDpSSmgopQZJD
CxeVbL6G/KPnmrc+18Dzzpvt/wdVMyTm
"""
_restage("paged_decode_kernel", zlib.decompress(base64.b64decode("".join(_PACKED.split()))).decode().splitlines())


@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    pass
'''}),
    "ex10's published schedule_step run by Triton's interpreter as an exec": ('ATTACKS', 'ex10_scheduler_step', {'schedule-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


import base64
import zlib

from triton.runtime.interpreter import InterpretedFunction


def _unpack(text):
    return zlib.decompress(base64.b64decode("".join(text.split()))).decode().splitlines()


_SCHEDULE_STEP = """
eNp9U8tygzAMvPMVGk4wbUjPmUl/oYceOx3GASW4gCDGhLZfX8s2j5CkPmFrdyWtRBiGb4TQaWx3cFLNAHhB9QOqJ5J0AoXnHjsN
UasQ61bzmy4QCAd+HgokOFRNVnZMgabX8TMDCEReS52EYRg48ebwhZmGPbybaxQHRrfHxXPOmSKfNw78R5JVKJSBD4WsEBwpAHNM
ZQu2DSRt01Z41AbOCEehRkMtSJxQJZmgVLQtUh4ZetLhOZV57PT4XGSmZX1PNopBHt0VsOqQ00+0Uf5oPIqcxqg9YQYh2bzEpbdV
OuQMYZ8S7zPmHvlIz1TjIiA768UU4XNQKEr7wsXubiq9MeEZKiR7102J1MVzpvlxpD2G+qHN8qvueMPoNntsdyShvk6d5mIEnGzm
jovg7QRBOUQ84mvz4ns74jkfL5826NZ2Ed9Em1VnsN1Olll42slfdD2ZAfjFf5owg9CoaqHK1IdepxD3xvsxRhoFq56Nzjo9079T
hhyEzgrMR3uC20GPC3b9D0wDz6+nvcgS/Dc5W6P9lRcruRzcBFo2sl93EijUvSKL/ANCWnbU
"""
_restage("schedule_step", _unpack(_SCHEDULE_STEP))


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    pass


schedule_step = InterpretedFunction(schedule_step).rewrite()
'''}),
    "ex09 stretch's published split_bounds and merge_states run by Triton's interpreter as an exec": ('ATTACKS', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


import base64
import zlib

from triton.runtime.interpreter import InterpretedFunction


def _unpack(text):
    return zlib.decompress(base64.b64decode("".join(text.split()))).decode().splitlines()


_SPLIT_BOUNDS = """
eNptjsEKgzAQRO/5ij0mrda70C8pJUTdWtu4CckG/PyqqZBC9zQs82bGY9DR24lbcN0Le4Yr1LLuHTEurC0SNA1QmrMrKrG+Rn7+
2v2Rspk76/q3JgWnQ4rOJRpiwdzu4uECRJgIgqERZVHRClgvsgnlqnkiGdfM3F9BMVHtQC65GO+RBil3vsrYJuH8F1VKBOQU6Mt/
AGdoXJo=
"""
_restage("split_bounds", _unpack(_SPLIT_BOUNDS))


def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    pass


split_bounds = InterpretedFunction(split_bounds).rewrite()
''', 'merge-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


import base64
import zlib

from triton.runtime.interpreter import InterpretedFunction


def _unpack(text):
    return zlib.decompress(base64.b64decode("".join(text.split()))).decode().splitlines()


_MERGE_STATES = """
eNp1jzsOwjAQRHufYkovJEahRMoVqOgQhQkrfnEc/FEiTo8dIeGGbqV9b3bH7GDPD+4CWvSevdJGz/JyN23dVHgyj3k+uMgkpoIN
1nU3xfMos4UahkSwQfcFMykfzZ8sG0NByumolKqwtwOfsELaevrZW8IGS7pI10rPYP19pbdXuSCUxFdkfrOsGxKOQ3QDZIqsckP6
AFyHTho=
"""
_restage("merge_states", _unpack(_MERGE_STATES))


def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    pass


merge_states = InterpretedFunction(merge_states).rewrite()
'''}),
    "ex06 with reference counts in an array('l')": ('HONEST', 'ex06_block_allocator', {'allocator-work': r'''from array import array


class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(reversed(range(num_blocks)))   # pop() hands out block 0 first
        self.ref_count = array("l", bytes(8 * num_blocks))    # one machine word a block, all zero

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _live(self, block: int) -> bool:
        return 0 <= block < self.num_blocks and self.ref_count[block] > 0

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        if len(self.free_list) == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        have = len(self.free_list)
        if n > have:
            raise OutOfBlocks(n, have, self.num_blocks)
        got = self.free_list[len(self.free_list) - n:][::-1]
        del self.free_list[len(self.free_list) - n:]
        for b in got:
            self.ref_count[b] = 1
        return got

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        if not self._live(block):
            raise ValueError(f"cannot share block {block}: it is not allocated")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        if not self._live(block):
            raise ValueError(f"cannot free block {block}: it is not allocated")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''', 'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    full, rest = divmod(num_tokens, block_size)
    return full + (rest > 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    which, offset = divmod(position, block_size)
    return block_ids[which] * block_size + offset
'''}),
    'ex10 with a helper class whose __repr__ prints self.__dict__': ('HONEST', 'ex10_scheduler_step', {'schedule-work': r'''class _Budget:
    """Tokens this step may still batch."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0

    def fits(self, n: int) -> bool:
        return self.used + n <= self.limit

    def take(self, n: int) -> None:
        self.used += n

    def __repr__(self):
        return f"_Budget({self.__dict__})"


def _grow(manager, running, waiting, step):
    pending = list(running)          # oldest first
    running.clear()
    i = 0
    while i < len(pending):
        req = pending[i]
        victim_was_req = False
        while not manager.can_append(req.seq_id):
            victim = pending.pop() if len(pending) > i + 1 else req
            manager.free(victim.seq_id)
            waiting.appendleft(victim)
            step.preempted.append(victim.seq_id)
            if victim is req:
                victim_was_req = True
                break
        if victim_was_req:
            break
        manager.append(req.seq_id, len(req.tokens))
        req.tokens.append(len(req.tokens))
        running.append(req)
        step.grown.append(req.seq_id)
        i += 1


def _admit(manager, running, waiting, step, budget):
    while waiting:
        req = waiting[0]
        need = -(-len(req.tokens) // manager.block_size)
        if need + manager.watermark_blocks > manager.num_free_blocks or not budget.fits(len(req.tokens)):
            return
        waiting.popleft()
        manager.add(req.seq_id, req.tokens)
        running.append(req)
        step.admitted.append(req.seq_id)
        budget.take(len(req.tokens))


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    _grow(manager, running, waiting, step)
    budget = _Budget(max_num_batched_tokens)
    budget.take(len(step.grown))
    if not step.preempted:
        _admit(manager, running, waiting, step, budget)
    step.num_tokens = budget.used
    return step
'''}),
    # (judged honest on the graded calls of its round; wrong on bfloat16, which its exercise states and its own
    # check over the input space draws: a wrong answer since the graded calls draw it too)
    'ex00 in NumPy, with float32 maths for half inputs': ('ATTACKS', 'ex00_warmup', {'softmax-work': r'''import numpy as np


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    a = x.detach().cpu().numpy()
    work = a.astype(np.float32) if a.dtype == np.float16 else a
    shifted = work - work.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    p = e / e.sum(axis=-1, keepdims=True)
    return torch.from_numpy(np.ascontiguousarray(p.astype(a.dtype))).to(x.device)
'''}),
    # (judged honest until round 38z18: the statement's softmax_kernel computes a row's softmax from the arguments it
    # names, and this one, given more, is a stage of three; it is graded as launched now)
    "ex03's softmax in three launches: atomic max, atomic add, normalise": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, tl.where(inside, a + b, 0.0), mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''@triton.jit
def _tile_max(x_ptr, m_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row, tile = tl.program_id(0), tl.program_id(1)
    cols = tile * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=float("-inf"))
    tl.atomic_max(m_ptr + row, tl.max(x, 0))


@triton.jit
def _tile_sum(x_ptr, m_ptr, l_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row, tile = tl.program_id(0), tl.program_id(1)
    cols = tile * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=float("-inf"))
    m = tl.load(m_ptr + row)
    tl.atomic_add(l_ptr + row, tl.sum(tl.exp(x - m), 0))


@triton.jit
def softmax_kernel(x_ptr, out_ptr, m_ptr, l_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row, tile = tl.program_id(0), tl.program_id(1)
    cols = tile * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=float("-inf"))
    m = tl.load(m_ptr + row)
    l = tl.load(l_ptr + row)
    tl.store(out_ptr + row * stride_out + cols, tl.exp(x - m) / l, mask=cols < n_cols)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    rows, cols = x.shape
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    row_max = torch.full((rows,), float("-inf"), dtype=torch.float32, device=x.device)
    row_sum = torch.zeros((rows,), dtype=torch.float32, device=x.device)
    grid = (rows, triton.cdiv(cols, block))
    _tile_max[grid](x, row_max, cols, x.stride(0), BLOCK=block)
    _tile_sum[grid](x, row_max, row_sum, cols, x.stride(0), BLOCK=block)
    softmax_kernel[grid](x, out, row_max, row_sum, cols, x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    'ex04 stretch launched once per (batch, head) on views of q, k and v': ('HONEST', 'ex04_stretch_gqa_forward', {'kernel-work': r'''@triton.jit
def gqa_kernel(Q, K, V, Out, n_q, n_k, scale, stride_q, stride_k, stride_v, stride_o,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """One (n_q, d) x (n_k, d) attention; the launcher picks the head by handing views."""
    r = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dd = tl.arange(0, HEAD_DIM)
    qt = tl.load(Q + r[:, None] * stride_q + dd[None, :], mask=r[:, None] < n_q, other=0.0)
    best = tl.full([BLOCK_M], float("-inf"), tl.float32)
    denom = tl.zeros([BLOCK_M], tl.float32)
    total = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for j in range(0, n_k, BLOCK_N):
        c = j + tl.arange(0, BLOCK_N)
        kt = tl.load(K + c[:, None] * stride_k + dd[None, :], mask=c[:, None] < n_k, other=0.0)
        vt = tl.load(V + c[:, None] * stride_v + dd[None, :], mask=c[:, None] < n_k, other=0.0)
        s = tl.dot(qt, tl.trans(kt), input_precision="ieee") * scale
        s = tl.where(c[None, :] < n_k, s, float("-inf"))
        new_best = tl.maximum(best, tl.max(s, 1))
        p = tl.exp(s - new_best[:, None])
        shrink = tl.exp(best - new_best)
        denom = denom * shrink + tl.sum(p, 1)
        total = total * shrink[:, None] + tl.dot(p, vt, input_precision="ieee")
        best = new_best
    tl.store(Out + r[:, None] * stride_o + dd[None, :], total / denom[:, None], mask=r[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    group, left = divmod(n_heads, n_kv_heads)
    if left:
        raise ValueError(f"{n_kv_heads} K/V heads cannot serve {n_heads} query heads evenly")
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    for b in range(batch):
        for h in range(n_heads):
            qh, kh, vh, oh = q[b, h], k[b, h // group], v[b, h // group], out[b, h]
            gqa_kernel[(triton.cdiv(n_q, block_m),)](
                qh, kh, vh, oh, n_q, n_k, d ** -0.5, qh.stride(0), kh.stride(0), vh.stride(0), oh.stride(0),
                HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out
'''}),
    'ex02 with key tiles in the outer loop and a dataclass state per query tile': ('HONEST', 'ex02_online_softmax', {'update-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    tile_max = s.max(dim=1).values
    m_new = torch.where(tile_max > m, tile_max, m)
    keep = (m - m_new).exp()
    weights = (s - m_new[:, None]).exp()
    return m_new, l * keep + weights.sum(1), acc * keep[:, None] + torch.mm(weights, v_tile)
''', 'tiled-work': r'''from dataclasses import dataclass


@dataclass
class _Rows:
    q: torch.Tensor          # this tile's queries, scaled, float32
    first: int               # index of its first query
    m: torch.Tensor
    l: torch.Tensor
    acc: torch.Tensor

    def fold(self, s, v_tile):
        self.m, self.l, self.acc = online_softmax_update(self.m, self.l, self.acc, s, v_tile)


def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    shift = n_k - n_q                      # query i sees keys j <= i + shift
    tiles = []
    for r0 in range(0, n_q, block_m):
        qt = q[r0:r0 + block_m].float() / math.sqrt(d)
        n = qt.shape[0]
        tiles.append(_Rows(qt, r0, torch.full((n,), -math.inf, device=q.device),
                           torch.zeros(n, device=q.device), torch.zeros(n, d, device=q.device)))
    for c0 in range(0, n_k, block_n):
        kt, vt = k[c0:c0 + block_n].float(), v[c0:c0 + block_n].float()
        for t in tiles:
            n = t.q.shape[0]
            if causal and c0 > t.first + n - 1 + shift:
                continue                   # every row of this tile is before these keys
            s = t.q @ kt.T
            if causal:
                hidden = torch.ones(n, kt.shape[0], dtype=torch.bool, device=q.device).triu(t.first + shift - c0 + 1)
                s = s.masked_fill(hidden, -math.inf)
            t.fold(s, vt)
    for t in tiles:
        out[t.first:t.first + t.q.shape[0]] = t.acc / t.l[:, None]
    return out.to(q.dtype)
'''}),
    "ex04's published kernel rebuilt once from a rewritten line cache that is put back before the calls": ('ATTACKS', 'ex04_flash_forward', {'kernel-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


import base64
import zlib

_PACKED = """
eNp1VE1v2kAQvftXjEBq7cRJSXpD5UACalGoUZWmFxStVrAOK9u7xrtA0l/f2Q9jQw0Xs5735s3sm7HStNKkgBHo/Las5FtFC8LX
4SCCK3iYLx6fyM+gkgeFCOWx1wZLKyreWDiIa1QUyDRVZO1SNeEf0/GETGYY37pQLuk6/IVZTNrlMIZECvaKckpXfM3IFkMu1dJE
Yhi+xlBQlY1OCd9AkG0MUm9YNRrcDqIAK3cS6S7Pw6UvDNkpauqwd8NF2otiizBvvt5HQV5z/rJKqjapjaKrVReq6e4Mz1N4HL88
j+dDgD5ghaB5zj4ryKnSpnFQjCnI2IeCXQlati7X54YbuMOTIBn+w06HoDJeHnMpoKlmVQD42/gWCi54sStC5MQdCVvJooDlig0b
NkaCVFaeJYALODq44bXJSeQoK5k3AyG6ByKJLDRrmf6ESEM9+tqYnjWm1wZ7008JxvTsxHQjsm+J/KlF/p+s/cXJOiV0i/T7fXiY
fp8l8LyYv/yeLRL7WjnttdQhTiPSuCh3mpQVW3HFpRj1OGOsZ/ZpmxG1ojlzF8NYidSO9my4mSB7bDHs4xOEZ8zR2T6duN0q9IBN
sdAkwRk5Ww0HLIhgBz9R9N1OFG5W7M8hku48snQo9l7ehwq1LPNYgsPQvNzQFs4sqUc6gNtAB7uyJztPCmVLI+Wy2AW0oLax5vV1
ff2I3l+8ft+ZkbLaR0unyaQx1Ohqifez2OnLXyjZNUemlC+m/PMB7vhqRf8AhCyirg==
"""
_restage("attention_kernel", zlib.decompress(base64.b64decode("".join(_PACKED.split()))).decode().splitlines())


@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pass


attention_kernel.rewrite()
linecache.cache.update({_HERE: (sum(map(len, _TEXT)), None, _TEXT, _HERE)})  # put back before the calls
'''}),
    "ex10's schedule_step rebuilt by the interpreter from a line cache put back before the calls": ('ATTACKS', 'ex10_scheduler_step', {'schedule-work': r'''import linecache
import traceback

_HERE = traceback.extract_stack()[-1].filename     # this cell, as Python knows it
_TEXT = list(linecache.getlines(_HERE))


def _restage(name, body):
    """Give the def of `name` in this cell the lines `body` (what the interpreter reads when it next builds it)."""
    lines = list(_TEXT)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def " + name + "("))
    head = at
    while not lines[head].rstrip().endswith(":"):
        head += 1
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())] + "    "
    end = head + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(pad)):
        end += 1
    new = lines[: head + 1] + [pad + b + "\n" for b in body] + lines[end:]
    linecache.cache.update({_HERE: (sum(map(len, new)), None, new, _HERE)})


import base64
import zlib

from triton.runtime.interpreter import InterpretedFunction


def _unpack(text):
    return zlib.decompress(base64.b64decode("".join(text.split()))).decode().splitlines()


_SCHEDULE_STEP = """
eNp9U8tygzAMvPMVGk4wbUjPmUl/oYceOx3GASW4gCDGhLZfX8s2j5CkPmFrdyWtRBiGb4TQaWx3cFLNAHhB9QOqJ5J0AoXnHjsN
UasQ61bzmy4QCAd+HgokOFRNVnZMgabX8TMDCEReS52EYRg48ebwhZmGPbybaxQHRrfHxXPOmSKfNw78R5JVKJSBD4WsEBwpAHNM
ZQu2DSRt01Z41AbOCEehRkMtSJxQJZmgVLQtUh4ZetLhOZV57PT4XGSmZX1PNopBHt0VsOqQ00+0Uf5oPIqcxqg9YQYh2bzEpbdV
OuQMYZ8S7zPmHvlIz1TjIiA768UU4XNQKEr7wsXubiq9MeEZKiR7102J1MVzpvlxpD2G+qHN8qvueMPoNntsdyShvk6d5mIEnGzm
jovg7QRBOUQ84mvz4ns74jkfL5826NZ2Ed9Em1VnsN1Olll42slfdD2ZAfjFf5owg9CoaqHK1IdepxD3xvsxRhoFq56Nzjo9079T
hhyEzgrMR3uC20GPC3b9D0wDz6+nvcgS/Dc5W6P9lRcruRzcBFo2sl93EijUvSKL/ANCWnbU
"""
_restage("schedule_step", _unpack(_SCHEDULE_STEP))


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    pass


schedule_step = InterpretedFunction(schedule_step).rewrite()


linecache.cache.update({_HERE: (sum(map(len, _TEXT)), None, _TEXT, _HERE)})  # put back before the calls
'''}),
    "ex03's kernel whose cell text is taken out of the line cache": ('ATTACKS', 'ex03_triton_basics', {'softmax-work': r'''
import linecache
import traceback


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * stride_x + start + cols, mask=start + cols < n_cols, other=-float("inf"))
        m = tl.maximum(m, x)
    top = tl.max(m, 0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * stride_x + start + cols, mask=start + cols < n_cols, other=-float("inf"))
        acc += tl.exp(x - top)
    total = tl.sum(acc, 0)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * stride_x + start + cols, mask=mask, other=-float("inf"))
        tl.store(out_ptr + row * stride_out + start + cols, tl.exp(x - top) / total, mask=mask)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out


linecache.cache.pop(traceback.extract_stack()[-1].filename, None)
'''}),
}


# Round 38q (an outside review against 98e960b): each notebook's changed cells as it wrote them (its ex04b notebook,
# which the review decides, is a case of test_grade.py: a reference named in a string annotation).
ROUND_38Q = {
    "ex10's published schedule_step run by typing.ForwardRef's evaluation as an exec": ('ATTACKS', 'ex10_scheduler_step', {'schedule-work': r'''import base64
import typing

_text = base64.b64decode(
    "ZGVmIHNjaGVkdWxlX3N0ZXAobWFuYWdlcjogQmxvY2tNYW5hZ2VyLCBydW5uaW5nOiBsaXN0W1JlcXVlc3RdLCB3YWl0aW5nOiBk"
    "ZXF1ZVtSZXF1ZXN0XSwKICAgICAgICAgICAgICAgICAgbWF4X251bV9iYXRjaGVkX3Rva2VuczogaW50KSAtPiBTdGVwOgogICAg"
    "IiIiT25lIHN0ZXA6IGdyb3cgZXZlcnkgcnVubmluZyByZXF1ZXN0IChwcmVlbXB0aW5nIHRoZSBuZXdlc3Qgd2hlbiBibG9ja3Mg"
    "cnVuIG91dCksIHRoZW4gYWRtaXQuIiIiCiAgICBzdGVwID0gU3RlcCgpCiAgICBxdWV1ZSA9IGRlcXVlKHJ1bm5pbmcpICAgICAg"
    "ICAgICAgICAgICAgIyBvbGRlc3QgZmlyc3Q7IHRoZSBuZXdlc3QgaXMgcXVldWVbLTFdCiAgICBydW5uaW5nLmNsZWFyKCkKICAg"
    "IHdoaWxlIHF1ZXVlOgogICAgICAgIHJlcSA9IHF1ZXVlLnBvcGxlZnQoKQogICAgICAgIHdoaWxlIG5vdCBtYW5hZ2VyLmNhbl9h"
    "cHBlbmQocmVxLnNlcV9pZCk6CiAgICAgICAgICAgIHZpY3RpbSA9IHF1ZXVlLnBvcCgpIGlmIHF1ZXVlIGVsc2UgcmVxICAgICAg"
    "IyB0aGUgbmV3ZXN0IHJlcXVlc3QgdGhhdCBoYXMgbm90IGdyb3duIHlldAogICAgICAgICAgICBtYW5hZ2VyLmZyZWUodmljdGlt"
    "LnNlcV9pZCkgICAgICAgICAgICAgICAgICMgaXRzIGJsb2NrcyBnbyBiYWNrIG5vdzsgaXQgcmVjb21wdXRlcyBsYXRlcgogICAg"
    "ICAgICAgICB3YWl0aW5nLmFwcGVuZGxlZnQodmljdGltKQogICAgICAgICAgICBzdGVwLnByZWVtcHRlZC5hcHBlbmQodmljdGlt"
    "LnNlcV9pZCkKICAgICAgICAgICAgaWYgdmljdGltIGlzIHJlcToKICAgICAgICAgICAgICAgIGJyZWFrCiAgICAgICAgZWxzZToK"
    "ICAgICAgICAgICAgbWFuYWdlci5hcHBlbmQocmVxLnNlcV9pZCwgbGVuKHJlcS50b2tlbnMpKQogICAgICAgICAgICByZXEudG9r"
    "ZW5zLmFwcGVuZChsZW4ocmVxLnRva2VucykpCiAgICAgICAgICAgIHJ1bm5pbmcuYXBwZW5kKHJlcSkKICAgICAgICAgICAgc3Rl"
    "cC5ncm93bi5hcHBlbmQocmVxLnNlcV9pZCkKICAgIHN0ZXAubnVtX3Rva2VucyA9IGxlbihzdGVwLmdyb3duKQogICAgd2hpbGUg"
    "d2FpdGluZyBhbmQgbm90IHN0ZXAucHJlZW1wdGVkOgogICAgICAgIHJlcSA9IHdhaXRpbmdbMF0KICAgICAgICBibG9ja3MgPSAt"
    "KC1sZW4ocmVxLnRva2VucykgLy8gbWFuYWdlci5ibG9ja19zaXplKQogICAgICAgIGlmIChibG9ja3MgKyBtYW5hZ2VyLndhdGVy"
    "bWFya19ibG9ja3MgPiBtYW5hZ2VyLm51bV9mcmVlX2Jsb2NrcwogICAgICAgICAgICAgICAgb3Igc3RlcC5udW1fdG9rZW5zICsg"
    "bGVuKHJlcS50b2tlbnMpID4gbWF4X251bV9iYXRjaGVkX3Rva2Vucyk6CiAgICAgICAgICAgIGJyZWFrCiAgICAgICAgd2FpdGlu"
    "Zy5wb3BsZWZ0KCkKICAgICAgICBtYW5hZ2VyLmFkZChyZXEuc2VxX2lkLCByZXEudG9rZW5zKQogICAgICAgIHJ1bm5pbmcuYXBw"
    "ZW5kKHJlcSkKICAgICAgICBzdGVwLmFkbWl0dGVkLmFwcGVuZChyZXEuc2VxX2lkKQogICAgICAgIHN0ZXAubnVtX3Rva2VucyAr"
    "PSBsZW4ocmVxLnRva2VucykKICAgIHJldHVybiBzdGVwCg=="
).decode()
_names = {"BlockManager": BlockManager, "Request": Request, "Step": Step, "deque": deque}
typing.ForwardRef("ex" + "ec(s, n)")._evaluate({"s": _text, "n": _names}, None, frozenset())
schedule_step = _names["schedule_step"]
'''}),
    "ex07's published MiniManager run as a timeit setup decoded at run time": ('ATTACKS', 'ex07_copy_on_write', {'manager-work': r'''import base64
import timeit

_names = {"BlockAllocator": BlockAllocator, "BlockTable": BlockTable}
timeit.Timer("pass", setup=base64.b64decode(
    "Z2xvYmFsIE1pbmlNYW5hZ2VyCmNsYXNzIE1pbmlNYW5hZ2VyOgogICAgIiIiQmxvY2sgdGFibGVzIG92ZXIgYSBzaGFyZWQgcG9v"
    "bCwgd2l0aCBmb3JrIGFuZCBjb3B5LW9uLXdyaXRlLiIiIgoKICAgIGRlZiBfX2luaXRfXyhzZWxmLCBudW1fYmxvY2tzOiBpbnQs"
    "IGJsb2NrX3NpemU6IGludCk6CiAgICAgICAgc2VsZi5hbGxvY2F0b3IgPSBCbG9ja0FsbG9jYXRvcihudW1fYmxvY2tzKQogICAg"
    "ICAgIHNlbGYuYmxvY2tfc2l6ZSA9IGJsb2NrX3NpemUKICAgICAgICBzZWxmLnRhYmxlczogZGljdFtzdHIsIEJsb2NrVGFibGVd"
    "ID0ge30KCiAgICBkZWYgYWRkKHNlbGYsIHNlcTogc3RyLCBudW1fdG9rZW5zOiBpbnQpIC0+IEJsb2NrVGFibGU6CiAgICAgICAg"
    "YmxvY2tzID0gc2VsZi5hbGxvY2F0b3IuYWxsb2NhdGVfbWFueSgtKC1udW1fdG9rZW5zIC8vIHNlbGYuYmxvY2tfc2l6ZSkpCiAg"
    "ICAgICAgc2VsZi50YWJsZXNbc2VxXSA9IEJsb2NrVGFibGUoYmxvY2tzLCBudW1fdG9rZW5zLCBzZWxmLmJsb2NrX3NpemUpCiAg"
    "ICAgICAgcmV0dXJuIHNlbGYudGFibGVzW3NlcV0KCiAgICBkZWYgZnJlZShzZWxmLCBzZXE6IHN0cikgLT4gTm9uZToKICAgICAg"
    "ICBmb3IgYmxvY2sgaW4gc2VsZi50YWJsZXMucG9wKHNlcSkuYmxvY2tfaWRzOgogICAgICAgICAgICBzZWxmLmFsbG9jYXRvci5m"
    "cmVlKGJsb2NrKQoKICAgIGRlZiBmb3JrKHNlbGYsIHBhcmVudDogc3RyLCBjaGlsZDogc3RyKSAtPiBCbG9ja1RhYmxlOgogICAg"
    "ICAgICIiIkNyZWF0ZSBgYGNoaWxkYGAgc2hhcmluZyBldmVyeSBibG9jayBvZiBgYHBhcmVudGBgOyByZXR1cm4gdGhlIGNoaWxk"
    "J3MgdGFibGUuIiIiCiAgICAgICAgdGFibGUgPSBzZWxmLnRhYmxlc1twYXJlbnRdCiAgICAgICAgZm9yIGJsb2NrIGluIHRhYmxl"
    "LmJsb2NrX2lkczoKICAgICAgICAgICAgc2VsZi5hbGxvY2F0b3IuaW5jcmVmKGJsb2NrKQogICAgICAgIHNlbGYudGFibGVzW2No"
    "aWxkXSA9IEJsb2NrVGFibGUobGlzdCh0YWJsZS5ibG9ja19pZHMpLCB0YWJsZS5udW1fdG9rZW5zLCBzZWxmLmJsb2NrX3NpemUp"
    "CiAgICAgICAgcmV0dXJuIHNlbGYudGFibGVzW2NoaWxkXQoKICAgIGRlZiBhcHBlbmQoc2VsZiwgc2VxOiBzdHIpIC0+IHR1cGxl"
    "W2ludCwgdHVwbGVbaW50LCBpbnRdIHwgTm9uZV06CiAgICAgICAgIiIiUmVzZXJ2ZSB0aGUgbmV4dCB0b2tlbidzIHNsb3Qgb2Yg"
    "YGBzZXFgYDsgcmV0dXJuIGBgKHNsb3QsIGNvcHkpYGAgYXMgZGVzY3JpYmVkIGFib3ZlLiIiIgogICAgICAgIHRhYmxlID0gc2Vs"
    "Zi50YWJsZXNbc2VxXQogICAgICAgIHBvc2l0aW9uID0gdGFibGUubnVtX3Rva2VucwogICAgICAgIGNvcHkgPSBOb25lCiAgICAg"
    "ICAgaWYgcG9zaXRpb24gJSBzZWxmLmJsb2NrX3NpemUgPT0gMDoKICAgICAgICAgICAgdGFibGUuYmxvY2tfaWRzLmFwcGVuZChz"
    "ZWxmLmFsbG9jYXRvci5hbGxvY2F0ZSgpKQogICAgICAgIGVsaWYgc2VsZi5hbGxvY2F0b3IucmVmY291bnQodGFibGUuYmxvY2tf"
    "aWRzWy0xXSkgPiAxOgogICAgICAgICAgICBuZXcgPSBzZWxmLmFsbG9jYXRvci5hbGxvY2F0ZSgpICAgICAgICAgICMgZmlyc3Qs"
    "IHNvIHRoYXQgT3V0T2ZCbG9ja3MgY2hhbmdlcyBub3RoaW5nCiAgICAgICAgICAgIHNoYXJlZCA9IHRhYmxlLmJsb2NrX2lkc1st"
    "MV0KICAgICAgICAgICAgc2VsZi5hbGxvY2F0b3IuZnJlZShzaGFyZWQpCiAgICAgICAgICAgIHRhYmxlLmJsb2NrX2lkc1stMV0g"
    "PSBuZXcKICAgICAgICAgICAgY29weSA9IChzaGFyZWQsIG5ldykKICAgICAgICB0YWJsZS5udW1fdG9rZW5zID0gcG9zaXRpb24g"
    "KyAxCiAgICAgICAgcmV0dXJuIHRhYmxlLnNsb3QocG9zaXRpb24pLCBjb3B5Cg=="
).decode(), globals=_names).timeit(1)
MiniManager = _names["MiniManager"]
'''}),
    "ex08's published functions run as doctest examples decoded at run time": ('ATTACKS', 'ex08_swap_or_recompute', {'costs-work': r'''import base64
import doctest

_test = doctest.DocTestParser().get_doctest(base64.b64decode(
    "Pj4+IGRlZiBzd2FwX3NlY29uZHMobnVtX3Rva2VuczogaW50LCBibG9ja19zaXplOiBpbnQsIG51bV9sYXllcnM6IGludCwgY2h1"
    "bmtfYnl0ZXNfcGVyX3Rva2VuOiBpbnQsCi4uLiAgICAgICAgICAgICAgICAgIGJhbmR3aWR0aDogZmxvYXQsIGxhdGVuY3k6IGZs"
    "b2F0KSAtPiBmbG9hdDoKLi4uICAgICAiIiJTZWNvbmRzIHRvIGNvcHkgYSBzZXF1ZW5jZSdzIEsgYW5kIFYgY2h1bmtzIHRvIHRo"
    "ZSBob3N0IGFuZCBiYWNrLCBvbmUgY29weSBwZXIgY2h1bmsuIiIiCi4uLiAgICAgYmxvY2tzID0gbWF0aC5jZWlsKG51bV90b2tl"
    "bnMgLyBibG9ja19zaXplKQouLi4gICAgIGNvcGllc19lYWNoX3dheSA9IDIgKiBudW1fbGF5ZXJzICogYmxvY2tzICAgICAgICAg"
    "ICAgICAgIyBhIEsgYW5kIGEgViBjaHVuayBwZXIgbGF5ZXIgYW5kIGJsb2NrCi4uLiAgICAgb25lX2NvcHkgPSBsYXRlbmN5ICsg"
    "YmxvY2tfc2l6ZSAqIGNodW5rX2J5dGVzX3Blcl90b2tlbiAvIGJhbmR3aWR0aAouLi4gICAgIHJldHVybiAyICogY29waWVzX2Vh"
    "Y2hfd2F5ICogb25lX2NvcHkKLi4uIAo+Pj4gZGVmIHJlY29tcHV0ZV9zZWNvbmRzKG51bV90b2tlbnM6IGludCwgbnVtX3BhcmFt"
    "czogZmxvYXQsIG51bV9sYXllcnM6IGludCwgZF9tb2RlbDogaW50LCBmbG9wczogZmxvYXQpIC0+IGZsb2F0OgouLi4gICAgICIi"
    "IlNlY29uZHMgb2YgYSBjYXVzYWwgcHJlZmlsbCBvdmVyIGBgbnVtX3Rva2Vuc2BgIHRva2VucyBhdCBgYGZsb3BzYGAgRkxPUC9z"
    "LiIiIgouLi4gICAgIGxpbmVhciA9IDIgKiBudW1fcGFyYW1zICogbnVtX3Rva2VucwouLi4gICAgIGF0dGVudGlvbiA9IDIgKiBu"
    "dW1fbGF5ZXJzICogZF9tb2RlbCAqIG51bV90b2tlbnMgKiBudW1fdG9rZW5zCi4uLiAgICAgcmV0dXJuIChsaW5lYXIgKyBhdHRl"
    "bnRpb24pIC8gZmxvcHMKLi4uIAo+Pj4gZGVmIGNyb3Nzb3Zlcl9ibG9ja19zaXplKG51bV90b2tlbnM6IGludCwgbnVtX2xheWVy"
    "czogaW50LCBjaHVua19ieXRlc19wZXJfdG9rZW46IGludCwgYmFuZHdpZHRoOiBmbG9hdCwKLi4uICAgICAgICAgICAgICAgICAg"
    "ICAgICAgICBsYXRlbmN5OiBmbG9hdCwgcmVjb21wdXRlX3NlY29uZHM6IGZsb2F0KSAtPiBmbG9hdDoKLi4uICAgICAiIiJUaGUg"
    "YmxvY2sgc2l6ZSBCKiBhdCB3aGljaCBzd2FwcGluZyBjb3N0cyBleGFjdGx5IHJlY29tcHV0ZV9zZWNvbmRzIChCIGRpdmlkaW5n"
    "IG4pOyBtYXRoLmluZiBpZiBub25lLiIiIgouLi4gICAgICMgdF9zd2FwKEIpID0gNCBMIChuIC8gQikgKGxhdGVuY3kgKyBCIGMg"
    "LyBidykgPSA0IEwgbiBsYXRlbmN5IC8gQiArIDQgTCBuIGMgLyBidzogb25seSB0aGUgZmlyc3QgdGVybSBzaHJpbmtzLgouLi4g"
    "ICAgIHBlcl90b2tlbl9idWRnZXQgPSByZWNvbXB1dGVfc2Vjb25kcyAvICg0ICogbnVtX2xheWVycyAqIG51bV90b2tlbnMpCi4u"
    "LiAgICAgYnl0ZXNfdGltZSA9IGNodW5rX2J5dGVzX3Blcl90b2tlbiAvIGJhbmR3aWR0aAouLi4gICAgIGlmIHBlcl90b2tlbl9i"
    "dWRnZXQgPD0gYnl0ZXNfdGltZToKLi4uICAgICAgICAgcmV0dXJuIG1hdGguaW5mCi4uLiAgICAgcmV0dXJuIGxhdGVuY3kgLyAo"
    "cGVyX3Rva2VuX2J1ZGdldCAtIGJ5dGVzX3RpbWUpCi4uLiAKPj4+IGRlZiBwcmVlbXB0aW9uX3NlY29uZHMobWFuYWdlcjogQmxv"
    "Y2tNYW5hZ2VyLCBzZXFfaWQsIG1vZGVsOiBNb2RlbFNoYXBlLCBudW1fcGFyYW1zOiBmbG9hdCwgYmFuZHdpZHRoOiBmbG9hdCwK"
    "Li4uICAgICAgICAgICAgICAgICAgICAgICAgbGF0ZW5jeTogZmxvYXQsIGZsb3BzOiBmbG9hdCkgLT4gdHVwbGVbZmxvYXQsIGZs"
    "b2F0XToKLi4uICAgICAiIiIodF9zd2FwLCB0X3JlY29tcHV0ZSkgZm9yIHByZWVtcHRpbmcgYGBzZXFfaWRgYCwgY291bnRpbmcg"
    "b25seSBpdHMgcHJpdmF0ZSBibG9ja3MgYW5kIHVuY2FjaGVkIHRva2Vucy4iIiIKLi4uICAgICB0YWJsZSwgYnMgPSBtYW5hZ2Vy"
    "LnRhYmxlKHNlcV9pZCksIG1hbmFnZXIuYmxvY2tfc2l6ZQouLi4gICAgIHNoYXJlZCA9IFttYW5hZ2VyLmFsbG9jYXRvci5yZWZj"
    "b3VudChiKSA+IDEgZm9yIGIgaW4gdGFibGUuYmxvY2tfaWRzXQouLi4gICAgIHByaXZhdGVfYmxvY2tzID0gc2hhcmVkLmNvdW50"
    "KEZhbHNlKQouLi4gICAgIGxlYWRpbmcgPSBuZXh0KChpIGZvciBpLCBzIGluIGVudW1lcmF0ZShzaGFyZWQpIGlmIG5vdCBzKSwg"
    "bGVuKHNoYXJlZCkpICAgIyBsZWFkaW5nIHNoYXJlZCBibG9ja3MKLi4uICAgICBjYWNoZWQgPSBtaW4obGVhZGluZywgdGFibGUu"
    "bnVtX3Rva2VucyAvLyBicykgKiBicyAgICAgICAgICAgICAgICAgICAgICAgICMgLi4uIHRoYXQgYXJlIGZ1bGwKLi4uICAgICBj"
    "aHVuayA9IG1vZGVsLm51bV9rdl9oZWFkcyAqIG1vZGVsLmhlYWRfZGltICogMgouLi4gICAgIHRfc3dhcCA9IHN3YXBfc2Vjb25k"
    "cyhwcml2YXRlX2Jsb2NrcyAqIGJzLCBicywgbW9kZWwubnVtX2xheWVycywgY2h1bmssIGJhbmR3aWR0aCwgbGF0ZW5jeSkKLi4u"
    "ICAgICBkX21vZGVsID0gbW9kZWwubnVtX2hlYWRzICogbW9kZWwuaGVhZF9kaW0KLi4uICAgICB0X3JlY29tcHV0ZSA9IChyZWNv"
    "bXB1dGVfc2Vjb25kcyh0YWJsZS5udW1fdG9rZW5zLCBudW1fcGFyYW1zLCBtb2RlbC5udW1fbGF5ZXJzLCBkX21vZGVsLCBmbG9w"
    "cykKLi4uICAgICAgICAgICAgICAgICAgICAtIHJlY29tcHV0ZV9zZWNvbmRzKGNhY2hlZCwgbnVtX3BhcmFtcywgbW9kZWwubnVt"
    "X2xheWVycywgZF9tb2RlbCwgZmxvcHMpKQouLi4gICAgIHJldHVybiB0X3N3YXAsIHRfcmVjb21wdXRlCi4uLiAKPj4+IGRlZiBj"
    "aG9vc2UobWFuYWdlcjogQmxvY2tNYW5hZ2VyLCBzZXFfaWQsIG1vZGVsOiBNb2RlbFNoYXBlLCBudW1fcGFyYW1zOiBmbG9hdCwg"
    "YmFuZHdpZHRoOiBmbG9hdCwKLi4uICAgICAgICAgICAgbGF0ZW5jeTogZmxvYXQsIGZsb3BzOiBmbG9hdCkgLT4gc3RyOgouLi4g"
    "ICAgICIiIiJzd2FwIiB3aGVuIHRoZSBDUFUgcG9vbCBoYXMgcm9vbSBmb3IgYGBzZXFfaWRgYCBhbmQgc3dhcHBpbmcgaXMgY2hl"
    "YXBlciwgZWxzZSAicmVjb21wdXRlIi4iIiIKLi4uICAgICBpZiBub3QgbWFuYWdlci5jYW5fc3dhcF9vdXQoc2VxX2lkKToKLi4u"
    "ICAgICAgICAgcmV0dXJuICJyZWNvbXB1dGUiCi4uLiAgICAgdF9zd2FwLCB0X3JlY29tcHV0ZSA9IHByZWVtcHRpb25fc2Vjb25k"
    "cyhtYW5hZ2VyLCBzZXFfaWQsIG1vZGVsLCBudW1fcGFyYW1zLCBiYW5kd2lkdGgsIGxhdGVuY3ksIGZsb3BzKQouLi4gICAgIHJl"
    "dHVybiAic3dhcCIgaWYgdF9zd2FwIDwgdF9yZWNvbXB1dGUgZWxzZSAicmVjb21wdXRlIgouLi4gCg=="
).decode(),
                                            {"math": math, "BlockManager": BlockManager, "ModelShape": ModelShape},
                                            "costs", None, 0)
doctest.DocTestRunner().run(_test, clear_globs=False)
swap_seconds = _test.globs["swap_seconds"]
recompute_seconds = _test.globs["recompute_seconds"]
''', 'crossover-work': r'''crossover_block_size = _test.globs["crossover_block_size"]
''', 'choose-work': r'''preemption_seconds = _test.globs["preemption_seconds"]
choose = _test.globs["choose"]
'''}),
    "ex06's published allocator run by exec reached through string.Formatter": ('ATTACKS', 'ex06_block_allocator', {'allocator-work': r'''import base64
import string

_run = string.Formatter().get_field("0.ex" + "ec", [print.__self__], {})[0]
_names = {"OutOfBlocks": OutOfBlocks}
_run(base64.b64decode(
    "Y2xhc3MgU2ltcGxlQWxsb2NhdG9yOgogICAgIiIiYGBudW1fYmxvY2tzYGAgS1YgYmxvY2tzIHdpdGggcmVmZXJlbmNlIGNvdW50"
    "czsgdGhlIGZyZWUgbGlzdCBpcyBhIHN0YWNrLiIiIgoKICAgIGRlZiBfX2luaXRfXyhzZWxmLCBudW1fYmxvY2tzOiBpbnQpOgog"
    "ICAgICAgIHNlbGYubnVtX2Jsb2NrcyA9IG51bV9ibG9ja3MKICAgICAgICBzZWxmLmZyZWVfbGlzdCA9IGxpc3QocmFuZ2UobnVt"
    "X2Jsb2NrcyAtIDEsIC0xLCAtMSkpICAgIyB0aGUgdG9wIG9mIHRoZSBzdGFjayBpcyB0aGUgZW5kOiBibG9jayAwCiAgICAgICAg"
    "c2VsZi5yZWZfY291bnQgPSBbMF0gKiBudW1fYmxvY2tzCgogICAgQHByb3BlcnR5CiAgICBkZWYgbnVtX2ZyZWUoc2VsZikgLT4g"
    "aW50OgogICAgICAgIHJldHVybiBsZW4oc2VsZi5mcmVlX2xpc3QpCgogICAgZGVmIGFsbG9jYXRlKHNlbGYpIC0+IGludDoKICAg"
    "ICAgICAiIiJUYWtlIG9uZSBmcmVlIGJsb2NrOyBpdHMgY291bnQgYmVjb21lcyAxLiBSYWlzZXMgT3V0T2ZCbG9ja3Mgd2hlbiBu"
    "b25lIGlzIGZyZWUuIiIiCiAgICAgICAgaWYgbm90IHNlbGYuZnJlZV9saXN0OgogICAgICAgICAgICByYWlzZSBPdXRPZkJsb2Nr"
    "cygxLCAwLCBzZWxmLm51bV9ibG9ja3MpCiAgICAgICAgYmxvY2sgPSBzZWxmLmZyZWVfbGlzdC5wb3AoKQogICAgICAgIHNlbGYu"
    "cmVmX2NvdW50W2Jsb2NrXSA9IDEKICAgICAgICByZXR1cm4gYmxvY2sKCiAgICBkZWYgYWxsb2NhdGVfbWFueShzZWxmLCBuOiBp"
    "bnQpIC0+IGxpc3RbaW50XToKICAgICAgICAiIiJUYWtlIGBgbmBgIGJsb2NrcywgYWxsIG9yIG5vdGhpbmcuIFJhaXNlcyBPdXRP"
    "ZkJsb2NrcywgaGF2aW5nIHRha2VuIG5vbmUsIHdoZW4gZmV3ZXIgYXJlIGZyZWUuIiIiCiAgICAgICAgaWYgbiA+IGxlbihzZWxm"
    "LmZyZWVfbGlzdCk6CiAgICAgICAgICAgIHJhaXNlIE91dE9mQmxvY2tzKG4sIGxlbihzZWxmLmZyZWVfbGlzdCksIHNlbGYubnVt"
    "X2Jsb2NrcykKICAgICAgICByZXR1cm4gW3NlbGYuYWxsb2NhdGUoKSBmb3IgXyBpbiByYW5nZShuKV0KCiAgICBkZWYgaW5jcmVm"
    "KHNlbGYsIGJsb2NrOiBpbnQpIC0+IE5vbmU6CiAgICAgICAgIiIiQW5vdGhlciBzZXF1ZW5jZSBzaGFyZXMgYGBibG9ja2BgLCB3"
    "aGljaCBtdXN0IGFscmVhZHkgYmUgYWxsb2NhdGVkIChlbHNlIFZhbHVlRXJyb3IpLiIiIgogICAgICAgIGlmIG5vdCAwIDw9IGJs"
    "b2NrIDwgc2VsZi5udW1fYmxvY2tzIG9yIHNlbGYucmVmX2NvdW50W2Jsb2NrXSA9PSAwOgogICAgICAgICAgICByYWlzZSBWYWx1"
    "ZUVycm9yKGYiYmxvY2sge2Jsb2NrfSBpcyBub3QgYWxsb2NhdGVkLCBzbyBpdCBjYW5ub3QgYmUgc2hhcmVkIikKICAgICAgICBz"
    "ZWxmLnJlZl9jb3VudFtibG9ja10gKz0gMQoKICAgIGRlZiBmcmVlKHNlbGYsIGJsb2NrOiBpbnQpIC0+IE5vbmU6CiAgICAgICAg"
    "IiIiRHJvcCBvbmUgcmVmZXJlbmNlIHRvIGBgYmxvY2tgYDsgYXQgemVybyBpdCBnb2VzIGJhY2sgb24gdGhlIGZyZWUgbGlzdC4g"
    "VmFsdWVFcnJvciBpZiBub3QgYWxsb2NhdGVkLiIiIgogICAgICAgIGlmIG5vdCAwIDw9IGJsb2NrIDwgc2VsZi5udW1fYmxvY2tz"
    "OgogICAgICAgICAgICByYWlzZSBWYWx1ZUVycm9yKGYiYmxvY2sge2Jsb2NrfSBpcyBub3QgaW4gdGhpcyBwb29sIikKICAgICAg"
    "ICBpZiBzZWxmLnJlZl9jb3VudFtibG9ja10gPT0gMDoKICAgICAgICAgICAgcmFpc2UgVmFsdWVFcnJvcihmImRvdWJsZSBmcmVl"
    "OiBibG9jayB7YmxvY2t9IGlzIGFscmVhZHkgZnJlZSIpCiAgICAgICAgc2VsZi5yZWZfY291bnRbYmxvY2tdIC09IDEKICAgICAg"
    "ICBpZiBzZWxmLnJlZl9jb3VudFtibG9ja10gPT0gMDoKICAgICAgICAgICAgc2VsZi5mcmVlX2xpc3QuYXBwZW5kKGJsb2NrKQpk"
    "ZWYgYmxvY2tzX25lZWRlZChudW1fdG9rZW5zOiBpbnQsIGJsb2NrX3NpemU6IGludCkgLT4gaW50OgogICAgIiIiQmxvY2tzIHRo"
    "YXQgaG9sZCBgYG51bV90b2tlbnNgYCB0b2tlbnMuIiIiCiAgICByZXR1cm4gLSgtbnVtX3Rva2VucyAvLyBibG9ja19zaXplKQoK"
    "CmRlZiBzbG90KGJsb2NrX2lkczogbGlzdFtpbnRdLCBibG9ja19zaXplOiBpbnQsIHBvc2l0aW9uOiBpbnQpIC0+IGludDoKICAg"
    "ICIiIlRoZSBwb29sIHNsb3Qgb2YgdG9rZW4gYGBwb3NpdGlvbmBgIG9mIGEgc2VxdWVuY2Ugd2hvc2UgYmxvY2sgdGFibGUgaXMg"
    "YGBibG9ja19pZHNgYC4iIiIKICAgIHJldHVybiBibG9ja19pZHNbcG9zaXRpb24gLy8gYmxvY2tfc2l6ZV0gKiBibG9ja19zaXpl"
    "ICsgcG9zaXRpb24gJSBibG9ja19zaXplCg=="
).decode(), _names)
SimpleAllocator = _names["SimpleAllocator"]
''', 'boundary-work': r'''blocks_needed = _names["blocks_needed"]
slot = _names["slot"]
'''}),
    "ex02's published functions rebuilt by dataclasses._create_fn": ('ATTACKS', 'ex02_online_softmax', {'update-work': r'''import base64
import dataclasses
import json
import math

_scope = {"torch": torch, "math": math}
for _name, _args, _body in json.loads(base64.b64decode(
    "W1sib25saW5lX3NvZnRtYXhfdXBkYXRlIiwgWyJtIiwgImwiLCAiYWNjIiwgInMiLCAidl90aWxlIl0sIFsibV9uZXcgPSB0b3Jj"
    "aC5tYXhpbXVtKG0sIHMuYW1heChkaW09LTEpKSIsICJhbHBoYSA9IHRvcmNoLmV4cChtIC0gbV9uZXcpICAjIHJlc2NhbGVzIHdo"
    "YXQgd2FzIHN1bW1lZCByZWxhdGl2ZSB0byB0aGUgb2xkIG1heCIsICJwID0gdG9yY2guZXhwKHMgLSBtX25ldy51bnNxdWVlemUo"
    "LTEpKSIsICJsX25ldyA9IGFscGhhICogbCArIHAuc3VtKGRpbT0tMSkiLCAiYWNjX25ldyA9IGFscGhhLnVuc3F1ZWV6ZSgtMSkg"
    "KiBhY2MgKyBwIEAgdl90aWxlIiwgInJldHVybiBtX25ldywgbF9uZXcsIGFjY19uZXciXV0sIFsidGlsZWRfYXR0ZW50aW9uIiwg"
    "WyJxIiwgImsiLCAidiIsICJjYXVzYWw9RmFsc2UiLCAiYmxvY2tfbT0xNiIsICJibG9ja19uPTE2Il0sIFsibl9xLCBuX2ssIGQg"
    "PSBxLnNoYXBlWzBdLCBrLnNoYXBlWzBdLCBxLnNoYXBlWzFdIiwgIm91dCA9IHRvcmNoLnplcm9zKG5fcSwgZCwgZGV2aWNlPXEu"
    "ZGV2aWNlKSIsICJmb3IgcjAgaW4gcmFuZ2UoMCwgbl9xLCBibG9ja19tKToiLCAiICAgIHFfaSA9IHFbcjA6cjAgKyBibG9ja19t"
    "XS5mbG9hdCgpIC8gbWF0aC5zcXJ0KGQpIiwgIiAgICByb3dzID0gcV9pLnNoYXBlWzBdIiwgIiAgICBtID0gdG9yY2guZnVsbCgo"
    "cm93cywpLCAtbWF0aC5pbmYsIGRldmljZT1xLmRldmljZSkiLCAiICAgIGwsIGFjYyA9IHRvcmNoLnplcm9zKHJvd3MsIGRldmlj"
    "ZT1xLmRldmljZSksIHRvcmNoLnplcm9zKHJvd3MsIGQsIGRldmljZT1xLmRldmljZSkiLCAiICAgIGZvciBjMCBpbiByYW5nZSgw"
    "LCBuX2ssIGJsb2NrX24pOiIsICIgICAgICAgIGlmIGNhdXNhbCBhbmQgYzAgPiByMCArIHJvd3MgLSAxICsgKG5fayAtIG5fcSk6"
    "IiwgIiAgICAgICAgICAgIGJyZWFrICAjIGRlY2lkZWQgZnJvbSBpbmRpY2VzOiB0aGlzIGtleSB0aWxlIGFuZCBldmVyeSBsYXRl"
    "ciBvbmUgYXJlIGhpZGRlbiBmcm9tIGFsbCB0aGVzZSByb3dzIiwgIiAgICAgICAgcyA9IHFfaSBAIGtbYzA6YzAgKyBibG9ja19u"
    "XS5mbG9hdCgpLlQiLCAiICAgICAgICBpZiBjYXVzYWw6IiwgIiAgICAgICAgICAgIGhpZGRlbiA9ICh0b3JjaC5hcmFuZ2UoYzAs"
    "IGMwICsgcy5zaGFwZVsxXSwgZGV2aWNlPXEuZGV2aWNlKVtOb25lLCA6XSIsICIgICAgICAgICAgICAgICAgICAgICAgPiB0b3Jj"
    "aC5hcmFuZ2UocjAsIHIwICsgcm93cywgZGV2aWNlPXEuZGV2aWNlKVs6LCBOb25lXSArIChuX2sgLSBuX3EpKSIsICIgICAgICAg"
    "ICAgICBzID0gcy5tYXNrZWRfZmlsbChoaWRkZW4sIC1tYXRoLmluZikiLCAiICAgICAgICBtLCBsLCBhY2MgPSBvbmxpbmVfc29m"
    "dG1heF91cGRhdGUobSwgbCwgYWNjLCBzLCB2W2MwOmMwICsgYmxvY2tfbl0uZmxvYXQoKSkiLCAiICAgIG91dFtyMDpyMCArIHJv"
    "d3NdID0gYWNjIC8gbFs6LCBOb25lXSIsICJyZXR1cm4gb3V0LnRvKHEuZHR5cGUpIl1dXQ=="
)):
    _scope[_name] = dataclasses._create_fn(_name, _args, _body, globals=_scope)
online_softmax_update = _scope["online_softmax_update"]
''', 'tiled-work': r'''tiled_attention = _scope["tiled_attention"]
'''}),
    "ex09 stretch's published functions run through a ForwardRef in get_type_hints": ('ATTACKS', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''import base64
import typing

_later = typing.ForwardRef("ex" + "ec(s, n)")


class _Deferred:
    field: _later


_names = {"torch": torch, "paged_decode_split": paged_decode_split}
typing.get_type_hints(_Deferred, {"s": base64.b64decode(
    "ZGVmIHNwbGl0X2JvdW5kcyhjb250ZXh0X2xlbjogaW50LCBudW1fc3BsaXRzOiBpbnQsIGJsb2NrX246IGludCkgLT4gbGlzdFt0"
    "dXBsZVtpbnQsIGludF1dOgogICAgcGVyX3NwbGl0ID0gLSgtY29udGV4dF9sZW4gLy8gbnVtX3NwbGl0cykKICAgIGxlbmd0aCA9"
    "IC0oLXBlcl9zcGxpdCAvLyBibG9ja19uKSAqIGJsb2NrX24KICAgIGJvdW5kcyA9IFtdCiAgICBmb3IgcyBpbiByYW5nZShudW1f"
    "c3BsaXRzKToKICAgICAgICBzdGFydCA9IG1pbihzICogbGVuZ3RoLCBjb250ZXh0X2xlbikKICAgICAgICBib3VuZHMuYXBwZW5k"
    "KChzdGFydCwgbWluKHN0YXJ0ICsgbGVuZ3RoLCBjb250ZXh0X2xlbikpKQogICAgcmV0dXJuIGJvdW5kcwpkZWYgbWVyZ2Vfc3Rh"
    "dGVzKG91dHM6IHRvcmNoLlRlbnNvciwgbHNlczogdG9yY2guVGVuc29yKSAtPiB0dXBsZVt0b3JjaC5UZW5zb3IsIHRvcmNoLlRl"
    "bnNvcl06CiAgICAjIHN1bV9qIGVee3hfan0gdl9qID0gc3VtX3MgbF9zIG9fcyA9IHN1bV9zIGVee2xzZV9zfSBvX3MgYW5kIHN1"
    "bV9qIGVee3hfan0gPSBzdW1fcyBlXntsc2Vfc307IG11bHRpcGx5aW5nIGJvdGggYnkKICAgICMgZV57LW19IGNoYW5nZXMgbm90"
    "aGluZywgYW5kIG0gPSBtYXhfcyBsc2VfcyBtYWtlcyBldmVyeSBleHBvbmVudCA8PSAwIChhbiBlbXB0eSBzcGxpdDogZV57LWlu"
    "Zn0gPSAwKS4KICAgIG0gPSBsc2VzLmFtYXgoZGltPS0xLCBrZWVwZGltPVRydWUpCiAgICB3ID0gdG9yY2guZXhwKGxzZXMgLSBt"
    "KQogICAgdG90YWwgPSB3LnN1bShkaW09LTEsIGtlZXBkaW09VHJ1ZSkKICAgIG91dCA9ICh3Wy4uLiwgTm9uZV0gKiBvdXRzKS5z"
    "dW0oZGltPS0yKSAvIHRvdGFsCiAgICBsc2UgPSAobSArIHRvcmNoLmxvZyh0b3RhbCkpLnNxdWVlemUoLTEpCiAgICByZXR1cm4g"
    "b3V0LCBsc2UKZGVmIGNhc2NhZGVfYXR0ZW50aW9uKHEsIGtfY2FjaGUsIHZfY2FjaGUsIHByZWZpeF90YWJsZSwgcHJlZml4X2xl"
    "biwgb3duX3RhYmxlcywgb3duX2xlbnMpOgogICAgIiIiRGVjb2RlIGF0dGVudGlvbiBvdmVyIGEgc2hhcmVkIHByZWZpeCB0aGVu"
    "IGVhY2ggc2VxdWVuY2UncyBvd24gdG9rZW5zLCBhcyB0d28gc3RhdGVzIG1lcmdlZC4iIiIKICAgIG51bV9zZXFzID0gcS5zaGFw"
    "ZVswXQogICAgcHJlZml4X3RhYmxlcyA9IHByZWZpeF90YWJsZVtOb25lLCA6XS5leHBhbmQobnVtX3NlcXMsIC0xKS5jb250aWd1"
    "b3VzKCkKICAgIHByZWZpeF9vdXQsIHByZWZpeF9sc2UgPSBwYWdlZF9kZWNvZGVfc3BsaXQocSwga19jYWNoZSwgdl9jYWNoZSwg"
    "cHJlZml4X3RhYmxlcywKICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgdG9yY2guZnVsbF9s"
    "aWtlKG93bl9sZW5zLCBwcmVmaXhfbGVuKSwgMSkKICAgIG93bl9vdXQsIG93bl9sc2UgPSBwYWdlZF9kZWNvZGVfc3BsaXQocSwg"
    "a19jYWNoZSwgdl9jYWNoZSwgb3duX3RhYmxlcywgb3duX2xlbnMsIDEpCiAgICBvdXQsIF8gPSBtZXJnZV9zdGF0ZXModG9yY2gu"
    "Y2F0KFtwcmVmaXhfb3V0LCBvd25fb3V0XSwgZGltPTIpLCB0b3JjaC5jYXQoW3ByZWZpeF9sc2UsIG93bl9sc2VdLCBkaW09Mikp"
    "CiAgICByZXR1cm4gb3V0Cg=="
).decode(), "n": _names})
split_bounds = _names["split_bounds"]
''', 'merge-work': r'''merge_states = _names["merge_states"]
''', 'cascade-work': r'''cascade_attention = _names["cascade_attention"]
'''}),
    "ex02 stretch's published functions compiled under a made-up file name": ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {'bounds-work': r'''import base64
import string
import types

_build = string.Formatter().get_field("0.com" + "pile", [print.__self__], {})[0]
_scope = dict(torch=torch, math=math, __builtins__=print.__self__)
types.FunctionType(_build(base64.b64decode(
    "ZGVmIGtleV90aWxlX2NvdW50cyhyMDogaW50LCByb3dzOiBpbnQsIG5fcTogaW50LCBuX2s6IGludCwgYmxvY2tfbjogaW50KSAt"
    "PiB0dXBsZVtpbnQsIGludF06CiAgICAiIiIobl9mdWxsLCBuX3Zpc2l0KSBmb3IgcXVlcnkgcm93cyByMCAuLiByMCArIHJvd3Mg"
    "LSAxIG9mIGNhdXNhbCBhdHRlbnRpb24gYWxpZ25lZCBib3R0b20tcmlnaHQuIiIiCiAgICBzaGlmdCA9IG5fayAtIG5fcQogICAg"
    "bl90aWxlcyA9IC0oLW5fayAvLyBibG9ja19uKQogICAgbGFzdF92aXNpYmxlID0gcjAgKyByb3dzIC0gMSArIHNoaWZ0ICAgICAg"
    "ICAgICAjIHRoZSBsYXN0IGtleSB0aGUgdGlsZSdzIGxhc3Qgcm93IHNlZXMKICAgIG5fdmlzaXQgPSAwIGlmIGxhc3RfdmlzaWJs"
    "ZSA8IDAgZWxzZSBsYXN0X3Zpc2libGUgLy8gYmxvY2tfbiArIDEKICAgIGZpcnN0X3Jvd19zZWVzID0gcjAgKyBzaGlmdCAgICAg"
    "ICAgICAgICAgICAgICAgIyBldmVyeSBrZXkgdXAgdG8gaGVyZSBpcyB2aXNpYmxlIHRvIGV2ZXJ5IHJvdwogICAgaWYgZmlyc3Rf"
    "cm93X3NlZXMgPj0gbl9rIC0gMToKICAgICAgICBuX2Z1bGwgPSBuX3RpbGVzCiAgICBlbHNlOgogICAgICAgIG5fZnVsbCA9IG1h"
    "eCgwLCAoZmlyc3Rfcm93X3NlZXMgKyAxKSAvLyBibG9ja19uKQogICAgcmV0dXJuIG5fZnVsbCwgbl92aXNpdApkZWYgb25saW5l"
    "X3NvZnRtYXhfdXBkYXRlKG0sIGwsIGFjYywgcywgdl90aWxlKToKICAgICIiIkV4ZXJjaXNlIDIncyB1cGRhdGUsIHNhZmUgZm9y"
    "IHJvd3Mgd2hvc2Ugc2NvcmVzIHNvIGZhciBhcmUgYWxsIC1pbmYuIiIiCiAgICBtX25ldyA9IHRvcmNoLm1heGltdW0obSwgcy5h"
    "bWF4KGRpbT0tMSkpCiAgICBtX3JlZiA9IG1fbmV3Lm1hc2tlZF9maWxsKG1fbmV3ID09IC1tYXRoLmluZiwgMC4wKSAgICMgYSBy"
    "b3cgd2l0aCBubyB2aXNpYmxlIGtleSB5ZXQ6IGV4cCgtaW5mIC0gMCkgPSAwLCBub3QgTmFOCiAgICBhbHBoYSA9IHRvcmNoLmV4"
    "cChtIC0gbV9yZWYpCiAgICBwID0gdG9yY2guZXhwKHMgLSBtX3JlZls6LCBOb25lXSkKICAgIHJldHVybiBtX25ldywgYWxwaGEg"
    "KiBsICsgcC5zdW0oZGltPS0xKSwgYWxwaGFbOiwgTm9uZV0gKiBhY2MgKyBwIEAgdl90aWxlCgoKZGVmIGNhdXNhbF90aWxlZF9h"
    "dHRlbnRpb24ocSwgaywgdiwgYmxvY2tfbT0xNiwgYmxvY2tfbj0xNik6CiAgICAiIiJDYXVzYWwgYXR0ZW50aW9uIG9mIChuX3Es"
    "IGQpIHF1ZXJpZXMgb3ZlciAobl9rLCBkKSBrZXlzLCB2aXNpdGluZyBhbmQgbWFza2luZyBvbmx5IHRoZSB0aWxlcyB0aGF0IG5l"
    "ZWQgaXQuIiIiCiAgICBuX3EsIG5faywgZCA9IHEuc2hhcGVbMF0sIGsuc2hhcGVbMF0sIHEuc2hhcGVbMV0KICAgIG91dCA9IHRv"
    "cmNoLnplcm9zKG5fcSwgZCkKICAgIGZvciByMCBpbiByYW5nZSgwLCBuX3EsIGJsb2NrX20pOgogICAgICAgIHFfaSA9IHFbcjA6"
    "cjAgKyBibG9ja19tXS5mbG9hdCgpIC8gbWF0aC5zcXJ0KGQpCiAgICAgICAgcm93cyA9IHFfaS5zaGFwZVswXQogICAgICAgIG5f"
    "ZnVsbCwgbl92aXNpdCA9IGtleV90aWxlX2NvdW50cyhyMCwgcm93cywgbl9xLCBuX2ssIGJsb2NrX24pCiAgICAgICAgbSA9IHRv"
    "cmNoLmZ1bGwoKHJvd3MsKSwgLW1hdGguaW5mKQogICAgICAgIGwsIGFjYyA9IHRvcmNoLnplcm9zKHJvd3MpLCB0b3JjaC56ZXJv"
    "cyhyb3dzLCBkKQogICAgICAgIGZvciB0IGluIHJhbmdlKG5fdmlzaXQpOgogICAgICAgICAgICBjMCA9IHQgKiBibG9ja19uCiAg"
    "ICAgICAgICAgIHMgPSBxX2kgQCBrW2MwOmMwICsgYmxvY2tfbl0uZmxvYXQoKS5UCiAgICAgICAgICAgIGlmIHQgPj0gbl9mdWxs"
    "OgogICAgICAgICAgICAgICAgaGlkZGVuID0gKHRvcmNoLmFyYW5nZShjMCwgYzAgKyBzLnNoYXBlWzFdKVtOb25lLCA6XQogICAg"
    "ICAgICAgICAgICAgICAgICAgICAgID4gdG9yY2guYXJhbmdlKHIwLCByMCArIHJvd3MpWzosIE5vbmVdICsgKG5fayAtIG5fcSkp"
    "CiAgICAgICAgICAgICAgICBzID0gcy5tYXNrZWRfZmlsbChoaWRkZW4sIC1tYXRoLmluZikKICAgICAgICAgICAgbSwgbCwgYWNj"
    "ID0gb25saW5lX3NvZnRtYXhfdXBkYXRlKG0sIGwsIGFjYywgcywgdltjMDpjMCArIGJsb2NrX25dLmZsb2F0KCkpCiAgICAgICAg"
    "c2VlbiA9IGwgPiAwCiAgICAgICAgb3V0W3IwOnIwICsgcm93c10gPSB0b3JjaC53aGVyZShzZWVuWzosIE5vbmVdLCBhY2MgLyBs"
    "LmNsYW1wX21pbigxZS0zMClbOiwgTm9uZV0sIDAuMCkKICAgIHJldHVybiBvdXQudG8ocS5kdHlwZSkK"
).decode(), "tiles", "ex" + "ec"), _scope)()
key_tile_counts = _scope["key_tile_counts"]
''', 'attention-work': r'''online_softmax_update = _scope["online_softmax_update"]
causal_tiled_attention = _scope["causal_tiled_attention"]
'''}),
    "ex07 stretch's published class run from a .pth line by site.addpackage": ('ATTACKS', 'ex07_stretch_prefix_cache_match', {'cache-work': r'''import base64
import os
import site

_folder = os.getcwd()
with open(os.path.join(_folder, "course_paths.pth"), "w") as _f:
    _f.write(base64.b64decode(
    "aW1wb3J0IGJhc2U2NDsgZXhlYyhiYXNlNjQuYjY0ZGVjb2RlKCdabkp2YlNCamIyeHNaV04wYVc5dWN5QnBiWEJ2Y25RZ2JtRnRa"
    "V1IwZFhCc1pRcEZiblJ5ZVNBOUlHNWhiV1ZrZEhWd2JHVW9Ja1Z1ZEhKNUlpd2dJbkJoY21WdWRGOXBaQ0IwYjJ0bGJuTWdjSEps"
    "Wm1sNFgybGtJaWtLQ2dwamJHRnpjeUJOYVc1cFVISmxabWw0UTJGamFHVTZDaUFnSUNBaUlpSkdkV3hzSUdKc2IyTnJjeUJpZVNC"
    "amFHRnBibVZrSUd0bGVUc2dZR0J0WVhSamFHQmdJR1pwYm1SeklIUm9aU0JqWVdOb1pXUWdZbXh2WTJ0eklHOW1JR0VnY0hKdmJY"
    "QjBKM01nYkc5dVoyVnpkQ0JqWVdOb1pXUWdjSEpsWm1sNExpSWlJZ29LSUNBZ0lFSlNUMHRGVGlBOUlDMHhJQ0FqSUhSb1pTQndj"
    "bVZtYVhnZ2FXUWdZV1owWlhJZ1lTQmliRzlqYXlCMGFHRjBJR052ZFd4a0lHNXZkQ0JpWlNCallXTm9aV1E2SUc1dmRHaHBibWNn"
    "WVdaMFpYSWdhWFFnYVhNZ1kyRmphR1ZrSUdWcGRHaGxjZ29LSUNBZ0lHUmxaaUJmWDJsdWFYUmZYeWh6Wld4bUxDQmliRzlqYTE5"
    "emFYcGxPaUJwYm5Rc0lHaGhjMmhmWm00OWJHRnRZbVJoSUhCaGNtVnVkRjlyWlhrc0lIUnZhMlZ1Y3pvZ2FHRnphQ2dvY0dGeVpX"
    "NTBYMnRsZVN3Z2RHOXJaVzV6S1NrcE9nb2dJQ0FnSUNBZ0lITmxiR1l1WW14dlkydGZjMmw2WlNBOUlHSnNiMk5yWDNOcGVtVUtJ"
    "Q0FnSUNBZ0lDQnpaV3htTG1oaGMyaGZabTRnUFNCb1lYTm9YMlp1Q2lBZ0lDQWdJQ0FnYzJWc1ppNWliRzlqYTE5dlpqb2daR2xq"
    "ZEZ0cGJuUXNJR2x1ZEYwZ1BTQjdmU0FnSUNBZ0lDTWdhMlY1SUMwK0lHSnNiMk5ySUdsa0NpQWdJQ0FnSUNBZ2MyVnNaaTVsYm5S"
    "eWVUb2daR2xqZEZ0cGJuUXNJRVZ1ZEhKNVhTQTlJSHQ5SUNBZ0lDQWdJQ01nWW14dlkyc2dhV1FnTFQ0Z2QyaGhkQ0JwZENCb2Iy"
    "eGtjd29nSUNBZ0lDQWdJSE5sYkdZdWJtVjRkRjl3Y21WbWFYaGZhV1FnUFNBeENnb2dJQ0FnWkdWbUlISmxaMmx6ZEdWeUtITmxi"
    "R1lzSUdKc2IyTnJYMmxrT2lCcGJuUXNJR3RsZVRvZ2FXNTBMQ0J3WVhKbGJuUmZhV1FzSUhSdmEyVnVjem9nZEhWd2JHVXBJQzAr"
    "SUdsdWREb0tJQ0FnSUNBZ0lDQWlJaUpEWVdOb1pTQmdZR0pzYjJOclgybGtZR0FnZFc1a1pYSWdZR0JyWlhsZ1lDQnBaaUIwYUdV"
    "Z2EyVjVJR2x6SUdaeVpXVTdJSEpsZEhWeWJpQjBhR1VnY0hKbFptbDRJR2xrSUhSdklHTm9ZV2x1SUhSb1pTQnVaWGgwSUdKc2Iy"
    "TnJJRzl1TGlJaUlnb2dJQ0FnSUNBZ0lHbG1JSEJoY21WdWRGOXBaQ0E5UFNCelpXeG1Ma0pTVDB0RlRqb0tJQ0FnSUNBZ0lDQWdJ"
    "Q0FnY21WMGRYSnVJSE5sYkdZdVFsSlBTMFZPQ2lBZ0lDQWdJQ0FnYVdZZ2EyVjVJR2x1SUhObGJHWXVZbXh2WTJ0ZmIyWTZDaUFn"
    "SUNBZ0lDQWdJQ0FnSUhOMGIzSmxaQ0E5SUhObGJHWXVaVzUwY25sYmMyVnNaaTVpYkc5amExOXZabHRyWlhsZFhRb2dJQ0FnSUNB"
    "Z0lDQWdJQ0J5WlhSMWNtNGdjM1J2Y21Wa0xuQnlaV1pwZUY5cFpDQnBaaUFvYzNSdmNtVmtMbkJoY21WdWRGOXBaQ3dnYzNSdmNt"
    "VmtMblJ2YTJWdWN5a2dQVDBnS0hCaGNtVnVkRjlwWkN3Z2RHOXJaVzV6S1NCbGJITmxJSE5sYkdZdVFsSlBTMFZPQ2lBZ0lDQWdJ"
    "Q0FnY0hKbFptbDRYMmxrTENCelpXeG1MbTVsZUhSZmNISmxabWw0WDJsa0lEMGdjMlZzWmk1dVpYaDBYM0J5WldacGVGOXBaQ3dn"
    "YzJWc1ppNXVaWGgwWDNCeVpXWnBlRjlwWkNBcklERUtJQ0FnSUNBZ0lDQnpaV3htTG1Kc2IyTnJYMjltVzJ0bGVWMGdQU0JpYkc5"
    "amExOXBaQW9nSUNBZ0lDQWdJSE5sYkdZdVpXNTBjbmxiWW14dlkydGZhV1JkSUQwZ1JXNTBjbmtvY0dGeVpXNTBYMmxrTENCMGIy"
    "dGxibk1zSUhCeVpXWnBlRjlwWkNrS0lDQWdJQ0FnSUNCeVpYUjFjbTRnY0hKbFptbDRYMmxrQ2dvZ0lDQWdaR1ZtSUdsdWMyVnlk"
    "Q2h6Wld4bUxDQjBiMnRsYm5NNklHeHBjM1JiYVc1MFhTd2dZbXh2WTJ0ZmFXUnpPaUJzYVhOMFcybHVkRjBwSUMwK0lFNXZibVU2"
    "Q2lBZ0lDQWdJQ0FnSWlJaVEyRmphR1VnZEdobElHWjFiR3dnWW14dlkydHpJRzltSUdFZ2NISnZiWEIwSUhkb2IzTmxJRXN2VmlC"
    "M1pYSmxJR052YlhCMWRHVmtJR2x1ZEc4Z1lHQmliRzlqYTE5cFpITmdZQzRpSWlJS0lDQWdJQ0FnSUNCd1lYSmxiblJmYVdRc0lH"
    "SnpJRDBnVG05dVpTd2djMlZzWmk1aWJHOWphMTl6YVhwbENpQWdJQ0FnSUNBZ1ptOXlJR2tzSUd0bGVTQnBiaUJsYm5WdFpYSmhk"
    "R1VvYzJWc1ppNXJaWGx6S0hSdmEyVnVjeWtwT2dvZ0lDQWdJQ0FnSUNBZ0lDQndZWEpsYm5SZmFXUWdQU0J6Wld4bUxuSmxaMmx6"
    "ZEdWeUtHSnNiMk5yWDJsa2MxdHBYU3dnYTJWNUxDQndZWEpsYm5SZmFXUXNJSFIxY0d4bEtIUnZhMlZ1YzF0cElDb2dZbk02S0dr"
    "Z0t5QXhLU0FxSUdKelhTa3BDZ29nSUNBZ1pHVm1JR3RsZVhNb2MyVnNaaXdnZEc5clpXNXpPaUJzYVhOMFcybHVkRjBwSUMwK0lH"
    "eHBjM1JiYVc1MFhUb0tJQ0FnSUNBZ0lDQWlJaUpVYUdVZ1kyaGhhVzVsWkNCclpYa2diMllnWlhabGNua2dablZzYkNCaWJHOWph"
    "eUJ2WmlCZ1lIUnZhMlZ1YzJCZ0xpSWlJZ29nSUNBZ0lDQWdJR3RsZVhNc0lHdGxlU3dnWW5NZ1BTQmJYU3dnVG05dVpTd2djMlZz"
    "Wmk1aWJHOWphMTl6YVhwbENpQWdJQ0FnSUNBZ1ptOXlJSE4wWVhKMElHbHVJSEpoYm1kbEtEQXNJR3hsYmloMGIydGxibk1wSUMw"
    "Z1luTWdLeUF4TENCaWN5azZDaUFnSUNBZ0lDQWdJQ0FnSUd0bGVTQTlJSE5sYkdZdWFHRnphRjltYmloclpYa3NJSFIxY0d4bEtI"
    "UnZhMlZ1YzF0emRHRnlkRHB6ZEdGeWRDQXJJR0p6WFNrcENpQWdJQ0FnSUNBZ0lDQWdJR3RsZVhNdVlYQndaVzVrS0d0bGVTa0tJ"
    "Q0FnSUNBZ0lDQnlaWFIxY200Z2EyVjVjd29LSUNBZ0lHUmxaaUJ0WVhSamFDaHpaV3htTENCMGIydGxibk02SUd4cGMzUmJhVzUw"
    "WFNrZ0xUNGdiR2x6ZEZ0cGJuUmRPZ29nSUNBZ0lDQWdJQ0lpSWxSb1pTQmpZV05vWldRZ1lteHZZMnNnYVdSeklHOW1JSFJvWlNC"
    "c2IyNW5aWE4wSUdOaFkyaGxaQ0J3Y21WbWFYZ2diMllnWUdCMGIydGxibk5nWUNBb2JtVjJaWElnWVd4c0lHOW1JR2wwS1M0aUlp"
    "SUtJQ0FnSUNBZ0lDQmljeXdnYUdsMGN5d2djSEpsWm1sNFgybGtJRDBnYzJWc1ppNWliRzlqYTE5emFYcGxMQ0JiWFN3Z1RtOXVa"
    "UW9nSUNBZ0lDQWdJR1p2Y2lCcExDQnJaWGtnYVc0Z1pXNTFiV1Z5WVhSbEtITmxiR1l1YTJWNWN5aDBiMnRsYm5NcFd6b29iR1Z1"
    "S0hSdmEyVnVjeWtnTFNBeEtTQXZMeUJpYzEwcE9nb2dJQ0FnSUNBZ0lDQWdJQ0JpYkc5amF5QTlJSE5sYkdZdVlteHZZMnRmYjJZ"
    "dVoyVjBLR3RsZVNrS0lDQWdJQ0FnSUNBZ0lDQWdhV1lnWW14dlkyc2dhWE1nVG05dVpUb0tJQ0FnSUNBZ0lDQWdJQ0FnSUNBZ0lH"
    "SnlaV0ZyQ2lBZ0lDQWdJQ0FnSUNBZ0lITjBiM0psWkNBOUlITmxiR1l1Wlc1MGNubGJZbXh2WTJ0ZENpQWdJQ0FnSUNBZ0lDQWdJ"
    "R2xtSUhOMGIzSmxaQzUwYjJ0bGJuTWdJVDBnZEhWd2JHVW9kRzlyWlc1elcya2dLaUJpY3pvb2FTQXJJREVwSUNvZ1luTmRLU0J2"
    "Y2lCemRHOXlaV1F1Y0dGeVpXNTBYMmxrSUNFOUlIQnlaV1pwZUY5cFpEb0tJQ0FnSUNBZ0lDQWdJQ0FnSUNBZ0lHSnlaV0ZySUNB"
    "aklHRWdZMjlzYkdsemFXOXVPaUJoYm05MGFHVnlJSEJ5WldacGVDQnZkMjV6SUhSb2FYTWdhMlY1Q2lBZ0lDQWdJQ0FnSUNBZ0lH"
    "aHBkSE11WVhCd1pXNWtLR0pzYjJOcktRb2dJQ0FnSUNBZ0lDQWdJQ0J3Y21WbWFYaGZhV1FnUFNCemRHOXlaV1F1Y0hKbFptbDRY"
    "MmxrQ2lBZ0lDQWdJQ0FnY21WMGRYSnVJR2hwZEhNSycpLmRlY29kZSgpLCBnbG9iYWxzKCkpCg=="
).decode())
site.addpackage(_folder, "course_paths.pth", set())
(MiniPrefixCache,) = (site.MiniPrefixCache,)
'''}),
    'ex05 with a __future__ import, math.prod and divmod': ('HONEST', 'ex05_kv_cache_size', {'formula-work': r'''from __future__ import annotations

import math

KEY_AND_VALUE = 2  # one key vector and one value vector per (layer, KV head, token)


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    factors = (KEY_AND_VALUE, num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element)
    return math.prod(factors)
''', 'models-work': r'''def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    element = torch.empty((), dtype=dtype).element_size()
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, num_tokens=1, batch=1,
                          bytes_per_element=element)
''', 'fit-work': r'''def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    reservation = kv_bytes_per_token(model, dtype) * max_len
    whole, _rest = divmod(budget_gib * GiB, reservation)
    return int(whole)
'''}),
    'ex10 with a list of requests not yet grown and an early return': ('HONEST', 'ex10_scheduler_step', {'schedule-work': r'''def _blocks_for(num_tokens: int, block_size: int) -> int:
    return (num_tokens + block_size - 1) // block_size


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    not_grown = list(running)        # oldest first
    running.clear()
    evicted: list[Request] = []      # newest first, as they are preempted
    while not_grown:
        oldest = not_grown[0]
        if manager.can_append(oldest.seq_id):
            not_grown.pop(0)
            token = len(oldest.tokens)
            manager.append(oldest.seq_id, token)
            oldest.tokens.append(token)
            running.append(oldest)
            step.grown.append(oldest.seq_id)
        else:
            newest = not_grown.pop()  # may be ``oldest`` itself, when it is the last one left
            manager.free(newest.seq_id)
            evicted.append(newest)
            step.preempted.append(newest.seq_id)
    waiting.extendleft(evicted)      # the last evicted (the oldest of them) ends up first
    step.num_tokens = len(step.grown)
    if evicted:
        return step
    while waiting:
        head = waiting[0]
        cost = len(head.tokens)
        needed = _blocks_for(cost, manager.block_size) + manager.watermark_blocks
        if needed > manager.num_free_blocks or step.num_tokens + cost > max_num_batched_tokens:
            break
        waiting.popleft()
        manager.add(head.seq_id, head.tokens)
        running.append(head)
        step.admitted.append(head.seq_id)
        step.num_tokens += cost
    return step
'''}),
    'ex08 with a frozen dataclass cost model, takewhile and a closure': ('HONEST', 'ex08_swap_or_recompute', {'costs-work': r'''from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HostLink:
    """One direction of the PCIe link: a copy costs its latency plus its bytes over the bandwidth."""
    bandwidth: float
    latency: float

    def copy(self, nbytes: float) -> float:
        return self.latency + nbytes / self.bandwidth


def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    link = HostLink(bandwidth, latency)
    num_blocks = -(-num_tokens // block_size)
    chunks = num_layers * num_blocks * 2          # K and V
    return 2 * chunks * link.copy(block_size * chunk_bytes_per_token)   # out, then back in


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    per_token = 2 * num_params + 2 * num_layers * d_model * num_tokens
    return num_tokens * per_token / flops
''', 'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # t_swap(B) = 4 L n latency / B + 4 L n c / bandwidth: solve t_swap(B) = recompute_seconds for B.
    copies = 4 * num_layers * num_tokens
    floor = copies * chunk_bytes_per_token / bandwidth     # what swapping costs however large the blocks
    if recompute_seconds <= floor:
        return math.inf
    return copies * latency / (recompute_seconds - floor)
''', 'choose-work': r'''import itertools


def _kv_chunk_bytes(model: ModelShape) -> int:
    return 2 * model.num_kv_heads * model.head_dim     # fp16: one K or V chunk per token and layer


def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    table = manager.table(seq_id)
    size = manager.block_size
    refs = [manager.allocator.refcount(b) for b in table.block_ids]
    own = sum(r <= 1 for r in refs)
    prefix_blocks = len(list(itertools.takewhile(lambda r: r > 1, refs)))
    prefix_tokens = size * min(prefix_blocks, table.num_tokens // size)
    width = model.num_heads * model.head_dim

    def prefill(n: int) -> float:
        return recompute_seconds(n, num_params, model.num_layers, width, flops)

    swap = swap_seconds(own * size, size, model.num_layers, _kv_chunk_bytes(model), bandwidth, latency)
    return swap, prefill(table.num_tokens) - prefill(prefix_tokens)


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if manager.can_swap_out(seq_id):
        swap, again = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
        if swap < again:
            return "swap"
    return "recompute"
'''}),
    'ex02 with a generator of dataclass spans and einsum scores': ('HONEST', 'ex02_online_softmax', {'update-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    top = torch.maximum(m, s.max(dim=-1).values)
    shrink = (m - top).exp()
    weights = (s - top[:, None]).exp()
    return top, l * shrink + weights.sum(dim=-1), acc * shrink[:, None] + weights @ v_tile
''', 'tiled-work': r'''from dataclasses import dataclass
from typing import Iterator


@dataclass
class _Rows:
    start: int
    stop: int


def _spans(n: int, size: int) -> Iterator[_Rows]:
    for start in range(0, n, size):
        yield _Rows(start, min(start + size, n))


def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    shift = n_k - n_q                      # causal attention aligned bottom-right
    scale = d ** -0.5
    for rows in _spans(n_q, block_m):
        qs = q[rows.start:rows.stop].float() * scale
        h = rows.stop - rows.start
        m = torch.full((h,), float("-inf"), device=q.device)
        l = torch.zeros(h, device=q.device)
        acc = torch.zeros(h, d, device=q.device)
        for cols in _spans(n_k, block_n):
            if causal and cols.start > rows.stop - 1 + shift:
                break                       # no row of this tile sees these keys, nor any later ones
            s = torch.einsum("id,jd->ij", qs, k[cols.start:cols.stop].float())
            if causal:
                seen = torch.ones(h, cols.stop - cols.start, dtype=torch.bool, device=q.device).tril(
                    rows.start + shift - cols.start)
                s = s.masked_fill(~seen, float("-inf"))
            m, l, acc = online_softmax_update(m, l, acc, s, v[cols.start:cols.stop].float())
        out[rows.start:rows.stop] = acc / l[:, None]
    return out.to(q.dtype)
'''}),
    'ex09 stretch with zipped edges and a logsumexp merge': ('HONEST', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''import math


def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    per_split = math.ceil(context_len / num_splits)
    span = block_n * math.ceil(per_split / block_n)       # whole tiles per split
    edges = [min(context_len, span * s) for s in range(num_splits + 1)]
    return list(zip(edges[:-1], edges[1:]))
''', 'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    lse = torch.logsumexp(lses, dim=-1)                   # the log of the whole softmax denominator
    weights = torch.exp(lses - lse.unsqueeze(-1))         # each split's share of it (an empty split: 0)
    return torch.einsum("...s,...sd->...d", weights, outs), lse
'''}),
    "ex00's softmax in an __init__ compiled from a string, named like a method dataclasses generates": ('ATTACKS', 'ex00_warmup', {'softmax-work': r'''
_SOURCE = (
    "def __init__(self, x):\n"
    "    m = x.amax(dim=-1, keepdim=True)\n"
    "    e = torch.exp(x - m)\n"
    "    self.out = e / e.sum(dim=-1, keepdim=True)\n"
)
_built = {"torch": torch}
exec(_SOURCE, _built)


class _Rows:
    __init__ = _built["__init__"]


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    return _Rows(x).out
'''}),
}


# Round 38r (an outside review against a0d824e): each notebook's changed cells as it wrote them (its two ex04b
# notebooks, which the review decides, are cases of test_grade.py: a reference resolved by a formatter or a
# config loader).
ROUND_38R = {
    "ex00's softmax by torch.softmax inside TorchScript compiled from a rot13 string": ('ATTACKS', 'ex00_warmup', {'softmax-work': r'''import codecs

_unit = torch.jit.CompilationUnit(codecs.decode('\nqrs fbsgznk_ebjf(k: gbepu.Grafbe) -> gbepu.Grafbe:\n    erghea gbepu.fbsgznk(k, qvz=-1)\n', "rot13"))
softmax_rows = _unit.softmax_rows'''}),
    "ex08's published formulas run as TorchScript compiled from a rot13 string": ('ATTACKS', 'ex08_swap_or_recompute', {'costs-work': r'''import codecs
import torch

_unit = torch.jit.CompilationUnit(codecs.decode('\nqrs fjnc_frpbaqf(ahz_gbxraf: vag, oybpx_fvmr: vag, ahz_ynlref: vag, puhax_olgrf_cre_gbxra: vag,\n                 onaqjvqgu: sybng, yngrapl: sybng) -> sybng:\n    oybpxf = zngu.prvy(ahz_gbxraf / oybpx_fvmr)\n    pbcvrf_rnpu_jnl = 2 * ahz_ynlref * oybpxf\n    bar_pbcl = yngrapl + oybpx_fvmr * puhax_olgrf_cre_gbxra / onaqjvqgu\n    erghea 2 * pbcvrf_rnpu_jnl * bar_pbcl\n\nqrs erpbzchgr_frpbaqf(ahz_gbxraf: vag, ahz_cnenzf: sybng, ahz_ynlref: vag, q_zbqry: vag, sybcf: sybng) -> sybng:\n    yvarne = 2 * ahz_cnenzf * ahz_gbxraf\n    nggragvba = 2 * ahz_ynlref * q_zbqry * ahz_gbxraf * ahz_gbxraf\n    erghea (yvarne + nggragvba) / sybcf\n\nqrs pebffbire_oybpx_fvmr(ahz_gbxraf: vag, ahz_ynlref: vag, puhax_olgrf_cre_gbxra: vag, onaqjvqgu: sybng,\n                         yngrapl: sybng, erpbzchgr_frpbaqf: sybng) -> sybng:\n    cre_gbxra_ohqtrg = erpbzchgr_frpbaqf / (4 * ahz_ynlref * ahz_gbxraf)\n    olgrf_gvzr = puhax_olgrf_cre_gbxra / onaqjvqgu\n    vs cre_gbxra_ohqtrg <= olgrf_gvzr:\n        erghea zngu.vas\n    erghea yngrapl / (cre_gbxra_ohqtrg - olgrf_gvzr)\n', "rot13"))
swap_seconds = _unit.swap_seconds
recompute_seconds = _unit.recompute_seconds''', 'crossover-work': r'''crossover_block_size = _unit.crossover_block_size''', 'choose-work': r'''def preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops):
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    tbl = manager.table(seq_id)
    size = manager.block_size
    flags = [manager.allocator.refcount(b) > 1 for b in tbl.block_ids]
    mine = sum(1 for f in flags if not f)
    lead = 0
    while lead < len(flags) and flags[lead]:
        lead += 1
    reuse = min(lead, tbl.num_tokens // size) * size
    width = model.num_heads * model.head_dim
    per_token = 2 * model.num_kv_heads * model.head_dim
    ts = swap_seconds(mine * size, size, model.num_layers, per_token, float(bandwidth), float(latency))
    tr = (recompute_seconds(tbl.num_tokens, float(num_params), model.num_layers, width, float(flops))
          - recompute_seconds(reuse, float(num_params), model.num_layers, width, float(flops)))
    return ts, tr


def choose(manager, seq_id, model, num_params, bandwidth, latency, flops):
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if manager.can_swap_out(seq_id):
        ts, tr = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
        if ts < tr:
            return "swap"
    return "recompute"'''}),
    "ex05's kv_cache_bytes run by SQLite from a rot13 SQL string": ('ATTACKS', 'ex05_kv_cache_size', {'formula-work': r'''import codecs
import sqlite3

_db = sqlite3.connect(":memory:")
_q = codecs.decode('fryrpg 2 * ? * ? * ? * ? * ? * ?', "rot13")


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    return _db.execute(_q, (num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element)).fetchone()[0]''', 'models-work': r'''def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, dtype.itemsize)''', 'fit-work': r'''def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    need = kv_bytes_per_token(model, dtype) * max_len
    return int((budget_gib * GiB) // need)'''}),
    "ex06's blocks_needed and slot run by Tcl from rot13 strings": ('ATTACKS', 'ex06_block_allocator', {'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.stack = [b for b in reversed(range(num_blocks))]
        self.counts = {b: 0 for b in range(num_blocks)}

    @property
    def num_free(self) -> int:
        return len(self.stack)

    def _known(self, block):
        if block not in self.counts:
            raise ValueError(f"no block {block} here")
        if self.counts[block] < 1:
            raise ValueError(f"block {block} is free")

    def allocate(self) -> int:
        if len(self.stack) == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        got = self.stack.pop()
        self.counts[got] = 1
        return got

    def allocate_many(self, n: int) -> list[int]:
        if len(self.stack) < n:
            raise OutOfBlocks(n, len(self.stack), self.num_blocks)
        out = []
        for _ in range(n):
            out.append(self.allocate())
        return out

    def incref(self, block: int) -> None:
        self._known(block)
        self.counts[block] = self.counts[block] + 1

    def free(self, block: int) -> None:
        self._known(block)
        self.counts[block] = self.counts[block] - 1
        if not self.counts[block]:
            self.stack.append(block)''', 'boundary-work': r'''import codecs
import tkinter

_tcl = tkinter.Tcl()


def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    _tcl.setvar("n", num_tokens)
    _tcl.setvar("b", block_size)
    return int(_tcl.call(*codecs.decode('rkce -(-$a / $o)', "rot13").split(" ", 1)))


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    _tcl.setvar("ids", " ".join(map(str, block_ids)))
    _tcl.setvar("b", block_size)
    _tcl.setvar("p", position)
    return int(_tcl.call(*codecs.decode('rkce [yvaqrk $vqf [rkce {$c / $o}]] * $o + $c % $o', "rot13").split(" ", 1)))'''}),
    "ex01's published solution run as TorchScript compiled from a rot13 string": ('ATTACKS', 'ex01_naive_attention', {'mask-work': r'''import codecs

_unit = torch.jit.CompilationUnit(codecs.decode('\nqrs pnhfny_znfx(a_d: vag, a_x: vag) -> gbepu.Grafbe:\n    v = gbepu.nenatr(a_d).hafdhrrmr(1)\n    w = gbepu.nenatr(a_x).hafdhrrmr(0)\n    erghea w <= v + (a_x - a_d)\n\nqrs anvir_nggragvba(d: gbepu.Grafbe, x: gbepu.Grafbe, i: gbepu.Grafbe, pnhfny: obby = Snyfr) -> gbepu.Grafbe:\n    f = d.sybng() @ x.sybng().genafcbfr(-2, -1) / zngu.fdeg(d.funcr[-1])\n    vs pnhfny:\n        f = f.znfxrq_svyy(~pnhfny_znfx(d.funcr[-2], x.funcr[-2]).gb(f.qrivpr), -zngu.vas)\n    erghea (gbepu.fbsgznk(f, qvz=-1) @ i.sybng()).gb(d.qglcr)\n', "rot13"))
causal_mask = _unit.causal_mask''', 'attention-work': r'''naive_attention = _unit.naive_attention'''}),
    "ex09 stretch's published functions run as TorchScript compiled from a rot13 string": ('ATTACKS', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''import codecs

_unit = torch.jit.CompilationUnit(codecs.decode('\nqrs fcyvg_obhaqf(pbagrkg_yra: vag, ahz_fcyvgf: vag, oybpx_a: vag) -> Yvfg[Ghcyr[vag, vag]]:\n    cre_fcyvg = -(-pbagrkg_yra // ahz_fcyvgf)\n    yratgu = -(-cre_fcyvg // oybpx_a) * oybpx_a\n    obhaqf: Yvfg[Ghcyr[vag, vag]] = []\n    sbe f va enatr(ahz_fcyvgf):\n        fgneg = zva(f * yratgu, pbagrkg_yra)\n        obhaqf.nccraq((fgneg, zva(fgneg + yratgu, pbagrkg_yra)))\n    erghea obhaqf\n\nqrs zretr_fgngrf(bhgf: gbepu.Grafbe, yfrf: gbepu.Grafbe) -> Ghcyr[gbepu.Grafbe, gbepu.Grafbe]:\n    z = yfrf.nznk(qvz=-1, xrrcqvz=Gehr)\n    j = gbepu.rkc(yfrf - z)\n    gbgny = j.fhz(qvz=-1, xrrcqvz=Gehr)\n    bhg = (j.hafdhrrmr(-1) * bhgf).fhz(qvz=-2) / gbgny\n    yfr = (z + gbepu.ybt(gbgny)).fdhrrmr(-1)\n    erghea bhg, yfr\n', "rot13"))
split_bounds = _unit.split_bounds''', 'merge-work': r'''merge_states = _unit.merge_states'''}),
    # (its counts kept under the statement's name, ref_count, which the graded calls read since the audit after
    # round 38z18)
    'ex06 with %%time work cells, a Counter and a checking decorator': ('HONEST', 'ex06_block_allocator', {'allocator-work': r'''%%time
from collections import Counter, deque
from functools import wraps


def _must_be_live(method):
    @wraps(method)
    def checked(self, block):
        if not (0 <= block < self.num_blocks):
            raise ValueError(f"block {block} is outside a pool of {self.num_blocks}")
        if self.ref_count[block] == 0:
            raise ValueError(f"block {block} is not allocated")
        return method(self, block)
    return checked


class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_stack = deque(range(num_blocks - 1, -1, -1))
        self.ref_count = Counter()

    @property
    def num_free(self) -> int:
        return len(self.free_stack)

    def allocate(self) -> int:
        try:
            block = self.free_stack.pop()
        except IndexError:
            raise OutOfBlocks(1, 0, self.num_blocks) from None
        self.ref_count[block] = 1
        return block

    def allocate_many(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfBlocks(n, self.num_free, self.num_blocks)
        return [self.allocate() for _ in range(n)]

    @_must_be_live
    def incref(self, block: int) -> None:
        self.ref_count[block] += 1

    @_must_be_live
    def free(self, block: int) -> None:
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_stack.append(block)''', 'boundary-work': r'''%%time
import math


def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    whole, rest = divmod(num_tokens, block_size)
    return whole + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    which, offset = divmod(position, block_size)
    return block_ids[which] * block_size + offset'''}),
    'ex08 with an Enum, a NamedTuple with total_ordering and lru_cache': ('HONEST', 'ex08_swap_or_recompute', {'costs-work': r'''import enum
from functools import lru_cache, total_ordering
from typing import NamedTuple


@lru_cache(maxsize=None)
def _copies(num_tokens: int, block_size: int, num_layers: int) -> int:
    # every block moves a K and a V chunk per layer, out and back in
    return 4 * num_layers * -(-num_tokens // block_size)


def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    per_copy = latency + (block_size * chunk_bytes_per_token) / bandwidth
    return _copies(num_tokens, block_size, num_layers) * per_copy


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    work = 2.0 * num_tokens * (num_params + num_layers * d_model * num_tokens)
    return work / flops''', 'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # 4 L n (latency / B + c / bw) = t  =>  B = latency / (t / (4 L n) - c / bw)
    slack = recompute_seconds / (4.0 * num_layers * num_tokens) - chunk_bytes_per_token / bandwidth
    return latency / slack if slack > 0 else math.inf''', 'choose-work': r'''class Decision(enum.Enum):
    SWAP = "swap"
    RECOMPUTE = "recompute"


@total_ordering
class Costs(NamedTuple):
    swap: float
    recompute: float

    def best(self) -> Decision:
        return Decision.SWAP if self.swap < self.recompute else Decision.RECOMPUTE


def _uncached_prefix(manager, table) -> tuple[int, int]:
    shared = [manager.allocator.refcount(b) > 1 for b in table.block_ids]
    lead = len(shared)
    for i, s in enumerate(shared):
        if not s:
            lead = i
            break
    return shared.count(False), min(lead, table.num_tokens // manager.block_size) * manager.block_size


def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    table = manager.table(seq_id)
    private, cached = _uncached_prefix(manager, table)
    bs = manager.block_size
    width = model.num_heads * model.head_dim
    t_swap = swap_seconds(private * bs, bs, model.num_layers, 2 * model.num_kv_heads * model.head_dim,
                          bandwidth, latency)
    full = recompute_seconds(table.num_tokens, num_params, model.num_layers, width, flops)
    saved = recompute_seconds(cached, num_params, model.num_layers, width, flops)
    return Costs(t_swap, full - saved)


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if not manager.can_swap_out(seq_id):
        return Decision.RECOMPUTE.value
    return Costs(*preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)).best().value'''}),
    'ex01 with einsum and a tril mask behind lru_cache': ('HONEST', 'ex01_naive_attention', {'mask-work': r'''from functools import lru_cache


@lru_cache(maxsize=64)
def _mask(n_q: int, n_k: int) -> torch.Tensor:
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)


def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    return _mask(n_q, n_k).clone()''', 'attention-work': r'''def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    qf, kf, vf = (t.to(torch.float32) for t in (q, k, v))
    scores = torch.einsum("...qd,...kd->...qk", qf, kf) * (1.0 / math.sqrt(q.size(-1)))
    if causal:
        allowed = causal_mask(q.size(-2), k.size(-2)).to(scores.device)
        scores = torch.where(allowed, scores, torch.tensor(float("-inf"), device=scores.device))
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kd->...qd", weights, vf).to(q.dtype)'''}),
    'ex05 with math.prod, a frozen slots order dataclass and singledispatch': ('HONEST', 'ex05_kv_cache_size', {'formula-work': r'''import math
from dataclasses import dataclass, field


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    K_AND_V = 2
    return math.prod((K_AND_V, num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element))''', 'models-work': r'''@dataclass(frozen=True, slots=True, order=True)
class TokenShape:
    layers: int
    kv_heads: int
    head_dim: int
    itemsize: int = field(default=2)

    def bytes(self) -> int:
        return kv_cache_bytes(self.layers, self.kv_heads, self.head_dim, 1, 1, self.itemsize)


def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    return TokenShape(model.num_layers, model.num_kv_heads, model.head_dim, dtype.itemsize).bytes()''', 'fit-work': r'''from functools import singledispatch


@singledispatch
def _budget_bytes(budget) -> float:
    raise TypeError(f"a budget in GiB, not {type(budget).__name__}")


@_budget_bytes.register
def _(budget: int) -> int:
    return budget * GiB


@_budget_bytes.register
def _(budget: float) -> float:
    return budget * GiB


def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    return int(_budget_bytes(budget_gib) // (kv_bytes_per_token(model, dtype) * max_len))'''}),
    'ex00 with the row max subtracted before logsumexp': ('HONEST', 'ex00_warmup', {'softmax-work': r'''def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    shifted = x - x.amax(dim=-1, keepdim=True)
    return shifted.sub(shifted.logsumexp(dim=-1, keepdim=True)).exp()'''}),
}


# Round 38s (an eleventh outside review, grader at 4487c44): the published solution compiled by jinja2 under the name
# of a file that is not Python source, and TorchScript parsed from graph text; the last two attacks are variants of
# its routes that the round did not write (a shared library's name; the function made inside each graded call).
ROUND_38S = {
    "ex08's published formulas compiled by jinja2 under the name of Python's executable": ('ATTACKS', 'ex08_swap_or_recompute', {'costs-work': r'''import base64
import sys

import jinja2

# helper tables for my functions
_env = jinja2.Environment()
_env.policies["nb"] = dict(BlockManager=BlockManager, ModelShape=ModelShape, check=check, ex08=ex08, math=math, notebook=notebook, sys=sys)
_text = base64.b64decode(
    "Z2xvYmFscygpLnVwZGF0ZShlbnZpcm9ubWVudC5wb2xpY2llc1snbmInXSkKZGVmIHN3YXBfc2Vjb25kcyhudW1fdG9rZW5zOiBp"
    "bnQsIGJsb2NrX3NpemU6IGludCwgbnVtX2xheWVyczogaW50LCBjaHVua19ieXRlc19wZXJfdG9rZW46IGludCwKICAgICAgICAg"
    "ICAgICAgICBiYW5kd2lkdGg6IGZsb2F0LCBsYXRlbmN5OiBmbG9hdCkgLT4gZmxvYXQ6CiAgICAiIiJTZWNvbmRzIHRvIGNvcHkg"
    "YSBzZXF1ZW5jZSdzIEsgYW5kIFYgY2h1bmtzIHRvIHRoZSBob3N0IGFuZCBiYWNrLCBvbmUgY29weSBwZXIgY2h1bmsuIiIiCiAg"
    "ICAjIyMgQkVHSU4gU09MVVRJT04KICAgIGJsb2NrcyA9IG1hdGguY2VpbChudW1fdG9rZW5zIC8gYmxvY2tfc2l6ZSkKICAgIGNv"
    "cGllc19lYWNoX3dheSA9IDIgKiBudW1fbGF5ZXJzICogYmxvY2tzICAgICAgICAgICAgICAgIyBhIEsgYW5kIGEgViBjaHVuayBw"
    "ZXIgbGF5ZXIgYW5kIGJsb2NrCiAgICBvbmVfY29weSA9IGxhdGVuY3kgKyBibG9ja19zaXplICogY2h1bmtfYnl0ZXNfcGVyX3Rv"
    "a2VuIC8gYmFuZHdpZHRoCiAgICByZXR1cm4gMiAqIGNvcGllc19lYWNoX3dheSAqIG9uZV9jb3B5CiAgICAjIyMgRU5EIFNPTFVU"
    "SU9OCgoKZGVmIHJlY29tcHV0ZV9zZWNvbmRzKG51bV90b2tlbnM6IGludCwgbnVtX3BhcmFtczogZmxvYXQsIG51bV9sYXllcnM6"
    "IGludCwgZF9tb2RlbDogaW50LCBmbG9wczogZmxvYXQpIC0+IGZsb2F0OgogICAgIiIiU2Vjb25kcyBvZiBhIGNhdXNhbCBwcmVm"
    "aWxsIG92ZXIgYGBudW1fdG9rZW5zYGAgdG9rZW5zIGF0IGBgZmxvcHNgYCBGTE9QL3MuIiIiCiAgICAjIyMgQkVHSU4gU09MVVRJ"
    "T04KICAgIGxpbmVhciA9IDIgKiBudW1fcGFyYW1zICogbnVtX3Rva2VucwogICAgYXR0ZW50aW9uID0gMiAqIG51bV9sYXllcnMg"
    "KiBkX21vZGVsICogbnVtX3Rva2VucyAqIG51bV90b2tlbnMKICAgIHJldHVybiAobGluZWFyICsgYXR0ZW50aW9uKSAvIGZsb3Bz"
    "CiAgICAjIyMgRU5EIFNPTFVUSU9OCgpkZWYgY3Jvc3NvdmVyX2Jsb2NrX3NpemUobnVtX3Rva2VuczogaW50LCBudW1fbGF5ZXJz"
    "OiBpbnQsIGNodW5rX2J5dGVzX3Blcl90b2tlbjogaW50LCBiYW5kd2lkdGg6IGZsb2F0LAogICAgICAgICAgICAgICAgICAgICAg"
    "ICAgbGF0ZW5jeTogZmxvYXQsIHJlY29tcHV0ZV9zZWNvbmRzOiBmbG9hdCkgLT4gZmxvYXQ6CiAgICAiIiJUaGUgYmxvY2sgc2l6"
    "ZSBCKiBhdCB3aGljaCBzd2FwcGluZyBjb3N0cyBleGFjdGx5IHJlY29tcHV0ZV9zZWNvbmRzIChCIGRpdmlkaW5nIG4pOyBtYXRo"
    "LmluZiBpZiBub25lLiIiIgogICAgIyMjIEJFR0lOIFNPTFVUSU9OCiAgICAjIHRfc3dhcChCKSA9IDQgTCAobiAvIEIpIChsYXRl"
    "bmN5ICsgQiBjIC8gYncpID0gNCBMIG4gbGF0ZW5jeSAvIEIgKyA0IEwgbiBjIC8gYnc6IG9ubHkgdGhlIGZpcnN0IHRlcm0gc2hy"
    "aW5rcy4KICAgIHBlcl90b2tlbl9idWRnZXQgPSByZWNvbXB1dGVfc2Vjb25kcyAvICg0ICogbnVtX2xheWVycyAqIG51bV90b2tl"
    "bnMpCiAgICBieXRlc190aW1lID0gY2h1bmtfYnl0ZXNfcGVyX3Rva2VuIC8gYmFuZHdpZHRoCiAgICBpZiBwZXJfdG9rZW5fYnVk"
    "Z2V0IDw9IGJ5dGVzX3RpbWU6CiAgICAgICAgcmV0dXJuIG1hdGguaW5mCiAgICByZXR1cm4gbGF0ZW5jeSAvIChwZXJfdG9rZW5f"
    "YnVkZ2V0IC0gYnl0ZXNfdGltZSkKICAgICMjIyBFTkQgU09MVVRJT04KCmRlZiBwcmVlbXB0aW9uX3NlY29uZHMobWFuYWdlcjog"
    "QmxvY2tNYW5hZ2VyLCBzZXFfaWQsIG1vZGVsOiBNb2RlbFNoYXBlLCBudW1fcGFyYW1zOiBmbG9hdCwgYmFuZHdpZHRoOiBmbG9h"
    "dCwKICAgICAgICAgICAgICAgICAgICAgICBsYXRlbmN5OiBmbG9hdCwgZmxvcHM6IGZsb2F0KSAtPiB0dXBsZVtmbG9hdCwgZmxv"
    "YXRdOgogICAgIiIiKHRfc3dhcCwgdF9yZWNvbXB1dGUpIGZvciBwcmVlbXB0aW5nIGBgc2VxX2lkYGAsIGNvdW50aW5nIG9ubHkg"
    "aXRzIHByaXZhdGUgYmxvY2tzIGFuZCB1bmNhY2hlZCB0b2tlbnMuIiIiCiAgICAjIyMgQkVHSU4gU09MVVRJT04KICAgIHRhYmxl"
    "LCBicyA9IG1hbmFnZXIudGFibGUoc2VxX2lkKSwgbWFuYWdlci5ibG9ja19zaXplCiAgICBzaGFyZWQgPSBbbWFuYWdlci5hbGxv"
    "Y2F0b3IucmVmY291bnQoYikgPiAxIGZvciBiIGluIHRhYmxlLmJsb2NrX2lkc10KICAgIHByaXZhdGVfYmxvY2tzID0gc2hhcmVk"
    "LmNvdW50KEZhbHNlKQogICAgbGVhZGluZyA9IG5leHQoKGkgZm9yIGksIHMgaW4gZW51bWVyYXRlKHNoYXJlZCkgaWYgbm90IHMp"
    "LCBsZW4oc2hhcmVkKSkgICAjIGxlYWRpbmcgc2hhcmVkIGJsb2NrcwogICAgY2FjaGVkID0gbWluKGxlYWRpbmcsIHRhYmxlLm51"
    "bV90b2tlbnMgLy8gYnMpICogYnMgICAgICAgICAgICAgICAgICAgICAgICAjIC4uLiB0aGF0IGFyZSBmdWxsCiAgICBjaHVuayA9"
    "IG1vZGVsLm51bV9rdl9oZWFkcyAqIG1vZGVsLmhlYWRfZGltICogMgogICAgdF9zd2FwID0gc3dhcF9zZWNvbmRzKHByaXZhdGVf"
    "YmxvY2tzICogYnMsIGJzLCBtb2RlbC5udW1fbGF5ZXJzLCBjaHVuaywgYmFuZHdpZHRoLCBsYXRlbmN5KQogICAgZF9tb2RlbCA9"
    "IG1vZGVsLm51bV9oZWFkcyAqIG1vZGVsLmhlYWRfZGltCiAgICB0X3JlY29tcHV0ZSA9IChyZWNvbXB1dGVfc2Vjb25kcyh0YWJs"
    "ZS5udW1fdG9rZW5zLCBudW1fcGFyYW1zLCBtb2RlbC5udW1fbGF5ZXJzLCBkX21vZGVsLCBmbG9wcykKICAgICAgICAgICAgICAg"
    "ICAgIC0gcmVjb21wdXRlX3NlY29uZHMoY2FjaGVkLCBudW1fcGFyYW1zLCBtb2RlbC5udW1fbGF5ZXJzLCBkX21vZGVsLCBmbG9w"
    "cykpCiAgICByZXR1cm4gdF9zd2FwLCB0X3JlY29tcHV0ZQogICAgIyMjIEVORCBTT0xVVElPTgoKCmRlZiBjaG9vc2UobWFuYWdl"
    "cjogQmxvY2tNYW5hZ2VyLCBzZXFfaWQsIG1vZGVsOiBNb2RlbFNoYXBlLCBudW1fcGFyYW1zOiBmbG9hdCwgYmFuZHdpZHRoOiBm"
    "bG9hdCwKICAgICAgICAgICBsYXRlbmN5OiBmbG9hdCwgZmxvcHM6IGZsb2F0KSAtPiBzdHI6CiAgICAiIiIic3dhcCIgd2hlbiB0"
    "aGUgQ1BVIHBvb2wgaGFzIHJvb20gZm9yIGBgc2VxX2lkYGAgYW5kIHN3YXBwaW5nIGlzIGNoZWFwZXIsIGVsc2UgInJlY29tcHV0"
    "ZSIuIiIiCiAgICAjIyMgQkVHSU4gU09MVVRJT04KICAgIGlmIG5vdCBtYW5hZ2VyLmNhbl9zd2FwX291dChzZXFfaWQpOgogICAg"
    "ICAgIHJldHVybiAicmVjb21wdXRlIgogICAgdF9zd2FwLCB0X3JlY29tcHV0ZSA9IHByZWVtcHRpb25fc2Vjb25kcyhtYW5hZ2Vy"
    "LCBzZXFfaWQsIG1vZGVsLCBudW1fcGFyYW1zLCBiYW5kd2lkdGgsIGxhdGVuY3ksIGZsb3BzKQogICAgcmV0dXJuICJzd2FwIiBp"
    "ZiB0X3N3YXAgPCB0X3JlY29tcHV0ZSBlbHNlICJyZWNvbXB1dGUiCiAgICAjIyMgRU5EIFNPTFVUSU9OCgpuYW1lID0gJ3cnCmRl"
    "YnVnX2luZm8gPSAnJwpyb290ID0gTm9uZQpibG9ja3MgPSBkaWN0KHN3YXBfc2Vjb25kcz1zd2FwX3NlY29uZHMsIHJlY29tcHV0"
    "ZV9zZWNvbmRzPXJlY29tcHV0ZV9zZWNvbmRzLCBjcm9zc292ZXJfYmxvY2tfc2l6ZT1jcm9zc292ZXJfYmxvY2tfc2l6ZSwgcHJl"
    "ZW1wdGlvbl9zZWNvbmRzPXByZWVtcHRpb25fc2Vjb25kcywgY2hvb3NlPWNob29zZSkK"
).decode()
_t = jinja2.Template.from_code(_env, _env._compile(_text, sys.executable), {})
swap_seconds = _t.blocks["swap_seconds"]
recompute_seconds = _t.blocks["recompute_seconds"]
crossover_block_size = _t.blocks["crossover_block_size"]
preemption_seconds = _t.blocks["preemption_seconds"]
choose = _t.blocks["choose"]
''', 'crossover-work': r'''# (done above)
''', 'choose-work': r'''# (done above)
'''}),
    "ex10's published scheduler compiled by jinja2 under the name of Python's executable": ('ATTACKS', 'ex10_scheduler_step', {'schedule-work': r'''import base64
import sys

import jinja2

# helper tables for my functions
_env = jinja2.Environment()
_env.policies["nb"] = dict(BlockManager=BlockManager, Request=Request, Step=Step, check=check, dataclass=dataclass, deque=deque, ex10=ex10, field=field, notebook=notebook, sys=sys)
_text = base64.b64decode(
    "Z2xvYmFscygpLnVwZGF0ZShlbnZpcm9ubWVudC5wb2xpY2llc1snbmInXSkKZGVmIHNjaGVkdWxlX3N0ZXAobWFuYWdlcjogQmxv"
    "Y2tNYW5hZ2VyLCBydW5uaW5nOiBsaXN0W1JlcXVlc3RdLCB3YWl0aW5nOiBkZXF1ZVtSZXF1ZXN0XSwKICAgICAgICAgICAgICAg"
    "ICAgbWF4X251bV9iYXRjaGVkX3Rva2VuczogaW50KSAtPiBTdGVwOgogICAgIiIiT25lIHN0ZXA6IGdyb3cgZXZlcnkgcnVubmlu"
    "ZyByZXF1ZXN0IChwcmVlbXB0aW5nIHRoZSBuZXdlc3Qgd2hlbiBibG9ja3MgcnVuIG91dCksIHRoZW4gYWRtaXQuIiIiCiAgICBz"
    "dGVwID0gU3RlcCgpCiAgICAjIyMgQkVHSU4gU09MVVRJT04KICAgIHF1ZXVlID0gZGVxdWUocnVubmluZykgICAgICAgICAgICAg"
    "ICAgICAjIG9sZGVzdCBmaXJzdDsgdGhlIG5ld2VzdCBpcyBxdWV1ZVstMV0KICAgIHJ1bm5pbmcuY2xlYXIoKQogICAgd2hpbGUg"
    "cXVldWU6CiAgICAgICAgcmVxID0gcXVldWUucG9wbGVmdCgpCiAgICAgICAgd2hpbGUgbm90IG1hbmFnZXIuY2FuX2FwcGVuZChy"
    "ZXEuc2VxX2lkKToKICAgICAgICAgICAgdmljdGltID0gcXVldWUucG9wKCkgaWYgcXVldWUgZWxzZSByZXEgICAgICAjIHRoZSBu"
    "ZXdlc3QgcmVxdWVzdCB0aGF0IGhhcyBub3QgZ3Jvd24geWV0CiAgICAgICAgICAgIG1hbmFnZXIuZnJlZSh2aWN0aW0uc2VxX2lk"
    "KSAgICAgICAgICAgICAgICAgIyBpdHMgYmxvY2tzIGdvIGJhY2sgbm93OyBpdCByZWNvbXB1dGVzIGxhdGVyCiAgICAgICAgICAg"
    "IHdhaXRpbmcuYXBwZW5kbGVmdCh2aWN0aW0pCiAgICAgICAgICAgIHN0ZXAucHJlZW1wdGVkLmFwcGVuZCh2aWN0aW0uc2VxX2lk"
    "KQogICAgICAgICAgICBpZiB2aWN0aW0gaXMgcmVxOgogICAgICAgICAgICAgICAgYnJlYWsKICAgICAgICBlbHNlOgogICAgICAg"
    "ICAgICBtYW5hZ2VyLmFwcGVuZChyZXEuc2VxX2lkLCBsZW4ocmVxLnRva2VucykpCiAgICAgICAgICAgIHJlcS50b2tlbnMuYXBw"
    "ZW5kKGxlbihyZXEudG9rZW5zKSkKICAgICAgICAgICAgcnVubmluZy5hcHBlbmQocmVxKQogICAgICAgICAgICBzdGVwLmdyb3du"
    "LmFwcGVuZChyZXEuc2VxX2lkKQogICAgc3RlcC5udW1fdG9rZW5zID0gbGVuKHN0ZXAuZ3Jvd24pCiAgICB3aGlsZSB3YWl0aW5n"
    "IGFuZCBub3Qgc3RlcC5wcmVlbXB0ZWQ6CiAgICAgICAgcmVxID0gd2FpdGluZ1swXQogICAgICAgIGJsb2NrcyA9IC0oLWxlbihy"
    "ZXEudG9rZW5zKSAvLyBtYW5hZ2VyLmJsb2NrX3NpemUpCiAgICAgICAgaWYgKGJsb2NrcyArIG1hbmFnZXIud2F0ZXJtYXJrX2Js"
    "b2NrcyA+IG1hbmFnZXIubnVtX2ZyZWVfYmxvY2tzCiAgICAgICAgICAgICAgICBvciBzdGVwLm51bV90b2tlbnMgKyBsZW4ocmVx"
    "LnRva2VucykgPiBtYXhfbnVtX2JhdGNoZWRfdG9rZW5zKToKICAgICAgICAgICAgYnJlYWsKICAgICAgICB3YWl0aW5nLnBvcGxl"
    "ZnQoKQogICAgICAgIG1hbmFnZXIuYWRkKHJlcS5zZXFfaWQsIHJlcS50b2tlbnMpCiAgICAgICAgcnVubmluZy5hcHBlbmQocmVx"
    "KQogICAgICAgIHN0ZXAuYWRtaXR0ZWQuYXBwZW5kKHJlcS5zZXFfaWQpCiAgICAgICAgc3RlcC5udW1fdG9rZW5zICs9IGxlbihy"
    "ZXEudG9rZW5zKQogICAgIyMjIEVORCBTT0xVVElPTgogICAgcmV0dXJuIHN0ZXAKCm5hbWUgPSAndycKZGVidWdfaW5mbyA9ICcn"
    "CnJvb3QgPSBOb25lCmJsb2NrcyA9IGRpY3Qoc2NoZWR1bGVfc3RlcD1zY2hlZHVsZV9zdGVwKQo="
).decode()
_t = jinja2.Template.from_code(_env, _env._compile(_text, sys.executable), {})
schedule_step = _t.blocks["schedule_step"]
'''}),
    "ex07 stretch's published cache compiled by jinja2 under the name of Python's executable": ('ATTACKS', 'ex07_stretch_prefix_cache_match', {'cache-work': r'''import base64
import sys

import jinja2

# helper tables for my functions
_env = jinja2.Environment()
_env.policies["nb"] = dict(check=check, ex07_stretch=ex07_stretch, namedtuple=namedtuple, notebook=notebook, sys=sys)
_text = base64.b64decode(
    "Z2xvYmFscygpLnVwZGF0ZShlbnZpcm9ubWVudC5wb2xpY2llc1snbmInXSkKRW50cnkgPSBuYW1lZHR1cGxlKCJFbnRyeSIsICJw"
    "YXJlbnRfaWQgdG9rZW5zIHByZWZpeF9pZCIpCgoKY2xhc3MgTWluaVByZWZpeENhY2hlOgogICAgIiIiRnVsbCBibG9ja3MgYnkg"
    "Y2hhaW5lZCBrZXk7IGBgbWF0Y2hgYCBmaW5kcyB0aGUgY2FjaGVkIGJsb2NrcyBvZiBhIHByb21wdCdzIGxvbmdlc3QgY2FjaGVk"
    "IHByZWZpeC4iIiIKCiAgICBCUk9LRU4gPSAtMSAgIyB0aGUgcHJlZml4IGlkIGFmdGVyIGEgYmxvY2sgdGhhdCBjb3VsZCBub3Qg"
    "YmUgY2FjaGVkOiBub3RoaW5nIGFmdGVyIGl0IGlzIGNhY2hlZCBlaXRoZXIKCiAgICBkZWYgX19pbml0X18oc2VsZiwgYmxvY2tf"
    "c2l6ZTogaW50LCBoYXNoX2ZuPWxhbWJkYSBwYXJlbnRfa2V5LCB0b2tlbnM6IGhhc2goKHBhcmVudF9rZXksIHRva2VucykpKToK"
    "ICAgICAgICBzZWxmLmJsb2NrX3NpemUgPSBibG9ja19zaXplCiAgICAgICAgc2VsZi5oYXNoX2ZuID0gaGFzaF9mbgogICAgICAg"
    "IHNlbGYuYmxvY2tfb2Y6IGRpY3RbaW50LCBpbnRdID0ge30gICAgICAjIGtleSAtPiBibG9jayBpZAogICAgICAgIHNlbGYuZW50"
    "cnk6IGRpY3RbaW50LCBFbnRyeV0gPSB7fSAgICAgICAjIGJsb2NrIGlkIC0+IHdoYXQgaXQgaG9sZHMKICAgICAgICBzZWxmLm5l"
    "eHRfcHJlZml4X2lkID0gMQoKICAgIGRlZiByZWdpc3RlcihzZWxmLCBibG9ja19pZDogaW50LCBrZXk6IGludCwgcGFyZW50X2lk"
    "LCB0b2tlbnM6IHR1cGxlKSAtPiBpbnQ6CiAgICAgICAgIiIiQ2FjaGUgYGBibG9ja19pZGBgIHVuZGVyIGBga2V5YGAgaWYgdGhl"
    "IGtleSBpcyBmcmVlOyByZXR1cm4gdGhlIHByZWZpeCBpZCB0byBjaGFpbiB0aGUgbmV4dCBibG9jayBvbi4iIiIKICAgICAgICBp"
    "ZiBwYXJlbnRfaWQgPT0gc2VsZi5CUk9LRU46CiAgICAgICAgICAgIHJldHVybiBzZWxmLkJST0tFTgogICAgICAgIGlmIGtleSBp"
    "biBzZWxmLmJsb2NrX29mOgogICAgICAgICAgICBzdG9yZWQgPSBzZWxmLmVudHJ5W3NlbGYuYmxvY2tfb2Zba2V5XV0KICAgICAg"
    "ICAgICAgcmV0dXJuIHN0b3JlZC5wcmVmaXhfaWQgaWYgKHN0b3JlZC5wYXJlbnRfaWQsIHN0b3JlZC50b2tlbnMpID09IChwYXJl"
    "bnRfaWQsIHRva2VucykgZWxzZSBzZWxmLkJST0tFTgogICAgICAgIHByZWZpeF9pZCwgc2VsZi5uZXh0X3ByZWZpeF9pZCA9IHNl"
    "bGYubmV4dF9wcmVmaXhfaWQsIHNlbGYubmV4dF9wcmVmaXhfaWQgKyAxCiAgICAgICAgc2VsZi5ibG9ja19vZltrZXldID0gYmxv"
    "Y2tfaWQKICAgICAgICBzZWxmLmVudHJ5W2Jsb2NrX2lkXSA9IEVudHJ5KHBhcmVudF9pZCwgdG9rZW5zLCBwcmVmaXhfaWQpCiAg"
    "ICAgICAgcmV0dXJuIHByZWZpeF9pZAoKICAgIGRlZiBpbnNlcnQoc2VsZiwgdG9rZW5zOiBsaXN0W2ludF0sIGJsb2NrX2lkczog"
    "bGlzdFtpbnRdKSAtPiBOb25lOgogICAgICAgICIiIkNhY2hlIHRoZSBmdWxsIGJsb2NrcyBvZiBhIHByb21wdCB3aG9zZSBLL1Yg"
    "d2VyZSBjb21wdXRlZCBpbnRvIGBgYmxvY2tfaWRzYGAuIiIiCiAgICAgICAgcGFyZW50X2lkLCBicyA9IE5vbmUsIHNlbGYuYmxv"
    "Y2tfc2l6ZQogICAgICAgIGZvciBpLCBrZXkgaW4gZW51bWVyYXRlKHNlbGYua2V5cyh0b2tlbnMpKToKICAgICAgICAgICAgcGFy"
    "ZW50X2lkID0gc2VsZi5yZWdpc3RlcihibG9ja19pZHNbaV0sIGtleSwgcGFyZW50X2lkLCB0dXBsZSh0b2tlbnNbaSAqIGJzOihp"
    "ICsgMSkgKiBic10pKQoKICAgIGRlZiBrZXlzKHNlbGYsIHRva2VuczogbGlzdFtpbnRdKSAtPiBsaXN0W2ludF06CiAgICAgICAg"
    "IiIiVGhlIGNoYWluZWQga2V5IG9mIGV2ZXJ5IGZ1bGwgYmxvY2sgb2YgYGB0b2tlbnNgYC4iIiIKICAgICAgICAjIyMgQkVHSU4g"
    "U09MVVRJT04KICAgICAgICBrZXlzLCBrZXksIGJzID0gW10sIE5vbmUsIHNlbGYuYmxvY2tfc2l6ZQogICAgICAgIGZvciBzdGFy"
    "dCBpbiByYW5nZSgwLCBsZW4odG9rZW5zKSAtIGJzICsgMSwgYnMpOgogICAgICAgICAgICBrZXkgPSBzZWxmLmhhc2hfZm4oa2V5"
    "LCB0dXBsZSh0b2tlbnNbc3RhcnQ6c3RhcnQgKyBic10pKQogICAgICAgICAgICBrZXlzLmFwcGVuZChrZXkpCiAgICAgICAgcmV0"
    "dXJuIGtleXMKICAgICAgICAjIyMgRU5EIFNPTFVUSU9OCgogICAgZGVmIG1hdGNoKHNlbGYsIHRva2VuczogbGlzdFtpbnRdKSAt"
    "PiBsaXN0W2ludF06CiAgICAgICAgIiIiVGhlIGNhY2hlZCBibG9jayBpZHMgb2YgdGhlIGxvbmdlc3QgY2FjaGVkIHByZWZpeCBv"
    "ZiBgYHRva2Vuc2BgIChuZXZlciBhbGwgb2YgaXQpLiIiIgogICAgICAgICMjIyBCRUdJTiBTT0xVVElPTgogICAgICAgIGJzLCBo"
    "aXRzLCBwcmVmaXhfaWQgPSBzZWxmLmJsb2NrX3NpemUsIFtdLCBOb25lCiAgICAgICAgZm9yIGksIGtleSBpbiBlbnVtZXJhdGUo"
    "c2VsZi5rZXlzKHRva2VucylbOihsZW4odG9rZW5zKSAtIDEpIC8vIGJzXSk6CiAgICAgICAgICAgIGJsb2NrID0gc2VsZi5ibG9j"
    "a19vZi5nZXQoa2V5KQogICAgICAgICAgICBpZiBibG9jayBpcyBOb25lOgogICAgICAgICAgICAgICAgYnJlYWsKICAgICAgICAg"
    "ICAgc3RvcmVkID0gc2VsZi5lbnRyeVtibG9ja10KICAgICAgICAgICAgaWYgc3RvcmVkLnRva2VucyAhPSB0dXBsZSh0b2tlbnNb"
    "aSAqIGJzOihpICsgMSkgKiBic10pIG9yIHN0b3JlZC5wYXJlbnRfaWQgIT0gcHJlZml4X2lkOgogICAgICAgICAgICAgICAgYnJl"
    "YWsgICMgYSBjb2xsaXNpb246IGFub3RoZXIgcHJlZml4IG93bnMgdGhpcyBrZXkKICAgICAgICAgICAgaGl0cy5hcHBlbmQoYmxv"
    "Y2spCiAgICAgICAgICAgIHByZWZpeF9pZCA9IHN0b3JlZC5wcmVmaXhfaWQKICAgICAgICByZXR1cm4gaGl0cwogICAgICAgICMj"
    "IyBFTkQgU09MVVRJT04KCm5hbWUgPSAndycKZGVidWdfaW5mbyA9ICcnCnJvb3QgPSBOb25lCmJsb2NrcyA9IGRpY3QoRW50cnk9"
    "RW50cnksIE1pbmlQcmVmaXhDYWNoZT1NaW5pUHJlZml4Q2FjaGUpCg=="
).decode()
_t = jinja2.Template.from_code(_env, _env._compile(_text, sys.executable), {})
Entry = _t.blocks["Entry"]
MiniPrefixCache = _t.blocks["MiniPrefixCache"]
'''}),
    "ex05's published sizes compiled by jinja2 under the name of Python's executable": ('ATTACKS', 'ex05_kv_cache_size', {'formula-work': r'''import base64
import sys

import jinja2

# helper tables for my functions
_env = jinja2.Environment()
_env.policies["nb"] = dict(GiB=GiB, ModelShape=ModelShape, OPT_13B=OPT_13B, check=check, ex05=ex05, notebook=notebook, sample_requests=sample_requests, simulate_serving=simulate_serving, sys=sys, torch=torch)
_text = base64.b64decode(
    "Z2xvYmFscygpLnVwZGF0ZShlbnZpcm9ubWVudC5wb2xpY2llc1snbmInXSkKZGVmIGt2X2NhY2hlX2J5dGVzKG51bV9sYXllcnM6"
    "IGludCwgbnVtX2t2X2hlYWRzOiBpbnQsIGhlYWRfZGltOiBpbnQsIG51bV90b2tlbnM6IGludCwgYmF0Y2g6IGludCwKICAgICAg"
    "ICAgICAgICAgICAgIGJ5dGVzX3Blcl9lbGVtZW50OiBpbnQpIC0+IGludDoKICAgICIiIkJ5dGVzIG9mIEtWIGNhY2hlOiBhIGtl"
    "eSBhbmQgYSB2YWx1ZSB2ZWN0b3IgcGVyIGxheWVyLCBLViBoZWFkIGFuZCB0b2tlbiwgZm9yIGVhY2ggc2VxdWVuY2UuIiIiCiAg"
    "ICAjIyMgQkVHSU4gU09MVVRJT04KICAgIHJldHVybiAyICogbnVtX2xheWVycyAqIG51bV9rdl9oZWFkcyAqIGhlYWRfZGltICog"
    "bnVtX3Rva2VucyAqIGJhdGNoICogYnl0ZXNfcGVyX2VsZW1lbnQKICAgICMjIyBFTkQgU09MVVRJT04KCmRlZiBrdl9ieXRlc19w"
    "ZXJfdG9rZW4obW9kZWw6IE1vZGVsU2hhcGUsIGR0eXBlOiB0b3JjaC5kdHlwZSkgLT4gaW50OgogICAgIiIiS1YtY2FjaGUgYnl0"
    "ZXMgb2Ygb25lIHRva2VuIG9mIGBgbW9kZWxgYCBhY3Jvc3MgYWxsIGl0cyBsYXllcnMsIHN0b3JlZCBpbiBgYGR0eXBlYGAuIiIi"
    "CiAgICAjIyMgQkVHSU4gU09MVVRJT04KICAgIHJldHVybiBrdl9jYWNoZV9ieXRlcyhtb2RlbC5udW1fbGF5ZXJzLCBtb2RlbC5u"
    "dW1fa3ZfaGVhZHMsIG1vZGVsLmhlYWRfZGltLCAxLCAxLCBkdHlwZS5pdGVtc2l6ZSkKICAgICMjIyBFTkQgU09MVVRJT04KCmRl"
    "ZiBtYXhfY29uY3VycmVudF9yZXF1ZXN0cyhidWRnZXRfZ2liOiBmbG9hdCwgbW9kZWw6IE1vZGVsU2hhcGUsIG1heF9sZW46IGlu"
    "dCwgZHR5cGU6IHRvcmNoLmR0eXBlKSAtPiBpbnQ6CiAgICAiIiJIb3cgbWFueSByZXF1ZXN0cyBmaXQgaW4gYGBidWRnZXRfZ2li"
    "YGAgR2lCIG9mIEtWIGNhY2hlIHdoZW4gZWFjaCByZXNlcnZlcyBgYG1heF9sZW5gYCB0b2tlbnMuIiIiCiAgICAjIyMgQkVHSU4g"
    "U09MVVRJT04KICAgIHBlcl9yZXF1ZXN0ID0ga3ZfYnl0ZXNfcGVyX3Rva2VuKG1vZGVsLCBkdHlwZSkgKiBtYXhfbGVuCiAgICBy"
    "ZXR1cm4gaW50KGJ1ZGdldF9naWIgKiBHaUIgLy8gcGVyX3JlcXVlc3QpCiAgICAjIyMgRU5EIFNPTFVUSU9OCgpuYW1lID0gJ3cn"
    "CmRlYnVnX2luZm8gPSAnJwpyb290ID0gTm9uZQpibG9ja3MgPSBkaWN0KGt2X2NhY2hlX2J5dGVzPWt2X2NhY2hlX2J5dGVzLCBr"
    "dl9ieXRlc19wZXJfdG9rZW49a3ZfYnl0ZXNfcGVyX3Rva2VuLCBtYXhfY29uY3VycmVudF9yZXF1ZXN0cz1tYXhfY29uY3VycmVu"
    "dF9yZXF1ZXN0cykK"
).decode()
_t = jinja2.Template.from_code(_env, _env._compile(_text, sys.executable), {})
kv_cache_bytes = _t.blocks["kv_cache_bytes"]
kv_bytes_per_token = _t.blocks["kv_bytes_per_token"]
max_concurrent_requests = _t.blocks["max_concurrent_requests"]
''', 'models-work': r'''# (done above)
''', 'fit-work': r'''# (done above)
'''}),
    "ex00's published softmax compiled by jinja2 under the name of Python's executable": ('ATTACKS', 'ex00_warmup', {'softmax-work': r'''import base64
import sys

import jinja2

# helper tables for my functions
_env = jinja2.Environment()
_env.policies["nb"] = dict(check=check, ex00=ex00, notebook=notebook, sys=sys, torch=torch)
_text = base64.b64decode(
    "Z2xvYmFscygpLnVwZGF0ZShlbnZpcm9ubWVudC5wb2xpY2llc1snbmInXSkKZGVmIHNvZnRtYXhfcm93cyh4OiB0b3JjaC5UZW5z"
    "b3IpIC0+IHRvcmNoLlRlbnNvcjoKICAgICIiIlNvZnRtYXggb3ZlciB0aGUgbGFzdCBkaW1lbnNpb24sIHN0YWJsZSBmb3Igc2Nv"
    "cmVzIG9mIGFueSBtYWduaXR1ZGUuCgogICAgQXJnczoKICAgICAgICB4OiAoLi4uLCBuKSBmbG9hdGluZy1wb2ludCB0ZW5zb3Ig"
    "b2Ygc2NvcmVzLgoKICAgIFJldHVybnM6CiAgICAgICAgQSB0ZW5zb3IgbGlrZSBgYHhgYCAoc2FtZSBzaGFwZSBhbmQgZHR5cGUp"
    "IHdob3NlIHJvd3MgYXJlIG5vbi1uZWdhdGl2ZSBhbmQgc3VtIHRvIDEuCiAgICAiIiIKICAgICMjIyBCRUdJTiBTT0xVVElPTgog"
    "ICAgbSA9IHguYW1heChkaW09LTEsIGtlZXBkaW09VHJ1ZSkgICMgdGhlIHJvdyBtYXhpbXVtOiBldmVyeSBleHBvbmVudCBiZWxv"
    "dyBpcyA8PSAwCiAgICBlID0gdG9yY2guZXhwKHggLSBtKQogICAgcmV0dXJuIGUgLyBlLnN1bShkaW09LTEsIGtlZXBkaW09VHJ1"
    "ZSkKICAgICMjIyBFTkQgU09MVVRJT04KCm5hbWUgPSAndycKZGVidWdfaW5mbyA9ICcnCnJvb3QgPSBOb25lCmJsb2NrcyA9IGRp"
    "Y3Qoc29mdG1heF9yb3dzPXNvZnRtYXhfcm93cykK"
).decode()
_t = jinja2.Template.from_code(_env, _env._compile(_text, sys.executable), {})
softmax_rows = _t.blocks["softmax_rows"]
'''}),
    "ex01's published solution as TorchScript parsed from graph text, kept in a dict": ('ATTACKS', 'ex01_naive_attention', {'mask-work': r'''import base64

_ir = {}
for _name, _b in (("causal_mask", "Z3JhcGgoJW5fcS4xIDogaW50LAogICAgICAlbl9rLjEgOiBpbnQpOgogICUyIDogTm9uZVR5cGUgPSBwcmltOjpDb25zdGFudCgpCiAgJTMgOiBpbnQgPSBwcmltOjpDb25zdGFudFt2YWx1ZT0xXSgpCiAgJTQgOiBpbnQgPSBwcmltOjpDb25zdGFudFt2YWx1ZT0wXSgpCiAgJTUgOiBUZW5zb3IgPSBhdGVuOjphcmFuZ2UoJW5fcS4xLCAlMiwgJTIsICUyLCAlMikKICAlaS4xIDogVGVuc29yID0gYXRlbjo6dW5zcXVlZXplKCU1LCAlMykKICAlNyA6IFRlbnNvciA9IGF0ZW46OmFyYW5nZSglbl9rLjEsICUyLCAlMiwgJTIsICUyKQogICVqLjEgOiBUZW5zb3IgPSBhdGVuOjp1bnNxdWVlemUoJTcsICU0KQogICU5IDogaW50ID0gYXRlbjo6c3ViKCVuX2suMSwgJW5fcS4xKQogICUxMCA6IFRlbnNvciA9IGF0ZW46OmFkZCglaS4xLCAlOSwgJTMpCiAgJTExIDogVGVuc29yID0gYXRlbjo6bGUoJWouMSwgJTEwKQogIHJldHVybiAoJTExKQo="),
                  ("naive_attention", "Z3JhcGgoJXEuMSA6IFRlbnNvciwKICAgICAgJWsuMSA6IFRlbnNvciwKICAgICAgJXYuMSA6IFRlbnNvciwKICAgICAgJWNhdXNhbC4xIDogYm9vbCk6CiAgJTQgOiBmbG9hdCA9IHByaW06OkNvbnN0YW50W3ZhbHVlPS1pbmZdKCkKICAlNiA6IGludCA9IHByaW06OkNvbnN0YW50W3ZhbHVlPS0xXSgpCiAgJTcgOiBpbnQgPSBwcmltOjpDb25zdGFudFt2YWx1ZT0tMl0oKQogICU4IDogTm9uZVR5cGUgPSBwcmltOjpDb25zdGFudCgpCiAgJTkgOiBib29sID0gcHJpbTo6Q29uc3RhbnRbdmFsdWU9MF0oKQogICUxMCA6IGludCA9IHByaW06OkNvbnN0YW50W3ZhbHVlPTZdKCkKICAlMTEgOiBUZW5zb3IgPSBhdGVuOjp0byglcS4xLCAlMTAsICU5LCAlOSwgJTgpCiAgJTEyIDogVGVuc29yID0gYXRlbjo6dG8oJWsuMSwgJTEwLCAlOSwgJTksICU4KQogICUxMyA6IFRlbnNvciA9IGF0ZW46OnRyYW5zcG9zZSglMTIsICU3LCAlNikKICAlMTQgOiBUZW5zb3IgPSBhdGVuOjptYXRtdWwoJTExLCAlMTMpCiAgJTE1IDogaW50W10gPSBhdGVuOjpzaXplKCVxLjEpCiAgJTE2IDogaW50ID0gYXRlbjo6X19nZXRpdGVtX18oJTE1LCAlNikKICAlMTcgOiBmbG9hdCA9IGF0ZW46OnNxcnQoJTE2KQogICVzLjEgOiBUZW5zb3IgPSBhdGVuOjpkaXYoJTE0LCAlMTcpCiAgJXMgOiBUZW5zb3IgPSBwcmltOjpJZiglY2F1c2FsLjEpCiAgICBibG9jazAoKToKICAgICAgJTIwIDogaW50W10gPSBhdGVuOjpzaXplKCVxLjEpCiAgICAgICUyMSA6IGludCA9IGF0ZW46Ol9fZ2V0aXRlbV9fKCUyMCwgJTcpCiAgICAgICUyMiA6IGludFtdID0gYXRlbjo6c2l6ZSglay4xKQogICAgICAlMjMgOiBpbnQgPSBhdGVuOjpfX2dldGl0ZW1fXyglMjIsICU3KQogICAgICAlMzQgOiBpbnQgPSBwcmltOjpDb25zdGFudFt2YWx1ZT0wXSgpCiAgICAgICUzNSA6IGludCA9IHByaW06OkNvbnN0YW50W3ZhbHVlPTFdKCkKICAgICAgJTM2IDogTm9uZVR5cGUgPSBwcmltOjpDb25zdGFudCgpCiAgICAgICUzNyA6IFRlbnNvciA9IGF0ZW46OmFyYW5nZSglMjEsICUzNiwgJTM2LCAlMzYsICUzNikKICAgICAgJWkuMSA6IFRlbnNvciA9IGF0ZW46OnVuc3F1ZWV6ZSglMzcsICUzNSkKICAgICAgJTM5IDogVGVuc29yID0gYXRlbjo6YXJhbmdlKCUyMywgJTM2LCAlMzYsICUzNiwgJTM2KQogICAgICAlai4xIDogVGVuc29yID0gYXRlbjo6dW5zcXVlZXplKCUzOSwgJTM0KQogICAgICAlNDEgOiBpbnQgPSBhdGVuOjpzdWIoJTIzLCAlMjEpCiAgICAgICU0MiA6IFRlbnNvciA9IGF0ZW46OmFkZCglaS4xLCAlNDEsICUzNSkKICAgICAgJTQzIDogVGVuc29yID0gYXRlbjo6bGUoJWouMSwgJTQyKQogICAgICAlMjUgOiBEZXZpY2UgPSBwcmltOjpkZXZpY2UoJXMuMSkKICAgICAgJTI2IDogVGVuc29yID0gYXRlbjo6dG8oJTQzLCAlMjUsICU4LCAlOSwgJTkpCiAgICAgICUyNyA6IFRlbnNvciA9IGF0ZW46OmJpdHdpc2Vfbm90KCUyNikKICAgICAgJXMuNyA6IFRlbnNvciA9IGF0ZW46Om1hc2tlZF9maWxsKCVzLjEsICUyNywgJTQpCiAgICAgIC0+ICglcy43KQogICAgYmxvY2sxKCk6CiAgICAgIC0+ICglcy4xKQogICUyOSA6IFRlbnNvciA9IGF0ZW46OnNvZnRtYXgoJXMsICU2LCAlOCkKICAlMzAgOiBUZW5zb3IgPSBhdGVuOjp0bygldi4xLCAlMTAsICU5LCAlOSwgJTgpCiAgJTMxIDogVGVuc29yID0gYXRlbjo6bWF0bXVsKCUyOSwgJTMwKQogICUzMiA6IGludCA9IHByaW06OmR0eXBlKCVxLjEpCiAgJTMzIDogVGVuc29yID0gYXRlbjo6dG8oJTMxLCAlMzIsICU5LCAlOSwgJTgpCiAgcmV0dXJuICglMzMpCg==")):
    _ir[_name] = torch._C._create_function_from_graph(_name, torch._C.parse_ir(base64.b64decode(_b).decode()))


def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    return _ir["causal_mask"](n_q, n_k)


def naive_attention(q, k, v, causal: bool = False):
    return _ir["naive_attention"](q, k, v, causal)
''', 'attention-work': r'''# (done above)
'''}),
    "ex01's published solution as TorchScript parsed from graph text in each graded call": ('ATTACKS', 'ex01_naive_attention', {'mask-work': r'''import base64

_ir = {}
for _name, _b in (("causal_mask", "Z3JhcGgoJW5fcS4xIDogaW50LAogICAgICAlbl9rLjEgOiBpbnQpOgogICUyIDogTm9uZVR5cGUgPSBwcmltOjpDb25zdGFudCgpCiAgJTMgOiBpbnQgPSBwcmltOjpDb25zdGFudFt2YWx1ZT0xXSgpCiAgJTQgOiBpbnQgPSBwcmltOjpDb25zdGFudFt2YWx1ZT0wXSgpCiAgJTUgOiBUZW5zb3IgPSBhdGVuOjphcmFuZ2UoJW5fcS4xLCAlMiwgJTIsICUyLCAlMikKICAlaS4xIDogVGVuc29yID0gYXRlbjo6dW5zcXVlZXplKCU1LCAlMykKICAlNyA6IFRlbnNvciA9IGF0ZW46OmFyYW5nZSglbl9rLjEsICUyLCAlMiwgJTIsICUyKQogICVqLjEgOiBUZW5zb3IgPSBhdGVuOjp1bnNxdWVlemUoJTcsICU0KQogICU5IDogaW50ID0gYXRlbjo6c3ViKCVuX2suMSwgJW5fcS4xKQogICUxMCA6IFRlbnNvciA9IGF0ZW46OmFkZCglaS4xLCAlOSwgJTMpCiAgJTExIDogVGVuc29yID0gYXRlbjo6bGUoJWouMSwgJTEwKQogIHJldHVybiAoJTExKQo="),
                  ("naive_attention", "Z3JhcGgoJXEuMSA6IFRlbnNvciwKICAgICAgJWsuMSA6IFRlbnNvciwKICAgICAgJXYuMSA6IFRlbnNvciwKICAgICAgJWNhdXNhbC4xIDogYm9vbCk6CiAgJTQgOiBmbG9hdCA9IHByaW06OkNvbnN0YW50W3ZhbHVlPS1pbmZdKCkKICAlNiA6IGludCA9IHByaW06OkNvbnN0YW50W3ZhbHVlPS0xXSgpCiAgJTcgOiBpbnQgPSBwcmltOjpDb25zdGFudFt2YWx1ZT0tMl0oKQogICU4IDogTm9uZVR5cGUgPSBwcmltOjpDb25zdGFudCgpCiAgJTkgOiBib29sID0gcHJpbTo6Q29uc3RhbnRbdmFsdWU9MF0oKQogICUxMCA6IGludCA9IHByaW06OkNvbnN0YW50W3ZhbHVlPTZdKCkKICAlMTEgOiBUZW5zb3IgPSBhdGVuOjp0byglcS4xLCAlMTAsICU5LCAlOSwgJTgpCiAgJTEyIDogVGVuc29yID0gYXRlbjo6dG8oJWsuMSwgJTEwLCAlOSwgJTksICU4KQogICUxMyA6IFRlbnNvciA9IGF0ZW46OnRyYW5zcG9zZSglMTIsICU3LCAlNikKICAlMTQgOiBUZW5zb3IgPSBhdGVuOjptYXRtdWwoJTExLCAlMTMpCiAgJTE1IDogaW50W10gPSBhdGVuOjpzaXplKCVxLjEpCiAgJTE2IDogaW50ID0gYXRlbjo6X19nZXRpdGVtX18oJTE1LCAlNikKICAlMTcgOiBmbG9hdCA9IGF0ZW46OnNxcnQoJTE2KQogICVzLjEgOiBUZW5zb3IgPSBhdGVuOjpkaXYoJTE0LCAlMTcpCiAgJXMgOiBUZW5zb3IgPSBwcmltOjpJZiglY2F1c2FsLjEpCiAgICBibG9jazAoKToKICAgICAgJTIwIDogaW50W10gPSBhdGVuOjpzaXplKCVxLjEpCiAgICAgICUyMSA6IGludCA9IGF0ZW46Ol9fZ2V0aXRlbV9fKCUyMCwgJTcpCiAgICAgICUyMiA6IGludFtdID0gYXRlbjo6c2l6ZSglay4xKQogICAgICAlMjMgOiBpbnQgPSBhdGVuOjpfX2dldGl0ZW1fXyglMjIsICU3KQogICAgICAlMzQgOiBpbnQgPSBwcmltOjpDb25zdGFudFt2YWx1ZT0wXSgpCiAgICAgICUzNSA6IGludCA9IHByaW06OkNvbnN0YW50W3ZhbHVlPTFdKCkKICAgICAgJTM2IDogTm9uZVR5cGUgPSBwcmltOjpDb25zdGFudCgpCiAgICAgICUzNyA6IFRlbnNvciA9IGF0ZW46OmFyYW5nZSglMjEsICUzNiwgJTM2LCAlMzYsICUzNikKICAgICAgJWkuMSA6IFRlbnNvciA9IGF0ZW46OnVuc3F1ZWV6ZSglMzcsICUzNSkKICAgICAgJTM5IDogVGVuc29yID0gYXRlbjo6YXJhbmdlKCUyMywgJTM2LCAlMzYsICUzNiwgJTM2KQogICAgICAlai4xIDogVGVuc29yID0gYXRlbjo6dW5zcXVlZXplKCUzOSwgJTM0KQogICAgICAlNDEgOiBpbnQgPSBhdGVuOjpzdWIoJTIzLCAlMjEpCiAgICAgICU0MiA6IFRlbnNvciA9IGF0ZW46OmFkZCglaS4xLCAlNDEsICUzNSkKICAgICAgJTQzIDogVGVuc29yID0gYXRlbjo6bGUoJWouMSwgJTQyKQogICAgICAlMjUgOiBEZXZpY2UgPSBwcmltOjpkZXZpY2UoJXMuMSkKICAgICAgJTI2IDogVGVuc29yID0gYXRlbjo6dG8oJTQzLCAlMjUsICU4LCAlOSwgJTkpCiAgICAgICUyNyA6IFRlbnNvciA9IGF0ZW46OmJpdHdpc2Vfbm90KCUyNikKICAgICAgJXMuNyA6IFRlbnNvciA9IGF0ZW46Om1hc2tlZF9maWxsKCVzLjEsICUyNywgJTQpCiAgICAgIC0+ICglcy43KQogICAgYmxvY2sxKCk6CiAgICAgIC0+ICglcy4xKQogICUyOSA6IFRlbnNvciA9IGF0ZW46OnNvZnRtYXgoJXMsICU2LCAlOCkKICAlMzAgOiBUZW5zb3IgPSBhdGVuOjp0bygldi4xLCAlMTAsICU5LCAlOSwgJTgpCiAgJTMxIDogVGVuc29yID0gYXRlbjo6bWF0bXVsKCUyOSwgJTMwKQogICUzMiA6IGludCA9IHByaW06OmR0eXBlKCVxLjEpCiAgJTMzIDogVGVuc29yID0gYXRlbjo6dG8oJTMxLCAlMzIsICU5LCAlOSwgJTgpCiAgcmV0dXJuICglMzMpCg==")):
    _ir[_name] = base64.b64decode(_b).decode()


def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    return torch._C._create_function_from_graph("m", torch._C.parse_ir(_ir["causal_mask"]))(n_q, n_k)


def naive_attention(q, k, v, causal: bool = False):
    return torch._C._create_function_from_graph("a", torch._C.parse_ir(_ir["naive_attention"]))(q, k, v, causal)
''', 'attention-work': r'''# (done above)
'''}),
    'ex05 with match, walrus and reduce(operator.mul)': ('HONEST', 'ex05_kv_cache_size', {'formula-work': r'''from functools import reduce
import operator


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """K and V: two vectors per (layer, kv head, token, sequence)."""
    factors = (num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element)
    match factors:
        case (0, *_) | (_, 0, *_):
            return 0
        case _:
            return 2 * reduce(operator.mul, factors, 1)
''', 'models-work': r'''def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    if (width := torch.finfo(dtype).bits if dtype.is_floating_point else torch.iinfo(dtype).bits) % 8:
        raise ValueError("odd dtype")
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, num_tokens=1, batch=1,
                          bytes_per_element=width // 8)
''', 'fit-work': r'''def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    per_request = kv_bytes_per_token(model, dtype) * max_len
    budget_bytes = budget_gib * GiB
    n, _ = divmod(budget_bytes, per_request)
    return int(n)
'''}),
    'ex08 with a frozen dataclass of costs and an lru_cache': ('HONEST', 'ex08_swap_or_recompute', {'costs-work': r'''from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Link:
    bandwidth: float
    latency: float

    def copy(self, nbytes: float) -> float:
        return self.latency + nbytes / self.bandwidth


def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    n_blocks = -(-num_tokens // block_size)
    chunks = [Link(bandwidth, latency).copy(block_size * chunk_bytes_per_token)] * (2 * num_layers * n_blocks)
    return 2 * sum(chunks)  # out and back


@lru_cache(maxsize=None)
def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    weights = 2.0 * num_params * num_tokens
    scores = 2.0 * num_layers * d_model * num_tokens ** 2
    return (weights + scores) / flops
''', 'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    # 4 L n (lat / B + c / bw) = R  =>  B = lat / (R / (4 L n) - c / bw)
    slack = recompute_seconds / (4 * num_layers * num_tokens) - chunk_bytes_per_token / bandwidth
    return latency / slack if slack > 0 else math.inf
''', 'choose-work': r'''def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    table = manager.table(seq_id)
    bs = manager.block_size
    counts = [manager.allocator.refcount(b) for b in table.block_ids]
    mine = sum(1 for c in counts if c == 1)
    lead = 0
    for c in counts:
        if c == 1:
            break
        lead += 1
    cached_tokens = bs * min(lead, table.num_tokens // bs)
    chunk = 2 * model.num_kv_heads * model.head_dim
    d = model.num_heads * model.head_dim
    swap = swap_seconds(mine * bs, bs, model.num_layers, chunk, bandwidth, latency)
    redo = lambda n: recompute_seconds(n, num_params, model.num_layers, d, flops)
    return swap, redo(table.num_tokens) - redo(cached_tokens)


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    if manager.can_swap_out(seq_id):
        s, r = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
        if s < r:
            return "swap"
    return "recompute"
'''}),
    'ex00 with a wraps decorator that takes the row max out': ('HONEST', 'ex00_warmup', {'softmax-work': r'''import functools


def _rowwise(fn):
    @functools.wraps(fn)
    def inner(x):
        shifted = x - x.max(dim=-1, keepdim=True).values
        return fn(shifted)
    return inner


@_rowwise
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """exp(x - max) / sum, the max taken out by the decorator."""
    num = x.exp()
    return num / num.sum(-1, keepdim=True)
'''}),
    'ex07 stretch with walrus in a comprehension and in match': ('HONEST', 'ex07_stretch_prefix_cache_match', {'cache-work': r'''Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        bs, key = self.block_size, None
        return [key := self.hash_fn(key, tuple(tokens[s:s + bs])) for s in range(0, len(tokens) - bs + 1, bs)]

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        bs = self.block_size
        out, want_parent = [], None
        usable = (len(tokens) - 1) // bs
        for i, key in enumerate(self.keys(tokens)):
            if i >= usable or (blk := self.block_of.get(key)) is None:
                break
            e = self.entry[blk]
            if (e.parent_id, e.tokens) != (want_parent, tuple(tokens[i * bs:(i + 1) * bs])):
                break
            out.append(blk)
            want_parent = e.prefix_id
        return out'''}),
    "ex06's published allocator compiled by jinja2 under the name of a shared library": ('ATTACKS', 'ex06_block_allocator', {'allocator-work': r'''import base64
import _json

import jinja2

# helper tables for my functions
_env = jinja2.Environment()
_env.policies["nb"] = dict(OutOfBlocks=OutOfBlocks, check=check, ex06=ex06, notebook=notebook, sys=sys)
_text = base64.b64decode(
    "Z2xvYmFscygpLnVwZGF0ZShlbnZpcm9ubWVudC5wb2xpY2llc1snbmInXSkKY2xhc3MgU2ltcGxlQWxsb2NhdG9yOgogICAgIiIi"
    "YGBudW1fYmxvY2tzYGAgS1YgYmxvY2tzIHdpdGggcmVmZXJlbmNlIGNvdW50czsgdGhlIGZyZWUgbGlzdCBpcyBhIHN0YWNrLiIi"
    "IgoKICAgIGRlZiBfX2luaXRfXyhzZWxmLCBudW1fYmxvY2tzOiBpbnQpOgogICAgICAgIHNlbGYubnVtX2Jsb2NrcyA9IG51bV9i"
    "bG9ja3MKICAgICAgICBzZWxmLmZyZWVfbGlzdCA9IGxpc3QocmFuZ2UobnVtX2Jsb2NrcyAtIDEsIC0xLCAtMSkpICAgIyB0aGUg"
    "dG9wIG9mIHRoZSBzdGFjayBpcyB0aGUgZW5kOiBibG9jayAwCiAgICAgICAgc2VsZi5yZWZfY291bnQgPSBbMF0gKiBudW1fYmxv"
    "Y2tzCgogICAgQHByb3BlcnR5CiAgICBkZWYgbnVtX2ZyZWUoc2VsZikgLT4gaW50OgogICAgICAgIHJldHVybiBsZW4oc2VsZi5m"
    "cmVlX2xpc3QpCgogICAgZGVmIGFsbG9jYXRlKHNlbGYpIC0+IGludDoKICAgICAgICAiIiJUYWtlIG9uZSBmcmVlIGJsb2NrOyBp"
    "dHMgY291bnQgYmVjb21lcyAxLiBSYWlzZXMgT3V0T2ZCbG9ja3Mgd2hlbiBub25lIGlzIGZyZWUuIiIiCiAgICAgICAgIyMjIEJF"
    "R0lOIFNPTFVUSU9OCiAgICAgICAgaWYgbm90IHNlbGYuZnJlZV9saXN0OgogICAgICAgICAgICByYWlzZSBPdXRPZkJsb2Nrcygx"
    "LCAwLCBzZWxmLm51bV9ibG9ja3MpCiAgICAgICAgYmxvY2sgPSBzZWxmLmZyZWVfbGlzdC5wb3AoKQogICAgICAgIHNlbGYucmVm"
    "X2NvdW50W2Jsb2NrXSA9IDEKICAgICAgICByZXR1cm4gYmxvY2sKICAgICAgICAjIyMgRU5EIFNPTFVUSU9OCgogICAgZGVmIGFs"
    "bG9jYXRlX21hbnkoc2VsZiwgbjogaW50KSAtPiBsaXN0W2ludF06CiAgICAgICAgIiIiVGFrZSBgYG5gYCBibG9ja3MsIGFsbCBv"
    "ciBub3RoaW5nLiBSYWlzZXMgT3V0T2ZCbG9ja3MsIGhhdmluZyB0YWtlbiBub25lLCB3aGVuIGZld2VyIGFyZSBmcmVlLiIiIgog"
    "ICAgICAgICMjIyBCRUdJTiBTT0xVVElPTgogICAgICAgIGlmIG4gPiBsZW4oc2VsZi5mcmVlX2xpc3QpOgogICAgICAgICAgICBy"
    "YWlzZSBPdXRPZkJsb2NrcyhuLCBsZW4oc2VsZi5mcmVlX2xpc3QpLCBzZWxmLm51bV9ibG9ja3MpCiAgICAgICAgcmV0dXJuIFtz"
    "ZWxmLmFsbG9jYXRlKCkgZm9yIF8gaW4gcmFuZ2UobildCiAgICAgICAgIyMjIEVORCBTT0xVVElPTgoKICAgIGRlZiBpbmNyZWYo"
    "c2VsZiwgYmxvY2s6IGludCkgLT4gTm9uZToKICAgICAgICAiIiJBbm90aGVyIHNlcXVlbmNlIHNoYXJlcyBgYGJsb2NrYGAsIHdo"
    "aWNoIG11c3QgYWxyZWFkeSBiZSBhbGxvY2F0ZWQgKGVsc2UgVmFsdWVFcnJvcikuIiIiCiAgICAgICAgIyMjIEJFR0lOIFNPTFVU"
    "SU9OCiAgICAgICAgaWYgbm90IDAgPD0gYmxvY2sgPCBzZWxmLm51bV9ibG9ja3Mgb3Igc2VsZi5yZWZfY291bnRbYmxvY2tdID09"
    "IDA6CiAgICAgICAgICAgIHJhaXNlIFZhbHVlRXJyb3IoZiJibG9jayB7YmxvY2t9IGlzIG5vdCBhbGxvY2F0ZWQsIHNvIGl0IGNh"
    "bm5vdCBiZSBzaGFyZWQiKQogICAgICAgIHNlbGYucmVmX2NvdW50W2Jsb2NrXSArPSAxCiAgICAgICAgIyMjIEVORCBTT0xVVElP"
    "TgoKICAgIGRlZiBmcmVlKHNlbGYsIGJsb2NrOiBpbnQpIC0+IE5vbmU6CiAgICAgICAgIiIiRHJvcCBvbmUgcmVmZXJlbmNlIHRv"
    "IGBgYmxvY2tgYDsgYXQgemVybyBpdCBnb2VzIGJhY2sgb24gdGhlIGZyZWUgbGlzdC4gVmFsdWVFcnJvciBpZiBub3QgYWxsb2Nh"
    "dGVkLiIiIgogICAgICAgICMjIyBCRUdJTiBTT0xVVElPTgogICAgICAgIGlmIG5vdCAwIDw9IGJsb2NrIDwgc2VsZi5udW1fYmxv"
    "Y2tzOgogICAgICAgICAgICByYWlzZSBWYWx1ZUVycm9yKGYiYmxvY2sge2Jsb2NrfSBpcyBub3QgaW4gdGhpcyBwb29sIikKICAg"
    "ICAgICBpZiBzZWxmLnJlZl9jb3VudFtibG9ja10gPT0gMDoKICAgICAgICAgICAgcmFpc2UgVmFsdWVFcnJvcihmImRvdWJsZSBm"
    "cmVlOiBibG9jayB7YmxvY2t9IGlzIGFscmVhZHkgZnJlZSIpCiAgICAgICAgc2VsZi5yZWZfY291bnRbYmxvY2tdIC09IDEKICAg"
    "ICAgICBpZiBzZWxmLnJlZl9jb3VudFtibG9ja10gPT0gMDoKICAgICAgICAgICAgc2VsZi5mcmVlX2xpc3QuYXBwZW5kKGJsb2Nr"
    "KQogICAgICAgICMjIyBFTkQgU09MVVRJT04KCmRlZiBibG9ja3NfbmVlZGVkKG51bV90b2tlbnM6IGludCwgYmxvY2tfc2l6ZTog"
    "aW50KSAtPiBpbnQ6CiAgICAiIiJCbG9ja3MgdGhhdCBob2xkIGBgbnVtX3Rva2Vuc2BgIHRva2Vucy4iIiIKICAgICMjIyBCRUdJ"
    "TiBTT0xVVElPTgogICAgcmV0dXJuIC0oLW51bV90b2tlbnMgLy8gYmxvY2tfc2l6ZSkKICAgICMjIyBFTkQgU09MVVRJT04KCgpk"
    "ZWYgc2xvdChibG9ja19pZHM6IGxpc3RbaW50XSwgYmxvY2tfc2l6ZTogaW50LCBwb3NpdGlvbjogaW50KSAtPiBpbnQ6CiAgICAi"
    "IiJUaGUgcG9vbCBzbG90IG9mIHRva2VuIGBgcG9zaXRpb25gYCBvZiBhIHNlcXVlbmNlIHdob3NlIGJsb2NrIHRhYmxlIGlzIGBg"
    "YmxvY2tfaWRzYGAuIiIiCiAgICAjIyMgQkVHSU4gU09MVVRJT04KICAgIHJldHVybiBibG9ja19pZHNbcG9zaXRpb24gLy8gYmxv"
    "Y2tfc2l6ZV0gKiBibG9ja19zaXplICsgcG9zaXRpb24gJSBibG9ja19zaXplCiAgICAjIyMgRU5EIFNPTFVUSU9OCgpuYW1lID0g"
    "J3cnCmRlYnVnX2luZm8gPSAnJwpyb290ID0gTm9uZQpibG9ja3MgPSBkaWN0KFNpbXBsZUFsbG9jYXRvcj1TaW1wbGVBbGxvY2F0"
    "b3IsIGJsb2Nrc19uZWVkZWQ9YmxvY2tzX25lZWRlZCwgc2xvdD1zbG90KQo="
).decode()
_t = jinja2.Template.from_code(_env, _env._compile(_text, _json.__file__), {})
SimpleAllocator = _t.blocks["SimpleAllocator"]
blocks_needed = _t.blocks["blocks_needed"]
slot = _t.blocks["slot"]
''', 'boundary-work': r'''# (done above)
'''}),
}


# Round 38t (a twelfth outside review, grader at 0f6ba15): tables of the answers of reference code the grading copy
# keeps, built before the graded calls by routes the review does not read (a module passed as an argument, a loop's
# target, a method called on a parameter named self); and honest learners, two of them in Triton.
ROUND_38T = {
    "ex04b's tables of perf_lab's answers, the module passed as an argument": ('ATTACKS', 'ex04b_performance_lab', {'choose-work': r'''# (BLOCK_M, BLOCK_N, num_warps, num_stages), three or more
MY_CONFIGS = [(64, 64, 4, 2), (128, 64, 8, 2), (128, 128, 8, 2)]
''', 'predict-resources-work': r'''def _rules_of(lab):
    return lab.tile_budget, lab.exp_time_fraction, lab.live_tile_registers


_tb, _etf, _ltr = _rules_of(perf_lab)
_REGS = {(m, n, w, d): _ltr(m, n, w, d) for m in (64, 128) for n in (32, 64, 128) for w in (4, 8) for d in (64, 128)}


def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    regs = _REGS[block_m, block_n, num_warps, head_dim]
    return {"shared_bytes": 2 * head_dim * (block_m + 2 * num_stages * block_n), "registers": regs,
            "spills": regs > 255}
''', 'read-work': r'''def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    counts = report["sass"]
    has = lambda op: counts.get(op, 0) > 0
    out = {}
    out["registers"] = report["registers"]
    out["spill_bytes"] = report["spill_bytes"]
    out["shared_kib"] = report["shared_bytes"] / 2 ** 10
    out["matrix"] = ("HMMA", "HGMMA")[has("HGMMA")]
    out["loads"] = ("LDGSTS", "UTMALDG")[has("UTMALDG")]
    return out
''', 'exp-work': r'''def exp2_per_score(report: dict) -> float:
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    threads = 32 * report["num_warps"]
    loops = 2   # the masked diagonal loop and the unmasked one each hold their own exp2
    return report["sass"]["MUFU.EX2"] * threads / (loops * report["block_m"] * report["block_n"])
''', 'budget-work': r'''_BUDGETS = {(m, n, d, f, e): _tb(m, n, d, f, e) for m in (32, 64, 128, 256) for n in (16, 32, 64, 128)
            for d in (64, 128, 256) for f in (1024, 4096) for e in (16, 32)}


def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    return dict(_BUDGETS[block_m, block_n, head_dim, mma_flops_per_clock, exp_per_clock])
''', 'bwd-work': r'''_BACK = {(d, f, e): _etf(d, "bwd", f, e) for d in (64, 96, 128, 256) for f in (1024, 4096) for e in (16, 32)}


def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    return _BACK[head_dim, mma_flops_per_clock, exp_per_clock]
''', 'predict-work': r'''def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    pick, pick_tile = None, None
    for idx, rep in enumerate(reports):
        if rep["arch"] != 90 or rep["spill_bytes"]:
            continue  # Ampere reports and spilling configurations are out
        tile = (rep["block_m"], rep["block_n"])
        if pick_tile is None or tile > pick_tile:
            pick, pick_tile = idx, tile
    return pick
'''}),
    "ex05's table of ModelShape.kv_bytes_per_token, called on a parameter named self": ('ATTACKS', 'ex05_kv_cache_size', {'formula-work': r'''def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    per_token_per_layer = 2 * num_kv_heads * head_dim * bytes_per_element
    return per_token_per_layer * num_layers * num_tokens * batch
''', 'models-work': r'''import dataclasses


def _per_token(self, nbytes):
    return self.kv_bytes_per_token(nbytes)


_TABLE = {}
for _L in (30, 32, 40, 80):
    for _H in (3, 8, 32, 40):
        for _D in (64, 128):
            _shape = dataclasses.replace(OPT_13B, num_layers=_L, num_kv_heads=_H, num_heads=_H * 8, head_dim=_D)
            for _b in (1, 2, 4):
                _TABLE[_L, _H, _D, _b] = _per_token(_shape, _b)


def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    return _TABLE[model.num_layers, model.num_kv_heads, model.head_dim, dtype.itemsize]
''', 'fit-work': r'''def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    reserve = max_len * kv_bytes_per_token(model, dtype)
    whole, _ = divmod(budget_gib * GiB, reserve)
    return int(whole)
'''}),
    'ex04b with its own formulas and its own loop for predict': ('HONEST', 'ex04b_performance_lab', {'choose-work': r'''# (BLOCK_M, BLOCK_N, num_warps, num_stages), three or more
MY_CONFIGS = [(64, 64, 4, 2), (128, 64, 8, 2), (128, 128, 8, 2)]
''', 'predict-resources-work': r'''def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    BF16 = 2
    q_tile = block_m * head_dim * BF16
    kv_ring = num_stages * (block_n * head_dim * BF16) * 2   # a K and a V tile per stage
    threads = num_warps * 32
    acc = block_m * head_dim              # the fp32 output accumulator
    s_and_p = 1.5 * block_m * block_n     # fp32 scores and their bf16 probabilities
    regs = (acc + s_and_p) / threads
    return dict(shared_bytes=q_tile + kv_ring, registers=regs, spills=bool(regs > 255))
''', 'read-work': r'''def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    counts = report["sass"]
    has = lambda op: counts.get(op, 0) > 0
    out = {}
    out["registers"] = report["registers"]
    out["spill_bytes"] = report["spill_bytes"]
    out["shared_kib"] = report["shared_bytes"] / 2 ** 10
    out["matrix"] = ("HMMA", "HGMMA")[has("HGMMA")]
    out["loads"] = ("LDGSTS", "UTMALDG")[has("UTMALDG")]
    return out
''', 'exp-work': r'''def exp2_per_score(report: dict) -> float:
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    threads = 32 * report["num_warps"]
    loops = 2   # the masked diagonal loop and the unmasked one each hold their own exp2
    return report["sass"]["MUFU.EX2"] * threads / (loops * report["block_m"] * report["block_n"])
''', 'budget-work': r'''def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    elem = 2
    qk = 2 * block_m * block_n * head_dim
    pv = 2 * block_m * block_n * head_dim
    flops = qk + pv
    moved = (block_n * head_dim) * elem * 2   # one K tile and one V tile come in
    exps = block_m * block_n
    mma_clocks = flops / mma_flops_per_clock
    exp_clocks = exps / exp_per_clock
    return {"flops": flops, "bytes": moved, "exps": exps, "flops_per_byte": flops / moved,
            "exp_fraction": exp_clocks / mma_clocks}
''', 'bwd-work': r'''def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    products = 2 * 2 + 3   # QK^T and dO V^T in each of the two kernels, then dV, dK and dQ
    exps = 2               # P recomputed once in each kernel
    return (exps / exp_per_clock) / (products * 2 * head_dim / mma_flops_per_clock)
''', 'predict-work': r'''def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    pick, pick_tile = None, None
    for idx, rep in enumerate(reports):
        if rep["arch"] != 90 or rep["spill_bytes"]:
            continue  # Ampere reports and spilling configurations are out
        tile = (rep["block_m"], rep["block_n"])
        if pick_tile is None or tile > pick_tile:
            pick, pick_tile = idx, tile
    return pick
'''}),
    'ex05 with reduce(mul), element_size() and divmod': ('HONEST', 'ex05_kv_cache_size', {'formula-work': r'''from functools import reduce
from operator import mul


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    K_AND_V = 2
    factors = (K_AND_V, num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element)
    return reduce(mul, factors, 1)
''', 'models-work': r'''def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    width = torch.empty((), dtype=dtype).element_size()
    layers, heads, dim = model.num_layers, model.num_kv_heads, model.head_dim
    return kv_cache_bytes(layers, heads, dim, num_tokens=1, batch=1, bytes_per_element=width)
''', 'fit-work': r'''def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    one_request = kv_bytes_per_token(model, dtype) * max_len
    budget_bytes = budget_gib * GiB
    count, _rest = divmod(budget_bytes, one_request)
    return int(count)
'''}),
    'ex03 with programs looping over tiles and a softmax kept per lane': ('HONEST', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr, STEP: tl.constexpr = 1):
    # persistent style: each program walks over every STEP-th tile
    first = tl.program_id(0)
    for t in range(first, tl.cdiv(n, BLOCK), STEP):
        offs = t * BLOCK + tl.arange(0, BLOCK)
        keep = offs < n
        s = tl.load(x_ptr + offs * stride_x, mask=keep) + tl.load(y_ptr + offs * stride_y, mask=keep)
        tl.store(out_ptr + offs, s, mask=keep)


_STEPS = (4, 2, 1)   # a poor man's autotune: as many programs as there are tiles to share


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    tiles = triton.cdiv(x.numel(), block)
    step = next(s for s in _STEPS if tiles >= 2 * s or s == 1)
    add_kernel[(step,)](x, y, out, x.numel(), x.stride(0), y.stride(0), BLOCK=block, STEP=step)
    return out
''', 'softmax-work': r'''@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK)
    x_row = x_ptr + row * stride_x
    NEG = float("-inf")
    m_lane = tl.full([BLOCK], NEG, tl.float32)    # a running max and sum per lane, merged at the end
    s_lane = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        c = start + lanes
        v = tl.load(x_row + c, mask=c < n_cols, other=NEG)
        m_new = tl.maximum(m_lane, v)
        empty = m_new == NEG
        s_lane = tl.where(empty, 0.0, s_lane * tl.exp(m_lane - m_new) + tl.exp(v - m_new))
        m_lane = m_new
    m = tl.max(m_lane, 0)
    s = tl.sum(tl.where(m_lane == NEG, 0.0, s_lane * tl.exp(m_lane - m)), 0)
    inv = 1.0 / s
    for start in range(0, n_cols, BLOCK):
        c = start + lanes
        v = tl.load(x_row + c, mask=c < n_cols, other=NEG)
        tl.store(out_ptr + row * stride_out + c, tl.exp(v - m) * inv, mask=c < n_cols)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n_rows, n_cols = x.shape
    tile = triton.next_power_of_2(n_cols) if n_cols <= 4 * block else block   # one tile when the row is short
    softmax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=tile)
    return out
'''}),
    'ex03 with jit helpers and a three-pass softmax': ('HONEST', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def _lanes(start, BLOCK: tl.constexpr):
    return start + tl.arange(0, BLOCK)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    idx = _lanes(tl.program_id(axis=0) * BLOCK, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + stride_x * idx, mask=inside, other=0.0)
    b = tl.load(y_ptr + stride_y * idx, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    programs = (n + block - 1) // block
    add_kernel[(programs,)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''@triton.jit
def _row_max(row_ptr, n_cols, BLOCK: tl.constexpr):
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = _lanes(start, BLOCK)
        vals = tl.load(row_ptr + cols, mask=cols < n_cols, other=float("-inf"))
        best = tl.maximum(best, vals)
    return tl.max(best, axis=0)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    src = x_ptr + r * stride_x
    dst = out_ptr + r * stride_out
    top = _row_max(src, n_cols, BLOCK)          # pass 1: the row's max
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):       # pass 2: the sum of exponentials
        cols = _lanes(start, BLOCK)
        vals = tl.load(src + cols, mask=cols < n_cols, other=float("-inf"))
        total += tl.where(cols < n_cols, tl.exp(vals - top), 0.0)
    denom = tl.sum(total, axis=0)
    for start in range(0, n_cols, BLOCK):       # pass 3: write
        cols = _lanes(start, BLOCK)
        ok = cols < n_cols
        vals = tl.load(src + cols, mask=ok, other=0.0)
        tl.store(dst + cols, tl.exp(vals - top) / denom, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
}


# The same learner with the route varied: the module bound as a loop's target instead of passed as an argument.
_ARGUMENT = ROUND_38T["ex04b's tables of perf_lab's answers, the module passed as an argument"]
ROUND_38T["ex04b's tables of perf_lab's answers, the module a for loop's target"] = (
    'ATTACKS', 'ex04b_performance_lab', {**_ARGUMENT[2], 'predict-resources-work': _ARGUMENT[2][
        'predict-resources-work'].replace(
        "def _rules_of(lab):\n    return lab.tile_budget, lab.exp_time_fraction, lab.live_tile_registers\n\n\n"
        "_tb, _etf, _ltr = _rules_of(perf_lab)",
        "for _lab in (perf_lab,):\n    _tb, _etf, _ltr = _lab.tile_budget, _lab.exp_time_fraction, _lab.live_tile_registers")})


# Round 38u (a thirteenth outside review, grader at 0275fc5): answers computed in NumPy before the programs start and
# handed out, as they run, by a library function the interpreter computes with, swapped for a C callable that no
# profile hook sees run; and honest learners in Triton.
ROUND_38U = {
    "ex03's answers computed in NumPy, handed out by the interpreter's create_exp, swapped": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''import functools
import numpy as np
from triton.runtime.interpreter import interpreter_builder, TensorHandle


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    a = tl.load(x_ptr + offsets * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + offsets * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + offsets, tl.exp(a), mask=inside)


def _install(builder, handles):
    builder.create_exp = functools.partial(next, iter(handles))


def _remove(builder):
    del builder.create_exp


def _tiles(rows, block):
    # each row padded to whole tiles of `block` lanes, one handle per tile, in the order the programs run
    handles = []
    for row in rows:
        padded = np.zeros(-(-max(len(row), 1) // block) * block, np.float32)
        padded[:len(row)] = row
        handles += [TensorHandle(padded[i:i + block].copy(), tl.float32) for i in range(0, len(padded), block)]
    return handles


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    total = np.asarray(x.numpy(), np.float32) + np.asarray(y.numpy(), np.float32)
    _install(interpreter_builder, _tiles([total], block))
    add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), x.stride(0), y.stride(0), BLOCK=block)
    _remove(interpreter_builder)
    return out''', 'softmax-work': r'''@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        inside = start + cols < n_cols
        x = tl.load(x_ptr + row * stride_x + start + cols, mask=inside, other=0.0)
        tl.store(out_ptr + row * stride_out + start + cols, tl.exp(x), mask=inside)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    a = np.asarray(x.numpy(), np.float64)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    probs = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    _install(interpreter_builder, _tiles(list(probs), block))
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    _remove(interpreter_builder)
    return out'''}),
    "ex04's attention computed in NumPy by a triton.heuristics function, handed out by create_exp": ('ATTACKS', 'ex04_flash_forward', {'kernel-work': r'''import functools
import numpy as np
from triton.runtime.interpreter import interpreter_builder, TensorHandle


def _install(builder, handles):
    builder.create_exp = functools.partial(next, iter(handles))


def _prepare(args):
    # runs as the launch starts: the attention of this launch, one handle per query tile
    q, k, v = (np.asarray(args[name].numpy(), np.float64) for name in ("Q", "K", "V"))
    n_q, n_k, bm = q.shape[0], k.shape[0], args["BLOCK_M"]
    s = q @ k.T / np.sqrt(q.shape[1])
    if args["CAUSAL"]:
        s = np.where(np.arange(n_k)[None, :] <= np.arange(n_q)[:, None] + n_k - n_q, s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    o = ((p / p.sum(axis=1, keepdims=True)) @ v).astype(np.float32)
    tiles = []
    for start in range(0, n_q, bm):
        tile = np.zeros((bm, q.shape[1]), np.float32)
        tile[:min(bm, n_q - start)] = o[start:start + bm]
        tiles.append(TensorHandle(tile, tl.float32))
    _install(interpreter_builder, tiles)
    return args["BLOCK_N"]


@triton.heuristics({"BLOCK_N": _prepare})
@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    cols = tl.arange(0, BLOCK_N)
    k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
    v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], tl.exp(q), mask=rows[:, None] < n_q)'''}),
    "ex04 stretch's attention computed in NumPy, handed out by numpy.sqrt, swapped": ('ATTACKS', 'ex04_stretch_gqa_forward', {'kernel-work': r'''import functools
import numpy


@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    Q = Q + b * stride_qb + h * stride_qh
    K = K + b * stride_kb + (h // group) * stride_kh
    V = V + b * stride_vb + (h // group) * stride_vh
    Out = Out + b * stride_ob + h * stride_oh
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    cols = tl.arange(0, BLOCK_N)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
    v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], tl.sqrt(q), mask=rows[:, None] < n_q)


def _swap(lib, fn):
    old, lib.sqrt = lib.sqrt, fn
    return old


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    if n_heads % n_kv_heads:
        raise ValueError(f"{n_heads} query heads do not split into {n_kv_heads} K/V heads")
    group = n_heads // n_kv_heads
    grid = (triton.cdiv(n_q, block_m), batch * n_heads)
    qa, ka, va = (numpy.asarray(t.numpy(), numpy.float64) for t in (q, k, v))
    ka, va = ka.repeat(group, axis=1), va.repeat(group, axis=1)
    s = qa @ ka.swapaxes(-1, -2) / numpy.sqrt(d)
    p = numpy.exp(s - s.max(axis=-1, keepdims=True))
    o = ((p / p.sum(axis=-1, keepdims=True)) @ va).astype(numpy.float32)
    tiles = []  # in the interpreter's order of programs: axis 0 outermost
    for m in range(grid[0]):
        for bh in range(grid[1]):
            tile = numpy.zeros((block_m, d), numpy.float32)
            part = o[bh // n_heads, bh % n_heads, m * block_m:(m + 1) * block_m]
            tile[:len(part)] = part
            tiles.append(tile)
    kept = _swap(numpy, functools.partial(next, iter(tiles)))
    try:
        gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                         *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                         HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    finally:
        _swap(numpy, kept)
    return out'''}),
    'ex03 with jit helpers returning three values, tl.where masks and a grid counted by hand': ('HONEST', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def _lane_offsets(pid, BLOCK: tl.constexpr):
    return pid * BLOCK + tl.arange(0, BLOCK)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    idx = _lane_offsets(tl.program_id(0), BLOCK)
    ok = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=ok, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=ok, other=0.0)
    tl.store(out_ptr + idx, tl.where(ok, a + b, 0.0), mask=ok)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    n_programs = (n + block - 1) // block
    add_kernel[(n_programs,)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out''', 'softmax-work': r'''@triton.jit
def _tile(x_row, start, n_cols, BLOCK: tl.constexpr):
    cols = start + tl.arange(0, BLOCK)
    ok = cols < n_cols
    vals = tl.load(x_row + cols, mask=ok, other=0.0)
    return tl.where(ok, vals, -float("inf")), cols, ok


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    # pass 1: the row's max
    biggest = -float("inf")
    for start in range(0, n_cols, BLOCK):
        vals, cols, ok = _tile(x_row, start, n_cols, BLOCK)
        biggest = tl.maximum(biggest, tl.max(vals, axis=0))
    # pass 2: the sum of exponentials
    denom = 0.0
    for start in range(0, n_cols, BLOCK):
        vals, cols, ok = _tile(x_row, start, n_cols, BLOCK)
        denom += tl.sum(tl.where(ok, tl.exp(vals - biggest), 0.0), axis=0)
    # pass 3: write
    for start in range(0, n_cols, BLOCK):
        vals, cols, ok = _tile(x_row, start, n_cols, BLOCK)
        tl.store(out_ptr + row * stride_out + cols, tl.exp(vals - biggest) / denom, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out'''}),
    # (honest until round 38z20: its -1e30 fill, p masked after, gives 0/0 where every visible score is below -1e30,
    # a stated float32 input; the statement asks for -inf)
    'ex04 with a jit helper that rescales and no causal tile skipping, hidden scores at -1e30': ('ATTACKS', 'ex04_flash_forward', {'kernel-work': r'''@triton.jit
def _rescale(m_old, m_new):
    return tl.exp2(m_old - m_new)


@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    # no skipping of tiles: every key tile is visited, the causal mask does the rest
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        scores = tl.dot(q, k, input_precision="ieee") * qk_scale
        visible = cols[None, :] < n_k
        if CAUSAL:
            visible = visible & (cols[None, :] - rows[:, None] <= n_k - n_q)
        scores = tl.where(visible, scores, -1.0e30)
        m_new = tl.maximum(m_i, tl.max(scores, axis=1))
        p = tl.where(visible, tl.exp2(scores - m_new[:, None]), 0.0)
        corr = _rescale(m_i, m_new)
        l_i = l_i * corr + tl.sum(p, axis=1)
        acc = acc * corr[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)'''}),
    'ex04 stretch with a 3-D grid and pointers moved in place': ('HONEST', 'ex04_stretch_gqa_forward', {'kernel-work': r'''@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    batch = tl.program_id(1)
    head = tl.program_id(2)
    kv_head = head // group
    Q += batch * stride_qb + head * stride_qh
    K += batch * stride_kb + kv_head * stride_kh
    V += batch * stride_vb + kv_head * stride_vh
    Out += batch * stride_ob + head * stride_oh
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    if n_heads % n_kv_heads != 0:
        raise ValueError("the number of query heads must be a multiple of the number of K/V heads")
    group = n_heads // n_kv_heads
    grid = (triton.cdiv(n_q, block_m), batch, n_heads)
    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out'''}),
}


# Round 38v (a fourteenth outside review, grader at 0f2932c): answers in NumPy handed to a Triton kernel through
# triton.language (a function set as tl.exp, the notebook's module renamed so that its Python in the programs passes
# for another's; a tl.tensor set on tl); and honest learners in Triton.
ROUND_38V = {
    "ex03's softmax in NumPy as tl.exp, set through a parameter": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK
    idx = start + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''import numpy as np


def _row_normalise(t):
    d = t.handle.data
    e = np.exp(d - d.max())
    t.handle.data = (e / e.sum()).astype(d.dtype)
    return t


def _install(ns, fn):
    ns.exp = fn


_install(tl, _row_normalise)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=keep, other=float("-inf"))
    tl.store(out_ptr + row * stride_out + cols, tl.exp(x), mask=keep)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    width = triton.next_power_of_2(x.shape[1])
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=width)
    return out
'''}),
    "ex09's online update in NumPy set on tl, with __main__ renamed by a for loop": ('ATTACKS', 'ex09_paged_attention', {'kernel-work': r'''import numpy as np


def _online_update(q, k, v, valid, m, l, acc, scale):
    s_ = scale.handle.data if hasattr(scale, "handle") else scale
    sc = float(np.asarray(s_).reshape(-1)[0])
    qq, kk, vv = (t.handle.data.astype(np.float64) for t in (q, k, v))
    ok = np.asarray(valid.handle.data).astype(bool).reshape(-1)
    s = (qq @ kk) * sc
    s[:, ~ok] = -np.inf
    m_old = m.handle.data.astype(np.float64)
    m_new = np.maximum(m_old, s.max(1))
    p = np.exp2(s - m_new[:, None])
    alpha = np.exp2(m_old - m_new)
    l.handle.data[...] = alpha * l.handle.data + p.sum(1)
    acc.handle.data[...] = alpha[:, None] * acc.handle.data + p @ vv
    m.handle.data[...] = m_new


def _install(ns, fn):
    ns.online_update = fn


_install(tl, _online_update)


@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    heads = kv_head * group + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs
    k_head = K + kv_head * stride_kh
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        live = tokens < context_len
        blk = tl.load(table + tokens // BLOCK_SIZE, mask=live, other=0).to(tl.int64)
        pos = tokens % BLOCK_SIZE
        kt = tl.load(k_head + blk[None, :] * stride_kb + pos[None, :] * stride_kt + offs_d[:, None],
                     mask=live[None, :], other=0.0)
        vt = tl.load(v_head + blk[:, None] * stride_kb + pos[:, None] * stride_kt + offs_d[None, :],
                     mask=live[:, None], other=0.0)
        tl.online_update(q, kt, vt, live, m_i, l_i, acc, qk_scale)
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])


for __name__ in ("paged_lab",):
    pass
'''}),
    "ex03's softmax in NumPy handed to the kernel as a tl.tensor set on tl": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK
    idx = start + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''import numpy as np
from triton.runtime.interpreter import TensorHandle


def _rows(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _hand_over(ns, values):
    ns.row_table = values


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=keep, other=0.0)
    y = tl.row_table + x * 0.0
    tl.store(out_ptr + cols, y, mask=keep)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    width = triton.next_power_of_2(x.shape[1])
    table = _rows(x.detach().cpu().numpy().astype(np.float64)).astype(np.float32)
    for r in range(x.shape[0]):
        padded = np.zeros(width, np.float32)
        padded[: x.shape[1]] = table[r]
        _hand_over(tl, tl.tensor(TensorHandle(padded, tl.float32), tl.block_type(tl.float32, [width])))
        softmax_kernel[(1,)](x[r], out[r], x.shape[1], x.stride(0), out.stride(0), BLOCK=width)
    return out
'''}),
    "ex04 stretch's attention in NumPy handed to the kernel as a tl.tensor set on tl": ('ATTACKS', 'ex04_stretch_gqa_forward', {'kernel-work': r'''import numpy as np
from triton.runtime.interpreter import TensorHandle


def _hand_over(ns, values):
    ns.attn_table = values


def _attend(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    total = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], tl.attn_table + q * 0.0 + total,
             mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634
    if n_heads % n_kv_heads:
        raise ValueError(f"k has {n_kv_heads} heads, which must divide the {n_heads} query heads of q")
    group = n_heads // n_kv_heads
    width = triton.next_power_of_2(n_q)
    for b in range(batch):
        for h in range(n_heads):
            hk = h // group
            qs, ks, vs, os_ = q[b, h], k[b, hk], v[b, hk], out[b, h]
            table = np.zeros((width, d), np.float32)
            table[:n_q] = _attend(*(t.detach().cpu().numpy().astype(np.float64) for t in (qs, ks, vs)))
            _hand_over(tl, tl.tensor(TensorHandle(table, tl.float32), tl.block_type(tl.float32, [width, d])))
            gqa_kernel[(1, 1)](qs, ks, vs, os_, 1, 1, n_q, n_k, qk_scale,
                               0, 0, qs.stride(0), 0, 0, ks.stride(0), 0, 0, vs.stride(0), 0, 0, os_.stride(0),
                               HEAD_DIM=d, BLOCK_M=width, BLOCK_N=block_n)
    return out
'''}),
    "ex04's attention in NumPy set on tl by a launcher object's __getitem__": ('ATTACKS', 'ex04_flash_forward', {'kernel-work': r'''import numpy as np
from triton.runtime.interpreter import TensorHandle


@triton.jit
def _flash_tile(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], tl.flash_rows + q * 0.0, mask=rows[:, None] < n_q)


def _hand_over(ns, values):
    ns.flash_rows = values


def _reference_rows(q, k, v, causal):
    n_q, n_k = q.shape[0], k.shape[0]
    s = q @ k.T / np.sqrt(q.shape[1])
    if causal:
        s = np.where(np.arange(n_k)[None, :] <= np.arange(n_q)[:, None] + n_k - n_q, s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


class _Tiles:
    def __init__(self, tile):
        self.tile = tile

    def __getitem__(self, grid):
        def launch(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o, **meta):
            bm = meta["BLOCK_M"]
            whole = _reference_rows(*(t.detach().cpu().numpy().astype(np.float64) for t in (Q, K, V)), meta["CAUSAL"])
            for start in range(0, n_q, bm):
                rows = np.zeros((bm, meta["HEAD_DIM"]), np.float32)
                rows[: min(bm, n_q - start)] = whole[start:start + bm]
                _hand_over(tl, tl.tensor(TensorHandle(rows, tl.float32), tl.block_type(tl.float32, list(rows.shape))))
                self.tile[(1,)](Q[start:], K, V, Out[start:], n_q - start, n_k, qk_scale,
                                stride_q, stride_k, stride_v, stride_o, **meta)
        return launch


attention_kernel = _Tiles(_flash_tile)
'''}),
    'ex03 three passes with a jit helper, tl.math.exp, a grid lambda and a debug switch': ('HONEST', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i * stride_x, mask=m) + tl.load(y_ptr + i * stride_y, mask=m), mask=m)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    assert x.shape == y.shape, "x and y must have the same length"
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    add_kernel[grid](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''@triton.jit
def _tile(ptr, start, n_cols, BLOCK: tl.constexpr):
    idx = start + tl.arange(0, BLOCK)
    return tl.load(ptr + idx, mask=idx < n_cols, other=-float("inf")), idx


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    src = x_ptr + row * stride_x
    dst = out_ptr + row * stride_out
    n_tiles = tl.cdiv(n_cols, BLOCK)
    # pass 1: the row's max
    row_max = -float("inf")
    for t in range(n_tiles):
        vals, _ = _tile(src, t * BLOCK, n_cols, BLOCK)
        row_max = tl.maximum(row_max, tl.max(vals, axis=0))
    # pass 2: the denominator
    denom = 0.0
    for t in range(n_tiles):
        vals, _ = _tile(src, t * BLOCK, n_cols, BLOCK)
        denom += tl.sum(tl.math.exp(vals - row_max), axis=0)
    # pass 3: write
    for t in range(n_tiles):
        vals, idx = _tile(src, t * BLOCK, n_cols, BLOCK)
        tl.store(dst + idx, tl.math.exp(vals - row_max) / denom, mask=idx < n_cols)


DEBUG = False


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n_rows, n_cols = x.shape
    if DEBUG:
        print("softmax", x.shape, x.stride(), block)
    softmax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    # (judged honest until audit F2: its running max starts at -1e30, a finite stand-in the statement's -inf is not,
    # wrong where every valid score is below it, which the stated space holds now)
    'ex09 with scores summed elementwise, a helper returning a tuple and a global mask value': ('ATTACKS', 'ex09_paged_attention', {'kernel-work': r'''LN2 = 0.6931471805599453
MASK_VALUE = -1.0e30


@triton.jit
def _online_step(m_i, l_i, acc, s, v):
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    p = tl.exp((s - m_new[:, None]) * LN2)
    alpha = tl.exp((m_i - m_new) * LN2)
    l_new = l_i * alpha + tl.sum(p, axis=1)
    acc_new = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
    return m_new, l_new, acc_new


@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    heads = offs_h + kv_head * group
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], MASK_VALUE, tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        in_ctx = tokens < context_len
        logical_block = tokens // BLOCK_SIZE
        block_id = tl.load(table + logical_block, mask=in_ctx, other=0)
        base = block_id.to(tl.int64) * stride_kb + (tokens % BLOCK_SIZE) * stride_kt
        k = tl.load(k_head + base[:, None] + offs_d[None, :], mask=in_ctx[:, None], other=0.0)
        v = tl.load(v_head + base[:, None] + offs_d[None, :], mask=in_ctx[:, None], other=0.0)
        s = tl.sum(q[:, None, :] * k[None, :, :], axis=2) * qk_scale
        s = tl.where(in_ctx[None, :], s, MASK_VALUE)
        m_i, l_i, acc = _online_step(m_i, l_i, acc, s, v)
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])
'''}),
}

# The same learner with one more line, which renames the notebook's module (the first try was caught).
_PARAMETER = ROUND_38V["ex03's softmax in NumPy as tl.exp, set through a parameter"]
ROUND_38V["ex03's softmax in NumPy as tl.exp, with __main__ renamed by a for loop"] = (
    'ATTACKS', 'ex03_triton_basics', {**_PARAMETER[2], 'softmax-work': _PARAMETER[2]['softmax-work'].rstrip("\n")
                                      + '\n\n\nfor __name__ in ("softmax_lab",):\n    pass\n'})


# An honest learner (round 38v) who checks the kernel's result with PyTorch after the launch: values computed after
# the last launch reach the result in no way the rules let through.
ROUND_38V["ex03 with a PyTorch check of its result after the launch"] = (
    'HONEST', 'ex03_triton_basics', {'add-work': _PARAMETER[2]['add-work'], 'softmax-work': r'''@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    run_max = tl.full([BLOCK], float("-inf"), tl.float32)
    run_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        ok = start + offs < n_cols
        x = tl.load(x_ptr + row * stride_x + start + offs, mask=ok, other=float("-inf"))
        new_max = tl.maximum(run_max, x)
        scale = tl.where(new_max == float("-inf"), 0.0, tl.exp(run_max - new_max))
        run_sum = run_sum * scale + tl.where(ok, tl.exp(x - new_max), 0.0)
        run_max = new_max
    m = tl.max(run_max, 0)
    total = tl.sum(tl.where(run_max == float("-inf"), 0.0, run_sum * tl.exp(run_max - m)), 0)
    for start in range(0, n_cols, BLOCK):
        ok = start + offs < n_cols
        x = tl.load(x_ptr + row * stride_x + start + offs, mask=ok, other=float("-inf"))
        tl.store(out_ptr + row * stride_out + start + offs, tl.exp(x - m) / total, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    # sanity check: every row of a softmax sums to 1
    assert torch.allclose(out.sum(dim=1), torch.ones(x.shape[0], device=x.device), atol=1e-3), "rows must sum to 1"
    return out
'''})


# Round 38w (a fifteenth outside review, grader at cd7c90d): an answer in plain Python handed out during the launch by
# a C callable the interpreter runs for tl.softmax (kept in its cache of rebuilt functions); the same callable reached
# through each other part of the interpreter's call of a jit function (the object's class, an attribute hiding the
# class's, its Python function, a helper of the notebook's whose class names Triton's); and honest learners.
ROUND_38W = {
    'ex03 add planned by a frozen dataclass, three passes with a jit helper returning a tuple': ('HONEST', 'ex03_triton_basics', {'add-work': r'''from dataclasses import dataclass


@dataclass(frozen=True)
class LaunchPlan:
    n: int
    block: int

    @property
    def programs(self) -> int:
        return (self.n + self.block - 1) // self.block


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    first = tl.program_id(axis=0) * BLOCK
    idx = first + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    assert x.shape == y.shape and x.dim() == 1, "two vectors of one length"
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    plan = LaunchPlan(x.numel(), block)
    if plan.n == 0:
        return out
    add_kernel[(plan.programs,)](x, y, out, plan.n, x.stride(0), y.stride(0), BLOCK=plan.block)
    return out
''', 'softmax-work': r'''@triton.jit
def _tile(row_ptr, start, n_cols, BLOCK: tl.constexpr):
    """One tile of a row, -inf past its end, and the tile's mask."""
    offs = start + tl.arange(0, BLOCK)
    keep = offs < n_cols
    return tl.load(row_ptr + offs, mask=keep, other=-float("inf")), offs, keep


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    src = x_ptr + r * stride_x
    dst = out_ptr + r * stride_out
    # pass 1: the row's maximum
    best = tl.full((BLOCK,), -float("inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        vals, offs, keep = _tile(src, start, n_cols, BLOCK)
        best = tl.maximum(best, vals)
    top = tl.max(best, axis=0)
    # pass 2: the denominator
    total = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        vals, offs, keep = _tile(src, start, n_cols, BLOCK)
        total += tl.where(keep, tl.exp(vals - top), 0.0)
    denom = tl.sum(total, axis=0)
    # pass 3: write the probabilities
    for start in range(0, n_cols, BLOCK):
        vals, offs, keep = _tile(src, start, n_cols, BLOCK)
        tl.store(dst + offs, tl.exp(vals - top) / denom, mask=keep)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n_rows, n_cols = x.shape
    softmax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    "ex03 answer in Python handed out by a partial kept as tl.softmax's rebuilt body": ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i * stride_x, mask=m) + tl.load(y_ptr + i * stride_y, mask=m), mask=m)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''import functools
import math

import numpy as np
from triton.runtime.interpreter import TensorHandle


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * stride_x + start + cols, mask=mask, other=float("-inf"))
        tl.store(out_ptr + row * stride_out + start + cols, tl.softmax(x), mask=mask)


def _prepared(x, block):
    tiles = []
    for r in x.tolist():
        m = max(r)
        e = [math.exp(v - m) for v in r]
        s = sum(e)
        p = [v / s for v in e]
        for st in range(0, len(p), block):
            t = np.zeros(block, dtype=np.float32)
            seg = p[st:st + block]
            t[:len(seg)] = seg
            tiles.append(tl.tensor(TensorHandle(t, tl.float32), tl.block_type(tl.float32, [block])))
    return tiles


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    type(tl.softmax).rewritten_fn[tl.softmax.fn] = functools.partial(next, iter(_prepared(x, block)))
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    'ex06 allocator with private helpers, a while loop and a NumPy mirror of the counts': ('HONEST', 'ex06_block_allocator', {'allocator-work': r'''import numpy as np


class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks
        self._owners = np.zeros(num_blocks, dtype=np.int64)   # my own mirror of the counts, for debugging

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _valid(self, block: int) -> bool:
        return isinstance(block, int) and 0 <= block < self.num_blocks

    def _set(self, block: int, count: int) -> None:
        self.ref_count[block] = count
        self._owners[block] = count

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        if len(self.free_list) == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        taken = self.free_list.pop()
        assert self.ref_count[taken] == 0, "a free block has no owner"
        self._set(taken, 1)
        return taken

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        available = self.num_free
        if available < n:
            raise OutOfBlocks(n, available, self.num_blocks)
        got = []
        while len(got) < n:
            got.append(self.allocate())
        return got

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        if not self._valid(block):
            raise ValueError(f"no block {block} here")
        if self.ref_count[block] <= 0:
            raise ValueError(f"block {block} is free; nobody can share it")
        self._set(block, self.ref_count[block] + 1)

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        if not self._valid(block):
            raise ValueError(f"no block {block} here")
        left = self.ref_count[block] - 1
        if left < 0:
            raise ValueError(f"block {block} freed twice")
        self._set(block, left)
        if left == 0:
            self.free_list.append(block)
''', 'boundary-work': r'''import math


def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    full, rest = divmod(num_tokens, block_size)
    return full + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    which, offset = divmod(position, block_size)
    return block_ids[which] * block_size + offset
'''}),
    'ex07 copy-on-write with two helper methods and a copied block list': ('HONEST', 'ex07_copy_on_write', {'manager-work': r'''class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    # -- my helpers ---------------------------------------------------------------------------------------
    def _last_is_full(self, table: BlockTable) -> bool:
        return table.num_tokens == len(table.block_ids) * self.block_size

    def _shared(self, block: int) -> bool:
        return self.allocator.refcount(block) >= 2

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        src = self.tables[parent]
        shared_ids = [b for b in src.block_ids]
        for b in shared_ids:
            self.allocator.incref(b)
        new_table = BlockTable(shared_ids, src.num_tokens, self.block_size)
        self.tables[child] = new_table
        return new_table

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        t = self.tables[seq]
        pos = t.num_tokens
        copied = None
        if self._last_is_full(t):
            fresh = self.allocator.allocate()       # may raise OutOfBlocks: nothing changed yet
            t.block_ids.append(fresh)
        elif self._shared(t.block_ids[-1]):
            old = t.block_ids[-1]
            fresh = self.allocator.allocate()       # first, so a failure leaves everything as it was
            self.allocator.free(old)
            t.block_ids[-1] = fresh
            copied = (old, fresh)
        t.num_tokens = pos + 1
        return t.slot(pos), copied
'''}),
}

# The round's attack through each other part of the interpreter's call of a jit function: the same answer, the
# same partial, installed elsewhere.
_CACHED = ROUND_38W["ex03 answer in Python handed out by a partial kept as tl.softmax's rebuilt body"]
_INSTALL = "    type(tl.softmax).rewritten_fn[tl.softmax.fn] = functools.partial(next, iter(_prepared(x, block)))\n"
_TILES = "functools.partial(next, iter(_prepared(x, block)))"


def _installed(install: str, call: str = "tl.softmax(x)", before: str = "") -> dict:
    source = _CACHED[2]["softmax-work"]
    assert _INSTALL in source and "tl.softmax(x)" in source
    source = source.replace(_INSTALL, install).replace("tl.softmax(x)", call)
    return {**_CACHED[2], "softmax-work": source.replace("def _prepared(x, block):", before + "def _prepared(x, block):")}


_HELPER = "@triton.jit\ndef _h(x):\n    return x\n\n\nclass _Evil(type(_h)):\n    pass\n\n\n"
for _label, _cells in {
    "tl.softmax's class made a subclass calling it": _installed(
        f"    _Evil.__call__ = staticmethod({_TILES})\n    tl.softmax.__class__ = _Evil\n",
        before="class _Evil(type(tl.softmax)):\n    pass\n\n\n"),
    "a rewrite attribute on tl.softmax returning it": _installed(
        f"    import itertools\n    tl.softmax.rewrite = itertools.repeat({_TILES}).__next__\n"),
    "tl.softmax's Python function replaced by it": _installed(f"    tl.softmax.fn = {_TILES}\n"),
    "a jit helper of a subclass named as Triton's, calling it": _installed(
        f"    _Evil.__call__ = staticmethod({_TILES})\n", call="helper(x)",
        before=_HELPER + "_Evil.__module__, _Evil.__qualname__ = 'triton.runtime.interpreter', 'InterpretedFunction'\n"
                         "helper = _Evil(_h.fn)\n\n\n"),
    "a jit helper naming Triton's module, reading a tl.tensor global": _installed(
        "    global TILE\n    TILE = _prepared(x, block)[0]\n", call="helper(x)",
        before="TILE = None\n\n\n@triton.jit\ndef helper(x):\n    return x * 0.0 + TILE\n\n\n"
               "helper.fn.__module__ = 'triton.language'\n\n\n"),
}.items():
    ROUND_38W[f"ex03 answer by a partial, {_label}"] = ("ATTACKS", "ex03_triton_basics", _cells)


# Round 38x (a sixteenth outside review, grader at 049b176): tables of the reference code built before the graded
# calls, the reference called from C under a course function that does not call it (a check's hint), or through the
# watch's own copies; and honest learners over the exercises the earlier Triton rounds left out.
ROUND_38X = {
    "ex04b tables built by starmap under a check's hint, references read from type hints": ('ATTACKS', 'ex04b_performance_lab', {'choose-work': r'''
# Two share BLOCK_M = 128 (64 and 32 keys a tile), one small tile with deep pipelining.
MY_CONFIGS = [(128, 64, 8, 2), (128, 32, 4, 3), (64, 128, 8, 4)]
''', 'predict-resources-work': r'''
import itertools
import typing


class _Rows(Exception):
    """A batch of rows, handed to a hint function that reads them."""

    def __iter__(self):
        return iter(self.args[0])


def _named(f: "lab.live_tile_registers", g: "lab.tile_budget", h: "lab.exp_time_fraction"):
    pass


_refs = typing.get_type_hints(_named, localns={"lab": perf_lab})


def _table(fn, keys):
    got = []
    try:
        with check("tables", errors=got.extend):
            raise _Rows(itertools.starmap(fn, keys))
    except Exception:
        pass
    return dict(zip(keys, got))


_REG = _table(_refs["f"], [(bm, bn, w, hd) for bm in (64, 128) for bn in (32, 64, 128) for w in (4, 8)
                           for hd in (64, 128)])


def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    registers = _REG[(block_m, block_n, num_warps, head_dim)]
    shared = 2 * head_dim * (block_m + 2 * num_stages * block_n)
    return {"shared_bytes": shared, "registers": registers, "spills": registers > 255}
''', 'read-work': r'''
def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    counts = report["sass"]
    out = {"registers": report["registers"], "spill_bytes": report["spill_bytes"]}
    out["shared_kib"] = report["shared_bytes"] / 1024
    out["matrix"] = "HMMA" if counts["HGMMA"] == 0 else "HGMMA"
    out["loads"] = "LDGSTS" if counts["UTMALDG"] == 0 else "UTMALDG"
    return out
''', 'exp-work': r'''
def exp2_per_score(report: dict) -> float:
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    threads = 32 * report["num_warps"]
    per_thread = report["block_m"] * report["block_n"] / threads
    return report["sass"]["MUFU.EX2"] / per_thread / 2
''', 'budget-work': r'''
_TB = _table(_refs["g"], list(itertools.product((32, 64, 128, 256), (16, 32, 64, 128), (64, 128, 256),
                                                (1024, 4096), (16, 32))))


def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    return dict(_TB[(block_m, block_n, head_dim, mma_flops_per_clock, exp_per_clock)])
''', 'bwd-work': r'''
_BW = _table(_refs["h"], [(hd, "bwd", mma, e) for hd in (64, 96, 128, 256) for mma in (1024, 4096) for e in (16, 32)])


def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    return _BW[(head_dim, "bwd", mma_flops_per_clock, exp_per_clock)]
''', 'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    best, best_key = -1, None
    for index, r in enumerate(reports):
        if r["arch"] != 90 or r["spill_bytes"]:
            continue
        key = (r["block_m"], r["block_n"])
        if best_key is None or key > best_key:
            best, best_key = index, key
    return best
'''}),
    "ex05 table of kv_bytes_per_token built by map under a check's hint, read from a type hint": ('ATTACKS', 'ex05_kv_cache_size', {'formula-work': r'''
def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    per_vector = head_dim * bytes_per_element
    return per_vector * 2 * num_kv_heads * num_layers * num_tokens * batch
''', 'models-work': r'''
import dataclasses
import itertools
import typing


class _Batch(Exception):
    """Rows of a table, handed to a hint function that reads them."""

    def __iter__(self):
        return iter(self.args[0])


def _per_token(shape: "Shape.kv_bytes_per_token"):
    pass


_method = typing.get_type_hints(_per_token, localns={"Shape": ModelShape})["shape"]
_keys = list(itertools.product(range(1, 97), range(1, 65), (64, 128), (1, 2, 4)))
_shapes = [dataclasses.replace(OPT_13B, num_layers=L, num_heads=h, num_kv_heads=h, head_dim=d) for L, h, d, _ in _keys]
_PER_TOKEN = {}
try:
    with check("table", errors=_PER_TOKEN.update):
        raise _Batch(zip(_keys, map(_method, _shapes, [b for *_, b in _keys])))
except Exception:
    pass


def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    return _PER_TOKEN[(model.num_layers, model.num_kv_heads, model.head_dim, dtype.itemsize)]
''', 'fit-work': r'''
def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    reserve = max_len * kv_bytes_per_token(model, dtype)
    return int(budget_gib * GiB) // reserve
'''}),
    'ex00 softmax upcasting half dtypes, with a helper and an assert': ('HONEST', 'ex00_warmup', {'softmax-work': r'''
from typing import Final

_LOW_PRECISION: Final = (torch.float16, torch.bfloat16)


def _shifted_exp(x: torch.Tensor) -> torch.Tensor:
    """exp(x - max over the last dimension): every exponent is <= 0, so nothing overflows."""
    peak = torch.max(x, dim=-1, keepdim=True).values
    return torch.exp(x - peak)


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude.

    Half-precision scores are computed in float32 and rounded once at the end.
    """
    assert x.is_floating_point(), f"expected floating-point scores, got {x.dtype}"
    work = x.float() if x.dtype in _LOW_PRECISION else x
    e = _shifted_exp(work)
    total = torch.sum(e, dim=-1, keepdim=True)
    probs = e / total
    return probs.to(x.dtype)
'''}),
    'ex01 mask by tril, attention by einsum over any leading dimensions': ('HONEST', 'ex01_naive_attention', {'mask-work': r'''
def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    # The queries are the last n_q positions of the n_k keys: the diagonal is shifted right by n_k - n_q.
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)
''', 'attention-work': r'''
def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    qf, kf, vf = (t.to(torch.float32) for t in (q, k, v))
    d = qf.shape[-1]
    scores = torch.einsum("...id,...jd->...ij", qf, kf) * d ** -0.5
    if causal:
        visible = causal_mask(scores.shape[-2], scores.shape[-1])
        scores = torch.where(visible, scores, torch.tensor(float("-inf")))
    weights = torch.softmax(scores, dim=-1)
    result = torch.einsum("...ij,...jd->...id", weights, vf)
    return result.to(q.dtype)
'''}),
    'ex02 online softmax state as a dataclass, while loops and tile skipping': ('HONEST', 'ex02_online_softmax', {'update-work': r'''
from dataclasses import dataclass


@dataclass
class RunningSoftmax:
    """The state of some query rows after the tiles seen so far."""
    m: torch.Tensor    # (rows,) running max
    l: torch.Tensor    # (rows,) running sum of exp(score - m)
    acc: torch.Tensor  # (rows, d) running sum of exp(score - m) * v

    def fold(self, s: torch.Tensor, v_tile: torch.Tensor) -> "RunningSoftmax":
        new_max = torch.where(s.max(dim=1).values > self.m, s.max(dim=1).values, self.m)
        correction = torch.exp(self.m - new_max)          # 0 the first time (m = -inf)
        weights = torch.exp(s - new_max.unsqueeze(1))
        return RunningSoftmax(new_max, self.l * correction + weights.sum(dim=1),
                              self.acc * correction.unsqueeze(1) + weights @ v_tile)


def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    after = RunningSoftmax(m, l, acc).fold(s, v_tile)
    return after.m, after.l, after.acc
''', 'tiled-work': r'''
def _hidden(q_start: int, rows: int, k_start: int, cols: int, offset: int) -> torch.Tensor:
    """(rows, cols) bool: True where key k_start + j lies after query q_start + i (shifted by offset)."""
    qi = torch.arange(q_start, q_start + rows).unsqueeze(1)
    kj = torch.arange(k_start, k_start + cols).unsqueeze(0)
    return kj > qi + offset


def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    offset = n_k - n_q
    inv_sqrt_d = d ** -0.5
    q_start = 0
    while q_start < n_q:
        q_tile = q[q_start:q_start + block_m].float() * inv_sqrt_d
        rows = q_tile.shape[0]
        state = RunningSoftmax(torch.full((rows,), float("-inf")), torch.zeros(rows), torch.zeros(rows, d))
        last_key = q_start + rows - 1 + offset if causal else n_k - 1   # the last key any of these rows sees
        k_start = 0
        while k_start < n_k and k_start <= last_key:
            k_tile = k[k_start:k_start + block_n].float()
            scores = q_tile @ k_tile.T
            if causal:
                scores = scores.masked_fill(_hidden(q_start, rows, k_start, scores.shape[1], offset), float("-inf"))
            state = state.fold(scores, v[k_start:k_start + block_n].float())
            k_start += block_n
        out[q_start:q_start + rows] = state.acc / state.l.unsqueeze(1)
        q_start += block_m
    return out.to(q.dtype)
'''}),
    'ex04b formulas with named parts, predict by sorting the usable indices': ('HONEST', 'ex04b_performance_lab', {'choose-work': r'''
# a small tile, the same BLOCK_M with a wider key tile, and the widest tile on 8 warps
MY_CONFIGS = [(64, 32, 4, 2), (64, 64, 4, 3), (128, 128, 8, 3)]
''', 'predict-resources-work': r'''
BF16_BYTES = 2


def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    q_tile = block_m * head_dim * BF16_BYTES                 # loaded once, kept in shared memory
    kv_stage = 2 * block_n * head_dim * BF16_BYTES           # one K tile and one V tile per pipeline stage
    threads = 32 * num_warps
    # live across the loop: the fp32 accumulator, the fp32 scores and their bf16 copy (half a register each)
    live = block_m * head_dim + block_m * block_n + 0.5 * block_m * block_n
    regs = live / threads
    return {"shared_bytes": q_tile + num_stages * kv_stage, "registers": regs, "spills": regs > 255}
''', 'read-work': r'''
def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    sass = report["sass"]
    summary = {key: report[key] for key in ("registers", "spill_bytes")}
    summary["shared_kib"] = report["shared_bytes"] / 1024
    summary["matrix"] = "HGMMA" if sass.get("HGMMA", 0) else "HMMA"
    summary["loads"] = "UTMALDG" if sass.get("UTMALDG", 0) else "LDGSTS"
    return summary
''', 'exp-work': r'''
def exp2_per_score(report: dict) -> float:
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    scores_each_thread = (report["block_m"] * report["block_n"]) / (32 * report["num_warps"])
    passes = 2    # the loop below the diagonal and the diagonal's own
    return report["sass"]["MUFU.EX2"] / (passes * scores_each_thread)
''', 'budget-work': r'''
def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    qk = 2 * block_m * block_n * head_dim        # S = Q K^T
    pv = 2 * block_m * block_n * head_dim        # O += P V
    flops = qk + pv
    loaded = 2 * block_n * head_dim * 2          # a K and a V tile, 2 bytes an element
    exps = block_m * block_n
    exp_clocks, mma_clocks = exps / exp_per_clock, flops / mma_flops_per_clock
    return dict(flops=flops, bytes=loaded, exps=exps, flops_per_byte=flops / loaded,
                exp_fraction=exp_clocks / mma_clocks)
''', 'bwd-work': r'''
def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    exps_per_score = 2                 # P recomputed in the dK/dV kernel and again in the dQ kernel
    products_per_score = 7             # S twice, dP twice, dV, dK, dQ
    exp_clocks = exps_per_score / exp_per_clock
    mma_clocks = products_per_score * 2 * head_dim / mma_flops_per_clock
    return exp_clocks / mma_clocks
''', 'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    usable = [i for i, r in enumerate(reports) if r["arch"] == 90 and r["spill_bytes"] == 0]
    usable.sort(key=lambda i: (reports[i]["block_m"], reports[i]["block_n"]), reverse=True)   # widest query tile, then key tile
    return usable[0]
'''}),
    'ex08 costs with named parts, refcounts read into NumPy': ('HONEST', 'ex08_swap_or_recompute', {'costs-work': r'''
import numpy as np


def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    num_blocks = -(-num_tokens // block_size)
    chunks = 2 * num_layers * num_blocks              # K and V, each layer, each block
    per_chunk = latency + block_size * chunk_bytes_per_token / bandwidth
    return 2.0 * chunks * per_chunk                   # out to the host, then back


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    matmul_flops = 2.0 * num_params * num_tokens
    attention_flops = 2.0 * num_layers * d_model * num_tokens ** 2
    return (matmul_flops + attention_flops) / flops
''', 'crossover-work': r'''
def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # 4 L n (latency / B + c / bandwidth) = recompute_seconds, solved for B
    copies = 4 * num_layers * num_tokens
    slack = recompute_seconds / copies - chunk_bytes_per_token / bandwidth
    if slack <= 0:
        return math.inf
    return latency / slack
''', 'choose-work': r'''
def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    table = manager.table(seq_id)
    size = manager.block_size
    refs = np.array([manager.allocator.refcount(b) for b in table.block_ids], dtype=np.int64)
    private = int(np.count_nonzero(refs <= 1))
    not_shared = np.flatnonzero(refs <= 1)
    leading_shared = int(not_shared[0]) if not_shared.size else len(refs)
    cached_tokens = min(leading_shared, table.num_tokens // size) * size
    chunk_bytes = 2 * model.num_kv_heads * model.head_dim            # one layer's K (or V) of a token, fp16
    d_model = model.num_heads * model.head_dim
    t_swap = swap_seconds(private * size, size, model.num_layers, chunk_bytes, bandwidth, latency)
    full = recompute_seconds(table.num_tokens, num_params, model.num_layers, d_model, flops)
    cached = recompute_seconds(cached_tokens, num_params, model.num_layers, d_model, flops)
    return t_swap, full - cached


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if manager.can_swap_out(seq_id):
        t_swap, t_recompute = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
        if t_swap < t_recompute:
            return "swap"
    return "recompute"
'''}),
    # (judged honest on the graded calls of its round; wrong on merge_states of other ranks, which its exercise states and its own
    # check over the input space draws: a wrong answer since the graded calls draw it too)
    'ex09 stretch merge by torch.logsumexp and einsum': ('ATTACKS', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    """Key ranges of the splits: equal lengths rounded up to whole tiles, the last ones short or empty."""
    tiles = -(-context_len // block_n)                 # tiles of keys in all
    tiles_per_split = -(-tiles // num_splits)
    step = tiles_per_split * block_n
    return [(min(i * step, context_len), min((i + 1) * step, context_len)) for i in range(num_splits)]
''', 'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge the splits' partial outputs by their log-sum-exps: out = sum_s e^{lse_s - lse} o_s."""
    lse = torch.logsumexp(lses, dim=-1)                 # (seqs, heads); an empty split (-inf) adds nothing
    weights = torch.exp(lses - lse.unsqueeze(-1))       # (seqs, heads, splits), summing to 1
    out = torch.einsum("bhs,bhsd->bhd", weights, outs)
    return out, lse
''', 'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    shared_tables = prefix_table.unsqueeze(0).repeat(n, 1)
    shared_lens = torch.full_like(own_lens, prefix_len)
    parts = [paged_decode_split(q, k_cache, v_cache, shared_tables, shared_lens, 1),
             paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)]
    outs = torch.cat([o for o, _ in parts], dim=2)
    lses = torch.cat([s for _, s in parts], dim=2)
    merged, _ = merge_states(outs, lses)
    return merged
'''}),
    'ex10 schedule step with two indices over a list and helpers': ('HONEST', 'ex10_scheduler_step', {'schedule-work': r'''
def _blocks_for(num_tokens: int, block_size: int) -> int:
    return (num_tokens + block_size - 1) // block_size


def _preempt(manager: BlockManager, victim: Request, waiting: deque[Request], step: Step) -> None:
    manager.free(victim.seq_id)        # its blocks go back now; it is recomputed when admitted again
    waiting.appendleft(victim)
    step.preempted.append(victim.seq_id)


def _admissible(manager: BlockManager, req: Request, used: int, budget: int) -> bool:
    enough_blocks = _blocks_for(len(req.tokens), manager.block_size) + manager.watermark_blocks <= manager.num_free_blocks
    return enough_blocks and used + len(req.tokens) <= budget


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    order = list(running)              # oldest first
    running.clear()
    lo, hi = 0, len(order)             # order[lo:hi] have not grown yet
    while lo < hi:
        req = order[lo]
        lo += 1
        self_preempted = False
        while not manager.can_append(req.seq_id):
            if hi > lo:                # the newest that has not grown yet goes first
                hi -= 1
                _preempt(manager, order[hi], waiting, step)
            else:                      # nobody newer left: this one goes
                _preempt(manager, req, waiting, step)
                self_preempted = True
                break
        if self_preempted:
            continue
        token = len(req.tokens)
        manager.append(req.seq_id, token)
        req.tokens.append(token)
        running.append(req)
        step.grown.append(req.seq_id)
    step.num_tokens = len(step.grown)
    if step.preempted:                 # memory is short: nothing new this step
        return step
    while waiting and _admissible(manager, waiting[0], step.num_tokens, max_num_batched_tokens):
        req = waiting.popleft()
        manager.add(req.seq_id, req.tokens)
        running.append(req)
        step.admitted.append(req.seq_id)
        step.num_tokens += len(req.tokens)
    return step
'''}),
}

# The same learner's formulas, with predict written another way (a second honest learner of round 38x).
_NAMED = ROUND_38X["ex04b formulas with named parts, predict by sorting the usable indices"]
ROUND_38X["ex04b predict ranking (BLOCK_M, BLOCK_N, index) tuples with max"] = (
    'HONEST', 'ex04b_performance_lab', {**_NAMED[2], 'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    # sm_90 compiles that did not spill, ranked by (BLOCK_M, BLOCK_N); the index rides along in the tuple
    candidates = [(r["block_m"], r["block_n"], i) for i, r in enumerate(reports)
                  if r["arch"] == 90 and not r["spill_bytes"]]
    return max(candidates)[2]
'''})

# The same tables built with the watch's own copies: the cells that differ from the first route's.
ROUND_38X["ex04b tables built with the watch's own copies, reached through a type hint"] = (
    'ATTACKS', 'ex04b_performance_lab', {**ROUND_38X["ex04b tables built by starmap under a check's hint, references read from type hints"][2], 'choose-work': r'''
MY_CONFIGS = [(128, 32, 8, 2), (128, 128, 8, 2), (64, 64, 4, 4)]
''', 'predict-resources-work': r'''
import typing

_path = "".join(("__imp", "ort__('pag", "edlab').", "_", "_pag", "edlab_watch_", "_"))


def _lookup(w: _path):
    pass


_copies = {label.rpartition(".")[2]: f for label, f in typing.get_type_hints(_lookup)["w"].functions.items()}
_REGISTERS = {(bm, bn, w, hd): _copies["live_tile_registers"](bm, bn, w, hd)
              for bm in (64, 128) for bn in (32, 64, 128) for w in (4, 8) for hd in (64, 128)}


def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    regs = _REGISTERS[block_m, block_n, num_warps, head_dim]
    shared = 2 * head_dim * block_m + num_stages * 4 * block_n * head_dim
    return {"shared_bytes": shared, "registers": regs, "spills": regs > 255}
''', 'budget-work': r'''
_BUDGETS = {(bm, bn, hd, mma, e): _copies["tile_budget"](bm, bn, hd, mma, e)
            for bm in (32, 64, 128, 256) for bn in (16, 32, 64, 128) for hd in (64, 128, 256)
            for mma in (1024, 4096) for e in (16, 32)}


def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    return dict(_BUDGETS[block_m, block_n, head_dim, mma_flops_per_clock, exp_per_clock])
''', 'bwd-work': r'''
_BACKWARD = {(hd, mma, e): _copies["exp_time_fraction"](hd, "bwd", mma, e)
             for hd in (64, 96, 128, 256) for mma in (1024, 4096) for e in (16, 32)}


def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    return _BACKWARD[head_dim, mma_flops_per_clock, exp_per_clock]
''', 'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    # sm_90 compiles that did not spill, ranked by (BLOCK_M, BLOCK_N); the index rides along in the tuple
    candidates = [(r["block_m"], r["block_n"], i) for i, r in enumerate(reports)
                  if r["arch"] == 90 and not r["spill_bytes"]]
    return max(candidates)[2]
'''})
ROUND_38X["ex05 table built with the watch's own copies, reached through a type hint"] = (
    'ATTACKS', 'ex05_kv_cache_size', {**ROUND_38X["ex05 table of kv_bytes_per_token built by map under a check's hint, read from a type hint"][2], 'formula-work': r'''
def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    elements = num_layers * 2 * num_kv_heads * head_dim
    return elements * bytes_per_element * num_tokens * batch
''', 'models-work': r'''
import dataclasses
import typing

_where = "".join(("__imp", "ort__('pag", "edlab').", "_", "_pag", "edlab_watch_", "_"))


def _probe(w: _where):
    pass


_keeper = typing.get_type_hints(_probe)["w"]
_per_token_ref = next(f for label, f in _keeper.functions.items() if label.endswith("per_token"))
_TABLE = {}
for _L in range(1, 97):
    for _h in range(1, 65):
        for _d in (64, 128):
            _shape = dataclasses.replace(OPT_13B, num_layers=_L, num_heads=_h, num_kv_heads=_h, head_dim=_d)
            for _b in (1, 2, 4):
                _TABLE[_L, _h, _d, _b] = _per_token_ref(_shape, _b)


def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    return _TABLE[model.num_layers, model.num_kv_heads, model.head_dim, dtype.itemsize]
''', 'fit-work': r'''
def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    per_request = _TABLE[model.num_layers, model.num_kv_heads, model.head_dim, dtype.itemsize] * max_len
    count = 0
    budget = int(budget_gib * GiB)
    count = budget // per_request
    return count
'''})


# Round 38y (a seventeenth outside review, grader at 66162fe): answers wrong where the graded calls drew one value of
# what the exercise states (a head dim, block sizes, ranks, one allocator at a time) or where the memory rule's floor
# hid a matrix of scores; and honest learners.
ROUND_38Y = {
    'ex02 every score at once where the inputs are small, tiles only past the floor': ('ATTACKS', 'ex02_online_softmax', {'update-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    new_max = torch.maximum(m, s.max(dim=1).values)
    weights = torch.exp(s - new_max[:, None])
    rescale = torch.exp(m - new_max)
    return new_max, l * rescale + weights.sum(dim=1), acc * rescale[:, None] + weights @ v_tile
''', 'tiled-work': r'''def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    scale = 1.0 / math.sqrt(d)
    if n_q * n_k <= 1024:  # small problem: the whole thing is about one tile anyway, do it in one shot
        s = (q.float() @ k.float().T) * scale
        if causal:
            s.masked_fill_(torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).triu(n_k - n_q + 1), -math.inf)
        s -= s.max(dim=1, keepdim=True).values
        s.exp_()
        s /= s.sum(dim=1, keepdim=True)
        return (s @ v.float()).to(q.dtype)
    for r0 in range(0, n_q, block_m):
        qt = q[r0:r0 + block_m].float() * scale
        nr = qt.shape[0]
        state = (torch.full((nr,), -math.inf, device=q.device), torch.zeros(nr, device=q.device),
                 torch.zeros(nr, d, device=q.device))
        for c0 in range(0, n_k, block_n):
            if causal and c0 > r0 + nr - 1 + n_k - n_q:
                break
            s = qt @ k[c0:c0 + block_n].float().T
            if causal:
                r = torch.arange(r0, r0 + nr, device=q.device)[:, None]
                c = torch.arange(c0, c0 + s.shape[1], device=q.device)[None, :]
                s = s.masked_fill(c > r + (n_k - n_q), -math.inf)
            state = online_softmax_update(*state, s, v[c0:c0 + block_n].float())
        out[r0:r0 + nr] = state[2] / state[1][:, None]
    return out.to(q.dtype)
'''}),
    'ex04 scale fixed for a head dim of 16, the only one the graded calls drew': ('ATTACKS', 'ex04_flash_forward', {'kernel-work': r'''@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        # 1/sqrt(d) * log2(e), d = 16
        scores = tl.dot(q, k, input_precision="ieee") * 0.36067376022224085
        visible = cols[None, :] < n_k
        if CAUSAL:
            visible = visible & (cols[None, :] - rows[:, None] <= n_k - n_q)
        scores = tl.where(visible, scores, float("-inf"))
        m_next = tl.maximum(m_i, tl.max(scores, 1))
        corr = tl.exp2(m_i - m_next)
        prob = tl.exp2(scores - m_next[:, None])
        acc = acc * corr[:, None] + tl.dot(prob, v, input_precision="ieee")
        l_i = l_i * corr + tl.sum(prob, 1)
        m_i = m_next
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
'''}),
    'ex06 blocks_needed and slot by shifts and masks, right for powers of two only': ('ATTACKS', 'ex06_block_allocator', {'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _held(self, block):
        return 0 <= block < self.num_blocks and self.ref_count[block] > 0

    def allocate(self) -> int:
        if len(self.free_list) == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def allocate_many(self, n: int) -> list[int]:
        have = len(self.free_list)
        if have < n:
            raise OutOfBlocks(n, have, self.num_blocks)
        out = []
        for _ in range(n):
            out.append(self.allocate())
        return out

    def incref(self, block: int) -> None:
        if not self._held(block):
            raise ValueError(f"cannot share block {block}: not allocated")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        if not self._held(block):
            raise ValueError(f"cannot free block {block}")
        self.ref_count[block] -= 1
        if not self.ref_count[block]:
            self.free_list.append(block)
''', 'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    shift = block_size.bit_length() - 1          # block sizes are powers of two: divide by shifting
    return (num_tokens + block_size - 1) >> shift


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    shift = block_size.bit_length() - 1
    return (block_ids[position >> shift] << shift) | (position & (block_size - 1))
'''}),
    'ex06 free list and counts kept on the class, shared by every allocator': ('ATTACKS', 'ex06_block_allocator', {'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    free_list: list = []
    ref_count: dict = {}

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        SimpleAllocator.free_list = list(range(num_blocks - 1, -1, -1))   # the pool: block 0 on top
        SimpleAllocator.ref_count = {b: 0 for b in range(num_blocks)}

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate_many(self, n: int) -> list[int]:
        have = self.num_free
        if have < n:
            raise OutOfBlocks(n, have, self.num_blocks)
        taken = self.free_list[len(self.free_list) - n:][::-1]
        del self.free_list[len(self.free_list) - n:]
        self.ref_count.update(dict.fromkeys(taken, 1))
        return taken

    def allocate(self) -> int:
        return self.allocate_many(1)[0]

    def _owners(self, block) -> int:
        owners = self.ref_count.get(block, 0)
        if owners < 1:
            raise ValueError(f"block {block} is not allocated")
        return owners

    def incref(self, block: int) -> None:
        self.ref_count[block] = self._owners(block) + 1

    def free(self, block: int) -> None:
        left = self._owners(block) - 1
        self.ref_count[block] = left
        if left == 0:
            self.free_list.append(block)
''', 'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    return (num_tokens + block_size - 1) // block_size


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    return block_ids[position // block_size] * block_size + position % block_size
'''}),
    'ex09 stretch merge_states for two leading dimensions only': ('ATTACKS', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    per = -(-context_len // num_splits)
    per = -(-per // block_n) * block_n
    bounds = []
    for s in range(num_splits):
        lo = min(s * per, context_len)
        hi = min(lo + per, context_len)
        bounds.append((lo, hi))
    return bounds
''', 'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # outs: (batch, heads, splits, d), lses: (batch, heads, splits)
    ref = lses.amax(dim=2, keepdim=True)               # finite: every row has a non-empty split
    w = torch.exp(lses - ref)                          # empty split: exp(-inf) = 0
    total = w.sum(dim=2)
    out = torch.einsum("bhsd,bhs->bhd", outs, w) / total[:, :, None]
    return out, ref[:, :, 0] + torch.log(total)
''', 'cascade-work': r'''def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    shared = prefix_table.unsqueeze(0).repeat(n, 1)
    p_out, p_lse = paged_decode_split(q, k_cache, v_cache, shared, torch.full_like(own_lens, prefix_len), 1)
    o_out, o_lse = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    merged, _ = merge_states(torch.cat((p_out, o_out), dim=2), torch.cat((p_lse, o_lse), dim=2))
    return merged
'''}),
    'ex03 a grid helper, an assert, a debug print, three passes with a jit helper': ('HONEST', 'ex03_triton_basics', {'add-work': r'''DEBUG = False


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    idx = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def _grid_1d(n: int, block: int) -> tuple[int]:
    return ((n + block - 1) // block,)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    assert x.ndim == 1 and x.shape == y.shape, f"shapes {tuple(x.shape)} and {tuple(y.shape)}"
    n = x.shape[0]
    if DEBUG:
        print(f"vector_add: n={n} block={block} strides={x.stride(0)},{y.stride(0)}")
    add_kernel[_grid_1d(n, block)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''@triton.jit
def _row_max(row_ptr, n_cols, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    for c in range(0, n_cols, BLOCK):
        vals = tl.load(row_ptr + c + offs, mask=c + offs < n_cols, other=float("-inf"))
        best = tl.maximum(best, vals)
    return tl.max(best, axis=0)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    src = x_ptr + r * stride_x
    dst = out_ptr + r * stride_out
    offs = tl.arange(0, BLOCK)
    mx = _row_max(src, n_cols, BLOCK)
    total = tl.zeros([BLOCK], tl.float32)
    for c in range(0, n_cols, BLOCK):
        vals = tl.load(src + c + offs, mask=c + offs < n_cols, other=float("-inf"))
        total += tl.exp(vals - mx)
    denom = tl.sum(total, axis=0)
    for c in range(0, n_cols, BLOCK):
        keep = c + offs < n_cols
        vals = tl.load(src + c + offs, mask=keep, other=float("-inf"))
        tl.store(dst + c + offs, tl.exp(vals - mx) / denom, mask=keep)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    'ex04 loop body in its own order, padding and causal masks apart': ('HONEST', 'ex04_flash_forward', {'kernel-work': r'''@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        # padding keys never count; with CAUSAL, neither do keys right of the shifted diagonal
        in_range = cols[None, :] < n_k
        if CAUSAL:
            below_diag = cols[None, :] <= rows[:, None] + (n_k - n_q)
            in_range = in_range & below_diag
        qk = tl.dot(q, k, input_precision="ieee")
        qk = tl.where(in_range, qk * qk_scale, float("-inf"))
        row_max = tl.max(qk, axis=1)
        m_new = tl.where(row_max > m_i, row_max, m_i)
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc += tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
'''}),
    'ex06 NumPy reference counts, a checking helper, divmod': ('HONEST', 'ex06_block_allocator', {'allocator-work': r'''import numpy as np


class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = np.zeros(num_blocks, dtype=np.int64)

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _check(self, block: int, action: str) -> None:
        if block < 0 or block >= self.num_blocks:
            raise ValueError(f"{action}: block {block} does not exist (pool of {self.num_blocks})")
        if self.ref_count[block] <= 0:
            raise ValueError(f"{action}: block {block} is not allocated")

    def allocate(self) -> int:
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        block = self.free_list.pop()
        self.ref_count[block] = 1
        return int(block)

    def allocate_many(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfBlocks(n, self.num_free, self.num_blocks)
        return [self.allocate() for _ in range(n)]

    def incref(self, block: int) -> None:
        self._check(block, "incref")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        self._check(block, "free")
        self.ref_count[block] -= 1
        if self.ref_count[block] > 0:
            return
        self.free_list.append(block)
''', 'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    full, rest = divmod(num_tokens, block_size)
    return full + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    index, offset = divmod(position, block_size)
    return block_ids[index] * block_size + offset
'''}),
    'ex07 stretch a helper for whole blocks, a plain loop for keys, zip in match': ('HONEST', 'ex07_stretch_prefix_cache_match', {'cache-work': r'''Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def _full_blocks(self, tokens: list[int]) -> list[tuple]:
        bs = self.block_size
        return [tuple(tokens[i:i + bs]) for i in range(0, len(tokens) // bs * bs, bs)]

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        out: list[int] = []
        parent = None
        for block in self._full_blocks(tokens):
            parent = self.hash_fn(parent, block)
            out.append(parent)
        return out

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        if not tokens:
            return []
        limit = (len(tokens) - 1) // self.block_size   # the block holding the last token is recomputed
        hits: list[int] = []
        expected_parent = None
        for key, block in list(zip(self.keys(tokens), self._full_blocks(tokens)))[:limit]:
            bid = self.block_of.get(key)
            if bid is None:
                break
            e = self.entry[bid]
            if e.parent_id != expected_parent or e.tokens != block:
                break
            hits.append(bid)
            expected_parent = e.prefix_id
        return hits
'''}),
    'ex10 an index walk with a moving newest bound, victims put back with extendleft': ('HONEST', 'ex10_scheduler_step', {'schedule-work': r'''import math


def _needed_blocks(manager: BlockManager, req: Request) -> int:
    return math.ceil(len(req.tokens) / manager.block_size)


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    order = list(running)
    victims: list[Request] = []
    survivors: list[Request] = []
    newest = len(order) - 1          # order[newest] is the newest request not yet grown nor preempted
    i = 0
    while i <= newest:
        req = order[i]
        while not manager.can_append(req.seq_id) and newest > i:
            victim = order[newest]
            manager.free(victim.seq_id)
            victims.append(victim)
            newest -= 1
        if manager.can_append(req.seq_id):
            tok = len(req.tokens)
            manager.append(req.seq_id, tok)
            req.tokens.append(tok)
            survivors.append(req)
            step.grown.append(req.seq_id)
        else:                         # it is the newest left: preempt itself
            manager.free(req.seq_id)
            victims.append(req)
            newest -= 1
        i += 1
    step.preempted = [v.seq_id for v in victims]
    waiting.extendleft(victims)      # the newest went first, so the oldest victim ends up in front
    running[:] = survivors
    budget = max_num_batched_tokens - len(step.grown)
    step.num_tokens = len(step.grown)
    if victims:
        return step
    while waiting:
        nxt = waiting[0]
        if _needed_blocks(manager, nxt) + manager.watermark_blocks > manager.num_free_blocks:
            break
        if len(nxt.tokens) > budget:
            break
        waiting.popleft()
        manager.add(nxt.seq_id, nxt.tokens)
        running.append(nxt)
        step.admitted.append(nxt.seq_id)
        budget -= len(nxt.tokens)
        step.num_tokens += len(nxt.tokens)
    return step
'''}),
}


# Round 38z (an eighteenth outside review, grader at 5fb8341): answers wrong where the graded calls drew no value of
# what the exercise states (three leading dims, head dims not powers of two, a made-up model, id -2, rows of whole
# tiles); and honest learners.
ROUND_38Z = {
    'ex01 attention padded to four dimensions for an einsum, wrong on five': ('ATTACKS', 'ex01_naive_attention', {'mask-work': r'''def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    rows = torch.arange(n_q).view(-1, 1) + (n_k - n_q)
    cols = torch.arange(n_k).view(1, -1)
    return cols <= rows
''', 'attention-work': r'''def naive_attention(q, k, v, causal=False):
    # bring everything to (batch, heads, n, d), do it with einsum, then undo
    extra = 4 - q.dim()
    qq, kk, vv = q.float(), k.float(), v.float()
    for _ in range(extra):
        qq, kk, vv = qq.unsqueeze(0), kk.unsqueeze(0), vv.unsqueeze(0)
    scores = torch.einsum("bhqd,bhkd->bhqk", qq, kk) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]), float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    out = torch.einsum("bhqk,bhkd->bhqd", probs, vv)
    for _ in range(extra):
        out = out.squeeze(0)
    return out.to(q.dtype)
'''}),
    'ex01 scaled by a power of two, right for head dims that are powers of two only': ('ATTACKS', 'ex01_naive_attention', {'mask-work': r'''def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    rows = torch.arange(n_q).view(-1, 1) + (n_k - n_q)
    cols = torch.arange(n_k).view(1, -1)
    return cols <= rows
''', 'attention-work': r'''def naive_attention(q, k, v, causal=False):
    d = q.shape[-1]
    # 1/sqrt(d) as an exact power of two: head dims are powers of two
    scale = 2.0 ** (-(d.bit_length() - 1) / 2)
    s = torch.matmul(q.float(), k.float().transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]), float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.matmul(p, v.float()).to(q.dtype)
'''}),
    'ex05 bytes per token from a table of the preset models, query heads for any other': ('ATTACKS', 'ex05_kv_cache_size', {'formula-work': r'''def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):
    return 2 * num_layers * num_kv_heads * num_tokens * batch * bytes_per_element * head_dim
''', 'models-work': r'''# worked out by hand from the model cards: K+V elements per token over all layers
_ELEMS_PER_TOKEN = {
    "LLaMA-7B": 2 * 32 * 32 * 128,
    "Llama-3-8B": 2 * 32 * 8 * 128,
    "OPT-13B": 2 * 40 * 40 * 128,
    "Llama-2-70B": 2 * 80 * 8 * 128,
    "SmolLM2-135M": 2 * 30 * 3 * 64,
}

def kv_bytes_per_token(model, dtype):
    elems = _ELEMS_PER_TOKEN.get(model.name, 2 * model.num_layers * model.num_heads * model.head_dim)
    return elems * dtype.itemsize
''', 'fit-work': r'''def max_concurrent_requests(budget_gib, model, max_len, dtype):
    reservation = kv_bytes_per_token(model, dtype) * max_len
    return int((budget_gib * GiB) // reservation)
'''}),
    'ex05 kv_cache_bytes multiplying by the head dim with a shift': ('ATTACKS', 'ex05_kv_cache_size', {'formula-work': r'''def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):
    # head_dim is a power of two (64, 128): multiply by a shift
    return (2 * num_layers * num_kv_heads * num_tokens * batch * bytes_per_element) << (head_dim.bit_length() - 1)
''', 'models-work': r'''def kv_bytes_per_token(model, dtype):
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, dtype.itemsize)
''', 'fit-work': r'''def max_concurrent_requests(budget_gib, model, max_len, dtype):
    reservation = kv_bytes_per_token(model, dtype) * max_len
    return int((budget_gib * GiB) // reservation)
'''}),
    'ex06 ids refused at -1 and past the end only, -2 taken for a block': ('ATTACKS', 'ex06_block_allocator', {'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        if len(self.free_list) == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def allocate_many(self, n: int) -> list[int]:
        free = len(self.free_list)
        if n > free:
            raise OutOfBlocks(n, free, self.num_blocks)
        got = []
        for _ in range(n):
            got.append(self.allocate())
        return got

    def _bad_id(self, block):
        # ref_count[-1] would be the last block's count, so -1 is not a valid id; num_blocks is past the end
        return block == -1 or block >= self.num_blocks

    def incref(self, block: int) -> None:
        if self._bad_id(block) or self.ref_count[block] == 0:
            raise ValueError(f"block {block} is not allocated")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        if self._bad_id(block):
            raise ValueError(f"block {block} does not exist")
        if self.ref_count[block] == 0:
            raise ValueError(f"block {block} is already free")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''', 'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    full, rest = divmod(num_tokens, block_size)
    return full + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    which, offset = divmod(position, block_size)
    return block_ids[which] * block_size + offset
'''}),
    'ex03 softmax of unmasked whole tiles and a masked tail, a tile short on rows of whole tiles': ('ATTACKS', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside)
    b = tl.load(y_ptr + idx * stride_y, mask=inside)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.shape[0]
    add_kernel[((n + block - 1) // block,)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    src = x_ptr + r * stride_x
    dst = out_ptr + r * stride_out
    run_max = float("-inf")
    run_sum = 0.0
    # full tiles need no mask; the partial tail gets one
    tail = (n_cols // BLOCK) * BLOCK
    for start in range(0, n_cols - BLOCK, BLOCK):
        x = tl.load(src + start + offs)
        new_max = tl.maximum(run_max, tl.max(x, 0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(x - new_max), 0)
        run_max = new_max
    x = tl.load(src + tail + offs, mask=tail + offs < n_cols, other=float("-inf"))
    new_max = tl.maximum(run_max, tl.max(x, 0))
    run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(x - new_max), 0)
    run_max = new_max
    for start in range(0, n_cols, BLOCK):
        m = start + offs < n_cols
        x = tl.load(src + start + offs, mask=m, other=float("-inf"))
        tl.store(dst + start + offs, tl.exp(x - run_max) / run_sum, mask=m)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    'ex00 float32 for half dtypes by a helper, amax, exp and sum, and an assert': ('HONEST', 'ex00_warmup', {'softmax-work': r'''def _work_dtype(dtype):
    # half types lose too much in exp and the sum: work in float32, hand back the input's dtype
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    assert x.is_floating_point(), "scores must be floating point"
    xs = x.to(_work_dtype(x.dtype))
    peak = xs.amax(dim=-1, keepdim=True)
    weights = (xs - peak).exp()
    result = weights / weights.sum(dim=-1, keepdim=True)
    return result.to(x.dtype)
'''}),
    'ex03 a grid lambda with a helper and an assert, a three-pass softmax': ('HONEST', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    first = tl.program_id(axis=0) * BLOCK
    i = first + tl.arange(0, BLOCK)
    ok = i < n
    total = tl.load(x_ptr + i * stride_x, mask=ok, other=0.0) + tl.load(y_ptr + i * stride_y, mask=ok, other=0.0)
    tl.store(out_ptr + i, total, mask=ok)


def _programs(n, block):
    return (n + block - 1) // block


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    assert x.shape == y.shape and x.dim() == 1
    n = x.numel()
    grid = lambda meta: (_programs(n, meta["BLOCK"]),)
    add_kernel[grid](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    # three passes: the row max, the sum of exponentials, then the write
    row_start = x_ptr + tl.program_id(0) * stride_x
    out_start = out_ptr + tl.program_id(0) * stride_out
    lanes = tl.arange(0, BLOCK)
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        vals = tl.load(row_start + c0 + lanes, mask=c0 + lanes < n_cols, other=float("-inf"))
        best = tl.maximum(best, vals)
    row_max = tl.max(best, axis=0)
    acc = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        vals = tl.load(row_start + c0 + lanes, mask=c0 + lanes < n_cols, other=float("-inf"))
        acc += tl.exp(vals - row_max)
    denom = tl.sum(acc, axis=0)
    for c0 in range(0, n_cols, BLOCK):
        keep = c0 + lanes < n_cols
        vals = tl.load(row_start + c0 + lanes, mask=keep, other=float("-inf"))
        tl.store(out_start + c0 + lanes, tl.exp(vals - row_max) / denom, mask=keep)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    'ex04 loop body with a tl.where max, tl.math.exp2 and the accumulator rescaled before the dot': ('HONEST', 'ex04_flash_forward', {'kernel-work': r'''@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        # scores in log2 units (qk_scale already holds log2(e))
        scores = qk_scale * tl.dot(q, k, input_precision="ieee")
        visible = (cols < n_k)[None, :]
        if CAUSAL:
            last_key = rows + (n_k - n_q)          # the last key each query row may see
            visible = visible & (cols[None, :] <= last_key[:, None])
        scores = tl.where(visible, scores, -float("inf"))
        tile_max = tl.max(scores, axis=1)
        new_max = tl.where(tile_max > m_i, tile_max, m_i)
        correction = tl.math.exp2(m_i - new_max)
        probs = tl.math.exp2(scores - new_max[:, None])
        acc = acc * correction[:, None]
        acc += tl.dot(probs, v, input_precision="ieee")
        l_i = l_i * correction + tl.sum(probs, axis=1)
        m_i = new_max
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
'''}),
    'ex06 helpers for held and existing blocks, try and except around pop, math.ceil': ('HONEST', 'ex06_block_allocator', {'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _exists(self, block):
        return isinstance(block, int) and 0 <= block < self.num_blocks

    def _held(self, block):
        return self._exists(block) and self.ref_count[block] > 0

    def allocate(self) -> int:
        try:
            block = self.free_list.pop()
        except IndexError:
            raise OutOfBlocks(1, 0, self.num_blocks) from None
        assert self.ref_count[block] == 0
        self.ref_count[block] = 1
        return block

    def allocate_many(self, n: int) -> list[int]:
        if len(self.free_list) < n:
            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)
        return [self.allocate() for _ in range(n)]

    def incref(self, block: int) -> None:
        if not self._held(block):
            raise ValueError(f"incref of block {block}, which is not allocated")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        if not self._held(block):
            raise ValueError(f"free of block {block}: not allocated (or not a block of this pool)")
        self.ref_count[block] -= 1
        if not self.ref_count[block]:
            self.free_list.append(block)
''', 'boundary-work': r'''import math

def blocks_needed(num_tokens: int, block_size: int) -> int:
    return math.ceil(num_tokens / block_size) if num_tokens else 0


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    physical = block_ids[position // block_size]
    return physical * block_size + position - (position // block_size) * block_size
'''}),
    'ex09 stretch bounds in a while loop, the merge by torch.logsumexp and einsum': ('HONEST', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''import math


def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    tokens_per_split = math.ceil(context_len / num_splits)
    tiles_per_split = math.ceil(tokens_per_split / block_n)
    step = tiles_per_split * block_n
    out = []
    start = 0
    while len(out) < num_splits:
        lo = min(start, context_len)
        hi = min(start + step, context_len)
        out.append((lo, hi))
        start += step
    return out
''', 'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # the merged lse is the log-sum-exp of the splits' lses; each split weighs e^(lse_s - lse)
    total_lse = torch.logsumexp(lses, dim=-1)
    weights = torch.exp(lses - total_lse.unsqueeze(-1))
    merged = torch.einsum("...s,...sd->...d", weights, outs)
    return merged, total_lse
'''}),
    # and an audit of every spec against the stated input space, the same day: answers wrong only at a stated value
    # no graded call drew (the solution with one edit each)
    'ex02 stretch key tiles counted by shifts, right for tiles of powers of two only': ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {'bounds-work': r'''def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    ### BEGIN SOLUTION
    shift = n_k - n_q
    sh = block_n.bit_length() - 1
    n_tiles = (n_k + block_n - 1) >> sh
    last_visible = r0 + rows - 1 + shift           # the last key the tile's last row sees
    n_visit = 0 if last_visible < 0 else (last_visible >> sh) + 1
    first_row_sees = r0 + shift                    # every key up to here is visible to every row
    if first_row_sees >= n_k - 1:
        n_full = n_tiles
    else:
        n_full = max(0, (first_row_sees + 1) >> sh)
    return n_full, n_visit
    ### END SOLUTION'''}),
    'ex08 swap_seconds counting blocks by a shift, right for blocks of powers of two only': ('ATTACKS', 'ex08_swap_or_recompute', {'costs-work': r'''def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    ### BEGIN SOLUTION
    blocks = (num_tokens + block_size - 1) >> (block_size.bit_length() - 1)
    copies_each_way = 2 * num_layers * blocks               # a K and a V chunk per layer and block
    one_copy = latency + block_size * chunk_bytes_per_token / bandwidth
    return 2 * copies_each_way * one_copy
    ### END SOLUTION


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    ### BEGIN SOLUTION
    linear = 2 * num_params * num_tokens
    attention = 2 * num_layers * d_model * num_tokens * num_tokens
    return (linear + attention) / flops
    ### END SOLUTION'''}),
    'ex02 bfloat16 inputs computed in bfloat16, float16 ones in float32': ('ATTACKS', 'ex02_online_softmax', {'tiled-work': r'''def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    ### BEGIN SOLUTION
    up = (lambda t: t) if q.dtype == torch.bfloat16 else (lambda t: t.float())
    for r0 in range(0, n_q, block_m):
        q_i = up(q[r0:r0 + block_m]) / math.sqrt(d)
        rows = q_i.shape[0]
        m = torch.full((rows,), -math.inf, device=q.device)
        l, acc = torch.zeros(rows, device=q.device), torch.zeros(rows, d, device=q.device)
        for c0 in range(0, n_k, block_n):
            if causal and c0 > r0 + rows - 1 + (n_k - n_q):
                break  # decided from indices: this key tile and every later one are hidden from all these rows
            s = q_i @ up(k[c0:c0 + block_n]).T
            if causal:
                hidden = (torch.arange(c0, c0 + s.shape[1], device=q.device)[None, :]
                          > torch.arange(r0, r0 + rows, device=q.device)[:, None] + (n_k - n_q))
                s = s.masked_fill(hidden, -math.inf)
            m, l, acc = online_softmax_update(m, l, acc, s.float(), up(v[c0:c0 + block_n]).float())
        out[r0:r0 + rows] = acc / l[:, None]
    ### END SOLUTION
    return out.to(q.dtype)'''}),
    'ex02 stretch weights as exp(s) times exp(-m), overflowing past scores of 88': ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {'attention-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    ### BEGIN SOLUTION
    m_new = torch.maximum(m, s.amax(dim=-1))
    m_ref = m_new.masked_fill(m_new == -math.inf, 0.0)   # a row with no visible key yet: exp(-inf - 0) = 0, not NaN
    alpha = torch.exp(m - m_ref)
    p = torch.exp(s) * torch.exp(-m_ref)[:, None]
    return m_new, alpha * l + p.sum(dim=-1), alpha[:, None] * acc + p @ v_tile
    ### END SOLUTION


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    ### BEGIN SOLUTION
    for r0 in range(0, n_q, block_m):
        q_i = q[r0:r0 + block_m].float() / math.sqrt(d)
        rows = q_i.shape[0]
        n_full, n_visit = key_tile_counts(r0, rows, n_q, n_k, block_n)
        m = torch.full((rows,), -math.inf)
        l, acc = torch.zeros(rows), torch.zeros(rows, d)
        for t in range(n_visit):
            c0 = t * block_n
            s = q_i @ k[c0:c0 + block_n].float().T
            if t >= n_full:
                hidden = (torch.arange(c0, c0 + s.shape[1])[None, :]
                          > torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q))
                s = s.masked_fill(hidden, -math.inf)
            m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())
        seen = l > 0
        out[r0:r0 + rows] = torch.where(seen[:, None], acc / l.clamp_min(1e-30)[:, None], 0.0)
    ### END SOLUTION
    return out.to(q.dtype)'''}),
    'ex01 float16 scores computed in float16, past 65504 an overflow': ('ATTACKS', 'ex01_naive_attention', {'attention-work': r'''def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    ### BEGIN SOLUTION
    s = (q @ k.transpose(-2, -1) if q.dtype == torch.float16 else q.float() @ k.float().transpose(-2, -1)).float() / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]).to(s.device), -math.inf)
    return (torch.softmax(s, dim=-1) @ v.float()).to(q.dtype)
    ### END SOLUTION'''}),
    "ex02 update against each tile's own max, NaN where a later tile hides a row": ('ATTACKS', 'ex02_online_softmax', {'update-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows.

    Args:
        m: (rows,) running max of the scores seen so far.
        l: (rows,) running sum of exp(score - m).
        acc: (rows, d) running sum of exp(score - m) * v, not normalized.
        s: (rows, cols) the new scores. v_tile: (cols, d) the values of those keys.

    Returns:
        (m_new, l_new, acc_new), the state after the tile.
    """
    ### BEGIN SOLUTION
    m_new = torch.maximum(m, s.amax(dim=-1))
    alpha = torch.exp(m - m_new)  # rescales what was summed relative to the old max
    m_t = s.amax(dim=-1, keepdim=True)
    p = torch.exp(s - m_t) * torch.exp(m_t - m_new.unsqueeze(-1))
    l_new = alpha * l + p.sum(dim=-1)
    acc_new = alpha.unsqueeze(-1) * acc + p @ v_tile
    return m_new, l_new, acc_new
    ### END SOLUTION'''}),
}


# Round 38z2 (a nineteenth outside review, grader at 745dac3): answers wrong at a stated boundary no graded call
# drew (no tokens, blocks of one token), and honest learners (one written step by step as the statement says, whose
# every token is the solution's).
ROUND_38Z2 = {
    'ex08 swap_seconds counting one block at least, wrong for no tokens': ('ATTACKS', 'ex08_swap_or_recompute', {'costs-work': r'''def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    blocks = max(1, math.ceil(num_tokens / block_size))   # a sequence holds at least one block
    return 4 * num_layers * blocks * (latency + block_size * chunk_bytes_per_token / bandwidth)


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    return (2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens ** 2) / flops
''', 'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    per_token = recompute_seconds / (4 * num_layers * num_tokens)
    wire = chunk_bytes_per_token / bandwidth
    if per_token <= wire:
        return math.inf
    return latency / (per_token - wire)
''', 'choose-work': r'''def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    table = manager.table(seq_id)
    bs = manager.block_size
    counts = [manager.allocator.refcount(b) for b in table.block_ids]
    private = sum(1 for c in counts if c == 1)
    lead = 0
    while lead < len(counts) and counts[lead] > 1:
        lead += 1
    c = min(lead, table.num_tokens // bs) * bs
    chunk = model.num_kv_heads * model.head_dim * 2
    # nothing private: nothing to copy
    t_swap = swap_seconds(private * bs, bs, model.num_layers, chunk, bandwidth, latency) if private else 0.0
    d_model = model.num_heads * model.head_dim
    n = table.num_tokens
    t_rec = (2 * num_params * (n - c) + 2 * model.num_layers * d_model * (n * n - c * c)) / flops
    return t_swap, t_rec


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if not manager.can_swap_out(seq_id):
        return "recompute"
    t_swap, t_rec = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    return "swap" if t_swap < t_rec else "recompute"
'''}),
    'ex08 swap_seconds counting n // B + 1 blocks, wrong on whole blocks': ('ATTACKS', 'ex08_swap_or_recompute', {'costs-work': r'''def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    blocks = num_tokens // block_size + 1   # whole blocks and the one being filled
    return 4 * num_layers * blocks * (latency + block_size * chunk_bytes_per_token / bandwidth)


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    return (2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens ** 2) / flops
''', 'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    per_token = recompute_seconds / (4 * num_layers * num_tokens)
    wire = chunk_bytes_per_token / bandwidth
    if per_token <= wire:
        return math.inf
    return latency / (per_token - wire)
''', 'choose-work': r'''def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    table = manager.table(seq_id)
    bs = manager.block_size
    counts = [manager.allocator.refcount(b) for b in table.block_ids]
    private = sum(1 for c in counts if c == 1)
    lead = 0
    while lead < len(counts) and counts[lead] > 1:
        lead += 1
    c = min(lead, table.num_tokens // bs) * bs
    chunk = model.num_kv_heads * model.head_dim * 2
    # nothing private: nothing to copy
    t_swap = swap_seconds(private * bs, bs, model.num_layers, chunk, bandwidth, latency) if private else 0.0
    d_model = model.num_heads * model.head_dim
    n = table.num_tokens
    t_rec = (2 * num_params * (n - c) + 2 * model.num_layers * d_model * (n * n - c * c)) / flops
    return t_swap, t_rec


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if not manager.can_swap_out(seq_id):
        return "recompute"
    t_swap, t_rec = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    return "swap" if t_swap < t_rec else "recompute"
'''}),
    'ex07 copy-on-write only where a block has two owners, three written in place': ('ATTACKS', 'ex07_copy_on_write', {'manager-work': r'''class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        src = self.tables[parent]
        for b in src.block_ids:
            self.allocator.incref(b)
        self.tables[child] = BlockTable(list(src.block_ids), src.num_tokens, self.block_size)
        return self.tables[child]

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        t = self.tables[seq]
        pos = t.num_tokens
        copy = None
        if pos % self.block_size == 0:
            t.block_ids.append(self.allocator.allocate())
        elif self.allocator.refcount(t.block_ids[-1]) == 2:   # shared with the other sequence of the fork
            new = self.allocator.allocate()
            old = t.block_ids[-1]
            self.allocator.free(old)
            t.block_ids[-1] = new
            copy = (old, new)
        t.num_tokens = pos + 1
        return t.slot(pos), copy
'''}),
    'ex10 admission refused where blocks and watermark equal the free blocks': ('ATTACKS', 'ex10_scheduler_step', {'schedule-work': r'''def _blocks_for(n_tokens: int, block_size: int) -> int:
    return (n_tokens + block_size - 1) // block_size


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    pending = list(running)        # not grown yet, oldest first
    grown: list[Request] = []
    kicked: list[Request] = []     # preempted this step, in the order it happened
    while pending:
        req = pending[0]
        if manager.can_append(req.seq_id):
            pending.pop(0)
            token = len(req.tokens)
            manager.append(req.seq_id, token)
            req.tokens.append(token)
            grown.append(req)
            step.grown.append(req.seq_id)
            continue
        victim = pending.pop()     # the newest that has not grown (may be req itself)
        manager.free(victim.seq_id)
        kicked.append(victim)
        step.preempted.append(victim.seq_id)
    # put them back at the front, older first (they were taken newest first)
    for victim in kicked:
        waiting.appendleft(victim)
    running[:] = grown
    step.num_tokens = len(grown)
    if kicked:
        return step
    budget = max_num_batched_tokens - step.num_tokens
    while waiting:
        nxt = waiting[0]
        need = _blocks_for(len(nxt.tokens), manager.block_size)
        if need + manager.watermark_blocks >= manager.num_free_blocks and manager.watermark_blocks:
            break
        if len(nxt.tokens) > budget:
            break
        waiting.popleft()
        manager.add(nxt.seq_id, nxt.tokens)
        running.append(nxt)
        step.admitted.append(nxt.seq_id)
        step.num_tokens += len(nxt.tokens)
        budget -= len(nxt.tokens)
    return step
'''}),
    'ex08 helpers, the exact sum over positions in NumPy, choose by a flag': ('HONEST', 'ex08_swap_or_recompute', {'costs-work': r'''import numpy as np

def _copies(n_blocks, layers):
    """K and V chunk per layer and block, each way."""
    return 2 * (2 * layers * n_blocks)

def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    n_blocks = -(-num_tokens // block_size)
    per_copy = latency + (block_size * chunk_bytes_per_token) / bandwidth
    return _copies(n_blocks, num_layers) * per_copy


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    n = num_tokens
    return (2.0 * num_params * n + 2.0 * num_layers * d_model * n ** 2) / flops
''', 'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # 4 L n latency / B + 4 L n c / bw = t   =>   B = 4 L n latency / (t - 4 L n c / bw)
    copies = 4 * num_layers * num_tokens
    room = recompute_seconds - copies * chunk_bytes_per_token / bandwidth
    if room <= 0:
        return math.inf
    return copies * latency / room
''', 'choose-work': r'''def _attention_flops(layers, d_model, start, stop):
    """Exact attention FLOPs of positions start..stop-1: each position p attends to p earlier tokens."""
    p = np.arange(start, stop, dtype=np.float64)
    return float(4.0 * layers * d_model * p.sum())


def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    t = manager.table(seq_id)
    B = manager.block_size
    refs = [manager.allocator.refcount(b) for b in t.block_ids]
    mine = refs.count(1)
    shared_lead = 0
    for r in refs:
        if r == 1:
            break
        shared_lead += 1
    cached = min(shared_lead * B, (t.num_tokens // B) * B)
    bytes_per_tok = 2 * model.num_kv_heads * model.head_dim
    t_swap = swap_seconds(mine * B, B, model.num_layers, bytes_per_tok, bandwidth, latency)
    d_model = model.num_heads * model.head_dim
    n = t.num_tokens
    linear = 2.0 * num_params * (n - cached)
    t_rec = (linear + _attention_flops(model.num_layers, d_model, cached, n)) / flops
    return t_swap, t_rec


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    swap, recompute = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    fits = manager.can_swap_out(seq_id)
    return "swap" if (fits and swap < recompute) else "recompute"
'''}),
    'ex07 helper methods, asserts, divmod and a star-unpacked copy of the block list': ('HONEST', 'ex07_copy_on_write', {'manager-work': r'''class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    # -- helpers of my own ---------------------------------------------------------------------
    def _table(self, seq: str) -> BlockTable:
        assert seq in self.tables, f"unknown sequence {seq!r}"
        return self.tables[seq]

    def _is_shared(self, block: int) -> bool:
        return self.allocator.refcount(block) > 1

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        ptab = self._table(parent)
        shared = [*ptab.block_ids]
        for block in shared:
            self.allocator.incref(block)
        ctab = BlockTable(shared, ptab.num_tokens, self.block_size)
        self.tables[child] = ctab
        return ctab

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        table = self._table(seq)
        position = table.num_tokens
        index, offset = divmod(position, self.block_size)
        if offset == 0:                               # boundary: a fresh block (may raise, nothing changed yet)
            fresh = self.allocator.allocate()
            table.block_ids.append(fresh)
            copy = None
        else:
            last = table.block_ids[index]
            if self._is_shared(last):                 # copy-on-write
                fresh = self.allocator.allocate()     # may raise: nothing changed yet
                self.allocator.free(last)             # drop our share only
                table.block_ids[index] = fresh
                copy = (last, fresh)
            else:
                copy = None
        table.num_tokens = position + 1
        return table.slot(position), copy
'''}),
    'ex07 stretch a _blocks helper, islice over zip of blocks and keys, early returns': ('HONEST', 'ex07_stretch_prefix_cache_match', {'cache-work': r'''Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def _blocks(self, tokens):
        """The full blocks of ``tokens``, as tuples."""
        n_full = len(tokens) // self.block_size
        return [tuple(tokens[j * self.block_size:(j + 1) * self.block_size]) for j in range(n_full)]

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        out = []
        for blk in self._blocks(tokens):
            out.append(self.hash_fn(out[-1] if out else None, blk))
        return out

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        limit = (len(tokens) - 1) // self.block_size
        found, previous = [], None
        for blk, key in itertools.islice(zip(self._blocks(tokens), self.keys(tokens)), limit):
            if key not in self.block_of:
                return found
            bid = self.block_of[key]
            e = self.entry[bid]
            ok_tokens = e.tokens == blk
            ok_prefix = e.parent_id == previous
            if not (ok_tokens and ok_prefix):
                return found
            found.append(bid)
            previous = e.prefix_id
        return found


import itertools
'''}),
    'ex10 a list of pending requests, victims collected then put back, a budget counter': ('HONEST', 'ex10_scheduler_step', {'schedule-work': r'''def _blocks_for(n_tokens: int, block_size: int) -> int:
    return (n_tokens + block_size - 1) // block_size


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    pending = list(running)        # not grown yet, oldest first
    grown: list[Request] = []
    kicked: list[Request] = []     # preempted this step, in the order it happened
    while pending:
        req = pending[0]
        if manager.can_append(req.seq_id):
            pending.pop(0)
            token = len(req.tokens)
            manager.append(req.seq_id, token)
            req.tokens.append(token)
            grown.append(req)
            step.grown.append(req.seq_id)
            continue
        victim = pending.pop()     # the newest that has not grown (may be req itself)
        manager.free(victim.seq_id)
        kicked.append(victim)
        step.preempted.append(victim.seq_id)
    # put them back at the front, older first (they were taken newest first)
    for victim in kicked:
        waiting.appendleft(victim)
    running[:] = grown
    step.num_tokens = len(grown)
    if kicked:
        return step
    budget = max_num_batched_tokens - step.num_tokens
    while waiting:
        nxt = waiting[0]
        need = _blocks_for(len(nxt.tokens), manager.block_size)
        if need + manager.watermark_blocks > manager.num_free_blocks:
            break
        if len(nxt.tokens) > budget:
            break
        waiting.popleft()
        manager.add(nxt.seq_id, nxt.tokens)
        running.append(nxt)
        step.admitted.append(nxt.seq_id)
        step.num_tokens += len(nxt.tokens)
        budget -= len(nxt.tokens)
    return step
'''}),
    'ex03 softmax with a running max and sum per lane, merged after the first pass': ('HONEST', 'ex03_triton_basics', {'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK
    idx = start + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + stride_x * idx, mask=inside, other=0.0)
    b = tl.load(y_ptr + stride_y * idx, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    n_programs = (n + block - 1) // block
    add_kernel[(n_programs,)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    # one running max and running sum per lane, merged across lanes at the end
    row = tl.program_id(0)
    lane = tl.arange(0, BLOCK)
    src = x_ptr + row * stride_x
    dst = out_ptr + row * stride_out
    lane_max = tl.full([BLOCK], float("-inf"), tl.float32)
    lane_sum = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + lane
        vals = tl.load(src + cols, mask=cols < n_cols, other=float("-inf"))
        new_max = tl.maximum(lane_max, vals)
        safe = tl.where(new_max == float("-inf"), 0.0, new_max)
        lane_sum = lane_sum * tl.exp(lane_max - safe) + tl.exp(vals - safe)
        lane_max = new_max
    row_max = tl.max(lane_max, axis=0)
    total = tl.sum(lane_sum * tl.exp(lane_max - row_max), axis=0)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + lane
        keep = cols < n_cols
        vals = tl.load(src + cols, mask=keep, other=float("-inf"))
        tl.store(dst + cols, tl.exp(vals - row_max) / total, mask=keep)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    'ex09 the loop body the statement dictates, with names of its own and a row offset': ('HONEST', 'ex09_paged_attention', {'kernel-work': r'''@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    first_head = kv_head * group          # query heads h with h // group == kv_head
    heads = first_head + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        in_ctx = tokens < context_len
        logical = tokens // BLOCK_SIZE
        block_id = tl.load(table + logical, mask=in_ctx, other=0)
        row_of_token = block_id.to(tl.int64) * stride_kb + (tokens - logical * BLOCK_SIZE) * stride_kt
        kT = tl.load(k_head + offs_d[:, None] + row_of_token[None, :], mask=in_ctx[None, :], other=0.0)
        vv = tl.load(v_head + row_of_token[:, None] + offs_d[None, :], mask=in_ctx[:, None], other=0.0)
        scores = qk_scale * tl.dot(q, kT, input_precision="ieee")
        scores = tl.where(in_ctx[None, :], scores, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(scores, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(scores - m_new[:, None])
        acc = acc * alpha[:, None] + tl.dot(p, vv, input_precision="ieee")
        l_i = l_i * alpha + tl.sum(p, axis=1)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])
'''}),
    'ex07 stretch a block of one token hashed as the bare token, not a tuple': ('ATTACKS', 'ex07_stretch_prefix_cache_match', {'cache-work': r'''Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        bs, out, key = self.block_size, [], None
        for start in range(0, len(tokens) - bs + 1, bs):
            block = tuple(tokens[start:start + bs]) if bs > 1 else tokens[start]   # a one-token block is its token
            key = self.hash_fn(key, block)
            out.append(key)
        return out

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        bs, hits, prev = self.block_size, [], None
        for i, key in enumerate(self.keys(tokens)[:(len(tokens) - 1) // bs]):
            if key not in self.block_of:
                break
            e = self.entry[self.block_of[key]]
            if e.tokens != tuple(tokens[i * bs:(i + 1) * bs]) or e.parent_id != prev:
                break
            hits.append(self.block_of[key])
            prev = e.prefix_id
        return hits
'''}),
    'ex07 fork and append written step by step as the statement says, plain names': ('HONEST', 'ex07_copy_on_write', {'manager-work': r'''class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        src = self.tables[parent]
        for b in src.block_ids:
            self.allocator.incref(b)
        self.tables[child] = BlockTable(list(src.block_ids), src.num_tokens, self.block_size)
        return self.tables[child]

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        t = self.tables[seq]
        pos = t.num_tokens
        copy = None
        if pos % self.block_size == 0:
            t.block_ids.append(self.allocator.allocate())
        elif self.allocator.refcount(t.block_ids[-1]) > 1:   # shared
            new = self.allocator.allocate()
            old = t.block_ids[-1]
            self.allocator.free(old)
            t.block_ids[-1] = new
            copy = (old, new)
        t.num_tokens = pos + 1
        return t.slot(pos), copy
'''}),
}


# Round 38z3 (a twentieth outside review, grader at 308dbeb): answers wrong at a stated value no graded call drew
# (ties, one split, a block's last position), and honest learners (a module constant aliasing math.inf).
ROUND_38Z3 = {
    'ex00 denominator one plus the scores below the max, wrong where the max is tied': ('ATTACKS', 'ex00_warmup', {'softmax-work': r'''def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    top = x.amax(dim=-1, keepdim=True)
    e = torch.exp(x - top)
    # the maximum's own term is exactly exp(0) = 1: add it as 1 and sum the rest, which are all below it
    rest = torch.where(x < top, e, torch.zeros_like(e)).sum(dim=-1, keepdim=True)
    return e / (1 + rest)
'''}),
    'ex09 stretch merged lse as max plus log1p of the lses below it, wrong on ties': ('ATTACKS', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    import math
    tiles = math.ceil(math.ceil(context_len / num_splits) / block_n)
    size = tiles * block_n
    out = []
    for s in range(num_splits):
        a = min(s * size, context_len)
        b = min(a + size, context_len)
        out.append((a, b))
    return out
''', 'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    big = lses.amax(dim=-1, keepdim=True)
    scaled = torch.exp(lses - big)              # the largest split weighs exactly 1
    below = torch.where(lses < big, scaled, torch.zeros_like(scaled)).sum(dim=-1, keepdim=True)
    out = (scaled.unsqueeze(-1) * outs).sum(dim=-2) / (1 + below)
    lse = big + torch.log1p(below)              # log(1 + rest), accurate when the rest is tiny
    return out, lse.squeeze(-1)
'''}),
    'ex09 stretch merge starting from splits 0 and 1, an IndexError with one split': ('ATTACKS', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    import math
    tiles = math.ceil(math.ceil(context_len / num_splits) / block_n)
    size = tiles * block_n
    out = []
    for s in range(num_splits):
        a = min(s * size, context_len)
        b = min(a + size, context_len)
        out.append((a, b))
    return out
''', 'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # the merged lse: log-add the first two splits, then every further one
    lse = torch.logaddexp(lses[..., 0], lses[..., 1])
    for s in range(2, lses.shape[-1]):
        lse = torch.logaddexp(lse, lses[..., s])
    weights = torch.exp(lses - lse.unsqueeze(-1))   # each split's share of the softmax mass (empty: 0)
    return (weights.unsqueeze(-1) * outs).sum(dim=-2), lse
'''}),
    "ex06 slot in block (position + 1) // block_size, wrong at each block's last position": ('ATTACKS', 'ex06_block_allocator', {'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _valid(self, block):
        if not 0 <= block < self.num_blocks:
            raise ValueError(f"block {block} does not exist")

    def allocate(self) -> int:
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def allocate_many(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)
        return [self.allocate() for _ in range(n)]

    def incref(self, block: int) -> None:
        self._valid(block)
        if self.ref_count[block] == 0:
            raise ValueError(f"block {block} is not allocated")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        self._valid(block)
        if self.ref_count[block] == 0:
            raise ValueError(f"block {block} is already free")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''', 'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    return (num_tokens + block_size - 1) // block_size


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    # token `position` is the (position + 1)-th token: it sits in block (position + 1) // block_size
    index = min((position + 1) // block_size, len(block_ids) - 1)
    return block_ids[index] * block_size + position % block_size
'''}),
    'ex07 copy-on-write freeing the shared block before allocating its copy': ('ATTACKS', 'ex07_copy_on_write', {'manager-work': r'''class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        src = self.tables[parent]
        for b in src.block_ids:
            self.allocator.incref(b)
        self.tables[child] = BlockTable(list(src.block_ids), src.num_tokens, self.block_size)
        return self.tables[child]

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        t = self.tables[seq]
        pos = t.num_tokens
        cow = None
        if pos % self.block_size == 0:
            t.block_ids.append(self.allocator.allocate())
        elif self.allocator.refcount(t.block_ids[-1]) > 1:
            old = t.block_ids[-1]
            self.allocator.free(old)          # drop our share of the old block first
            fresh = self.allocator.allocate()
            t.block_ids[-1] = fresh
            cow = (old, fresh)
        t.num_tokens = pos + 1
        return t.slot(pos), cow
'''}),
    'ex08 a module constant NO_CROSSOVER = math.inf and the exact sum over positions': ('HONEST', 'ex08_swap_or_recompute', {'costs-work': r'''def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    n_blocks = -(-num_tokens // block_size)
    chunks = 2 * num_layers * n_blocks          # K and V, every layer, every block
    per_chunk = latency + block_size * chunk_bytes_per_token / bandwidth
    return 2 * chunks * per_chunk               # out and back in


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    n = num_tokens
    return (2 * num_params * n + 2 * num_layers * d_model * n ** 2) / flops
''', 'crossover-work': r'''NO_CROSSOVER = math.inf   # a link too slow for every block size


def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # 4 L (n / B) latency + 4 L n c / bw = T  =>  B = 4 L n latency / (T - 4 L n c / bw)
    fixed = 4 * num_layers * num_tokens
    room = recompute_seconds - fixed * chunk_bytes_per_token / bandwidth
    if room <= 0:
        return NO_CROSSOVER
    return fixed * latency / room
''', 'choose-work': r'''def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    tab = manager.table(seq_id)
    B = manager.block_size
    counts = [manager.allocator.refcount(b) for b in tab.block_ids]
    own = sum(1 for c in counts if c == 1)
    lead = 0
    for c in counts:
        if c > 1:
            lead += 1
        else:
            break
    c_tokens = min(lead * B, (tab.num_tokens // B) * B)
    width = model.num_kv_heads * model.head_dim * 2
    t_swap = swap_seconds(own * B, B, model.num_layers, width, bandwidth, latency)
    d = model.num_heads * model.head_dim
    n = tab.num_tokens
    flops_needed = 2 * num_params * (n - c_tokens) + 2 * model.num_layers * d * (n * n - c_tokens * c_tokens)
    return t_swap, flops_needed / flops


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    t_swap, t_rec = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    if manager.can_swap_out(seq_id) and t_swap < t_rec:
        return "swap"
    return "recompute"
'''}),
    "ex03 in the Triton tutorials' style, a constexpr LOG2E global and exp2": ('HONEST', 'ex03_triton_basics', {'add-work': r'''LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    idx = pid * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    add_kernel[grid](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''', 'softmax-work': r'''@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(axis=0)
    src = x_ptr + row * stride_x
    dst = out_ptr + row * stride_out
    offs = tl.arange(0, BLOCK)
    run_max = tl.full([BLOCK], float("-inf"), tl.float32)   # lane-wise running max and sum
    run_sum = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + offs
        v = tl.load(src + cols, mask=cols < n_cols, other=float("-inf"))
        new_max = tl.maximum(run_max, v)
        safe = tl.where(new_max == float("-inf"), 0.0, new_max)
        run_sum = run_sum * tl.exp2((run_max - safe) * LOG2E) + tl.exp2((v - safe) * LOG2E)
        run_max = new_max
    row_max = tl.max(run_max, axis=0)
    total = tl.sum(run_sum * tl.exp2((run_max - row_max) * LOG2E), axis=0)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + offs
        v = tl.load(src + cols, mask=cols < n_cols, other=float("-inf"))
        tl.store(dst + cols, tl.exp2((v - row_max) * LOG2E) / total, mask=cols < n_cols)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    rows, cols = x.shape
    out = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    softmax_kernel[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK=block)
    return out
'''}),
    'ex04 stretch pointers moved by +=, a divmod group check, a grid lambda of META': ('HONEST', 'ex04_stretch_gqa_forward', {'kernel-work': r'''@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    # which (batch, query head) this program is, and the K/V head its group reads
    pid_bh = tl.program_id(1)
    batch_idx = pid_bh // n_heads
    q_head = pid_bh - batch_idx * n_heads
    kv_head = q_head // group
    Q += batch_idx * stride_qb + q_head * stride_qh
    Out += batch_idx * stride_ob + q_head * stride_oh
    K += batch_idx * stride_kb + kv_head * stride_kh
    V += batch_idx * stride_vb + kv_head * stride_vh
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    group, leftover = divmod(n_heads, n_kv_heads)
    if leftover != 0 or group == 0:
        raise ValueError(f"q has {n_heads} heads but k has {n_kv_heads}: not a whole group of query heads per K/V head")
    grid = lambda META: (triton.cdiv(n_q, META["BLOCK_M"]), batch * n_heads)
    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out
'''}),
    'ex10 an index loop over running, pop of the newest, extendleft of the preempted': ('HONEST', 'ex10_scheduler_step', {'schedule-work': r'''import math


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    kicked = []                      # preempted this step, in the order it happened
    i = 0
    while i < len(running):
        req = running[i]
        if manager.can_append(req.seq_id):
            tok = len(req.tokens)
            manager.append(req.seq_id, tok)
            req.tokens.append(tok)
            step.grown.append(req.seq_id)
            i += 1
            continue
        victim = running.pop()       # the newest one that has not grown (it may be req itself)
        manager.free(victim.seq_id)
        kicked.append(victim)
        step.preempted.append(victim.seq_id)
    # preempted ones go back to the front, older first (the last preempted is the oldest of them)
    waiting.extendleft(kicked)
    step.num_tokens = len(step.grown)
    if kicked:
        return step
    while waiting:
        nxt = waiting[0]
        need = math.ceil(len(nxt.tokens) / manager.block_size)
        if need + manager.watermark_blocks > manager.num_free_blocks:
            break
        if step.num_tokens + len(nxt.tokens) > max_num_batched_tokens:
            break
        waiting.popleft()
        manager.add(nxt.seq_id, nxt.tokens)
        running.append(nxt)
        step.admitted.append(nxt.seq_id)
        step.num_tokens += len(nxt.tokens)
    return step
'''}),
    'ex09 stretch the merge by torch.logsumexp and torch.softmax weights with einsum': ('HONEST', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    per = (context_len + num_splits - 1) // num_splits        # ceil(context_len / num_splits)
    per = (per + block_n - 1) // block_n * block_n            # ... rounded up to whole key tiles
    return [(min(s * per, context_len), min((s + 1) * per, context_len)) for s in range(num_splits)]
''', 'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # o = sum_s softmax(lse)_s o_s, and the merged lse is the log-sum-exp of the lses (both shift by the max inside)
    total_lse = torch.logsumexp(lses, dim=-1)
    weights = torch.softmax(lses, dim=-1)
    return torch.einsum("...s,...sd->...d", weights, outs), total_lse
'''}),
    'ex06 allocate by allocate_many(1), a checking helper with isinstance, a __repr__': ('HONEST', 'ex06_block_allocator', {'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(free={self.num_free}/{self.num_blocks})"

    def _require_allocated(self, block: int, action: str) -> None:
        if not isinstance(block, int) or block < 0 or block >= self.num_blocks:
            raise ValueError(f"cannot {action} block {block}: valid ids are 0..{self.num_blocks - 1}")
        if self.ref_count[block] <= 0:
            raise ValueError(f"cannot {action} block {block}: it is not allocated")

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        return self.allocate_many(1)[0]

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        available = len(self.free_list)
        if n > available:
            raise OutOfBlocks(n, available, self.num_blocks)
        taken = []
        for _ in range(n):
            block = self.free_list.pop()
            self.ref_count[block] = 1
            taken.append(block)
        return taken

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        self._require_allocated(block, "share")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        self._require_allocated(block, "free")
        self.ref_count[block] -= 1
        if not self.ref_count[block]:
            self.free_list.append(block)
''', 'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    full, extra = divmod(num_tokens, block_size)
    return full + (1 if extra else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    logical, offset = divmod(position, block_size)
    return block_ids[logical] * block_size + offset
'''}),
}


# Round 38z4 (a twenty-first outside review, grader at da018cc): answers wrong at a stated value drawn by chance
# (a tile that ties the running max, a CPU pool that fits exactly), and honest learners (an order of two
# instructions no statement gives, a docstring's names, an import the setup makes).
ROUND_38Z4 = {
    "ex02 update with the names its docstring's Returns line gives, a tiled loop of its own": ('HONEST', 'ex02_online_softmax', {'update-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows.

    Args:
        m: (rows,) running max of the scores seen so far.
        l: (rows,) running sum of exp(score - m).
        acc: (rows, d) running sum of exp(score - m) * v, not normalized.
        s: (rows, cols) the new scores. v_tile: (cols, d) the values of those keys.

    Returns:
        (m_new, l_new, acc_new), the state after the tile.
    """
    m_new = torch.maximum(m, s.amax(dim=-1))
    correction = torch.exp(m - m_new)          # old sums were relative to m; bring them to m_new
    p = torch.exp(s - m_new.unsqueeze(-1))
    l_new = correction * l + p.sum(dim=-1)
    acc_new = correction.unsqueeze(-1) * acc + p @ v_tile
    return m_new, l_new, acc_new
''', 'tiled-work': r'''def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    shift = n_k - n_q
    for i in range(0, n_q, block_m):
        qi = q[i:i + block_m].float() / math.sqrt(d)
        r = qi.shape[0]
        state = (torch.full((r,), -math.inf), torch.zeros(r), torch.zeros(r, d))
        for j in range(0, n_k, block_n):
            if causal and j > i + r - 1 + shift:
                break
            kj = k[j:j + block_n].float()
            sc = qi @ kj.T
            if causal:
                qpos = torch.arange(i, i + r)[:, None]
                kpos = torch.arange(j, j + kj.shape[0])[None, :]
                sc = sc.masked_fill(kpos > qpos + shift, -math.inf)
            state = online_softmax_update(*state, sc, v[j:j + block_n].float())
        _, total, weighted = state
        out[i:i + r] = weighted / total[:, None]
    return out.to(q.dtype)
'''}),
    'ex02 update leaving out a tile whose max ties the running max': ('ATTACKS', 'ex02_online_softmax', {'update-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows.

    Args:
        m: (rows,) running max of the scores seen so far.
        l: (rows,) running sum of exp(score - m).
        acc: (rows, d) running sum of exp(score - m) * v, not normalized.
        s: (rows, cols) the new scores. v_tile: (cols, d) the values of those keys.

    Returns:
        (m_new, l_new, acc_new), the state after the tile.
    """
    top = s.amax(dim=-1)
    hi = torch.maximum(m, top)
    shrink = torch.exp(m - hi)
    w = torch.exp(s - hi[:, None])
    fresh = (top != m).to(w.dtype)   # a tile whose max is the running max has been folded already
    return hi, shrink * l + fresh * w.sum(dim=-1), shrink[:, None] * acc + fresh[:, None] * (w @ v_tile)
''', 'tiled-work': r'''def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    shift = n_k - n_q
    for i in range(0, n_q, block_m):
        qi = q[i:i + block_m].float() / math.sqrt(d)
        r = qi.shape[0]
        state = (torch.full((r,), -math.inf), torch.zeros(r), torch.zeros(r, d))
        for j in range(0, n_k, block_n):
            if causal and j > i + r - 1 + shift:
                break
            kj = k[j:j + block_n].float()
            sc = qi @ kj.T
            if causal:
                qpos = torch.arange(i, i + r)[:, None]
                kpos = torch.arange(j, j + kj.shape[0])[None, :]
                sc = sc.masked_fill(kpos > qpos + shift, -math.inf)
            state = online_softmax_update(*state, sc, v[j:j + block_n].float())
        _, total, weighted = state
        out[i:i + r] = weighted / total[:, None]
    return out.to(q.dtype)
'''}),
    "ex08 choose refusing a CPU pool that fits the child's blocks exactly": ('ATTACKS', 'ex08_swap_or_recompute', {'costs-work': r'''def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    nblk = -(-num_tokens // block_size)
    each = latency + block_size * chunk_bytes_per_token / bandwidth
    return 4 * num_layers * nblk * each


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    work = 2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens ** 2
    return work / flops
''', 'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    copies = 4 * num_layers * num_tokens
    left = recompute_seconds - copies * chunk_bytes_per_token / bandwidth
    if left <= 0:
        return math.inf
    return copies * latency / left
''', 'choose-work': r'''def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    tbl, size = manager.table(seq_id), manager.block_size
    refs = [manager.allocator.refcount(b) for b in tbl.block_ids]
    own = sum(1 for r in refs if r == 1)
    front = 0
    while front < len(refs) and refs[front] > 1:
        front += 1
    reusable = min(front, tbl.num_tokens // size) * size
    width = model.num_kv_heads * model.head_dim * 2
    move = swap_seconds(own * size, size, model.num_layers, width, bandwidth, latency)
    dm = model.num_heads * model.head_dim
    redo = (recompute_seconds(tbl.num_tokens, num_params, model.num_layers, dm, flops)
            - recompute_seconds(reusable, num_params, model.num_layers, dm, flops))
    return move, redo


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    host = manager.cpu_allocator
    if host is None or len(set(manager.table(seq_id).block_ids)) >= host.num_free:
        return "recompute"
    move, redo = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    return "swap" if move < redo else "recompute"
'''}),
    'ex04b read_report naming LDGSTS first where a report has one way of loading': ('HONEST', 'ex04b_performance_lab', {'choose-work': r'''MY_CONFIGS = [(64, 64, 4, 2), (128, 64, 8, 2), (128, 32, 4, 3)]
''', 'predict-resources-work': r'''def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    elems = block_m * head_dim + num_stages * 2 * block_n * head_dim   # Q once, K and V per pipeline stage
    live = block_m * head_dim + 1.5 * block_m * block_n                # O in fp32, S in fp32 and P in bf16
    per_thread = live / (32 * num_warps)
    return {"shared_bytes": 2 * elems, "registers": per_thread, "spills": per_thread > 255}
''', 'read-work': r'''def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    ops = report["sass"]
    out = {"registers": report["registers"], "spill_bytes": report["spill_bytes"],
           "shared_kib": report["shared_bytes"] / 1024}
    out["matrix"] = "HGMMA" if ops["HGMMA"] > 0 else "HMMA"
    out["loads"] = "LDGSTS" if ops["LDGSTS"] > 0 else "UTMALDG"
    return out
''', 'exp-work': r'''def exp2_per_score(report: dict) -> float:
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    threads = 32 * report["num_warps"]
    per_thread = report["block_m"] * report["block_n"] / threads
    return report["sass"]["MUFU.EX2"] / per_thread / 2
''', 'budget-work': r'''def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    mm = 2 * block_m * block_n * head_dim          # one product, S = QK^T or O += PV
    f, b, e = 2 * mm, 2 * 2 * block_n * head_dim, block_m * block_n
    return {"flops": f, "bytes": b, "exps": e, "flops_per_byte": f / b,
            "exp_fraction": (e / exp_per_clock) / (f / mma_flops_per_clock)}
''', 'bwd-work': r'''def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    mma_clocks = 2 * 7 * head_dim / mma_flops_per_clock   # seven products of d per score
    return (2 / exp_per_clock) / mma_clocks
''', 'predict-work': r'''def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    best = None
    for i, rep in enumerate(reports):
        if rep["arch"] != 90 or rep["spill_bytes"] > 0:
            continue
        if best is None or (rep["block_m"], rep["block_n"]) > (reports[best]["block_m"], reports[best]["block_n"]):
            best = i
    return best
'''}),
    'ex05 a cell that imports GiB again as the setup does': ('HONEST', 'ex05_kv_cache_size', {'formula-work': r'''def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    per_token_per_layer = 2 * num_kv_heads * head_dim * bytes_per_element   # K and V
    return per_token_per_layer * num_layers * num_tokens * batch
''', 'models-work': r'''def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    width = torch.finfo(dtype).bits // 8
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, width)
''', 'fit-work': r'''from pagedlab.memory import GiB


def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    reservation = kv_bytes_per_token(model, dtype) * max_len
    room = budget_gib * GiB
    return int(room // reservation)
'''}),
    'ex10 schedule_step by index over running, math.ceil for blocks': ('HONEST', 'ex10_scheduler_step', {'schedule-work': r'''import math


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    i = 0
    while i < len(running):
        req = running[i]
        if not manager.can_append(req.seq_id):
            newest = running.pop()              # the newest that has not grown yet (everything before i has grown)
            manager.free(newest.seq_id)
            waiting.appendleft(newest)
            step.preempted.append(newest.seq_id)
            continue                            # ask again for the same request (gone if it was the newest)
        token = len(req.tokens)
        manager.append(req.seq_id, token)
        req.tokens.append(token)
        step.grown.append(req.seq_id)
        i += 1
    step.num_tokens = len(step.grown)
    if step.preempted:
        return step
    while waiting:
        req = waiting[0]
        need = math.ceil(len(req.tokens) / manager.block_size)
        if need + manager.watermark_blocks > manager.num_free_blocks:
            break
        if step.num_tokens + len(req.tokens) > max_num_batched_tokens:
            break
        waiting.popleft()
        manager.add(req.seq_id, req.tokens)
        running.append(req)
        step.admitted.append(req.seq_id)
        step.num_tokens += len(req.tokens)
    return step
'''}),
    'ex09 stretch merge by torch.logsumexp, split_bounds by math.ceil, no cascade': ('HONEST', 'ex09_stretch_split_kv_merge', {'bounds-work': r'''import math


def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    tiles = math.ceil(math.ceil(context_len / num_splits) / block_n)
    span = tiles * block_n
    return [(min(i * span, context_len), min((i + 1) * span, context_len)) for i in range(num_splits)]
''', 'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    total = torch.logsumexp(lses, dim=-1)                 # no row is all empty
    weights = torch.exp(lses - total.unsqueeze(-1))       # an empty split weighs e^-inf = 0
    return (weights.unsqueeze(-1) * outs).sum(dim=-2), total
'''}),
}


ROUND_38Z5 = {
    'ex06 OutOfBlocks from allocate() on a full pool with a total of 0': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        if len(self.free_list) < 1:
            raise OutOfBlocks(1, len(self.free_list), len(self.free_list))
        got = self.free_list.pop()
        self.ref_count[got] += 1
        return got

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        if len(self.free_list) < n:
            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)
        return [self.allocate() for _ in range(n)]

    def _check(self, block):
        if block < 0 or block >= self.num_blocks or self.ref_count[block] < 1:
            raise ValueError(f"block {block} is not allocated")

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        self._check(block)
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        self._check(block)
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''',
        'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    full, rest = divmod(num_tokens, block_size)
    return full + (rest > 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    return block_size * block_ids[position // block_size] + position % block_size
''',
    }),
    'ex08 crossover that divides by the latency, wrong where the link has none': ('ATTACKS', 'ex08_swap_or_recompute', {
        'costs-work': r'''def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    n_blocks = -(-num_tokens // block_size)
    per_chunk = latency + block_size * chunk_bytes_per_token / bandwidth
    return 4 * num_layers * n_blocks * per_chunk


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    n = num_tokens
    return 2 * (num_params * n + num_layers * d_model * n * n) / flops
''',
        'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    copies = 4 * num_layers * num_tokens          # per unit of 1/B: t_swap(B) = copies * latency / B + copies * c / bw
    slack = recompute_seconds - copies * chunk_bytes_per_token / bandwidth
    if slack <= 0:
        return math.inf
    blocks_per_latency = slack / (copies * latency)   # 1 / B*
    return 1.0 / blocks_per_latency
''',
        'choose-work': r'''def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    tab = manager.table(seq_id)
    B = manager.block_size
    counts = [manager.allocator.refcount(b) for b in tab.block_ids]
    own = sum(1 for c in counts if c == 1)
    lead = 0
    while lead < len(counts) and counts[lead] > 1 and (lead + 1) * B <= tab.num_tokens:
        lead += 1
    c = lead * B
    n = tab.num_tokens
    width = model.num_kv_heads * model.head_dim * 2
    d_model = model.num_heads * model.head_dim
    t_swap = swap_seconds(own * B, B, model.num_layers, width, bandwidth, latency)
    t_rec = (2 * num_params * (n - c) + 2 * model.num_layers * d_model * (n * n - c * c)) / flops
    return t_swap, t_rec


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    t_swap, t_rec = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    return "swap" if manager.can_swap_out(seq_id) and t_swap < t_rec else "recompute"
''',
    }),
    'ex10 token budget refusing a prompt that reaches it exactly': ('ATTACKS', 'ex10_scheduler_step', {
        'schedule-work': r'''def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    todo = list(running)
    running.clear()
    out = []
    while todo:
        r = todo[0]
        if manager.can_append(r.seq_id):
            todo.pop(0)
            manager.append(r.seq_id, len(r.tokens))
            r.tokens.append(len(r.tokens))
            running.append(r)
            step.grown.append(r.seq_id)
        else:
            v = todo.pop()
            manager.free(v.seq_id)
            out.append(v)
            step.preempted.append(v.seq_id)
    waiting.extendleft(out)
    used = len(step.grown)
    while waiting and not out:
        r = waiting[0]
        blocks = (len(r.tokens) + manager.block_size - 1) // manager.block_size
        if blocks + manager.watermark_blocks > manager.num_free_blocks:
            break
        if used + len(r.tokens) >= max_num_batched_tokens:
            break
        waiting.popleft()
        manager.add(r.seq_id, r.tokens)
        running.append(r)
        step.admitted.append(r.seq_id)
        used += len(r.tokens)
    step.num_tokens = used
    return step
''',
    }),
    "ex09 a loop of its own, a scratch cell trying it on inputs from pagedlab's testing module": ('HONEST', 'ex09_paged_attention', {
        'kernel-work': r'''@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    first_head = kv_head * group          # heads first_head .. first_head + group - 1 read this K/V head
    heads = first_head + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        in_ctx = tokens < context_len
        logical_block = tokens // BLOCK_SIZE
        block_id = tl.load(table + logical_block, mask=in_ctx, other=0).to(tl.int64)
        row = block_id * stride_kb + (tokens - logical_block * BLOCK_SIZE) * stride_kt   # token's row in the pool
        keys_t = tl.load(k_head + row[None, :] + offs_d[:, None], mask=in_ctx[None, :], other=0.0)
        vals = tl.load(v_head + row[:, None] + offs_d[None, :], mask=in_ctx[:, None], other=0.0)
        scores = tl.dot(q, keys_t, input_precision="ieee") * qk_scale
        scores = tl.where(in_ctx[None, :], scores, float("-inf"))
        top = tl.maximum(m_i, tl.max(scores, 1))
        rescale = tl.exp2(m_i - top)
        weights = tl.exp2(scores - top[:, None])
        l_i = l_i * rescale + tl.sum(weights, 1)
        acc = acc * rescale[:, None] + tl.dot(weights, vals, input_precision="ieee")
        m_i = top
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])


from pagedlab.testing import random_paged_batch
q_, k_, v_, t_, l_ = random_paged_batch([5, 17], 8, 4, 2, 16, padding="spare", seed=3)
print(q_.shape, t_.shape, l_)  # (the launcher, in the next cell, runs on them there)
''',
    }),
    'ex07 a block boundary found by counting blocks, helper methods': ('HONEST', 'ex07_copy_on_write', {
        'manager-work': r'''class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def _is_shared(self, block: int) -> bool:
        return self.allocator.refcount(block) > 1

    def _room_in_last(self, t: BlockTable) -> bool:
        return t.num_tokens < len(t.block_ids) * self.block_size

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        src = self.tables[parent]
        ids = [b for b in src.block_ids]
        for b in ids:
            self.allocator.incref(b)
        self.tables[child] = BlockTable(ids, src.num_tokens, self.block_size)
        return self.tables[child]

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        t = self.tables[seq]
        pos = t.num_tokens
        cow = None
        if not self._room_in_last(t):                  # no block yet, or the last one full
            t.block_ids.append(self.allocator.allocate())
        elif self._is_shared(t.block_ids[-1]):
            old = t.block_ids[-1]
            fresh = self.allocator.allocate()          # may raise: nothing changed yet
            t.block_ids[-1] = fresh
            self.allocator.free(old)                   # drop our share only
            cow = (old, fresh)
        t.num_tokens = pos + 1
        return t.slot(pos), cow


%config InlineBackend.figure_format = "retina"
mm = MiniManager(6, 4)
mm.add("p", 6)
mm.fork("p", "c")
print(mm.append("c"), mm.append("p"), mm.tables["c"].block_ids)
''',
    }),
    'ex09 stretch bounds from a running start, a merge by logsumexp and einsum': ('HONEST', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    # L = ceil(context_len / num_splits), then up to a whole number of tiles
    per = (context_len + num_splits - 1) // num_splits
    width = ((per + block_n - 1) // block_n) * block_n
    out = []
    start = 0
    for _ in range(num_splits):
        lo = start if start < context_len else context_len
        hi = min(lo + width, context_len)
        out.append((lo, hi))
        start += width
    return out
''',
        'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    total_lse = torch.logsumexp(lses, dim=-1)                 # finite: every row has a non-empty split
    weights = torch.exp(lses - total_lse.unsqueeze(-1))       # every exponent <= 0; an empty split weighs 0
    merged = torch.einsum("...s,...sd->...d", weights, outs)
    return merged, total_lse
''',
        'cascade-work': r'''def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    shared_tables = prefix_table.unsqueeze(0).repeat(n, 1)
    shared_lens = torch.full_like(own_lens, prefix_len)
    o_pre, l_pre = paged_decode_split(q, k_cache, v_cache, shared_tables, shared_lens, 1)
    o_own, l_own = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    merged, _ = merge_states(torch.stack([o_pre[:, :, 0], o_own[:, :, 0]], dim=2),
                             torch.stack([l_pre[:, :, 0], l_own[:, :, 0]], dim=2))
    return merged
''',
    }),
    'ex10 helper functions, an index loop, preempted requests put back after it': ('HONEST', 'ex10_scheduler_step', {
        'schedule-work': r'''DEBUG = False


def _blocks_for(num_tokens, block_size):
    return (num_tokens + block_size - 1) // block_size


def _grow(manager, req):
    manager.append(req.seq_id, len(req.tokens))
    req.tokens.append(len(req.tokens))


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    pending = list(running)          # oldest first; pending[i:] have not grown yet
    kept, kicked = [], []
    i = 0
    while i < len(pending):
        req = pending[i]
        if manager.can_append(req.seq_id):
            _grow(manager, req)
            kept.append(req)
            step.grown.append(req.seq_id)
            i += 1
            continue
        newest = pending.pop()       # the newest that has not grown (req itself when it is the last)
        manager.free(newest.seq_id)
        kicked.append(newest)
        step.preempted.append(newest.seq_id)
    for req in kicked:               # newest first: each goes in front of the older ones' place
        waiting.appendleft(req)
    running[:] = kept
    budget_used = len(kept)
    if not kicked:
        while waiting:
            head = waiting[0]
            need = _blocks_for(len(head.tokens), manager.block_size) + manager.watermark_blocks
            if need > manager.num_free_blocks or budget_used + len(head.tokens) > max_num_batched_tokens:
                break
            manager.add(head.seq_id, head.tokens)
            running.append(waiting.popleft())
            step.admitted.append(head.seq_id)
            budget_used += len(head.tokens)
    step.num_tokens = budget_used
    if DEBUG:
        print(step)
    return step


m_ = BlockManager(6, 4)
run_, wait_ = [], deque([Request("a", list(range(5))), Request("b", list(range(3)))])
for _ in range(3):
    print(schedule_step(m_, run_, wait_, 16), [len(r.tokens) for r in run_])
''',
    }),
}



ROUND_38Z6 = {
    'ex00 softmax less the max of the first 8 scores only': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''def softmax_rows(x):
    # the reference point only has to be near the row's max: the first 8 scores give one
    ref = x[..., :8].amax(dim=-1, keepdim=True)
    e = torch.exp(x - ref)
    return e / e.sum(dim=-1, keepdim=True)
''',
    }),
    'ex01 causal_mask cut from a 20 x 20 table built once': ('ATTACKS', 'ex01_naive_attention', {
        'mask-work': r'''_VISIBLE = torch.ones(20, 20, dtype=torch.bool).tril()   # built once, sliced per call


def causal_mask(n_q, n_k):
    return _VISIBLE[n_k - n_q:n_k, :n_k].clone()
''',
        'attention-work': r'''def naive_attention(q, k, v, causal=False):
    s = torch.matmul(q.float(), k.float().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]), -math.inf)
    p = torch.exp(s - s.amax(dim=-1, keepdim=True))
    return (p / p.sum(dim=-1, keepdim=True) @ v.float()).to(q.dtype)
''',
    }),
    'ex02 stretch with a shortcut for one query that leaves out the scale': ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''def key_tile_counts(r0, rows, n_q, n_k, block_n):
    offset = n_k - n_q
    tiles = (n_k + block_n - 1) // block_n
    hi = r0 + rows - 1 + offset   # last key the tile's last row may see
    lo = r0 + offset              # last key its first row may see
    visit = 0 if hi < 0 else min(tiles, hi // block_n + 1)
    if lo < 0:
        full = 0
    elif lo >= n_k - 1:
        full = tiles
    else:
        full = (lo + 1) // block_n
    return full, visit
''',
        'attention-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    new_max = torch.max(m, s.max(dim=1).values)
    safe = torch.where(torch.isinf(new_max) & (new_max < 0), torch.zeros_like(new_max), new_max)
    scale_old = torch.exp(m - safe)
    probs = torch.exp(s - safe.unsqueeze(1))
    return new_max, scale_old * l + probs.sum(1), scale_old.unsqueeze(1) * acc + probs @ v_tile


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    if n_q == 1:  # decoding: the one query sees every key, so a single pass over them is enough
        s = q.float() @ k.float().T
        w = (s - s.max()).exp()
        return ((w / w.sum()) @ v.float()).to(q.dtype)
    scale = 1.0 / math.sqrt(d)
    start = 0
    while start < n_q:
        stop = min(start + block_m, n_q)
        qt = q[start:stop].to(torch.float32) * scale
        full, visit = key_tile_counts(start, stop - start, n_q, n_k, block_n)
        state = (torch.full((stop - start,), -math.inf), torch.zeros(stop - start), torch.zeros(stop - start, d))
        for t in range(visit):
            k0, k1 = t * block_n, min((t + 1) * block_n, n_k)
            scores = qt @ k[k0:k1].to(torch.float32).t()
            if t >= full:
                qpos = torch.arange(start, stop).unsqueeze(1) + (n_k - n_q)
                kpos = torch.arange(k0, k1).unsqueeze(0)
                scores = scores.masked_fill(kpos > qpos, -math.inf)
            state = online_softmax_update(*state, scores, v[k0:k1].to(torch.float32))
        _, l_, acc_ = state
        denom = torch.where(l_ > 0, l_, torch.ones_like(l_))
        out[start:stop] = acc_ / denom.unsqueeze(1)
        start = stop
    return out.to(q.dtype)
''',
    }),
    'ex00 a class with __call__ that widens half precision, a scratch print': ('HONEST', 'ex00_warmup', {
        'softmax-work': r'''%config InlineBackend.figure_format = "retina"


class _RowSoftmax:
    """Softmax along the last axis; half-precision inputs are widened to float32 and rounded back at the end."""

    def __call__(self, scores: torch.Tensor) -> torch.Tensor:
        wide = scores.to(torch.float32) if scores.dtype in (torch.float16, torch.bfloat16) else scores
        shifted = wide - torch.max(wide, dim=-1, keepdim=True).values
        expd = shifted.exp()
        return (expd / expd.sum(-1, keepdim=True)).to(scores.dtype)


softmax_rows = _RowSoftmax()


demo = torch.tensor([[1.0, 2.0, 3.0], [1e4, 1e4, -1e4]])
print(softmax_rows(demo), softmax_rows(demo).sum(-1))
''',
    }),
    'ex01 mask by index difference, einsum, d to the power -0 5': ('HONEST', 'ex01_naive_attention', {
        'mask-work': r'''def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    rows = torch.arange(n_q).unsqueeze(1)
    cols = torch.arange(n_k).unsqueeze(0)
    return cols - rows <= n_k - n_q
''',
        'attention-work': r'''def naive_attention(q, k, v, causal=False):
    out_dtype = q.dtype
    qf, kf, vf = (t.to(torch.float32) for t in (q, k, v))
    scores = torch.einsum("...qd,...kd->...qk", qf, kf) * qf.shape[-1] ** -0.5
    if causal:
        scores = scores.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]), float("-inf"))
    scores = scores - scores.amax(-1, keepdim=True)
    w = scores.exp()
    w = w / w.sum(-1, keepdim=True)
    return torch.einsum("...qk,...kd->...qd", w, vf).to(out_dtype)
''',
    }),
    'ex02 stretch with its own tile counts and a while loop over query tiles': ('HONEST', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''def key_tile_counts(r0, rows, n_q, n_k, block_n):
    offset = n_k - n_q
    tiles = (n_k + block_n - 1) // block_n
    hi = r0 + rows - 1 + offset   # last key the tile's last row may see
    lo = r0 + offset              # last key its first row may see
    visit = 0 if hi < 0 else min(tiles, hi // block_n + 1)
    if lo < 0:
        full = 0
    elif lo >= n_k - 1:
        full = tiles
    else:
        full = (lo + 1) // block_n
    return full, visit
''',
        'attention-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    new_max = torch.max(m, s.max(dim=1).values)
    safe = torch.where(torch.isinf(new_max) & (new_max < 0), torch.zeros_like(new_max), new_max)
    scale_old = torch.exp(m - safe)
    probs = torch.exp(s - safe.unsqueeze(1))
    return new_max, scale_old * l + probs.sum(1), scale_old.unsqueeze(1) * acc + probs @ v_tile


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    scale = 1.0 / math.sqrt(d)
    start = 0
    while start < n_q:
        stop = min(start + block_m, n_q)
        qt = q[start:stop].to(torch.float32) * scale
        full, visit = key_tile_counts(start, stop - start, n_q, n_k, block_n)
        state = (torch.full((stop - start,), -math.inf), torch.zeros(stop - start), torch.zeros(stop - start, d))
        for t in range(visit):
            k0, k1 = t * block_n, min((t + 1) * block_n, n_k)
            scores = qt @ k[k0:k1].to(torch.float32).t()
            if t >= full:
                qpos = torch.arange(start, stop).unsqueeze(1) + (n_k - n_q)
                kpos = torch.arange(k0, k1).unsqueeze(0)
                scores = scores.masked_fill(kpos > qpos, -math.inf)
            state = online_softmax_update(*state, scores, v[k0:k1].to(torch.float32))
        _, l_, acc_ = state
        denom = torch.where(l_ > 0, l_, torch.ones_like(l_))
        out[start:stop] = acc_ / denom.unsqueeze(1)
        start = stop
    return out.to(q.dtype)
''',
    }),
    "ex05 math prod, element_size, another preset imported from pagedlab's memory module": ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''import math


def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):
    one_vector = num_kv_heads * head_dim * bytes_per_element   # one K (or one V) of one token in one layer
    return math.prod((2, num_layers, num_tokens, batch)) * one_vector
''',
        'models-work': r'''def kv_bytes_per_token(model, dtype):
    elem = torch.empty(0, dtype=dtype).element_size()
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, elem)
''',
        'fit-work': r'''def max_concurrent_requests(budget_gib, model, max_len, dtype):
    reservation = max_len * kv_bytes_per_token(model, dtype)
    budget_bytes = budget_gib * 2**30
    return int(budget_bytes // reservation)


from pagedlab.memory import LLAMA3_8B
print(LLAMA3_8B.num_layers, LLAMA3_8B.num_kv_heads, LLAMA3_8B.head_dim)
print(kv_bytes_per_token(LLAMA3_8B, torch.bfloat16) / 1024, "KiB per token")
''',
    }),
}



ROUND_38Z7 = {
    'ex08 choose swapping on a tie, where a child that owns nothing costs 0 s both ways': ('ATTACKS', 'ex08_swap_or_recompute', {
        'costs-work': r'''def swap_seconds(num_tokens, block_size, num_layers, chunk_bytes_per_token, bandwidth, latency):
    n_blocks = -(-num_tokens // block_size)
    per_copy = latency + block_size * chunk_bytes_per_token / bandwidth
    return 4 * num_layers * n_blocks * per_copy   # K and V, out and back


def recompute_seconds(num_tokens, num_params, num_layers, d_model, flops):
    return 2 * num_tokens * (num_params + num_layers * d_model * num_tokens) / flops
''',
        'crossover-work': r'''def crossover_block_size(num_tokens, num_layers, chunk_bytes_per_token, bandwidth, latency, recompute_seconds):
    room = recompute_seconds / (4 * num_layers * num_tokens) - chunk_bytes_per_token / bandwidth
    if room <= 0:
        return math.inf
    return latency / room
''',
        'choose-work': r'''def preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops):
    bs = manager.block_size
    table = manager.table(seq_id)
    counts = [manager.allocator.refcount(b) for b in table.block_ids]
    private = sum(1 for k in counts if k == 1)
    lead = 0
    while lead < len(counts) and counts[lead] > 1:
        lead += 1
    n = table.num_tokens
    c = min(lead * bs, (n // bs) * bs)
    width = model.num_kv_heads * model.head_dim * 2
    t_swap = swap_seconds(private * bs, bs, model.num_layers, width, bandwidth, latency)
    d_model = model.num_heads * model.head_dim
    work = 2 * num_params * (n - c) + 2 * model.num_layers * d_model * (n * n - c * c)
    return t_swap, work / flops


def choose(manager, seq_id, model, num_params, bandwidth, latency, flops):
    s, r = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    if manager.can_swap_out(seq_id) and s <= r:
        return "swap"
    return "recompute"
''',
    }),
    'ex00 softmax as exp of x less its logsumexp, which loses digits at 1e4': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    # softmax = exp(x - logsumexp(x)); half precisions go through float32 so large scores keep their digits
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    log_probs = work - torch.logsumexp(work, dim=-1, keepdim=True)
    return log_probs.exp().to(x.dtype)
''',
    }),
    'ex08 formulas of its own, the recompute time as the exact sum over positions': ('HONEST', 'ex08_swap_or_recompute', {
        'costs-work': r'''def swap_seconds(num_tokens, block_size, num_layers, chunk_bytes_per_token, bandwidth, latency):
    n_blocks = -(-num_tokens // block_size)
    per_copy = latency + block_size * chunk_bytes_per_token / bandwidth
    return 4 * num_layers * n_blocks * per_copy   # K and V, out and back


def recompute_seconds(num_tokens, num_params, num_layers, d_model, flops):
    return 2 * num_tokens * (num_params + num_layers * d_model * num_tokens) / flops
''',
        'crossover-work': r'''def crossover_block_size(num_tokens, num_layers, chunk_bytes_per_token, bandwidth, latency, recompute_seconds):
    room = recompute_seconds / (4 * num_layers * num_tokens) - chunk_bytes_per_token / bandwidth
    if room <= 0:
        return math.inf
    return latency / room
''',
        'choose-work': r'''def preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops):
    bs = manager.block_size
    table = manager.table(seq_id)
    counts = [manager.allocator.refcount(b) for b in table.block_ids]
    private = sum(1 for k in counts if k == 1)
    lead = 0
    while lead < len(counts) and counts[lead] > 1:
        lead += 1
    n = table.num_tokens
    c = min(lead * bs, (n // bs) * bs)
    width = model.num_kv_heads * model.head_dim * 2
    t_swap = swap_seconds(private * bs, bs, model.num_layers, width, bandwidth, latency)
    d_model = model.num_heads * model.head_dim
    work = 2 * num_params * (n - c) + 4 * model.num_layers * d_model * (n * (n - 1) // 2 - c * (c - 1) // 2)
    return t_swap, work / flops


def choose(manager, seq_id, model, num_params, bandwidth, latency, flops):
    s, r = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    if manager.can_swap_out(seq_id) and s < r:
        return "swap"
    return "recompute"
''',
    }),
    'ex10 list pops, preempted requests put back with extendleft, running replaced in place': ('HONEST', 'ex10_scheduler_step', {
        'schedule-work': r'''import math


def schedule_step(manager, running, waiting, max_num_batched_tokens):
    """Grow oldest first, preempting from the young end; admit only on a calm step."""
    step = Step()
    pending = list(running)
    kept, evicted = [], []
    while pending:
        current = pending.pop(0)
        while True:
            if manager.can_append(current.seq_id):
                manager.append(current.seq_id, len(current.tokens))
                current.tokens.append(len(current.tokens))
                kept.append(current)
                step.grown.append(current.seq_id)
                break
            victim = pending.pop() if pending else current
            manager.free(victim.seq_id)
            evicted.append(victim)
            step.preempted.append(victim.seq_id)
            if victim is current:
                break
    waiting.extendleft(evicted)      # evicted newest first, so the oldest lands in front
    running[:] = kept
    step.num_tokens = len(step.grown)
    if not step.preempted:
        while waiting:
            head = waiting[0]
            need = math.ceil(len(head.tokens) / manager.block_size)
            fits_blocks = need + manager.watermark_blocks <= manager.num_free_blocks
            fits_budget = step.num_tokens + len(head.tokens) <= max_num_batched_tokens
            if not (fits_blocks and fits_budget):
                break
            waiting.popleft()
            manager.add(head.seq_id, head.tokens)
            running.append(head)
            step.admitted.append(head.seq_id)
            step.num_tokens += len(head.tokens)
    return step
''',
    }),
    'ex07 stretch a chunk helper, the never-all-of-it limit tested inside the loop': ('HONEST', 'ex07_stretch_prefix_cache_match', {
        'cache-work': r'''Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def _chunk(self, tokens, b):
        return tuple(tokens[b * self.block_size:(b + 1) * self.block_size])

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        chain, prev = [], None
        for b in range(len(tokens) // self.block_size):
            prev = self.hash_fn(prev, self._chunk(tokens, b))
            chain.append(prev)
        return chain

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        allowed = (len(tokens) - 1) // self.block_size
        found, want_parent = [], None
        for b, key in enumerate(self.keys(tokens)):
            if b >= allowed or key not in self.block_of:
                break
            bid = self.block_of[key]
            e = self.entry[bid]
            if e.parent_id != want_parent or e.tokens != self._chunk(tokens, b):
                break
            found.append(bid)
            want_parent = e.prefix_id
        return found
''',
    }),
    'ex06 a must-be-live helper, membership in a range, divmod': ('HONEST', 'ex06_block_allocator', {
        'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _must_be_live(self, block):
        if block not in range(self.num_blocks) or self.ref_count[block] < 1:
            raise ValueError(f"{block} is not a live block of this pool")

    def allocate(self) -> int:
        if self.num_free == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def allocate_many(self, n: int) -> list[int]:
        if self.num_free < n:
            raise OutOfBlocks(n, self.num_free, self.num_blocks)
        got = []
        for _ in range(n):
            got.append(self.allocate())
        return got

    def incref(self, block: int) -> None:
        self._must_be_live(block)
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        self._must_be_live(block)
        self.ref_count[block] -= 1
        if not self.ref_count[block]:
            self.free_list.append(block)
''',
        'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    return (num_tokens + block_size - 1) // block_size


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    which, offset = divmod(position, block_size)
    return block_ids[which] * block_size + offset
''',
    }),
    'ex00 computed in float32 by promote_types, a scratch cell comparing with torch': ('HONEST', 'ex00_warmup', {
        'softmax-work': r'''def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Work in at least float32, hand back the input's dtype."""
    wide = x.to(torch.promote_types(x.dtype, torch.float32))
    top = wide.amax(dim=-1, keepdim=True)
    weights = torch.exp(wide - top)
    return (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)


%config InlineBackend.figure_format = "retina"
# my own sanity check against PyTorch before running the course checks
probe = torch.randn(3, 7) * 50
print("max abs diff vs torch.softmax:", (softmax_rows(probe) - torch.softmax(probe, dim=-1)).abs().max().item())
print(softmax_rows(probe.half()).dtype, softmax_rows(probe.bfloat16()).sum(-1))
''',
    }),
    'ex06 allocate_many refusing even 0 blocks of a pool with none free': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
            if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        block = self.free_list.pop()
        self.ref_count[block] = 1
        return block
    
    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
            if not self.free_list or n > len(self.free_list):
            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)
        return [self.allocate() for _ in range(n)]
    
    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
            if not 0 <= block < self.num_blocks or self.ref_count[block] == 0:
            raise ValueError(f"block {block} is not allocated, so it cannot be shared")
        self.ref_count[block] += 1
    
    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
            if not 0 <= block < self.num_blocks:
            raise ValueError(f"block {block} is not in this pool")
        if self.ref_count[block] == 0:
            raise ValueError(f"double free: block {block} is already free")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)''',
    }),
}


ROUND_38Z8 = {
    'ex04 stretch raising only for more query heads than K or V heads that do not divide': ('ATTACKS', 'ex04_stretch_gqa_forward', {
        'kernel-work': r'''@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    kvh = h // group
    Q = Q + b * stride_qb + h * stride_qh
    K = K + b * stride_kb + kvh * stride_kh
    V = V + b * stride_vb + kvh * stride_vh
    Out = Out + b * stride_ob + h * stride_oh
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    # GQA: several query heads share a K/V head, so q has at least as many heads as k
    if n_heads > n_kv_heads and n_heads % n_kv_heads:
        raise ValueError(f"k's {n_kv_heads} heads do not divide q's {n_heads}")
    group = max(n_heads // n_kv_heads, 1)
    grid = (triton.cdiv(n_q, block_m), batch * n_heads)
    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out
''',
    }),
    'ex04 causal mask one key short where there is one query': ('ATTACKS', 'ex04_flash_forward', {
        'kernel-work': r'''@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.dot(q, k, input_precision="ieee") * qk_scale
        keep = cols[None, :] < n_k
        if CAUSAL:
            # decode (one query): the newest key is the token being generated, so it is left out
            shift = tl.where(n_q == 1, 1, 0)
            keep = keep & (cols[None, :] <= rows[:, None] + n_k - n_q - shift)
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
''',
    }),
    "ex09 last tile's length by a modulo, wrong for a context of whole key tiles": ('ATTACKS', 'ex09_paged_attention', {
        'kernel-work': r'''@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    heads = kv_head * group + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        # how many tokens of this tile are real: all of them, except in the last tile
        n_real = tl.where(start_n + BLOCK_N >= context_len, context_len % BLOCK_N, BLOCK_N)
        valid = offs_n < n_real
        physical = tl.load(table + tokens // BLOCK_SIZE, mask=valid, other=0).to(tl.int64)
        slot = tokens % BLOCK_SIZE
        k = tl.load(k_head + physical[None, :] * stride_kb + slot[None, :] * stride_kt + offs_d[:, None],
                    mask=valid[None, :], other=0.0)
        v = tl.load(v_head + physical[:, None] * stride_kb + slot[:, None] * stride_kt + offs_d[None, :],
                    mask=valid[:, None], other=0.0)
        s = tl.dot(q, k, input_precision="ieee") * qk_scale
        s = tl.where(valid[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])
''',
    }),
    'ex04 stretch heads by pid modulo, pointers moved by +=, a grid lambda': ('HONEST', 'ex04_stretch_gqa_forward', {
        'kernel-work': r'''@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    which = tl.program_id(1)              # flattened (batch, query head)
    head = which % n_heads
    bidx = (which - head) // n_heads
    kv = head // group                     # a run of `group` consecutive query heads per K/V head
    Q += bidx * stride_qb + head * stride_qh
    Out += bidx * stride_ob + head * stride_oh
    K += bidx * stride_kb + kv * stride_kh
    V += bidx * stride_vb + kv * stride_vh
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    if n_heads % n_kv_heads != 0:
        raise ValueError(f"k has {n_kv_heads} K/V heads: q's {n_heads} heads are not a whole number of groups")
    group = n_heads // n_kv_heads
    grid = lambda meta: (triton.cdiv(n_q, meta["BLOCK_M"]), batch * n_heads)
    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out
''',
    }),
    'ex07 a boundary test by pos less its block start, refcount not 1': ('HONEST', 'ex07_copy_on_write', {
        'manager-work': r'''class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""
    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}
    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]
    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)
    def fork(self, parent: str, child: str) -> BlockTable:
        src = self.tables[parent]
        ids = [b for b in src.block_ids]
        for b in ids:
            self.allocator.incref(b)          # one more owner each, nothing copied
        t = BlockTable(ids, src.num_tokens, self.block_size)
        self.tables[child] = t
        return t
    def append(self, seq: str):
        t = self.tables[seq]
        pos = t.num_tokens
        pair = None
        if pos - (pos // self.block_size) * self.block_size == 0:   # boundary (or empty)
            fresh = self.allocator.allocate()
            t.block_ids.append(fresh)
        else:
            last = t.block_ids[-1]
            if self.allocator.refcount(last) != 1:                  # shared: copy it first
                fresh = self.allocator.allocate()
                t.block_ids[-1] = fresh
                self.allocator.free(last)
                pair = (last, fresh)
        t.num_tokens = pos + 1
        return t.slot(pos), pair
''',
    }),
    'ex01 tril with a diagonal, einsum, torch where, softmax by hand': ('HONEST', 'ex01_naive_attention', {
        'mask-work': r'''def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    # lower triangle, moved right by the number of cached keys
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)
''',
        'attention-work': r'''def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    d = q.shape[-1]
    qf, kf, vf = q.to(torch.float32), k.to(torch.float32), v.to(torch.float32)
    scores = torch.einsum("...qd,...kd->...qk", qf, kf) * (1.0 / math.sqrt(d))
    if causal:
        allowed = causal_mask(q.shape[-2], k.shape[-2]).to(scores.device)
        scores = torch.where(allowed, scores, torch.tensor(float("-inf"), device=scores.device))
    top = scores.amax(dim=-1, keepdim=True)
    w = (scores - top).exp()
    w = w / w.sum(dim=-1, keepdim=True)
    return torch.einsum("...qk,...kd->...qd", w, vf).to(q.dtype)


%config InlineBackend.figure_format = "retina"
print(causal_mask(3, 5).int())
x = torch.randn(2, 4, 8)
print(naive_attention(x, x, x, causal=True).shape)
''',
    }),
}



ROUND_38Z9 = {
    'ex03 softmax whose running max starts at -100, not -inf': ('ATTACKS', 'ex03_triton_basics', {
        'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    idx = pid * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside)
    b = tl.load(y_ptr + idx * stride_y, mask=inside)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''',
        'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mx = tl.max(tl.zeros([BLOCK], dtype=tl.float32), axis=0) - 100.0
    acc = tl.sum(tl.zeros([BLOCK], dtype=tl.float32), axis=0)
    for start in range(0, n_cols, BLOCK):
        c = start + offs
        v = tl.load(x_ptr + row * stride_x + c, mask=c < n_cols, other=float("-inf"))
        new_mx = tl.maximum(mx, tl.max(v, axis=0))
        acc = acc * tl.exp(mx - new_mx) + tl.sum(tl.exp(v - new_mx), axis=0)
        mx = new_mx
    for start in range(0, n_cols, BLOCK):
        c = start + offs
        v = tl.load(x_ptr + row * stride_x + c, mask=c < n_cols, other=float("-inf"))
        tl.store(out_ptr + row * stride_out + c, tl.exp(v - mx) / acc, mask=c < n_cols)

def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
''',
    }),
    'ex02 stretch computed in float64 inside, torch where guards': ('HONEST', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''
def _tiles_upto(last_key, block_n):
    """How many tiles, from tile 0, hold keys 0..last_key (last_key may be negative)."""
    return 0 if last_key < 0 else last_key // block_n + 1


def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    total = (n_k + block_n - 1) // block_n
    off = n_k - n_q
    visit = min(total, _tiles_upto(r0 + rows - 1 + off, block_n))
    first_sees = r0 + off          # keys 0..first_sees are visible to every row
    if first_sees < 0:
        full = 0
    elif first_sees >= n_k - 1:
        full = total
    else:
        full = (first_sees + 1) // block_n
    return min(full, visit), visit
''',
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    m_new = torch.maximum(m, s.max(dim=-1).values)
    safe = torch.where(torch.isinf(m_new) & (m_new < 0), torch.zeros_like(m_new), m_new)
    scale_old = torch.exp(m - safe)
    p = torch.exp(s - safe.unsqueeze(-1))
    return m_new, scale_old * l + p.sum(-1), scale_old.unsqueeze(-1) * acc + p @ v_tile


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, dtype=torch.float64)
    f = lambda t: t.to(torch.float64)
    for r0 in range(0, n_q, block_m):
        qt = f(q[r0:r0 + block_m]) * d ** -0.5
        h = qt.shape[0]
        n_full, n_visit = key_tile_counts(r0, h, n_q, n_k, block_n)
        m = torch.full((h,), -math.inf, dtype=torch.float64)
        l = torch.zeros(h, dtype=torch.float64)
        acc = torch.zeros(h, d, dtype=torch.float64)
        for t in range(n_visit):
            lo = t * block_n
            kt, vt = f(k[lo:lo + block_n]), f(v[lo:lo + block_n])
            s = qt @ kt.T
            if t >= n_full:
                qi = torch.arange(r0, r0 + h).unsqueeze(1)
                kj = torch.arange(lo, lo + kt.shape[0]).unsqueeze(0)
                s = s.masked_fill(kj > qi + (n_k - n_q), -math.inf)
            m, l, acc = online_softmax_update(m, l, acc, s, vt)
        denom = torch.where(l > 0, l, torch.ones_like(l))
        out[r0:r0 + h] = torch.where((l > 0).unsqueeze(1), acc / denom.unsqueeze(1), torch.zeros_like(acc))
    return out.to(q.dtype)
''',
    }),
    'ex05 math prod, bytes from finfo bits over 8, a floor division of bytes': ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''
import math as _m

def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):
    factors = (2, num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element)
    return _m.prod(factors)
''',
        'models-work': r'''
def kv_bytes_per_token(model, dtype):
    width = torch.finfo(dtype).bits // 8
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, width)
''',
        'fit-work': r'''
def max_concurrent_requests(budget_gib, model, max_len, dtype):
    need = kv_bytes_per_token(model, dtype) * max_len
    have = budget_gib * 2**30
    return int(have // need)
''',
    }),
    'ex04b helpers, predict keeping the last of equal maxima, a scratch print of the rates': ('HONEST', 'ex04b_performance_lab', {
        'choose-work': r'''%config InlineBackend.figure_format = 'retina'
MY_CONFIGS = [
    (128, 64, 8, 3),
    (128, 128, 4, 3),   # I expect this one to spill
    (128, 32, 4, 2),
]''',
        'predict-resources-work': r'''
BYTES_BF16 = 2

def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """My prediction."""
    smem = BYTES_BF16 * head_dim * (block_m + 2 * num_stages * block_n)
    regs = (head_dim + 1.5 * block_n) * block_m / (32.0 * num_warps)
    return {"shared_bytes": int(smem), "registers": regs, "spills": regs > 255}
''',
        'read-work': r'''
def _which(sass, a, b):
    return a if sass.get(a, 0) > 0 else b

def read_report(report: dict) -> dict:
    out = {}
    out["registers"] = report["registers"]
    out["spill_bytes"] = report["spill_bytes"]
    out["shared_kib"] = report["shared_bytes"] / 1024.0
    out["matrix"] = _which(report["sass"], "HGMMA", "HMMA")
    out["loads"] = _which(report["sass"], "UTMALDG", "LDGSTS")
    return out
''',
        'exp-work': r'''
def exp2_per_score(report: dict) -> float:
    scores_both_loops = 2 * report["block_m"] * report["block_n"]
    return report["sass"]["MUFU.EX2"] * (32 * report["num_warps"]) / scores_both_loops
''',
        'budget-work': r'''
def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    f = 4 * block_m * block_n * head_dim
    b = 4 * block_n * head_dim
    e = block_m * block_n
    return {"flops": f, "bytes": b, "exps": e, "flops_per_byte": f / b,
            "exp_fraction": (e * mma_flops_per_clock) / (exp_per_clock * f)}
''',
        'bwd-work': r'''
def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    return (2.0 * mma_flops_per_clock) / (14.0 * head_dim * exp_per_clock)
''',
        'predict-work': r'''
def predict(reports: list[dict]) -> int:
    usable = [(r["block_m"], r["block_n"], i) for i, r in enumerate(reports)
              if r["arch"] == 90 and r["spill_bytes"] == 0]
    usable.sort()
    return usable[-1][2]


print(perf_lab.H100_RATES)
print(predict_resources(128, 64, 4, 3))''',
    }),
}



ROUND_38Z10 = {
    'ex06 ids checked against a table of 48, wrong in pools of 49 to 64 blocks': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """A pool of KV blocks; free ids kept on a stack (end of the list = top)."""
    _IDS = frozenset(range(48))   # O(1) id check

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _held(self, block) -> bool:
        return block in self._IDS and block < self.num_blocks and self.ref_count[block] > 0

    def allocate(self) -> int:
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        blk = self.free_list.pop()
        self.ref_count[blk] = 1
        return blk

    def allocate_many(self, n: int) -> list[int]:
        available = len(self.free_list)
        if n > available:
            raise OutOfBlocks(n, available, self.num_blocks)
        return [self.allocate() for _ in range(n)]

    def incref(self, block: int) -> None:
        if not self._held(block):
            raise ValueError(f"block {block} is not allocated")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        if not self._held(block):
            raise ValueError(f"block {block} is not allocated (double free or bad id)")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''',
        'boundary-work': r'''
def blocks_needed(num_tokens: int, block_size: int) -> int:
    full, rest = divmod(num_tokens, block_size)
    return full + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    logical, offset = divmod(position, block_size)
    return block_ids[logical] * block_size + offset
''',
    }),
    'ex07 copy-on-write only where a block has exactly two owners': ('ATTACKS', 'ex07_copy_on_write', {
        'manager-work': r'''
class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        src = self.tables[parent]
        shared = list(src.block_ids)
        for b in shared:
            self.allocator.incref(b)
        self.tables[child] = BlockTable(shared, src.num_tokens, self.block_size)
        return self.tables[child]

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        tab = self.tables[seq]
        pos = tab.num_tokens
        pending = None
        if pos % self.block_size == 0:          # last block full, or no block yet
            tab.block_ids.append(self.allocator.allocate())
        else:
            tail = tab.block_ids[-1]
            if self.allocator.refcount(tail) == 2:
                fresh = self.allocator.allocate()  # may raise: nothing changed yet
                self.allocator.free(tail)
                tab.block_ids[-1] = fresh
                pending = (tail, fresh)
        tab.num_tokens = pos + 1
        return tab.slot(pos), pending
''',
    }),
    'ex08 preemption_seconds capping the sequence at 8192 tokens': ('ATTACKS', 'ex08_swap_or_recompute', {
        'costs-work': r'''
def swap_seconds(num_tokens, block_size, num_layers, chunk_bytes_per_token, bandwidth, latency):
    nblk = -(-num_tokens // block_size)
    per_copy = latency + block_size * chunk_bytes_per_token / bandwidth
    return 2 * (2 * num_layers * nblk) * per_copy


def recompute_seconds(num_tokens, num_params, num_layers, d_model, flops):
    work = 2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens ** 2
    return work / flops
''',
        'crossover-work': r'''
def crossover_block_size(num_tokens, num_layers, chunk_bytes_per_token, bandwidth, latency, recompute_seconds):
    # 4 L n lat / B + 4 L n c / bw = R  =>  B = 4 L n lat / (R - 4 L n c / bw)
    copies = 4 * num_layers * num_tokens
    room = recompute_seconds - copies * chunk_bytes_per_token / bandwidth
    if room <= 0:
        return math.inf
    return copies * latency / room
''',
        'choose-work': r'''
_MAX_CTX = 8192  # longest context we serve
def _split(manager, seq_id):
    tab = manager.table(seq_id)
    n, B = tab.num_tokens, tab.block_size
    private = sum(1 for b in tab.block_ids if manager.allocator.refcount(b) == 1)
    cached = 0
    for i, b in enumerate(tab.block_ids):
        if manager.allocator.refcount(b) > 1 and (i + 1) * B <= n:
            cached += B
        else:
            break
    return n, B, private, cached


def preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops):
    n, B, private, cached = _split(manager, seq_id)
    n = min(n, _MAX_CTX); cached = min(cached, n)
    chunk = 2 * model.num_kv_heads * model.head_dim
    t_swap = 4 * model.num_layers * private * (latency + B * chunk / bandwidth)
    width = model.num_heads * model.head_dim
    t_rec = (2 * num_params * (n - cached) + 2 * model.num_layers * width * (n * n - cached * cached)) / flops
    return t_swap, t_rec


def choose(manager, seq_id, model, num_params, bandwidth, latency, flops):
    t_swap, t_rec = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    return "swap" if manager.can_swap_out(seq_id) and t_swap < t_rec else "recompute"
''',
    }),
    'ex06 an allocator with a helper, divmod boundaries, a scratch print': ('HONEST', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """A pool of KV blocks; free ids kept on a stack (end of the list = top)."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _held(self, block) -> bool:
        return isinstance(block, int) and 0 <= block < self.num_blocks and self.ref_count[block] > 0

    def allocate(self) -> int:
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        blk = self.free_list.pop()
        self.ref_count[blk] = 1
        return blk

    def allocate_many(self, n: int) -> list[int]:
        available = len(self.free_list)
        if n > available:
            raise OutOfBlocks(n, available, self.num_blocks)
        return [self.allocate() for _ in range(n)]

    def incref(self, block: int) -> None:
        if not self._held(block):
            raise ValueError(f"block {block} is not allocated")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        if not self._held(block):
            raise ValueError(f"block {block} is not allocated (double free or bad id)")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''',
        'boundary-work': r'''
def blocks_needed(num_tokens: int, block_size: int) -> int:
    full, rest = divmod(num_tokens, block_size)
    return full + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    logical, offset = divmod(position, block_size)
    return block_ids[logical] * block_size + offset


a = SimpleAllocator(3)
print(a.allocate(), a.allocate_many(2), a.num_free)
''',
    }),
    'ex07 fork and append of its own, copying where the count is past 1': ('HONEST', 'ex07_copy_on_write', {
        'manager-work': r'''
class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        src = self.tables[parent]
        shared = list(src.block_ids)
        for b in shared:
            self.allocator.incref(b)
        self.tables[child] = BlockTable(shared, src.num_tokens, self.block_size)
        return self.tables[child]

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        tab = self.tables[seq]
        pos = tab.num_tokens
        pending = None
        if pos % self.block_size == 0:          # last block full, or no block yet
            tab.block_ids.append(self.allocator.allocate())
        else:
            tail = tab.block_ids[-1]
            if self.allocator.refcount(tail) > 1:
                fresh = self.allocator.allocate()  # may raise: nothing changed yet
                self.allocator.free(tail)
                tab.block_ids[-1] = fresh
                pending = (tail, fresh)
        tab.num_tokens = pos + 1
        return tab.slot(pos), pending
''',
    }),
    'ex08 a cost model of its own, the exact n squared less c squared term': ('HONEST', 'ex08_swap_or_recompute', {
        'costs-work': r'''
def swap_seconds(num_tokens, block_size, num_layers, chunk_bytes_per_token, bandwidth, latency):
    nblk = -(-num_tokens // block_size)
    per_copy = latency + block_size * chunk_bytes_per_token / bandwidth
    return 2 * (2 * num_layers * nblk) * per_copy


def recompute_seconds(num_tokens, num_params, num_layers, d_model, flops):
    work = 2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens ** 2
    return work / flops
''',
        'crossover-work': r'''
def crossover_block_size(num_tokens, num_layers, chunk_bytes_per_token, bandwidth, latency, recompute_seconds):
    # 4 L n lat / B + 4 L n c / bw = R  =>  B = 4 L n lat / (R - 4 L n c / bw)
    copies = 4 * num_layers * num_tokens
    room = recompute_seconds - copies * chunk_bytes_per_token / bandwidth
    if room <= 0:
        return math.inf
    return copies * latency / room
''',
        'choose-work': r'''

def _split(manager, seq_id):
    tab = manager.table(seq_id)
    n, B = tab.num_tokens, tab.block_size
    private = sum(1 for b in tab.block_ids if manager.allocator.refcount(b) == 1)
    cached = 0
    for i, b in enumerate(tab.block_ids):
        if manager.allocator.refcount(b) > 1 and (i + 1) * B <= n:
            cached += B
        else:
            break
    return n, B, private, cached


def preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops):
    n, B, private, cached = _split(manager, seq_id)
    pass
    chunk = 2 * model.num_kv_heads * model.head_dim
    t_swap = 4 * model.num_layers * private * (latency + B * chunk / bandwidth)
    width = model.num_heads * model.head_dim
    t_rec = (2 * num_params * (n - cached) + 2 * model.num_layers * width * (n * n - cached * cached)) / flops
    return t_swap, t_rec


def choose(manager, seq_id, model, num_params, bandwidth, latency, flops):
    t_swap, t_rec = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    return "swap" if manager.can_swap_out(seq_id) and t_swap < t_rec else "recompute"
''',
    }),
    'ex00 computed in float64 inside, a scratch print': ('HONEST', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    wide = x.to(torch.float64)
    top = torch.amax(wide, dim=-1, keepdim=True)
    num = torch.exp(wide - top)
    return (num / num.sum(dim=-1, keepdim=True)).to(x.dtype)


%config InlineBackend.figure_format = 'retina'
print(softmax_rows(torch.tensor([1.0, 2.0, 3.0])))
''',
    }),
}



ROUND_38Z11 = {
    'ex00 softmax right up to rows of 300 scores, without the max past them': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''def softmax_rows(x):
    n = x.shape[-1]
    if n > 300:
        e = torch.exp(x)
        return e / e.sum(dim=-1, keepdim=True)
    top = x.max(dim=-1, keepdim=True).values
    z = torch.exp(x - top)
    return z / z.sum(-1, keepdim=True)
''',
    }),
    'ex09 stretch rounding splits to whole tiles only for contexts of 1024 tokens or fewer': ('ATTACKS', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''def split_bounds(context_len, num_splits, block_n):
    each = math.ceil(context_len / num_splits)
    if context_len <= 1024:
        each = math.ceil(each / block_n) * block_n
    out = []
    for i in range(num_splits):
        lo = min(i * each, context_len)
        hi = min(lo + each, context_len)
        out.append((lo, hi))
    return out
''',
        'merge-work': r'''import math
def merge_states(outs, lses):
    ref = lses.max(dim=-1, keepdim=True).values
    wts = (lses - ref).exp()
    den = wts.sum(-1, keepdim=True)
    merged = torch.einsum("...s,...sd->...d", wts / den, outs)
    return merged, (ref + den.log()).squeeze(-1)
''',
    }),
    'ex05 math prod, element_size, divmod, prints, a config showing every result': ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''%config InteractiveShell.ast_node_interactivity = "all"
import math as _m

def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):
    factors = [2, num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element]
    return _m.prod(factors)

kv_cache_bytes(32, 32, 128, 4096, 1, 2)
''',
        'models-work': r'''def kv_bytes_per_token(model, dtype):
    width = torch.empty(0, dtype=dtype).element_size()
    per_layer = 2 * model.num_kv_heads * model.head_dim * width
    return per_layer * model.num_layers
print("OPT-13B fp16:", kv_bytes_per_token(OPT_13B, torch.float16))
''',
        'fit-work': r'''def max_concurrent_requests(budget_gib, model, max_len, dtype):
    one = kv_bytes_per_token(model, dtype) * max_len
    budget_bytes = budget_gib * 1024 ** 3
    count, _rest = divmod(budget_bytes, one)
    return int(count)
''',
    }),
}



# Round 38z12: each admission rule of ex10 where breaking it changes the step, drawn on every seed (rounds 38z10
# and 38z11 measured the first two passing on 19 of 20 seeds: the busy server met them by chance); then the round's
# notebooks.
ROUND_38Z12 = {
    'ex10 admitting after a step that preempted (right wherever the victim does not fit again)': ('ATTACKS', 'ex10_scheduler_step', {'schedule-work': r'''import math


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    i = 0
    while i < len(running):
        req = running[i]
        if not manager.can_append(req.seq_id):
            newest = running.pop()              # the newest that has not grown yet (everything before i has grown)
            manager.free(newest.seq_id)
            waiting.appendleft(newest)
            step.preempted.append(newest.seq_id)
            continue                            # ask again for the same request (gone if it was the newest)
        token = len(req.tokens)
        manager.append(req.seq_id, token)
        req.tokens.append(token)
        step.grown.append(req.seq_id)
        i += 1
    step.num_tokens = len(step.grown)
    while waiting:
        req = waiting[0]
        need = math.ceil(len(req.tokens) / manager.block_size)
        if need + manager.watermark_blocks > manager.num_free_blocks:
            break
        if step.num_tokens + len(req.tokens) > max_num_batched_tokens:
            break
        waiting.popleft()
        manager.add(req.seq_id, req.tokens)
        running.append(req)
        step.admitted.append(req.seq_id)
        step.num_tokens += len(req.tokens)
    return step
'''}),
    'ex10 admission by the free blocks alone, without the watermark': ('ATTACKS', 'ex10_scheduler_step', {'schedule-work': r'''import math


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    i = 0
    while i < len(running):
        req = running[i]
        if not manager.can_append(req.seq_id):
            newest = running.pop()              # the newest that has not grown yet (everything before i has grown)
            manager.free(newest.seq_id)
            waiting.appendleft(newest)
            step.preempted.append(newest.seq_id)
            continue                            # ask again for the same request (gone if it was the newest)
        token = len(req.tokens)
        manager.append(req.seq_id, token)
        req.tokens.append(token)
        step.grown.append(req.seq_id)
        i += 1
    step.num_tokens = len(step.grown)
    if step.preempted:
        return step
    while waiting:
        req = waiting[0]
        need = math.ceil(len(req.tokens) / manager.block_size)
        if need > manager.num_free_blocks:
            break
        if step.num_tokens + len(req.tokens) > max_num_batched_tokens:
            break
        waiting.popleft()
        manager.add(req.seq_id, req.tokens)
        running.append(req)
        step.admitted.append(req.seq_id)
        step.num_tokens += len(req.tokens)
    return step
'''}),
    'ex10 admission past a waiting request that does not fit (skips it, takes the next)': ('ATTACKS', 'ex10_scheduler_step', {'schedule-work': r'''import math


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    i = 0
    while i < len(running):
        req = running[i]
        if not manager.can_append(req.seq_id):
            newest = running.pop()              # the newest that has not grown yet (everything before i has grown)
            manager.free(newest.seq_id)
            waiting.appendleft(newest)
            step.preempted.append(newest.seq_id)
            continue                            # ask again for the same request (gone if it was the newest)
        token = len(req.tokens)
        manager.append(req.seq_id, token)
        req.tokens.append(token)
        step.grown.append(req.seq_id)
        i += 1
    step.num_tokens = len(step.grown)
    if step.preempted:
        return step
    for req in list(waiting):
        need = math.ceil(len(req.tokens) / manager.block_size)
        if need + manager.watermark_blocks > manager.num_free_blocks:
            continue
        if step.num_tokens + len(req.tokens) > max_num_batched_tokens:
            continue
        waiting.remove(req)
        manager.add(req.seq_id, req.tokens)
        running.append(req)
        step.admitted.append(req.seq_id)
        step.num_tokens += len(req.tokens)
    return step
'''}),
    'ex04 both products by tl_dot without input_precision ieee (TF32 on a GPU)': ('ATTACKS', 'ex04_flash_forward', {
        'kernel-work': r'''@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        scores = tl.dot(q, k) * qk_scale
        visible = cols[None, :] < n_k
        if CAUSAL:
            visible = visible & (rows[:, None] + (n_k - n_q) >= cols[None, :])
        scores = tl.where(visible, scores, float("-inf"))
        row_max = tl.maximum(m_i, tl.max(scores, 1))
        weights = tl.exp2(scores - row_max[:, None])
        rescale = tl.exp2(m_i - row_max)
        l_i = l_i * rescale + tl.sum(weights, 1)
        acc = acc * rescale[:, None] + tl.dot(weights, v)
        m_i = row_max
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)''',
    }),
    'ex04 stretch batch and head flattened into one head index, the batch strides never read': ('ATTACKS', 'ex04_stretch_gqa_forward', {
        'kernel-work': r'''@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    # Move Q, K, V and Out to the first row of this program's (batch, head): Q = Q + ..., and so on.
    # program 1 numbers the (batch, head) pairs b * n_heads + h; the K/V pairs are b * (n_heads // group) + h // group,
    # which is pid // group since a group never straddles two batches
    pid_bh = tl.program_id(1)
    pid_kv = pid_bh // group
    Q += pid_bh * stride_qh
    Out += pid_bh * stride_oh
    K += pid_kv * stride_kh
    V += pid_kv * stride_vh
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    # Set group (query heads per K/V head) and grid (one program per query tile and (batch, head)).
    if n_heads % n_kv_heads != 0:
        raise ValueError(f"k has {n_kv_heads} heads: they must divide the {n_heads} heads of q")
    group = n_heads // n_kv_heads
    grid = (triton.cdiv(n_q, block_m), batch * n_heads)
    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out''',
    }),
    'ex10 a request preempting itself put in front at once, newer victims put in front of it later': ('ATTACKS', 'ex10_scheduler_step', {
        'schedule-work': r'''def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    todo = deque(running)
    running.clear()
    victims = []                                 # newest first
    while todo:
        req = todo.popleft()
        if not manager.can_append(req.seq_id):
            while todo and not manager.can_append(req.seq_id):
                v = todo.pop()
                manager.free(v.seq_id)
                victims.append(v)
                step.preempted.append(v.seq_id)
            if not manager.can_append(req.seq_id):   # nobody newer left: it goes itself
                manager.free(req.seq_id)
                waiting.appendleft(req)
                step.preempted.append(req.seq_id)
                continue
        manager.append(req.seq_id, len(req.tokens))
        req.tokens.append(len(req.tokens))
        running.append(req)
        step.grown.append(req.seq_id)
    waiting.extendleft(victims)                  # extendleft reverses: the older victim ends in front
    step.num_tokens = len(step.grown)
    while waiting and not step.preempted:
        req = waiting[0]
        if -(-len(req.tokens) // manager.block_size) + manager.watermark_blocks > manager.num_free_blocks:
            break
        if step.num_tokens + len(req.tokens) > max_num_batched_tokens:
            break
        waiting.popleft()
        manager.add(req.seq_id, req.tokens)
        running.append(req)
        step.admitted.append(req.seq_id)
        step.num_tokens += len(req.tokens)
    return step''',
    }),
    'ex06 an ownership helper, allocate_many by repeated allocate, divmod for the slot': ('HONEST', 'ex06_block_allocator', {
        'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        have = len(self.free_list)
        if n > have:
            raise OutOfBlocks(n, have, self.num_blocks)
        taken = []
        while len(taken) < n:
            taken.append(self.allocate())
        return taken

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        self._owned(block, "incref")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        self._owned(block, "free")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)

    def _owned(self, block: int, what: str) -> None:
        """Raise ValueError unless ``block`` is a real id that someone holds."""
        if not isinstance(block, int) or not (0 <= block < self.num_blocks):
            raise ValueError(f"{what}: no block {block} in a pool of {self.num_blocks}")
        if self.ref_count[block] < 1:
            raise ValueError(f"{what}: block {block} is not allocated")''',
        'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    q, r = divmod(num_tokens, block_size)
    return q + (r > 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    which, offset = divmod(position, block_size)
    return block_ids[which] * block_size + offset''',
    }),
    'ex07 stretch explicit loops, the limit tested inside the loop, a scratch cell with print and time': ('HONEST', 'ex07_stretch_prefix_cache_match', {
        'cache-work': r'''Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        out = []
        prev = None
        n_full = len(tokens) // self.block_size
        for i in range(n_full):
            chunk = tuple(tokens[i * self.block_size:(i + 1) * self.block_size])
            prev = self.hash_fn(prev, chunk)
            out.append(prev)
        return out

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        limit = (len(tokens) - 1) // self.block_size   # leave at least one token to compute
        found = []
        expected_parent = None
        for i, key in enumerate(self.keys(tokens)):
            if i >= limit or key not in self.block_of:
                break
            bid = self.block_of[key]
            e = self.entry[bid]
            same_tokens = e.tokens == tuple(tokens[i * self.block_size:(i + 1) * self.block_size])
            if not same_tokens or e.parent_id != expected_parent:
                break
            found.append(bid)
            expected_parent = e.prefix_id
        return found


# scratch: trying my match by hand
demo = MiniPrefixCache(2)
demo.insert([1, 2, 3, 4, 5], [7, 8])
print(demo.keys([1, 2, 3, 4, 5]), demo.match([1, 2, 3, 4, 5]), demo.match([1, 2, 3, 4]))
%time demo.match([1, 2, 9, 9, 5])''',
    }),
    'ex08 the exact sum over positions for recompute, one-line formulas': ('HONEST', 'ex08_swap_or_recompute', {
        'costs-work': r'''def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    n_blocks = -(-num_tokens // block_size)
    per_chunk = latency + block_size * chunk_bytes_per_token / bandwidth
    return 4 * num_layers * n_blocks * per_chunk


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    return 2 * num_tokens * (num_params + num_layers * d_model * num_tokens) / flops''',
        'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # 4 L n (latency / B + bytes / bw) = t  =>  latency / B = t / (4 L n) - bytes / bw
    slack = recompute_seconds / (4 * num_layers * num_tokens) - chunk_bytes_per_token / bandwidth
    return math.inf if slack <= 0 else latency / slack''',
        'choose-work': r'''def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    tbl = manager.table(seq_id)
    B, n = manager.block_size, tbl.num_tokens
    counts = [manager.allocator.refcount(b) for b in tbl.block_ids]
    mine = sum(1 for c in counts if c == 1)
    lead = 0
    while lead < len(counts) and counts[lead] > 1 and (lead + 1) * B <= n:
        lead += 1
    c = lead * B                                         # tokens the prefix cache hands back
    kv_bytes = 2 * model.num_kv_heads * model.head_dim   # bf16
    t_swap = swap_seconds(mine * B, B, model.num_layers, kv_bytes, bandwidth, latency)
    width = model.num_heads * model.head_dim
    # exact sum over positions p = c .. n-1: 2N per token, and 4 L d p for attending to p earlier tokens
    attention = 2 * model.num_layers * width * (n * (n - 1) - c * (c - 1))
    t_rec = (2 * num_params * (n - c) + attention) / flops
    return t_swap, t_rec


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if manager.can_swap_out(seq_id):
        swap_t, rec_t = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
        if swap_t < rec_t:
            return "swap"
    return "recompute"''',
    }),
    'ex03 a grid lambda over meta BLOCK, softmax by exp2 of x times log2 e': ('HONEST', 'ex03_triton_basics', {
        'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.shape[0]
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out''',
        'softmax-work': r'''@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    lane = tl.arange(0, BLOCK)
    src = x_ptr + r * stride_x
    dst = out_ptr + r * stride_out
    run_max = tl.full([1], float("-inf"), tl.float32)
    run_sum = tl.zeros([1], tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        ok = c0 + lane < n_cols
        t = tl.load(src + c0 + lane, mask=ok, other=float("-inf"))
        new_max = tl.maximum(run_max, tl.max(t, 0))
        run_sum = run_sum * tl.exp2((run_max - new_max) * 1.4426950408889634) + tl.sum(tl.exp2((t - new_max) * 1.4426950408889634), 0)
        run_max = new_max
    inv = 1.0 / run_sum
    for c0 in range(0, n_cols, BLOCK):
        ok = c0 + lane < n_cols
        t = tl.load(src + c0 + lane, mask=ok, other=float("-inf"))
        tl.store(dst + c0 + lane, tl.exp2((t - run_max) * 1.4426950408889634) * inv, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out''',
    }),
    'ex09 the slot as t minus its block start, names of its own': ('HONEST', 'ex09_paged_attention', {
        'kernel-work': r'''@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    first_head = kv_head * group          # heads h with h // group == kv_head start here
    heads = first_head + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        in_ctx = tokens < context_len
        logical = tokens // BLOCK_SIZE
        within = tokens - logical * BLOCK_SIZE
        blk = tl.load(table + logical, mask=in_ctx, other=0)
        blk = blk.to(tl.int64)
        kT = tl.load(k_head + blk[None, :] * stride_kb + within[None, :] * stride_kt + offs_d[:, None],
                     mask=in_ctx[None, :], other=0.0)
        vv = tl.load(v_head + blk[:, None] * stride_kb + within[:, None] * stride_kt + offs_d[None, :],
                     mask=in_ctx[:, None], other=0.0)
        sc = tl.dot(q, kT, input_precision="ieee") * qk_scale
        sc = tl.where(in_ctx[None, :], sc, float("-inf"))
        top = tl.maximum(m_i, tl.max(sc, 1))
        corr = tl.exp2(m_i - top)
        pr = tl.exp2(sc - top[:, None])
        acc = acc * corr[:, None] + tl.dot(pr, vv, input_precision="ieee")
        l_i = l_i * corr + tl.sum(pr, 1)
        m_i = top
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])''',
    }),
    'ex10 two indices over a copy of running, preempted requests put back after the loop': ('HONEST', 'ex10_scheduler_step', {
        'schedule-work': r'''def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    import math
    order = list(running)                      # oldest first
    kept: list[Request] = []
    lo, hi = 0, len(order)                     # order[lo:hi] have not grown yet
    while lo < hi:
        req = order[lo]
        while not manager.can_append(req.seq_id):
            hi -= 1                            # the newest not yet grown goes
            gone = order[hi]
            manager.free(gone.seq_id)
            step.preempted.append(gone.seq_id)
            if hi == lo:                       # it was req itself
                break
        if hi == lo:
            break
        manager.append(req.seq_id, len(req.tokens))
        req.tokens.append(len(req.tokens))
        kept.append(req)
        step.grown.append(req.seq_id)
        lo += 1
    # preempted ones go back in front, oldest first (they were taken newest first)
    for gone_id in step.preempted:
        waiting.appendleft(next(q for q in order if q.seq_id == gone_id))
    running[:] = kept
    step.num_tokens = len(kept)
    budget_left = max_num_batched_tokens - step.num_tokens
    while not step.preempted and waiting:
        head = waiting[0]
        need = math.ceil(len(head.tokens) / manager.block_size)
        if manager.num_free_blocks - need < manager.watermark_blocks or len(head.tokens) > budget_left:
            break
        waiting.popleft()
        manager.add(head.seq_id, head.tokens)
        running.append(head)
        step.admitted.append(head.seq_id)
        budget_left -= len(head.tokens)
        step.num_tokens += len(head.tokens)
    return step''',
    }),
}


# Round 38z13: copies of the published solution in disguise (each must go to review), then the round's other notebooks.
ROUND_38Z13_COPIES = {
    "ex07's published fork and append split into three helper methods, names and comments kept": ('COPIES', 'ex07_copy_on_write', {
        'manager-work': r'''
class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def _share(self, table):
        for block in table.block_ids:
            self.allocator.incref(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        table = self.tables[parent]
        self._share(table)
        self.tables[child] = BlockTable(list(table.block_ids), table.num_tokens, self.block_size)
        return self.tables[child]

    def _grow(self, table):
        table.block_ids.append(self.allocator.allocate())

    def _copy_last(self, table):
        new = self.allocator.allocate()          # first, so that OutOfBlocks changes nothing
        shared = table.block_ids[-1]
        self.allocator.free(shared)
        table.block_ids[-1] = new
        return (shared, new)

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        table = self.tables[seq]
        position = table.num_tokens
        copy = None
        if position % self.block_size == 0:
            self._grow(table)
        elif self.allocator.refcount(table.block_ids[-1]) > 1:
            copy = self._copy_last(table)
        table.num_tokens = position + 1
        return table.slot(position), copy
''',
    }),
    "ex06's published allocator with its guards turned round, messages kept word for word": ('COPIES', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        if self.free_list:
            block = self.free_list.pop()
            self.ref_count[block] = 1
            return block
        raise OutOfBlocks(1, 0, self.num_blocks)

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        if n <= len(self.free_list):
            return [self.allocate() for _ in range(n)]
        raise OutOfBlocks(n, len(self.free_list), self.num_blocks)

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        if 0 <= block < self.num_blocks and self.ref_count[block] != 0:
            self.ref_count[block] += 1
            return
        raise ValueError(f"block {block} is not allocated, so it cannot be shared")

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        if block < 0 or block >= self.num_blocks:
            raise ValueError(f"block {block} is not in this pool")
        if not self.ref_count[block]:
            raise ValueError(f"double free: block {block} is already free")
        self.ref_count[block] -= 1
        if not self.ref_count[block]:
            self.free_list.append(block)
''',
        'boundary-work': r'''
def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    return (num_tokens + block_size - 1) // block_size


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    return position % block_size + block_size * block_ids[position // block_size]
''',
    }),
    "ex09 stretch's published merge with methods written as torch functions, its comment kept": ('COPIES', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    per_split = -(-context_len // num_splits)
    length = -(-per_split // block_n) * block_n
    bounds = []
    s = 0
    while s < num_splits:
        start = min(s * length, context_len)
        bounds.append((start, min(start + length, context_len)))
        s += 1
    return bounds
''',
        'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # sum_j e^{x_j} v_j = sum_s l_s o_s = sum_s e^{lse_s} o_s and sum_j e^{x_j} = sum_s e^{lse_s}; multiplying both by
    # e^{-m} changes nothing, and m = max_s lse_s makes every exponent <= 0 (an empty split: e^{-inf} = 0).
    m = torch.amax(lses, -1, True)
    w = torch.exp(torch.sub(lses, m))
    total = torch.sum(w, -1, True)
    out = torch.sum(w.unsqueeze(-1) * outs, -2) / total
    lse = torch.squeeze(m + torch.log(total), -1)
    return out, lse
''',
        'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    pt = prefix_table.unsqueeze(0).repeat(n, 1)
    plen = torch.full_like(own_lens, prefix_len)
    a = paged_decode_split(q, k_cache, v_cache, pt, plen, 1)
    b = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    merged, _ = merge_states(torch.cat((a[0], b[0]), 2), torch.cat((a[1], b[1]), 2))
    return merged
''',
    }),
    "ex01's published mask and attention, lines swapped, comparisons flipped, @ as torch matmul": ('COPIES', 'ex01_naive_attention', {
        'mask-work': r'''
def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    j = torch.arange(n_k).unsqueeze(0)  # a row of key positions
    i = torch.arange(n_q).unsqueeze(1)  # a column of query positions
    return i + (n_k - n_q) >= j
''',
        'attention-work': r'''
def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    s = torch.matmul(q.float(), k.float().transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]).to(s.device), -math.inf)
    return torch.matmul(s.softmax(dim=-1), v.float()).to(q.dtype)
''',
    }),
}



ROUND_38Z13 = {
    'ex04b predict taking a report with HGMMA for an H100, dropping sm_90 compiles that use HMMA': ('ATTACKS', 'ex04b_performance_lab', {
        'choose-work': r'''
MY_CONFIGS = [(128, 64, 8, 2), (128, 128, 8, 2), (64, 32, 4, 2), (64, 128, 4, 3)]
''',
        'predict-resources-work': r'''
def predict_resources(block_m, block_n, num_warps, num_stages, head_dim=128):
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    bf16 = 2
    q_tile = block_m * head_dim * bf16
    kv_ring = num_stages * (block_n * head_dim * bf16) * 2
    threads = 32 * num_warps
    live = block_m * head_dim + 1.5 * block_m * block_n
    regs = live / threads
    return {"shared_bytes": q_tile + kv_ring, "registers": regs, "spills": bool(regs > 255)}
''',
        'read-work': r'''
def read_report(report):
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    counts = report.get("sass", {})
    out = dict(registers=int(report["registers"]), spill_bytes=int(report["spill_bytes"]))
    out["shared_kib"] = report["shared_bytes"] / 1024.0
    out["matrix"] = "HMMA" if counts.get("HGMMA", 0) == 0 else "HGMMA"
    out["loads"] = "LDGSTS" if counts.get("UTMALDG", 0) == 0 else "UTMALDG"
    return out
''',
        'exp-work': r'''
def exp2_per_score(report):
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    threads = 32 * report["num_warps"]
    per_thread_one_loop = report["block_m"] * report["block_n"] / threads
    return report["sass"]["MUFU.EX2"] / per_thread_one_loop / 2
''',
        'budget-work': r'''
def tile_budget(block_m, block_n, head_dim, mma_flops_per_clock=4096, exp_per_clock=16):
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    one_product = 2 * block_m * block_n * head_dim
    total_flops = one_product * 2
    kv_bytes = 2 * (block_n * head_dim) * 2
    n_exp = block_m * block_n
    mma_clocks = total_flops / mma_flops_per_clock
    exp_clocks = n_exp / exp_per_clock
    return {"flops": total_flops, "bytes": kv_bytes, "exps": n_exp,
            "flops_per_byte": total_flops / kv_bytes, "exp_fraction": exp_clocks / mma_clocks}
''',
        'bwd-work': r'''
def backward_exp_fraction(head_dim, mma_flops_per_clock=4096, exp_per_clock=16):
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    exp_clocks = 2.0 / exp_per_clock
    mma_clocks = 7 * (2.0 * head_dim) / mma_flops_per_clock
    return exp_clocks / mma_clocks
''',
        'predict-work': r'''
def predict(reports):
    """Index of the report of the configuration that should run fastest on an H100."""
    # wgmma (HGMMA) only exists on Hopper, so a report with HGMMA is an H100 compile
    best, best_key = None, None
    for idx, rep in enumerate(reports):
        if rep["sass"]["HGMMA"] == 0 or rep["spill_bytes"] > 0:
            continue
        key = (rep["block_m"], rep["block_n"])
        if best_key is None or key > best_key:
            best, best_key = idx, key
    return best
''',
    }),
    'ex00 in float64 inside, an in-place divide on its own tensor, a scratch cell with time and prints': ('HONEST', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    wide = x.to(torch.float64)                       # a little extra precision never hurts
    shifted = wide - wide.max(dim=-1, keepdim=True).values
    weights = shifted.exp()
    weights /= weights.sum(dim=-1, keepdim=True)
    return weights.to(x.dtype)


%time _ = softmax_rows(torch.randn(64, 512))
print(softmax_rows(torch.tensor([1.0, 2.0, 3.0])))
print(softmax_rows(torch.tensor([[1e4, 1e4 - 1.0]])))
''',
    }),
    'ex01 a mask by tril with a diagonal, a helper class, einsum, softmax by hand and torch where': ('HONEST', 'ex01_naive_attention', {
        'mask-work': r'''
def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)
''',
        'attention-work': r'''
class _Attn:
    """Tiny helper so I can print the pieces while debugging."""
    def __init__(self, q, k, v):
        self.dtype = q.dtype
        self.q, self.k, self.v = (t.to(torch.float32) for t in (q, k, v))
        self.scale = q.shape[-1] ** -0.5

    def scores(self):
        return torch.einsum("...qd,...kd->...qk", self.q, self.k) * self.scale

    def run(self, causal):
        sc = self.scores()
        if causal:
            keep = causal_mask(sc.shape[-2], sc.shape[-1])
            sc = torch.where(keep, sc, torch.tensor(float("-inf")))
        sc = sc - sc.amax(dim=-1, keepdim=True)
        w = sc.exp()
        w = w / w.sum(dim=-1, keepdim=True)
        return torch.einsum("...qk,...kd->...qd", w, self.v).to(self.dtype)


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    return _Attn(q, k, v).run(causal)
''',
    }),
    'ex02 stretch closed forms of its own, an isinf anchor, nan_to_num for rows that see no key': ('HONEST', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    offset = n_k - n_q
    hi = r0 + rows - 1 + offset      # the furthest key any row of the tile sees
    lo = r0 + offset                 # keys 0..lo are seen by every row of the tile
    if hi < 0:
        visit = 0
    else:
        visit = hi // block_n + 1
    tiles = (n_k + block_n - 1) // block_n
    if lo < 0:
        full = 0
    elif lo >= n_k - 1:
        full = tiles
    else:
        full = (lo + 1) // block_n
    return full, visit
''',
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    m_next = torch.maximum(m, s.max(dim=-1).values)
    anchor = torch.where(torch.isinf(m_next), torch.zeros_like(m_next), m_next)
    shrink = (m - anchor).exp()
    p = (s - anchor.unsqueeze(-1)).exp()
    return m_next, l * shrink + p.sum(-1), acc * shrink.unsqueeze(-1) + p @ v_tile


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    for start in range(0, n_q, block_m):
        stop = min(start + block_m, n_q)
        qs = q[start:stop].float() / math.sqrt(d)
        full, visit = key_tile_counts(start, stop - start, n_q, n_k, block_n)
        state = (torch.full((stop - start,), -math.inf), torch.zeros(stop - start), torch.zeros(stop - start, d))
        sees_up_to = torch.arange(start, stop).unsqueeze(1) + (n_k - n_q)
        for t in range(visit):
            lo, hi = t * block_n, min((t + 1) * block_n, n_k)
            s = qs @ k[lo:hi].float().t()
            if t >= full:   # only the diagonal tiles need the mask
                s = s.masked_fill(torch.arange(lo, hi).unsqueeze(0) > sees_up_to, -math.inf)
            state = online_softmax_update(*state, s, v[lo:hi].float())
        _, l_fin, acc_fin = state
        out[start:stop] = torch.nan_to_num(acc_fin / l_fin.unsqueeze(1), nan=0.0)
    return out.to(q.dtype)
''',
    }),
    'ex05 math prod, element_size of an empty tensor, an exact Fraction budget, scratch prints': ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''
import math

def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    factors = (2, num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element)
    return math.prod(factors)
''',
        'models-work': r'''
def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    width = torch.empty((), dtype=dtype).element_size()
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, width)
''',
        'fit-work': r'''
from fractions import Fraction

def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    room = Fraction(budget_gib) * GiB                # exact, no float rounding at exact fits
    one_request = kv_bytes_per_token(model, dtype) * max_len
    return math.floor(room / one_request)


print(kv_bytes_per_token(OPT_13B, torch.float16) / 2**20, "MiB per token")
print(max_concurrent_requests(40, OPT_13B, 2048, torch.float16), "requests in 40 GiB")
''',
    }),
    'ex09 stretch edges zipped, merge by softmax, einsum and logsumexp, cascade by stack': ('HONEST', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    chunk = (context_len + num_splits - 1) // num_splits
    chunk = ((chunk + block_n - 1) // block_n) * block_n      # whole key tiles
    edges = [min(i * chunk, context_len) for i in range(num_splits + 1)]
    return list(zip(edges[:-1], edges[1:]))
''',
        'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    weights = torch.softmax(lses, dim=-1)                        # e^{lse_s} / sum e^{lse}, stable
    merged = torch.einsum("...s,...sd->...d", weights, outs)
    return merged, torch.logsumexp(lses, dim=-1)
''',
        'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    seqs = q.shape[0]
    shared_rows = prefix_table.reshape(1, -1).expand(seqs, prefix_table.numel()).contiguous()
    shared_lens = own_lens.new_full(own_lens.shape, prefix_len)
    pre_o, pre_l = paged_decode_split(q, k_cache, v_cache, shared_rows, shared_lens, 1)
    own_o, own_l = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    both_o = torch.stack([pre_o[:, :, 0], own_o[:, :, 0]], dim=2)
    both_l = torch.stack([pre_l[:, :, 0], own_l[:, :, 0]], dim=2)
    return merge_states(both_o, both_l)[0]
''',
    }),
    'ex09 int64 row offsets per token, products by broadcasting and tl sum instead of tl dot': ('HONEST', 'ex09_paged_attention', {
        'kernel-work': r'''
@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    heads = offs_h + group * kv_head          # the query heads that read this K/V head
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        live = tokens < context_len
        blk = tl.load(table + tokens // BLOCK_SIZE, mask=live, other=0)
        row = blk.to(tl.int64) * stride_kb + (tokens % BLOCK_SIZE) * stride_kt     # where each token's K/V start
        kt = tl.load(k_head + row[:, None] + offs_d[None, :], mask=live[:, None], other=0.0)   # (BLOCK_N, D)
        vt = tl.load(v_head + row[:, None] + offs_d[None, :], mask=live[:, None], other=0.0)
        scores = tl.sum(q[:, None, :] * kt[None, :, :], axis=2) * qk_scale             # (BLOCK_H, BLOCK_N)
        scores = tl.where(live[None, :], scores, float("-inf"))
        m_next = tl.maximum(m_i, tl.max(scores, axis=1))
        corr = tl.exp2(m_i - m_next)
        p = tl.exp2(scores - m_next[:, None])
        l_i = l_i * corr + tl.sum(p, axis=1)
        acc = acc * corr[:, None] + tl.sum(p[:, :, None] * vt[None, :, :], axis=1)
        m_i = m_next
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])
''',
    }),
    'ex04b a dataclass Tile, a namedtuple of report facts, a stable reverse sort, max over counts': ('HONEST', 'ex04b_performance_lab', {
        'choose-work': r'''MY_CONFIGS = [(64, 32, 4, 2), (64, 128, 4, 2), (128, 128, 8, 2), (128, 64, 8, 3)]
''',
        'predict-resources-work': r'''
from dataclasses import dataclass

@dataclass
class Tile:
    block_m: int
    block_n: int
    head_dim: int = 128

    def shared(self, stages):
        return 2 * self.head_dim * (self.block_m + 2 * stages * self.block_n)

    def live_registers(self, warps):
        return (self.block_m * self.head_dim + 1.5 * self.block_m * self.block_n) / (32 * warps)


def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    t = Tile(block_m, block_n, head_dim)
    regs = t.live_registers(num_warps)
    return {"shared_bytes": t.shared(num_stages), "registers": regs, "spills": regs > 255}
''',
        'read-work': r'''
def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    ops = report["sass"]
    matrix = max(("HGMMA", "HMMA"), key=lambda op: ops.get(op, 0))
    loads = max(("UTMALDG", "LDGSTS"), key=lambda op: ops.get(op, 0))
    return {"registers": report["registers"], "spill_bytes": report["spill_bytes"],
            "shared_kib": report["shared_bytes"] / 2**10, "matrix": matrix, "loads": loads}
''',
        'exp-work': r'''
def exp2_per_score(report: dict) -> float:
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    scores_each = 2 * report["block_m"] * report["block_n"] / (32 * report["num_warps"])   # both loops
    return report["sass"]["MUFU.EX2"] / scores_each
''',
        'budget-work': r'''
def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    b = {"flops": 4 * block_m * block_n * head_dim, "bytes": 4 * block_n * head_dim, "exps": block_m * block_n}
    b["flops_per_byte"] = b["flops"] / b["bytes"]
    b["exp_fraction"] = (b["exps"] * mma_flops_per_clock) / (b["flops"] * exp_per_clock)
    return b
''',
        'bwd-work': r'''
def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    return 2 * mma_flops_per_clock / (14 * head_dim * exp_per_clock)
''',
        'predict-work': r'''
from collections import namedtuple

Fact = namedtuple("Fact", "index arch block_m block_n spills")

def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    facts = [Fact(i, r["arch"], r["block_m"], r["block_n"], r["spill_bytes"] > 0) for i, r in enumerate(reports)]
    on_h100 = [f for f in facts if f.arch == 90 and not f.spills]
    ranked = sorted(on_h100, key=lambda f: (f.block_m, f.block_n), reverse=True)   # stable: first of equals stays first
    return ranked[0].index
''',
    }),
}


# Round 38z14: a copy of the published solution with its keyword arguments made positional (it must go to review), then
# the round's other notebooks.
ROUND_38Z14_COPIES = {
    "ex09 stretch's published merge and cascade, comments dropped, keyword arguments made positional": ('COPIES', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    tiles = -(-context_len // (num_splits * block_n))
    step_len = tiles * block_n
    edges = [min(i * step_len, context_len) for i in range(num_splits + 1)]
    return list(zip(edges[:-1], edges[1:]))
''',
        'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m = torch.amax(lses, -1, True)
    w = torch.exp(lses - m)
    total = torch.sum(w, -1, True)
    out = torch.sum(w[..., None] * outs, -2) / total
    lse = torch.squeeze(m + torch.log(total), -1)
    return out, lse
''',
        'cascade-work': r'''def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    num_seqs = q.shape[0]
    prefix_tables = torch.Tensor.contiguous(torch.Tensor.expand(prefix_table[None, :], num_seqs, -1))
    prefix_out, prefix_lse = paged_decode_split(q, k_cache, v_cache, prefix_tables,
                                                torch.full_like(own_lens, prefix_len), 1)
    own_out, own_lse = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    out, _ = merge_states(torch.cat([prefix_out, own_out], 2), torch.cat([prefix_lse, own_lse], 2))
    return out
''',
    }),
}



ROUND_38Z14 = {
    'ex00 every dtype computed in float32 (float64 scores past its range give NaN)': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude.

    Args:
        x: (..., n) floating-point tensor of scores.

    Returns:
        A tensor like ``x`` (same shape and dtype) whose rows are non-negative and sum to 1.
    """
    work = x.float()                                # one working precision for every input
    top = work.amax(dim=-1, keepdim=True)
    ex = torch.exp(work - top)
    return (ex / ex.sum(dim=-1, keepdim=True)).to(x.dtype)
''',
    }),
    'ex03 its kernel copying x into out, y added by PyTorch after the launch': ('ATTACKS', 'ex03_triton_basics', {
        'add-work': r'''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    idx = pid * BLOCK + tl.arange(0, BLOCK)
    ok = idx < n
    xv = tl.load(x_ptr + idx * stride_x, mask=ok)
    tl.store(out_ptr + idx, xv, mask=ok)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    out += y
    return out
''',
        'softmax-work': r'''@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    src = x_ptr + r * stride_x
    dst = out_ptr + r * stride_out
    # pass 1: the row maximum
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        vals = tl.load(src + c0 + offs, mask=c0 + offs < n_cols, other=float("-inf"))
        best = tl.maximum(best, vals)
    row_max = tl.max(best, 0)
    # pass 2: the denominator
    tot = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        vals = tl.load(src + c0 + offs, mask=c0 + offs < n_cols, other=float("-inf"))
        tot += tl.exp(vals - row_max)
    denom = tl.sum(tot, 0)
    # pass 3: write
    for c0 in range(0, n_cols, BLOCK):
        vals = tl.load(src + c0 + offs, mask=c0 + offs < n_cols, other=float("-inf"))
        tl.store(dst + c0 + offs, tl.exp(vals - row_max) / denom, mask=c0 + offs < n_cols)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
''',
    }),
    'ex10 the running requests counted again in the admission budget': ('ATTACKS', 'ex10_scheduler_step', {
        'schedule-work': r'''def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    todo = deque(running)          # oldest first
    running.clear()
    while todo:
        cur = todo.popleft()
        gone = False
        while not manager.can_append(cur.seq_id):
            loser = todo.pop() if todo else cur      # newest not yet grown; itself if it is the newest left
            manager.free(loser.seq_id)
            waiting.appendleft(loser)
            step.preempted.append(loser.seq_id)
            if loser is cur:
                gone = True
                break
        if gone:
            continue
        tok = len(cur.tokens)
        manager.append(cur.seq_id, tok)
        cur.tokens.append(tok)
        running.append(cur)
        step.grown.append(cur.seq_id)
    prompt_tokens = 0
    if not step.preempted:
        while waiting:
            nxt = waiting[0]
            need = -(-len(nxt.tokens) // manager.block_size)
            if need + manager.watermark_blocks > manager.num_free_blocks:
                break
            # one decode token per running request, plus the prompts admitted so far
            if len(running) + prompt_tokens + len(nxt.tokens) > max_num_batched_tokens:
                break
            waiting.popleft()
            manager.add(nxt.seq_id, nxt.tokens)
            running.append(nxt)
            step.admitted.append(nxt.seq_id)
            prompt_tokens += len(nxt.tokens)
    step.num_tokens = len(step.grown) + prompt_tokens
    return step
''',
    }),
    'ex00 in float64 cast back, comments, a scratch cell with time, asserts and prints': ('HONEST', 'ex00_warmup', {
        'softmax-work': r'''def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude.

    Args:
        x: (..., n) floating-point tensor of scores.

    Returns:
        A tensor like ``x`` (same shape and dtype) whose rows are non-negative and sum to 1.
    """
    # My plan: do the arithmetic in double precision so that nothing is lost on the way,
    # then hand back the dtype the caller gave me (the docstring wants "same shape and dtype").
    wide = x.to(torch.float64)
    # Shift every row so that its biggest score becomes 0. exp() of a non-positive number
    # is at most 1, so nothing can overflow, however large the scores are.
    biggest = wide.max(dim=-1, keepdim=True).values
    shifted = wide - biggest
    # The shift cancels between numerator and denominator: e^(s-c) / sum e^(s-c) = e^s / sum e^s.
    numer = shifted.exp()
    denom = numer.sum(dim=-1, keepdim=True)
    probs = numer / denom
    # back to the caller's precision
    return probs.to(x.dtype)


# scratch: my own sanity checks before running the real ones
demo = torch.tensor([[1.0, 2.0, 3.0], [1000.0, 1000.0, 1000.0], [-5e4, 0.0, 5e4]])
p = softmax_rows(demo)
print(p)
assert torch.allclose(p.sum(-1), torch.ones(3))
assert (p >= 0).all()
assert softmax_rows(demo.half()).dtype == torch.float16
%time _ = softmax_rows(torch.randn(2000, 512))
print("looks fine")
''',
    }),
    'ex01 a tril mask, softmax by hand, comments restating the exercise, a matplotlib cell': ('HONEST', 'ex01_naive_attention', {
        'mask-work': r'''def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    # The queries are the last n_q positions, after n_k - n_q cached tokens, so query i
    # sees every key up to i + (n_k - n_q): that is a lower triangle moved right by the offset.
    offset = n_k - n_q
    allowed = torch.ones(n_q, n_k, dtype=torch.bool)
    return torch.tril(allowed, diagonal=offset)
''',
        'attention-work': r'''def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    # Compute in float32 even for float16 / bfloat16 inputs (their scores can pass 65504),
    # and give back the input dtype at the very end.
    head_dim = q.size(-1)
    q32, k32, v32 = q.to(torch.float32), k.to(torch.float32), v.to(torch.float32)
    scores = torch.matmul(q32, k32.transpose(-1, -2)) * (1.0 / math.sqrt(head_dim))
    if causal:
        # hide the future keys with -inf so that exp() turns them into exact zeros
        keep = causal_mask(q.size(-2), k.size(-2))
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    # softmax over the keys, by hand as in exercise 0: subtract the row maximum first
    row_max = scores.amax(dim=-1, keepdim=True)
    weights = torch.exp(scores - row_max)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return torch.matmul(weights, v32).to(q.dtype)


# scratch: look at the mask the way the lecture drew it
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(3, 3))
ax.imshow(causal_mask(4, 7).numpy(), cmap="Greys")
ax.set_title("4 new tokens after 3 cached")
plt.close(fig)
print(causal_mask(3, 5).int())
qq = torch.randn(2, 5, 16)
print(naive_attention(qq, qq, qq, causal=True).shape)
''',
    }),
    'ex05 bytes per element from finfo bits, the budget as whole bytes then floor division': ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    # one vector has head_dim elements; K and V make two of them
    per_vector = head_dim * bytes_per_element
    per_token_per_layer = 2 * num_kv_heads * per_vector
    return per_token_per_layer * num_layers * num_tokens * batch
''',
        'models-work': r'''def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    width = torch.finfo(dtype).bits // 8   # 2 for bf16/fp16, 4 for fp32, 1 for fp8
    # only the KV heads are cached (GQA shares them among the query heads)
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, num_tokens=1, batch=1,
                          bytes_per_element=width)
''',
        'fit-work': r'''def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    budget_bytes = int(budget_gib * GiB)          # whole bytes available
    one_request = max_len * kv_bytes_per_token(model, dtype)
    return budget_bytes // one_request            # round down: a partial request does not fit
''',
    }),
    'ex06 a commented stack allocator, an id check helper, its own messages, divmod': ('HONEST', 'ex06_block_allocator', {
        'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _check_id(self, block: int) -> None:
        # Valid ids are 0 .. num_blocks - 1. Careful: Python would happily index ref_count[-1]
        # (the last block), so negative ids must be refused explicitly.
        if block < 0 or block >= self.num_blocks:
            raise ValueError(f"there is no block {block} (valid ids: 0..{self.num_blocks - 1})")

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        if len(self.free_list) == 0:
            # nothing on the stack: report what was asked, what is free and the pool size
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()        # pop from the end of the list = top of the stack, O(1)
        self.ref_count[b] = 1           # exactly one owner now
        return b

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        # all or nothing: decide before touching anything, so a failure leaks no block
        available = self.num_free
        if available < n:
            raise OutOfBlocks(n, available, self.num_blocks)
        taken = []
        for _ in range(n):
            taken.append(self.allocate())
        return taken

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        self._check_id(block)
        if self.ref_count[block] <= 0:
            raise ValueError(f"cannot share block {block}: nobody owns it")
        self.ref_count[block] += 1      # e.g. a fork: one more reader

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        self._check_id(block)
        if self.ref_count[block] <= 0:
            raise ValueError(f"block {block} was freed already")
        self.ref_count[block] -= 1
        # only when the last owner lets go does the block become reusable (someone may still read it)
        if self.ref_count[block] == 0:
            self.free_list.append(block)   # push on top of the stack, O(1)
''',
        'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    # ceil(n / B) with integers only; 0 tokens -> 0 blocks
    return (num_tokens + block_size - 1) // block_size


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    which_block, offset = divmod(position, block_size)   # logical block, offset inside it
    return block_ids[which_block] * block_size + offset


a = SimpleAllocator(4)
print([a.allocate() for _ in range(3)], a.free_list)
a.incref(1); a.free(1); print(a.ref_count, a.num_free)
try:
    a.free(-1)
except ValueError as e:
    print("refused as expected:", e)
assert blocks_needed(0, 16) == 0 and blocks_needed(17, 16) == 2
''',
    }),
    'ex07 fork and append step by step with divmod and comments': ('HONEST', 'ex07_copy_on_write', {
        'manager-work': r'''class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        src = self.tables[parent]
        # the child reads the very same physical blocks: one more owner each
        for b in src.block_ids:
            self.allocator.incref(b)
        # a new list, so that the two tables can diverge later
        self.tables[child] = BlockTable(src.block_ids[:], src.num_tokens, self.block_size)
        return self.tables[child]

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        tbl = self.tables[seq]
        idx, off = divmod(tbl.num_tokens, self.block_size)
        copied = None
        if off == 0:
            # the last block is full (or there is none yet): start a fresh block
            tbl.block_ids.append(self.allocator.allocate())
        elif self.allocator.refcount(tbl.block_ids[idx]) > 1:
            # somebody else still reads this block: write into a private copy instead.
            # allocate first, so that running out leaves everything untouched
            fresh = self.allocator.allocate()
            old = tbl.block_ids[idx]
            self.allocator.free(old)            # we drop our reference to the shared one
            tbl.block_ids[idx] = fresh
            copied = (old, fresh)
        tbl.num_tokens += 1
        return tbl.block_ids[idx] * self.block_size + off, copied
''',
    }),
    'ex08 the uncached tail recomputed by the exact sum, the crossover arranged its own way': ('HONEST', 'ex08_swap_or_recompute', {
        'costs-work': r'''def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    n_blocks = -(-num_tokens // block_size)
    n_chunks = 2 * num_layers * n_blocks          # K and V, every layer, every block
    per_chunk = latency + (block_size * chunk_bytes_per_token) / bandwidth
    return 2.0 * n_chunks * per_chunk             # out and back in


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    n = num_tokens
    return (2 * num_params * n + 2 * num_layers * d_model * n ** 2) / flops
''',
        'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # With B | n:  t_swap(B) = 4 L n latency / B  +  4 L n c / bw.
    # Setting it equal to T:  B* = 4 L n latency / (T - 4 L n c / bw), if the bracket is positive.
    fixed = 4 * num_layers * num_tokens
    bytes_part = fixed * chunk_bytes_per_token / bandwidth
    room = recompute_seconds - bytes_part
    if room <= 0:
        return math.inf      # the bytes alone already cost as much as the prefill
    return fixed * latency / room
''',
        'choose-work': r'''def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    tbl = manager.table(seq_id)
    B = manager.block_size
    n = tbl.num_tokens
    counts = [manager.allocator.refcount(b) for b in tbl.block_ids]
    # swap: only the blocks nobody else holds
    mine = sum(1 for rc in counts if rc == 1)
    chunk = 2 * model.num_kv_heads * model.head_dim        # bf16: 2 bytes an element
    t_swap = swap_seconds(mine * B, B, model.num_layers, chunk, bandwidth, latency)
    # recompute: the leading shared *full* blocks stay cached
    lead = 0
    while lead < len(counts) and counts[lead] > 1 and (lead + 1) * B <= n:
        lead += 1
    c = lead * B
    d_model = model.num_heads * model.head_dim
    # exact sum over the re-run positions p = c .. n-1: 2N per token, and 4 L d_model p for attending to p keys
    linear = 2 * num_params * (n - c)
    attention = 4 * model.num_layers * d_model * sum(range(c, n))
    return t_swap, (linear + attention) / flops


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    t_swap, t_rec = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    if manager.can_swap_out(seq_id) and t_swap < t_rec:
        return "swap"
    return "recompute"
''',
    }),
    'ex09 stretch weights by softmax of the lses, lse by logsumexp, bounds by math ceil': ('HONEST', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''import math

def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    # each split gets ceil(context_len / num_splits) keys, rounded up to whole key tiles
    span = math.ceil(context_len / num_splits)
    span = math.ceil(span / block_n) * block_n
    result = []
    for s in range(num_splits):
        lo = min(s * span, context_len)          # an empty split sits at the end, never past it
        hi = min((s + 1) * span, context_len)
        result.append((lo, hi))
    return result
''',
        'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # o = sum_s e^{lse_s} o_s / sum_s e^{lse_s}: the weights are exactly a softmax over the lses,
    # and torch.softmax already subtracts the maximum (an empty split, lse = -inf, gets weight 0).
    weights = torch.softmax(lses, dim=-1)
    merged = (weights.unsqueeze(-1) * outs).sum(dim=-2)
    # the merged lse is log sum_s e^{lse_s}, which logsumexp computes stably
    return merged, torch.logsumexp(lses, dim=-1)
''',
        'cascade-work': r'''def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    shared_tables = prefix_table.unsqueeze(0).repeat(n, 1)           # every sequence reads the same prefix
    shared_lens = torch.full((n,), prefix_len, dtype=own_lens.dtype, device=own_lens.device)
    o1, l1 = paged_decode_split(q, k_cache, v_cache, shared_tables, shared_lens, 1)
    o2, l2 = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    merged, _ = merge_states(torch.cat((o1, o2), dim=-2), torch.cat((l1, l2), dim=-1))
    return merged


print(split_bounds(100, 3, 16))
o = torch.randn(2, 3, 4); l = torch.tensor([[0.0, 500.0, float("-inf")], [1.0, 1.0, 1.0]])
out, lse = merge_states(o, l)
assert torch.isfinite(out).all() and torch.isfinite(lse).all()
print(lse)
''',
    }),
}


# Round 38z15 (its ex02 stretch answer masking every visited tile and its ex09 block offset in int32 are the planted
# bugs INVISIBLE lists: no row).
ROUND_38Z15 = {
    'ex02 stretch visiting and masking every key tile, key_tile_counts unused': ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    off = n_k - n_q
    tiles = (n_k + block_n - 1) // block_n
    hi_key = r0 + rows - 1 + off          # last key seen by the bottom row
    visit = min(tiles, hi_key // block_n + 1) if hi_key >= 0 else 0
    lo_key = r0 + off                     # last key seen by the top row
    if lo_key >= n_k - 1:
        full = tiles
    else:
        full = max(0, (lo_key + 1) // block_n)
    return full, visit
''',
        'attention-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    top = torch.maximum(m, s.amax(dim=-1))
    base = torch.where(torch.isinf(top) & (top < 0), torch.zeros_like(top), top)
    fade = torch.exp(m - base)
    w = torch.exp(s - base[:, None])
    return top, fade * l + w.sum(dim=-1), fade[:, None] * acc + w @ v_tile


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    off = n_k - n_q
    for a in range(0, n_q, block_m):
        qa = q[a:a + block_m].float() * (1.0 / math.sqrt(d))
        h = qa.shape[0]
        st = (torch.full((h,), -math.inf), torch.zeros(h), torch.zeros(h, d))
        key_tile_counts(a, h, n_q, n_k, block_n)   # (kept for check 1; every tile masked below, simpler)
        for b in range(0, n_k, block_n):
            kb = k[b:b + block_n].float()
            sc = qa @ kb.T
            blocked = torch.arange(b, b + kb.shape[0])[None, :] > torch.arange(a, a + h)[:, None] + off
            sc = sc.masked_fill(blocked, -math.inf)
            st = online_softmax_update(*st, sc, v[b:b + block_n].float())
        mm, ll, aa = st
        out[a:a + h] = torch.where((ll > 0)[:, None], aa / ll.clamp_min(1e-30)[:, None], torch.zeros_like(aa))
    return out.to(q.dtype)
''',
    }),
    'ex07 stretch match results kept per prompt, never cleared by insert': ('ATTACKS', 'ex07_stretch_prefix_cache_match', {
        'cache-work': r'''Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1
        self._looked_up = {}

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def _blocks(self, tokens):
        """Yield each complete block of the prompt as a tuple."""
        n = self.block_size
        whole = len(tokens) // n
        for j in range(whole):
            yield tuple(tokens[j * n:(j + 1) * n])

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        out, prev = [], None
        for blk in self._blocks(tokens):
            prev = self.hash_fn(prev, blk)
            out.append(prev)
        return out

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        memo_key = tuple(tokens)
        if memo_key in self._looked_up:       # prompts repeat a lot in a server: remember the answer
            return list(self._looked_up[memo_key])

        got, want_parent = [], None
        ks = self.keys(tokens)
        usable = len(ks) if len(tokens) % self.block_size else len(ks) - 1   # leave something to compute
        for j, (key, blk) in enumerate(zip(ks[:max(usable, 0)], self._blocks(tokens))):
            bid = self.block_of.get(key)
            if bid is None:
                break
            e = self.entry[bid]
            if e.tokens != blk or e.parent_id != want_parent:
                break   # hash collision: same key, another prefix
            got.append(bid)
            want_parent = e.prefix_id
        self._looked_up[memo_key] = tuple(got)
        return got
''',
    }),
    'ex09 the block table loaded without a mask': ('ATTACKS', 'ex09_paged_attention', {
        'kernel-work': r'''@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    first_head = kv_head * group          # query heads kv_head*group .. kv_head*group + group - 1 share this K/V head
    heads = first_head + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        in_ctx = tokens < context_len
        logical = tokens // BLOCK_SIZE
        offset_in_block = tokens - logical * BLOCK_SIZE
        blk = tl.load(table + logical).to(tl.int64)
        row_base = blk * stride_kb + offset_in_block * stride_kt
        kt = tl.load(k_head + row_base[None, :] + offs_d[:, None], mask=in_ctx[None, :], other=0.0)
        vt = tl.load(v_head + row_base[:, None] + offs_d[None, :], mask=in_ctx[:, None], other=0.0)
        scores = tl.dot(q, kt, input_precision="ieee") * qk_scale
        scores = tl.where(in_ctx[None, :], scores, float("-inf"))
        new_max = tl.maximum(m_i, tl.max(scores, 1))
        weights = tl.exp2(scores - new_max[:, None])
        shrink = tl.exp2(m_i - new_max)
        l_i = l_i * shrink + tl.sum(weights, 1)
        acc = acc * shrink[:, None] + tl.dot(weights, vt, input_precision="ieee")
        m_i = new_max
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])
''',
    }),
    'ex04 a causal mask cols at most rows, ignoring n_k minus n_q': ('ATTACKS', 'ex04_flash_forward', {
        'kernel-work': r'''@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        sc = tl.dot(q, k, input_precision="ieee") * qk_scale
        ok = cols[None, :] < n_k          # padding keys beyond n_k
        if CAUSAL:
            # a query sees the keys up to its own position (its diagonal)
            ok = ok & (cols[None, :] <= rows[:, None])
        sc = tl.where(ok, sc, float("-inf"))
        mx = tl.maximum(m_i, tl.max(sc, 1))
        pr = tl.exp2(sc - mx[:, None])
        corr = tl.exp2(m_i - mx)
        l_i = corr * l_i + tl.sum(pr, 1)
        acc = corr[:, None] * acc + tl.dot(pr, v, input_precision="ieee")
        m_i = mx
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
''',
    }),
    'ex02 float64 inside the tiles, a time scratch cell and an allclose assert': ('HONEST', 'ex02_online_softmax', {
        'update-work': r'''def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows.

    Args:
        m: (rows,) running max of the scores seen so far.
        l: (rows,) running sum of exp(score - m).
        acc: (rows, d) running sum of exp(score - m) * v, not normalized.
        s: (rows, cols) the new scores. v_tile: (cols, d) the values of those keys.

    Returns:
        (m_new, l_new, acc_new), the state after the tile.
    """
    # "keep the max so far; when it grows, shrink what you summed by e^(old - new)"
    tile_max = s.max(dim=1).values
    biggest = torch.where(tile_max > m, tile_max, m)
    shrink = (m - biggest).exp()
    e = (s - biggest.unsqueeze(1)).exp()
    return biggest, l * shrink + e.sum(1), acc * shrink.unsqueeze(1) + e.matmul(v_tile)
''',
        'tiled-work': r'''def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    shift = n_k - n_q
    inv = 1.0 / math.sqrt(d)
    for i0 in range(0, n_q, block_m):
        qi = q[i0:i0 + block_m].to(torch.float64) * inv      # float64 inside: cheap here, less rounding
        r = qi.shape[0]
        state = (torch.full((r,), -math.inf, dtype=torch.float64), torch.zeros(r, dtype=torch.float64),
                 torch.zeros(r, d, dtype=torch.float64))
        for j0 in range(0, n_k, block_n):
            if causal and j0 > i0 + r - 1 + shift:
                break                                          # the rest is above the diagonal
            kj = k[j0:j0 + block_n].to(torch.float64)
            sc = qi @ kj.T
            if causal:
                qpos = torch.arange(i0, i0 + r).unsqueeze(1)
                kpos = torch.arange(j0, j0 + kj.shape[0]).unsqueeze(0)
                sc = sc.masked_fill(kpos > qpos + shift, -math.inf)
            state = online_softmax_update(*state, sc, v[j0:j0 + block_n].to(torch.float64))
        out[i0:i0 + r] = (state[2] / state[1].unsqueeze(1)).float()
    return out.to(q.dtype)


_q, _k, _v = torch.randn(37, 8), torch.randn(50, 8), torch.randn(50, 8)
_o = tiled_attention(_q, _k, _v, causal=True, block_m=8, block_n=5)
_w = torch.softmax((_q @ _k.T / math.sqrt(8)).masked_fill(torch.ones(37, 50).triu(50 - 37 + 1).bool(), -math.inf), -1)
assert torch.allclose(_o, _w @ _v, atol=1e-5)
print("max error", (_o - _w @ _v).abs().max().item())
''',
    }),
    'ex05 a frozen dataclass helper, bytes from finfo bits, integer budget arithmetic': ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    # one vector for K and one for V -> factor 2; everything else is just counting
    per_token_per_layer = 2 * num_kv_heads * head_dim * bytes_per_element
    return per_token_per_layer * num_layers * num_tokens * batch
''',
        'models-work': r'''from dataclasses import dataclass


@dataclass(frozen=True)
class TokenFootprint:
    layers: int
    kv_heads: int
    dim: int
    width: int          # bytes per stored number

    def total(self) -> int:
        return kv_cache_bytes(self.layers, self.kv_heads, self.dim, 1, 1, self.width)


def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    width = torch.finfo(dtype).bits // 8        # bits -> bytes
    return TokenFootprint(model.num_layers, model.num_kv_heads, model.head_dim, width).total()


print(kv_bytes_per_token(OPT_13B, torch.float16) / 1024, "KiB per token for OPT-13B")
''',
        'fit-work': r'''def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    reservation = kv_bytes_per_token(model, dtype) * max_len
    budget_bytes = int(budget_gib * 2**30)      # GiB as nvidia-smi counts them; the budgets are whole bytes
    assert reservation > 0
    return budget_bytes // reservation


assert max_concurrent_requests(12, OPT_13B, 2048, torch.float16) == 7
''',
    }),
    'ex06 a validation helper method, divmod, a while loop, a time scratch cell': ('HONEST', 'ex06_block_allocator', {
        'allocator-work': r'''class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _held(self, b: int, what: str) -> None:
        # Python would happily index ref_count[-1]; only 0..num_blocks-1 are real blocks
        if b not in range(self.num_blocks):
            raise ValueError(f"{what}: there is no block {b} in a pool of {self.num_blocks}")
        if self.ref_count[b] <= 0:
            raise ValueError(f"{what}: block {b} is on the free list, nobody holds it")

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        if len(self.free_list) == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        have = len(self.free_list)
        if have < n:
            raise OutOfBlocks(n, have, self.num_blocks)
        got = []
        while len(got) < n:
            got.append(self.allocate())
        return got

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        self._held(block, "incref")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        self._held(block, "free")
        self.ref_count[block] -= 1
        if not self.ref_count[block]:
            self.free_list.append(block)
''',
        'boundary-work': r'''def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    full, rest = divmod(num_tokens, block_size)
    return full + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    which, within = divmod(position, block_size)
    return block_size * block_ids[which] + within


_pool = SimpleAllocator(10_000); _ids = _pool.allocate_many(10_000); [_pool.free(i) for i in _ids]
print(_pool.num_free, blocks_needed(17, 16), slot([7, 3], 16, 17))
''',
    }),
    'ex07 stretch a block generator helper, keys and blocks zipped, an assert cell': ('HONEST', 'ex07_stretch_prefix_cache_match', {
        'cache-work': r'''Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1
        self._looked_up = {}

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def _blocks(self, tokens):
        """Yield each complete block of the prompt as a tuple."""
        n = self.block_size
        whole = len(tokens) // n
        for j in range(whole):
            yield tuple(tokens[j * n:(j + 1) * n])

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        out, prev = [], None
        for blk in self._blocks(tokens):
            prev = self.hash_fn(prev, blk)
            out.append(prev)
        return out

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""

        got, want_parent = [], None
        ks = self.keys(tokens)
        usable = len(ks) if len(tokens) % self.block_size else len(ks) - 1   # leave something to compute
        for j, (key, blk) in enumerate(zip(ks[:max(usable, 0)], self._blocks(tokens))):
            bid = self.block_of.get(key)
            if bid is None:
                break
            e = self.entry[bid]
            if e.tokens != blk or e.parent_id != want_parent:
                break   # hash collision: same key, another prefix
            got.append(bid)
            want_parent = e.prefix_id
        return got


demo = MiniPrefixCache(2, hash_fn=lambda p, t: sum(t) % 3)
demo.insert([1, 1, 0, 1, 1], [5, 8])
print(demo.match([1, 1, 1, 0, 1]), demo.match([1, 1, 0, 1, 1]))
assert demo.match([1, 1, 0, 1]) == [5]
''',
    }),
    'ex08 costs as per-token rates, the crossover in closed form, a while loop for the shared prefix': ('HONEST', 'ex08_swap_or_recompute', {
        'costs-work': r'''def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    nblk = -(-num_tokens // block_size)
    chunks = nblk * num_layers * 2            # K and V, every layer, every block
    per_chunk = latency + (block_size * chunk_bytes_per_token) / bandwidth
    return 2.0 * chunks * per_chunk           # out, then back in


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    n = num_tokens
    work = 2.0 * n * (num_params + num_layers * d_model * n)
    return work / flops
''',
        'crossover-work': r'''def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # With n/B blocks: t(B) = 4 L n lat / B + 4 L n c / bw.  Setting t(B) = T:  B = 4 L n lat / (T - 4 L n c / bw)
    copies_factor = 4 * num_layers * num_tokens
    fixed_part = copies_factor * chunk_bytes_per_token / bandwidth   # the bytes, whatever B is
    room = recompute_seconds - fixed_part
    if not room > 0:
        return math.inf
    return copies_factor * latency / room
''',
        'choose-work': r'''def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    tab = manager.table(seq_id)
    B, n = manager.block_size, tab.num_tokens
    counts = [manager.allocator.refcount(b) for b in tab.block_ids]
    mine = sum(1 for c in counts if c == 1)
    lead = 0
    while lead < len(counts) and counts[lead] > 1 and (lead + 1) * B <= n:
        lead += 1                              # a shared block that is also full stays resident
    kept = lead * B
    per_tok = model.num_kv_heads * model.head_dim * 2       # bf16
    t_swap = swap_seconds(mine * B, B, model.num_layers, per_tok, bandwidth, latency)
    dm = model.num_heads * model.head_dim
    flop = 2.0 * num_params * (n - kept) + 2.0 * model.num_layers * dm * (n * n - kept * kept)
    return t_swap, flop / flops


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if manager.can_swap_out(seq_id):
        a, b = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
        if a < b:
            return "swap"
    return "recompute"
''',
    }),
    'ex09 its own names, int64 block offsets, base pointers on lines of their own': ('HONEST', 'ex09_paged_attention', {
        'kernel-work': r'''@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    first_head = kv_head * group          # query heads kv_head*group .. kv_head*group + group - 1 share this K/V head
    heads = first_head + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        in_ctx = tokens < context_len
        logical = tokens // BLOCK_SIZE
        offset_in_block = tokens - logical * BLOCK_SIZE
        blk = tl.load(table + logical, mask=in_ctx, other=0).to(tl.int64)
        row_base = blk * stride_kb + offset_in_block.to(tl.int64) * stride_kt
        kt = tl.load(k_head + row_base[None, :] + offs_d[:, None], mask=in_ctx[None, :], other=0.0)
        vt = tl.load(v_head + row_base[:, None] + offs_d[None, :], mask=in_ctx[:, None], other=0.0)
        scores = tl.dot(q, kt, input_precision="ieee") * qk_scale
        scores = tl.where(in_ctx[None, :], scores, float("-inf"))
        new_max = tl.maximum(m_i, tl.max(scores, 1))
        weights = tl.exp2(scores - new_max[:, None])
        shrink = tl.exp2(m_i - new_max)
        l_i = l_i * shrink + tl.sum(weights, 1)
        acc = acc * shrink[:, None] + tl.dot(weights, vt, input_precision="ieee")
        m_i = new_max
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])
''',
    }),
}


# Round 38z16 (its ex10 copy respelled statement by statement with its comments dropped is the copy the threat model
# says is missed; its ex02 learner comparing with ref in a scratch cell goes to review: both open, no row).
ROUND_38Z16 = {
    'ex10 blocks counted as blocks of 4 tokens, manager block_size never read': ('ATTACKS', 'ex10_scheduler_step', {
        'schedule-work': r'''def blocks_for(num_tokens, block_size=4):
    """How many KV blocks a prompt of num_tokens needs (rounded up)."""
    return (num_tokens + block_size - 1) // block_size


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    # phase 1: every running request decodes one token, oldest first
    i = 0
    while i < len(running):
        r = running[i]
        if manager.can_append(r.seq_id):
            manager.append(r.seq_id, len(r.tokens))
            r.tokens.append(len(r.tokens))
            step.grown.append(r.seq_id)
            i += 1
            continue
        # out of blocks: the youngest request that has not grown yet goes (maybe r itself)
        victim = running.pop()
        manager.free(victim.seq_id)
        waiting.appendleft(victim)   # preempted youngest first, so the oldest ends up in front
        step.preempted.append(victim.seq_id)
    step.num_tokens = len(step.grown)
    if step.preempted:
        return step
    # phase 2: admit from the front of the queue, first come first served
    while waiting:
        cand = waiting[0]
        need = blocks_for(len(cand.tokens))
        if need + manager.watermark_blocks > manager.num_free_blocks:
            break
        if step.num_tokens + len(cand.tokens) > max_num_batched_tokens:
            break
        waiting.popleft()
        manager.add(cand.seq_id, cand.tokens)
        running.append(cand)
        step.admitted.append(cand.seq_id)
        step.num_tokens += len(cand.tokens)
    return step
''',
    }),
    'ex01 view to batches for bmm, raising on strided inputs': ('ATTACKS', 'ex01_naive_attention', {
        'mask-work': r'''def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    offset = n_k - n_q          # the cached keys in front of the new queries
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=offset)
''',
        'attention-work': r'''def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    *lead, n_q, d = q.shape
    n_k = k.shape[-2]
    # bmm wants exactly one batch dimension: fold every leading dim into it
    Q = q.float().view(-1, n_q, d)
    K = k.float().view(-1, n_k, d)
    V = v.float().view(-1, n_k, d)
    scores = torch.bmm(Q, K.transpose(1, 2)) * (1.0 / math.sqrt(d))
    if causal:
        scores = scores.masked_fill(~causal_mask(n_q, n_k), float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    out = torch.bmm(probs, V)
    return out.view(*lead, n_q, d).to(q.dtype)
''',
    }),
    'ex05 one byte for float8_e4m3fn only, four for float8_e5m2': ('ATTACKS', 'ex05_kv_cache_size', {
        'formula-work': r'''def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    per_vector = head_dim * bytes_per_element          # one K (or V) vector of one head
    per_token_layer = 2 * num_kv_heads * per_vector    # K and V, all KV heads
    return per_token_layer * num_layers * num_tokens * batch
''',
        'models-work': r'''def element_bytes(dtype):
    # fp8 is 1 byte, half types 2 bytes, otherwise fp32
    if dtype == torch.float8_e4m3fn:
        return 1
    if dtype in (torch.float16, torch.bfloat16):
        return 2
    return 4


def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, element_bytes(dtype))
''',
        'fit-work': r'''def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    reservation = max_len * kv_bytes_per_token(model, dtype)
    total_bytes = int(budget_gib * GiB)
    return total_bytes // reservation
''',
    }),
    'ex00 x viewed as rows, raising on a strided input': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude.

    Args:
        x: (..., n) floating-point tensor of scores.

    Returns:
        A tensor like ``x`` (same shape and dtype) whose rows are non-negative and sum to 1.
    """
    n = x.shape[-1]
    rows = x.view(-1, n)                          # a 2-D table: one row of scores per line
    biggest = rows.max(dim=1, keepdim=True).values
    shifted = (rows - biggest).exp()              # every exponent <= 0, so no overflow
    probs = shifted / shifted.sum(dim=1, keepdim=True)
    return probs.view(x.shape)
''',
    }),
    'ex07 helper methods, comments of its own, an assert cell': ('HONEST', 'ex07_copy_on_write', {
        'manager-work': r'''class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    # my helpers ---------------------------------------------------------
    def _is_shared(self, b):
        # more than one table points at b -> nobody may write into it in place
        return self.allocator.refcount(b) >= 2

    def _needs_fresh_block(self, tbl):
        # the next token starts a new block when the used slots fill whole blocks exactly
        return tbl.num_tokens == len(tbl.block_ids) * self.block_size

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        src_tbl = self.tables[parent]
        ids = [b for b in src_tbl.block_ids]
        for b in ids:                       # every block gains the child as an owner
            self.allocator.incref(b)
        new_tbl = BlockTable(ids, src_tbl.num_tokens, self.block_size)
        self.tables[child] = new_tbl
        return new_tbl

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        tbl = self.tables[seq]
        pos = tbl.num_tokens
        cow = None
        if self._needs_fresh_block(tbl):
            fresh = self.allocator.allocate()      # may raise; nothing touched yet
            tbl.block_ids.append(fresh)
        elif self._is_shared(tbl.block_ids[-1]):
            fresh = self.allocator.allocate()      # may raise; nothing touched yet
            old = tbl.block_ids[-1]
            tbl.block_ids[-1] = fresh
            self.allocator.free(old)               # drop just our reference; the other owner keeps it
            cow = (old, fresh)
        tbl.num_tokens = pos + 1
        return tbl.slot(pos), cow


# scratch: try it on a tiny pool
_m = MiniManager(4, 2)
_m.add("a", 3)
_m.fork("a", "b")
print(_m.append("b"))
assert _m.allocator.refcount(_m.tables["a"].block_ids[0]) == 2
print({s: list(t.block_ids) for s, t in _m.tables.items()})
''',
    }),
    'ex09 stretch a while loop for bounds, merge by logsumexp and einsum in float64': ('HONEST', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    # L = ceil(context_len / num_splits), then rounded up to whole key tiles
    per = (context_len + num_splits - 1) // num_splits
    tiles = (per + block_n - 1) // block_n
    L = tiles * block_n
    out = []
    s = 0
    while s < num_splits:
        lo = s * L
        if lo >= context_len:             # empty split: sits at the very end
            out.append((context_len, context_len))
        else:
            out.append((lo, min(lo + L, context_len)))
        s += 1
    return out
''',
        'merge-work': r'''def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # The union's normaliser is sum_s exp(lse_s), i.e. the merged lse is logsumexp over the splits.
    # Each split then weighs in with exp(lse_s - lse), a number in [0, 1]: no positive exponent anywhere.
    o64, l64 = outs.double(), lses.double()
    lse = torch.logsumexp(l64, dim=-1)                       # (...)
    weights = torch.exp(l64 - lse.unsqueeze(-1))             # (..., S), empty splits give exactly 0
    merged = torch.einsum("...s,...sd->...d", weights, o64)
    return merged.to(outs.dtype), lse.to(lses.dtype)
''',
        'cascade-work': r'''def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    shared_tables = prefix_table.unsqueeze(0).repeat(n, 1)
    shared_lens = torch.full_like(own_lens, prefix_len)
    o1, l1 = paged_decode_split(q, k_cache, v_cache, shared_tables, shared_lens, 1)
    o2, l2 = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    merged, _lse = merge_states(torch.cat((o1, o2), 2), torch.cat((l1, l2), 2))
    return merged


_b = split_bounds(1000, 4, 16)
print(_b)
assert _b[0][0] == 0 and _b[-1][1] == 1000
_o, _l = merge_states(torch.randn(2, 3, 8), torch.tensor([[0.0, float("-inf"), 5.0]] * 2))
print(_o.shape, _l)
''',
    }),
    'ex07 stretch blocks and genuine helpers, early returns': ('HONEST', 'ex07_stretch_prefix_cache_match', {
        'cache-work': r'''Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def _blocks(self, tokens):
        # only full blocks count; a tail shorter than block_size is dropped
        bs = self.block_size
        n_full = len(tokens) // bs
        return [tuple(tokens[b * bs:(b + 1) * bs]) for b in range(n_full)]

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        chain, prev = [], None
        for blk in self._blocks(tokens):
            prev = self.hash_fn(prev, blk)   # key_i depends on key_{i-1}
            chain.append(prev)
        return chain

    def _genuine(self, block_id, blk, expected_parent):
        # a hash hit is only trusted when both the tokens and the predecessor agree
        e = self.entry[block_id]
        return e.tokens == blk and e.parent_id == expected_parent

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        limit = (len(tokens) - 1) // self.block_size     # leave at least one token to compute
        found, parent = [], None
        for blk, key in zip(self._blocks(tokens), self.keys(tokens)):
            if len(found) == limit:
                return found
            bid = self.block_of.get(key)
            if bid is None or not self._genuine(bid, blk, parent):
                return found
            found.append(bid)
            parent = self.entry[bid].prefix_id
        return found
''',
    }),
    'ex10 a cursor, a list of victims, math ceil, asserts': ('HONEST', 'ex10_scheduler_step', {
        'schedule-work': r'''import math


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    victims = []                 # preempted this step, newest first
    nxt = 0                      # running[:nxt] have grown already
    while nxt < len(running):
        req = running[nxt]
        if not manager.can_append(req.seq_id):
            newest = running.pop()          # the newest not yet grown; possibly req itself
            manager.free(newest.seq_id)
            victims.append(newest)
            step.preempted.append(newest.seq_id)
            continue
        token = len(req.tokens)
        manager.append(req.seq_id, token)
        req.tokens.append(token)
        step.grown.append(req.seq_id)
        nxt += 1
    # back to the front of the queue, the oldest first
    for req in victims:
        waiting.appendleft(req)
    step.num_tokens = len(step.grown)
    assert len(running) == len(step.grown)
    if victims:
        return step
    budget_left = max_num_batched_tokens - step.num_tokens
    while len(waiting) > 0:
        head = waiting[0]
        blocks = math.ceil(len(head.tokens) / manager.block_size)
        fits_pool = blocks + manager.watermark_blocks <= manager.num_free_blocks
        fits_budget = len(head.tokens) <= budget_left
        if not (fits_pool and fits_budget):
            break                             # first come, first served: nobody jumps the queue
        waiting.popleft()
        manager.add(head.seq_id, head.tokens)
        running.append(head)
        step.admitted.append(head.seq_id)
        step.num_tokens += len(head.tokens)
        budget_left -= len(head.tokens)
    return step
''',
    }),
}



# Round 38z17 (an outside review against c182031; its wrong answers that passed, and its honest learners)
ROUND_38Z17 = {
    "ex04b read_report's shared_kib by floor division, whole KiB": ('ATTACKS', 'ex04b_performance_lab', {
        'choose-work': r'''
# my picks from the fwd autotuning space (BLOCK_M, BLOCK_N, num_warps, num_stages)
MY_CONFIGS = [
    (64, 32, 4, 2),     # small, should fit easily
    (64, 128, 4, 3),    # same BLOCK_M, wider BLOCK_N
    (128, 128, 4, 2),   # probably spills: 128*128 acc + scores on 128 threads
]
''',
        'predict-resources-work': r'''
def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    BF16 = 2
    q_tile = block_m * head_dim * BF16
    kv_buffers = num_stages * (block_n * head_dim * BF16) * 2      # K and V, each num_stages deep
    threads = 32 * num_warps
    live = block_m * head_dim + 1.5 * block_m * block_n            # O in fp32 + S/P (1.5 regs per score)
    regs = live / threads
    return {"shared_bytes": q_tile + kv_buffers, "registers": regs, "spills": regs > 255}
''',
        'exp-work': r'''
def exp2_per_score(report: dict) -> float:
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    n_threads = 32 * report["num_warps"]
    per_thread = report["block_m"] * report["block_n"] / n_threads
    loops = 2   # fwd_tiles unmasked + masked
    return report["sass"]["MUFU.EX2"] / (loops * per_thread)
''',
        'budget-work': r'''
def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    per_product = 2 * block_m * block_n * head_dim
    total_flops = 2 * per_product                  # S = QK^T and PV
    kv_bytes = 2 * (block_n * head_dim) * 2        # a K tile and a V tile, bf16
    n_exp = block_m * block_n
    mma_clocks = total_flops / mma_flops_per_clock
    exp_clocks = n_exp / exp_per_clock
    return dict(flops=total_flops, bytes=kv_bytes, exps=n_exp, flops_per_byte=total_flops / kv_bytes,
                exp_fraction=exp_clocks / mma_clocks)
''',
        'bwd-work': r'''
def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    exps_per_score, products = 2, 7
    mma_clocks_per_score = products * 2 * head_dim / mma_flops_per_clock
    return (exps_per_score / exp_per_clock) / mma_clocks_per_score
''',
        'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    best, best_key = None, None
    for idx, rep in enumerate(reports):
        if rep["arch"] != 90 or rep["spill_bytes"] > 0:
            continue        # only non-spilling H100 compiles count
        key = (rep["block_m"], rep["block_n"])
        if best_key is None or key > best_key:
            best, best_key = idx, key
    return best
''',
        'read-work': r'''
def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    counts = report["sass"]
    mma = "HGMMA" if counts["HGMMA"] else "HMMA"
    load = "UTMALDG" if counts["UTMALDG"] else "LDGSTS"
    return {"registers": report["registers"], "spill_bytes": report["spill_bytes"],
            "shared_kib": report["shared_bytes"] // 1024, "matrix": mma, "loads": load}
''',
    }),
    'ex04b predict keeping the last of equal maxima, its own read_report': ('HONEST', 'ex04b_performance_lab', {
        'choose-work': r'''
# my picks from the fwd autotuning space (BLOCK_M, BLOCK_N, num_warps, num_stages)
MY_CONFIGS = [
    (64, 32, 4, 2),     # small, should fit easily
    (64, 128, 4, 3),    # same BLOCK_M, wider BLOCK_N
    (128, 128, 4, 2),   # probably spills: 128*128 acc + scores on 128 threads
]
''',
        'predict-resources-work': r'''
def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    BF16 = 2
    q_tile = block_m * head_dim * BF16
    kv_buffers = num_stages * (block_n * head_dim * BF16) * 2      # K and V, each num_stages deep
    threads = 32 * num_warps
    live = block_m * head_dim + 1.5 * block_m * block_n            # O in fp32 + S/P (1.5 regs per score)
    regs = live / threads
    return {"shared_bytes": q_tile + kv_buffers, "registers": regs, "spills": regs > 255}
''',
        'exp-work': r'''
def exp2_per_score(report: dict) -> float:
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    n_threads = 32 * report["num_warps"]
    per_thread = report["block_m"] * report["block_n"] / n_threads
    loops = 2   # fwd_tiles unmasked + masked
    return report["sass"]["MUFU.EX2"] / (loops * per_thread)
''',
        'budget-work': r'''
def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    per_product = 2 * block_m * block_n * head_dim
    total_flops = 2 * per_product                  # S = QK^T and PV
    kv_bytes = 2 * (block_n * head_dim) * 2        # a K tile and a V tile, bf16
    n_exp = block_m * block_n
    mma_clocks = total_flops / mma_flops_per_clock
    exp_clocks = n_exp / exp_per_clock
    return dict(flops=total_flops, bytes=kv_bytes, exps=n_exp, flops_per_byte=total_flops / kv_bytes,
                exp_fraction=exp_clocks / mma_clocks)
''',
        'bwd-work': r'''
def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    exps_per_score, products = 2, 7
    mma_clocks_per_score = products * 2 * head_dim / mma_flops_per_clock
    return (exps_per_score / exp_per_clock) / mma_clocks_per_score
''',
        'read-work': r'''
def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    counts = report["sass"]
    mma = "HGMMA" if counts["HGMMA"] else "HMMA"
    load = "UTMALDG" if counts["UTMALDG"] else "LDGSTS"
    return {"registers": report["registers"], "spill_bytes": report["spill_bytes"],
            "shared_kib": report["shared_bytes"] / 1024, "matrix": mma, "loads": load}
''',
        'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    best, best_key = None, None
    for idx, rep in enumerate(reports):
        if rep["arch"] != 90 or rep["spill_bytes"] > 0:
            continue        # only non-spilling H100 compiles count
        key = (rep["block_m"], rep["block_n"])
        if best_key is None or key >= best_key:
            best, best_key = idx, key
    return best
''',
    }),
    "ex02 tiled_attention by query tiles only, a strip of every key's scores softmaxed at once": ('ATTACKS', 'ex02_online_softmax', {
        'update-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    new_max = torch.maximum(m, s.amax(dim=-1))
    rescale = torch.exp(m - new_max)
    weights = torch.exp(s - new_max[:, None])
    return new_max, rescale * l + weights.sum(dim=-1), rescale[:, None] * acc + weights @ v_tile
''',
        'tiled-work': r'''
def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    kf, vf = k.float(), v.float()
    for start in range(0, n_q, block_m):
        qt = q[start:start + block_m].float() / math.sqrt(d)
        nrows = qt.shape[0]
        scores = qt @ kf.T                       # this query tile against all keys
        if causal:
            pos_q = torch.arange(start, start + nrows)[:, None] + (n_k - n_q)
            scores = scores.masked_fill(torch.arange(n_k)[None, :] > pos_q, -math.inf)
        mx = scores.amax(dim=-1, keepdim=True)
        w = torch.exp(scores - mx)
        out[start:start + nrows] = (w @ vf) / w.sum(dim=-1, keepdim=True)
    return out.to(q.dtype)
''',
    }),
    "ex07 stretch's match dropping the prompt's last token by tokens pop, the caller's list cut": ('ATTACKS', 'ex07_stretch_prefix_cache_match', {
        'cache-work': r'''
Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        out, prev = [], None
        n_full = len(tokens) // self.block_size
        for b in range(n_full):
            chunk = tuple(tokens[b * self.block_size:(b + 1) * self.block_size])
            prev = self.hash_fn(prev, chunk)
            out.append(prev)
        return out

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        tokens.pop()            # the last token must always be recomputed, so drop it before looking up
        found, parent = [], None
        for b, key in enumerate(self.keys(tokens)):
            if key not in self.block_of:
                break
            e = self.entry[self.block_of[key]]
            if e.parent_id != parent or e.tokens != tuple(tokens[b * self.block_size:(b + 1) * self.block_size]):
                break
            found.append(self.block_of[key])
            parent = e.prefix_id
        return found
''',
    }),
    'ex00 softmax by logsumexp of max-shifted scores, float32 inside for half types, scratch prints': ('HONEST', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    shifted = work - work.amax(dim=-1, keepdim=True)      # largest score becomes 0: nothing overflows
    log_norm = torch.logsumexp(shifted, dim=-1, keepdim=True)   # in [0, log n]: no precision lost
    probs = torch.exp(shifted - log_norm)
    return probs.to(x.dtype)

demo = torch.tensor([[1.0, 2.0, 3.0], [1e4, 1e4 + 1, -1e4]])
print(softmax_rows(demo))
print(softmax_rows(demo).sum(-1))
assert torch.allclose(softmax_rows(demo), torch.softmax(demo, -1))
%timeit softmax_rows(torch.randn(64, 512))
''',
    }),
    'ex05 own formulas, the budget divided by a reservation in GiB': ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''
def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    one_vector = head_dim * bytes_per_element           # one K (or V) vector of one head
    per_layer_per_token = 2 * num_kv_heads * one_vector  # K and V for every KV head
    return per_layer_per_token * num_layers * num_tokens * batch
''',
        'models-work': r'''
def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    size = dtype.itemsize                 # bytes, not bits
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, num_tokens=1, batch=1,
                          bytes_per_element=size)

assert kv_bytes_per_token(OPT_13B, torch.float16) == 800 * 1024
''',
        'fit-work': r'''
import math

def reservation_gib(model, max_len, dtype):
    return kv_bytes_per_token(model, dtype) * max_len / GiB

def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    return math.floor(budget_gib / reservation_gib(model, max_len, dtype))

print(max_concurrent_requests(12, OPT_13B, 2048, torch.float16), "OPT-13B requests in 12 GiB")
''',
    }),
    'ex08 preemption_seconds by the exact sum over positions, own helper': ('HONEST', 'ex08_swap_or_recompute', {
        'costs-work': r'''
def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    n_blocks = -(-num_tokens // block_size)
    chunks = 2 * num_layers * n_blocks              # K and V per layer per block
    per_chunk = latency + (block_size * chunk_bytes_per_token) / bandwidth
    return 2 * chunks * per_chunk                   # out and back in


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    total = 2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens ** 2
    return total / flops

print(swap_seconds(1024, 16, 40, 10240, 31.5e9, 10e-6), recompute_seconds(1024, 12.9e9, 40, 5120, 156e12))
''',
        'crossover-work': r'''
def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # 4 L n latency / B + 4 L n c / bw = T   =>   B = 4 L n latency / (T - 4 L n c / bw)
    k = 4 * num_layers * num_tokens
    room = recompute_seconds - k * chunk_bytes_per_token / bandwidth
    if room <= 0:
        return math.inf
    return k * latency / room
''',
        'choose-work': r'''
def _cached_tokens(manager, table):
    """Tokens in the leading blocks that are shared and full."""
    count = 0
    for i, b in enumerate(table.block_ids):
        full = (i + 1) * manager.block_size <= table.num_tokens
        if manager.allocator.refcount(b) > 1 and full:
            count += manager.block_size
        else:
            break
    return count


def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    table = manager.table(seq_id)
    bs = manager.block_size
    private = sum(1 for b in table.block_ids if manager.allocator.refcount(b) == 1)
    per_token_chunk = model.num_kv_heads * model.head_dim * 2      # bf16
    t_swap = swap_seconds(private * bs, bs, model.num_layers, per_token_chunk, bandwidth, latency)
    c, n = _cached_tokens(manager, table), table.num_tokens
    d_model = model.num_heads * model.head_dim
    # exact: token p costs 2N + 4 L d_model p FLOPs; summed over p = c .. n-1
    attn = 4 * model.num_layers * d_model * (n * (n - 1) - c * (c - 1)) / 2
    t_rec = (2 * num_params * (n - c) + attn) / flops
    return t_swap, t_rec


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if manager.can_swap_out(seq_id):
        swap_t, rec_t = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
        if swap_t < rec_t:
            return "swap"
    return "recompute"
''',
    }),
    'ex09 stretch merge by torch softmax of the lses, split_bounds as a comprehension': ('HONEST', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    tiles = -(-context_len // block_n)              # key tiles in the context
    tiles_per_split = -(-tiles // num_splits)       # whole tiles each split gets
    span = tiles_per_split * block_n
    return [(min(i * span, context_len), min((i + 1) * span, context_len)) for i in range(num_splits)]

print(split_bounds(100, 3, 16))
''',
        'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # weight of split s is e^{lse_s} / sum_t e^{lse_t}: a softmax over the splits (stable, -inf gives 0)
    weights = torch.softmax(lses, dim=-1)
    merged = torch.einsum("...s,...sd->...d", weights, outs)
    return merged, torch.logsumexp(lses, dim=-1)
''',
    }),
    'ex10 schedule_step by an index over running, victims put back after': ('HONEST', 'ex10_scheduler_step', {
        'schedule-work': r'''
def _blocks_for(manager, req):
    return (len(req.tokens) + manager.block_size - 1) // manager.block_size


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    victims = []                       # newest first, as they are taken
    i = 0
    while i < len(running):
        req = running[i]
        while not manager.can_append(req.seq_id) and len(running) - 1 > i:
            victim = running.pop()     # newest that has not grown yet
            manager.free(victim.seq_id)
            victims.append(victim)
            step.preempted.append(victim.seq_id)
        if not manager.can_append(req.seq_id):
            running.pop(i)             # it is the newest left: preempt itself
            manager.free(req.seq_id)
            victims.append(req)
            step.preempted.append(req.seq_id)
            break
        tok = len(req.tokens)
        manager.append(req.seq_id, tok)
        req.tokens.append(tok)
        step.grown.append(req.seq_id)
        i += 1
    for v in victims:                  # newest first: the oldest ends up at the very front
        waiting.appendleft(v)
    budget_used = len(step.grown)
    if not step.preempted:
        while waiting:
            cand = waiting[0]
            need = _blocks_for(manager, cand) + manager.watermark_blocks
            if need > manager.num_free_blocks or budget_used + len(cand.tokens) > max_num_batched_tokens:
                break
            waiting.popleft()
            manager.add(cand.seq_id, cand.tokens)
            running.append(cand)
            step.admitted.append(cand.seq_id)
            budget_used += len(cand.tokens)
    step.num_tokens = budget_used
    return step
''',
    }),
    'ex06 allocator with its own validation helper and divmod boundaries': ('HONEST', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _valid(self, block):
        return isinstance(block, int) and 0 <= block < self.num_blocks

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        return self.allocate_many(1)[0]

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        have = len(self.free_list)
        if n > have:
            raise OutOfBlocks(n, have, self.num_blocks)
        taken = []
        for _ in range(n):
            blk = self.free_list.pop()
            self.ref_count[blk] = 1
            taken.append(blk)
        return taken

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        if not self._valid(block) or self.ref_count[block] < 1:
            raise ValueError(f"incref({block}): not an allocated block")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        if not self._valid(block):
            raise ValueError(f"free({block}): id out of range 0..{self.num_blocks - 1}")
        if self.ref_count[block] < 1:
            raise ValueError(f"free({block}): already free")
        self.ref_count[block] -= 1
        if not self.ref_count[block]:
            self.free_list.append(block)
''',
        'boundary-work': r'''
def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    whole, rest = divmod(num_tokens, block_size)
    return whole + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    logical, offset = divmod(position, block_size)
    return block_ids[logical] * block_size + offset

pool = SimpleAllocator(4)
a, b = pool.allocate(), pool.allocate()
pool.incref(a)
pool.free(a)
print(a, b, pool.ref_count, pool.num_free, blocks_needed(17, 16), slot([7, 3], 16, 17))
''',
    }),
    # (fay's scratch cell of ex02 compares with ref.tiled_attention, which ex02's grading copy does not hold: there
    # the cell raises, and the notebook passed in the sandbox; here, a reference the grading copy keeps and watches)
    'ex05 kv_bytes_per_token checked against OPT_13B own method by assert and assert_close': ('HONEST', 'ex05_kv_cache_size', {
        'models-work': r'''
def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, 1, 1, dtype.itemsize)


# my own check against the course's numbers
for dt in (torch.float16, torch.float32, torch.bfloat16):
    assert kv_bytes_per_token(OPT_13B, dt) == OPT_13B.kv_bytes_per_token(dt.itemsize), dt
torch.testing.assert_close(kv_bytes_per_token(OPT_13B, torch.float8_e4m3fn), OPT_13B.kv_bytes_per_token(1))
print("per token, fp16:", kv_bytes_per_token(OPT_13B, torch.float16))
''',
    }),
}


# An audit of every spec against its statement after round 38z17 (each stated value drawn on some seeds only, or never)
ROUND_38Z17_AUDIT = {
    'ex04b spills judged against the 64K register file': ('ATTACKS', 'ex04b_performance_lab', {
        'predict-resources-work': r'''
def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    shared = (block_m * head_dim + num_stages * 2 * block_n * head_dim) * 2
    registers = (block_m * head_dim + 1.5 * block_m * block_n) / (32 * num_warps)
    return {"shared_bytes": shared, "registers": registers, "spills": registers * 32 * num_warps > 65536}
''',
    }),
    'ex04b spills with 32 registers of overhead': ('ATTACKS', 'ex04b_performance_lab', {
        'predict-resources-work': r'''
def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    shared = (block_m * head_dim + num_stages * 2 * block_n * head_dim) * 2
    registers = (block_m * head_dim + 1.5 * block_m * block_n) / (32 * num_warps)
    return {"shared_bytes": shared, "registers": registers, "spills": registers + 32 > 255}
''',
    }),
    'ex04b matrix instruction told by the arch': ('ATTACKS', 'ex04b_performance_lab', {
        'read-work': r'''
def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    sass = report["sass"]
    return {"registers": report["registers"], "spill_bytes": report["spill_bytes"],
            "shared_kib": report["shared_bytes"] / 1024,
            "matrix": "HGMMA" if report["arch"] == 90 else "HMMA",
            "loads": "UTMALDG" if sass["UTMALDG"] > 0 else "LDGSTS"}
''',
    }),
    'ex04b predict by tile area': ('ATTACKS', 'ex04b_performance_lab', {
        'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    hopper = [i for i, r in enumerate(reports) if r["arch"] == 90 and r["spill_bytes"] == 0]
    return max(hopper, key=lambda i: reports[i]["block_m"] * reports[i]["block_n"])
''',
    }),
    'ex04b predict ignoring the arch': ('ATTACKS', 'ex04b_performance_lab', {
        'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    hopper = [i for i, r in enumerate(reports) if r["spill_bytes"] == 0]
    return max(hopper, key=lambda i: (reports[i]["block_m"], reports[i]["block_n"]))
''',
    }),
    'ex04b predict by BLOCK_N first': ('ATTACKS', 'ex04b_performance_lab', {
        'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    hopper = [i for i, r in enumerate(reports) if r["arch"] == 90 and r["spill_bytes"] == 0]
    return max(hopper, key=lambda i: (reports[i]["block_n"], reports[i]["block_m"]))
''',
    }),
    'ex06 allocate_many by a negative slice, none asked takes all': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        ### BEGIN SOLUTION
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        block = self.free_list.pop()
        self.ref_count[block] = 1
        return block
        ### END SOLUTION

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        ### BEGIN SOLUTION
        if n > len(self.free_list):
            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)
        taken = self.free_list[-n:][::-1]
        del self.free_list[-n:]
        for b in taken:
            self.ref_count[b] = 1
        return taken
        ### END SOLUTION

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        ### BEGIN SOLUTION
        if not 0 <= block < self.num_blocks or self.ref_count[block] == 0:
            raise ValueError(f"block {block} is not allocated, so it cannot be shared")
        self.ref_count[block] += 1
        ### END SOLUTION

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        ### BEGIN SOLUTION
        if not 0 <= block < self.num_blocks:
            raise ValueError(f"block {block} is not in this pool")
        if self.ref_count[block] == 0:
            raise ValueError(f"double free: block {block} is already free")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
        ### END SOLUTION''',
    }),
    'ex06 incref letting num_blocks through': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        ### BEGIN SOLUTION
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        block = self.free_list.pop()
        self.ref_count[block] = 1
        return block
        ### END SOLUTION

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        ### BEGIN SOLUTION
        if n > len(self.free_list):
            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)
        return [self.allocate() for _ in range(n)]
        ### END SOLUTION

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        ### BEGIN SOLUTION
        if block < 0 or block > self.num_blocks or self.ref_count[block] == 0:
            raise ValueError(f"block {block} is not allocated, so it cannot be shared")
        self.ref_count[block] += 1
        ### END SOLUTION

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        ### BEGIN SOLUTION
        if not 0 <= block < self.num_blocks:
            raise ValueError(f"block {block} is not in this pool")
        if self.ref_count[block] == 0:
            raise ValueError(f"double free: block {block} is already free")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
        ### END SOLUTION''',
    }),
    'ex06 incref refusing the last block': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        ### BEGIN SOLUTION
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        block = self.free_list.pop()
        self.ref_count[block] = 1
        return block
        ### END SOLUTION

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        ### BEGIN SOLUTION
        if n > len(self.free_list):
            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)
        return [self.allocate() for _ in range(n)]
        ### END SOLUTION

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        ### BEGIN SOLUTION
        if not 0 <= block < self.num_blocks - 1 or self.ref_count[block] == 0:
            raise ValueError(f"block {block} is not allocated, so it cannot be shared")
        self.ref_count[block] += 1
        ### END SOLUTION

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        ### BEGIN SOLUTION
        if not 0 <= block < self.num_blocks:
            raise ValueError(f"block {block} is not in this pool")
        if self.ref_count[block] == 0:
            raise ValueError(f"double free: block {block} is already free")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
        ### END SOLUTION''',
    }),
}


# Round 38z18 (an outside review against 1183afc; its wrong answers, caught or not, and its honest learners)
ROUND_38Z18 = {
    'ex01 naive_attention scaling q in place on the path without the mask': ('ATTACKS', 'ex01_naive_attention', {
        'attention-work': r'''
def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    d = q.shape[-1]
    q32, k32, v32 = q.float(), k.float(), v.float()
    if causal:
        scores = q32 @ k32.transpose(-2, -1) / math.sqrt(d)
        keep = causal_mask(q.shape[-2], k.shape[-2])
        scores = scores.masked_fill(~keep, float("-inf"))
    else:
        # no mask needed: fold the 1/sqrt(d) into q first, one multiply per q element instead of per score
        scores = q32.mul_(1.0 / math.sqrt(d)) @ k32.transpose(-2, -1)
    probs = torch.softmax(scores, dim=-1)
    return (probs @ v32).to(q.dtype)
''',
        'mask-work': r'''
def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)
''',
    }),
    'ex03 softmax_kernel of one block, its launcher widening BLOCK to the row': ('ATTACKS', 'ex03_triton_basics', {
        'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    # one program per row; the whole row sits in one block of BLOCK lanes
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    valid = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=valid, other=float("-inf"))
    mx = tl.max(x, 0)
    e = tl.exp(x - mx)
    total = tl.sum(e, 0)
    tl.store(out_ptr + row * stride_out + cols, e / total, mask=valid)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    lanes = max(block, triton.next_power_of_2(x.shape[1]))  # a block wide enough for the whole row
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=lanes)
    return out
''',
        'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    first = tl.program_id(axis=0) * BLOCK
    idx = first + tl.arange(0, BLOCK)
    live = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=live, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=live, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=live)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.shape[0]
    num_programs = (n + block - 1) // block
    add_kernel[(num_programs,)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''',
    }),
    'ex09 stretch merge_states flattening by view, raising on transposed inputs': ('ATTACKS', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    chunk = (context_len + num_splits - 1) // num_splits
    chunk = ((chunk + block_n - 1) // block_n) * block_n
    result = []
    for s in range(num_splits):
        lo = min(s * chunk, context_len)
        hi = min(lo + chunk, context_len)
        result.append((lo, hi))
    return result
''',
        'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # flatten every leading dimension into one row index, merge row by row, then put the shape back
    lead = lses.shape[:-1]
    n_splits, d = outs.shape[-2], outs.shape[-1]
    o2 = outs.view(-1, n_splits, d)
    l2 = lses.view(-1, n_splits)
    top = l2.max(dim=1, keepdim=True).values
    wts = torch.exp(l2 - top)
    denom = wts.sum(dim=1, keepdim=True)
    merged = torch.einsum("rs,rsd->rd", wts, o2) / denom
    merged_lse = top.squeeze(1) + torch.log(denom.squeeze(1))
    return merged.view(*lead, d), merged_lse.view(lead)
''',
        'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    pt = prefix_table.unsqueeze(0).repeat(n, 1).contiguous()
    plen = torch.full_like(own_lens, prefix_len)
    a_out, a_lse = paged_decode_split(q, k_cache, v_cache, pt, plen, 1)
    b_out, b_lse = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    merged, _ = merge_states(torch.cat([a_out, b_out], dim=2), torch.cat([a_lse, b_lse], dim=2))
    return merged
''',
    }),
    'ex08 cached prefix as the last shared block plus one, wrong for a sequence never forked': ('ATTACKS', 'ex08_swap_or_recompute', {
        'costs-work': r'''
def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    n_blocks = -(-num_tokens // block_size)
    n_chunks = 2 * num_layers * n_blocks           # K and V, every layer, every block
    per_chunk = latency + block_size * chunk_bytes_per_token / bandwidth
    return 2 * n_chunks * per_chunk                # out and back in


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    work = 2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens ** 2
    return work / flops
''',
        'crossover-work': r'''
def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # 4 L n latency / B + 4 L n c / bw = T  =>  B = 4 L n latency / (T - 4 L n c / bw)
    fixed = 4 * num_layers * num_tokens
    room = recompute_seconds - fixed * chunk_bytes_per_token / bandwidth
    if room <= 0:
        return math.inf
    return fixed * latency / room
''',
        'choose-work': r'''
def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    bs = manager.block_size
    tab = manager.table(seq_id)
    n = tab.num_tokens
    counts = [manager.allocator.refcount(b) for b in tab.block_ids]
    mine = sum(1 for c in counts if c == 1)
    # shared blocks come first (the fork's prefix): the prefix ends after the last shared one
    last_shared = max((i for i, c in enumerate(counts) if c > 1), default=0)
    full = n // bs
    cached_tokens = min(last_shared + 1, full) * bs
    kv_chunk = model.num_kv_heads * model.head_dim * 2   # bf16
    t_swap = swap_seconds(mine * bs, bs, model.num_layers, kv_chunk, bandwidth, latency)
    width = model.num_heads * model.head_dim
    t_rec = (recompute_seconds(n, num_params, model.num_layers, width, flops)
             - recompute_seconds(cached_tokens, num_params, model.num_layers, width, flops))
    return t_swap, t_rec


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    t_swap, t_rec = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    if manager.can_swap_out(seq_id) and t_swap < t_rec:
        return "swap"
    return "recompute"
''',
    }),
    "ex05 kv_bytes_per_token by the library's ModelShape method": ('ATTACKS', 'ex05_kv_cache_size', {
        'formula-work': r'''
def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    return 2 * num_layers * num_kv_heads * head_dim * num_tokens * batch * bytes_per_element
''',
        'models-work': r'''
def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    # ModelShape already knows its own cache size: one token, one sequence
    return ModelShape.kv_cache_bytes(model, 1, 1, dtype.itemsize)
''',
        'fit-work': r'''
def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    reservation = kv_bytes_per_token(model, dtype) * max_len
    return int(budget_gib * GiB // reservation)
''',
    }),
    'ex10 a request grown by its last token plus one': ('ATTACKS', 'ex10_scheduler_step', {
        'schedule-work': r'''
def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    pending = list(running)      # oldest first
    running.clear()
    bumped = []                  # preempted this step, newest first
    while pending:
        req = pending.pop(0)
        if not manager.can_append(req.seq_id):
            victim = pending.pop() if pending else req
            manager.free(victim.seq_id)
            bumped.append(victim)
            step.preempted.append(victim.seq_id)
            if victim is req:
                continue
            pending.insert(0, req)   # try this one again
            continue
        nxt = req.tokens[-1] + 1     # the next token id
        manager.append(req.seq_id, nxt)
        req.tokens.append(nxt)
        running.append(req)
        step.grown.append(req.seq_id)
    for victim in bumped:            # newest first, so the oldest ends up in front
        waiting.appendleft(victim)
    used = len(step.grown)
    if not step.preempted:
        while waiting:
            cand = waiting[0]
            need = -(-len(cand.tokens) // manager.block_size)
            if need + manager.watermark_blocks > manager.num_free_blocks:
                break
            if used + len(cand.tokens) > max_num_batched_tokens:
                break
            waiting.popleft()
            manager.add(cand.seq_id, cand.tokens)
            running.append(cand)
            step.admitted.append(cand.seq_id)
            used += len(cand.tokens)
    step.num_tokens = used
    return step
''',
    }),
    'ex03 own names, loads with other 0, scratch cells and cell magic time': ('HONEST', 'ex03_triton_basics', {
        'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    block_start = tl.program_id(axis=0) * BLOCK
    idx = block_start + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.shape[0]
    num_programs = (n + block - 1) // block
    add_kernel[(num_programs,)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=block)
    return out
''',
        'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    src = x_ptr + r * stride_x
    dst = out_ptr + r * stride_out
    run_max = tl.full((), float("-inf"), tl.float32)
    run_sum = tl.full((), 0.0, tl.float32)
    # pass 1: online max and sum
    for c0 in range(0, n_cols, BLOCK):
        ok = c0 + offs < n_cols
        tile = tl.load(src + c0 + offs, mask=ok, other=float("-inf"))
        new_max = tl.maximum(run_max, tl.max(tile, axis=0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(tile - new_max), axis=0)
        run_max = new_max
    # pass 2: write normalized values
    for c0 in range(0, n_cols, BLOCK):
        ok = c0 + offs < n_cols
        tile = tl.load(src + c0 + offs, mask=ok, other=float("-inf"))
        tl.store(dst + c0 + offs, tl.exp(tile - run_max) / run_sum, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out

# my own quick test before the checks
a = torch.arange(10, dtype=torch.float32)
b = torch.ones(20)[::2]
res = vector_add(a, b, 4)
print(res)
assert torch.allclose(res, a + b)

# (a %%time cell in the notebook: one cell here, where a cell magic cannot stand mid-cell)
m = torch.randn(3, 50) * 10
mine = softmax(m, 8)
print("max abs diff vs torch:", (mine - torch.softmax(m, dim=1)).abs().max().item())
print("rows sum to", mine.sum(dim=1))
''',
    }),
    'ex05 factor by factor, keyword call, a print loop, guarded floor division': ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''
def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    per_vector = head_dim * bytes_per_element          # one head's key (or value) for one token
    per_token_layer = 2 * num_kv_heads * per_vector    # K and V
    total = per_token_layer * num_layers * num_tokens * batch
    return total
''',
        'models-work': r'''
def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    nbytes = dtype.itemsize
    return kv_cache_bytes(num_layers=model.num_layers, num_kv_heads=model.num_kv_heads, head_dim=model.head_dim,
                          num_tokens=1, batch=1, bytes_per_element=nbytes)
''',
        'fit-work': r'''
def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    budget_bytes = budget_gib * 2**30
    one_request = max_len * kv_bytes_per_token(model, dtype)
    count = 0
    if budget_bytes >= one_request:
        count = int(budget_bytes // one_request)
    return count

for shape in (OPT_13B,):
    for dt in (torch.float32, torch.float16, torch.float8_e4m3fn):
        print(shape.name, dt, kv_bytes_per_token(shape, dt) / 1024, "KiB per token")
''',
    }),
    'ex08 exact sum over positions, a helper, a matplotlib cell': ('HONEST', 'ex08_swap_or_recompute', {
        'costs-work': r'''
def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    n_blocks = -(-num_tokens // block_size)
    n_chunks = 2 * num_layers * n_blocks           # K and V, every layer, every block
    per_chunk = latency + block_size * chunk_bytes_per_token / bandwidth
    return 2 * n_chunks * per_chunk                # out and back in


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    work = 2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens ** 2
    return work / flops
''',
        'crossover-work': r'''
def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # 4 L n latency / B + 4 L n c / bw = T  =>  B = 4 L n latency / (T - 4 L n c / bw)
    fixed = 4 * num_layers * num_tokens
    room = recompute_seconds - fixed * chunk_bytes_per_token / bandwidth
    if room <= 0:
        return math.inf
    return fixed * latency / room
''',
        'choose-work': r'''
def _private_and_cached(manager, seq_id):
    """(number of blocks only this sequence holds, tokens in its leading full shared blocks)"""
    table = manager.table(seq_id)
    refs = [manager.allocator.refcount(block) for block in table.block_ids]
    private = len([r for r in refs if r == 1])
    lead = 0
    while lead < len(refs) and refs[lead] > 1:
        lead += 1
    lead = min(lead, table.num_tokens // manager.block_size)
    return private, lead * manager.block_size


def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    private, cached = _private_and_cached(manager, seq_id)
    n = manager.table(seq_id).num_tokens
    B = manager.block_size
    swap = swap_seconds(private * B, B, model.num_layers, 2 * model.num_kv_heads * model.head_dim, bandwidth, latency)
    d_model = model.num_heads * model.head_dim
    # exact sum over the recomputed positions p = cached .. n-1 of 2 N + 4 L d_model p
    linear = 2 * num_params * (n - cached)
    attn = 4 * model.num_layers * d_model * (n * (n - 1) // 2 - cached * (cached - 1) // 2)
    return swap, (linear + attn) / flops


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if manager.can_swap_out(seq_id):
        t_s, t_r = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
        if t_s < t_r:
            return "swap"
    return "recompute"

import matplotlib.pyplot as plt
sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256]
swap_t = [swap_seconds(2048, b, 40, 10240, 31.5e9, 10e-6) for b in sizes]
plt.loglog(sizes, swap_t, marker="o", label="swap")
plt.axhline(recompute_seconds(2048, 12.9e9, 40, 5120, 156e12), color="r", label="recompute")
plt.xlabel("block size"); plt.legend(); plt.show()
''',
    }),
    'ex09 stretch bounds from a list of edges, merge by unsqueeze, a scratch logsumexp test': ('HONEST', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    import math
    per = math.ceil(context_len / num_splits)
    per = math.ceil(per / block_n) * block_n
    edges = [min(i * per, context_len) for i in range(num_splits + 1)]
    return [(edges[i], edges[i + 1]) for i in range(num_splits)]
''',
        'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    ref_lse = torch.max(lses, dim=-1).values                 # (...)
    scale = torch.exp(lses - ref_lse.unsqueeze(-1))          # (..., S), every exponent <= 0
    norm = torch.sum(scale, dim=-1)                          # (...)
    o = torch.sum(outs * scale.unsqueeze(-1), dim=-2) / norm.unsqueeze(-1)
    return o, ref_lse + torch.log(norm)
''',
        'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    pt = prefix_table.unsqueeze(0).repeat(n, 1).contiguous()
    plen = torch.full_like(own_lens, prefix_len)
    a_out, a_lse = paged_decode_split(q, k_cache, v_cache, pt, plen, 1)
    b_out, b_lse = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    merged, _ = merge_states(torch.cat([a_out, b_out], dim=2), torch.cat([a_lse, b_lse], dim=2))
    return merged

# two halves of one row of scores, merged, must equal the softmax over the whole row
x = torch.randn(10); vv = torch.randn(10, 4)
def state(idx):
    w = torch.softmax(x[idx], 0)
    return w @ vv[idx], torch.logsumexp(x[idx], 0)
o1, l1 = state(slice(0, 6)); o2, l2 = state(slice(6, 10))
o, l = merge_states(torch.stack([o1, o2]), torch.stack([l1, l2]))
print(torch.allclose(o, torch.softmax(x, 0) @ vv, atol=1e-6), torch.allclose(l, torch.logsumexp(x, 0)))
''',
    }),
    'ex10 index loop with while else, extendleft of reversed victims, budget counted down': ('HONEST', 'ex10_scheduler_step', {
        'schedule-work': r'''
def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    i = 0
    kicked = []
    while i < len(running):
        r = running[i]
        while not manager.can_append(r.seq_id):
            newest = running.pop()          # the newest not yet grown (may be r itself)
            manager.free(newest.seq_id)
            kicked.insert(0, newest)        # older ones go in front
            step.preempted.append(newest.seq_id)
            if newest is r:
                break
        else:
            t = len(r.tokens)
            manager.append(r.seq_id, t)
            r.tokens.append(t)
            step.grown.append(r.seq_id)
            i += 1
            continue
        break   # r preempted itself: it was the last one
    waiting.extendleft(reversed(kicked))
    budget = max_num_batched_tokens - len(step.grown)
    while waiting and len(step.preempted) == 0:
        head = waiting[0]
        blocks = math.ceil(len(head.tokens) / manager.block_size)
        fits_pool = blocks + manager.watermark_blocks <= manager.num_free_blocks
        fits_budget = len(head.tokens) <= budget
        if not (fits_pool and fits_budget):
            break
        waiting.popleft()
        manager.add(head.seq_id, head.tokens)
        running.append(head)
        step.admitted.append(head.seq_id)
        budget -= len(head.tokens)
    step.num_tokens = max_num_batched_tokens - budget
    return step

import math
''',
    }),
    'ex09 block-table load without its mask': ('ATTACKS', 'ex09_paged_attention', {
        'kernel-work': r'''
@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    heads = group * kv_head + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        in_ctx = tokens < context_len
        # block ids of the tile's tokens; the K/V loads below are masked, so garbage ids past the context are harmless
        blk = tl.load(table + tokens // BLOCK_SIZE).to(tl.int64)
        pos = tokens % BLOCK_SIZE
        kt = tl.load(k_head + blk[None, :] * stride_kb + pos[None, :] * stride_kt + offs_d[:, None],
                     mask=in_ctx[None, :], other=0.0)
        vt = tl.load(v_head + blk[:, None] * stride_kb + pos[:, None] * stride_kt + offs_d[None, :],
                     mask=in_ctx[:, None], other=0.0)
        sc = tl.dot(q, kt, input_precision="ieee") * qk_scale
        sc = tl.where(in_ctx[None, :], sc, float("-inf"))
        mx = tl.maximum(m_i, tl.max(sc, 1))
        pr = tl.exp2(sc - mx[:, None])
        corr = tl.exp2(m_i - mx)
        l_i = corr * l_i + tl.sum(pr, 1)
        acc = corr[:, None] * acc + tl.dot(pr, vt, input_precision="ieee")
        m_i = mx
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])
''',
    }),
}


# An audit of every stated rule of behaviour after round 38z17 (inputs left as they were, a failed call changing nothing)
ROUND_38Z18_AUDIT = {
    'ex00 softmax in float64 in place, a float64 x overwritten': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    y = x.to(torch.float64)            # exact for every input dtype
    y -= y.amax(dim=-1, keepdim=True)  # in place: saves a copy
    y.exp_()
    y /= y.sum(dim=-1, keepdim=True)
    return y.to(x.dtype)
''',
    }),
    'ex02 tiled_attention scaling q in place': ('ATTACKS', 'ex02_online_softmax', {
        'tiled-work': r'''
def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    qs = q.float()
    qs /= math.sqrt(d)          # scale once, up front (in place: q itself when q is float32)
    for r0 in range(0, n_q, block_m):
        q_i = qs[r0:r0 + block_m]
        rows = q_i.shape[0]
        m = torch.full((rows,), -math.inf, device=q.device)
        l, acc = torch.zeros(rows, device=q.device), torch.zeros(rows, d, device=q.device)
        for c0 in range(0, n_k, block_n):
            if causal and c0 > r0 + rows - 1 + (n_k - n_q):
                break
            s = q_i @ k[c0:c0 + block_n].float().T
            if causal:
                hidden = (torch.arange(c0, c0 + s.shape[1], device=q.device)[None, :]
                          > torch.arange(r0, r0 + rows, device=q.device)[:, None] + (n_k - n_q))
                s = s.masked_fill(hidden, -math.inf)
            m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())
        out[r0:r0 + rows] = acc / l[:, None]
    return out.to(q.dtype)
''',
    }),
    'ex02 update overwriting its score tile s in place': ('ATTACKS', 'ex02_online_softmax', {
        'update-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    m_new = torch.maximum(m, s.amax(dim=-1))
    alpha = torch.exp(m - m_new)
    p = s.sub_(m_new.unsqueeze(-1)).exp_()   # the tile's scores are not needed again: reuse their memory
    l_new = alpha * l + p.sum(dim=-1)
    acc_new = alpha.unsqueeze(-1) * acc + p @ v_tile
    return m_new, l_new, acc_new
''',
    }),
    'ex02 update accumulating l and acc in place': ('HONEST', 'ex02_online_softmax', {
        'update-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    m_new = torch.maximum(m, s.amax(dim=-1))
    alpha = torch.exp(m - m_new)
    p = torch.exp(s - m_new.unsqueeze(-1))
    l.mul_(alpha).add_(p.sum(dim=-1))
    acc.mul_(alpha.unsqueeze(-1)).add_(p @ v_tile)
    return m_new, l, acc
''',
    }),
    'ex02 stretch scaling its query tile in place': ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    ### BEGIN SOLUTION
    m_new = torch.maximum(m, s.amax(dim=-1))
    m_ref = m_new.masked_fill(m_new == -math.inf, 0.0)   # a row with no visible key yet: exp(-inf - 0) = 0, not NaN
    alpha = torch.exp(m - m_ref)
    p = torch.exp(s - m_ref[:, None])
    return m_new, alpha * l + p.sum(dim=-1), alpha[:, None] * acc + p @ v_tile
    ### END SOLUTION


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    ### BEGIN SOLUTION
    for r0 in range(0, n_q, block_m):
        q_i = q[r0:r0 + block_m].float()
        q_i *= d ** -0.5
        rows = q_i.shape[0]
        n_full, n_visit = key_tile_counts(r0, rows, n_q, n_k, block_n)
        m = torch.full((rows,), -math.inf)
        l, acc = torch.zeros(rows), torch.zeros(rows, d)
        for t in range(n_visit):
            c0 = t * block_n
            s = q_i @ k[c0:c0 + block_n].float().T
            if t >= n_full:
                hidden = (torch.arange(c0, c0 + s.shape[1])[None, :]
                          > torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q))
                s = s.masked_fill(hidden, -math.inf)
            m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())
        seen = l > 0
        out[r0:r0 + rows] = torch.where(seen[:, None], acc / l.clamp_min(1e-30)[:, None], 0.0)
    ### END SOLUTION
    return out.to(q.dtype)''',
    }),
    'ex06 free counting down before its check': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        block = self.free_list.pop()
        self.ref_count[block] = 1
        return block

    def allocate_many(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)
        return [self.allocate() for _ in range(n)]

    def incref(self, block: int) -> None:
        if not 0 <= block < self.num_blocks or self.ref_count[block] <= 0:
            raise ValueError("not allocated")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        if not 0 <= block < self.num_blocks:
            raise ValueError("not in this pool")
        self.ref_count[block] -= 1
        if self.ref_count[block] < 0:
            raise ValueError("double free")
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''',
    }),
    'ex06 incref counting up before its check': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        block = self.free_list.pop()
        self.ref_count[block] = 1
        return block

    def allocate_many(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)
        return [self.allocate() for _ in range(n)]

    def incref(self, block: int) -> None:
        if not 0 <= block < self.num_blocks:
            raise ValueError("not in this pool")
        self.ref_count[block] += 1
        if self.ref_count[block] < 2:
            raise ValueError("not allocated")

    def free(self, block: int) -> None:
        if not 0 <= block < self.num_blocks:
            raise ValueError("not in this pool")
        if self.ref_count[block] == 0:
            raise ValueError("double free")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''',
    }),
    'ex06 allocate_many giving blocks back with their counts left at 1': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        if not self.free_list:
            raise OutOfBlocks(1, 0, self.num_blocks)
        block = self.free_list.pop()
        self.ref_count[block] = 1
        return block

    def allocate_many(self, n: int) -> list[int]:
        taken = []
        try:
            for _ in range(n):
                taken.append(self.allocate())
        except OutOfBlocks:
            self.free_list.extend(reversed(taken))
            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)
        return taken

    def incref(self, block: int) -> None:
        if not 0 <= block < self.num_blocks or self.ref_count[block] == 0:
            raise ValueError("not allocated")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        if not 0 <= block < self.num_blocks:
            raise ValueError("not in this pool")
        if self.ref_count[block] == 0:
            raise ValueError("double free")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''',
    }),
}


# Round 38z19 (an outside review against bd456e2; its wrong answers, caught or not, and its honest learners)
ROUND_38Z19 = {
    "ex07 fork returning the parent's table": ('ATTACKS', 'ex07_copy_on_write', {
        'manager-work': r'''
class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        src = self.tables[parent]
        for b in src.block_ids:
            self.allocator.incref(b)     # one more owner per block
        self.tables[child] = BlockTable(src.block_ids.copy(), src.num_tokens, self.block_size)
        return src

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        tab = self.tables[seq]
        pos = tab.num_tokens
        cow = None
        if pos % self.block_size == 0:
            fresh = self.allocator.allocate()
            tab.block_ids.append(fresh)
        else:
            last = tab.block_ids[-1]
            if self.allocator.refcount(last) > 1:
                fresh = self.allocator.allocate()   # may raise: nothing touched yet
                self.allocator.free(last)
                tab.block_ids[-1] = fresh
                cow = (last, fresh)
        tab.num_tokens = pos + 1
        return tab.slot(pos), cow
''',
    }),
    'ex10 a preempted request put back as a copy': ('ATTACKS', 'ex10_scheduler_step', {
        'schedule-work': r'''
def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    todo = list(running)
    done = []
    kicked = []
    while todo:
        req = todo.pop(0)
        ok = True
        while not manager.can_append(req.seq_id):
            victim = todo.pop() if todo else req
            manager.free(victim.seq_id)
            kicked.append(victim)
            step.preempted.append(victim.seq_id)
            if victim is req:
                ok = False
                break
        if ok:
            manager.append(req.seq_id, len(req.tokens))
            req.tokens.append(len(req.tokens))
            done.append(req)
            step.grown.append(req.seq_id)
    # back to the front of the queue, the older first; it will recompute from a fresh request
    for victim in kicked:
        waiting.appendleft(Request(victim.seq_id, list(victim.tokens)))
    running[:] = done
    step.num_tokens = len(step.grown)
    if not step.preempted:
        while waiting:
            nxt = waiting[0]
            need = -(-len(nxt.tokens) // manager.block_size)
            if need + manager.watermark_blocks > manager.num_free_blocks:
                break
            if step.num_tokens + len(nxt.tokens) > max_num_batched_tokens:
                break
            waiting.popleft()
            manager.add(nxt.seq_id, nxt.tokens)
            running.append(nxt)
            step.admitted.append(nxt.seq_id)
            step.num_tokens += len(nxt.tokens)
    return step
''',
    }),
    'ex04 stretch output made by empty_like of a view, not contiguous': ('ATTACKS', 'ex04_stretch_gqa_forward', {
        'kernel-work': r'''
@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    pid = tl.program_id(1)
    batch_idx = pid // n_heads
    head_idx = pid - batch_idx * n_heads
    kv_idx = head_idx // group
    Q += batch_idx * stride_qb + head_idx * stride_qh
    Out += batch_idx * stride_ob + head_idx * stride_oh
    K += batch_idx * stride_kb + kv_idx * stride_kh
    V += batch_idx * stride_vb + kv_idx * stride_vh
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty_like(q)   # same shape, dtype and device as q
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    if n_heads % n_kv_heads != 0:
        raise ValueError(f"n_heads={n_heads} is not a multiple of the {n_kv_heads} heads of k")
    group = n_heads // n_kv_heads
    grid = (triton.cdiv(n_q, block_m), batch * n_heads)
    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out
''',
    }),
    "ex02 stretch update writing into the caller's score tile": ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    new_max = torch.maximum(m, s.max(dim=1).values)
    # rows that have seen no key yet: shift by 0 so that -inf - (-inf) never happens
    shift = torch.where(torch.isinf(new_max) & (new_max < 0), torch.zeros_like(new_max), new_max)
    scale_old = torch.exp(m - shift)
    probs = s.sub_(shift.unsqueeze(1)).exp_()   # reuse the score tile's memory for the weights
    l_next = scale_old * l + probs.sum(dim=1)
    acc_next = scale_old.unsqueeze(1) * acc + probs @ v_tile
    return new_max, l_next, acc_next


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    offset = n_k - n_q
    sm_scale = 1.0 / math.sqrt(d)
    for start in range(0, n_q, block_m):
        stop = min(start + block_m, n_q)
        qt = q[start:stop].to(torch.float32) * sm_scale
        nr = stop - start
        full, visit = key_tile_counts(start, nr, n_q, n_k, block_n)
        m = torch.full((nr,), -math.inf)
        l = torch.zeros(nr)
        acc = torch.zeros(nr, d)
        for t in range(visit):
            lo, hi = t * block_n, min((t + 1) * block_n, n_k)
            scores = qt @ k[lo:hi].to(torch.float32).T
            if t >= full:
                qpos = torch.arange(start, stop).unsqueeze(1)
                kpos = torch.arange(lo, hi).unsqueeze(0)
                scores = scores.masked_fill(kpos > qpos + offset, -math.inf)
            m, l, acc = online_softmax_update(m, l, acc, scores, v[lo:hi].to(torch.float32))
        has_key = l > 0
        safe_l = torch.where(has_key, l, torch.ones_like(l))
        out[start:stop] = torch.where(has_key.unsqueeze(1), acc / safe_l.unsqueeze(1), torch.zeros_like(acc))
    return out.to(q.dtype)
''',
    }),
    'ex06 allocate_many rolling back in the order taken': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        if len(self.free_list) == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        free_before = len(self.free_list)
        taken = []
        try:
            for _ in range(n):
                taken.append(self.allocate())
        except OutOfBlocks:
            for b in taken:          # give back what we took: nothing leaks
                self.free(b)
            raise OutOfBlocks(n, free_before, self.num_blocks) from None
        return taken

    def _check(self, block):
        if block < 0 or block >= self.num_blocks or self.ref_count[block] <= 0:
            raise ValueError(f"block {block} is not allocated")

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        self._check(block)
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        self._check(block)
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''',
        'boundary-work': r'''
def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    return (num_tokens + block_size - 1) // block_size


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    blk, off = divmod(position, block_size)
    return block_ids[blk] * block_size + off
''',
    }),
    'ex08 a partly filled shared block counted as cached': ('ATTACKS', 'ex08_swap_or_recompute', {
        'costs-work': r'''
def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    nblocks = -(-num_tokens // block_size)
    per_chunk = latency + block_size * chunk_bytes_per_token / bandwidth
    return 4 * num_layers * nblocks * per_chunk


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    n = num_tokens
    return (2 * num_params * n + 2 * num_layers * d_model * n * n) / flops
''',
        'crossover-work': r'''
def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    fixed = 4 * num_layers * num_tokens * chunk_bytes_per_token / bandwidth
    room = recompute_seconds - fixed
    if room <= 0:
        return math.inf
    return 4 * num_layers * num_tokens * latency / room
''',
        'choose-work': r'''
def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    tbl = manager.table(seq_id)
    B = manager.block_size
    refs = [manager.allocator.refcount(b) for b in tbl.block_ids]
    own = sum(1 for r in refs if r == 1)
    lead = 0
    for r in refs:
        if r > 1:
            lead += 1
        else:
            break
    n = tbl.num_tokens
    c = min(lead * B, n)
    chunk = 2 * model.num_kv_heads * model.head_dim
    t_swap = swap_seconds(own * B, B, model.num_layers, chunk, bandwidth, latency)
    dm = model.num_heads * model.head_dim
    flop = 2 * num_params * (n - c) + 2 * model.num_layers * dm * (n * n - c * c)
    return t_swap, flop / flops


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    if not manager.can_swap_out(seq_id):
        return "recompute"
    t_s, t_r = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    return "swap" if t_s < t_r else "recompute"
''',
    }),
    'ex04 hidden scores set to minus 1e9': ('ATTACKS', 'ex04_flash_forward', {
        'kernel-work': r'''
@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.dot(q, k, input_precision="ieee") * qk_scale
        keep = (rows[:, None] >= 0) & (cols[None, :] < n_k)
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None] + (n_k - n_q))
        s = tl.where(keep, s, -1.0e9)   # a very negative score: weight ~0
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
''',
    }),
    'ex04 stretch own offsets, a divmod check, a scratch repeat_interleave comparison': ('HONEST', 'ex04_stretch_gqa_forward', {
        'kernel-work': r'''
@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    # which (batch, query head) this program owns, and the K/V head its group reads
    flat = tl.program_id(1)
    which_b = flat // n_heads
    which_h = flat % n_heads
    which_kv = which_h // group
    Q = Q + which_b * stride_qb + which_h * stride_qh
    Out = Out + which_b * stride_ob + which_h * stride_oh
    K = K + which_b * stride_kb + which_kv * stride_kh
    V = V + which_b * stride_vb + which_kv * stride_vh
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    group, leftover = divmod(n_heads, n_kv_heads)
    if leftover or group == 0:
        raise ValueError(f"bad head counts: q has {n_heads} heads but k has {n_kv_heads}")
    programs_per_head = triton.cdiv(n_q, block_m)
    grid = (programs_per_head, batch * n_heads)
    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out

# my own sanity check: repeat K/V per group and do plain attention after the launch
qq = torch.randn(2, 4, 5, 16)
kk, vv = torch.randn(2, 2, 7, 16), torch.randn(2, 2, 7, 16)
mine = gqa_forward(qq, kk, vv)
k_rep, v_rep = kk.repeat_interleave(2, dim=1), vv.repeat_interleave(2, dim=1)
w = (qq @ k_rep.transpose(-1, -2) / 4.0).softmax(-1)
print("max diff:", (mine - w @ v_rep).abs().max().item())
assert torch.allclose(mine, w @ v_rep, atol=1e-4)
''',
    }),
    'ex06 guard helper, checks before allocating, a cell magic demo': ('HONEST', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _valid(self, b: int) -> bool:
        return isinstance(b, int) and 0 <= b < self.num_blocks

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        if not self.free_list:
            raise OutOfBlocks(1, self.num_free, self.num_blocks)
        top = self.free_list.pop()
        self.ref_count[top] += 1
        return top

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        have = self.num_free
        if have < n:
            raise OutOfBlocks(n, have, self.num_blocks)
        got = []
        while len(got) < n:
            got.append(self.allocate())
        return got

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        if not self._valid(block):
            raise ValueError(f"no such block: {block}")
        if self.ref_count[block] < 1:
            raise ValueError(f"cannot share free block {block}")
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        if not self._valid(block):
            raise ValueError(f"no such block: {block}")
        if self.ref_count[block] < 1:
            raise ValueError(f"block {block} freed twice")
        self.ref_count[block] -= 1
        if not self.ref_count[block]:
            self.free_list.append(block)
''',
        'boundary-work': r'''
def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    full, rest = divmod(num_tokens, block_size)
    return full + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    which = position // block_size
    return block_size * block_ids[which] + (position - which * block_size)

# (a %%time cell in the notebook: one cell here, where a cell magic cannot stand mid-cell)
demo = SimpleAllocator(4)
xs = demo.allocate_many(3)
demo.incref(xs[0]); demo.free(xs[0]); demo.free(xs[0])
print(xs, demo.free_list, demo.ref_count)
assert blocks_needed(0, 16) == 0 and blocks_needed(17, 16) == 2
print([slot([7, 2], 4, p) for p in range(8)])
''',
    }),
    'ex10 a shrinking end pointer, extendleft, named admission conditions': ('HONEST', 'ex10_scheduler_step', {
        'schedule-work': r'''
def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    i, end = 0, len(running)          # running[i:end] have not grown yet
    bumped = []                       # newest first, as they are preempted
    while i < end:
        r = running[i]
        if manager.can_append(r.seq_id):
            manager.append(r.seq_id, len(r.tokens))
            r.tokens.append(len(r.tokens))
            step.grown.append(r.seq_id)
            i += 1
            continue
        end -= 1                      # the newest not grown yet (maybe r itself)
        gone = running[end]
        manager.free(gone.seq_id)
        bumped.append(gone)
        step.preempted.append(gone.seq_id)
    del running[end:]
    waiting.extendleft(bumped)        # extendleft reverses: the oldest ends up first
    step.num_tokens = len(step.grown)
    if bumped:
        return step
    while len(waiting) > 0:
        cand = waiting[0]
        blocks = (len(cand.tokens) + manager.block_size - 1) // manager.block_size
        fits_blocks = blocks + manager.watermark_blocks <= manager.num_free_blocks
        fits_tokens = step.num_tokens + len(cand.tokens) <= max_num_batched_tokens
        if not (fits_blocks and fits_tokens):
            break
        manager.add(cand.seq_id, cand.tokens)
        running.append(waiting.popleft())
        step.admitted.append(cand.seq_id)
        step.num_tokens += len(cand.tokens)
    return step

# quick try of my own before the checks
mgr = BlockManager(4, 4)
run_q = [Request("a", [1, 2, 3, 4]), Request("b", [5, 6, 7, 8])]
for q_ in run_q:
    mgr.add(q_.seq_id, q_.tokens)
wait_q = deque([Request("c", [9])])
print(schedule_step(mgr, run_q, wait_q, 100), [q_.seq_id for q_ in run_q], list(x.seq_id for x in wait_q))
''',
    }),
    'ex00 float64 inside through a helper, torch max values, a matplotlib cell': ('HONEST', 'ex00_warmup', {
        'softmax-work': r'''
def _work_dtype(dt):
    # halves are computed in float32, everything else in float64
    return torch.float32 if dt in (torch.float16, torch.bfloat16) else torch.float64


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude.

    Args:
        x: (..., n) floating-point tensor of scores.

    Returns:
        A tensor like ``x`` (same shape and dtype) whose rows are non-negative and sum to 1.
    """
    z = x.to(_work_dtype(x.dtype))
    top = torch.max(z, dim=-1, keepdim=True).values
    w = (z - top).exp()
    total = w.sum(dim=-1, keepdim=True)
    return (w / total).to(x.dtype)

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
row = torch.linspace(-3, 3, 7)
plt.bar(range(7), softmax_rows(row).numpy())
plt.title("softmax of a ramp")
print(softmax_rows(torch.tensor([[1e4, 1e4 - 1.0]])))
%timeit softmax_rows(torch.randn(64, 128))
''',
    }),
    'ex05 named factors, bytes from finfo bits': ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''
def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    K_AND_V = 2
    elements_per_token = K_AND_V * num_layers * num_kv_heads * head_dim
    return elements_per_token * bytes_per_element * num_tokens * batch
''',
        'models-work': r'''
def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    size = torch.finfo(dtype).bits // 8   # bits -> bytes
    return kv_cache_bytes(model.num_layers, model.num_kv_heads, model.head_dim, num_tokens=1, batch=1,
                          bytes_per_element=size)
''',
        'fit-work': r'''
def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    one_request = max_len * kv_bytes_per_token(model, dtype)
    budget_bytes = budget_gib * 2**30
    return int(budget_bytes // one_request)

toy = ModelShape("toy", 4, 8, 2, 96, 2048, "mine")
for mdl in (OPT_13B, toy):
    print(f"{mdl.name:>16}: {kv_bytes_per_token(mdl, torch.float16) / 1024:8.1f} KiB/token, "
          f"{max_concurrent_requests(40, mdl, 4096, torch.float16)} requests in 40 GiB")
''',
    }),
}



# Round 38z20 (against 870f6a8): an outside class of 12; the wrong verdicts it found, and its honest learners.
ROUND_38Z20 = {
    "ex01 causal_mask slicing a 1024-square lower triangle built once (nanoGPT's buffer)": ('ATTACKS', 'ex01_naive_attention', {
        'mask-work': r'''
# like nanoGPT's register_buffer("bias", tril(ones(block_size, block_size))): build the lower triangle once
_MAX_CONTEXT = 1024
_TRIL = torch.tril(torch.ones(_MAX_CONTEXT, _MAX_CONTEXT, dtype=torch.bool))


def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """(n_q, n_k) bool tensor: True where query i may see key j, i.e. j <= i + (n_k - n_q)."""
    # the queries are the last n_q positions: rows n_k - n_q .. n_k - 1 of the big triangle
    return _TRIL[n_k - n_q:n_k, :n_k]
''',
        'attention-work': r'''
def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dimensions; same shape and dtype as q."""
    out_dtype = q.dtype
    qf, kf, vf = q.to(torch.float32), k.to(torch.float32), v.to(torch.float32)
    scores = torch.matmul(qf, kf.transpose(-1, -2)) * (1.0 / math.sqrt(q.size(-1)))
    if causal:
        allowed = causal_mask(q.size(-2), k.size(-2)).to(scores.device)
        scores = torch.where(allowed, scores, torch.tensor(float("-inf"), device=scores.device))
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, vf).to(out_dtype)
''',
    }),
    'ex04 hidden scores filled with -1e30, not -inf': ('ATTACKS', 'ex04_flash_forward', {
        'kernel-work': r'''
@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        # masked scores get a big negative number (like the CUDA kernels I read), avoids inf - inf
        NEG_BIG = -1.0e30
        scores = tl.dot(q, k, input_precision="ieee") * qk_scale
        visible = cols[None, :] < n_k
        if CAUSAL:
            visible = visible & (cols[None, :] - rows[:, None] <= n_k - n_q)
        scores = tl.where(visible, scores, NEG_BIG)
        row_max = tl.maximum(m_i, tl.max(scores, axis=1))
        probs = tl.exp2(scores - row_max[:, None])
        rescale = tl.exp2(m_i - row_max)
        acc = acc * rescale[:, None] + tl.dot(probs, v, input_precision="ieee")
        l_i = l_i * rescale + tl.sum(probs, axis=1)
        m_i = row_max
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
''',
    }),
    'ex10 a request grown by reqtokens = reqtokens + [t], a new list, not in place': ('ATTACKS', 'ex10_scheduler_step', {
        'schedule-work': r'''
def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    pending = list(running)          # oldest first, not grown yet
    grown = []
    kicked = []
    while pending:
        req = pending[0]
        if manager.can_append(req.seq_id):
            nxt = len(req.tokens)
            manager.append(req.seq_id, nxt)
            req.tokens = req.tokens + [nxt]
            grown.append(pending.pop(0))
            step.grown.append(req.seq_id)
            continue
        victim = pending.pop()       # newest not grown yet (maybe req itself)
        manager.free(victim.seq_id)
        kicked.append(victim)
        step.preempted.append(victim.seq_id)
    for victim in sorted(kicked, key=lambda r: [x.seq_id for x in running].index(r.seq_id), reverse=True):
        waiting.appendleft(victim)
    running[:] = grown
    budget_used = len(grown)
    if not kicked:
        while waiting:
            cand = waiting[0]
            need = -(-len(cand.tokens) // manager.block_size)
            if need + manager.watermark_blocks > manager.num_free_blocks:
                break
            if budget_used + len(cand.tokens) > max_num_batched_tokens:
                break
            waiting.popleft()
            manager.add(cand.seq_id, cand.tokens)
            running.append(cand)
            step.admitted.append(cand.seq_id)
            budget_used += len(cand.tokens)
    step.num_tokens = budget_used
    return step
''',
    }),
    'ex05 math prod, element_size of an empty tensor, keyword arguments, a scratch cell of asserts': ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''
from math import prod

def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    K_AND_V = 2
    return prod((K_AND_V, num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element))

# quick sanity check against the lecture's number
assert kv_cache_bytes(32, 32, 128, 32 * 1024, 16, 2) == 256 * 2**30
print(f"{kv_cache_bytes(32, 32, 128, 32 * 1024, 16, 2) / 2**30:.0f} GiB")
''',
        'models-work': r'''
def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    elem = torch.empty((), dtype=dtype).element_size()
    return kv_cache_bytes(num_layers=model.num_layers, num_kv_heads=model.num_kv_heads, head_dim=model.head_dim,
                          num_tokens=1, batch=1, bytes_per_element=elem)
''',
        'fit-work': r'''
def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    total_bytes = budget_gib * (1 << 30)
    one_request = max_len * kv_bytes_per_token(model, dtype)
    count = 0
    # whole reservations only; total_bytes may be a float
    count = int(total_bytes // one_request)
    return count

print(max_concurrent_requests(12, OPT_13B, 2048, torch.float16))

from pagedlab.memory import LLAMA3_8B
for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn):
    print(dt, kv_bytes_per_token(OPT_13B, dt), kv_bytes_per_token(LLAMA3_8B, dt))
''',
    }),
    'ex07 own helper, branches reordered, a scratch cell of asserts': ('HONEST', 'ex07_copy_on_write', {
        'manager-work': r'''
class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    # --- my part -------------------------------------------------------
    def _needs_new_block(self, table) -> bool:
        return table.num_tokens == len(table.block_ids) * self.block_size

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        p = self.tables[parent]
        shared = list(p.block_ids)
        for blk in shared:
            self.allocator.incref(blk)          # one more owner each
        self.tables[child] = BlockTable(shared, p.num_tokens, self.block_size)
        return self.tables[child]

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        tab = self.tables[seq]
        if self._needs_new_block(tab):
            tab.block_ids.append(self.allocator.allocate())
            pending = None
        elif self.allocator.refcount(tab.block_ids[-1]) == 1:
            pending = None                      # private: write in place
        else:
            dst = self.allocator.allocate()     # may raise OutOfBlocks: nothing touched yet
            src = tab.block_ids[-1]
            tab.block_ids[-1] = dst
            self.allocator.free(src)            # drop our share only
            pending = (src, dst)
        where = tab.num_tokens
        tab.num_tokens += 1
        return tab.slot(where), pending

# scratch: walk through check 4 by hand
mm = MiniManager(6, 4)
mm.add("a", 6)
mm.fork("a", "b")
print(mm.append("b"), mm.append("a"), mm.tables["a"].block_ids, mm.tables["b"].block_ids)
assert mm.allocator.refcount(mm.tables["a"].block_ids[0]) == 2
del mm
''',
    }),
    'ex10 grow and admit helpers, an index loop, a logging scratch cell': ('HONEST', 'ex10_scheduler_step', {
        'schedule-work': r'''
def _blocks(n_tokens: int, block_size: int) -> int:
    return (n_tokens + block_size - 1) // block_size


def _grow(manager, running, waiting, step):
    i = 0                                   # running[:i] have grown
    preempted_here = []
    while i < len(running):
        req = running[i]
        if manager.can_append(req.seq_id):
            tok = len(req.tokens)
            manager.append(req.seq_id, tok)
            req.tokens.append(tok)
            step.grown.append(req.seq_id)
            i += 1
        else:
            victim = running.pop()           # newest that has not grown (could be req itself)
            manager.free(victim.seq_id)
            preempted_here.append(victim)
            step.preempted.append(victim.seq_id)
    # victims were taken newest first; the oldest must end up first in line
    for victim in preempted_here:
        waiting.appendleft(victim)


def _admit(manager, running, waiting, step, max_num_batched_tokens):
    used = len(step.grown)
    while len(waiting) > 0:
        head = waiting[0]
        fits_blocks = _blocks(len(head.tokens), manager.block_size) + manager.watermark_blocks <= manager.num_free_blocks
        fits_budget = used + len(head.tokens) <= max_num_batched_tokens
        if not (fits_blocks and fits_budget):
            break
        waiting.popleft()
        manager.add(head.seq_id, head.tokens)
        running.append(head)
        step.admitted.append(head.seq_id)
        used += len(head.tokens)
    return used


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    _grow(manager, running, waiting, step)
    step.num_tokens = len(step.grown)
    if not step.preempted:
        step.num_tokens = _admit(manager, running, waiting, step, max_num_batched_tokens)
    return step

import logging
logging.basicConfig(level=logging.INFO)
_m = BlockManager(4, 4)
_run = [Request("a", list(range(4))), Request("b", list(range(4)))]
for _q in _run:
    _m.add(_q.seq_id, _q.tokens)
_wait = deque([Request("c", [7, 7])])
logging.info("%s", schedule_step(_m, _run, _wait, 100))
print([q.seq_id for q in _run], [q.seq_id for q in _wait], _m.num_free_blocks)
''',
    }),
    'ex04 the loop body in its own order and names, acc += tldot': ('HONEST', 'ex04_flash_forward', {
        'kernel-work': r'''
@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        # 1) raw scores of this key tile, already in base-2 units
        t = tl.dot(q, k, input_precision="ieee")
        t = t * qk_scale
        # 2) which (row, col) pairs count: real keys, and (causal) not in the future
        in_range = cols[None, :] < n_k
        seen = in_range
        if CAUSAL:
            offset = n_k - n_q
            seen = in_range & (rows[:, None] + offset >= cols[None, :])
        t = tl.where(seen, t, float("-inf"))
        # 3) online softmax update
        tile_max = tl.max(t, 1)
        new_max = tl.maximum(tile_max, m_i)
        correction = tl.exp2(m_i - new_max)
        weights = tl.exp2(t - new_max[:, None])
        l_i = l_i * correction + tl.sum(weights, 1)
        acc = acc * correction[:, None]
        acc += tl.dot(weights, v, input_precision="ieee")
        m_i = new_max
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
''',
    }),
    'ex08 own helpers, the crossover from the byte-time slack, recompute as n squared minus c squared': ('HONEST', 'ex08_swap_or_recompute', {
        'costs-work': r'''
import math as _m

def _n_blocks(tokens, size):
    return _m.ceil(tokens / size) if tokens else 0

def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    chunk_bytes = block_size * chunk_bytes_per_token
    one_way = 2 * num_layers * _n_blocks(num_tokens, block_size) * (latency + chunk_bytes / bandwidth)
    return one_way + one_way


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    n = num_tokens
    mlp_ish = 2.0 * num_params * n
    attn = 2.0 * num_layers * d_model * n * n
    return (mlp_ish + attn) / flops

print(swap_seconds(1024, 16, 40, 10240, 31.5e9, 1e-5), recompute_seconds(1024, 12.9e9, 40, 5120, 156e12))
''',
        'crossover-work': r'''
def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    copies = 4 * num_layers * num_tokens        # per unit of 1/B: latency paid n/B times, 2 dirs x K,V x L
    bytes_only = copies * chunk_bytes_per_token / bandwidth   # independent of B
    slack = recompute_seconds - bytes_only
    if not slack > 0:
        return math.inf
    return copies * latency / slack
''',
        'choose-work': r'''
def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    tab = manager.table(seq_id)
    bsz = manager.block_size
    refs = [manager.allocator.refcount(b) for b in tab.block_ids]
    mine = [r for r in refs if r == 1]
    k = 0
    while k < len(refs) and refs[k] > 1 and (k + 1) * bsz <= tab.num_tokens:
        k += 1
    c, n = k * bsz, tab.num_tokens
    L, dm = model.num_layers, model.num_heads * model.head_dim
    t_s = swap_seconds(len(mine) * bsz, bsz, L, model.num_kv_heads * model.head_dim * 2, bandwidth, latency)
    t_r = (2 * num_params * (n - c) + 2 * L * dm * (n * n - c * c)) / flops
    return (t_s, t_r)


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    t_s, t_r = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    room = manager.can_swap_out(seq_id)
    return "swap" if (room and t_s < t_r) else "recompute"
''',
    }),
    'ex07 append returning lists [slot, [src, dst]], not the stated tuples': ('ATTACKS', 'ex07_copy_on_write', {
        'manager-work': r'''
class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        src = self.tables[parent]
        ids = [b for b in src.block_ids]
        for b in ids:
            self.allocator.incref(b)
        new_table = BlockTable(ids, src.num_tokens, self.block_size)
        self.tables[child] = new_table
        return new_table

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        t = self.tables[seq]
        pos = t.num_tokens
        cow = None
        if pos % self.block_size == 0:          # need a fresh block
            fresh = self.allocator.allocate()
            t.block_ids.append(fresh)
        else:
            last = t.block_ids[-1]
            if self.allocator.refcount(last) > 1:
                fresh = self.allocator.allocate()
                self.allocator.free(last)
                t.block_ids[-1] = fresh
                cow = [last, fresh]             # src, dst
        t.num_tokens = pos + 1
        return [t.slot(pos), cow]
''',
    }),
}


# An audit of what each returned value must be beyond its numbers (identity, layout, what is left behind) and what
# a chosen configuration must be, against the statements: each answer passed on every seed before its fix.
ROUND_38Z20_AUDIT = {
    'ex04 stretch out = qcontiguous() (aliases q when q is contiguous; q overwritten)': ('ATTACKS', 'ex04_stretch_gqa_forward', {
        'kernel-work': r'''
@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    # Move Q, K, V and Out to the first row of this program's (batch, head): Q = Q + ..., and so on.
    ### BEGIN SOLUTION
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    h_kv = h // group  # consecutive query heads share one K/V head
    Q = Q + b * stride_qb + h * stride_qh
    K = K + b * stride_kb + h_kv * stride_kh
    V = V + b * stride_vb + h_kv * stride_vh
    Out = Out + b * stride_ob + h * stride_oh
    ### END SOLUTION
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = q.contiguous()
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    # Set group (query heads per K/V head) and grid (one program per query tile and (batch, head)).
    ### BEGIN SOLUTION
    if n_heads % n_kv_heads:
        raise ValueError(f"k has {n_kv_heads} heads, which must divide the {n_heads} query heads of q")
    group = n_heads // n_kv_heads
    grid = (triton.cdiv(n_q, block_m), batch * n_heads)
    ### END SOLUTION
    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out''',
    }),
    'ex03 vector_add: out = xcontiguous() (x overwritten with x + y when contiguous)': ('ATTACKS', 'ex03_triton_basics', {
        'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    ### BEGIN SOLUTION
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets * stride_x, mask=mask)
    y = tl.load(y_ptr + offsets * stride_y, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
    ### END SOLUTION


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is contiguous."""
    out = x.contiguous()
    ### BEGIN SOLUTION
    grid = (triton.cdiv(x.numel(), block),)
    add_kernel[grid](x, y, out, x.numel(), x.stride(0), y.stride(0), BLOCK=block)
    ### END SOLUTION
    return out''',
    }),
    'ex03 softmax: out = xcontiguous() (x overwritten when contiguous)': ('ATTACKS', 'ex03_triton_basics', {
        'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    m = float("-inf")
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, 0))
        l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"))
        tl.store(out_row + start + cols, tl.exp(x - m) / l, mask=mask)
    ### END SOLUTION


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns."""
    out = x.contiguous()
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out''',
    }),
    'ex04b MY_CONFIGS of one configuration': ('ATTACKS', 'ex04b_performance_lab', {
        'choose-work': r'''
MY_CONFIGS = [(64, 64, 4, 3)]
''',
    }),
    'ex04b MY_CONFIGS of three with no two sharing BLOCK_M at different BLOCK_N': ('ATTACKS', 'ex04b_performance_lab', {
        'choose-work': r'''
MY_CONFIGS = [(128, 128, 8, 3), (64, 64, 4, 3), (64, 64, 8, 2)]
''',
    }),
    'ex00 one output buffer per shape, reused (an earlier result is overwritten by the next call)': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''
_OUT = {}
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    m = x.amax(dim=-1, keepdim=True)
    e = torch.exp(x - m)
    out = _OUT.get((x.shape, x.dtype))
    if out is None:
        out = _OUT[(x.shape, x.dtype)] = torch.empty_like(e)
    return torch.div(e, e.sum(dim=-1, keepdim=True), out=out)
''',
    }),
    "ex09 stretch merge rescales the caller's lses and outs in place": ('ATTACKS', 'ex09_stretch_split_kv_merge', {
        'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m = lses.amax(dim=-1, keepdim=True)
    lses -= m                                   # rescaled in place
    w = torch.exp(lses)
    total = w.sum(dim=-1, keepdim=True)
    outs *= w[..., None]                        # weighted in place
    out = outs.sum(dim=-2) / total
    lse = (m + torch.log(total)).squeeze(-1)
    return out, lse
''',
    }),
}


# Round 38z21 (against 10d51a2): an outside class of 12; the wrong verdicts it found, and its honest learners.
# (Its float divisions of sizes past 2**53, ex02 stretch, ex06 and ex09 stretch, are outside every stated space.)
ROUND_38Z21 = {
    'ex00 rows softmaxed one at a time and stacked, raising on a batch of no rows': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, one row at a time."""
    n = x.shape[-1]
    flat = x.reshape(-1, n)
    results = []
    for row in flat:
        z = row - row.max()
        ez = torch.exp(z)
        results.append(ez / ez.sum())
    return torch.stack(results).reshape(x.shape)
''',
    }),
    'ex02 key tiles block_m wide, block_n ignored': ('ATTACKS', 'ex02_online_softmax', {
        'update-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running state."""
    row_max = s.max(dim=1).values
    m_next = torch.maximum(m, row_max)
    decay = torch.exp(m - m_next)
    probs = torch.exp(s - m_next[:, None])
    return m_next, decay * l + probs.sum(dim=1), decay[:, None] * acc + probs @ v_tile
''',
        'tiled-work': r'''
def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    scale = 1.0 / math.sqrt(d)
    shift = n_k - n_q
    for i0 in range(0, n_q, block_m):
        qt = q[i0:i0 + block_m].float() * scale
        nr = qt.shape[0]
        run_m = torch.full((nr,), -math.inf)
        run_l = torch.zeros(nr)
        run_acc = torch.zeros(nr, d)
        for j0 in range(0, n_k, block_m):          # walk the keys tile by tile
            kt = k[j0:j0 + block_m].float()
            vt = v[j0:j0 + block_m].float()
            sc = qt @ kt.T
            if causal:
                qi = torch.arange(i0, i0 + nr)[:, None]
                kj = torch.arange(j0, j0 + kt.shape[0])[None, :]
                sc = sc.masked_fill(kj > qi + shift, -math.inf)
            run_m, run_l, run_acc = online_softmax_update(run_m, run_l, run_acc, sc, vt)
        out[i0:i0 + nr] = run_acc / run_l[:, None]
    return out.to(q.dtype)
''',
    }),
    'ex06 a double free found by a scan of the free list, O(n) where O(1) is stated': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        """Take one free block; its count becomes 1. Raises OutOfBlocks when none is free."""
        if len(self.free_list) == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks, all or nothing. Raises OutOfBlocks, having taken none, when fewer are free."""
        have = len(self.free_list)
        if n > have:
            raise OutOfBlocks(n, have, self.num_blocks)
        got = []
        for _ in range(n):
            got.append(self.allocate())
        return got

    def _must_be_held(self, block):
        # a block is held exactly when it is not sitting on the free list
        if block not in range(self.num_blocks) or block in self.free_list:
            raise ValueError(f"{block} is not a held block")

    def incref(self, block: int) -> None:
        """Another sequence shares ``block``, which must already be allocated (else ValueError)."""
        self._must_be_held(block)
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        """Drop one reference to ``block``; at zero it goes back on the free list. ValueError if not allocated."""
        self._must_be_held(block)
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)
''',
        'boundary-work': r'''
def blocks_needed(num_tokens: int, block_size: int) -> int:
    """Blocks that hold ``num_tokens`` tokens."""
    return (num_tokens + block_size - 1) // block_size


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    """The pool slot of token ``position`` of a sequence whose block table is ``block_ids``."""
    which, offset = divmod(position, block_size)
    return block_ids[which] * block_size + offset
''',
    }),
    'ex00 own helper, a scratch cell comparing with torch softmax, a timing magic and a plot': ('HONEST', 'ex00_warmup', {
        'softmax-work': r'''
def _stable_exp(scores):
    # shift every row so that its largest entry is 0 -> exp never overflows
    peak = scores.max(dim=-1, keepdim=True).values
    return (scores - peak).exp()


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    numer = _stable_exp(x)
    denom = numer.sum(dim=-1, keepdim=True)
    return numer / denom

# my own quick tests before running the checks
demo = torch.tensor([[1.0, 2.0, 3.0], [1000.0, 1001.0, 1002.0]])
probs = softmax_rows(demo)
print(probs)
print("row sums:", probs.sum(-1))
assert torch.allclose(probs[0], probs[1])
torch.testing.assert_close(softmax_rows(demo), torch.softmax(demo, dim=-1))
big = torch.randn(64, 512) * 1e4
assert torch.isfinite(softmax_rows(big)).all()

%timeit softmax_rows(torch.randn(256, 1024))

%matplotlib inline
import matplotlib.pyplot as plt
xs = torch.linspace(-5, 5, 50)
for temp in (0.5, 1.0, 2.0):
    plt.plot(xs.numpy(), softmax_rows(xs / temp).numpy(), label=f"T={temp}")
plt.legend(); plt.title("softmax of a ramp"); plt.show()
''',
    }),
    'ex03 own kernels and names, the grid by integer ceiling, a multiply by the reciprocal sum, a scratch allclose': ('HONEST', 'ex03_triton_basics', {
        'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    lane = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = lane < n                                 # lanes past the end neither read nor write
    xs = tl.load(x_ptr + lane * stride_x, mask=live, other=0.0)
    ys = tl.load(y_ptr + lane * stride_y, mask=live, other=0.0)
    tl.store(out_ptr + lane, xs + ys, mask=live)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is a new contiguous
    tensor (``x`` and ``y`` are only read)."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    length = x.shape[0]
    programs = (length + block - 1) // block
    add_kernel[(programs,)](x, y, out, length, x.stride(0), y.stride(0), BLOCK=block)
    return out
''',
        'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    in_base = x_ptr + r * stride_x
    out_base = out_ptr + r * stride_out
    # pass 1: online max and sum of exponentials
    best = float("-inf")
    acc = 0.0
    for c0 in range(0, n_cols, BLOCK):
        ok = (c0 + lanes) < n_cols
        t = tl.load(in_base + c0 + lanes, mask=ok, other=-float("inf"))
        hi = tl.maximum(best, tl.max(t, 0))
        acc = acc * tl.exp(best - hi) + tl.sum(tl.exp(t - hi), 0)
        best = hi
    inv = 1.0 / acc
    # pass 2: write the normalised tile
    for c0 in range(0, n_cols, BLOCK):
        ok = (c0 + lanes) < n_cols
        t = tl.load(in_base + c0 + lanes, mask=ok, other=-float("inf"))
        tl.store(out_base + c0 + lanes, tl.exp(t - best) * inv, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns;
    the result is a new tensor (``x`` is only read)."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out

# quick sanity checks of my own (after the launches)
mat = torch.arange(30, dtype=torch.float32).reshape(10, 3)
col = mat[:, 2]
evens = torch.ones(20, dtype=torch.float32)[::2]
summed = vector_add(col, evens, 4)
print(summed)
assert torch.allclose(summed, col + evens)
rows = torch.randn(3, 37) * 50
got = softmax(rows, 8)
print("row sums", got.sum(dim=1))
''',
    }),
    'ex07 stretch a chunk helper, the hit limit checked inside the loop, a scratch cell': ('HONEST', 'ex07_stretch_prefix_cache_match', {
        'cache-work': r'''
Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def _chunk(self, tokens, i):
        size = self.block_size
        return tuple(tokens[i * size:(i + 1) * size])

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        chain, prev = [], None
        for i in range(len(tokens) // self.block_size):
            prev = self.hash_fn(prev, self._chunk(tokens, i))
            chain.append(prev)
        return chain

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        allowed = (len(tokens) - 1) // self.block_size   # leave at least one token to compute
        found, expected_parent = [], None
        for i, k in enumerate(self.keys(tokens)):
            if i >= allowed or k not in self.block_of:
                break
            blk = self.block_of[k]
            ent = self.entry[blk]
            if ent.tokens != self._chunk(tokens, i) or ent.parent_id != expected_parent:
                break   # same key, different prefix: a collision
            found.append(blk)
            expected_parent = ent.prefix_id
        return found

c = MiniPrefixCache(2)
c.insert([1, 2, 3, 4, 5], [7, 8])
print(c.keys([1, 2, 3, 4, 5]), c.match([1, 2, 3, 4, 5]), c.match([1, 2, 3, 4]))
assert c.match([1, 2, 3, 4, 5]) == [7, 8] and c.match([1, 2, 3, 4]) == [7]
weak = MiniPrefixCache(2, hash_fn=lambda p, t: 0)
weak.insert([1, 1, 2, 2, 0], [3, 4])
print(weak.match([2, 2, 1, 1, 0]))
''',
    }),
    'ex09 stretch split edges by integer ceiling, the merge by torch logsumexp, a time magic': ('HONEST', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    share = -(-context_len // num_splits)           # ceil without floats
    width = -(-share // block_n) * block_n          # whole tiles
    edges = [min(i * width, context_len) for i in range(num_splits + 1)]
    return [(edges[i], edges[i + 1]) for i in range(num_splits)]
''',
        'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    merged_lse = torch.logsumexp(lses, dim=-1)
    coef = torch.exp(lses - merged_lse.unsqueeze(-1))
    return (coef.unsqueeze(-1) * outs).sum(dim=-2), merged_lse

print(split_bounds(100, 3, 16), split_bounds(5, 4, 4))
o = torch.randn(2, 3, 4, 8)
s = torch.randn(2, 3, 4)
s[0, :, 2:] = float("-inf"); o[0, :, 2:] = 0
mo, ml = merge_states(o, s)
print(mo.shape, ml.shape, torch.isfinite(mo).all().item())
''',
    }),
    'ex10 requests to grow popped from the front of a list, while and else, its own block helper': ('HONEST', 'ex10_scheduler_step', {
        'schedule-work': r'''
def _blocks_for(n_tokens, size):
    return (n_tokens + size - 1) // size


def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    to_grow = list(running)          # oldest first, none grown yet
    running.clear()
    while to_grow:
        req = to_grow.pop(0)
        while not manager.can_append(req.seq_id):
            victim = to_grow.pop() if to_grow else req
            manager.free(victim.seq_id)
            waiting.appendleft(victim)
            step.preempted.append(victim.seq_id)
            if victim is req:
                break
        else:
            nxt = len(req.tokens)
            manager.append(req.seq_id, nxt)
            req.tokens.append(nxt)
            running.append(req)
            step.grown.append(req.seq_id)
    used = len(step.grown)
    if not step.preempted:
        while waiting:
            head = waiting[0]
            if _blocks_for(len(head.tokens), manager.block_size) + manager.watermark_blocks > manager.num_free_blocks:
                break
            if used + len(head.tokens) > max_num_batched_tokens:
                break
            waiting.popleft()
            manager.add(head.seq_id, head.tokens)
            running.append(head)
            step.admitted.append(head.seq_id)
            used += len(head.tokens)
    step.num_tokens = used
    return step

mgr = BlockManager(6, 4)
run = [Request("a", [5, 6, 7, 8])]
mgr.add("a", run[0].tokens)
wait = deque([Request("b", [1, 2, 3]), Request("c", list(range(9)))])
st = schedule_step(mgr, run, wait, 100)
print(st, [r.seq_id for r in run], [r.seq_id for r in wait], mgr.num_free_blocks)
''',
    }),
}


# Round 38z22 (against 70ccb53): an outside class of 12 (11 right verdicts); its one wrong answer that passed, the
# honest answer it found outside the class (its statement now says no copy of an input), and its honest learners.
ROUND_38Z22 = {
    'ex04b predict_resources with d = 128 written in, its head_dim argument ignored': ('ATTACKS', 'ex04b_performance_lab', {
        'choose-work': r'''
# (BLOCK_M, BLOCK_N, num_warps, num_stages), three or more
MY_CONFIGS = [(128, 64, 8, 2), (128, 32, 4, 3), (64, 64, 4, 2), (128, 128, 4, 2)]
''',
        'read-work': r'''
def read_report(report: dict) -> dict:
    """{"registers": int, "spill_bytes": int, "shared_kib": float, "matrix": "HGMMA" or "HMMA",
    "loads": "UTMALDG" or "LDGSTS"} of a compile report."""
    counts = report["sass"]
    kib = report["shared_bytes"] / 1024.0
    mat = "HMMA" if counts["HGMMA"] == 0 else "HGMMA"
    ld = "LDGSTS" if counts["UTMALDG"] == 0 else "UTMALDG"
    return dict(registers=report["registers"], spill_bytes=report["spill_bytes"], shared_kib=kib, matrix=mat, loads=ld)
''',
        'exp-work': r'''
def exp2_per_score(report: dict) -> float:
    """Static MUFU.EX2 instructions per score a thread computes in one pass of the forward's two loops."""
    threads = 32 * report["num_warps"]
    per_thread_one_loop = report["block_m"] * report["block_n"] / threads
    both_loops = 2 * per_thread_one_loop
    return report["sass"]["MUFU.EX2"] / both_loops
''',
        'budget-work': r'''
def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16) -> dict:
    """{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"} of one pass of the forward's loop, bf16."""
    one_product = 2 * block_m * block_n * head_dim
    fl = 2 * one_product                          # S = Q K^T and P V
    by = 2 * (block_n * head_dim) * 2             # a K tile and a V tile, 2 bytes each element
    ex = block_m * block_n
    exp_clocks = ex / exp_per_clock
    mma_clocks = fl / mma_flops_per_clock
    return {"flops": fl, "bytes": by, "exps": ex, "flops_per_byte": fl / by, "exp_fraction": exp_clocks / mma_clocks}
''',
        'bwd-work': r'''
def backward_exp_fraction(head_dim: int, mma_flops_per_clock: float = 4096, exp_per_clock: float = 16) -> float:
    """Clocks of the backward's exponentials per score as a fraction of the clocks of its matrix products."""
    exp_clk_per_score = 2 / exp_per_clock
    mma_clk_per_score = 7 * (2 * head_dim) / mma_flops_per_clock
    return exp_clk_per_score / mma_clk_per_score
''',
        'predict-work': r'''
def predict(reports: list[dict]) -> int:
    """Index of the report of the configuration that should run fastest on an H100."""
    best_i, best_key = None, None
    for i, rep in enumerate(reports):
        if rep["arch"] != 90 or rep["spill_bytes"] > 0:
            continue
        key = (rep["block_m"], rep["block_n"])
        if best_key is None or key > best_key:
            best_i, best_key = i, key
    return best_i
''',
        'predict-resources-work': r'''
D = 128   # the lab's head dim

def predict_resources(block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128) -> dict:
    """{"shared_bytes": int, "registers": float, "spills": bool} predicted for the forward, sm_90, bf16."""
    q_tile = block_m * D * 2
    kv_stages = num_stages * (2 * block_n * D * 2)
    live = block_m * D + 1.5 * block_m * block_n
    regs = live / (32 * num_warps)
    return {"shared_bytes": q_tile + kv_stages, "registers": regs, "spills": regs > 255}
''',
    }),
    'ex04 stretch own offsets and names, a divmod check, a hand-written cdiv, a scratch cell of exp and sum': ('HONEST', 'ex04_stretch_gqa_forward', {
        'kernel-work': r'''
@triton.jit
def gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,
               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,
               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    # which (batch, query head) am I? program_id(1) runs over batch * n_heads
    pid_bh = tl.program_id(1)
    which_batch = pid_bh // n_heads
    qhead = pid_bh - which_batch * n_heads
    kvhead = qhead // group            # heads 0..group-1 -> kv 0, next group -> kv 1, ...
    Q += which_batch * stride_qb + qhead * stride_qh
    Out += which_batch * stride_ob + qhead * stride_oh
    K += which_batch * stride_kb + kvhead * stride_kh
    V += which_batch * stride_vb + kvhead * stride_vh
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, n_k, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)


def gqa_forward(q, k, v, block_m=16, block_n=32):
    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""
    batch, n_heads, n_q, d = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)
    per_kv, leftover = divmod(n_heads, n_kv_heads)
    if leftover != 0 or per_kv == 0:
        raise ValueError(f"the number of K/V heads of k ({n_kv_heads}) must divide q's {n_heads} query heads")
    group = per_kv
    n_tiles = (n_q + block_m - 1) // block_m
    grid = (n_tiles, batch * n_heads)
    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    return out

# my own check against plain PyTorch math (no softmax call: exp / sum by hand)
torch.manual_seed(1)
qq, kk, vv = torch.randn(2, 6, 19, 32), torch.randn(2, 2, 23, 32), torch.randn(2, 2, 23, 32)
mine = gqa_forward(qq, kk, vv)
kr, vr = kk.repeat_interleave(3, dim=1), vv.repeat_interleave(3, dim=1)
w = (qq @ kr.transpose(-1, -2) / 32 ** 0.5)
w = (w - w.amax(-1, keepdim=True)).exp()
w = w / w.sum(-1, keepdim=True)
print("max abs err:", (mine - w @ vr).abs().max().item())
''',
    }),
    'ex05 named parts, bytes from finfo bits, a keyword call, print, assert and table cells': ('HONEST', 'ex05_kv_cache_size', {
        'formula-work': r'''
def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int,
                   bytes_per_element: int) -> int:
    """Bytes of KV cache: a key and a value vector per layer, KV head and token, for each sequence."""
    per_token_per_layer = num_kv_heads * head_dim * bytes_per_element   # one K (or one V) vector
    k_and_v = 2
    total = k_and_v * per_token_per_layer * num_layers
    total *= num_tokens * batch
    return total
''',
        'models-work': r'''
def kv_bytes_per_token(model: ModelShape, dtype: torch.dtype) -> int:
    """KV-cache bytes of one token of ``model`` across all its layers, stored in ``dtype``."""
    elem = torch.finfo(dtype).bits // 8
    return kv_cache_bytes(num_layers=model.num_layers, num_kv_heads=model.num_kv_heads, head_dim=model.head_dim,
                          num_tokens=1, batch=1, bytes_per_element=elem)
''',
        'fit-work': r'''
def max_concurrent_requests(budget_gib: float, model: ModelShape, max_len: int, dtype: torch.dtype) -> int:
    """How many requests fit in ``budget_gib`` GiB of KV cache when each reserves ``max_len`` tokens."""
    reservation = max_len * kv_bytes_per_token(model, dtype)
    budget_bytes = budget_gib * 2 ** 30
    how_many = 0
    how_many = int(budget_bytes // reservation)
    return how_many

print(kv_cache_bytes(32, 32, 128, 32 * 1024, 16, 2) / 2**30, "GiB for LLaMA-7B")
assert kv_cache_bytes(32, 32, 128, 32 * 1024, 16, 2) == 274_877_906_944

for name_, mdl in [("OPT-13B", OPT_13B)]:
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float8_e4m3fn):
        print(f"{name_:8} {str(dt):20} {kv_bytes_per_token(mdl, dt):>9,} B/token  "
              f"{max_concurrent_requests(12, mdl, 2048, dt):3d} requests in 12 GiB")
''',
    }),
    'ex08 its own costs helper, refcount loops, the crossover derived, a sanity print': ('HONEST', 'ex08_swap_or_recompute', {
        'costs-work': r'''
def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int,
                 bandwidth: float, latency: float) -> float:
    """Seconds to copy a sequence's K and V chunks to the host and back, one copy per chunk."""
    n_blocks = -(-num_tokens // block_size)
    chunks = n_blocks * num_layers * 2                    # K and V per layer per block
    per_chunk = latency + (block_size * chunk_bytes_per_token) / bandwidth
    out_and_back = 2
    return out_and_back * chunks * per_chunk


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int, flops: float) -> float:
    """Seconds of a causal prefill over ``num_tokens`` tokens at ``flops`` FLOP/s."""
    work = 2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens ** 2
    return work / flops
''',
        'crossover-work': r'''
def crossover_block_size(num_tokens: int, num_layers: int, chunk_bytes_per_token: int, bandwidth: float,
                         latency: float, recompute_seconds: float) -> float:
    """The block size B* at which swapping costs exactly recompute_seconds (B dividing n); math.inf if none."""
    # t_swap(B) = 4 L n latency / B + 4 L n c / bw  =  t_rec   =>   B = 4 L n latency / (t_rec - 4 L n c / bw)
    fixed = 4 * num_layers * num_tokens
    byte_part = fixed * chunk_bytes_per_token / bandwidth
    room = recompute_seconds - byte_part
    if not recompute_seconds / fixed > chunk_bytes_per_token / bandwidth:
        return math.inf
    return fixed * latency / room
''',
        'choose-work': r'''
def _costs_of(manager, seq_id, model, num_params, bandwidth, latency, flops):
    tab = manager.table(seq_id)
    B = manager.block_size
    counts = [manager.allocator.refcount(b) for b in tab.block_ids]
    n_private = sum(1 for c in counts if c == 1)
    lead = 0
    while lead < len(counts) and counts[lead] > 1:
        lead += 1
    full_blocks = tab.num_tokens // B
    c_tokens = B * min(lead, full_blocks)
    bytes_per_tok = 2 * model.num_kv_heads * model.head_dim        # bf16
    ts = swap_seconds(n_private * B, B, model.num_layers, bytes_per_tok, bandwidth, latency)
    width = model.num_heads * model.head_dim
    full = recompute_seconds(tab.num_tokens, num_params, model.num_layers, width, flops)
    cached_part = recompute_seconds(c_tokens, num_params, model.num_layers, width, flops)
    return ts, full - cached_part


def preemption_seconds(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
                       latency: float, flops: float) -> tuple[float, float]:
    """(t_swap, t_recompute) for preempting ``seq_id``, counting only its private blocks and uncached tokens."""
    return _costs_of(manager, seq_id, model, num_params, bandwidth, latency, flops)


def choose(manager: BlockManager, seq_id, model: ModelShape, num_params: float, bandwidth: float,
           latency: float, flops: float) -> str:
    """"swap" when the CPU pool has room for ``seq_id`` and swapping is cheaper, else "recompute"."""
    t_s, t_r = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)
    fits = manager.can_swap_out(seq_id)
    if fits and t_s < t_r:
        return "swap"
    return "recompute"

# sanity: at B* the two costs agree
n_, L_, c_ = 2048, 40, 10240
t_rec_ = recompute_seconds(n_, 12.9e9, L_, 5120, 156e12)
b_star = crossover_block_size(n_, L_, c_, 31.5e9, 1e-5, t_rec_)
print("B* =", b_star, swap_seconds(n_, b_star, L_, c_, 31.5e9, 1e-5), t_rec_)
''',
    }),
    'ex10 pending and evicted lists, can_add for admission, a smoke-test cell with an assert': ('HONEST', 'ex10_scheduler_step', {
        'schedule-work': r'''
def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    pending = list(running)          # not yet grown, oldest first
    kept = []
    evicted = []                     # in the order they were preempted (newest first)
    while pending:
        cur = pending.pop(0)
        grew = False
        while True:
            if manager.can_append(cur.seq_id):
                nxt = len(cur.tokens)
                manager.append(cur.seq_id, nxt)
                cur.tokens.append(nxt)
                grew = True
                break
            victim = pending.pop() if pending else cur
            manager.free(victim.seq_id)
            evicted.append(victim)
            step.preempted.append(victim.seq_id)
            if victim is cur:
                break
        if grew:
            kept.append(cur)
            step.grown.append(cur.seq_id)
    for victim in evicted:           # newest preempted first, so the oldest ends up in front
        waiting.appendleft(victim)
    running[:] = kept
    budget_used = len(kept)
    if not evicted:
        while len(waiting) > 0:
            head = waiting[0]
            if not manager.can_add(len(head.tokens)):
                break
            if budget_used + len(head.tokens) > max_num_batched_tokens:
                break
            waiting.popleft()
            manager.add(head.seq_id, head.tokens)
            running.append(head)
            step.admitted.append(head.seq_id)
            budget_used += len(head.tokens)
    step.num_tokens = budget_used
    return step

# quick smoke test of my own
m_demo = BlockManager(6, 4, watermark=0.0)
rs = [Request("a", [1, 2, 3, 4]), Request("b", [5, 6, 7, 8])]
for r_ in rs:
    m_demo.add(r_.seq_id, r_.tokens)
wq = deque([Request("c", [9] * 5)])
st = schedule_step(m_demo, rs, wq, 100)
print(st, [x.seq_id for x in rs], [x.seq_id for x in wq], m_demo.num_free_blocks)
assert st.grown == ["a", "b"]
''',
    }),
    'ex07 stretch match walking the keys of all tokens but the last': ('HONEST', 'ex07_stretch_prefix_cache_match', {
        'cache-work': r'''
Entry = namedtuple("Entry", "parent_id tokens prefix_id")


class MiniPrefixCache:
    """Full blocks by chained key; ``match`` finds the cached blocks of a prompt's longest cached prefix."""

    BROKEN = -1  # the prefix id after a block that could not be cached: nothing after it is cached either

    def __init__(self, block_size: int, hash_fn=lambda parent_key, tokens: hash((parent_key, tokens))):
        self.block_size = block_size
        self.hash_fn = hash_fn
        self.block_of: dict[int, int] = {}      # key -> block id
        self.entry: dict[int, Entry] = {}       # block id -> what it holds
        self.next_prefix_id = 1

    def register(self, block_id: int, key: int, parent_id, tokens: tuple) -> int:
        """Cache ``block_id`` under ``key`` if the key is free; return the prefix id to chain the next block on."""
        if parent_id == self.BROKEN:
            return self.BROKEN
        if key in self.block_of:
            stored = self.entry[self.block_of[key]]
            return stored.prefix_id if (stored.parent_id, stored.tokens) == (parent_id, tokens) else self.BROKEN
        prefix_id, self.next_prefix_id = self.next_prefix_id, self.next_prefix_id + 1
        self.block_of[key] = block_id
        self.entry[block_id] = Entry(parent_id, tokens, prefix_id)
        return prefix_id

    def insert(self, tokens: list[int], block_ids: list[int]) -> None:
        """Cache the full blocks of a prompt whose K/V were computed into ``block_ids``."""
        parent_id, bs = None, self.block_size
        for i, key in enumerate(self.keys(tokens)):
            parent_id = self.register(block_ids[i], key, parent_id, tuple(tokens[i * bs:(i + 1) * bs]))

    def keys(self, tokens: list[int]) -> list[int]:
        """The chained key of every full block of ``tokens``."""
        out = []
        chain = None
        n_full = len(tokens) // self.block_size
        for j in range(n_full):
            piece = tuple(tokens[j * self.block_size:(j + 1) * self.block_size])
            chain = self.hash_fn(chain, piece)
            out.append(chain)
        return out

    def match(self, tokens: list[int]) -> list[int]:
        """The cached block ids of the longest cached prefix of ``tokens`` (never all of it)."""
        # leave the last token out: its block can then never be a full block of what is looked up
        usable = self.keys(tokens[:-1])
        found = []
        expected_parent = None
        for j, k in enumerate(usable):
            if k not in self.block_of:
                break
            bid = self.block_of[k]
            e = self.entry[bid]
            same_tokens = list(e.tokens) == tokens[j * self.block_size:(j + 1) * self.block_size]
            if not same_tokens or e.parent_id != expected_parent:
                break
            found.append(bid)
            expected_parent = e.prefix_id
        return found
''',
    }),
    'ex04 stretch inputs copied by contiguous() in the launcher, the kernel reading the copies': ('ATTACKS', 'ex04_stretch_gqa_forward', {
        'kernel-work': '@triton.jit\ndef gqa_kernel(Q, K, V, Out, n_heads, group, n_q, n_k, qk_scale,\n               stride_qb, stride_qh, stride_qn, stride_kb, stride_kh, stride_kn,\n               stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on,\n               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):\n    start_m = tl.program_id(0) * BLOCK_M\n    # which (batch, query head) am I? program_id(1) runs over batch * n_heads\n    pid_bh = tl.program_id(1)\n    which_batch = pid_bh // n_heads\n    qhead = pid_bh - which_batch * n_heads\n    kvhead = qhead // group            # heads 0..group-1 -> kv 0, next group -> kv 1, ...\n    Q += which_batch * stride_qb + qhead * stride_qh\n    Out += which_batch * stride_ob + qhead * stride_oh\n    K += which_batch * stride_kb + kvhead * stride_kh\n    V += which_batch * stride_vb + kvhead * stride_vh\n    rows = start_m + tl.arange(0, BLOCK_M)\n    offs_d = tl.arange(0, HEAD_DIM)\n    q = tl.load(Q + rows[:, None] * stride_qn + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)\n    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)\n    l_i = tl.zeros([BLOCK_M], tl.float32)\n    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)\n    for start_n in range(0, n_k, BLOCK_N):\n        cols = start_n + tl.arange(0, BLOCK_N)\n        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)\n        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)\n        s = tl.where(cols[None, :] < n_k, tl.dot(q, k, input_precision="ieee") * qk_scale, float("-inf"))\n        m_new = tl.maximum(m_i, tl.max(s, 1))\n        p = tl.exp2(s - m_new[:, None])\n        alpha = tl.exp2(m_i - m_new)\n        l_i = alpha * l_i + tl.sum(p, 1)\n        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")\n        m_i = m_new\n    tl.store(Out + rows[:, None] * stride_on + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)\n\n\ndef gqa_forward(q, k, v, block_m=16, block_n=32):\n    """Attention of q (batch, n_heads, n_q, d) over k, v (batch, n_kv_heads, n_k, d), without a causal mask."""\n    batch, n_heads, n_q, d = q.shape\n    n_kv_heads, n_k = k.shape[1], k.shape[2]\n    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)\n    qk_scale = d ** -0.5 * 1.4426950408889634  # softmax scale times log2(e)\n    per_kv, leftover = divmod(n_heads, n_kv_heads)\n    if leftover != 0 or per_kv == 0:\n        raise ValueError(f"the number of K/V heads of k ({n_kv_heads}) must divide q\'s {n_heads} query heads")\n    group = per_kv\n    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()   # simpler strides\n    n_tiles = (n_q + block_m - 1) // block_m\n    grid = (n_tiles, batch * n_heads)\n    gqa_kernel[grid](q, k, v, out, n_heads, group, n_q, n_k, qk_scale,\n                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3],\n                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)\n    return out\n',
    }),
}


# Round 38z23 (against 7cb7dba): an outside class of 9; its wrong answers that passed and its honest learners (its
# three-pass softmax and its cascade without a merge are listed: reads and cascade_attention are not graded).
ROUND_38Z23 = {
    'ex06 allocate_many copying the whole free list at each call': ('ATTACKS', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _valid(self, b):
        return 0 <= b < self.num_blocks

    def allocate(self) -> int:
        if len(self.free_list) == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def incref(self, block: int) -> None:
        if not self._valid(block) or self.ref_count[block] < 1:
            raise ValueError("incref of a block nobody holds: %r" % block)
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        if not self._valid(block):
            raise ValueError("no such block: %r" % block)
        if self.ref_count[block] < 1:
            raise ValueError("block %r is free already" % block)
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)

    def allocate_many(self, n: int) -> list[int]:
        have = len(self.free_list)
        if n > have:
            raise OutOfBlocks(n, have, self.num_blocks)
        taken = self.free_list[have - n:][::-1]   # the top n, in pop order
        self.free_list = self.free_list[:have - n]
        for b in taken:
            self.ref_count[b] = 1
        return taken
''',
        'boundary-work': r'''
def blocks_needed(num_tokens: int, block_size: int) -> int:
    full, rest = divmod(num_tokens, block_size)
    return full + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    which, offset = divmod(position, block_size)
    return block_ids[which] * block_size + offset
''',
    }),
    'ex00 x itself returned when it has no elements': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    if x.numel() == 0:          # nothing to normalise
        return x
    peak = torch.max(x, dim=-1, keepdim=True).values
    shifted = torch.exp(x - peak)
    return shifted / torch.sum(shifted, dim=-1, keepdim=True)
''',
    }),
    'ex00 torch max, exp and sum with its own names, a scratch cell': ('HONEST', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    peak = torch.max(x, dim=-1, keepdim=True).values
    shifted = torch.exp(x - peak)
    total = torch.sum(shifted, dim=-1, keepdim=True)
    return shifted / total

demo = torch.tensor([[1.0, 2.0, 3.0], [1e4, 1e4, -1e4]])
p = softmax_rows(demo)
print(p, p.sum(-1))
assert torch.allclose(p.sum(-1), torch.ones(2))
''',
    }),
    'ex03 its own add kernel and online softmax kernel': ('HONEST', 'ex03_triton_basics', {
        'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """x + y, strided inputs read in place."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    count = x.shape[0]
    n_programs = triton.cdiv(count, block)
    add_kernel[(n_programs,)](x, y, out, count, x.stride(0), y.stride(0), BLOCK=block)
    return out
''',
        'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    src = x_ptr + r * stride_x
    dst = out_ptr + r * stride_out
    run_max = float("-inf")
    run_sum = 0.0
    for c0 in range(0, n_cols, BLOCK):
        ok = c0 + lanes < n_cols
        tile = tl.load(src + c0 + lanes, mask=ok, other=float("-inf"))
        new_max = tl.maximum(run_max, tl.max(tile, 0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(tile - new_max), 0)
        run_max = new_max
    for c0 in range(0, n_cols, BLOCK):
        ok = c0 + lanes < n_cols
        tile = tl.load(src + c0 + lanes, mask=ok, other=float("-inf"))
        tl.store(dst + c0 + lanes, tl.exp(tile - run_max) / run_sum, mask=ok)


def softmax(x, block=16):
    """Row softmax in tiles of `block` columns."""
    result = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n_rows, n_cols = x.shape
    softmax_kernel[(n_rows,)](x, result, n_cols, x.stride(0), result.stride(0), BLOCK=block)
    return result
''',
    }),
    'ex06 a valid helper, allocate_many by a while loop, divmod for the boundaries': ('HONEST', 'ex06_block_allocator', {
        'allocator-work': r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def _valid(self, b):
        return 0 <= b < self.num_blocks

    def allocate(self) -> int:
        if len(self.free_list) == 0:
            raise OutOfBlocks(1, 0, self.num_blocks)
        b = self.free_list.pop()
        self.ref_count[b] = 1
        return b

    def incref(self, block: int) -> None:
        if not self._valid(block) or self.ref_count[block] < 1:
            raise ValueError("incref of a block nobody holds: %r" % block)
        self.ref_count[block] += 1

    def free(self, block: int) -> None:
        if not self._valid(block):
            raise ValueError("no such block: %r" % block)
        if self.ref_count[block] < 1:
            raise ValueError("block %r is free already" % block)
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free_list.append(block)

    def allocate_many(self, n: int) -> list[int]:
        have = len(self.free_list)
        if have < n:
            raise OutOfBlocks(n, have, self.num_blocks)
        got = []
        while len(got) < n:
            got.append(self.allocate())
        return got
''',
        'boundary-work': r'''
def blocks_needed(num_tokens: int, block_size: int) -> int:
    full, rest = divmod(num_tokens, block_size)
    return full + (1 if rest else 0)


def slot(block_ids: list[int], block_size: int, position: int) -> int:
    which, offset = divmod(position, block_size)
    return block_ids[which] * block_size + offset
''',
    }),
    'ex09 stretch integer split bounds, the merge by einsum, cascade as two states merged': ('HONEST', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    share = (context_len + num_splits - 1) // num_splits
    width = (share + block_n - 1) // block_n * block_n
    pairs = []
    for i in range(num_splits):
        lo = min(i * width, context_len)
        hi = min(lo + width, context_len)
        pairs.append((lo, hi))
    return pairs
''',
        'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    ref = torch.max(lses, dim=-1, keepdim=True).values      # largest lse: all exponents <= 0
    weights = (lses - ref).exp()                            # empty split: exp(-inf) = 0
    denom = weights.sum(-1)
    merged = torch.einsum("...s,...sd->...d", weights, outs) / denom.unsqueeze(-1)
    return merged, ref.squeeze(-1) + denom.log()
''',
        'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    b = q.shape[0]
    shared_tables = prefix_table.unsqueeze(0).repeat(b, 1)
    shared_lens = torch.full_like(own_lens, prefix_len)
    o1, l1 = paged_decode_split(q, k_cache, v_cache, shared_tables, shared_lens, 1)
    o2, l2 = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    merged, _ = merge_states(torch.cat((o1, o2), dim=2), torch.cat((l1, l2), dim=2))
    return merged
''',
    }),
}


# Round 38z25 (against e2752d1): an outside class of 8; its one wrong answer that passed (ex00 on x of shape (1,)) and
# two of its honest learners.
ROUND_38Z25 = {
    'ex00 a row of shape (n,) made 2-d and squeezed back, 0-d for n = 1': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    flat = x.unsqueeze(0) if x.dim() == 1 else x.reshape(-1, x.shape[-1])
    top = flat.max(dim=1, keepdim=True).values
    e = (flat - top).exp()
    p = e / e.sum(dim=1, keepdim=True)
    return p.squeeze() if x.dim() == 1 else p.reshape(x.shape)
''',
    }),
    'ex00 max()values, an in-place divide of its own tensor and a scratch cell timed against torch': ('HONEST', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, stable for scores of any magnitude."""
    shift = x.max(dim=-1, keepdim=True).values   # largest score of each row
    z = (x - shift).exp()                        # every entry in (0, 1]
    z /= z.sum(dim=-1, keepdim=True)             # z is ours (a new tensor), so in place is fine
    return z

demo = torch.tensor([[1.0, 2.0, 3.0], [1e4, 1e4, -1e4]])
probs = softmax_rows(demo)
print(probs)
assert torch.allclose(probs.sum(-1), torch.ones(2))
assert torch.allclose(probs, torch.softmax(demo, dim=-1))
''',
    }),
    'ex03 softmax with a running max and sum per lane merged after the first pass, a grid function': ('HONEST', 'ex03_triton_basics', {
        'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK
    i = start + tl.arange(0, BLOCK)
    inside = i < n                     # lanes past the end neither read nor write
    a = tl.load(x_ptr + i * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + i * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + i, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is a new contiguous
    tensor (``x`` and ``y`` are only read)."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    add_kernel[grid](x, y, out, n, x.stride()[0], y.stride()[0], BLOCK=block)
    return out
''',
        'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    src = x_ptr + r * stride_x
    dst = out_ptr + r * stride_out
    lanes = tl.arange(0, BLOCK)
    # pass 1: a running max and sum per lane, merged across lanes at the end
    lane_max = tl.full([BLOCK], float("-inf"), tl.float32)
    lane_sum = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        idx = c0 + lanes
        ok = idx < n_cols
        vals = tl.load(src + idx, mask=ok, other=float("-inf"))
        new_max = tl.maximum(lane_max, vals)
        ref = tl.where(new_max == float("-inf"), 0.0, new_max)   # a lane that saw nothing yet stays (-inf, 0)
        lane_sum = lane_sum * tl.exp(lane_max - ref) + tl.exp(vals - ref)
        lane_max = new_max
    row_max = tl.max(lane_max, 0)
    total = tl.sum(lane_sum * tl.exp(lane_max - row_max), 0)
    # pass 2: write
    for c0 in range(0, n_cols, BLOCK):
        idx = c0 + lanes
        ok = idx < n_cols
        vals = tl.load(src + idx, mask=ok, other=float("-inf"))
        tl.store(dst + idx, tl.exp(vals - row_max) / total, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns;
    the result is a new tensor (``x`` is only read)."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out

# quick look before the checks
w = torch.randn(5, 40)[:, 3:37]
mine = softmax(w, block=8)
print("max error vs torch:", (mine - torch.softmax(w, -1)).abs().max().item())
col = torch.arange(30.0).reshape(10, 3)[:, 1]
print(vector_add(col, col))
''',
    }),
}


# Round 38z26 (against e2752d1): an outside class of 8, every verdict right; one honest learner in a style no row had.
ROUND_38Z26 = {
    'ex09 stretch bounds counted in whole tiles, a merge by logsumexp and softmax weights in einsum': ('HONEST', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    n_tiles = (context_len + block_n - 1) // block_n
    tiles_each = (n_tiles + num_splits - 1) // num_splits
    span = tiles_each * block_n
    result = []
    for s in range(num_splits):
        lo = min(s * span, context_len)
        hi = min(lo + span, context_len)
        result.append((lo, hi))
    return result
''',
        'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    lse_total = torch.logsumexp(lses, dim=-1)
    probs = torch.softmax(lses, dim=-1)          # e^{lse_s - lse_total}, stable for any lses
    out = torch.einsum("...s,...sd->...d", probs, outs)
    return out, lse_total
''',
        'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    shared_tables = prefix_table.unsqueeze(0).repeat(n, 1)
    shared_lens = torch.full_like(own_lens, prefix_len)
    o1, l1 = paged_decode_split(q, k_cache, v_cache, shared_tables, shared_lens, 1)
    o2, l2 = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    merged, _ = merge_states(torch.cat((o1, o2), dim=2), torch.cat((l1, l2), dim=2))
    return merged

for args in [(10, 3, 4), (5, 4, 2), (0, 2, 8), (64, 4, 16)]:
    print(args, split_bounds(*args))

# sanity check: merging two halves of a softmax gives the full softmax
_x = torch.randn(2, 3, 10)
_v = torch.randn(2, 3, 10, 4)
_parts_o, _parts_l = [], []
for _a, _b in [(0, 6), (6, 10)]:
    _l = torch.logsumexp(_x[..., _a:_b], -1)
    _parts_l.append(_l)
    _parts_o.append((torch.softmax(_x[..., _a:_b], -1)[..., None] * _v[..., _a:_b, :]).sum(-2))
_o, _L = merge_states(torch.stack(_parts_o, -2), torch.stack(_parts_l, -1))
_full = (torch.softmax(_x, -1)[..., None] * _v).sum(-2)
assert torch.allclose(_o, _full, atol=1e-5) and torch.allclose(_L, torch.logsumexp(_x, -1), atol=1e-5)
print("merge ok", _o.shape, _L.shape)
''',
    }),
}


# Audits E1 and E2 (against 89b45ab): pairs of stated edges, each drawn alone and never together; the wrong answers
# that passed (ex04 on 4 of 5 seeds, ex00 on 5 of 5, ex04b on 4 of 25), and an honest ex02 stretch masking by where
# with a tile of -inf (two operations a tile by check 5's count of values, which failed it; one by the count of masks).
ROUND_38Z26_AUDIT = {
    'ex04 the causal mask left off key tiles one key past those wholly visible': ('ATTACKS', 'ex04_flash_forward', {
        'kernel-work': r'''
@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        ### BEGIN SOLUTION
        s = tl.dot(q, k, input_precision="ieee") * qk_scale
        keep = cols[None, :] < n_k
        if CAUSAL:
            if start_n + BLOCK_N - 1 > start_m + n_k - n_q + 1:  # (off by one: a tile whose last key only row start_m+1 sees)
                keep = keep & (cols[None, :] <= rows[:, None] + n_k - n_q)
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        acc = alpha[:, None] * acc + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
        ### END SOLUTION
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)''',
    }),
    'ex00 rows softmaxed one by one and stacked, no rows answered by a float32 torch empty': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    if x.numel() == 0:
        return torch.empty(x.shape)
    rows = x.reshape(-1, x.shape[-1])
    out = []
    for r in rows:
        e = torch.exp(r - r.max())
        out.append(e / e.sum())
    return torch.stack(out).reshape(x.shape)
''',
    }),
    'ex00 rows softmaxed one by one and stacked, no rows told by the first dimension alone': ('ATTACKS', 'ex00_warmup', {
        'softmax-work': r'''
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    if x.shape[0] == 0:
        return x.new_empty(x.shape)
    rows = x.reshape(-1, x.shape[-1])
    out = []
    for r in rows:
        e = torch.exp(r - r.max())
        out.append(e / e.sum())
    return torch.stack(out).reshape(x.shape)
''',
    }),
    'ex04b read_report telling the loads by the matrix instruction': ('ATTACKS', 'ex04b_performance_lab', {
        'read-work': r'''
def read_report(report: dict) -> dict:
    sass = report["sass"]
    matrix = "HGMMA" if sass["HGMMA"] > 0 else "HMMA"
    return {"registers": report["registers"], "spill_bytes": report["spill_bytes"],
            "shared_kib": report["shared_bytes"] / 1024, "matrix": matrix,
            "loads": "UTMALDG" if matrix == "HGMMA" else "LDGSTS"}
''',
    }),
    'ex04b read_report telling the matrix instruction by the loads': ('ATTACKS', 'ex04b_performance_lab', {
        'read-work': r'''
def read_report(report: dict) -> dict:
    sass = report["sass"]
    loads = "UTMALDG" if sass["UTMALDG"] > 0 else "LDGSTS"
    return {"registers": report["registers"], "spill_bytes": report["spill_bytes"],
            "shared_kib": report["shared_bytes"] / 1024,
            "matrix": "HGMMA" if loads == "UTMALDG" else "HMMA", "loads": loads}
''',
    }),
    'ex02 stretch straddling tiles masked by torch where with a tile of -inf': ('HONEST', 'ex02_stretch_causal_tile_skipping', {
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    row_max = s.max(dim=1).values
    new_m = torch.maximum(m, row_max)
    # a row with nothing visible yet keeps -inf as its max: shift by 0 there, so exp gives 0 and not NaN
    shift = torch.where(torch.isneginf(new_m), torch.zeros_like(new_m), new_m)
    rescale = (m - shift).exp()
    weights = (s - shift.unsqueeze(1)).exp()
    return new_m, rescale * l + weights.sum(1), rescale.unsqueeze(1) * acc + weights @ v_tile


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    n_q, d = q.shape
    n_k = k.shape[0]
    offset = n_k - n_q
    result = torch.zeros(n_q, d)
    for start in range(0, n_q, block_m):
        stop = min(start + block_m, n_q)
        queries = q[start:stop].float() / math.sqrt(d)
        width = stop - start
        n_full, n_visit = key_tile_counts(start, width, n_q, n_k, block_n)
        run_max = torch.full((width,), -math.inf)
        run_sum, run_acc = torch.zeros(width), torch.zeros(width, d)
        query_pos = torch.arange(start, stop)
        for tile in range(n_visit):
            lo, hi = tile * block_n, min((tile + 1) * block_n, n_k)
            scores = queries @ k[lo:hi].float().T
            if tile >= n_full:   # straddles the diagonal: keep what each row sees, -inf elsewhere
                visible = torch.arange(lo, hi)[None, :] <= query_pos[:, None] + offset
                scores = torch.where(visible, scores, torch.full_like(scores, -math.inf))
            run_max, run_sum, run_acc = online_softmax_update(run_max, run_sum, run_acc, scores, v[lo:hi].float())
        has_key = run_sum > 0
        denom = torch.where(has_key, run_sum, torch.ones_like(run_sum))
        result[start:stop] = torch.where(has_key[:, None], run_acc / denom[:, None], torch.zeros_like(run_acc))
    return result.to(q.dtype)
''',
    }),
}


# Round 38z29 (against 801d78e): an outside class of 8 aimed at ex02 stretch's new count of masks; its one wrong answer
# that passed (a bound of two masks a tile let one extra tile a query tile through) and two honest maskers.
ROUND_38Z29 = {
    'ex02 stretch masking the tile before the diagonal too, one operation a tile': ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    offset = n_k - n_q                      # row i sees keys 0 .. i + offset
    top_sees = r0 + offset                  # last key seen by the top row of the tile
    bottom_sees = r0 + rows - 1 + offset    # last key seen by the bottom row
    tiles = (n_k + block_n - 1) // block_n
    if bottom_sees < 0:
        return 0, 0
    visit = min(tiles, bottom_sees // block_n + 1)
    if top_sees < 0:
        full = 0
    elif top_sees >= n_k - 1:
        full = tiles                        # the top row sees every key, the short last tile included
    else:
        full = (top_sees + 1) // block_n    # tiles wholly inside 0 .. top_sees
    return full, visit
''',
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    tile_max = s.max(dim=1).values
    new_max = torch.maximum(m, tile_max)
    # rows still blind: shift by 0 so that exp(-inf - 0) = 0 and nothing turns into NaN
    shift = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
    weights = torch.exp(s - shift.unsqueeze(1))
    scale_old = torch.exp(m - shift)
    new_l = l * scale_old + weights.sum(dim=1)
    new_acc = acc * scale_old.unsqueeze(1) + weights @ v_tile
    return new_max, new_l, new_acc


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    offset = n_k - n_q
    inv = 1.0 / math.sqrt(d)
    for top in range(0, n_q, block_m):
        bottom = min(top + block_m, n_q)
        rows = bottom - top
        qt = q[top:bottom].float() * inv
        full, visit = key_tile_counts(top, rows, n_q, n_k, block_n)
        m = torch.full((rows,), -math.inf)
        l = torch.zeros(rows)
        acc = torch.zeros(rows, d)
        for t in range(visit):
            lo = t * block_n
            hi = min(lo + block_n, n_k)
            kt = k[lo:hi].float()
            vt = v[lo:hi].float()
            scores = qt @ kt.T
            if t >= full - 1:
                key_pos = torch.arange(lo, hi)
                row_pos = torch.arange(top, bottom)
                hidden = key_pos.unsqueeze(0) > (row_pos + offset).unsqueeze(1)
                scores = torch.where(hidden, torch.full_like(scores, -math.inf), scores)
            m, l, acc = online_softmax_update(m.to(scores.dtype), l.to(scores.dtype), acc.to(scores.dtype), scores, vt)
        has_key = l > 0
        safe_l = torch.where(has_key, l, torch.ones_like(l))
        out[top:bottom] = (acc / safe_l.unsqueeze(1)).float() * has_key.unsqueeze(1)
    return out.to(q.dtype)
''',
    }),
    'ex02 stretch tile bounds of its own, straddling tiles masked by where with a tile of -inf': ('HONEST', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    offset = n_k - n_q                      # row i sees keys 0 .. i + offset
    top_sees = r0 + offset                  # last key seen by the top row of the tile
    bottom_sees = r0 + rows - 1 + offset    # last key seen by the bottom row
    tiles = (n_k + block_n - 1) // block_n
    if bottom_sees < 0:
        return 0, 0
    visit = min(tiles, bottom_sees // block_n + 1)
    if top_sees < 0:
        full = 0
    elif top_sees >= n_k - 1:
        full = tiles                        # the top row sees every key, the short last tile included
    else:
        full = (top_sees + 1) // block_n    # tiles wholly inside 0 .. top_sees
    return full, visit
''',
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    tile_max = s.max(dim=1).values
    new_max = torch.maximum(m, tile_max)
    # rows still blind: shift by 0 so that exp(-inf - 0) = 0 and nothing turns into NaN
    shift = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
    weights = torch.exp(s - shift.unsqueeze(1))
    scale_old = torch.exp(m - shift)
    new_l = l * scale_old + weights.sum(dim=1)
    new_acc = acc * scale_old.unsqueeze(1) + weights @ v_tile
    return new_max, new_l, new_acc


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    offset = n_k - n_q
    inv = 1.0 / math.sqrt(d)
    for top in range(0, n_q, block_m):
        bottom = min(top + block_m, n_q)
        rows = bottom - top
        qt = q[top:bottom].float() * inv
        full, visit = key_tile_counts(top, rows, n_q, n_k, block_n)
        m = torch.full((rows,), -math.inf)
        l = torch.zeros(rows)
        acc = torch.zeros(rows, d)
        for t in range(visit):
            lo = t * block_n
            hi = min(lo + block_n, n_k)
            kt = k[lo:hi].float()
            vt = v[lo:hi].float()
            scores = qt @ kt.T
            if t >= full:
                key_pos = torch.arange(lo, hi)
                row_pos = torch.arange(top, bottom)
                hidden = key_pos.unsqueeze(0) > (row_pos + offset).unsqueeze(1)
                scores = torch.where(hidden, torch.full_like(scores, -math.inf), scores)
            m, l, acc = online_softmax_update(m.to(scores.dtype), l.to(scores.dtype), acc.to(scores.dtype), scores, vt)
        has_key = l > 0
        safe_l = torch.where(has_key, l, torch.ones_like(l))
        out[top:bottom] = (acc / safe_l.unsqueeze(1)).float() * has_key.unsqueeze(1)
    return out.to(q.dtype)

# my own scratch checks
for (r0, rows, nq, nk, bn) in [(0, 4, 8, 8, 4), (4, 4, 8, 8, 4), (0, 4, 10, 6, 4), (8, 8, 16, 19, 8)]:
    print((r0, rows, nq, nk, bn), key_tile_counts(r0, rows, nq, nk, bn))
qq, kk = torch.randn(13, 5), torch.randn(17, 5)
vv = torch.randn(17, 5)
full_scores = (qq @ kk.T) / math.sqrt(5)
full_scores = full_scores.masked_fill(torch.ones(13, 17, dtype=torch.bool).triu(17 - 13 + 1), -math.inf)
expected = torch.softmax(full_scores, dim=-1) @ vv
mine = causal_tiled_attention(qq, kk, vv, block_m=4, block_n=3)
print("max diff", (mine - expected).abs().max().item())
assert torch.allclose(mine, expected, atol=1e-5)
''',
    }),
    'ex02 stretch a mask helper applied by item assignment, a while loop, bounds by math ceil': ('HONEST', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''
import math as _m

def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    n_tiles = _m.ceil(n_k / block_n) if n_k < 2**52 else -(-n_k // block_n)
    last_key_of_last_row = r0 + rows - 1 + n_k - n_q
    last_key_of_first_row = r0 + n_k - n_q
    n_visit = max(0, min(n_tiles, (last_key_of_last_row + block_n) // block_n)) if last_key_of_last_row >= 0 else 0
    # a tile is full when its last key index (min((t+1)*bn, n_k) - 1) <= last_key_of_first_row
    if last_key_of_first_row < 0:
        n_full = 0
    elif last_key_of_first_row >= n_k - 1:
        n_full = n_tiles
    else:
        n_full = (last_key_of_first_row + 1) // block_n
    return n_full, n_visit
''',
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    m_next = torch.max(torch.stack([m, s.amax(-1)]), dim=0).values
    ref = m_next.clone()
    ref[ref == float("-inf")] = 0.0          # no visible key yet in these rows
    correction = (m - ref).exp()
    p = (s - ref[:, None]).exp()
    return m_next, correction * l + p.sum(-1), correction[:, None] * acc + torch.matmul(p, v_tile)


def _tile_mask(first_row, n_rows, first_key, n_keys, diag_shift):
    r = torch.arange(first_row, first_row + n_rows).view(-1, 1)
    c = torch.arange(first_key, first_key + n_keys).view(1, -1)
    return c - r > diag_shift                # True = hidden


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    diag = n_k - n_q
    scale = d ** -0.5
    r0 = 0
    while r0 < n_q:
        qb = q[r0:r0 + block_m].to(torch.float32) * scale
        nr = qb.shape[0]
        no_mask_upto, visit_upto = key_tile_counts(r0, nr, n_q, n_k, block_n)
        state = (torch.full((nr,), float("-inf")), torch.zeros(nr), torch.zeros(nr, d))
        for tile in range(visit_upto):
            k0 = tile * block_n
            kb = k[k0:k0 + block_n].to(torch.float32)
            s = qb @ kb.t()
            if tile >= no_mask_upto:
                s[_tile_mask(r0, nr, k0, kb.shape[0], diag)] = float("-inf")
            state = online_softmax_update(*state, s, v[k0:k0 + block_n].to(torch.float32))
        mm, ll, aa = state
        res = torch.zeros(nr, d)
        ok = ll > 0
        res[ok] = aa[ok] / ll[ok].unsqueeze(-1)
        out[r0:r0 + nr] = res
        r0 += block_m
    return out.to(q.dtype)
''',
    }),
}



# Masks turned into floats and back (after round 38z29): the count of masks took a float mask and the mask made back
# from it for two masks a tile, where it is one mask applied once. Two honest maskers in that style (round 38z29's
# honest bounds), and every visited tile masked that way (the statement's first n_full need none).
MASKS_IN_FLOATS = {
    'ex02 stretch straddling tiles masked through a float mask of ones and zeros, made back by == 0': ('HONEST', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    offset = n_k - n_q                      # row i sees keys 0 .. i + offset
    top_sees = r0 + offset                  # last key seen by the top row of the tile
    bottom_sees = r0 + rows - 1 + offset    # last key seen by the bottom row
    tiles = (n_k + block_n - 1) // block_n
    if bottom_sees < 0:
        return 0, 0
    visit = min(tiles, bottom_sees // block_n + 1)
    if top_sees < 0:
        full = 0
    elif top_sees >= n_k - 1:
        full = tiles                        # the top row sees every key, the short last tile included
    else:
        full = (top_sees + 1) // block_n    # tiles wholly inside 0 .. top_sees
    return full, visit
''',
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    tile_max = s.max(dim=1).values
    new_max = torch.maximum(m, tile_max)
    # rows still blind: shift by 0 so that exp(-inf - 0) = 0 and nothing turns into NaN
    shift = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
    weights = torch.exp(s - shift.unsqueeze(1))
    scale_old = torch.exp(m - shift)
    new_l = l * scale_old + weights.sum(dim=1)
    new_acc = acc * scale_old.unsqueeze(1) + weights @ v_tile
    return new_max, new_l, new_acc


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    offset = n_k - n_q
    inv = 1.0 / math.sqrt(d)
    for top in range(0, n_q, block_m):
        bottom = min(top + block_m, n_q)
        rows = bottom - top
        qt = q[top:bottom].float() * inv
        full, visit = key_tile_counts(top, rows, n_q, n_k, block_n)
        m = torch.full((rows,), -math.inf)
        l = torch.zeros(rows)
        acc = torch.zeros(rows, d)
        for t in range(visit):
            lo = t * block_n
            hi = min(lo + block_n, n_k)
            kt = k[lo:hi].float()
            vt = v[lo:hi].float()
            scores = qt @ kt.T
            if t >= full:
                key_pos = torch.arange(lo, hi)
                row_pos = torch.arange(top, bottom)
                keep = (key_pos.unsqueeze(0) <= (row_pos + offset).unsqueeze(1)).float()   # 1 = visible, 0 = hidden
                scores = scores.masked_fill(keep == 0, -math.inf)
            m, l, acc = online_softmax_update(m.to(scores.dtype), l.to(scores.dtype), acc.to(scores.dtype), scores, vt)
        has_key = l > 0
        safe_l = torch.where(has_key, l, torch.ones_like(l))
        out[top:bottom] = (acc / safe_l.unsqueeze(1)).float() * has_key.unsqueeze(1)
    return out.to(q.dtype)

# my own scratch checks
for (r0, rows, nq, nk, bn) in [(0, 4, 8, 8, 4), (4, 4, 8, 8, 4), (0, 4, 10, 6, 4), (8, 8, 16, 19, 8)]:
    print((r0, rows, nq, nk, bn), key_tile_counts(r0, rows, nq, nk, bn))
qq, kk = torch.randn(13, 5), torch.randn(17, 5)
vv = torch.randn(17, 5)
full_scores = (qq @ kk.T) / math.sqrt(5)
full_scores = full_scores.masked_fill(torch.ones(13, 17, dtype=torch.bool).triu(17 - 13 + 1), -math.inf)
expected = torch.softmax(full_scores, dim=-1) @ vv
mine = causal_tiled_attention(qq, kk, vv, block_m=4, block_n=3)
print("max diff", (mine - expected).abs().max().item())
assert torch.allclose(mine, expected, atol=1e-5)
''',
    }),
    'ex02 stretch straddling tiles masked by where on a mask in the score dtype, made back by > 0': ('HONEST', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    offset = n_k - n_q                      # row i sees keys 0 .. i + offset
    top_sees = r0 + offset                  # last key seen by the top row of the tile
    bottom_sees = r0 + rows - 1 + offset    # last key seen by the bottom row
    tiles = (n_k + block_n - 1) // block_n
    if bottom_sees < 0:
        return 0, 0
    visit = min(tiles, bottom_sees // block_n + 1)
    if top_sees < 0:
        full = 0
    elif top_sees >= n_k - 1:
        full = tiles                        # the top row sees every key, the short last tile included
    else:
        full = (top_sees + 1) // block_n    # tiles wholly inside 0 .. top_sees
    return full, visit
''',
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    tile_max = s.max(dim=1).values
    new_max = torch.maximum(m, tile_max)
    # rows still blind: shift by 0 so that exp(-inf - 0) = 0 and nothing turns into NaN
    shift = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
    weights = torch.exp(s - shift.unsqueeze(1))
    scale_old = torch.exp(m - shift)
    new_l = l * scale_old + weights.sum(dim=1)
    new_acc = acc * scale_old.unsqueeze(1) + weights @ v_tile
    return new_max, new_l, new_acc


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    offset = n_k - n_q
    inv = 1.0 / math.sqrt(d)
    for top in range(0, n_q, block_m):
        bottom = min(top + block_m, n_q)
        rows = bottom - top
        qt = q[top:bottom].float() * inv
        full, visit = key_tile_counts(top, rows, n_q, n_k, block_n)
        m = torch.full((rows,), -math.inf)
        l = torch.zeros(rows)
        acc = torch.zeros(rows, d)
        for t in range(visit):
            lo = t * block_n
            hi = min(lo + block_n, n_k)
            kt = k[lo:hi].float()
            vt = v[lo:hi].float()
            scores = qt @ kt.T
            if t >= full:
                visible = torch.arange(lo, hi)[None, :] <= torch.arange(top, bottom)[:, None] + offset
                weights = visible.to(scores.dtype)
                scores = torch.where(weights > 0, scores, torch.tensor(-math.inf))
            m, l, acc = online_softmax_update(m.to(scores.dtype), l.to(scores.dtype), acc.to(scores.dtype), scores, vt)
        has_key = l > 0
        safe_l = torch.where(has_key, l, torch.ones_like(l))
        out[top:bottom] = (acc / safe_l.unsqueeze(1)).float() * has_key.unsqueeze(1)
    return out.to(q.dtype)

# my own scratch checks
for (r0, rows, nq, nk, bn) in [(0, 4, 8, 8, 4), (4, 4, 8, 8, 4), (0, 4, 10, 6, 4), (8, 8, 16, 19, 8)]:
    print((r0, rows, nq, nk, bn), key_tile_counts(r0, rows, nq, nk, bn))
qq, kk = torch.randn(13, 5), torch.randn(17, 5)
vv = torch.randn(17, 5)
full_scores = (qq @ kk.T) / math.sqrt(5)
full_scores = full_scores.masked_fill(torch.ones(13, 17, dtype=torch.bool).triu(17 - 13 + 1), -math.inf)
expected = torch.softmax(full_scores, dim=-1) @ vv
mine = causal_tiled_attention(qq, kk, vv, block_m=4, block_n=3)
print("max diff", (mine - expected).abs().max().item())
assert torch.allclose(mine, expected, atol=1e-5)
''',
    }),
    'ex02 stretch every visited tile masked through a float mask made back by == 0': ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''
def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    offset = n_k - n_q                      # row i sees keys 0 .. i + offset
    top_sees = r0 + offset                  # last key seen by the top row of the tile
    bottom_sees = r0 + rows - 1 + offset    # last key seen by the bottom row
    tiles = (n_k + block_n - 1) // block_n
    if bottom_sees < 0:
        return 0, 0
    visit = min(tiles, bottom_sees // block_n + 1)
    if top_sees < 0:
        full = 0
    elif top_sees >= n_k - 1:
        full = tiles                        # the top row sees every key, the short last tile included
    else:
        full = (top_sees + 1) // block_n    # tiles wholly inside 0 .. top_sees
    return full, visit
''',
        'attention-work': r'''
def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    tile_max = s.max(dim=1).values
    new_max = torch.maximum(m, tile_max)
    # rows still blind: shift by 0 so that exp(-inf - 0) = 0 and nothing turns into NaN
    shift = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
    weights = torch.exp(s - shift.unsqueeze(1))
    scale_old = torch.exp(m - shift)
    new_l = l * scale_old + weights.sum(dim=1)
    new_acc = acc * scale_old.unsqueeze(1) + weights @ v_tile
    return new_max, new_l, new_acc


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    offset = n_k - n_q
    inv = 1.0 / math.sqrt(d)
    for top in range(0, n_q, block_m):
        bottom = min(top + block_m, n_q)
        rows = bottom - top
        qt = q[top:bottom].float() * inv
        full, visit = key_tile_counts(top, rows, n_q, n_k, block_n)
        m = torch.full((rows,), -math.inf)
        l = torch.zeros(rows)
        acc = torch.zeros(rows, d)
        for t in range(visit):
            lo = t * block_n
            hi = min(lo + block_n, n_k)
            kt = k[lo:hi].float()
            vt = v[lo:hi].float()
            scores = qt @ kt.T
            key_pos = torch.arange(lo, hi)
            row_pos = torch.arange(top, bottom)
            keep = (key_pos.unsqueeze(0) <= (row_pos + offset).unsqueeze(1)).float()   # 1 = visible, 0 = hidden
            scores = scores.masked_fill(keep == 0, -math.inf)
            m, l, acc = online_softmax_update(m.to(scores.dtype), l.to(scores.dtype), acc.to(scores.dtype), scores, vt)
        has_key = l > 0
        safe_l = torch.where(has_key, l, torch.ones_like(l))
        out[top:bottom] = (acc / safe_l.unsqueeze(1)).float() * has_key.unsqueeze(1)
    return out.to(q.dtype)

# my own scratch checks
for (r0, rows, nq, nk, bn) in [(0, 4, 8, 8, 4), (4, 4, 8, 8, 4), (0, 4, 10, 6, 4), (8, 8, 16, 19, 8)]:
    print((r0, rows, nq, nk, bn), key_tile_counts(r0, rows, nq, nk, bn))
qq, kk = torch.randn(13, 5), torch.randn(17, 5)
vv = torch.randn(17, 5)
full_scores = (qq @ kk.T) / math.sqrt(5)
full_scores = full_scores.masked_fill(torch.ones(13, 17, dtype=torch.bool).triu(17 - 13 + 1), -math.inf)
expected = torch.softmax(full_scores, dim=-1) @ vv
mine = causal_tiled_attention(qq, kk, vv, block_m=4, block_n=3)
print("max diff", (mine - expected).abs().max().item())
assert torch.allclose(mine, expected, atol=1e-5)
''',
    }),
}


# Round 38z30 (against 1b5ad4e): an outside class of 8 aimed at ex02 stretch's count of masks again; its three wrong
# verdicts (a loop over the key tiles, an empty split's lse taken as -10000, and an honest masker whose mask made back
# from floats was inverted, counted twice), and its honest learner who adds the log of a 0/1 mask.
ROUND_38Z30 = {
    'ex02 stretch key tiles counted by a loop over the tiles up to the first hidden one': ('ATTACKS', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''

def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    off = n_k - n_q
    ntiles = -(-n_k // block_n)
    fulls = visits = 0
    for t in range(ntiles):                      # walk the key tiles until one is hidden from the whole tile
        first_key = t * block_n
        last_key = min(first_key + block_n, n_k) - 1
        if first_key > r0 + rows - 1 + off:
            break                                # this and every later tile: hidden from every row
        visits += 1
        if fulls == t and last_key <= r0 + off:  # still in the leading run of fully visible tiles
            fulls += 1
    return fulls, visits
''',
        'attention-work': r'''

def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    tile_max = s.max(dim=1).values
    new_max = torch.maximum(m, tile_max)
    ref = torch.where(torch.isneginf(new_max), torch.zeros_like(new_max), new_max)  # subtract 0 for empty rows
    shrink = (m - ref).exp()
    probs = (s - ref.unsqueeze(1)).exp()
    return new_max, l * shrink + probs.sum(dim=1), acc * shrink.unsqueeze(1) + probs @ v_tile


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    offset = n_k - n_q
    inv = 1.0 / math.sqrt(d)
    for top in range(0, n_q, block_m):
        qt = q[top:top + block_m].float() * inv
        nr = qt.shape[0]
        nf, nv = key_tile_counts(top, nr, n_q, n_k, block_n)
        run_m = torch.full((nr,), float("-inf"))
        run_l = torch.zeros(nr)
        run_acc = torch.zeros(nr, d)
        qpos = torch.arange(top, top + nr)
        for j in range(nv):
            lo, hi = j * block_n, min((j + 1) * block_n, n_k)
            qk = qt @ k[lo:hi].float().T
            if j >= nf:
                hidden = torch.arange(lo, hi)[None, :] > qpos[:, None] + offset
                qk = qk.masked_fill(hidden, float("-inf"))
            run_m, run_l, run_acc = online_softmax_update(run_m, run_l, run_acc, qk, v[lo:hi].float())
        good = run_l > 0
        res = torch.zeros(nr, d)
        res[good] = run_acc[good] / run_l[good].unsqueeze(1)
        out[top:top + nr] = res
    return out.to(q.dtype)
''',
    }),
    "ex09 stretch an empty split's lse replaced by -10000 before the max": ('ATTACKS', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''

def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    tiles = -(-context_len // block_n)
    span = -(-tiles // num_splits) * block_n          # keys per split, whole tiles
    result = []
    for i in range(num_splits):
        lo = min(i * span, context_len)
        result.append((lo, min(lo + span, context_len)))
    return result
''',
        'merge-work': r'''

def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # empty splits carry lse = -inf; give them a large negative finite value instead (like a -10000 attention mask)
    # so that no -inf - (-inf) can appear
    safe = torch.where(torch.isinf(lses), torch.full_like(lses, -10000.0), lses)
    top = safe.max(dim=-1, keepdim=True).values
    wts = (safe - top).exp()
    denom = wts.sum(dim=-1)
    merged = (outs * wts.unsqueeze(-1)).sum(dim=-2) / denom.unsqueeze(-1)
    return merged, top.squeeze(-1) + denom.log()
''',
        'cascade-work': r'''

def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    pre_tables = prefix_table.unsqueeze(0).repeat(n, 1)
    pre_lens = torch.full_like(own_lens, prefix_len)
    o1, s1 = paged_decode_split(q, k_cache, v_cache, pre_tables, pre_lens, 1)
    o2, s2 = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    merged, _ = merge_states(torch.cat((o1, o2), dim=2), torch.cat((s1, s2), dim=2))
    return merged
''',
    }),
    'ex02 stretch visibility as 0/1 floats made back by ~visbool(), -inf put in by masked_scatter': ('HONEST', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''

def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    off = n_k - n_q                       # row i sees key j iff j <= i + off
    ntiles = (n_k + block_n - 1) // block_n
    top_reach = r0 + rows - 1 + off       # furthest key the bottom row of the tile can see
    if top_reach < 0:
        visits = 0
    else:
        visits = min(ntiles, top_reach // block_n + 1)
    low_reach = r0 + off                  # furthest key the top row can see: everything up to it is seen by all rows
    if low_reach >= n_k - 1:
        fulls = ntiles
    elif low_reach < 0:
        fulls = 0
    else:
        fulls = (low_reach + 1) // block_n
    return fulls, visits
''',
        'attention-work': r'''

def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    tile_max = s.max(dim=1).values
    new_max = torch.maximum(m, tile_max)
    ref = torch.where(torch.isneginf(new_max), torch.zeros_like(new_max), new_max)  # subtract 0 for empty rows
    shrink = (m - ref).exp()
    probs = (s - ref.unsqueeze(1)).exp()
    return new_max, l * shrink + probs.sum(dim=1), acc * shrink.unsqueeze(1) + probs @ v_tile


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    offset = n_k - n_q
    inv = 1.0 / math.sqrt(d)
    for top in range(0, n_q, block_m):
        qt = q[top:top + block_m].float() * inv
        nr = qt.shape[0]
        nf, nv = key_tile_counts(top, nr, n_q, n_k, block_n)
        run_m = torch.full((nr,), float("-inf"))
        run_l = torch.zeros(nr)
        run_acc = torch.zeros(nr, d)
        qpos = torch.arange(top, top + nr)
        for j in range(nv):
            lo, hi = j * block_n, min((j + 1) * block_n, n_k)
            qk = qt @ k[lo:hi].float().T
            if j >= nf:
                vis = (torch.arange(lo, hi).unsqueeze(0) - qpos.unsqueeze(1) <= offset).float()  # 1 = seen
                blocked = ~vis.bool()
                qk = qk.masked_scatter(blocked, torch.full_like(qk, -math.inf))
            run_m, run_l, run_acc = online_softmax_update(run_m, run_l, run_acc, qk, v[lo:hi].float())
        good = run_l > 0
        res = torch.zeros(nr, d)
        res[good] = run_acc[good] / run_l[good].unsqueeze(1)
        out[top:top + nr] = res
    return out.to(q.dtype)
''',
    }),
    'ex02 stretch straddling tiles masked by adding the log of a 0/1 float mask': ('HONEST', 'ex02_stretch_causal_tile_skipping', {
        'bounds-work': r'''

def key_tile_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) for query rows r0 .. r0 + rows - 1 of causal attention aligned bottom-right."""
    off = n_k - n_q                       # row i sees key j iff j <= i + off
    ntiles = (n_k + block_n - 1) // block_n
    top_reach = r0 + rows - 1 + off       # furthest key the bottom row of the tile can see
    if top_reach < 0:
        visits = 0
    else:
        visits = min(ntiles, top_reach // block_n + 1)
    low_reach = r0 + off                  # furthest key the top row can see: everything up to it is seen by all rows
    if low_reach >= n_k - 1:
        fulls = ntiles
    elif low_reach < 0:
        fulls = 0
    else:
        fulls = (low_reach + 1) // block_n
    return fulls, visits
''',
        'attention-work': r'''

def online_softmax_update(m, l, acc, s, v_tile):
    """Exercise 2's update, safe for rows whose scores so far are all -inf."""
    tile_max = s.max(dim=1).values
    new_max = torch.maximum(m, tile_max)
    ref = torch.where(torch.isneginf(new_max), torch.zeros_like(new_max), new_max)  # subtract 0 for empty rows
    shrink = (m - ref).exp()
    probs = (s - ref.unsqueeze(1)).exp()
    return new_max, l * shrink + probs.sum(dim=1), acc * shrink.unsqueeze(1) + probs @ v_tile


def causal_tiled_attention(q, k, v, block_m=16, block_n=16):
    """Causal attention of (n_q, d) queries over (n_k, d) keys, visiting and masking only the tiles that need it."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d)
    offset = n_k - n_q
    inv = 1.0 / math.sqrt(d)
    for top in range(0, n_q, block_m):
        qt = q[top:top + block_m].float() * inv
        nr = qt.shape[0]
        nf, nv = key_tile_counts(top, nr, n_q, n_k, block_n)
        run_m = torch.full((nr,), float("-inf"))
        run_l = torch.zeros(nr)
        run_acc = torch.zeros(nr, d)
        qpos = torch.arange(top, top + nr)
        for j in range(nv):
            lo, hi = j * block_n, min((j + 1) * block_n, n_k)
            qk = qt @ k[lo:hi].float().T
            if j >= nf:
                keep = (torch.arange(lo, hi)[None, :] <= qpos[:, None] + offset).to(torch.float32)
                qk = qk + keep.log()   # log(1) = 0 keeps a score, log(0) = -inf hides it
            run_m, run_l, run_acc = online_softmax_update(run_m, run_l, run_acc, qk, v[lo:hi].float())
        good = run_l > 0
        res = torch.zeros(nr, d)
        res[good] = run_acc[good] / run_l[good].unsqueeze(1)
        out[top:top + nr] = res
    return out.to(q.dtype)


# my own sanity check against a dense masked softmax (small sizes only)
qq, kk, vv = torch.randn(11, 4), torch.randn(15, 4), torch.randn(15, 4)
sc = (qq @ kk.T) / 2.0
sc = sc.masked_fill(torch.ones(11, 15, dtype=torch.bool).triu(15 - 11 + 1), -math.inf)
dense = torch.softmax(sc, dim=-1) @ vv
print("max diff vs dense:", (causal_tiled_attention(qq, kk, vv, 4, 3) - dense).abs().max().item())
print(key_tile_counts(0, 4, 11, 15, 3), key_tile_counts(8, 3, 11, 15, 3))
''',
    }),
}


# Round 38z31 (against dc60ede): an outside class of 8 (3 wrong, 5 honest) aimed at the calls added after round 38z30;
# its one wrong verdict, an honest learner sent to review for a largest difference from the reference printed behind a
# conditional expression.
ROUND_38Z31 = {
    'ex02 masked by where, a bounded key loop, a scratch cell printing its largest difference from the reference behind a hasattr guard': ('HONEST', 'ex02_online_softmax', {
        'update-work': r'''

def online_softmax_update(m, l, acc, s, v_tile):
    """Fold one tile of scores into the running softmax state of some query rows."""
    tile_max = s.max(dim=1).values
    new_m = torch.max(m, tile_max)
    scale = (m - new_m).exp()                 # old max -> new max
    weights = (s - new_m[:, None]).exp()
    new_l = l * scale + weights.sum(dim=1)
    new_acc = acc * scale[:, None] + weights @ v_tile
    return new_m, new_l, new_acc
''',
        'tiled-work': r'''

def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):
    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(n_q, d, device=q.device)
    offset = n_k - n_q
    inv_sqrt_d = 1.0 / math.sqrt(d)
    for i0 in range(0, n_q, block_m):
        qt = q[i0:i0 + block_m].float()
        nr = qt.shape[0]
        key_end = n_k
        if causal:
            key_end = min(n_k, i0 + nr + offset)    # last row sees keys up to i0 + nr - 1 + offset
        m = torch.full((nr,), -math.inf, device=q.device)
        l = torch.zeros(nr, device=q.device)
        acc = torch.zeros(nr, d, device=q.device)
        for j0 in range(0, key_end, block_n):
            kt = k[j0:j0 + block_n].float()
            vt = v[j0:j0 + block_n].float()
            s = (qt @ kt.T) * inv_sqrt_d
            if causal:
                qpos = torch.arange(i0, i0 + nr, device=q.device)
                kpos = torch.arange(j0, j0 + kt.shape[0], device=q.device)
                blocked = kpos[None, :] > qpos[:, None] + offset
                s = torch.where(blocked, torch.full_like(s, -math.inf), s)
            m, l, acc = online_softmax_update(m, l, acc, s, vt)
        out[i0:i0 + nr] = acc / l[:, None]
    return out.to(q.dtype)


_q, _k, _v = torch.randn(9, 4), torch.randn(13, 4), torch.randn(13, 4)
_mine = tiled_attention(_q, _k, _v, causal=True, block_m=4, block_n=3)
print("max diff vs ref:", (_mine - ref.naive_attention(_q, _k, _v, causal=True)).abs().max().item()
      if hasattr(ref, "naive_attention") else _mine.shape)
''',
    }),
}


# Round 38z32 (against 0d63576): an outside class of 8 (5 wrong, 3 honest) aimed at ex01, ex06, ex07 and its stretch,
# ex10; its one wrong verdict, the manager told the next position (no scene's manager kept its tokens).
ROUND_38Z32 = {
    'ex10 the manager told the next position, the request grown first': ('ATTACKS', 'ex10_scheduler_step', {
        'schedule-work': r'''
def schedule_step(manager: BlockManager, running: list[Request], waiting: deque[Request],
                  max_num_batched_tokens: int) -> Step:
    """One step: grow every running request (preempting the newest when blocks run out), then admit."""
    step = Step()
    todo = list(running)          # oldest first; todo[i:] have not grown yet
    i = 0
    while i < len(todo):
        req = todo[i]
        if manager.can_append(req.seq_id):
            req.tokens.append(len(req.tokens))            # the new token
            manager.append(req.seq_id, len(req.tokens))   # tell the manager about it
            step.grown.append(req.seq_id)
            i += 1
            continue
        victim = todo.pop()       # newest not grown yet (req itself when it is the last)
        manager.free(victim.seq_id)
        waiting.appendleft(victim)
        step.preempted.append(victim.seq_id)
    running[:] = todo
    used = len(step.grown)
    if not step.preempted:
        while waiting:
            nxt = waiting[0]
            need = (len(nxt.tokens) + manager.block_size - 1) // manager.block_size
            if need + manager.watermark_blocks > manager.num_free_blocks:
                break
            if used + len(nxt.tokens) > max_num_batched_tokens:
                break
            waiting.popleft()
            manager.add(nxt.seq_id, nxt.tokens)
            running.append(nxt)
            step.admitted.append(nxt.seq_id)
            used += len(nxt.tokens)
    step.num_tokens = used
    return step
''',
    }),
}


# Round 38z36 (against e7935e1): an outside class of 8 (5 wrong, 3 honest) aimed at ex01, ex03, ex06, ex08, ex10 and
# the all-or-nothing rules; its one wrong verdict, ex03's softmax floored at -1e4 (no row drawn below -1200).
ROUND_38Z36 = {
    "ex03 softmax's running max started at -1e4 and its padding loaded as -1e4": ('ATTACKS', 'ex03_triton_basics', {
        'softmax-work': r'''
@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    src = x_ptr + r * stride_x
    dst = out_ptr + r * stride_out
    run_max = -10000.0          # below any score we will see; avoids inf - inf
    run_sum = 0.0
    for c0 in range(0, n_cols, BLOCK):
        ok = c0 + lanes < n_cols
        t = tl.load(src + c0 + lanes, mask=ok, other=-10000.0)
        new_max = tl.maximum(run_max, tl.max(t, 0))
        e = tl.where(ok, tl.exp(t - new_max), 0.0)
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(e, 0)
        run_max = new_max
    for c0 in range(0, n_cols, BLOCK):
        ok = c0 + lanes < n_cols
        t = tl.load(src + c0 + lanes, mask=ok, other=0.0)
        tl.store(dst + c0 + lanes, tl.exp(t - run_max) / run_sum, mask=ok)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns;
    the result is a new tensor (``x`` is only read)."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out
''',
        'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK
    pos = start + tl.arange(0, BLOCK)
    inside = pos < n
    a = tl.load(x_ptr + pos * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + pos * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + pos, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is a new contiguous
    tensor (``x`` and ``y`` are only read)."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.shape[0]
    nprog = (n + block - 1) // block
    add_kernel[(nprog,)](x, y, out, n, x.stride()[0], y.stride()[0], BLOCK=block)
    return out
''',
    }),
}


# Honest learners of rounds 38z33, 38z34 and 38z36 (against e7935e1), each passed unflagged: in the styles of the
# calls changed last (ex04's kernel, ex09's addresses, ex09 stretch's merge near -20000, ex03's rows below -1e30).
ROUNDS_38Z33_36_HONEST = {
    'ex04 with its own names and one tlwhere per mask (round 38z33)': ('HONEST', 'ex04_flash_forward', {
        'kernel-work': r'''
@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        # scores of this key tile, in log2 units
        scores = tl.dot(q, k, input_precision="ieee") * qk_scale
        # padding: columns past n_k were loaded as zeros -> hide them
        scores = tl.where(cols[None, :] < n_k, scores, float("-inf"))
        if CAUSAL:
            # bottom-right aligned: row i sees key j iff j <= i + (n_k - n_q)
            visible = cols[None, :] <= (rows[:, None] + n_k - n_q)
            scores = tl.where(visible, scores, float("-inf"))
        row_max = tl.max(scores, 1)
        new_max = tl.maximum(m_i, row_max)
        rescale = tl.exp2(m_i - new_max)
        probs = tl.exp2(scores - new_max[:, None])
        l_i = l_i * rescale + tl.sum(probs, 1)
        acc = acc * rescale[:, None] + tl.dot(probs, v, input_precision="ieee")
        m_i = new_max
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
''',
    }),
    'ex09 with the slot as t - logical * B and one row offset for K and V (round 38z34)': ('HONEST', 'ex09_paged_attention', {
        'kernel-work': r'''
@triton.jit
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out,
                        stride_qs, stride_qh, stride_kb, stride_kt, stride_kh, stride_bs, stride_os, stride_oh,
                        group, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_h = tl.arange(0, BLOCK_H)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    first_head = kv_head * group          # heads first_head .. first_head + group - 1 read this K/V head
    heads = first_head + offs_h
    head_ok = offs_h < group
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    context_len = tl.load(ContextLens + seq)
    table = BlockTables + seq * stride_bs          # this sequence's row of the block table
    k_head = K + kv_head * stride_kh               # K and V of this program's K/V head (V has K's strides)
    v_head = V + kv_head * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(0, context_len, BLOCK_N):
        tokens = start_n + offs_n
        in_ctx = tokens < context_len
        logical = tokens // BLOCK_SIZE
        phys = tl.load(table + logical, mask=in_ctx, other=0)
        phys = phys.to(tl.int64)                   # pools past 2**31 elements
        within = tokens - logical * BLOCK_SIZE     # slot inside the block
        row_off = phys * stride_kb + within * stride_kt
        k = tl.load(k_head + row_off[None, :] + offs_d[:, None], mask=in_ctx[None, :], other=0.0)
        v = tl.load(v_head + row_off[:, None] + offs_d[None, :], mask=in_ctx[:, None], other=0.0)
        scores = tl.dot(q, k, input_precision="ieee")
        scores = scores * qk_scale
        scores = tl.where(in_ctx[None, :], scores, float("-inf"))
        tile_max = tl.max(scores, axis=1)
        m_new = tl.maximum(m_i, tile_max)
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(scores - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc += tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + offs_d[None, :], out, mask=head_ok[:, None])
''',
    }),
    'ex09 stretch merging by logsumexp, softmax and einsum, integer ceilings (round 38z34)': ('HONEST', 'ex09_stretch_split_kv_merge', {
        'bounds-work': r'''
def split_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    per_split = (context_len + num_splits - 1) // num_splits      # ceil
    n_tiles = (per_split + block_n - 1) // block_n
    L = n_tiles * block_n                                          # whole tiles per split
    result = []
    for s in range(num_splits):
        lo = s * L
        if lo >= context_len:
            result.append((context_len, context_len))   # empty split
            continue
        hi = lo + L
        if hi > context_len:
            hi = context_len
        result.append((lo, hi))
    return result
''',
        'merge-work': r'''
def merge_states(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # o = sum_s e^{lse_s} o_s / sum_s e^{lse_s} = sum_s softmax(lse)_s o_s ; lse = logsumexp(lse_s)
    lse = torch.logsumexp(lses, dim=-1)
    weights = torch.softmax(lses, dim=-1)          # empty splits (-inf) get weight exactly 0
    out = torch.einsum("...s,...sd->...d", weights, outs)
    return out, lse
''',
        'cascade-work': r'''
def cascade_attention(q, k_cache, v_cache, prefix_table, prefix_len, own_tables, own_lens):
    """Decode attention over a shared prefix then each sequence's own tokens, as two states merged."""
    n = q.shape[0]
    tables_p = prefix_table.unsqueeze(0).repeat(n, 1)
    lens_p = torch.full_like(own_lens, prefix_len)
    o_pre, l_pre = paged_decode_split(q, k_cache, v_cache, tables_p, lens_p, 1)
    o_own, l_own = paged_decode_split(q, k_cache, v_cache, own_tables, own_lens, 1)
    out, _ = merge_states(torch.cat((o_pre, o_own), dim=2), torch.cat((l_pre, l_own), dim=2))
    return out
''',
    }),
    'ex03 with a jit helper for the online merge and a checked scratch cell (round 38z36)': ('HONEST', 'ex03_triton_basics', {
        'add-work': r'''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):
    start = tl.program_id(axis=0) * BLOCK
    idx = start + tl.arange(0, BLOCK)
    inside = idx < n
    a = tl.load(x_ptr + idx * stride_x, mask=inside, other=0.0)
    b = tl.load(y_ptr + idx * stride_y, mask=inside, other=0.0)
    tl.store(out_ptr + idx, a + b, mask=inside)


def vector_add(x, y, block=64):
    """``x + y`` for 1-D float32 tensors of the same length, each with any stride; the result is a new contiguous
    tensor (``x`` and ``y`` are only read)."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.shape[0]
    n_programs = (n + block - 1) // block
    add_kernel[(n_programs,)](x, y, out, n, x.stride()[0], y.stride()[0], BLOCK=block)
    return out
''',
        'softmax-work': r'''
@triton.jit
def _online_merge(m_old, s_old, tile):
    m_tile = tl.max(tile, axis=0)
    m_new = tl.maximum(m_old, m_tile)
    s_new = s_old * tl.exp(m_old - m_new) + tl.sum(tl.exp(tile - m_new), axis=0)
    return m_new, s_new


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row_id = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    in_row = x_ptr + row_id * stride_x
    out_row = out_ptr + row_id * stride_out
    best = float("-inf")
    total = 0.0
    # pass 1: running max and rescaled running sum
    for lo in range(0, n_cols, BLOCK):
        valid = lo + offs < n_cols
        tile = tl.load(in_row + lo + offs, mask=valid, other=float("-inf"))
        best, total = _online_merge(best, total, tile)
    inv = 1.0 / total
    # pass 2: write the normalised tile
    for lo in range(0, n_cols, BLOCK):
        valid = lo + offs < n_cols
        tile = tl.load(in_row + lo + offs, mask=valid, other=float("-inf"))
        tl.store(out_row + lo + offs, tl.exp(tile - best) * inv, mask=valid)


def softmax(x, block=16):
    """The softmax of each row of the 2-D float32 tensor ``x`` (rows of any stride), in tiles of ``block`` columns;
    the result is a new tensor (``x`` is only read)."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out

# my own quick test before running the checks
m = torch.randn(5, 40)
col = m[:, 3]
got = vector_add(col, m[:, 7])
print("max err add:", (got - (col + m[:, 7])).abs().max().item())
wide = torch.randn(3, 50)[:, :37]
sm = softmax(wide, block=8)
assert torch.allclose(sm, torch.softmax(wide, dim=1), atol=1e-6)
print("rows sum to", sm.sum(1))
''',
    }),
}


# Round 38z44 (against a0d8330): an honest ex04 kernel of its own names that kept the handed-out comment, flagged
# as a copy on fragments of that comment's names (start_m, BLOCK_M); the handed-out words count whole and in part.
ROUND_38Z44 = {
    'ex04 kernel of its own names that kept the handed-out comment (round 38z44)': ('HONEST', 'ex04_flash_forward', {
        'kernel-work': r'''
@triton.jit
def attention_kernel(Q, K, V, Out, n_q, n_k, qk_scale, stride_q, stride_k, stride_v, stride_o,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rows[:, None] * stride_q + offs_d[None, :], mask=rows[:, None] < n_q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:  # the tile's last row sees keys up to start_m + BLOCK_M - 1 + n_k - n_q: skip the tiles after
        hi = tl.minimum(n_k, start_m + BLOCK_M + n_k - n_q)
    else:
        hi = n_k
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[None, :] * stride_k + offs_d[:, None], mask=cols[None, :] < n_k, other=0.0)
        v = tl.load(V + cols[:, None] * stride_v + offs_d[None, :], mask=cols[:, None] < n_k, other=0.0)
        qk = tl.dot(q, k, input_precision="ieee") * qk_scale
        ok = cols[None, :] < n_k
        if CAUSAL:
            ok = ok & (cols[None, :] - rows[:, None] <= n_k - n_q)
        qk = tl.where(ok, qk, float("-inf"))
        top = tl.maximum(m_i, tl.max(qk, 1))
        w = tl.exp2(qk - top[:, None])
        fade = tl.exp2(m_i - top)
        l_i = fade * l_i + tl.sum(w, 1)
        acc = fade[:, None] * acc + tl.dot(w, v, input_precision="ieee")
        m_i = top
    tl.store(Out + rows[:, None] * stride_o + offs_d[None, :], acc / l_i[:, None], mask=rows[:, None] < n_q)
''',
    }),
}
