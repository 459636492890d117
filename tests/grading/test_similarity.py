"""Copies of the published solution, and near-identical learners, are found however they are renamed."""

import json

from pagedlab.grading.similarity import copied_cells, similar_pairs
from pagedlab.grading.tables import write_similarity

from graded_in_process import ROOT


def _cells(path):
    nb = json.loads(path.read_text())
    return {c["id"]: "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"}


SOLUTION = _cells(ROOT / "solutions" / "ex02_online_softmax.ipynb")
HANDED_OUT = _cells(ROOT / "exercises" / "ex02_online_softmax.ipynb")


def _renamed(source: str) -> str:
    """The solution as a copier hides it: names changed, comments rewritten, blank lines added."""
    out = source.replace("acc", "accumulator").replace("m_new", "new_max").replace("block_n", "bn")
    return "\n".join(line.split("#")[0].rstrip() + ("  # mine" if line.strip() else "") for line in out.splitlines())


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
        assert copied_cells(work, SOLUTION, HANDED_OUT) == []
    finally:
        similarity.identities = original
