// RUN: t10-opt %s -p 't10-plan-search{chip=test-16 precision=fp16},convert-linalg-to-rtensor' | filecheck %s
// RUN: t10-opt %s -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor' | filecheck %s --check-prefix=FP32

// fp16 storage saturates every finite float constant beyond fp16's range to ±65504 (as
// onnxruntime's fp16 converter clamps a model's constants): a weight's elements and a
// kernel body's constant (a Hugging Face mask's float32 minimum); values in range stay (and
// so do ±inf: tests/unit/test_fp16_finite.py). fp32 keeps them as they are. The module
// records, for the report's warning, the saturated values other than float32's extremes (the
// ±infinity of masks): here the weight's 1e6, first read by node 'masked'.

// CHECK:      builtin.module attributes {{.*}}t10.fp16_saturated = "fp16: 1 constant value(s) beyond fp16's range saturated to \C2\B165504 (largest |x| 1e+06, first in node 'masked'): results that depend on them differ from the fp32 model"}
// FP32-NOT:   t10.fp16_saturated

// CHECK:      arith.constant dense<[6.550400e+04, -6.550400e+04, 2.000000e+00]> : tensor<3xf32>
// CHECK:      rtensor.generic "masked"
// CHECK:        arith.constant -6.550400e+04 : f32

// FP32:       arith.constant dense<[1.000000e+06, -3.40282347e+38, 2.000000e+00]> : tensor<3xf32>
// FP32:       rtensor.generic "masked"
// FP32:         arith.constant -3.40282347e+38 : f32

builtin.module {
  func.func @main(%x: tensor<3xf32> {t10.name = "input"}) -> (tensor<3xf32> {t10.name = "output"}) {
    %w = arith.constant dense<[1.000000e+06, -3.40282347e+38, 2.000000e+00]> : tensor<3xf32>
    %e = tensor.empty() : tensor<3xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %w : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) attrs = {t10.name = "masked"} {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %min = arith.constant -3.40282347e+38 : f32
      %zero = arith.constant 0.000000e+00 : f32
      %keep = arith.cmpf ogt, %a, %zero : f32
      %m = arith.select %keep, %c, %min : f32
      linalg.yield %m : f32
    } -> tensor<3xf32>
    func.return %r : tensor<3xf32>
  }
}
