// RUN: t10-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Redundant attributes of kernels and shifts must agree with the buffers' layouts and tensors.
// Each case breaks one rule of a valid program: a Cannon matmul (both inputs rotate), an
// all-reduce, then a ReLU and a negation of its output.

// A kernel's loop size along an operand's rotating dim is the layout's chunk (its tile over its steps).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %r = core.alloc "r" on 8 : !core.buffer<4x4xf32>
  %n = core.alloc "n" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 2] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  chip.superstep "relu" {
    core.kernel "relu" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%c) outs(%r) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %y = arith.maximumf %v, %z : f32
      linalg.yield %y : f32
    }
  } exchange {
  }
  chip.superstep "neg" {
    core.kernel "neg" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%r) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v2: f32, %o2: f32):
      %y2 = arith.negf %v2 : f32
      linalg.yield %y2 : f32
    }
  } exchange {
  }
  %y = core.store %n layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': operand #0 (buffer 'a') rotates in chunks of 4 along its dim 1 (the layout #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> that core.load gives it), so the kernel must slice that dim by 4; it has sizes [4, 4, 2] and slices dims [1]

// -----

// A kernel's bounds are the extents of the tensors its operands hold.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %r = core.alloc "r" on 8 : !core.buffer<4x4xf32>
  %n = core.alloc "n" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 12] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  chip.superstep "relu" {
    core.kernel "relu" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%c) outs(%r) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %y = arith.maximumf %v, %z : f32
      linalg.yield %y : f32
    }
  } exchange {
  }
  chip.superstep "neg" {
    core.kernel "neg" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%r) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v2: f32, %o2: f32):
      %y2 = arith.negf %v2 : f32
      linalg.yield %y2 : f32
    }
  } exchange {
  }
  %y = core.store %n layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': bounds [8, 8, 12] give loop d2 12 elements, but operand #0 (buffer 'a') holds tensor<8x16xf32> (as core.load says), 16 along dim 1

// -----

// A kernel's bounds agree with those of each kernel that shares a buffer with it (the negation
// and the ReLU on 'r', which no op lays out: before the store's word on the negation's output).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %r = core.alloc "r" on 8 : !core.buffer<4x4xf32>
  %n = core.alloc "n" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  chip.superstep "relu" {
    core.kernel "relu" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%c) outs(%r) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %y = arith.maximumf %v, %z : f32
      linalg.yield %y : f32
    }
  } exchange {
  }
  chip.superstep "neg" {
    core.kernel "neg" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 6] ins(%r) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v2: f32, %o2: f32):
      %y2 = arith.negf %v2 : f32
      linalg.yield %y2 : f32
    }
  } exchange {
  }
  %y = core.store %n layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'relu': bounds [8, 8] give buffer dim 1 of operand #1 (buffer 'r') 8 elements, but core.kernel 'neg' that shares it gives it 6 (bounds [8, 6])

// -----

// A buffer no op lays out is read by every kernel that uses it in one layout (the ReLU's loops swap grid axes).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %r = core.alloc "r" on 8 : !core.buffer<4x4xf32>
  %n = core.alloc "n" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  chip.superstep "relu" {
    core.kernel "relu" on [2, 2, 2] axes [1, 0] sizes [4, 4] of [8, 8] ins(%c) outs(%r) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %y = arith.maximumf %v, %z : f32
      linalg.yield %y : f32
    }
  } exchange {
  }
  chip.superstep "neg" {
    core.kernel "neg" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%r) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v2: f32, %o2: f32):
      %y2 = arith.negf %v2 : f32
      linalg.yield %y2 : f32
    }
  } exchange {
  }
  %y = core.store %n layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': operand #2 (buffer 'c') is read as #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]> but core.kernel 'relu' reads it as #rtensor.layout<grid [2, 2, 2] axes [d1, d0] tile [4, 4]> (grid [2, 2, 2])

// -----

// A rotating operand's other dims lie as the kernel reads them (grid axes reordered by the kernel's axes).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %r = core.alloc "r" on 8 : !core.buffer<4x4xf32>
  %n = core.alloc "n" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] axes [2, 1, 0] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  chip.superstep "relu" {
    core.kernel "relu" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%c) outs(%r) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %y = arith.maximumf %v, %z : f32
      linalg.yield %y : f32
    }
  } exchange {
  }
  chip.superstep "neg" {
    core.kernel "neg" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%r) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v2: f32, %o2: f32):
      %y2 = arith.negf %v2 : f32
      linalg.yield %y2 : f32
    }
  } exchange {
  }
  %y = core.store %n layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': operand #0 (buffer 'a') is read as #rtensor.layout<grid [2, 2, 2] axes [d2, d0] tile [4, 8]> but core.load lays it out as #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8]>

// -----

// Operands rotating along one loop share its skew (the kernel reads one chunk of each per step).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %r = core.alloc "r" on 8 : !core.buffer<4x4xf32>
  %n = core.alloc "n" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  chip.superstep "relu" {
    core.kernel "relu" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%c) outs(%r) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %y = arith.maximumf %v, %z : f32
      linalg.yield %y : f32
    }
  } exchange {
  }
  chip.superstep "neg" {
    core.kernel "neg" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%r) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v2: f32, %o2: f32):
      %y2 = arith.negf %v2 : f32
      linalg.yield %y2 : f32
    }
  } exchange {
  }
  %y = core.store %n layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': operands #0 and #1 rotate along loop d2 with skews that differ (their layouts #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> and #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d0, 2, 1)]>): the kernel reads one chunk of each per step

// -----

// An all-reduce's groups hold copies of one tile as the kernels read its buffer (no op lays it out).
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %r = core.alloc "r" on 8 : !core.buffer<4x4xf32>
  %n = core.alloc "n" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [1] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  chip.superstep "relu" {
    core.kernel "relu" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%c) outs(%r) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %y = arith.maximumf %v, %z : f32
      linalg.yield %y : f32
    }
  } exchange {
  }
  chip.superstep "neg" {
    core.kernel "neg" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%r) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v2: f32, %o2: f32):
      %y2 = arith.negf %v2 : f32
      linalg.yield %y2 : f32
    }
  } exchange {
  }
  %y = core.store %n layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.all_reduce: group axes [1] of grid [2, 2, 2] cross tiles of buffer 'c', which the layout #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]> that core.kernel gives it splits along grid axis 1

// -----

// A loop is a reduction exactly when the output does not read it.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %r = core.alloc "r" on 8 : !core.buffer<4x4xf32>
  %n = core.alloc "n" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  chip.superstep "relu" {
    core.kernel "relu" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%c) outs(%r) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %y = arith.maximumf %v, %z : f32
      linalg.yield %y : f32
    }
  } exchange {
  }
  chip.superstep "neg" {
    core.kernel "neg" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%r) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v2: f32, %o2: f32):
      %y2 = arith.negf %v2 : f32
      linalg.yield %y2 : f32
    }
  } exchange {
  }
  %y = core.store %n layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.kernel 'mm': loop d2 is a parallel loop, but the output does not read it (a reduction loop is one the output does not read)

// -----

// A shift moves chunks of the size its buffer rotates in.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %r = core.alloc "r" on 8 : !core.buffer<4x4xf32>
  %n = core.alloc "n" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 2 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  chip.superstep "relu" {
    core.kernel "relu" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%c) outs(%r) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %y = arith.maximumf %v, %z : f32
      linalg.yield %y : f32
    }
  } exchange {
  }
  chip.superstep "neg" {
    core.kernel "neg" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%r) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v2: f32, %o2: f32):
      %y2 = arith.negf %v2 : f32
      linalg.yield %y2 : f32
    }
  } exchange {
  }
  %y = core.store %n layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.shift: size 2 is not the chunk of 4 elements (its tile over its steps) of the layout #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> that core.load gives buffer 'a'

// -----

// A shift runs on the grid of its buffer's rotating layout.
%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %r = core.alloc "r" on 8 : !core.buffer<4x4xf32>
  %n = core.alloc "n" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [4, 2, 1] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  }
  chip.superstep "relu" {
    core.kernel "relu" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%c) outs(%r) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %y = arith.maximumf %v, %z : f32
      linalg.yield %y : f32
    }
  } exchange {
  }
  chip.superstep "neg" {
    core.kernel "neg" on [2, 2, 2] axes [0, 1] sizes [4, 4] of [8, 8] ins(%r) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%v2: f32, %o2: f32):
      %y2 = arith.negf %v2 : f32
      linalg.yield %y2 : f32
    }
  } exchange {
  }
  %y = core.store %n layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: Operation does not verify: core.shift: grid [4, 2, 1] is not the grid of the layout #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> that core.load gives buffer 'a'
