//! The tensor formats: one module each, a type-erased [`AnyTensor`] for data of
//! unknown type, and the [`Convert`](crate::Convert) trait that turns any format into any other.
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
pub mod level;
pub mod levels;
pub mod validate;

pub use any::AnyTensor;
pub use coo::{AnyCoo, CooTensor, CoordLayout};
pub use csf::{AnyCsf, CsfTensor};
pub use csx::{AnyCsx, CompressedAxis, CsxMatrix};
pub use dense::{AnyDense, DenseTensor};
pub use dm::{AnyDm, DmTensor};
pub use gcs::{AnyGcs, GcsTensor};
pub use level::{AnyLevel, LevelFormat, LevelTensor, LevelType};
pub use validate::{EntryOrder, TensorOptions, Validation};

use std::fmt;

use crate::error::{Error, Result};
use crate::types::Index;

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
    /// A level format: any sequence of dense, compressed and singleton levels
    /// over a permutation of the dimensions ([`LevelTensor`]).
    Level,
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
            Format::Level => "level",
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
            "level" => Format::Level,
            _ => {
                return Err(Error::Parse {
                    what: "format".into(),
                    detail: format!(
                        "unknown format {s:?} (expected coo, csr, csc, csf, dense, gcs, dm or level)"
                    ),
                });
            }
        })
    }
}

/// Reinterpret a buffer of `I` as a buffer of `J` when they are the same type
/// (zero-copy), or convert element by element (checked) when they are not.
pub(crate) fn recast<I: Index, J: Index>(
    b: &arrow_buffer::ScalarBuffer<I>,
    what: &str,
) -> Result<arrow_buffer::ScalarBuffer<J>> {
    if let Some(same) = (b as &dyn std::any::Any).downcast_ref::<arrow_buffer::ScalarBuffer<J>>() {
        return Ok(same.clone());
    }
    Ok(crate::buffer::cast_slice::<I, J>(b, what)?.into())
}
