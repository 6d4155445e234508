//! Building a sparse tensor column from tensors: every row's buffers are appended
//! to the child buffers of the column (one copy), list offsets mark the rows.

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, FixedSizeListArray, ListArray, StructArray, make_array};
use arrow_buffer::{ArrowNativeType, MutableBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field};

use super::meta::{Child, SparseTensorType};
use crate::buffer::with_index_slice;
use crate::error::{Error, Result};
use crate::tensor::{AnyCsx, AnyTensor, CoordLayout};

/// One `List<T>` child being filled.
struct ListBuilder {
    data_type: DataType,
    bytes: MutableBuffer,
    len: usize,
    offsets: Vec<i32>,
}

impl ListBuilder {
    fn new(data_type: DataType) -> Self {
        ListBuilder {
            data_type,
            bytes: MutableBuffer::new(0),
            len: 0,
            offsets: vec![0],
        }
    }

    fn extend<T: ArrowNativeType>(&mut self, items: &[T]) {
        self.bytes.extend_from_slice(items);
        self.len += items.len();
    }

    /// Append raw little-endian elements (a whole typed buffer's bytes).
    fn extend_bytes(&mut self, bytes: &[u8], len: usize) {
        self.bytes.extend_from_slice(bytes);
        self.len += len;
    }

    /// Close the current row.
    fn end_row(&mut self, name: &str) -> Result<()> {
        let end = i32::try_from(self.len).map_err(|_| {
            Error::overflow(
                format!("offsets of column child {name:?}"),
                self.len.to_string(),
                "int32 (split the tensors into several record batches)",
            )
        })?;
        self.offsets.push(end);
        Ok(())
    }

    fn finish(self) -> Result<ArrayRef> {
        let data = ArrayData::builder(self.data_type.clone())
            .len(self.len)
            .add_buffer(self.bytes.into())
            .build()?;
        let item = Arc::new(Field::new("item", self.data_type, false));
        let offsets = OffsetBuffer::new(ScalarBuffer::from(self.offsets));
        Ok(Arc::new(ListArray::try_new(
            item,
            offsets,
            make_array(data),
            None,
        )?))
    }
}

/// A child being filled.
enum Builder {
    Fixed(usize, Vec<i64>),
    List(ListBuilder),
    Bool(Vec<bool>),
}

impl Builder {
    fn fixed(&mut self, items: &[usize]) -> Result<()> {
        let Builder::Fixed(n, v) = self else {
            return Err(internal());
        };
        if items.len() != *n {
            return Err(internal());
        }
        for &x in items {
            v.push(
                i64::try_from(x).map_err(|_| Error::overflow("extent", x.to_string(), "int64"))?,
            );
        }
        Ok(())
    }

    fn list(&mut self) -> Result<&mut ListBuilder> {
        match self {
            Builder::List(l) => Ok(l),
            _ => Err(internal()),
        }
    }

    fn null_row(&mut self, name: &str) -> Result<()> {
        match self {
            Builder::Fixed(n, v) => v.extend(std::iter::repeat_n(0, *n)),
            Builder::List(l) => l.end_row(name)?,
            Builder::Bool(b) => b.push(false),
        }
        Ok(())
    }

    fn finish(self) -> Result<ArrayRef> {
        Ok(match self {
            Builder::Fixed(n, v) => {
                let item = Arc::new(Field::new("item", DataType::Int64, false));
                let values = Arc::new(arrow_array::Int64Array::from(v));
                Arc::new(FixedSizeListArray::try_new(item, n as i32, values, None)?)
            }
            Builder::List(l) => l.finish()?,
            Builder::Bool(b) => Arc::new(BooleanArray::from(b)),
        })
    }
}

fn internal() -> Error {
    Error::Unsupported("internal error: column child mismatch".into())
}

/// Build the storage struct of a column of type `ty` holding `rows` (`None` for a
/// null row). Every tensor is checked against `ty` first.
pub(crate) fn build<'a>(
    ty: &SparseTensorType,
    rows: impl IntoIterator<Item = Option<&'a AnyTensor>>,
) -> Result<StructArray> {
    let children = ty.children();
    let mut b: Vec<Builder> = children
        .iter()
        .map(|(_, c)| match c {
            Child::Fixed(n) => Builder::Fixed(*n, Vec::new()),
            Child::List(t) => Builder::List(ListBuilder::new(t.clone())),
            Child::Bool => Builder::Bool(Vec::new()),
        })
        .collect();
    let mut valid = Vec::new();
    for (row, tensor) in rows.into_iter().enumerate() {
        valid.push(tensor.is_some());
        let Some(tensor) = tensor else {
            for (bld, (name, _)) in b.iter_mut().zip(&children) {
                bld.null_row(name)?;
            }
            continue;
        };
        ty.check(tensor, row)?;
        append(&mut b, tensor)?;
        for (bld, (name, _)) in b.iter_mut().zip(&children) {
            if let Builder::List(l) = bld {
                l.end_row(name)?;
            }
        }
    }
    let arrays = b
        .into_iter()
        .map(Builder::finish)
        .collect::<Result<Vec<_>>>()?;
    let DataType::Struct(fields) = ty.storage_type() else {
        return Err(internal());
    };
    let nulls = valid
        .iter()
        .any(|v| !v)
        .then(|| NullBuffer::from(valid.clone()));
    if arrays.is_empty() {
        return Err(internal());
    }
    Ok(StructArray::try_new(fields, arrays, nulls)?)
}

/// The indptr, indices and values children of a CSR / CSC matrix (also the
/// storage of a GCS tensor).
fn append_csx(b: &mut [Builder], m: &AnyCsx) -> Result<()> {
    b[1].list()?
        .extend_bytes(m.indptr().inner(), m.indptr().len());
    b[2].list()?
        .extend_bytes(m.indices().inner(), m.indices().len());
    b[3].list()?
        .extend_bytes(m.values().inner(), m.values().len());
    Ok(())
}

/// Append one tensor's buffers to the children (in [`SparseTensorType::children`]
/// order; the row is closed by the caller).
fn append(b: &mut [Builder], tensor: &AnyTensor) -> Result<()> {
    if let AnyTensor::Level(l) = tensor {
        // its nearest plain tensor (format/SPEC.md 8.6)
        return append(b, &l.to_storage()?);
    }
    b[0].fixed(tensor.shape())?;
    match tensor {
        AnyTensor::Coo(c) => {
            let coords = b[1].list()?;
            match c.layout() {
                CoordLayout::RowMajor => coords.extend_bytes(c.coords().inner(), c.coords().len()),
                CoordLayout::ColumnMajor => {
                    let (nnz, ndim) = (c.nnz(), c.shape().len());
                    with_index_slice!(c.coords().as_slice(), s => {
                        let mut row_major = Vec::with_capacity(s.len());
                        for k in 0..nnz {
                            row_major.extend((0..ndim).map(|d| s[d * nnz + k]));
                        }
                        coords.extend(&row_major);
                    })
                }
            }
            b[2].list()?
                .extend_bytes(c.values().inner(), c.values().len());
            match &mut b[3] {
                Builder::Bool(v) => v.push(c.is_canonical()),
                _ => return Err(internal()),
            }
        }
        AnyTensor::Csx(c) => append_csx(b, c)?,
        AnyTensor::Gcs(g) => {
            append_csx(b, g.matrix())?;
            if b.len() > 4 {
                b[4].fixed(g.map().dimensions())?;
                b[5].fixed(g.map().partitioning())?;
            }
        }
        AnyTensor::Csf(c) => {
            let n = c.shape().len();
            for (l, p) in c.indptr().iter().enumerate() {
                b[1 + l].list()?.extend_bytes(p.inner(), p.len());
            }
            for (l, i) in c.indices().iter().enumerate() {
                b[n + l].list()?.extend_bytes(i.inner(), i.len());
            }
            b[2 * n]
                .list()?
                .extend_bytes(c.values().inner(), c.values().len());
            if b.len() > 2 * n + 1 {
                b[2 * n + 1].fixed(c.axis_order())?;
            }
        }
        other => {
            return Err(Error::Unsupported(format!(
                "{} tensors in a sparse tensor column",
                other.format()
            )));
        }
    }
    Ok(())
}
