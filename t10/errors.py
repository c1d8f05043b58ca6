"""The one exception type users see: a message, never a traceback."""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException


class T10Error(DiagnosticException):
    """A user-facing error: names the thing, the reason and, where possible, the fix."""


class DoesNotFit(T10Error):
    """The model (or one operator under a planner's rules) does not fit the chip's SRAM;
    `needed_bytes`: the bytes per core of the choice the planner's rule makes (its smallest
    plans, or every operator's fastest plan under `search=fastest`), where known."""

    def __init__(self, message: str, needed_bytes: int | None = None) -> None:
        super().__init__(message)
        self.needed_bytes = needed_bytes

    def __reduce__(self) -> tuple[type[DoesNotFit], tuple[str, int | None]]:
        return DoesNotFit, (str(self), self.needed_bytes)  # comes back from forked workers
