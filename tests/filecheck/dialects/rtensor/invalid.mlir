// RUN: t10-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Plan factors must be positive.
"test.op"() {plan = #rtensor.plan<grid [2, 0]>} : () -> ()

// CHECK: plan factors must be positive integers, got (2, 0)

// -----

// The shift dim of a plan must be one of its loop dims.
"test.op"() {plan = #rtensor.plan<grid [2, 2] shift d2 steps 2 rotate []>} : () -> ()

// CHECK: plan shift dim d2 is not a loop dim

// -----

// Two rotations of a plan cannot share a ring dim.
"test.op"() {plan = #rtensor.plan<grid [2, 2, 2] shift d2 steps 2 rotate [(0, d1, 2), (1, d1, 2)]>} : () -> ()

// CHECK: rotations of a plan must use distinct ring dims

// -----

// A rotation cannot ring along the shift dim itself.
"test.op"() {plan = #rtensor.plan<grid [2, 2, 2] shift d2 steps 2 rotate [(0, d2, 2)]>} : () -> ()

// CHECK: rotation ring dim d2 is not a valid ring

// -----

// A rotation's ring dim must be a loop dim.
"test.op"() {plan = #rtensor.plan<grid [2, 2, 2] shift d2 steps 2 rotate [(0, d5, 2)]>} : () -> ()

// CHECK: rotation ring dim d5 is not a valid ring

// -----

// Rotation pieces must divide the factor of the ring dim.
"test.op"() {plan = #rtensor.plan<grid [2, 3, 2] shift d2 steps 2 rotate [(0, d1, 2)]>} : () -> ()

// CHECK: rotation of input 0 in 2 pieces must divide the factor 3 of its ring dim d1

// -----

// A ring needs at least 2 pieces.
"test.op"() {plan = #rtensor.plan<grid [2, 2, 2] shift d2 steps 2 rotate [(0, d1, 1)]>} : () -> ()

// CHECK: rotation of input 0 in 1 pieces must divide the factor 2 of its ring dim d1

// -----

// Paces must align: the steps are a multiple of every rotation's pieces.
"test.op"() {plan = #rtensor.plan<grid [4, 2, 1] shift d2 steps 2 rotate [(0, d0, 4)]>} : () -> ()

// CHECK: plan steps 2 must be a multiple of every rotation's pieces (4): paces must align

// -----

// A layout's grid must be positive.
"test.op"() {layout = #rtensor.layout<grid [2, 0] axes [d0] tile [4]>} : () -> ()

// CHECK: layout grid must be positive integers, got [2, 0]

// -----

// A layout needs as many axis entries as tile sizes.
"test.op"() {layout = #rtensor.layout<grid [2, 2] axes [d0, d1] tile [4]>} : () -> ()

// CHECK: layout needs one axis entry and one tile size per tensor dim

// -----

// A layout axis must be an axis of its grid.
"test.op"() {layout = #rtensor.layout<grid [2, 2] axes [d0, d2] tile [4, 4]>} : () -> ()

// CHECK: layout axis d2 is not an axis of grid [2, 2]

// -----

// Two tensor dims cannot split along one grid axis.
"test.op"() {layout = #rtensor.layout<grid [2, 2] axes [d1, d1] tile [4, 4]>} : () -> ()

// CHECK: two tensor dims of a layout cannot split along one grid axis

// -----

// The rotating dim must be a tensor dim.
"test.op"() {layout = #rtensor.layout<grid [2, 2] axes [d0, -] tile [4, 8] rotate 2 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>} : () -> ()

// CHECK: rotating dim 2 is not a tensor dim

// -----

// The ring axis cannot be a grid axis the tensor splits on.
"test.op"() {layout = #rtensor.layout<grid [2, 2] axes [d0, d1] tile [4, 8] rotate 1 ring d0 x 2 steps 2 skew [(d0, 2, 1)]>} : () -> ()

// CHECK: ring axis d0 must be a grid axis the tensor does not split on

// -----

// The ring axis must be a grid axis.
"test.op"() {layout = #rtensor.layout<grid [2, 2] axes [d0, -] tile [4, 8] rotate 1 ring d3 x 2 steps 2 skew [(d1, 2, 1)]>} : () -> ()

// CHECK: ring axis d3 must be a grid axis the tensor does not split on

// -----

// Rotation pieces must divide the ring axis.
"test.op"() {layout = #rtensor.layout<grid [2, 3] axes [d0, -] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>} : () -> ()

// CHECK: rotation in 2 pieces over 2 steps must divide the ring axis (3 cores), the steps and the tile (8)

// -----

// Rotation steps must be a multiple of the pieces.
"test.op"() {layout = #rtensor.layout<grid [2, 4] axes [d0, -] tile [4, 8] rotate 1 ring d1 x 4 steps 2 skew [(d1, 4, 1)]>} : () -> ()

// CHECK: rotation in 4 pieces over 2 steps must divide the ring axis (4 cores), the steps and the tile (8)

// -----

// The rotating tile must cut into whole chunks, one per step.
"test.op"() {layout = #rtensor.layout<grid [2, 2] axes [d0, -] tile [4, 6] rotate 1 ring d1 x 2 steps 4 skew [(d1, 2, 2)]>} : () -> ()

// CHECK: rotation in 2 pieces over 4 steps must divide the ring axis (2 cores), the steps and the tile (6)

// -----

// The layout's rank must be the tensor's rank.
"test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2] axes [d0] tile [4]>>

// CHECK: layout of rank 1 does not fit a tensor of rank 2

// -----

// The tiles must cover every tensor dim.
"test.op"() : () -> !rtensor.tensor<8x9xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [4, 4]>>

// CHECK: tiles of 4 over 2 cores do not cover dim 1 of size 9

// -----

// An unsplit dim must be held whole by every core.
"test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2] axes [d0, -] tile [4, 4]>>

// CHECK: tiles of 4 over 1 cores do not cover dim 1 of size 8

// -----

// distribute keeps the tensor type.
%0 = "test.op"() : () -> tensor<4x8xf32>
%1 = rtensor.distribute %0 : tensor<4x8xf32> -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>>

// CHECK: Operation does not verify: rtensor.distribute: host tensor tensor<4x8xf32> and distributed tensor tensor<8x8xf32> differ (only f32 may be stored as f16)

// -----

// load loads a host tensor (a weight or a function argument), not another value.
%0 = "test.op"() : () -> tensor<8x8xf32>
%1 = rtensor.load "mm/load" %0 : tensor<8x8xf32> -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>>

// CHECK: Operation does not verify: rtensor.load 'mm/load': loads a host tensor (an arith.constant or a function argument) from off-chip memory; its source is neither

// -----

// load keeps the tensor type.
%0 = arith.constant dense<1.0> : tensor<4x8xf32>
%1 = rtensor.load "mm/load" %0 : tensor<4x8xf32> -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>>

// CHECK: Operation does not verify: rtensor.load: host tensor tensor<4x8xf32> and distributed tensor tensor<8x8xf32> differ (only f32 may be stored as f16)

// -----

// collect keeps the tensor type (f16 storage widens back to f32 only).
%0 = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>>
%1 = rtensor.collect %0 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>> -> tensor<8x8xf16>

// CHECK: Operation does not verify: rtensor.collect: host tensor tensor<8x8xf16> and distributed tensor tensor<8x8xf32> differ

// -----

// relayout may change the layout but not the tensor type (beyond rounding f32 to f16).
%0 = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>>
%1 = rtensor.relayout "x/relayout" %0 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>> -> !rtensor.tensor<8x4xf32, #rtensor.layout<grid [2] axes [-, d0] tile [8, 2]>>

// CHECK: Operation does not verify: rtensor.relayout changes the tensor type from tensor<8x8xf32> to tensor<8x4xf32> (without a view map it may only round f32 to f16)

// -----

// relayout cannot widen f16 storage.
%0 = "test.op"() : () -> !rtensor.tensor<8x8xf16, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>>
%1 = rtensor.relayout "x/relayout" %0 : !rtensor.tensor<8x8xf16, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>> -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 8]>>

// CHECK: Operation does not verify: rtensor.relayout changes the tensor type from tensor<8x8xf16> to tensor<8x8xf32> (without a view map it may only round f32 to f16)

// -----

// A generic's plan needs one factor per loop dim.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
%0 = rtensor.generic "add"(%a, %a) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], plan = #rtensor.plan<grid [2, 1, 1]>} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>, !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
^bb0(%x: f32, %y: f32, %o: f32):
  %s = arith.addf %x, %y : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: rtensor.generic 'add': it has 3 factors but the operator has 2 loop dims

// -----

// A generic's input must have the layout the plan gives it (here: rotating, the plan shifts d2).
%a = "test.op"() : () -> !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8]>>
%b = "test.op"() : () -> !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
%0 = rtensor.generic "mm"(%a, %b) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], plan = #rtensor.plan<grid [2, 2, 2] shift d2 steps 2 rotate [(0, d1, 2), (1, d0, 2)]>} : (!rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8]>>, !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: rtensor.generic 'mm': input #0 has layout #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8]> but the plan gives it #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>

// -----

// A generic's result must have the layout the plan gives it.
%a = "test.op"() : () -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
%0 = rtensor.generic "neg"(%a) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], plan = #rtensor.plan<grid [2, 1]>} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [8, 8]>> {
^bb0(%x: f32, %o: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: rtensor.generic 'neg': result has layout #rtensor.layout<grid [2, 1] axes [d0, -] tile [8, 8]> but the plan gives it #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>

// -----

// A plan that shifts a dim must rotate some input.
"test.op"() {plan = #rtensor.plan<grid [2, 1] shift d1 steps 2 rotate []>} : () -> ()
// CHECK: a plan that shifts d1 needs at least 2 steps and a rotation

// -----

// A rotation needs at least two steps (no division by zero).
"test.op"() {l = #rtensor.layout<grid [2] axes [-] tile [8] rotate 0 ring d0 x 2 steps 0 skew []>} : () -> ()
// CHECK: rotation in 2 pieces over 0 steps must divide the ring axis (2 cores), the steps and the tile (8)

// -----

// Skew terms name a grid axis, a positive modulus and a non-negative weight.
"test.op"() {l = #rtensor.layout<grid [2] axes [-] tile [8] rotate 0 ring d0 x 2 steps 2 skew [(d7, 0, -3)]>} : () -> ()
// CHECK: skew term (d7, 0, -3) needs a grid axis, a positive modulus and a non-negative weight

// -----

// A skew term is a ring whose cores divide its grid axis and the steps, weighted steps / cores.
"test.op"() {l = #rtensor.layout<grid [2, 2] axes [-, -] tile [8, 8] rotate 0 ring d0 x 2 steps 2 skew [(d0, 2, 1), (d1, 2, 2)]>} : () -> ()
// CHECK: skew term (d1, 2, 2) is not a ring of 2 cores dividing grid axis d1 (2 cores) and the steps (2), weighted steps / 2 = 1

// -----

// A skew names each grid axis once.
"test.op"() {l = #rtensor.layout<grid [2, 2] axes [-, -] tile [8, 8] rotate 0 ring d0 x 2 steps 2 skew [(d0, 2, 1), (d0, 2, 1)]>} : () -> ()
// CHECK: skew [(d0, 2, 1), (d0, 2, 1)] names a grid axis twice

// -----

// A skew has the term of the layout's own ring.
"test.op"() {l = #rtensor.layout<grid [2, 2] axes [-, -] tile [8, 8] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1)]>} : () -> ()
// CHECK: skew [(d1, 2, 1)] has no term (d0, 2, 1) for the layout's own ring

// -----

// A rank-0 rtensor type prints without a shape and parses back; a dynamic dim is refused.
"test.op"() : () -> !rtensor.tensor<?xf32, #rtensor.layout<grid [1] axes [-] tile [1]>>
// CHECK: dim 0 is dynamic; only static shapes can be distributed

// -----

// A view's map must read inside its source.
%x = "test.op"() : () -> tensor<8x4xf32>
%0 = rtensor.view "s/Slice" %x map affine_map<(d0, d1) -> (d0 + 4, d1)> : tensor<8x4xf32> -> tensor<6x4xf32>

// CHECK: Operation does not verify: rtensor.view: map (d0, d1) -> ((d0 + 4), d1) is not a view of tensor<8x4xf32> as tensor<6x4xf32>: result 0 ((d0 + 4)) ranges over [4, 9], outside [0, 8)

// -----

// A view's map has one dim per result dim.
%x = "test.op"() : () -> tensor<8x4xf32>
%0 = rtensor.view "r/Reshape" %x map affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)> : tensor<8x4xf32> -> tensor<4x8xf32>

// CHECK: Operation does not verify: rtensor.view: map (d0) -> ((d0 floordiv 4), (d0 mod 4)) is not a view of tensor<8x4xf32> as tensor<4x8xf32>: the map has 1 dims but the result has rank 2

// -----

// A view keeps the element type.
%x = "test.op"() : () -> tensor<8x4xf32>
%0 = rtensor.view "t/Transpose" %x map affine_map<(d0, d1) -> (d1, d0)> : tensor<8x4xf32> -> tensor<4x8xf16>

// CHECK: Operation does not verify: rtensor.view: a view keeps the element type, got f32 -> f16


// -----

// A view that reads outside its source must be marked padded.
%x = "test.op"() : () -> tensor<2x3xf32>
%0 = rtensor.view "c:0" %x map affine_map<(d0, d1) -> (d0, d1 - 2)> : tensor<2x3xf32> -> tensor<2x5xf32>

// CHECK: Operation does not verify: rtensor.view: map (d0, d1) -> (d0, (d1 + -2)) is not a view of tensor<2x3xf32> as tensor<2x5xf32>: result 1 ((d1 + -2)) ranges over [-2, 2], outside [0, 3)

// -----

// A relayout's guard has one result per guard shape entry.
%d = "test.op"() : () -> !rtensor.tensor<2x3xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 3]>>
%1 = rtensor.relayout "a/relayout" %d map affine_map<(d0, d1) -> (d0, d1 - 2)> guard affine_map<(d0, d1) -> (d1 - 2)> in [2, 3] : !rtensor.tensor<2x3xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 3]>> -> !rtensor.tensor<2x5xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 5]>>

// CHECK: Operation does not verify: rtensor.relayout: guard (d0, d1) -> ((d1 + -2)) must map the result's 2 dims to one index per guard shape entry [2, 3]

// -----

// An epilogue's other inputs lie like the output dims they are read at (here d1, split 3 ways).
%c = "test.op"() : () -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>
%bias = "test.op"() : () -> !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [-] tile [6]>>
%0 = rtensor.epilogue "mm+add"(%c, %bias) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>, !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [-] tile [6]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> {
^bb0(%v: f32, %u: f32, %o: f32):
  %s = arith.addf %u, %v : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: rtensor.epilogue 'mm+add': input #1 has layout #rtensor.layout<grid [2, 3, 2] axes [-] tile [6]>; read at (d0, d1) -> (d1) it must lie like the output: #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>

// -----

// An epilogue reads the operator's output at the identity map.
%c = "test.op"() : () -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>
%bias = "test.op"() : () -> !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>>
%0 = rtensor.epilogue "mm+add"(%c, %bias) {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>, !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> {
^bb0(%v: f32, %u: f32, %o: f32):
  %s = arith.addf %u, %v : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: rtensor.epilogue 'mm+add': needs one map per input and the result, the first and the last the identity over 2 dims

// -----

// The output rotates on its whole ring: its pieces are the ring dim's factor (4, not 2).
"test.op"() {plan = #rtensor.plan<grid [1, 2, 4] shift d1 steps 4 rotate [(out, d2, 2)]>} : () -> ()

// CHECK: the output rotates on the whole ring d2: its pieces must be the factor 4, got 2

// -----

// The output's ring must be split over cores (d2 has factor 1).
"test.op"() {plan = #rtensor.plan<grid [1, 2, 1] shift d1 steps 4 rotate [(out, d2, 2)]>} : () -> ()

// CHECK: rotation of the output in 2 pieces must divide the factor 1 of its ring dim d2

// -----

// The output rotates at most once.
"test.op"() {plan = #rtensor.plan<grid [2, 2, 2] shift d1 steps 4 rotate [(out, d2, 2), (out, d0, 2)]>} : () -> ()

// CHECK: each rotation names a distinct input, or the output (out)

// -----

// A rotating output's phase (the steps it ran, less one) lies below its steps.
"test.op"() {layout = #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 4>} : () -> ()

// CHECK: rotation phase 4 must lie between 1 and the steps (4) - 1 (a phase of 0 is not spelled)

// -----

// A phase of 0 is not spelled (it is the layout without a phase).
"test.op"() {layout = #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 0>} : () -> ()

// CHECK: rotation phase 0 must lie between 1 and the steps (4) - 1 (a phase of 0 is not spelled)

// -----

// A plan whose output rotates gives the result a rotating layout of phase steps - 1 (3, not 2).
%a = "test.op"() : () -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
%b = "test.op"() : () -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
%0 = rtensor.generic "mm"(%a, %b) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], plan = #rtensor.plan<grid [1, 2, 2] shift d1 steps 4 rotate [(out, d2, 2)]>} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 2>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: rtensor.generic 'mm': result has layout #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 2> but the plan gives it #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>

// -----

// The output's partial sums rotate on the ring of a reduction dim (d0 is parallel).
%a = "test.op"() : () -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
%b = "test.op"() : () -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
%0 = rtensor.generic "mm"(%a, %b) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], plan = #rtensor.plan<grid [2, 2, 2] shift d1 steps 4 rotate [(out, d0, 2)]>} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: rtensor.generic 'mm': the output's ring d0 must be a reduction dim

// -----

// Only a contraction's output holds partial sums that can rotate.
%a = "test.op"() : () -> !rtensor.tensor<4x4xf32, #rtensor.layout<grid [2, 2] axes [d0, -] tile [2, 4]>>
%0 = rtensor.generic "neg"(%a) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], plan = #rtensor.plan<grid [1, 2] shift d0 steps 2 rotate [(out, d1, 2)]>} : (!rtensor.tensor<4x4xf32, #rtensor.layout<grid [2, 2] axes [d0, -] tile [2, 4]>>) -> !rtensor.tensor<4x4xf32, #rtensor.layout<grid [2, 2] axes [d0, -] tile [2, 4]>> {
^bb0(%x: f32, %o: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: rtensor.generic 'neg': only a contraction's output (its partial sums) can rotate

// -----

// A plan's placement lays every axis of more than one core, whole or in parts.
"test.op"() {plan = #rtensor.plan<grid [4, 8] placed [[d0:4], [d1:4]]>} : () -> ()

// CHECK: the plan's placement <placed {{\[\[}}d0:4], [d1:4]]> does not place grid [4, 8]: axis d1 of grid [4, 8] has 8 cores but its parts lay 4

// -----

// A folded axis lies whole in one part.
"test.op"() {layout = #rtensor.layout<grid [4, 4] axes [d0, -] tile [4, 8] placed [[d1:2, d0:4], [d1:2]] fold [(d1, 2)]>} : () -> ()

// CHECK: the layout's placement <placed {{\[\[}}d1:2, d0:4], [d1:2]] fold [(d1, 2)]> does not place grid [4, 4]: folded axis d1 must lie whole in one part
