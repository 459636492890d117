"""EngineWidget draws the engine's queues, pool and last batch, redraws after every step, and its buttons drive it.

No browser: the SVG is parsed with xml.etree and read through the data-* attributes on its shapes. The model is a
no-op (the widget shows scheduling, not numbers), so these tests run no kernel.
"""

import xml.etree.ElementTree as ET

import pytest

from pagedlab.engine import LLMEngine, SamplingParams
from pagedlab.engine.bench import NoOpModel
from pagedlab.models.tiny_gpt import GPTConfig
from pagedlab.widgets.engine import EngineWidget


def shapes(svg: str, role: str) -> list[dict]:
    root = ET.fromstring(svg)
    return [el.attrib for el in root.iter() if el.get("data-role") == role]


@pytest.fixture
def engine():
    model = NoOpModel(GPTConfig(vocab_size=64, n_positions=64, d_model=16, n_layers=1, n_heads=1), max_tokens=256)
    return LLMEngine(model, num_blocks=10, block_size=4, num_cpu_blocks=8, preemption="swap", watermark=0.0)


def drawn_queues(w):
    chips = shapes(w.to_svg(), "chip")
    return {q: [c["data-request"] for c in chips if c["data-queue"] == q] for q in ("waiting", "running", "swapped")}


def test_widget_follows_the_engine_step_by_step(engine):
    w = EngineWidget(engine)
    redraws = []
    w.picture.observe(lambda change: redraws.append(change["new"]), names="value")
    for n in (6, 9, 13):
        engine.add_request(list(range(n)), SamplingParams(temperature=0, max_tokens=10))
    engine.step()
    assert len(redraws) == 1, "one redraw per step"
    assert drawn_queues(w) == {"waiting": [], "running": ["0", "1", "2"], "swapped": []}
    batch = shapes(w.to_svg(), "batch-seq")
    assert [(b["data-request"], int(b["data-tokens"])) for b in batch] == [("0", 6), ("1", 9), ("2", 13)]
    preempted = False
    while engine.has_unfinished_requests():
        engine.step()
        m = engine.block_manager
        drawn = {int(b["data-block"]): b for b in shapes(w.to_svg(), "block") if b["data-pool"] == "gpu"}
        assert sorted(drawn) == list(range(10))
        for block, shape in drawn.items():
            ref = m.allocator.refcount(block)
            state = "shared" if ref > 1 else "used" if ref else "cached" if m.allocator.is_cached(block) else "free"
            assert shape["data-state"] == state
            owners = sorted({str(s[0]) for s in m.seq_ids
                             if m.table(s).device == "gpu" and block in m.table(s).block_ids})
            assert sorted(filter(None, shape["data-owner"].split(","))) == owners
        assert drawn_queues(w) == {q: [str(i) for i in ids] for q, ids in w.queues().items()}
        preempted |= bool(w.queues()["swapped"])
    assert preempted, "the pool is small enough that a request is swapped out on the way"
    assert len(redraws) == len(engine.metrics)
    w.close()
    engine.add_request([1, 2, 3], SamplingParams(temperature=0, max_tokens=2))
    engine.step()
    assert len(redraws) == len(engine.metrics) - 1, "a closed widget no longer follows the engine"


def test_buttons_add_step_and_run(engine):
    w = EngineWidget(engine, prompt_len=5, max_tokens=3)
    w.add_button.click()
    w.add_button.click()
    assert drawn_queues(w)["waiting"] == ["0", "1"]
    w.step_button.click()
    assert drawn_queues(w)["running"] == ["0", "1"] and len(engine.metrics) == 1
    w.run_button.click()
    assert not engine.has_unfinished_requests() and engine.block_manager.num_free_blocks == 10
    w.prompt_len = 100                     # past the model's positions: refused, said under the picture
    w.add_button.click()
    assert "failed" in w.status.value and "max_model_len" in w.status.value


def test_static_picture_and_arguments(engine):
    w = EngineWidget(engine)
    assert shapes(w.static_svg(), "batch-title")      # before any step: says there is none yet
    with pytest.raises(TypeError, match="LLMEngine"):
        EngineWidget(object())
    with pytest.raises(ValueError, match="delay"):
        EngineWidget(engine, delay=-1)


def test_blocks_shared_by_a_forked_request_belong_to_it_once(engine):
    w = EngineWidget(engine)
    engine.add_request(list(range(6)), SamplingParams(n=3, temperature=0, max_tokens=4))
    engine.step()                                        # prefill, then fork into 3 sequences
    drawn = [b for b in shapes(w.to_svg(), "block") if b["data-pool"] == "gpu" and b["data-state"] != "free"]
    assert [(b["data-state"], b["data-owner"]) for b in drawn] == [("shared", "0"), ("shared", "0")]


def _texts(svg: str, role: str) -> list[str]:
    return [el.text for el in ET.fromstring(svg).iter() if el.get("data-role") == role]


def test_stored_picture_is_the_busiest_step_not_the_empty_end(engine):
    """A run ends with every queue empty: the picture stored for a notebook is the step with the most queues in use
    (then the most requests swapped, then queued, then the most blocks used), the first such step, with a caption."""
    w = EngineWidget(engine)
    seen = []
    engine.subscribe(lambda m: seen.append((w.queues(), w.to_svg(), engine.block_manager.num_free_blocks)))
    for n in (6, 9, 13, 7, 5):
        engine.add_request(list(range(n)), SamplingParams(temperature=0, max_tokens=12))
    while engine.has_unfinished_requests():
        engine.step()
    assert not any(drawn_queues(w).values()), "the run ends with every queue empty"
    def busy(step):
        queues, _, free = step
        return (sum(1 for ids in queues.values() if ids), len(queues["swapped"]), sum(map(len, queues.values())), -free)
    queues, svg, _ = max(seen, key=busy)                      # max keeps the first of equals
    assert all(queues.values()), "this load has a step with requests waiting, running and swapped at once"
    stored = w.static_svg()
    counts = {el.get("data-queue"): int(el.get("data-count")) for el in ET.fromstring(stored).iter()
              if el.get("data-role") == "queue"}
    assert counts == {q: len(ids) for q, ids in queues.items()}
    assert _texts(stored, "title") == _texts(svg, "title"), "the stored picture is that step's"
    assert "busiest step" in _texts(stored, "caption")[0]


def test_history_has_axes_and_one_sequence_is_singular(engine):
    w = EngineWidget(engine)
    engine.add_request(list(range(6)), SamplingParams(temperature=0, max_tokens=3))
    for _ in range(3):
        engine.step()
    svg = w.to_svg()
    assert _texts(svg, "batch-title")[0].startswith("last step's batch: 1 sequence ·")
    axes = {el.get("data-axis") for el in ET.fromstring(svg).iter() if el.get("data-role") == "history-axis"}
    assert axes == {"count", "step"}
    ticks = _texts(svg, "history-tick")
    top = max(max(m.num_running_seqs, m.blocks_used) for m in engine.metrics)
    assert ticks == [str(top), "0", "step 1 to 3"], ticks
