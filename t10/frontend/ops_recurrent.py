"""Recurrent layers: ONNX's RNN, GRU and LSTM (opsets 7 to 22), unrolled over their static
sequence length by one core (``lower_recurrent``) around three small cells (``_rnn_step``,
``_gru_step``, ``_lstm_step``)::

    xw = X · W[d]ᵀ (+ Wb + Rb)      one contraction (+ one generic) for every step and direction
    per direction d, per step t:
      r  = H[t-1] · R[d]ᵀ           the recurrent contraction (none while H is zero)
      H[t] (C[t]) = cell(xw[d, t] gate blocks (views), r gate blocks (views), C[t-1], P[d])
    Y   = the H[t] placed along time, direction and batch (``ops_views.concatenate``)
    Y_h = the last H of each direction (Y_c: the last C)

The semantics are onnxruntime's (the reference of ``--check``) where ONNX leaves them open:

* activations (case-insensitive): Relu, Tanh, Sigmoid, Affine (alpha·x + beta), LeakyRelu,
  ThresholdedRelu, ScaledTanh (alpha·tanh(beta·x)), HardSigmoid, Elu, Softsign, Softplus; each
  one taking alpha (beta) reads the next value of ``activation_alpha`` (``activation_beta``),
  else its default (LeakyRelu 0.01, HardSigmoid 0.2 and 0.5, Elu 1, the others 0); values
  left over are refused. Of two activations of a one-direction RNN (ONNX's default is
  ``["Tanh", "Tanh"]`` whatever the direction) the first is used;
* ``clip`` bounds each gate's input to its activation (not the cell state C);
* ``sequence_lens`` (known at compile time): each run of batch entries of one length is
  unrolled apart over its own steps; the reverse direction starts at a sequence's last step,
  Y is zero past its end, Y_h (Y_c) hold the state of its last step;
* GRU's ``linear_before_reset`` adds Rb to the recurrent product, which the reset gate scales.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common.view_maps import transpose_map
from t10.frontend.importer import (
    BodyBuilder,
    Importer,
    Shape,
    computed_outputs,
    lowering,
    node_attributes,
    schema_inputs,
)
from t10.frontend.ops_elementwise import ScalarFn, activation_body
from t10.frontend.ops_views import concatenate

Operand = tuple[SSAValue, Shape]
T = TypeVar("T")

_COMMON_ATTRIBUTES = (
    "activation_alpha",
    "activation_beta",
    "activations",
    "clip",
    "direction",
    "hidden_size",
    "layout",
)

_DIRECTIONS: dict[bytes, tuple[bool, ...]] = {
    b"forward": (False,),
    b"reverse": (True,),
    b"bidirectional": (False, True),
}
"""``direction`` → whether each direction runs in reverse."""

_ACTIVATIONS: dict[str, tuple[str, float | None, float | None]] = {
    "relu": ("Relu", None, None),
    "tanh": ("Tanh", None, None),
    "sigmoid": ("Sigmoid", None, None),
    "affine": ("Affine", 0.0, 0.0),
    "leakyrelu": ("LeakyRelu", 0.01, None),
    "thresholdedrelu": ("ThresholdedRelu", 0.0, None),
    "scaledtanh": ("ScaledTanh", 0.0, 0.0),
    "hardsigmoid": ("HardSigmoid", 0.2, 0.5),
    "elu": ("Elu", 1.0, None),
    "softsign": ("Softsign", None, None),
    "softplus": ("Softplus", None, None),
}
"""The activations onnxruntime implements (lower-case name → its name, and its alpha and beta
defaults when it takes them, None when it does not)."""


def _activation(name: str, alpha: float, beta: float) -> ScalarFn:
    if name == "Affine":
        return lambda bb, x: bb.add(bb.mul(bb.const(alpha), x), bb.const(beta))
    if name == "ScaledTanh":
        return lambda bb, x: bb.mul(bb.const(alpha), bb.tanh(bb.mul(bb.const(beta), x)))
    return activation_body(name, {"alpha": alpha, "beta": beta})


@dataclass(frozen=True)
class _State:
    """A direction's state after a step: H and (LSTM) C, each [rows, hidden]; None: zero."""

    h: Operand | None
    c: Operand | None = None


@dataclass
class _Unrolling:
    """What the steps of one node share: its generics' running index, its attributes and
    hidden size, the recurrent weights (R, and B and P where given) and the input contraction
    of every step (``xw``: [directions, time, batch, gates · hidden], biases added)."""

    imp: Importer
    attributes: dict[str, Any]
    hidden: int
    clip: float | None
    r: Operand
    b: Operand | None
    p: Operand | None
    index: int = 0
    xw: Operand = field(init=False)

    def next_index(self, count: int = 1) -> int:
        """The index of the next generic of the node (reserving ``count``)."""
        self.index += count
        return self.index - count

    def view(self, source: Operand, shape: Shape, exprs: Sequence[AffineExpr],
             padded: bool = False) -> Operand:
        """``result[i] = source[exprs(i)]``."""
        view = AffineMap(len(shape), 0, tuple(exprs))
        return self.imp.view(*source, shape, view, self.next_index(), padded), shape

    def concatenate(self, pieces: Sequence[Operand], axis: int) -> Operand:
        """``pieces`` one after another along ``axis`` (``ops_views.concatenate``)."""
        if len(pieces) == 1:
            return pieces[0]
        return concatenate(self.imp, pieces, axis, self.next_index(len(pieces) + 1))


@dataclass
class _Direction:
    """One direction over one run of batch rows (``first`` to ``first + rows``), step by
    step: the operands of its gates and the generics that combine them."""

    u: _Unrolling
    d: int
    first: int
    rows: int
    activations: Sequence[ScalarFn]
    position: int = 0
    """The time position of the current step."""
    _rows: dict[tuple[SSAValue, int, Shape], Operand] = field(default_factory=dict)

    @property
    def shape(self) -> Shape:
        return (self.rows, self.u.hidden)

    def x(self, gate: int) -> Operand:
        """Gate ``gate``'s block of the input contraction at the current step."""
        dim, h = AffineExpr.dimension, self.u.hidden
        exprs = (AffineExpr.constant(self.d), AffineExpr.constant(self.position),
                 dim(0) + self.first, dim(1) + gate * h)
        return self.u.view(self.u.xw, self.shape, exprs)

    def _row(self, source: Operand, offset: int, shape: Shape) -> Operand:
        """``source[d, offset + i, ...]`` of ``shape`` (a view, made once)."""
        key = (source[0], offset, shape)
        if key not in self._rows:
            dim = AffineExpr.dimension
            exprs = (AffineExpr.constant(self.d), dim(0) + offset,
                     *(dim(i) for i in range(1, len(shape))))
            self._rows[key] = self.u.view(source, shape, exprs)
        return self._rows[key]

    def vector(self, source: Operand | None, offset: int) -> Operand | None:
        """The ``hidden`` values of direction d's row of ``source`` (B or P) from ``offset``
        on (None without ``source``)."""
        return None if source is None else self._row(source, offset, (self.u.hidden,))

    def recurrent(self, h: Operand | None, first: int, count: int) -> list[Operand | None]:
        """``h · R[d]ᵀ`` for gates ``first`` to ``first + count``, one operand per gate (None
        for a zero ``h``)."""
        if h is None:
            return [None] * count
        hidden, dim = self.u.hidden, AffineExpr.dimension
        weights = self._row(self.u.r, first * hidden, (count * hidden, hidden))[0]
        shape = (self.rows, count * hidden)
        product = self.u.imp.contraction(h[0], [dim(0), dim(2)], weights, [dim(1), dim(2)],
                                         [dim(0), dim(1)], shape, 2, self.u.next_index())
        if count == 1:
            return [(product, shape)]
        return [self.u.view((product, shape), self.shape, (dim(0), dim(1) + g * hidden))
                for g in range(count)]

    def combine(self, operands: Mapping[str, Operand | None],
                body: Callable[[BodyBuilder, dict[str, SSAValue]], SSAValue]) -> Operand:
        """One element-wise generic over the given ``operands`` (those not None), ``body``
        reading them by name."""
        given = {name: operand for name, operand in operands.items() if operand is not None}
        names = list(given)
        value = self.u.imp.elementwise(
            list(given.values()), self.shape,
            lambda bb, v: body(bb, dict(zip(names, v, strict=True))), self.u.next_index())
        return value, self.shape

    def gate(self, bb: BodyBuilder, parts: Sequence[SSAValue | None], activation: int
             ) -> SSAValue:
        """``activation(clip(sum of parts))``: the given parts summed in order."""
        total = functools.reduce(bb.add, [p for p in parts if p is not None])
        if self.u.clip is not None:
            total = bb.max(bb.min(total, bb.const(self.u.clip)), bb.const(-self.u.clip))
        return self.activations[activation](bb, total)


def _product(bb: BodyBuilder, a: SSAValue | None, b: SSAValue | None) -> SSAValue | None:
    """a · b, None (zero) when either is."""
    return None if a is None or b is None else bb.mul(a, b)


def _rnn_step(s: _Direction, state: _State) -> _State:
    """H = f(x + H·Rᵀ)."""
    (r,) = s.recurrent(state.h, 0, 1)
    return _State(s.combine({"x": s.x(0), "r": r},
                            lambda bb, a: s.gate(bb, [a["x"], a.get("r")], 0)))


def _gru_step(s: _Direction, state: _State) -> _State:
    """Gates z, r, h: z = f(x_z + H·R_zᵀ), r = f(x_r + H·R_rᵀ), then ĥ = g(x_h + (r ⊙ H)·R_hᵀ)
    or, with ``linear_before_reset``, ĥ = g(x_h + r ⊙ (H·R_hᵀ + Rb_h)) (Rb on the recurrent
    side for every gate); H = (1 - z) ⊙ ĥ + z ⊙ H."""
    h, hidden = state.h, s.u.hidden
    operands: dict[str, Operand | None] = {"xz": s.x(0), "xh": s.x(2), "h": h}
    if s.u.attributes.get("linear_before_reset", 0):
        rz, rr, rh = s.recurrent(h, 0, 3)
        operands |= {"rz": rz, "bz": s.vector(s.u.b, 3 * hidden), "rh": rh,
                     "bh": s.vector(s.u.b, 5 * hidden)}
        if rh is not None or s.u.b is not None:  # else r scales zero
            operands |= {"xr": s.x(1), "rr": rr, "br": s.vector(s.u.b, 4 * hidden)}

        def candidate(bb: BodyBuilder, a: dict[str, SSAValue]) -> SSAValue:
            linear = [v for v in (a.get("rh"), a.get("bh")) if v is not None]
            if not linear:
                return s.gate(bb, [a["xh"]], 1)
            reset = s.gate(bb, [a["xr"], a.get("rr"), a.get("br")], 0)
            return s.gate(bb, [a["xh"], bb.mul(reset, functools.reduce(bb.add, linear))], 1)
    else:
        rz, rr = s.recurrent(h, 0, 2)
        operands["rz"] = rz
        if h is not None:
            reset = s.combine({"xr": s.x(1), "rr": rr, "h": h},
                              lambda bb, a: bb.mul(s.gate(bb, [a["xr"], a["rr"]], 0), a["h"]))
            (operands["rh"],) = s.recurrent(reset, 2, 1)

        def candidate(bb: BodyBuilder, a: dict[str, SSAValue]) -> SSAValue:
            return s.gate(bb, [a["xh"], a.get("rh")], 1)

    def hidden_state(bb: BodyBuilder, a: dict[str, SSAValue]) -> SSAValue:
        z = s.gate(bb, [a["xz"], a.get("rz"), a.get("bz")], 0)
        new = bb.mul(bb.sub(bb.const(1.0), z), candidate(bb, a))
        kept = _product(bb, z, a.get("h"))
        return new if kept is None else bb.add(new, kept)

    return _State(s.combine(operands, hidden_state))


def _lstm_step(s: _Direction, state: _State) -> _State:
    """Gates i, o, f, c: C = f ⊙ C + i ⊙ c̃ with i = f(x_i + H·R_iᵀ + P_i ⊙ C), f likewise
    (or 1 - i with ``input_forget``), c̃ = g(x_c + H·R_cᵀ); then H = o ⊙ h(C) with o = f(x_o +
    H·R_oᵀ + P_o ⊙ C) of the new C: two generics."""
    hidden, c = s.u.hidden, state.c
    ri, ro, rf, rc = s.recurrent(state.h, 0, 4)
    coupled = bool(s.u.attributes.get("input_forget", 0))
    operands: dict[str, Operand | None] = {"xi": s.x(0), "ri": ri, "xc": s.x(3), "rc": rc}
    if c is not None:
        operands |= {"c": c, "pi": s.vector(s.u.p, 0)}
        if not coupled:
            operands |= {"xf": s.x(2), "rf": rf, "pf": s.vector(s.u.p, 2 * hidden)}

    def cell(bb: BodyBuilder, a: dict[str, SSAValue]) -> SSAValue:
        previous = a.get("c")
        i = s.gate(bb, [a["xi"], a.get("ri"), _product(bb, a.get("pi"), previous)], 0)
        candidate = bb.mul(i, s.gate(bb, [a["xc"], a.get("rc")], 1))
        if previous is None:
            return candidate
        forget = (bb.sub(bb.const(1.0), i) if coupled
                  else s.gate(bb, [a["xf"], a.get("rf"), _product(bb, a.get("pf"), previous)], 0))
        return bb.add(bb.mul(previous, forget), candidate)

    new_c = s.combine(operands, cell)

    def output(bb: BodyBuilder, a: dict[str, SSAValue]) -> SSAValue:
        o = s.gate(bb, [a["xo"], a.get("ro"), _product(bb, a.get("po"), a["c"])], 0)
        return bb.mul(o, s.activations[2](bb, a["c"]))

    operands = {"xo": s.x(1), "ro": ro, "po": s.vector(s.u.p, hidden), "c": new_c}
    return _State(s.combine(operands, output), new_c)


@dataclass(frozen=True)
class _Cell:
    """A recurrent op: its gates, its per-direction default activations, its step, its
    optional inputs and its outputs (as ONNX names them)."""

    gates: int
    activations: tuple[str, ...]
    step: Callable[[_Direction, _State], _State]
    optional: tuple[str, ...] = ("B", "sequence_lens", "initial_h")
    outputs: tuple[str, ...] = ("Y", "Y_h")


_CELLS = {
    "RNN": _Cell(1, ("Tanh",), _rnn_step),
    "GRU": _Cell(3, ("Sigmoid", "Tanh"), _gru_step),
    "LSTM": _Cell(4, ("Sigmoid", "Tanh", "Tanh"), _lstm_step,
                  ("B", "sequence_lens", "initial_h", "initial_c", "P"), ("Y", "Y_h", "Y_c")),
}


def _activations(imp: Importer, node: onnx.NodeProto, cell: _Cell, directions: int
                 ) -> list[list[ScalarFn]]:
    """Each direction's activations, their alpha and beta read as onnxruntime reads them."""
    attrs = node_attributes(node)
    per = len(cell.activations)
    given = [n.decode(errors="replace") for n in attrs.get("activations", [])]
    names = given or list(cell.activations) * directions
    if per == 1 and directions == 1 and len(names) == 2:
        names = names[:1]  # RNN: as onnxruntime reads ONNX's default ["Tanh", "Tanh"]
    if len(names) != per * directions:
        raise imp.node_error(
            node, f"activations lists {len(names)} functions ({', '.join(names)}); "
            f"{node.op_type} takes {per} per direction ({directions} here)")
    alphas = [float(a) for a in attrs.get("activation_alpha", [])]
    betas = [float(b) for b in attrs.get("activation_beta", [])]
    functions: list[ScalarFn] = []
    for name in names:
        if name.lower() not in _ACTIVATIONS:
            raise imp.node_error(
                node, f"activation '{name}' is not supported (onnxruntime implements "
                f"{', '.join(n for n, _, _ in _ACTIVATIONS.values())})")
        canonical, alpha, beta = _ACTIVATIONS[name.lower()]
        alpha = None if alpha is None else (alphas.pop(0) if alphas else alpha)
        beta = None if beta is None else (betas.pop(0) if betas else beta)
        functions.append(_activation(canonical, alpha or 0.0, beta or 0.0))
    if alphas or betas:
        raise imp.node_error(
            node, f"activation_alpha / activation_beta have {len(alphas)} / {len(betas)} values "
            f"more than the activations {', '.join(names)} take: remove them")
    return [functions[d * per:(d + 1) * per] for d in range(directions)]


def _check_shape(imp: Importer, node: onnx.NodeProto, role: str, shape: Shape, want: Shape,
                 why: str) -> None:
    if shape != want:
        raise imp.node_error(node, f"{role} has shape {list(shape)}; {node.op_type} takes "
                                   f"{list(want)} ({why})")


def _runs(imp: Importer, node: onnx.NodeProto, name: str, batch: int, seq: int
          ) -> list[tuple[int, int, int]]:
    """The runs of batch rows of one sequence length: (first row, rows, length)."""
    if not name:
        return [(0, batch, seq)]
    lengths = imp.known_ints(node, name, "sequence_lens")
    if len(lengths) != batch or not all(1 <= n <= seq for n in lengths):
        raise imp.node_error(
            node, f"sequence_lens {lengths} must hold one length from 1 to the sequence "
            f"length {seq} per batch entry ({batch})")
    runs: list[tuple[int, int, int]] = []
    for row, length in enumerate(lengths):
        if runs and runs[-1][2] == length:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1, length)
        else:
            runs.append((row, 1, length))
    return runs


def _choice(imp: Importer, node: onnx.NodeProto, name: str, value: Any, choices: Mapping[Any, T]
            ) -> T:
    """What attribute ``name``'s ``value`` means (refused unless one of ``choices``)."""
    if value not in choices:
        def shown(v: Any) -> str:
            return repr(v.decode(errors="replace") if isinstance(v, bytes) else v)

        raise imp.node_error(node, f"{name} = {shown(value)} is not one of "
                                   f"{', '.join(map(shown, choices))}")
    return choices[value]


@dataclass(frozen=True)
class _Layer:
    """A recurrent node's checked attributes and inputs: whether each direction runs in
    reverse, the layout, the sizes, the runs of batch rows of one sequence length (first row,
    rows, length), each direction's activations, initial_h (and initial_c) where given, and
    the names of the outputs ('' where not requested)."""

    reverses: tuple[bool, ...]
    layout: int
    seq: int
    batch: int
    runs: list[tuple[int, int, int]]
    activations: list[list[ScalarFn]]
    initial: list[Operand | None]
    outputs: list[str]


def _read_layer(imp: Importer, node: onnx.NodeProto, cell: _Cell) -> tuple[_Layer, _Unrolling]:
    """The node's attributes and inputs, each checked against the spec: the layer, and the
    unrolling's state before its first generic."""
    attrs: dict[str, Any] = node_attributes(node)
    x_name, w_name, r_name, b_name, lens_name, h0_name, *lstm = schema_inputs(
        imp, node, ("X", "W", "R"), cell.optional)
    outputs = computed_outputs(imp, node, cell.outputs, range(len(cell.outputs)))
    reverses = _choice(imp, node, "direction", attrs.get("direction", b"forward"), _DIRECTIONS)
    layout = _choice(imp, node, "layout", attrs.get("layout", 0), {0: 0, 1: 1})
    for flag in ("input_forget", "linear_before_reset"):
        _choice(imp, node, flag, attrs.get(flag, 0), {0: 0, 1: 1})
    directions = len(reverses)
    x = imp.use(x_name)
    if len(x[1]) != 3:
        raise imp.node_error(node, f"X has shape {list(x[1])}; it must have rank 3")
    seq, batch, size = (x[1][0], x[1][1], x[1][2]) if layout == 0 else (x[1][1], x[1][0], x[1][2])
    r = imp.use(r_name)
    if int(attrs.get("hidden_size", 0)) <= 0:  # ONNX would take R's size; onnxruntime refuses
        raise imp.node_error(node, "it has no positive hidden_size, which onnxruntime (the "
                                   "reference of --check) requires: give hidden_size = "
                                   f"{r[1][-1] if r[1] else 'the hidden size'}")
    hidden = int(attrs["hidden_size"])
    gates = cell.gates * hidden
    why = f"hidden_size {hidden}, {directions} direction(s), input size {size}"
    _check_shape(imp, node, "R", r[1], (directions, gates, hidden), why)
    w = imp.use(w_name)
    _check_shape(imp, node, "W", w[1], (directions, gates, size), why)
    clip = float(attrs["clip"]) if "clip" in attrs else None
    if clip is not None and not clip > 0:
        raise imp.node_error(node, f"clip = {clip} must be a positive threshold")
    bias = imp.use(b_name) if b_name else None
    if bias is not None:
        _check_shape(imp, node, "B", bias[1], (directions, 2 * gates), why)
    peepholes = imp.use(lstm[1]) if lstm and lstm[1] else None
    if peepholes is not None:
        _check_shape(imp, node, "P", peepholes[1], (directions, 3 * hidden), why)
    initial = [imp.use(n) if n else None for n in (h0_name, *lstm[:1])]
    state_shape = (directions, batch, hidden) if layout == 0 else (batch, directions, hidden)
    for role, given in zip(("initial_h", "initial_c"), initial, strict=False):
        if given is not None:
            _check_shape(imp, node, role, given[1], state_shape, f"{why}, layout {layout}")
    layer = _Layer(reverses, layout, seq, batch, _runs(imp, node, lens_name, batch, seq),
                   _activations(imp, node, cell, directions), initial, outputs)
    u = _Unrolling(imp, attrs, hidden, clip, r, bias, peepholes)
    u.xw = _input_contraction(u, x, w, layout, (directions, seq, batch, gates))
    return layer, u


@lowering("RNN", attributes=_COMMON_ATTRIBUTES)
@lowering("GRU", attributes=(*_COMMON_ATTRIBUTES, "linear_before_reset"))
@lowering("LSTM", attributes=(*_COMMON_ATTRIBUTES, "input_forget"))
def lower_recurrent(imp: Importer, node: onnx.NodeProto) -> None:
    """The layer unrolled (see the module docstring): the input contraction of every step,
    then per run of batch rows of one sequence length and per direction, its steps; Y, Y_h
    and Y_c assembled from their states."""
    cell = _CELLS[node.op_type]
    layer, u = _read_layer(imp, node, cell)
    runs = [[_unroll(layer, u, cell, run, d) for d in range(len(layer.reverses))]
            for run in layer.runs]
    _define_outputs(layer, u, runs)


def _unroll(layer: _Layer, u: _Unrolling, cell: _Cell, run: tuple[int, int, int], d: int
            ) -> tuple[list[Operand], _State]:
    """Direction ``d``'s steps over the batch rows of ``run``: each step's H by its time
    position, and the last state."""
    first, rows, length = run
    s = _Direction(u, d, first, rows, layer.activations[d])
    dim, const = AffineExpr.dimension, AffineExpr.constant
    exprs = ((const(d), dim(0) + first, dim(1)) if layer.layout == 0
             else (dim(0) + first, const(d), dim(1)))
    state = _State(*(None if given is None else u.view(given, s.shape, exprs)
                     for given in layer.initial))
    by_position: dict[int, Operand] = {}
    for k in range(length):
        s.position = length - 1 - k if layer.reverses[d] else k
        state = cell.step(s, state)
        by_position[s.position] = _defined(state.h)
    return [by_position[p] for p in range(length)], state


def _defined(value: Operand | None) -> Operand:
    """A state a step computed (every step defines H, and the LSTM's C)."""
    assert value is not None
    return value


def _define_outputs(layer: _Layer, u: _Unrolling, runs: list[list[tuple[list[Operand], _State]]]
                    ) -> None:
    """Y: each run's H placed by time position, direction (and zero past the run's length),
    the runs along the batch; Y_h (Y_c): the last H (C) by direction, the runs along the
    batch; each transposed to layout 1 where asked."""
    dim = AffineExpr.dimension
    directions, hidden = len(layer.reverses), u.hidden
    y_name, *final_names = layer.outputs
    if y_name:
        ys = []
        for (_, rows, length), directed in zip(layer.runs, runs, strict=True):
            y = u.concatenate([u.concatenate(
                [u.view(h, (1, 1, rows, hidden), (dim(2), dim(3))) for h in hs], 0)
                for hs, _ in directed], 1)
            if length < layer.seq:  # zero past the sequences' end
                y = u.view(y, (layer.seq, directions, rows, hidden), [dim(i) for i in range(4)],
                           padded=True)
            ys.append(y)
        y = u.concatenate(ys, 2)
        if layer.layout == 1:
            y = u.view(y, (layer.batch, layer.seq, directions, hidden),
                       transpose_map((2, 0, 1, 3)).results)
        u.imp.define(y_name, *y)
    for k, name in enumerate(final_names):
        if not name:
            continue
        finals = []
        for (_, rows, _), directed in zip(layer.runs, runs, strict=True):
            states = [_defined(state.c if k else state.h) for _, state in directed]
            finals.append(u.concatenate(
                [u.view(state, (1, rows, hidden), (dim(1), dim(2))) for state in states], 0))
        final = u.concatenate(finals, 1)
        if layer.layout == 1:
            final = u.view(final, (layer.batch, directions, hidden),
                           transpose_map((1, 0, 2)).results)
        u.imp.define(name, *final)


def _input_contraction(u: _Unrolling, x: Operand, w: Operand, layout: int, shape: Shape
                       ) -> Operand:
    """``X · W[d]ᵀ`` for every direction d and step: [directions, time, batch, gates ·
    hidden] (loops d, t, b, n, k), plus Wb and Rb (Wb alone with ``linear_before_reset``)."""
    dim = AffineExpr.dimension
    x_exprs = [dim(1), dim(2), dim(4)] if layout == 0 else [dim(2), dim(1), dim(4)]
    xw = u.imp.contraction(x[0], x_exprs, w[0], [dim(0), dim(3), dim(4)],
                           [dim(d) for d in range(4)], shape, 4, u.next_index())
    if u.b is None:
        return xw, shape
    directions, gates = shape[0], shape[3]
    offsets = (0,) if u.attributes.get("linear_before_reset", 0) else (0, gates)
    vectors = [u.view(u.b, (directions, 1, 1, gates), (dim(0), dim(3) + offset))
               for offset in offsets]
    total = u.imp.elementwise([(xw, shape), *vectors], shape,
                              lambda bb, v: functools.reduce(bb.add, v), u.next_index())
    return total, shape
