"""A downstream xDSL compiler that embeds t10's passes (docs/embedding.md).

It parses hand-written linalg MLIR (`mlp.mlir` beside this file) and runs one `PassPipeline`
of xDSL's passes, its own and t10's: xDSL's linalg-generalize-named-ops (t10 plans
linalg.generic only), a pass of its own (it names the generics left without a name, so the
report says which is which), then t10's fusion, plan search and lowerings. It simulates the
chip program on an input and checks the result against numpy.

    python examples/embedding/pipeline.py [--chip ipu-mk2]
"""

from __future__ import annotations

import argparse
import pathlib
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes

import t10

HERE = pathlib.Path(__file__).parent


@dataclass(frozen=True)
class NameGenerics(ModulePass):
    """The downstream compiler's own pass: `t10.name = "<prefix><i>"` on the i-th unnamed
    linalg.generic (t10's reports and errors name operators by this attribute)."""

    name = "name-generics"

    prefix: str = "op"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        generics = [g for g in op.walk() if isinstance(g, GenericOp)]
        unnamed = [g for g in generics if "t10.name" not in g.attributes]
        for i, generic in enumerate(unnamed):
            generic.attributes["t10.name"] = StringAttr(f"{self.prefix}{i}")


def compile_and_simulate(source: str, chip_name: str, x: np.ndarray) -> t10.SimResult:
    """Parse `source`, lower it to a chip program for `chip_name` and simulate it on `x`."""
    ctx = t10.make_context()  # xDSL's dialects and t10's
    module = Parser(ctx, source, "mlp.mlir").parse_module()
    generalize = get_all_passes()["linalg-generalize-named-ops"]()
    passes = (
        generalize(),
        NameGenerics(prefix="matmul"),
        t10.T10InlineSplats(),
        t10.T10FuseElementwise(),
        t10.T10PlanSearch(chip=chip_name),
        t10.ConvertLinalgToRTensor(),
        t10.ConvertRTensorToCShift(),
        t10.ConvertCShiftToCore(),
        t10.ConvertCoreToChip(),
    )
    PassPipeline(passes).apply(ctx, module)
    module.verify()
    return t10.simulate(module, t10.load_chip(chip_name), {"x": x})


def reference(x: np.ndarray) -> np.ndarray:
    """What mlp.mlir computes, in numpy."""
    w1 = np.full((32, 64), 0.125, np.float32)
    b1 = np.tile(np.array([0.5, -0.5, 0.25, -0.25, 1.0, -1.0, 0.0, 0.75], np.float32), 8)
    w2 = np.full((64, 8), -0.0625, np.float32)
    return np.maximum(x @ w1 + b1, 0.0) @ w2


def main() -> None:
    parser = argparse.ArgumentParser(description="Compile and simulate mlp.mlir, check it")
    parser.add_argument("--chip", default="ipu-mk2", help="a built-in chip or a chip file")
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    result = compile_and_simulate((HERE / "mlp.mlir").read_text(), args.chip, x)
    [y] = result.outputs.values()
    error = float(np.max(np.abs(y - reference(x))))
    print(f"{result.report.total_cycles:,} cycles on {args.chip}; max |error| {error:.2e}")
    for op in result.report.ops:
        print(f"  {op.name:<20} {op.cycles:>8,} cycles")
    if error > 1e-4:
        raise SystemExit("the simulated result differs from numpy")


if __name__ == "__main__":
    main()
