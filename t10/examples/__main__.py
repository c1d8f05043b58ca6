"""``python -m t10.examples NAME [key=value ...] -o FILE.onnx`` (``--list`` shows the models).

Examples::

    python -m t10.examples --list
    python -m t10.examples matmul m=256 k=512 n=512 -o mm.onnx
    python -m t10.examples mlp batch=16 sizes=784,256,10 seed=1 -o mlp.onnx
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any

import onnx

from t10.common.files import output_file
from t10.errors import T10Error
from t10.examples.models import EXAMPLES


def _describe(name: str, fn: Callable[..., onnx.ModelProto]) -> str:
    params = ", ".join(
        f"{p.name}={','.join(map(str, p.default)) if isinstance(p.default, tuple) else p.default}"
        for p in inspect.signature(fn).parameters.values()
    )
    doc = (inspect.getdoc(fn) or "").splitlines()[0]
    return f"{name:10} {params}\n{'':10} {doc}"


def _parse_value(key: str, text: str, default: Any) -> Any:
    try:
        if isinstance(default, tuple):
            return tuple(int(v) for v in text.split(",") if v.strip())
        return int(text)
    except ValueError:
        kind = "a comma-separated list of integers" if isinstance(default, tuple) else "an integer"
        raise ValueError(f"option '{key}' expects {kind}, got '{text}'") from None


def _parse_options(fn: Callable[..., onnx.ModelProto], items: Sequence[str]) -> dict[str, Any]:
    params = inspect.signature(fn).parameters
    options: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep:
            raise ValueError(f"expected key=value, got '{item}'")
        if key not in params:
            raise ValueError(f"unknown option '{key}' (options: {', '.join(params)})")
        options[key] = _parse_value(key, text, params[key].default)
    return options


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m t10.examples",
        description="Write a seeded example ONNX model (float32, static shapes, opset 17).",
    )
    parser.add_argument("name", nargs="?", help=f"one of: {', '.join(EXAMPLES)}")
    parser.add_argument("options", nargs="*", metavar="key=value", help="sizes and seed")
    parser.add_argument("-o", "--output", help="output .onnx file")
    parser.add_argument("--list", action="store_true", help="list the example models")
    args = parser.parse_args(argv)

    if args.list:
        for name, fn in EXAMPLES.items():
            print(_describe(name, fn))
        return 0
    if args.name is None:
        parser.error("missing model NAME (see --list)")
    name = args.name.replace("_", "-")
    if name not in EXAMPLES:
        parser.error(f"unknown example '{args.name}' (choose from {', '.join(EXAMPLES)})")
    if not args.output:
        parser.error("missing -o FILE.onnx" if args.output is None else "-o: empty file name")
    fn = EXAMPLES[name]
    try:
        model = fn(**_parse_options(fn, args.options))
    except ValueError as e:
        parser.error(str(e))
    try:
        with output_file(args.output, "-o") as fresh:
            onnx.save_model(model, fresh)
    except T10Error as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {name} to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
