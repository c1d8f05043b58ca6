// RUN: %python -m t10.examples matmul m=8 k=12 n=6 -o %t.onnx
// RUN: xdsl-opt %t.onnx | filecheck %s --check-prefix=ONNX
// RUN: xdsl-opt %t.onnx -p 't10-compile{chip=test-16}' | filecheck %s
// RUN: xdsl-opt %t.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM
// RUN: xdsl-opt --help | tr -d ' \n' | filecheck %s --check-prefix=HELP

// Plain xdsl-opt loads the plugin (entry point `xdsl.universe`): this test keeps it; the
// others use t10-opt.

// xdsl-opt reads ONNX directly (the `onnx` frontend, chosen by the file extension).
// ONNX:      func.func @main(%input: tensor<8x12xf32> {t10.name = "input"}) -> (tensor<8x6xf32> {t10.name = "output"}) {
// ONNX:        %weight = arith.constant dense<{{.*}}> : tensor<12x6xf32>
// ONNX:        linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%input, %weight : tensor<8x12xf32>, tensor<12x6xf32>)
// ONNX-SAME:   t10.name = "matmul"

// t10-compile runs the plan search and every conversion: one chip program of supersteps.
// CHECK:      builtin.module attributes {t10.chip = "test-16", t10.planner = "t10", t10.precision = "fp32", t10.partials = "fp32", t10.model_bytes = 156 : i64, t10.bound = {{[0-9]+}} : i64, t10.planned_ops = [{{.*}}]} {
// CHECK:        %{{.*}} = chip.program "main" on {{[0-9]+}} -> tensor<8x6xf32> {
// CHECK:          core.load %input into
// CHECK:          chip.superstep "matmul" {
// CHECK-NEXT:       core.kernel "matmul"
// CHECK:          chip.yield %{{.*}} : tensor<8x6xf32>
// CHECK-NOT:    linalg.generic
// CHECK-NOT:    rtensor.
// CHECK-NOT:    cshift.

// The t10-sim target simulates the chip program on seeded inputs and prints the report.
// SIM:      chip    test-16: 16 cores, 262,144 B SRAM per core
// SIM:      total   {{[0-9,]+}} cycles
// SIM:      matmul  contraction

// Every pass of the project is registered with xdsl-opt.
// HELP: t10-plan-search
// HELP-SAME: convert-linalg-to-rtensor
// HELP-SAME: convert-rtensor-to-cshift
// HELP-SAME: convert-cshift-to-core
// HELP-SAME: convert-core-to-chip
// HELP-SAME: t10-compile
