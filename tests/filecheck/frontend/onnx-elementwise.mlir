// RUN: %python %S/Inputs/elementwise_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16 fuse=false}' -t t10-sim | filecheck %s --check-prefix=SIM

// Each element-wise ONNX node is one all-parallel linalg.generic named after the node; its body
// uses arith ops, and math ops where arith has none. Dropout and Cast (to FLOAT) are identities.

// CHECK:      func.func @main(%x: tensor<4x8xf32> {t10.name = "x"}) -> (tensor<4x8xf32> {t10.name = "y"}) {

// Broadcasting: the [8] divisor reads d1, the rank-0 exponent reads nothing.
// CHECK:      %div = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:   t10.name = "div"
// CHECK:        arith.divf
// CHECK-NEXT:   linalg.yield

// CHECK:      %sig = linalg.generic
// CHECK-SAME:   t10.name = "sigmoid"
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:   %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT:   %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT:   %[[S:.*]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK-NEXT:   linalg.yield %[[S]] : f32

// CHECK:      %pow = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:   ins(%sig, %two : tensor<4x8xf32>, tensor<f32>)
// CHECK:        math.powf
// CHECK-NEXT:   linalg.yield

// CHECK:      %sqrt = linalg.generic
// CHECK:        math.sqrt
// CHECK-NEXT:   linalg.yield

// CHECK:      %rec = linalg.generic
// CHECK-SAME:   t10.name = "reciprocal"
// CHECK:        %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   arith.divf %[[ONE]], %{{.*}} : f32
// CHECK-NEXT:   linalg.yield

// CHECK:      %neg = linalg.generic
// CHECK:        arith.negf
// CHECK-NEXT:   linalg.yield

// CHECK:      %exp = linalg.generic
// CHECK:        math.exp
// CHECK-NEXT:   linalg.yield

// CHECK:      %tanh = linalg.generic
// CHECK:        math.tanh
// CHECK-NEXT:   linalg.yield

// CHECK:      %erf = linalg.generic
// CHECK:        math.erf
// CHECK-NEXT:   linalg.yield

// Gelu reads the erf generic directly: Dropout and Cast emitted nothing.
// Exact Gelu: 0.5 * x * (1 + erf(x * 1/sqrt(2))).
// CHECK:      %gelu = linalg.generic
// CHECK-SAME:   ins(%erf : tensor<4x8xf32>)
// CHECK-SAME:   t10.name = "gelu"
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[C:.*]] = arith.constant 0.707106769 : f32
// CHECK-NEXT:   %[[XS:.*]] = arith.mulf %[[G]], %[[C]] : f32
// CHECK-NEXT:   %[[PHI:.*]] = math.erf %[[XS]] : f32
// CHECK-NEXT:   %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:   %[[HX:.*]] = arith.mulf %[[HALF]], %[[G]] : f32
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[P1:.*]] = arith.addf %[[ONE]], %[[PHI]] : f32
// CHECK-NEXT:   %[[R:.*]] = arith.mulf %[[HX]], %[[P1]] : f32
// CHECK-NEXT:   linalg.yield %[[R]] : f32

// Tanh Gelu: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), x^3 by multiplication.
// CHECK:      %y = linalg.generic
// CHECK-SAME:   t10.name = "gelu_tanh"
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[SQ:.*]] = arith.mulf %[[G]], %[[G]] : f32
// CHECK-NEXT:   %[[CU:.*]] = arith.mulf %[[G]], %[[SQ]] : f32
// CHECK-NEXT:   arith.constant 4.471500e-02 : f32
// CHECK:        arith.constant 0.797884583 : f32
// CHECK:        math.tanh
// CHECK-NOT:    math.powf
// CHECK:        linalg.yield
// CHECK:      func.return %y : tensor<4x8xf32>

// The whole chain compiles for the chip and simulates: one element-wise operator per node.
// SIM:      total   {{[0-9,]+}} cycles
// SIM:      div         elementwise
// SIM-NEXT: sigmoid     elementwise
// SIM-NEXT: pow         elementwise
// SIM-NEXT: sqrt        elementwise
// SIM-NEXT: reciprocal  elementwise
// SIM-NEXT: neg         elementwise
// SIM-NEXT: exp         elementwise
// SIM-NEXT: tanh        elementwise
// SIM-NEXT: erf         elementwise
// SIM-NEXT: gelu        elementwise
// SIM-NEXT: gelu_tanh   elementwise
