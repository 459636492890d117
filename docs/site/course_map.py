"""The course's reading order, from the notebooks' file names: each lecture, then its exercises, then the next lecture.

A lecture ``NN[x]_name`` (``02_tiling_and_online_softmax``, ``04a_...``) is practised by the exercises
``exNN[x]_...``; an exercise number without a letter (``ex04_flash_forward``) belongs to the lecture with that number
and no letter, or else letter ``a`` (lecture ``04a``). Stretch exercises follow their exercise in file order.
The site's navigation (the sidebar, Previous and Next) and its lecture-exercise links follow this order.
"""

from __future__ import annotations

import re

_LECTURE = re.compile(r"^(?P<number>\d+)(?P<letter>[a-z]?)_")
_EXERCISE = re.compile(r"^ex(?P<number>\d+)(?P<letter>[a-z]?)_")


def _key(stem: str, pattern: re.Pattern, what: str) -> tuple[int, str]:
    match = pattern.match(stem)
    if match is None:
        raise ValueError(f"{what} {stem!r} does not start with its number ({pattern.pattern[1:]})")
    return int(match["number"]), match["letter"]


def lecture_of(exercise: str, lectures: list[str]) -> str:
    """The stem of the lecture that ``exercise`` (a stem such as ``ex04_flash_forward``) practises.

    Raises:
        ValueError: ``exercise`` is not named ``exNN[x]_...``, or no lecture in ``lectures`` has its number.
    """
    number, letter = _key(exercise, _EXERCISE, "exercise")
    keys = {_key(stem, _LECTURE, "lecture"): stem for stem in lectures}
    for candidate in [(number, letter)] + ([(number, "a")] if not letter else []):
        if candidate in keys:
            return keys[candidate]
    raise ValueError(f"exercise {exercise!r} practises lecture {number:02d}{letter}, which is not among {lectures}")


def exercises_of(lecture: str, lectures: list[str], exercises: list[str]) -> list[str]:
    """The exercises (stems, in file order) that practise ``lecture``."""
    return [stem for stem in sorted(exercises) if lecture_of(stem, lectures) == lecture]


def course_order(lectures: list[str], exercises: list[str]) -> list[str]:
    """Documents (``notebooks/<stem>``, ``exercises/<stem>``) in reading order: each lecture, then its exercises.

    Raises:
        ValueError: an exercise that no lecture has (see :func:`lecture_of`).
    """
    lectures = sorted(lectures)
    for stem in exercises:
        lecture_of(stem, lectures)          # every exercise has a place, or the order would drop it silently
    order = []
    for lecture in lectures:
        order.append(f"notebooks/{lecture}")
        order += [f"exercises/{stem}" for stem in exercises_of(lecture, lectures, exercises)]
    return order
