"""Exports tiny transformer blocks under tests/unit/data with both torch exporters.

Hugging Face `BertLayer`, `ViTModel` and `LlamaModel` (one layer each), `BertModel` and
`GPT2Model` (one layer, vocabulary 128) taking token ids and an INT64 `attention_mask` [batch,
seq] that the model turns into its additive mask itself, and two hand-written `torch.nn`
attention blocks, with seeded random weights and tiny configs (hidden 64, 4 heads,
intermediate 128, sequence 16, batch 2), static shapes. Each goes through the TorchScript
exporter (`dynamo=False`, opset 17) and the dynamo exporter (`dynamo=True`, opset 18; it writes
the weights to a `.onnx.data` file beside the model). HF attention is `attn_implementation=
"eager"`: scores = q·kᵀ / √d, softmax, ·v. The default SDPA exports to the same op types at these
opsets (tried for BertLayer and LlamaModel), scaling q and kᵀ by d^-¼ each instead.

Run once by hand (needs torch, transformers, onnx and onnxscript, which the project itself does
not depend on):
    python scripts/export_hf_models.py tests/unit/data
The .onnx files are committed, so tests need no torch. Made with Python 3.11.7, torch 2.13.0+cpu,
transformers 5.24.0, onnx 1.23.2, onnxscript 0.7.2 (onnx-ir 1.1.0), onnxruntime 1.32.0,
numpy 2.4.6. Reruns with these versions give byte-identical files.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from transformers import (
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2Model,
    LlamaConfig,
    LlamaModel,
    RobertaConfig,
    RobertaModel,
    ViTConfig,
    ViTModel,
)
from transformers.models.bert.modeling_bert import BertLayer

HIDDEN, HEADS, INTER, SEQ, BATCH, VOCAB = 64, 4, 128, 16, 2, 128
ROBERTA_VOCAB = 100


class AttentionBlock(nn.Module):
    """Self-attention written out: q/k/v Linear, heads split by view + transpose, softmax of the
    scaled q·kᵀ, ·v, heads merged, output projection, residual and LayerNorm."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, width // heads
        self.q, self.k, self.v = (
            nn.Linear(width, width),
            nn.Linear(width, width),
            nn.Linear(width, width),
        )
        self.out = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def split(self, t: torch.Tensor) -> torch.Tensor:
        b, s, _ = t.shape
        return t.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, w = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = q @ k.transpose(-2, -1) / self.head_dim**0.5
        context = torch.softmax(scores, dim=-1) @ v
        merged = context.transpose(1, 2).reshape(b, s, w)
        return self.norm(x + self.out(merged))


class MhaBlock(nn.Module):
    """`nn.MultiheadAttention` (batch_first) self-attention, residual and LayerNorm."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        attended, _ = self.attn(x, x, x, need_weights=False)
        return self.norm(x + attended)


class Wrapped(nn.Module):
    """Calls an HF module with named inputs and returns one tensor (its last hidden state)."""

    def __init__(self, module: nn.Module, names: tuple[str, ...], **extra: object):
        super().__init__()
        self.module, self.names, self.extra = module, names, extra

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        out = self.module(**dict(zip(self.names, args, strict=True)), **self.extra)
        if isinstance(out, torch.Tensor):
            return out
        return out[0] if isinstance(out, tuple) else out.last_hidden_state


def bert_config() -> BertConfig:
    return BertConfig(
        hidden_size=HIDDEN,
        num_attention_heads=HEADS,
        intermediate_size=INTER,
        num_hidden_layers=1,
        attn_implementation="eager",
    )


def llama_config(kv_heads: int = HEADS) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=128,
        hidden_size=HIDDEN,
        num_attention_heads=HEADS,
        num_key_value_heads=kv_heads,
        intermediate_size=INTER,
        num_hidden_layers=1,
        max_position_embeddings=SEQ,
        attn_implementation="eager",
    )


def bert_model_config() -> BertConfig:
    config = bert_config()
    config.vocab_size, config.max_position_embeddings = VOCAB, SEQ
    return config


def gpt2_config() -> GPT2Config:
    return GPT2Config(
        vocab_size=VOCAB,
        n_positions=SEQ,
        n_embd=HIDDEN,
        n_head=HEADS,
        n_inner=INTER,
        n_layer=1,
        bos_token_id=0,
        eos_token_id=0,
        attn_implementation="eager",
    )


def roberta_config() -> RobertaConfig:
    """Smaller than the others (hidden 32, 2 layers, 2 heads, vocabulary 100, 40 positions):
    RobertaModel computes its position ids from the token ids at run time (padding id 1:
    ``cumsum(ids != 1) * (ids != 1) + 1``), integer arithmetic on a runtime INT64 value, and,
    not given token type ids (as users export it), gathers its ``token_type_ids`` buffer by
    those position ids (GatherElements of runtime indices)."""
    return RobertaConfig(
        vocab_size=ROBERTA_VOCAB,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
        num_hidden_layers=2,
        max_position_embeddings=40,
        attn_implementation="eager",
    )


def vit_config() -> ViTConfig:
    return ViTConfig(
        hidden_size=HIDDEN,
        num_attention_heads=HEADS,
        intermediate_size=INTER,
        num_hidden_layers=1,
        image_size=32,
        patch_size=8,
        num_channels=3,
        attn_implementation="eager",
    )


def hidden() -> torch.Tensor:
    return torch.randn(BATCH, SEQ, HIDDEN)


def additive_mask() -> torch.Tensor:
    """BertLayer's extended mask [batch, 1, 1, seq]: 0 to attend, a large negative to mask."""
    mask = torch.zeros(BATCH, 1, 1, SEQ)
    mask[1, ..., SEQ - 4 :] = torch.finfo(torch.float32).min
    return mask


def ids_and_mask() -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids, and an attention mask of mixed 0 / 1 (the second sequence padded)."""
    mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
    mask[1, SEQ - 5 :] = 0
    return torch.randint(0, VOCAB, (BATCH, SEQ)), mask


def roberta_ids_and_mask() -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids below RoBERTa's vocabulary, the padding id 1 where the second sequence is
    padded, and its attention mask."""
    ids, mask = ids_and_mask()
    ids = ids % ROBERTA_VOCAB
    ids[mask == 0] = 1
    return ids, mask


def llama(config: LlamaConfig, input_name: str) -> Wrapped:
    """LlamaModel given its causal mask (additive, [1, 1, seq, seq]) and position ids as
    constants. Left to build them itself, it checks the position ids for packed sequences with
    `torch.diff`, which the TorchScript exporter refuses, and a 2-D mask leaves the mask building
    (LessOrEqual, And, Equal, Where) and the rotary tables (Cos, Sin) in its graph; given both,
    both exporters fold them into initializers. Same numbers as the model's own causal mask."""
    causal = torch.full((SEQ, SEQ), torch.finfo(torch.float32).min).triu(1)[None, None]
    return Wrapped(
        LlamaModel(config),
        (input_name,),
        use_cache=False,
        attention_mask=causal,
        position_ids=torch.arange(SEQ)[None],
    )


# name -> (model factory, input names, example input factory); each factory runs right after
# torch.manual_seed(0), so a model's weights and examples depend on nothing else.
IDS_MASK = ("input_ids", "attention_mask")
Example = tuple[Callable[[], nn.Module], tuple[str, ...], Callable[[], tuple[torch.Tensor, ...]]]
MODELS: dict[str, Example] = {
    "hf_bert_layer": (
        lambda: Wrapped(BertLayer(bert_config()), ("hidden_states",)),
        ("hidden_states",),
        lambda: (hidden(),),
    ),
    "hf_bert_layer_mask": (
        lambda: Wrapped(BertLayer(bert_config()), ("hidden_states", "attention_mask")),
        ("hidden_states", "attention_mask"),
        lambda: (hidden(), additive_mask()),
    ),
    "hf_vit_1layer": (
        lambda: Wrapped(ViTModel(vit_config(), add_pooling_layer=False), ("pixel_values",)),
        ("pixel_values",),
        lambda: (torch.randn(BATCH, 3, 32, 32),),
    ),
    "hf_llama_1layer": (
        lambda: llama(llama_config(), "inputs_embeds"),
        ("inputs_embeds",),
        lambda: (hidden(),),
    ),
    "hf_llama_gqa_1layer": (
        lambda: llama(llama_config(kv_heads=2), "inputs_embeds"),
        ("inputs_embeds",),
        lambda: (hidden(),),
    ),
    "hf_llama_ids_1layer": (
        lambda: llama(llama_config(), "input_ids"),
        ("input_ids",),
        lambda: (torch.randint(0, 128, (BATCH, SEQ)),),
    ),
    "hf_bert_ids_mask": (
        lambda: Wrapped(BertModel(bert_model_config(), add_pooling_layer=False), IDS_MASK),
        IDS_MASK,
        ids_and_mask,
    ),
    "hf_gpt2_ids_mask": (
        lambda: Wrapped(GPT2Model(gpt2_config()), IDS_MASK, use_cache=False),
        IDS_MASK,
        ids_and_mask,
    ),
    "hf_roberta_ids_mask": (
        lambda: Wrapped(RobertaModel(roberta_config(), add_pooling_layer=False), IDS_MASK),
        IDS_MASK,
        roberta_ids_and_mask,
    ),
    "attn_block": (lambda: AttentionBlock(HIDDEN, HEADS), ("x",), lambda: (hidden(),)),
    "attn_mha": (lambda: MhaBlock(HIDDEN, HEADS), ("x",), lambda: (hidden(),)),
}


def export(
    model: nn.Module,
    example: tuple[torch.Tensor, ...],
    names: tuple[str, ...],
    path: Path,
    dynamo: bool,
    outputs: tuple[str, ...] = ("y",),
) -> None:
    """Exported, its outputs named `outputs`, with autograd on: under `torch.no_grad()` an
    eval-mode `nn.MultiheadAttention` takes its fused fast path
    (`aten::_native_multi_head_attention`), which TorchScript cannot export. The dynamo
    exporter's per-node Python stack traces (metadata naming this checkout's and the venv's
    paths and line numbers) are dropped, so the files depend only on the versions above; its
    other node metadata (module scopes, FX nodes) stays."""
    model.eval()
    program = torch.onnx.export(
        model,
        example,
        None if dynamo else str(path),
        input_names=list(names),
        output_names=list(outputs),
        dynamo=dynamo,
        opset_version=17 if not dynamo else 18,
    )
    if program is not None:
        for node in program.model.graph.all_nodes():
            node.metadata_props.pop("pkg.torch.onnx.stack_trace", None)
        program.save(str(path), external_data=True)


def main(out: Path, only: list[str]) -> None:
    warnings.filterwarnings("ignore")
    out.mkdir(parents=True, exist_ok=True)
    for name, (make, names, examples) in MODELS.items():
        if only and name not in only:
            continue
        for dynamo, suffix in ((False, "torchscript"), (True, "dynamo")):
            torch.manual_seed(0)
            model = make()
            export(model, examples(), names, out / f"{name}.{suffix}.onnx", dynamo)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
