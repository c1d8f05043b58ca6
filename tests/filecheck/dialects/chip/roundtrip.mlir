// RUN: t10-opt %s | t10-opt | filecheck %s
// RUN: t10-opt %s --print-op-generic | t10-opt | filecheck %s

// Round trip of the chip ops through their custom syntax.

// A program with one result: a superstep with a kernel and a non-empty exchange (shifts
// inside an scf.for), a last superstep whose exchange is empty, an all-reduce superstep with an
// empty compute block, then chip.yield.
func.func @matmul(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %0 = chip.program "main" on 8 -> tensor<8x8xf32> {
    %a = core.alloc "mm/in0" on 8 : !core.buffer<4x8xf32>
    core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
    %b = core.alloc "mm/in1" on 8 : !core.buffer<8x4xf32>
    core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
    %c = core.alloc "mm" on 8 : !core.buffer<4x4xf32>
    %zero = arith.constant 0 : index
    %one = arith.constant 1 : index
    %four = arith.constant 4 : index
    %x1 = core.coord 1 of [2, 2, 2]
    scf.for %t = %zero to %one step %one {
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
      }
    }
    chip.superstep "mm" {
      core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%four, %four, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
    } exchange {
    }
    core.free %b : !core.buffer<8x4xf32>
    core.free %a : !core.buffer<4x8xf32>
    chip.superstep "mm" {
    ^bb0:
    } exchange {
      core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
    }
    %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
    core.free %c : !core.buffer<4x4xf32>
    chip.yield %y : tensor<8x8xf32>
  }
  func.return %0 : tensor<8x8xf32>
}
// CHECK-LABEL: func.func @matmul(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>) -> tensor<8x8xf32> {
// CHECK-NEXT:    %0 = chip.program "main" on 8 -> tensor<8x8xf32> {
// CHECK-NEXT:      %a = core.alloc "mm/in0" on 8 : !core.buffer<4x8xf32>
// CHECK-NEXT:      core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
// CHECK-NEXT:      %b = core.alloc "mm/in1" on 8 : !core.buffer<8x4xf32>
// CHECK-NEXT:      core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
// CHECK-NEXT:      %c = core.alloc "mm" on 8 : !core.buffer<4x4xf32>
// CHECK-NEXT:      %zero = arith.constant 0 : index
// CHECK-NEXT:      %one = arith.constant 1 : index
// CHECK-NEXT:      %four = arith.constant 4 : index
// CHECK-NEXT:      %x1 = core.coord 1 of [2, 2, 2]
// CHECK-NEXT:      scf.for %t = %zero to %one step %one {
// CHECK-NEXT:        chip.superstep "mm" {
// CHECK-NEXT:          core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
// CHECK-NEXT:          ^bb0(%p: f32, %q: f32, %acc: f32):
// CHECK-NEXT:            %m = arith.mulf %p, %q : f32
// CHECK-NEXT:            %s = arith.addf %acc, %m : f32
// CHECK-NEXT:            linalg.yield %s : f32
// CHECK-NEXT:          }
// CHECK-NEXT:        } exchange {
// CHECK-NEXT:          core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
// CHECK-NEXT:          core.shift %b ring 0 x 2 of [2, 2, 2] dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      chip.superstep "mm" {
// CHECK-NEXT:        core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%four, %four, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
// CHECK-NEXT:        ^bb0(%p_1: f32, %q_1: f32, %acc_1: f32):
// CHECK-NEXT:          %m_1 = arith.mulf %p_1, %q_1 : f32
// CHECK-NEXT:          %s_1 = arith.addf %acc_1, %m_1 : f32
// CHECK-NEXT:          linalg.yield %s_1 : f32
// CHECK-NEXT:        }
// CHECK-NEXT:      } exchange {
// CHECK-NEXT:      }
// CHECK-NEXT:      core.free %b : !core.buffer<8x4xf32>
// CHECK-NEXT:      core.free %a : !core.buffer<4x8xf32>
// CHECK-NEXT:      chip.superstep "mm" {
// CHECK-NEXT:      ^bb0:
// CHECK-NEXT:      } exchange {
// CHECK-NEXT:        core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
// CHECK-NEXT:      core.free %c : !core.buffer<4x4xf32>
// CHECK-NEXT:      chip.yield %y : tensor<8x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0 : tensor<8x8xf32>
// CHECK-NEXT:  }

// A program without results ends in a bare chip.yield; a superstep with both phases empty.
func.func @no_results() {
  chip.program "empty" on 1 -> {
    chip.superstep "nothing" {
    } exchange {
    }
    chip.yield
  }
  func.return
}
// CHECK-LABEL: func.func @no_results() {
// CHECK-NEXT:    chip.program "empty" on 1 -> {
// CHECK-NEXT:      chip.superstep "nothing" {
// CHECK-NEXT:      } exchange {
// CHECK-NEXT:      }
// CHECK-NEXT:      chip.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// A program with two results; a superstep with an empty compute phase and a relayout exchange.
func.func @two_results(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0, %1 = chip.program "two" on 4 -> tensor<8x8xf32>, tensor<8x8xf32> {
    %src = core.alloc "src" on 4 : !core.buffer<2x8xf32>
    %dst = core.alloc "dst" on 4 : !core.buffer<8x2xf32>
    core.load %x into %src layout <grid [4, 1] axes [d0, -] tile [2, 8]> : tensor<8x8xf32>, !core.buffer<2x8xf32>
    chip.superstep "move" {
    } exchange {
      core.relayout "y/relayout" %src to %dst of tensor<8x8xf32> layouts <grid [4, 1] axes [d0, -] tile [2, 8]> -> <grid [1, 4] axes [-, d1] tile [8, 2]> : !core.buffer<2x8xf32>, !core.buffer<8x2xf32>
    }
    %y = core.store %src layout <grid [4, 1] axes [d0, -] tile [2, 8]> : !core.buffer<2x8xf32> -> tensor<8x8xf32>
    %z = core.store %dst layout <grid [1, 4] axes [-, d1] tile [8, 2]> : !core.buffer<8x2xf32> -> tensor<8x8xf32>
    chip.yield %y, %z : tensor<8x8xf32>, tensor<8x8xf32>
  }
  func.return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
// CHECK-LABEL: func.func @two_results(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
// CHECK-NEXT:    %0, %1 = chip.program "two" on 4 -> tensor<8x8xf32>, tensor<8x8xf32> {
// CHECK-NEXT:      %src = core.alloc "src" on 4 : !core.buffer<2x8xf32>
// CHECK-NEXT:      %dst = core.alloc "dst" on 4 : !core.buffer<8x2xf32>
// CHECK-NEXT:      core.load %x into %src layout <grid [4, 1] axes [d0, -] tile [2, 8]> : tensor<8x8xf32>, !core.buffer<2x8xf32>
// CHECK-NEXT:      chip.superstep "move" {
// CHECK-NEXT:      } exchange {
// CHECK-NEXT:        core.relayout "y/relayout" %src to %dst of tensor<8x8xf32> layouts <grid [4, 1] axes [d0, -] tile [2, 8]> -> <grid [1, 4] axes [-, d1] tile [8, 2]> : !core.buffer<2x8xf32>, !core.buffer<8x2xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %y = core.store %src layout <grid [4, 1] axes [d0, -] tile [2, 8]> : !core.buffer<2x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:      %z = core.store %dst layout <grid [1, 4] axes [-, d1] tile [8, 2]> : !core.buffer<8x2xf32> -> tensor<8x8xf32>
// CHECK-NEXT:      chip.yield %y, %z : tensor<8x8xf32>, tensor<8x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
// CHECK-NEXT:  }

// A load from off-chip memory between supersteps: a weight loaded into its layout.
func.func @offchip() {
  chip.program "main" on 4 -> {
    %w = arith.constant dense<1.000000e+00> : tensor<8x8xf32>
    %b = core.alloc "mm/in1" on 4 : !core.buffer<2x8xf32>
    chip.load "mm/load" %w into %b layout <grid [4] axes [d0, -] tile [2, 8]> : tensor<8x8xf32>, !core.buffer<2x8xf32>
    core.free %b : !core.buffer<2x8xf32>
    chip.yield
  }
  func.return
}
// CHECK-LABEL: func.func @offchip() {
// CHECK-NEXT:    chip.program "main" on 4 -> {
// CHECK-NEXT:      %w = arith.constant dense<1.000000e+00> : tensor<8x8xf32>
// CHECK-NEXT:      %b = core.alloc "mm/in1" on 4 : !core.buffer<2x8xf32>
// CHECK-NEXT:      chip.load "mm/load" %w into %b layout <grid [4] axes [d0, -] tile [2, 8]> : tensor<8x8xf32>, !core.buffer<2x8xf32>
// CHECK-NEXT:      core.free %b : !core.buffer<2x8xf32>
// CHECK-NEXT:      chip.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
