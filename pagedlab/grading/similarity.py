"""Near-identical work: a learner's cell against the published solution's, and learners against each other.

Code is compared by winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003, the algorithm behind MOSS and the
``copydetect`` package): the cell is read as a program and written out again (``ast.unparse``: layout, comments,
quote style and redundant parentheses are gone; so are docstrings, a ``pass`` beside other statements and the
``*[a, b]`` of a call), its tokens are normalized (every name not after a dot becomes ``N``, every string ``S``,
every number ``0``), hashed in runs of :data:`K`, and the smallest hash of each window of :data:`WINDOW` runs is
kept. Renaming variables, reformatting, recommenting or wrapping names in parentheses changes nothing; the
exercise's own text (the signature and docstring every learner starts from) is subtracted first. A cell that does
not parse is read as its text.

This flags for a person to look; it proves nothing (two learners can write the same five-line loop).
"""

from __future__ import annotations

import ast
import io
import itertools
import keyword
import tokenize
import zlib

from IPython.core.inputtransformer2 import TransformerManager

K, WINDOW = 6, 4  # tokens per hashed run; runs per window
THRESHOLD = 0.8  # share of the other's fingerprints found
MIN_FINGERPRINTS = 12  # less own code than this (a one-line answer) is not compared
_transform = TransformerManager().transform_cell


def fingerprints(source: str) -> set[int]:
    """The winnowed fingerprints of ``source`` (IPython syntax allowed; code that does not tokenize gives none)."""
    tokens, after_dot = [], False
    try:
        for tok in tokenize.generate_tokens(io.StringIO(program(source)).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
                continue
            if tok.type == tokenize.NAME:
                tokens.append(tok.string if after_dot or keyword.iskeyword(tok.string) else "N")
            else:
                tokens.append({tokenize.STRING: "S", tokenize.NUMBER: "0"}.get(tok.type, tok.string))
            after_dot = tok.string == "."
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        return set()
    hashes = [zlib.crc32(" ".join(tokens[i:i + K]).encode()) for i in range(len(tokens) - K + 1)]
    return {min(hashes[i:i + WINDOW]) for i in range(max(1, len(hashes) - WINDOW + 1))} if hashes else set()


def program(source: str) -> str:
    """``source`` (IPython syntax allowed) as Python writes its program out, without what does nothing; its text
    when it does not parse."""
    text = _transform(source)
    try:
        return ast.unparse(_Plain().visit(ast.parse(text)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text


class _Plain(ast.NodeTransformer):
    """Drops what changes a program's text and not what it does: docstrings and other lone constants, a ``pass``
    beside other statements, the ``*[a, b]`` of a call's arguments."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and all(isinstance(s, ast.stmt) for s in body):
                kept = [s for s in body if not isinstance(s, ast.Pass)
                        and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                setattr(node, field, kept or [ast.Pass()])
        if isinstance(node, ast.Call):
            node.args = [e for a in node.args for e in (a.value.elts if isinstance(a, ast.Starred)
                                                         and isinstance(a.value, (ast.List, ast.Tuple)) else [a])]
        return node


def overlap(own: set[int], other: set[int]) -> float | None:
    """The share of ``other``'s fingerprints found in ``own``; None when ``other`` has too few to compare."""
    return len(own & other) / len(other) if len(other) >= MIN_FINGERPRINTS else None


def copied_cells(work: dict[str, str], solution: dict[str, str], pristine: dict[str, str]) -> list[str]:
    """Review reasons for the work cells (``{cell id: source}``) that match the solution's cell of the same id."""
    reasons = []
    for cell_id, source in work.items():
        if cell_id not in solution:
            continue
        base = fingerprints(pristine.get(cell_id, ""))
        share = overlap(fingerprints(source) - base, fingerprints(solution[cell_id]) - base)
        if share is not None and share >= THRESHOLD:
            reasons.append(f"work cell {cell_id!r} matches the published solution's on {share:.0%} of its "
                           "fingerprints: compare it with solutions/, and ask the learner to explain it")
    return reasons


def similar_pairs(work: dict[str, dict[str, str]], pristine: str) -> list[tuple[str, str, float]]:
    """Pairs of learners whose work on one exercise (``{learner: their work cells' text}``, less ``pristine``'s)
    is near-identical: ``(learner, learner, share)``, most similar first."""
    base = fingerprints(pristine)
    prints = {name: fingerprints(text) - base for name, text in work.items()}
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        shares = [s for s in (overlap(prints[a], prints[b]), overlap(prints[b], prints[a])) if s is not None]
        if shares and min(shares) >= THRESHOLD:
            pairs.append((a, b, min(shares)))
    return sorted(pairs, key=lambda p: -p[2])
