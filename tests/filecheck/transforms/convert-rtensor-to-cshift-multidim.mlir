// RUN: t10-opt %s -p convert-rtensor-to-cshift | filecheck %s

// A plan with two temporal dims: the compute_shift names the outer dim and its steps before
// the inner ones; its step sizes cut both (n: 2 / 2 = 1, k: 4 / 2 = 2); A rotates on ring
// d1, the output on ring d2 (so no axis is partial).
func.func @main(%x: tensor<2x8xf32> {t10.name = "x"}) -> (tensor<2x4xf32> {t10.name = "y"}) {
  %w = arith.constant dense<1.000000e+00> : tensor<8x4xf32>
  %0 = rtensor.distribute %x : tensor<2x8xf32> -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 4] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>>
  %1 = rtensor.distribute %w : tensor<8x4xf32> -> !rtensor.tensor<8x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [4, 2]>>
  %mm = rtensor.generic "mm"(%0, %1) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], plan = #rtensor.plan<grid [1, 2, 2] shift d1 steps 2 rotate [(out, d2, 2)] shift d2 steps 2 rotate [(0, d1, 2)]>} : (!rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 4] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>>, !rtensor.tensor<8x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [4, 2]>>) -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 2] rotate 1 ring d2 x 2 steps 2 skew [(d2, 2, 1)] phase 1>> {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %mm_1 = rtensor.collect %mm : !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 2] rotate 1 ring d2 x 2 steps 2 skew [(d2, 2, 1)] phase 1>> -> tensor<2x4xf32>
  func.return %mm_1 : tensor<2x4xf32>
}

// CHECK: %mm = cshift.compute_shift "mm"(%0, %1) outer steps 2 shift 1 steps 2 shift 2 sizes [2, 1, 2] rotate [1, -1] out 2 partial [] {{.*}} -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 2] rotate 1 ring d2 x 2 steps 2 skew [(d2, 2, 1)] phase 1>> {
