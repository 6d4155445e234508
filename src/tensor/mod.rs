//! The tensor formats: one module each, a type-erased [`AnyTensor`] for data of
//! unknown type, and the [`Convert`] trait that turns any format into any other.
//!
//! Every format has one struct holding type-erased buffers (`AnyCoo`, `AnyCsx`, ...)
//! with one validating constructor, and a typed view (`CooTensor<V, I>`, ...) that
//! is built through that same constructor and shares its buffers.
//!
//! ```
//! use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format, IndexType};
//! let coo = CooTensor::<f32, i64>::from_entries(vec![2, 3], &[(vec![0, 2], 1.5), (vec![1, 0], -2.0)])?;
//! let csc = coo.to_csx::<i32, i32>(CompressedAxis::Column)?; // typed conversion
//! let any: AnyTensor = csc.into(); // type-erased
//! let csf = any.convert(Format::Csf, IndexType::Int16, None)?; // erased conversion
//! assert_eq!((csf.format(), csf.nnz()), (Format::Csf, 2));
//! assert_eq!(csf.get::<f32>(&[1, 0])?, Some(-2.0));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

pub mod any;
pub mod coo;
pub mod csf;
pub mod csx;
pub mod dense;
pub mod dm;
pub mod gcs;
pub mod levels;
pub mod validate;

pub use any::AnyTensor;
pub use coo::{AnyCoo, CooTensor, CoordLayout};
pub use csf::{AnyCsf, CsfTensor};
pub use csx::{AnyCsx, CompressedAxis, CsxMatrix};
pub use dense::{AnyDense, DenseTensor};
pub use dm::{AnyDm, DmTensor};
pub use gcs::{AnyGcs, GcsTensor};
pub use validate::Validation;

use std::fmt;

use crate::error::{Error, Result};
use crate::types::{Index, Value};

/// The storage format of a tensor.
///
/// Parsed from and displayed as its [`name`](Format::name).
///
/// ```
/// use arrow_sparse::{AnyTensor, CooTensor, Error, Format};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2], &[(vec![1], 1.0)])?.into();
/// assert_eq!(t.format(), Format::Coo);
/// assert_eq!("csc".parse::<Format>()?, Format::Csc);
/// assert_eq!(Format::Csf.to_string(), "csf");
/// assert!(matches!("bsr".parse::<Format>(), Err(Error::Parse { .. })));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Dense strided tensor.
    Dense,
    /// Coordinate list.
    Coo,
    /// Compressed sparse row matrix.
    Csr,
    /// Compressed sparse column matrix.
    Csc,
    /// Compressed sparse fibers.
    Csf,
    /// Generalized compressed storage: an N-D tensor reduced to a CSR / CSC matrix.
    Gcs,
    /// Dimensions mapping: an N-D view over a storage tensor of any format.
    Dm,
}

impl Format {
    /// The lower-case name used in the CLI and the JSON dump.
    ///
    /// ```
    /// use arrow_sparse::Format;
    /// assert_eq!(Format::Dense.name(), "dense");
    /// assert_eq!(Format::Gcs.name(), "gcs");
    /// assert_eq!(Format::Csr.name().parse::<Format>()?, Format::Csr); // round trip
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Format::Dense => "dense",
            Format::Coo => "coo",
            Format::Csr => "csr",
            Format::Csc => "csc",
            Format::Csf => "csf",
            Format::Gcs => "gcs",
            Format::Dm => "dm",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "dense" => Format::Dense,
            "coo" => Format::Coo,
            "csr" => Format::Csr,
            "csc" => Format::Csc,
            "csf" => Format::Csf,
            "gcs" => Format::Gcs,
            "dm" => Format::Dm,
            _ => {
                return Err(Error::Parse {
                    what: "format".into(),
                    detail: format!(
                        "unknown format {s:?} (expected coo, csr, csc, csf, dense, gcs or dm)"
                    ),
                });
            }
        })
    }
}

/// Conversions from one format to every other. Implemented by every typed tensor.
///
/// `to_coo` keeps every stored entry (duplicates included) in storage order; the
/// other conversions go through it and sort as the target format requires, keeping
/// duplicates (except [`to_dense`](Convert::to_dense), which sums them).
///
/// ```
/// use arrow_sparse::{Convert, CooTensor, CompressedAxis};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 5.0), (vec![0, 1], 1.5)])?;
/// let csr = coo.to_csx::<i32, i32>(CompressedAxis::Row)?;
/// assert_eq!(csr.indptr().as_ref(), &[0, 1, 2]);
/// let dense = csr.to_dense()?;
/// assert_eq!(dense.values().as_ref(), &[0.0, 1.5, 0.0, 0.0, 0.0, 5.0]);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub trait Convert<V: Value> {
    /// All stored entries as COO with index type `I` (row-major coordinates, storage
    /// order, duplicates kept; the canonical flag is set when the entries happen to
    /// be sorted and unique). Fails if a coordinate does not fit `I`.
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, Convert, CsxMatrix, Error};
    /// // a 200 x 2 CSC matrix, stored column by column: (150, 0) = 3, then (0, 1) = 2
    /// let csc = CsxMatrix::<f64, i32>::try_new(
    ///     CompressedAxis::Column, vec![200, 2], vec![0, 1, 2].into(), vec![150, 0].into(), vec![3.0, 2.0].into())?;
    /// let coo = csc.to_coo::<i64>()?;
    /// assert_eq!(coo.coords().as_ref(), &[150, 0, 0, 1]); // row-major coordinates, storage order
    /// assert_eq!(coo.values().as_ref(), &[3.0, 2.0]);
    /// assert!(!coo.is_canonical()); // (150, 0) comes before (0, 1)
    /// assert!(matches!(csc.to_coo::<i8>(), Err(Error::Overflow { .. }))); // 150 does not fit i8
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    fn to_coo<I: Index>(&self) -> Result<CooTensor<V, I>>;

    /// The dense row-major tensor (duplicates summed). Fails if the element count
    /// overflows or cannot be allocated.
    ///
    /// ```
    /// use arrow_sparse::{Convert, CooTensor};
    /// // (0, 1) is stored twice: the dense tensor holds the sum
    /// let coo = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1), (vec![1, 0], 5), (vec![0, 1], 2)])?;
    /// let dense = coo.to_dense()?;
    /// assert_eq!(dense.shape(), &[2, 2]);
    /// assert_eq!(dense.values().as_ref(), &[0, 3, 5, 0]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    fn to_dense(&self) -> Result<DenseTensor<V>> {
        self.to_coo::<i64>()?.coo_to_dense()
    }

    /// A CSR or CSC matrix (2-D tensors only), by a counting sort
    /// ([`kernels::convert::coo_to_csx`](crate::kernels::convert::coo_to_csx)).
    ///
    /// ```
    /// use arrow_sparse::{CompressedAxis, Convert, CooTensor};
    /// // [[0, 0, 1], [2, 0, 0]] as CSC with int32 indices and int64 indptr
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 0], 2.0), (vec![0, 2], 1.0)])?;
    /// let csc = coo.to_csx::<i32, i64>(CompressedAxis::Column)?;
    /// assert_eq!(csc.indptr().as_ref(), &[0, 1, 1, 2]);
    /// assert_eq!(csc.indices().as_ref(), &[1, 0]);
    /// assert_eq!(csc.values().as_ref(), &[2.0, 1.0]);
    /// // a 3-D tensor is not a matrix
    /// let cube = CooTensor::<f64, i64>::from_entries(vec![2, 2, 2], &[])?;
    /// assert!(cube.to_csx::<i32, i32>(CompressedAxis::Row).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    fn to_csx<I: Index, P: Index>(&self, axis: CompressedAxis) -> Result<CsxMatrix<V, I, P>> {
        crate::kernels::convert::coo_to_csx(&self.to_coo::<I>()?, axis)
    }

    /// A CSF tensor with the given axis order (ndim >= 2), by a radix sort
    /// ([`kernels::convert::coo_to_csf`](crate::kernels::convert::coo_to_csf)).
    ///
    /// ```
    /// use arrow_sparse::{Convert, CooTensor};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 1, 3], 2.0), (vec![0, 1, 2], 1.0)])?;
    /// let csf = coo.to_csf::<i32, i32>(&[1, 0, 2])?; // dimension 1 outermost
    /// assert_eq!(csf.axis_order(), &[1, 0, 2]);
    /// assert_eq!(csf.indices()[0].as_ref(), &[1]); // one fiber, at d1 = 1
    /// assert_eq!(csf.indices()[1].as_ref(), &[0, 1]); // under it, d0 = 0 and d0 = 1
    /// assert_eq!(csf.indptr()[0].as_ref(), &[0, 2]);
    /// assert_eq!(csf.get(&[1, 1, 3]), Some(2.0));
    /// assert!(coo.to_csf::<i32, i32>(&[0, 0, 2]).is_err()); // not a permutation
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    fn to_csf<I: Index, P: Index>(&self, axis_order: &[usize]) -> Result<CsfTensor<V, I, P>> {
        crate::kernels::convert::coo_to_csf(&self.to_coo::<I>()?, axis_order)
    }
}

/// Reinterpret a buffer of `I` as a buffer of `J` when they are the same type
/// (zero-copy), or convert element by element (checked) when they are not.
pub(crate) fn recast<I: Index, J: Index>(
    b: &arrow_buffer::ScalarBuffer<I>,
    what: &str,
) -> Result<arrow_buffer::ScalarBuffer<J>> {
    if let Some(same) = J::unwrap(&I::wrap(b.clone())) {
        return Ok(same.clone());
    }
    Ok(crate::buffer::cast_slice::<I, J>(b, what)?.into())
}
