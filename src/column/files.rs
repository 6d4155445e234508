//! Files of record batches holding sparse tensor columns: Arrow IPC files and
//! streams (arrow-ipc's `FileWriter` / `FileReader` / `TensorStreamReader`) and, with the
//! `parquet` feature, Parquet tables (the parquet crate's `ArrowWriter` and
//! reader; the extension type survives through the Arrow schema Parquet stores).
//!
//! These are thin conveniences over the standard writers and readers, which work
//! on such batches directly.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_schema::SchemaRef;

use super::{SparseTensorArray, checked, sparse_columns};
use crate::error::{Error, Result};
use crate::limit::ReadLimit;
use crate::tensor::AnyTensor;

/// What a file holds, judged from its first bytes (and its name for Parquet).
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::RecordBatch;
/// use arrow_schema::Schema;
/// use arrow_sparse::column::files::{self, FileKind};
/// use arrow_sparse::column::SparseTensorArray;
/// use arrow_sparse::{ipc, AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
/// // a stream of tensor messages, as arrow_sparse::ipc writes it
/// let messages = dir.path().join("tensors.arrow");
/// ipc::write_tensor_stream(&messages, &[t.clone().into()], &ipc::StreamWriteOptions::default())?;
/// assert_eq!(files::detect(&messages)?, FileKind::TensorMessages);
/// // an Arrow IPC file of record batches with a sparse tensor column
/// let column = SparseTensorArray::from_tensors([&t])?;
/// let schema = Arc::new(Schema::new(vec![column.field("t")]));
/// let batch = RecordBatch::try_new(schema.clone(), vec![column.into_array()])?;
/// let table = dir.path().join("table.arrow");
/// files::write_batches(&table, schema, &[batch])?;
/// assert_eq!(files::detect(&table)?, FileKind::IpcFile);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// Arrow `SparseTensor` / `Tensor` messages (what [`crate::ipc`] reads), or
    /// something else: the tensor reader reports the problem.
    TensorMessages,
    /// An Arrow IPC file of record batches (`ARROW1` magic).
    IpcFile,
    /// An Arrow IPC stream of record batches (starts with a Schema message).
    IpcStream,
    /// A Parquet file (`.parquet`): a table, or an arrow-sparse archive.
    Parquet,
}

/// Largest Schema message this probe reads.
const MAX_SCHEMA: usize = 16 << 20;

/// Tell files of record batches from files of tensor messages.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Int64Array, RecordBatch};
/// use arrow_schema::{DataType, Field, Schema};
/// use arrow_sparse::column::files::{detect, FileKind};
/// use arrow_sparse::Error;
/// let dir = tempfile::tempdir()?;
/// // Parquet is told by the name alone (the file is not opened)
/// assert_eq!(detect(&dir.path().join("table.parquet"))?, FileKind::Parquet);
/// // an Arrow IPC stream of record batches starts with a Schema message
/// let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
/// let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![1, 2]))])?;
/// let stream = dir.path().join("table.arrows");
/// let mut w = arrow_ipc::writer::StreamWriter::try_new(std::fs::File::create(&stream)?, &schema)?;
/// w.write(&batch)?;
/// w.finish()?;
/// assert_eq!(detect(&stream)?, FileKind::IpcStream);
/// // anything else is left to the tensor message reader to judge
/// std::fs::write(dir.path().join("junk"), b"abc")?;
/// assert_eq!(detect(&dir.path().join("junk"))?, FileKind::TensorMessages);
/// assert!(matches!(detect(&dir.path().join("missing.arrow")), Err(Error::Io(_))));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn detect(path: impl AsRef<Path>) -> Result<FileKind> {
    let path = path.as_ref();
    let is_parquet = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
    if is_parquet {
        return Ok(FileKind::Parquet);
    }
    let mut f = File::open(path)?;
    let mut head = [0u8; 8];
    let n = read_up_to(&mut f, &mut head)?;
    if n >= 6 && &head[..6] == b"ARROW1" {
        return Ok(FileKind::IpcFile);
    }
    if n < 8 {
        return Ok(FileKind::TensorMessages);
    }
    // an encapsulated message: [0xFFFFFFFF] int32 length, flatbuffer (or the
    // pre-1.0 form without the continuation marker)
    let word = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let (len, carried) = if head[..4] == [0xFF; 4] {
        (word(&head[4..]), &head[8..])
    } else {
        (word(&head[..4]), &head[4..])
    };
    let Some(len) = usize::try_from(len).ok().filter(|&l| l <= MAX_SCHEMA) else {
        return Ok(FileKind::TensorMessages);
    };
    let mut meta = vec![0u8; len];
    let k = carried.len().min(len);
    meta[..k].copy_from_slice(&carried[..k]);
    if read_up_to(&mut f, &mut meta[k..])? < len - k {
        return Ok(FileKind::TensorMessages);
    }
    let header = arrow_ipc::root_as_message(&meta)
        .ok()
        .map(|m| m.header_type());
    Ok(if header == Some(arrow_ipc::MessageHeader::Schema) {
        FileKind::IpcStream
    } else {
        FileKind::TensorMessages
    })
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Options for reading files of record batches.
///
/// ```
/// use arrow_sparse::column::files::ColumnReadOptions;
/// use arrow_sparse::limit::ReadLimit;
/// assert_eq!(ColumnReadOptions::default().limit, ReadLimit::DEFAULT);
/// let trusted = ColumnReadOptions::default().with_limit(ReadLimit::bytes(8 << 30));
/// assert_eq!(trusted.limit.budget(0), 8 << 30);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ColumnReadOptions {
    /// The memory reading may take, relative to the file's size (default
    /// [`ReadLimit::DEFAULT`]: 16 ×, at least 64 MiB). Arrow IPC batches are
    /// slices of the file read once (at most about twice its size); for Parquet
    /// tables it bounds, before any page is decoded, the decompressed pages and
    /// every decoded value (`format/SPEC.md` section 11).
    pub limit: ReadLimit,
}

impl ColumnReadOptions {
    /// Set the memory limit.
    ///
    /// ```
    /// use arrow_sparse::column::files::ColumnReadOptions;
    /// use arrow_sparse::limit::ReadLimit;
    /// assert_eq!(ColumnReadOptions::default().with_limit(ReadLimit::UNLIMITED).limit, ReadLimit::UNLIMITED);
    /// ```
    pub fn with_limit(mut self, limit: ReadLimit) -> Self {
        self.limit = limit;
        self
    }
}

/// Every record batch of an Arrow IPC file or stream, or of a Parquet file read as
/// a table, with its schema (default [`ColumnReadOptions`]).
///
/// Hostile files give errors, never panics or allocations out of proportion to
/// the file: the file is checked before arrow-ipc or the parquet crate decode it
/// (block, message and buffer ranges, field nodes, page headers, the memory
/// limit), and those decoders run under a last-resort guard.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::RecordBatch;
/// use arrow_schema::Schema;
/// use arrow_sparse::column::{files, SparseTensorArray, COO_NAME};
/// use arrow_sparse::{ipc, AnyTensor, CooTensor, Error};
/// let dir = tempfile::tempdir()?;
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
/// let column = SparseTensorArray::from_tensors([&t])?;
/// let schema = Arc::new(Schema::new(vec![column.field("t")]));
/// let batch = RecordBatch::try_new(schema.clone(), vec![column.into_array()])?;
/// for name in ["table.arrow", "table.parquet"] {
///     let path = dir.path().join(name);
///     files::write_batches(&path, schema.clone(), &[batch.clone()])?;
///     let (read_schema, batches) = files::read_batches(&path)?;
///     assert_eq!(read_schema.field(0).extension_type_name(), Some(COO_NAME));
///     assert_eq!(SparseTensorArray::from_batch(&batches[0], "t")?.value(0)?, Some(t.clone()));
///     // a damaged file is an error
///     let mut bytes = std::fs::read(&path)?;
///     let n = bytes.len();
///     bytes[n / 2..n - 12].fill(0xFF);
///     std::fs::write(&path, &bytes)?;
///     assert!(files::read_batches(&path).is_err());
/// }
/// // a file of tensor messages is not a table
/// let messages = dir.path().join("tensors.arrow");
/// ipc::write_tensor_stream(&messages, &[t.into()], &ipc::StreamWriteOptions::default())?;
/// assert!(matches!(files::read_batches(&messages), Err(Error::Unsupported(_))));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn read_batches(path: impl AsRef<Path>) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    read_batches_with(path, &ColumnReadOptions::default())
}

/// [`read_batches`] with options.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Int64Array, RecordBatch};
/// use arrow_schema::{DataType, Field, Schema};
/// use arrow_sparse::column::files::{self, ColumnReadOptions};
/// use arrow_sparse::{limit::ReadLimit, Error};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("ids.parquet");
/// let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
/// let ids = Int64Array::from_iter_values(0..100_000);
/// let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids)])?;
/// files::write_batches(&path, schema, &[batch])?;
/// // 800 kB of decoded values is more than a limit of 100 kB allows
/// let tight = ColumnReadOptions::default().with_limit(ReadLimit::bytes(100_000));
/// assert!(matches!(files::read_batches_with(&path, &tight), Err(Error::Limit { .. })));
/// let (_, batches) = files::read_batches_with(&path, &ColumnReadOptions::default())?;
/// assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 100_000);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn read_batches_with(
    path: impl AsRef<Path>,
    options: &ColumnReadOptions,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    read_projected(path.as_ref(), options, &|_| Ok(None))
}

/// Every record batch of `path`, decoding only the columns `pick` chooses from
/// the schema.
fn read_projected(
    path: &Path,
    options: &ColumnReadOptions,
    pick: checked::Projection,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    match detect(path)? {
        FileKind::IpcFile => checked::read_file(&read_whole(path)?, pick),
        FileKind::IpcStream => checked::read_stream(&read_whole(path)?, pick),
        FileKind::Parquet => read_parquet(path, options, pick),
        FileKind::TensorMessages => Err(Error::Unsupported(format!(
            "{} is not a file of record batches (Arrow IPC file / stream or Parquet)",
            path.display()
        ))),
    }
}

/// The whole file, once, as one buffer (its size is what it allocates).
fn read_whole(path: &Path) -> Result<Buffer> {
    Ok(Buffer::from_vec(std::fs::read(path)?))
}

#[cfg(feature = "parquet")]
fn read_parquet(
    path: &Path,
    options: &ColumnReadOptions,
    pick: checked::Projection,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    use crate::archive::checked::{self as pq, BoundedFile};
    use crate::guard::{Dependency, guard};
    use parquet::arrow::ProjectionMask;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let file = BoundedFile::new(File::open(path)?)?;
    let name = path.display().to_string();
    let b = guard(Dependency::Parquet, "footer", || {
        Ok(ParquetRecordBatchReaderBuilder::try_new(file.try_clone()?)?)
    })?;
    pq::check_footer(b.metadata(), file.bytes())?;
    let roots = pick(b.schema())?;
    let descr = b.parquet_schema();
    let (mask, leaves) = match &roots {
        None => (ProjectionMask::all(), None),
        Some(r) => {
            if let Some(&bad) = r.iter().find(|&&c| c >= b.schema().fields().len()) {
                return Err(Error::Unsupported(format!("column {bad} does not exist")));
            }
            let leaves: Vec<usize> = (0..descr.num_columns())
                .filter(|&l| r.contains(&descr.get_column_root_idx(l)))
                .collect();
            (
                ProjectionMask::roots(descr, r.iter().copied()),
                Some(leaves),
            )
        }
    };
    let groups: Vec<usize> = (0..b.metadata().num_row_groups()).collect();
    pq::check_chunks(
        &file,
        b.metadata(),
        &groups,
        leaves.as_deref(),
        true,
        &options.limit,
        &name,
    )?;
    let schema = match &roots {
        None => b.schema().clone(),
        Some(r) => std::sync::Arc::new(b.schema().project(r)?),
    };
    let reader = guard(Dependency::Parquet, "row groups", || {
        Ok(b.with_projection(mask).build()?)
    })?;
    let mut batches = Vec::new();
    let mut reader = reader;
    while let Some(batch) = guard(Dependency::Parquet, "row group", || {
        Ok(reader.next().transpose()?)
    })? {
        batches.push(batch);
    }
    Ok((schema, batches))
}

#[cfg(not(feature = "parquet"))]
fn read_parquet(
    _: &Path,
    _: &ColumnReadOptions,
    _: checked::Projection,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    Err(Error::Unsupported(
        "Parquet (arrow-sparse was built without the parquet feature)".into(),
    ))
}

/// Whether a Parquet file is a table with a sparse tensor column (rather than an
/// arrow-sparse archive of one tensor).
#[cfg(feature = "parquet")]
fn parquet_has_column(path: &Path) -> Result<bool> {
    use crate::archive::checked::BoundedFile;
    use crate::guard::{Dependency, guard};
    let file = BoundedFile::new(File::open(path)?)?;
    let b = guard(Dependency::Parquet, "footer", || {
        Ok(parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)?)
    })?;
    Ok(!sparse_columns(b.schema()).is_empty())
}

#[cfg(not(feature = "parquet"))]
fn parquet_has_column(_: &Path) -> Result<bool> {
    Ok(false)
}

/// The tensors of the first sparse tensor column of a file of record batches, in
/// row order (null rows skipped), every row validated; `None` when the file holds
/// tensor messages or is an arrow-sparse Parquet archive. This is how the CLI
/// reads its inputs.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::RecordBatch;
/// use arrow_schema::Schema;
/// use arrow_sparse::column::{files, SparseTensorArray, SparseTensorType};
/// use arrow_sparse::{ipc, AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![0], 1.0)])?.into();
/// let b: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.0)])?.into();
/// let column = SparseTensorArray::from_rows(&SparseTensorType::of(&a)?, [Some(&a), None, Some(&b)])?;
/// let schema = Arc::new(Schema::new(vec![column.field("t")]));
/// let table = dir.path().join("table.arrow");
/// files::write_batches(&table, schema.clone(), &[RecordBatch::try_new(schema, vec![column.into_array()])?])?;
/// assert_eq!(files::read_tensors(&table)?, Some(vec![a.clone(), b])); // the null row is skipped
/// // a file of tensor messages: None (read it with arrow_sparse::ipc)
/// let messages = dir.path().join("tensors.arrow");
/// ipc::write_tensor_stream(&messages, &[a.into()], &ipc::StreamWriteOptions::default())?;
/// assert_eq!(files::read_tensors(&messages)?, None);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn read_tensors(path: impl AsRef<Path>) -> Result<Option<Vec<AnyTensor>>> {
    read_tensors_with(path, &ColumnReadOptions::default())
}

/// [`read_tensors`] with options. Only the sparse tensor column is decoded (the
/// other columns are checked, not decoded).
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::RecordBatch;
/// use arrow_schema::Schema;
/// use arrow_sparse::column::{files, SparseTensorArray};
/// use arrow_sparse::{limit::ReadLimit, AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
/// let column = SparseTensorArray::from_tensors([&t])?;
/// let schema = Arc::new(Schema::new(vec![column.field("t")]));
/// let table = dir.path().join("table.parquet");
/// files::write_batches(&table, schema.clone(), &[RecordBatch::try_new(schema, vec![column.into_array()])?])?;
/// let options = files::ColumnReadOptions::default().with_limit(ReadLimit::bytes(1 << 20));
/// assert_eq!(files::read_tensors_with(&table, &options)?, Some(vec![t]));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn read_tensors_with(
    path: impl AsRef<Path>,
    options: &ColumnReadOptions,
) -> Result<Option<Vec<AnyTensor>>> {
    let path = path.as_ref();
    match detect(path)? {
        FileKind::TensorMessages => return Ok(None),
        FileKind::Parquet if !parquet_has_column(path)? => return Ok(None),
        _ => {}
    }
    let pick = |schema: &arrow_schema::Schema| match sparse_columns(schema).first() {
        Some(&c) => Ok(Some(vec![c])),
        None => Err(Error::Unsupported(format!(
            "{} has no arrow_sparse.* column",
            path.display()
        ))),
    };
    let (schema, batches) = read_projected(path, options, &pick)?;
    let mut out = Vec::new();
    for batch in &batches {
        let array = SparseTensorArray::try_new(schema.field(0), batch.column(0))?;
        for t in array.iter() {
            out.extend(t?);
        }
    }
    Ok(Some(out))
}

/// Write record batches to `path` atomically (temporary file + rename): a Parquet
/// file (zstd) when the name ends in `.parquet`, else an Arrow IPC file.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::RecordBatch;
/// use arrow_schema::Schema;
/// use arrow_sparse::column::{files, SparseTensorArray};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
/// let column = SparseTensorArray::from_tensors([&t])?;
/// let schema = Arc::new(Schema::new(vec![column.field("t")]));
/// let batch = RecordBatch::try_new(schema.clone(), vec![column.into_array()])?;
/// for (name, magic) in [("table.arrow", &b"ARROW1"[..]), ("table.parquet", &b"PAR1"[..])] {
///     let path = dir.path().join(name);
///     files::write_batches(&path, schema.clone(), &[batch.clone(), batch.clone()])?;
///     assert!(std::fs::read(&path)?.starts_with(magic));
///     let (_, batches) = files::read_batches(&path)?;
///     assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
/// }
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn write_batches(
    path: impl AsRef<Path>,
    schema: SchemaRef,
    batches: &[RecordBatch],
) -> Result<()> {
    let path = path.as_ref();
    crate::atomic::write_atomic(path, |f| {
        if detect_name_parquet(path) {
            return write_parquet(f, schema, batches);
        }
        let mut w = arrow_ipc::writer::FileWriter::try_new(std::io::BufWriter::new(f), &schema)?;
        for b in batches {
            w.write(b)?;
        }
        w.finish()?;
        std::io::Write::flush(w.get_mut())?;
        Ok(())
    })
}

/// Write `tensors` as one record batch of two columns, `id` (int64: 0, 1, ...)
/// and the sparse tensor column `tensor`, to an Arrow IPC file or, when `path`
/// ends in `.parquet`, a Parquet table (see [`write_batches`]): what
/// `arrow-sparse convert --as-column` writes. The tensors share one column type
/// (format, value and index types, ndim); custom metadata is not kept.
///
/// ```
/// use arrow_sparse::column::files;
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
/// let b: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![0], 2.0)])?.into();
/// let path = dir.path().join("t.parquet");
/// files::write_tensors(&path, [&a, &b])?;
/// assert_eq!(files::read_tensors(&path)?, Some(vec![a, b]));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn write_tensors<'a>(
    path: impl AsRef<Path>,
    tensors: impl IntoIterator<Item = &'a AnyTensor>,
) -> Result<()> {
    let column = SparseTensorArray::from_tensors(tensors)?;
    let schema = std::sync::Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
        column.field("tensor"),
    ]));
    let ids: arrow_array::ArrayRef = std::sync::Arc::new(
        arrow_array::Int64Array::from_iter_values(0..column.len() as i64),
    );
    let batch = RecordBatch::try_new(schema.clone(), vec![ids, column.into_array()])?;
    write_batches(path, schema, &[batch])
}

fn detect_name_parquet(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

#[cfg(feature = "parquet")]
fn write_parquet(file: &mut File, schema: SchemaRef, batches: &[RecordBatch]) -> Result<()> {
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::WriterProperties;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, Some(props))?;
    for b in batches {
        w.write(b)?;
    }
    w.close()?;
    Ok(())
}

#[cfg(not(feature = "parquet"))]
fn write_parquet(_: &mut File, _: SchemaRef, _: &[RecordBatch]) -> Result<()> {
    Err(Error::Unsupported(
        "Parquet (arrow-sparse was built without the parquet feature)".into(),
    ))
}
