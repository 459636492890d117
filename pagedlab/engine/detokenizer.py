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
    """The text of one completion, grown token by token.

    Args:
        tokenizer: a Hugging Face tokenizer (its ``decode``).
        prompt: the prompt's token ids (the last few are context for the first token's text).
        stop: strings that end the completion; the text is cut before the first one (after it with
            ``include_stop``).
        skip_special_tokens, spaces_between_special_tokens: the tokenizer's ``decode`` options.

    Attributes:
        text: the completion's text so far (special tokens skipped unless asked, stop string excluded unless
            ``include_stop``).
        stop_string: the stop string found, or None.
    """

    def __init__(self, tokenizer, prompt: Sequence[int], stop: Sequence[str] = (), include_stop: bool = False,
                 skip_special_tokens: bool = True, spaces_between_special_tokens: bool = True) -> None:
        self.tokenizer, self.stop, self.include_stop = tokenizer, tuple(stop), include_stop
        self._options = dict(skip_special_tokens=skip_special_tokens)
        if not spaces_between_special_tokens:   # only passed when not the default: not every tokenizer takes it
            self._options["spaces_between_special_tokens"] = False
        self.ids = list(prompt[-_WINDOW:])
        self.prefix_offset, self.read_offset = 0, len(self.ids)
        self.text = ""
        self.stop_string: str | None = None

    def add(self, token_id: int) -> str:
        """Append one token; returns the text it completes ("" while a character is unfinished).

        When the token completes a stop string, returns the text before it and cuts ``text`` there; after
        that, returns "". (A stop string that began in text already returned is cut from ``text`` only.)
        """
        if self.stop_string is not None:
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
        # Search only where a stop string could have appeared (ending inside the new text); the earliest wins.
        found = [(at, s) for s in self.stop if (at := self.text.find(s, max(0, start - len(s) + 1))) >= 0]
        if found:
            at, self.stop_string = min(found)
            at += len(self.stop_string) if self.include_stop else 0
            delta, self.text = self.text[start:at] if at >= start else "", self.text[:at]
        return delta
