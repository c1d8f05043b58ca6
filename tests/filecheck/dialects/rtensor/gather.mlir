// RUN: t10-opt %s | t10-opt | filecheck %s
// RUN: t10-opt %s --print-op-generic | t10-opt | filecheck %s

// rtensor.gather of runtime ids: on host tensors (before planning) and on distributed ones.

%t = "test.op"() : () -> tensor<8x4xf32>
%i = "test.op"() : () -> tensor<2x3xf32>
%g = rtensor.gather "Gather_0" %t[%i] axis 0 : (tensor<8x4xf32>, tensor<2x3xf32>) -> tensor<2x3x4xf32>
%h = rtensor.gather "Gather_1" %t[%i] axis 1 : (tensor<8x4xf32>, tensor<2x3xf32>) -> tensor<8x2x3xf32>

// CHECK:      %g = rtensor.gather "Gather_0" %t[%i] axis 0 : (tensor<8x4xf32>, tensor<2x3xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: %h = rtensor.gather "Gather_1" %t[%i] axis 1 : (tensor<8x4xf32>, tensor<2x3xf32>) -> tensor<8x2x3xf32>

// GatherElements (elements axis A) and GatherND (nd batch_dims B) of runtime ids.
%e = rtensor.gather "GatherElements_0" %t[%i] elements axis 1 : (tensor<8x4xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
%j = "test.op"() : () -> tensor<8x3x1xf32>
%n = rtensor.gather "GatherND_0" %t[%j] nd batch_dims 1 : (tensor<8x4xf32>, tensor<8x3x1xf32>) -> tensor<8x3xf32>
%k = "test.op"() : () -> tensor<5x2xf32>
%m = rtensor.gather "GatherND_1" %t[%k] nd batch_dims 0 : (tensor<8x4xf32>, tensor<5x2xf32>) -> tensor<5xf32>

// CHECK:      %e = rtensor.gather "GatherElements_0" %t[%i] elements axis 1 : (tensor<8x4xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:      %n = rtensor.gather "GatherND_0" %t[%j] nd batch_dims 1 : (tensor<8x4xf32>, tensor<8x3x1xf32>) -> tensor<8x3xf32>
// CHECK:      %m = rtensor.gather "GatherND_1" %t[%k] nd batch_dims 0 : (tensor<8x4xf32>, tensor<5x2xf32>) -> tensor<5xf32>

%dt = "test.op"() : () -> !rtensor.tensor<8x4xf16, #rtensor.layout<grid [4] axes [d0, -] tile [2, 4]>>
%di = "test.op"() : () -> !rtensor.tensor<2x3xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 3]>>
%dg = rtensor.gather "Add/gather" %dt[%di] axis 0 : (!rtensor.tensor<8x4xf16, #rtensor.layout<grid [4] axes [d0, -] tile [2, 4]>>, !rtensor.tensor<2x3xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 3]>>) -> !rtensor.tensor<2x3x4xf16, #rtensor.layout<grid [2, 3, 1] axes [d0, d1, -] tile [1, 1, 4]>>

// CHECK:      %dg = rtensor.gather "Add/gather" %dt[%di] axis 0 : (!rtensor.tensor<8x4xf16, #rtensor.layout<grid [4] axes [d0, -] tile [2, 4]>>, !rtensor.tensor<2x3xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 3]>>) -> !rtensor.tensor<2x3x4xf16, #rtensor.layout<grid [2, 3, 1] axes [d0, d1, -] tile [1, 1, 4]>>
