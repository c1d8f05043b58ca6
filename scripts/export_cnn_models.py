"""Exports convolutional networks under tests/unit/data/cnn with both torch exporters.

torchvision's resnet18, mobilenet_v2 and efficientnet_b0 (their own random initialisation,
eval mode, a 64×64 image, batch 1), a 1-D convolutional audio encoder written here (a
Whisper-style stem: two Conv1d + GELU over 80 mel bins, the second with stride 2, then a
LayerNorm over the channels) and a DCGAN-style decoder of three ConvTranspose2d, each through
the TorchScript exporter (`dynamo=False`, opset 17) and the dynamo exporter (`dynamo=True`,
opset 18).

To keep the repository small, every float initializer of more than 16 elements is stored as a
`ConstantOfShape` node of its shape (as the onnx package's `light_*` models ship their
weights); the tests give them seeded random values (`helpers.with_random_weights`). The graph
is exactly what the exporter wrote otherwise.

Run once by hand (needs torch, torchvision, onnx and onnxscript, which the project itself
does not depend on), optionally naming the models to export (default: all):
    python scripts/export_cnn_models.py tests/unit/data/cnn [MODEL...]
Made with Python 3.11.7, torch 2.14.1, torchvision 0.29.1, onnx 1.23.2, onnxscript 0.7.2.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import torch
import torchvision
from onnx import helper, numpy_helper
from torch import nn

KEEP_AT_MOST = 16
"""Initializers with more elements become ConstantOfShape nodes."""


class AudioEncoder(nn.Module):
    """Conv1d(80 → 64, k3, p1) → GELU → Conv1d(64 → 64, k3, s2, p1) → GELU → LayerNorm over
    the channels (Whisper's encoder stem, narrowed)."""

    def __init__(self, mels: int = 80, width: int = 64):
        super().__init__()
        self.conv1 = nn.Conv1d(mels, width, 3, padding=1)
        self.conv2 = nn.Conv1d(width, width, 3, stride=2, padding=1)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.gelu(self.conv1(x))
        x = nn.functional.gelu(self.conv2(x))
        return self.norm(x.transpose(1, 2))


class Decoder(nn.Module):
    """A DCGAN-style image decoder: ConvTranspose2d(16 → 8, k4, s2, p1) → ReLU →
    ConvTranspose2d(8 → 8, k3, s2, p1, output_padding 1, groups 2) → ReLU →
    ConvTranspose2d(8 → 3, k3, s1, p1) → Sigmoid: 8×8 → 16×16 → 32×32 → 32×32."""

    def __init__(self, width: int = 16):
        super().__init__()
        self.up1 = nn.ConvTranspose2d(width, 8, 4, stride=2, padding=1)
        self.up2 = nn.ConvTranspose2d(8, 8, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.out = nn.ConvTranspose2d(8, 3, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.up1(x))
        x = torch.relu(self.up2(x))
        return torch.sigmoid(self.out(x))


MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]] = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 64, 64)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 64, 64)),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), (1, 3, 64, 64)),
    "conv1d_encoder": (AudioEncoder, (1, 80, 32)),
    "convt_decoder": (Decoder, (1, 16, 8, 8)),
}


def weightless(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with its big float initializers as ConstantOfShape nodes of their shapes."""
    graph = model.graph
    kept, nodes = [], []
    for init in graph.initializer:
        array = numpy_helper.to_array(init)
        if array.dtype.kind != "f" or array.size <= KEEP_AT_MOST:
            kept.append(init)
            continue
        shape = numpy_helper.from_array(
            np.asarray(array.shape, dtype=np.int64), f"{init.name}__shape"
        )
        kept.append(shape)
        value = helper.make_tensor("value", init.data_type, [1], [0.0])
        nodes.append(helper.make_node("ConstantOfShape", [shape.name], [init.name],
                                      name=f"{init.name}__weight", value=value))
    del graph.initializer[:]
    graph.initializer.extend(kept)
    existing = list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes + existing)
    return model


def export(name: str, out: Path, dynamo: bool) -> Path:
    make, shape = MODELS[name]
    torch.manual_seed(0)
    module = make().eval()
    example = torch.randn(*shape)
    path = out / f"{name}.{'dynamo' if dynamo else 'torchscript'}.onnx"
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (example,), str(path), input_names=["x"], output_names=["y"],
                          opset_version=18 if dynamo else 17, dynamo=dynamo,
                          external_data=False)
    model = onnx.load(str(path))
    onnx.save(weightless(model), str(path))
    return path


def main(out: str, names: list[str]) -> None:
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    for name in names or MODELS:
        for dynamo in (False, True):
            path = export(name, target, dynamo)
            print(f"wrote {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
