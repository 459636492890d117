"""Near-identical work: a learner's cell against the published solution's, and learners against each other.

Code is compared by winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003, the algorithm behind MOSS and the
``copydetect`` package): the cell is read as a program and written out again (``ast.unparse``: layout, comments,
quote style and redundant parentheses are gone; so are docstrings, a ``pass`` beside other statements, the
``*[a, b]`` of a call and a value's wrappers such as ``[x][0]``), the statements of each block are put in one
order (by the kinds of their nodes), its tokens are normalized (every name not after a dot becomes ``N``, every
string ``S``, every number ``0``), hashed in runs of :data:`K`, and the smallest hash of each window of
:data:`WINDOW` runs is kept.
Renaming variables, reformatting, recommenting, reordering statements or wrapping names in parentheses changes no
fingerprint; the exercise's own text (the signature and docstring every learner starts from)
is subtracted first. A cell that does not parse is read as its text.

Where the statement dictates the code, an honest answer has the solution's fingerprints too: a match with the
published solution counts only where the learner also chose its names or the words of its comments and messages
(:func:`own_words`, :data:`OWN_WORDS`). This flags for a person to look; it proves nothing (two learners can write
the same five-line loop).
"""

from __future__ import annotations

import ast
import doctest
import functools
import io
import itertools
import keyword
import re
import tokenize
import zlib

from IPython.core.inputtransformer2 import TransformerManager

K, WINDOW = 6, 4  # tokens per hashed run; runs per window
THRESHOLD = 0.8  # share of the other's fingerprints found
MIN_FINGERPRINTS = 12  # less own code than this (a one-line answer) is not compared
SHORT = 40  # a solution's cell with fewer fingerprints than this (a few lines) needs a closer match, up to all of them
# at MIN_FINGERPRINTS: there the expressions the exercise's statement dictates are most of the code, and an honest
# answer written another way shares them (ex04b's predict: the filter and the sort key of a three-line answer, 82%)
OWN_WORDS = 0.5  # a match counts where the learner's cells also hold more than this share of the solution's own
# names, or of the words of its comments and messages (two at least; :func:`own_words`, less every word of the cell
# handed out): code the statement dictates is the same tokens in an honest answer (ex00's softmax and ex05's product,
# round 38z; ex07's fork and append written step by step as the statement says them, 100% of 52 fingerprints, round
# 38z2), not the same names and comments
NEAR = 0.95  # the share of a solution's fingerprints that two own names chosen alike must come with (:func:`_chosen`)
MIN_WORDS = 6  # a comment or message of the solution's this long, kept word for word, is a reason by itself: a
# learner who writes the code another way (helpers pulled out, guards turned round, methods as functions) but keeps
# the solution's own sentence has read it (round 38z13: three such copies, under every share of fingerprints)
MIN_LIBRARY = 50  # a function of the course's library shorter than this (a formula of a few lines) is not compared:
# a learner who writes the formula the exercise states writes much the same tokens
_IPYTHON = TransformerManager().transform_cell


@functools.lru_cache(maxsize=4096)  # (IPython's reading is slow, and every cell is read by several rules)
def _transform(source: str) -> str:
    """``source`` in Python's syntax as IPython runs it (a magic made a call); the text itself where IPython cannot
    read it (round 38z129: a line that unindents to no block's level, where the reading stopped with an error)."""
    try:
        return _IPYTHON(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source


@functools.lru_cache(maxsize=4096)  # (the solution's and the library's, compared with every learner's)
def fingerprints(source: str, wrappers: frozenset[str] = frozenset()) -> frozenset[int]:
    """The winnowed fingerprints of ``source`` (IPython syntax allowed; code that does not tokenize gives none), a
    call of one of ``wrappers`` (:func:`identities`) read as its first argument."""
    tokens, after_dot = [], False
    try:
        for tok in tokenize.generate_tokens(io.StringIO(_in_one_order(program(source, wrappers))).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
                continue
            if tok.type == tokenize.NAME:
                tokens.append(tok.string if after_dot or keyword.iskeyword(tok.string) else "N")
            else:
                tokens.append({tokenize.STRING: "S", tokenize.NUMBER: "0"}.get(tok.type, tok.string))
            after_dot = tok.string == "."
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        return frozenset()
    hashes = [zlib.crc32(" ".join(tokens[i:i + K]).encode()) for i in range(len(tokens) - K + 1)]
    return frozenset(min(hashes[i:i + WINDOW]) for i in range(max(1, len(hashes) - WINDOW + 1)) if hashes)


def _in_one_order(text: str) -> str:
    """The program ``text`` with the statements of each block sorted by their shape (:func:`_shape`), innermost
    blocks first: two statements swapped, or a loop's body in another order, write the same program (read for its
    fingerprints only, never run)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    for node in reversed(list(ast.walk(tree))):  # (each node after everything below it)
        for block in (getattr(node, name, None) for name in ("body", "orelse", "finalbody")):
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                block.sort(key=_shape)
    return ast.unparse(tree)


def _shape(statement: ast.stmt) -> tuple[str, ...]:
    """What orders ``statement`` among its block's: its nodes, by kind, attributes by name (names are anybody's)."""
    return tuple(f"{type(n).__name__}.{n.attr}" if isinstance(n, ast.Attribute) else type(n).__name__
                 for n in ast.walk(statement))


@functools.lru_cache(maxsize=4096)
def own_words(source: str) -> frozenset[str]:
    """The names ``source`` (IPython syntax allowed) binds (assigns, defines, takes as parameters, imports as), of
    two letters or more, and the words of its comments and strings (four letters or more, ``#`` before them; the
    solution's markers left out): what its author chose, where the names it only reads are the exercise's and a name
    of one letter (``m``, ``l``, ``p``) is what any author writes."""
    text = _transform(source)
    words = set()
    try:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                words.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                words.add(node.name)
            elif isinstance(node, ast.arg):
                words.add(node.arg)
            elif isinstance(node, ast.alias):
                words.add(node.asname or node.name.partition(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                words.add(node.name)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):  # a message's words: as a comment's
                words.update("#" + w.lower() for w in re.findall(r"[A-Za-z]{4,}", node.value))
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and not re.match(r"#+ (BEGIN|END) SOLUTION", tok.string):
                words.update("#" + w.lower() for w in re.findall(r"[A-Za-z]{4,}", tok.string))
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    return frozenset(w for w in words if len(w) > 1)


def program(source: str, wrappers: frozenset[str] = frozenset()) -> str:
    """``source`` (IPython syntax allowed) as Python writes its program out, without what does nothing (a call of
    one of ``wrappers`` is its first argument); its text when it does not parse."""
    text = _transform(source)
    try:
        tree = ast.parse(text)
        kept = string_code(tree)  # (before the docstrings are dropped)
        plain = ast.unparse(_Plain(wrappers | identities(text)).visit(tree))
        return plain + ("\n" + program(kept, wrappers) if kept else "")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text


_TIMEIT = ("timeit", "repeat", "Timer", "autorange")
# IPython's rewrite of a magic (``%%time`` becomes ``get_ipython().run_cell_magic('time', '', body)``): its body is
# the cell's code, kept in one string.
_MAGICS = ("run_cell_magic", "run_line_magic")


def string_code(tree: ast.AST, magics: bool = True) -> str:
    """The code kept in the strings of ``tree``, which a module runs as a program: a doctest's examples (``>>>``
    lines, in a docstring or any string: ``doctest`` runs them), the statements handed to ``timeit`` as text and,
    with ``magics``, the body of a magic (``%%time``, ``%%capture``: the cell's code)."""
    parser, out = doctest.DocTestParser(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and ">>>" in node.value:
            try:
                out += [example.source for example in parser.get_examples(node.value)]
            except ValueError:  # (examples laid out so that doctest refuses to run them)
                pass
        elif isinstance(node, ast.Call) and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in _TIMEIT:
            out += [a.value + "\n" for a in [*node.args, *(k.value for k in node.keywords)]
                    if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        elif magics and isinstance(node, ast.Call) and magic_body(node) is not None:
            body = magic_body(node)
            if isinstance(body, ast.Constant) and isinstance(body.value, str):
                out.append(body.value + "\n")
    return "".join(out)


def magic_body(call: ast.Call) -> ast.expr | None:
    """The argument that holds a magic's code where ``call`` is IPython's rewrite of one (``%time x`` becomes
    ``get_ipython().run_line_magic('time', 'x')``, a ``%%time`` cell ``run_cell_magic('time', '', body)``), else
    None."""
    return call.args[-1] if getattr(call.func, "attr", None) in _MAGICS and len(call.args) > 1 else None


def identities(source: str) -> frozenset[str]:
    """The names ``source`` binds to a function that returns its first parameter as it is (``def _(v): return v``,
    ``_ = lambda v, *rest: v``): wrapping a name in a call of one changes a program's text, not what it does."""
    try:
        tree = ast.parse(_transform(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            params = [*node.args.posonlyargs, *node.args.args]
            if (params and len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Name)
                    and body[0].value.id == params[0].arg and not node.decorator_list):
                found.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            params = [*node.value.args.posonlyargs, *node.value.args.args]
            if params and isinstance(node.value.body, ast.Name) and node.value.body.id == params[0].arg:
                found.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(found)


class _Plain(ast.NodeTransformer):
    """Drops what changes a program's text and not what it does: docstrings and other lone constants, type hints, a
    ``pass`` beside other statements, the ``*[a, b]`` of a call's arguments, a call of one of ``wrappers``."""

    def __init__(self, wrappers: frozenset[str] = frozenset()) -> None:
        self.wrappers = wrappers

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        node = self.unhinted(node)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.wrappers
                and node.args and not isinstance(node.args[0], ast.Starred)):
            return node.args[0]
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and all(isinstance(s, ast.stmt) for s in body):
                kept = [s for s in body if not isinstance(s, ast.Pass)
                        and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                setattr(node, field, kept or [ast.Pass()])
        if isinstance(node, ast.Call):
            node.args = [e for a in node.args for e in (a.value.elts if isinstance(a, ast.Starred)
                                                         and isinstance(a.value, (ast.List, ast.Tuple)) else [a])]
        return _respelled(_unwrapped(node))

    @staticmethod
    def unhinted(node: ast.AST) -> ast.AST:
        """``node`` without its type hints, which run nothing (``x: int = 1`` is ``x = 1``; ``x: int`` alone, a
        ``pass``)."""
        if isinstance(node, ast.arg):
            node.annotation = None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
        if isinstance(node, ast.AnnAssign):
            return ast.Assign([node.target], node.value, lineno=node.lineno) if node.value is not None else ast.Pass()
        return node


def _respelled(node: ast.AST) -> ast.AST:
    """``node`` in one of the spellings Python and PyTorch give the same operation: ``torch.f(x, ...)`` and
    ``torch.Tensor.f(x, ...)`` as ``x.f(...)``, an argument by keyword as one by position (its value, where it was
    written), ``a @ b`` as ``a.matmul(b)``, ``a > b`` and ``a >= b`` as ``b < a`` and ``b <= a`` (rounds 38z13 and
    38z14: copies respelled so held 64% and 68% of their fingerprints)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return ast.Call(ast.Attribute(node.left, "matmul", ast.Load()), [node.right], [])
    if isinstance(node, ast.Call) and any(k.arg is not None for k in node.keywords):
        node = ast.Call(node.func, node.args + [k.value for k in node.keywords if k.arg is not None],
                        [k for k in node.keywords if k.arg is None])
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) in
            ("torch", "torch.Tensor") and node.args and not isinstance(node.args[0], ast.Starred)):
        return ast.Call(ast.Attribute(node.args[0], node.func.attr, ast.Load()), node.args[1:], node.keywords)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Gt, ast.GtE)):
        return ast.Compare(node.comparators[0], [ast.Lt() if isinstance(node.ops[0], ast.Gt) else ast.LtE()],
                           [node.left])
    return node


def _unwrapped(node: ast.AST) -> ast.AST:
    """The value an expression only wraps: ``[x][0]``, ``(x,)[-1]``, ``{"k": x}["k"]``, ``(lambda: x)()``,
    ``x if True else y``; else ``node``."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        key, box = node.slice.value, node.value
        if isinstance(box, (ast.List, ast.Tuple)) and isinstance(key, int) and -len(box.elts) <= key < len(box.elts):
            return box.elts[key]
        if isinstance(box, ast.Dict) and not any(k is None for k in box.keys):
            hits = [v for k, v in zip(box.keys, box.values) if isinstance(k, ast.Constant) and k.value == key]
            return hits[-1] if hits else node
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Lambda) and not node.args and not node.keywords
            and not node.func.args.args and not node.func.args.posonlyargs):
        return node.func.body
    if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Constant):
        return node.body if node.test.value else node.orelse
    return node


def sentences(source: str) -> tuple[str, ...]:
    """The comments and strings of ``source`` (IPython syntax allowed), each as its words in lower case (layout,
    punctuation, quotes and a string's prefix aside); the solution's markers left out."""
    return tuple(words for words, _ in _sentences(source))


@functools.lru_cache(maxsize=4096)
def _sentences(source: str) -> tuple[tuple[str, str], ...]:
    """:func:`sentences`, each beside the comment or string as written."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(_transform(source)).readline):
            if (tok.type == tokenize.STRING or (tok.type == tokenize.COMMENT
                                                and not re.match(r"#+ (BEGIN|END) SOLUTION", tok.string))):
                words = " ".join(re.findall(r"[a-z0-9_]+", re.sub(r"^[a-z]+", "", tok.string.lower())))
                out.append((words, tok.string))
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        pass
    return tuple((words, text) for words, text in out if words)


def kept_wording(learner: dict[str, str], solution: dict[str, str], elsewhere: str) -> list[str]:
    """Review reasons for each of the solution's work cells (``{cell id: source}``) one of whose comments or messages,
    of :data:`MIN_WORDS` words or more, a cell of the learner's (``{cell id: source}``) holds word for word, unless
    the course hands it out anywhere else (``elsewhere``: :func:`sentences` of everything a learner reads, joined by
    ``" | "``): a sentence is an author's choice, as names are, and outlasts any rewriting of the code."""
    mine = {c: f" {' | '.join(sentences(source))} " for c, source in learner.items()}
    elsewhere, reasons = f" {elsewhere} ", []
    for cell_id, source in solution.items():
        for phrase, text in _sentences(source):
            if len(phrase.split()) < MIN_WORDS or f" {phrase} " in elsewhere:
                continue
            holders = [c for c, words in mine.items() if f" {phrase} " in words]
            if holders:
                text = text if len(text) <= 80 else text[:77] + "..."
                reasons.append(f"cell {holders[0]!r} holds the words of the published solution's work cell "
                               f"{cell_id!r} in {text} word for word: compare it with solutions/, and ask the "
                               "learner to explain it")
                break
    return reasons


@functools.lru_cache(maxsize=None)
def course_words() -> str:
    """:func:`sentences` of the course's library (every module of :func:`_library_modules`) and of its lectures
    (``notebooks/`` beside the package, where it is a checkout), joined by ``" | "``: what every learner reads."""
    import importlib.util
    import json
    from pathlib import Path

    texts = []
    for module in _library_modules():
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.origin:
            texts.append(Path(spec.origin).read_text(encoding="utf-8"))
    lectures = Path(importlib.util.find_spec("pagedlab").origin).parent.parent / "notebooks"
    cells = [(c["cell_type"], "".join(c["source"])) for path in sorted(lectures.glob("*.ipynb"))
             for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]
    return " | ".join(" | ".join(sentences(t)) for t in texts) + " | " + sentences_in(cells)


def sentences_in(cells: list[tuple[str, str]]) -> str:
    """:func:`sentences` of a notebook's ``(cell type, source)`` cells, a text cell's words as one comment's, joined by
    ``" | "``."""
    return " | ".join(" | ".join(sentences(source if kind == "code" else "# " + source.replace("\n", " ")))
                      for kind, source in cells)


def needed(other: set[int]) -> float:
    """The share of ``other``'s fingerprints a match must hold: :data:`THRESHOLD`, closer for a short cell
    (:data:`SHORT`)."""
    return THRESHOLD + (1 - THRESHOLD) * max(0, SHORT - len(other)) / (SHORT - MIN_FINGERPRINTS)


@functools.lru_cache(maxsize=256)
def _said(text: str) -> frozenset[str]:
    """Every word of a handed-out cell's ``text``, as a name and as a comment's word (:func:`own_words`): its names,
    and those its docstring dictates (``Returns: (m_new, l_new, acc_new)``), are anybody's."""
    found = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    # (a comment's words are read as runs of four letters or more: ``start_m`` in a handed-out comment gives #start;
    # round 38z44: an honest kernel that kept the handed-out comment matched the solution on those fragments)
    return (frozenset(found) | frozenset("#" + w.lower() for w in found)
            | frozenset("#" + w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)))


def _parts(words, ids: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The own names and the comments' words of the solution's cells ``ids`` (``words(cell_id)``)."""
    own = frozenset().union(*map(words, ids))
    names = frozenset(w for w in own if not w.startswith("#"))
    return names, own - names


def _chosen(words, ids: list[str], mine: frozenset[str], share: float) -> bool:
    """Whether a match of the solution's cells ``ids`` on ``share`` of their fingerprints is evidence of a copy: the
    learner's words (``mine``) hold more than :data:`OWN_WORDS` of the solution's own names, or of its comments' words
    (two at least). Two own names chosen alike are weak evidence, of two or of three (round 38z126: an honest learner
    whose methods the handed-out class names all but ``start`` and ``hits``, and who chose those, matched on 88%; an
    honest ex03 kernel of round 38z36 that chose ``out_row`` and ``m_new`` of ``x_row``, ``out_row`` and ``m_new``, on
    85%): they count only beside nearly every fingerprint (:data:`NEAR`)."""
    names, notes = _parts(words, ids)
    return any(len(part) >= 2 and len(part & mine) > OWN_WORDS * len(part) for part in (notes, names)
               if part is notes or len(names & mine) > 2 or share >= NEAR)


def _named(words, ids: list[str], mine: frozenset[str], whose: str = "its") -> str:
    """The words a match holds, for its review reason (:func:`_chosen`)."""
    names, notes = _parts(words, ids)
    held = [f"{len(names & mine)} of {whose} {len(names)} own names"] * bool(names) + [
        f"{len(notes & mine)} of the {len(notes)} words of {whose} comments and messages"] * bool(notes)
    return ", with " + " and ".join(held) if held else ""


def overlap(own: set[int], other: set[int]) -> float | None:
    """The share of ``other``'s fingerprints found in ``own``; None when ``other`` has too few to compare."""
    return len(own & other) / len(other) if len(other) >= MIN_FINGERPRINTS else None


def course_code(targets) -> dict[str, str]:
    """``{"module:name": source}`` of each function or class of the course's library that is more than a formula
    (:data:`MIN_LIBRARY`): every one in the modules of ``targets`` (a spec's tripwires,
    ``"pagedlab.attention:tiled_attention"``), in every module of the library (:func:`_library_modules`: one the spec
    does not name may hold the answer too, as ``kernels/primer.py`` holds ex03's) and in the course's modules they
    import, at any depth. The library ships with the course, so a copy of it is as likely as a copy of the solution."""
    named = {t.partition(":")[0] for t in targets if t.partition(":")[2]}
    return dict(_course_code(tuple(sorted(named | set(_library_modules())))))


@functools.lru_cache(maxsize=None)
def _library_modules() -> tuple[str, ...]:
    """Every module of the course's library (its kernels and exercise checks too), not the grader's or the authoring
    tools': any of them may hold an exercise's answer (``kernels/primer.py`` holds ex03's), named or not."""
    import importlib.util
    from pathlib import Path

    base = Path(importlib.util.find_spec("pagedlab").origin).parent
    packages = ["pagedlab", "pagedlab.kernels"] + [f"pagedlab.{d.name}" for d in sorted(base.iterdir())
                                                   if (d / "__init__.py").exists()
                                                   and d.name not in ("grading", "authoring", "kernels")]
    modules = []
    for package in packages:
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            modules += [package if f.stem == "__init__" else f"{package}.{f.stem}" for f in sorted(Path(folder).glob("*.py"))]
    return tuple(modules)


@functools.lru_cache(maxsize=None)
def _course_code(modules: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    import importlib.util

    found, todo, read = {}, [m for m in modules if m.startswith("pagedlab")], set()
    while todo:
        module = todo.pop()
        if module in read:
            continue
        read.add(module)
        try:
            spec = importlib.util.find_spec(module)
            text = open(spec.origin, encoding="utf-8").read() if spec is not None and spec.origin else ""
            tree = ast.parse(text)
        except (ImportError, ValueError, OSError, SyntaxError):
            continue
        lines = text.splitlines(keepends=True)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                source = "".join(lines[node.lineno - 1:node.end_lineno])  # (top level: whole lines)
                if len(fingerprints(source)) >= MIN_LIBRARY:
                    found[f"{module}:{node.name}"] = source
            elif isinstance(node, ast.ImportFrom) and node.level:  # from .flash_forward import fwd_tiles
                base = module.rsplit(".", node.level)[0]
                todo.append(f"{base}.{node.module}" if node.module else base)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                todo += [m for m in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
                         if m.startswith("pagedlab.") and not m.startswith(("pagedlab.grading", "pagedlab.authoring"))]
    return tuple(sorted(found.items()))


def copied_cells(learner: dict[str, str], solution: dict[str, str], pristine: dict,
                 library: bool = False, floors: dict[str, float] | None = None,
                 stated: frozenset[str] = frozenset()) -> list[str]:
    """Review reasons for each of the solution's work cells (``{cell id: source}``; with ``library``, the course's
    functions, ``{"module:name": source}``, :func:`course_code`) whose code the learner's cells hold (``{cell id:
    source}``: the work cells and any cell the learner added; less ``pristine``'s, by cell id, as text or as
    fingerprints), in the cell of the same id, in another, or spread over several; with ``library``, also each learner cell that is mostly the library's code (past the share of the
    solution's cell of the same id, ``floors``: :func:`library_share`). A match with the solution counts where the
    learner also chose the solution's names or the words of its comments and messages (:func:`_chosen`): not the
    names the exercise's text writes as code (``stated``: round 38z104, ex07's ``position``)."""
    floors = floors or {}
    wrappers = frozenset().union(*map(identities, learner.values()))  # defined in one cell, used in another
    prints = {cell_id: fingerprints(source, wrappers) for cell_id, source in learner.items()}
    mine = frozenset().union(*map(own_words, learner.values()))

    def words(cell_id: str) -> frozenset[str]:  # (read only where a match needs them)
        base = pristine.get(cell_id, "")
        return own_words(solution[cell_id]) - (frozenset() if isinstance(base, frozenset) else _said(base)) - stated

    reasons, matched = [], {}
    for cell_id, source in solution.items():
        base = pristine.get(cell_id, "")
        base = base if isinstance(base, frozenset) else fingerprints(base)  # (text, or its fingerprints)
        theirs = fingerprints(source) - base
        held = {c: (p - base) & theirs for c, p in prints.items()}
        matched[cell_id] = (theirs, set().union(*held.values()) if held else set())
        share, close = overlap(matched[cell_id][1], theirs), needed(theirs)
        if share is not None and share >= close and (library or _chosen(words, [cell_id], mine, share)):
            # the fewest cells that hold the match: the cell of the same id if it does alone, else the largest first
            holders, found = [], set()
            for c in ([cell_id] if overlap(held.get(cell_id, set()), theirs) >= close
                      else sorted(held, key=lambda c: -len(held[c]))):
                holders.append(c)
                found |= held[c]
                if overlap(found, theirs) >= close:
                    break
            them = "it" if len(holders) == 1 else "them"
            cells = f"cell{'s' if len(holders) > 1 else ''} {', '.join(map(repr, holders))} match{'' if them == 'them' else 'es'}"
            if library:
                reasons.append(f"{cells} the course library's {cell_id.replace(':', '.')} on {share:.0%} of its "
                               f"fingerprints: compare {them} with pagedlab's source, and ask the learner to explain it")
                continue
            where = f"work cell {cell_id!r} matches" if holders == [cell_id] else f"{cells} the work cell {cell_id!r} of"
            reasons.append(f"{where} the published solution's on {share:.0%} of its fingerprints"
                           f"{_named(words, [cell_id], mine)}: compare {them} with solutions/, and ask the "
                           "learner to explain it")
    # An exercise's solution cells together (a short cell's match is weak alone, not beside the rest of a copy)
    groups: dict[str, list[str]] = {}
    for cell_id in solution if not library else ():
        groups.setdefault(cell_id.rpartition(":")[0], []).append(cell_id)
    for ids in groups.values():
        theirs = set().union(*(matched[i][0] for i in ids))
        share = overlap(set().union(*(matched[i][1] for i in ids)), theirs)
        if (len(ids) > 1 and share is not None and share >= needed(theirs) and _chosen(words, ids, mine, share)
                and not any(repr(i) in r for r in reasons for i in ids)):
            reasons.append(f"the work cells {', '.join(map(repr, ids))} of the published solution are matched, "
                           f"together, on {share:.0%} of their fingerprints{_named(words, ids, mine, 'their')}: compare "
                           "the learner's cells with solutions/, and ask the learner to explain them")
    if library:  # the other way round: a cell of the learner's that is mostly one module's (methods of a class pasted)
        modules = library_prints(solution)
        for c, p in prints.items():
            share, module = library_share(p - fingerprints(pristine.get(c, "")), modules)
            # (where the published solution's own cell is that close to the library, as ex09's kernel is to the one
            # notebook 09 teaches, only a closer one is flagged)
            if share >= max(THRESHOLD, floors.get(c, 0) + 0.05) and not any(repr(c) in r for r in reasons):
                reasons.append(f"cell {c!r} is the course library's {module} on {share:.0%} of its own fingerprints: "
                               "compare it with that module's source, and ask the learner to explain it")
    return reasons


def library_prints(library: dict[str, str]) -> dict[str, frozenset[int]]:
    """The fingerprints of each module of the course's ``library`` (:func:`course_code`, ``{"module:name": source}``)."""
    modules: dict[str, set[int]] = {}
    for key, source in library.items():
        modules.setdefault(key.partition(":")[0], set()).update(fingerprints(source))
    return {module: frozenset(prints) for module, prints in modules.items()}


def library_share(mine: frozenset[int], modules: dict[str, frozenset[int]]) -> tuple[float, str]:
    """The largest share of ``mine`` (a cell's own fingerprints) that one module holds (:func:`library_prints`), and
    that module; 0 for a cell shorter than a library function is long (:data:`MIN_LIBRARY`). One module, not the
    library as a whole: Triton's idioms (a masked ``tl.load``, ``tl.arange``, a row's ``tl.max``) recur in every
    kernel, so a kernel of one's own is mostly the union of the course's (83% for a three-pass softmax), and a
    copy comes from one place."""
    if len(mine) < MIN_LIBRARY or not modules:
        return 0.0, ""
    return max((len(mine & prints) / len(mine), module) for module, prints in modules.items())


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
