// RUN: %python %S/Inputs/mask_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' | filecheck %s --check-prefix=CORE

// A runtime mask: the INT64 input is an f32 argument holding its exact values; Equal is an
// element-wise generic yielding a float 0 / 1 (its INT64 constant 0 read as its exact float),
// and Where selects by it at run time (`c != 0`).
// CHECK:      func.func @main(%scores: tensor<2x4xf32> {t10.name = "scores"}, %mask: tensor<2x4xf32> {t10.name = "mask", t10.onnx_type = "int64"})
// CHECK:      %zero = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %pad = linalg.generic {{.*}} ins(%mask, %zero : tensor<2x4xf32>, tensor<f32>) {{.*}} attrs = {t10.name = "pad"} {
// CHECK-NEXT: ^bb0(%[[M:.*]]: f32, %[[Z:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[EQ:.*]] = arith.cmpf oeq, %[[M]], %[[Z]] : f32
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[F:.*]] = arith.select %[[EQ]], %[[ONE]], %[[ZERO]] : f32
// CHECK-NEXT:   linalg.yield %[[F]] : f32
// CHECK:      %y = linalg.generic {{.*}} ins(%pad, %neg, %scores : {{.*}}) {{.*}} attrs = {t10.name = "masked"} {
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32, %[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[Z2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[NZ:.*]] = arith.cmpf one, %[[C]], %[[Z2]] : f32
// CHECK-NEXT:   %[[S:.*]] = arith.select %[[NZ]], %[[A]], %[[B]] : f32
// CHECK-NEXT:   linalg.yield %[[S]] : f32

// They are ordinary element-wise generics: fused into one kernel, the scalar constants inlined.
// CORE:      chip.superstep "pad+masked" {
// CORE:        core.kernel "pad+masked"
// CORE:          arith.cmpf oeq
// CORE:          arith.select
// CORE:          arith.constant -1.000000e+04 : f32
// CORE:          arith.cmpf one
// CORE:          arith.select
