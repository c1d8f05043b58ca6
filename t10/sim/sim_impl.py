"""`sim_impl`: xDSL's `impl` for the simulator's op implementations, with errors that stop.

xDSL 0.75's interpreter catches every `Exception` an op implementation raises and re-raises it
with the whole module printed into its notes, once per nesting level (program, superstep,
loop, kernel): with dense weights that takes seconds and buries the one-line message. It has
no public hook to change that, so a `T10Error` raised in a `sim_impl` leaves it as
`SimulationStopped`, a `BaseException` that handler lets through; `simulate` re-raises the
`T10Error` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    NonTerminatorOpImpl,
    OpImpl,
    PythonValues,
    impl,
)
from xdsl.ir import Operation

from t10.errors import T10Error


class SimulationStopped(BaseException):
    """Carries the `T10Error` that stopped the simulation out of the interpreter."""

    def __init__(self, error: T10Error):
        super().__init__(error)
        self.error = error


FunctionsT = TypeVar("FunctionsT", bound=InterpreterFunctions)
OpT = TypeVar("OpT", bound=Operation)


def sim_impl(
    op_type: type[OpT],
) -> Callable[[NonTerminatorOpImpl[FunctionsT, OpT]], OpImpl[FunctionsT, OpT]]:
    """`@impl(op_type)` whose `T10Error` stops the simulation (see the module docstring)."""

    def annotate(run: NonTerminatorOpImpl[FunctionsT, OpT]) -> OpImpl[FunctionsT, OpT]:
        def stopping(
            functions: FunctionsT, interpreter: Interpreter, op: OpT, args: PythonValues
        ) -> PythonValues:
            try:
                return run(functions, interpreter, op, args)
            except T10Error as error:
                raise SimulationStopped(error) from None

        return impl(op_type)(stopping)

    return annotate
