//! Inputs found by fuzzing (`tests/data/bad/fuzz/`, from the campaigns of issue
//! #18) and the reader defects they showed: each file goes through every library
//! reader that accepts its kind and through the CLI (`dump` and `inspect`), and
//! must give a typed error (or a valid tensor) with no panic, and at the CLI exit
//! code 3 with one line on stderr naming the file (`inspect` of an archive reads
//! only its footer, intact in these files, and may succeed).
//!
//! Before the fixes these inputs panicked in arrow-ipc's `FileReader` (negative
//! block lengths unwrapped, `Buffer::slice` out of range), hid a parquet panic
//! behind the CLI's panic hook (exit 101, no message), requested 57 PB
//! allocations, failed with `Invalid argument (os error 22)` naming nothing, or
//! made the Parquet reader build a 2 GiB indptr from 940 bytes.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_sparse::column::files as column_io;
use arrow_sparse::ipc::{self, MmapReader};
use arrow_sparse::{AnyTensor, Error};

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad/fuzz");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e != "md"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 38,
        "{} files in {}",
        files.len(),
        dir.display()
    );
    files
}

fn ext(p: &Path) -> &str {
    p.extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// Run `f`, failing the test on a panic; return its result as text.
fn no_panic<T: std::fmt::Debug>(
    what: &str,
    f: impl FnOnce() -> arrow_sparse::Result<T>,
    problems: &mut Vec<String>,
) -> Option<arrow_sparse::Result<T>> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            problems.push(format!("{what}: panicked: {msg}"));
            None
        }
    }
}

/// Every library reader of the file's kind: no panic, and an error for the
/// `.arrow` and `.parquet` files (all of them are damaged).
#[test]
fn every_fuzz_input_is_a_typed_error_in_the_library() {
    let mut problems = Vec::new();
    for path in corpus() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        match ext(&path) {
            "arrow" => {
                let r = no_panic(&name, || column_io::read_batches(&path), &mut problems);
                if let Some(Ok(_)) = r {
                    problems.push(format!("{name}: read_batches succeeded"));
                }
                let r = no_panic(&name, || column_io::read_tensors(&path), &mut problems);
                if let Some(Ok(_)) = r {
                    problems.push(format!("{name}: read_tensors succeeded"));
                }
                // the tensor-message readers: an IPC file of record batches is
                // not a stream of tensor messages
                no_panic(
                    &name,
                    || {
                        let r = MmapReader::open_with(&path, &ipc::StreamReadOptions::default())?;
                        (0..r.len())
                            .map(|i| r.get(i))
                            .collect::<Result<Vec<_>, _>>()
                    },
                    &mut problems,
                );
            }
            "parquet" => {
                for (what, r) in [
                    (
                        "read_batches",
                        no_panic(
                            &name,
                            || column_io::read_batches(&path).map(|_| ()),
                            &mut problems,
                        ),
                    ),
                    (
                        "read_tensors",
                        no_panic(
                            &name,
                            || column_io::read_tensors(&path).map(|_| ()),
                            &mut problems,
                        ),
                    ),
                    (
                        "read_parquet",
                        no_panic(
                            &name,
                            || {
                                arrow_sparse::archive::read_archive(
                                    &path,
                                    &arrow_sparse::archive::ArchiveReadOptions::default(),
                                )
                                .map(|_| ())
                            },
                            &mut problems,
                        ),
                    ),
                ] {
                    // every file is damaged: only read_batches of an archive can
                    // succeed (a valid table as far as the columns it decodes go)
                    // and read_tensors of an archive (Ok(None): not a table)
                    let lenient = !name.starts_with("cli_pqtable")
                        && (what == "read_batches" || what == "read_tensors");
                    if let Some(Ok(())) = r
                        && !lenient
                    {
                        problems.push(format!("{name}: {what} succeeded"));
                    }
                }
                // streaming and range reads of whatever opens
                no_panic(
                    &name,
                    || {
                        let r = arrow_sparse::archive::ArchiveReader::open(&path)?;
                        for c in r.chunks() {
                            let _ = c;
                        }
                        for d in 0..r.spec().shape.len() {
                            let _ = r.read_range(d, 0..usize::MAX);
                        }
                        let _ = r.read_row_group(r.num_row_groups());
                        Ok(())
                    },
                    &mut problems,
                );
            }
            "tns" => {
                // valid files declaring huge extents: they read (the kernels'
                // allocations are another issue's), and nothing panics
                let t = no_panic(
                    &name,
                    || {
                        arrow_sparse::io::tns::read(
                            &path,
                            &arrow_sparse::io::ImportOptions::default(),
                        )
                    },
                    &mut problems,
                );
                if let Some(Ok(m)) = t {
                    no_panic(
                        &name,
                        || arrow_sparse::dump::json_line(&m.tensor),
                        &mut problems,
                    );
                }
            }
            other => problems.push(format!("{name}: unexpected kind {other:?}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The CLI: exit code 3 (invalid input), one line on stderr naming the file,
/// no panic message; the valid `.tns` files dump (exit 0).
#[test]
fn every_fuzz_input_is_one_clear_error_at_the_cli() {
    let exe = env!("CARGO_BIN_EXE_arrow-sparse");
    let mut problems = Vec::new();
    for path in corpus() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for cmd in ["dump", "inspect"] {
            let out = Command::new(exe).arg(cmd).arg(&path).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            if ext(&path) == "tns" {
                if out.status.code() != Some(0) {
                    problems.push(format!(
                        "{cmd} {name}: exit {:?}: {stderr}",
                        out.status.code()
                    ));
                }
                continue;
            }
            // `inspect` of an archive reads its footer only, which these
            // damaged archives have intact: it may succeed; `dump` decodes
            let footer_only = cmd == "inspect"
                && ext(&path) == "parquet"
                && !name.starts_with("cli_pqtable")
                && out.status.code() == Some(0);
            if footer_only {
                continue;
            }
            let ok = out.status.code() == Some(3)
                && stderr.starts_with("arrow-sparse: error: ")
                && stderr.matches('\n').count() == 1
                && stderr.contains(&name)
                && !stderr.contains("panicked");
            if !ok {
                problems.push(format!(
                    "{cmd} {name}: exit {:?}, stderr {stderr:?}",
                    out.status.code()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The specific defects, one assertion each.
#[test]
fn each_defect_class_has_its_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad/fuzz");
    let msg = |f: &str| match column_io::read_tensors(dir.join(f)) {
        Err(e) => e.to_string(),
        Ok(t) => panic!("{f}: read {t:?}"),
    };
    // a negative block body length: arrow-ipc unwrapped it (reader.rs:967)
    let m = msg("cli_ipcfile_unwrap_none_967.arrow");
    assert!(m.contains("body -192 bytes"), "{m}");
    // a buffer past its body: arrow-buffer's Buffer::slice panicked
    let m = msg("cli_ipcfile_slice_panic.arrow");
    assert!(m.contains("is not inside the body"), "{m}");
    // a block body of 57 PB: arrow-ipc asked the allocator for it
    let m = msg("2e9f0be9.arrow");
    assert!(m.contains("57139420272263616"), "{m}");
    // a footer length past the file: "Invalid argument (os error 22)" before
    let m = msg("04b0b1b7.arrow");
    assert!(
        m.contains("footer length") && !m.contains("os error"),
        "{m}"
    );
    // a Parquet table whose page runs past its chunk: a parquet panic that the
    // CLI's hook hid (exit 101, no message)
    let m = msg("cli_pqtable_silent_panic.parquet");
    assert!(m.contains("column chunk"), "{m}");
    // a column chunk of negative length: "column start and length should not be
    // negative" in parquet's metadata, through read_batches
    let e = column_io::read_batches(dir.join("parquet_archive-crash-03856b93.parquet"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("-28 bytes long"), "{e}");
    // 2^28 rows declared in 940 bytes: a 2 GiB indptr before; now over the limit
    let e = arrow_sparse::archive::read_archive(
        dir.join("pq_csr_rows2p28_i64ptr.parquet"),
        &arrow_sparse::archive::ArchiveReadOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::Limit { needed, .. } if needed > 1 << 30),
        "{e}"
    );
}

/// A 4 x 2 COO tensor of two entries, for the archive tests.
fn small_coo() -> AnyTensor {
    arrow_sparse::CooTensor::<f64, i64>::from_entries(
        vec![4, 2],
        &[(vec![0, 1], 1.0), (vec![3, 0], 2.0)],
    )
    .unwrap()
    .into()
}

#[test]
fn read_row_group_past_the_last_is_an_error() {
    use arrow_sparse::archive::{self, ArchiveReader, ArchiveWriteOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let t = small_coo();
    archive::write_archive(
        &path,
        &t.into(),
        &ArchiveWriteOptions::default().with_row_group_size(1),
    )
    .unwrap();
    let r = ArchiveReader::open(&path).unwrap();
    assert_eq!(r.num_row_groups(), 2);
    assert!(r.read_row_group(1).is_ok());
    for i in [2, 3, usize::MAX] {
        // panicked with an index out of bounds before
        assert!(
            matches!(r.read_row_group(i), Err(Error::Unsupported(_))),
            "{i}"
        );
    }
}

/// A DM broadcast over a dense [1, 1024] int8 tensor repeating each element
/// 65,536 times (within `max_broadcast`) made `dump` reach 2.55 GB from a
/// 1.6 KB message: the total is now bounded by the read limit.
#[test]
fn a_broadcast_within_the_per_entry_limit_is_bounded_in_total() {
    use arrow_sparse::dims::DimMap;
    use arrow_sparse::{AnyDm, DenseTensor, DmTensor};
    let dense = DenseTensor::<i8>::try_new(vec![1, 1024], vec![1; 1024].into()).unwrap();
    let dm: AnyDm = DmTensor::<i8>::try_new(DimMap::identity(vec![1, 1024]).unwrap(), dense.into())
        .unwrap()
        .into();
    let t = AnyTensor::Dm(dm.broadcast(&[65_536, 1024]).unwrap());
    let bytes = ipc::encode(&t, &[], &ipc::StreamWriteOptions::default())
        .unwrap()
        .to_vec();
    assert!(bytes.len() < 4096, "{}", bytes.len());
    let err = ipc::decode(
        &arrow_buffer::Buffer::from(bytes),
        &ipc::StreamReadOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::Limit { needed, .. } if needed > 1 << 30),
        "{err}"
    );
}

/// The `column_parquet` timeout of issue #18's campaign, reproduced: a 2 KB
/// Parquet table (delta-encoded coordinates, dictionary-encoded values, zstd)
/// holds a valid COO tensor of 400,000 entries, about 9.6 MB decoded. That is
/// within the documented read budget (`ReadLimit::DEFAULT`, at least 64 MiB
/// whatever the file's size, `format/SPEC.md` section 11), so it reads. The
/// fuzz harness ran about thirty whole-tensor conversions on it (13 s per input
/// under instrumentation): the harness now bounds its work by the decoded size
/// (`fuzz/src/lib.rs`, `FULL_PLAN_ENTRIES`, `WRITE_BACK_ENTRIES`), and the file is
/// a seed of `fuzz/corpus/column_parquet/`, so every fuzz run executes it.
#[test]
fn a_2kb_parquet_table_of_400k_entries_reads_within_the_budget() {
    use arrow_sparse::Format;
    use arrow_sparse::limit::ReadLimit;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus/column_parquet/slow_coo_400k_entries.parquet");
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 4096, "{size} bytes");
    let tensors = column_io::read_tensors(&path).unwrap().unwrap();
    assert_eq!(tensors.len(), 1);
    let t = &tensors[0];
    assert_eq!(
        (t.format(), t.shape(), t.nnz()),
        (Format::Coo, &[400_000, 400_000][..], 400_000)
    );
    // 2 x 400,000 int64 coordinates and 400,000 float64 values: 9.6 MB from 2 KB,
    // under the budget of a 2 KB file (64 MiB); a tighter limit refuses it
    let decoded = 3 * 400_000 * 8;
    assert!(decoded < ReadLimit::DEFAULT.budget(size));
    let tight = column_io::ColumnReadOptions::default().with_limit(ReadLimit::bytes(1 << 20));
    assert!(matches!(
        column_io::read_tensors_with(&path, &tight),
        Err(Error::Limit { .. })
    ));
}

#[test]
fn a_binsparse_cvec_re_encodes_as_ipc_to_the_same_bytes() {
    // the first finding of the binsparse fuzz target (CI smoke step): a CVEC read as
    // a 1-D COO with column-major coordinates decoded from its own IPC message as
    // row-major, so encode -> decode -> encode gave other strides
    use arrow_sparse::{io, ipc};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("fuzz/corpus/binsparse/cvec_column_major_ipc_round_trip.npz");
    let m = io::npz::read(&path, &io::ImportOptions::default()).unwrap();
    assert_eq!(m.tensor.shape().len(), 1);
    let opts = ipc::StreamWriteOptions::default();
    let bytes = ipc::encode(&m.tensor, &[], &opts).unwrap().to_vec();
    let buf = arrow_buffer::Buffer::from(bytes.clone());
    let (back, _) = ipc::decode(&buf, &ipc::StreamReadOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(back.tensor, m.tensor);
    assert_eq!(
        ipc::encode(&back.tensor, &[], &opts).unwrap().to_vec(),
        bytes
    );
}

#[test]
fn a_symmetric_binsparse_csr_writes_back_with_its_index_types() {
    // the second finding of the binsparse fuzz target (CI smoke step): a symmetric
    // CSR with int32 indices wrote its stored triangle with int64 indices, so it
    // read back as another tensor
    use arrow_sparse::io::{self, NpzWriteOptions, npz};
    use std::io::Cursor;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("fuzz/corpus/binsparse/symmetric_csr_int32_write_back.npz");
    let m = npz::read(&path, &io::ImportOptions::default()).unwrap();
    assert_eq!(m.tensor.index_type(), Some(arrow_sparse::IndexType::Int32));
    let bytes = npz::write_to(Cursor::new(Vec::new()), &m, &NpzWriteOptions::default())
        .unwrap()
        .into_inner();
    let back =
        npz::read_from(Cursor::new(bytes), "mem.npz", &io::ImportOptions::default()).unwrap();
    assert_eq!(back.tensor, m.tensor);
}

#[test]
fn every_binsparse_seed_that_reads_writes_back_as_the_same_tensor() {
    // the binsparse fuzz target's round trip on every committed seed: a custom
    // format read with a transpose wrote back without it (another entry order)
    use arrow_sparse::io::{self, NpzWriteOptions, npz};
    use std::io::Cursor;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut read = 0;
    for entry in std::fs::read_dir(root.join("fuzz/corpus/binsparse")).unwrap() {
        let path = entry.unwrap().path();
        let Ok(m) = npz::read(&path, &io::ImportOptions::default()) else {
            continue;
        };
        read += 1;
        let bytes = npz::write_to(Cursor::new(Vec::new()), &m, &NpzWriteOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .into_inner();
        let back = npz::read_from(Cursor::new(bytes), "mem.npz", &io::ImportOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(back.tensor, m.tensor, "{}", path.display());
    }
    assert!(read >= 20, "{read} seeds read");
}

/// Finding M of issue #18 (`fuzz/FINDINGS.md`): a 3 KB archive whose footer
/// held a double where the parquet crate reads an `i8` (`IntType.bit_width`):
/// the crate read one byte of it and the other seven as field headers, one of
/// them a `list<bool>` of about 2^31 elements, which its `skip` loops over
/// without reading a byte (3.5 s in release, 42 s under the fuzz build; a
/// footer of many such lists would run for hours). Footers and page headers
/// are now walked first as the crate will decode them, and refused. The file
/// is a seed of `fuzz/corpus/archive/`.
#[test]
fn a_footer_the_parquet_crate_would_skip_for_seconds_is_refused() {
    use arrow_sparse::archive::{self, ArchiveReadOptions, ArchiveReader};
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/archive/slow_footer_skip.parquet");
    let options = ArchiveReadOptions::default();
    let e = archive::read_archive(&path, &options)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("malformed Parquet footer") && e.contains("field 1 of IntType"),
        "{e}"
    );
    assert!(ArchiveReader::open(&path).is_err());
    let e = column_io::read_batches(&path).unwrap_err().to_string();
    assert!(e.contains("malformed Parquet footer"), "{e}");
    let out = Command::new(env!("CARGO_BIN_EXE_arrow-sparse"))
        .arg("inspect")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("malformed Parquet footer"), "{err}");
}

/// The same loop reached through a field the crate does not know: a valid
/// archive whose `FileMetaData` gains an unknown field 100, a `list<bool>` of
/// 2^31 - 1 elements in 7 bytes. The crate skips it (2^31 turns reading
/// nothing) and would then read the archive; it is refused first.
#[test]
fn an_unknown_list_of_2_pow_31_booleans_in_a_footer_is_refused() {
    use arrow_sparse::archive::{self, ArchiveReadOptions, ArchiveWriteOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let t = small_coo();
    archive::write_archive(&path, &t.clone().into(), &ArchiveWriteOptions::default()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    let len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    let footer = &bytes[n - 8 - len..n - 8];
    assert_eq!(
        footer.last(),
        Some(&0),
        "FileMetaData ends with its stop byte"
    );
    // the archive with `field` appended to its FileMetaData (before the stop byte)
    let with_field = |field: &[u8]| -> Vec<u8> {
        let mut f = bytes[..n - 8 - len].to_vec();
        f.extend_from_slice(&footer[..len - 1]);
        f.extend_from_slice(field);
        f.push(0);
        f.extend_from_slice(&((len + field.len()) as u32).to_le_bytes());
        f.extend_from_slice(b"PAR1");
        f
    };
    // field header with a full id (type 9, list), id 100 zigzag (200 = 0xC8 0x01),
    // list header "size follows, bool", size 2^31 - 1 as a varint
    let bad = dir.path().join("bad.parquet");
    std::fs::write(
        &bad,
        with_field(&[0x09, 0xC8, 0x01, 0xF1, 0xFF, 0xFF, 0xFF, 0xFF, 0x07]),
    )
    .unwrap();
    let e = archive::read_archive(&bad, &ArchiveReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("2147483647 booleans"), "{e}");
    // a short list of booleans the crate skips quickly is accepted, and the
    // archive reads (the walk and the crate agree on where the list ends)
    std::fs::write(&bad, with_field(&[0x09, 0xC8, 0x01, 0x31])).unwrap();
    let back = archive::read_archive(&bad, &ArchiveReadOptions::default()).unwrap();
    assert_eq!(back.tensor, t);
}
