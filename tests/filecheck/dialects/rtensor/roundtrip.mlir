// RUN: t10-opt %s | t10-opt | filecheck %s
// RUN: t10-opt %s --print-op-generic | t10-opt | filecheck %s

// Round trip of every rtensor attribute, type and op through the custom syntax.

// A plan without a shift dim prints only its grid.
"test.op"() {plan = #rtensor.plan<grid [4, 2, 1]>} : () -> ()
// CHECK:      "test.op"() {plan = #rtensor.plan<grid [4, 2, 1]>} : () -> ()

// A plan with a shift dim prints its steps and the rotating inputs (input, ring dim, pieces).
"test.op"() {plan = #rtensor.plan<grid [4, 4, 1] shift d2 steps 4 rotate [(0, d1, 4), (1, d0, 2)]>} : () -> ()
// CHECK-NEXT: "test.op"() {plan = #rtensor.plan<grid [4, 4, 1] shift d2 steps 4 rotate [(0, d1, 4), (1, d0, 2)]>} : () -> ()

// A plan whose output rotates names it `out` (its partial sums rotate on ring d2).
"test.op"() {plan = #rtensor.plan<grid [2, 2, 2] shift d0 steps 2 rotate [(0, d1, 2), (out, d2, 2)]>} : () -> ()
// CHECK-NEXT: "test.op"() {plan = #rtensor.plan<grid [2, 2, 2] shift d0 steps 2 rotate [(0, d1, 2), (out, d2, 2)]>} : () -> ()

// The estimate attribute prints its five fields in order.
"test.op"() {estimate = #rtensor.estimate<cycles = 1234, compute = 1000, exchange = 100, sync = 134, bytes = 4096>} : () -> ()
// CHECK-NEXT: "test.op"() {estimate = #rtensor.estimate<cycles = 1234, compute = 1000, exchange = 100, sync = 134, bytes = 4096>} : () -> ()

// A layout without rotation, every dim split.
"test.op"() {layout = #rtensor.layout<grid [2, 4] axes [d0, d1] tile [32, 16]>} : () -> ()
// CHECK-NEXT: "test.op"() {layout = #rtensor.layout<grid [2, 4] axes [d0, d1] tile [32, 16]>} : () -> ()

// A layout with unsplit (`-`) axes.
"test.op"() {layout = #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>} : () -> ()
// CHECK-NEXT: "test.op"() {layout = #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>} : () -> ()

// A rotating layout prints its dim, ring axis, pieces, steps and skew terms.
"test.op"() {layout = #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>} : () -> ()
// CHECK-NEXT: "test.op"() {layout = #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>} : () -> ()

// A rotating layout with a `-` axis and an empty skew.
"test.op"() {layout = #rtensor.layout<grid [1, 4] axes [-, -] tile [8, 16] rotate 1 ring d1 x 4 steps 4 skew [(d1, 4, 1)]>} : () -> ()
// CHECK-NEXT: "test.op"() {layout = #rtensor.layout<grid [1, 4] axes [-, -] tile [8, 16] rotate 1 ring d1 x 4 steps 4 skew [(d1, 4, 1)]>} : () -> ()

// A placed plan and layout say where the grid's cores lie on the chip: the parts of grid
// axes laid along each dim of the chip's cores (`d1:4`: four positions of d1), and the
// folded rings; a placement also stands as an attribute of its own.
"test.op"() {plan = #rtensor.plan<grid [12, 16, 12] shift d1 steps 12 rotate [(1, d0, 6), (out, d2, 12)] placed [[d1:4, d0:12], [d1:4, d2:12]] fold [(d0, 6), (d2, 12)]>} : () -> ()
// CHECK-NEXT: "test.op"() {plan = #rtensor.plan<grid [12, 16, 12] shift d1 steps 12 rotate [(1, d0, 6), (out, d2, 12)] placed {{\[\[}}d1:4, d0:12], [d1:4, d2:12]] fold [(d0, 6), (d2, 12)]>} : () -> ()
"test.op"() {layout = #rtensor.layout<grid [2, 4, 1] axes [d0, -] tile [4, 8] rotate 1 ring d1 x 4 steps 4 skew [(d1, 4, 1)] placed [[d0:2], [d1:4]] fold [(d1, 4)]>} : () -> ()
// CHECK-NEXT: "test.op"() {layout = #rtensor.layout<grid [2, 4, 1] axes [d0, -] tile [4, 8] rotate 1 ring d1 x 4 steps 4 skew [(d1, 4, 1)] placed {{\[\[}}d0:2], [d1:4]] fold [(d1, 4)]>} : () -> ()
"test.op"() {placement = #rtensor.placement<[[d0:2], [d0:2, d1:8]]>, linear = #rtensor.placement<linear>} : () -> ()
// CHECK-NEXT: "test.op"() {placement = #rtensor.placement<{{\[\[}}d0:2], [d0:2, d1:8]]>, linear = #rtensor.placement<linear>} : () -> ()

// A rotating output's layout after its last step prints its phase (a phase of 0 is not).
"test.op"() {layout = #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>} : () -> ()
// CHECK-NEXT: "test.op"() {layout = #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>} : () -> ()

// rtensor types (f32 and f16, with and without rotation) as function arguments.
func.func @types(%a: !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, %b: !rtensor.tensor<1x8xf16, #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>>) {
  func.return
}
// CHECK-LABEL: func.func @types(%a: !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, %b: !rtensor.tensor<1x8xf16, #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>>) {
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// distribute, relayout and collect.
func.func @transfers(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = rtensor.distribute %x : tensor<8x8xf32> -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
  %1 = rtensor.relayout "x/relayout" %0 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [1, 2] axes [-, d1] tile [8, 4]>>
  %2 = rtensor.collect %1 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [1, 2] axes [-, d1] tile [8, 4]>> -> tensor<8x8xf32>
  func.return %2 : tensor<8x8xf32>
}
// CHECK-LABEL: func.func @transfers(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
// CHECK-NEXT:    %0 = rtensor.distribute %x : tensor<8x8xf32> -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
// CHECK-NEXT:    %1 = rtensor.relayout "x/relayout" %0 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [1, 2] axes [-, d1] tile [8, 4]>>
// CHECK-NEXT:    %2 = rtensor.collect %1 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [1, 2] axes [-, d1] tile [8, 4]>> -> tensor<8x8xf32>
// CHECK-NEXT:    func.return %2 : tensor<8x8xf32>
// CHECK-NEXT:  }

// A weight loaded from off-chip memory (f32 stored as f16).
func.func @load() {
  %w = arith.constant dense<1.000000e+00> : tensor<8x8xf32>
  %0 = rtensor.load "mm/load" %w : tensor<8x8xf32> -> !rtensor.tensor<8x8xf16, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
  func.return
}
// CHECK-LABEL: func.func @load() {
// CHECK-NEXT:    %w = arith.constant dense<1.000000e+00> : tensor<8x8xf32>
// CHECK-NEXT:    %0 = rtensor.load "mm/load" %w : tensor<8x8xf32> -> !rtensor.tensor<8x8xf16, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// A view before planning, and a relayout that applies a view (a transposing move).
func.func @views(%x: tensor<8x4xf32>, %d: !rtensor.tensor<8x4xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 4]>>) -> tensor<4x8xf32> {
  %0 = rtensor.view "t/Transpose" %x map affine_map<(d0, d1) -> (d1, d0)> : tensor<8x4xf32> -> tensor<4x8xf32>
  %1 = rtensor.relayout "c/relayout" %d map affine_map<(d0, d1) -> (d1, d0)> : !rtensor.tensor<8x4xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 4]>> -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [2] axes [-, d0] tile [4, 4]>>
  func.return %0 : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @views(%x: tensor<8x4xf32>, %d: !rtensor.tensor<8x4xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 4]>>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %0 = rtensor.view "t/Transpose" %x map affine_map<(d0, d1) -> (d1, d0)> : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %1 = rtensor.relayout "c/relayout" %d map affine_map<(d0, d1) -> (d1, d0)> : !rtensor.tensor<8x4xf32, #rtensor.layout<grid [2] axes [d0, -] tile [4, 4]>> -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [2] axes [-, d0] tile [4, 4]>>
// CHECK-NEXT:    func.return %0 : tensor<4x8xf32>
// CHECK-NEXT:  }

// A padded view (reads outside the source give 0) and a relayout whose guard zero-fills.
func.func @padded(%x: tensor<2x3xf32>, %d: !rtensor.tensor<2x3xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 3]>>) -> tensor<2x5xf32> {
  %0 = rtensor.view "c:0" %x map affine_map<(d0, d1) -> (d0, d1 - 2)> padded : tensor<2x3xf32> -> tensor<2x5xf32>
  %1 = rtensor.relayout "a/relayout" %d map affine_map<(d0, d1) -> (d0, d1 - 2)> guard affine_map<(d0, d1) -> (d0, d1 - 2)> in [2, 3] : !rtensor.tensor<2x3xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 3]>> -> !rtensor.tensor<2x5xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 5]>>
  func.return %0 : tensor<2x5xf32>
}
// CHECK-LABEL: func.func @padded
// CHECK-NEXT:    %0 = rtensor.view "c:0" %x map affine_map<(d0, d1) -> (d0, (d1 + -2))> padded : tensor<2x3xf32> -> tensor<2x5xf32>
// CHECK-NEXT:    %1 = rtensor.relayout "a/relayout" %d map affine_map<(d0, d1) -> (d0, (d1 + -2))> guard affine_map<(d0, d1) -> (d0, (d1 + -2))> in [2, 3] : !rtensor.tensor<2x3xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 3]>> -> !rtensor.tensor<2x5xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 5]>>

// An element-wise generic with a broadcast input, a plan without shift and an estimate.
func.func @generic_elementwise(%x: !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>, %bias: !rtensor.tensor<1x8xf32, #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
  %0 = rtensor.generic "add"(%x, %bias) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], plan = #rtensor.plan<grid [2, 1]>, estimate = #rtensor.estimate<cycles = 436, compute = 316, exchange = 0, sync = 120, bytes = 288>} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>, !rtensor.tensor<1x8xf32, #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  func.return %0 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
}
// CHECK-LABEL: func.func @generic_elementwise(%x: !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>, %bias: !rtensor.tensor<1x8xf32, #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
// CHECK-NEXT:    %0 = rtensor.generic "add"(%x, %bias) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], plan = #rtensor.plan<grid [2, 1]>, estimate = #rtensor.estimate<cycles = 436, compute = 316, exchange = 0, sync = 120, bytes = 288>} : (!rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>, !rtensor.tensor<1x8xf32, #rtensor.layout<grid [2, 1] axes [-, -] tile [1, 8]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>> {
// CHECK-NEXT:    ^bb0(%a: f32, %b: f32, %out: f32):
// CHECK-NEXT:      %s = arith.addf %a, %b : f32
// CHECK-NEXT:      linalg.yield %s : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [4, 8]>>
// CHECK-NEXT:  }

// A matmul generic whose plan shifts d2 in 2 steps and rotates both inputs (Cannon on 2x2x2).
func.func @generic_matmul(%a: !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, %b: !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
  %0 = rtensor.generic "mm"(%a, %b) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], plan = #rtensor.plan<grid [2, 2, 2] shift d2 steps 2 rotate [(0, d1, 2), (1, d0, 2)]>} : (!rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return %0 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>
}
// CHECK-LABEL: func.func @generic_matmul(%a: !rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, %b: !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
// CHECK-NEXT:    %0 = rtensor.generic "mm"(%a, %b) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], plan = #rtensor.plan<grid [2, 2, 2] shift d2 steps 2 rotate [(0, d1, 2), (1, d0, 2)]>} : (!rtensor.tensor<8x16xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>, !rtensor.tensor<16x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d2, d1] tile [8, 4] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>>) -> !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>> {
// CHECK-NEXT:    ^bb0(%x: f32, %y: f32, %acc: f32):
// CHECK-NEXT:      %p = arith.mulf %x, %y : f32
// CHECK-NEXT:      %s = arith.addf %acc, %p : f32
// CHECK-NEXT:      linalg.yield %s : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0 : !rtensor.tensor<8x8xf32, #rtensor.layout<grid [2, 2, 2] axes [d0, d1] tile [4, 4]>>
// CHECK-NEXT:  }

// An epilogue: a bias add on a matmul's output tiles, the bias laid out like output dim d1.
func.func @epilogue(%c: !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>, %bias: !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> {
  %0 = rtensor.epilogue "mm+add"(%c, %bias) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>, !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> {
  ^bb0(%v: f32, %u: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  }
  func.return %0 : !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>
}
// CHECK-LABEL: func.func @epilogue(%c: !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>, %bias: !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> {
// CHECK-NEXT:    %0 = rtensor.epilogue "mm+add"(%c, %bias) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>, !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> {
// CHECK-NEXT:    ^bb0(%v: f32, %u: f32, %o: f32):
// CHECK-NEXT:      %s = arith.addf %u, %v : f32
// CHECK-NEXT:      linalg.yield %s : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0 : !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>
// CHECK-NEXT:  }
