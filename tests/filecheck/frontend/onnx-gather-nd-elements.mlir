// RUN: %python %S/Inputs/gather_nd_elements_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor' | filecheck %s --check-prefix=RTENSOR
// RUN: t10-opt %t.onnx -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor,convert-rtensor-to-cshift' | filecheck %s --check-prefix=CSHIFT
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' | filecheck %s --check-prefix=CORE

// GatherND and GatherElements of runtime indices are gathers of runtime ids too, of their
// kind: `nd batch_dims B` (index pairs into dims 1 and 2 of each batch of the table) and
// `elements axis A`. The pairs' t10.index_bound is the smaller of the two dims they index.
// CHECK:      func.func @main(%pairs: tensor<2x6x2xf32> {t10.name = "pairs", t10.onnx_type = "int64", t10.index_bound = 3 : i64}, %x: tensor<3x4xf32> {t10.name = "x"}, %cols: tensor<3x2xf32> {t10.name = "cols", t10.onnx_type = "int64", t10.index_bound = 4 : i64})
// CHECK:      %rows = rtensor.gather "pick" %table[%pairs] nd batch_dims 1 : (tensor<2x5x3x4xf32>, tensor<2x6x2xf32>) -> tensor<2x6x4xf32>
// CHECK:      linalg.generic {{.*}} ins(%rows, %bias : tensor<2x6x4xf32>, tensor<4xf32>)
// CHECK:      %z = rtensor.gather "choose" %x[%cols] elements axis 1 : (tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK:      func.return %y, %z

// As for a Gather: the reader's gather carries the plan search's estimate and fills the
// reader's layout; the returned one is made in host_layout and collected.
// RTENSOR:      %[[P:.*]] = rtensor.distribute %pairs : tensor<2x6x2xf32> -> !rtensor.tensor<2x6x2xf32, #rtensor.layout<grid [6] axes [-, d0, -] tile [2, 1, 2]>>
// RTENSOR:      %[[T:.*]] = rtensor.distribute %table : tensor<2x5x3x4xf32> -> !rtensor.tensor<2x5x3x4xf32, #rtensor.layout<grid [5] axes [-, d0, -, -] tile [2, 1, 3, 4]>>
// RTENSOR:      %[[G:.*]] = rtensor.gather "add_bias/gather" %[[T]][%[[P]]] nd batch_dims 1 {estimate = #rtensor.estimate<{{.*}}>} : {{.*}} -> !rtensor.tensor<2x6x4xf32, #rtensor.layout<grid [2, 2, 4] axes [d0, d1, d2] tile [1, 3, 1]>>
// RTENSOR:      rtensor.generic "add_bias"(%[[G]], %{{.*}})
// RTENSOR:      %[[E:.*]] = rtensor.gather "choose/gather" %{{.*}}[%{{.*}}] elements axis 1 {estimate = #rtensor.estimate<{{.*}}>} : {{.*}} -> !rtensor.tensor<3x2xf32, #rtensor.layout<grid [3] axes [d0, -] tile [1, 2]>>
// RTENSOR-NEXT: %z = rtensor.collect %[[E]]

// The gathers stay as they are at the cshift level: the reader's compute_shift reads one.
// CSHIFT:       %[[G:.*]] = rtensor.gather "add_bias/gather" %{{.*}}[%{{.*}}] nd batch_dims 1
// CSHIFT:       cshift.compute_shift "add_bias"(%[[G]], %{{.*}})
// CSHIFT:       rtensor.gather "choose/gather" %{{.*}}[%{{.*}}] elements axis 1

// Each is a core.gather of its kind in a superstep of its own.
// CORE:      chip.superstep "add_bias/gather" {
// CORE:        core.gather "add_bias/gather" %{{.*}}[%{{.*}}] to %{{.*}} nd batch_dims 1 of tensor<2x5x3x4xf32>[tensor<2x6x2xf32>] -> tensor<2x6x4xf32> layouts <grid [5] axes [-, d0, -, -] tile [2, 1, 3, 4]>, <grid [6] axes [-, d0, -] tile [2, 1, 2]> -> <grid [2, 2, 4] axes [d0, d1, d2] tile [1, 3, 1]>
// CORE:      chip.superstep "add_bias" {
// CORE:      chip.superstep "choose/gather" {
// CORE:        core.gather "choose/gather" %{{.*}}[%{{.*}}] to %{{.*}} elements axis 1 of tensor<3x4xf32>[tensor<3x2xf32>] -> tensor<3x2xf32> layouts <grid [4] axes [-, d0] tile [3, 1]>, <grid [3] axes [d0, -] tile [1, 2]> -> <grid [3] axes [d0, -] tile [1, 2]>
