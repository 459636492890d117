"""What the block manager did, as a log of events that widgets and tests can follow.

:class:`BlockEvent` is one thing the manager did; :class:`EventLog` keeps the last events and tells subscribers
about new ones. The rule for a subscriber that raises is :func:`notify`'s, the one place it is written: the
others are still told about every event, then the first exception propagates to whoever emitted them (the
operation has happened, and its events are logged). A subscriber runs after the operation is complete, so it
may read the manager (that is how the block-table widget redraws).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar, get_args

from pagedlab.paged.block_table import Device

E = TypeVar("E")

EventKind = Literal["allocate", "append", "free", "fork", "copy_on_write", "cache_hit", "evict",
                    "swap_out", "swap_in"]


@dataclass(frozen=True, slots=True)
class BlockEvent:
    """One thing the manager did, for widgets and logs.

    Attributes:
        kind: what happened (the blocks are GPU blocks unless ``device`` says ``"cpu"``):

            * ``"allocate"``: ``blocks`` were taken from the free list for ``seq_id`` (by ``add``, or by
              ``append`` crossing into a new block);
            * ``"append"``: ``seq_id`` reserved one token slot, ``slot``, in ``blocks[0]``;
            * ``"free"``: ``seq_id`` finished and dropped its reference to each of ``blocks`` (on ``device``);
            * ``"fork"``: ``seq_id`` was created from ``parent`` and shares all of ``blocks``;
            * ``"copy_on_write"``: ``seq_id`` wrote into a shared block, so ``pairs == ((src, dst),)``:
              it now owns ``dst``, a copy of ``src``; ``blocks == (src, dst)``;
            * ``"cache_hit"``: ``add`` reused cached ``blocks`` for the prefix of ``seq_id``, or ``swap_in``
              found ``blocks`` of ``seq_id`` still cached on the GPU (nothing to copy back for them);
            * ``"evict"``: the prefix cache gave up cached-free ``blocks`` to make room for ``seq_id``;
            * ``"swap_out"``: ``seq_id`` moved to the CPU pool; ``pairs`` are ``(gpu_block, cpu_block)``
              for each of its blocks, in logical order; ``blocks`` the GPU blocks it released;
            * ``"swap_in"``: ``seq_id`` came back; ``pairs`` are ``(cpu_block, gpu_block)`` for each of its
              blocks that was copied, ``blocks`` the GPU blocks it now holds.

            A group swap logs one event per sequence, in the group's order. A block shared inside the
            group appears in each sharer's ``pairs`` but is copied once: the copies to perform are what
            ``swap_out``/``swap_in`` return (the union of the group's pairs).
        seq_id: the sequence the event is about.
        blocks: block ids, see ``kind``.
        pairs: ``(src, dst)`` copies the caller performs (``copy_on_write``, ``swap_out``, ``swap_in``).
        parent: the parent sequence of a ``fork``, else None.
        slot: the reserved slot of an ``append``, else None.
        device: the pool ``blocks`` belong to.
        step: 0, 1, 2, ... in the order events happened in this manager.
    """

    kind: EventKind
    seq_id: Hashable
    blocks: tuple[int, ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()
    parent: Hashable | None = None
    slot: int | None = None
    device: Device = "gpu"
    step: int = 0

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:         # a misspelt kind would never match a reader's test
            raise ValueError(f"BlockEvent.kind must be one of {_KINDS}, got {self.kind!r}")

    def numbered(self, step: int) -> BlockEvent:
        """Give this event its place in the log, ``step``, and return it. The manager numbers an operation's events
        as it logs them, before any reader sees them: the one write to the frozen record, done in place because a
        copy (``dataclasses.replace``) costs about four constructions, on every decode step of every sequence."""
        object.__setattr__(self, "step", step)
        return self


_KINDS = get_args(EventKind)


def notify(subscribers: Iterable[Callable[[E], object]], events: Sequence[E]) -> None:
    """Call every subscriber with each event, in order: events outer, subscribers inner.

    A subscriber that raises stops no one: every subscriber still gets every event, and then the first
    exception propagates (the caller has done its work already; telling the others is part of it).

    Raises:
        Exception: the first one a subscriber raised, after all of them were called.
    """
    subscribers = tuple(subscribers)          # a subscriber may unsubscribe while it is told
    error = None
    for event in events:
        for callback in subscribers:
            try:
                callback(event)
            except Exception as e:  # noqa: BLE001 - re-raised below, once everyone has been told
                error = error or e
    if error is not None:
        raise error


def add_subscriber(subscribers: list[Callable], callback: Callable) -> Callable[[], None]:
    """Append ``callback`` to ``subscribers``; return a function that removes it again (a second call does nothing).

    Raises:
        TypeError: ``callback`` is not callable (nothing is appended).
    """
    if not callable(callback):
        raise TypeError(f"callback must be callable, got {type(callback).__name__}")
    subscribers.append(callback)
    return lambda: subscribers.remove(callback) if callback in subscribers else None


class EventLog(Generic[E]):
    """The last ``maxlen`` events (all of them when None), oldest first, and the subscribers told of new ones.

    Args:
        maxlen: how many events ``events`` keeps.

    Attributes:
        events: the kept events, oldest first (a deque).
        num_emitted: how many events were ever emitted (the next event's step).
    """

    def __init__(self, maxlen: int | None = 1000) -> None:
        self.events: deque[E] = deque(maxlen=maxlen)
        self.num_emitted = 0
        self._subscribers: list[Callable[[E], object]] = []

    def subscribe(self, callback: Callable[[E], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event emitted from now on; returns a function that unsubscribes.

        Raises:
            TypeError: ``callback`` is not callable.
        """
        return add_subscriber(self._subscribers, callback)

    def emit(self, events: Sequence[E]) -> None:
        """Log ``events`` (all of one operation), then :func:`notify` every subscriber of each.

        Raises:
            Exception: the first one a subscriber raised (see :func:`notify`); the events are logged.
        """
        self.events.extend(events)
        self.num_emitted += len(events)
        notify(self._subscribers, events)
