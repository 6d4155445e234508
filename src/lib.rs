//! # arrow-sparse
//!
//! Sparse N-dimensional tensors exchanged through Apache Arrow: COO, CSR / CSC,
//! CSF and dense strided tensors, read and written as Arrow `SparseTensor` /
//! `Tensor` IPC messages byte-compatible with Arrow C++ (libarrow 26).
//!
//! * [`tensor`]: the formats. Typed tensors ([`CooTensor`], [`CsxMatrix`],
//!   [`CsfTensor`], [`DenseTensor`]) are generic over the value type ([`Value`])
//!   and index type ([`Index`]); [`AnyTensor`] holds a tensor of unknown type.
//!   Each format has one validating constructor; [`Convert`] converts between them.
//! * [`ipc`]: encode / decode one message, [`ipc::TensorStreamWriter`] /
//!   [`ipc::TensorStreamReader`] for a sequence of messages, and [`ipc::MmapReader`] for
//!   zero-copy reads from memory-mapped files.
//! * [`column`](mod@column): many tensors in one Arrow column (extension types
//!   `arrow_sparse.coo` / `.csr` / `.csc` / `.csf` / `.gcs`), in record batches
//!   written with arrow-ipc or Parquet and read by pyarrow.
//! * [`dump`]: the JSON-lines and human-readable summaries the CLI prints.
//!
//! ```
//! use arrow_sparse::{ipc, AnyTensor, CooTensor, Convert};
//! let coo = CooTensor::<f64, i64>::from_entries(vec![3, 4], &[(vec![0, 1], 2.5), (vec![2, 3], -1.0)])?;
//! let csr: AnyTensor = coo.to_csx::<i32, i32>(arrow_sparse::CompressedAxis::Row)?.into();
//! let mut bytes = Vec::new();
//! let mut w = ipc::TensorStreamWriter::new(&mut bytes);
//! w.write(&csr)?;
//! w.finish()?;
//! let back: Vec<_> = ipc::TensorStreamReader::new(&bytes[..]).collect::<Result<_, _>>()?;
//! assert_eq!(back[0].tensor, csr);
//! # Ok::<(), arrow_sparse::Error>(())
//! ```
#![warn(missing_docs)]
#![warn(unreachable_pub)]

#[cfg(feature = "parquet")]
pub mod archive;
mod atomic;
pub mod buffer;
pub mod column;
mod compat;
mod convert;
pub mod dims;
pub mod dump;
pub mod error;
mod guard;
pub mod io;
pub mod ipc;
pub mod kernels;
pub mod limit;
pub mod tensor;
pub mod types;

#[cfg(feature = "parquet")]
pub use archive::{read_archive, write_archive};
pub use buffer::{IndexBuffer, IndexSlice, ValueBuffer, ValueSlice};
#[cfg(feature = "parquet")]
#[doc(hidden)]
#[allow(deprecated)]
pub use compat::parquet;
#[cfg(feature = "parquet")]
#[doc(hidden)]
#[allow(deprecated)]
pub use compat::parquet::{read_parquet, write_parquet};
pub use convert::Convert;
pub use error::{Error, Result};
pub use tensor::{
    AnyCoo, AnyCsf, AnyCsx, AnyDense, AnyDm, AnyGcs, AnyTensor, CompressedAxis, CooTensor,
    CoordLayout, CsfTensor, CsxMatrix, DenseTensor, DmTensor, EntryOrder, Format, GcsTensor,
    TensorOptions, Validation,
};
pub use types::{Index, IndexType, Value, ValueType};

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
