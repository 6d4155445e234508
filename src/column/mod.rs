//! Sparse tensor columns: many tensors in one Arrow column, as extension arrays.
//!
//! Each row of a column of extension type `arrow_sparse.coo`, `arrow_sparse.csr`,
//! `arrow_sparse.csc`, `arrow_sparse.csf` or `arrow_sparse.gcs` is one tensor. The
//! storage is a struct of list columns (the tensor's buffers) and the constants of
//! the column (value and index types, number of dimensions, dimension names, CSF
//! axis order, GCS map) are JSON in the field's `ARROW:extension:metadata`
//! (`format/SPEC.md` section 10). Such columns sit next to ordinary columns in a
//! `RecordBatch` and travel through arrow-ipc's `FileWriter` / `TensorStreamWriter`, the
//! parquet crate's `ArrowWriter` and pyarrow (`python/arrow_sparse_ext.py`).
//!
//! * [`SparseTensorArray::from_tensors`] builds a column from tensors (copying
//!   their buffers once, into the column's child buffers).
//! * [`SparseTensorArray::try_new`] checks a column read from anywhere (storage
//!   type, metadata, and every row through its format's validating constructor);
//!   [`SparseTensorArray::value`] then returns row `i` as an [`AnyTensor`](crate::AnyTensor) whose
//!   buffers are slices of the column's child buffers (no copy).
//! * [`files`]: read and write record-batch files (Arrow IPC file or stream, Parquet).
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{ArrayRef, Int64Array, RecordBatch};
//! use arrow_schema::{Field, Schema};
//! use arrow_sparse::column::SparseTensorArray;
//! use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
//!
//! let tensors: Vec<AnyTensor> = (0..3)
//!     .map(|k| {
//!         let coo = CooTensor::<f64, i64>::from_entries(vec![4, 5], &[(vec![k, 1], 1.5), (vec![3, k], -2.0)])?;
//!         Ok(coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into())
//!     })
//!     .collect::<arrow_sparse::Result<_>>()?;
//! let column = SparseTensorArray::from_tensors(&tensors)?;
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("id", arrow_schema::DataType::Int64, false),
//!     column.field("tensor"),
//! ]));
//! let ids: ArrayRef = Arc::new(Int64Array::from(vec![10, 11, 12]));
//! let batch = RecordBatch::try_new(schema, vec![ids, column.into_array()])?;
//!
//! // ... write `batch` with arrow-ipc or parquet, read it back, then:
//! let read = SparseTensorArray::from_batch(&batch, "tensor")?;
//! assert_eq!(read.value(2)?, Some(tensors[2].clone()));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

mod array;
mod checked;
mod extension;
pub mod files;
mod meta;
mod write;

pub use array::SparseTensorArray;

/// Renamed to [`files`] (`column::io` read as a second `io` module beside
/// [`crate::io`], which reads and writes other file kinds).
#[deprecated(since = "0.2.0", note = "renamed to `column::files`")]
pub mod io {
    pub use super::files::*;
}
pub use extension::{CooType, CscType, CsfType, CsrType, GcsType};
#[allow(deprecated)]
pub use meta::VERSION;
pub use meta::{
    COLUMN_METADATA_VERSION, COO_NAME, CSC_NAME, CSF_NAME, CSR_NAME, GCS_NAME, SparseTensorType,
};

use arrow_schema::{Field, Schema};

/// Whether a field is a sparse tensor column (its extension name is one of
/// `arrow_sparse.coo` / `.csr` / `.csc` / `.csf` / `.gcs`).
///
/// ```
/// use arrow_schema::{DataType, Field};
/// use arrow_sparse::column::{is_sparse_field, SparseTensorArray};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
/// let column = SparseTensorArray::from_tensors([&t])?;
/// assert!(is_sparse_field(&column.field("t")));
/// assert!(!is_sparse_field(&Field::new("id", DataType::Int64, false)));
/// // the same storage type without the extension name is not one
/// assert!(!is_sparse_field(&Field::new("t", column.data_type().storage_type(), true)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn is_sparse_field(field: &Field) -> bool {
    field
        .metadata()
        .get(crate::ipc::extension::EXTENSION_NAME)
        .is_some_and(|n| meta::format_of(n).is_some())
}

/// The positions of the sparse tensor columns of a schema.
///
/// ```
/// use arrow_schema::{DataType, Field, Schema};
/// use arrow_sparse::column::{sparse_columns, SparseTensorArray};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
/// let column = SparseTensorArray::from_tensors([&t])?;
/// let schema = Schema::new(vec![
///     Field::new("id", DataType::Int64, false),
///     column.field("a"),
///     Field::new("label", DataType::Utf8, true),
///     column.field("b"),
/// ]);
/// assert_eq!(sparse_columns(&schema), [1, 3]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn sparse_columns(schema: &Schema) -> Vec<usize> {
    (0..schema.fields().len())
        .filter(|&i| is_sparse_field(schema.field(i)))
        .collect()
}
