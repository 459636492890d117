"""Grading a class (instructors only): ``python -m pagedlab.grading SUBMISSIONS/`` (see :mod:`pagedlab.grading.grade`).

Kept apart from the course modules a learner browses; the grading kernel's copy of ``pagedlab`` leaves it out.
"""
