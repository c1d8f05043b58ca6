// RUN: t10-opt %s | t10-opt | filecheck %s
// RUN: t10-opt %s --print-op-generic | t10-opt | filecheck %s

// core.gather: table and ids buffers, the target buffer, the three layouts and tensors.
%t = core.alloc "table" on 4 : !core.buffer<2x4xf32>
%i = core.alloc "ids" on 2 : !core.buffer<1x3xf32>
%o = core.alloc "Add/gather" on 6 : !core.buffer<1x1x4xf32>
core.gather "Add/gather" %t[%i] to %o axis 0 of tensor<8x4xf32>[tensor<2x3xf32>] -> tensor<2x3x4xf32> layouts <grid [4] axes [d0, -] tile [2, 4]>, <grid [2] axes [d0, -] tile [1, 3]> -> <grid [2, 3, 1] axes [d0, d1, -] tile [1, 1, 4]> : !core.buffer<2x4xf32>, !core.buffer<1x3xf32>, !core.buffer<1x1x4xf32>

// CHECK: core.gather "Add/gather" %t[%i] to %o axis 0 of tensor<8x4xf32>[tensor<2x3xf32>] -> tensor<2x3x4xf32> layouts <grid [4] axes [d0, -] tile [2, 4]>, <grid [2] axes [d0, -] tile [1, 3]> -> <grid [2, 3, 1] axes [d0, d1, -] tile [1, 1, 4]> : !core.buffer<2x4xf32>, !core.buffer<1x3xf32>, !core.buffer<1x1x4xf32>

// GatherND and GatherElements: the same op, of another kind.
%j = core.alloc "ids2" on 2 : !core.buffer<1x1xf32>
%n = core.alloc "Add/gather2" on 2 : !core.buffer<1x4xf32>
core.gather "Add/gather2" %t[%j] to %n nd batch_dims 0 of tensor<8x4xf32>[tensor<2x1xf32>] -> tensor<2x4xf32> layouts <grid [4] axes [d0, -] tile [2, 4]>, <grid [2] axes [d0, -] tile [1, 1]> -> <grid [2] axes [d0, -] tile [1, 4]> : !core.buffer<2x4xf32>, !core.buffer<1x1xf32>, !core.buffer<1x4xf32>
%e = core.alloc "Add/gather3" on 2 : !core.buffer<1x3xf32>
core.gather "Add/gather3" %t[%i] to %e elements axis 0 of tensor<8x4xf32>[tensor<2x3xf32>] -> tensor<2x3xf32> layouts <grid [4] axes [d0, -] tile [2, 4]>, <grid [2] axes [d0, -] tile [1, 3]> -> <grid [2] axes [d0, -] tile [1, 3]> : !core.buffer<2x4xf32>, !core.buffer<1x3xf32>, !core.buffer<1x3xf32>

// CHECK: core.gather "Add/gather2" %t[%j] to %n nd batch_dims 0 of tensor<8x4xf32>[tensor<2x1xf32>] -> tensor<2x4xf32> layouts <grid [4] axes [d0, -] tile [2, 4]>, <grid [2] axes [d0, -] tile [1, 1]> -> <grid [2] axes [d0, -] tile [1, 4]> : !core.buffer<2x4xf32>, !core.buffer<1x1xf32>, !core.buffer<1x4xf32>
// CHECK: core.gather "Add/gather3" %t[%i] to %e elements axis 0 of tensor<8x4xf32>[tensor<2x3xf32>] -> tensor<2x3xf32> layouts <grid [4] axes [d0, -] tile [2, 4]>, <grid [2] axes [d0, -] tile [1, 3]> -> <grid [2] axes [d0, -] tile [1, 3]> : !core.buffer<2x4xf32>, !core.buffer<1x3xf32>, !core.buffer<1x3xf32>
