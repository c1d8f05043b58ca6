"""T10 on xDSL: the public Python API (see docs/embedding.md).

The names in `__all__` are the API a downstream compiler may rely on: the chip spec, the
compiler and simulator entry points, the pass classes (xDSL `ModulePass`es, to put in a
`PassPipeline`) and our dialects. Every other module and name is internal and may change.
Names load on first use (PEP 562), so `import t10` stays cheap for `xdsl-opt`'s plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from t10.common.lazy_names import lazy_names

if TYPE_CHECKING:
    from t10.common.chip_spec import ChipSpec, builtin_chip_names, load_chip
    from t10.driver import (
        Compiled,
        RunResult,
        compile_model,
        compile_module,
        make_context,
        run_model,
    )
    from t10.errors import T10Error
    from t10.frontend import import_onnx
    from t10.lowering.convert_core_to_chip import ConvertCoreToChip
    from t10.lowering.convert_cshift_to_core import ConvertCShiftToCore
    from t10.lowering.convert_linalg_to_rtensor import ConvertLinalgToRTensor
    from t10.lowering.convert_rtensor_to_cshift import ConvertRTensorToCShift
    from t10.outputs.run_report import RunReport
    from t10.passes.t10_compile import T10Compile
    from t10.passes.t10_fuse_elementwise import T10FuseElementwise
    from t10.passes.t10_fuse_epilogue import T10FuseEpilogue
    from t10.passes.t10_inline_splats import T10InlineSplats
    from t10.passes.t10_plan_search import T10PlanSearch
    from t10.planning.compile_options import CompileOptions
    from t10.sim.simulator import SimResult, simulate
    from t10.t10_dialects import DIALECTS

_HOMES: dict[str, str] = {
    "ChipSpec": "t10.common.chip_spec",
    "builtin_chip_names": "t10.common.chip_spec",
    "load_chip": "t10.common.chip_spec",
    "Compiled": "t10.driver",
    "CompileOptions": "t10.planning.compile_options",
    "RunResult": "t10.driver",
    "RunReport": "t10.outputs.run_report",
    "compile_model": "t10.driver",
    "compile_module": "t10.driver",
    "make_context": "t10.driver",
    "run_model": "t10.driver",
    "T10Error": "t10.errors",
    "import_onnx": "t10.frontend",
    "ConvertCoreToChip": "t10.lowering.convert_core_to_chip",
    "ConvertCShiftToCore": "t10.lowering.convert_cshift_to_core",
    "ConvertLinalgToRTensor": "t10.lowering.convert_linalg_to_rtensor",
    "ConvertRTensorToCShift": "t10.lowering.convert_rtensor_to_cshift",
    "T10Compile": "t10.passes.t10_compile",
    "T10FuseElementwise": "t10.passes.t10_fuse_elementwise",
    "T10FuseEpilogue": "t10.passes.t10_fuse_epilogue",
    "T10InlineSplats": "t10.passes.t10_inline_splats",
    "T10PlanSearch": "t10.passes.t10_plan_search",
    "SimResult": "t10.sim.simulator",
    "simulate": "t10.sim.simulator",
    "DIALECTS": "t10.t10_dialects",
}
"""Each public name → the module that defines it."""

__all__ = [
    "ChipSpec",
    "CompileOptions",
    "Compiled",
    "ConvertCShiftToCore",
    "ConvertCoreToChip",
    "ConvertLinalgToRTensor",
    "ConvertRTensorToCShift",
    "DIALECTS",
    "RunReport",
    "RunResult",
    "SimResult",
    "T10Compile",
    "T10Error",
    "T10FuseElementwise",
    "T10FuseEpilogue",
    "T10InlineSplats",
    "T10PlanSearch",
    "builtin_chip_names",
    "compile_model",
    "compile_module",
    "import_onnx",
    "load_chip",
    "make_context",
    "run_model",
    "simulate",
]


__getattr__, __dir__ = lazy_names("t10", _HOMES, globals())
