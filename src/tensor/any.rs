//! [`AnyTensor`]: a tensor of any format, value type and index type, as read from a
//! file of unknown content.
//!
//! ```
//! use arrow_sparse::{AnyTensor, CooTensor, Format, ValueType};
//! let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![4], &[(vec![3], 7)])?.into();
//! assert_eq!((t.format(), t.value_type(), t.shape()), (Format::Coo, ValueType::Int32, &[4usize][..]));
//! let typed = t.to_coo::<i32, i16>()?; // typed again, with another index type
//! assert_eq!(typed.values().as_ref(), &[7]);
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use super::{
    AnyCoo, AnyCsf, AnyCsx, AnyDense, AnyDm, AnyGcs, AnyLevel, CompressedAxis, CooTensor,
    CsfTensor, CsxMatrix, DenseTensor, DmTensor, Format, GcsTensor, LevelTensor,
};
use crate::buffer::IndexBuffer;
use crate::dims::DimMap;
use crate::error::{Error, Result};
use crate::tensor::{EntryOrder, TensorOptions};
use crate::types::{Index, IndexType, Value, ValueType};
use crate::{with_index_type, with_value_type};

/// A tensor of any format and element types. Cheap to clone (buffers are shared).
///
/// ```
/// use arrow_sparse::{AnyTensor, DenseTensor, Format};
/// let t: AnyTensor = DenseTensor::<f64>::try_new(vec![2, 2], vec![0.0, 1.0, 0.0, 2.0].into())?.into();
/// match &t {
///     AnyTensor::Dense(d) => assert_eq!(d.shape(), &[2, 2]),
///     _ => unreachable!(),
/// }
/// assert_eq!((t.format(), t.nnz()), (Format::Dense, 2)); // non-zeros of a dense tensor
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AnyTensor {
    /// A dense strided tensor.
    Dense(AnyDense),
    /// A COO tensor.
    Coo(AnyCoo),
    /// A CSR or CSC matrix.
    Csx(AnyCsx),
    /// A CSF tensor.
    Csf(AnyCsf),
    /// A GCS tensor (N-D, stored as a reduced CSR / CSC matrix).
    Gcs(AnyGcs),
    /// A DM tensor (N-D view over a storage tensor).
    Dm(AnyDm),
    /// A level tensor (any sequence of dense, compressed and singleton levels).
    Level(AnyLevel),
}

fn type_mismatch(expected: ValueType, found: ValueType) -> Error {
    Error::Type {
        what: "value type".into(),
        expected: expected.name().into(),
        found: found.name().into(),
    }
}

fn internal(what: &str) -> Error {
    Error::Unsupported(format!("internal type dispatch failed for {what}"))
}

impl AnyTensor {
    /// The storage format.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// assert_eq!(t.format(), arrow_sparse::Format::Csr);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn format(&self) -> Format {
        match self {
            AnyTensor::Dense(_) => Format::Dense,
            AnyTensor::Coo(_) => Format::Coo,
            AnyTensor::Csx(c) if c.axis() == CompressedAxis::Row => Format::Csr,
            AnyTensor::Csx(_) => Format::Csc,
            AnyTensor::Csf(_) => Format::Csf,
            AnyTensor::Gcs(_) => Format::Gcs,
            AnyTensor::Dm(_) => Format::Dm,
            AnyTensor::Level(_) => Format::Level,
        }
    }

    /// The value type.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// assert_eq!(t.value_type(), arrow_sparse::ValueType::Float64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_type(&self) -> ValueType {
        match self {
            AnyTensor::Dense(t) => t.value_type(),
            AnyTensor::Coo(t) => t.value_type(),
            AnyTensor::Csx(t) => t.value_type(),
            AnyTensor::Csf(t) => t.value_type(),
            AnyTensor::Gcs(t) => t.value_type(),
            AnyTensor::Dm(t) => t.value_type(),
            AnyTensor::Level(t) => t.value_type(),
        }
    }

    /// The type of the coordinates / indices buffers (`None` for dense tensors;
    /// for DM, the storage's).
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// assert_eq!(t.index_type(), Some(arrow_sparse::IndexType::Int32));
    /// let dense: AnyTensor = arrow_sparse::DenseTensor::<f64>::try_new(vec![1], vec![0.0].into())?.into();
    /// assert_eq!(dense.index_type(), None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn index_type(&self) -> Option<IndexType> {
        match self {
            AnyTensor::Dense(_) => None,
            AnyTensor::Coo(t) => Some(t.index_type()),
            AnyTensor::Csx(t) => Some(t.index_type()),
            AnyTensor::Csf(t) => Some(t.index_type()),
            AnyTensor::Gcs(t) => Some(t.index_type()),
            AnyTensor::Dm(t) => t.storage().index_type(),
            AnyTensor::Level(t) => Some(t.index_type()),
        }
    }

    /// The type of the indptr buffers (CSX and CSF only).
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// assert_eq!(t.indptr_type(), Some(arrow_sparse::IndexType::Int64));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indptr_type(&self) -> Option<IndexType> {
        match self {
            AnyTensor::Csx(t) => Some(t.indptr_type()),
            AnyTensor::Csf(t) => Some(t.indptr_type()),
            AnyTensor::Gcs(t) => Some(t.matrix().indptr_type()),
            AnyTensor::Dm(t) => t.storage().indptr_type(),
            AnyTensor::Level(t) => Some(t.indptr_type()),
            _ => None,
        }
    }

    /// Extents (the logical N-D shape for GCS and DM).
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// assert_eq!(t.shape(), &[2, 3]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        match self {
            AnyTensor::Dense(t) => t.shape(),
            AnyTensor::Coo(t) => t.shape(),
            AnyTensor::Csx(t) => t.shape(),
            AnyTensor::Csf(t) => t.shape(),
            AnyTensor::Gcs(t) => t.shape(),
            AnyTensor::Dm(t) => t.shape(),
            AnyTensor::Level(t) => t.shape(),
        }
    }

    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// assert_eq!(t.dim_names(), &["", ""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        match self {
            AnyTensor::Dense(t) => t.dim_names(),
            AnyTensor::Coo(t) => t.dim_names(),
            AnyTensor::Csx(t) => t.dim_names(),
            AnyTensor::Csf(t) => t.dim_names(),
            AnyTensor::Gcs(t) => t.dim_names(),
            AnyTensor::Dm(t) => t.dim_names(),
            AnyTensor::Level(t) => t.dim_names(),
        }
    }

    /// The dimension map of a GCS or DM tensor.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// use arrow_sparse::{dims::DimMap, IndexType};
    /// assert!(t.dim_map().is_none());
    /// let map = DimMap::try_new(vec![2, 3], vec![1, 0], vec![1])?;
    /// let gcs = t.to_gcs(map.clone(), CompressedAxis::Row, IndexType::Int32)?;
    /// assert_eq!(gcs.dim_map(), Some(&map));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_map(&self) -> Option<&DimMap> {
        match self {
            AnyTensor::Gcs(t) => Some(t.map()),
            AnyTensor::Dm(t) => Some(t.map()),
            _ => None,
        }
    }

    /// The CSF axis order, for CSF tensors.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// use arrow_sparse::{Format, IndexType};
    /// assert_eq!(t.axis_order(), None);
    /// let csf = t.convert(Format::Csf, IndexType::Int32, Some(&[1, 0]))?;
    /// assert_eq!(csf.axis_order(), Some(&[1usize, 0][..]));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn axis_order(&self) -> Option<&[usize]> {
        match self {
            AnyTensor::Csf(t) => Some(t.axis_order()),
            AnyTensor::Level(t) => Some(t.format().axis_order()),
            _ => None,
        }
    }

    /// Number of stored entries; for a dense tensor, the number of non-zero
    /// elements (O(size)); for a DM tensor, the number of entries its views show
    /// (O(storage nnz)).
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// assert_eq!(t.nnz(), 3);
    /// // a dense tensor counts its non-zero elements
    /// let dense: AnyTensor = arrow_sparse::DenseTensor::<i8>::try_new(vec![3], vec![0, 5, 0].into())?.into();
    /// assert_eq!(dense.nnz(), 1);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn nnz(&self) -> usize {
        match self {
            AnyTensor::Dense(t) => with_value_type!(t.value_type(), V => {
                let mut n = 0usize;
                if let Some(d) = t.downcast::<V>() {
                    // a dense walk cannot fail
                    let _ = d.for_each(|_, v| n += usize::from(!v.is_zero()));
                }
                n
            }),
            AnyTensor::Coo(t) => t.nnz(),
            AnyTensor::Csx(t) => t.nnz(),
            AnyTensor::Csf(t) => t.nnz(),
            AnyTensor::Gcs(t) => t.nnz(),
            AnyTensor::Level(t) => t.nnz(),
            AnyTensor::Dm(t) => with_value_type!(t.value_type(), V => {
                let mut n = 0usize;
                // an error can only come from trusted-invalid storage: count what was seen
                let _ = t.for_each_entry::<V>(&mut |_, _| n += 1);
                n
            }),
        }
    }

    /// Bytes held by the index buffers (coordinates, indices, indptr).
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// // indptr: 3 x int64, indices: 3 x int32
    /// assert_eq!(t.index_bytes(), 3 * 8 + 3 * 4);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn index_bytes(&self) -> usize {
        let sum = |b: &[IndexBuffer]| b.iter().map(|x| x.inner().len()).sum::<usize>();
        match self {
            AnyTensor::Dense(_) => 0,
            AnyTensor::Coo(t) => t.coords().inner().len(),
            AnyTensor::Csx(t) => t.indptr().inner().len() + t.indices().inner().len(),
            AnyTensor::Csf(t) => sum(t.indptr()) + sum(t.indices()),
            AnyTensor::Gcs(t) => {
                t.matrix().indptr().inner().len() + t.matrix().indices().inner().len()
            }
            AnyTensor::Dm(t) => t.storage().index_bytes(),
            AnyTensor::Level(t) => {
                let opt = |b: &[Option<IndexBuffer>]| {
                    b.iter().flatten().map(|x| x.inner().len()).sum::<usize>()
                };
                opt(t.positions()) + opt(t.coordinates())
            }
        }
    }

    /// Bytes held by the value buffer.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// assert_eq!(t.value_bytes(), 3 * 8);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_bytes(&self) -> usize {
        match self {
            AnyTensor::Dense(t) => t.values().inner().len(),
            AnyTensor::Coo(t) => t.values().inner().len(),
            AnyTensor::Csx(t) => t.values().inner().len(),
            AnyTensor::Csf(t) => t.values().inner().len(),
            AnyTensor::Gcs(t) => t.matrix().values().inner().len(),
            AnyTensor::Dm(t) => t.storage().value_bytes(),
            AnyTensor::Level(t) => t.values().inner().len(),
        }
    }

    /// Replace the dimension names (one per dimension, or none to clear them).
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// let named = t.with_dim_names(vec!["row".into(), "col".into()])?;
    /// assert_eq!(named.dim_names(), &["row", "col"]);
    /// // an empty list clears the names
    /// assert_eq!(named.clone().with_dim_names(vec![])?.dim_names(), &["", ""]);
    /// // one name per dimension
    /// assert!(named.with_dim_names(vec!["x".into()]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_dim_names(self, names: Vec<String>) -> Result<AnyTensor> {
        let names = if names.is_empty() {
            vec![String::new(); self.shape().len()]
        } else {
            names
        };
        super::validate::check_dim_names(&names, self.shape().len())?;
        Ok(match self {
            AnyTensor::Dense(t) => AnyTensor::Dense(t.with_names(names)?),
            AnyTensor::Coo(t) => AnyTensor::Coo(AnyCoo::try_new(
                t.shape().to_vec(),
                t.layout(),
                EntryOrder::from(t.is_canonical()),
                t.coords().clone(),
                t.values().clone(),
                &TensorOptions::trusted().with_dim_names(names),
            )?),
            AnyTensor::Csx(t) => AnyTensor::Csx(AnyCsx::try_new(
                t.shape().to_vec(),
                t.axis(),
                t.indptr().clone(),
                t.indices().clone(),
                t.values().clone(),
                &TensorOptions::trusted().with_dim_names(names),
            )?),
            AnyTensor::Csf(t) => AnyTensor::Csf(
                AnyCsf::try_new(
                    t.shape().to_vec(),
                    t.axis_order().to_vec(),
                    t.indptr().to_vec(),
                    t.indices().to_vec(),
                    t.values().clone(),
                    &TensorOptions::trusted().with_dim_names(names),
                )?
                .with_indptr_type(t.indptr_type())?,
            ),
            AnyTensor::Gcs(t) => AnyTensor::Gcs(t.with_names(names)?),
            AnyTensor::Dm(t) => AnyTensor::Dm(t.with_dim_names(names)?),
            AnyTensor::Level(t) => AnyTensor::Level(t.with_dim_names(names)?),
        })
    }

    /// Visit every stored entry with its (logical) coordinates, in storage order,
    /// without copying the buffers. Dense tensors yield their non-zero elements; DM
    /// tensors yield what their views show. Fails if the value type is not `V`, or
    /// on a structure that a trusted construction let through (never panics).
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// let mut sum = 0.0;
    /// t.for_each_entry(&mut |_: &[usize], v: f64| sum += v)?;
    /// assert_eq!(sum, 6.0);
    /// // the value type must match
    /// assert!(t.for_each_entry(&mut |_: &[usize], _: f32| ()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn for_each_entry<V: Value>(&self, f: &mut dyn FnMut(&[usize], V)) -> Result<()> {
        if self.value_type() != V::TYPE {
            return Err(type_mismatch(V::TYPE, self.value_type()));
        }
        match self {
            AnyTensor::Dense(t) => {
                t.downcast::<V>()
                    .ok_or_else(|| internal("dense"))?
                    .for_each(|c, v| {
                        if !v.is_zero() {
                            f(c, v)
                        }
                    })?;
                Ok(())
            }
            AnyTensor::Coo(t) => with_index_type!(t.index_type(), J => {
                t.downcast::<V, J>().ok_or_else(|| internal("coo"))?.for_each(f)?;
                Ok(())
            }),
            AnyTensor::Csx(t) => {
                let t = t.unify_index_types()?;
                with_index_type!(t.index_type(), J => {
                    t.downcast::<V, J, J>().ok_or_else(|| internal("csx"))?.for_each(f)
                })
            }
            AnyTensor::Csf(t) => {
                let t = t.unify_index_types()?;
                with_index_type!(t.index_type(), J => {
                    t.downcast::<V, J, J>().ok_or_else(|| internal("csf"))?.for_each(f)
                })
            }
            AnyTensor::Gcs(t) => {
                let mut c = vec![0usize; t.shape().len()];
                let map = t.map();
                AnyTensor::Csx(t.matrix().clone()).for_each_entry::<V>(&mut |r, v| {
                    map.promote_into(r, &mut c);
                    f(&c, v)
                })
            }
            AnyTensor::Dm(t) => t.for_each_entry::<V>(f),
            AnyTensor::Level(t) => t.for_each_entry::<V>(f),
        }
    }

    /// The element at `coords` (stored duplicates summed, zero when none), or
    /// `None` outside the shape. Fails if the value type is not `V`.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// assert_eq!(t.get::<f64>(&[1, 2])?, Some(3.0));
    /// assert_eq!(t.get::<f64>(&[1, 1])?, Some(0.0));
    /// assert_eq!(t.get::<f64>(&[2, 0])?, None);
    /// assert!(t.get::<i32>(&[0, 0]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get<V: Value>(&self, coords: &[usize]) -> Result<Option<V>> {
        if self.value_type() != V::TYPE {
            return Err(type_mismatch(V::TYPE, self.value_type()));
        }
        Ok(match self {
            AnyTensor::Dense(t) => t
                .downcast::<V>()
                .ok_or_else(|| internal("dense"))?
                .get(coords),
            AnyTensor::Coo(t) => {
                with_index_type!(t.index_type(), J => t.downcast::<V, J>().ok_or_else(|| internal("coo"))?.get(coords))
            }
            AnyTensor::Csx(t) => {
                let t = t.unify_index_types()?;
                with_index_type!(t.index_type(), J => t.downcast::<V, J, J>().ok_or_else(|| internal("csx"))?.get(coords))
            }
            AnyTensor::Csf(t) => {
                let t = t.unify_index_types()?;
                with_index_type!(t.index_type(), J => t.downcast::<V, J, J>().ok_or_else(|| internal("csf"))?.get(coords))
            }
            AnyTensor::Gcs(t) => {
                if coords.len() != t.shape().len()
                    || coords.iter().zip(t.shape()).any(|(c, d)| c >= d)
                {
                    return Ok(None);
                }
                let mut r = [0usize; 2];
                t.map().reduce_into(coords, &mut r);
                return AnyTensor::Csx(t.matrix().clone()).get::<V>(&r);
            }
            AnyTensor::Dm(t) => return t.get::<V>(coords),
            AnyTensor::Level(t) => return t.get::<V>(coords),
        })
    }

    /// All stored entries as a typed COO tensor (row-major, storage order,
    /// duplicates kept; see [`Convert::to_coo`](crate::Convert::to_coo)). Fails if the value type is not `V`
    /// or a coordinate does not fit `I`.
    ///
    /// ```
    /// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix};
    /// // [[1, 0, 2], [0, 0, 3]] as CSR
    /// let t: AnyTensor = CsxMatrix::<f64, i32, i64>::try_new(
    ///     vec![2, 3], CompressedAxis::Row, vec![0, 2, 3].into(), vec![0, 2, 2].into(), vec![1.0, 2.0, 3.0].into())?.into();
    /// let coo = t.to_coo::<f64, i16>()?;
    /// assert_eq!(coo.values().as_ref(), &[1.0, 2.0, 3.0]);
    /// assert_eq!((coo.coord(2, 0), coo.coord(2, 1)), (1, 2));
    /// // the value type must match
    /// assert!(t.to_coo::<f32, i16>().is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn to_coo<V: Value, I: Index>(&self) -> Result<CooTensor<V, I>> {
        if self.value_type() != V::TYPE {
            return Err(type_mismatch(V::TYPE, self.value_type()));
        }
        match self {
            AnyTensor::Dense(t) => t
                .downcast::<V>()
                .ok_or_else(|| internal("dense"))?
                .coo_entries::<I>(),
            AnyTensor::Coo(t) => with_index_type!(t.index_type(), J => {
                t.downcast::<V, J>().ok_or_else(|| internal("coo"))?.coo_entries::<I>()
            }),
            AnyTensor::Csx(t) => {
                let t = t.unify_index_types()?;
                with_index_type!(t.index_type(), J => {
                    t.downcast::<V, J, J>().ok_or_else(|| internal("csx"))?.coo_entries::<I>()
                })
            }
            AnyTensor::Csf(t) => {
                let t = t.unify_index_types()?;
                with_index_type!(t.index_type(), J => {
                    t.downcast::<V, J, J>().ok_or_else(|| internal("csf"))?.coo_entries::<I>()
                })
            }
            AnyTensor::Gcs(_) | AnyTensor::Dm(_) | AnyTensor::Level(_) => {
                let n = self.shape().len();
                let mut coords: Vec<I> = Vec::new();
                let mut values: Vec<V> = Vec::new();
                let mut bad = None;
                self.for_each_entry::<V>(&mut |c, v| {
                    for &x in c {
                        match I::try_from_usize(x) {
                            Some(i) => coords.push(i),
                            None => bad = Some(x),
                        }
                    }
                    values.push(v);
                })?;
                if let Some(x) = bad {
                    return Err(Error::overflow("coordinate", x.to_string(), I::TYPE.name()));
                }
                debug_assert_eq!(coords.len(), n * values.len());
                CooTensor::from_trusted_parts(
                    self.shape(),
                    coords.into(),
                    values.into(),
                    self.dim_names(),
                    None,
                )
            }
        }
    }
}

impl<V: Value> From<DenseTensor<V>> for AnyTensor {
    fn from(t: DenseTensor<V>) -> Self {
        AnyTensor::Dense(t.into())
    }
}
impl<V: Value, I: Index> From<CooTensor<V, I>> for AnyTensor {
    fn from(t: CooTensor<V, I>) -> Self {
        AnyTensor::Coo(t.into())
    }
}
impl<V: Value, I: Index, P: Index> From<CsxMatrix<V, I, P>> for AnyTensor {
    fn from(t: CsxMatrix<V, I, P>) -> Self {
        AnyTensor::Csx(t.into())
    }
}
impl<V: Value, I: Index, P: Index> From<GcsTensor<V, I, P>> for AnyTensor {
    fn from(t: GcsTensor<V, I, P>) -> Self {
        AnyTensor::Gcs(t.into())
    }
}
impl<V: Value> From<DmTensor<V>> for AnyTensor {
    fn from(t: DmTensor<V>) -> Self {
        AnyTensor::Dm(t.into())
    }
}
impl<V: Value, I: Index, P: Index> From<CsfTensor<V, I, P>> for AnyTensor {
    fn from(t: CsfTensor<V, I, P>) -> Self {
        AnyTensor::Csf(t.into())
    }
}
impl<V: Value, I: Index, P: Index> From<LevelTensor<V, I, P>> for AnyTensor {
    fn from(t: LevelTensor<V, I, P>) -> Self {
        AnyTensor::Level(t.into())
    }
}
impl From<AnyLevel> for AnyTensor {
    fn from(t: AnyLevel) -> Self {
        AnyTensor::Level(t)
    }
}
