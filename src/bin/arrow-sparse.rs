//! The `arrow-sparse` command-line tool: inspect, dump and convert files of Arrow
//! SparseTensor / Tensor IPC messages, and Parquet archives (`.parquet`).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use arrow_sparse::dims::DimMap;
use arrow_sparse::ipc::{self, MmapReader, ReadOptions, TensorMessage, WriteOptions};
use arrow_sparse::tensor::gcs::best_mapping;
use arrow_sparse::{dump, CompressedAxis, Error, Format, IndexType};
use clap::{CommandFactory, Parser, Subcommand};

#[path = "cli/columns.rs"]
mod columns;

#[cfg(feature = "parquet")]
type CompressionArg = arrow_sparse::parquet::Compression;
#[cfg(not(feature = "parquet"))]
type CompressionArg = String;

/// Inspect, dump and convert sparse tensors stored as Arrow IPC messages or
/// Parquet archives.
///
/// Files ending in `.parquet` are Parquet archives (one tensor each); any other
/// file is a stream of Arrow IPC messages. `dump` and `convert` also read files of
/// record batches (Arrow IPC file or stream, Parquet table) with a sparse tensor
/// column (extension type arrow_sparse.coo/csr/csc/csf/gcs): the tensors of its
/// first such column, row by row (null rows skipped).
///
/// Exit codes: 0 success, 1 error (bad input, I/O), 2 bad command line.
#[derive(Parser)]
#[command(name = "arrow-sparse", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Axis {
    Row,
    Column,
}

#[derive(Subcommand)]
enum Command {
    /// Print a readable summary of every tensor in FILE.
    ///
    /// Example: arrow-sparse inspect tensors.arrow
    Inspect {
        /// A stream of SparseTensor / Tensor messages, or a .parquet archive.
        file: PathBuf,
    },
    /// Print one JSON line per tensor in FILE (format, types, shape, entries).
    ///
    /// Example: arrow-sparse dump tensors.arrow | head -1
    Dump {
        /// A stream of SparseTensor / Tensor messages, a .parquet archive, or a file
        /// of record batches with a sparse tensor column.
        file: PathBuf,
    },
    /// Rewrite every tensor of IN (in another format with --to) and write OUT
    /// (atomically). The file kinds follow the extensions: .parquet is a Parquet
    /// archive (one tensor), anything else a stream of IPC messages.
    ///
    /// Examples:
    ///   arrow-sparse convert in.arrow out.arrow --to csf --index-type int32 --axis-order 2,0,1
    ///   arrow-sparse convert in.arrow out.arrow --to gcs --dimensions 2,0,1 --partitioning 1 --compressed-axis column
    ///   arrow-sparse convert x.arrow x.parquet --row-group-size 1000000 --compression zstd:3
    ///   arrow-sparse convert x.parquet x.arrow
    ///   arrow-sparse convert many.arrow table.arrow --as-column
    Convert {
        /// Input: a stream file or a .parquet archive.
        input: PathBuf,
        /// Output: a stream file or a .parquet archive (written to a temporary file,
        /// then renamed).
        output: PathBuf,
        /// Target format: coo, csr, csc, csf, dense, gcs or dm (default: keep every
        /// tensor as it is).
        #[arg(long)]
        to: Option<Format>,
        /// Index type of the output with --to (int8, int16, int32, int64, uint8,
        /// uint16, uint32; default int64).
        #[arg(long)]
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
        #[arg(long, default_value = "row")]
        compressed_axis: Axis,
        /// DM: the storage format of the reduced tensor.
        #[arg(long, default_value = "coo")]
        storage: Format,
        /// Rows per row group of a .parquet output (default 1048576).
        #[arg(long)]
        row_group_size: Option<usize>,
        /// Compression of a .parquet output: none, zstd (level 1, the default) or
        /// zstd:LEVEL (1-22).
        #[arg(long)]
        compression: Option<CompressionArg>,
        /// Write OUT as one record batch (an Arrow IPC file, or a Parquet table for
        /// .parquet) with an `id` column and a sparse tensor column `tensor`
        /// (extension type arrow_sparse.<format>) instead of SparseTensor messages.
        /// All tensors must share format, value / index types, ndim and dim names.
        #[arg(long)]
        as_column: bool,
    },
}

#[cfg(feature = "parquet")]
fn is_parquet(path: &Path) -> bool {
    arrow_sparse::parquet::is_parquet_path(path)
}

#[cfg(not(feature = "parquet"))]
fn is_parquet(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

#[cfg(not(feature = "parquet"))]
fn no_parquet() -> Error {
    Error::Unsupported(
        "Parquet archives (arrow-sparse was built without the parquet feature)".into(),
    )
}

/// The messages of an input file: zero-copy from a memory-mapped stream, or the
/// one tensor of a Parquet archive.
enum Input {
    Stream(MmapReader),
    /// The tensors of a sparse tensor column.
    Column(Vec<TensorMessage>),
    #[cfg(feature = "parquet")]
    Archive(Box<arrow_sparse::parquet::ParquetReader>),
}

impl Input {
    fn open(path: &Path) -> Result<Input, Error> {
        if let Some(tensors) = columns::read(path)? {
            return Ok(Input::Column(tensors));
        }
        if is_parquet(path) {
            #[cfg(feature = "parquet")]
            return Ok(Input::Archive(Box::new(
                arrow_sparse::parquet::ParquetReader::open(path)?,
            )));
            #[cfg(not(feature = "parquet"))]
            return Err(no_parquet());
        }
        Ok(Input::Stream(open(path)?))
    }

    fn len(&self) -> usize {
        match self {
            Input::Stream(r) => r.len(),
            Input::Column(t) => t.len(),
            #[cfg(feature = "parquet")]
            Input::Archive(_) => 1,
        }
    }

    fn get(&self, i: usize) -> Result<TensorMessage, Error> {
        match self {
            Input::Stream(r) => r.get(i),
            Input::Column(t) => Ok(t[i].clone()),
            #[cfg(feature = "parquet")]
            Input::Archive(r) => r.read(),
        }
    }
}

/// Exit with a usage error (exit code 2).
fn usage(msg: &str) -> ! {
    Cli::command()
        .error(clap::error::ErrorKind::ArgumentConflict, msg)
        .exit()
}

fn open(file: &std::path::Path) -> Result<MmapReader, Error> {
    MmapReader::open_with(file, ReadOptions::default())
}

fn run(cli: Cli) -> Result<(), Error> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match cli.command {
        Command::Inspect { file } if is_parquet(&file) => {
            #[cfg(feature = "parquet")]
            writeln!(out, "{}", inspect_archive(&file)?)?;
            #[cfg(not(feature = "parquet"))]
            return Err(no_parquet());
        }
        Command::Inspect { file } => {
            let reader = open(&file)?;
            writeln!(
                out,
                "{}: {} message(s), {} bytes",
                file.display(),
                reader.len(),
                reader.mapping().len()
            )?;
            for (i, info) in reader.messages().iter().enumerate() {
                let msg = reader.get(i)?;
                let bytes = info.body_offset + info.body_len - info.offset;
                writeln!(out, "{}", dump::summary(i, &msg, Some(bytes)))?;
            }
        }
        Command::Dump { file } => {
            let input = Input::open(&file)?;
            for i in 0..input.len() {
                writeln!(out, "{}", dump::json_line(&input.get(i)?.tensor)?)?;
            }
        }
        Command::Convert {
            input,
            output,
            to,
            index_type,
            axis_order,
            dimensions,
            partitioning,
            compressed_axis,
            storage,
            row_group_size,
            compression,
            as_column,
        } => {
            let axis = match compressed_axis {
                Axis::Row => CompressedAxis::Row,
                Axis::Column => CompressedAxis::Column,
            };
            let to_parquet = is_parquet(&output) && !as_column;
            if !to_parquet && (row_group_size.is_some() || compression.is_some()) {
                usage("--row-group-size and --compression apply to .parquet archives only");
            }
            let reshape = index_type.is_some()
                || axis_order.is_some()
                || dimensions.is_some()
                || partitioning.is_some();
            if to.is_none() && reshape {
                usage("--index-type, --axis-order, --dimensions and --partitioning need --to");
            }
            let index_type = index_type.unwrap_or(IndexType::Int64);
            if to.is_some() && !to_parquet && !as_column {
                // archives hold uint64 indices; IPC messages cannot (libarrow aborts)
                index_type.check_writable()?;
            }
            let source = Input::open(&input)?;
            let convert = |msg: TensorMessage| -> Result<TensorMessage, Error> {
                let Some(to) = to else {
                    return Ok(msg);
                };
                let shape = msg.tensor.shape().to_vec();
                let map = |default: DimMap| -> Result<DimMap, Error> {
                    match (&dimensions, &partitioning) {
                        (None, None) => Ok(default),
                        (d, p) => DimMap::try_new(
                            shape.clone(),
                            d.clone().unwrap_or_else(|| (0..shape.len()).collect()),
                            p.clone().unwrap_or_else(|| default.partitioning().to_vec()),
                        ),
                    }
                };
                let tensor = match to {
                    Format::Gcs => {
                        let (best, _) = best_mapping(&shape, msg.tensor.nnz(), axis)?;
                        msg.tensor.to_gcs(map(best)?, axis, index_type)?
                    }
                    Format::Dm => msg
                        .tensor
                        .to_dm(map(DimMap::identity(shape.clone())?)?, storage)?,
                    _ => msg.tensor.convert(to, index_type, axis_order.as_deref())?,
                };
                Ok(TensorMessage {
                    tensor,
                    custom_metadata: msg.custom_metadata,
                })
            };
            if as_column {
                let converted = (0..source.len())
                    .map(|i| convert(source.get(i)?))
                    .collect::<Result<Vec<_>, Error>>()?;
                columns::write(&output, &converted)?;
            } else if to_parquet {
                #[cfg(feature = "parquet")]
                {
                    use arrow_sparse::parquet;
                    if source.len() != 1 {
                        return Err(Error::Unsupported(format!(
                            "a Parquet archive holds one tensor, {} has {}",
                            input.display(),
                            source.len()
                        )));
                    }
                    let mut options = parquet::WriteOptions::default();
                    if let Some(rows) = row_group_size {
                        options = options.with_row_group_size(rows);
                    }
                    if let Some(c) = compression {
                        options = options.with_compression(c);
                    }
                    parquet::write_parquet(&output, &convert(source.get(0)?)?, &options)?;
                }
                #[cfg(not(feature = "parquet"))]
                {
                    let _ = (compression, convert, source);
                    return Err(no_parquet());
                }
            } else {
                let mut converted = Vec::with_capacity(source.len());
                for i in 0..source.len() {
                    converted.push(convert(source.get(i)?)?);
                }
                ipc::write_file(&output, &converted, &WriteOptions::default())?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// The `inspect` text of a Parquet archive: the tensor, then the row groups, from
/// the footer and the `arrow_sparse` metadata only (no row group is decoded).
#[cfg(feature = "parquet")]
fn inspect_archive(file: &Path) -> Result<String, Error> {
    use arrow_sparse::parquet::{Layout, ParquetReader};
    use std::fmt::Write as _;
    let r = ParquetReader::open(file)?;
    let spec = r.spec();
    let bytes = std::fs::metadata(file)?.len();
    let meta = r.parquet_metadata();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: Parquet archive, 1 tensor, {bytes} bytes",
        file.display()
    );
    let _ = writeln!(s, "tensor 0: {}", spec.format());
    let names: Vec<&str> = (0..spec.shape.len())
        .map(|d| match spec.dim_names.get(d).map(String::as_str) {
            Some("") | None => "-",
            Some(n) => n,
        })
        .collect();
    let _ = writeln!(
        s,
        "  shape:       {:?}  dim names: [{}]",
        spec.shape,
        names.join(", ")
    );
    let _ = writeln!(s, "  value type:  {}", spec.value_type);
    match (spec.index_type(), spec.indptr_type()) {
        (Some(i), Some(p)) => {
            let _ = writeln!(s, "  index type:  {i} (indptr {p})");
        }
        (Some(i), None) => {
            let _ = writeln!(s, "  index type:  {i}");
        }
        _ => {}
    }
    match &spec.layout {
        Layout::Csf { axis_order, .. } => {
            let _ = writeln!(s, "  axis order:  {axis_order:?}");
        }
        Layout::Coo {
            coord_layout,
            canonical,
            ..
        } => {
            let _ = writeln!(
                s,
                "  layout:      {coord_layout:?} coordinates, canonical: {}",
                canonical.unwrap_or(false)
            );
        }
        Layout::Dense { strides } => {
            let _ = writeln!(s, "  strides:     {strides:?} (elements)");
        }
        _ => {}
    }
    let what = if matches!(spec.layout, Layout::Dense { .. }) {
        "elements"
    } else {
        "stored entries"
    };
    let _ = writeln!(s, "  rows:        {} ({what})", r.rows());
    if let Some(g) = meta.row_groups().first() {
        let cols: Vec<String> = g
            .columns()
            .iter()
            .map(|c| {
                let enc: Vec<String> = c.encodings().map(|e| e.to_string()).collect();
                format!("{} ({})", c.column_path().string(), enc.join("/"))
            })
            .collect();
        let _ = writeln!(s, "  columns:     {}", cols.join(", "));
        use ::parquet::basic::Compression as C;
        let compression = match g.column(0).compression() {
            C::UNCOMPRESSED => "none".to_string(),
            C::ZSTD(level) => format!("zstd:{}", level.compression_level()),
            other => other.to_string().to_lowercase(),
        };
        let _ = writeln!(s, "  compression: {compression}");
    }
    let _ = write!(s, "  row groups:  {}", r.num_row_groups());
    for i in 0..r.num_row_groups() {
        let info = r.row_group_info(i)?;
        let ranges: Vec<String> = r
            .columns()
            .iter()
            .zip(&info.ranges)
            .map(|(c, range)| match range {
                Some((lo, hi)) => format!("{c} {lo}..={hi}"),
                None => format!("{c} ?"),
            })
            .collect();
        let _ = write!(
            s,
            "\n    {i}: rows {}..{}, {} bytes, {}",
            info.first_row,
            info.first_row + info.rows,
            info.bytes,
            ranges.join(", ")
        );
    }
    for (k, v) in &spec.custom_metadata {
        let _ = write!(s, "\n  metadata:    {k} = {v}");
    }
    Ok(s)
}

fn main() -> ExitCode {
    // The Parquet reader reports a panic inside the parquet crate's decoder (on a
    // malformed file) as an error; do not print it a second time as a panic.
    #[cfg(feature = "parquet")]
    {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let decoder = info
                .location()
                .is_some_and(|l| l.file().replace('\\', "/").contains("/parquet-"));
            if !decoder {
                default(info)
            }
        }));
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arrow-sparse: error: {e}");
            ExitCode::FAILURE
        }
    }
}
