// RUN: %python %S/Inputs/empty_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM
// RUN: t10 run %t.onnx --chip test-16 --check | filecheck %s --check-prefix=CHECKED

// An empty value has nothing to compute: it is a known constant. The empty cache slice
// x[:, 0:0] adds nothing to the Concat, which leaves it out: no view, no padded sum, the Relu
// reads x itself. Returned as a graph output, the empty value is an empty constant.

// CHECK:      func.func @main(%x: tensor<2x4x8xf32> {t10.name = "x"}) -> (tensor<2x4x8xf32> {t10.name = "y"}, tensor<2x0x8xf32> {t10.name = "past"}) {
// CHECK-NEXT:   tensor.empty() : tensor<2x4x8xf32>
// CHECK-NEXT:   %y = linalg.generic {{.*}} ins(%x : tensor<2x4x8xf32>)
// CHECK-SAME:     t10.name = "relu"
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:     arith.constant 0.000000e+00
// CHECK-NEXT:     arith.maximumf
// CHECK-NEXT:     linalg.yield
// CHECK-NEXT:   } -> tensor<2x4x8xf32>
// CHECK-NEXT:   %past = arith.constant dense<> : tensor<2x0x8xf32>
// CHECK-NEXT:   func.return %y, %past : tensor<2x4x8xf32>, tensor<2x0x8xf32>

// Only the Relu runs on the chip.
// SIM:      op    kind
// SIM-NEXT: relu  elementwise

// CHECKED:  check   PASSED against onnxruntime
// CHECKED:  past: max abs 0, max rel 0 (atol 1e-05): ok
