//! What may reach a compiler's command line, and what may reach the user's screen
//! (docs/security.md).
//!
//! **Command lines.** warpsight starts compilers with an argument vector, never a shell,
//! but nvcc itself does not: it runs its host preprocessor and its own sub-tools through
//! `sh`, pasting options into a command string inside double quotes (what `nvcc --dryrun`
//! prints, e.g. `-D "X=..."`, `-I"dir"`, `"file.cu"`; NVIDIA, *CUDA Compiler Driver NVCC*,
//! `--dryrun`). Inside double quotes `$`, `` ` ``, `"` and `\` are still live, and some
//! values (`-std=`, `-maxrregcount`) are pasted without quotes. So anything that comes
//! from a file name, a directory name, a compile database or a `-D` must be proven inert
//! before it is handed to nvcc: the predicates below accept only a conservative character
//! set that no POSIX shell gives a meaning to, quoted or not. Commas are refused as well:
//! nvcc splits list options (`-D`, `-I`, `-include`) at commas (same document, "Command
//! Option Types and Notation"), so a comma would change what the option means.
//!
//! **Screen.** A compiler's output (diagnostics, the `--version` probe) and anything read
//! from the cache or a workspace is shown to the user in a terminal or an editor.
//! [`strip_controls`] removes control characters (ESC sequences, BEL, carriage returns,
//! C1 controls) except line feeds and tabs: the one helper every such string goes through.

use std::borrow::Cow;
use std::path::Path;

/// `s` without control characters other than `\n` and `\t`.
pub fn strip_controls(s: &str) -> Cow<'_, str> {
    if s.chars().all(|c| !is_stripped(c)) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.chars().filter(|c| !is_stripped(*c)).collect())
    }
}

/// [`strip_controls`] in place.
pub fn strip_controls_in_place(s: &mut String) {
    if s.chars().any(is_stripped) {
        s.retain(|c| !is_stripped(c));
    }
}

fn is_stripped(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Characters with no meaning to a POSIX shell in any position, quoted or not, and no
/// meaning to nvcc's option parser inside a value: ASCII letters and digits and
/// `_ . + - / % = : @ ^`.
fn is_inert_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_.+-/%=:@^".contains(c)
}

/// A C preprocessor identifier (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_macro_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `NAME` or `NAME=VALUE` with a macro name and a value of inert characters (plus
/// parentheses, which a shell can only reject, never run: `N=(1<<20)` is still refused
/// for its `<`).
pub fn is_inert_define(d: &str) -> bool {
    match d.split_once('=') {
        None => is_macro_name(d),
        Some((name, value)) => {
            is_macro_name(name) && value.chars().all(|c| is_inert_char(c) || c == '(' || c == ')')
        }
    }
}

/// A flag (`-std=c++17`, `-O3`, `--expt-relaxed-constexpr`, `-maxrregcount=32`) made only
/// of inert characters, starting with `-`.
pub fn is_inert_flag(f: &str) -> bool {
    f.starts_with('-') && f.chars().all(is_inert_char)
}

/// A path made only of inert characters and spaces, and not starting with `-`. nvcc
/// always double-quotes path arguments (`-I"dir"`, `-o "file"`), so a space stays one
/// word; everything a shell would interpret inside double quotes is refused. Non-ASCII
/// letters are accepted: UTF-8 never encodes them with ASCII bytes.
pub fn is_inert_path(p: &Path) -> bool {
    let Some(s) = p.to_str() else {
        return false;
    };
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars()
            .all(|c| is_inert_char(c) || c == ' ' || (!c.is_ascii() && c.is_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_stripped_but_lines_and_tabs_kept() {
        let s = "a\u{1b}]0;title\u{7}b\u{1b}[31mred\u{1b}[0m\r\n\tc\u{9b}d\u{7f}";
        assert_eq!(strip_controls(s), "a]0;titleb[31mred[0m\n\tcd");
        assert!(matches!(strip_controls("plain\ttext\n"), Cow::Borrowed(_)));
        let mut owned = s.to_string();
        strip_controls_in_place(&mut owned);
        assert_eq!(owned, strip_controls(s));
    }

    #[test]
    fn defines() {
        for ok in ["N", "_X1", "N=4096", "BLOCK=(256)", "F=1.5f", "V=-3", "P=a/b", "E=x.y_z"] {
            assert!(is_inert_define(ok), "{ok}");
        }
        for bad in [
            "",
            "1N",
            "X=$(touch m)",
            "X=`touch m`",
            "X=\"q\"",
            "X='q'",
            "X=a b",
            "X=a;b",
            "X=a|b",
            "X=1<<20",
            "X=a,b",
            "X=a\\b",
            "X=a\nb",
            "X=*",
            "X=~",
            "X=!a",
            "X=&",
            "$(touch m)",
            "N-1=2",
        ] {
            assert!(!is_inert_define(bad), "{bad:?}");
        }
    }

    #[test]
    fn flags_and_paths() {
        for ok in ["-std=c++17", "-O3", "--expt-relaxed-constexpr", "-maxrregcount=32", "-Xptxas=-v"] {
            assert!(is_inert_flag(ok), "{ok}");
        }
        for bad in ["std=c++17", "-std=c++17;touch x", "-std=$(x)", "-Xptxas=-v -O0", "-I`x`", "-D,"] {
            assert!(!is_inert_flag(bad), "{bad}");
        }
        for ok in ["/home/me/My Project/src", "/tmp/.tmpAb12/source.cu", "/srv/josé/k.cu", "rel/dir"] {
            assert!(is_inert_path(Path::new(ok)), "{ok}");
        }
        for bad in ["/w/inj/$(touch m).cu", "/w/`touch m`", "/w/d\"q", "/w/a,b", "/w/a\\b", "-rf", "/w/a;b", "/w/a\nb", "/w/(x)", ""] {
            assert!(!is_inert_path(Path::new(bad)), "{bad:?}");
        }
    }
}
