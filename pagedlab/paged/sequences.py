"""The record store of the block manager: what it keeps about each sequence, and the lookups over it.

:class:`SeqRecord` is one sequence's block table and its prefix-caching state; :class:`SeqStore` holds them by
id and answers the questions every part of the manager asks (is it known, is it on the GPU, which records make
up a group), with one error message for each wrong answer. The manager, its swapping collaborator
(:mod:`pagedlab.paged.swapping`) and the block pool (:mod:`pagedlab.paged.block_pool`) read and change records
through it; nothing else does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable

from pagedlab.paged.block_table import BlockTable, Device


class SeqRecord:
    """What the manager keeps about one sequence.

    Attributes:
        table: its :class:`BlockTable` (the manager hands it out read-only).
        uncached_tokens: prefix caching only: the token ids of blocks ``uncached_from`` on, the ones the prefix
            cache does not hold (the block being filled, full blocks awaiting ``mark_computed``, a block the cache
            refused and the blocks after it; every block while the sequence is swapped out). The caller owns the
            sequence's tokens; once a block is cached, its tokens live only in the prefix cache's entry.
        uncached_from: the first block whose tokens are in ``uncached_tokens``; every block before it is cached
            (its prefix id is not BROKEN) and held by this sequence, so its entry cannot be evicted.
        keys: prefix caching only: the chained hash of each *full* block.
        prefix_ids: ... and the prefix id of each full block whose K/V are computed.
        num_cached_tokens: prompt tokens found in the prefix cache by ``add``.
        swapped_from: while swapped out, the GPU block each logical block left; else empty.
    """

    __slots__ = ("table", "uncached_tokens", "uncached_from", "keys", "prefix_ids", "num_cached_tokens",
                 "swapped_from")

    def __init__(self, table: BlockTable, uncached_tokens: list[int], uncached_from: int, keys: list[int],
                 prefix_ids: list[int], num_cached_tokens: int) -> None:
        self.table = table
        self.uncached_tokens = uncached_tokens
        self.uncached_from = uncached_from
        self.keys = keys
        self.prefix_ids = prefix_ids
        self.num_cached_tokens = num_cached_tokens
        self.swapped_from: list[int] = []

    def copy(self) -> SeqRecord:
        """A record for a fork: a new table over the same blocks, copies of the lists (the blocks' references are
        the caller's to add)."""
        t = self.table
        return SeqRecord(BlockTable(list(t.block_ids), t.num_tokens, t.block_size, t.device),
                         self.uncached_tokens[:], self.uncached_from, list(self.keys), list(self.prefix_ids),
                         self.num_cached_tokens)

    def block_tokens(self, i: int) -> tuple[int, ...]:
        """The tokens of full block ``i``, which must be at or after :attr:`uncached_from`."""
        bs = self.table.block_size
        start = (i - self.uncached_from) * bs
        if start < 0:
            raise ValueError(f"block {i} is cached: its tokens are in the prefix cache, not in the record")
        return tuple(self.uncached_tokens[start:start + bs])


class SeqStore:
    """Every sequence's :class:`SeqRecord`, by id, in the order they were added."""

    __slots__ = ("_records",)

    def __init__(self) -> None:
        self._records: dict[Hashable, SeqRecord] = {}

    def __contains__(self, seq_id: object) -> bool:
        return seq_id in self._records

    def __len__(self) -> int:
        return len(self._records)

    def ids(self) -> list[Hashable]:
        """Every sequence id, in the order they were added."""
        return list(self._records)

    def get(self, seq_id: Hashable) -> SeqRecord:
        """The record of ``seq_id``.

        Raises:
            KeyError: unknown ``seq_id`` (the message lists a few known ones).
        """
        try:
            return self._records[seq_id]
        except KeyError:
            raise KeyError(f"unknown sequence {seq_id!r}; known: {list(self._records)[:8]}") from None

    def on_gpu(self, seq_id: Hashable, what: str) -> SeqRecord:
        """The record of ``seq_id``, which must be in the GPU pool to ``what`` it.

        Raises:
            KeyError: unknown ``seq_id``. ValueError: it is swapped out.
        """
        record = self.get(seq_id)
        if record.table.device == "cpu":
            raise ValueError(f"cannot {what} sequence {seq_id!r}: it is swapped out; swap it in first")
        return record

    def group(self, seq_ids: Hashable | list[Hashable], what: str,
              device: Device | None = "gpu") -> tuple[list[Hashable], list[SeqRecord]]:
        """The ids and records of one id or a list of distinct ids, all in ``device``'s pool (None: either).

        Raises:
            KeyError: an unknown id. ValueError: an empty list, a repeated id, an id in the other pool.
            TypeError: an unhashable id.
        """
        ids = seq_ids if isinstance(seq_ids, list) else [seq_ids]
        if not ids:
            raise ValueError(f"seq_ids is an empty list: name at least one sequence to {what}")
        if len(set(ids)) != len(ids):
            twice = [s for s, n in Counter(ids).items() if n > 1]
            raise ValueError(f"seq_ids must be distinct, {twice} appear more than once")
        if device == "gpu":
            return ids, [self.on_gpu(s, what) for s in ids]
        records = [self.get(s) for s in ids]
        if device == "cpu":
            for s, record in zip(ids, records):
                if record.table.device != "cpu":
                    raise ValueError(f"sequence {s!r} is not swapped out")
        return ids, records

    def add(self, seq_id: Hashable, record: SeqRecord, hint: str) -> None:
        """Keep ``record`` under a new ``seq_id``.

        Raises:
            ValueError: ``seq_id`` is taken (the message ends with ``hint``). TypeError: it is not hashable.
        """
        self.check_new(seq_id, hint)
        self._records[seq_id] = record

    def check_new(self, seq_id: Hashable, hint: str) -> None:
        """Raise ValueError (ending with ``hint``) when ``seq_id`` is taken, TypeError when it is not hashable."""
        if seq_id in self._records:
            raise ValueError(f"sequence {seq_id!r} already exists; {hint}")

    def remove(self, seq_id: Hashable) -> SeqRecord:
        """Forget ``seq_id`` and return its record. Raises KeyError for an unknown id."""
        record = self.get(seq_id)
        del self._records[seq_id]
        return record
