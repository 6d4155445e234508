//! The `arrow-sparse` command line: dump, inspect, convert, and their errors.

mod common;
use common::{cli, cli_ok};

use std::path::Path;
use std::process::{Command, Output};

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
    let out = cli_ok(&["dump", &golden("csf_f32_i16_order201.arrow")]);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with(
        r#"{"format":"csf","value_type":"float32","index_type":"int16","shape":[3,4,5],"dim_names":["a","b","c"],"nnz":8,"axis_order":[2,0,1],"entries":[[0,0,2,-4.5],[0,1,0,30.333334],"#
    ), "{first}");
    let theirs = std::fs::read_to_string(golden("stream_mixed.jsonl")).unwrap();
    common::assert_same_dump(
        &cli_ok(&["dump", &golden("stream_mixed.arrow")]),
        &theirs,
        "stream_mixed",
    );
}

#[test]
fn inspect_summarises_every_tensor() {
    let out = cli_ok(&["inspect", &golden("stream_mixed.arrow")]);
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
    let reference = cli_ok(&["dump", &src]);
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
        cli_ok(&args);
        let dumped = cli_ok(&["dump", out.to_str().unwrap()]);
        assert_eq!(strip(&dumped), strip(&reference), "--to {to}");
        assert!(dumped.contains(&format!("\"format\":\"{to}\"")));
    }
    // CSR needs 2-D: a clear error (exit code 4, cannot convert) and no output file
    let out = dir.path().join("csr.arrow");
    let r = cli(&["convert", &src, out.to_str().unwrap(), "--to", "csr"]);
    assert_eq!(r.status.code(), Some(4));
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
    assert_eq!(r.status.code(), Some(4));
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
    for (args, code) in [
        (vec!["dump", bad.to_str().unwrap()], 3),
        (vec!["inspect", bad.to_str().unwrap()], 3),
        (vec!["dump", "/nonexistent/x.arrow"], 1),
    ] {
        let r = cli(&args);
        assert_eq!(r.status.code(), Some(code), "{args:?}");
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
    cli_ok(&[
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
    let line = cli_ok(&["dump", gcs.to_str().unwrap()]);
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
        serde_json::from_str(cli_ok(&["dump", &src]).lines().next().unwrap()).unwrap();
    assert_eq!(v["entries"], reference["entries"]);
    let inspect = cli_ok(&["inspect", gcs.to_str().unwrap()]);
    assert!(
        inspect.contains("dimensions [2, 0, 1], partitioning [1] -> reduced shape [5, 12]")
            && inspect.contains("csc matrix [5, 12]"),
        "{inspect}"
    );
    // default mapping: the one with the fewest bytes
    let best = dir.path().join("best.arrow");
    cli_ok(&["convert", &src, best.to_str().unwrap(), "--to", "gcs"]);
    assert!(cli_ok(&["dump", best.to_str().unwrap()]).contains("\"format\":\"gcs\""));
    // DM over CSR storage, and back to COO
    let dm = dir.path().join("dm.arrow");
    cli_ok(&[
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
    assert!(cli_ok(&["inspect", dm.to_str().unwrap()]).contains("storage:     csr [20, 3]"));
    let coo = dir.path().join("coo.arrow");
    cli_ok(&[
        "convert",
        dm.to_str().unwrap(),
        coo.to_str().unwrap(),
        "--to",
        "coo",
    ]);
    let back: serde_json::Value =
        serde_json::from_str(cli_ok(&["dump", coo.to_str().unwrap()]).trim()).unwrap();
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
    assert_eq!(r.status.code(), Some(4));
    assert_eq!(String::from_utf8_lossy(&r.stderr).lines().count(), 1);
}

/// `--to level` keeps the source's own levels, `--levels` chooses them (MLIR's map
/// syntax); the level tensor holds the source's entries through .arrow and
/// .parquet, and misuse is a usage error (exit 2) or a conversion error (exit 4).
#[test]
fn convert_to_level_formats() {
    let dir = tempfile::tempdir().unwrap();
    let src = golden("csf_f32_i16_order201.arrow");
    let reference: serde_json::Value =
        serde_json::from_str(cli_ok(&["dump", &src]).lines().next().unwrap()).unwrap();
    let sorted = |v: &serde_json::Value| {
        let mut e = v["entries"].as_array().unwrap().clone();
        e.sort_by_key(|x| x.to_string());
        e
    };
    for (levels, out) in [
        (None, "own.arrow"),
        (
            Some("(d0, d1, d2) -> (d2 : dense, d0 : compressed, d1 : compressed)"),
            "dense_csf.arrow",
        ),
        (
            Some("(d0, d1, d2) -> (d0 : compressed, d1 : compressed, d2 : compressed)"),
            "csf.parquet",
        ),
    ] {
        let out = dir.path().join(out);
        let mut args = vec!["convert", &src, out.to_str().unwrap(), "--to", "level"];
        if let Some(l) = levels {
            args.extend(["--levels", l, "--index-type", "int32"]);
        }
        cli_ok(&args);
        let v: serde_json::Value =
            serde_json::from_str(cli_ok(&["dump", out.to_str().unwrap()]).trim()).unwrap();
        assert_eq!(v["format"], "level", "{levels:?}");
        assert_eq!(v["shape"], reference["shape"]);
        // stored zeros of a dense level aside, the source's entries
        let mut ours = sorted(&v);
        ours.retain(|e| e.as_array().unwrap().last().unwrap().as_f64() != Some(0.0));
        assert_eq!(ours, sorted(&reference), "{levels:?}");
        let inspect = cli_ok(&["inspect", out.to_str().unwrap()]);
        match levels {
            Some(l) => assert!(inspect.contains(l), "{inspect}"),
            None => assert!(
                inspect.contains("(d2 : compressed, d0 : compressed, d1 : compressed)"),
                "{inspect}"
            ),
        }
    }
    for (args, code) in [
        (
            vec!["--to", "csf", "--levels", "(d0) -> (d0 : compressed)"],
            2,
        ),
        (
            vec!["--to", "level", "--levels", "(d0, d1) -> (d0 : loose)"],
            2,
        ),
        // a 2-D format for a 3-D tensor
        (
            vec![
                "--to",
                "level",
                "--levels",
                "(d0, d1) -> (d0 : dense, d1 : compressed)",
            ],
            4,
        ),
    ] {
        let out = dir.path().join("bad.arrow");
        let mut all = vec!["convert", src.as_str(), out.to_str().unwrap()];
        all.extend(args.iter().copied());
        let r = cli(&all);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.starts_with("arrow-sparse: error: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out.exists());
    }
}

// ---- file kinds: .arrow, .parquet, .mtx, .tns, .npz -------------------------------

use arrow_sparse::ipc::TensorMessage;
use arrow_sparse::{AnyTensor, CooTensor, io, ipc};
use serde_json::Value as J;

/// Every file kind the CLI knows, by extension.
fn kinds() -> Vec<&'static str> {
    let mut k = vec!["arrow", "mtx", "tns", "npz"];
    if cfg!(feature = "parquet") {
        k.push("parquet");
    }
    k
}

fn cli_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arrow-sparse"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Write `msg` with the library (not the CLI) as the kind of `path`.
fn write_with_library(path: &Path, msg: &TensorMessage) {
    match path.extension().unwrap().to_str().unwrap() {
        "arrow" => {
            ipc::write_tensor_stream(path, [msg], &ipc::StreamWriteOptions::default()).unwrap()
        }
        #[cfg(feature = "parquet")]
        "parquet" => {
            arrow_sparse::archive::write_archive(
                path,
                msg,
                &arrow_sparse::archive::ArchiveWriteOptions::default(),
            )
            .unwrap();
        }
        _ => io::write_path(path, msg).unwrap(),
    }
}

/// Read the one tensor of `path` with the library (not the CLI).
fn read_with_library(path: &Path) -> AnyTensor {
    match path.extension().unwrap().to_str().unwrap() {
        "arrow" => {
            let mut all =
                ipc::read_tensor_stream(path, &ipc::StreamReadOptions::default()).unwrap();
            assert_eq!(all.len(), 1, "{}", path.display());
            all.remove(0).tensor
        }
        #[cfg(feature = "parquet")]
        "parquet" => {
            arrow_sparse::archive::read_archive(path, &Default::default())
                .unwrap()
                .tensor
        }
        _ => io::read_path(path).unwrap().tensor,
    }
}

/// Shape and sorted `(coordinates, value)` entries of a float64 tensor.
fn entries(t: &AnyTensor) -> (Vec<usize>, Vec<(Vec<usize>, f64)>) {
    let coo = t.to_coo::<f64, i64>().unwrap();
    let mut e: Vec<(Vec<usize>, f64)> = (0..coo.nnz())
        .map(|k| {
            (
                (0..coo.ndim()).map(|d| coo.coord(k, d)).collect(),
                coo.values()[k],
            )
        })
        .collect();
    e.sort_by(|a, b| a.0.cmp(&b.0));
    (t.shape().to_vec(), e)
}

fn matrix() -> TensorMessage {
    AnyTensor::from(
        CooTensor::<f64, i64>::from_entries(
            vec![5, 7],
            &[
                (vec![0, 0], 1.5),
                (vec![0, 6], -2.25),
                (vec![1, 3], 1e-300),
                (vec![2, 2], 3.0),
                (vec![3, 0], 123456789.125),
                (vec![3, 5], -0.5),
                (vec![4, 6], 7.0),
            ],
        )
        .unwrap(),
    )
    .into()
}

fn tensor_3d() -> TensorMessage {
    AnyTensor::from(
        CooTensor::<f64, i64>::from_entries(
            vec![3, 4, 5],
            &[
                (vec![0, 0, 4], 1.0),
                (vec![0, 3, 1], -4.5),
                (vec![1, 1, 1], 0.1),
                (vec![2, 0, 0], 2.0e10),
                (vec![2, 3, 4], -7.0),
            ],
        )
        .unwrap(),
    )
    .into()
}

/// For every pair of kinds (a, b): a file of kind a written by the library,
/// `convert` to b, `convert` back to a; both files hold the original entries.
fn round_trip_every_pair(original: &TensorMessage, kinds: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let want = entries(&original.tensor);
    for a in kinds {
        let src = dir.path().join(format!("src.{a}"));
        write_with_library(&src, original);
        for b in kinds {
            let mid = dir.path().join(format!("{a}_to.{b}"));
            let back = dir.path().join(format!("{a}_to_{b}_back.{a}"));
            cli_ok(&["convert", s(&src), s(&mid)]);
            cli_ok(&["convert", s(&mid), s(&back)]);
            assert_eq!(entries(&read_with_library(&mid)), want, "{a} -> {b}");
            assert_eq!(
                entries(&read_with_library(&back)),
                want,
                "{a} -> {b} -> {a}"
            );
        }
    }
}

#[test]
fn convert_round_trips_every_pair_of_file_kinds() {
    round_trip_every_pair(&matrix(), &kinds());
}

#[test]
fn convert_round_trips_3d_tensors_between_the_kinds_that_hold_them() {
    let kinds: Vec<&str> = kinds().into_iter().filter(|k| *k != "mtx").collect();
    round_trip_every_pair(&tensor_3d(), &kinds);
    // Matrix Market holds 2-D only: exit code 4, one line, no output file
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("t.tns");
    write_with_library(&src, &tensor_3d());
    let out = dir.path().join("t.mtx");
    let r = cli(&["convert", s(&src), s(&out)]);
    assert_eq!(r.status.code(), Some(4));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("2-D") && err.lines().count() == 1, "{err}");
    assert!(!out.exists());
}

#[test]
fn convert_with_to_into_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("m.arrow");
    write_with_library(&src, &matrix());
    let want = entries(&matrix().tensor);
    for kind in kinds() {
        for to in ["coo", "csr", "csc", "csf", "dense"] {
            let out = dir.path().join(format!("{to}.{kind}"));
            cli_ok(&[
                "convert",
                s(&src),
                s(&out),
                "--to",
                to,
                "--index-type",
                "int32",
            ]);
            let back = read_with_library(&out);
            assert_eq!(entries(&back), want, "--to {to} into .{kind}");
            // formats that the file keeps
            let kept = match kind {
                "arrow" | "parquet" => Some(to),
                "npz" if to == "csr" || to == "csc" => Some(to),
                _ => None,
            };
            if let Some(f) = kept {
                assert_eq!(back.format().name(), f, ".{kind}");
            }
        }
    }
    // npz layouts by option: pydata/sparse COO for a 2-D matrix
    let out = dir.path().join("pydata.npz");
    cli_ok(&["convert", s(&src), s(&out), "--npz-flavor", "pydata"]);
    let msg = io::read_path(&out).unwrap();
    assert!(
        msg.custom_metadata
            .contains(&(io::meta::NPZ_FLAVOR.into(), "pydata".into()))
    );
    // a symmetric Matrix Market file by option, read back expanded
    let sym = dir.path().join("sym.mtx");
    let m = AnyTensor::from(
        CooTensor::<f64, i64>::from_entries(
            vec![3, 3],
            &[(vec![0, 1], 2.0), (vec![1, 0], 2.0), (vec![2, 2], 1.0)],
        )
        .unwrap(),
    );
    let sym_src = dir.path().join("sym_src.arrow");
    write_with_library(&sym_src, &m.clone().into());
    cli_ok(&[
        "convert",
        s(&sym_src),
        s(&sym),
        "--mtx-symmetry",
        "symmetric",
    ]);
    let text = std::fs::read_to_string(&sym).unwrap();
    assert!(
        text.starts_with("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n"),
        "{text}"
    );
    assert_eq!(entries(&read_with_library(&sym)), entries(&m));
}

#[test]
fn multi_tensor_streams_into_single_tensor_files() {
    let dir = tempfile::tempdir().unwrap();
    let stream = golden("stream_mixed.arrow");
    let n = ipc::read_tensor_stream(Path::new(&stream), &ipc::StreamReadOptions::default())
        .unwrap()
        .len();
    assert!(n > 1);
    for kind in kinds().into_iter().filter(|k| *k != "arrow") {
        let out = dir.path().join(format!("one.{kind}"));
        // no --tensor: exit 4, and the message says how to pick one
        let r = cli(&["convert", &stream, s(&out)]);
        assert_eq!(r.status.code(), Some(4), ".{kind}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            err.contains("--tensor N") && err.contains(&format!("holds {n}")),
            "{err}"
        );
        assert!(!out.exists());
        // out of range: exit 4
        let r = cli(&["convert", &stream, s(&out), "--tensor", &n.to_string()]);
        assert_eq!(r.status.code(), Some(4), ".{kind}");
    }
    // --tensor picks one, also for a stream output; an empty tensor keeps its shape
    // (a .tns file gets a header)
    let all =
        ipc::read_tensor_stream(Path::new(&stream), &ipc::StreamReadOptions::default()).unwrap();
    for (i, m) in all.iter().enumerate() {
        if m.tensor.shape().len() != 2 || m.tensor.value_type() != arrow_sparse::ValueType::Float64
        {
            continue;
        }
        for kind in kinds() {
            let out = dir.path().join(format!("t{i}.{kind}"));
            cli_ok(&["convert", &stream, s(&out), "--tensor", &i.to_string()]);
            assert_eq!(
                entries(&read_with_library(&out)),
                entries(&m.tensor),
                "tensor {i} .{kind}"
            );
        }
    }
}

#[test]
fn inspect_and_dump_work_on_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let mut reference = None;
    for kind in kinds() {
        let path = dir.path().join(format!("m.{kind}"));
        write_with_library(&path, &matrix());
        // dump: the same entries whatever the kind
        let line = cli_ok(&["dump", s(&path)]);
        assert_eq!(line.lines().count(), 1);
        let v: J = serde_json::from_str(line.trim()).unwrap();
        assert_eq!(v["shape"], serde_json::json!([5, 7]));
        let reference = reference.get_or_insert_with(|| v["entries"].clone());
        assert_eq!(&v["entries"], reference, ".{kind}");
        // inspect: a header line naming the file, then the tensor
        let text = cli_ok(&["inspect", s(&path)]);
        assert!(text.starts_with(s(&path)), "{text}");
        assert!(
            text.contains("tensor 0: coo") && text.contains("[5, 7]"),
            "{text}"
        );
        // inspect --json: one JSON object
        let out = cli_ok(&["inspect", s(&path), "--json"]);
        assert_eq!(out.lines().count(), 1, "{out}");
        let v: J = serde_json::from_str(&out).unwrap();
        assert_eq!(v["kind"], kind);
        assert_eq!(v["file"], s(&path));
        assert_eq!(v["bytes"], std::fs::metadata(&path).unwrap().len());
        let t = &v["tensors"][0];
        assert_eq!(t["format"], "coo", ".{kind}");
        assert_eq!(t["value_type"], "float64");
        assert_eq!(t["shape"], serde_json::json!([5, 7]));
        assert_eq!(t["nnz"], 7);
        assert_eq!(v["tensors"].as_array().unwrap().len(), 1);
        if kind == "parquet" {
            assert_eq!(v["parquet"]["rows"], 7);
            let groups = v["parquet"]["row_groups"].as_array().unwrap();
            assert_eq!(groups[0]["ranges"]["dim_0"], serde_json::json!([0, 4]));
        }
        if kind == "mtx" {
            assert_eq!(t["metadata"][io::meta::MTX_SYMMETRY], "general");
        }
    }
    // a stream of several tensors
    let out = cli_ok(&["--json", "inspect", &golden("stream_mixed.arrow")]);
    let v: J = serde_json::from_str(&out).unwrap();
    let tensors = v["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 6);
    assert!(
        tensors
            .iter()
            .all(|t| t["message_bytes"].as_u64().unwrap() > 0)
    );
    assert_eq!(
        tensors[0]["dim_names"],
        serde_json::json!(["foo", "bar", "baz"])
    );
}

#[test]
fn json_and_quiet_convert_output() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("m.mtx");
    write_with_library(&src, &matrix());
    let out = dir.path().join("m.arrow");
    // default: one readable summary line on stdout, nothing on stderr
    let r = cli(&["convert", s(&src), s(&out)]);
    assert!(r.status.success() && r.stderr.is_empty());
    let text = String::from_utf8(r.stdout).unwrap();
    assert_eq!(text.lines().count(), 1);
    assert!(
        text.contains("(mtx) -> ") && text.contains("(arrow)"),
        "{text}"
    );
    // --json: one JSON line
    let r = cli(&["--json", "convert", s(&src), s(&out), "--to", "csr"]);
    assert!(r.status.success() && r.stderr.is_empty());
    let text = String::from_utf8(r.stdout).unwrap();
    assert_eq!(text.lines().count(), 1);
    let v: J = serde_json::from_str(&text).unwrap();
    assert_eq!(v["input_kind"], "mtx");
    assert_eq!(v["output_kind"], "arrow");
    assert_eq!(v["output"], s(&out));
    assert_eq!(v["bytes"], std::fs::metadata(&out).unwrap().len());
    assert_eq!(v["tensors"][0]["format"], "csr");
    assert_eq!(v["tensors"][0]["nnz"], 7);
    // --quiet (before or after the subcommand): nothing at all, and the file is there
    for args in [
        vec!["--quiet", "convert", s(&src), s(&out)],
        vec!["convert", s(&src), s(&out), "-q"],
        vec!["convert", s(&src), s(&out), "-q", "--json"],
    ] {
        std::fs::remove_file(&out).unwrap();
        let r = cli(&args);
        assert!(r.status.success(), "{args:?}");
        assert!(r.stdout.is_empty() && r.stderr.is_empty(), "{args:?}");
        assert!(out.exists());
    }
    // --json errors: a JSON line on stderr with the exit code
    let r = cli(&[
        "--json",
        "inspect",
        &golden("../../tests/data/bad/ragged.tns"),
    ]);
    assert_eq!(r.status.code(), Some(3));
    let v: J = serde_json::from_str(String::from_utf8_lossy(&r.stderr).trim()).unwrap();
    assert_eq!(v["exit_code"], 3);
    assert!(v["error"].as_str().unwrap().contains("ragged.tns:3"));
}

#[test]
fn no_progress_output_when_stderr_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    // big enough for several updates of a bytes bar; the delay is forced to zero
    // so that only the terminal check keeps the bar away
    let coo = CooTensor::<f64, i64>::from_entries(
        vec![2000, 2000],
        &(0..20_000usize)
            .map(|k| (vec![k / 10, (k * 7919) % 2000], k as f64 + 0.5))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let src = dir.path().join("big.tns");
    write_with_library(&src, &AnyTensor::from(coo).into());
    let zero = [("ARROW_SPARSE_PROGRESS_DELAY_MS", "0")];
    for args in [
        vec!["convert", s(&src), "OUT.arrow", "--to", "csr"],
        vec!["convert", "OUT.arrow", "OUT.npz"],
        vec!["inspect", s(&src)],
        vec!["dump", "OUT.arrow"],
    ] {
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("OUT", s(&dir.path().join("out"))))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = cli_env(&args, &zero);
        assert!(r.status.success(), "{args:?}");
        assert!(
            r.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let out = String::from_utf8(r.stdout).unwrap();
        assert!(!out.contains('\r') && !out.contains('\u{1b}'), "{args:?}");
    }
}

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    // 3: every file of the bad-input corpus, for inspect, dump and convert
    let bad = common::repo().join("tests/data/bad");
    let mut n = 0;
    for entry in std::fs::read_dir(&bad).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !["mtx", "tns", "npz"].contains(&ext) {
            continue;
        }
        n += 1;
        let out = dir.path().join("out.arrow");
        for args in [
            vec!["inspect", s(&path)],
            vec!["dump", s(&path)],
            vec!["convert", s(&path), s(&out)],
        ] {
            let r = cli(&args);
            assert_eq!(r.status.code(), Some(3), "{args:?}");
            let err = String::from_utf8_lossy(&r.stderr);
            assert!(
                err.starts_with("arrow-sparse: error:") && err.lines().count() == 1,
                "{err}"
            );
        }
        assert!(!out.exists());
    }
    assert!(n >= 20, "{n} bad files");
    // 3: a corrupt Parquet archive and a corrupt stream
    let m = dir.path().join("m.arrow");
    write_with_library(&m, &matrix());
    let bytes = std::fs::read(&m).unwrap();
    let cut = dir.path().join("cut.arrow");
    std::fs::write(&cut, &bytes[..bytes.len() - 30]).unwrap();
    assert_eq!(cli(&["inspect", s(&cut)]).status.code(), Some(3));
    if cfg!(feature = "parquet") {
        let p = dir.path().join("m.parquet");
        write_with_library(&p, &matrix());
        let mut bytes = std::fs::read(&p).unwrap();
        let len = bytes.len();
        bytes[len - 12..len - 8].copy_from_slice(&[0xff; 4]); // footer length
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(cli(&["inspect", s(&p)]).status.code(), Some(3));
        assert_eq!(cli(&["convert", s(&p), s(&cut)]).status.code(), Some(3));
    }
    // 1: I/O (missing input, output in a missing directory)
    assert_eq!(
        cli(&["inspect", "/nonexistent/m.mtx"]).status.code(),
        Some(1)
    );
    let r = cli(&["convert", s(&m), "/nonexistent/dir/x.arrow"]);
    assert_eq!(r.status.code(), Some(1));
    // 2: usage
    for args in [
        vec!["convert", s(&m)],
        vec!["frobnicate"],
        vec!["inspect", s(&m), "--duplicates", "maybe"],
        vec!["convert", s(&m), "x.mtx", "--compression", "zstd"],
        vec!["convert", s(&m), "x.arrow", "--npz-flavor", "scipy"],
        vec!["convert", s(&m), "x.arrow", "--index-type", "int32"],
    ] {
        let r = cli(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        assert!(!r.stderr.is_empty());
    }
    // 2 also for a file of another kind than a Parquet archive at a URL, refused
    // before the input is opened (a missing input would be 1)
    let r = cli(&["convert", "/nonexistent/m.mtx", "s3://bucket/x.arrow"]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(
        err.contains("s3://bucket/x.arrow: a URL takes a Parquet archive"),
        "{err}"
    );
    // GCS tensors are archived in Parquet (this used to be refused with code 4)
    let p = dir.path().join("x.parquet");
    if cfg!(feature = "parquet") {
        let r = cli(&["convert", s(&m), s(&p), "--to", "gcs"]);
        assert_eq!(
            r.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert!(p.exists());
    }
    // 4: cannot convert (the input was fine)
    let r = cli(&["convert", s(&m), s(&cut), "--to", "csr"]);
    assert_eq!(r.status.code(), Some(0));
    let r = cli(&["convert", s(&cut), s(&p), "--to", "gcs", "--tensor", "3"]);
    assert_eq!(r.status.code(), Some(4));
    // 0
    assert_eq!(cli(&["inspect", s(&m)]).status.code(), Some(0));
}

#[test]
fn help_has_examples_and_exit_codes() {
    let top = cli_ok(&["--help"]);
    for needle in [
        "Examples:",
        "Exit codes:",
        "--json",
        "--quiet",
        ".parquet",
        ".npz",
    ] {
        assert!(top.contains(needle), "missing {needle:?} in\n{top}");
    }
    for sub in ["inspect", "dump", "convert"] {
        let help = cli_ok(&[sub, "--help"]);
        assert!(
            help.contains("Examples:") && help.contains(&format!("arrow-sparse {sub} ")),
            "{sub}:\n{help}"
        );
        assert!(
            help.contains("Exit codes:") && help.contains("3  invalid input"),
            "{sub}"
        );
    }
    // the README documents the same exit codes
    let readme = std::fs::read_to_string(common::repo().join("README.md")).unwrap();
    for line in ["0 ", "1 ", "2 ", "3 ", "4 "] {
        assert!(
            readme.contains(&format!("`{}`", line.trim())),
            "README exit code {line}"
        );
    }
}

/// The first line of stderr, the exit code, and whether stderr has more lines.
fn error_of(dir: &Path, args: &[&str]) -> (String, i32) {
    let r = Command::new(env!("CARGO_BIN_EXE_arrow-sparse"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        r.stdout.is_empty(),
        "{args:?}: {}",
        String::from_utf8_lossy(&r.stdout)
    );
    let err = String::from_utf8(r.stderr).unwrap();
    (
        err.lines().next().unwrap_or("").to_string(),
        r.status.code().unwrap(),
    )
}

#[test]
fn errors_name_the_file_and_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(common::repo().join("data/sample.mtx"), d.join("m.mtx")).unwrap();
    std::fs::write(d.join("notes.txt"), "hello world\n").unwrap();
    std::fs::create_dir(d.join("adir")).unwrap();
    let cases: &[(&[&str], &str, i32)] = &[
        // an input of unknown extension is read as an IPC stream, and says so
        (
            &["inspect", "notes.txt"],
            "arrow-sparse: error: notes.txt (read as an Arrow IPC stream: its extension .txt is not one of .arrow, .parquet, .mtx, .tns, .npz, .h5 or .hdf5; see --input-kind): malformed IPC data at byte 0: metadata length 1819043176 exceeds the limit of 67108864 bytes",
            3,
        ),
        (
            &["inspect", "notes.txt", "--input-kind", "mtx"],
            "arrow-sparse: error: cannot parse notes.txt:1: expected the banner `%%MatrixMarket matrix coordinate|array real|integer|pattern general|symmetric|skew-symmetric`, found \"hello world\"",
            3,
        ),
        (
            &["inspect", "adir"],
            "arrow-sparse: error: I/O error: adir is a directory, not a file",
            1,
        ),
        (
            &["dump", "missing.arrow"],
            "arrow-sparse: error: missing.arrow: I/O error: No such file or directory (os error 2)",
            1,
        ),
        // an output of unknown extension is refused, not written as a stream
        (
            &["convert", "m.mtx", "out.csv"],
            "arrow-sparse: error: out.csv: cannot tell which kind of file to write: its extension .csv is not one of .arrow, .parquet, .mtx, .tns, .npz, .h5 or .hdf5; rename it or give --output-kind",
            2,
        ),
        (
            &["convert", "m.mtx", "out"],
            "arrow-sparse: error: out: cannot tell which kind of file to write: it has no extension (.arrow, .parquet, .mtx, .tns, .npz, .h5 or .hdf5); rename it or give --output-kind",
            2,
        ),
        // the destination is named, not the temporary file
        (
            &["convert", "m.mtx", "nodir/x.arrow"],
            "arrow-sparse: error: I/O error: cannot write nodir/x.arrow: folder nodir does not exist",
            1,
        ),
        (
            &["convert", "m.mtx", "m.mtx/x.arrow"],
            "arrow-sparse: error: I/O error: cannot write m.mtx/x.arrow: Not a directory (os error 20)",
            1,
        ),
        (
            &["convert", "m.mtx", "adir", "--output-kind", "arrow"],
            "arrow-sparse: error: I/O error: cannot write adir: Is a directory (os error 21)",
            1,
        ),
        // --axis-order: usage errors in words, not Rust ranges
        (
            &[
                "convert",
                "m.mtx",
                "x.arrow",
                "--to",
                "csf",
                "--axis-order",
                "0,1,2",
            ],
            "arrow-sparse: error: --axis-order 0,1,2 lists 3 axes but the tensor has 2 dimensions (give an order of 0,1)",
            2,
        ),
        (
            &[
                "convert",
                "m.mtx",
                "x.arrow",
                "--to",
                "csf",
                "--axis-order",
                "0,0",
            ],
            "arrow-sparse: error: --axis-order 0,0: not an order of the axes (each of 0,1 once)",
            2,
        ),
        (
            &[
                "convert",
                "m.mtx",
                "x.arrow",
                "--to",
                "coo",
                "--axis-order",
                "1,0",
            ],
            "arrow-sparse: error: --axis-order applies to --to csf only",
            2,
        ),
        (
            &["convert", "m.mtx", "x.parquet", "--row-group-size", "0"],
            "arrow-sparse: error: invalid value '0' for '--row-group-size <N>': must be at least 1",
            2,
        ),
        (
            &["convert", "m.mtx", "x.arrow", "--to", "blocked"],
            "arrow-sparse: error: invalid value 'blocked' for '--to <TO>': unknown format \"blocked\" (expected coo, csr, csc, csf, dense, gcs, dm or level)",
            2,
        ),
        (
            &["convert", "m.mtx"],
            "arrow-sparse: error: the following required arguments were not provided: <OUTPUT>",
            2,
        ),
        (
            &[],
            "arrow-sparse: error: a command is needed: inspect, dump or convert (see arrow-sparse --help)",
            2,
        ),
    ];
    for (args, line, code) in cases {
        assert_eq!(error_of(d, args), (line.to_string(), *code), "{args:?}");
        // the same error as one JSON line
        let mut json = vec!["--json"];
        json.extend_from_slice(args);
        let (got, got_code) = error_of(d, &json);
        let v: serde_json::Value =
            serde_json::from_str(&got).unwrap_or_else(|e| panic!("{json:?}: {e}: {got}"));
        let message = line.strip_prefix("arrow-sparse: error: ").unwrap();
        assert_eq!(
            v,
            serde_json::json!({"error": message, "exit_code": code}),
            "{json:?}"
        );
        assert_eq!(got_code, *code);
    }
    // nothing was written at the refused outputs
    let mut left: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["adir", "m.mtx", "notes.txt"]);
    assert_eq!(std::fs::read_dir(d.join("adir")).unwrap().count(), 0);
}

#[test]
fn any_case_and_explicit_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(common::repo().join("data/sample.mtx"), d.join("m.mtx")).unwrap();
    let run = |args: &[&str]| {
        let r = Command::new(env!("CARGO_BIN_EXE_arrow-sparse"))
            .args(args)
            .current_dir(d)
            .output()
            .unwrap();
        assert!(
            r.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        String::from_utf8(r.stdout).unwrap()
    };
    let out = run(&[
        "convert",
        "m.mtx",
        "x.arrow",
        "--to",
        "CSR",
        "--index-type",
        "Int32",
    ]);
    assert_eq!(
        out,
        "m.mtx (mtx) -> x.arrow (arrow): 1 tensor(s) [csr float64 [4, 5] nnz 7], 752 bytes\n"
    );
    let out = run(&[
        "convert",
        "x.arrow",
        "table.csv",
        "--output-kind",
        "PARQUET",
        "--compression",
        "ZSTD:3",
    ]);
    assert!(
        out.starts_with("x.arrow (arrow) -> table.csv (parquet): 1 tensor(s) [csr"),
        "{out}"
    );
    let dumped = run(&["dump", "table.csv", "--input-kind", "parquet"]);
    assert!(
        dumped.starts_with(
            r#"{"format":"csr","value_type":"float64","index_type":"int32","shape":[4,5]"#
        ),
        "{dumped}"
    );
    // .arrows and .ipc are IPC streams too
    run(&["convert", "m.mtx", "x.ipc"]);
    run(&[
        "convert",
        "x.ipc",
        "x.arrows",
        "--to",
        "Csf",
        "--axis-order",
        "1,0",
    ]);
    assert!(run(&["dump", "x.arrows"]).contains(r#""axis_order":[1,0]"#));
}

#[test]
fn convert_help_says_what_parquet_holds() {
    let help = cli_ok(&["convert", "--help"]);
    assert!(!help.contains("convert GCS / DM with --to"), "{help}");
    assert!(
        help.contains("Parquet archives hold tensors of every format"),
        "{help}"
    );
    assert!(
        help.contains("--output-kind") && help.contains("--input-kind"),
        "{help}"
    );
}

/// A convert killed with kill -9 while it writes leaves only its recognisable
/// temporary file, never a partial OUT; the next convert to OUT removes it.
#[cfg(unix)]
#[test]
fn a_killed_convert_leaves_a_temporary_that_the_next_convert_removes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // a tensor whose .tns text takes a while to write
    let n = 400_000usize;
    let coo = CooTensor::<f64, i64>::from_entries(
        vec![n, 1000],
        &(0..n)
            .map(|k| (vec![k, (k * 7919) % 1000], k as f64 + 0.25))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let src = d.join("big.arrow");
    write_with_library(&src, &AnyTensor::from(coo).into());
    let out = d.join("out.tns");
    let tmp = d.join(".out.tns.arrow-sparse-tmp.0");
    let mut killed = false;
    for _attempt in 0..5 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arrow-sparse"))
            .args(["convert", s(&src), s(&out)])
            .spawn()
            .unwrap();
        // wait until the temporary file is being written, then kill -9
        let seen = loop {
            if tmp.exists() {
                break true;
            }
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        if seen {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            killed = true;
            break;
        }
        std::fs::remove_file(&out).unwrap(); // it finished first: try again
    }
    assert!(killed, "convert always finished before it could be killed");
    assert!(!out.exists());
    assert!(tmp.exists());
    // the next convert takes the stale temporary file over
    let r = cli(&["convert", s(&src), s(&out)]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut left: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["big.arrow", "out.tns"]);
}

/// Outputs are created with the umask's mode, and a replaced file keeps its own.
#[cfg(unix)]
#[test]
fn outputs_get_the_umask_mode_and_replaced_files_keep_theirs() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let sample = common::repo().join("data/sample.mtx");
    for (name, umask, new_mode) in [
        ("a.arrow", "022", 0o644),
        ("b.parquet", "027", 0o640),
        ("c.npz", "002", 0o664),
    ] {
        let out = d.join(name);
        let script = format!("umask {umask}; exec \"$0\" convert \"$1\" \"$2\"");
        let run = || {
            let r = Command::new("sh")
                .args([
                    "-c",
                    &script,
                    env!("CARGO_BIN_EXE_arrow-sparse"),
                    s(&sample),
                    s(&out),
                ])
                .output()
                .unwrap();
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        };
        run();
        assert_eq!(mode(&out), new_mode, "{name}");
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o604)).unwrap();
        run();
        assert_eq!(mode(&out), 0o604, "{name}");
    }
}

#[test]
fn binsparse_npz_convert_inspect_and_dump() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.arrow");
    let msg = matrix();
    write_with_library(&m, &msg);
    for f in [
        "CSR", "csc", "COO", "COOR", "COOC", "DCSR", "DCSC", "DMAT", "DMATR", "DMATC",
    ] {
        let out = dir.path().join(format!("m_{f}.npz"));
        cli_ok(&["convert", s(&m), s(&out), "--binsparse-format", f]);
        assert_eq!(
            entries(&read_with_library(&out)),
            entries(&msg.tensor),
            "{f}"
        );
        // inspect prints the descriptor (JSON: as an object)
        let r = cli_ok(&["--json", "inspect", s(&out)]);
        let j: J = serde_json::from_str(&r).unwrap();
        assert_eq!(
            j["tensors"][0]["binsparse"]["binsparse"]["format"],
            f.to_ascii_uppercase()
        );
        let text = cli_ok(&["inspect", s(&out)]);
        assert!(text.contains("arrow_sparse.binsparse.descriptor"), "{text}");
        assert!(cli_ok(&["dump", s(&out)]).starts_with('{'));
        // through .arrow and back: the same Binsparse format
        let a = dir.path().join("back.arrow");
        let again = dir.path().join("again.npz");
        cli_ok(&["convert", s(&out), s(&a)]);
        cli_ok(&["convert", s(&a), s(&again)]);
        let r = cli_ok(&["--json", "inspect", s(&again)]);
        let j: J = serde_json::from_str(&r).unwrap();
        assert_eq!(
            j["tensors"][0]["binsparse"]["binsparse"]["format"],
            f.to_ascii_uppercase()
        );
    }
    // --npz-flavor binsparse alone: the tensor's own format (COO here)
    let out = dir.path().join("own.npz");
    cli_ok(&["convert", s(&m), s(&out), "--npz-flavor", "binsparse"]);
    let j: J = serde_json::from_str(&cli_ok(&["--json", "inspect", s(&out)])).unwrap();
    assert_eq!(j["tensors"][0]["binsparse"]["binsparse"]["format"], "COO");
    // usage errors
    for args in [
        vec!["convert", s(&m), "x.mtx", "--binsparse-format", "CSR"],
        vec![
            "convert",
            s(&m),
            "x.npz",
            "--binsparse-format",
            "CSR",
            "--npz-flavor",
            "scipy",
        ],
        vec!["convert", s(&m), "x.npz", "--binsparse-format", "BSR"],
    ] {
        assert_eq!(cli(&args).status.code(), Some(2), "{args:?}");
    }
    // the bad-input corpus: exit code 3, one line
    let bad = common::repo().join("tests/data/bad/binsparse");
    let mut n = 0;
    for entry in std::fs::read_dir(&bad).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "npz") {
            continue;
        }
        n += 1;
        let r = cli(&["inspect", s(&path)]);
        assert_eq!(r.status.code(), Some(3), "{}", path.display());
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            err.starts_with("arrow-sparse: error:") && err.lines().count() == 1,
            "{err}"
        );
    }
    assert!(n >= 20);
}

/// Binsparse HDF5 (feature `hdf5`): convert to and from `.h5` / `.hdf5` in every
/// predefined 2-D format, inspect prints the descriptor, dump works, an `.h5`
/// converted to `.npz` stays Binsparse, and the bad-input corpus exits with 3 and
/// one line.
#[cfg(feature = "hdf5")]
#[test]
fn binsparse_hdf5_convert_inspect_and_dump() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.arrow");
    let msg = matrix();
    write_with_library(&m, &msg);
    for f in [
        "CSR", "CSC", "COO", "COOR", "COOC", "DCSR", "DCSC", "DMAT", "DMATR", "DMATC",
    ] {
        let out = dir.path().join(format!("m_{f}.h5"));
        cli_ok(&["convert", s(&m), s(&out), "--binsparse-format", f]);
        let j: J = serde_json::from_str(&cli_ok(&["--json", "inspect", s(&out)])).unwrap();
        assert_eq!(j["kind"], "hdf5");
        assert_eq!(j["tensors"][0]["binsparse"]["binsparse"]["format"], f);
        assert!(cli_ok(&["dump", s(&out)]).starts_with('{'));
        // .h5 -> .hdf5 -> .npz -> .arrow: the entries, and the format kept
        let h = dir.path().join("again.hdf5");
        let z = dir.path().join("again.npz");
        let a = dir.path().join("again.arrow");
        cli_ok(&["convert", s(&out), s(&h)]);
        cli_ok(&["convert", s(&h), s(&z)]);
        cli_ok(&["convert", s(&z), s(&a)]);
        assert_eq!(entries(&read_with_library(&a)), entries(&msg.tensor), "{f}");
        let j: J = serde_json::from_str(&cli_ok(&["--json", "inspect", s(&z)])).unwrap();
        assert_eq!(j["tensors"][0]["binsparse"]["binsparse"]["format"], f);
    }
    let bad = common::repo().join("tests/data/bad/binsparse-h5");
    let mut n = 0;
    for entry in std::fs::read_dir(&bad).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "h5") {
            continue;
        }
        n += 1;
        let r = cli(&["inspect", s(&path)]);
        assert_eq!(r.status.code(), Some(3), "{}", path.display());
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            err.starts_with("arrow-sparse: error:") && err.lines().count() == 1,
            "{err}"
        );
    }
    assert!(n >= 10);
}

/// Without the feature `hdf5`, `.h5` inputs and outputs are one-line errors
/// naming the feature: exit code 3 reading (unsupported content), 4 writing.
#[cfg(not(feature = "hdf5"))]
#[test]
fn without_the_hdf5_feature_h5_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.arrow");
    write_with_library(&m, &matrix());
    let h = dir.path().join("m.h5");
    let r = cli(&["convert", s(&m), s(&h)]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(4), "{err}");
    assert!(
        err.contains("hdf5 feature") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!h.exists());
    std::fs::write(&h, b"\x89HDF\r\n\x1a\n").unwrap();
    let r = cli(&["inspect", s(&h)]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(3), "{err}");
    assert!(
        err.contains("hdf5 feature") && err.lines().count() == 1,
        "{err}"
    );
}
