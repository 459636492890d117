"""Wrong scheduler steps planted in solutions/ex10_scheduler_step.ipynb: whom preemption picks, what it frees and
where it puts them, admission past the watermark or the token budget."""

from __future__ import annotations

from planted import Plant

APPEND_LEFT = "            waiting.appendleft(victim)\n"

BUGS: dict[str, Plant] = {
    "forgets to free the preempted request (leaks its blocks)": Plant(
        {"schedule-work": (
            ("            manager.free(victim.seq_id)                 # its blocks go back "
             "now; it recomputes later\n",
             ""),
        )},
        4, "still holds it.*manager.free"),
    "preempts the oldest request instead of the newest": Plant(
        {"schedule-work": (
            ("victim = queue.pop() if queue else req", "victim = queue.popleft() if queue else req"),
        )},
        4, "newest running request, D"),
    "keeps going after preempting itself (appends to a freed request)": Plant(
        {"schedule-work": (
            ("            if victim is req:\n"
             "                break\n",
             ""),
        )},
        4, r"raised KeyError: unknown sequence 'B'.*\(at `while not "
           r"manager.can_append\(req.seq_id\):`, in schedule_step\).*Hint: manager.can_append "
           r"was called for a request the manager does not hold"),
    "puts the preempted request at the back of waiting": Plant(
        {"schedule-work": (
            ("waiting.appendleft(victim)", "waiting.append(victim)"),
        )},
        4, "FRONT of waiting"),
    "two preemptions put back in the wrong order (the newest first)": Plant(
        {"schedule-work": (
            ("    step = Step()\n",
             "    step = Step()\n"
             "    front = len(waiting)\n"),
            (APPEND_LEFT, "            waiting.insert(len(waiting) - front, victim)\n"),
        )},
        4, r"expected waiting \[C, D, E\], got \['D', 'C', 'E'\]"),
    "admits in a step that preempted": Plant(
        {"schedule-work": (
            ("while waiting and not step.preempted:", "while waiting:"),
        )},
        4, "nobody is admitted until the next one"),
    "admits past the watermark": Plant(
        {"schedule-work": (
            ("blocks + manager.watermark_blocks > manager.num_free_blocks", "blocks > manager.num_free_blocks"),
        )},
        1, "watermark"),
    "ignores the token budget": Plant(
        {"schedule-work": (
            ("\n"
             "                or step.num_tokens + len(req.tokens) > max_num_batched_tokens",
             ""),
        )},
        1, r"A \+ B is 21 tokens"),
    "budget ignores this step's decode tokens": Plant(
        {"schedule-work": (
            ("step.num_tokens + len(req.tokens) > max_num_batched_tokens",
             "step.num_tokens - len(step.grown) + len(req.tokens) > max_num_batched_tokens"),
        )},
        3, "decode tokens of the grown requests count"),
    "counts blocks rounding down (off by one)": Plant(
        {"schedule-work": (
            ("blocks = -(-len(req.tokens) // manager.block_size)", "blocks = len(req.tokens) // manager.block_size"),
        )},
        1, "partly filled block is a whole block"),
    "skips a request that does not fit and admits the next one": Plant(
        {"schedule-work": (
            ("            break\n"
             "        waiting.popleft()",
             "            waiting.rotate(-1)\n"
             "            if waiting[0] is req:\n"
             "                break\n"
             "            continue\n"
             "        waiting.popleft()"),
        )},
        1, "first come, first served"),
    "the watermark test with >= (blocks that exactly fill the free ones refused)": Plant(
        {"schedule-work": (("blocks + manager.watermark_blocks > manager.num_free_blocks",
                            "blocks + manager.watermark_blocks >= manager.num_free_blocks"),)},
        1, r"A and B \(4 tokens each\) take one full block each, and both fit; admitted \['A'\]\. Hint: a request "
           r"whose blocks \(plus the watermark\) equal the free blocks fits"),
    "the budget test with >= (a prompt that fills the budget exactly refused)": Plant(
        {"schedule-work": (("step.num_tokens + len(req.tokens) > max_num_batched_tokens",
                            "step.num_tokens + len(req.tokens) >= max_num_batched_tokens"),)},
        1, r"holds A \(12\) \+ B \(8\) exactly.*admitted \['A'\].*exactly max_num_batched_tokens fits"),
    "num_tokens counted from running before growth (a preempted request's token counted)": Plant(
        {"schedule-work": (("    step.num_tokens = len(step.grown)\n", ""),
                           ("    queue = deque(running)", "    step.num_tokens = len(running)\n    queue = deque(running)"))},
        4, r"this step computes 3 tokens, got num_tokens 4\. Hint: a preempted request computes nothing"),
    "the token appended is req.tokens[-1], not len(req.tokens)": Plant(
        {"schedule-work": (
            ("            manager.append(req.seq_id, len(req.tokens))\n"
             "            req.tokens.append(len(req.tokens))\n",
             "            manager.append(req.seq_id, req.tokens[-1])\n"
             "            req.tokens.append(req.tokens[-1])\n"),
        )},
        2, r"A's tokens after growing are \[0, 1, 2, 2\], expected \[0, 1, 2, 3\]: the token a grown request gets is "
           r"len\(req.tokens\)"),
    "the token appended before the growth check (a preempted request keeps it)": Plant(
        {"schedule-work": (
            ("        req = queue.popleft()\n", "        req = queue.popleft()\n        req.tokens.append(len(req.tokens))\n"),
            ("            manager.append(req.seq_id, len(req.tokens))\n"
             "            req.tokens.append(len(req.tokens))\n",
             "            manager.append(req.seq_id, req.tokens[-1])\n"),
        )},
        4, r"B was preempted in this step without growing, so it keeps the 8 tokens it had.*append to req.tokens after "
           r"the growth check"),
    "admits one request per step (if, not while)": Plant(
        {"schedule-work": (
            ("    while waiting and not step.preempted:", "    for _ in range(1 if waiting and not step.preempted else 0):"),
        )},
        1, r"A, B and C \(1 token each\) all fit; admitted \['A'\]\. Hint: admission takes requests from the front of "
           r"waiting WHILE they fit"),
    "an exactly full prompt counted one block too many (n // B + 1)": Plant(
        {"schedule-work": (
            ("blocks = -(-len(req.tokens) // manager.block_size)", "blocks = len(req.tokens) // manager.block_size + 1"),
        )},
        1, r"A and B \(4 tokens each\) take one full block each, and both fit; admitted \['A'\]\. Hint: an exactly "
           r"full block needs no extra one"),
    "the request grown first, the manager told the next position": Plant(
        {"schedule-work": (
            ("            manager.append(req.seq_id, len(req.tokens))\n            req.tokens.append(len(req.tokens))",
             "            req.tokens.append(len(req.tokens))\n            manager.append(req.seq_id, len(req.tokens))"),
        )},
        2, r"with prefix caching on, A grew three times .*found 2\. Hint: the manager was told other tokens"),
}
