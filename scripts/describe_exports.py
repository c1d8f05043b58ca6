"""Writes tests/unit/data/EXPORTS.md: for each transformer export (scripts/export_hf_models.py),
its exporter, opset, inputs, output and ONNX op types with counts, checked to run in onnxruntime;
and tests/unit/data/more/EXPORTS.md likewise for every export of scripts/export_more_models.py.

    python scripts/describe_exports.py tests/unit/data
Needs only the project's own dependencies.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from t10.frontend import SUPPORTED_OPS

PREFIXES = ("hf_", "attn_")
# The frontend's first target list, for transformer blocks; anything else is listed per file.
TARGET_OPS = frozenset(
    "MatMul Gemm Add Sub Mul Div Pow Relu Gelu Erf Tanh Sigmoid Exp Sqrt Reciprocal Neg Softmax "
    "LayerNormalization ReduceMean ReduceSum ReduceMax Transpose Reshape Flatten Squeeze "
    "Unsqueeze Split Slice Concat Gather Constant ConstantOfShape Identity Dropout Cast Where "
    "Expand Shape".split()
)
# Where an op outside TARGET_OPS comes from (no export setting tried avoids it).
WHY = {
    ("hf_vit_1layer", "Conv"): "the patch embedding, a Conv2d with kernel = stride = patch 8",
    ("hf_vit_1layer.torchscript", "Equal"): (
        "with Where/ConstantOfShape: `cls_token.expand(batch, -1, -1)`, TorchScript's Expand "
        "symbolic resolving -1 at run time (all inputs constant)"
    ),
    ("hf_llama_gqa_1layer.torchscript", "Equal"): (
        "with Where/ConstantOfShape: `repeat_kv`'s expand of the 2 kv heads, as for ViT's "
        "cls_token (all inputs constant)"
    ),
    **{
        (name, "And"): (
            "at run time: the padding mask (`attention_mask` cast to BOOL, read per key) and-ed "
            "with the mask function's other terms (Transformers 5 `masking_utils`), then Where "
            "gives 0 or the float minimum"
        )
        for name in ("hf_bert_ids_mask", "hf_gpt2_ids_mask", "hf_roberta_ids_mask")
    },
    **{
        (f"{name}.dynamo", "GatherND"): (
            "`attention_mask[batch, key]` in the padding mask function: known indices affine "
            "in their position, a view"
        )
        for name in ("hf_bert_ids_mask", "hf_gpt2_ids_mask", "hf_roberta_ids_mask")
    },
    **{
        (f"{name}.torchscript", "Equal"): (
            "with Where/ConstantOfShape: Expand shapes resolved at run time (all inputs constant)"
        )
        for name in ("hf_bert_ids_mask", "hf_gpt2_ids_mask")
    },
    ("hf_bert_ids_mask.torchscript", "GatherElements"): (
        "the `token_type_ids` buffer expanded to the batch (all inputs constant)"
    ),
    ("hf_roberta_ids_mask.dynamo", "Equal"): (
        "`input_ids == 1` (the padding id) at run time, for the position ids"
    ),
    ("hf_roberta_ids_mask.torchscript", "Equal"): (
        "`input_ids == 1` (the padding id) at run time, for the position ids; and with "
        "Where/ConstantOfShape: Expand shapes resolved at run time (all inputs constant)"
    ),
    ("hf_roberta_ids_mask", "Not"): "the non-padding mask `input_ids != 1`, at run time",
    ("hf_roberta_ids_mask", "GatherElements"): (
        "the `token_type_ids` buffer gathered by the runtime position ids (the model is not "
        "given token type ids): a gather of runtime indices"
    ),
    ("hf_roberta_ids_mask", "CumSum"): (
        "the position ids `cumsum(mask, 1) * mask + 1` of the runtime non-padding mask: integer "
        "arithmetic on a runtime INT64 value, exact by the frontend's range analysis (proven "
        "in [1, 17])"
    ),
    ("hf_roberta_ids_mask.torchscript", "GreaterOrEqual"): (
        "the mask function's query-position term (all inputs constant)"
    ),
    ("hf_bert_ids_mask.torchscript", "GreaterOrEqual"): (
        "the mask function's query-position term (all inputs constant)"
    ),
    ("hf_gpt2_ids_mask.torchscript", "LessOrEqual"): (
        "the causal term `key <= query` (all inputs constant)"
    ),
    **{
        (name, "And"): (
            "at run time: the padding mask (`attention_mask` cast to BOOL) and-ed with the "
            "causal term, then Where gives 0 or the float minimum"
        )
        for name in ("hf_gpt2_decode", "hf_deberta_v2.torchscript")
    },
    ("hf_gpt2_decode.dynamo", "GatherND"): (
        "`attention_mask[batch, key]` in the padding mask function: known indices affine in "
        "their position, a view"
    ),
    **{
        (f"{name}.torchscript", op): (
            "the causal mask of the past + new positions (all inputs constant)"
        )
        for name in ("hf_gpt2_decode", "hf_llama_decode")
        for op in ("Equal", "LessOrEqual")
    },
    **{
        ("hf_llama_decode", op): "the rotary tables of the runtime `position_ids`"
        for op in ("Cos", "Sin")
    },
    ("hf_deberta_v2", "GatherElements"): (
        "c2p / p2c scores gathered by the bucketed relative positions: known indices, not "
        "affine in their position"
    ),
    ("hf_deberta_v2", "Tile"): "the relative position embeddings repeated over the batch",
    ("hf_deberta_v2", "Not"): "the inverted [batch, 1, seq, seq] padding mask, at run time",
    **{
        ("hf_deberta_v2.torchscript", op): (
            "the log-bucketed relative positions (`make_log_bucket_position`, all inputs "
            "constant)"
        )
        for op in ("Abs", "Ceil", "Clip", "Equal", "LessOrEqual", "Log", "Sign")
    },
    ("lstm_seq", "LSTM"): "nn.LSTM, one node per layer",
    ("gru_seq", "GRU"): "nn.GRU (bidirectional)",
    **{
        (name, "TopK"): "the router's top 2 of its softmax probabilities"
        for name in ("moe_mixtral", "moe_qwen")
    },
    **{
        (name, "ScatterElements"): (
            "the top-2 weights scattered into a dense [tokens, experts] matrix at the runtime "
            "expert indices"
        )
        for name in ("moe_mixtral", "moe_qwen")
    },
    ("attn_mha.torchscript", "Mod"): (
        "a Mod of two Constants from the `unflatten` symbolic; this export also computes the "
        "SDPA scale as Shape→Slice→Cast→Sqrt→Div at run time (constant-foldable)"
    ),
}


def describe(path: Path) -> str:
    model = onnx.load(path)
    stem = path.name.removesuffix(".onnx")
    name, exporter = stem.split(".")
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    initializers = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(0)
    feeds, inputs = {}, []
    for i in model.graph.input:
        if i.name in initializers:
            continue
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
        feeds[i.name] = (
            rng.integers(0, 2 if i.name == "attention_mask" else 100, shape).astype(dtype)
            if np.issubdtype(dtype, np.integer)
            else rng.standard_normal(shape).astype(dtype)
        )
        inputs.append(f"`{i.name}` {dtype.name}{shape}")
    outputs = ort.InferenceSession(str(path)).run(None, feeds)
    assert all(np.isfinite(o).all() for o in outputs), path
    out = ", ".join(
        f"`{o.name}` {list(v.shape)}" for o, v in zip(model.graph.output, outputs, strict=True)
    )
    counts = Counter(n.op_type for n in model.graph.node)
    ops = ", ".join(f"{op} {c}" for op, c in sorted(counts.items()))
    outside = sorted(set(counts) - TARGET_OPS)
    notes = [
        f"**{op}**: {WHY.get((stem, op)) or WHY.get((name, op)) or 'see below'}" for op in outside
    ]
    missing = ", ".join(sorted(set(counts) - set(SUPPORTED_OPS))) or "none"
    size = path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob(path.name + ".*"))
    return (
        f"| `{path.name}` | {exporter} | {opset} | {'; '.join(inputs)} | {out} | {ops} "
        f"| {'; '.join(notes) or '—'} | {missing} | {size // 1024} |"
    )


HEADER = """# Transformer-block ONNX exports

Made by `scripts/export_hf_models.py` (versions in its docstring; reruns are byte-identical),
described by `scripts/describe_exports.py` (regenerate this file with it). Every file ran in
onnxruntime on seeded random inputs (token ids below 100, the smallest vocab) with finite
outputs.
Tested by `tests/unit/test_hf_exports.py`, in the default test run: every file on test-16 and
ipu-mk2 against onnxruntime.

Settings: static shapes (batch 2, sequence 16, hidden 64, 4 heads, intermediate 128, one layer; ViT
image 32, patch 8, 3 channels, so 17 tokens with CLS; Llama vocab 128); TorchScript exporter
(`dynamo=False`) at opset 17, dynamo exporter (`dynamo=True`) at opset 18, which writes the weights
to `<file>.data`. HF models use `attn_implementation="eager"` (q·kᵀ / √d, softmax, ·v; the default
SDPA gives the same op types at these opsets, tried for BertLayer and LlamaModel, scaling q and kᵀ
by d^-¼ each instead); each is wrapped to take its inputs positionally and return the last hidden
state only (ViT without its pooler). `hf_bert_layer_mask` takes BertLayer's additive mask `[batch,
1, 1, seq]` as a float input; `hf_bert_ids_mask` (BertModel) and `hf_gpt2_ids_mask` (GPT2Model)
take token ids and an INT64 `attention_mask` `[batch, seq]` (fed 0 / 1 here) and build the
additive mask themselves, at run time (vocab 128, 16 positions); so does `hf_roberta_ids_mask`
(RobertaModel: hidden 32, 2 layers, 2 heads, intermediate 64, vocab 100, 40 positions), which
also computes its position ids from the token ids at run time (padding id 1: `cumsum(ids != 1)
* (ids != 1) + 1`, integer arithmetic on INT64 values) and, given no token type ids (as users
export it), gathers its `token_type_ids` buffer by those runtime position ids (GatherElements of
runtime indices). Llama is given its causal mask
(additive, `[1, 1, 16, 16]`) and position ids as constants: left to build them itself it checks
the position ids for packed sequences with `torch.diff`, which the TorchScript exporter refuses
(`aten::diff`), and with a 2-D mask the TorchScript export keeps the mask building (LessOrEqual,
And, Equal, Where, Flatten, Gather) and the rotary tables (Cos, Sin); given both, both exporters
fold them into initializers.
`nn.MultiheadAttention` is exported with autograd on: under `torch.no_grad()` eval mode takes its
fused fast path, `aten::_native_multi_head_attention`, which the TorchScript exporter refuses. The
dynamo exporter folds the constant shape arithmetic that TorchScript leaves in (Shape, Mod,
Equal/Where of constants); in the dynamo exports the only op outside the target list is ViT's Conv.

Columns: *outside list* = op types not in the frontend's first target list (transformer blocks:
MatMul Gemm Add Sub Mul Div Pow Relu Gelu Erf Tanh Sigmoid Exp Sqrt Reciprocal Neg Softmax
LayerNormalization ReduceMean ReduceSum ReduceMax Transpose Reshape Flatten Squeeze Unsqueeze Split
Slice Concat Gather Constant ConstantOfShape Identity Dropout Cast Where Expand Shape); *not
imported yet* = op types `t10.frontend.SUPPORTED_OPS` lacks at the time this file was written; KiB
= model plus external data.

"""
MORE_HEADER = """# Decode-step, DeBERTa, recurrent and mixture-of-experts ONNX exports

Made by `scripts/export_more_models.py` (versions and settings in its docstring; reruns are
byte-identical), described by `scripts/describe_exports.py` (regenerate this file with it). Every
file ran in onnxruntime on seeded random inputs (token ids below 100) with finite outputs.
Tested by `tests/unit/test_more_exports.py`: every file on ipu-mk2 and test-16 against
onnxruntime.

Settings: static shapes, batch 2, hidden 32, 4 heads, intermediate 64, vocab 128, sequence 8;
TorchScript exporter (`dynamo=False`) at opset 17, dynamo exporter (`dynamo=True`) at opset 18,
which writes the weights to `<file>.data`; HF attention `attn_implementation="eager"`. The decode
steps (2 layers) take one new token and 7 past positions of keys / values per layer and return
the present keys / values (8 positions) besides the logits (GPT-2) or the last hidden state
(Llama, 2 key-value heads, given its runtime `position_ids`). DeBERTa-v2 (2 layers, relative
attention c2p + p2c, 8 log buckets) takes an INT64 `attention_mask` that it multiplies with
itself (declare its range 0..1). The MoE layers are Transformers' Mixtral / Qwen2-MoE blocks'
weights in the static dense-dispatch form (see the script).

Columns as in ../EXPORTS.md.

"""
TABLE = (
    "| file | exporter | opset | inputs | output | op types (count) | outside list "
    "| not imported yet | KiB |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
)


def main(data: Path) -> None:
    rows = [describe(p) for p in sorted(data.glob("*.onnx")) if p.name.startswith(PREFIXES)]
    (data / "EXPORTS.md").write_text(HEADER + TABLE + "\n".join(rows) + "\n")
    more = [describe(p) for p in sorted((data / "more").glob("*.onnx"))]
    (data / "more" / "EXPORTS.md").write_text(MORE_HEADER + TABLE + "\n".join(more) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
