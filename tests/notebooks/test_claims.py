"""The lectures' prose agrees with their stored outputs.

Where a lecture's text quotes a number that one of its cells computes, or says which way a comparison went, the claim
is pinned here against the stored output of that cell (what a reader of the site or of GitHub sees beside it). When a
re-execution changes the output, or an edit changes the text, so that the two disagree, the test fails and names
both. Claims about times are checked in direction only (which is larger, by at least how much), since the stored run
is one machine's; the printed verdicts of the cells themselves stay device-independent, for nbval.
"""

from __future__ import annotations

import base64
import functools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _cells(name: str) -> dict[str, nbformat.NotebookNode]:
    notebook = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    return {cell.id: cell for cell in notebook.cells}


def prose(name: str, cell_id: str) -> str:
    """The Markdown of one cell, lines joined (a claim may wrap)."""
    return " ".join(_cells(name)[cell_id].source.split())


def output(name: str, cell_id: str) -> str:
    """What a code cell printed or displayed as text, as stored."""
    parts = []
    for out in _cells(name)[cell_id].outputs:
        parts.append(out.get("text", "") if out.get("output_type") == "stream" else
                     str(out.get("data", {}).get("text/plain", "")))
    return "".join(parts)


def number(pattern: str, text: str, where: str) -> float:
    """The number that ``pattern``'s one group captures in ``text`` (commas and a trailing % allowed)."""
    match = re.search(pattern, text)
    assert match, f"{where}: no match for {pattern!r}; the text or the output changed, update the claim"
    return float(match.group(1).replace(",", ""))


def picture(name: str, cell_id: str) -> ET.Element:
    """The SVG of the widget picture stored as a cell's output (an <img> with a base64 data: URI)."""
    for out in _cells(name)[cell_id].outputs:
        html = str(out.get("data", {}).get("text/html", ""))
        found = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
        if found:
            return ET.fromstring(base64.b64decode(found.group(1)))
    raise AssertionError(f"{name}:{cell_id} stores no widget picture")


def role(svg: ET.Element, name: str) -> list[ET.Element]:
    return [el for el in svg.iter() if el.get("data-role") == name]


# ---------------------------------------------------------------------------------------------- lecture 02

def test_02_summary_quotes_the_traffic_ratios_of_its_tables():
    nb = "02_tiling_and_online_softmax"
    said = prose(nb, "summary")
    at_every_n = number(r"\((\d+\.\d)x at every \$N\$", said, "02 summary")
    ratios = [float(r) for r in re.findall(r"(\d+\.\d)x less", output(nb, "traffic-table"))]
    assert len(ratios) == 8 and all(r == at_every_n for r in ratios), (
        f"02's summary says {at_every_n}x at every N; the traffic table shows {ratios}")
    small_sram = number(r"(\d+\.\d)x with 64 KiB of SRAM at \$d = 128\$", said, "02 summary")
    table = number(r"SRAM  64 KiB: .*?(\d+\.\d)x less at d = 128", output(nb, "traffic-sram"), "02 traffic-sram")
    assert small_sram == table, f"02's summary says {small_sram}x with 64 KiB at d = 128; the table shows {table}x"


def test_02_stored_tile_widget_is_at_the_last_step_where_the_error_is_zero():
    nb = "02_tiling_and_online_softmax"
    assert "it reaches zero at the last step" in prose(nb, "widget-md")
    (title,) = role(picture(nb, "widget"), "title")
    step, steps = map(int, re.match(r"step (\d+) of (\d+)", title.text).groups())
    assert step == steps, f"02's stored tile widget shows step {step} of {steps}, not the last step the text describes"
    (error,) = role(picture(nb, "widget"), "error-all")
    below = re.fullmatch(r"all rows: (< )?([\d.e+-]+)", error.text)
    assert below and float(below.group(2)) <= 1e-6 and (below.group(1) or float(below.group(2)) < 1e-6), (
        f"02's stored tile widget shows the error {error.text!r}, not zero")


# ---------------------------------------------------------------------------------------------- lectures 05, 06

def _waste_by_sigma() -> dict[float, tuple[float, float, float]]:
    rows = re.findall(r"^\s*([\d.]+)\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)x", output("05_kv_cache_memory_wall", "sigma"),
                      re.MULTILINE)
    assert len(rows) == 5, "05's sigma table changed shape"
    return {float(s): (float(c), float(p), float(b)) for s, c, p, b in rows}


def test_05_quotes_its_simulation():
    nb = "05_kv_cache_memory_wall"
    table = _waste_by_sigma()
    paged = [p for _, p, _ in table.values()]
    low, high = (number(rf"\((\d+\.\d)% to \d+\.\d% over the spreads", prose(nb, "summary"), "05 summary"),
                 number(r"(\d+\.\d)% over the spreads", prose(nb, "summary"), "05 summary"))
    assert (low, high) == (min(paged), max(paged)), f"05's summary says {low}% to {high}%; the table shows {paged}"
    assert high < 4, "05's summary says paged blocks waste under 4%"
    simulate = output(nb, "simulate")
    contiguous = number(r"contiguous\s+tokens.*waste\s+([\d.]+)%", simulate, "05 simulate")
    assert round(contiguous) == number(r"\(about (\d+)% here\)", prose(nb, "summary"), "05 summary")
    discussion = prose(nb, "simulate-discussion")
    slots = number(r"it is the budget's remainder, ([\d,]+) slots", discussion, "05 discussion")
    share = number(r"the same (\d+\.\d)% whatever", discussion, "05 discussion")
    assert f"the other {slots:,.0f} slots ({share}% of the budget)" in simulate
    batch = number(r"(\d+\.\d) times as many requests decode together", discussion, "05 discussion")
    assert f"paged / contiguous: {batch}x" in output(nb, "simulate-check")
    recomputed = number(r"prefilled again = (\d+\.\d)%", output(nb, "recompute").split("paged")[1], "05 recompute")
    assert "over 40% more tokens" in discussion and recomputed > 40, f"05 says over 40% recomputed; {recomputed}%"


def test_06_quotes_lecture_05_and_its_own_snapshot():
    simulate = output("05_kv_cache_memory_wall", "simulate")
    paged = re.search(r"paged \(16\)\s+tokens.*?reserved\s+([\d.]+)%.*?free\s+([\d.]+)%\s+waste\s+([\d.]+)%", simulate)
    contiguous = number(r"contiguous\s+tokens.*waste\s+([\d.]+)%", simulate, "05 simulate")
    reserved, free, waste = map(float, paged.groups())
    said = prose("06_paged_kv_allocator", "waste-md")
    assert f"{waste}% of the KV budget held no token, against {contiguous}%" in said, (
        f"06 quotes notebook 05; its stored output says {waste}% against {contiguous}%")
    timing = prose("06_paged_kv_allocator", "timing-md")
    assert f"{waste}% not holding tokens, of which {free}% was memory left free" in timing
    assert f"and {reserved}% slots a running request was about to fill" in timing
    snapshot = number(r"= ([\d.]+)% of the allocated slots", output("06_paged_kv_allocator", "waste"), "06 waste")
    assert f"the *allocated* ones: {snapshot}%" in timing, f"06's snapshot is {snapshot}%"


# ---------------------------------------------------------------------------------------------- lecture 10

NB10 = "10_mini_serving_engine"


def test_10_positions_quoted_from_section_2():
    positions = re.search(r"positions\s+\[([\d, ]+)\]", output(NB10, "one-step")).group(1)
    positions = [int(p) for p in positions.split(",")]
    said = prose(NB10, "real-md")
    row0 = number(r"row 0 of the batch is at position (\d+)", said, "10 section 6")
    row1 = number(r"row 1 at position (\d+)", said, "10 section 6")
    assert (row0, row1) == tuple(positions[:2]), f"section 6 says rows 0, 1 at {row0}, {row1}; section 2 shows {positions}"
    assert "new prompt's rows start again at 0" in said and positions[2] == 0


def test_10_static_batching_claims():
    static = output(NB10, "static")
    cont = number(r"continuous: at most\s+(\d+)", static, "10 static")
    stat = number(r"static: at most\s+(\d+)", static, "10 static")
    assert "The reservation of 64 tokens fits 4 requests" in prose(NB10, "static-note") and stat == 4
    ratio = number(r"runs (\d+\.\d)x the sequences at once", static, "10 static")
    assert ratio >= 2, f"the summary says 'several times the sequences at once'; the cell shows {ratio}x"
    steps_ratio = number(r"in (\d+\.\d)x fewer steps", static, "10 static")
    measured = number(r"ratio (\d+\.\d+)x", output(NB10, "static-time"), "10 static-time")
    assert "the tokens/s ratio measured here is smaller than the ratio of steps" in prose(NB10, "static-note")
    assert measured < steps_ratio, f"the text says tokens/s ({measured}x) gains less than steps ({steps_ratio}x)"
    control = output(NB10, "static-control")
    upto = number(r"four requests at a time against up to (\d+)", prose(NB10, "static-control-note"), "10 control")
    assert upto == number(r"continuous: at most\s+(\d+)", control, "10 control")
    assert number(r"static: at most\s+(\d+)", control, "10 control") == 4 and cont > stat
    computed = [int(n) for n in re.findall(r"(\d+) tokens computed", control)]
    assert computed[0] >= computed[1], "the text says continuous batching computes at least as many tokens"


def test_10_chunked_prefill_and_prefix_cache_counts():
    chunked = output(NB10, "chunked")
    longest = [int(n) for n in re.findall(r"longest step (\d+) tokens", chunked)]
    note = prose(NB10, "chunked-note")
    assert f"the four decodes ({longest[0]} tokens)" in note and f"no step computes more than {longest[1]}" in note
    hit = number(r"found (\d+) of its 32 tokens cached", output(NB10, "prefix"), "10 prefix")
    said = prose(NB10, "prefix-md")
    blocks, tokens = (number(r"finds (\d+) blocks cached", said, "10 prefix-md"),
                      number(r"blocks cached \((\d+) tokens\)", said, "10 prefix-md"))
    assert tokens == hit == 4 * blocks, f"the text says {blocks} blocks ({tokens} tokens); the cell found {hit}"


def test_10_real_batching_table_agrees_with_section_6_6():
    """The table is one machine's times; the text claims directions only, and they must hold for the stored run."""
    table = output(NB10, "batching-real-table")
    rows = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^\s*(continuous|static)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)s\s+([\d.]+)s\s+(\d+)ms", table, re.MULTILINE)}
    assert set(rows) == {"continuous", "static"}, "the table of 6.6 changed shape"
    steps, at_once, tokens_s, ttft, _, tpot = ({k: float(v[i]) for k, v in rows.items()} for i in range(6))
    said = prose(NB10, "cpu-gpu-md")
    # TPOT: the text quotes an earlier run and defers to the table's verdict line, which must be the table's.
    assert "the table's last line says what this run found" in said
    verdict = tpot["continuous"] > 0.9 * tpot["static"]
    assert f"TPOT p50 no better (within 10%) {verdict}" in table and "more at once True" in table, (
        f"6.6's verdict line does not match its table's TPOT {tpot}")
    assert at_once["continuous"] > at_once["static"] and steps["continuous"] < steps["static"]
    assert "Its gain is in throughput and in the time to first token" in said
    assert tokens_s["continuous"] > tokens_s["static"] and ttft["continuous"] < ttft["static"], (
        f"6.6 says continuous batching gains throughput and TTFT; the table shows {tokens_s}, {ttft}")


def test_10_chunked_prefill_on_the_real_model_waits_less():
    waits = [float(w) for w in re.findall(r"longest wait of a decode for its next token (\d+) ms",
                                          output(NB10, "chunked-real-times"))]
    assert "shorter with chunks, by how much depends on the machine" in prose(NB10, "chunked-real-after")
    assert len(waits) == 2 and waits[0] > waits[1], f"6.7 says the wait is shorter with chunks; stored waits {waits} ms"


def _queues(svg: ET.Element) -> dict[str, int]:
    return {el.get("data-queue"): int(el.get("data-count")) for el in role(svg, "queue")}


def test_10_engine_pictures_show_what_their_text_describes():
    svg = picture(NB10, "widget")
    queues = _queues(svg)
    assert "requests were waiting, running and swapped out at once" in prose(NB10, "scheduler-md")
    assert all(queues.values()), f"the stored picture of section 3 shows the queues {queues}, not all three in use"
    assert role(svg, "caption"), "the stored picture says it is the busiest step, not the end"
    # 6.1: the widget stops following the engine after its one chat, so its picture is not 6.2's three requests.
    stream = picture(NB10, "stream-widget")
    (title,) = role(stream, "title")
    tokens = number(r"after (\d+) tokens", output(NB10, "stream"), "10 stream")
    step = number(r"step (\d+) ", title.text, "10 stream picture")
    assert step <= tokens, f"6.1's picture is at step {step}, after the chat's {tokens} steps: it shows 6.2's requests"
    assert max(_queues(stream).values()) <= 1


# ---------------------------------------------------------------------------------------------- lectures 01, 07, 08

def test_01_shares_of_flops_bytes_and_time():
    nb = "01_naive_attention"
    said = prose(nb, "summary")
    shares = output(nb, "time-shares")
    softmax_flops = number(r"P = softmax\(S\)\s+([\d.]+)% of the FLOPs", shares, "01 time-shares")
    softmax_bytes = number(r"P = softmax\(S\)\s+[\d.]+% of the FLOPs\s+([\d.]+)% of the bytes", shares, "01 shares")
    assert "with 2% of the FLOPs but half of the bytes" in said
    assert round(softmax_flops) == 2 and 45 <= softmax_bytes <= 55, f"01 says 2% and half; {softmax_flops}%, {softmax_bytes}%"
    times = [float(t) for t in re.findall(r"([\d.]+)% of the time", output(nb, "time-measure"))]
    assert "there the matmuls take most of the time" in said
    assert len(times) == 3 and times[0] + times[2] > 50, f"01 says the matmuls take most of the time; {times}"


def test_07_sharing_saved_what_the_text_says():
    nb = "07_sharing_and_copy_on_write"
    sampling = number(r"in memory: (\d+)% saved", output(nb, "sampling"), "07 sampling")
    assert prose(nb, "beam-md").startswith("Half, here") and sampling == 50
    assert "50% for 4 samples of a long prompt here" in prose(nb, "summary")
    beam = output(nb, "beam")
    copies, steps = (number(r"(\d+) copy-on-writes", beam, "07 beam"), number(r"in (\d+) steps", beam, "07 beam"))
    assert "about one block per step here" in prose(nb, "prefix-md") and 0.8 <= copies / steps <= 1.25


def test_08_crossover_quoted_from_the_model():
    nb = "08_preemption_swap_and_recompute"
    said = prose(nb, "measure-md")
    a100 = number(r"from (\d+) tokens \(A100\)", said, "08 measure-md")
    h100 = number(r"\(A100\) or (\d+) \(H100", said, "08 measure-md")
    assert f"{{'A100': {a100:.0f}, 'H100 SXM': {h100:.0f}}}" in output(nb, "cost-check"), (
        f"08 says the crossover is {a100:.0f} (A100) and {h100:.0f} (H100); the model printed otherwise")
    span = re.search(r"A100 crossover spans (\d+) to (\d+) tokens", output(nb, "sensitivity-check"))
    rows = [[int(x) for x in re.findall(r"\b(\d+)\b", line.split("util.")[1])]
            for line in output(nb, "sensitivity").splitlines() if line.startswith("A100")]
    assert span and [int(span.group(1)), int(span.group(2))] == [min(map(min, rows)), max(map(max, rows))]
