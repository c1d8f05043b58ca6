"""Model inputs from, and outputs to, .npz archives (numpy.savez's format), as `t10 run
--inputs/--outputs` and the `t10-sim` target's `inputs`/`outputs` options read and write
them; each error names the option (`option`) and the file."""

from __future__ import annotations

import math
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from t10.common.files import output_file
from t10.common.model_inputs import check_inputs_match
from t10.errors import T10Error
from t10.outputs.report import InputReader, InputSpec

__all__ = ["inputs_reader", "save_npz"]

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
"""How a zip archive starts (numpy.savez writes one; the second is an empty archive)."""
_NPY_MAGIC = b"\x93NUMPY"
_NPZ_FIX = "save the inputs with numpy.savez('IN.npz', NAME=array, ...), one per ONNX input name"


def inputs_reader(path: str, option: str) -> InputReader:
    """What reads the inputs in the .npz archive `path` once the model's inputs are known.
    The file and its list of entries are checked now (an archive, each entry a NAME.npy, no
    name twice); then each entry's header (shape, dtype) and size before any array data
    is decompressed, so an entry that would expand far beyond the input it is for is
    refused unread. A .npy file, a pickle, an object array or a damaged archive is refused
    (nothing is unpickled)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(_NPY_MAGIC))
    except FileNotFoundError:
        raise T10Error(f"{option} '{path}': no such file") from None
    except OSError as e:
        raise T10Error(f"{option} '{path}': cannot read: {e.strerror or e}") from None
    if head.startswith(_NPY_MAGIC):
        raise T10Error(f"{option} '{path}' is a single .npy array, not a .npz archive: "
                       f"{_NPZ_FIX}")
    if not head.startswith(_ZIP_MAGIC):
        raise T10Error(f"{option} '{path}' is not a .npz archive: {_NPZ_FIX}")
    entries = _npz_archive(path, option, lambda archive: _npz_entries(path, option, archive))

    def read(specs: Sequence[InputSpec]) -> dict[str, np.ndarray]:
        return _npz_archive(
            path, option, lambda archive: _read_npz(path, option, archive, entries, specs)
        )

    return read


def _npz_archive(path: str, option: str, use: Any) -> Any:
    """`use(archive)` on the zip archive at `path`; its errors name the file."""
    try:
        with zipfile.ZipFile(path) as archive:
            return use(archive)
    except T10Error:
        raise
    except Exception as e:  # zipfile, zlib and .npy header errors of a damaged archive
        raise T10Error(f"{option} '{path}' is not a readable .npz archive "
                       f"({type(e).__name__}: {' '.join(str(e).split())})") from None


def _npz_entries(path: str, option: str, archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """The entries of an .npz archive by array name (NAME.npy holds array NAME)."""
    entries: dict[str, zipfile.ZipInfo] = {}
    for info in archive.infolist():
        name = info.filename.removesuffix(".npy")
        if name == info.filename:
            raise T10Error(f"{option} '{path}': entry '{name}' is not a .npy array "
                           "(numpy.savez writes NAME.npy entries)")
        if name in entries:
            raise T10Error(f"{option} '{path}': entry '{info.filename}' appears twice: "
                           f"{_NPZ_FIX}")
        entries[name] = info
    return entries


def _read_npz(
    path: str,
    option: str,
    archive: zipfile.ZipFile,
    entries: Mapping[str, zipfile.ZipInfo],
    specs: Sequence[InputSpec],
) -> dict[str, np.ndarray]:
    """The arrays of `entries` once their names, headers and sizes match `specs`."""
    wanted = [spec for spec in specs if spec.name in entries]
    headers = {s.name: _npy_header(path, option, archive, s.name, entries[s.name]) for s in wanted}
    signatures: dict[str, tuple[tuple[int, ...], np.dtype[Any]]] = dict.fromkeys(
        entries, ((), np.dtype(np.float32)))  # unknown names: only their names are shown
    signatures.update({name: (shape, dtype) for name, (shape, dtype, _) in headers.items()})
    check_inputs_match([(s.name, s.shape, s.dtype) for s in specs], signatures)
    arrays: dict[str, np.ndarray] = {}
    for spec in wanted:
        info, (_, dtype, offset) = entries[spec.name], headers[spec.name]
        size = offset + math.prod(spec.shape) * dtype.itemsize
        if info.file_size != size:
            raise T10Error(f"{option} '{path}': entry '{info.filename}' holds "
                           f"{info.file_size:,} bytes where its header says {size:,}: the "
                           "archive is damaged")
        with archive.open(info) as entry:
            arrays[spec.name] = np.lib.format.read_array(entry, allow_pickle=False)
            entry.read(1)  # the end of the entry: its CRC is checked
    return arrays


def _npy_header(
    path: str, option: str, archive: zipfile.ZipFile, name: str, info: zipfile.ZipInfo
) -> tuple[tuple[int, ...], np.dtype[Any], int]:
    """The shape and dtype an .npy entry's header declares, and where its data starts (only
    the header is decompressed)."""
    fmt = np.lib.format
    with archive.open(info) as entry:
        version = fmt.read_magic(entry)
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else (
            fmt.read_array_header_2_0)
        shape, _, dtype = read_header(entry)
        offset = entry.tell()
    if dtype.hasobject:
        raise T10Error(f"{option} '{path}': entry '{name}' is an object array, "
                       "which needs pickle (never loaded): save numeric arrays")
    return tuple(shape), dtype, offset


def save_npz(path: str, arrays: Mapping[str, np.ndarray], option: str) -> None:
    """numpy.savez's format, written whole at `path` as given and from a mapping: an array
    named `file` or `allow_pickle` does not collide with savez's own arguments."""
    with output_file(path, option) as fresh, zipfile.ZipFile(
        fresh, "w", zipfile.ZIP_STORED, allowZip64=True
    ) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as entry:
                np.lib.format.write_array(entry, np.asanyarray(array), allow_pickle=False)
