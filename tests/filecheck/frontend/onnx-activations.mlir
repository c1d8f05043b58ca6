// RUN: %python %S/Inputs/activation_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16 fuse=false}' -t t10-sim | filecheck %s --check-prefix=SIM

// An activation with attributes is one element-wise generic whose body reads them as
// constants; Softplus cannot overflow (max(x, 0) + log(1 + exp(-|x|))); PRelu's slope
// broadcasts to its input; LogSoftmax ends in (x - max) - log(sum).

// CHECK:      %leaky = linalg.generic
// CHECK-SAME:   t10.name = "leaky"
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[A:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:   %[[AX:.*]] = arith.mulf %[[A]], %[[X]] : f32
// CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[NEG:.*]] = arith.cmpf olt, %[[X]], %[[Z]] : f32
// CHECK-NEXT:   %[[R:.*]] = arith.select %[[NEG]], %[[AX]], %[[X]] : f32
// CHECK-NEXT:   linalg.yield %[[R]] : f32

// CHECK:      %soft = linalg.generic
// CHECK-SAME:   t10.name = "softplus"
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT:   %[[N:.*]] = arith.negf %[[ABS]] : f32
// CHECK-NEXT:   %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT:   %[[L:.*]] = math.log %[[S]] : f32
// CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[M:.*]] = arith.maximumf %[[X]], %[[Z]] : f32
// CHECK-NEXT:   %[[R:.*]] = arith.addf %[[M]], %[[L]] : f32
// CHECK-NEXT:   linalg.yield %[[R]] : f32

// CHECK:      %prelu = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:   ins(%soft, %slope : tensor<4x8xf32>, tensor<8xf32>)
// CHECK:        arith.select

// CHECK:      %y = linalg.generic
// CHECK-SAME:   t10.name = "log_softmax:3"
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[MAX:.*]]: f32, %[[SUM:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[D:.*]] = arith.subf %[[X]], %[[MAX]] : f32
// CHECK-NEXT:   %[[L:.*]] = math.log %[[SUM]] : f32
// CHECK-NEXT:   %[[R:.*]] = arith.subf %[[D]], %[[L]] : f32
// CHECK-NEXT:   linalg.yield %[[R]] : f32

// SIM:      total   {{[0-9,]+}} cycles
// SIM:      leaky           elementwise
// SIM-NEXT: softplus        elementwise
// SIM-NEXT: prelu/relayout  relayout
// SIM-NEXT: prelu           elementwise
// SIM-NEXT: log_softmax:0   reduction
// SIM-NEXT: log_softmax:1   elementwise
// SIM-NEXT: log_softmax:2   reduction
// SIM-NEXT: log_softmax:3   elementwise
