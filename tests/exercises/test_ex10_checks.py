"""Exercise 10's checks, beyond its table of planted bugs (``tests/planted``): an error keeps the learner's line and
gets a hint for that error."""

from pathlib import Path

from nbrun import assert_first_failure, check_title, planted

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex10_scheduler_step.ipynb"
CELL = "schedule-work"

PREEMPT = check_title(NB, 4)


def test_errors_keep_the_learners_line_and_get_a_hint_for_that_error():
    """A victim popped from an empty queue raises IndexError: the message quotes the line and explains the fallback."""
    bug = planted(NB, CELL, ("victim = queue.pop() if queue else req", "victim = queue.pop()"))
    assert_first_failure(NB, bug, PREEMPT, r"IndexError: pop from an empty deque \(at `victim = queue.pop\(\) .*`, in "
                                           r"schedule_step\).*Hint: .*that request itself is the one to preempt")
