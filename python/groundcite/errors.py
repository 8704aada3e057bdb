"""The exceptions of groundcite, with the CLI's messages, paths and codes.

- :class:`InputError` (a ``ValueError``): input that cannot be used, the
  CLI's exit code 2. It names the argument (``answer``, ``chunks``,
  ``requests``, ...), the line and column within its JSON text when known,
  and the JSON path of the offending value (``claims[0].text``,
  ``[1].chunk_id``). ``str(e)`` is the CLI's message with the argument in
  place of the file name: ``answer:2:22: at claims[0].text: invalid type:
  integer `1`, expected a string``.
- :class:`InputTypeError` (an ``InputError`` and a ``TypeError``): an
  argument of a Python type that cannot be JSON.
- :class:`CitationFormatError`: no citation could be extracted from a
  non-empty prose answer (``parse``), the CLI's exit code 3.

Every exception pickles (Spark ships them between processes).
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["GroundciteError", "InputError", "InputTypeError", "CitationFormatError"]


class GroundciteError(Exception):
    """Base class of groundcite's exceptions."""

    #: Stable machine-readable code.
    code: str = "error"
    #: The exit code of the CLI for the same failure.
    exit_code: int = 1


class InputError(GroundciteError, ValueError):
    """Bad input: which argument, where in it, and what is wrong."""

    code = "bad_input"
    exit_code = 2

    def __init__(
        self,
        message: str,
        source: str,
        path: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        super().__init__(message, source, path, line, column)
        #: What is wrong, as a sentence (the CLI's message).
        self.message = message
        #: The argument the error is about (``answer``, ``chunks``, ``requests``...).
        self.source = source
        #: JSON path of the offending value, when known.
        self.path = path
        #: 1-based line within the argument's JSON text; for ``verify_many``,
        #: the 1-based position of the request (the batch file's line).
        self.line = line
        #: 1-based column, when known.
        self.column = column

    def __str__(self) -> str:
        out = self.source
        if self.line is not None:
            out += f":{self.line}"
            if self.column is not None:
                out += f":{self.column}"
        if self.path is not None:
            out += f": at {self.path}"
        return f"{out}: {self.message}"

    def error_object(self, line: Optional[int] = None) -> dict[str, Any]:
        """The object ``groundcite verify --batch`` writes in place of a bad
        request: ``{"error": {"code": "bad_input", "line", "path",
        "message"}}``; ``line`` overrides the request's position (for
        example with its line in a file that was split)."""
        return {
            "error": {
                "code": self.code,
                "line": self.line if line is None else line,
                "path": self.path,
                "message": self.message,
            }
        }


class InputTypeError(InputError, TypeError):
    """An argument of a Python type that is not JSON text, a mapping, a
    sequence or a Pydantic model (or holds a value JSON cannot carry)."""


class CitationFormatError(GroundciteError):
    """No citation could be extracted from a non-empty prose answer over at
    least one chunk: the answer is not uncited, it is cited in a format the
    parser does not know. The message carries the answer's first 120
    characters so that the new format shows up in the log."""

    code = "citation_format"
    exit_code = 3

    def __init__(
        self,
        message: str,
        answer_chars: int,
        chunks: int,
        head: str,
        rejected: int = 0,
        first_rejection: Optional[str] = None,
    ) -> None:
        super().__init__(message, answer_chars, chunks, head, rejected, first_rejection)
        self.message = message
        #: Length of the answer in characters.
        self.answer_chars = answer_chars
        #: Number of chunks the answer was parsed against.
        self.chunks = chunks
        #: The answer's first 120 characters.
        self.head = head
        #: Markers that were recognised but rejected.
        self.rejected = rejected
        #: The message of the first rejection, if any.
        self.first_rejection = first_rejection

    def __str__(self) -> str:
        return f"text: {self.message}"
