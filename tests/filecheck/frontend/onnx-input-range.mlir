// RUN: %python %S/Inputs/mask_positions_model.py %t.onnx
// RUN: t10 compile %t.onnx --chip test-16 --emit linalg --input-range attention_mask=0:1 | filecheck %s
// RUN: t10 compile %t.onnx --chip test-16 --emit linalg --input-range attention_mask=0:1 | t10-opt | filecheck %s
// RUN: t10 compile %t.onnx --chip test-16 --input-range attention_mask=0:1 | filecheck %s --check-prefix=CHIP
// RUN: not t10 compile %t.onnx --chip test-16 2>&1 | filecheck %s --check-prefix=UNDECLARED
// RUN: not t10 compile %t.onnx --chip test-16 --input-range mask=0:1 2>&1 | filecheck %s --check-prefix=UNKNOWN

// A CumSum of the graph input attention_mask (OPT's positions) is integer arithmetic on a value
// whose range only the user knows: declared, it is proven exact and the argument records the
// range down to the chip level (the simulator checks inputs against it); undeclared, refused
// naming the fix.
// CHECK:      func.func @main(%attention_mask: tensor<2x6xf32> {t10.name = "attention_mask", t10.onnx_type = "int64", t10.range = array<i64: 0, 1>}) -> (tensor<2x6xf32> {t10.name = "y"})
// CHECK:      linalg.generic
// CHECK-SAME: t10.name = "positions:1"
// CHIP:       func.func @main(%attention_mask: tensor<2x6xf32> {t10.name = "attention_mask", t10.onnx_type = "int64", t10.range = array<i64: 0, 1>})
// UNDECLARED: t10: error: ONNX model '{{.*}}': node 'positions' (CumSum): integer CumSum needs proven ranges of its inputs to stay exact, but the range of input 'attention_mask' is unknown; declare the range of its values (`--input-range attention_mask=LO:HI` on t10 run / compile; the simulator checks every input against it)
// UNKNOWN:    t10: error: ONNX model '{{.*}}': a range is declared for 'mask', which is not an input of the model (its integer inputs: attention_mask)
