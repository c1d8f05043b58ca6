// RUN: %python %S/Inputs/gather_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor' | filecheck %s --check-prefix=RTENSOR
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' | filecheck %s --check-prefix=CORE

// A Gather of runtime token ids (an INT64 input, through an Unsqueeze) from a constant table
// is an rtensor.gather on host tensors; the integer input is an f32 argument whose
// t10.index_bound (the table's 8 rows) bounds the random ids `t10 run` draws.
// CHECK:      func.func @main(%ids: tensor<2x3xf32> {t10.name = "ids", t10.onnx_type = "int64", t10.index_bound = 8 : i64})
// CHECK:      %ids1 = rtensor.view "batch" %ids map affine_map<(d0, d1, d2) -> (d1, d2)> : tensor<2x3xf32> -> tensor<1x2x3xf32>
// CHECK-NEXT: %emb = rtensor.gather "embed" %table[%ids1] axis 0 : (tensor<8x4xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x4xf32>
// CHECK:      linalg.generic {{.*}} ins(%emb, %pos : tensor<1x2x3x4xf32>, tensor<3x4xf32>)
// CHECK:      func.return %y, %emb

// The plan search costs the gather into its reader (t10.gather). The table and the ids are
// placed once by host_layout (the viewed ids moved on chip by a relayout labelled with the
// gather); each reader gets the gather straight into its layout, and the returned gather is
// made in host_layout and collected.
// RTENSOR:      %[[I:.*]] = rtensor.distribute %ids : tensor<2x3xf32> -> !rtensor.tensor<2x3xf32, #rtensor.layout<grid [3] axes [-, d0] tile [2, 1]>>
// RTENSOR-NEXT: %[[V:.*]] = rtensor.relayout "add_pos/gather" %[[I]] map affine_map<(d0, d1, d2) -> (d1, d2)>
// RTENSOR:      %[[T:.*]] = rtensor.distribute %table : tensor<8x4xf32> -> !rtensor.tensor<8x4xf32, #rtensor.layout<grid [8] axes [d0, -] tile [1, 4]>>
// RTENSOR:      %[[E:.*]] = rtensor.gather "embed/gather" %[[T]][%[[V]]] axis 0 {estimate = #rtensor.estimate<{{.*}}>} : {{.*}} -> !rtensor.tensor<1x2x3x4xf32, #rtensor.layout<grid [4] axes [-, -, -, d0] tile [1, 2, 3, 1]>>
// RTENSOR-NEXT: %emb = rtensor.collect %[[E]]
// RTENSOR:      %[[G:.*]] = rtensor.gather "add_pos/gather" %[[T]][%[[V]]] axis 0 {estimate = #rtensor.estimate<{{.*}}>} : {{.*}} -> !rtensor.tensor<1x2x3x4xf32, #rtensor.layout<grid [1, 1, 3, 4] axes [-, -, d2, d3] tile [1, 2, 1, 1]>>
// RTENSOR:      rtensor.generic "add_pos"(%[[G]], %{{.*}})
// RTENSOR-NOT:  rtensor.view
// RTENSOR-NOT:  rtensor.gather "embed"

// Each gather is a superstep of its own, filling a buffer in its reader's layout; the table
// is a resident weight (never freed).
// CORE:      %[[T:.*]] = core.alloc "embed/gather/in0" on 8 : !core.buffer<1x4xf32>
// CORE-NEXT: core.load %table into %[[T]]
// CORE:      chip.superstep "embed/gather" {
// CORE:        core.gather "embed/gather" %[[T]][%{{.*}}] to %{{.*}} axis 0 of tensor<8x4xf32>[tensor<1x2x3xf32>] -> tensor<1x2x3x4xf32> layouts <grid [8] axes [d0, -] tile [1, 4]>, <grid [3] axes [-, -, d0] tile [1, 2, 1]> -> <grid [4] axes [-, -, -, d0] tile [1, 2, 3, 1]>
// CORE:      chip.superstep "add_pos/gather" {
// CORE:        core.gather "add_pos/gather" %[[T]]
// CORE-NOT:  core.free %[[T]]
