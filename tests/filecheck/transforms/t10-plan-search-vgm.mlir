// RUN: t10-opt %s --verify-diagnostics -p 't10-plan-search{chip=test-16 planner=vgm}' | filecheck %s
// RUN: not t10-opt %s -p 't10-plan-search{chip=test-16 planner=vgm search=exact}' 2>&1 | filecheck %s --check-prefix=SEARCH

// The vgm planner (Roller-style virtual global memory): every tensor has a home,
// `host_layout` over all 16 cores (`t10.home_cores`); an operator loads its inputs from their
// homes (`t10.relayout`: here x and the weight, split on their rows over 16 cores, into the
// matmul's 4 x 4 grid), computes, and stores its output into its home (`t10.store`). Each
// operator takes the plan of least load + compute + store cycles on its own: the ReLU's
// plan places its input and output exactly as their home, so it loads and stores nothing
// (a zero store, no `t10.relayout`).

// CHECK:      builtin.module attributes {t10.home_cores = 16 : i64, t10.chip = "test-16", t10.planner = "vgm", t10.precision = "fp32", t10.partials = "fp32", t10.model_bytes = 3712 : i64, t10.bound = {{[0-9]+}} : i64, t10.planned_ops = [{{.*}}]} {
// CHECK:      t10.name = "mm", t10.plan = #rtensor.plan<grid [4, 1, 4]>, t10.estimate = #rtensor.estimate<cycles = 2126, compute = 1340, exchange = 432, sync = 354, bytes = 2816>, t10.relayout = #rtensor.estimate<cycles = 488, compute = 0, exchange = 252, sync = 236, bytes = 512>, t10.store = #rtensor.estimate<cycles = 118, compute = 0, exchange = 0, sync = 118, bytes = 256>}
// CHECK:      t10.name = "relu", t10.plan = #rtensor.plan<grid [16, 1]>, t10.estimate = #rtensor.estimate<cycles = 350, compute = 232, exchange = 0, sync = 118, bytes = 512>, t10.store = #rtensor.estimate<cycles = 0, compute = 0, exchange = 0, sync = 0, bytes = 0>}
// SEARCH: {{^}}t10-opt: error: t10-plan-search: planner=vgm chooses every operator's plan on its own; search is a rule of the other planners{{$}}

builtin.module {
  func.func @main(%x: tensor<64x32xf32> {t10.name = "x"}) -> (tensor<64x16xf32> {t10.name = "y"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<32x16xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x16xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x32xf32>, tensor<32x16xf32>) outs(%z : tensor<64x16xf32>) attrs = {t10.name = "mm"} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x16xf32>
    %e = tensor.empty() : tensor<64x16xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<64x16xf32>) outs(%e : tensor<64x16xf32>) attrs = {t10.name = "relu"} {
    ^bb0(%a: f32, %o: f32):
      %zero = arith.constant 0.000000e+00 : f32
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<64x16xf32>
    func.return %r : tensor<64x16xf32>
  }
}
