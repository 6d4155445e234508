//! The `arrow-sparse` command-line tool: inspect, dump and convert sparse tensors
//! stored as Arrow SparseTensor / Tensor IPC streams, Parquet archives, Matrix
//! Market, FROSTT `.tns` and NumPy `.npz` files.
//!
//! Layout: this file holds the command line (clap) and `main`; `files` has one
//! reader and one writer per file kind, `convert` the conversion pipeline,
//! `inspect` the summaries, `progress` the progress bar and `exit` the exit codes.

mod columns;
mod convert;
#[cfg(feature = "parquet")]
mod dataset;
mod exit;
mod files;
mod inspect;
mod progress;
mod store;

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use arrow_sparse::io::{self, Duplicates};
use arrow_sparse::{Format, IndexType, dump};
use clap::{Args, Parser, Subcommand, ValueEnum};

use exit::{Cause, Failure};
use files::{FileKind, Input};
use progress::Progress;

#[cfg(feature = "parquet")]
type CompressionArg = arrow_sparse::archive::ArchiveCompression;
#[cfg(not(feature = "parquet"))]
type CompressionArg = String;

const FILE_KINDS: &str = "\
File kinds follow the extension (any case), or --input-kind / --output-kind:
  .arrow    stream of Arrow SparseTensor / Tensor IPC messages, any number
            (also .arrows and .ipc; inputs of other extensions are read as one)
  .parquet  Parquet archive, one tensor
  .mtx      Matrix Market (coordinate or array), one 2-D matrix
  .tns      FROSTT text tensor, one tensor
  .npz      scipy (csr, csc, coo), pydata/sparse (COO, GCXS) or Binsparse npz, one tensor
  .h5       Binsparse HDF5 (also .hdf5), one tensor (needs the build feature hdf5)
An Arrow IPC file / stream or a Parquet table of record batches with a sparse
tensor column (extension type arrow_sparse.coo/csr/csc/csf/gcs) is read as the
tensors of its first such column (null rows skipped); convert --as-column
writes one.";

fn main_help() -> String {
    format!(
        "{FILE_KINDS}

Examples:
  arrow-sparse inspect data/sample.mtx
  arrow-sparse convert data/sample.mtx sample.arrow --to csr
  arrow-sparse convert sample.arrow sample.parquet
  arrow-sparse dump sample.parquet
  arrow-sparse --json inspect sample.parquet

A progress bar appears on stderr for commands that run longer than about a
second, and only when stderr is a terminal.

{}",
        exit::HELP
    )
}

fn inspect_help() -> String {
    format!(
        "Examples:
  arrow-sparse inspect tensors.arrow           every tensor of a stream
  arrow-sparse inspect matrix.mtx              what the Matrix Market header says, nnz, types
  arrow-sparse inspect x.parquet               row groups and their coordinate ranges (nothing decoded)
  arrow-sparse --json inspect x.npz | jq .tensors[0].shape

With --json: one JSON object {{\"file\", \"kind\", \"bytes\", \"tensors\": [..]}}; each
tensor has format, value_type, index_type, shape, dim_names, nnz, metadata, ...
A Parquet archive adds \"parquet\": rows, columns, compression, row_groups.

{}",
        exit::HELP
    )
}

fn dump_help() -> String {
    format!(
        "Examples:
  arrow-sparse dump tensors.arrow | head -1
  arrow-sparse dump matrix.mtx --duplicates sum
  arrow-sparse dump x.parquet > x.jsonl

Each line: {{\"format\", \"value_type\", \"index_type\", \"shape\", \"dim_names\", \"nnz\",
..., \"entries\": [[coord..., value], ...]}} (format/SPEC.md section 7). The output is
JSON with or without --json.

{}",
        exit::HELP
    )
}

fn convert_help() -> String {
    format!(
        "{FILE_KINDS}

Examples:
  arrow-sparse convert matrix.mtx matrix.arrow                    Matrix Market to IPC, as read (COO)
  arrow-sparse convert matrix.mtx matrix.arrow --to csr --index-type int32
  arrow-sparse convert matrix.arrow matrix.npz                    scipy can load_npz it
  arrow-sparse convert m.mtx m.npz --binsparse-format DCSR        Binsparse (binsparse.load_binsparse)
  arrow-sparse convert tensor.tns tensor.parquet --to csf --axis-order 2,0,1
  arrow-sparse convert x.parquet x.mtx --mtx-symmetry symmetric
  arrow-sparse convert many.arrow third.tns --tensor 2            one tensor of a stream
  arrow-sparse convert in.arrow out.arrow --to gcs --dimensions 2,0,1 --partitioning 1 --compressed-axis column
  arrow-sparse convert in.arrow out.arrow --to dm --dimensions 1,2,0 --partitioning 2 --storage csr
  arrow-sparse convert x.arrow x.parquet --row-group-size 1000000 --compression zstd:3
  arrow-sparse --json convert x.npz x.arrow                       prints a JSON summary line

Without --to every tensor keeps its format, types and custom metadata (the Matrix
Market field and symmetry, the .tns header and the npz layout travel in it, so a
round trip through .arrow or .parquet writes the same kind of file back). Files
that hold one tensor take one: give --tensor N for a stream of several. Matrix
Market holds 2-D tensors only; Parquet archives hold tensors of every format
(GCS and DM included). The output is written to a temporary file beside it
(.OUT.arrow-sparse-tmp.N) and renamed into place: on error nothing is left at OUT,
a replaced OUT keeps its permissions, and a temporary file left by a killed
convert is removed by the next convert to the same OUT.

Prints one summary line (--json: a JSON object with input, output, kinds, tensors
and bytes); --quiet prints nothing.

{}",
        exit::HELP
    )
}

/// Inspect, dump and convert sparse tensors: Arrow SparseTensor / Tensor IPC
/// streams, Parquet archives, Matrix Market, FROSTT .tns and NumPy .npz files.
#[derive(Parser)]
#[command(name = "arrow-sparse", version, about, after_help = main_help())]
struct Cli {
    /// No progress bar and no informational output (convert's summary line).
    /// inspect and dump still print what they were asked for.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// Machine-readable output: inspect prints one JSON object, convert a JSON
    /// summary line, errors are a JSON line on stderr.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a readable summary of every tensor in FILE.
    #[command(after_help = inspect_help())]
    Inspect {
        /// The file to inspect (its kind follows the extension).
        file: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Print one JSON line per tensor in FILE (format, types, shape, entries).
    #[command(after_help = dump_help())]
    Dump {
        /// The file to dump (its kind follows the extension).
        file: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Convert IN to OUT: between .arrow, .parquet, .mtx, .tns and .npz files, and
    /// between tensor formats with --to.
    #[command(after_help = convert_help())]
    Convert(Box<ConvertArgs>),
}

/// Options for reading text inputs.
#[derive(Args)]
struct ReadArgs {
    /// Read the input as this kind of file whatever its extension says.
    #[arg(long, value_enum, ignore_case = true, value_name = "KIND")]
    input_kind: Option<FileKind>,
    /// .mtx / .tns inputs: entries that repeat coordinates are an error (default),
    /// summed, or kept as they are (a non-canonical COO tensor).
    #[arg(long, value_enum, ignore_case = true, default_value = "error")]
    duplicates: DuplicatesArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum DuplicatesArg {
    Error,
    Sum,
    Keep,
}

impl ReadArgs {
    fn options(&self) -> io::ImportOptions {
        io::ImportOptions::default().with_duplicates(match self.duplicates {
            DuplicatesArg::Error => Duplicates::Error,
            DuplicatesArg::Sum => Duplicates::Sum,
            DuplicatesArg::Keep => Duplicates::Keep,
        })
    }
}

/// The arguments of `convert`.
#[derive(Args)]
struct ConvertArgs {
    /// Input file (its kind follows the extension).
    input: PathBuf,
    /// Output file (its kind follows the extension), written atomically.
    output: PathBuf,
    /// Write OUT as this kind of file whatever its extension says (needed when
    /// the extension names no kind).
    #[arg(long, value_enum, ignore_case = true, value_name = "KIND")]
    output_kind: Option<FileKind>,
    /// Convert only tensor N (from 0) of a stream; needed when a stream of several
    /// tensors goes into a file that holds one (.parquet, .mtx, .tns, .npz).
    #[arg(long, value_name = "N")]
    tensor: Option<usize>,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    write: WriteArgs,
    #[command(flatten)]
    dataset: DatasetArgs,
}

/// Dataset outputs: a directory of Parquet archives (format/SPEC.md 9.7).
#[derive(Args)]
struct DatasetArgs {
    /// Write OUT as a dataset directory: Parquet archives of the tensor's entries
    /// partitioned by ranges of dimension DIM, and a manifest. .mtx and .parquet
    /// inputs are streamed (sorted within --memory-budget, spilling to disk), so
    /// they may be larger than memory. Parts are COO (or --to csr / csc / csf).
    #[arg(long, value_name = "DIM")]
    partition_by: Option<usize>,
    /// With --partition-by: coordinates along DIM per part, i.e. matrix rows per
    /// file when DIM is 0 (default 65536).
    #[arg(long, value_name = "N", value_parser = positive, requires = "partition_by")]
    rows_per_file: Option<usize>,
    /// With --partition-by: the memory the whole process may use (peak resident
    /// set), in bytes or with a K, M, G or T suffix (default 1G, at least 24M).
    #[arg(long, value_name = "BYTES", value_parser = memory_budget, requires = "partition_by")]
    memory_budget: Option<usize>,
    /// With --partition-by: IN is a stream (.arrow) of consecutive blocks of one
    /// tensor along DIM, each a message of its own extent along DIM, stacked into
    /// the dataset one at a time (a block written by --blocks says where it goes).
    #[arg(long, requires = "partition_by")]
    stack: bool,
    /// IN is a dataset: write each of its parts as one message of the stream OUT
    /// (.arrow), the part's entries with its own extent along the partition
    /// dimension, its place in the custom metadata arrow_sparse.dataset.block;
    /// one part in memory at a time.
    #[arg(long, conflicts_with = "partition_by")]
    blocks: bool,
}

#[cfg(feature = "parquet")]
fn memory_budget(s: &str) -> Result<usize, String> {
    dataset::parse_bytes(s)
}

#[cfg(not(feature = "parquet"))]
fn memory_budget(_: &str) -> Result<usize, String> {
    Err("datasets need the build feature parquet".into())
}

#[derive(Clone, Copy, ValueEnum)]
enum Axis {
    Row,
    Column,
}

/// What `--to` converts to.
#[derive(Args)]
struct TargetArgs {
    /// Target format: coo, csr, csc, csf, dense, gcs, dm or level (default: keep
    /// every tensor as it is).
    #[arg(long, value_parser = any_case::<Format>)]
    to: Option<Format>,
    /// Index type of the output with --to (int8, int16, int32, int64, uint8,
    /// uint16, uint32; uint64 for .parquet, .tns, .npz; default int64).
    #[arg(long, value_parser = any_case::<IndexType>)]
    index_type: Option<IndexType>,
    /// CSF axis order, e.g. 2,0,1 (default: the input's for CSF, else 0,1,..).
    #[arg(long, value_delimiter = ',')]
    axis_order: Option<Vec<usize>>,
    /// GCS / DM: the dimension permutation, e.g. 2,0,1 (GCS default: the
    /// mapping with the fewest bytes; DM default: the identity).
    #[arg(long, value_delimiter = ',')]
    dimensions: Option<Vec<usize>>,
    /// GCS / DM: split points into --dimensions, e.g. 1 (one point for GCS).
    #[arg(long, value_delimiter = ',')]
    partitioning: Option<Vec<usize>>,
    /// GCS: compress rows (GCRS) or columns (GCCS).
    #[arg(long, value_enum, ignore_case = true, default_value = "row")]
    compressed_axis: Axis,
    /// DM: the storage format of the reduced tensor.
    #[arg(long, value_parser = any_case::<Format>, default_value = "coo")]
    storage: Format,
    /// Level: the levels in MLIR's map syntax, e.g. "(d0, d1) -> (d0 :
    /// compressed, d1 : compressed)" (DCSR; default: the input's own levels).
    #[arg(long, value_parser = parse_levels)]
    levels: Option<arrow_sparse::LevelFormat>,
}

fn parse_levels(s: &str) -> Result<arrow_sparse::LevelFormat, String> {
    s.parse().map_err(|e: arrow_sparse::Error| e.to_string())
}

/// Options of the output writers.
#[derive(Args)]
struct WriteArgs {
    /// .arrow / .parquet output: one record batch with an `id` column and a
    /// sparse tensor column `tensor` (extension type arrow_sparse.<format>; an
    /// Arrow IPC file, or a Parquet table) instead of SparseTensor messages or an
    /// archive. All tensors must share format, value / index types, ndim and dim
    /// names; custom metadata is not kept.
    #[arg(long)]
    as_column: bool,
    /// .parquet output: rows per row group, at least 1 (default 1048576).
    #[arg(long, value_name = "N", value_parser = positive)]
    row_group_size: Option<usize>,
    /// .parquet output: compression none, zstd (level 1, the default) or
    /// zstd:LEVEL (1-22).
    #[arg(long, value_parser = any_case::<CompressionArg>)]
    compression: Option<CompressionArg>,
    /// .npz output: scipy (csr / csc / coo), pydata/sparse (COO / GCXS) or
    /// Binsparse layout (default: the input's, else scipy for 2-D and pydata for
    /// N-D and GCS).
    #[arg(long, value_enum, ignore_case = true)]
    npz_flavor: Option<NpzFlavorArg>,
    /// .npz / .h5 output: write Binsparse in this predefined format (for .npz
    /// implies --npz-flavor binsparse; default: the input's Binsparse format, else
    /// the tensor's own: CSR / CSC, DCSR / DCSC for CSF, COO, CVEC, DVEC, DMATR /
    /// DMATC, custom for N-D).
    #[arg(long, value_enum, ignore_case = true)]
    binsparse_format: Option<BinsparseFormatArg>,
    /// .mtx output: the symmetry of the file (default: the input's, else general;
    /// symmetric and skew-symmetric files store one triangle).
    #[arg(long, value_enum, ignore_case = true)]
    mtx_symmetry: Option<SymmetryArg>,
}

#[derive(Clone, Copy, ValueEnum)]
enum NpzFlavorArg {
    Scipy,
    Pydata,
    Binsparse,
}

#[derive(Clone, Copy, ValueEnum)]
#[allow(clippy::upper_case_acronyms)]
enum BinsparseFormatArg {
    CSR,
    CSC,
    COO,
    COOR,
    COOC,
    DCSR,
    DCSC,
    CVEC,
    DVEC,
    DMAT,
    DMATR,
    DMATC,
}

#[derive(Clone, Copy, ValueEnum)]
enum SymmetryArg {
    General,
    Symmetric,
    SkewSymmetric,
}

/// Parse a value in any case (`CSR`, `Int32`, `ZSTD:3`).
fn any_case<T: std::str::FromStr>(s: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    s.to_ascii_lowercase().parse().map_err(|e: T::Err| {
        let e = e.to_string();
        // the library's "could not parse format: ..." says what was wrong
        e.split_once(": ").map_or(e.clone(), |(_, d)| d.to_string())
    })
}

/// A count of at least 1.
fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

fn run(cli: Cli, progress: &Progress) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match cli.command {
        Command::Inspect { file, read } => {
            let input = Input::open(&file, read.input_kind, &read.options(), progress)?;
            let text = if cli.json {
                inspect::json(&input)?.to_string()
            } else {
                inspect::text(&input)?
            };
            progress.suspend(|| writeln!(out, "{text}"))?;
        }
        Command::Dump { file, read } => {
            let input = Input::open(&file, read.input_kind, &read.options(), progress)?;
            progress.steps(
                format!("dumping {}", file.display()),
                input.len() as u64,
                "tensors",
            );
            for i in 0..input.len() {
                let line = dump::json_line(&input.get(i)?.tensor)
                    .map_err(|e| Failure::input(e).in_file(&file))?;
                progress.suspend(|| writeln!(out, "{line}"))?;
                progress.inc(1);
            }
        }
        #[cfg(feature = "parquet")]
        Command::Convert(args) if args.dataset.partition_by.is_some() => {
            let dim = args.dataset.partition_by.unwrap_or(0);
            let summary = dataset::run(&args, dim, progress)?;
            progress.clear();
            if !cli.quiet {
                let line = if cli.json {
                    summary.json().to_string()
                } else {
                    summary.text()
                };
                writeln!(out, "{line}")?;
            }
        }
        #[cfg(feature = "parquet")]
        Command::Convert(args) if args.dataset.blocks => {
            let line = dataset::write_blocks(&args, progress)?;
            progress.clear();
            if !cli.quiet {
                let line = if cli.json { line.1.to_string() } else { line.0 };
                writeln!(out, "{line}")?;
            }
        }
        Command::Convert(args) => {
            let summary = convert::run(&args, progress)?;
            progress.clear();
            if !cli.quiet {
                let line = if cli.json {
                    summary.json().to_string()
                } else {
                    summary.text()
                };
                writeln!(out, "{line}")?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// Print the error, as one line of text or (with `--json`) of JSON. Usage errors
/// add clap's usage lines to the text.
fn report(failure: &Failure, json: bool) {
    if json {
        let line = serde_json::json!({
            "error": failure.message(),
            "exit_code": failure.code,
        });
        eprintln!("{line}");
    } else {
        eprintln!("arrow-sparse: error: {}", failure.message());
        if let Cause::Usage(_, more) = &failure.error
            && !more.is_empty()
        {
            eprint!("{more}");
        }
    }
}

/// Whether the command line asks for JSON output (before clap has read it).
fn json_asked() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

/// A command line clap refused, as a usage failure: clap's first line is the
/// message, the rest (usage, hint) follows it in text output.
fn clap_failure(e: &clap::Error) -> Failure {
    use clap::error::ErrorKind::{DisplayHelpOnMissingArgumentOrSubcommand, MissingSubcommand};
    let text = e.render().to_string();
    // the first paragraph is the message (a list of missing arguments continues
    // it on indented lines), the rest is usage and a hint
    let (first, rest) = text
        .trim_end()
        .split_once("\n\n")
        .unwrap_or((text.trim_end(), ""));
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let first: Vec<&str> = first.lines().map(str::trim).collect();
    let (message, more) = match e.kind() {
        DisplayHelpOnMissingArgumentOrSubcommand | MissingSubcommand => (
            "a command is needed: inspect, dump or convert (see arrow-sparse --help)".to_string(),
            String::new(),
        ),
        _ => (first.join(" "), format!("{rest}\n")),
    };
    Failure {
        code: exit::USAGE,
        error: Cause::Usage(message, more),
        context: None,
    }
}

fn main() -> ExitCode {
    // Panics of a dependency that the library catches (and returns as errors) are
    // not printed; every other panic is.
    arrow_sparse::error::install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            if matches!(e.kind(), DisplayHelp | DisplayVersion) {
                e.exit();
            }
            let failure = clap_failure(&e);
            report(&failure, json_asked());
            return failure.exit_code();
        }
    };
    let json = cli.json;
    let progress = Progress::new(cli.quiet);
    let result = run(cli, &progress);
    drop(progress);
    match result {
        Ok(()) => ExitCode::from(exit::OK),
        Err(failure) if failure.is_broken_pipe() => ExitCode::from(exit::OK),
        Err(failure) => {
            report(&failure, json);
            failure.exit_code()
        }
    }
}
