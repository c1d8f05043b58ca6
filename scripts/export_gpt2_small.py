"""Exports GPT-2 small as torch exports it, for the compile-time benchmark.

Hugging Face `GPT2Model` at its published size (12 layers, 768 wide, 12 heads, vocabulary
50257), seeded random weights (nothing is downloaded), taking token ids and an INT64
`attention_mask` [1, seq] and returning the last hidden state, through the TorchScript
exporter (opset 17). The file is about 500 MB, so it is not committed:

    python scripts/export_gpt2_small.py gpt2.onnx [seq (default 64)] [layers (default 12)]
    python benchmarks/model_scaling.py --model chain --nodes 1000 --export gpt2.onnx

Needs torch and transformers, which the project itself does not depend on (the versions of
scripts/export_hf_models.py).
"""

from __future__ import annotations

import sys
import warnings

import torch
from torch import nn
from transformers import GPT2Config, GPT2Model


class LastHidden(nn.Module):
    """GPT-2 called with token ids and a mask, returning its last hidden state."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state


def main(path: str, seq: int, layers: int) -> None:
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    config = GPT2Config(attn_implementation="eager", n_layer=layers)
    model = LastHidden(GPT2Model(config)).eval()
    ids = torch.randint(0, config.vocab_size, (1, seq))
    mask = torch.ones(1, seq, dtype=torch.int64)
    torch.onnx.export(model, (ids, mask), path, input_names=["input_ids", "attention_mask"],
                      output_names=["y"], dynamo=False, opset_version=17)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[0], int(args[1]) if len(args) > 1 else 64, int(args[2]) if len(args) > 2 else 12)
