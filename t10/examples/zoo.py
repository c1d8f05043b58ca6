"""Built-in model zoo: seeded ONNX models built with ``onnx.helper`` (no torch).

Seven models with their published dimensions (``docs/zoo.md`` gives the sources):

- ``bert-base``, ``bert-large``: BERT encoders — token, position and segment embeddings,
  post-LayerNorm layers (attention, GELU MLP), tanh pooler; inputs ``input_ids``,
  ``token_type_ids``, ``attention_mask`` (int64 ``[batch, seq]``).
- ``vit-base``, ``vit-large``: ViT-B/16 and ViT-L/16 — patch embedding (the 16×16 stride-16
  convolution written as Reshape → Transpose → Reshape → MatMul), CLS token, learned positions,
  pre-LayerNorm layers, final LayerNorm, 1000-class head; input ``pixel_values``.
- ``llama2-7b``: Llama 2 decoder layers — RMSNorm, rotary embedding, causal attention, SwiGLU
  MLP, final RMSNorm; input ``hidden_states`` (its 32000×4096 token table would make one layer
  1.3 GB).
- ``opt-1.3b``: OPT decoder layers — learned positions (offset 2), pre-LayerNorm, causal
  attention, ReLU MLP, final LayerNorm; input ``hidden_states`` or, with ``token_ids=True``,
  ``input_ids`` gathered from the 50272×2048 token table.

- ``resnet50``: torchvision's ResNet-50 (v1.5: the stride in the 3×3 convolution) as its
  exporter emits it — Conv (no bias) → BatchNormalization → Relu, max pool, 16 bottleneck
  blocks (``layers``: the first 1..16), GlobalAveragePool → Flatten → Gemm; input
  ``pixel_values`` of side ``seq`` (default 224). Conv weights follow torchvision's Kaiming
  normal (fan out); the BatchNormalization parameters are 1 + N(0, 0.02²) (scale, variance)
  and N(0, 0.02²) (bias, mean).

Every model is float32, opset 17, static shapes, structured as the PyTorch exporters emit it
(attention: MatMul Q/K/V + Reshape + Transpose to heads, batched MatMul, scaling, mask Add,
Softmax, MatMul, Transpose + Reshape back, output projection). Nodes are named by where they
sit (``layer0/attn/q_proj/MatMul``), weights likewise (``layer0.attn.q_proj.weight``).

Weights follow the Hugging Face initialisation (N(0, 0.02²)) except that biases are N(0, 0.02²)
rather than zero and norm scales 1 + N(0, 0.02²) rather than one, so that every parameter
affects the outputs. Each weight has its own generator seeded by ``(seed, crc32(name))``: a
(model, sizes, seed) triple always gives the same bytes, and layer 0 of a 2-layer model equals
layer 0 of the 1-layer model.
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from t10.common.files import output_file
from t10.common.shapes_only import METADATA_KEY, METADATA_VALUE, declare
from t10.errors import T10Error

__all__ = [
    "EXTERNAL_DATA_THRESHOLD",
    "INIT_STD",
    "IR_VERSION",
    "OPSET",
    "PHASES",
    "ZOO",
    "Written",
    "ZooConfig",
    "ZooModel",
    "format_list",
    "get",
    "write",
]

OPSET = 17
IR_VERSION = 8
INIT_STD = 0.02
EXTERNAL_DATA_THRESHOLD = 1 << 30
"""`write` streams the weights to ``FILE.onnx.data`` when they exceed this many bytes."""
PHASES = ("prefill", "decode")
"""The serving forms of a decoder (``phase`` of `ZooModel.build`)."""
_DECODERS = ("llama", "opt")  # the families with a KV cache

_NEG = float(np.finfo(np.float32).min)  # the additive mask value Hugging Face uses
_ALIGN = 4096  # external data offsets (page aligned, so that runtimes can mmap them)
_MIN_EXTERNAL = 1024  # smaller tensors stay inside the model file


# --------------------------------------------------------------------------------------------
# Configurations and the registry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ZooConfig:
    """The architecture of one model family member (published figures; see docs/zoo.md)."""

    family: str  # "bert" | "vit" | "llama" | "opt" | "resnet" | "nerf"
    hidden: int
    heads: int
    intermediate: int
    layers: int  # the published layer count: `layers` ranges over 1..layers
    eps: float  # LayerNorm / RMSNorm epsilon
    vocab: int = 0  # token vocabulary (0: none)
    max_positions: int = 0  # bounds the sequence length (0: no bound)
    type_vocab: int = 0  # BERT segment types
    patch: int = 0  # ViT patch side
    channels: int = 3  # ViT image channels
    labels: int = 0  # ViT classifier classes
    rope_theta: float = 0.0  # Llama rotary base
    position_offset: int = 0  # OPT learned positions start at this row
    frequencies: int = 0  # NeRF: positional-encoding frequencies of a point
    direction_frequencies: int = 0  # NeRF: ... of a viewing direction

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


@dataclass(frozen=True)
class ZooModel:
    """A zoo entry: its published configuration and how to build it."""

    name: str
    description: str
    config: ZooConfig
    default_batch: int = 1
    default_seq: int = 128

    @property
    def decoder(self) -> bool:
        """Whether it is a decoder, with a KV cache: it takes ``phase`` (`PHASES`)."""
        return self.config.family in _DECODERS

    @property
    def takes_token_ids_option(self) -> bool:
        """Whether ``token_ids=True`` (``--token-ids``) applies: a decoder whose token table
        plus one layer stays under ~1 GB."""
        cfg = self.config
        if cfg.family not in ("llama", "opt"):
            return False
        return 4 * (cfg.vocab * cfg.hidden + _layer_params(cfg)) < 1_000_000_000

    def seq_for_image(self, image_size: int) -> int:
        """ViT: the token count (patches + CLS) of a square image of side ``image_size``."""
        cfg = self.config
        if cfg.family == "resnet":
            return image_size
        if cfg.family != "vit":
            raise T10Error(f"{self.name}: --image-size applies to the ViT and ResNet models "
                           "only; use --seq")
        if image_size < 1 or image_size % cfg.patch:
            raise T10Error(f"{self.name}: --image-size must be a positive multiple of the "
                           f"patch size {cfg.patch}, got {image_size}")
        return (image_size // cfg.patch) ** 2 + 1

    def inputs(
        self, batch: int | None = None, seq: int | None = None, token_ids: bool = False,
        config: ZooConfig | None = None, *, phase: str | None = None, layers: int = 1,
        context: int | None = None,
    ) -> list[tuple[str, str, tuple[int, ...]]]:
        """(name, element type, shape) of each graph input (``phase``: see `build`)."""
        cfg = config or self.config
        b = self.default_batch if batch is None else batch
        s, past = self._tokens(seq, phase, context)
        if cfg.family == "bert":
            return [(n, "int64", (b, s))
                    for n in ("input_ids", "token_type_ids", "attention_mask")]
        if cfg.family in ("vit", "resnet"):
            side = s if cfg.family == "resnet" else _image_side(cfg, s)
            return [("pixel_values", "float32", (b, cfg.channels, side, side))]
        if cfg.family == "nerf":
            return [(n, "float32", (b, s, 3)) for n in ("positions", "directions")]
        first = ("input_ids", "int64", (b, s)) if token_ids else (
            "hidden_states", "float32", (b, s, cfg.hidden))
        cache = (b, cfg.heads, past, cfg.head_dim)
        return [first, *(("past_key_values." + name, "float32", cache)
                         for name in _cache_names(layers if past else 0))]

    def _tokens(self, seq: int | None, phase: str | None, context: int | None
                ) -> tuple[int, int]:
        """The new tokens per sequence and the cached ones (``context`` in decode, else 0)."""
        if phase == "decode":
            return 1 if seq is None else seq, self.default_seq if context is None else context
        return self.default_seq if seq is None else seq, 0

    def build(
        self,
        batch: int | None = None,
        seq: int | None = None,
        layers: int = 1,
        seed: int = 0,
        *,
        token_ids: bool = False,
        config: ZooConfig | None = None,
        phase: str | None = None,
        context: int | None = None,
    ) -> onnx.ModelProto:
        """The model with its weights inside (``seq`` of ViT counts the CLS token).

        ``config`` replaces the published configuration (tests use it to shrink llama2-7b
        while keeping its architecture). ``phase`` (decoders only), as Hugging Face exports a
        decoder with its KV cache: ``"prefill"`` is the model of ``phase=None`` that also
        returns each layer's keys and values (``present.{i}.key`` / ``.value``
        [batch, heads, seq, head_dim]); ``"decode"`` takes one new token per sequence at
        position ``context`` and the cache of the ``context`` tokens before it
        (``past_key_values.{i}.key`` / ``.value`` [batch, heads, context, head_dim]) and
        returns the cache grown by that token (``present.*``, ``context + 1`` positions).
        """
        return self._build(_InlineSink(), batch, seq, layers, seed, token_ids, config,
                           phase, context)

    def build_shapes_only(
        self,
        batch: int | None = None,
        seq: int | None = None,
        layers: int = 1,
        *,
        token_ids: bool = False,
        config: ZooConfig | None = None,
        phase: str | None = None,
        context: int | None = None,
    ) -> tuple[onnx.ModelProto, int]:
        """The model in the shapes-only form (`t10.common.shapes_only`: its weights declared
        without data, its small constants inside), and the bytes the weights and constants
        would take: for shape inference, sizes and timing-only runs at full scale, cheaply."""
        sink = _ShapeSink()
        model = self._build(sink, batch, seq, layers, 0, token_ids, config, phase, context)
        helper.set_model_props(model, {METADATA_KEY: METADATA_VALUE})
        return model, sink.nbytes

    def _build(
        self,
        sink: _Sink,
        batch: int | None,
        seq: int | None,
        layers: int,
        seed: int,
        token_ids: bool,
        config: ZooConfig | None,
        phase: str | None,
        context: int | None,
    ) -> onnx.ModelProto:
        cfg = config or self.config
        b = self.default_batch if batch is None else batch
        self._check_phase(cfg, seq, phase, context)
        s, past = self._tokens(seq, phase, context)
        self._check(cfg, b, s, layers, seed, token_ids, past)
        g = _Graph(sink, seed, b, s, cfg, phase, past)
        inputs = self.inputs(b, s, token_ids, cfg, phase=phase, layers=layers, context=past)
        outputs = _BUILDERS[cfg.family](g, layers, token_ids)
        graph = helper.make_graph(
            g.nodes,
            self.name,
            [helper.make_tensor_value_info(n, _DTYPES[t], list(shape)) for n, t, shape in inputs],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(shape))
             for n, shape in outputs],
            initializer=g.inits,
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name="t10.examples.zoo",
            doc_string=f"{self.name}: {self.description} ({layers} of {cfg.layers} layers, "
                       f"batch {b}, seq {s}, seed {seed}{_phase_text(phase, past)})",
        )
        model.ir_version = IR_VERSION
        return model

    def _check_phase(
        self, cfg: ZooConfig, seq: int | None, phase: str | None, context: int | None
    ) -> None:
        if phase is not None and cfg.family not in _DECODERS:
            names = ", ".join(m.name for m in ZOO.values() if m.decoder)
            raise T10Error(f"{self.name}: --phase applies only to the decoders ({names}): "
                           "the other models have no KV cache")
        if phase is not None and phase not in PHASES:
            raise T10Error(f"{self.name}: unknown --phase '{phase}': choose prefill or decode")
        if context is not None and phase != "decode":
            raise T10Error(f"{self.name}: --context (the cached tokens) applies only with "
                           "--phase decode; a prefill's tokens are --seq")
        if phase == "decode" and seq not in (None, 1):
            raise T10Error(f"{self.name}: --phase decode takes one new token per sequence; "
                           f"give the cached tokens as --context, not --seq {seq}")
        if context is not None and (not isinstance(context, int) or context < 1):
            raise T10Error(f"{self.name}: --context must be a positive integer, got {context}")

    def _check(
        self, cfg: ZooConfig, batch: int, seq: int, layers: int, seed: int, token_ids: bool,
        past: int,
    ) -> None:
        for key, value in (("batch", batch), ("seq", seq)):
            if not isinstance(value, int) or value < 1:
                raise T10Error(f"{self.name}: --{key} must be a positive integer, got {value}")
        if not isinstance(layers, int) or not 1 <= layers <= cfg.layers:
            raise T10Error(f"{self.name}: --layers must be between 1 and {cfg.layers} "
                           f"(the published layer count), got {layers}")
        if not isinstance(seed, int) or seed < 0:
            raise T10Error(f"{self.name}: --seed must be a non-negative integer, got {seed}")
        if cfg.family == "vit":
            n = math.isqrt(seq - 1)
            if seq < 2 or n * n != seq - 1:
                raise T10Error(
                    f"{self.name}: --seq {seq} is not a ViT token count: (image side / "
                    f"{cfg.patch})² patches + 1 CLS token, e.g. 5 (image 32), 50 (image 112), "
                    f"197 (image 224); or pass --image-size")
        elif cfg.family == "resnet" and seq < 32:
            raise T10Error(f"{self.name}: --seq (the image side) must be at least 32 (the "
                           f"stride of the last stage), got {seq}")
        elif cfg.max_positions and past and past + seq > cfg.max_positions:
            raise T10Error(f"{self.name}: --context must be at most {cfg.max_positions - seq} "
                           f"(the new token is at position --context, below its maximum "
                           f"position count {cfg.max_positions}), got {past}")
        elif cfg.max_positions and seq > cfg.max_positions:
            raise T10Error(f"{self.name}: --seq must be at most {cfg.max_positions} (its "
                           f"maximum position count), got {seq}")
        if token_ids and not self.takes_token_ids_option:
            names = ", ".join(m.name for m in ZOO.values() if m.takes_token_ids_option)
            raise T10Error(f"{self.name}: --token-ids applies only to {names} (BERT always "
                           "takes token ids, ViT takes pixels, and llama2-7b's token table "
                           "would take one layer over 1 GB)")


def _cache_names(layers: int) -> list[str]:
    """``{i}.key``, ``{i}.value`` of each layer: the KV cache's names after ``past_key_values.``
    (inputs) or ``present.`` (outputs), as Hugging Face's exports name them."""
    return [f"{i}.{kind}" for i in range(layers) for kind in ("key", "value")]


def _phase_text(phase: str | None, past: int) -> str:
    if phase == "decode":
        return f", decode after {past} cached tokens"
    return ", prefill" if phase == "prefill" else ""


def _layer_params(cfg: ZooConfig) -> int:
    """Parameters of one layer (weights and biases of attention and MLP, norms)."""
    h, i = cfg.hidden, cfg.intermediate
    if cfg.family == "llama":
        return 4 * h * h + 3 * h * i + 2 * h
    return 4 * h * h + 4 * h + 2 * h * i + i + h + 4 * h


def _image_side(cfg: ZooConfig, seq: int) -> int:
    return math.isqrt(max(seq - 1, 0)) * cfg.patch


_RESNET50_BLOCKS = (3, 4, 6, 3)
"""Bottleneck blocks per stage (widths 64, 128, 256, 512; expansion 4)."""

_DTYPES = {"int64": TensorProto.INT64, "float32": TensorProto.FLOAT}

_BERT: dict[str, Any] = dict(
    family="bert", eps=1e-12, vocab=30522, max_positions=512, type_vocab=2
)
_VIT: dict[str, Any] = dict(family="vit", eps=1e-12, patch=16, channels=3, labels=1000)

ZOO: dict[str, ZooModel] = {
    m.name: m
    for m in [
        ZooModel(
            "bert-base",
            "BERT-Base encoder: token/position/segment embeddings, post-LayerNorm layers, "
            "GELU MLP, tanh pooler",
            ZooConfig(hidden=768, heads=12, intermediate=3072, layers=12, **_BERT),
        ),
        ZooModel(
            "bert-large",
            "BERT-Large encoder: token/position/segment embeddings, post-LayerNorm layers, "
            "GELU MLP, tanh pooler",
            ZooConfig(hidden=1024, heads=16, intermediate=4096, layers=24, **_BERT),
        ),
        ZooModel(
            "vit-base",
            "ViT-B/16: patch embedding, CLS token, learned positions, pre-LayerNorm layers, "
            "GELU MLP, 1000-class head",
            ZooConfig(hidden=768, heads=12, intermediate=3072, layers=12, **_VIT),
            default_seq=197,
        ),
        ZooModel(
            "vit-large",
            "ViT-L/16: patch embedding, CLS token, learned positions, pre-LayerNorm layers, "
            "GELU MLP, 1000-class head",
            ZooConfig(hidden=1024, heads=16, intermediate=4096, layers=24, **_VIT),
            default_seq=197,
        ),
        ZooModel(
            "llama2-7b",
            "Llama 2 7B decoder layers: RMSNorm, rotary embedding, causal attention, SwiGLU "
            "MLP, final RMSNorm; hidden-state input (no token table)",
            ZooConfig(family="llama", hidden=4096, heads=32, intermediate=11008, layers=32,
                      eps=1e-5, vocab=32000, max_positions=4096, rope_theta=10000.0),
        ),
        ZooModel(
            "opt-1.3b",
            "OPT-1.3B decoder layers: learned positions, pre-LayerNorm, causal attention, "
            "ReLU MLP, final LayerNorm; hidden-state input (--token-ids: token ids)",
            ZooConfig(family="opt", hidden=2048, heads=32, intermediate=8192, layers=24,
                      eps=1e-5, vocab=50272, max_positions=2048, position_offset=2),
        ),
        ZooModel(
            "resnet50",
            "ResNet-50 v1.5 (torchvision): Conv/BatchNormalization/Relu stem and max pool, "
            "bottleneck blocks, global average pool, 1000-class head",
            ZooConfig(family="resnet", hidden=2048, heads=0, intermediate=0,
                      layers=sum(_RESNET50_BLOCKS), eps=1e-5, labels=1000),
            default_seq=224,
        ),
        ZooModel(
            "nerf",
            "NeRF MLP (Mildenhall et al.): sin/cos positional encoding of points (10 "
            "frequencies) and view directions (4) inside the model, 8 ReLU layers of 256 "
            "with the encoded point joined again before the 5th, density and colour heads; "
            "batch = rays, seq = samples per ray",
            ZooConfig(family="nerf", hidden=256, heads=0, intermediate=128, layers=8, eps=0.0,
                      frequencies=10, direction_frequencies=4),
            default_batch=64,
            default_seq=64,
        ),
    ]
}
"""Model name → zoo entry."""


def get(name: str) -> ZooModel:
    """The zoo entry called ``name``; a T10Error naming the valid names otherwise."""
    try:
        return ZOO[name]
    except KeyError:
        raise T10Error(f"unknown zoo model '{name}': choose from {', '.join(ZOO)}") from None


# --------------------------------------------------------------------------------------------
# Where weights go: inside the model, into an external data file, or nowhere (shapes only)
# --------------------------------------------------------------------------------------------


class _Sink:
    def tensor(self, name: str, array: np.ndarray) -> TensorProto:
        return numpy_helper.from_array(array, name=name)

    def weight(
        self, name: str, shape: tuple[int, ...], make: Callable[[], np.ndarray]
    ) -> TensorProto:
        raise NotImplementedError


class _InlineSink(_Sink):
    def weight(
        self, name: str, shape: tuple[int, ...], make: Callable[[], np.ndarray]
    ) -> TensorProto:
        return self.tensor(name, make())


class _ShapeSink(_Sink):
    """Declares the weights without data (the shapes-only form) and keeps the constants (masks,
    rotary tables, scalars, shapes); counts the bytes of both."""

    def __init__(self) -> None:
        self.nbytes = 0

    def tensor(self, name: str, array: np.ndarray) -> TensorProto:
        self.nbytes += array.nbytes if array.dtype == np.float32 else 0
        return super().tensor(name, array)

    def weight(
        self, name: str, shape: tuple[int, ...], make: Callable[[], np.ndarray]
    ) -> TensorProto:
        self.nbytes += 4 * math.prod(shape)
        return declare(name, TensorProto.FLOAT, shape)


class _ExternalSink(_Sink):
    """Appends each tensor of at least _MIN_EXTERNAL bytes to ``f`` (named ``location``
    relative to the model file), so that memory holds one weight at a time."""

    def __init__(self, f: IO[bytes], location: str) -> None:
        self.f = f
        self.location = location
        self.offset = 0

    def tensor(self, name: str, array: np.ndarray) -> TensorProto:
        data = np.ascontiguousarray(array).tobytes()
        if len(data) < _MIN_EXTERNAL:
            return super().tensor(name, array)
        pad = -self.offset % _ALIGN
        self.f.write(b"\0" * pad)
        self.offset += pad
        self.f.write(data)
        t = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(array.dtype),
                        dims=list(array.shape), data_location=TensorProto.EXTERNAL)
        for key, value in (("location", self.location), ("offset", str(self.offset)),
                           ("length", str(len(data)))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        self.offset += len(data)
        return t

    def weight(
        self, name: str, shape: tuple[int, ...], make: Callable[[], np.ndarray]
    ) -> TensorProto:
        return self.tensor(name, make())


# --------------------------------------------------------------------------------------------
# Graph builder and the shared building blocks
# --------------------------------------------------------------------------------------------


class _Graph:
    """Nodes and initializers of one model under construction."""

    def __init__(self, sink: _Sink, seed: int, batch: int, seq: int, cfg: ZooConfig,
                 phase: str | None = None, past: int = 0) -> None:
        self.sink = sink
        self.seed = seed
        self.batch = batch
        self.seq = seq  # new tokens per sequence
        self.cfg = cfg
        self.phase = phase  # None (no KV cache), "prefill" or "decode"
        self.past = past  # the cached tokens before them (decode)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[TensorProto] = []
        self._consts: dict[str, np.ndarray] = {}

    def op(self, op_type: str, inputs: Sequence[str], name: str, output: str | None = None,
           **attrs: Any) -> str:
        """Append node ``name``; its output is ``output`` or ``{name}_output_0``."""
        out = output or f"{name}_output_0"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=name, **attrs))
        return out

    def rename(self, value: str, name: str) -> str:
        """Give ``value``, which no node reads yet, the name ``name`` (a graph output's)."""
        assert not any(value in n.input for n in self.nodes), value
        node = next(n for n in reversed(self.nodes) if value in n.output)
        node.output[list(node.output).index(value)] = name
        return name

    def param(self, name: str, shape: Sequence[int], kind: str = "normal") -> str:
        """A seeded weight: ``normal`` N(0, 0.02²), ``scale`` 1 + N(0, 0.02²)."""
        shape = tuple(int(d) for d in shape)

        def make() -> np.ndarray:
            rng = np.random.default_rng([self.seed, zlib.crc32(name.encode())])
            arr = rng.standard_normal(shape, dtype=np.float32)
            arr *= np.float32(INIT_STD)
            if kind == "scale":
                arr += np.float32(1.0)
            return arr

        self.inits.append(self.sink.weight(name, shape, make))
        return name

    def const(self, name: str, value: np.ndarray) -> str:
        """A constant initializer, shared by name (the same name must mean the same value)."""
        if name in self._consts:
            assert np.array_equal(self._consts[name], value), name
            return name
        self._consts[name] = value
        self.inits.append(self.sink.tensor(name, value))
        return name

    def ints(self, name: str, values: Sequence[int] | np.ndarray) -> str:
        return self.const(name, np.asarray(values, dtype=np.int64))

    def scalar(self, name: str, value: float) -> str:
        return self.const(name, np.asarray(value, dtype=np.float32))


def _dotted(prefix: str) -> str:
    return prefix.replace("/", ".")


def _linear(g: _Graph, prefix: str, x: str, fan_in: int, fan_out: int, bias: bool = True,
            output: str | None = None) -> str:
    """``x @ W (+ b)``: torch's export of nn.Linear on a 3-D input (W stored [in, out])."""
    w = g.param(f"{_dotted(prefix)}.weight", (fan_in, fan_out))
    y = g.op("MatMul", [x, w], f"{prefix}/MatMul", output=None if bias else output)
    if not bias:
        return y
    b = g.param(f"{_dotted(prefix)}.bias", (fan_out,))
    return g.op("Add", [y, b], f"{prefix}/Add", output=output)


def _gemm_head(g: _Graph, prefix: str, x: str, fan_in: int, fan_out: int,
               output: str) -> str:
    """nn.Linear on a 2-D input as torch exports it: Gemm with W stored [out, in]."""
    w = g.param(f"{_dotted(prefix)}.weight", (fan_out, fan_in))
    b = g.param(f"{_dotted(prefix)}.bias", (fan_out,))
    return g.op("Gemm", [x, w, b], f"{prefix}/Gemm", output=output, transB=1)


def _layer_norm(g: _Graph, prefix: str, x: str, output: str | None = None) -> str:
    h = g.cfg.hidden
    scale = g.param(f"{_dotted(prefix)}.weight", (h,), "scale")
    bias = g.param(f"{_dotted(prefix)}.bias", (h,))
    return g.op("LayerNormalization", [x, scale, bias], f"{prefix}/LayerNormalization",
                output=output, axis=-1, epsilon=g.cfg.eps)


def _rms_norm(g: _Graph, prefix: str, x: str, output: str | None = None) -> str:
    """``weight * x / sqrt(mean(x², -1) + eps)`` as Pow, ReduceMean, Add, Sqrt, Div, Mul."""
    sq = g.op("Pow", [x, g.scalar("const/two", 2.0)], f"{prefix}/Pow")
    var = g.op("ReduceMean", [sq], f"{prefix}/ReduceMean", axes=[-1], keepdims=1)
    var = g.op("Add", [var, g.scalar("const/norm_eps", g.cfg.eps)], f"{prefix}/Add")
    std = g.op("Sqrt", [var], f"{prefix}/Sqrt")
    y = g.op("Div", [x, std], f"{prefix}/Div")
    w = g.param(f"{_dotted(prefix)}.weight", (g.cfg.hidden,), "scale")
    return g.op("Mul", [y, w], f"{prefix}/Mul", output=output)


def _norm(g: _Graph, prefix: str, x: str, output: str | None = None) -> str:
    if g.cfg.family == "llama":
        return _rms_norm(g, prefix, x, output)
    return _layer_norm(g, prefix, x, output)


def _gelu(g: _Graph, prefix: str, x: str) -> str:
    """Exact GELU as torch exports it below opset 20: ``x * 0.5 * (1 + erf(x / √2))``."""
    y = g.op("Div", [x, g.scalar("const/sqrt2", math.sqrt(2.0))], f"{prefix}/Div")
    y = g.op("Erf", [y], f"{prefix}/Erf")
    y = g.op("Add", [y, g.scalar("const/one", 1.0)], f"{prefix}/Add")
    y = g.op("Mul", [x, y], f"{prefix}/Mul")
    return g.op("Mul", [y, g.scalar("const/half", 0.5)], f"{prefix}/Mul_1")


def _mlp(g: _Graph, prefix: str, x: str) -> str:
    """GELU MLP (BERT, ViT), ReLU MLP (OPT) or SwiGLU MLP (Llama)."""
    h, i = g.cfg.hidden, g.cfg.intermediate
    if g.cfg.family == "llama":
        gate = _linear(g, f"{prefix}/gate_proj", x, h, i, bias=False)
        sig = g.op("Sigmoid", [gate], f"{prefix}/act/Sigmoid")
        act = g.op("Mul", [gate, sig], f"{prefix}/act/Mul")
        up = _linear(g, f"{prefix}/up_proj", x, h, i, bias=False)
        y = g.op("Mul", [act, up], f"{prefix}/Mul")
        return _linear(g, f"{prefix}/down_proj", y, i, h, bias=False)
    y = _linear(g, f"{prefix}/fc1", x, h, i)
    if g.cfg.family == "opt":
        y = g.op("Relu", [y], f"{prefix}/act/Relu")
    else:
        y = _gelu(g, f"{prefix}/act", y)
    return _linear(g, f"{prefix}/fc2", y, i, h)


def _rotary(g: _Graph, prefix: str, x: str) -> str:
    """``x * cos + rotate_half(x) * sin`` on [batch, heads, seq, head_dim], with
    ``rotate_half(x) = concat(-x[..., d/2:], x[..., :d/2])`` and precomputed cos/sin."""
    d = g.cfg.head_dim
    cos, sin = _rope_tables(g)
    axis = g.ints("const/axis_last", [3])
    x1 = g.op("Slice", [x, g.ints("const/zero", [0]), g.ints("const/half_head_dim", [d // 2]),
                        axis], f"{prefix}/Slice")
    x2 = g.op("Slice", [x, g.ints("const/half_head_dim", [d // 2]),
                        g.ints("const/head_dim", [d]), axis], f"{prefix}/Slice_1")
    neg = g.op("Neg", [x2], f"{prefix}/Neg")
    rot = g.op("Concat", [neg, x1], f"{prefix}/Concat", axis=-1)
    a = g.op("Mul", [x, cos], f"{prefix}/Mul")
    b = g.op("Mul", [rot, sin], f"{prefix}/Mul_1")
    return g.op("Add", [a, b], f"{prefix}/Add")


def _rope_tables(g: _Graph) -> tuple[str, str]:
    d = g.cfg.head_dim
    inv_freq = 1.0 / (g.cfg.rope_theta ** (np.arange(0, d, 2, dtype=np.float64) / d))
    positions = np.arange(g.past, g.past + g.seq, dtype=np.float64)
    freqs = np.outer(positions, inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1).reshape(1, 1, g.seq, d)
    return (g.const("rope.cos", np.cos(emb).astype(np.float32)),
            g.const("rope.sin", np.sin(emb).astype(np.float32)))


def _causal_mask(g: _Graph) -> str:
    """[1, 1, seq, seq]: 0 where a query may see a key (key ≤ query), float32 min elsewhere."""
    s = g.seq
    mask = np.triu(np.full((s, s), _NEG, dtype=np.float32), k=1).reshape(1, 1, s, s)
    return g.const("causal_mask", mask)


def _cached(g: _Graph, layer: int, prefix: str, kind: str, x: str) -> str:
    """``present.{layer}.{kind}``: the ``kind`` ("key" or "value") heads [batch, heads, seq,
    head_dim] after the cached ones ``past_key_values.{layer}.{kind}`` (decode), or themselves
    (prefill)."""
    present = f"present.{layer}.{kind}"
    if not g.past:
        return g.rename(x, present)
    return g.op("Concat", [f"past_key_values.{layer}.{kind}", x], f"{prefix}/{kind}_cache/Concat",
                output=present, axis=2)


def _attention(g: _Graph, prefix: str, x: str, mask: str | None, layer: int = 0) -> str:
    """Multi-head self-attention on [batch, seq, hidden] as torch exports it; with a KV cache
    (``g.phase``), the keys and values of layer ``layer`` are also outputs (``_cached``)."""
    cfg = g.cfg
    h, nh, d = cfg.hidden, cfg.heads, cfg.head_dim
    bias = cfg.family != "llama"
    heads_shape = g.ints("shape/heads", [g.batch, g.seq, nh, d])
    hidden_shape = g.ints("shape/hidden", [g.batch, g.seq, h])

    def heads(name: str, y: str) -> str:
        y = g.op("Reshape", [y, heads_shape], f"{prefix}/{name}/Reshape")
        return g.op("Transpose", [y], f"{prefix}/{name}/Transpose", perm=[0, 2, 1, 3])

    q = _linear(g, f"{prefix}/q_proj", x, h, h, bias)
    if cfg.family == "opt":  # OPT scales the query projection, not the scores
        q = g.op("Mul", [q, g.scalar("const/attn_scale", d ** -0.5)], f"{prefix}/q_scale/Mul")
    k = _linear(g, f"{prefix}/k_proj", x, h, h, bias)
    v = _linear(g, f"{prefix}/v_proj", x, h, h, bias)
    q, k, v = heads("q_heads", q), heads("k_heads", k), heads("v_heads", v)
    if cfg.family == "llama":
        q = _rotary(g, f"{prefix}/q_rotary", q)
        k = _rotary(g, f"{prefix}/k_rotary", k)
    if g.phase is not None:
        k, v = _cached(g, layer, prefix, "key", k), _cached(g, layer, prefix, "value", v)
    kt = g.op("Transpose", [k], f"{prefix}/k_t/Transpose", perm=[0, 1, 3, 2])
    scores = g.op("MatMul", [q, kt], f"{prefix}/scores/MatMul")
    if cfg.family != "opt":
        scores = g.op("Div", [scores, g.scalar("const/sqrt_head_dim", math.sqrt(d))],
                      f"{prefix}/scores/Div")
    if mask is not None:
        scores = g.op("Add", [scores, mask], f"{prefix}/scores/Add")
    probs = g.op("Softmax", [scores], f"{prefix}/Softmax", axis=-1)
    ctx = g.op("MatMul", [probs, v], f"{prefix}/context/MatMul")
    ctx = g.op("Transpose", [ctx], f"{prefix}/context/Transpose", perm=[0, 2, 1, 3])
    ctx = g.op("Reshape", [ctx, hidden_shape], f"{prefix}/context/Reshape")
    return _linear(g, f"{prefix}/o_proj", ctx, h, h, bias)


def _post_norm_layer(g: _Graph, i: int, x: str, mask: str | None,
                     output: str | None = None) -> str:
    """BERT: ``h = LN(x + attn(x))``, ``LN(h + mlp(h))``."""
    p = f"layer{i}"
    a = _attention(g, f"{p}/attn", x, mask)
    h = _layer_norm(g, f"{p}/attn_norm", g.op("Add", [x, a], f"{p}/attn_residual/Add"))
    m = _mlp(g, f"{p}/mlp", h)
    return _layer_norm(g, f"{p}/mlp_norm", g.op("Add", [h, m], f"{p}/mlp_residual/Add"),
                       output=output)


def _pre_norm_layer(g: _Graph, i: int, x: str, mask: str | None) -> str:
    """ViT, OPT, Llama: ``h = x + attn(norm(x))``, ``h + mlp(norm(h))``."""
    p = f"layer{i}"
    a = _attention(g, f"{p}/attn", _norm(g, f"{p}/attn_norm", x), mask, i)
    h = g.op("Add", [x, a], f"{p}/attn_residual/Add")
    m = _mlp(g, f"{p}/mlp", _norm(g, f"{p}/mlp_norm", h))
    return g.op("Add", [h, m], f"{p}/mlp_residual/Add")


def _embedding(g: _Graph, prefix: str, ids: str, rows: int) -> str:
    table = g.param(f"{_dotted(prefix)}.weight", (rows, g.cfg.hidden))
    return g.op("Gather", [table, ids], f"{prefix}/Gather", axis=0)


def _positions(g: _Graph, prefix: str, rows: int, first: int) -> str:
    """Learned positions of the seq new tokens (table rows first..first+seq-1): [1, seq,
    hidden]."""
    ids = g.ints("position_ids", np.arange(first, first + g.seq).reshape(1, g.seq))
    return _embedding(g, prefix, ids, rows)


# --------------------------------------------------------------------------------------------
# The four families
# --------------------------------------------------------------------------------------------

_Outputs = list[tuple[str, tuple[int, ...]]]


def _bert(g: _Graph, layers: int, token_ids: bool) -> _Outputs:
    cfg, b, s, h = g.cfg, g.batch, g.seq, g.cfg.hidden
    x = _embedding(g, "embeddings/word", "input_ids", cfg.vocab)
    t = _embedding(g, "embeddings/token_type", "token_type_ids", cfg.type_vocab)
    p = _positions(g, "embeddings/position", cfg.max_positions, 0)
    x = g.op("Add", [x, t], "embeddings/Add")
    x = g.op("Add", [x, p], "embeddings/Add_1")
    x = _layer_norm(g, "embeddings/norm", x)
    # attention_mask [b, s] (1 = attend) -> additive [b, 1, 1, s]: (1 - mask) * float32 min
    m = g.op("Unsqueeze", ["attention_mask", g.ints("const/axes_1_2", [1, 2])],
             "mask/Unsqueeze")
    m = g.op("Cast", [m], "mask/Cast", to=TensorProto.FLOAT)
    m = g.op("Sub", [g.scalar("const/one", 1.0), m], "mask/Sub")
    m = g.op("Mul", [m, g.scalar("const/mask_value", _NEG)], "mask/Mul")
    for i in range(layers):
        last = i == layers - 1
        x = _post_norm_layer(g, i, x, m, output="last_hidden_state" if last else None)
    cls = g.op("Gather", [x, g.const("const/index_0", np.asarray(0, dtype=np.int64))],
               "pooler/Gather", axis=1)
    y = _gemm_head(g, "pooler/dense", cls, h, h, output="pooler/dense_output")
    g.op("Tanh", [y], "pooler/Tanh", output="pooler_output")
    return [("last_hidden_state", (b, s, h)), ("pooler_output", (b, h))]


def _vit(g: _Graph, layers: int, token_ids: bool) -> _Outputs:
    cfg, b, s, h = g.cfg, g.batch, g.seq, g.cfg.hidden
    c, p = cfg.channels, cfg.patch
    n = _image_side(cfg, s) // p
    # The patch convolution (kernel = stride = patch) as the equivalent patch flattening and
    # MatMul: [b, c, n·p, n·p] -> [b, c, n, p, n, p] -> [b, n, n, c, p, p] -> [b, n², c·p²].
    x = g.op("Reshape", ["pixel_values", g.ints("shape/patch_grid", [b, c, n, p, n, p])],
             "embeddings/patches/Reshape")
    x = g.op("Transpose", [x], "embeddings/patches/Transpose", perm=[0, 2, 4, 1, 3, 5])
    x = g.op("Reshape", [x, g.ints("shape/patches", [b, n * n, c * p * p])],
             "embeddings/patches/Reshape_1")
    x = _linear(g, "embeddings/patch_proj", x, c * p * p, h)
    cls = g.op("Expand", [g.param("embeddings.cls_token", (1, 1, h)),
                          g.ints("shape/cls", [b, 1, h])], "embeddings/cls/Expand")
    x = g.op("Concat", [cls, x], "embeddings/Concat", axis=1)
    x = g.op("Add", [x, g.param("embeddings.position", (1, s, h))], "embeddings/position/Add")
    for i in range(layers):
        x = _pre_norm_layer(g, i, x, None)
    x = _layer_norm(g, "final_norm", x, output="last_hidden_state")
    first = g.op("Gather", [x, g.const("const/index_0", np.asarray(0, dtype=np.int64))],
                 "classifier/Gather", axis=1)
    _gemm_head(g, "classifier", first, h, cfg.labels, output="logits")
    return [("last_hidden_state", (b, s, h)), ("logits", (b, cfg.labels))]


def _decoder(g: _Graph, layers: int, token_ids: bool) -> _Outputs:
    cfg, b, s, h = g.cfg, g.batch, g.seq, g.cfg.hidden
    x = _embedding(g, "embed_tokens", "input_ids", cfg.vocab) if token_ids else "hidden_states"
    if cfg.family == "opt":
        pos = _positions(g, "embed_positions", cfg.max_positions + cfg.position_offset,
                         cfg.position_offset + g.past)
        x = g.op("Add", [x, pos], "embed_positions/Add")
    mask = None if g.phase == "decode" else _causal_mask(g)  # one query sees every key
    for i in range(layers):
        x = _pre_norm_layer(g, i, x, mask)
    _norm(g, "final_norm", x, output="last_hidden_state")
    cache = (b, cfg.heads, g.past + s, cfg.head_dim)
    presents = [(f"present.{n}", cache) for n in _cache_names(layers if g.phase else 0)]
    return [("last_hidden_state", (b, s, h)), *presents]


def _conv_bn(g: _Graph, prefix: str, bn: str, x: str, fan_in: int, fan_out: int,
             kernel: int, stride: int = 1, relu: bool = True) -> str:
    """torchvision's Conv2d (bias=False, padding kernel // 2) → BatchNorm2d (→ ReLU)."""
    weight = f"{_dotted(prefix)}.weight"
    shape = (fan_out, fan_in, kernel, kernel)

    def make() -> np.ndarray:
        rng = np.random.default_rng([g.seed, zlib.crc32(weight.encode())])
        std = math.sqrt(2.0 / (fan_out * kernel * kernel))  # kaiming_normal_, mode="fan_out"
        return (rng.standard_normal(shape) * std).astype(np.float32)

    g.inits.append(g.sink.weight(weight, shape, make))
    pad = kernel // 2
    y = g.op("Conv", [x, weight], f"{prefix}/Conv", kernel_shape=[kernel, kernel],
             strides=[stride, stride], pads=[pad] * 4)
    params = [
        g.param(f"{_dotted(bn)}.{name}", (fan_out,), kind)
        for name, kind in (("weight", "scale"), ("bias", "normal"), ("running_mean", "normal"),
                           ("running_var", "scale"))
    ]
    y = g.op("BatchNormalization", [y, *params], f"{bn}/BatchNormalization",
             epsilon=g.cfg.eps)
    return g.op("Relu", [y], f"{bn}/Relu") if relu else y


def _bottleneck(g: _Graph, prefix: str, x: str, fan_in: int, width: int, stride: int) -> str:
    y = _conv_bn(g, f"{prefix}/conv1", f"{prefix}/bn1", x, fan_in, width, 1)
    y = _conv_bn(g, f"{prefix}/conv2", f"{prefix}/bn2", y, width, width, 3, stride)
    y = _conv_bn(g, f"{prefix}/conv3", f"{prefix}/bn3", y, width, 4 * width, 1, relu=False)
    if stride != 1 or fan_in != 4 * width:
        x = _conv_bn(g, f"{prefix}/downsample/0", f"{prefix}/downsample/1", x, fan_in,
                     4 * width, 1, stride, relu=False)
    y = g.op("Add", [y, x], f"{prefix}/Add")
    return g.op("Relu", [y], f"{prefix}/Relu")


def _resnet(g: _Graph, layers: int, token_ids: bool) -> _Outputs:
    cfg = g.cfg
    x = _conv_bn(g, "conv1", "bn1", "pixel_values", cfg.channels, 64, 7, 2)
    x = g.op("MaxPool", [x], "maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1])
    fan_in, block = 64, 0
    for stage, blocks in enumerate(_RESNET50_BLOCKS):
        width = 64 << stage
        for i in range(min(blocks, layers - block)):
            stride = 2 if stage > 0 and i == 0 else 1
            x = _bottleneck(g, f"layer{stage + 1}/{i}", x, fan_in, width, stride)
            fan_in = 4 * width
        block += blocks
    x = g.op("GlobalAveragePool", [x], "avgpool/GlobalAveragePool")
    x = g.op("Flatten", [x], "Flatten", axis=1)
    _gemm_head(g, "fc", x, fan_in, cfg.labels, output="logits")
    return [("logits", (g.batch, cfg.labels))]


def _encoding(g: _Graph, prefix: str, x: str, frequencies: int) -> tuple[str, int]:
    """NeRF's positional encoding of `x` [b, s, 3], computed in the model: `x` and, for
    k < `frequencies`, sin(2^k π x) and cos(2^k π x); returns it and its width."""
    b, s = g.batch, g.seq
    scales = g.const(f"{_dotted(prefix)}.scales",
                     (np.pi * 2.0 ** np.arange(frequencies)).astype(np.float32).reshape(-1, 1))
    at = g.op("Unsqueeze", [x, g.ints("axis_2", [2])], f"{prefix}/Unsqueeze")
    # each function scales x itself (as nerf-pytorch's `fn(x * freq)` exports): [b, s, f, 3]
    sin = g.op("Sin", [g.op("Mul", [at, scales], f"{prefix}/Mul")], f"{prefix}/Sin")
    cos = g.op("Cos", [g.op("Mul", [at, scales], f"{prefix}/Mul_1")], f"{prefix}/Cos")
    both = g.op("Concat", [sin, cos], f"{prefix}/Concat", axis=2)
    width = 6 * frequencies
    flat = g.op("Reshape", [both, g.ints(f"{_dotted(prefix)}.shape", [b, s, width])],
                f"{prefix}/Reshape")
    return g.op("Concat", [x, flat], f"{prefix}/Concat_1", axis=2), 3 + width


def _nerf(g: _Graph, layers: int, token_ids: bool) -> _Outputs:
    cfg, b, s, h = g.cfg, g.batch, g.seq, g.cfg.hidden
    points, width = _encoding(g, "encode_points", "positions", cfg.frequencies)
    dirs, dir_width = _encoding(g, "encode_directions", "directions", cfg.direction_frequencies)
    x, fan_in = points, width
    for i in range(layers):
        if i == 4:  # the skip: the encoded point joins the trunk again
            x = g.op("Concat", [x, points], f"trunk/{i}/Concat", axis=2)
            fan_in += width
        x = g.op("Relu", [_linear(g, f"trunk/{i}", x, fan_in, h)], f"trunk/{i}/Relu")
        fan_in = h
    _linear(g, "sigma", x, h, 1, output="sigma")
    feature = _linear(g, "feature", x, h, h)
    x = g.op("Concat", [feature, dirs], "rgb/Concat", axis=2)
    x = g.op("Relu", [_linear(g, "rgb/0", x, h + dir_width, cfg.intermediate)], "rgb/0/Relu")
    rgb = _linear(g, "rgb/1", x, cfg.intermediate, 3)
    g.op("Sigmoid", [rgb], "rgb/Sigmoid", output="rgb")
    return [("rgb", (b, s, 3)), ("sigma", (b, s, 1))]


_BUILDERS: dict[str, Callable[[_Graph, int, bool], _Outputs]] = {
    "nerf": _nerf,
    "resnet": _resnet,
    "bert": _bert,
    "vit": _vit,
    "llama": _decoder,
    "opt": _decoder,
}


# --------------------------------------------------------------------------------------------
# Writing a model file, and the listing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    path: Path
    data_path: Path | None  # the external weights file, if any
    weight_bytes: int
    file_bytes: int  # the model file plus the data file


def write(
    model: ZooModel | str,
    path: str | os.PathLike[str],
    batch: int | None = None,
    seq: int | None = None,
    layers: int = 1,
    seed: int = 0,
    *,
    token_ids: bool = False,
    config: ZooConfig | None = None,
    phase: str | None = None,
    context: int | None = None,
    shapes_only: bool = False,
    external_threshold: int = EXTERNAL_DATA_THRESHOLD,
) -> Written:
    """Build and save a zoo model (``phase``, ``context``: see `ZooModel.build`). Weights
    over ``external_threshold`` bytes are streamed, one tensor at a time, to
    ``{path}.data`` (ONNX external data, next to the model file), so that any layer count
    fits in memory and under protobuf's 2 GB limit. ``shapes_only``: the weights declared
    without data instead (`ZooModel.build_shapes_only`; ``weight_bytes`` counts them)."""
    entry = get(model) if isinstance(model, str) else model
    path = Path(path)
    declared, nbytes = entry.build_shapes_only(batch, seq, layers, token_ids=token_ids,
                                               config=config, phase=phase, context=context)
    big = nbytes > external_threshold and not shapes_only
    data_path = path.with_name(path.name + ".data") if big else None
    # each file written whole (output_file), the data file renamed only after the model is
    # written; the new files are made first: an unwritable path fails before the generation
    if shapes_only:
        with output_file(path, "zoo model") as fresh, open(fresh, "wb") as f:
            f.write(declared.SerializeToString())
    elif data_path is None:
        with output_file(path, "zoo model") as fresh, open(fresh, "wb") as f:
            f.write(entry.build(batch, seq, layers, seed, token_ids=token_ids, config=config,
                                phase=phase, context=context).SerializeToString())
    else:
        with output_file(data_path, "zoo model data") as fresh_data:
            with open(fresh_data, "wb") as data:
                proto = entry._build(_ExternalSink(data, data_path.name), batch, seq, layers,
                                     seed, token_ids, config, phase, context)
            with output_file(path, "zoo model") as fresh, open(fresh, "wb") as f:
                f.write(proto.SerializeToString())
    size = path.stat().st_size + (data_path.stat().st_size if data_path else 0)
    return Written(path=path, data_path=data_path, weight_bytes=nbytes, file_bytes=size)


def _shape(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _inputs_text(m: ZooModel, token_ids: bool = False) -> str:
    groups: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for name, dtype, shape in m.inputs(token_ids=token_ids):
        groups.setdefault((dtype, shape), []).append(name)
    return "; ".join(f"{', '.join(names)}: {dtype} {_shape(shape)}"
                     for (dtype, shape), names in groups.items())


def format_list() -> str:
    """The ``t10 zoo --list`` text."""
    rows = [("name", "layers", "hidden", "heads", "intermediate", "default inputs")]
    for m in ZOO.values():
        cfg = m.config
        text = _inputs_text(m)
        if cfg.family == "vit":
            n = math.isqrt(m.default_seq - 1)
            text += f" ({m.default_seq} tokens: {n}×{n} patches of {cfg.patch}² and CLS)"
        elif cfg.family in ("llama", "opt"):
            text += " (hidden states)"
            if m.takes_token_ids_option:
                text += f"; --token-ids: {_inputs_text(m, token_ids=True)}"
        elif cfg.family == "resnet":
            text += " (layers: bottleneck blocks)"
        elif cfg.family == "nerf":
            text += " (rays, samples per ray; layers: the trunk's)"
        rows.append((m.name, f"1-{cfg.layers}", str(cfg.hidden), str(cfg.heads or "-"),
                     str(cfg.intermediate or "-"), text))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = []
    for r in rows:
        numbers = [c.rjust(w) for c, w in zip(r[1:5], widths[1:], strict=True)]
        cells = [r[0].ljust(widths[0]), *numbers]
        lines.append("  ".join([*cells, r[5]]).rstrip())
    lines.append("")
    lines += [f"{m.name.ljust(widths[0])}  {m.description}" for m in ZOO.values()]
    lines += [
        "",
        "defaults: --batch 1, --seq 128 (ViT: 197 tokens = --image-size 224; resnet50: the "
        "image side, 224; nerf: 64 rays of 64 samples), --layers 1, "
        "--seed 0; float32, opset 17, static shapes; weights over 1 GiB go to FILE.onnx.data "
        "(docs/zoo.md)",
        "llama2-7b, opt-1.3b: --phase prefill|decode [--context N] with a KV cache as Hugging "
        "Face exports it; --shapes-only: weights declared without data, for t10 run "
        "--timing-only (not resnet50, whose Convs read their weights at import)",
    ]
    return "\n".join(lines)

