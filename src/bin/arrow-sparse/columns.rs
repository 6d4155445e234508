//! Sparse tensor columns in the CLI: files of record batches with an
//! `arrow_sparse.*` column (Arrow IPC file or stream, or a Parquet table) as
//! inputs, and `convert --as-column` outputs.

use std::path::Path;

use arrow_sparse::Error;
use arrow_sparse::column::files;
use arrow_sparse::ipc::TensorMessage;

/// The tensors of the first sparse tensor column of `path` (null rows skipped),
/// or `None` when `path` holds SparseTensor messages or is a Parquet archive.
pub fn read(path: &Path) -> Result<Option<Vec<TensorMessage>>, Error> {
    Ok(files::read_tensors(path)?.map(|ts| ts.into_iter().map(TensorMessage::from).collect()))
}

/// Write `messages` as one record batch with an `id` column (0, 1, ...) and a
/// sparse tensor column `tensor` (`column::files::write_tensors`): a Parquet table
/// when `path` ends in `.parquet`, else an Arrow IPC file. Custom metadata of the
/// messages is not kept (a column has one type, described by its extension
/// metadata).
pub fn write(path: &Path, messages: &[TensorMessage]) -> Result<(), Error> {
    files::write_tensors(path, messages.iter().map(|m| &m.tensor))
}
