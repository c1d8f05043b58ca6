// Every op is located at the ONNX nodes it was made for, at every level: `loc("node")`, or
// `loc(fused[...])` where passes fused several nodes' ops (an element-wise chain, an
// epilogue, a superstep). `--print-debuginfo` prints them (t10-opt, xdsl-opt, t10 compile).
// RUN: %python -m t10.examples mlp -o %t.onnx
// RUN: t10-opt %t.onnx --print-debuginfo | filecheck %s --check-prefix=ONNX
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' --print-debuginfo | filecheck %s
// RUN: t10 compile %t.onnx --chip test-16 --emit rtensor --print-debuginfo | filecheck %s --check-prefix=RT

// ONNX:      linalg.generic
// ONNX-SAME:   t10.name = "fc1/MatMul"
// ONNX:        arith.mulf {{.*}} loc("fc1/MatMul")
// ONNX:      } -> tensor<{{.*}}> loc("fc1/MatMul")
// ONNX:      linalg.generic
// ONNX-SAME:   t10.name = "fc1/Add"
// ONNX:      } -> tensor<{{.*}}> loc("fc1/Add")

// CHECK:      chip.program "main"
// CHECK:        chip.superstep "fc1/MatMul+fc1/Add+fc1/Relu" {
// CHECK-NEXT:     core.kernel "fc1/MatMul+fc1/Add+fc1/Relu"
// CHECK:        } loc(fused["fc1/MatMul", "fc1/Add", "fc1/Relu"])
// CHECK:        chip.superstep "fc3/MatMul+fc3/Add"
// CHECK:        } loc(fused["fc3/MatMul", "fc3/Add"])
// CHECK:      } loc(unknown)

// RT:      rtensor.relayout
// RT-SAME:   loc(fused["fc2/MatMul", "fc2/Add", "fc2/Relu"])
