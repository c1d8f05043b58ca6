// RUN: t10-opt %s | t10-opt | filecheck %s
// RUN: t10-opt %s --print-op-generic | t10-opt | filecheck %s

// Round trip of the cshift ops through their custom syntax.

// compute_shift of a matmul: 2 steps along d2, both inputs rotate, partial sums over d2;
// then all_reduce over grid axis 2.
func.func @matmul(%a: !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, %b: !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
  %0 = cshift.compute_shift "mm"(%a, %b) steps 2 shift 2 sizes [4, 4, 4] rotate [1, 0] partial [2] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %1 = cshift.all_reduce "sum" %0 over [2] : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>
  func.return %1 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>
}
// CHECK-LABEL: func.func @matmul(%a: !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, %b: !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
// CHECK-NEXT:    %0 = cshift.compute_shift "mm"(%a, %b) steps 2 shift 2 sizes [4, 4, 4] rotate [1, 0] partial [2] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
// CHECK-NEXT:    ^bb0(%x: f32, %y: f32, %acc: f32):
// CHECK-NEXT:      %p = arith.mulf %x, %y : f32
// CHECK-NEXT:      %s = arith.addf %acc, %p : f32
// CHECK-NEXT:      linalg.yield %s : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %1 = cshift.all_reduce "sum" %0 over [2] : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>
// CHECK-NEXT:    func.return %1 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>
// CHECK-NEXT:  }

// compute_shift without a shift dim (one step, shift -1), no rotating input, no partial axes.
func.func @elementwise(%x: !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>, %bias: !rtensor.tensor<1x8xf32, #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
  %0 = cshift.compute_shift "add"(%x, %bias) steps 1 shift -1 sizes [4, 8] rotate [-1, -1] partial [] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>, !rtensor.tensor<1x8xf32, #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    %z = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %s, %z : f32
    linalg.yield %r : f32
  }
  func.return %0 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
}
// CHECK-LABEL: func.func @elementwise(%x: !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>, %bias: !rtensor.tensor<1x8xf32, #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
// CHECK-NEXT:    %0 = cshift.compute_shift "add"(%x, %bias) steps 1 shift -1 sizes [4, 8] rotate [-1, -1] partial [] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>, !rtensor.tensor<1x8xf32, #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
// CHECK-NEXT:    ^bb0(%a: f32, %b: f32, %out: f32):
// CHECK-NEXT:      %s = arith.addf %a, %b : f32
// CHECK-NEXT:      %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %r = arith.maximumf %s, %z : f32
// CHECK-NEXT:      linalg.yield %r : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
// CHECK-NEXT:  }

// compute_shift whose result rotates (`out 2`: its partial sums rotate on ring d2, which
// is then no partial axis).
func.func @rotating_output(%a: !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, %b: !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
  %0 = cshift.compute_shift "mm"(%a, %b) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] out 2 partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return %0 : !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>>
}
// CHECK-LABEL: func.func @rotating_output(
// CHECK-NEXT:    %0 = cshift.compute_shift "mm"(%a, %b) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] out 2 partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {

// all_reduce over several grid axes.
func.func @all_reduce(%p: !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2, 2] axes [d0, d1] tile [4, 4]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2, 2] axes [d0, d1] tile [4, 4]>> {
  %0 = cshift.all_reduce "sum" %p over [2, 3] : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2, 2] axes [d0, d1] tile [4, 4]>>
  %1 = cshift.all_reduce "max" %0 over [2] : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2, 2] axes [d0, d1] tile [4, 4]>>
  func.return %1 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2, 2] axes [d0, d1] tile [4, 4]>>
}
// CHECK-LABEL: func.func @all_reduce(%p: !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2, 2] axes [d0, d1] tile [4, 4]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2, 2] axes [d0, d1] tile [4, 4]>> {
// CHECK-NEXT:    %0 = cshift.all_reduce "sum" %p over [2, 3] : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2, 2] axes [d0, d1] tile [4, 4]>>
// CHECK-NEXT:    %1 = cshift.all_reduce "max" %0 over [2] : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2, 2] axes [d0, d1] tile [4, 4]>>
// CHECK-NEXT:    func.return %1 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2, 2] axes [d0, d1] tile [4, 4]>>
// CHECK-NEXT:  }
