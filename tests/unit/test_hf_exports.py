"""The transformer acceptance models: ONNX exports of Hugging Face `BertLayer`, `ViTModel` (1 layer)
and `LlamaModel` (1 layer), and of hand-written `torch.nn` attention blocks, through both torch
exporters (scripts/export_hf_models.py; tests/unit/data/EXPORTS.md lists their op types),
compiled, simulated and checked against onnxruntime on both chips; and BertModel and
GPT2Model building their masks at run time from an INT64 `attention_mask`, also in fp16, and
RobertaModel, which also computes its position ids from its token ids (integer arithmetic)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import DATA, TRANSFORMER_PREFIXES, random_onnx_inputs, run_and_check

from t10 import driver

EXPORTS = sorted(p.name for p in DATA.glob("*.onnx") if p.name.startswith(TRANSFORMER_PREFIXES))
VOCAB = 100  # RoBERTa's vocab_size, the smallest (the others': 128): token ids are drawn below it
PAD_ID = 1  # RoBERTa's padding id, where the attention mask is 0 (it makes the position ids)


def inputs_for(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """`random_onnx_inputs` for the float inputs; seeded token ids for the INT64 ones
    (`input_ids`, `PAD_ID` where the mask is 0), and a mask of mixed 0 / 1 for an INT64
    `attention_mask` (random, the second sequence padded, the first key always attended)."""
    inputs = random_onnx_inputs(model)
    rng = np.random.default_rng(0)
    for i in model.graph.input:
        if i.type.tensor_type.elem_type == onnx.TensorProto.INT64:
            shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
            if i.name == "attention_mask":
                mask = rng.integers(0, 2, shape, dtype=np.int64)
                mask[:, 0], mask[-1, -4:] = 1, 0
                inputs[i.name] = mask
            else:
                inputs[i.name] = rng.integers(0, VOCAB, shape, dtype=np.int64)
    if "input_ids" in inputs and "attention_mask" in inputs:
        inputs["input_ids"][inputs["attention_mask"] == 0] = PAD_ID
    return inputs


def test_every_export_is_here() -> None:
    """Each model through both exporters; the dynamo exporter's weights sit beside its model."""
    stems = {name.split(".")[0] for name in EXPORTS}
    assert len(stems) >= 8
    for stem in stems:
        assert (DATA / f"{stem}.torchscript.onnx").exists()
        assert (DATA / f"{stem}.dynamo.onnx").exists()
        assert (DATA / f"{stem}.dynamo.onnx.data").exists()


@pytest.mark.parametrize("name", EXPORTS)
def test_hf_exports_match_onnxruntime(name: str, chip: str) -> None:
    path = DATA / name
    model = onnx.load(path)
    run_and_check(path, chip, inputs_for(model), fuse=False)


@pytest.mark.parametrize(
    "name",
    [
        "hf_bert_ids_mask.dynamo.onnx",
        "hf_gpt2_ids_mask.torchscript.onnx",
        "hf_roberta_ids_mask.torchscript.onnx",
    ],
)
def test_runtime_masks_in_fp16(name: str) -> None:
    """The INT64 mask (and RoBERTa's position ids, proven in [1, 17]) is exact in fp16
    storage; the float minimum the models mask with saturates to -65504 (nothing to warn
    of), which softmax turns into the same zeros."""
    path = DATA / name
    result = driver.run_model(
        str(path),
        driver.CompileOptions(chip="test-16", precision="fp16"),
        inputs=inputs_for(onnx.load(path)),
        check=driver.CHECK_TOLERANCES["fp16"],
    )
    assert result.check is not None and result.check.passed, result.check
    assert result.report.warnings == ()
