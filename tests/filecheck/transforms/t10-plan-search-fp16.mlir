// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16 precision=fp16}' | filecheck %s
// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16 precision=fp16},convert-linalg-to-rtensor' | filecheck %s --check-prefix=RT
// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16 precision=bf8}' | filecheck %s --check-prefix=BAD

// BAD-COUNT-2: t10-plan-search: unknown precision 'bf8'; choose one of fp32, fp16

// fp16 storage: the module records the precision; the linalg types stay f32 (the host's).
// The fastest plan changes (fp16 matmuls are cheaper per k block) and every byte figure is
// 2 bytes per element: the add's plan is fp32's (t10-plan-search.mlir), at half the bytes.

// CHECK: builtin.module attributes {t10.chip = "test-16", t10.planner = "t10", t10.precision = "fp16", t10.partials = "fp32", t10.model_bytes = 4640 : i64, t10.bound = {{[0-9]+}} : i64, t10.planned_ops = [{{.*}}]}
// CHECK:      t10.name = "fc/MatMul", t10.plan = #rtensor.plan<grid [4, 4, 1]>, t10.estimate = #rtensor.estimate<cycles = 2748, compute = 2630, exchange = 0, sync = 118, bytes = 4608>
// CHECK:      t10.name = "fc/Add", t10.plan = #rtensor.plan<grid [4, 4]>, t10.estimate = #rtensor.estimate<cycles = 546, compute = 428, exchange = 0, sync = 118, bytes = 1056>

// Distributed tensors store f16: distribute rounds the f32 host tensors, collect widens.
// RT:      %0 = rtensor.distribute %x : tensor<64x64xf32> -> !rtensor.tensor<64x64xf16,
// RT:      rtensor.generic "fc/MatMul"
// RT-SAME: -> !rtensor.tensor<64x64xf16,
// RT:      rtensor.collect %r : !rtensor.tensor<64x64xf16, {{.*}}> -> tensor<64x64xf32>

builtin.module {
  func.func @main(%x: tensor<64x64xf32> {t10.name = "input"}) -> (tensor<64x64xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
    %b = arith.constant dense<5.000000e-01> : tensor<64xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) attrs = {t10.name = "fc/MatMul"} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %e = tensor.empty() : tensor<64x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) attrs = {t10.name = "fc/Add"} {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    func.return %r : tensor<64x64xf32>
  }
}


// -----

// A pinned plan that splits k over 2 cores: its partial sums stay fp32 (4 bytes, also in the
// all-reduce), then a superstep rounds them into f16 storage. Against fp32's estimate of the
// same plan (cycles = 4850, compute = 3922, exchange = 574, sync = 354, bytes = 9216): the
// matmul is cheaper, the all-reduce moves as much, rounding adds an element-wise pass and a
// sync; bytes = 2 * (32*32 + 32*16) inputs + 2 * 512 output + 4 * 512 accumulator + 4 * 256
// all-reduce receive.

// CHECK:      t10.name = "fc/MatMul", t10.plan = #rtensor.plan<grid [2, 4, 2]>, t10.estimate = #rtensor.estimate<cycles = 3632, compute = 2586, exchange = 574, sync = 472, bytes = 7168>

// RT:      %mm = rtensor.generic "fc/MatMul"
// RT-SAME: -> !rtensor.tensor<64x64xf32, #rtensor.layout<grid [2, 4, 2] axes [d0, d1] tile [32, 16]>>
// RT:      %mm_1 = rtensor.relayout "fc/MatMul" %mm : !rtensor.tensor<64x64xf32, #rtensor.layout<grid [2, 4, 2] axes [d0, d1] tile [32, 16]>> -> !rtensor.tensor<64x64xf16, #rtensor.layout<grid [2, 4, 2] axes [d0, d1] tile [32, 16]>>
// RT-NEXT: rtensor.relayout "fc/Add/relayout" %mm_1

builtin.module {
  func.func @main(%x: tensor<64x64xf32> {t10.name = "input"}) -> (tensor<64x64xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
    %b = arith.constant dense<5.000000e-01> : tensor<64xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) attrs = {t10.name = "fc/MatMul", t10.plan = #rtensor.plan<grid [2, 4, 2]>} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %e = tensor.empty() : tensor<64x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) attrs = {t10.name = "fc/Add"} {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    func.return %r : tensor<64x64xf32>
  }
}

