"""The model's dataflow as the plan search reads it off the IR: which operator feeds which
input of which (`dataflow_edges`), how long each tensor lives (`model_liveness`), what leaves
the chip, and the gathers of runtime ids made on chip for no operator (`made_gathers`)."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import SSAValue

from t10.common.move_costs import IDS_BYTES, GatherSpec
from t10.planning.layout_transitions import Edge
from t10.planning.memory_reconciliation import Liveness, ReturnedView
from t10.planning.operators import Operator
from t10.planning.vgm_plans import gather_spec
from t10.t10_dialects.rtensor import GatherOp, ViewOp, tensor_type, through_views


def operator_index(operators: list[Operator]) -> dict[int, int]:
    """id of each generic (and epilogue) -> the index of its operator."""
    return {id(g): i for i, o in enumerate(operators) for g in o.ops()}


def dataflow_edges(operators: list[Operator]) -> list[Edge]:
    """Which operator's output feeds which input of which operator, through which views;
    which inputs view a host value (a function argument placed on chip to be viewed); and
    which inputs are gathers of runtime ids."""
    index = operator_index(operators)
    edges = []
    placed: set[int] = set()  # viewed gather tables and ids, placed by their first reader
    for i, operator in enumerate(operators):
        for k, value in enumerate(operator.inputs):
            source, view = through_views(value)
            producer = index.get(id(source.owner))
            if isinstance(source.owner, GatherOp):
                spec = gather_spec(source.owner, placed, lambda v: index.get(id(v.owner)))
                edges.append(Edge(None, i, k, view, gather=spec))
            elif producer is not None:
                edges.append(Edge(producer, i, k, view))
            elif view is not None:
                assert isinstance(source.type, TensorType)
                edges.append(Edge(None, i, k, view, source.type.get_shape()))
    return edges


def model_liveness(module: ModuleOp, operators: list[Operator], elem_bytes: int) -> Liveness:
    """Which generics read each generic's output (through views and gathers; a view
    returned from the function is moved where the view stands, so the generic before it
    counts as a reader; returning an output is no read: it leaves the chip right after
    its generic); the host tensors placed for the whole program (host tensors of
    `elem_bytes`, ids of `IDS_BYTES`, each once): the gathers' tables and ids, the gathers
    returned from the function, the host sources of returned views; and the returned views
    (`ReturnedView`)."""
    index = operator_index(operators)
    position: dict[int, int] = {}  # op → the index of the last generic before it (-1: none)
    current = -1
    for o in module.walk():
        current = index.get(id(o), current)
        position[id(o)] = current

    def readers(value: SSAValue) -> set[int]:
        found = set()
        for use in value.uses:
            user = use.operation
            if isinstance(user, func.ReturnOp):
                continue  # collected where it is made (convert-linalg-to-rtensor)
            found.add(index.get(id(user), position[id(user)]))
            if isinstance(user, ViewOp | GatherOp):
                found |= readers(user.results[0])
        return found

    reads = tuple(
        tuple(sorted(k for k in readers(o.result) if k > i)) for i, o in enumerate(operators)
    )
    placed: dict[tuple[int, int], tuple[tuple[int, ...], int]] = {}

    def place(value: SSAValue, eb: int) -> None:
        assert isinstance(value.type, TensorType)
        placed[(id(value), eb)] = (tuple(value.type.get_shape()), eb)

    returned: list[ReturnedView] = []
    for o in module.walk():
        if isinstance(o, GatherOp):
            for value, eb in ((o.table, elem_bytes), (o.ids, IDS_BYTES)):
                source, _ = through_views(value)
                if id(source.owner) not in index:  # a host tensor: placed for the program
                    place(value, eb)
                    if source is not value:
                        place(source, eb)
            if _leaves_chip(o.result):  # made on chip in host_layout
                place(o.result, elem_bytes)
        elif isinstance(o, ViewOp) and is_returned(o.result):
            source, view = through_views(o.result)
            producer = index.get(id(source.owner))
            if producer is None:
                place(source, elem_bytes)  # a host tensor or a gather
            shape = tuple(tensor_type(o.result).get_shape())
            label = o.label.data
            assert isinstance(source.type, TensorType)
            returned.append(
                ReturnedView(
                    position[id(o)], shape, elem_bytes, producer, label,
                    tuple(source.type.get_shape()), view,
                )
            )
    return Liveness(reads, tuple(placed.values()), returned=tuple(returned))


def is_returned(value: SSAValue) -> bool:
    """Whether `value` itself (not only views of it) leaves the chip: an operation other
    than a view, a generic or a gather reads it (the function's return)."""
    return any(
        not isinstance(use.operation, ViewOp | GatherOp | GenericOp) for use in value.uses
    )


def _leaves_chip(value: SSAValue) -> bool:
    """Whether `value` or a view of it is returned from the function."""
    return is_returned(value) or any(
        isinstance(use.operation, ViewOp) and _leaves_chip(use.operation.results[0])
        for use in value.uses
    )


def made_gathers(
    module: ModuleOp, operators: list[Operator]
) -> tuple[list[GatherOp], list[GatherSpec]]:
    """The gathers of runtime ids made on chip for no operator (`_made_for_no_operator`),
    with their specs; viewed tables and ids are placed by the first gather that reads them,
    the operators' gathers first (as convert-linalg-to-rtensor makes them)."""
    index = operator_index(operators)

    def producer_of(value: SSAValue) -> int | None:
        return index.get(id(value.owner))

    placed: set[int] = set()
    for operator in operators:
        for value in operator.inputs:
            source, _ = through_views(value)
            if isinstance(source.owner, GatherOp):
                gather_spec(source.owner, placed, producer_of)
    gathers = [
        o for o in module.walk()
        if isinstance(o, GatherOp) and _made_for_no_operator(o.result)
    ]
    return gathers, [gather_spec(o, placed, producer_of) for o in gathers]


def _made_for_no_operator(value: SSAValue) -> bool:
    """Whether `value` (a gather's result) is read, directly or through views, by something
    other than a generic: returned from the function, or read by another gather."""
    return any(
        _made_for_no_operator(use.operation.results[0])
        if isinstance(use.operation, ViewOp)
        else not isinstance(use.operation, GenericOp)
        for use in value.uses
    )


