"""The checks of exercise 7's stretch (the prefix-cache lookup, collisions and all).

Each check builds a ``MiniPrefixCache`` (the learner's class), caches a few prompts and compares ``keys`` or
``match`` with what a cache must answer; the hint is picked from the answer that came back.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included: blocks of 1 to 4 tokens; prompts (lists of ints) of 1 token up to 4 blocks and one
token, their lengths one below, at and one past a whole number of blocks, tokens from an alphabet of 1 to 3 values
(many prompts sharing prefixes, the same tokens after different prefixes); hash functions strong (the default), weak
(a sum ``% 5``, the same on every run, unlike ``hash`` of a tuple holding ``None`` before Python 3.12), blind to the
prefix (the tokens' sum ``% 3``) and constant (every key 0: every block collides); block ids from 0; a block of
zeros cached second (after a block of ones) before any prompt starts with it. Each prompt is matched, then cached
(``insert``), in turn. ``keys`` is compared with the chained keys of the full blocks, and ``match`` with a
brute-force oracle of whole prefixes: a block hits when the same whole prefix was cached under its key (first come, first
kept), up to the first miss and never past ``(len(tokens) - 1) // block_size`` blocks.
"""

from __future__ import annotations

import random
from collections.abc import Callable


def error_hint(exc: BaseException) -> str:
    """The hint for an error raised inside ``keys`` or ``match``."""
    if isinstance(exc, TypeError) and "unhashable" in str(exc):
        return "a list cannot be hashed (nor be a dict key): a block's tokens are hashed and stored as a tuple."
    if isinstance(exc, KeyError):
        return "a key that is not cached is a miss, not an error: look keys up so that a missing one gives None."
    if isinstance(exc, IndexError):
        return "block i holds tokens[i * block_size:(i + 1) * block_size]; there are len(tokens) // block_size full ones."
    return ""


def _no_hit_at_all(cache, prompt) -> str | None:
    """Why ``match`` may have found nothing although the prompt's first block is cached under its key, or None."""
    keys = cache.keys(prompt)
    block = cache.block_of.get(keys[0]) if keys else None
    if block is None:
        return None
    stored = cache.entry[block].tokens
    mine = prompt[:cache.block_size]
    if tuple(stored) == tuple(mine):
        return (f"match found no hit at all, yet the first block {tuple(mine)} is cached (block {block}) with exactly "
                f"those tokens: the comparison itself fails. The stored tokens are a tuple, and a tuple never equals a "
                f"list, even with the same items ((1, 2) == [1, 2] is False): compare like with like.")
    return None


def _keys_text(keys, names: dict) -> str:
    """``keys`` (what ``keys`` returned) with each key written as the name ``names`` gives its value
    (``{value: "key_0"}``), never as the value: the default hash of a key chained from ``None`` differs from one
    process to the next (before Python 3.12), and two runs of the same notebook must print the same message."""
    def name(key) -> str:
        try:
            return names.get(key) or "a key that is none of these"
        except TypeError:   # an unhashable key: a list, say
            return f"an unhashable {type(key).__name__}"
    if isinstance(keys, (list, tuple)):
        inner = ", ".join(name(k) for k in keys)
        return f"[{inner}]" if isinstance(keys, list) else f"a tuple ({inner})"
    return f"a {type(keys).__name__}" if isinstance(keys, int) else repr(keys)


class _Shown(str):
    """Text that :func:`_failure` prints as it is (its repr is itself)."""

    def __repr__(self) -> str:
        return str(self)


def _failure(question: str, got: object, hints: list[tuple[object, str | Callable[[], str]]],
             otherwise: str) -> AssertionError:
    """The error a check raises: ``question`` (the call and what it should return), what came back, and the hint of
    the first ``(condition, hint)`` in ``hints`` whose condition is true, else ``otherwise``. A callable hint is
    called only when chosen (it may run the learner's code again)."""
    hint = next((hint for condition, hint in hints if condition), otherwise)
    return AssertionError(f"{question}, got {got!r}. Hint: {hint() if callable(hint) else hint}")


def check_chained_keys(cache_class: type) -> None:
    """Check 1: ``keys`` chains each full block's key on its predecessor's, and gives the partial block none."""
    __tracebackhide__ = True
    cache = cache_class(block_size=3)
    tokens = [5, 1, 4, 1, 5, 9, 2, 6]
    h0 = cache.hash_fn(None, (5, 1, 4))
    expected = [h0, cache.hash_fn(h0, (1, 5, 9))]
    got = cache.keys(tokens)
    if got == expected:
        return
    names = {cache.hash_fn(None, (2, 6)): "a key of the partial block (2, 6)",
             cache.hash_fn(h0, (2, 6)): "a key of the partial block (2, 6)",
             cache.hash_fn(expected[1], (2, 6)): "a key of the partial block (2, 6)",
             cache.hash_fn(None, (1, 5, 9)): "hash_fn(None, (1, 5, 9))", h0: "key_0", expected[1]: "key_1"}
    raise _failure("keys([5, 1, 4, 1, 5, 9, 2, 6]) with blocks of 3 should be the 2 chained keys [key_0, key_1], "
                   "key_0 = hash_fn(None, (5, 1, 4)) and key_1 = hash_fn(key_0, (1, 5, 9))", _Shown(_keys_text(got, names)), [
        (isinstance(got, list) and len(got) == 3,
         "3 keys for 2 full blocks: the partly filled last block [2, 6] has no key."),
        (got == [h0, cache.hash_fn(None, (1, 5, 9))],
         "the second key ignores the first: key_i is hash_fn(key_{i-1}, block_i), so it stands for the whole prefix."),
        (isinstance(got, list) and len(got) == 2,
         "two keys, as expected, but not these: key_0 = hash_fn(None, tuple(block_0)), "
         "key_1 = hash_fn(key_0, tuple(block_1))."),
    ], otherwise="one key per full block, in order, as a list.")


def check_longest_prefix(cache_class: type) -> None:
    """Check 2: ``match`` returns the cached blocks up to the first block that differs, and no further."""
    __tracebackhide__ = True
    cache = cache_class(block_size=2)
    cache.insert([1, 2, 3, 4, 5, 6, 7], [10, 11, 12])
    for prompt, expected, why in [
            ([1, 2, 3, 4, 9, 9, 7], [10, 11], "the third block differs"),
            ([1, 2, 9, 9, 5, 6, 7], [10], "the second block differs, so the third (same tokens, other prefix) cannot hit"),
            ([9, 9, 3, 4, 5, 6, 7], [], "the first block differs"),
            ([1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11, 12], "every cached block, and tokens are left to run")]:
        got = cache.match(prompt)
        if got == expected:
            continue
        raise _failure(f"match({prompt}) after caching [1..7] in blocks 10, 11, 12: expected {expected} ({why})", got, [
            (got == [] and expected,
             lambda: _no_hit_at_all(cache, prompt) or "the first block is cached: look its key up in block_of."),
            (got == expected[:1] and len(expected) > 1,
             "only the first block hit: after each hit, the next block's stored parent_id must equal THIS hit's "
             "prefix id, so the prefix id is carried from hit to hit."),
            (isinstance(got, list) and len(got) > len(expected) and got[:len(expected)] == expected,
             "blocks after the first miss were returned: the first miss ends the match."),
        ], otherwise="walk the keys in order, look each up, and stop at the first miss.")


def check_never_entirely(cache_class: type) -> None:
    """Check 3: a prompt never hits entirely: at most ``(len(tokens) - 1) // block_size`` blocks."""
    __tracebackhide__ = True
    cache = cache_class(block_size=2)
    cache.insert([1, 2, 3, 4], [10, 11])
    got = cache.match([1, 2, 3, 4])
    if got == [10, 11]:
        raise AssertionError(
            "match([1, 2, 3, 4]) with both blocks cached returned [10, 11]: nothing would be left to run, so there "
            "are no logits to sample from. Hint: at most (len(tokens) - 1) // block_size blocks may hit: here 1.")
    if got != [10]:
        hint = _no_hit_at_all(cache, [1, 2, 3, 4]) or "the first block may hit; only the last full one may not."
        raise AssertionError(f"match([1, 2, 3, 4]) with both blocks cached: expected [10] (one token block left to "
                             f"run), got {got!r}. Hint: {hint}")
    got = cache.match([1, 2, 3, 4, 5])
    if got != [10, 11]:
        raise AssertionError(f"match([1, 2, 3, 4, 5]): with a fifth token to run, both cached blocks may hit; got "
                             f"{got!r}. Hint: the limit is (len(tokens) - 1) // block_size = 2 here.")


def check_collisions(cache_class: type) -> None:
    """Check 4: under weak hash functions, a key owned by another prefix is a miss."""
    __tracebackhide__ = True
    cache = cache_class(block_size=2, hash_fn=lambda parent_key, tokens: 0)
    cache.insert([1, 2, 3, 4, 5], [10, 11])
    got = cache.match([7, 8, 3, 4, 5])
    if got != []:
        raise AssertionError(
            f"with a hash under which every key is 0, match([7, 8, 3, 4, 5]) found {got!r}: block 10 holds (1, 2), "
            f"not (7, 8). Hint: a hit needs the stored tokens to equal the block's tokens.")
    cache = cache_class(block_size=2, hash_fn=lambda parent_key, tokens: hash(tokens))  # blind to the prefix
    cache.insert([1, 2, 3, 4, 0], [10, 11])
    cache.insert([5, 6, 0], [20])
    got = cache.match([5, 6, 3, 4, 0])
    if got == [20, 11]:
        raise AssertionError(
            "match([5, 6, 3, 4, 0]) found [20, 11]: block 11 holds (3, 4) computed after (1, 2), not after (5, 6): "
            "its K/V differ. Hint: a hit also needs the stored parent_id to be the prefix id of the previous hit "
            "(None for the first block).")
    if got != [20]:
        hint = _no_hit_at_all(cache, [5, 6, 3, 4, 0]) or "block 20 holds (5, 6) after nothing: it is a hit."
        raise AssertionError(f"match([5, 6, 3, 4, 0]): expected [20], got {got!r}. Hint: {hint}")


def check_random_prompts(cache_class: type) -> None:
    """Check 5: 300 random prompts under three hash functions, against a brute-force oracle of whole prefixes. The
    hash functions give the same keys in every process (no ``hash(None)``), so the same prompt fails every run."""
    __tracebackhide__ = True

    def chained(hash_fn, prompt):
        keys, key = [], None
        for i in range(len(prompt) // 2):
            key = hash_fn(key, tuple(prompt[2 * i:2 * i + 2]))
            keys.append(key)
        return keys

    def chained_hash(p, t):  # hash((p, t)) with None as -7: hash(None) differs from one process to the next
        return hash((-7 if p is None else p, t))   # (before Python 3.12), a tuple of ints hashes the same every run

    rng = random.Random(0)
    for hash_fn in [chained_hash, lambda p, t: chained_hash(p, t) % 5, lambda p, t: sum(t) % 3]:
        cache, next_block = cache_class(block_size=2, hash_fn=hash_fn), 0
        owner = {}     # key -> the whole prefix (tokens up to the block's end) cached under it
        block_of = {}  # whole prefix -> its cached block
        inserted = []  # the prompts inserted so far
        for step in range(300):
            prompt = [rng.randrange(3) for _ in range(rng.randint(1, 9))]
            keys = chained(hash_fn, prompt)
            oracle = []
            for i, key in enumerate(keys[:(len(prompt) - 1) // 2]):
                if owner.get(key) != tuple(prompt[:2 * i + 2]):
                    break   # not cached, or a collision: another prefix owns the key
                oracle.append(block_of[owner[key]])
            got = cache.match(prompt)
            if got != oracle:
                i = len(oracle)
                if isinstance(got, list) and len(got) > i and got[:i] == oracle:
                    held = next((p for p, b in block_of.items() if b == got[i]), None)
                    if held == tuple(prompt[:2 * i + 2]) and i == (len(prompt) - 1) // 2:
                        hint = (f"block {got[i]} holds this very prefix {list(held)}, but a match returns at most "
                                f"(len(prompt) - 1) // block_size = {i} block(s): the prompt's last token must still "
                                f"be computed (its logits give the next token), so the block that holds it is never "
                                f"a hit, even when cached.")
                    elif held is not None and held[-2:] == tuple(prompt[2 * i:2 * i + 2]):
                        hint = (f"block {got[i]} holds these very tokens {held[-2:]}, cached after "
                                f"{list(held[:-2]) or 'nothing'}, while here they come after "
                                f"{prompt[:2 * i] or 'nothing (they start the prompt)'}: its parent_id must equal the "
                                f"prefix id of the previous hit, which for the first block is None.")
                    else:
                        hint = ("you returned more hits: the block after the last good one is a miss (not cached, or "
                                "its key owned by another prefix), and the first miss ends the match.")
                elif isinstance(got, list) and len(got) < i and oracle[:len(got)] == got:
                    k, block = len(got), oracle[len(got)]
                    wrong = _first_wrong_keys(cache, lambda tokens: chained(hash_fn, tokens), [prompt, *inserted])
                    hint = (f"the prompt's block {k} is cached (block id {block}) for this very prefix, yet it was "
                            "taken as a miss: " + (
                                f"keys({wrong[0]}) is wrong from entry {wrong[1]} on (key_i = hash_fn(key_(i-1), "
                                "tuple(block_i)), key_(-1) = None), and insert and match both use keys()."
                                if wrong is not None
                                else "a block id can be 0 (test `is None`, not truthiness)." if block == 0
                                else f"look it up under entry {k} of keys(), and go on while each block hits."))
                else:
                    hint = "compare tokens AND the predecessor's prefix id, and stop at the first miss."
                raise AssertionError(f"step {step}, prompt {prompt}: expected hits {oracle}, got {got!r}. A block is "
                                     f"a hit when the same whole prefix was cached, and only then. Hint: {hint}")
            blocks = list(range(next_block, next_block + len(keys)))
            next_block += len(blocks)
            cache.insert(prompt, blocks)
            inserted.append(prompt)
            for i, (key, block) in enumerate(zip(keys, blocks)):   # what register does: first come, first kept
                prefix = tuple(prompt[:2 * i + 2])
                if key not in owner:
                    owner[key], block_of[prefix] = prefix, block
                elif owner[key] != prefix:
                    break   # the key belongs to another prefix: this block and the rest of the prompt stay uncached


SPACE_HASHES = {"the default hash": None,
                "a weak hash (% 5)": lambda p, t: (7 * (p or 0) + sum((i + 2) * x for i, x in enumerate(t))) % 5,
                "a hash blind to the prefix (sum % 3)": lambda p, t: sum(t) % 3,
                "a constant hash (every key 0)": lambda p, t: 0}


def _space_prompts(rng: random.Random, block_size: int, alphabet: int) -> list[list[int]]:
    """Prompts of every boundary length (1, and one below, at and one past 1 to 4 blocks), then drawn ones."""
    lengths = sorted({1, *(n for b in range(1, 5) for n in (b * block_size - 1, b * block_size, b * block_size + 1)
                           if n >= 1)})
    # First a prompt whose SECOND block, all zeros, takes the key (under the hashes blind to the prefix, or constant
    # after the first) that a prompt starting with that block looks up: the same tokens after another prefix.
    prompts = [[1] * block_size + [0] * block_size + [0]]
    # Then one that misses in its middle ([2]s) before that cached block of zeros: under a hash blind to the prefix
    # the zeros' key is found, chained from the same first block, yet the first miss has ended the match.
    prompts.append([1] * block_size + [2] * block_size + [0] * block_size + [0])
    prompts += [[0] * n for n in lengths] + [[rng.randrange(alphabet) for _ in range(n)] for n in lengths]
    return prompts + [[rng.randrange(alphabet) for _ in range(rng.randint(1, 4 * block_size + 1))] for _ in range(25)]


def check_over_the_space(cache_class: type) -> None:
    """Check 6: ``keys`` and ``match`` against the chained keys and a brute-force oracle of whole prefixes, for
    blocks of 1 to 4 tokens under four hash functions (the module docstring), boundaries included: the first prompt
    where yours differs, and how."""
    __tracebackhide__ = True
    rng = random.Random(6)
    for block_size in (1, 2, 3, 4):
        for name, hash_fn in SPACE_HASHES.items():
            for alphabet in (1, 3):
                cache = cache_class(block_size) if hash_fn is None else cache_class(block_size, hash_fn)
                fn, next_block = cache.hash_fn, 0
                owner, block_of = {}, {}   # key -> the whole prefix cached under it; whole prefix -> its block
                setting = f"blocks of {block_size}, {name}, tokens from {list(range(alphabet))}"
                for step, prompt in enumerate(_space_prompts(rng, block_size, alphabet)):
                    want_keys, key = [], None
                    for i in range(len(prompt) // block_size):
                        key = fn(key, tuple(prompt[i * block_size:(i + 1) * block_size]))
                        want_keys.append(key)
                    got_keys = cache.keys(prompt)
                    if got_keys != want_keys:
                        if hash_fn is None:   # the default hash differs from one process to the next: names, not values
                            names = {fn(None, tuple(prompt[i * block_size:(i + 1) * block_size])):
                                     f"hash_fn(None, block_{i})" for i in range(len(prompt) // block_size)}
                            names.update({k: f"key_{i}" for i, k in enumerate(want_keys)})
                            want_text = (f"[{', '.join(f'key_{i}' for i in range(len(want_keys)))}]" if want_keys
                                         else "[]")
                            got_text = _keys_text(got_keys, names)
                        else:
                            want_text, got_text = str(want_keys), repr(got_keys)
                        raise AssertionError(
                            f"{setting}: keys({prompt}) should be the {len(want_keys)} chained keys {want_text}, got "
                            f"{got_text}. Hint: one key per FULL block ({len(prompt)} // {block_size} = "
                            f"{len(want_keys)}), key_i = hash_fn(key_(i-1), tuple(block_i)), with the cache's hash_fn.")
                    oracle = []
                    for i, key in enumerate(want_keys[:(len(prompt) - 1) // block_size]):
                        if owner.get(key) != tuple(prompt[:(i + 1) * block_size]):
                            break
                        oracle.append(block_of[owner[key]])
                    got = cache.match(prompt)
                    if got != oracle:
                        limit = (len(prompt) - 1) // block_size
                        if isinstance(got, list) and len(got) > limit:
                            why = (f"{len(got)} hits, past the limit (len(tokens) - 1) // block_size = "
                                   f"({len(prompt)} - 1) // {block_size} = {limit}: something must be left to run.")
                        elif isinstance(got, list) and len(got) > len(oracle) and got[:len(oracle)] == oracle:
                            why = (f"hit {len(oracle)} ({got[len(oracle)]}) is a miss: its key is not cached, or it "
                                   f"is owned by another whole prefix (other tokens, or the same tokens after another "
                                   f"prefix); the first miss ends the match.")
                        elif isinstance(got, list) and len(got) < len(oracle) and oracle[:len(got)] == got:
                            why = (f"block {len(got)} is cached (block {oracle[len(got)]}) for this very prefix, "
                                   f"yet it was taken as a miss: a block id can be 0, a key can be 0 (test "
                                   f"`is None`, not truthiness).")
                        else:
                            why = "compare tokens AND the predecessor's prefix id, and stop at the first miss."
                        raise AssertionError(
                            f"{setting}, prompt {step} {prompt}: expected hits {oracle}, got {got!r}. Hint: {why}")
                    blocks = list(range(next_block, next_block + len(want_keys)))
                    next_block += len(blocks)
                    cache.insert(prompt, blocks)
                    for i, (key, block) in enumerate(zip(want_keys, blocks)):   # first come, first kept
                        prefix = tuple(prompt[:(i + 1) * block_size])
                        if key not in owner:
                            owner[key], block_of[prefix] = prefix, block
                        elif owner[key] != prefix:
                            break


def _first_wrong_keys(cache, chained: Callable[[list[int]], list], prompts: list[list[int]]
                      ) -> tuple[list[int], int] | None:
    """The first of ``prompts`` whose ``cache.keys`` differs from ``chained(prompt)``, the chained keys, and the first
    entry that differs (None: all right)."""
    for prompt in prompts:
        want = chained(prompt)
        try:
            got = cache.keys(prompt)
        except Exception:
            return prompt, 0
        if not isinstance(got, list) or got != want:
            got = got if isinstance(got, list) else []
            return prompt, next((j for j in range(len(want)) if j >= len(got) or got[j] != want[j]), len(want))
    return None
