"""Exercise 4's checks, beyond its table of planted bugs (``tests/planted``): a NameError in the kernel is reported at
its line, without the hint about shapes."""

from __future__ import annotations

from pathlib import Path

from nbrun import first_failure, planted

SOLUTION = Path(__file__).parents[2] / "solutions" / "ex04_flash_forward.ipynb"


def test_a_name_error_names_its_kernel_line_without_the_shapes_hint():
    bug = planted(SOLUTION, "kernel-work", ("m_new = tl.maximum(m_i, tl.max(s, 1))", "m_new = tl.maximum(m, tl.max(s, 1))"))
    failure = first_failure(SOLUTION, bug)
    assert failure is not None
    text = failure[1]
    assert text.startswith("CheckError: Check 1: one key tile: your code raised NameError: name 'm' is not defined "
                           "(at `m_new = tl.maximum(m, tl.max(s, 1))`, in attention_kernel)"), text
    assert "shapes" not in text
