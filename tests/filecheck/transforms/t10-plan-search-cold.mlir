// RUN: t10-opt %s -p 't10-plan-search{chip="%S/Inputs/test-16-sram60000.json"}' | filecheck %s
// RUN: t10-opt %s -p 't10-plan-search{chip=test-16}' | filecheck %s --check-prefix=HOT

// Four matmuls whose weights fit resident in their fastest plans on test-16 (the HOT run: no
// weight is cold) but not in 60,000 bytes per core: there each keeps its weight cold, 4,096
// bytes in its home (host_layout over its 16 cores) instead of 8,192 in its plan's rotating
// layout (two buffers of a sixteenth), and pays the expansion into that layout every time it
// runs (in its t10.relayout: here each core already holds its first piece, so only a sync).

// CHECK:      t10.model_bytes = 57344 : i64
// CHECK:      ins(%x, %w0 : tensor<512x128xf32>, tensor<128x128xf32>)
// CHECK-SAME: t10.name = "mm0", t10.plan = #rtensor.plan<grid [16, 1, 1] shift d2 steps 16 rotate [(1, d0, 16)]>, t10.estimate = #rtensor.estimate<cycles = 75717, compute = 56624, exchange = 17205, sync = 1888, bytes = 40960>, t10.relayout = #rtensor.estimate<cycles = 118, compute = 0, exchange = 0, sync = 118, bytes = 8192>, t10.cold = array<i64: 1>}
// CHECK:      ins(%h0, %w1 : tensor<512x128xf32>, tensor<128x128xf32>)
// CHECK-SAME: t10.name = "mm1", t10.plan = #rtensor.plan<grid [16, 1, 1] shift d2 steps 16 rotate [(1, d0, 16)]>, t10.estimate = #rtensor.estimate<cycles = 75717, compute = 56624, exchange = 17205, sync = 1888, bytes = 40960>, t10.relayout = #rtensor.estimate<cycles = 118, compute = 0, exchange = 0, sync = 118, bytes = 8192>, t10.cold = array<i64: 1>}
// CHECK:      ins(%h1, %w2 : tensor<512x128xf32>, tensor<128x128xf32>)
// CHECK-SAME: t10.name = "mm2", t10.plan = #rtensor.plan<grid [16, 1, 1] shift d2 steps 16 rotate [(1, d0, 16)]>, t10.estimate = #rtensor.estimate<cycles = 75717, compute = 56624, exchange = 17205, sync = 1888, bytes = 40960>, t10.relayout = #rtensor.estimate<cycles = 118, compute = 0, exchange = 0, sync = 118, bytes = 8192>, t10.cold = array<i64: 1>}
// CHECK:      ins(%h2, %w3 : tensor<512x128xf32>, tensor<128x128xf32>)
// CHECK-SAME: t10.name = "mm3", t10.plan = #rtensor.plan<grid [16, 1, 1] shift d2 steps 16 rotate [(1, d0, 16)]>, t10.estimate = #rtensor.estimate<cycles = 75717, compute = 56624, exchange = 17205, sync = 1888, bytes = 40960>, t10.relayout = #rtensor.estimate<cycles = 118, compute = 0, exchange = 0, sync = 118, bytes = 8192>, t10.cold = array<i64: 1>}

// HOT:     t10.chip = "test-16"
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
  %w2 = arith.constant dense<1.000000e-02> : tensor<128x128xf32>
  %z2 = arith.constant dense<0.000000e+00> : tensor<512x128xf32>
  %h2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h1, %w2 : tensor<512x128xf32>, tensor<128x128xf32>) outs(%z2 : tensor<512x128xf32>) attrs = {t10.name = "mm2"} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<512x128xf32>
  %w3 = arith.constant dense<1.000000e-02> : tensor<128x128xf32>
  %z3 = arith.constant dense<0.000000e+00> : tensor<512x128xf32>
  %h3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h2, %w3 : tensor<512x128xf32>, tensor<128x128xf32>) outs(%z3 : tensor<512x128xf32>) attrs = {t10.name = "mm3"} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<512x128xf32>
  func.return %h3 : tensor<512x128xf32>
}
