"""TileWidget without a browser: parse the SVG it draws and drive its controls from Python."""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET

import pytest
import torch

from pagedlab.attention import causal_mask
from pagedlab.trace import TileStep, TileTrace
from pagedlab.widgets import TileWidget
from pagedlab.widgets.tile import reference_trace

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def tiles(svg: str) -> dict[tuple[int, int], str]:
    """``{(q_tile, k_tile): state}`` as drawn."""
    return {(int(r.get("data-q-tile")), int(r.get("data-k-tile"))): r.get("data-state")
            for r in parse(svg).iter(f"{NS}rect") if r.get("data-role") == "tile"}


def role_texts(svg: str, role: str) -> list[str]:
    return [t.text for t in parse(svg).iter(f"{NS}text") if t.get("data-role") == role]


def strip_current(svg: str, role: str) -> list[int]:
    return [int(r.get("data-index")) for r in parse(svg).iter(f"{NS}rect")
            if r.get("data-role") == role and r.get("data-state") == "current"]


@pytest.fixture
def widget() -> TileWidget:
    # 24 positions in tiles of 8, causal: 6 of the 9 tiles are visited, 3 are skipped.
    return TileWidget(seq_len=24, block_m=8, block_n=8, causal=True, step=0)


SKIPPED = {(0, 1), (0, 2), (1, 2)}


def test_the_svg_parses_and_shows_every_tile(widget):
    drawn = tiles(widget.to_svg())
    assert set(drawn) == {(i, j) for i in range(3) for j in range(3)}
    assert {ij for ij, s in drawn.items() if s == "skipped"} == SKIPPED
    assert drawn == widget.tile_states()


def test_step_zero_has_nothing_done_or_current(widget):
    svg = widget.to_svg()
    assert set(tiles(svg).values()) == {"todo", "skipped"}
    assert role_texts(svg, "title") == ["step 0 of 6: nothing computed yet"]
    assert strip_current(svg, "q-tile") == [] and strip_current(svg, "k-tile") == []


def test_stepping_moves_the_highlighted_tile(widget):
    seen = []
    for s in range(1, 7):
        widget.show_step(s)
        svg = widget.picture.value  # the live view, redrawn by the slider's observer
        drawn = tiles(svg)
        step = widget.trace.steps[s - 1]
        assert [ij for ij, st in drawn.items() if st == "current"] == [(step.q_tile, step.k_tile)]
        assert strip_current(svg, "q-tile") == [step.q_tile] and strip_current(svg, "k-tile") == [step.k_tile]
        done = {(x.q_tile, x.k_tile) for x in widget.trace.steps[:s - 1]}
        assert {ij for ij, st in drawn.items() if st == "done"} == done
        assert {ij for ij, st in drawn.items() if st == "skipped"} == SKIPPED
        seen.append((step.q_tile, step.k_tile))
    assert seen == [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]


def test_panel_shows_the_running_m_and_l_of_the_current_rows(widget):
    widget.show_step(3)
    svg = widget.to_svg()
    step = widget.trace.steps[2]
    assert role_texts(svg, "m") == [f"{m:.3g}" for m in step.m]
    assert role_texts(svg, "l") == [f"{x:.3g}" for x in step.l]


def test_error_falls_to_zero_at_the_last_step(widget):
    errors = [whole for _, whole in widget.errors()]
    assert len(errors) == 6 and errors[0] > 0.1 and errors[-1] < 1e-12
    widget.show_step(6)
    assert role_texts(widget.to_svg(), "error-all") == ["all rows: < 1e-06"]
    widget.show_step(2)
    assert role_texts(widget.to_svg(), "error-all") != ["all rows: < 1e-06"]


def test_hidden_scores_drawn_match_the_causal_mask():
    w = TileWidget(seq_len=13, block_m=4, block_n=5, causal=True)
    root = parse(w.to_svg())
    cell = next(float(r.get("height")) for r in root.iter(f"{NS}rect") if r.get("data-role") == "hidden")
    hidden_cells = sum(round(float(r.get("width")) / cell)
                       for r in root.iter(f"{NS}rect") if r.get("data-role") == "hidden")
    mask = causal_mask(13, 13)
    expected = sum(int((~mask[i * 4:(i + 1) * 4, j * 5:(j + 1) * 5]).sum())
                   for i in range(4) for j in range(3) if w.trace.kind_of(i, j) == "masked")
    assert hidden_cells == expected > 0


def test_a_trace_without_values_shows_the_schedule_only():
    trace = TileTrace()
    trace.start(20, 20, 8, 8, True, "triton")
    for i, j in [(0, 0), (1, 0), (1, 1)]:
        trace.record(TileStep(i, j, trace.kind_of(i, j)))
    w = TileWidget(trace, step=2)
    svg = w.to_svg()
    assert role_texts(svg, "no-values") == ["values not recorded by triton:"]
    assert role_texts(svg, "m") == [] and w.errors() == []
    assert tiles(svg)[1, 0] == "current" and tiles(svg)[0, 0] == "done"
    assert all(c.disabled for c in (w.seq_len, w.block_m, w.block_n, w.causal))
    with pytest.raises(ValueError, match="tracer"):
        w.retrace()


def test_a_growing_trace_is_followed():
    trace = TileTrace()
    w = TileWidget(trace)
    assert "waiting" in role_texts(w.to_svg(), "title")[0]
    trace.start(16, 16, 8, 8, True, "triton")
    trace.record(TileStep(0, 0, "masked"))
    assert (w.step_slider.max, w.current_step) == (1, 1)
    trace.record(TileStep(1, 0, "full"))
    assert (w.step_slider.max, w.play.max, w.current_step) == (2, 2, 2)
    assert tiles(w.picture.value)[1, 0] == "current"
    w.show_step(1)  # the learner steps back: new steps extend the range but do not move the view
    trace.record(TileStep(1, 1, "masked"))
    assert (w.step_slider.max, w.current_step) == (3, 1)
    trace.start(16, 16, 4, 4, False, "triton")  # a new run clears the trace
    assert (w.step_slider.max, w.current_step) == (0, 0) and len(tiles(w.picture.value)) == 16


def test_play_drives_the_step_and_speed_sets_its_interval(widget):
    widget.play.value = 4
    assert widget.current_step == 4
    assert tiles(widget.picture.value)[2, 0] == "current"
    assert widget.play.max == widget.step_slider.max == 6
    widget.speed.value = 10
    assert widget.play.interval == 100


@pytest.mark.parametrize("control,value,check", [
    ("block_m", 4, lambda t: t.block_m == 4 and t.n_q_tiles == 6),
    ("block_n", 5, lambda t: t.block_n == 5 and t.n_k_tiles == 5),
    ("seq_len", 17, lambda t: t.n_q == t.n_k == 17),
    ("causal", False, lambda t: not t.causal and len(t.steps) == 9),
])
def test_geometry_controls_retrace(widget, control, value, check):
    getattr(widget, control).value = value
    assert check(widget.trace)
    assert widget.current_step == len(widget.trace.steps) == widget.step_slider.max
    assert len(tiles(widget.picture.value)) == widget.trace.n_q_tiles * widget.trace.n_k_tiles
    assert widget.errors()[-1][1] < 1e-12


def test_custom_tracer_and_given_trace_set_the_controls():
    calls = []

    def tracer(seq_len, block_m, block_n, causal):
        calls.append((seq_len, block_m, block_n, causal))
        return reference_trace(seq_len, block_m, block_n, causal, head_dim=2)

    trace, exact = reference_trace(30, 6, 10, False)
    w = TileWidget(trace, exact, tracer=tracer)
    assert (w.seq_len.value, w.block_m.value, w.block_n.value, w.causal.value) == (30, 6, 10, False)
    assert calls == []  # showing a trace does not re-record it
    w.block_n.value = 3
    assert calls == [(30, 6, 3, False)] and w.trace.block_n == 3


def test_mimebundle_has_an_image_of_the_static_svg_and_the_live_widget(widget):
    bundle = widget._repr_mimebundle_()
    data = base64.b64encode(widget.static_svg().encode()).decode()
    assert bundle["text/html"].startswith("<img") and f"data:image/svg+xml;base64,{data}" in bundle["text/html"]
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == widget.box.model_id
    assert widget.picture.value == widget.to_svg()


def test_bad_arguments():
    with pytest.raises(TypeError, match="trace"):
        TileWidget(trace=[1, 2])
    trace, exact = reference_trace(10, 4, 4, True)
    with pytest.raises(ValueError, match="exact"):
        TileWidget(trace, exact[:5])
    w = TileWidget(trace, exact)
    assert torch.equal(w.exact, exact)
