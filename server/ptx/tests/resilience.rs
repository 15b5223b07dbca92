//! Broken input: garbage lines, binary data, truncation, unbalanced braces, huge lines.
//! The parser must never panic or hang, must report problems where they are, and must
//! still parse everything around them.

mod common;

use std::collections::BTreeSet;

use ptx::{LineIndex, Severity};

use common::{check_spans, corpus, corpus_file, instruction_counts};

const GARBAGE: &[&str] = &[
    "this is garbage",
    "@@@ ###",
    "\u{1}\u{2}\u{3} binary \u{7f}",
    "add.s32 %r1,, %r2;",
    "ld.global.f32 %f1, [%rd1+;",
    "mov.u32 %r1 %r2;",
    "ünïcödé ☃ 漢字",
    "0x1234 ]] ))",
    "@%p1 @%p2 bra;",
    "st.global.f32 [%rd1], {%f1, %f2;",
];

/// Inserts a garbage line after every 20th complete instruction line of each file and
/// checks that the diagnostics are exactly on the garbage lines and that every function
/// keeps all its instructions.
#[test]
fn garbage_lines_are_reported_on_their_lines_and_the_rest_parses() {
    for (name, src) in corpus() {
        let clean = ptx::parse(&src);
        assert!(clean.errors.is_empty(), "{name}");
        let want = instruction_counts(&clean);

        let mut out = String::new();
        let mut garbage_lines = BTreeSet::new();
        let mut n_instr_lines = 0;
        let mut in_section = false;
        for (i, line) in src.lines().enumerate() {
            out.push_str(line);
            out.push('\n');
            let t = line.trim();
            in_section |= t.starts_with(".section");
            let is_instruction = t.ends_with(';')
                && t.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && t.split(|c: char| c == '.' || c.is_whitespace())
                    .next()
                    .is_some_and(ptx::is_known_opcode);
            if is_instruction && !in_section {
                n_instr_lines += 1;
                if n_instr_lines % 20 == 0 {
                    let g = GARBAGE[(n_instr_lines / 20) % GARBAGE.len()];
                    out.push_str(g);
                    out.push('\n');
                    // Line numbers are 1-based: the garbage follows source line i + 1,
                    // shifted by the garbage lines already inserted.
                    garbage_lines.insert(i as u32 + 2 + garbage_lines.len() as u32);
                }
            }
        }
        assert!(!garbage_lines.is_empty(), "{name}: nothing inserted");

        let broken = ptx::parse(&out);
        check_spans(&out, &broken);
        let index = LineIndex::new(&out);
        let diag_lines: BTreeSet<u32> = broken
            .errors
            .iter()
            .map(|e| index.line_number(e.span.start))
            .collect();
        let report: Vec<String> = broken
            .errors
            .iter()
            .map(|e| format!("line {}: {}", index.line_number(e.span.start), e.message))
            .collect();
        assert_eq!(diag_lines, garbage_lines, "{name}: diagnostics {report:#?}");
        assert!(broken.errors.iter().all(|e| e.severity == Severity::Error));
        assert_eq!(
            instruction_counts(&broken),
            want,
            "{name}: instructions lost around garbage"
        );
    }
}

/// A tiny deterministic PRNG (xorshift64*), so the test needs no dependency and every
/// run sees the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn binary_garbage_never_panics() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for len in [0usize, 1, 2, 7, 64, 1000, 100_000] {
        for _ in 0..8 {
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let src = String::from_utf8_lossy(&bytes);
            let p = ptx::parse(&src);
            check_spans(&src, &p);
        }
    }
    // Punctuation-heavy noise exercises the parser rather than the lexer's error path.
    let alphabet = b"{}[]()<>;,.:@!|+-%$_ \n\tabc019.xfd\"/*";
    for _ in 0..200 {
        let bytes: Vec<u8> = (0..500)
            .map(|_| alphabet[(rng.next() % alphabet.len() as u64) as usize])
            .collect();
        let src = String::from_utf8_lossy(&bytes);
        let p = ptx::parse(&src);
        check_spans(&src, &p);
    }
}

#[test]
fn every_truncation_of_real_ptx_parses() {
    for (name, src) in corpus() {
        let step = (src.len() / 300).max(1);
        let mut cut = 0;
        while cut <= src.len() {
            if src.is_char_boundary(cut) {
                let prefix = &src[..cut];
                let p = ptx::parse(prefix);
                check_spans(prefix, &p);
            }
            cut += step;
        }
        let _ = name;
    }
}

#[test]
fn truncated_function_reports_unclosed_brace() {
    let src = corpus_file("nvcc_sm90_lineinfo.ptx");
    let cut = src.find("$L__BB1_2:").expect("label in vadd");
    let p = ptx::parse(&src[..cut]);
    assert!(p.errors.iter().any(|e| e.message.contains("unclosed `{`")));
    assert!(
        p.module
            .functions()
            .any(|f| f.name == "vadd" && f.body.is_some())
    );
}

#[test]
fn missing_closing_brace_does_not_swallow_the_next_function() {
    let src = corpus_file("nvcc_sm90_lineinfo.ptx");
    let clean = ptx::parse(&src);
    let want = instruction_counts(&clean);
    // Drop the `}` that ends the first function (`_Z6helperff`).
    let first_close = src.find("\n}\n").expect("closing brace");
    let broken = format!("{}{}", &src[..first_close + 1], &src[first_close + 3..]);
    let p = ptx::parse(&broken);
    check_spans(&broken, &p);
    let errors: Vec<_> = p
        .errors
        .iter()
        .filter(|e| e.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].message.contains("missing `}`"));
    assert_eq!(instruction_counts(&p), want);
}

#[test]
fn extra_closing_braces_are_reported_and_skipped() {
    let src = corpus_file("clang19_sm80.ptx");
    let clean = ptx::parse(&src);
    let want = instruction_counts(&clean);
    let at = src.find(".visible .entry").expect("entry");
    let broken = format!("{}}}}}\n{}", &src[..at], &src[at..]);
    let p = ptx::parse(&broken);
    check_spans(&broken, &p);
    assert_eq!(p.errors.len(), 1, "{:#?}", p.errors);
    assert_eq!(instruction_counts(&p), want);
}

#[test]
fn huge_and_deep_inputs_terminate() {
    let header = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n";
    let cases = [
        format!("{header}{}", "{".repeat(200_000)),
        format!("{header}{}", "}".repeat(200_000)),
        format!("{header}mov.u32 %r1, {};\n}}\n", "{".repeat(100_000)),
        format!("{header}ld.u32 %r1, {};\n}}\n", "[".repeat(100_000)),
        format!("{header}add.s32 %r1{};\n}}\n", ", %r2".repeat(200_000)),
        format!("{header}{}\n}}\n", "x".repeat(3_000_000)),
        format!("{header}.reg .b32 {};\n}}\n", "%r<1>, ".repeat(100_000)),
        format!("{header}{}", "/*".repeat(100_000)),
        format!("{header}\"{}", "a".repeat(1_000_000)),
        format!("{header}{}\n}}\n", "(".repeat(100_000)),
        ".section .debug_info {".repeat(10_000),
        format!(".global .b8 x[4] = {};", "{".repeat(100_000)),
    ];
    for src in &cases {
        let p = ptx::parse(src);
        check_spans(src, &p);
    }
    // A 200 000-operand line is still one instruction.
    let p = ptx::parse(&cases[4]);
    assert!(p.errors.is_empty(), "{:?}", p.errors.first());
    assert_eq!(instruction_counts(&p), [("k", 1)]);
}

/// The minimal form of a proptest failure (seed in `mutations.proptest-regressions`): an
/// operand that ends in a multi-byte character (`0%` followed by U+FFFD, which
/// `from_utf8_lossy` made of a stray byte) on a line without `;`. The "before the end of the
/// line" error pointed at the operand's last byte, the middle of the character. It now
/// covers the whole last character, whatever its width, for each way an operand can end in
/// non-ASCII text: an expression swallowing an error token, and an unterminated string.
#[test]
fn missing_semicolon_after_a_non_ascii_operand_points_at_a_whole_character() {
    let header = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n";
    for (operand, last) in [
        ("0%\u{FFFD}", "\u{FFFD}"),
        ("%rd1+é", "é"),
        ("sym*漢", "漢"),
        ("%r1|😀", "😀"),
        ("\"unterminated é", "é"),
    ] {
        let src = format!("{header}\tld.param.u64 {operand}\n\tmov.u32 %r1, %r2;\n}}\n");
        let p = ptx::parse(&src);
        check_spans(&src, &p);
        let e = p
            .errors
            .iter()
            .find(|e| e.message.contains("before the end of the line"))
            .unwrap_or_else(|| panic!("{operand:?}: no end-of-line error in {:#?}", p.errors));
        assert_eq!(src.get(e.span.range()), Some(last), "{operand:?}: {e:?}");
        // The next line is still read as an instruction.
        assert_eq!(instruction_counts(&p), [("k", 2)], "{operand:?}");
    }
}
