// RUN: t10-opt %s -p convert-rtensor-to-cshift --split-input-file | filecheck %s

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

// -----

// A relayout between two operators (here carrying a transposing view) is already an
// exchange: it stays as it is, between the two compute_shifts.
func.func @main(%x: tensor<4x2xf32> {t10.name = "x"}) -> (tensor<2x4xf32> {t10.name = "y"}) {
  %0 = rtensor.distribute %x : tensor<4x2xf32> -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 2] axes [d0, d1] tile [1, 1]>>
  %a = rtensor.generic "n1"(%0) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], plan = #rtensor.plan<grid [4, 2]>} : (!rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 2] axes [d0, d1] tile [1, 1]>>) -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 2] axes [d0, d1] tile [1, 1]>> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.negf %1 : f32
    linalg.yield %3 : f32
  }
  %t = rtensor.relayout "n2/relayout" %a map affine_map<(d0, d1) -> (d1, d0)> : !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 2] axes [d0, d1] tile [1, 1]>> -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2, 4] axes [d0, d1] tile [1, 1]>>
  %y = rtensor.generic "n2"(%t) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], plan = #rtensor.plan<grid [2, 4]>} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [2, 4] axes [d0, d1] tile [1, 1]>>) -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2, 4] axes [d0, d1] tile [1, 1]>> {
  ^bb0(%4: f32, %5: f32):
    %6 = arith.negf %4 : f32
    linalg.yield %6 : f32
  }
  %y_1 = rtensor.collect %y : !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2, 4] axes [d0, d1] tile [1, 1]>> -> tensor<2x4xf32>
  func.return %y_1 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<4x2xf32>
// CHECK:         %a = cshift.compute_shift "n1"(%0) steps 1 shift -1 sizes [1, 1] rotate [-1] partial [] {{.*}} -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 2] axes [d0, d1] tile [1, 1]>> {
// CHECK:         %t = rtensor.relayout "n2/relayout" %a map affine_map<(d0, d1) -> (d1, d0)> : !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 2] axes [d0, d1] tile [1, 1]>> -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2, 4] axes [d0, d1] tile [1, 1]>>
// CHECK-NEXT:    %y = cshift.compute_shift "n2"(%t) steps 1 shift -1 sizes [1, 1] rotate [-1] partial [] {{.*}} -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2, 4] axes [d0, d1] tile [1, 1]>> {
// CHECK-NOT:     rtensor.generic

// -----

// A gather of runtime ids stays as it is too: the compute_shift of its reader reads it.
func.func @main(%ids: tensor<2xf32> {t10.name = "ids"}) -> (tensor<2x2xf32> {t10.name = "y"}) {
  %0 = rtensor.distribute %ids : tensor<2xf32> -> !rtensor.tensor<2xf32, #rtensor.layout<grid [2] axes [d0] tile [1]>>
  %table = arith.constant dense<1.000000e+00> : tensor<4x2xf32>
  %1 = rtensor.distribute %table : tensor<4x2xf32> -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [1, 2]>>
  %2 = rtensor.gather "neg/gather" %1[%0] axis 0 : (!rtensor.tensor<4x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [1, 2]>>, !rtensor.tensor<2xf32, #rtensor.layout<grid [2] axes [d0] tile [1]>>) -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>>
  %y = rtensor.generic "neg"(%2) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], plan = #rtensor.plan<grid [2, 2]>} : (!rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>>) -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>> {
  ^bb0(%3: f32, %4: f32):
    %5 = arith.negf %3 : f32
    linalg.yield %5 : f32
  }
  %y_1 = rtensor.collect %y : !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>> -> tensor<2x2xf32>
  func.return %y_1 : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @main(%ids
// CHECK:         %2 = rtensor.gather "neg/gather" %1[%0] axis 0 : (!rtensor.tensor<4x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [1, 2]>>, !rtensor.tensor<2xf32, #rtensor.layout<grid [2] axes [d0] tile [1]>>) -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>>
// CHECK-NEXT:    %y = cshift.compute_shift "neg"(%2) steps 1 shift -1 sizes [1, 1] rotate [-1] partial [] {{.*}} -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>> {
// CHECK-NOT:     rtensor.generic

// -----

// An output-rotating plan (k split over a ring of 2 cores, n in 4 steps): the result's
// partial sums rotate on ring d2 (`out 2`), so d2 is no partial axis and no all_reduce
// follows; the inputs do not rotate.
func.func @main(%x: tensor<2x4xf32> {t10.name = "x"}, %w: tensor<4x8xf32> {t10.name = "w"}) -> (tensor<2x8xf32> {t10.name = "y"}) {
  %0 = rtensor.distribute %x : tensor<2x4xf32> -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
  %1 = rtensor.distribute %w : tensor<4x8xf32> -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
  %mm = rtensor.generic "mm"(%0, %1) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], plan = #rtensor.plan<grid [1, 2, 2] shift d1 steps 4 rotate [(out, d2, 2)]>} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %mm_1 = rtensor.collect %mm : !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> -> tensor<2x8xf32>
  func.return %mm_1 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<2x4xf32>
// CHECK:         %mm = cshift.compute_shift "mm"(%0, %1) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] out 2 partial [] {{.*}} -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
// CHECK:         }
// CHECK-NEXT:    %mm_1 = rtensor.collect %mm
// CHECK-NOT:     cshift.all_reduce
