"""Text from token ids as they arrive, one step at a time (incremental detokenization), and stop strings.

Decoding each new token on its own is wrong twice over. A byte-level BPE token is a few *bytes*, and one
character may span tokens ("é" is two bytes, an emoji four): a token that ends inside a character decodes to
the replacement character ``\\ufffd``. And some tokenizers decode a token differently after another (a
leading space). So, as vLLM does, each step decodes a short window: the tokens since the last emitted text's
start (``prefix_offset``) with and without the new ones; the new text is the difference, held back while it
ends in ``\\ufffd`` (an unfinished character), so the deltas concatenate to the whole completion's text.
"""

from __future__ import annotations

from collections.abc import Sequence

_WINDOW = 5
"""Prompt tokens decoded before the first new token, as context (vLLM uses 5 too)."""


class IncrementalDetokenizer:
    """The text of one completion, grown token by token, and its stop strings, as vLLM V1's detokenizer
    (``vllm/v1/engine/detokenizer.py``, ``BaseIncrementalDetokenizer.update`` and ``check_stop_strings``).

    vLLM's rules, kept here:

    * the token that ended the completion (EOS or one of ``stop_token_ids``, the engine's decision) adds no text
      unless ``include_stop``; with ``include_stop`` its text is added and searched like any other;
    * stop strings are searched only once more than ``min_tokens`` tokens exist, and a match must end in the text
      of the tokens after the first ``min_tokens`` (it may begin a few characters before: a stop string that
      straddles the boundary counts);
    * when several stop strings end in the new text, the one that ends first in the text wins, a tie going to the
      first in the list (vLLM 0.32's ``check_stop_strings``; earlier V1 releases took the first in the list); the
      text is cut before it, or after it with ``include_stop``.

    Args:
        tokenizer: a Hugging Face tokenizer (its ``decode``).
        prompt: the prompt's token ids (the last few are context for the first token's text).
        stop: strings that end the completion.
        include_stop: keep the stop string, and the stopping token's text, in ``text``.
        min_tokens: generated tokens before which no stop string is searched.
        skip_special_tokens, spaces_between_special_tokens: the tokenizer's ``decode`` options.

    Attributes:
        text: the completion's text so far (special tokens skipped unless asked, stop string and stopping token
            excluded unless ``include_stop``).
        stop_string: the stop string found, or None.
        num_tokens: generated tokens added so far.
    """

    def __init__(self, tokenizer, prompt: Sequence[int], stop: Sequence[str] = (), include_stop: bool = False,
                 min_tokens: int = 0, skip_special_tokens: bool = True,
                 spaces_between_special_tokens: bool = True) -> None:
        self.tokenizer, self.stop, self.include_stop = tokenizer, tuple(stop), include_stop
        self.min_tokens = min_tokens
        self._options = dict(skip_special_tokens=skip_special_tokens)
        if not spaces_between_special_tokens:   # only passed when not the default: not every tokenizer takes it
            self._options["spaces_between_special_tokens"] = False
        self.ids = list(prompt[-_WINDOW:])
        self.prefix_offset, self.read_offset = 0, len(self.ids)
        self.text = ""
        self.stop_string: str | None = None
        self.num_tokens = 0

    def add(self, token_id: int, stopped: bool = False) -> str:
        """Append one generated token; returns the text it adds ("" while a character is unfinished).

        Args:
            token_id: the token.
            stopped: the engine ended the completion at this token (EOS or a stop token id): its text is left
                out unless ``include_stop`` (vLLM's ``stop_terminated``).

        When the text completes a stop string, returns the text before it (after it with ``include_stop``) and
        cuts ``text`` there; after that, returns "". (A stop string that began in text already returned is cut
        from ``text`` only.)
        """
        if self.stop_string is not None:
            return ""
        self.num_tokens += 1
        if stopped and not self.include_stop:
            return ""
        self.ids.append(token_id)
        decode = lambda ids: self.tokenizer.decode(ids, **self._options)   # noqa: E731
        before = decode(self.ids[self.prefix_offset:self.read_offset])
        after = decode(self.ids[self.prefix_offset:])
        if len(after) <= len(before) or after.endswith("\ufffd"):
            return ""
        delta = after[len(before):]
        self.prefix_offset, self.read_offset = self.read_offset, len(self.ids)
        start = len(self.text)
        self.text += delta
        if self.num_tokens <= self.min_tokens:
            return delta        # vLLM: no stop string before min_tokens tokens, nor in their text
        # A match must end inside the new text. Of several, the one that ends first wins (what adding the text one
        # character at a time would give), a tie going to the list's order.
        found = [(at + len(s), at, s) for s in self.stop if (at := self.text.find(s, max(0, start - len(s) + 1))) >= 0]
        if found:
            end, at, self.stop_string = min(found, key=lambda f: f[0])
            at = end if self.include_stop else at
            delta, self.text = self.text[start:at] if at >= start else "", self.text[:at]
        return delta
