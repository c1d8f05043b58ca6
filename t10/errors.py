"""The one exception type users see: a message, never a traceback."""

from xdsl.utils.exceptions import DiagnosticException


class T10Error(DiagnosticException):
    """A user-facing error: names the thing, the reason and, where possible, the fix."""
