//! # arrow-sparse
//!
//! Sparse N-dimensional tensors exchanged through Apache Arrow: COO, CSR / CSC,
//! CSF and dense strided tensors, read and written as Arrow `SparseTensor` /
//! `Tensor` IPC messages byte-compatible with Arrow C++ (libarrow 26).
//!
//! The modules, from the lowest layer up ([`error`] and [`limit`] serve them all):
//!
//! * [`types`], [`buffer`]: value and index types ([`Value`], [`Index`],
//!   [`ValueType`], [`IndexType`]) and the typed zero-copy buffers every tensor
//!   holds, owned, received or memory-mapped ([`ValueBuffer`], [`IndexBuffer`]).
//! * [`dims`]: dimension maps (the N-D to 2-D reduction of GCS, DM's maps) and views
//!   (permute, select, slice, take, reshape, broadcast, rotate).
//! * [`tensor`]: the formats. Typed tensors ([`CooTensor`], [`CsxMatrix`],
//!   [`CsfTensor`], [`DenseTensor`], [`GcsTensor`], [`DmTensor`]) are generic over
//!   the value type and index type; [`AnyTensor`] holds a tensor of unknown type.
//!   Each format has one validating constructor (`try_new`, with [`TensorOptions`]);
//!   [`Convert`] converts between them.
//! * [`kernels`]: SpMV / SpMM, TTV / MTTKRP, element-wise operations and reductions
//!   on the buffers where they lie, and the conversion kernels.
//! * [`ipc`]: encode / decode one message, [`ipc::TensorStreamWriter`] /
//!   [`ipc::TensorStreamReader`] for a sequence of messages, and [`ipc::MmapReader`] for
//!   zero-copy reads from memory-mapped files.
//! * [`column`](mod@column): many tensors in one Arrow column (extension types
//!   `arrow_sparse.coo` / `.csr` / `.csc` / `.csf` / `.gcs`), in record batches
//!   written with arrow-ipc or Parquet and read by pyarrow.
//! * [`archive`] (feature `parquet`): Parquet archives of tensors, one row per
//!   stored element, read back exactly or by coordinate range.
//! * [`io`]: Matrix Market (`.mtx`), FROSTT (`.tns`) and NumPy (`.npz`) files.
//! * [`limit`]: how much memory a reader may use for the bytes it reads;
//!   [`error`]: the one [`Error`] type every fallible function returns;
//!   [`cache`]: the machine's cache sizes, which the blocked kernels size their
//!   blocks from.
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

mod alloc;
#[cfg(feature = "parquet")]
pub mod archive;
mod atomic;
pub mod buffer;
pub mod cache;
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
    AnyCoo, AnyCsf, AnyCsx, AnyDense, AnyDm, AnyGcs, AnyLevel, AnyTensor, CompressedAxis,
    CooTensor, CoordLayout, CsfTensor, CsxMatrix, DenseTensor, DmTensor, EntryOrder, Format,
    GcsTensor, LevelFormat, LevelTensor, LevelType, TensorOptions, Validation,
};
pub use types::{Index, IndexType, Value, ValueType};

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
