// RUN: t10-opt %s --split-input-file --verify-diagnostics | filecheck %s

// alloc needs at least one core.
%0 = core.alloc "x" on 0 : !core.buffer<4x8xf32>

// CHECK: Operation does not verify: core.alloc 'x': needs at least one core

// -----

// coord needs a grid of positive sizes.
%0 = core.coord 0 of [4, 0]

// CHECK: Operation does not verify: core.coord: grid [4, 0] must be positive integers

// -----

// coord's axis must be an axis of the grid.
%0 = core.coord 3 of [4, 4, 1]

// CHECK: Operation does not verify: core.coord: axis 3 not in grid [4, 4, 1]

// -----

// load's buffer must hold the layout's local tile.
%x = "test.op"() : () -> tensor<8x8xf32>
%a = "test.op"() : () -> !core.buffer<8x8xf32>
core.load %x into %a layout <grid [2, 1] axes [d0, -] tile [4, 8]> : tensor<8x8xf32>, !core.buffer<8x8xf32>

// CHECK: Operation does not verify: core.load: buffer !core.buffer<8x8xf32> does not hold the local tile [4, 8] of layout #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>

// -----

// A rotating layout's local tile is its window plus one incoming chunk (2 + 1 chunks of 2).
%x = "test.op"() : () -> tensor<8x16xf32>
%a = "test.op"() : () -> !core.buffer<4x8xf32>
core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 4 skew [(d1, 2, 2)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>

// CHECK: Operation does not verify: core.load: buffer !core.buffer<4x8xf32> does not hold the local tile [4, 6] of layout #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 4 skew [(d1, 2, 2)]>

// -----

// store's buffer must hold the layout's local tile.
%c = "test.op"() : () -> !core.buffer<4x4xf32>
%0 = core.store %c layout <grid [2, 2] axes [d0, -] tile [4, 8]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>

// CHECK: Operation does not verify: core.store: buffer !core.buffer<4x4xf32> does not hold the local tile [4, 8] of layout #rtensor.layout<grid [2, 2] axes [d0, -] tile [4, 8]>

// -----

// kernel needs a grid of positive sizes.
%x = "test.op"() : () -> !core.buffer<4x8xf32>
%o = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.kernel "neg" on [2, -1] sizes [4, 8] of [8, -8] ins(%x) outs(%o) at(%i, %i) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>) -> !core.buffer<4x8xf32> {
^bb0(%a: f32, %b: f32):
  %n = arith.negf %a : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: core.kernel 'neg': grid [2, -1] must be positive integers

// -----

// kernel needs one indexing map per operand.
%x = "test.op"() : () -> !core.buffer<4x8xf32>
%o = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.kernel "neg" on [2, 1] sizes [4, 8] of [8, 8] ins(%x) outs(%o) at(%i, %i) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>) -> !core.buffer<4x8xf32> {
^bb0(%a: f32, %b: f32):
  %n = arith.negf %a : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: core.kernel 'neg': needs a map and a slice dim per operand

// -----

// kernel needs one slice dim per operand.
%x = "test.op"() : () -> !core.buffer<4x8xf32>
%o = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.kernel "neg" on [2, 1] sizes [4, 8] of [8, 8] ins(%x) outs(%o) at(%i, %i) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>) -> !core.buffer<4x8xf32> {
^bb0(%a: f32, %b: f32):
  %n = arith.negf %a : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: core.kernel 'neg': needs a map and a slice dim per operand

// -----

// kernel needs one offset per operand.
%x = "test.op"() : () -> !core.buffer<4x8xf32>
%o = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.kernel "neg" on [2, 1] sizes [4, 8] of [8, 8] ins(%x) outs(%o) at(%i) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>) -> !core.buffer<4x8xf32> {
^bb0(%a: f32, %b: f32):
  %n = arith.negf %a : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: core.kernel 'neg': needs one offset per operand

// -----

// A kernel operand's map must have one result per buffer dim.
%x = "test.op"() : () -> !core.buffer<4x8xf32>
%o = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.kernel "neg" on [2, 1] sizes [4, 8] of [8, 8] ins(%x) outs(%o) at(%i, %i) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>) -> !core.buffer<4x8xf32> {
^bb0(%a: f32, %b: f32):
  %n = arith.negf %a : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: core.kernel 'neg': operand #0 map rank differs from its buffer

// -----

// A kernel operand's slice dim must be a buffer dim or -1.
%x = "test.op"() : () -> !core.buffer<4x8xf32>
%o = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.kernel "neg" on [2, 1] sizes [4, 8] of [8, 8] ins(%x) outs(%o) at(%i, %i) along [2, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>) -> !core.buffer<4x8xf32> {
^bb0(%a: f32, %b: f32):
  %n = arith.negf %a : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: core.kernel 'neg': operand #0 slice dim 2 out of range

// -----

// A sliced buffer dim must hold a whole number of slices of the kernel's extent.
%x = "test.op"() : () -> !core.buffer<4x6xf32>
%o = "test.op"() : () -> !core.buffer<4x4xf32>
%i = "test.op"() : () -> index
core.kernel "neg" on [2, 1] sizes [4, 4] of [8, 4] ins(%x) outs(%o) at(%i, %i) along [1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x6xf32>) -> !core.buffer<4x4xf32> {
^bb0(%a: f32, %b: f32):
  %n = arith.negf %a : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: core.kernel 'neg': operand #0 dim 1 (6) is not a whole number of slices of 4

// -----

// An unsliced buffer dim must have exactly the kernel's extent (the slice shape).
%x = "test.op"() : () -> !core.buffer<4x8xf32>
%o = "test.op"() : () -> !core.buffer<4x4xf32>
%i = "test.op"() : () -> index
core.kernel "neg" on [2, 1] sizes [4, 4] of [8, 4] ins(%x) outs(%o) at(%i, %i) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>) -> !core.buffer<4x4xf32> {
^bb0(%a: f32, %b: f32):
  %n = arith.negf %a : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: core.kernel 'neg': operand #0 dim 1 has 8 elements, the kernel reads 4

// -----

// A broadcast (constant 0) operand dim has extent 1.
%x = "test.op"() : () -> !core.buffer<4x8xf32>
%bias = "test.op"() : () -> !core.buffer<2x8xf32>
%o = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.kernel "add" on [2, 1] sizes [4, 8] of [8, 8] ins(%x, %bias) outs(%o) at(%i, %i, %i) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>, !core.buffer<2x8xf32>) -> !core.buffer<4x8xf32> {
^bb0(%a: f32, %b: f32, %c: f32):
  %s = arith.addf %a, %b : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: core.kernel 'add': operand #1 dim 0 has 2 elements, the kernel reads 1

// -----

// shift's ring must divide its grid axis.
%a = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.shift %a ring 1 x 2 of [2, 3, 2] dim 1 size 4 from %i to %i : !core.buffer<4x8xf32>

// CHECK: Operation does not verify: core.shift: a ring of 2 cores must divide grid axis 1 of [2, 3, 2]

// -----

// shift's ring must be an axis of the grid.
%a = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.shift %a ring 3 x 2 of [2, 2, 2] dim 1 size 4 from %i to %i : !core.buffer<4x8xf32>

// CHECK: Operation does not verify: core.shift: a ring of 2 cores must divide grid axis 3 of [2, 2, 2]

// -----

// A ring has at least two cores.
%a = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.shift %a ring 1 x 1 of [2, 2, 2] dim 1 size 4 from %i to %i : !core.buffer<4x8xf32>

// CHECK: Operation does not verify: core.shift: a ring of 1 cores must divide grid axis 1 of [2, 2, 2]

// -----

// shift needs a grid of positive sizes.
%a = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.shift %a ring 1 x 2 of [] dim 1 size 4 from %i to %i : !core.buffer<4x8xf32>

// CHECK: Operation does not verify: core.shift: grid [] must be positive integers

// -----

// shift's slice must tile the buffer dim.
%a = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 3 from %i to %i : !core.buffer<4x8xf32>

// CHECK: Operation does not verify: core.shift: the slice must tile the buffer dim

// -----

// shift's dim must be a buffer dim.
%a = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
core.shift %a ring 1 x 2 of [2, 2, 2] dim 2 size 4 from %i to %i : !core.buffer<4x8xf32>

// CHECK: Operation does not verify: core.shift: the slice must tile the buffer dim

// -----

// all_reduce needs a grid of positive sizes.
%c = "test.op"() : () -> !core.buffer<4x4xf32>
core.all_reduce "sum" %c over [0] of [2, 0] : !core.buffer<4x4xf32>

// CHECK: Operation does not verify: core.all_reduce: grid [2, 0] must be positive integers

// -----

// all_reduce needs at least one axis.
%c = "test.op"() : () -> !core.buffer<4x4xf32>
core.all_reduce "sum" %c over [] of [2, 2, 2] : !core.buffer<4x4xf32>

// CHECK: Operation does not verify: core.all_reduce: axes must be distinct axes of grid [2, 2, 2]

// -----

// all_reduce axes must be grid axes.
%c = "test.op"() : () -> !core.buffer<4x4xf32>
core.all_reduce "sum" %c over [1, 3] of [2, 2, 2] : !core.buffer<4x4xf32>

// CHECK: Operation does not verify: core.all_reduce: axes must be distinct axes of grid [2, 2, 2]

// -----

// relayout's source buffer must hold the source layout's tile.
%s = "test.op"() : () -> !core.buffer<8x8xf32>
%t = "test.op"() : () -> !core.buffer<8x2xf32>
core.relayout "t/relayout" %s to %t of tensor<8x8xf32> layouts <grid [4, 1] axes [d0, -] tile [2, 8]> -> <grid [1, 4] axes [-, d1] tile [8, 2]> : !core.buffer<8x8xf32>, !core.buffer<8x2xf32>

// CHECK: Operation does not verify: core.relayout: buffer !core.buffer<8x8xf32> does not hold the local tile [2, 8] of layout #rtensor.layout<grid [4, 1] axes [d0, -] tile [2, 8]>

// -----

// relayout's target buffer must hold the target layout's tile.
%s = "test.op"() : () -> !core.buffer<2x8xf32>
%t = "test.op"() : () -> !core.buffer<2x8xf32>
core.relayout "t/relayout" %s to %t of tensor<8x8xf32> layouts <grid [4, 1] axes [d0, -] tile [2, 8]> -> <grid [1, 4] axes [-, d1] tile [8, 2]> : !core.buffer<2x8xf32>, !core.buffer<2x8xf32>

// CHECK: Operation does not verify: core.relayout: buffer !core.buffer<2x8xf32> does not hold the local tile [8, 2] of layout #rtensor.layout<grid [1, 4] axes [-, d1] tile [8, 2]>

// -----

// A kernel needs one positive size per loop.
%b = core.alloc "b" on 1 : !core.buffer<4x4xf32>
%c0 = arith.constant 0 : index
core.kernel "k" on [1, 1] sizes [4] of [4] ins(%b) outs(%b) at(%c0, %c0) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
^bb0(%x: f32, %y: f32):
  linalg.yield %x : f32
}
// CHECK: core.kernel 'k': needs one size per loop and maps over 2 loops

// -----

// A shift moves a positive number of elements.
%b = core.alloc "b" on 2 : !core.buffer<4x4xf32>
%c0 = arith.constant 0 : index
core.shift %b ring 0 x 2 of [2] dim 0 size 0 from %c0 to %c0 : !core.buffer<4x4xf32>
// CHECK: core.shift: the slice size must be positive

// -----

// A load's layout must cover the tensor.
%t = "test.op"() : () -> tensor<8x8xf32>
%b = core.alloc "b" on 2 : !core.buffer<4xf32>
core.load %t into %b layout <grid [2] axes [d0] tile [4]> : tensor<8x8xf32>, !core.buffer<4xf32>
// CHECK: core.load: layout of rank 1 does not fit a tensor of rank 2

// -----

// all_reduce combines with sum, max or min.
%c = "test.op"() : () -> !core.buffer<4x4xf32>
core.all_reduce "prod" %c over [1] of [2, 2, 2] : !core.buffer<4x4xf32>

// CHECK: Operation does not verify: core.all_reduce: combiner 'prod' is not one of sum, max, min

// -----

// Each loop of a kernel runs along its own grid axis (or -1).
%c = "test.op"() : () -> !core.buffer<2x2xf32>
%zero = arith.constant 0 : index
core.kernel "mm+add" on [2, 3, 2] axes [1, 1] sizes [2, 2] of [4, 6] ins(%c) outs(%c) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<2x2xf32>) -> !core.buffer<2x2xf32> {
^bb0(%v: f32, %o: f32):
  %n = arith.negf %v : f32
  linalg.yield %n : f32
}

// CHECK: Operation does not verify: core.kernel 'mm+add': axes [1, 1] must give each loop a distinct grid axis of [2, 3, 2] or -1

// -----

// Only an element-wise kernel with axes may scatter its tile.
%a = "test.op"() : () -> !core.buffer<2x4xf32>
%b = "test.op"() : () -> !core.buffer<4x2xf32>
%c = "test.op"() : () -> !core.buffer<2x2xf32>
%zero = arith.constant 0 : index
core.kernel "mm" on [2, 2, 2] scatter sizes [2, 2, 4] of [4, 4, 8] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x4xf32>, !core.buffer<4x2xf32>) -> !core.buffer<2x2xf32> {
^bb0(%x: f32, %y: f32, %acc: f32):
  %p = arith.mulf %x, %y : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}

// CHECK: Operation does not verify: core.kernel 'mm': only an element-wise kernel with axes may scatter its tile over its replicas

// -----

// An all_gather runs over distinct axes of its grid.
%c = "test.op"() : () -> !core.buffer<4x4xf32>
core.all_gather %c over [2, 2] of [2, 2, 2] : !core.buffer<4x4xf32>

// CHECK: Operation does not verify: core.all_gather: axes must be distinct axes of grid [2, 2, 2]

// -----

// A kernel adding into a rotating output (its offset is a slot of the window) needs the
// origin of that slot's chunk in the tensor, or the padding rule would read the slot as a
// position in the tile.
%x = "test.op"() : () -> !core.buffer<2x2xf32>
%w = "test.op"() : () -> !core.buffer<2x4xf32>
%o = core.alloc "mm" on 4 : !core.buffer<2x3xf32>
%i = "test.op"() : () -> index
core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%x, %w) outs(%o) at(%i, %i, %i) along [-1, 1, 1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x2xf32>, !core.buffer<2x4xf32>) -> !core.buffer<2x3xf32> {
^bb0(%a: f32, %b: f32, %acc: f32):
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}
%y = core.store %o layout <grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3> : !core.buffer<2x3xf32> -> tensor<2x8xf32>

// CHECK: Operation does not verify: core.kernel 'mm': its output (buffer 'mm') rotates along dim 1 in the layout #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3> that core.store gives it, so the kernel slices it along that dim and needs an origin (where the slot's chunk lies in the tensor)

// -----

// A kernel slices a rotating output along its rotating dim.
%x = "test.op"() : () -> !core.buffer<2x2xf32>
%w = "test.op"() : () -> !core.buffer<2x4xf32>
%o = core.alloc "mm" on 4 : !core.buffer<2x3xf32>
%i = "test.op"() : () -> index
core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%x, %w) outs(%o) at(%i, %i, %i) along [-1, 1, 0] origin %i {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x2xf32>, !core.buffer<2x4xf32>) -> !core.buffer<2x3xf32> {
^bb0(%a: f32, %b: f32, %acc: f32):
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}
%y = core.store %o layout <grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3> : !core.buffer<2x3xf32> -> tensor<2x8xf32>

// CHECK: Operation does not verify: core.kernel 'mm': its output (buffer 'mm') rotates along dim 1 in the layout #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3> that core.store gives it, so the kernel slices it along that dim and needs an origin (where the slot's chunk lies in the tensor)

// -----

// A rotating output is finished after the last step: the ops using it lay it out with the
// phase of its window then (steps - 1, here 3).
%x = "test.op"() : () -> !core.buffer<2x2xf32>
%w = "test.op"() : () -> !core.buffer<2x4xf32>
%o = core.alloc "mm" on 4 : !core.buffer<2x3xf32>
%i = "test.op"() : () -> index
core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%x, %w) outs(%o) at(%i, %i, %i) along [-1, 1, 1] origin %i {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x2xf32>, !core.buffer<2x4xf32>) -> !core.buffer<2x3xf32> {
^bb0(%a: f32, %b: f32, %acc: f32):
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}
%y = core.store %o layout <grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 1> : !core.buffer<2x3xf32> -> tensor<2x8xf32>

// CHECK: Operation does not verify: core.kernel 'mm': its output (buffer 'mm') is finished after the last of its 4 steps, so the layout #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 1> that core.store gives it has phase 3 (its window then)

// -----

// An origin is only for a rotating output: a plain output's offset is its position in the
// tile.
%x = "test.op"() : () -> !core.buffer<2x2xf32>
%w = "test.op"() : () -> !core.buffer<2x4xf32>
%o = core.alloc "mm" on 4 : !core.buffer<2x4xf32>
%i = "test.op"() : () -> index
core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%x, %w) outs(%o) at(%i, %i, %i) along [-1, 1, 1] origin %i {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x2xf32>, !core.buffer<2x4xf32>) -> !core.buffer<2x4xf32> {
^bb0(%a: f32, %b: f32, %acc: f32):
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %acc, %p : f32
  linalg.yield %s : f32
}
%y = core.store %o layout <grid [1, 2, 2] axes [-, d1] tile [2, 4]> : !core.buffer<2x4xf32> -> tensor<2x8xf32>

// CHECK: Operation does not verify: core.kernel 'mm': an origin is only for a rotating output, but core.store lays out buffer 'mm' as #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4]>

// -----

// A core.gather's result is what its kind gives (GatherND: the ids' dims but the last, then
// the table's dims after the indexed ones).
%t = core.alloc "table" on 4 : !core.buffer<2x4xf32>
%i = core.alloc "ids" on 2 : !core.buffer<1x1xf32>
%o = core.alloc "out" on 2 : !core.buffer<1x1xf32>
core.gather "g" %t[%i] to %o nd batch_dims 0 of tensor<8x4xf32>[tensor<2x1xf32>] -> tensor<2x1xf32> layouts <grid [4] axes [d0, -] tile [2, 4]>, <grid [2] axes [d0, -] tile [1, 1]> -> <grid [2] axes [d0, -] tile [1, 1]> : !core.buffer<2x4xf32>, !core.buffer<1x1xf32>, !core.buffer<1x1xf32>

// CHECK: Operation does not verify: core.gather: gathering tensor<2x1xf32> from tensor<8x4xf32> (nd batch_dims 0) does not give tensor<2x1xf32>

// -----

// GatherElements ids have the table's rank.
%t = core.alloc "table" on 4 : !core.buffer<2x4xf32>
%i = core.alloc "ids" on 2 : !core.buffer<1xf32>
%o = core.alloc "out" on 2 : !core.buffer<1xf32>
core.gather "g" %t[%i] to %o elements axis 1 of tensor<8x4xf32>[tensor<2xf32>] -> tensor<2xf32> layouts <grid [4] axes [d0, -] tile [2, 4]>, <grid [2] axes [d0] tile [1]> -> <grid [2] axes [d0] tile [1]> : !core.buffer<2x4xf32>, !core.buffer<1xf32>, !core.buffer<1xf32>

// CHECK: Operation does not verify: core.gather: the ids [2] must have the table's rank 2
