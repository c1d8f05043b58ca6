"""Exports the torch.nn test models under tests/unit/data with both torch exporters.

Run once by hand (needs torch and onnxscript, which the project itself does not depend on):
    python scripts/export_torch_models.py tests/unit/data
The .onnx files are committed, so tests need no torch.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn


def mlp(sizes: tuple[int, ...]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class Residual(nn.Module):
    """x + W2 relu(W1 x + b1) - 0.5 * x: Add/Sub/Mul and a bias-free Linear."""

    def __init__(self, width: int, inner: int):
        super().__init__()
        self.up = nn.Linear(width, inner)
        self.down = nn.Linear(inner, width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.relu(self.up(x))) - 0.5 * x


def export(model: nn.Module, example: torch.Tensor, path: Path, dynamo: bool) -> None:
    model.eval()
    torch.onnx.export(
        model,
        (example,),
        str(path),
        input_names=["x"],
        output_names=["y"],
        dynamo=dynamo,
        opset_version=17 if not dynamo else 18,
    )


def main(out: Path) -> None:
    torch.manual_seed(0)
    out.mkdir(parents=True, exist_ok=True)
    models = {
        "mlp_53x97_331_61": (mlp((97, 331, 61)), torch.randn(53, 97)),
        "mlp_3layer": (mlp((64, 128, 96, 10)), torch.randn(16, 64)),
        "residual_3d": (Residual(40, 72), torch.randn(2, 5, 40)),
    }
    for name, (model, example) in models.items():
        for dynamo, suffix in ((False, "torchscript"), (True, "dynamo")):
            export(model, example, out / f"{name}.{suffix}.onnx", dynamo)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
