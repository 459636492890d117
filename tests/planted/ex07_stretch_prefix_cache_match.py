"""Wrong prefix-cache lookups planted in solutions/ex07_stretch_prefix_cache_match.ipynb: keys not chained, a key for
the partial block, the whole prompt hit, colliding keys or other prefixes taken as hits."""

from __future__ import annotations

from planted import Plant

COMPARE = "            if stored.tokens != tuple(tokens[i * bs:(i + 1) * bs]) or stored.parent_id != prefix_id:"

BUGS: dict[str, Plant] = {
    "keys not chained (a key stands for one block, not its prefix)": Plant(
        {"cache-work": (
            ("            key = self.hash_fn(key, tuple(", "            key = self.hash_fn(None, tuple("),
        )},
        # the keys by name, not by value: the default hash differs from one process to the next
        1, r"got \[key_0, hash_fn\(None, \(1, 5, 9\)\)\]\. Hint: the second key ignores the first"),
    "a key for the partly filled last block": Plant(
        {"cache-work": (
            ("range(0, len(tokens) - bs + 1, bs)", "range(0, len(tokens), bs)"),
        )},
        1, r"got \[key_0, key_1, a key of the partial block \(2, 6\)\]\. Hint: .*partly filled last block"),
    "prefix id not carried forward": Plant(
        {"cache-work": (
            ("            prefix_id = stored.prefix_id\n", ""),
        )},
        2, "prefix id is carried from hit to hit"),
    "the whole prompt may hit": Plant(
        {"cache-work": (
            ("self.keys(tokens)[:(len(tokens) - 1) // bs]", "self.keys(tokens)"),
        )},
        3, r"\(len\(tokens\) - 1\) // block_size"),
    "tokens not compared (a colliding key is a hit)": Plant(
        {"cache-work": (
            (COMPARE, "            if stored.parent_id != prefix_id:"),
        )},
        4, "stored tokens"),
    "predecessor not compared (tokens alone)": Plant(
        {"cache-work": (
            (COMPARE, "            if stored.tokens != tuple(tokens[i * bs:(i + 1) * bs]):"),
        )},
        4, "stored parent_id"),
    "predecessor compared by key, not by prefix id": Plant(
        {"cache-work": (
            (COMPARE, "            if stored.tokens != tuple(tokens[i * bs:(i + 1) * bs]):"),
            ("            block = self.block_of.get(key)\n",
             "            block = self.block_of.get(key)\n"
             "            if i and self.block_of.get(self.keys(tokens)[i - 1]) is None:\n"
             "                break\n"),
        )},
        4, "stored parent_id"),
    "a miss skipped instead of ending the match": Plant(
        {"cache-work": (
            ("            if block is None:\n"
             "                break",
             "            if block is None:\n"
             "                continue"),
            ("                break  # a collision", "                continue  # a collision"),
        )},
        5, "the first miss ends the match"),
    "predecessor not compared for the first block (prefix_id is not None and ...)": Plant(
        {"cache-work": (
            ("or stored.parent_id != prefix_id:", "or (prefix_id is not None and stored.parent_id != prefix_id):"),
        )},
        5, r"holds these very tokens \(1, 1\), cached after \[0, 0\].*for the first block is None"),
    "keys() restarting the chain at the fourth block": Plant(
        {"cache-work": (
            ("key = self.hash_fn(key, tuple(tokens[start:start + bs]))",
             "key = self.hash_fn(key if start < 3 * bs else None, tuple(tokens[start:start + bs]))"),
        )},
        5, r"taken as a miss: keys\(\[[0-9, ]*\]\) is wrong from entry 3 on"),
    "a block taken as a miss by truthiness (block id 0 is a miss)": Plant(
        {"cache-work": (
            ("            if block is None:", "            if not block:"),
        )},
        5, r"cached \(block id 0\) for this very prefix, yet it was taken as a miss.*`is None`"),
    "stored tokens (a tuple) compared with a list slice: never equal": Plant(
        {"cache-work": (
            (COMPARE,
             "            if stored.tokens != tokens[i * bs:(i + 1) * bs] or stored.parent_id "
             "!= prefix_id:"),
        )},
        2, r"found no hit at all, yet the first block \(1, 2\) is cached.*a tuple never equals a\s+list"),
    "tokens compared for the first block only (later blocks by key and parent)": Plant(
        {"cache-work": (
            (COMPARE, "            if (i == 0 and stored.tokens != tuple(tokens[:bs])) or stored.parent_id != prefix_id:"),
        )},
        5, r"expected"),
    "a miss skipped, not ending the match (continue, not break)": Plant(
        {"cache-work": (
            ("            if block is None:\n                break", "            if block is None:\n                continue"),
        )},
        6, r"a hash blind to the prefix.*expected hits \[0\], got \[0, 1\]\. Hint: hit 1 \(1\) is a miss.*the first miss "
           r"ends the match"),
}
