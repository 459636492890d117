"""A record of the tile schedule of tiled attention, for the tile widget to replay.

Both producers fill the same :class:`TileTrace`:

* ``pagedlab.attention.tiled_attention(..., trace=TileTrace())``, the PyTorch reference, records every
  (query tile, key tile) step with the running max ``m`` and running sum ``l`` of the rows of the current
  query tile, and the partial output, so the widget can show the error falling to zero;
* ``pagedlab.kernels.flash_attention`` in trace mode records which key tiles each program (query tile)
  visited, in the order it visited them, without values.

``pagedlab.widgets.TileWidget`` only reads a trace. A trace can be read while it is still being filled:
readers look at ``steps[:n]`` and never assume the trace is complete, and :meth:`TileTrace.watch` tells
them when it grows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal

from pagedlab.validate import blocks_for

StepKind = Literal["full", "masked", "skipped"]
"""``full``: every score of the tile is used; ``masked``: the causal diagonal tile, partly masked;
``skipped``: a tile entirely above the causal diagonal, never loaded."""


def tile_kind(q_tile: int, k_tile: int, n_q: int, n_k: int, block_m: int, block_n: int, causal: bool) -> StepKind:
    """How the causal mask meets tile (``q_tile``, ``k_tile``): ``full``, ``masked`` or ``skipped``.

    The mask is aligned bottom-right, as in FlashAttention-2: query row ``r`` sees keys ``c <= r + n_k - n_q``
    (so the last query always sees every key). A tile is ``skipped`` when even its last row sees none of its
    keys, ``full`` when even its first row sees all of them, ``masked`` otherwise (it straddles the diagonal).
    Without ``causal`` every tile is ``full``. A tile past the end of the sequence is only partly filled;
    that is bounds handling, not masking, and does not change its kind.
    """
    if not causal:
        return "full"
    offset = n_k - n_q
    first_row, last_row = q_tile * block_m, min((q_tile + 1) * block_m, n_q) - 1
    first_key, last_key = k_tile * block_n, min((k_tile + 1) * block_n, n_k) - 1
    if first_key > last_row + offset:
        return "skipped"
    if last_key <= first_row + offset:
        return "full"
    return "masked"


@dataclass(frozen=True)
class TileStep:
    """One step of the schedule: query tile ``q_tile`` meets key tile ``k_tile``.

    Attributes:
        q_tile, k_tile: tile indices (rows ``q_tile*block_m ...``, keys ``k_tile*block_n ...``).
        kind: see :data:`StepKind`.
        m, l: after this step, the running max and running sum of each row of the query tile
            (length ``min(block_m, n_q - q_tile*block_m)``), or None when the producer does not record values.
        out: after this step, the normalized partial output ``acc / l`` of those rows as nested lists
            ``[row][d]``, or None.
    """

    q_tile: int
    k_tile: int
    kind: StepKind
    m: tuple[float, ...] | None = None
    l: tuple[float, ...] | None = None
    out: tuple[tuple[float, ...], ...] | None = None


@dataclass
class TileTrace:
    """The schedule of one (batch, head) of tiled attention.

    Attributes:
        n_q, n_k: query and key sequence lengths.
        block_m, block_n: query and key tile sizes.
        causal: whether the causal mask was applied (bottom-right aligned when ``n_q != n_k``).
        source: who recorded it, e.g. ``"tiled_attention"`` or ``"triton"``.
        steps: the steps in the order they were recorded.
    """

    n_q: int = 0
    n_k: int = 0
    block_m: int = 0
    block_n: int = 0
    causal: bool = False
    source: str = ""
    steps: list[TileStep] = field(default_factory=list)
    # Callbacks run after start() and after every record(), so a view can follow a trace that is being filled.
    _watchers: list[Callable[[TileTrace], None]] = field(default_factory=list, init=False, repr=False,
                                                            compare=False)

    @property
    def n_q_tiles(self) -> int:
        return blocks_for(self.n_q, self.block_m) if self.block_m else 0

    @property
    def n_k_tiles(self) -> int:
        return blocks_for(self.n_k, self.block_n) if self.block_n else 0

    def start(self, n_q: int, n_k: int, block_m: int, block_n: int, causal: bool, source: str) -> None:
        """(Re)initialize the trace for a new run; producers call this before recording steps."""
        self.n_q, self.n_k, self.block_m, self.block_n = n_q, n_k, block_m, block_n
        self.causal, self.source = causal, source
        self.steps.clear()
        self._notify()

    def record(self, step: TileStep) -> None:
        """Append one step."""
        self.steps.append(step)
        self._notify()

    def kind_of(self, q_tile: int, k_tile: int) -> StepKind:
        """The causal kind of a tile of this trace's geometry (see :func:`tile_kind`), recorded or not."""
        return tile_kind(q_tile, k_tile, self.n_q, self.n_k, self.block_m, self.block_n, self.causal)

    @property
    def has_values(self) -> bool:
        """True when the recorded steps carry the running ``m``/``l``/``out`` (False for an empty trace).

        A producer records values for every step or for none, so the first step decides.
        """
        return bool(self.steps) and self.steps[0].m is not None

    def watch(self, callback: Callable[[TileTrace], None]) -> None:
        """Call ``callback(trace)`` after every future :meth:`start` and :meth:`record`."""
        self._watchers.append(callback)

    def unwatch(self, callback: Callable[[TileTrace], None]) -> None:
        """Stop calling ``callback``; raises ``ValueError`` if it was not watching."""
        try:
            self._watchers.remove(callback)
        except ValueError:
            raise ValueError(f"callback {callback!r} is not watching this trace") from None

    def _notify(self) -> None:
        for callback in list(self._watchers):
            callback(self)
