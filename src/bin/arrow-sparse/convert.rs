//! `convert`: read IN, convert its tensors with `--to`, write OUT, report.

use std::path::{Path, PathBuf};

use arrow_sparse::dims::DimMap;
use arrow_sparse::io::{MtxSymmetry, NpzFlavor};
use arrow_sparse::ipc::TensorMessage;
use arrow_sparse::tensor::gcs::best_mapping;
use arrow_sparse::{CompressedAxis, Error, Format, IndexType};
use serde_json::{Value, json};

use crate::exit::Failure;
use crate::files::{self, FileKind, Input, OutputOptions};
use crate::progress::Progress;
use crate::{
    Axis, BinsparseFormatArg, ConvertArgs, NpzFlavorArg, SymmetryArg, TargetArgs, WriteArgs,
};

/// What a conversion did, for the summary line.
pub struct Summary {
    input: PathBuf,
    input_kind: FileKind,
    output: PathBuf,
    output_kind: FileKind,
    tensors: Vec<TensorMessage>,
    bytes: u64,
}

impl Summary {
    /// One line: `IN (kind) -> OUT (kind): N tensor(s) [format value_type shape nnz], B bytes`.
    pub fn text(&self) -> String {
        let tensors: Vec<String> = self
            .tensors
            .iter()
            .map(|m| {
                let t = &m.tensor;
                format!(
                    "{} {} {:?} nnz {}",
                    t.format(),
                    t.value_type(),
                    t.shape(),
                    t.nnz()
                )
            })
            .collect();
        let shown = if tensors.len() > 3 {
            format!("{}, ...", tensors[..3].join("; "))
        } else {
            tensors.join("; ")
        };
        format!(
            "{} ({}) -> {} ({}): {} tensor(s) [{shown}], {} bytes",
            self.input.display(),
            self.input_kind.name(),
            self.output.display(),
            self.output_kind.name(),
            tensors.len(),
            self.bytes
        )
    }

    /// `{"input", "input_kind", "output", "output_kind", "bytes", "tensors":
    /// [{"format", "value_type", "index_type", "shape", "nnz"}, ...]}`.
    pub fn json(&self) -> Value {
        let tensors: Vec<Value> = self
            .tensors
            .iter()
            .map(|m| {
                let t = &m.tensor;
                json!({
                    "format": t.format().name(),
                    "value_type": t.value_type().name(),
                    "index_type": t.index_type().map(|i| i.name()),
                    "shape": t.shape(),
                    "nnz": t.nnz(),
                })
            })
            .collect();
        json!({
            "input": self.input.display().to_string(),
            "input_kind": self.input_kind.name(),
            "output": self.output.display().to_string(),
            "output_kind": self.output_kind.name(),
            "bytes": self.bytes,
            "tensors": tensors,
        })
    }
}

/// Refuse option combinations that make no sense (exit code 2).
fn check_usage(args: &ConvertArgs, out_kind: FileKind) -> Result<(), Failure> {
    let usage = |m: &str| Err(Failure::usage(m));
    let w = &args.write;
    if w.as_column && !matches!(out_kind, FileKind::Arrow | FileKind::Parquet) {
        return usage("--as-column writes .arrow (IPC file) or .parquet (table) outputs only");
    }
    if w.as_column && args.output_kind.is_some() && FileKind::of(&args.output) != Some(out_kind) {
        return usage("--as-column: name OUT .arrow or .parquet (--output-kind does not apply)");
    }
    if w.as_column && args.output.to_str().is_some_and(crate::store::is_url) {
        return usage(
            "--as-column writes local files (a URL takes a Parquet archive or a dataset)",
        );
    }
    if let Some(refusal) = files::url_refusal(&args.output, out_kind) {
        return usage(&refusal);
    }
    if w.as_column && (w.row_group_size.is_some() || w.compression.is_some()) {
        return usage(
            "--row-group-size and --compression apply to Parquet archives, not to --as-column tables",
        );
    }
    if out_kind != FileKind::Parquet && (w.row_group_size.is_some() || w.compression.is_some()) {
        return usage("--row-group-size and --compression apply to .parquet outputs only");
    }
    if out_kind != FileKind::Npz && w.npz_flavor.is_some() {
        return usage("--npz-flavor applies to .npz outputs only");
    }
    if !matches!(out_kind, FileKind::Npz | FileKind::Hdf5) && w.binsparse_format.is_some() {
        return usage("--binsparse-format applies to .npz and .h5 / .hdf5 outputs only");
    }
    if w.binsparse_format.is_some()
        && w.npz_flavor
            .is_some_and(|f| !matches!(f, NpzFlavorArg::Binsparse))
    {
        return usage("--binsparse-format needs --npz-flavor binsparse (or no --npz-flavor)");
    }
    if out_kind != FileKind::Mtx && w.mtx_symmetry.is_some() {
        return usage("--mtx-symmetry applies to .mtx outputs only");
    }
    let t = &args.target;
    let reshape = t.index_type.is_some()
        || t.axis_order.is_some()
        || t.dimensions.is_some()
        || t.partitioning.is_some();
    if t.to.is_none() && reshape {
        return usage("--index-type, --axis-order, --dimensions and --partitioning need --to");
    }
    if t.levels.is_some() && t.to != Some(Format::Level) {
        return usage("--levels applies to --to level only");
    }
    if let Some(order) = &t.axis_order {
        if t.to != Some(Format::Csf) {
            return usage("--axis-order applies to --to csf only");
        }
        let mut seen = vec![false; order.len()];
        for &a in order {
            if a >= order.len() || std::mem::replace(&mut seen[a], true) {
                return Err(Failure::usage(format!(
                    "--axis-order {}: not an order of the axes (each of {} once)",
                    list(order),
                    list(&(0..order.len()).collect::<Vec<_>>())
                )));
            }
        }
    }
    Ok(())
}

/// `0,1,2`
fn list(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// `--axis-order` must list every axis of every tensor it applies to.
fn check_axis_order(target: &TargetArgs, messages: &[TensorMessage]) -> Result<(), Failure> {
    let Some(order) = &target.axis_order else {
        return Ok(());
    };
    for (i, m) in messages.iter().enumerate() {
        let ndim = m.tensor.shape().len();
        if ndim != order.len() {
            let which = if messages.len() == 1 {
                "the tensor".to_string()
            } else {
                format!("tensor {i}")
            };
            return Err(Failure::usage(format!(
                "--axis-order {} lists {} axes but {which} has {ndim} dimensions (give an order of {})",
                list(order),
                order.len(),
                list(&(0..ndim).collect::<Vec<_>>())
            )));
        }
    }
    Ok(())
}

fn output_options(w: &WriteArgs) -> OutputOptions {
    let mut options = OutputOptions::default();
    #[cfg(feature = "parquet")]
    {
        if let Some(rows) = w.row_group_size {
            options.parquet = options.parquet.with_row_group_size(rows);
        }
        if let Some(c) = w.compression {
            options.parquet = options.parquet.with_compression(c);
        }
    }
    if let Some(f) = w.npz_flavor {
        options.io.npz = options.io.npz.with_flavor(match f {
            NpzFlavorArg::Scipy => NpzFlavor::Scipy,
            NpzFlavorArg::Pydata => NpzFlavor::Pydata,
            NpzFlavorArg::Binsparse => NpzFlavor::Binsparse,
        });
    }
    if let Some(f) = w.binsparse_format {
        use arrow_sparse::io::binsparse::BinsparseFormat as B;
        let bf = match f {
            BinsparseFormatArg::CSR => B::Csr,
            BinsparseFormatArg::CSC => B::Csc,
            BinsparseFormatArg::COO => B::Coo,
            BinsparseFormatArg::COOR => B::Coor,
            BinsparseFormatArg::COOC => B::Cooc,
            BinsparseFormatArg::DCSR => B::Dcsr,
            BinsparseFormatArg::DCSC => B::Dcsc,
            BinsparseFormatArg::CVEC => B::Cvec,
            BinsparseFormatArg::DVEC => B::Dvec,
            BinsparseFormatArg::DMAT => B::Dmat,
            BinsparseFormatArg::DMATR => B::Dmatr,
            BinsparseFormatArg::DMATC => B::Dmatc,
        };
        options.io.npz = options.io.npz.with_binsparse_format(bf);
        options.io.hdf5.binsparse_format = Some(bf);
    }
    if let Some(s) = w.mtx_symmetry {
        options.io.mtx = options.io.mtx.with_symmetry(match s {
            SymmetryArg::General => MtxSymmetry::General,
            SymmetryArg::Symmetric => MtxSymmetry::Symmetric,
            SymmetryArg::SkewSymmetric => MtxSymmetry::SkewSymmetric,
        });
    }
    options
}

/// Convert one tensor as `--to` and its companions say (unchanged without
/// `--to`); the custom metadata is kept.
fn reshape(msg: TensorMessage, target: &TargetArgs) -> Result<TensorMessage, Error> {
    let Some(to) = target.to else {
        return Ok(msg);
    };
    let index_type = target.index_type.unwrap_or(IndexType::Int64);
    let axis = match target.compressed_axis {
        Axis::Row => CompressedAxis::Row,
        Axis::Column => CompressedAxis::Column,
    };
    let shape = msg.tensor.shape().to_vec();
    let map = |default: DimMap| -> Result<DimMap, Error> {
        match (&target.dimensions, &target.partitioning) {
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
        Format::Dm => msg.tensor.to_dm(
            map(DimMap::identity(shape.clone())?)?,
            target.storage,
            index_type,
        )?,
        Format::Level => match &target.levels {
            Some(levels) => msg.tensor.to_level(levels, index_type, index_type)?,
            None => msg.tensor.convert(to, index_type, None)?,
        },
        _ => msg
            .tensor
            .convert(to, index_type, target.axis_order.as_deref())?,
    };
    Ok(TensorMessage {
        tensor,
        custom_metadata: msg.custom_metadata,
    })
}

/// The whole command: read, convert, check, write. Errors carry their exit code.
pub fn run(args: &ConvertArgs, progress: &Progress) -> Result<Summary, Failure> {
    let out_kind = match args.output_kind.or(FileKind::of(&args.output)) {
        Some(kind) => kind,
        None => {
            return Err(Failure::usage(format!(
                "{}: cannot tell which kind of file to write: {}; rename it or give --output-kind",
                args.output.display(),
                FileKind::unknown(&args.output)
            )));
        }
    };
    check_usage(args, out_kind)?;
    let as_column = args.write.as_column;
    if let (Some(_), FileKind::Arrow, false) = (args.target.to, out_kind, as_column) {
        // archives and text files hold uint64 indices; IPC messages cannot
        if let Some(t) = args.target.index_type {
            t.check_writable().map_err(Failure::output)?;
        }
    }
    let input = Input::open(
        &args.input,
        args.read.input_kind,
        &args.read.options(),
        progress,
    )?;
    if !as_column {
        check_count(&args.output, out_kind, &input, args.tensor).map_err(Failure::output)?;
    }
    let messages = input.messages(args.tensor, progress)?;
    check_axis_order(&args.target, &messages)?;
    let messages = match args.target.to {
        None => messages,
        Some(to) => {
            progress.steps(
                format!("converting to {to}"),
                messages.len() as u64,
                "tensors",
            );
            messages
                .into_iter()
                .map(|m| {
                    let r = reshape(m, &args.target);
                    progress.inc(1);
                    r
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(Failure::output)?
        }
    };
    let bytes = if as_column {
        progress.spinner(format!("writing {}", args.output.display()));
        crate::columns::write(&args.output, &messages).map_err(Failure::output)?;
        std::fs::metadata(&args.output)?.len()
    } else {
        files::check_output(&args.output, out_kind, &messages, &input).map_err(Failure::output)?;
        files::write(
            &args.output,
            out_kind,
            &messages,
            &output_options(&args.write),
            progress,
        )
        .map_err(Failure::output)?
    };
    Ok(Summary {
        input: args.input.clone(),
        input_kind: input.kind,
        output: args.output.clone(),
        output_kind: out_kind,
        tensors: messages,
        bytes,
    })
}

/// Before decoding anything: a single-tensor output needs one tensor.
fn check_count(
    output: &Path,
    kind: FileKind,
    input: &Input,
    tensor: Option<usize>,
) -> Result<(), Error> {
    if kind.single_tensor() && tensor.is_none() && input.len() != 1 {
        return Err(Error::Unsupported(format!(
            "{} ({}) holds one tensor and {} holds {}: pick one with --tensor N",
            output.display(),
            kind.describe(),
            input.path.display(),
            input.len()
        )));
    }
    Ok(())
}
