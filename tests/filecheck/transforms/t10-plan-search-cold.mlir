// RUN: t10-opt %s -p 't10-plan-search{chip="%S/Inputs/test-16-sram60000.json"}' | filecheck %s
// RUN: t10-opt %s -p 't10-plan-search{chip=test-16}' | filecheck %s --check-prefix=HOT

// Two matmuls whose weights fit resident in their fastest plans on test-16 (the HOT run: no
// weight is cold) but not in 60,000 bytes per core: there each keeps its weight cold, 4,096
// bytes in its home (host_layout over its 16 cores) instead of 16,384 in its plan's rotating
// layout, and pays the expansion into that layout (in its t10.relayout) every time it runs.

// CHECK:      t10.model_bytes = 57344 : i64
// CHECK:      ins(%x, %w0 : tensor<512x128xf32>, tensor<128x128xf32>)
// CHECK-SAME: t10.name = "mm0", t10.plan = #rtensor.plan<grid [16, 1, 1] shift d2 steps 8 rotate [(1, d0, 8)]>, t10.estimate = #rtensor.estimate<cycles = 70434, compute = 53432, exchange = 16058, sync = 944, bytes = 49152>, t10.relayout = #rtensor.estimate<cycles = 2412, compute = 0, exchange = 2294, sync = 118, bytes = 16384>, t10.cold = array<i64: 1>}
// CHECK:      ins(%h0, %w1 : tensor<512x128xf32>, tensor<128x128xf32>)
// CHECK-SAME: t10.name = "mm1", t10.plan = #rtensor.plan<grid [16, 1, 1] shift d2 steps 8 rotate [(1, d0, 8)]>, t10.estimate = #rtensor.estimate<cycles = 70434, compute = 53432, exchange = 16058, sync = 944, bytes = 49152>, t10.relayout = #rtensor.estimate<cycles = 2412, compute = 0, exchange = 2294, sync = 118, bytes = 16384>, t10.cold = array<i64: 1>}

// HOT-NOT: t10.cold
// HOT:     t10.name = "mm0"
// HOT-NOT: t10.cold
// HOT:     t10.name = "mm1"
// HOT-NOT: t10.cold

func.func @main(%x: tensor<512x128xf32> {t10.name = "x"}) -> (tensor<512x128xf32> {t10.name = "y"}) {
  %w0 = arith.constant dense<1.000000e-02> : tensor<128x128xf32>
  %z0 = arith.constant dense<0.000000e+00> : tensor<512x128xf32>
  %h0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w0 : tensor<512x128xf32>, tensor<128x128xf32>) outs(%z0 : tensor<512x128xf32>) attrs = {t10.name = "mm0"} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<512x128xf32>
  %w1 = arith.constant dense<1.000000e-02> : tensor<128x128xf32>
  %z1 = arith.constant dense<0.000000e+00> : tensor<512x128xf32>
  %h1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h0, %w1 : tensor<512x128xf32>, tensor<128x128xf32>) outs(%z1 : tensor<512x128xf32>) attrs = {t10.name = "mm1"} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<512x128xf32>
  func.return %h1 : tensor<512x128xf32>
}
