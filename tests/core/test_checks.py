"""pagedlab.checks: failures read as a short diagnosis led by the check's title, NaN is never let through."""

import contextlib
import io
import math

import pytest
import torch

from pagedlab.checks import CheckError, assert_close, check, differing_rows


def test_check_prints_ok_on_success(capsys):
    with check("Check 1: fine"):
        assert 1 + 1 == 2
    assert capsys.readouterr().out == "Check 1: fine: OK\n"


def test_a_failed_assert_becomes_a_checkfailed_led_by_the_title():
    with pytest.raises(CheckError) as info, check("Check 2: sums"):
        raise AssertionError("the sums differ. Hint: divide once")
    assert str(info.value) == "Check 2: sums: the sums differ. Hint: divide once"
    assert isinstance(info.value, AssertionError) and info.value.__suppress_context__


def test_another_error_names_its_type_the_learners_line_and_the_hint():
    def learner(x):
        return [][x]

    with pytest.raises(CheckError) as info, check("Check 3: append", errors="test the boundary first"):
        learner(1)
    message = str(info.value)
    assert message.startswith("Check 3: append: your code raised IndexError: list index out of range")
    assert "`return [][x]`, in learner" in message and message.endswith("Hint: test the boundary first")


def test_not_implemented_passes_through_unchanged():
    with pytest.raises(NotImplementedError), check("Check 1: x"):
        raise NotImplementedError("Exercise: replace this line with your code")


def test_a_stub_wrapped_by_a_library_is_reported_as_not_implemented():
    # Triton's interpreter re-raises a kernel's exception as its own error; an untouched exercise must still read
    # as "not written yet", not as a mistake with a hint about shapes.
    class InterpreterError(RuntimeError):
        pass

    with pytest.raises(NotImplementedError, match=r"^Exercise: write the loop body$"):
        with check("Check 1: one tile", errors="the shapes hint"):
            raise InterpreterError("NotImplementedError('Exercise: write the loop body')")
    with pytest.raises(NotImplementedError, match=r"^Exercise: chained$"):
        with check("Check 1: one tile", errors="the shapes hint"):
            try:
                raise NotImplementedError("Exercise: chained")
            except NotImplementedError as stub:
                raise InterpreterError("kernel failed") from stub


def test_title_is_required():
    with pytest.raises(ValueError, match="title"):
        check("")
    with pytest.raises(TypeError, match="title must be a str, got int"):
        check(3)


def test_ipython_shows_the_diagnosis_without_frames_of_this_module():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance(colors="nocolor")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        shell.run_cell("import torch\nfrom pagedlab.checks import assert_close, check")
        shell.run_cell('with check("Check 4: demo"):\n    assert_close(torch.ones(2), torch.zeros(2), name="x", hint="h")')
    text = out.getvalue()
    assert text.startswith("CheckError: Check 4: demo: x: 2 of 2 elements differ"), text
    assert "checks.py" not in text and "Traceback" not in text and text.rstrip().endswith("Hint: h")


def test_assert_close_names_nan_rows_and_their_usual_causes():
    got = torch.zeros(4, 3)
    got[2, 1] = math.nan
    with pytest.raises(AssertionError) as info:
        assert_close(got, torch.zeros(4, 3), name="out")
    message = str(info.value)
    assert "1 elements are NaN (rows [2]) where the reference is finite" in message
    assert "every score is masked" in message and "inf - inf" in message


def test_assert_close_accepts_nan_where_the_reference_has_nan():
    a = torch.tensor([1.0, math.nan])
    assert_close(a, a.clone())


def test_differing_rows_counts_nan_as_different():
    got = torch.zeros(3, 2)
    got[1, 0] = math.nan
    got[2, 1] = 1.0
    assert differing_rows(got, torch.zeros(3, 2)) == [1, 2]


def test_a_wrapped_error_is_reported_as_its_cause_at_the_learners_innermost_line():
    # Triton's interpreter raises InterpreterError(repr(e)) from e: the learner must read the NameError and the line
    # inside the kernel, not the wrapper and the launch line.
    class InterpreterError(RuntimeError):
        pass

    def kernel():
        return undefined_name  # noqa: F821

    def launch():
        try:
            kernel()
        except Exception as e:
            raise InterpreterError(repr(e)) from e

    with pytest.raises(CheckError) as info, check("Check 1: one tile"):
        launch()
    message = str(info.value)
    assert message.startswith("Check 1: one tile: your code raised NameError: name 'undefined_name' is not defined")
    assert "(at `return undefined_name  # noqa: F821`, in kernel)" in message and "InterpreterError" not in message


def test_the_hint_can_depend_on_the_error():
    def hint(exc):
        return "shapes differ" if isinstance(exc, ValueError) else ""

    with pytest.raises(CheckError) as info, check("Check 2: x", errors=hint):
        raise ValueError("incompatible dimensions")
    assert str(info.value).endswith("Hint: shapes differ")
    with pytest.raises(CheckError) as info, check("Check 2: x", errors=hint):
        raise NameError("name 'y' is not defined")
    assert "Hint" not in str(info.value)


def test_a_key_error_reads_as_a_key():
    with pytest.raises(CheckError) as info, check("Check 3: x"):
        {}["A"]
    assert "your code raised KeyError: key 'A'" in str(info.value)


def test_errors_must_be_a_string_or_a_callable():
    with pytest.raises(TypeError, match="errors"):
        check("Check 1: x", errors=3)


def test_a_later_failure_in_a_notebook_says_it_may_follow_from_an_earlier_one():
    namespace = {"__name__": "__main__", "check": check}      # a notebook's namespace, as Jupyter and nbrun make it
    cell = 'with check("Check {n}: x"):\n    assert {ok}, "wrong"'
    with pytest.raises(CheckError, match=r"^Check 1: x: wrong$"):
        exec(cell.format(n=1, ok=False), namespace)
    exec(cell.format(n=2, ok=True), namespace)
    with pytest.raises(CheckError, match=r"^Check 3: x: wrong \(Earlier in this notebook Check 1 failed: this failure "
                                         r"may be a consequence of that one; fix it first\.\)$"):
        exec(cell.format(n=3, ok=False), namespace)
    exec(cell.format(n=1, ok=True), namespace)                 # fixed: no longer named
    with pytest.raises(CheckError, match=r"^Check 3: x: wrong$"):
        exec(cell.format(n=3, ok=False), namespace)
