// RUN: t10-opt %s -p convert-linalg-to-rtensor | filecheck %s

// The smallest plan with two temporal dims: n (d1) in 2 outer steps, along which the
// output's partial sums rotate on the ring of the 2 cores splitting k (d2), and k in 2 inner
// steps, along which A rotates on the ring along n. The plan prints as written (outer first);
// A rotates along k, the output along n with phase 1 (after its last outer step), B (which
// reads both) does not rotate.
func.func @main(%x: tensor<2x8xf32> {t10.name = "x"}) -> (tensor<2x4xf32> {t10.name = "y"}) {
  %w = arith.constant dense<1.000000e+00> : tensor<8x4xf32>
  %z = arith.constant dense<0.000000e+00> : tensor<2x4xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) attrs = {t10.name = "mm", t10.plan = #rtensor.plan<grid [1, 2, 2] shift d1 steps 2 rotate [(out, d2, 2)] shift d2 steps 2 rotate [(0, d1, 2)]>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  func.return %mm : tensor<2x4xf32>
}

// CHECK:      %0 = rtensor.distribute %x : tensor<2x8xf32> -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 4] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>>
// CHECK-NEXT: %1 = rtensor.distribute %w : tensor<8x4xf32> -> !rtensor.tensor<8x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [4, 2]>>
// CHECK-NEXT: %mm = rtensor.generic "mm"(%0, %1) {{.*}} plan = #rtensor.plan<grid [1, 2, 2] shift d1 steps 2 rotate [(out, d2, 2)] shift d2 steps 2 rotate [(0, d1, 2)]>} : ({{.*}}) -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 2] rotate 1 ring d2 x 2 steps 2 skew [(d2, 2, 1)] phase 1>> {
// CHECK:      %mm_1 = rtensor.collect %mm
