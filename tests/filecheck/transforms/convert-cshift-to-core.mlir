// RUN: t10-opt %s -p convert-cshift-to-core --split-input-file | filecheck %s

// Host tensors become loaded buffers; the Cannon operator becomes a loop of kernels at
// skewed chunk offsets with ring shifts, its last step peeled without shifts; the split-k
// operator one kernel and an in-place all_reduce; buffers are freed after their last use.
func.func @main(%x: tensor<4x6xf32> {t10.name = "x"}, %w: tensor<6x4xf32> {t10.name = "w"}) -> (tensor<4x4xf32> {t10.name = "y"}, tensor<4x4xf32> {t10.name = "y2"}) {
  %0 = rtensor.distribute %x : tensor<4x6xf32> -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, -] tile [2, 6] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
  %1 = rtensor.distribute %w : tensor<6x4xf32> -> !rtensor.tensor<6x4xf32, #rtensor.layout<grid [2, 2, 1] axes [-, d1] tile [6, 2] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>
  %mm = cshift.compute_shift "cannon"(%0, %1) steps 2 shift 2 sizes [2, 2, 3] rotate [1, 0] partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, -] tile [2, 6] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, !rtensor.tensor<6x4xf32, #rtensor.layout<grid [2, 2, 1] axes [-, d1] tile [6, 2] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<4x4xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, d1] tile [2, 2]>> {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %mm_1 = rtensor.collect %mm : !rtensor.tensor<4x4xf32, #rtensor.layout<grid [2, 2, 1] axes [d0, d1] tile [2, 2]>> -> tensor<4x4xf32>
  %2 = rtensor.distribute %x : tensor<4x6xf32> -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [4, 3]>>
  %3 = rtensor.distribute %w : tensor<6x4xf32> -> !rtensor.tensor<6x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [3, 2]>>
  %mm2 = cshift.compute_shift "split_k"(%2, %3) steps 1 shift -1 sizes [4, 2, 3] rotate [-1, -1] partial [2] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [4, 3]>>, !rtensor.tensor<6x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [3, 2]>>) -> !rtensor.tensor<4x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [4, 2]>> {
  ^bb0(%a_1: f32, %b_1: f32, %acc_1: f32):
    %p_1 = arith.mulf %a_1, %b_1 : f32
    %s_1 = arith.addf %acc_1, %p_1 : f32
    linalg.yield %s_1 : f32
  }
  %mm2_1 = cshift.all_reduce "sum" %mm2 over [2] : !rtensor.tensor<4x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [4, 2]>>
  %mm2_2 = rtensor.collect %mm2_1 : !rtensor.tensor<4x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [4, 2]>> -> tensor<4x4xf32>
  func.return %mm_1, %mm2_2 : tensor<4x4xf32>, tensor<4x4xf32>
}


// CHECK:      %[[X:.*]] = core.alloc "x" on 4 : !core.buffer<2x6xf32>
// CHECK-NEXT: core.load %x into %[[X]] layout <grid [2, 2, 1] axes [d0, -] tile [2, 6] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<4x6xf32>, !core.buffer<2x6xf32>
// CHECK:      %[[OUT:.*]] = core.alloc "cannon" on 4 : !core.buffer<2x2xf32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[X1:.*]] = core.coord 1 of [2, 2, 1]
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[R1:.*]] = arith.remui %[[X1]], %[[TWO]] : index
// CHECK-NEXT: %[[X0:.*]] = core.coord 0 of [2, 2, 1]
// CHECK-NEXT: %[[R0:.*]] = arith.remui %[[X0]], %[[TWO]] : index
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[R1]], %[[R0]] : index
// CHECK-NEXT: %[[SKEW:.*]] = arith.remui %[[SUM]], %[[TWO]] : index
// CHECK-NEXT: %[[CHUNK:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: scf.for %[[T:.*]] = %[[ZERO]] to %[[ONE]] step %[[ONE]] {
// CHECK-NEXT:   %[[U:.*]] = arith.addi %[[SKEW]], %[[T]] : index
// CHECK-NEXT:   %[[SLOT:.*]] = arith.remui %[[U]], %[[TWO]] : index
// CHECK-NEXT:   %[[SEND:.*]] = arith.muli %[[SLOT]], %[[CHUNK]] : index
// CHECK-NEXT:   %[[AHEAD:.*]] = arith.addi %[[U]], %[[ONE]] : index
// CHECK-NEXT:   %[[NEXT:.*]] = arith.remui %[[AHEAD]], %[[TWO]] : index
// CHECK-NEXT:   %[[RECV:.*]] = arith.muli %[[NEXT]], %[[CHUNK]] : index
// CHECK-NEXT:   core.kernel "cannon" on [2, 2, 1] sizes [2, 2, 3] of [4, 4, 6] ins(%[[X]], %[[W:.*]]) outs(%[[OUT]]) at(%[[SEND]], %[[SEND]], %[[ZERO]]) along [1, 0, -1]
// CHECK:        core.shift %[[X]] ring 1 x 2 of [2, 2, 1] dim 1 size 3 from %[[SEND]] to %[[RECV]] : !core.buffer<2x6xf32>
// CHECK-NEXT:   core.shift %[[W]] ring 0 x 2 of [2, 2, 1] dim 0 size 3 from %[[SEND]] to %[[RECV]] : !core.buffer<6x2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[LASTU:.*]] = arith.addi %[[SKEW]], %[[ONE]] : index
// CHECK-NEXT: %[[LASTSLOT:.*]] = arith.remui %[[LASTU]], %[[TWO]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.muli %[[LASTSLOT]], %[[CHUNK]] : index
// CHECK-NEXT: core.kernel "cannon" on [2, 2, 1] sizes [2, 2, 3] of [4, 4, 6] ins(%[[X]], %[[W]]) outs(%[[OUT]]) at(%[[LAST]], %[[LAST]], %[[ZERO]]) along [1, 0, -1]
// CHECK-NOT:  core.shift
// CHECK:      core.free %[[X]] : !core.buffer<2x6xf32>
// CHECK:      %{{.*}} = core.store %[[OUT]] layout <grid [2, 2, 1] axes [d0, d1] tile [2, 2]> : !core.buffer<2x2xf32> -> tensor<4x4xf32>
// CHECK-NEXT: core.free %[[OUT]] : !core.buffer<2x2xf32>
// CHECK:      core.kernel "split_k" on [1, 2, 2] sizes [4, 2, 3] of [4, 4, 6] ins(%{{.*}}, %{{.*}}) outs(%[[SK:.*]]) at(%{{.*}}, %{{.*}}, %{{.*}}) along [-1, -1, -1]
// CHECK:      core.all_reduce "sum" %[[SK]] over [2] of [1, 2, 2] : !core.buffer<4x2xf32>
// CHECK-NOT:  unrealized_conversion_cast

// -----

// An rtensor.epilogue is one element-wise kernel over the output tile, on the operator's
// grid: `axes [0, 1]` runs output dim i along grid axis i (the grid's k axis, 2, is none of
// them); it reads the bias buffer and writes the operator's output buffer in place.
func.func @main(%x: tensor<4x8xf32> {t10.name = "x"}, %b: tensor<6xf32> {t10.name = "b"}) -> (tensor<4x6xf32> {t10.name = "y"}) {
  %w = arith.constant dense<1.000000e+00> : tensor<8x6xf32>
  %0 = rtensor.distribute %x : tensor<4x8xf32> -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [2, 3, 1] axes [d0, -] tile [2, 8]>>
  %1 = rtensor.distribute %w : tensor<8x6xf32> -> !rtensor.tensor<8x6xf32, #rtensor.layout<grid [2, 3, 1] axes [-, d1] tile [8, 2]>>
  %2 = rtensor.distribute %b : tensor<6xf32> -> !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 1] axes [d1] tile [2]>>
  %3 = cshift.compute_shift "mm+add"(%0, %1) steps 1 shift -1 sizes [2, 2, 8] rotate [-1, -1] partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<4x8xf32, #rtensor.layout<grid [2, 3, 1] axes [d0, -] tile [2, 8]>>, !rtensor.tensor<8x6xf32, #rtensor.layout<grid [2, 3, 1] axes [-, d1] tile [8, 2]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 1] axes [d0, d1] tile [2, 2]>> {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %4 = rtensor.epilogue "mm+add"(%3, %2) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 1] axes [d0, d1] tile [2, 2]>>, !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 1] axes [d1] tile [2]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 1] axes [d0, d1] tile [2, 2]>> {
  ^bb0(%v: f32, %u: f32, %o: f32):
    %s_1 = arith.addf %u, %v : f32
    linalg.yield %s_1 : f32
  }
  %y = rtensor.collect %4 : !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 1] axes [d0, d1] tile [2, 2]>> -> tensor<4x6xf32>
  func.return %y : tensor<4x6xf32>
}

// CHECK:         core.kernel "mm+add" on [2, 3, 1] sizes [2, 2, 8] of [4, 6, 8] ins(%{{.*}}, %{{.*}}) outs(%[[OUT:.*]]) at
// CHECK:         core.kernel "mm+add" on [2, 3, 1] axes [0, 1] sizes [2, 2] of [4, 6] ins(%[[OUT]], %[[BIAS:.*]]) outs(%[[OUT]]) at(%{{.*}}, %{{.*}}, %{{.*}}) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<2x2xf32>, !core.buffer<2xf32>) -> !core.buffer<2x2xf32> {
// CHECK:         core.store %[[OUT]]

// -----

// After a split-k all-reduce the epilogue runs on the reduce-scattered runs of each tile:
// the all_reduce stops at `scatter`, the kernel scatters over the replicas (grid axis 2),
// and an all_gather completes the tiles.
func.func @main(%x: tensor<4x8xf32> {t10.name = "x"}, %b: tensor<6xf32> {t10.name = "b"}) -> (tensor<4x6xf32> {t10.name = "y"}) {
  %w = arith.constant dense<1.000000e+00> : tensor<8x6xf32>
  %0 = rtensor.distribute %x : tensor<4x8xf32> -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d2] tile [2, 4]>>
  %1 = rtensor.distribute %w : tensor<8x6xf32> -> !rtensor.tensor<8x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d2, d1] tile [4, 2]>>
  %2 = rtensor.distribute %b : tensor<6xf32> -> !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>>
  %3 = cshift.compute_shift "mm+add"(%0, %1) steps 1 shift -1 sizes [2, 2, 4] rotate [-1, -1] partial [2] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<4x8xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d2] tile [2, 4]>>, !rtensor.tensor<8x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d2, d1] tile [4, 2]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %4 = cshift.all_reduce "sum" %3 over [2] : !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>
  %5 = rtensor.epilogue "mm+add"(%4, %2) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>, !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> {
  ^bb0(%v: f32, %u: f32, %o: f32):
    %s_1 = arith.addf %u, %v : f32
    linalg.yield %s_1 : f32
  }
  %y = rtensor.collect %5 : !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> -> tensor<4x6xf32>
  func.return %y : tensor<4x6xf32>
}

// CHECK:         core.all_reduce "sum" %[[OUT:.*]] over [2] of [2, 3, 2] scatter : !core.buffer<2x2xf32>
// CHECK:         core.kernel "mm+add" on [2, 3, 2] axes [0, 1] scatter sizes [2, 2] of [4, 6] ins(%[[OUT]], %{{.*}}) outs(%[[OUT]])
// CHECK:         core.all_gather %[[OUT]] over [2] of [2, 3, 2] : !core.buffer<2x2xf32>

// -----

// Relayouts: one between layouts of the same placement (a size-1 grid axis added) and
// element type only renames the buffer; a view (the map and the viewed tensor carried) and
// a move copy into a new buffer in the destination layout, each its own core.relayout.
func.func @main(%x: tensor<4x2xf32> {t10.name = "x"}) -> (tensor<2x4xf32> {t10.name = "y"}) {
  %0 = rtensor.distribute %x : tensor<4x2xf32> -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 2] axes [d0, d1] tile [1, 1]>>
  %1 = rtensor.relayout "same" %0 : !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 2] axes [d0, d1] tile [1, 1]>> -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 2, 1] axes [d0, d1] tile [1, 1]>>
  %2 = rtensor.relayout "t" %1 map affine_map<(d0, d1) -> (d1, d0)> : !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 2, 1] axes [d0, d1] tile [1, 1]>> -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2, 4] axes [d0, d1] tile [1, 1]>>
  %3 = rtensor.relayout "move" %2 : !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2, 4] axes [d0, d1] tile [1, 1]>> -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2] axes [-, d0] tile [2, 2]>>
  %y = rtensor.collect %3 : !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2] axes [-, d0] tile [2, 2]>> -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<4x2xf32>
// CHECK-NEXT:    %[[X:.*]] = core.alloc "x" on 8 : !core.buffer<1x1xf32>
// CHECK-NEXT:    core.load %x into %[[X]] layout <grid [4, 2] axes [d0, d1] tile [1, 1]> : tensor<4x2xf32>, !core.buffer<1x1xf32>
// CHECK-NEXT:    %[[T:.*]] = core.alloc "t" on 8 : !core.buffer<1x1xf32>
// CHECK-NEXT:    core.relayout "t" %[[X]] to %[[T]] of tensor<4x2xf32> layouts <grid [4, 2, 1] axes [d0, d1] tile [1, 1]> -> <grid [2, 4] axes [d0, d1] tile [1, 1]> view affine_map<(d0, d1) -> (d1, d0)> as tensor<2x4xf32> : !core.buffer<1x1xf32>, !core.buffer<1x1xf32>
// CHECK-NEXT:    core.free %[[X]] : !core.buffer<1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = core.alloc "move" on 2 : !core.buffer<2x2xf32>
// CHECK-NEXT:    core.relayout "move" %[[T]] to %[[M]] of tensor<2x4xf32> layouts <grid [2, 4] axes [d0, d1] tile [1, 1]> -> <grid [2] axes [-, d0] tile [2, 2]> : !core.buffer<1x1xf32>, !core.buffer<2x2xf32>
// CHECK-NEXT:    core.free %[[T]] : !core.buffer<1x1xf32>
// CHECK-NEXT:    %y = core.store %[[M]] layout <grid [2] axes [-, d0] tile [2, 2]> : !core.buffer<2x2xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    core.free %[[M]] : !core.buffer<2x2xf32>
// CHECK-NEXT:    func.return %y : tensor<2x4xf32>

// -----

// A gather of runtime ids fills a new buffer in its result's layout from the table's and
// the ids' buffers; the table, loaded from a constant, stays on chip (never freed).
func.func @main(%ids: tensor<2xf32> {t10.name = "ids"}) -> (tensor<2x2xf32> {t10.name = "y"}) {
  %0 = rtensor.distribute %ids : tensor<2xf32> -> !rtensor.tensor<2xf32, #rtensor.layout<grid [2] axes [d0] tile [1]>>
  %table = arith.constant dense<1.000000e+00> : tensor<4x2xf32>
  %1 = rtensor.distribute %table : tensor<4x2xf32> -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [1, 2]>>
  %2 = rtensor.gather "embed" %1[%0] axis 0 : (!rtensor.tensor<4x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [1, 2]>>, !rtensor.tensor<2xf32, #rtensor.layout<grid [2] axes [d0] tile [1]>>) -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>>
  %y = rtensor.collect %2 : !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>> -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @main(%ids: tensor<2xf32>
// CHECK-NEXT:    %[[IDS:.*]] = core.alloc "ids" on 2 : !core.buffer<1xf32>
// CHECK-NEXT:    core.load %ids into %[[IDS]] layout <grid [2] axes [d0] tile [1]> : tensor<2xf32>, !core.buffer<1xf32>
// CHECK-NEXT:    %table = arith.constant
// CHECK-NEXT:    %[[TABLE:.*]] = core.alloc "embed/in0" on 4 : !core.buffer<1x2xf32>
// CHECK-NEXT:    core.load %table into %[[TABLE]] layout <grid [4] axes [d0, -] tile [1, 2]> : tensor<4x2xf32>, !core.buffer<1x2xf32>
// CHECK-NEXT:    %[[OUT:.*]] = core.alloc "embed" on 4 : !core.buffer<1x1xf32>
// CHECK-NEXT:    core.gather "embed" %[[TABLE]][%[[IDS]]] to %[[OUT]] axis 0 of tensor<4x2xf32>[tensor<2xf32>] -> tensor<2x2xf32> layouts <grid [4] axes [d0, -] tile [1, 2]>, <grid [2] axes [d0] tile [1]> -> <grid [2, 2] axes [d0, d1] tile [1, 1]> : !core.buffer<1x2xf32>, !core.buffer<1xf32>, !core.buffer<1x1xf32>
// CHECK-NEXT:    core.free %[[IDS]] : !core.buffer<1xf32>
// CHECK-NEXT:    %y = core.store %[[OUT]] layout <grid [2, 2] axes [d0, d1] tile [1, 1]> : !core.buffer<1x1xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    core.free %[[OUT]] : !core.buffer<1x1xf32>
// CHECK-NEXT:    func.return %y : tensor<2x2xf32>

// -----

// A GatherND (and any kind of gather) becomes a core.gather of its kind.
func.func @main(%ids: tensor<2x1xf32> {t10.name = "ids"}) -> (tensor<2x2xf32> {t10.name = "y"}) {
  %0 = rtensor.distribute %ids : tensor<2x1xf32> -> !rtensor.tensor<2x1xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 1]>>
  %table = arith.constant dense<1.000000e+00> : tensor<4x2xf32>
  %1 = rtensor.distribute %table : tensor<4x2xf32> -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [1, 2]>>
  %2 = rtensor.gather "pick" %1[%0] nd batch_dims 0 : (!rtensor.tensor<4x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [1, 2]>>, !rtensor.tensor<2x1xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 1]>>) -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>>
  %y = rtensor.collect %2 : !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>> -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @main(%ids: tensor<2x1xf32>
// CHECK:         %[[OUT:.*]] = core.alloc "pick" on 4 : !core.buffer<1x1xf32>
// CHECK-NEXT:    core.gather "pick" %{{.*}}[%{{.*}}] to %[[OUT]] nd batch_dims 0 of tensor<4x2xf32>[tensor<2x1xf32>] -> tensor<2x2xf32> layouts <grid [4] axes [d0, -] tile [1, 2]>, <grid [2] axes [d0, -] tile [1, 1]> -> <grid [2, 2] axes [d0, d1] tile [1, 1]> : !core.buffer<1x2xf32>, !core.buffer<1x1xf32>, !core.buffer<1x1xf32>

// -----

// An output-rotating plan (k split over a ring of 2 cores, n split over 2 cores and cut in
// 4 steps of 1): the output buffer holds its window of 2 chunks plus 1 slot (2x3). At step
// t, u = o + t (o = 2·(x[2] mod 2) mod 4): the kernel reads w at chunk k = u mod 4 and adds
// its k-part into output slot u mod 3, whose chunk k lies at `origin` x[1]·4 + k in the whole
// tensor (for the padding rule); then the output itself shifts that partial chunk to the
// previous core of ring d2, receiving into slot (u + 2) mod 3. No all_reduce; the last step
// does not shift; the output is stored from its phase-3 layout.
func.func @main(%x: tensor<2x4xf32> {t10.name = "x"}, %w: tensor<4x8xf32> {t10.name = "w"}) -> (tensor<2x8xf32> {t10.name = "y"}) {
  %0 = rtensor.distribute %x : tensor<2x4xf32> -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
  %1 = rtensor.distribute %w : tensor<4x8xf32> -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
  %mm = cshift.compute_shift "mm"(%0, %1) steps 4 shift 1 sizes [2, 1, 2] rotate [-1, -1] out 2 partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %mm_1 = rtensor.collect %mm : !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> -> tensor<2x8xf32>
  func.return %mm_1 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<2x4xf32> {t10.name = "x"}, %w: tensor<4x8xf32> {t10.name = "w"})
// CHECK:         %[[X:.*]] = core.alloc "x" on 4 : !core.buffer<2x2xf32>
// CHECK:         %[[OUT:.*]] = core.alloc "mm" on 4 : !core.buffer<2x3xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[X2:.*]] = core.coord 2 of [1, 2, 2]
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[R2:.*]] = arith.remui %[[X2]], %[[TWO]] : index
// CHECK-NEXT:    %[[W2:.*]] = arith.muli %[[R2]], %[[TWO]] : index
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[SKEW:.*]] = arith.remui %[[W2]], %[[FOUR]] : index
// CHECK-NEXT:    %[[X1:.*]] = core.coord 1 of [1, 2, 2]
// CHECK-NEXT:    %[[TILEORIGIN:.*]] = arith.muli %[[X1]], %[[FOUR]] : index
// CHECK-NEXT:    %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[T:.*]] = %[[ZERO]] to %[[THREE]] step %[[ONE]] {
// CHECK-NEXT:      %[[U:.*]] = arith.addi %[[SKEW]], %[[T]] : index
// CHECK-NEXT:      %[[K:.*]] = arith.remui %[[U]], %[[FOUR]] : index
// CHECK-NEXT:      %[[ORIGIN:.*]] = arith.addi %[[TILEORIGIN]], %[[K]] : index
// CHECK-NEXT:      %[[SLOT:.*]] = arith.remui %[[U]], %[[THREE]] : index
// CHECK-NEXT:      %[[AHEAD:.*]] = arith.addi %[[U]], %[[TWO]] : index
// CHECK-NEXT:      %[[RECV:.*]] = arith.remui %[[AHEAD]], %[[THREE]] : index
// CHECK-NEXT:      core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%[[X]], %[[W:.*]]) outs(%[[OUT]]) at(%[[ZERO]], %[[K]], %[[SLOT]]) along [-1, 1, 1] origin %[[ORIGIN]] {indexing_maps
// CHECK:           core.shift %[[OUT]] ring 2 x 2 of [1, 2, 2] dim 1 size 1 from %[[SLOT]] to %[[RECV]] : !core.buffer<2x3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[LASTU:.*]] = arith.addi %[[SKEW]], %[[THREE]] : index
// CHECK-NEXT:    %[[LASTK:.*]] = arith.remui %[[LASTU]], %[[FOUR]] : index
// CHECK-NEXT:    %[[LASTORIGIN:.*]] = arith.addi %[[TILEORIGIN]], %[[LASTK]] : index
// CHECK-NEXT:    %[[LASTSLOT:.*]] = arith.remui %[[LASTU]], %[[THREE]] : index
// CHECK-NEXT:    core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%[[X]], %[[W]]) outs(%[[OUT]]) at(%[[ZERO]], %[[LASTK]], %[[LASTSLOT]]) along [-1, 1, 1] origin %[[LASTORIGIN]] {indexing_maps
// CHECK-NOT:     core.shift
// CHECK-NOT:     core.all_reduce
// CHECK:         %{{.*}} = core.store %[[OUT]] layout <grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3> : !core.buffer<2x3xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    core.free %[[OUT]] : !core.buffer<2x3xf32>
