// A parse error is one line with its location, exit 1; --debug raises it with the traceback
// and xDSL's picture of the line.

// RUN: not t10-opt %s 2>&1 | filecheck %s
// RUN: not t10-opt %s --debug 2>&1 | filecheck %s --check-prefix=DEBUG

// CHECK: {{^}}t10-opt: error: {{.*}}parse-error.mlir:16:24: Expected integer literal{{$}}
// CHECK-NOT: {{.}}

// DEBUG:      Traceback (most recent call last):
// DEBUG:      xdsl.utils.exceptions.ParseError: {{.*}}parse-error.mlir:16:24
// DEBUG-NEXT: %0 = core.alloc "x" on : !core.buffer<4x8xf32>
// DEBUG-NEXT: {{ +}}^
// DEBUG-NEXT: {{ +}}Expected integer literal

%0 = core.alloc "x" on : !core.buffer<4x8xf32>
