//! Fast conversions: counting sorts (O(nnz + extent)) instead of comparison sorts,
//! zero-copy shortcuts when the input is already in the target order, and
//! parallel passes where they pay. Every output is the unique result of a stable
//! sort, so it does not depend on the number of threads.
//!
//! These are the kernels behind [`Convert`](crate::Convert) and
//! [`AnyTensor::convert`](crate::AnyTensor::convert); they live in the conversion
//! layer, below the other kernels (which convert an operand where an operation
//! needs it), and are re-exported here.
//!
//! ```
//! use arrow_sparse::kernels::convert::{coo_to_csx, transpose_csx};
//! use arrow_sparse::{CompressedAxis, CooTensor};
//! let coo = CooTensor::<f64, i32>::from_entries(vec![2, 3], &[(vec![1, 0], 1.0), (vec![0, 2], 2.0)])?;
//! let csr = coo_to_csx::<f64, i32, i64>(&coo, CompressedAxis::Row)?;
//! let csc = transpose_csx(&csr)?; // the same matrix, compressed by column
//! assert_eq!((csc.axis(), csc.get(&[0, 2]), csc.get(&[1, 0])), (CompressedAxis::Column, Some(2.0), Some(1.0)));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

pub use crate::convert::kernels::{
    canonicalize, coo_to_csf, coo_to_csx, dense_to_coo, dense_to_csf, dense_to_csx,
    sort_permutation, transpose_csx,
};
