// RUN: t10-opt %s -p convert-rtensor-to-cshift | filecheck %s

// A Cannon plan (2x2 cores, k in 2 steps, A rotating on ring d1 and B on ring d0) becomes
// a compute_shift with its per-step sizes; a plan splitting k over 2 cores computes
// partial sums that an all_reduce over d2 combines.
func.func @main(%x: tensor<4x6xf32> {t10.name = "x"}, %w: tensor<6x4xf32> {t10.name = "w"}) -> (tensor<4x4xf32> {t10.name = "y"}, tensor<4x4xf32> {t10.name = "y2"}) {
  %0 = rtensor.distribute %x : tensor<4x6xf32> -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, -] tile [2, 6] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
  %1 = rtensor.distribute %w : tensor<6x4xf32> -> !rtensor.tensor<6x4xf32, #rtensor.layout<grid [2, 2, 1] axes [-, d1] tile [6, 2] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
  %mm = rtensor.generic "cannon"(%0, %1) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], plan = #rtensor.plan<grid [2, 2, 1] shift d2 steps 2 rotate [(0, d1, 2), (1, d0, 2)]>} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, -] tile [2, 6] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, !rtensor.tensor<6x4xf32, #rtensor.layout<grid [2, 2, 1] axes [-, d1] tile [6, 2] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<4x4xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, d1] tile [2, 2]>> {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %mm_1 = rtensor.collect %mm : !rtensor.tensor<4x4xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, d1] tile [2, 2]>> -> tensor<4x4xf32>
  %2 = rtensor.distribute %x : tensor<4x6xf32> -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [4, 3]>>
  %3 = rtensor.distribute %w : tensor<6x4xf32> -> !rtensor.tensor<6x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [3, 2]>>
  %mm2 = rtensor.generic "split_k"(%2, %3) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], plan = #rtensor.plan<grid [1, 2, 2]>} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [4, 3]>>, !rtensor.tensor<6x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [3, 2]>>) -> !rtensor.tensor<4x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [4, 2]>> {
  ^bb0(%a_1: f32, %b_1: f32, %acc_1: f32):
    %p_1 = arith.mulf %a_1, %b_1 : f32
    %s_1 = arith.addf %acc_1, %p_1 : f32
    linalg.yield %s_1 : f32
  }
  %mm2_1 = rtensor.collect %mm2 : !rtensor.tensor<4x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [4, 2]>> -> tensor<4x4xf32>
  func.return %mm_1, %mm2_1 : tensor<4x4xf32>, tensor<4x4xf32>
}


// CHECK:      %mm = cshift.compute_shift "cannon"(%0, %1) steps 2 shift 2 sizes [2, 2, 3] rotate [1, 0] partial [] {{.*}} -> !rtensor.tensor<4x4xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, d1] tile [2, 2]>> {
// CHECK:      %mm2 = cshift.compute_shift "split_k"(%2, %3) steps 1 shift -1 sizes [4, 2, 3] rotate [-1, -1] partial [2] {{.*}} -> !rtensor.tensor<4x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [4, 2]>> {
// CHECK:      %mm2_1 = cshift.all_reduce "sum" %mm2 over [2] : !rtensor.tensor<4x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [4, 2]>>
// CHECK-NEXT: %mm2_2 = rtensor.collect %mm2_1
// CHECK-NOT:  rtensor.generic
