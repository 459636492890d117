"""Copies of the published solution, and near-identical learners, are found however they are renamed."""

import json

from pagedlab.grading.collect import load_pristine
from pagedlab.grading.similarity import copied_cells, similar_pairs
from pagedlab.grading.tables import write_similarity

from graded_in_process import ROOT
from review_rounds import ROUND_38Z2, ROUNDS_38Z33_36_HONEST


def _cells(path):
    nb = json.loads(path.read_text())
    return {c["id"]: "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"}


SOLUTION = _cells(ROOT / "solutions" / "ex02_online_softmax.ipynb")
HANDED_OUT = _cells(ROOT / "exercises" / "ex02_online_softmax.ipynb")


def _renamed(source: str) -> str:
    """The solution as a copier hides it: names changed, comments rewritten, blank lines added."""
    out = source.replace("acc", "accumulator").replace("m_new", "new_max").replace("block_n", "bn")
    return "\n".join(line.split("#")[0].rstrip() + ("  # mine" if line.strip() and not line.endswith("\\") else "")
                     for line in out.splitlines())  # (a comment after a line continuation would not parse)


def test_a_renamed_copy_of_the_solution_is_flagged_naming_the_cell():
    work = {"tiled-work": _renamed(SOLUTION["tiled-work"]), "update-work": HANDED_OUT["update-work"]}
    reasons = copied_cells(work, SOLUTION, HANDED_OUT)
    assert len(reasons) == 1 and reasons[0].startswith("work cell 'tiled-work' matches the published solution"), reasons


def test_the_exercise_as_handed_out_and_an_own_answer_are_not_flagged():
    own = ("def online_softmax_update(m, l, acc, s, v_tile):\n"
           "    top = torch.maximum(m, s.max(dim=1).values)\n"
           "    scale = torch.where(top == -math.inf, torch.zeros_like(top), torch.exp(m - top))\n"
           "    w = torch.where(top[:, None] == -math.inf, torch.zeros_like(s), torch.exp(s - top[:, None]))\n"
           "    return top, l * scale + w.sum(dim=1), acc * scale[:, None] + w @ v_tile\n")
    assert copied_cells({"update-work": own, "tiled-work": HANDED_OUT["tiled-work"]}, SOLUTION, HANDED_OUT) == []


# Round 38z2's honest ex07, written before its author read the solution
STEP_BY_STEP_EX07 = ROUND_38Z2["ex07 fork and append written step by step as the statement says, plain names"][2][
    "manager-work"].lstrip("\n")


def test_code_the_statement_dictates_counts_as_a_copy_only_with_the_solutions_own_words():
    """(Rounds 38z and 38z2) ex00's softmax is three lines the statement dictates: an honest answer by ``amax``,
    ``exp`` and ``sum`` has every token of the solution's, not the words of its comments; a paste has both. ex07's
    ``fork`` and ``append`` written step by step as the statement says them, by a reviewer who had not read the
    solution, has every token of its 52 fingerprints, and one of the two names the solution chose (the others its
    handed-out cell already says). ex05's answer is three formulas
    that bind one name of their own: a copy and an honest answer are the same code, and neither is flagged (the
    threat model lists it)."""
    def work(exercise, folder):
        return {k: v for k, v in _cells(ROOT / folder / f"{exercise}.ipynb").items() if k.endswith("-work")}

    solution, handed_out = work("ex00_warmup", "solutions"), work("ex00_warmup", "exercises")
    honest = ("def softmax_rows(x: torch.Tensor) -> torch.Tensor:\n    m = x.amax(dim=-1, keepdim=True)\n"
              "    e = torch.exp(x - m)\n    return e / e.sum(dim=-1, keepdim=True)\n")
    assert copied_cells({"softmax-work": honest}, solution, handed_out) == []
    reasons = copied_cells(solution, solution, handed_out)
    assert len(reasons) == 1 and "100% of its fingerprints, with 4 of the 4 words of its comments" in reasons[0]
    solution, handed_out = work("ex07_copy_on_write", "solutions"), work("ex07_copy_on_write", "exercises")
    assert copied_cells({"manager-work": STEP_BY_STEP_EX07}, solution, handed_out) == []
    reasons = copied_cells(solution, solution, handed_out)
    assert len(reasons) == 1 and "with 2 of its 2 own names and 5 of the 5 words" in reasons[0], reasons
    assert copied_cells(work("ex05_kv_cache_size", "solutions"), work("ex05_kv_cache_size", "solutions"),
                        work("ex05_kv_cache_size", "exercises")) == []


def test_near_identical_learners_are_paired_in_the_class_table(tmp_path):
    handed_out = "\n".join(HANDED_OUT.values())
    work = {"ann": SOLUTION["tiled-work"], "bob": _renamed(SOLUTION["tiled-work"]),
            "cy": SOLUTION["update-work"], "dee": ""}
    pairs = similar_pairs(work, handed_out)
    assert [(a, b) for a, b, _ in pairs] == [("ann", "bob")] and pairs[0][2] >= 0.8, pairs
    text = write_similarity([("ex02_online_softmax", *pairs[0])], tmp_path).read_text()
    assert "| ex02\\_online\\_softmax | ann | bob |" in text


def test_a_copy_with_its_names_boxed_is_flagged():
    """(Round 38d) every name written ``[n][0]``: the value a literal only wraps is read as the value."""
    import ast

    class Box(ast.NodeTransformer):
        def visit_Name(self, node):
            return node if isinstance(node.ctx, ast.Store) else ast.Subscript(
                ast.List([node], ast.Load()), ast.Constant(0), ast.Load())

    boxed = ast.unparse(Box().visit(ast.parse(SOLUTION["tiled-work"])))
    assert "[0]" in boxed
    work = {"tiled-work": boxed, "update-work": HANDED_OUT["update-work"]}
    reasons = copied_cells(work, SOLUTION, HANDED_OUT)
    assert len(reasons) == 1 and reasons[0].startswith("work cell 'tiled-work' matches the published solution"), reasons


def test_the_solution_pasted_into_a_cell_of_the_learners_is_flagged_naming_it():
    """(Round 38d) the work cell left as handed out, the solution in an extra cell after it."""
    work = {"tiled-work": HANDED_OUT["tiled-work"], "update-work": HANDED_OUT["update-work"],
            "mine": SOLUTION["tiled-work"]}
    reasons = copied_cells(work, SOLUTION, HANDED_OUT)
    assert len(reasons) == 1 and reasons[0].startswith("cell 'mine' matches the work cell 'tiled-work'"), reasons


def test_a_copy_with_every_name_passed_through_an_identity_function_is_flagged():
    """(Round 38e) every loaded name written ``_(n)``, with ``def _(v): return v`` in another cell: a call of a
    function that returns its argument as it is reads as the argument. Without that reading it is not found."""
    import ast

    from pagedlab.grading import similarity

    class Wrap(ast.NodeTransformer):
        def visit_Name(self, node):
            return node if isinstance(node.ctx, ast.Store) else ast.Call(ast.Name("_", ast.Load()), [node], [])

    wrapped = ast.unparse(Wrap().visit(ast.parse(SOLUTION["tiled-work"])))
    work = {"tiled-work": wrapped, "update-work": HANDED_OUT["update-work"],
            "helpers": "def _(value):\n    return value\n"}
    reasons = copied_cells(work, SOLUTION, HANDED_OUT)
    assert len(reasons) == 1 and reasons[0].startswith("work cell 'tiled-work' matches the published solution"), reasons
    assert similarity.identities("f = lambda v, *rest: v\ndef g(x):\n    'doc'\n    return x\n"
                                 "def h(x):\n    return x + 1\n") == {"f", "g"}
    original = similarity.identities
    try:
        similarity.identities = lambda source: frozenset()
        similarity.fingerprints.cache_clear()  # (else the fingerprints read before come back)
        assert copied_cells(work, SOLUTION, HANDED_OUT) == []
    finally:
        similarity.identities = original
        similarity.fingerprints.cache_clear()


def test_a_copy_kept_as_a_doctests_examples_is_flagged():
    """(Round 38h) the solution kept as the ``>>>`` examples of a docstring, which ``doctest`` runs: a string's
    code is read as code. Without that reading (its examples dropped with the docstring) it is not found."""
    from pagedlab.grading import similarity

    examples = "".join(f"    >>> {line}\n" if not line.startswith((" ", "\t")) or not line.strip() else f"    ... {line}\n"
                       for line in SOLUTION["tiled-work"].splitlines() if line.strip())
    hidden = f"def notes():\n    '''\n{examples}    '''\nimport doctest\ndoctest.run_docstring_examples(notes, globals())\n"
    work = {"tiled-work": hidden, "update-work": HANDED_OUT["update-work"]}
    reasons = copied_cells(work, SOLUTION, HANDED_OUT)
    assert len(reasons) == 1 and reasons[0].startswith("work cell 'tiled-work' matches the published solution"), reasons
    original = similarity.string_code
    try:
        similarity.string_code = lambda tree, magics=True: ""
        similarity.fingerprints.cache_clear()
        assert copied_cells(work, SOLUTION, HANDED_OUT) == []
    finally:
        similarity.string_code = original
        similarity.fingerprints.cache_clear()


# (Round 38i) ex07's solution as an outside review hid it: its locals renamed, a type hint on every assignment.
ANNOTATED_EX07 = r'''
class MiniManager:
    """Block tables over a shared pool, with fork and copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int):
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        """Create ``child`` sharing every block of ``parent``; return the child's table."""
        table: BlockTable = self.tables[parent]
        block: int
        for block in table.block_ids:
            self.allocator.incref(block)
        self.tables[child]: BlockTable = BlockTable(list(table.block_ids), table.num_tokens, self.block_size)
        return self.tables[child]

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        """Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above."""
        table: BlockTable = self.tables[seq]
        position: int = table.num_tokens
        copy: tuple | None = None
        if position % self.block_size == 0:
            table.block_ids.append(self.allocator.allocate())
        elif self.allocator.refcount(table.block_ids[-1]) > 1:
            new: int = self.allocator.allocate()
            shared: int = table.block_ids[-1]
            self.allocator.free(shared)
            table.block_ids[-1]: int = new
            copy: tuple = (shared, new)
        table.num_tokens: int = position + 1
        return table.slot(position), copy
'''.lstrip("\n")


def test_a_copy_with_a_type_hint_on_every_name_is_flagged():
    """Type hints run nothing, and are read through: the copy above is found. Without that reading it matched on
    70%, under the threshold."""
    from pagedlab.grading import similarity

    solution = _cells(ROOT / "solutions" / "ex07_copy_on_write.ipynb")
    handed_out = _cells(ROOT / "exercises" / "ex07_copy_on_write.ipynb")
    reasons = copied_cells({"manager-work": ANNOTATED_EX07}, solution, handed_out)
    assert len(reasons) == 1 and reasons[0].startswith("work cell 'manager-work' matches the published solution"), reasons
    unhinted = vars(similarity._Plain)["unhinted"]  # (the staticmethod itself)
    try:  # the rule broken on purpose: type hints kept
        similarity._Plain.unhinted = staticmethod(lambda node: node)
        similarity.fingerprints.cache_clear()
        assert copied_cells({"manager-work": ANNOTATED_EX07}, solution, handed_out) == []
    finally:
        similarity._Plain.unhinted = unhinted
        similarity.fingerprints.cache_clear()


def _found_only_by(rule: str, identity, monkeypatch, work: dict, solution: dict, handed_out: dict) -> None:
    """``work`` (one cell) is flagged as a copy of ``solution``'s cell of the same id, and is not once the comparison's
    ``rule`` (a function of :mod:`pagedlab.grading.similarity`) does nothing (``identity``): the rule broken on
    purpose."""
    from pagedlab.grading import similarity

    cell = next(iter(work))
    reasons = copied_cells(work, solution, handed_out)
    assert len(reasons) == 1 and reasons[0].startswith(f"work cell {cell!r} matches the published solution"), reasons
    similarity.fingerprints.cache_clear()
    monkeypatch.setattr(similarity, rule, identity)
    try:
        assert copied_cells(work, solution, handed_out) == []
    finally:
        similarity.fingerprints.cache_clear()


def test_a_copy_with_its_statements_in_another_order_is_flagged(monkeypatch):
    """(Round 38z11) ex09 stretch's ``merge_states`` as published, its comments dropped and two independent lines
    swapped: each block's statements are compared in one order. Broken on purpose (read in the order written), the
    copy holds less of the short cell's fingerprints than it needs (83% of 30, where 87% is needed, when the round
    found it), and is not flagged."""
    solution = {"merge-work": _cells(ROOT / "solutions" / "ex09_stretch_split_kv_merge.ipynb")["merge-work"]}
    handed_out = _cells(ROOT / "exercises" / "ex09_stretch_split_kv_merge.ipynb")
    lines = [line for line in solution["merge-work"].splitlines() if not line.lstrip().startswith("#")]
    out, lse = (next(i for i, line in enumerate(lines) if line.startswith(f"    {name} = ")) for name in ("out", "lse"))
    lines[out], lines[lse] = lines[lse], lines[out]
    _found_only_by("_in_one_order", lambda text: text, monkeypatch, {"merge-work": "\n".join(lines)}, solution,
                   handed_out)


def test_a_sentence_of_the_solutions_kept_word_for_word_is_flagged_however_the_code_is_written(monkeypatch):
    """(Round 38z13) ex06's allocator written another way but for one message of the published solution's, word for
    word: flagged, quoting it. A sentence the course hands out (the cell's docstring) is anybody's; and with the rule
    broken on purpose (sentences of a hundred words at least), the copy is not flagged."""
    from pagedlab.grading import similarity
    from pagedlab.grading.similarity import course_words, kept_wording, sentences_in

    solution = {"allocator-work": _cells(ROOT / "solutions" / "ex06_block_allocator.ipynb")["allocator-work"]}
    handed_out = _cells(ROOT / "exercises" / "ex06_block_allocator.ipynb")
    elsewhere = sentences_in([("code", c) for c in handed_out.values()]) + " | " + course_words()
    message = next(line.strip() for line in solution["allocator-work"].splitlines() if "cannot be shared" in line)
    own = ("def check(pool, b):\n"
           "    if not pool.counts.get(b):\n"
           f"        {message}\n")
    reasons = kept_wording({"scratch": own}, solution, elsewhere)
    assert len(reasons) == 1 and "cannot be shared" in reasons[0] and "'scratch'" in reasons[0], reasons
    docstring = f'"""{handed_out["allocator-work"].split(chr(34) * 3)[1]}"""'  # (the class's, handed out)
    assert kept_wording({"scratch": docstring}, solution, elsewhere) == []
    monkeypatch.setattr(similarity, "MIN_WORDS", 100)
    assert kept_wording({"scratch": own}, solution, elsewhere) == []


def test_a_copy_respelled_is_the_copy(monkeypatch):
    """(Round 38z13) ex01's mask with ``>=`` for ``<=`` and its lines swapped: one program to the comparison (the
    round's copy also wrote ``torch.matmul`` for ``@``). Broken on purpose (the spellings read as written), the copy
    holds less than the share a short cell needs."""
    solution = _cells(ROOT / "solutions" / "ex01_naive_attention.ipynb")
    handed_out = _cells(ROOT / "exercises" / "ex01_naive_attention.ipynb")
    body = [line for line in solution["mask-work"].splitlines() if "SOLUTION" not in line]
    body[-3], body[-2] = body[-2], body[-3]
    body[-1] = "    return i + (n_k - n_q) >= j"
    _found_only_by("_respelled", lambda node: node, monkeypatch, {"mask-work": "\n".join(body)},
                   {"mask-work": solution["mask-work"]}, handed_out)


def test_a_copy_with_its_arguments_by_position_is_the_copy(monkeypatch):
    """(Round 38z14) ex09 stretch's ``merge_states`` as published, its comments dropped and every keyword argument
    passed by position (``amax(-1, True)``): one program to the comparison. Broken on purpose (the spellings read as
    written), the copy holds less of the short cell's fingerprints than it needs."""
    solution = {"merge-work": _cells(ROOT / "solutions" / "ex09_stretch_split_kv_merge.ipynb")["merge-work"]}
    handed_out = _cells(ROOT / "exercises" / "ex09_stretch_split_kv_merge.ipynb")
    work = "\n".join(line for line in solution["merge-work"].splitlines() if not line.lstrip().startswith("#"))
    for keyword in ("dim=", "keepdim="):
        work = work.replace(keyword, "")
    _found_only_by("_respelled", lambda node: node, monkeypatch, {"merge-work": work}, solution, handed_out)


def test_a_copy_of_the_course_librarys_answer_is_flagged():
    """(Round 38i) ex02's answer is also the course library's ``pagedlab.attention.tiled_attention``, which every
    learner has: a work cell holding it, renamed, is flagged naming the function; the solution's own cells are not
    the library's, and a formula of a few lines is not compared (any learner writes the same tokens)."""
    import inspect

    from pagedlab import attention
    from pagedlab.grading.similarity import course_code
    from pagedlab.grading.specs import SPECS

    library = course_code(SPECS["ex02_online_softmax"].tripwires)
    assert "pagedlab.attention:tiled_attention" in library and "pagedlab.attention:causal_mask" not in library
    work = {"tiled-work": _renamed(inspect.getsource(attention.tiled_attention)),
            "update-work": HANDED_OUT["update-work"]}
    reasons = copied_cells(work, library, {}, library=True)
    assert len(reasons) == 1 and reasons[0].startswith(
        "cell 'tiled-work' matches the course library's pagedlab.attention.tiled_attention"), reasons
    assert copied_cells(SOLUTION, library, {}, library=True) == []


# Round 38k: the course library's BlockAllocator methods pasted into the learner's class (54% of the class's
# fingerprints, under the threshold either way it is read as a whole).
PASTED_METHODS_EX06 = r'''
class SimpleAllocator:
    """``num_blocks`` KV blocks with reference counts; the free list is a stack."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.free_list = list(range(num_blocks - 1, -1, -1))   # the top of the stack is the end: block 0
        self.ref_count = [0] * num_blocks
        self._num_blocks, self._free, self._ref_count = num_blocks, self.free_list, self.ref_count
        self._cached = bytearray(num_blocks)
        self._num_cached = 0

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self) -> int:
        """Take one block off the free list; it comes back with a reference count of 1.

        Raises:
            OutOfBlocks: the free list is empty (cached-free blocks must be evicted first).
        """
        if not self._free:
            raise OutOfBlocks(1, 0, self._num_blocks)
        block_id = self._free.pop()
        self._ref_count[block_id] = 1
        return block_id

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks at once, all or nothing, each with a reference count of 1."""
        free = self._free
        if n <= 0:
            return []
        if n > len(free):
            raise OutOfBlocks(n, len(free), self._num_blocks)
        if n == 0:
            return []
        blocks = free[-n:]
        del free[-n:]
        blocks.reverse()
        ref_count = self._ref_count
        for block_id in blocks:
            ref_count[block_id] = 1
        return blocks

    def incref(self, block_id: int) -> None:
        """Add a reference to a block that is already referenced (a fork shares it)."""
        self._check_id(block_id)
        if self._ref_count[block_id] == 0:
            state = "cached-free (a cache hit uses reuse)" if self._cached[block_id] else "free"
            raise ValueError(f"cannot add a reference to block {block_id}: it is {state}")
        self._ref_count[block_id] += 1

    def free(self, block_id: int, cache: bool = False) -> int:
        """Drop one reference to ``block_id``; at zero the block leaves its last owner."""
        self._check_id(block_id)
        count = self._ref_count[block_id]
        if count == 0:
            raise ValueError(f"double free: block {block_id} is already free")
        count -= 1
        self._ref_count[block_id] = count
        if count == 0:
            if cache:
                self._cached[block_id] = 1
                self._num_cached += 1
            else:
                self._free.append(block_id)

    def _check_id(self, block_id: int) -> None:
        # One cheap test on the hot path; the detailed message is built only when it fails.
        if type(block_id) is not int or not 0 <= block_id < self._num_blocks:
            if not isinstance(block_id, int) or isinstance(block_id, bool):
                raise TypeError(f"block_id must be an int, got {type(block_id).__name__}")
            raise ValueError(f"block_id {block_id} is not in this pool (0 .. {self._num_blocks - 1})")

'''.lstrip("\n")


def test_a_cell_that_is_mostly_the_librarys_methods_is_flagged():
    """(Round 38k) a learner's class made of the library class's methods: the cell is the library's code on most of
    its own fingerprints, though it holds too little of the whole class to match it the other way round."""
    from pagedlab.grading.similarity import THRESHOLD, course_code, fingerprints, overlap
    from pagedlab.grading.specs import SPECS

    library = course_code(SPECS["ex06_block_allocator"].tripwires)
    handed_out = _cells(ROOT / "exercises" / "ex06_block_allocator.ipynb")
    reasons = copied_cells({"allocator-work": PASTED_METHODS_EX06}, library, handed_out, library=True)
    assert len(reasons) == 1 and "is the course library's pagedlab.paged.allocator on" in reasons[0], reasons
    # the other direction alone misses it: no library function is 80% held by the cell
    mine = fingerprints(PASTED_METHODS_EX06)
    assert all((overlap(mine, fingerprints(s)) or 0) < THRESHOLD for s in library.values())
    # and a solution's own allocator, written for the exercise, is not the library's
    solution = _cells(ROOT / "solutions" / "ex06_block_allocator.ipynb")
    assert copied_cells({"allocator-work": solution["allocator-work"]}, library, handed_out, library=True) == []


# Round 38z104's honest ex07: the solution's steps, and its local names where the statement writes them as code
NAMED_AS_STATED_EX07 = (
    "class MiniManager:\n"
    '    """Block tables over a shared pool, with fork and copy-on-write."""\n'
    "\n"
    "    def __init__(self, num_blocks: int, block_size: int):\n"
    "        self.allocator = BlockAllocator(num_blocks)\n"
    "        self.block_size = block_size\n"
    "        self.tables: dict[str, BlockTable] = {}\n"
    "\n"
    "    def add(self, seq: str, num_tokens: int) -> BlockTable:\n"
    "        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))\n"
    "        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)\n"
    "        return self.tables[seq]\n"
    "\n"
    "    def free(self, seq: str) -> None:\n"
    "        for block in self.tables.pop(seq).block_ids:\n"
    "            self.allocator.free(block)\n"
    "\n"
    "    def fork(self, parent: str, child: str) -> BlockTable:\n"
    '        """Create ``child`` sharing every block of ``parent``; return the child\'s table."""\n'
    "        src = self.tables[parent]\n"
    "        for block in src.block_ids:\n"
    "            self.allocator.incref(block)\n"
    "        self.tables[child] = BlockTable(list(src.block_ids), src.num_tokens, self.block_size, device=src.device)\n"
    "        return self.tables[child]\n"
    "\n"
    "    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:\n"
    '        """Reserve the next token\'s slot of ``seq``; return ``(slot, copy)`` as described above."""\n'
    "        table = self.tables[seq]\n"
    "        position = table.num_tokens\n"
    "        copy = None\n"
    "        if position % self.block_size == 0:\n"
    "            table.block_ids.append(self.allocator.allocate())\n"
    "        else:\n"
    "            last = table.block_ids[-1]\n"
    "            if self.allocator.refcount(last) > 1:\n"
    "                new = self.allocator.allocate()\n"
    "                self.allocator.free(last)\n"
    "                table.block_ids[-1] = new\n"
    "                copy = (last, new)\n"
    "        table.num_tokens = position + 1\n"
    "        return table.slot(position), copy\n"
)


def test_names_the_statement_writes_as_code_are_not_the_solutions_own(monkeypatch):
    """(Round 38z104) ex07's statement writes ``position`` as code, and an honest learner who followed it step by step
    named the solution's locals as it does (84% of its fingerprints). Broken on purpose (the statement's names left
    in, and two own names counting at any share, as before round 38z126), it is flagged; the solution itself still
    is, by its comments' words."""
    from pagedlab.grading import similarity
    from pagedlab.grading.collect import load_pristine

    stated = load_pristine(ROOT / "exercises", ROOT / "solutions")["ex07_copy_on_write.ipynb"].stated_names
    assert "position" in stated
    solution = {k: v for k, v in _cells(ROOT / "solutions" / "ex07_copy_on_write.ipynb").items() if k.endswith("-work")}
    handed_out = {k: v for k, v in _cells(ROOT / "exercises" / "ex07_copy_on_write.ipynb").items()
                  if k.endswith("-work")}
    monkeypatch.setattr(similarity, "NEAR", 0.0)
    assert copied_cells({"manager-work": NAMED_AS_STATED_EX07}, solution, handed_out, stated=stated) == []
    assert copied_cells({"manager-work": NAMED_AS_STATED_EX07}, solution, handed_out)
    assert copied_cells(solution, solution, handed_out, stated=stated)


# Round 38z126 (honest only): ex07 stretch's two methods written by a learner who had not read the solution. The
# handed-out class names nearly everything (``block_of``, ``entry``, ``parent_id``, ``prefix_id``, ``hash_fn``) and
# the statement the algorithm, so the cell matched the solution's on 88% of its fingerprints with both of the
# solution's two own names, ``start`` and ``hits``, and none of its comments' words.
CHOSEN_ALIKE_EX07_STRETCH = '''    def keys(self, tokens: list[int]) -> list[int]:
        """Each full block's key, chained on the one before."""
        bs, out, prev = self.block_size, [], None
        for start in range(0, len(tokens) - bs + 1, bs):
            prev = self.hash_fn(prev, tuple(tokens[start:start + bs]))
            out.append(prev)
        return out

    def match(self, tokens: list[int]) -> list[int]:
        """Cached blocks of the longest verified prefix, leaving at least one token to run."""
        bs, hits, prev_id = self.block_size, [], None
        usable = (len(tokens) - 1) // bs
        for i, key in enumerate(self.keys(tokens)[:usable]):
            block = self.block_of.get(key)
            if block is None:
                break
            stored = self.entry[block]
            if stored.tokens != tuple(tokens[i * bs:(i + 1) * bs]) or stored.parent_id != prev_id:
                break
            hits.append(block)
            prev_id = stored.prefix_id
        return hits
'''


def test_two_of_three_own_names_chosen_alike_count_only_beside_nearly_every_fingerprint():
    """(Round 38z36's honest row, flagged on 85% with two of three own names) Two own names chosen alike are weak
    evidence however many the solution has: they count beside :data:`NEAR` of its fingerprints, as the solution
    itself with its third name changed does."""
    name = "ex03_triton_basics"
    solution = {k: v for k, v in _cells(ROOT / "solutions" / f"{name}.ipynb").items() if k.endswith("-work")}
    handed_out = {k: v for k, v in _cells(ROOT / "exercises" / f"{name}.ipynb").items() if k.endswith("-work")}
    softmax, stated = solution["softmax-work"], load_pristine(ROOT / "exercises", ROOT / "solutions")[
        f"{name}.ipynb"].stated_names  # (``cols``, ``mask``, ``start``: the exercise's text writes them)
    # (an honest ex03 kernel of round 38z36 with the merge in a jit helper, which chose two of the solution's three
    # own names, ``out_row`` and ``m_new``: 85% of its fingerprints)
    mine = ROUNDS_38Z33_36_HONEST["ex03 with a jit helper for the online merge and a checked scratch cell (round "
                                  "38z36)"][2]
    assert copied_cells(mine, {"softmax-work": softmax}, handed_out, stated=stated) == []
    assert copied_cells({"softmax-work": softmax.replace("x_row", "in_row")}, {"softmax-work": softmax}, handed_out,
                        stated=stated)


def test_two_own_names_chosen_alike_are_no_evidence_of_a_copy():
    """Two names are too few to tell a copy from a learner who chose the natural ones: a match counts by the
    solution's own names where it has three or more, else by its comments' words (the solution itself is flagged so,
    and so is a copy of it that keeps them)."""
    name = "ex07_stretch_prefix_cache_match"
    solution = {k: v for k, v in _cells(ROOT / "solutions" / f"{name}.ipynb").items() if k.endswith("-work")}
    handed_out = {k: v for k, v in _cells(ROOT / "exercises" / f"{name}.ipynb").items() if k.endswith("-work")}
    (cell, source), = solution.items()
    mine = source[:source.index("    def keys")] + CHOSEN_ALIKE_EX07_STRETCH
    assert copied_cells({cell: mine}, solution, handed_out) == []
    assert copied_cells(solution, solution, handed_out)
    assert copied_cells({cell: mine.replace("                break\n            hits",
                                            "                break  # a collision: another prefix owns this key\n"
                                            "            hits")}, solution, handed_out)
