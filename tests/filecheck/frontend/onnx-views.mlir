// RUN: %python %S/Inputs/view_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor' | filecheck %s --check-prefix=RTENSOR
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' | filecheck %s --check-prefix=CORE
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM

// Data-movement operators import as rtensor.view ops: result[i] = source[map(i)]. A Reshape
// maps only the dims it splits or merges; Transpose permutes; Slice strides and offsets;
// Flatten merges.
// CHECK:      %x4 = rtensor.view "split_heads" %x map affine_map<(d0, d1, d2, d3) -> (d0, d1, ((d2 * 3) + d3))> : tensor<2x4x6xf32> -> tensor<2x4x2x3xf32>
// CHECK-NEXT: %xt = rtensor.view "to_heads" %x4 map affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)> : tensor<2x4x2x3xf32> -> tensor<2x2x4x3xf32>
// CHECK:      t10.name = "neg"
// CHECK:      %s = rtensor.view "every_other" %n map affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 * 2), d3)> : tensor<2x2x4x3xf32> -> tensor<2x2x2x3xf32>
// CHECK-NEXT: %y = rtensor.view "flat" %s map affine_map<(d0, d1) -> ((d0 floordiv 2), (d0 mod 2), (d1 floordiv 3), (d1 mod 3))> : tensor<2x2x2x3xf32> -> tensor<4x6xf32>
// CHECK-NEXT: func.return %y : tensor<4x6xf32>

// The views chained in front of `neg` fold into one relayout with the composed map; the
// views after it become the relayout that brings the result into the returned shape.
// RTENSOR:     rtensor.relayout "neg/relayout" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (d0, d2, ((d1 * 3) + d3))>
// RTENSOR:     rtensor.relayout "flat/relayout" %n map affine_map<(d0, d1) -> ((d0 floordiv 2), (d0 mod 2), ((d1 floordiv 3) * 2), (d1 mod 3))>
// RTENSOR-NOT: rtensor.view

// At the core level both are exchanges that apply the view.
// CORE: core.relayout "neg/relayout" {{.*}} view affine_map<(d0, d1, d2, d3) -> (d0, d2, ((d1 * 3) + d3))> as tensor<2x2x4x3xf32>
// CORE: core.relayout "flat/relayout" {{.*}} view affine_map<(d0, d1) -> ((d0 floordiv 2), (d0 mod 2), ((d1 floordiv 3) * 2), (d1 mod 3))> as tensor<4x6xf32>

// The simulator runs and reports them like any relayout.
// SIM: neg/relayout   relayout
// SIM: neg            elementwise
// SIM: flat/relayout  relayout
