//! `// warpsight:` annotations in PTX as the analysis reads them: what it says of those it
//! cannot read or use.

use analysis::{Context, Settings, analyze};

mod common;

fn fixture(name: &str) -> String {
    common::read(&format!("tests/fixtures/ptx/sm_80/{name}.ptx"))
}

/// Many unreadable loop annotations in one kernel's PTX are said a few at a time: eight
/// one by one, the rest counted in one line.
#[test]
fn many_unreadable_annotations_are_counted_not_listed() {
    let text = fixture("vadd");
    let at = text.find(".entry").expect("kernel");
    let body_start = at + text[at..].find('{').expect("body") + 1;
    let comments: String = (0..100).map(|i| format!("\n// warpsight: trips=x{i}")).collect();
    let noisy = format!("{}{}{}", &text[..body_start], comments, &text[body_start..]);
    let a = analyze(&noisy, &Settings::default(), &Context::default());
    let notes = &a.kernels[0].targets[0].profile.assumptions;
    let listed = notes.iter().filter(|n| n.contains("is not read")).count();
    assert_eq!(listed, 8, "{notes:#?}");
    assert!(notes.iter().any(|n| n.starts_with("92 more annotation problems")), "{notes:#?}");
}

/// Readable loop annotations that name no loop of the kernel are said a few at a time too.
#[test]
fn many_annotations_naming_no_loop_are_counted_not_listed() {
    let text = fixture("vadd");
    let at = text.find(".entry").expect("kernel");
    let body_start = at + text[at..].find('{').expect("body") + 1;
    let comments: String = (0..100).map(|_| "\n// warpsight: trips=5").collect();
    let noisy = format!("{}{}{}", &text[..body_start], comments, &text[body_start..]);
    let a = analyze(&noisy, &Settings::default(), &Context::default());
    let notes = &a.kernels[0].targets[0].profile.assumptions;
    let listed = notes.iter().filter(|n| n.contains("for a loop the PTX does not have")).count();
    assert_eq!(listed, 8, "{notes:#?}");
    assert!(notes.iter().any(|n| n.starts_with("92 more annotations state trips")), "{notes:#?}");
}
