//! What a name means to the parser (directives, state spaces, types) and the number
//! literals of PTX.

use crate::ast::*;

/// Directives that start a module-level item. Seen at the start of a line inside a body
/// they mean the body lost its `}`.
pub(super) fn is_module_start(name: &str) -> bool {
    matches!(
        name,
        "version"
            | "target"
            | "address_size"
            | "file"
            | "visible"
            | "extern"
            | "weak"
            | "common"
            | "entry"
            | "func"
            | "section"
    )
}

/// Performance-tuning and attribute directives allowed between a function header and its
/// body (PTX ISA 9.x §11.4).
pub(super) fn is_header_directive(name: &str) -> bool {
    matches!(
        name,
        "maxntid"
            | "reqntid"
            | "minnctapersm"
            | "maxnctapersm"
            | "maxnreg"
            | "pragma"
            | "noreturn"
            | "explicitcluster"
            | "reqnctapercluster"
            | "maxclusterrank"
            | "blocksareclusters"
            | "abi_preserve"
            | "abi_preserve_control"
    )
}

/// Every directive of PTX ISA 9.x §11; others get an "unknown directive" warning.
pub(super) fn is_known_directive(name: &str) -> bool {
    is_module_start(name)
        || is_header_directive(name)
        || matches!(
            name,
            "alias"
                | "branchtargets"
                | "callprototype"
                | "calltargets"
                | "const"
                | "global"
                | "loc"
                | "local"
                | "param"
                | "reg"
                | "shared"
                | "sreg"
                | "tex"
                | "address_size"
        )
}

/// Directives terminated by `;` (the rest end at the end of the line).
pub(super) fn is_semicolon_directive(name: &str) -> bool {
    matches!(
        name,
        "pragma" | "alias" | "callprototype" | "branchtargets" | "calltargets"
    )
}

pub(super) fn is_state_space(name: &str) -> bool {
    matches!(
        name,
        "global" | "const" | "shared" | "local" | "param" | "tex"
    )
}

/// Fundamental and opaque type names (PTX ISA 9.x §5.2, §5.3).
pub(crate) fn is_type_name(name: &str) -> bool {
    matches!(
        name,
        "b8" | "b16"
            | "b32"
            | "b64"
            | "b128"
            | "s8"
            | "s16"
            | "s32"
            | "s64"
            | "s128"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "f16"
            | "f16x2"
            | "f32"
            | "f64"
            | "bf16"
            | "bf16x2"
            | "tf32"
            | "e4m3"
            | "e5m2"
            | "e4m3x2"
            | "e5m2x2"
            | "e2m3x2"
            | "e3m2x2"
            | "e2m1x2"
            | "ue8m0x2"
            | "pred"
            | "texref"
            | "samplerref"
            | "surfref"
    )
}

pub(super) fn vector_width(name: &str) -> Option<u8> {
    match name {
        "v2" => Some(2),
        "v4" => Some(4),
        "v8" => Some(8),
        _ => None,
    }
}

/// Parses an integer literal (PTX ISA 9.x §4.5.1) without its sign. Values above
/// `i64::MAX` wrap (they are bit patterns such as `0xFFFFFFFFFFFFFFFF`).
pub(crate) fn parse_int(text: &str) -> Option<i64> {
    let t = text.strip_suffix(['U', 'u']).unwrap_or(text);
    let b = t.as_bytes();
    let (digits, radix) = if b.len() > 2 && b[0] == b'0' && matches!(b[1], b'x' | b'X') {
        (&t[2..], 16)
    } else if b.len() > 2 && b[0] == b'0' && matches!(b[1], b'b' | b'B') {
        (&t[2..], 2)
    } else if b.len() > 1 && b[0] == b'0' {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    if digits.is_empty() {
        return None;
    }
    let mut acc: u64 = 0;
    for c in digits.bytes() {
        let d = (c as char).to_digit(radix)?;
        acc = acc
            .checked_mul(u64::from(radix))?
            .checked_add(u64::from(d))?;
    }
    Some(acc as i64)
}

/// Parses a number token as an operand value; `None` when malformed.
pub(super) fn parse_number(text: &str, negative: bool) -> Option<Operand<'static>> {
    let b = text.as_bytes();
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1], b'f' | b'F') {
        let hex = text.get(2..)?;
        if hex.len() != 8 {
            return None;
        }
        let bits = u32::from_str_radix(hex, 16).ok()?;
        let bits = if negative { bits ^ 0x8000_0000 } else { bits };
        return Some(Operand::Float(FloatLit::F32Bits(bits)));
    }
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1], b'd' | b'D') {
        let hex = text.get(2..)?;
        if hex.len() != 16 {
            return None;
        }
        let bits = u64::from_str_radix(hex, 16).ok()?;
        let bits = if negative {
            bits ^ 0x8000_0000_0000_0000
        } else {
            bits
        };
        return Some(Operand::Float(FloatLit::F64Bits(bits)));
    }
    let is_hex_or_bin = b.len() > 1 && b[0] == b'0' && matches!(b[1], b'x' | b'X' | b'b' | b'B');
    if !is_hex_or_bin && b.iter().any(|c| matches!(c, b'.' | b'e' | b'E')) {
        let v: f64 = text.parse().ok()?;
        return Some(Operand::Float(FloatLit::Decimal(if negative {
            -v
        } else {
            v
        })));
    }
    let v = parse_int(text)?;
    Some(Operand::Int(if negative { v.wrapping_neg() } else { v }))
}
