"""Exports tiny decode steps, recurrent and mixture-of-experts models under tests/unit/data/more
with both torch exporters (issue 33, item 8).

- `hf_gpt2_decode`: Hugging Face `GPT2LMHeadModel` (2 layers) taking one new token per sequence,
  an INT64 `attention_mask` over past + new positions and the past keys / values of 7 positions
  per layer (the legacy tuple form, which GPT-2 turns into a `DynamicCache`); it returns the
  logits and the present keys / values (8 positions).
- `hf_llama_decode`: `LlamaModel` (2 layers, 2 key-value heads) likewise, given a
  `DynamicCache` made from the past tensors and the new token's position ids (its causal mask
  over the past + new positions is all zeros for one new token, so it is not given one); it
  returns the last hidden state and the present keys / values.
- `hf_deberta_v2`: `DebertaV2Model` (2 layers) with relative attention on (`c2p` and `p2c`,
  log buckets 8, shared keys): its relative positions index the position embeddings by known
  non-affine indices (GatherElements of constants).
- `lstm_seq` (Embedding → 2-layer LSTM → Linear, the last output position's logits) and
  `gru_seq` (Linear → bidirectional GRU → Linear on every position).
- `moe_mixtral` and `moe_qwen`: the expert weights of Transformers' `MixtralSparseMoeBlock`
  (4 experts, top 2, SwiGLU experts) and `Qwen2MoeSparseMoeBlock` (6 experts, top 2, no
  renormalisation, a sigmoid-gated shared expert), called in the static dense-dispatch form:
  Transformers' own forward loops over the experts that `nonzero` finds hit and `index_add_`s
  their tokens back, data-dependent shapes that trace into a graph valid only for the example's
  routing (TorchScript) or that need dynamic shapes (dynamo). Here, as an export tool writes a
  MoE layer for static shapes, the router's top-2 softmax weights are scattered into a dense
  [tokens, experts] matrix (TopK, ScatterElements) and every expert runs on every token, its
  output weighted by its column: the same numbers as the block's own forward (checked below).

Tiny configs (hidden 32, 4 heads, intermediate 64, vocabulary 128, batch 2), seeded random
weights, nothing downloaded, static shapes; HF attention `attn_implementation="eager"`. Each goes
through the TorchScript exporter (`dynamo=False`, opset 17) and the dynamo exporter
(`dynamo=True`, opset 18, weights in a `.onnx.data` file beside the model), as
scripts/export_hf_models.py does (its `export`); the TorchScript exporter traces with
`mask_without_vmap`.

Run once by hand (needs torch, transformers, onnx and onnxscript, which the project itself does
not depend on), optionally naming the models to export (default: all):
    python scripts/export_more_models.py tests/unit/data/more [MODEL...]
The .onnx files are committed, so tests need no torch. Made with Python 3.11.7, torch 2.13.0+cpu,
transformers 4.57.6, onnx 1.23.2, onnxscript 0.7.2 (onnx-ir 1.1.0), onnxruntime 1.32.0,
numpy 2.4.6. Reruns with these versions give byte-identical files.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import torch
from export_hf_models import export
from torch import nn
from transformers import (
    DebertaV2Config,
    DebertaV2Model,
    DynamicCache,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaModel,
    MixtralConfig,
    Qwen2MoeConfig,
    masking_utils,
)
from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock
from transformers.models.qwen2_moe.modeling_qwen2_moe import Qwen2MoeSparseMoeBlock

HIDDEN, HEADS, INTER, VOCAB, BATCH = 32, 4, 64, 128, 2
HEAD_DIM = HIDDEN // HEADS
PAST, LAYERS, KV_HEADS = 7, 2, 2
SEQ = 8  # DeBERTa's, the recurrent models' and the MoE layers' sequence length


def past_names(layers: int) -> tuple[str, ...]:
    return tuple(f"past_{kind}_{i}" for i in range(layers) for kind in ("key", "value"))


def present_names(layers: int) -> tuple[str, ...]:
    return tuple(f"present_{kind}_{i}" for i in range(layers) for kind in ("key", "value"))


def legacy(flat: tuple[torch.Tensor, ...]) -> tuple[tuple[torch.Tensor, torch.Tensor], ...]:
    """(key 0, value 0, key 1, ...) as the legacy cache's per-layer pairs."""
    return tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))


def flat_cache(cache: DynamicCache) -> tuple[torch.Tensor, ...]:
    return tuple(t for pair in cache.to_legacy_cache() for t in pair)


class Decode(nn.Module):
    """An HF model on one new token: (ids, `extra` input, past...) → (its first output, the
    present keys and values...)."""

    def __init__(self, model: nn.Module, extra: str) -> None:
        super().__init__()
        self.model, self.extra = model, extra

    def forward(
        self, ids: torch.Tensor, extra: torch.Tensor, *past: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        out = self.model(
            input_ids=ids,
            past_key_values=DynamicCache.from_legacy_cache(legacy(past)),
            use_cache=True,
            **{self.extra: extra},
        )
        return (out[0], *flat_cache(out.past_key_values))


def gpt2_decode() -> Decode:
    """GPT2LMHeadModel given its INT64 attention mask: its first output is the logits."""
    config = GPT2Config(
        vocab_size=VOCAB,
        n_positions=16,
        n_embd=HIDDEN,
        n_head=HEADS,
        n_inner=INTER,
        n_layer=LAYERS,
        bos_token_id=0,
        eos_token_id=0,
        attn_implementation="eager",
    )
    return Decode(GPT2LMHeadModel(config), "attention_mask")


def llama_decode() -> Decode:
    """LlamaModel given the new token's position ids: its first output is the hidden state."""
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        intermediate_size=INTER,
        num_hidden_layers=LAYERS,
        max_position_embeddings=16,
        attn_implementation="eager",
    )
    return Decode(LlamaModel(config), "position_ids")


class Deberta(nn.Module):
    """DebertaV2Model with relative attention: (ids, mask) → last hidden state."""

    def __init__(self) -> None:
        super().__init__()
        self.model = DebertaV2Model(
            DebertaV2Config(
                vocab_size=VOCAB,
                hidden_size=HIDDEN,
                num_attention_heads=HEADS,
                intermediate_size=INTER,
                num_hidden_layers=LAYERS,
                max_position_embeddings=SEQ,
                relative_attention=True,
                position_buckets=8,
                max_relative_positions=SEQ,
                pos_att_type=["p2c", "c2p"],
                share_att_key=True,
                norm_rel_ebd="layer_norm",
                position_biased_input=False,
                type_vocab_size=0,
            )
        )

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids, attention_mask=mask).last_hidden_state


class LstmSeq(nn.Module):
    """Embedding(128, 32) → LSTM(32 → 32, 2 layers) → Linear(32 → 128) of the last position."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.rnn = nn.LSTM(HIDDEN, HIDDEN, num_layers=2, batch_first=True)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.embed(ids))
        return self.head(out[:, -1])


class GruSeq(nn.Module):
    """Linear(16 → 32) → tanh → bidirectional GRU(32 → 24) → Linear(48 → 10) per position."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(16, HIDDEN)
        self.rnn = nn.GRU(HIDDEN, 24, batch_first=True, bidirectional=True)
        self.head = nn.Linear(48, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(torch.tanh(self.inp(x)))
        return self.head(out)


def dense_dispatch(
    x: torch.Tensor, gate: nn.Linear, experts: nn.ModuleList, top_k: int, renormalise: bool
) -> torch.Tensor:
    """Σ over experts of weight[token, e] · expert_e(x), the weights the router's top-k
    softmax probabilities (renormalised to sum to 1 if asked) scattered into [tokens, experts]."""
    probs = torch.softmax(gate(x), dim=-1)
    top, chosen = torch.topk(probs, top_k, dim=-1)
    if renormalise:
        top = top / top.sum(dim=-1, keepdim=True)
    weights = torch.zeros_like(probs).scatter(-1, chosen, top)
    out = torch.zeros_like(x)
    for e, expert in enumerate(experts):
        out = out + weights[..., e : e + 1] * expert(x)
    return out


class MixtralMoe(nn.Module):
    """MixtralSparseMoeBlock's weights (4 SwiGLU experts, top 2), dense dispatch."""

    def __init__(self) -> None:
        super().__init__()
        self.block = MixtralSparseMoeBlock(
            MixtralConfig(
                hidden_size=HIDDEN,
                intermediate_size=INTER,
                num_local_experts=4,
                num_experts_per_tok=2,
            )
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = self.block
        return dense_dispatch(x, b.gate, b.experts, b.top_k, renormalise=True)


class QwenMoe(nn.Module):
    """Qwen2MoeSparseMoeBlock's weights (6 experts, top 2, probabilities not renormalised, a
    shared expert gated by a sigmoid), dense dispatch."""

    def __init__(self) -> None:
        super().__init__()
        self.block = Qwen2MoeSparseMoeBlock(
            Qwen2MoeConfig(
                hidden_size=HIDDEN,
                moe_intermediate_size=INTER // 2,
                shared_expert_intermediate_size=INTER,
                num_experts=6,
                num_experts_per_tok=2,
                norm_topk_prob=False,
            )
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = self.block
        routed = dense_dispatch(x, b.gate, b.experts, b.top_k, b.norm_topk_prob)
        return routed + torch.sigmoid(b.shared_expert_gate(x)) * b.shared_expert(x)


def ids(seq: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (BATCH, seq))


def past(kv_heads: int) -> tuple[torch.Tensor, ...]:
    return tuple(torch.randn(BATCH, kv_heads, PAST, HEAD_DIM) for _ in range(2 * LAYERS))


def decode_mask() -> torch.Tensor:
    """Past + new positions; the second sequence's first two past positions are padding."""
    mask = torch.ones(BATCH, PAST + 1, dtype=torch.int64)
    mask[1, :2] = 0
    return mask


def padded_mask() -> torch.Tensor:
    mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
    mask[1, SEQ - 3 :] = 0
    return mask


# name -> (model factory, input names, output names, example input factory); each factory runs
# right after torch.manual_seed(0), so a model's weights and examples depend on nothing else.
Example = tuple[
    Callable[[], nn.Module],
    tuple[str, ...],
    tuple[str, ...],
    Callable[[], tuple[torch.Tensor, ...]],
]
MODELS: dict[str, Example] = {
    "hf_gpt2_decode": (
        gpt2_decode,
        ("input_ids", "attention_mask", *past_names(LAYERS)),
        ("logits", *present_names(LAYERS)),
        lambda: (ids(1), decode_mask(), *past(HEADS)),
    ),
    "hf_llama_decode": (
        llama_decode,
        ("input_ids", "position_ids", *past_names(LAYERS)),
        ("y", *present_names(LAYERS)),
        lambda: (ids(1), torch.full((BATCH, 1), PAST), *past(KV_HEADS)),
    ),
    "hf_deberta_v2": (
        Deberta,
        ("input_ids", "attention_mask"),
        ("y",),
        lambda: (ids(SEQ), padded_mask()),
    ),
    "lstm_seq": (LstmSeq, ("input_ids",), ("y",), lambda: (ids(SEQ),)),
    "gru_seq": (GruSeq, ("x",), ("y",), lambda: (torch.randn(BATCH, SEQ, 16),)),
    "moe_mixtral": (MixtralMoe, ("x",), ("y",), lambda: (torch.randn(BATCH, SEQ, HIDDEN),)),
    "moe_qwen": (QwenMoe, ("x",), ("y",), lambda: (torch.randn(BATCH, SEQ, HIDDEN),)),
}


def check_dense_dispatch() -> None:
    """The dense-dispatch MoE layers give the Transformers blocks' own numbers."""
    for make in (MixtralMoe, QwenMoe):
        torch.manual_seed(0)
        model = make().eval()
        x = torch.randn(BATCH, SEQ, HIDDEN)
        with torch.no_grad():
            torch.testing.assert_close(model(x), model.block(x)[0])


@contextmanager
def mask_without_vmap() -> Iterator[None]:
    """Transformers 4.57 builds a padding mask with `torch.vmap` (`sdpa_mask_recent_torch`),
    which the TorchScript tracer fails on (`RuntimeError: unordered_map::at`); its
    `sdpa_mask_older_torch` builds the same boolean mask by broadcasting, as optimum patches it
    for export."""
    recent = masking_utils.sdpa_mask
    masking_utils.sdpa_mask = masking_utils.sdpa_mask_older_torch
    try:
        yield
    finally:
        masking_utils.sdpa_mask = recent


def main(out: Path, only: list[str]) -> None:
    warnings.filterwarnings("ignore")
    check_dense_dispatch()
    out.mkdir(parents=True, exist_ok=True)
    for name, (make, names, outputs, examples) in MODELS.items():
        if only and name not in only:
            continue
        for dynamo, suffix in ((False, "torchscript"), (True, "dynamo")):
            torch.manual_seed(0)
            model = make()
            path = out / f"{name}.{suffix}.onnx"
            try:
                with nullcontext() if dynamo else mask_without_vmap():
                    export(model, examples(), names, path, dynamo, outputs)
            except Exception as error:  # noqa: BLE001 - reported, the other exports go on
                print(f"{path.name}: not exported: {type(error).__name__}: {error}")
                continue
            print(f"wrote {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
