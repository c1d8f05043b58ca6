// RUN: t10-opt %s -p 't10-fuse-elementwise,t10-plan-search{chip=test-16}' --print-ir-after t10-fuse-elementwise 2>&1 >/dev/null | filecheck %s
// RUN: t10-opt %s -p 't10-fuse-elementwise,t10-plan-search{chip=test-16}' --print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=ALL
// RUN: not t10-opt %s -p 't10-fuse-elementwise' --print-ir-after t10-plan-search 2>&1 | filecheck %s --check-prefix=BAD

// The IR after a named pass goes to stderr (the output IR stays on stdout), in mlir-opt's
// layout: a header naming the pass, then the module.
func.func @main(%x: tensor<4x8xf32> {t10.name = "x"}) -> (tensor<4x8xf32> {t10.name = "y"}) {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) attrs = {t10.name = "exp"} {
  ^bb0(%p: f32, %o: f32):
    %s = math.exp %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) attrs = {t10.name = "neg"} {
  ^bb0(%p: f32, %o: f32):
    %s = arith.negf %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  func.return %b : tensor<4x8xf32>
}

// CHECK:      // -----// IR Dump After t10-fuse-elementwise //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        linalg.generic
// CHECK-SAME:     t10.name = "exp+neg"
// CHECK-NOT:    t10.plan
// CHECK-NOT:  IR Dump After

// ALL:      // -----// IR Dump After t10-fuse-elementwise //----- //
// ALL-NOT:  t10.plan
// ALL:      // -----// IR Dump After t10-plan-search //----- //
// ALL:        t10.plan = #rtensor.plan<

// BAD: t10-opt: error: --print-ir-after: 't10-plan-search' is not a pass of the pipeline (its passes: t10-fuse-elementwise)
