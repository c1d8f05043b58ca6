// RUN: %python %S/Inputs/reduction_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s --check-prefix=REPARSED
// RUN: t10-opt %t.onnx -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor,convert-rtensor-to-cshift' | filecheck %s --check-prefix=CSHIFT
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' | filecheck %s --check-prefix=CORE
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM

// Reductions are generics with reduction iterators whose body is combine(acc, f(inputs)),
// accumulating into a splat of the combiner's identity; keepdims adds a size-1 parallel loop
// that only the output reads. Softmax and LayerNormalization decompose into reductions and
// element-wise generics.

// -inf prints as its bits, dense<0xff800000>, and t10-opt reads a hex float literal as bits
// (as MLIR does), so the printed IR compiles and simulates as the model.
// REPARSED: arith.constant dense<0xff800000> : tensor<4x1xf32>
// REPARSED: arith.maximumf
// RUN: t10-opt %t.onnx | t10-opt -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM

// Softmax along axis 1: max-reduce (init -inf), exp(x - max), sum-reduce, divide.
// CHECK:      %[[NINF:.*]] = arith.constant dense<0xff800000> : tensor<4x1xf32>
// CHECK-NEXT: %[[MAX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%[[NINF]] : tensor<4x1xf32>) attrs =  {t10.name = "softmax:0"} {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:   %[[M:.*]] = arith.maximumf %[[ACC]], %[[X]] : f32
// CHECK-NEXT:   linalg.yield %[[M]] : f32
// CHECK:      t10.name = "softmax:1"
// CHECK:        arith.subf
// CHECK-NEXT:   math.exp
// CHECK:      %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<4x1xf32>
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} {{.*}} outs(%[[ZERO]] : tensor<4x1xf32>) attrs =  {t10.name = "softmax:2"}
// CHECK:        arith.addf
// CHECK-NEXT:   linalg.yield
// CHECK:      %sm = linalg.generic {{.*}}t10.name = "softmax:3"
// CHECK:        arith.divf

// LayerNormalization: sum, scale, centre, sum of squares (the square is f), eps + sqrt, affine.
// CHECK:      t10.name = "ln:0"
// CHECK:      t10.name = "ln:3"
// CHECK-NEXT: ^bb0(%[[D:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:   %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:   %{{.*}} = arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK:      t10.name = "ln:4"
// CHECK:        math.sqrt
// CHECK:      %ln = linalg.generic

// ReduceMax keepdims=1, ReduceSum keepdims=0, ReduceMean = sum then scale.
// CHECK:      %mx = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x1xf32>) attrs =  {t10.name = "rmax"}
// CHECK:      %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK:      t10.name = "rmean:0"
// CHECK:      %y = linalg.generic {{.*}}t10.name = "rmean:1"
// CHECK:        arith.mulf

// A reduction dim split over cores ends in an all-reduce with the operator's combiner.
// CSHIFT: cshift.all_reduce "max"
// CSHIFT: cshift.all_reduce "sum"
// CORE:   core.all_reduce "max"
// CORE:   core.all_reduce "sum"

// SIM:      softmax:0         reduction
// SIM-NEXT: softmax:1         elementwise
// SIM-NEXT: softmax:2         reduction
// SIM-NEXT: softmax:3         elementwise
// SIM:      rmax              reduction
// SIM:      rmean:1           elementwise
