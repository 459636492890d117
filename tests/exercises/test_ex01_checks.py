"""Exercise 1's checks, beyond its table of planted bugs (``tests/planted``): computing in float16 is caught by scores
that overflow it."""

from pathlib import Path

from nbrun import assert_first_failure, check_title, planted

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex01_naive_attention.ipynb"

# Computing in float16: the scores themselves, then everything after them.
FP16 = [("q.float() @ k.float()", "q @ k"), ("@ v.float()", "@ v")]


def test_computing_in_float16_is_caught_by_scores_that_overflow_it():
    assert_first_failure(NB, planted(NB, "attention-work", *FP16), check_title(NB, 6), "overflow float16")
