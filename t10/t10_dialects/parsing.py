"""The text-IR parser every t10 read goes through: xDSL's `Parser`, except that a bare hex
literal in a dense float literal is the element type's bit pattern, as in MLIR.

xDSL's printer writes a non-finite element (and a finite one no short decimal form reads back
exactly) as its bits, `dense<[0xff800000, 1.0]> : tensor<2xf32>`, but xDSL's parser converts
such a literal to a float as an integer value (-inf reads back as 4.28657869e+09). Checked
wrong in xDSL 0.75.0 (the pinned version) and on xDSL's main branch of 2026-08-07; xDSL's
scalar form, `arith.constant 0xff800000 : f32`, is read as bits already. The bits are decoded
to a Python float as that form does, so a NaN payload no Python float carries (an f16's, a
signalling NaN's) reads as a quiet NaN: the payloads xDSL's printer writes all read back.

There is no public hook between a tensor literal's elements and their conversion to the
element type (the type comes after the literal), so the override replaces the parser's
private `_TensorLiteralElement` class, which `_parse_tensor_literal_element` instantiates via
`self`: the only private names t10 uses from xDSL's parser, kept to this module.
"""

from __future__ import annotations

import xdsl.parser
from xdsl.dialects.builtin import AnyFloat, ComplexType, IndexType, IntegerType
from xdsl.parser import AttrParser


class Parser(xdsl.parser.Parser):
    """xDSL's MLIR parser, reading a hex literal in a dense float literal as bits (see the
    module docstring)."""

    class _TensorLiteralElement(xdsl.parser.Parser._TensorLiteralElement):  # pyright: ignore[reportPrivateUsage]
        def to_type(
            self,
            parser: AttrParser,
            type: AnyFloat | IntegerType | IndexType | ComplexType,
        ):
            text = self.span.text
            element = type.element_type if isinstance(type, ComplexType) else type
            if "0x" not in text.lower() or not isinstance(element, AnyFloat):
                return super().to_type(parser, type)
            if isinstance(type, ComplexType):
                parser.raise_error(
                    "a hexadecimal part of a complex literal is not supported: "
                    "write the dense attribute as a hex string", self.span
                )
            if text.startswith("-"):
                parser.raise_error(
                    "a hexadecimal float literal is a bit pattern and has no sign: "
                    "set the sign bit instead", self.span
                )
            bits = int(text, 16)
            if bits.bit_length() > element.bitwidth:
                parser.raise_error(
                    f"hexadecimal float literal {text} does not fit the {element.bitwidth} "
                    f"bits of {element.name}", self.span
                )
            return element.unpack(bits.to_bytes(element.compile_time_size, "little"), 1)[0]
