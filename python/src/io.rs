//! Reading and writing every file kind the CLI handles, chosen by extension, with
//! the GIL released while files are read, decoded, validated and written.

use std::path::{Path, PathBuf};

use arrow_sparse::archive::{self, ArchiveCompression as Compression};
use arrow_sparse::column;
use arrow_sparse::io as fileio;
use arrow_sparse::ipc::{self, MmapReader, TensorMessage};
use arrow_sparse::{Error, Validation};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;

use crate::errors::{IntoPy, guarded};
use crate::tensor::Tensor;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Arrow,
    Parquet,
    Text,
}

fn kind(path: &Path) -> Kind {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("parquet") => Kind::Parquet,
        Some("mtx" | "tns" | "npz") => Kind::Text,
        _ => Kind::Arrow,
    }
}

fn validation(validate: bool) -> Validation {
    if validate {
        Validation::Full
    } else {
        Validation::Trusted
    }
}

fn read_all(path: &Path, validate: bool) -> Result<Vec<TensorMessage>, Error> {
    if path.is_dir() && archive::is_dataset_path(path) {
        let options = archive::ArchiveReadOptions::default().with_validation(validation(validate));
        return Ok(vec![
            archive::DatasetReader::open_with(path, &options)?.read()?,
        ]);
    }
    let k = kind(path);
    if k != Kind::Text
        && let Some(ts) = column::files::read_tensors(path)?
    {
        return Ok(ts.into_iter().map(TensorMessage::from).collect());
    }
    match k {
        Kind::Arrow => {
            let options = ipc::StreamReadOptions::default().with_validation(validation(validate));
            ipc::read_tensor_stream(path, &options)
        }
        Kind::Parquet => {
            let options =
                archive::ArchiveReadOptions::default().with_validation(validation(validate));
            Ok(vec![archive::read_archive(path, &options)?])
        }
        Kind::Text => Ok(vec![fileio::read_path(path)?]),
    }
}

/// Name the path in an I/O error that does not (the memory map's open does not).
fn in_path(path: &Path, e: Error) -> Error {
    match e {
        Error::Io(io) if !io.to_string().contains(&*path.to_string_lossy()) => Error::Io(
            std::io::Error::new(io.kind(), format!("{}: {io}", path.display())),
        ),
        other => other,
    }
}

/// `path` when it is an object store URL (`s3://bucket/prefix`,
/// `file:///path`): a `str` with a scheme (`pathlib` folds the `//`, so a
/// `Path` never is one).
fn url_of(path: &Path) -> Option<&str> {
    path.to_str().filter(|s| store::is_url(s))
}

/// Whether `name` (a path or a URL) names a Parquet archive, by its extension.
fn names_archive(name: &str) -> bool {
    archive::is_archive_path(Path::new(name))
}

/// Datasets and archives at object store URLs (the cargo feature
/// `object-store`, on by default).
#[cfg(feature = "object-store")]
mod store {
    use arrow_sparse::Error;
    use arrow_sparse::archive::store::StoreLocation;
    use arrow_sparse::archive::{
        ArchiveReadOptions, ArchiveReader, ArchiveWriteOptions, DatasetReader, DatasetSummary,
        DatasetWriteOptions, WriteSummary,
    };
    use arrow_sparse::ipc::TensorMessage;

    pub(super) fn is_url(s: &str) -> bool {
        arrow_sparse::archive::store::is_url(s)
    }

    /// The tensor at `url`: a Parquet archive when its name says so
    /// ([`super::names_archive`]), else a dataset (as the CLI reads URLs).
    pub(super) fn read(url: &str, options: &ArchiveReadOptions) -> Result<TensorMessage, Error> {
        if super::names_archive(url) {
            open_archive(url, options)?.read()
        } else {
            open_dataset(url, options)?.read()
        }
    }

    /// The Parquet archive at `url`.
    pub(super) fn open_archive(
        url: &str,
        options: &ArchiveReadOptions,
    ) -> Result<ArchiveReader, Error> {
        ArchiveReader::open_store(&StoreLocation::from_url(url)?, options)
    }

    /// The dataset at `url`.
    pub(super) fn open_dataset(
        url: &str,
        options: &ArchiveReadOptions,
    ) -> Result<DatasetReader, Error> {
        DatasetReader::open_store(&StoreLocation::from_url(url)?, options)
    }

    /// Write `message` as the Parquet archive at `url` (staged locally, then
    /// uploaded whole).
    pub(super) fn write_archive(
        url: &str,
        message: &TensorMessage,
        options: &ArchiveWriteOptions,
    ) -> Result<WriteSummary, Error> {
        arrow_sparse::archive::write_archive_to_store(
            &StoreLocation::from_url(url)?,
            message,
            options,
        )
    }

    /// Write `message` as the dataset at `url` (its manifest last: the commit).
    pub(super) fn write_dataset(
        url: &str,
        message: &TensorMessage,
        options: &DatasetWriteOptions,
    ) -> Result<DatasetSummary, Error> {
        arrow_sparse::archive::write_dataset_to_store(
            &StoreLocation::from_url(url)?,
            message,
            options,
        )
    }
}

/// Without the feature every URL is an `UnsupportedError`.
#[cfg(not(feature = "object-store"))]
mod store {
    use arrow_sparse::Error;
    use arrow_sparse::archive::{
        ArchiveReadOptions, ArchiveReader, ArchiveWriteOptions, DatasetReader, DatasetSummary,
        DatasetWriteOptions, WriteSummary,
    };
    use arrow_sparse::ipc::TensorMessage;

    /// Anything with `://`, so that such a path gets the error below rather
    /// than "no such file".
    pub(super) fn is_url(s: &str) -> bool {
        s.contains("://")
    }

    fn off(url: &str) -> Error {
        Error::Unsupported(format!(
            "{url}: object store URLs (arrow_sparse was built without the cargo feature object-store)"
        ))
    }

    pub(super) fn read(url: &str, _: &ArchiveReadOptions) -> Result<TensorMessage, Error> {
        Err(off(url))
    }

    pub(super) fn open_archive(url: &str, _: &ArchiveReadOptions) -> Result<ArchiveReader, Error> {
        Err(off(url))
    }

    pub(super) fn open_dataset(url: &str, _: &ArchiveReadOptions) -> Result<DatasetReader, Error> {
        Err(off(url))
    }

    pub(super) fn write_archive(
        url: &str,
        _: &TensorMessage,
        _: &ArchiveWriteOptions,
    ) -> Result<WriteSummary, Error> {
        Err(off(url))
    }

    pub(super) fn write_dataset(
        url: &str,
        _: &TensorMessage,
        _: &DatasetWriteOptions,
    ) -> Result<DatasetSummary, Error> {
        Err(off(url))
    }
}

/// The error for a URL where only local files are taken.
fn local_only(url: &str, what: &str) -> PyErr {
    crate::errors::to_py(Error::Unsupported(format!(
        "{url}: {what} (at object store URLs, arrow_sparse.read, read_range and read_dataset read archives and datasets; write puts archives and write_dataset datasets)"
    )))
}

/// Every tensor of `path` (see `arrow_sparse.read`).
#[pyfunction]
#[pyo3(signature = (path, *, validate=true))]
pub(crate) fn read(py: Python<'_>, path: PathBuf, validate: bool) -> PyResult<Vec<Tensor>> {
    if let Some(url) = url_of(&path) {
        let options = archive::ArchiveReadOptions::default().with_validation(validation(validate));
        let message = guarded(py, || store::read(url, &options))?;
        return Ok(vec![Tensor::new(message)]);
    }
    let messages = guarded(py, || {
        read_all(&path, validate).map_err(|e| in_path(&path, e))
    })?;
    Ok(messages.into_iter().map(Tensor::new).collect())
}

/// A memory-mapped stream whose messages are decoded when asked for.
#[pyclass(frozen, module = "arrow_sparse._native")]
pub(crate) struct Reader {
    reader: MmapReader,
}

#[pymethods]
impl Reader {
    #[new]
    #[pyo3(signature = (path, *, validate=true))]
    fn new(py: Python<'_>, path: PathBuf, validate: bool) -> PyResult<Reader> {
        if let Some(url) = url_of(&path) {
            return Err(local_only(url, "a memory map needs a local file"));
        }
        let options = ipc::StreamReadOptions::default().with_validation(validation(validate));
        let reader = guarded(py, || {
            MmapReader::open_with(&path, &options).map_err(|e| in_path(&path, e))
        })?;
        Ok(Reader { reader })
    }

    fn __len__(&self) -> usize {
        self.reader.len()
    }

    /// Message `i` (negative counts from the end), decoded and validated now.
    fn get(&self, py: Python<'_>, i: isize) -> PyResult<Tensor> {
        let n = self.reader.len();
        let j = if i < 0 { i + n as isize } else { i };
        if j < 0 || j as usize >= n {
            return Err(PyIndexError::new_err(format!(
                "tensor {i} out of range: the stream holds {n}"
            )));
        }
        let m = guarded(py, || self.reader.get(j as usize))?;
        Ok(Tensor::new(m))
    }

    /// `[(offset, metadata_len, body_offset, body_len)]` of each message.
    fn _offsets(&self) -> Vec<(usize, usize, usize)> {
        self.reader
            .messages()
            .iter()
            .map(|m| (m.offset, m.body_offset, m.body_len))
            .collect()
    }

    /// Address and length of the mapping (for zero-copy checks).
    fn _mapping(&self) -> (usize, usize) {
        let b = self.reader.mapping();
        (b.as_ptr() as usize, b.len())
    }
}

fn compression(name: &str) -> PyResult<Compression> {
    // "none", "zstd" or "zstd:LEVEL", as the CLI's --compression
    name.parse::<Compression>().py_err()
}

/// The kind of file `write` makes of `path`: by a known extension only (an
/// unknown one is refused, as by the CLI, rather than written as a stream).
fn write_kind(path: &Path) -> PyResult<Kind> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("arrow" | "arrows" | "ipc") => Ok(Kind::Arrow),
        Some("parquet") => Ok(Kind::Parquet),
        Some("mtx" | "tns" | "npz") => Ok(Kind::Text),
        _ => Err(PyValueError::new_err(format!(
            "{}: unknown output extension (write .arrow / .arrows / .ipc streams, .parquet, .mtx, .tns or .npz)",
            path.display()
        ))),
    }
}

/// A keyword that applies to one file kind only.
fn only_for(ext: Option<&str>, kind: &str, keyword: &str) -> PyResult<()> {
    if ext == Some(kind) {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{keyword} applies to .{kind} files only"
        )))
    }
}

/// The value named `given` (any case) among `choices`, or a ValueError listing them.
fn choice<T: Copy>(keyword: &str, given: &str, choices: &[(&str, T)]) -> PyResult<T> {
    let lower = given.to_ascii_lowercase();
    choices
        .iter()
        .find(|(name, _)| *name == lower)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<String> = choices.iter().map(|(n, _)| format!("{n:?}")).collect();
            PyValueError::new_err(format!(
                "{keyword} must be one of {}, not {given:?}",
                names.join(", ")
            ))
        })
}

/// The `.npz` / `.mtx` export options from `write`'s keywords, checked against
/// the file kind.
fn export_options(
    path: &Path,
    npz_flavor: Option<&str>,
    binsparse_format: Option<&str>,
    mtx_symmetry: Option<&str>,
) -> PyResult<fileio::ExportOptions> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let mut options = fileio::ExportOptions::default();
    if let Some(f) = npz_flavor {
        only_for(ext.as_deref(), "npz", "npz_flavor")?;
        let flavors = [
            ("scipy", fileio::NpzFlavor::Scipy),
            ("pydata", fileio::NpzFlavor::Pydata),
            ("binsparse", fileio::NpzFlavor::Binsparse),
        ];
        options.npz = options.npz.with_flavor(choice("npz_flavor", f, &flavors)?);
    }
    if let Some(f) = binsparse_format {
        only_for(ext.as_deref(), "npz", "binsparse_format")?;
        if !matches!(
            options.npz.flavor,
            None | Some(fileio::NpzFlavor::Binsparse)
        ) {
            return Err(PyValueError::new_err(
                "binsparse_format= writes a Binsparse archive: npz_flavor must be \"binsparse\" or left out",
            ));
        }
        let format = fileio::binsparse::BinsparseFormat::parse(f).ok_or_else(|| {
            PyValueError::new_err(format!(
                "binsparse_format={f:?} is not a Binsparse format (DVEC, DMAT, DMATR, DMATC, CVEC, CSR, CSC, DCSR, DCSC, COO, COOR, COOC)"
            ))
        })?;
        options.npz = options.npz.with_binsparse_format(format);
    }
    if let Some(sym) = mtx_symmetry {
        only_for(ext.as_deref(), "mtx", "mtx_symmetry")?;
        let symmetries = [
            ("general", fileio::MtxSymmetry::General),
            ("symmetric", fileio::MtxSymmetry::Symmetric),
            ("skew-symmetric", fileio::MtxSymmetry::SkewSymmetric),
        ];
        options.mtx = options
            .mtx
            .with_symmetry(choice("mtx_symmetry", sym, &symmetries)?);
    }
    Ok(options)
}

/// Write `tensors` to `path` by extension, atomically (see `arrow_sparse.write`).
#[pyfunction]
#[pyo3(signature = (path, tensors, *, row_group_size=None, compression=None, sync=true, as_column=false, npz_flavor=None, binsparse_format=None, mtx_symmetry=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn write(
    py: Python<'_>,
    path: PathBuf,
    tensors: Vec<Py<Tensor>>,
    row_group_size: Option<usize>,
    compression: Option<&str>,
    sync: bool,
    as_column: bool,
    npz_flavor: Option<&str>,
    binsparse_format: Option<&str>,
    mtx_symmetry: Option<&str>,
) -> PyResult<()> {
    let url = url_of(&path);
    if let Some(url) = url
        && (!names_archive(url) || as_column)
    {
        return Err(local_only(
            url,
            "write puts a Parquet archive (.parquet) at a URL, and other kinds and tables in local files",
        ));
    }
    let messages: Vec<TensorMessage> = tensors.iter().map(|t| t.get().message.clone()).collect();
    let k = write_kind(&path)?;
    let export = export_options(&path, npz_flavor, binsparse_format, mtx_symmetry)?;
    if as_column {
        if k == Kind::Text {
            return Err(PyValueError::new_err(
                "as_column writes .arrow (an Arrow IPC file) or .parquet (a table) only",
            ));
        }
        if row_group_size.is_some() || compression.is_some() || !sync {
            return Err(PyValueError::new_err(
                "row_group_size, compression and sync=False do not apply to as_column tables",
            ));
        }
        return guarded(py, || {
            column::files::write_tensors(&path, messages.iter().map(|m| &m.tensor))
        });
    }
    if k != Kind::Arrow && messages.len() != 1 {
        return Err(PyValueError::new_err(format!(
            "{} holds exactly one tensor, {} given (write a stream, .arrow, for several)",
            path.display(),
            messages.len()
        )));
    }
    if k != Kind::Parquet && (row_group_size.is_some() || compression.is_some()) {
        return Err(PyValueError::new_err(
            "row_group_size and compression apply to .parquet files only",
        ));
    }
    if k != Kind::Arrow && !sync {
        return Err(PyValueError::new_err(
            "sync=False applies to .arrow streams only (other files are always synced)",
        ));
    }
    let mut parquet_options = archive::ArchiveWriteOptions::default();
    if let Some(n) = row_group_size {
        parquet_options = parquet_options.with_row_group_size(n);
    }
    if let Some(c) = compression {
        parquet_options = parquet_options.with_compression(self::compression(c)?);
    }
    guarded(py, || match k {
        Kind::Arrow => {
            let options = ipc::StreamWriteOptions::default().with_sync(sync);
            ipc::write_tensor_stream(&path, &messages, &options)
        }
        Kind::Parquet => match url {
            Some(url) => store::write_archive(url, &messages[0], &parquet_options).map(|_| ()),
            None => archive::write_archive(&path, &messages[0], &parquet_options).map(|_| ()),
        },
        Kind::Text => fileio::write_path_with(&path, &messages[0], &export),
    })
}

/// Write one tensor as a dataset directory (see `arrow_sparse.write_dataset`):
/// `(rows, parts, bytes)`.
#[pyfunction]
#[pyo3(signature = (path, tensor, *, partition_by, rows_per_file, row_group_size=None, compression=None))]
pub(crate) fn write_dataset(
    py: Python<'_>,
    path: PathBuf,
    tensor: Py<Tensor>,
    partition_by: usize,
    rows_per_file: usize,
    row_group_size: Option<usize>,
    compression: Option<&str>,
) -> PyResult<(usize, usize, u64)> {
    let message = tensor.get().message.clone();
    // PLAIN floats, as the CLI writes datasets: Spark's vectorized reader
    // refuses BYTE_STREAM_SPLIT
    let mut parquet_options = archive::ArchiveWriteOptions::default().with_byte_stream_split(false);
    if let Some(n) = row_group_size {
        parquet_options = parquet_options.with_row_group_size(n);
    }
    if let Some(c) = compression {
        parquet_options = parquet_options.with_compression(self::compression(c)?);
    }
    let options = archive::DatasetWriteOptions::new(partition_by, rows_per_file)
        .with_archive_options(parquet_options);
    let s = guarded(py, || match url_of(&path) {
        Some(url) => store::write_dataset(url, &message, &options),
        None => archive::write_dataset(&path, &message, &options),
    })?;
    Ok((s.rows, s.parts, s.bytes))
}

/// A dataset's tensor, whole or the entries in `start..stop` along `dim` (see
/// `arrow_sparse.read_dataset`): the tensor and the number of parts opened.
#[pyfunction]
#[pyo3(signature = (path, *, dim=None, start=None, stop=None, validate=true))]
pub(crate) fn read_dataset(
    py: Python<'_>,
    path: PathBuf,
    dim: Option<usize>,
    start: Option<usize>,
    stop: Option<usize>,
    validate: bool,
) -> PyResult<(Tensor, usize)> {
    if dim.is_none() && (start.is_some() || stop.is_some()) {
        return Err(PyValueError::new_err("start and stop need dim="));
    }
    let options = archive::ArchiveReadOptions::default().with_validation(validation(validate));
    let (message, parts) = guarded(py, || {
        let r = match url_of(&path) {
            Some(url) => store::open_dataset(url, &options)?,
            None => {
                archive::DatasetReader::open_with(&path, &options).map_err(|e| in_path(&path, e))?
            }
        };
        match dim {
            None => Ok((r.read()?, r.parts().len())),
            Some(d) => {
                let got = dataset_range(&r, d, start.unwrap_or(0)..stop.unwrap_or(usize::MAX))?;
                Ok((got.message, got.parts_read))
            }
        }
    })?;
    Ok((Tensor::new(message), parts))
}

/// A range read and what it decoded.
struct RangeDecoded {
    message: TensorMessage,
    /// Parts opened (1 for an archive).
    parts_read: usize,
    row_groups_read: usize,
    /// Row groups of the files opened.
    row_groups_total: usize,
}

impl RangeDecoded {
    /// `tensor` with the custom metadata of `spec` (the file's or dataset's).
    fn new(
        tensor: arrow_sparse::AnyTensor,
        spec: &archive::TensorSpec,
        parts_read: usize,
        (row_groups_read, row_groups_total): (usize, usize),
    ) -> Self {
        let custom_metadata = spec.custom_metadata.clone();
        RangeDecoded {
            message: TensorMessage {
                tensor,
                custom_metadata,
            },
            parts_read,
            row_groups_read,
            row_groups_total,
        }
    }
}

fn dataset_range(
    r: &archive::DatasetReader,
    dim: usize,
    range: std::ops::Range<usize>,
) -> Result<RangeDecoded, Error> {
    let got = r.read_range(dim, range)?;
    let groups = (got.row_groups_read, got.row_groups_total);
    Ok(RangeDecoded::new(
        got.tensor,
        r.spec(),
        got.parts_read,
        groups,
    ))
}

fn archive_range(
    r: &archive::ArchiveReader,
    dim: usize,
    range: std::ops::Range<usize>,
) -> Result<RangeDecoded, Error> {
    let got = r.read_range(dim, range)?;
    let groups = (got.row_groups_read, got.row_groups_total);
    Ok(RangeDecoded::new(got.tensor, r.spec(), 1, groups))
}

/// The entries of a Parquet archive or a dataset (a path or a URL) whose
/// coordinate along `dim` lies in `start..stop` (see `arrow_sparse.read_range`):
/// the tensor, the parts opened (1 for an archive), the row groups decoded and
/// the row groups of the files opened.
#[pyfunction]
#[pyo3(signature = (path, dim, *, start=None, stop=None, validate=true))]
pub(crate) fn read_range(
    py: Python<'_>,
    path: PathBuf,
    dim: usize,
    start: Option<usize>,
    stop: Option<usize>,
    validate: bool,
) -> PyResult<(Tensor, usize, usize, usize)> {
    let options = archive::ArchiveReadOptions::default().with_validation(validation(validate));
    let range = start.unwrap_or(0)..stop.unwrap_or(usize::MAX);
    let got = guarded(py, || match url_of(&path) {
        Some(url) if names_archive(url) => {
            archive_range(&store::open_archive(url, &options)?, dim, range)
        }
        Some(url) => dataset_range(&store::open_dataset(url, &options)?, dim, range),
        None if path.is_dir() => {
            let r = archive::DatasetReader::open_with(&path, &options)
                .map_err(|e| in_path(&path, e))?;
            dataset_range(&r, dim, range)
        }
        None if kind(&path) == Kind::Parquet => {
            let r = archive::ArchiveReader::open_with(&path, &options)
                .map_err(|e| in_path(&path, e))?;
            archive_range(&r, dim, range)
        }
        None => Err(Error::Unsupported(format!(
            "{}: a range read takes a Parquet archive (.parquet) or a dataset",
            path.display()
        ))),
    })?;
    Ok((
        Tensor::new(got.message),
        got.parts_read,
        got.row_groups_read,
        got.row_groups_total,
    ))
}
