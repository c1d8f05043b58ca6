// RUN: t10-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The result of a gather has the table's dims with the axis replaced by the ids' dims.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2x3xf32>
%g = rtensor.gather "g" %t[%i] axis 0 : (tensor<8x4xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>

// CHECK: rtensor.gather: gathering tensor<2x3xf32> from tensor<8x4xf32> along axis 0 gives shape [2, 3, 4], not tensor<2x4xf32>

// -----

// The axis is a dim of the table.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2xf32>
%g = rtensor.gather "g" %t[%i] axis 2 : (tensor<8x4xf32>, tensor<2xf32>) -> tensor<8x4x2xf32>

// CHECK: rtensor.gather: axis 2 is not a dim of tensor<8x4xf32>

// -----

// The result keeps the table's element type.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2xf32>
%g = rtensor.gather "g" %t[%i] axis 0 : (tensor<8x4xf32>, tensor<2xf32>) -> tensor<2x4xf16>

// CHECK: rtensor.gather: the result's element type f16 is not the table's f32

// -----

// Ids hold integers as floats.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2xi32>
%g = rtensor.gather "g" %t[%i] axis 0 : (tensor<8x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>

// CHECK: rtensor.gather: ids hold integers as floats (f32), got i32

// -----

// Host and distributed tensors do not mix.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> !rtensor.tensor<2xf32, #rtensor.layout<grid [2] axes [d0] tile [1]>>
%g = rtensor.gather "g" %t[%i] axis 0 : (tensor<8x4xf32>, !rtensor.tensor<2xf32, #rtensor.layout<grid [2] axes [d0] tile [1]>>) -> tensor<2x4xf32>

// CHECK: rtensor.gather: table, ids and result are all host tensors or all distributed
