// The embedding example of docs/embedding.md, from the shell: hand-written linalg MLIR
// through xDSL's linalg-generalize-named-ops, t10's whole pipeline and the simulator.
// RUN: t10-opt %S/../../../examples/embedding/mlp.mlir -p 'linalg-generalize-named-ops,t10-compile{chip=ipu-mk2}' -t t10-sim | filecheck %s
// RUN: t10-opt %S/../../../examples/embedding/mlp.mlir -p 'linalg-generalize-named-ops,t10-plan-search{chip=test-16}' | filecheck %s --check-prefix=PLAN
// RUN: not t10-opt %S/../../../examples/embedding/mlp.mlir -p 't10-compile{chip=test-16}' 2>&1 | filecheck %s --check-prefix=NAMED
// The Python side of the example (its own pass among xDSL's and t10's in one PassPipeline):
// RUN: %python %S/../../../examples/embedding/pipeline.py --chip test-16 | filecheck %s --check-prefix=PY

// CHECK:      chip    ipu-mk2: 1,472 cores
// CHECK:      linalg.generic+bias_relu  contraction
// CHECK-NEXT: linalg.generic/relayout   relayout
// CHECK-NEXT: linalg.generic            contraction

// The plan search records its choice on each generic (the named ops are generics by now).
// PLAN:      builtin.module attributes {t10.chip = "test-16", t10.planner = "t10"
// PLAN:        linalg.generic {{.*}} ins(%x, %w1 : tensor<16x32xf32>, tensor<32x64xf32>)
// PLAN-SAME:     t10.plan = #rtensor.plan<
// PLAN:        linalg.generic {{.*}} ins(%h, %b1 : tensor<16x64xf32>, tensor<1x64xf32>)
// PLAN-SAME:     t10.name = "bias_relu", t10.plan = #rtensor.plan<
// PLAN:        linalg.generic {{.*}} ins(%r, %w2 : tensor<16x64xf32>, tensor<64x8xf32>)
// PLAN-SAME:     t10.plan = #rtensor.plan<

// Left as named ops, they are refused with the fix.
// NAMED: t10-opt: error: t10-compile: t10-plan-search: 'linalg.matmul' is a named linalg op, which t10 does not plan; run xDSL's 'linalg-generalize-named-ops' pass first to make it a linalg.generic

// PY:      {{[0-9,]+}} cycles on test-16; max |error| {{.*}}
// PY-NEXT:   matmul0
// PY:        bias_relu
// PY:        matmul1
