// RUN: t10-opt %s | t10-opt | filecheck %s
// RUN: t10-opt %s --print-op-generic | t10-opt | filecheck %s

// A Cannon matmul whose 2x2x2 grid is placed on the chip's cores: d0 down the columns,
// d2 then d1 along the rows, both rings folded. The kernel, the shifts and the all-reduce
// name the placement their buffers' layouts give.

%x = "test.op"() : () -> tensor<8x16xf32>
%w = "test.op"() : () -> tensor<16x8xf32>
%0 = chip.program "main" on 8 -> tensor<8x8xf32> {
  %a = core.alloc "a" on 8 : !core.buffer<4x8xf32>
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)] placed [[d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %b = core.alloc "b" on 8 : !core.buffer<8x4xf32>
  core.load %w into %b layout <grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)] placed [[d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> : tensor<16x8xf32>, !core.buffer<8x4xf32>
  %c = core.alloc "c" on 8 : !core.buffer<4x4xf32>
  %zero = arith.constant 0 : index
  %four = arith.constant 4 : index
  chip.superstep "mm" {
    core.kernel "mm" on [2, 2, 2] placed <[[d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> sizes [4, 4, 4] of [8, 8, 16] ins(%a, %b) outs(%c) at(%zero, %zero, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } exchange {
    core.shift %a ring 1 x 2 of [2, 2, 2] placed <[[d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> dim 1 size 4 from %zero to %four : !core.buffer<4x8xf32>
    core.shift %b ring 0 x 2 of [2, 2, 2] placed <[[d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> dim 0 size 4 from %zero to %four : !core.buffer<8x4xf32>
    core.all_reduce "sum" %c over [2] of [2, 2, 2] placed <[[d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> : !core.buffer<4x4xf32>
  }
  %y = core.store %c layout <grid [2, 2, 2] axes [d0, d1] tile [4, 4] placed [[d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> : !core.buffer<4x4xf32> -> tensor<8x8xf32>
  chip.yield %y : tensor<8x8xf32>
}

// CHECK: core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)] placed {{\[\[}}d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]>
// CHECK: core.kernel "mm" on [2, 2, 2] placed <{{\[\[}}d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> sizes [4, 4, 4]
// CHECK: core.shift %a ring 1 x 2 of [2, 2, 2] placed <{{\[\[}}d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> dim 1 size 4
// CHECK: core.shift %b ring 0 x 2 of [2, 2, 2] placed <{{\[\[}}d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> dim 0 size 4
// CHECK: core.all_reduce "sum" %c over [2] of [2, 2, 2] placed <{{\[\[}}d0:2], [d2:2, d1:2]] fold [(d0, 2), (d1, 2)]> : !core.buffer<4x4xf32>
