//! docs/cli.md documents the report's keys, and the report types are their one source
//! (issue #15, items 2 and 9): every key of `FILE`, `KERNEL` and `TARGET` is a row of its
//! table and every row is a key; the keys of each object nested in them are named in the
//! row that holds it (or in the document that row points to). The keys come from the
//! types themselves: a tracing `serde::Serializer` records, for every struct it is handed,
//! its name, its fields (skipped ones included) and the field that holds it. Map keys are
//! data (GPU ids, model names, instruction classes), not part of the shape.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::rc::Rc;

use analysis::report::{AnalyzeReport, FileReport, OccupancyReport, SourceKind};
use analysis::{Context, Settings, analyze};
use serde::ser::{self, Serialize};

/// What the tracer saw: struct name → fields, and struct name → (parent struct, field).
#[derive(Default, Debug)]
struct Shapes {
    fields: BTreeMap<&'static str, BTreeSet<&'static str>>,
    parents: BTreeMap<&'static str, BTreeSet<(&'static str, &'static str)>>,
}

#[derive(Clone)]
struct Tracer {
    shapes: Rc<RefCell<Shapes>>,
    /// The struct field whose value is being serialised.
    at: Option<(&'static str, &'static str)>,
}

#[derive(Debug)]
struct TraceError(String);

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TraceError {}

impl ser::Error for TraceError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        TraceError(msg.to_string())
    }
}

/// A struct (or struct variant) being serialised.
struct StructTracer {
    tracer: Tracer,
    name: &'static str,
}

impl Tracer {
    fn begin_struct(self, name: &'static str) -> StructTracer {
        {
            let mut shapes = self.shapes.borrow_mut();
            shapes.fields.entry(name).or_default();
            if let Some(at) = self.at {
                shapes.parents.entry(name).or_default().insert(at);
            }
        }
        StructTracer { tracer: self, name }
    }
}

impl StructTracer {
    fn field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: Option<&T>) -> Result<(), TraceError> {
        self.tracer.shapes.borrow_mut().fields.entry(self.name).or_default().insert(key);
        match value {
            Some(v) => v.serialize(Tracer { shapes: self.tracer.shapes.clone(), at: Some((self.name, key)) }),
            None => Ok(()),
        }
    }
}

macro_rules! ignore {
    ($($f:ident: $t:ty),*) => {
        $(fn $f(self, _: $t) -> Result<(), TraceError> { Ok(()) })*
    };
}

impl ser::Serializer for Tracer {
    type Ok = ();
    type Error = TraceError;
    type SerializeSeq = Tracer;
    type SerializeTuple = Tracer;
    type SerializeTupleStruct = Tracer;
    type SerializeTupleVariant = Tracer;
    type SerializeMap = Tracer;
    type SerializeStruct = StructTracer;
    type SerializeStructVariant = StructTracer;

    ignore!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64, serialize_u8: u8,
        serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_f32: f32, serialize_f64: f64, serialize_char: char,
        serialize_str: &str, serialize_bytes: &[u8], serialize_unit_struct: &'static str);

    fn serialize_none(self) -> Result<(), TraceError> {
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), TraceError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), TraceError> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), TraceError> {
        Ok(())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> Result<(), TraceError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _: &'static str, _: u32, _: &'static str, value: &T) -> Result<(), TraceError> {
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Tracer, TraceError> {
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Tracer, TraceError> {
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Tracer, TraceError> {
        Ok(self)
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Tracer, TraceError> {
        Ok(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Tracer, TraceError> {
        Ok(self)
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<StructTracer, TraceError> {
        Ok(self.begin_struct(name))
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, variant: &'static str, _: usize) -> Result<StructTracer, TraceError> {
        Ok(self.begin_struct(variant))
    }
}

macro_rules! elements {
    ($($tr:ident: $f:ident),*) => {
        $(impl ser::$tr for Tracer {
            type Ok = ();
            type Error = TraceError;
            fn $f<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), TraceError> {
                value.serialize(self.clone())
            }
            fn end(self) -> Result<(), TraceError> {
                Ok(())
            }
        })*
    };
}

elements!(SerializeSeq: serialize_element, SerializeTuple: serialize_element, SerializeTupleStruct: serialize_field, SerializeTupleVariant: serialize_field);

impl ser::SerializeMap for Tracer {
    type Ok = ();
    type Error = TraceError;
    /// Map keys are data, not shape.
    fn serialize_key<T: ?Sized + Serialize>(&mut self, _: &T) -> Result<(), TraceError> {
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), TraceError> {
        value.serialize(self.clone())
    }
    fn end(self) -> Result<(), TraceError> {
        Ok(())
    }
}

impl ser::SerializeStruct for StructTracer {
    type Ok = ();
    type Error = TraceError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), TraceError> {
        self.field(key, Some(value))
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), TraceError> {
        self.field::<()>(key, None)
    }
    fn end(self) -> Result<(), TraceError> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for StructTracer {
    type Ok = ();
    type Error = TraceError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), TraceError> {
        self.field(key, Some(value))
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), TraceError> {
        self.field::<()>(key, None)
    }
    fn end(self) -> Result<(), TraceError> {
        Ok(())
    }
}

fn shapes_of(value: &impl Serialize) -> Shapes {
    let shapes = Rc::new(RefCell::new(Shapes::default()));
    value.serialize(Tracer { shapes: shapes.clone(), at: None }).expect("the tracer accepts every report");
    Rc::try_unwrap(shapes).expect("one owner").into_inner()
}

fn repo_file(path: &str) -> String {
    let full = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// The identifiers inside `code spans` of a text.
fn code_words(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|span| span.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// One row of a key table: the keys of its first column and the whole row.
struct Row {
    keys: BTreeSet<String>,
    text: String,
}

/// The rows of the table that follows the line `` `NAME`: `` in docs/cli.md.
fn table(doc: &str, name: &str) -> Vec<Row> {
    let start = doc.find(&format!("\n`{name}`:\n")).unwrap_or_else(|| panic!("docs/cli.md has no `{name}`: table"));
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and the separator
        .map(|l| Row { keys: code_words(l.split('|').nth(1).unwrap_or_default()), text: l.to_string() })
        .collect()
}

/// A report with every part present: the examples and a few fixtures on two GPUs, plus a
/// target whose occupancy failed (the other shape of `occupancy`).
fn populated_report() -> AnalyzeReport {
    let settings = Settings { gpus: vec!["a100-sxm4-80gb".into(), "tesla-v100".into()], ..Default::default() };
    let mut files = Vec::new();
    for path in ["examples/reduce.ptx", "examples/transpose.ptx", "examples/vadd.ptx"] {
        let text = repo_file(path);
        let analysis = analyze(&text, &settings, &Context::default());
        let mut file = FileReport::new(path, SourceKind::Ptx, &text, &analysis).into_owned();
        file.notes = Some(vec!["a note".into()]);
        file.compiler_diagnostics = Some(vec!["x.cu:1:1: warning: a message".into()]);
        file.toolchain = Some("nvcc".into());
        file.source = Some(SourceKind::Ptx);
        files.push(file);
    }
    let kernel = files.iter_mut().flat_map(|f| f.kernels.iter_mut()).next().expect("the examples have kernels");
    let mut failed = kernel.gpus.values().next().expect("a target").clone();
    failed.occupancy = OccupancyReport::Failed { error: "invalid occupancy input".into() };
    kernel.gpus.insert("failed".into(), failed);
    AnalyzeReport { warpsight: env!("CARGO_PKG_VERSION").into(), files }
}

#[test]
fn docs_cli_md_lists_every_key_of_the_report_types_and_no_other() {
    let doc = repo_file("docs/cli.md");
    let report = populated_report();
    let shapes = shapes_of(&report);
    // Every type that holds data in the sample was seen (a `None` everywhere would hide its keys).
    for name in ["FileReport", "KernelReport", "TargetReport", "OccupancyFigures", "WavesReport", "PredictionReport", "HeadlineReport", "PowerReport", "TargetCharts", "LoopInfo", "BranchInfo", "MemoryAccess", "FindingReport"] {
        assert!(shapes.fields.contains_key(name), "the sample report has no {name}: {:?}", shapes.fields.keys());
    }
    let tables = [("FileReport", "FILE"), ("KernelReport", "KERNEL"), ("TargetReport", "TARGET")];
    let rows: BTreeMap<&str, Vec<Row>> = tables.iter().map(|(ty, name)| (*ty, table(&doc, name))).collect();
    let mut problems = Vec::new();
    // Each table lists exactly the keys of its type.
    for (ty, name) in tables {
        let fields: BTreeSet<String> = shapes.fields[ty].iter().map(|f| f.to_string()).collect();
        let documented: BTreeSet<String> = rows[ty].iter().flat_map(|r| r.keys.iter().cloned()).collect();
        for missing in fields.difference(&documented) {
            problems.push(format!("`{name}` table: no row for the key `{missing}` of {ty}"));
        }
        for extra in documented.difference(&fields) {
            problems.push(format!("`{name}` table: `{extra}` is not a key of {ty}"));
        }
    }
    // The keys of an object held by a table's key are named in that key's row, or in the
    // document the row points to (`memory_accesses`: docs/profile.md).
    for (ty, fields) in &shapes.fields {
        for (parent, key) in shapes.parents.get(ty).into_iter().flatten() {
            let Some(parent_rows) = rows.get(parent) else { continue };
            if rows.contains_key(ty) {
                continue;
            }
            let row = parent_rows.iter().find(|r| r.keys.contains(*key)).unwrap_or_else(|| panic!("no row for `{key}` of {parent}"));
            let mut named = code_words(&row.text);
            for linked in row.text.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ';' || c == ',').filter(|w| w.starts_with("docs/") && w.ends_with(".md")) {
                named.extend(code_words(&repo_file(linked)));
            }
            for field in fields {
                if !named.contains(*field) {
                    problems.push(format!("the row of `{key}` ({parent}) does not name `{field}`, a key of its {ty}"));
                }
            }
        }
    }
    // The document around the files.
    let head = doc.split("\n`FILE`:\n").next().unwrap_or_default();
    for field in &shapes.fields["AnalyzeReport"] {
        if !head.contains(&format!("\"{field}\"")) {
            problems.push(format!("the `analyze --format json` document does not show the key `{field}`"));
        }
    }
    assert!(problems.is_empty(), "docs/cli.md and the report types disagree:\n{}", problems.join("\n"));
}

#[test]
fn the_report_reads_back_as_it_was_written() {
    let report = populated_report();
    let json = serde_json::to_value(&report).expect("serialises");
    let back: AnalyzeReport = serde_json::from_value(json.clone()).expect("deserialises");
    assert_eq!(serde_json::to_value(&back).expect("serialises"), json);
}

/// The tracer sees a missing row: a type with a key the table lacks is reported.
#[test]
fn the_tracer_records_fields_skipped_ones_and_parents() {
    #[derive(serde::Serialize)]
    struct Inner {
        a: u32,
    }
    #[derive(serde::Serialize)]
    struct Outer {
        inner: Option<Inner>,
        #[serde(skip_serializing_if = "Option::is_none")]
        hidden: Option<u32>,
        by_id: BTreeMap<String, Inner>,
    }
    let shapes = shapes_of(&Outer { inner: None, hidden: None, by_id: [("gpu-x".to_string(), Inner { a: 1 })].into() });
    assert_eq!(shapes.fields["Outer"], ["by_id", "hidden", "inner"].into());
    assert_eq!(shapes.fields["Inner"], ["a"].into());
    assert_eq!(shapes.parents["Inner"], [("Outer", "by_id")].into());
}
