// RUN: t10-opt %s --split-input-file --verify-diagnostics | filecheck %s

// compute_shift needs one step size per loop dim.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
%0 = cshift.compute_shift "neg"(%a) steps 1 shift -1 sizes [4] rotate [-1] partial [] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
^bb0(%x: f32, %o: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'neg': 1 step sizes for 2 loop dims

// -----

// A shift dim needs more than one step.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
%0 = cshift.compute_shift "neg"(%a) steps 1 shift 1 sizes [4, 8] rotate [-1] partial [] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
^bb0(%x: f32, %o: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'neg': a shift dim needs steps > 1, and only one

// -----

// Several steps need a shift dim.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
%0 = cshift.compute_shift "neg"(%a) steps 2 shift -1 sizes [4, 8] rotate [-1] partial [] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
^bb0(%x: f32, %o: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'neg': a shift dim needs steps > 1, and only one

// -----

// The shift dim must be a loop dim.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
%0 = cshift.compute_shift "neg"(%a) steps 2 shift 2 sizes [4, 8] rotate [-1] partial [] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
^bb0(%x: f32, %o: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'neg': a shift dim needs steps > 1, and only one

// -----

// compute_shift needs one rotate entry per input.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
%0 = cshift.compute_shift "neg"(%a) steps 1 shift -1 sizes [4, 8] rotate [-1, -1] partial [] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
^bb0(%x: f32, %o: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'neg': needs one rotate entry per input

// -----

// A rotate entry must name the ring of the input's rotating layout.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2] axes [d0, -] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>>
%0 = cshift.compute_shift "neg"(%a) steps 2 shift 1 sizes [4, 4] rotate [-1] partial [] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2] axes [d0, -] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2] axes [d0, -] tile [4, 8]>> {
^bb0(%x: f32, %o: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'neg': input #0 rotates on ring d1 by its layout, but the op rotates it not at all

// -----

// An input whose layout does not rotate cannot have a ring in rotate.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
%0 = cshift.compute_shift "neg"(%a) steps 1 shift -1 sizes [4, 8] rotate [1] partial [] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
^bb0(%x: f32, %o: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'neg': input #0 does not rotate by its layout, but the op rotates it on ring d1

// -----

// The result's grid needs one axis per loop dim.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
%0 = cshift.compute_shift "neg"(%a) steps 1 shift -1 sizes [4, 8] rotate [-1] partial [] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>> {
^bb0(%x: f32, %o: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'neg': result grid [2] has not 2 axes

// -----

// A partial axis must be a reduction dim (d1 is parallel).
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 4]>>
%b = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [4, 4]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 1 shift -1 sizes [4, 4, 4] rotate [-1, -1] partial [1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 4]>>, !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [4, 4]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'mm': partial axis d1 is not a reduction dim

// -----

// A partial axis must be a loop dim.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 4]>>
%b = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [4, 4]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 1 shift -1 sizes [4, 4, 4] rotate [-1, -1] partial [3] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 4]>>, !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [4, 4]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'mm': partial axis d3 is not a reduction dim

// -----

// all_reduce needs at least one axis.
%p = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>
%0 = cshift.all_reduce "sum" %p over [] : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>

// CHECK: Operation does not verify: cshift.all_reduce: axes [] must be distinct axes of grid [2, 2, 2] that the layout does not split a tensor dim along

// -----

// all_reduce axes must be grid axes.
%p = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>
%0 = cshift.all_reduce "sum" %p over [2, 3] : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>

// CHECK: Operation does not verify: cshift.all_reduce: axes [2, 3] must be distinct axes of grid [2, 2, 2]

// -----

// all_reduce keeps its operand's type (generic form; the custom syntax has one type).
%p = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>
%0 = "cshift.all_reduce"(%p) <{axes = array<i64: 2>, combiner = "sum"}> : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, d1] tile [4, 4]>>

// CHECK:      Operation does not verify: result 'result' at position 0 does not verify:
// CHECK-NEXT: attribute !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> expected from variable 'T', but got !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, d1] tile [4, 4]>>

// -----

// The step sizes must be the plan's (the 8-element k tile in 2 steps gives 4).
%a = "test.op"() : () -> !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
%b = "test.op"() : () -> !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 2 shift 2 sizes [4, 4, 8] rotate [1, 0] partial [2] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}


// CHECK: Operation does not verify: cshift.compute_shift 'mm': step sizes [4, 4, 8] differ from the plan's [4, 4, 4] (grid [2, 2, 2], 2 steps)

// -----

// A reduction dim split over cores (d2 on 2 cores) holds partial sums: partial must name it.
%a = "test.op"() : () -> !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
%b = "test.op"() : () -> !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 2 shift 2 sizes [4, 4, 4] rotate [1, 0] partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}


// CHECK: Operation does not verify: cshift.compute_shift 'mm': partial axes [] differ from the plan's [2] (grid [2, 2, 2], 2 steps)

// -----

// Every input lies on the result's grid as the plan gives it (here A's tile rows differ).
%a = "test.op"() : () -> !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [8, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
%b = "test.op"() : () -> !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 2 shift 2 sizes [4, 4, 4] rotate [1, 0] partial [2] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [8, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}


// CHECK: Operation does not verify: cshift.compute_shift 'mm': input #0 has layout #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [8, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> but the plan gives it #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>

// -----

// all_reduce cannot combine over a grid axis that splits a tensor dim (d1 splits dim 1).
%p = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>
%0 = cshift.all_reduce "sum" %p over [1] : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>

// CHECK: Operation does not verify: cshift.all_reduce: axes [1] must be distinct axes of grid [2, 2, 2] that the layout does not split a tensor dim along

// -----

// all_reduce combines over exactly the partial axes of the compute_shift it follows.
%a = "test.op"() : () -> !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 1, 2] axes [d0, d2] tile [4, 8]>>
%b = "test.op"() : () -> !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 1, 2] axes [d2, -] tile [8, 8]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 1 shift -1 sizes [4, 8, 8] rotate [-1, -1] partial [2] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 1, 2] axes [d0, d2] tile [4, 8]>>, !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 1, 2] axes [d2, -] tile [8, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1, 2] axes [d0, -] tile [4, 8]>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}
%1 = cshift.all_reduce "sum" %0 over [1, 2] : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1, 2] axes [d0, -] tile [4, 8]>>

// CHECK: Operation does not verify: cshift.all_reduce: axes [1, 2] are not the partial axes [2] of cshift.compute_shift 'mm'

// -----

// The op rotates the result on ring d1 but its layout rotates it on ring d2.
%a = "test.op"() : () -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
%b = "test.op"() : () -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] out 1 partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'mm': the result rotates on ring d2 by its layout, but the op rotates it on ring d1

// -----

// The result's ring must be a grid axis.
%a = "test.op"() : () -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
%b = "test.op"() : () -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] out 5 partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'mm': the result's ring d5 (out) is not one of the 3 grid axes

// -----

// A negative ring is no way to say the result does not rotate (leave `out` out).
%a = "test.op"() : () -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
%b = "test.op"() : () -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] out -1 partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4]>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'mm': the result's ring d-1 (out) is not one of the 3 grid axes

// -----

// The op rotates the result, but its layout does not.
%a = "test.op"() : () -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
%b = "test.op"() : () -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] out 2 partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4]>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'mm': the result does not rotate by its layout, but the op rotates it on ring d2

// -----

// The result's layout rotates, but the op does not rotate it.
%a = "test.op"() : () -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
%b = "test.op"() : () -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'mm': the result rotates on ring d2 by its layout, but the op rotates it not at all

// -----

// A rotating result sums over its ring while it rotates: the ring is no partial axis
// (there is no all_reduce to follow).
%a = "test.op"() : () -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
%b = "test.op"() : () -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] out 2 partial [2] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'mm': partial axes [2] differ from the plan's [] (grid [1, 2, 2], 4 steps)

// -----

// The output's partial sums rotate on the ring of a reduction dim, not of the parallel d1
// (its layout and the op agree, the plan does not hold).
%a = "test.op"() : () -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
%b = "test.op"() : () -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
%0 = cshift.compute_shift "mm"(%a, %b) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] out 1 partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 4] rotate 1 ring d1 x 2 steps 4 skew [(d1, 2, 2)] phase 3>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: cshift.compute_shift 'mm': the output's ring d1 must be a reduction dim
