//! The `arrow-sparse` command line: dump, inspect, convert, and their errors.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arrow-sparse"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = cli(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn golden(name: &str) -> String {
    common::repo()
        .join("format/golden")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn dump_prints_the_documented_line() {
    let out = ok(&["dump", &golden("csf_f32_i16_order201.arrow")]);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with(
        r#"{"format":"csf","value_type":"float32","index_type":"int16","shape":[3,4,5],"dim_names":["a","b","c"],"nnz":8,"axis_order":[2,0,1],"entries":[[0,0,2,-4.5],[0,1,0,30.333334],"#
    ), "{first}");
    let theirs = std::fs::read_to_string(golden("stream_mixed.jsonl")).unwrap();
    common::assert_same_dump(
        &ok(&["dump", &golden("stream_mixed.arrow")]),
        &theirs,
        "stream_mixed",
    );
}

#[test]
fn inspect_summarises_every_tensor() {
    let out = ok(&["inspect", &golden("stream_mixed.arrow")]);
    assert!(out.contains("6 message(s)"), "{out}");
    for needle in [
        "tensor 0: coo",
        "csr",
        "dense",
        "value type:  float64",
        "index type:  int64",
        "density",
        "dim names: [foo, bar, baz]",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

#[test]
fn convert_round_trips_through_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let src = golden("csf_f32_i16_order201.arrow");
    let reference = ok(&["dump", &src]);
    let strip = |s: &str| -> Vec<String> {
        // compare shape, names and entries; format, index type and axis order change
        s.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                format!("{} {} {}", v["shape"], v["dim_names"], v["entries"])
            })
            .collect()
    };
    for (to, extra) in [
        ("coo", vec![]),
        ("csf", vec!["--axis-order", "1,2,0", "--index-type", "int8"]),
        ("dense", vec![]),
        ("coo", vec!["--index-type", "uint16"]),
    ] {
        let out = dir.path().join(format!("{to}.arrow"));
        let mut args = vec!["convert", src.as_str(), out.to_str().unwrap(), "--to", to];
        args.extend(extra.iter().copied());
        ok(&args);
        let dumped = ok(&["dump", out.to_str().unwrap()]);
        assert_eq!(strip(&dumped), strip(&reference), "--to {to}");
        assert!(dumped.contains(&format!("\"format\":\"{to}\"")));
    }
    // CSR needs 2-D: a clear error and no output file
    let out = dir.path().join("csr.arrow");
    let r = cli(&["convert", &src, out.to_str().unwrap(), "--to", "csr"]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.starts_with("arrow-sparse: error:") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!Path::new(&out).exists());
    // uint64 indices are refused for writing
    let r = cli(&[
        "convert",
        &src,
        out.to_str().unwrap(),
        "--to",
        "coo",
        "--index-type",
        "uint64",
    ]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("uint64"));
    // a bad command line exits 2
    assert_eq!(
        cli(&["convert", &src, "x", "--to", "blocked"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.arrow");
    let mut bytes = std::fs::read(golden("csr_f32_i32.arrow")).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&bad, &bytes).unwrap();
    for args in [
        vec!["dump", bad.to_str().unwrap()],
        vec!["inspect", bad.to_str().unwrap()],
        vec!["dump", "/nonexistent/x.arrow"],
    ] {
        let r = cli(&args);
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("arrow-sparse: error:") && !err.contains("panicked"),
            "{err}"
        );
    }
}

#[test]
fn convert_to_gcs_and_dm_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let src = golden("csf_f32_i16_order201.arrow");
    let gcs = dir.path().join("gcs.arrow");
    ok(&[
        "convert",
        &src,
        gcs.to_str().unwrap(),
        "--to",
        "gcs",
        "--dimensions",
        "2,0,1",
        "--partitioning",
        "1",
        "--compressed-axis",
        "column",
        "--index-type",
        "int32",
    ]);
    let line = ok(&["dump", gcs.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["format"], "gcs");
    assert_eq!(v["shape"], serde_json::json!([3, 4, 5]));
    assert_eq!(v["dimensions"], serde_json::json!([2, 0, 1]));
    assert_eq!(v["partitioning"], serde_json::json!([1]));
    let keys: Vec<&str> = line
        .split("\":")
        .map(|k| k.rsplit('"').next().unwrap())
        .collect();
    let pos = |k: &str| keys.iter().position(|x| *x == k).unwrap();
    assert!(
        pos("nnz") < pos("dimensions")
            && pos("dimensions") < pos("partitioning")
            && pos("partitioning") < pos("entries")
    );
    let reference: serde_json::Value =
        serde_json::from_str(ok(&["dump", &src]).lines().next().unwrap()).unwrap();
    assert_eq!(v["entries"], reference["entries"]);
    let inspect = ok(&["inspect", gcs.to_str().unwrap()]);
    assert!(
        inspect.contains("dimensions [2, 0, 1], partitioning [1] -> reduced shape [5, 12]")
            && inspect.contains("csc matrix [5, 12]"),
        "{inspect}"
    );
    // default mapping: the one with the fewest bytes
    let best = dir.path().join("best.arrow");
    ok(&["convert", &src, best.to_str().unwrap(), "--to", "gcs"]);
    assert!(ok(&["dump", best.to_str().unwrap()]).contains("\"format\":\"gcs\""));
    // DM over CSR storage, and back to COO
    let dm = dir.path().join("dm.arrow");
    ok(&[
        "convert",
        &src,
        dm.to_str().unwrap(),
        "--to",
        "dm",
        "--dimensions",
        "1,2,0",
        "--partitioning",
        "2",
        "--storage",
        "csr",
    ]);
    assert!(ok(&["inspect", dm.to_str().unwrap()]).contains("storage:     csr [20, 3]"));
    let coo = dir.path().join("coo.arrow");
    ok(&[
        "convert",
        dm.to_str().unwrap(),
        coo.to_str().unwrap(),
        "--to",
        "coo",
    ]);
    let back: serde_json::Value =
        serde_json::from_str(ok(&["dump", coo.to_str().unwrap()]).trim()).unwrap();
    assert_eq!(back["entries"], reference["entries"]);
    // a bad map is a one-line error
    let r = cli(&[
        "convert",
        &src,
        dm.to_str().unwrap(),
        "--to",
        "gcs",
        "--dimensions",
        "0,0,1",
        "--partitioning",
        "1",
    ]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&r.stderr).lines().count(), 1);
}
