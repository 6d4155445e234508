//! `convert IN OUT --partition-by DIM`: write a dataset directory (format/SPEC.md
//! 9.7). Matrix Market and Parquet archive inputs are streamed chunk by chunk
//! into a sorting dataset writer, so memory stays within `--memory-budget`
//! whatever the input's size; other inputs are read whole first.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use arrow_sparse::archive::{
    ArchiveLayout, ArchiveWriteOptions, DatasetSummary, DatasetWriteOptions, TensorSpec,
};
use arrow_sparse::io::mtx::MtxChunks;
use arrow_sparse::io::{Duplicates, ImportOptions};
use arrow_sparse::{CompressedAxis, CoordLayout, Error, Format, IndexType, ValueType};
use serde_json::{Value, json};

use crate::exit::Failure;
use crate::files::{FileKind, Input};
use crate::progress::Progress;
use crate::{ConvertArgs, TargetArgs};

/// Default `--rows-per-file`.
const DEFAULT_BLOCK: usize = 1 << 16;
/// Default `--memory-budget`: 1 GiB.
const DEFAULT_BUDGET: usize = 1 << 30;
/// What the process holds besides the dataset writer (the binary's pages, the
/// allocator, the input's read buffer), taken off `--memory-budget` before the
/// rest goes to the writer: measured at about 10 MiB for the release binary.
const PROCESS_OVERHEAD: usize = 12 << 20;

/// What a dataset conversion did.
pub struct Summary {
    input: PathBuf,
    input_kind: FileKind,
    output: PathBuf,
    spec: TensorSpec,
    dim: usize,
    block: usize,
    streamed: bool,
    written: DatasetSummary,
}

impl Summary {
    /// `IN (kind) -> OUT (dataset): format value_type [shape] nnz N in P parts
    /// (dimension D in blocks of B), BYTES bytes[, sorted in R runs]`.
    pub fn text(&self) -> String {
        let runs = match self.written.sorted_runs {
            0 => String::new(),
            r => format!(", sorted in {r} runs spilled to disk"),
        };
        format!(
            "{} ({}{}) -> {} (dataset): {} {} {:?} nnz {} in {} parts (dimension {} in blocks of {}), {} bytes{runs}",
            self.input.display(),
            self.input_kind.name(),
            if self.streamed { ", streamed" } else { "" },
            self.output.display(),
            self.spec.format(),
            self.spec.value_type,
            self.spec.shape,
            self.written.rows,
            self.written.parts,
            self.dim,
            self.block,
            self.written.bytes,
        )
    }

    /// `{"input", "input_kind", "output", "output_kind": "dataset", "streamed",
    /// "format", "value_type", "shape", "nnz", "parts", "partition_dim", "block",
    /// "bytes", "sorted_runs"}`.
    pub fn json(&self) -> Value {
        json!({
            "input": self.input.display().to_string(),
            "input_kind": self.input_kind.name(),
            "output": self.output.display().to_string(),
            "output_kind": "dataset",
            "streamed": self.streamed,
            "format": self.spec.format().name(),
            "value_type": self.spec.value_type.name(),
            "shape": self.spec.shape,
            "nnz": self.written.rows,
            "parts": self.written.parts,
            "partition_dim": self.dim,
            "block": self.block,
            "bytes": self.written.bytes,
            "sorted_runs": self.written.sorted_runs,
        })
    }
}

/// `--to` for a dataset: the layout of the parts (COO unless asked otherwise).
fn layout_for(
    target: &TargetArgs,
    ndim: usize,
    given: Option<&ArchiveLayout>,
) -> Result<Option<ArchiveLayout>, Failure> {
    let index_type = target.index_type.unwrap_or(IndexType::Int64);
    let layout = match target.to {
        None if given.is_none() && target.index_type.is_some() => ArchiveLayout::Coo {
            index_type,
            coord_layout: CoordLayout::RowMajor,
            canonical: None,
        },
        None => return Ok(given.cloned()),
        Some(Format::Coo) => ArchiveLayout::Coo {
            index_type,
            coord_layout: CoordLayout::RowMajor,
            canonical: None,
        },
        Some(f @ (Format::Csr | Format::Csc)) => ArchiveLayout::Csx {
            axis: if f == Format::Csr {
                CompressedAxis::Row
            } else {
                CompressedAxis::Column
            },
            index_type,
            indptr_type: IndexType::Int64,
        },
        Some(Format::Csf) => ArchiveLayout::Csf {
            axis_order: target
                .axis_order
                .clone()
                .unwrap_or_else(|| (0..ndim).collect()),
            index_type,
            indptr_type: IndexType::Int64,
        },
        Some(other) => {
            return Err(Failure::usage(format!(
                "--partition-by writes COO, CSR, CSC or CSF parts, not {other}"
            )));
        }
    };
    Ok(Some(layout))
}

fn parquet_options(args: &ConvertArgs) -> ArchiveWriteOptions {
    // PLAIN floats: Spark's vectorized reader refuses BYTE_STREAM_SPLIT
    let mut o = ArchiveWriteOptions::default().with_byte_stream_split(false);
    if let Some(rows) = args.write.row_group_size {
        o = o.with_row_group_size(rows);
    }
    if let Some(c) = args.write.compression {
        o = o.with_compression(c);
    }
    o
}

fn usage(args: &ConvertArgs) -> Result<(), Failure> {
    let w = &args.write;
    if w.as_column
        || w.npz_flavor.is_some()
        || w.binsparse_format.is_some()
        || w.mtx_symmetry.is_some()
        || args.output_kind.is_some()
    {
        return Err(Failure::usage(
            "--partition-by writes a dataset directory: --as-column, --output-kind, --npz-flavor, --binsparse-format and --mtx-symmetry do not apply",
        ));
    }
    let t = &args.target;
    if t.dimensions.is_some() || t.partitioning.is_some() {
        return Err(Failure::usage(
            "--partition-by writes COO, CSR, CSC or CSF parts: --dimensions and --partitioning do not apply",
        ));
    }
    Ok(())
}

/// The whole command.
pub fn run(args: &ConvertArgs, dim: usize, progress: &Progress) -> Result<Summary, Failure> {
    usage(args)?;
    let d = &args.dataset;
    let block = d.rows_per_file.unwrap_or(DEFAULT_BLOCK);
    let budget = d.memory_budget.unwrap_or(DEFAULT_BUDGET);
    let in_kind = args
        .read
        .input_kind
        .or(FileKind::of(&args.input))
        .unwrap_or(FileKind::Arrow);
    let text_duplicates = args.read.options().duplicates;
    let options = DatasetWriteOptions::new(dim, block)
        .with_archive_options(parquet_options(args))
        .with_sorting(budget.saturating_sub(PROCESS_OVERHEAD).max(1 << 20));
    let out = &args.output;
    let name = args.input.display().to_string();
    let fail_in = |e: Error| Failure::input(e).about(&name);
    let fail_out = |e: Error| Failure::output(e).in_file(out);
    progress.spinner(format!("writing the dataset {}", out.display()));
    let (spec, written, streamed) = match in_kind {
        _ if d.stack => {
            if in_kind != FileKind::Arrow {
                return Err(Failure::usage(format!(
                    "--stack reads a stream of blocks (.arrow), not a {} file",
                    in_kind.name()
                )));
            }
            let (spec, written) = stack(args, dim, options, progress)?;
            (spec, written, true)
        }
        FileKind::Mtx => {
            let file = File::open(&args.input).map_err(|e| fail_in(e.into()))?;
            let import = ImportOptions::default().with_duplicates(text_duplicates);
            let mut chunks =
                MtxChunks::open(BufReader::with_capacity(1 << 20, file), &name, &import)
                    .map_err(fail_in)?;
            let shape = chunks.shape().to_vec();
            let vt = chunks.value_type();
            let layout = layout_for(&args.target, 2, None)?;
            let mut spec = TensorSpec::coo(shape, vt, IndexType::Int64);
            if let Some(l) = layout {
                spec = spec.with_layout(l);
            }
            spec.custom_metadata = chunks.custom_metadata().to_vec();
            let options = options.with_duplicates(text_duplicates);
            let mut w =
                crate::store::create_dataset(out, spec.clone(), &options).map_err(fail_out)?;
            let per_chunk = chunk_entries(budget.saturating_sub(PROCESS_OVERHEAD), 2, vt);
            while let Some(chunk) = chunks.next_chunk(per_chunk).map_err(fail_in)? {
                w.write_chunk(&chunk).map_err(fail_out)?;
            }
            (spec, w.finish().map_err(fail_out)?, true)
        }
        FileKind::Parquet if !is_column_table(args)? => {
            let r = crate::store::open_archive(&args.input).map_err(fail_in)?;
            let mut spec = r.spec().clone();
            let ndim = spec.shape.len();
            if let Some(l) = layout_for(&args.target, ndim, Some(&spec.layout))? {
                spec = spec.with_layout(l);
            }
            if let ArchiveLayout::Coo { canonical, .. } = &mut spec.layout {
                *canonical = None;
            }
            let options = options.with_duplicates(Duplicates::Keep);
            let mut w =
                crate::store::create_dataset(out, spec.clone(), &options).map_err(fail_out)?;
            for chunk in r.chunks() {
                w.write_chunk(&chunk.map_err(fail_in)?).map_err(fail_out)?;
            }
            (spec, w.finish().map_err(fail_out)?, true)
        }
        _ => {
            let input = Input::open(
                &args.input,
                args.read.input_kind,
                &args.read.options(),
                progress,
            )?;
            if input.len() != 1 && args.tensor.is_none() {
                return Err(Failure::output(Error::Unsupported(format!(
                    "a dataset holds one tensor and {} holds {}: pick one with --tensor N",
                    args.input.display(),
                    input.len()
                ))));
            }
            let mut messages = input.messages(Some(args.tensor.unwrap_or(0)), progress)?;
            let message = messages
                .pop()
                .ok_or_else(|| Failure::input(Error::Unsupported("no tensor to write".into())))?;
            let mut spec = TensorSpec::of(&message).map_err(fail_out)?;
            if let Some(l) = layout_for(&args.target, spec.shape.len(), None)? {
                spec = spec.with_layout(l);
            }
            if let ArchiveLayout::Coo { canonical, .. } = &mut spec.layout {
                *canonical = None;
            }
            let options = options.with_duplicates(Duplicates::Keep);
            let mut w =
                crate::store::create_dataset(out, spec.clone(), &options).map_err(fail_out)?;
            w.write_chunk(&message.tensor).map_err(fail_out)?;
            (spec, w.finish().map_err(fail_out)?, false)
        }
    };
    Ok(Summary {
        input: args.input.clone(),
        input_kind: in_kind,
        output: out.clone(),
        spec,
        dim,
        block,
        streamed,
        written,
    })
}

/// Whether a Parquet input is a table with a sparse tensor column (read whole)
/// rather than an archive (streamed).
fn is_column_table(args: &ConvertArgs) -> Result<bool, Failure> {
    if args.input.to_str().is_some_and(crate::store::is_url) {
        return Ok(false); // a URL names an archive or a dataset
    }
    Ok(crate::columns::read(&args.input)
        .map_err(|e| Failure::input(e).in_file(&args.input))?
        .is_some())
}

/// Entries parsed per chunk: a sixteenth of the budget as COO entries (int64
/// coordinates and the value).
fn chunk_entries(budget: usize, ndim: usize, vt: ValueType) -> usize {
    (budget / 16 / (ndim * 8 + vt.byte_width())).max(4096)
}

/// Parse `--memory-budget`: bytes, or a number with a K, M, G or T suffix (binary
/// units), at least 24 MiB (the process needs about 20 MiB).
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("unknown unit {c:?} (K, M, G or T)")),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: usize = num.trim().parse().map_err(|e| format!("{e}"))?;
    let bytes = n
        .checked_mul(1usize << shift)
        .ok_or_else(|| "too large".to_string())?;
    if bytes < 24 << 20 {
        return Err("must be at least 24M".into());
    }
    Ok(bytes)
}

/// `convert STREAM DIR --partition-by D --stack`: the stream's messages are
/// consecutive blocks along D (or say where they go, arrow_sparse.dataset.block),
/// read twice through a memory map: their shapes first (trusted, no O(nnz)
/// pass), then each block validated and written.
fn stack(
    args: &ConvertArgs,
    dim: usize,
    options: DatasetWriteOptions,
    progress: &Progress,
) -> Result<(TensorSpec, DatasetSummary), Failure> {
    use arrow_sparse::archive::{DATASET_BLOCK_KEY, DatasetBlock};
    use arrow_sparse::ipc::{MmapReader, StreamReadOptions};
    let name = args.input.display().to_string();
    let fail_in = |e: Error| Failure::input(e).about(&name);
    let out = &args.output;
    let fail_out = |e: Error| Failure::output(e).in_file(out);
    let trusted = MmapReader::open_with(
        &args.input,
        &StreamReadOptions::default().with_validation(arrow_sparse::Validation::Trusted),
    )
    .map_err(fail_in)?;
    let n = trusted.len();
    let first = trusted
        .get(0)
        .map_err(|_| fail_in(Error::Unsupported("a stream of no blocks".into())))?;
    let declared = DatasetBlock::of(&first).map_err(fail_in)?;
    let ndim = first.tensor.shape().len();
    if dim >= ndim {
        return Err(Failure::usage(format!(
            "--partition-by {dim}: the blocks have {ndim} dimensions"
        )));
    }
    let mut offsets = Vec::with_capacity(n.min(1 << 20));
    let mut total = 0usize;
    for i in 0..n {
        let m = trusted.get(i).map_err(fail_in)?;
        let (shape, first_shape) = (m.tensor.shape(), first.tensor.shape());
        let same = shape.len() == ndim
            && (0..ndim).all(|e| e == dim || shape[e] == first_shape[e])
            && m.tensor.value_type() == first.tensor.value_type();
        if !same {
            return Err(fail_in(Error::Unsupported(format!(
                "block {i} is a {} tensor of shape {shape:?}, block 0 a {} tensor of shape {first_shape:?}: blocks differ only in their extent along dimension {dim}",
                m.tensor.value_type().name(),
                first.tensor.value_type().name()
            ))));
        }
        let extent = shape[dim];
        let offset = match (DatasetBlock::of(&m).map_err(fail_in)?, &declared) {
            (Some(b), Some(d)) if b.dim == dim && b.shape == d.shape => b.offset,
            (None, None) => total,
            _ => {
                return Err(fail_in(Error::Unsupported(format!(
                    "block {i}: every block must say where it goes along dimension {dim} ({DATASET_BLOCK_KEY}, the same whole shape) or none"
                ))));
            }
        };
        total = total.max(offset.saturating_add(extent));
        offsets.push(offset);
    }
    let mut spec = TensorSpec::of(&first).map_err(fail_in)?;
    match &declared {
        Some(b) => spec.shape = b.shape.clone(),
        None => spec.shape[dim] = total,
    }
    spec.custom_metadata.retain(|(k, _)| k != DATASET_BLOCK_KEY);
    if let Some(l) = layout_for(&args.target, ndim, Some(&spec.layout))? {
        spec = spec.with_layout(l);
    }
    if let ArchiveLayout::Coo { canonical, .. } = &mut spec.layout {
        *canonical = None;
    }
    drop(trusted);
    let full = MmapReader::open(&args.input).map_err(fail_in)?;
    let options = options.with_duplicates(Duplicates::Keep);
    let mut w = crate::store::create_dataset(out, spec.clone(), &options).map_err(fail_out)?;
    progress.steps(format!("stacking the blocks of {name}"), n as u64, "blocks");
    for (i, &offset) in offsets.iter().enumerate() {
        let m = full.get(i).map_err(fail_in)?;
        w.write_block(offset, &m.tensor).map_err(fail_out)?;
        progress.inc(1);
    }
    Ok((spec, w.finish().map_err(fail_out)?))
}

/// `convert DIR OUT.arrow --blocks`: the dataset's parts as the messages of a
/// stream, one in memory at a time. The summary line, as text and JSON.
pub fn write_blocks(args: &ConvertArgs, progress: &Progress) -> Result<(String, Value), Failure> {
    let out = &args.output;
    let kind = args
        .output_kind
        .or(FileKind::of(out))
        .ok_or_else(|| Failure::usage("--blocks writes a stream: OUT must be .arrow"))?;
    if kind != FileKind::Arrow || args.target.to.is_some() || args.tensor.is_some() {
        return Err(Failure::usage(
            "--blocks writes the parts of a dataset as they are into a stream (.arrow): --to and --tensor do not apply",
        ));
    }
    let name = args.input.display().to_string();
    let r = crate::store::open_dataset(&args.input).map_err(|e| Failure::input(e).about(&name))?;
    progress.steps(
        format!("writing the blocks of {name}"),
        r.parts().len() as u64,
        "blocks",
    );
    let messages = r.block_messages().inspect(|_| progress.inc(1));
    let n = arrow_sparse::ipc::write_tensor_stream_iter(out, messages, &Default::default())
        .map_err(|e| Failure::output(e).in_file(out))?;
    let bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    let spec = r.spec();
    let text = format!(
        "{name} (dataset) -> {} (arrow): {n} blocks along dimension {} [{} {} {:?} nnz {}], {bytes} bytes",
        out.display(),
        r.partition_dim(),
        spec.format(),
        spec.value_type,
        spec.shape,
        r.rows(),
    );
    let json = json!({
        "input": name, "input_kind": "dataset", "output": out.display().to_string(),
        "output_kind": "arrow", "blocks": n, "partition_dim": r.partition_dim(),
        "format": spec.format().name(), "value_type": spec.value_type.name(),
        "shape": spec.shape, "nnz": r.rows(), "bytes": bytes,
    });
    Ok((text, json))
}
