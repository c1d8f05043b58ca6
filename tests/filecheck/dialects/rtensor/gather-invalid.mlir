// RUN: t10-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The result of a gather has the table's dims with the axis replaced by the ids' dims.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2x3xf32>
%g = rtensor.gather "g" %t[%i] axis 0 : (tensor<8x4xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>

// CHECK: rtensor.gather: gathering tensor<2x3xf32> from tensor<8x4xf32> (axis 0) gives shape [2, 3, 4], not tensor<2x4xf32>

// -----

// The axis is a dim of the table.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2xf32>
%g = rtensor.gather "g" %t[%i] axis 2 : (tensor<8x4xf32>, tensor<2xf32>) -> tensor<8x4x2xf32>

// CHECK: rtensor.gather: axis 2 is not a dim of the table [8, 4]

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

// -----

// GatherElements: the ids have the table's rank.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2xf32>
%g = rtensor.gather "g" %t[%i] elements axis 0 : (tensor<8x4xf32>, tensor<2xf32>) -> tensor<2xf32>

// CHECK: rtensor.gather: the ids [2] must have the table's rank 2

// -----

// GatherElements: no dim of the ids but the gathered axis exceeds the table's.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<9x5xf32>
%g = rtensor.gather "g" %t[%i] elements axis 0 : (tensor<8x4xf32>, tensor<9x5xf32>) -> tensor<9x5xf32>

// CHECK: rtensor.gather: dim 1 of the ids [9, 5] exceeds the table's [8, 4] (only the gathered axis 0 may)

// -----

// GatherElements: the result has the ids' shape.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<9x4xf32>
%g = rtensor.gather "g" %t[%i] elements axis 0 : (tensor<8x4xf32>, tensor<9x4xf32>) -> tensor<8x4xf32>

// CHECK: rtensor.gather: gathering tensor<9x4xf32> from tensor<8x4xf32> (elements axis 0) gives shape [9, 4], not tensor<8x4xf32>

// -----

// GatherND: an index tuple indexes 1 to rank - batch_dims dims of the table.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2x3xf32>
%g = rtensor.gather "g" %t[%i] nd batch_dims 0 : (tensor<8x4xf32>, tensor<2x3xf32>) -> tensor<2xf32>

// CHECK: rtensor.gather: index tuples of length 3 (the ids' last dim) must index 1 to 2 dims of the table [8, 4] after its 0 batch dims

// -----

// GatherND: the batch dims of ids and table agree.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2x1xf32>
%g = rtensor.gather "g" %t[%i] nd batch_dims 1 : (tensor<8x4xf32>, tensor<2x1xf32>) -> tensor<2xf32>

// CHECK: rtensor.gather: the batch dims of the ids [2, 1] and the table [8, 4] differ

// -----

// GatherND: batch_dims below the ids' rank (the last dim holds the tuples) and the table's.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<8xf32>
%g = rtensor.gather "g" %t[%i] nd batch_dims 1 : (tensor<8x4xf32>, tensor<8xf32>) -> tensor<8xf32>

// CHECK: rtensor.gather: batch_dims 1 must be below the ranks of the ids and the table

// -----

// GatherND: the result is the ids' dims but the last, then the table's dims not indexed.
%t = "test.op"() : () -> tensor<8x4x5xf32>
%i = "test.op"() : () -> tensor<8x3x1xf32>
%g = rtensor.gather "g" %t[%i] nd batch_dims 1 : (tensor<8x4x5xf32>, tensor<8x3x1xf32>) -> tensor<8x3xf32>

// CHECK: rtensor.gather: gathering tensor<8x3x1xf32> from tensor<8x4x5xf32> (nd batch_dims 1) gives shape [8, 3, 5], not tensor<8x3xf32>

// -----

// A gather has one kind: an axis or nd batch_dims (generic form, to name both).
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2x1xf32>
%g = "rtensor.gather"(%t, %i) <{label = "g", axis = 0 : i64, batch_dims = 0 : i64}> : (tensor<8x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>

// CHECK: rtensor.gather: give exactly one of axis and nd batch_dims

// -----

// elements gathers along an axis.
%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2x1xf32>
%g = "rtensor.gather"(%t, %i) <{label = "g", elements, batch_dims = 0 : i64}> : (tensor<8x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>

// CHECK: rtensor.gather: elements gathers along an axis, not nd
