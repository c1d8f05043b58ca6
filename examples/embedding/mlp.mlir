// A two-layer perceptron written by hand at the linalg level, as a downstream compiler might
// hand it to t10 (no ONNX): y = relu(x · w1 + b1) · w2, the matmuls as linalg's named op,
// the bias and ReLU as a linalg.generic. t10 plans linalg.generic only, so pipelines start
// with xDSL's linalg-generalize-named-ops (docs/embedding.md).
// The weights are constants (resident on chip); the input is an argument of @main, named
// (as the output is) by `t10.name`: the simulator takes and returns arrays by these names.
func.func @main(%x: tensor<16x32xf32> {t10.name = "x"}) -> (tensor<16x8xf32> {t10.name = "y"}) {
  %w1 = arith.constant dense<0.125> : tensor<32x64xf32>
  %b1 = arith.constant dense<[[0.5, -0.5, 0.25, -0.25, 1.0, -1.0, 0.0, 0.75, 0.5, -0.5, 0.25, -0.25, 1.0, -1.0, 0.0, 0.75, 0.5, -0.5, 0.25, -0.25, 1.0, -1.0, 0.0, 0.75, 0.5, -0.5, 0.25, -0.25, 1.0, -1.0, 0.0, 0.75, 0.5, -0.5, 0.25, -0.25, 1.0, -1.0, 0.0, 0.75, 0.5, -0.5, 0.25, -0.25, 1.0, -1.0, 0.0, 0.75, 0.5, -0.5, 0.25, -0.25, 1.0, -1.0, 0.0, 0.75, 0.5, -0.5, 0.25, -0.25, 1.0, -1.0, 0.0, 0.75]]> : tensor<1x64xf32>
  %w2 = arith.constant dense<-0.0625> : tensor<64x8xf32>
  %zero1 = arith.constant dense<0.0> : tensor<16x64xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x32xf32>, tensor<32x64xf32>) outs(%zero1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (0, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%h, %b1 : tensor<16x64xf32>, tensor<1x64xf32>) outs(%e : tensor<16x64xf32>) attrs = {t10.name = "bias_relu"} {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %t = arith.addf %v, %c : f32
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %t, %z : f32
    linalg.yield %m : f32
  } -> tensor<16x64xf32>
  %zero2 = arith.constant dense<0.0> : tensor<16x8xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<16x64xf32>, tensor<64x8xf32>) outs(%zero2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  func.return %y : tensor<16x8xf32>
}
