// RUN: t10-opt %s | t10-opt | filecheck %s
// RUN: t10-opt %s --print-op-generic | t10-opt | filecheck %s

// Round trip of the core ops and the buffer type through their custom syntax.

// Buffer types (f32 and f16) as function arguments.
func.func @types(%a: !core.buffer<64x128xf32>, %b: !core.buffer<7xf16>) {
  func.return
}
// CHECK-LABEL: func.func @types(%a: !core.buffer<64x128xf32>, %b: !core.buffer<7xf16>) {
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// alloc and free.
func.func @alloc_free() {
  %0 = core.alloc "fc1/in0" on 16 : !core.buffer<4x8xf32>
  core.free %0 : !core.buffer<4x8xf32>
  func.return
}
// CHECK-LABEL: func.func @alloc_free() {
// CHECK-NEXT:    %0 = core.alloc "fc1/in0" on 16 : !core.buffer<4x8xf32>
// CHECK-NEXT:    core.free %0 : !core.buffer<4x8xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// coord on each axis of a grid.
func.func @coord() -> (index, index) {
  %0 = core.coord 0 of [4, 4, 1]
  %1 = core.coord 2 of [4, 4, 1]
  func.return %0, %1 : index, index
}
// CHECK-LABEL: func.func @coord() -> (index, index) {
// CHECK-NEXT:    %0 = core.coord 0 of [4, 4, 1]
// CHECK-NEXT:    %1 = core.coord 2 of [4, 4, 1]
// CHECK-NEXT:    func.return %0, %1 : index, index
// CHECK-NEXT:  }

// load with a rotating layout (the buffer holds the window plus one chunk) and store with a
// plain layout with a `-` axis.
func.func @load_store(%x: tensor<8x16xf32>, %a: !core.buffer<4x8xf32>, %c: !core.buffer<4x8xf32>) -> tensor<8x8xf32> {
  core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
  %0 = core.store %c layout <grid [2, 1] axes [d0, -] tile [4, 8]> : !core.buffer<4x8xf32> -> tensor<8x8xf32>
  func.return %0 : tensor<8x8xf32>
}
// CHECK-LABEL: func.func @load_store(%x: tensor<8x16xf32>, %a: !core.buffer<4x8xf32>, %c: !core.buffer<4x8xf32>) -> tensor<8x8xf32> {
// CHECK-NEXT:    core.load %x into %a layout <grid [2, 2, 2] axes [d0, d2] tile [4, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<8x16xf32>, !core.buffer<4x8xf32>
// CHECK-NEXT:    %0 = core.store %c layout <grid [2, 1] axes [d0, -] tile [4, 8]> : !core.buffer<4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:    func.return %0 : tensor<8x8xf32>
// CHECK-NEXT:  }

// A matmul kernel with a body: the inputs are read at offsets along one buffer dim each, the
// output whole (slice dim -1).
func.func @kernel(%a: !core.buffer<4x8xf32>, %b: !core.buffer<8x4xf32>, %c: !core.buffer<4x4xf32>, %off: index) {
  %zero = arith.constant 0 : index
  core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 8] ins(%a, %b) outs(%c) at(%off, %off, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}
// CHECK-LABEL: func.func @kernel(%a: !core.buffer<4x8xf32>, %b: !core.buffer<8x4xf32>, %c: !core.buffer<4x4xf32>, %off: index) {
// CHECK-NEXT:    %zero = arith.constant 0 : index
// CHECK-NEXT:    core.kernel "mm" on [2, 2, 2] sizes [4, 4, 4] of [8, 8, 8] ins(%a, %b) outs(%c) at(%off, %off, %zero) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x8xf32>, !core.buffer<8x4xf32>) -> !core.buffer<4x4xf32> {
// CHECK-NEXT:    ^bb0(%x: f32, %y: f32, %acc: f32):
// CHECK-NEXT:      %p = arith.mulf %x, %y : f32
// CHECK-NEXT:      %s = arith.addf %acc, %p : f32
// CHECK-NEXT:      linalg.yield %s : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// A kernel adding into a rotating output: its offset is a slot of the window, `origin` the
// index in the whole tensor of that slot's chunk.
func.func @kernel_origin(%x: !core.buffer<2x2xf32>, %w: !core.buffer<2x4xf32>, %o: !core.buffer<2x3xf32>, %k: index, %slot: index, %origin: index) {
  %zero = arith.constant 0 : index
  core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%x, %w) outs(%o) at(%zero, %k, %slot) along [-1, 1, 1] origin %origin {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x2xf32>, !core.buffer<2x4xf32>) -> !core.buffer<2x3xf32> {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}
// CHECK-LABEL: func.func @kernel_origin(%x: !core.buffer<2x2xf32>, %w: !core.buffer<2x4xf32>, %o: !core.buffer<2x3xf32>, %k: index, %slot: index, %origin: index) {
// CHECK-NEXT:    %zero = arith.constant 0 : index
// CHECK-NEXT:    core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%x, %w) outs(%o) at(%zero, %k, %slot) along [-1, 1, 1] origin %origin {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x2xf32>, !core.buffer<2x4xf32>) -> !core.buffer<2x3xf32> {
// CHECK:         func.return

// An element-wise kernel with a broadcast (constant 0) operand dim.
func.func @kernel_broadcast(%x: !core.buffer<4x8xf32>, %bias: !core.buffer<1x8xf32>, %out: !core.buffer<4x8xf32>, %zero: index) {
  core.kernel "add" on [2, 1] sizes [4, 8] of [8, 8] ins(%x, %bias) outs(%out) at(%zero, %zero, %zero) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>, !core.buffer<1x8xf32>) -> !core.buffer<4x8xf32> {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  func.return
}
// CHECK-LABEL: func.func @kernel_broadcast(%x: !core.buffer<4x8xf32>, %bias: !core.buffer<1x8xf32>, %out: !core.buffer<4x8xf32>, %zero: index) {
// CHECK-NEXT:    core.kernel "add" on [2, 1] sizes [4, 8] of [8, 8] ins(%x, %bias) outs(%out) at(%zero, %zero, %zero) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<4x8xf32>, !core.buffer<1x8xf32>) -> !core.buffer<4x8xf32> {
// CHECK-NEXT:    ^bb0(%a: f32, %b: f32, %o: f32):
// CHECK-NEXT:      %s = arith.addf %a, %b : f32
// CHECK-NEXT:      linalg.yield %s : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// An epilogue kernel: `axes` names the grid axis of each loop (grid axis 2, a split k, is
// none of them: its cores hold the same tile); it updates its first input in place. With
// `scatter` those cores split the tile, each computing its run of it.
func.func @kernel_axes(%c: !core.buffer<2x2xf32>, %bias: !core.buffer<2xf32>, %zero: index) {
  core.kernel "mm+add" on [2, 3, 2] axes [0, 1] sizes [2, 2] of [4, 6] ins(%c, %bias) outs(%c) at(%zero, %zero, %zero) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<2x2xf32>, !core.buffer<2xf32>) -> !core.buffer<2x2xf32> {
  ^bb0(%v: f32, %u: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  }
  core.kernel "mm+add" on [2, 3, 2] axes [0, 1] scatter sizes [2, 2] of [4, 6] ins(%c, %bias) outs(%c) at(%zero, %zero, %zero) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<2x2xf32>, !core.buffer<2xf32>) -> !core.buffer<2x2xf32> {
  ^bb0(%v2: f32, %u2: f32, %o2: f32):
    %s2 = arith.addf %u2, %v2 : f32
    linalg.yield %s2 : f32
  }
  func.return
}
// CHECK-LABEL: func.func @kernel_axes(%c: !core.buffer<2x2xf32>, %bias: !core.buffer<2xf32>, %zero: index) {
// CHECK-NEXT:    core.kernel "mm+add" on [2, 3, 2] axes [0, 1] sizes [2, 2] of [4, 6] ins(%c, %bias) outs(%c) at(%zero, %zero, %zero) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<2x2xf32>, !core.buffer<2xf32>) -> !core.buffer<2x2xf32> {
// CHECK-NEXT:    ^bb0(%v: f32, %u: f32, %o: f32):
// CHECK-NEXT:      %s = arith.addf %u, %v : f32
// CHECK-NEXT:      linalg.yield %s : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    core.kernel "mm+add" on [2, 3, 2] axes [0, 1] scatter sizes [2, 2] of [4, 6] ins(%c, %bias) outs(%c) at(%zero, %zero, %zero) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<2x2xf32>, !core.buffer<2xf32>) -> !core.buffer<2x2xf32> {
// CHECK-NEXT:    ^bb0(%v2: f32, %u2: f32, %o2: f32):
// CHECK-NEXT:      %s2 = arith.addf %u2, %v2 : f32
// CHECK-NEXT:      linalg.yield %s2 : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// shift, all_reduce (whole, or only its reduce-scatter), all_gather and relayout (the
// exchange ops).
func.func @exchange(%a: !core.buffer<4x8xf32>, %c: !core.buffer<4x4xf32>, %t: !core.buffer<8x2xf32>, %send: index, %recv: index) {
  core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %send to %recv : !core.buffer<4x8xf32>
  core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  core.all_reduce "max" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  core.all_reduce "min" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  core.all_reduce "sum" %c over [2] of [2, 2, 2] scatter : !core.buffer<4x4xf32>
  core.all_gather %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
  core.relayout "t/relayout" %c to %t of tensor<8x8xf32> layouts <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> -> <grid [1, 4] axes [-, d1] tile [8, 2]> : !core.buffer<4x4xf32>, !core.buffer<8x2xf32>
  core.relayout "v/relayout" %c to %t of tensor<8x8xf32> layouts <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> -> <grid [1, 4] axes [-, d1] tile [8, 2]> view affine_map<(d0, d1) -> (d1, d0)> as tensor<8x8xf32> : !core.buffer<4x4xf32>, !core.buffer<8x2xf32>
  core.relayout "g/relayout" %c to %t of tensor<8x8xf32> layouts <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> -> <grid [1, 4] axes [-, d1] tile [8, 2]> view affine_map<(d0, d1) -> (d0, d1 - 1)> as tensor<8x8xf32> guard affine_map<(d0, d1) -> (d1 - 1)> in [8] : !core.buffer<4x4xf32>, !core.buffer<8x2xf32>
  func.return
}
// CHECK-LABEL: func.func @exchange(%a: !core.buffer<4x8xf32>, %c: !core.buffer<4x4xf32>, %t: !core.buffer<8x2xf32>, %send: index, %recv: index) {
// CHECK-NEXT:    core.shift %a ring 1 x 2 of [2, 2, 2] dim 1 size 4 from %send to %recv : !core.buffer<4x8xf32>
// CHECK-NEXT:    core.all_reduce "sum" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
// CHECK-NEXT:    core.all_reduce "max" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
// CHECK-NEXT:    core.all_reduce "min" %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
// CHECK-NEXT:    core.all_reduce "sum" %c over [2] of [2, 2, 2] scatter : !core.buffer<4x4xf32>
// CHECK-NEXT:    core.all_gather %c over [2] of [2, 2, 2] : !core.buffer<4x4xf32>
// CHECK-NEXT:    core.relayout "t/relayout" %c to %t of tensor<8x8xf32> layouts <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> -> <grid [1, 4] axes [-, d1] tile [8, 2]> : !core.buffer<4x4xf32>, !core.buffer<8x2xf32>
// CHECK-NEXT:    core.relayout "v/relayout" %c to %t of tensor<8x8xf32> layouts <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> -> <grid [1, 4] axes [-, d1] tile [8, 2]> view affine_map<(d0, d1) -> (d1, d0)> as tensor<8x8xf32> : !core.buffer<4x4xf32>, !core.buffer<8x2xf32>
// CHECK-NEXT:    core.relayout "g/relayout" %c to %t of tensor<8x8xf32> layouts <grid [2, 2, 2] axes [d0, d1] tile [4, 4]> -> <grid [1, 4] axes [-, d1] tile [8, 2]> view affine_map<(d0, d1) -> (d0, (d1 + -1))> as tensor<8x8xf32> guard affine_map<(d0, d1) -> ((d1 + -1))> in [8] : !core.buffer<4x4xf32>, !core.buffer<8x2xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
