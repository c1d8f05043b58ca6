// RUN: t10-opt %s -p convert-linalg-to-rtensor --split-input-file --verify-diagnostics | filecheck %s

// A planned matmul reads the argument and the weight in its plan's layouts; the ReLU's plan
// wants another layout of the product, so a relayout is inserted; the result is collected.
func.func @main(%x: tensor<4x6xf32> {t10.name = "x"}) -> (tensor<4x2xf32> {t10.name = "y"}) {
  %w = arith.constant dense<1.000000e+00> : tensor<6x2xf32>
  %z = arith.constant dense<0.000000e+00> : tensor<4x2xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x6xf32>, tensor<6x2xf32>) outs(%z : tensor<4x2xf32>) attrs = {t10.name = "mm", t10.plan = #rtensor.plan<grid [2, 1, 2]>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) attrs = {t10.name = "relu", t10.plan = #rtensor.plan<grid [4, 1]>} {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %w = arith.constant dense<1.000000e+00> : tensor<6x2xf32>
// CHECK-NEXT:    %0 = rtensor.distribute %x : tensor<4x6xf32> -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 1, 2] axes [d0, d2] tile [2, 3]>>
// CHECK-NEXT:    %1 = rtensor.distribute %w : tensor<6x2xf32> -> !rtensor.tensor<6x2xf32, #rtensor.layout<grid [2, 1, 2] axes [d2, -] tile [3, 2]>>
// CHECK-NEXT:    %mm = rtensor.generic "mm"(%0, %1) {{.*}} plan = #rtensor.plan<grid [2, 1, 2]>} : ({{.*}}) -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [2, 1, 2] axes [d0, -] tile [2, 2]>> {
// CHECK:         %2 = rtensor.relayout "relu/relayout" %mm : !rtensor.tensor<4x2xf32, #rtensor.layout<grid [2, 1, 2] axes [d0, -] tile [2, 2]>> -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 1] axes [d0, -] tile [1, 2]>>
// CHECK-NEXT:    %r = rtensor.generic "relu"(%2)
// CHECK:         %r_1 = rtensor.collect %r : !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4, 1] axes [d0, -] tile [1, 2]>> -> tensor<4x2xf32>
// CHECK-NEXT:    func.return %r_1 : tensor<4x2xf32>
// CHECK-NOT:     tensor.empty

// -----

// An operator without a plan is an error that says to run the plan search first.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {t10.name = "neg"} {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// CHECK: operator 'neg' has no 't10.plan' attribute: run t10-plan-search before convert-linalg-to-rtensor (or pin a plan by hand)

// -----

// Views fold into the relayouts that feed their readers: the transposed product reaches the
// negation through one relayout carrying the view's map; a view of an argument is first
// placed by the host layout (its largest dim split); a returned view is moved on chip and
// collected; the views themselves disappear.
func.func @main(%x: tensor<4x2xf32> {t10.name = "x"}) -> (tensor<2x4xf32> {t10.name = "y"}, tensor<8xf32> {t10.name = "z"}) {
  %t = rtensor.view "t" %x map affine_map<(d0, d1) -> (d1, d0)> : tensor<4x2xf32> -> tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) attrs = {t10.name = "neg", t10.plan = #rtensor.plan<grid [2, 1]>} {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %f = rtensor.view "flat" %n map affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)> : tensor<2x4xf32> -> tensor<8xf32>
  func.return %n, %f : tensor<2x4xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %0 = rtensor.distribute %x : tensor<4x2xf32> -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [2] axes [d0, -] tile [2, 2]>>
// CHECK-NEXT:    %1 = rtensor.relayout "neg/relayout" %0 map affine_map<(d0, d1) -> (d1, d0)> : !rtensor.tensor<4x2xf32, #rtensor.layout<grid [2] axes [d0, -] tile [2, 2]>> -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [1, 4]>>
// CHECK-NEXT:    %n = rtensor.generic "neg"(%1)
// CHECK:         %n_1 = rtensor.collect %n
// CHECK-NEXT:    %2 = rtensor.relayout "flat/relayout" %n map affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))> : !rtensor.tensor<2x4xf32, #rtensor.layout<grid [2, 1] axes [d0, -] tile [1, 4]>> -> !rtensor.tensor<8xf32, #rtensor.layout<grid [2] axes [d0] tile [4]>>
// CHECK-NEXT:    %3 = rtensor.collect %2 : !rtensor.tensor<8xf32, #rtensor.layout<grid [2] axes [d0] tile [4]>> -> tensor<8xf32>
// CHECK-NEXT:    func.return %n_1, %3 : tensor<2x4xf32>, tensor<8xf32>
// CHECK-NOT:     rtensor.view

// -----

// Views of an argument returned from the function are moved on chip from one placement of
// the argument, by the host layout over the program's cores (4: the most any plan uses, its
// largest dim split), shared by both views (one a view of the other).
func.func @main(%x: tensor<8x2xf32> {t10.name = "x"}) -> (tensor<8x2xf32> {t10.name = "y"}, tensor<4x2xf32> {t10.name = "a"}, tensor<2x4xf32> {t10.name = "b"}) {
  %e = tensor.empty() : tensor<8x2xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x2xf32>) outs(%e : tensor<8x2xf32>) attrs = {t10.name = "neg", t10.plan = #rtensor.plan<grid [1, 2]>} {
  ^bb0(%v: f32, %o: f32):
    %m = arith.negf %v : f32
    linalg.yield %m : f32
  } -> tensor<8x2xf32>
  %e2 = tensor.empty() : tensor<8x2xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%n : tensor<8x2xf32>) outs(%e2 : tensor<8x2xf32>) attrs = {t10.name = "neg2", t10.plan = #rtensor.plan<grid [4, 1]>} {
  ^bb0(%v: f32, %o: f32):
    %m = arith.negf %v : f32
    linalg.yield %m : f32
  } -> tensor<8x2xf32>
  %a = rtensor.view "a" %x map affine_map<(d0, d1) -> (d0 + 4, d1)> : tensor<8x2xf32> -> tensor<4x2xf32>
  %b = rtensor.view "b" %a map affine_map<(d0, d1) -> (d1, d0)> : tensor<4x2xf32> -> tensor<2x4xf32>
  func.return %p, %a, %b : tensor<8x2xf32>, tensor<4x2xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %0 = rtensor.distribute %x : tensor<8x2xf32> -> !rtensor.tensor<8x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [2, 2]>>
// CHECK-NEXT:    %1 = rtensor.distribute %x : tensor<8x2xf32> -> !rtensor.tensor<8x2xf32, #rtensor.layout<grid [1, 2] axes [-, d1] tile [8, 1]>>
// CHECK-NEXT:    %n = rtensor.generic "neg"(%1)
// CHECK:         %p_1 = rtensor.collect %p
// CHECK-NEXT:    %3 = rtensor.relayout "a/relayout" %0 map affine_map<(d0, d1) -> ((d0 + 4), d1)> : !rtensor.tensor<8x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [2, 2]>> -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [1, 2]>>
// CHECK-NEXT:    %4 = rtensor.collect %3 : !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [1, 2]>> -> tensor<4x2xf32>
// CHECK-NEXT:    %5 = rtensor.relayout "b/relayout" %0 map affine_map<(d0, d1) -> ((d1 + 4), d0)> : !rtensor.tensor<8x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [2, 2]>> -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [4] axes [-, d0] tile [2, 1]>>
// CHECK-NEXT:    %6 = rtensor.collect %5 : !rtensor.tensor<2x4xf32, #rtensor.layout<grid [4] axes [-, d0] tile [2, 1]>> -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %p_1, %4, %6 : tensor<8x2xf32>, tensor<4x2xf32>, tensor<2x4xf32>
// CHECK-NOT:     rtensor.distribute

// -----

// A view that keeps the tensor type (a square transpose) between two operators of the same
// plan still moves: the relayout carries its map although source and destination types match.
func.func @main(%x: tensor<4x4xf32> {t10.name = "x"}) -> (tensor<4x4xf32> {t10.name = "b"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) attrs = {t10.name = "a", t10.plan = #rtensor.plan<grid [4, 1]>} {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %t = rtensor.view "t" %a map affine_map<(d0, d1) -> (d1, d0)> : tensor<4x4xf32> -> tensor<4x4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) attrs = {t10.name = "b", t10.plan = #rtensor.plan<grid [4, 1]>} {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  func.return %b : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK:         %a = rtensor.generic "a"
// CHECK:         %1 = rtensor.relayout "b/relayout" %a map affine_map<(d0, d1) -> (d1, d0)> : !rtensor.tensor<4x4xf32, #rtensor.layout<grid [4, 1] axes [d0, -] tile [1, 4]>> -> !rtensor.tensor<4x4xf32, #rtensor.layout<grid [4, 1] axes [d0, -] tile [1, 4]>>
// CHECK-NEXT:    %b = rtensor.generic "b"(%1)

// -----

// Two operators read the same product in the same layout; the second reuses the relayout
// the first makes (t10.reused_inputs, written by t10-plan-search).
func.func @main(%x: tensor<4x4xf32> {t10.name = "x"}) -> (tensor<4x4xf32> {t10.name = "b"}, tensor<4x4xf32> {t10.name = "c"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) attrs = {t10.name = "a", t10.plan = #rtensor.plan<grid [4, 1]>} {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) attrs = {t10.name = "b", t10.plan = #rtensor.plan<grid [1, 4]>} {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) attrs = {t10.name = "c", t10.plan = #rtensor.plan<grid [1, 4]>, t10.reused_inputs = array<i64: 0>} {
  ^bb0(%i: f32, %o: f32):
    %n = math.absf %i : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  func.return %b, %c : tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[MOVED:.*]] = rtensor.relayout "b/relayout" %a : !rtensor.tensor<4x4xf32, #rtensor.layout<grid [4, 1] axes [d0, -] tile [1, 4]>> -> !rtensor.tensor<4x4xf32, #rtensor.layout<grid [1, 4] axes [-, d1] tile [4, 1]>>
// CHECK-NEXT:    %b = rtensor.generic "b"(%[[MOVED]])
// CHECK-NOT:     rtensor.relayout
// CHECK:         %c = rtensor.generic "c"(%[[MOVED]])

// -----

// An input marked as reused that no earlier operator moves into its layout is an error.
func.func @main(%x: tensor<4x4xf32> {t10.name = "x"}) -> (tensor<4x4xf32> {t10.name = "c"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) attrs = {t10.name = "a", t10.plan = #rtensor.plan<grid [4, 1]>} {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) attrs = {t10.name = "c", t10.plan = #rtensor.plan<grid [1, 4]>, t10.reused_inputs = array<i64: 0>} {
  ^bb0(%i: f32, %o: f32):
    %n = math.absf %i : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  func.return %c : tensor<4x4xf32>
}

// CHECK: operator 'c': 't10.reused_inputs' names an input that no earlier operator moves into the same layout (!rtensor.tensor<4x4xf32, #rtensor.layout<grid [1, 4] axes [-, d1] tile [4, 1]>>); remove the attribute or run t10-plan-search again

// -----

// A marked epilogue (`t10.epilogue = 1`: its input 1 is the matmul) runs on the matmul's
// grid: the bias is distributed like the output tile's dim d1 (replicated over the split k
// axis), and the add becomes an rtensor.epilogue on the matmul's result; one collect.
func.func @main(%x: tensor<4x8xf32> {t10.name = "x"}, %b: tensor<6xf32> {t10.name = "b"}) -> (tensor<4x6xf32> {t10.name = "y"}) {
  %w = arith.constant dense<1.000000e+00> : tensor<8x6xf32>
  %z = arith.constant dense<0.000000e+00> : tensor<4x6xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x6xf32>) outs(%z : tensor<4x6xf32>) attrs = {t10.name = "mm+add", t10.plan = #rtensor.plan<grid [2, 3, 2]>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b, %mm : tensor<6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) attrs = {t10.name = "add", t10.epilogue = 1 : i64} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  func.return %y : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @main
// CHECK:         %2 = rtensor.distribute %b : tensor<6xf32> -> !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>>
// CHECK-NEXT:    %3 = rtensor.generic "mm+add"(%0, %1) {{.*}} -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> {
// CHECK:         %4 = rtensor.epilogue "mm+add"(%3, %2) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (!rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>>, !rtensor.tensor<6xf32, #rtensor.layout<grid [2, 3, 2] axes [d1] tile [2]>>) -> !rtensor.tensor<4x6xf32, #rtensor.layout<grid [2, 3, 2] axes [d0, d1] tile [2, 2]>> {
// CHECK-NEXT:    ^bb0(%v: f32, %u: f32, %o: f32):
// CHECK-NEXT:      %s_1 = arith.addf %u, %v : f32
// CHECK-NEXT:      linalg.yield %s_1 : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = rtensor.collect %4
// CHECK-NEXT:    func.return %y : tensor<4x6xf32>

// -----

// A gather is made where it is read (costed into its reader: `t10.gather`): the table and
// the ids are placed by host_layout, the reader's gather fills its operand layout directly
// and carries the estimate; a returned gather is made in host_layout and collected.
func.func @main(%ids: tensor<2xf32> {t10.name = "ids"}) -> (tensor<2x2xf32> {t10.name = "y"}, tensor<2x2xf32> {t10.name = "emb"}) {
  %table = arith.constant dense<1.000000e+00> : tensor<4x2xf32>
  %emb = rtensor.gather "embed" %table[%ids] axis 0 : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %0 = tensor.empty() : tensor<2x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%emb : tensor<2x2xf32>) outs(%0 : tensor<2x2xf32>) attrs = {t10.name = "neg", t10.plan = #rtensor.plan<grid [2, 2]>, t10.gather = #rtensor.estimate<cycles = 422, compute = 301, exchange = 3, sync = 118, bytes = 4>} {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.negf %1 : f32
    linalg.yield %3 : f32
  } -> tensor<2x2xf32>
  func.return %y, %emb : tensor<2x2xf32>, tensor<2x2xf32>
}

// CHECK-LABEL: func.func @main(%ids
// CHECK-NEXT:    %[[IDS:.*]] = rtensor.distribute %ids : tensor<2xf32> -> !rtensor.tensor<2xf32, #rtensor.layout<grid [2] axes [d0] tile [1]>>
// CHECK-NEXT:    %table = arith.constant
// CHECK-NEXT:    %[[TABLE:.*]] = rtensor.distribute %table : tensor<4x2xf32> -> !rtensor.tensor<4x2xf32, #rtensor.layout<grid [4] axes [d0, -] tile [1, 2]>>
// CHECK-NEXT:    %[[RET:.*]] = rtensor.gather "embed/gather" %[[TABLE]][%[[IDS]]] axis 0 : ({{.*}}) -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 2]>>
// CHECK-NEXT:    %emb = rtensor.collect %[[RET]]
// CHECK-NEXT:    %[[READ:.*]] = rtensor.gather "neg/gather" %[[TABLE]][%[[IDS]]] axis 0 {estimate = #rtensor.estimate<cycles = 422, compute = 301, exchange = 3, sync = 118, bytes = 4>} : ({{.*}}) -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>>
// CHECK-NEXT:    %y = rtensor.generic "neg"(%[[READ]])
// CHECK-NOT:     rtensor.gather
// CHECK:         func.return %{{.*}}, %emb

// -----

// A GatherND and a GatherElements of runtime ids are made where they are read the same way,
// keeping their kind.
func.func @main(%ids: tensor<2x2xf32> {t10.name = "ids"}) -> (tensor<2xf32> {t10.name = "y"}, tensor<2x2xf32> {t10.name = "z"}) {
  %table = arith.constant dense<1.000000e+00> : tensor<4x2xf32>
  %nd = rtensor.gather "pick" %table[%ids] nd batch_dims 0 : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<2xf32>
  %el = rtensor.gather "choose" %table[%ids] elements axis 0 : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %0 = tensor.empty() : tensor<2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%nd : tensor<2xf32>) outs(%0 : tensor<2xf32>) attrs = {t10.name = "neg", t10.plan = #rtensor.plan<grid [2]>, t10.gather = #rtensor.estimate<cycles = 422, compute = 301, exchange = 3, sync = 118, bytes = 4>} {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.negf %1 : f32
    linalg.yield %3 : f32
  } -> tensor<2xf32>
  func.return %y, %el : tensor<2xf32>, tensor<2x2xf32>
}

// CHECK-LABEL: func.func @main(%ids
// CHECK:         %[[TABLE:.*]] = rtensor.distribute %table
// CHECK-NEXT:    %[[RET:.*]] = rtensor.gather "choose/gather" %[[TABLE]][%{{.*}}] elements axis 0 : ({{.*}}) -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 2]>>
// CHECK-NEXT:    %el = rtensor.collect %[[RET]]
// CHECK-NEXT:    %[[READ:.*]] = rtensor.gather "neg/gather" %[[TABLE]][%{{.*}}] nd batch_dims 0 {estimate = #rtensor.estimate<cycles = 422, compute = 301, exchange = 3, sync = 118, bytes = 4>} : ({{.*}}) -> !rtensor.tensor<2xf32, #rtensor.layout<grid [2] axes [d0] tile [1]>>
// CHECK-NEXT:    %y = rtensor.generic "neg"(%[[READ]])
// CHECK-NOT:     rtensor.gather
// CHECK:         func.return %{{.*}}, %el

// -----

// A gather read through a view is made in host_layout, then moved into its reader's layout
// by a relayout carrying the view's map.
func.func @main(%ids: tensor<2xf32> {t10.name = "ids"}) -> (tensor<2x2xf32> {t10.name = "y"}) {
  %table = arith.constant dense<1.000000e+00> : tensor<4x2xf32>
  %emb = rtensor.gather "embed" %table[%ids] axis 0 : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %t = rtensor.view "t" %emb map affine_map<(d0, d1) -> (d1, d0)> : tensor<2x2xf32> -> tensor<2x2xf32>
  %0 = tensor.empty() : tensor<2x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<2x2xf32>) outs(%0 : tensor<2x2xf32>) attrs = {t10.name = "neg", t10.plan = #rtensor.plan<grid [2, 2]>} {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.negf %1 : f32
    linalg.yield %3 : f32
  } -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @main(%ids
// CHECK:         %[[TABLE:.*]] = rtensor.distribute %table
// CHECK-NEXT:    %[[MADE:.*]] = rtensor.gather "neg/gather" %[[TABLE]][%{{.*}}] axis 0 : ({{.*}}) -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 2]>>
// CHECK-NEXT:    %[[MOVED:.*]] = rtensor.relayout "neg/relayout" %[[MADE]] map affine_map<(d0, d1) -> (d1, d0)> : !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2] axes [d0, -] tile [1, 2]>> -> !rtensor.tensor<2x2xf32, #rtensor.layout<grid [2, 2] axes [d0, d1] tile [1, 1]>>
// CHECK-NEXT:    %y = rtensor.generic "neg"(%[[MOVED]])
// CHECK-NOT:     rtensor.view

// -----

// An output-rotating plan: k split over a ring of 2 cores, n (split over 2 cores) cut into
// 4 steps. The inputs do not rotate; the output is laid out as its finished chunks lie after
// the last step: rotating along n on ring d2, window 4 / 2 = 2 chunks from o(x) = 2·(x[2]
// mod 2), with phase steps - 1 = 3; it is collected from there.
func.func @main(%x: tensor<2x4xf32> {t10.name = "x"}, %w: tensor<4x8xf32> {t10.name = "w"}) -> (tensor<2x8xf32> {t10.name = "y"}) {
  %z = arith.constant dense<0.000000e+00> : tensor<2x8xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x4xf32>, tensor<4x8xf32>) outs(%z : tensor<2x8xf32>) attrs = {t10.name = "mm", t10.plan = #rtensor.plan<grid [1, 2, 2] shift d1 steps 4 rotate [(out, d2, 2)]>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32>
  func.return %mm : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<2x4xf32> {t10.name = "x"}, %w: tensor<4x8xf32> {t10.name = "w"})
// CHECK-NEXT:    %0 = rtensor.distribute %x : tensor<2x4xf32> -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>
// CHECK-NEXT:    %1 = rtensor.distribute %w : tensor<4x8xf32> -> !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>
// CHECK-NEXT:    %mm = rtensor.generic "mm"(%0, %1) {{.*}} plan = #rtensor.plan<grid [1, 2, 2] shift d1 steps 4 rotate [(out, d2, 2)]>} : (!rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 2]>>, !rtensor.tensor<4x8xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [2, 4]>>) -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> {
// CHECK:         %mm_1 = rtensor.collect %mm : !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3>> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %mm_1 : tensor<2x8xf32>
