// RUN: t10-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Grids and layouts must agree with the chip.program, the buffers' allocations, the
// coordinates that offsets use and each other. Each case breaks one valid program.

// The valid base program of these cases, with a coordinate on more cores than the program runs on (24 > 8).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %x2 = core.coord 1 of [1, 8, 3]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.coord: grid [1, 8, 3] uses 24 cores but the enclosing chip.program runs on 8

// -----

// A buffer allocated on more cores than the program runs on.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 16 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.alloc 'c' uses 16 cores but the enclosing chip.program runs on 8

// -----

// An all_reduce whose grid is not the one its buffer lives on (7 of the 8 cores: wrong groups).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [1, 7, 1] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.all_reduce: grid [1, 7, 1] uses 7 cores but its buffer 'c' is allocated on 8

// -----

// An all_gather whose grid is not the one its buffer lives on.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_gather %c over [2] of [2, 2, 1] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.all_gather: grid [2, 2, 1] uses 4 cores but its buffer 'c' is allocated on 8

// -----

// A kernel's grid needs one axis per loop (unless axes says where each loop runs).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [4, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': grid [4, 2] needs one axis per loop (3), or axes to say where each loop runs

// -----

// A kernel's grid must be the grid its buffers live on.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 1] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': grid [2, 2, 1] uses 4 cores but its buffer 'a' is allocated on 8

// -----

// A kernel's offsets may only use coordinates on the kernel's own grid.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 4]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': an offset uses core.coord 1 of [2, 4], a grid other than the op's [2, 2, 2]

// -----

// A shift's offsets may only use coordinates on the shift's own grid.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %y1 = core.coord 0 of [4, 2, 1]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %y1 to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.shift: an offset uses core.coord 0 of [4, 2, 1], a grid other than the op's [2, 2, 2]

// -----

// A kernel runs in a superstep's compute phase, not directly in the program.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  chip.superstep "mm" {
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': runs in the compute phase of a chip.superstep only

// -----

// An exchange runs in a superstep's exchange phase, not directly in the program.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  core.all_gather %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.all_gather: runs in the exchange phase of a chip.superstep only

// -----

// A shift moves its buffer as the buffer's layout rotates it (A rotates on ring d1, not d0).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 0 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.shift: dim 1 on a ring of 2 cores along grid axis 0 is not how buffer 'a' rotates in the layout #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> that core.load gives it

// -----

// A shift's grid must be the grid its buffer lives on.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [1, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.shift: grid [1, 2, 2] uses 4 cores but its buffer 'a' is allocated on 8

// -----

// A load's layout must place the tensor on the cores its buffer lives on.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 16 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 16 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.load: layout grid [2, 2, 2] uses 8 cores but its buffer 'a' is allocated on 16

// -----

// A buffer holds its tensor in one layout: the store reads D placed otherwise than the relayout wrote it.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %d = core.alloc "d" on 8 : !core.buffer<8x2xf32>
  chip.superstep "r" {
  } exchange {
    core.relayout "r" %c to %d of tensor<8x8xf32> layouts <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> -> <grid [1, 4, 2] axes [-, d1] tile [8, 2]> : !core.buffer<4x4xf32>, !core.buffer<8x2xf32>
  }
  %z = core.store %d layout <grid [1, 2, 4] axes [-, d2] tile [8, 2]> : !core.buffer<8x2xf32> -> tensor<8x8xf32>
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.relayout: buffer 'd' is laid out as #rtensor.layout<grid [1, 4, 2] axes [-, d1] tile [8, 2]> here but as #rtensor.layout<grid [1, 2, 4] axes [-, d2] tile [8, 2]> by core.store

// -----

// A kernel writes its output tiles where the buffer's layout says they lie (C's rows split on grid axis 0, not 1).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d1, d0] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': operand #2 (buffer 'c') is read as #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]> but core.store lays it out as #rtensor.layout<grid [2, 2, 2] axes [d1, d0] tile [4, 4]>

// -----

// An all_reduce combines copies of one tile: its group axes cannot split the buffer's tensor (C's columns split on axis 1).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [1, 2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.all_reduce: group axes [1, 2] of grid [2, 2, 2] cross tiles of buffer 'c', which the layout #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]> that core.store gives it splits along grid axis 1

// -----

// An all_reduce runs on the grid of its buffer's layout (8 cores either way, but other groups).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [2] of [2, 1, 4] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.all_reduce: grid [2, 1, 4] is not the grid of the layout #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]> that core.store gives buffer 'c'

// -----

// An all_reduce groups cores along axes of more than one core (its grid matches the layout's up to size-1 axes, so a size-1 group axis names none of them).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  %x1 = core.coord 1 of [2, 2, 2]
  %o = arith.muli %x1, %four : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%o, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.all_reduce "sum" %c over [0] of [1, 2, 2, 2] : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.all_reduce: group axes [0] of grid [1, 2, 2, 2] include a size-1 axis, along which no cores combine
