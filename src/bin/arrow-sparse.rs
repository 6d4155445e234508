//! The `arrow-sparse` command-line tool: inspect, dump and convert files of Arrow
//! SparseTensor / Tensor IPC messages.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use arrow_sparse::dims::DimMap;
use arrow_sparse::ipc::{self, MmapReader, ReadOptions, TensorMessage, WriteOptions};
use arrow_sparse::tensor::gcs::best_mapping;
use arrow_sparse::{dump, CompressedAxis, Error, Format, IndexType};
use clap::{Parser, Subcommand};

/// Inspect, dump and convert sparse tensors stored as Arrow IPC messages.
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
        /// A stream of SparseTensor / Tensor messages.
        file: PathBuf,
    },
    /// Print one JSON line per tensor in FILE (format, types, shape, entries).
    ///
    /// Example: arrow-sparse dump tensors.arrow | head -1
    Dump {
        /// A stream of SparseTensor / Tensor messages.
        file: PathBuf,
    },
    /// Rewrite every tensor of IN in another format and write OUT (atomically).
    ///
    /// Examples:
    ///   arrow-sparse convert in.arrow out.arrow --to csf --index-type int32 --axis-order 2,0,1
    ///   arrow-sparse convert in.arrow out.arrow --to gcs --dimensions 2,0,1 --partitioning 1 --compressed-axis column
    Convert {
        /// Input stream file.
        input: PathBuf,
        /// Output stream file (written to a temporary file, then renamed).
        output: PathBuf,
        /// Target format: coo, csr, csc, csf, dense, gcs or dm.
        #[arg(long)]
        to: Format,
        /// Index type of the output (int8, int16, int32, int64, uint8, uint16, uint32).
        #[arg(long, default_value = "int64")]
        index_type: IndexType,
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
    },
}

fn open(file: &std::path::Path) -> Result<MmapReader, Error> {
    MmapReader::open_with(file, ReadOptions::default())
}

fn run(cli: Cli) -> Result<(), Error> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match cli.command {
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
            let reader = open(&file)?;
            for msg in reader.iter() {
                writeln!(out, "{}", dump::json_line(&msg?.tensor)?)?;
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
        } => {
            let axis = match compressed_axis {
                Axis::Row => CompressedAxis::Row,
                Axis::Column => CompressedAxis::Column,
            };
            index_type.check_writable()?;
            let reader = open(&input)?;
            let mut converted = Vec::with_capacity(reader.len());
            for msg in reader.iter() {
                let msg = msg?;
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
                converted.push(TensorMessage {
                    tensor,
                    custom_metadata: msg.custom_metadata,
                });
            }
            ipc::write_file(&output, &converted, &WriteOptions::default())?;
        }
    }
    out.flush()?;
    Ok(())
}

fn main() -> ExitCode {
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
