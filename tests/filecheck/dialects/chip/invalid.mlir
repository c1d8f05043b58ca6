// RUN: t10-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A program runs on at least one core.
chip.program "main" on 0 -> {
  chip.yield
}

// CHECK: Operation does not verify: chip.program: needs at least one core

// -----

// A program's body must end with a terminator (chip.program has no implicit one).
chip.program "main" on 4 -> {
  %0 = core.alloc "x" on 4 : !core.buffer<4x8xf32>
}

// CHECK: Operation core.alloc terminates block in single-block region but is not a terminator

// -----

// A program's body must end with chip.yield, not another terminator.
chip.program "main" on 4 -> {
  "test.termop"() : () -> ()
}

// CHECK: Operation does not verify: chip.program: body must end with chip.yield

// -----

// chip.yield must yield the program's result types.
%x = "test.op"() : () -> tensor<8x8xf32>
%0 = chip.program "main" on 4 -> tensor<8x8xf32> {
  chip.yield
}

// CHECK: Operation does not verify: chip.program: chip.yield types differ from the results

// -----

// chip.yield types must match the program's result types one for one.
%x = "test.op"() : () -> tensor<8x8xf16>
%0 = chip.program "main" on 4 -> tensor<8x8xf32> {
  chip.yield %x : tensor<8x8xf16>
}

// CHECK: Operation does not verify: chip.program: chip.yield types differ from the results

// -----

// A kernel cannot run in the exchange phase of a superstep.
%x = "test.op"() : () -> !core.buffer<4x8xf32>
%o = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
chip.superstep "neg" {
} exchange {
  core.kernel "neg" on [2, 1] sizes [4, 8] of [8, 8] ins(%x) outs(%o) at(%i, %i) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>) -> !core.buffer<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
}

// CHECK: Operation does not verify: chip.superstep 'neg': 'core.kernel' cannot run in the exchange phase

// -----

// A shift cannot run in the compute phase of a superstep.
%a = "test.op"() : () -> !core.buffer<4x8xf32>
%i = "test.op"() : () -> index
chip.superstep "mm" {
  core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %i to %i : !core.buffer<4x8xf32>
} exchange {
}

// CHECK: Operation does not verify: chip.superstep 'mm': 'core.shift' cannot run in the compute phase

// -----

// Only core.kernel ops run in the compute phase (no index arithmetic).
chip.superstep "mm" {
  %0 = arith.constant 0 : index
} exchange {
}

// CHECK: Operation does not verify: chip.superstep 'mm': 'arith.constant' cannot run in the compute phase

// -----

// Only shift, all_reduce and relayout run in the exchange phase (no alloc).
chip.superstep "mm" {
} exchange {
  %0 = core.alloc "x" on 4 : !core.buffer<4x8xf32>
}

// CHECK: Operation does not verify: chip.superstep 'mm': 'core.alloc' cannot run in the exchange phase

// -----

// Each phase of a superstep is a single block.
chip.superstep "mm" {
} exchange {
^bb0:
  cf.br ^bb1
^bb1:
  cf.br ^bb0
}

// CHECK: Operation does not verify: 'chip.superstep' does not contain single-block regions

// -----

// chip.load loads a host tensor (a weight or a function argument) from off-chip memory, not
// a value computed on the host.
chip.program "main" on 4 -> {
  %w = "test.op"() : () -> tensor<8x8xf32>
  %b = core.alloc "mm/in1" on 4 : !core.buffer<2x8xf32>
  chip.load "mm/load" %w into %b layout <grid [4] axes [d0, -] tile [2, 8]> : tensor<8x8xf32>, !core.buffer<2x8xf32>
  chip.yield
}

// CHECK: Operation does not verify: chip.load 'mm/load': loads a host tensor (an arith.constant or a function argument) from off-chip memory; its source is neither

// -----

// chip.load runs between supersteps, beside them, not in one.
chip.program "main" on 4 -> {
  %w = arith.constant dense<1.0> : tensor<8x8xf32>
  %b = core.alloc "mm/in1" on 4 : !core.buffer<2x8xf32>
  chip.superstep "mm" {
  } exchange {
    chip.load "mm/load" %w into %b layout <grid [4] axes [d0, -] tile [2, 8]> : tensor<8x8xf32>, !core.buffer<2x8xf32>
  }
  chip.yield
}

// CHECK: Operation does not verify: chip.load 'mm/load': runs between supersteps, not in one

// -----

// chip.load fills its buffer with one core's tile of the layout.
chip.program "main" on 4 -> {
  %w = arith.constant dense<1.0> : tensor<8x8xf32>
  %b = core.alloc "mm/in1" on 4 : !core.buffer<4x8xf32>
  chip.load "mm/load" %w into %b layout <grid [4] axes [d0, -] tile [2, 8]> : tensor<8x8xf32>, !core.buffer<4x8xf32>
  chip.yield
}

// CHECK: Operation does not verify: chip.load 'mm/load': buffer !core.buffer<4x8xf32> does not hold the local tile [2, 8] of layout #rtensor.layout<grid [4] axes [d0, -] tile [2, 8]>
