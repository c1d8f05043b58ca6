"""Output files written whole or not at all, and the checks of output paths.

Every file the tools write goes through `output_file`: the new content is written to a new
file next to the old one and renamed over it only once complete, so a full disk, a file size
limit, an error or Ctrl-C part-way leaves the old file as it was (and no partial one).
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from pathlib import Path

from t10.errors import T10Error

__all__ = ["check_output_path", "output_file", "output_paths_problem", "same_file", "write_text"]

_DEVICE_DIRS = ("/dev/", "/proc/")
"""Paths under these name devices and open files (/dev/stdout, /proc/self/fd/1): written
in place, never replaced (a regular file behind /dev/stdout is the shell's redirection)."""


@contextmanager
def output_file(path: str | os.PathLike[str], what: str) -> Generator[str]:
    """The path to write the new content of `path` to, within the block: a new file in the
    same directory (same suffix, so writers that read the format from it work), renamed onto
    `path` when the block ends without error; on any error or interrupt it is removed and
    `path` is left as it was. A symbolic link's target is replaced, not the link. A device
    or FIFO (/dev/null, /dev/full, a pipe) cannot be replaced: it is written in place. An
    OSError is a T10Error naming `what` (e.g. the option), the file and the reason."""
    target = os.path.realpath(path)
    try:
        if _in_place(path, target):
            yield os.fspath(path)
            return
        fresh = _new_file(target)
    except OSError as e:
        raise _write_error(what, path, e) from None
    try:
        yield fresh
        os.replace(fresh, target)
    except BaseException as e:
        try:
            os.unlink(fresh)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise _write_error(what, path, e) from None
        raise


def write_text(path: str | os.PathLike[str], text: str, what: str) -> None:
    """Write `text` (UTF-8) to `path` whole or not at all (`output_file`)."""
    with output_file(path, what) as fresh, open(fresh, "w", encoding="utf-8") as f:
        f.write(text)


def check_output_path(path: str | os.PathLike[str], what: str) -> None:
    """An output file can be made at `path`: a file name, in a directory that exists."""
    if not os.fspath(path):
        raise T10Error(f"{what}: the file name is empty")
    target = Path(path)
    try:
        if target.is_dir():
            raise T10Error(f"{what} '{path}' is a directory; give a file name")
        if not target.parent.is_dir():
            raise T10Error(f"{what} '{path}': directory '{target.parent}' does not exist")
    except OSError as e:  # a name too long, or a directory not searchable
        raise T10Error(f"{what} '{path}': {e.strerror or e}") from None


def output_paths_problem(
    outputs: Mapping[str, str | None], inputs: Mapping[str, str | None]
) -> str | None:
    """Why the output files given (`outputs`: option -> path or None) cannot all be
    written: one of them is a file of the run's `inputs` (option -> path), which it would
    overwrite, or two are one file; None when they can. Each output path must have passed
    `check_output_path`."""
    given = [(option, path) for option, path in outputs.items() if path]
    for i, (option, path) in enumerate(given):
        for read, source in inputs.items():
            if source and same_file(path, source):
                return (f"{option} '{path}' is the file of {read} '{source}': it would be "
                        "overwritten; give another file name")
        for other, other_path in given[:i]:
            if same_file(path, other_path):
                return (f"{other} '{other_path}' and {option} '{path}' are one file: give "
                        "each its own name")
    return None


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether paths `a` and `b` name one file (after symbolic links; a hard link too)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def _in_place(path: str | os.PathLike[str], target: str) -> bool:
    """Whether `path` is written in place: a device, FIFO or socket, not a regular file."""
    if os.path.abspath(path).startswith(_DEVICE_DIRS) or target.startswith(_DEVICE_DIRS):
        return True
    try:
        return not stat.S_ISREG(os.stat(target).st_mode)
    except FileNotFoundError:
        return False


def _new_file(target: str) -> str:
    """A new empty file next to `target`, hidden, with its suffix and its permissions (when
    it exists; otherwise those a new file gets)."""
    directory, base = os.path.split(target)
    root, suffix = os.path.splitext(base)
    while True:
        fresh = os.path.join(directory, f".{root[:100]}-{secrets.token_hex(4)}{suffix[:40]}")
        try:
            fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        try:
            if os.path.exists(target):
                os.fchmod(fd, stat.S_IMODE(os.stat(target).st_mode))
        except OSError:
            os.unlink(fresh)
            raise
        finally:
            os.close(fd)
        return fresh


def _write_error(what: str, path: str | os.PathLike[str], error: OSError) -> T10Error:
    return T10Error(f"cannot write {what} '{os.fspath(path)}': {error.strerror or error}")
