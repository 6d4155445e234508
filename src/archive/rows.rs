//! Rows in storage order: extracted from a tensor's buffers batch by batch (write
//! side, no copy of the whole tensor), and converted between Arrow columns and
//! coordinates (both sides).

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, Float16Array, Float32Array, Float64Array, Int8Array, Int16Array, Int32Array,
    Int64Array, UInt8Array, UInt16Array, UInt32Array, UInt64Array,
};
use arrow_buffer::{Buffer, MutableBuffer};
use arrow_schema::DataType;

use crate::buffer::{IndexBuffer, ValueBuffer, with_index_slice};
use crate::error::{Error, Result};
use crate::tensor::level::{AnyLevel, LevelBuilder};
use crate::tensor::{AnyCsf, AnyCsx, AnyTensor, CoordLayout, TensorOptions};
use crate::types::{Index, IndexType};

/// A batch of rows in storage order.
pub(crate) struct Rows {
    /// Coordinates, one vector per dimension.
    pub coords: Vec<Vec<usize>>,
    /// Values, an Arrow array of the tensor's value type.
    pub values: ArrayRef,
    /// CSF only: per row, the highest tree level at which the row's leaf starts a
    /// new node (0 = a new root).
    pub levels: Option<Vec<usize>>,
}

impl Rows {
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }
}

/// The value buffer as an Arrow array (zero-copy).
pub(crate) fn value_array(b: &ValueBuffer) -> ArrayRef {
    macro_rules! arr {
        ($($v:ident => $a:ty),*) => {
            match b { $(ValueBuffer::$v(x) => Arc::new(<$a>::new(x.clone(), None)) as ArrayRef,)* }
        };
    }
    arr!(Int8 => Int8Array, Int16 => Int16Array, Int32 => Int32Array, Int64 => Int64Array,
         UInt8 => UInt8Array, UInt16 => UInt16Array, UInt32 => UInt32Array, UInt64 => UInt64Array,
         Float16 => Float16Array, Float32 => Float32Array, Float64 => Float64Array)
}

/// Call `f` with the little-endian bytes of a primitive array's values (no nulls
/// allowed).
pub(crate) fn with_bytes<R>(a: &dyn Array, what: &str, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
    if a.null_count() > 0 {
        return Err(Error::invariant(what, None, "the column holds nulls"));
    }
    let width = a.data_type().primitive_width().ok_or_else(|| Error::Type {
        what: what.to_string(),
        expected: "a fixed-width primitive column".into(),
        found: a.data_type().to_string(),
    })?;
    let data = a.to_data();
    let start = data.offset() * width;
    let bytes = data
        .buffers()
        .first()
        .and_then(|b| b.as_slice().get(start..start + data.len() * width))
        .ok_or_else(|| Error::invariant(what, None, "the column's buffer is too short"))?;
    Ok(f(bytes))
}

/// The Arrow type of the coordinate column for a dimension of `extent`: the
/// narrowest signed integer type that holds `extent - 1`.
pub(crate) fn coordinate_type(extent: usize) -> DataType {
    match IndexType::narrowest_signed(extent.saturating_sub(1) as u64) {
        IndexType::Int8 => DataType::Int8,
        IndexType::Int16 => DataType::Int16,
        IndexType::Int32 => DataType::Int32,
        _ => DataType::Int64,
    }
}

/// A coordinate column of type `ty` from coordinates already checked to lie in
/// `0..extent` with `ty = coordinate_type(extent)` (so the casts are exact).
pub(crate) fn coordinate_array(xs: &[usize], ty: &DataType) -> ArrayRef {
    match ty {
        DataType::Int8 => Arc::new(Int8Array::from_iter_values(xs.iter().map(|&x| x as i8))),
        DataType::Int16 => Arc::new(Int16Array::from_iter_values(xs.iter().map(|&x| x as i16))),
        DataType::Int32 => Arc::new(Int32Array::from_iter_values(xs.iter().map(|&x| x as i32))),
        _ => Arc::new(Int64Array::from_iter_values(xs.iter().map(|&x| x as i64))),
    }
}

fn push_checked<T: Index>(
    s: &[T],
    extent: usize,
    what: &str,
    first_row: usize,
    out: &mut Vec<usize>,
) -> Result<()> {
    out.reserve(s.len());
    for (i, &x) in s.iter().enumerate() {
        match x.index() {
            Some(v) if v < extent => out.push(v),
            _ => {
                return Err(Error::IndexOutOfBounds {
                    buffer: what.to_string(),
                    position: first_row + i,
                    value: x.wide(),
                    bound: extent as u64,
                });
            }
        }
    }
    Ok(())
}

/// Append the values of an integer column to `out`, each checked to lie in
/// `0..extent` (`first_row` numbers the rows in errors).
pub(crate) fn column_usizes(
    a: &dyn Array,
    extent: usize,
    what: &str,
    first_row: usize,
    out: &mut Vec<usize>,
) -> Result<()> {
    if a.null_count() > 0 {
        return Err(Error::invariant(what, None, "the column holds nulls"));
    }
    macro_rules! go {
        ($($dt:ident => $t:ty),*) => {
            match a.data_type() {
                $(DataType::$dt => {
                    let s = a.as_primitive_opt::<$t>().ok_or_else(|| bad_type(a, what))?;
                    push_checked(s.values(), extent, what, first_row, out)
                })*
                _ => Err(bad_type(a, what)),
            }
        };
    }
    go!(Int8 => Int8Type, Int16 => Int16Type, Int32 => Int32Type, Int64 => Int64Type,
        UInt8 => UInt8Type, UInt16 => UInt16Type, UInt32 => UInt32Type, UInt64 => UInt64Type)
}

fn bad_type(a: &dyn Array, what: &str) -> Error {
    Error::Type {
        what: what.to_string(),
        expected: "an integer column".into(),
        found: a.data_type().to_string(),
    }
}

/// Elements `range` of an index buffer as `usize`, each checked to lie in
/// `0..bound`.
pub(crate) fn usizes(
    b: &IndexBuffer,
    range: Range<usize>,
    bound: usize,
    what: &str,
) -> Result<Vec<usize>> {
    let first = range.start;
    with_index_slice!(b.as_slice(), s => {
        let part = s.get(range).ok_or_else(|| {
            Error::invariant(what, Some(first), "range outside the buffer (trusted input was invalid)")
        })?;
        let mut out = Vec::new();
        push_checked(part, bound, what, first, &mut out)?;
        Ok(out)
    })
}

/// The number of leading elements `<= k` of a non-decreasing index buffer.
fn partition(b: &IndexBuffer, k: usize) -> usize {
    with_index_slice!(b.as_slice(), s => s.partition_point(|x| x.index().is_some_and(|v| v <= k)))
}

/// For children `children` (non-decreasing node numbers of one level), their
/// parents given the level above's `indptr`. Returns the parents and the first
/// parent's number.
fn parents(indptr: &IndexBuffer, children: &[usize], what: &str) -> Result<(Vec<usize>, usize)> {
    let (Some(&c0), Some(&c1)) = (children.first(), children.last()) else {
        return Ok((Vec::new(), 0));
    };
    let p0 = partition(indptr, c0).saturating_sub(1);
    let p1 = partition(indptr, c1).max(p0 + 1);
    let window = usizes(indptr, p0..(p1 + 1).min(indptr.len()), usize::MAX, what)?;
    let mut out = Vec::with_capacity(children.len());
    let mut p = 0usize;
    for &c in children {
        while window.get(p + 1).is_some_and(|&end| end <= c) {
            p += 1;
        }
        if window.get(p + 1).is_none() || window[p] > c {
            return Err(Error::invariant(
                what,
                Some(p0 + p),
                "no parent covers a child (trusted input was invalid)",
            ));
        }
        out.push(p0 + p);
    }
    Ok((out, p0))
}

/// A tensor seen as rows in storage order.
pub(crate) struct Source<'a> {
    tensor: &'a AnyTensor,
    rows: usize,
    levels: bool,
    /// A level tensor's rows, walked once: coordinates by dimension, and the
    /// level at which each row starts new nodes.
    walked: Option<(Vec<Vec<usize>>, Vec<usize>)>,
}

impl<'a> Source<'a> {
    /// Rows of `tensor`; `levels` asks for the CSF node levels.
    pub(crate) fn new(tensor: &'a AnyTensor, levels: bool) -> Result<Self> {
        let rows = match tensor {
            AnyTensor::Dense(d) => d.size(),
            AnyTensor::Coo(c) => c.nnz(),
            AnyTensor::Csx(c) => c.nnz(),
            AnyTensor::Csf(c) => c.nnz(),
            AnyTensor::Gcs(g) => g.nnz(),
            AnyTensor::Level(l) => l.nnz(),
            #[allow(unreachable_patterns)]
            other => {
                return Err(Error::Unsupported(format!(
                    "Parquet rows of {} tensors",
                    other.format()
                )));
            }
        };
        let walked = match tensor {
            AnyTensor::Level(l) => {
                let order = l.format().axis_order();
                let mut coords: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
                let mut starts = Vec::new();
                l.levels()?.walk(&mut |lvl, _, fresh| {
                    for (&c, &d) in lvl.iter().zip(order) {
                        coords[d].push(c);
                    }
                    starts.push(fresh);
                })?;
                if starts.len() != rows {
                    return Err(Error::invariant(
                        "level tensor",
                        None,
                        "its walk and its values disagree (trusted input was invalid)",
                    ));
                }
                Some((coords, starts))
            }
            _ => None,
        };
        Ok(Source {
            tensor,
            rows,
            levels: levels && matches!(tensor, AnyTensor::Csf(_) | AnyTensor::Level(_)),
            walked,
        })
    }

    /// Number of rows.
    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    /// Rows `k0..k1`.
    pub(crate) fn rows(&self, k0: usize, k1: usize) -> Result<Rows> {
        let shape = self.tensor.shape();
        let ndim = shape.len();
        let n = k1 - k0;
        let mut coords: Vec<Vec<usize>> = (0..ndim).map(|_| Vec::with_capacity(n)).collect();
        let mut levels = None;
        let values = match self.tensor {
            AnyTensor::Coo(c) => {
                let nnz = c.nnz();
                with_index_slice!(c.coords().as_slice(), s => {
                    match c.layout() {
                        CoordLayout::RowMajor => {
                            let block = s.get(k0 * ndim..k1 * ndim).unwrap_or(&[]);
                            for (d, out) in coords.iter_mut().enumerate() {
                                let col: Vec<_> = block.iter().skip(d).step_by(ndim).copied().collect();
                                push_checked(&col, shape[d], &format!("coords (dimension {d})"), k0, out)?;
                            }
                        }
                        CoordLayout::ColumnMajor => {
                            for (d, out) in coords.iter_mut().enumerate() {
                                let col = s.get(d * nnz + k0..d * nnz + k1).unwrap_or(&[]);
                                push_checked(col, shape[d], &format!("coords (dimension {d})"), k0, out)?;
                            }
                        }
                    }
                });
                value_array(c.values()).slice(k0, n)
            }
            AnyTensor::Csx(c) => {
                coords = csx_rows(c, k0, k1)?;
                value_array(c.values()).slice(k0, n)
            }
            AnyTensor::Gcs(g) => {
                let reduced = csx_rows(g.matrix(), k0, k1)?;
                let map = g.map();
                let mut c = vec![0usize; ndim];
                for (&r0, &r1) in reduced[0].iter().zip(&reduced[1]) {
                    map.promote_into(&[r0, r1], &mut c);
                    for (out, &x) in coords.iter_mut().zip(&c) {
                        out.push(x);
                    }
                }
                value_array(g.matrix().values()).slice(k0, n)
            }
            AnyTensor::Csf(c) => {
                levels = self.csf_rows(c, k0, k1, &mut coords)?;
                value_array(c.values()).slice(k0, n)
            }
            AnyTensor::Level(l) => {
                if let Some((all, starts)) = &self.walked {
                    for (out, col) in coords.iter_mut().zip(all) {
                        out.extend_from_slice(col.get(k0..k1).unwrap_or(&[]));
                    }
                    if self.levels {
                        levels = Some(starts.get(k0..k1).unwrap_or(&[]).to_vec());
                    }
                }
                value_array(l.values()).slice(k0, n)
            }
            AnyTensor::Dense(d) => {
                let mut idx = unravel(k0, shape);
                let mut offsets = Vec::with_capacity(n);
                for _ in k0..k1 {
                    let off = d.element_offset(&idx).ok_or_else(|| {
                        Error::invariant("dense rows", Some(k0), "an element outside the shape")
                    })?;
                    offsets.push(off);
                    for (dim, &i) in idx.iter().enumerate() {
                        coords[dim].push(i);
                    }
                    advance(&mut idx, shape);
                }
                // consecutive elements: a slice of the buffer (no copy)
                let first = offsets.first().copied().unwrap_or(0);
                let contiguous = offsets.windows(2).all(|w| w[1] == w[0] + 1);
                if contiguous && first.checked_add(n).is_some_and(|e| e <= d.values().len()) {
                    value_array(d.values()).slice(first, n)
                } else {
                    gather(d.values(), &offsets)?
                }
            }
            #[allow(unreachable_patterns)]
            other => {
                return Err(Error::Unsupported(format!(
                    "Parquet rows of {} tensors",
                    other.format()
                )));
            }
        };
        Ok(Rows {
            coords,
            values,
            levels,
        })
    }

    /// Coordinates (and, if asked, node levels) of CSF leaves `k0..k1`.
    fn csf_rows(
        &self,
        c: &AnyCsf,
        k0: usize,
        k1: usize,
        coords: &mut [Vec<usize>],
    ) -> Result<Option<Vec<usize>>> {
        let n = c.shape().len();
        // start one leaf early to know whether the first leaf starts new nodes
        let start = k0.saturating_sub(1);
        let mut nodes: Vec<Vec<usize>> = vec![Vec::new(); n];
        nodes[n - 1] = (start..k1).collect();
        for l in (0..n - 1).rev() {
            let (p, _) = parents(&c.indptr()[l], &nodes[l + 1], &format!("indptr[{l}]"))?;
            nodes[l] = p;
        }
        for (l, level) in nodes.iter().enumerate() {
            let d = c.axis_order()[l];
            let (Some(&lo), Some(&hi)) = (level.first(), level.last()) else {
                continue;
            };
            let idx = usizes(
                &c.indices()[l],
                lo..hi + 1,
                c.shape()[d],
                &format!("indices[{l}]"),
            )?;
            let skip = k0 - start;
            coords[d] = level.iter().skip(skip).map(|&x| idx[x - lo]).collect();
        }
        if !self.levels {
            return Ok(None);
        }
        let mut levels = Vec::with_capacity(k1 - k0);
        for r in (k0 - start)..(k1 - start) {
            let level = if r == 0 {
                0
            } else {
                (0..n)
                    .find(|&l| nodes[l][r] != nodes[l][r - 1])
                    .unwrap_or(n - 1)
            };
            levels.push(level);
        }
        Ok(Some(levels))
    }
}

/// Coordinates (by dimension) of the entries `k0..k1` of a CSR / CSC matrix, in
/// storage order, checked against its shape.
fn csx_rows(c: &AnyCsx, k0: usize, k1: usize) -> Result<Vec<Vec<usize>>> {
    let shape = c.shape();
    let (major, minor) = c.axis().dims();
    let leaves: Vec<usize> = (k0..k1).collect();
    let (m, _) = parents(c.indptr(), &leaves, "indptr")?;
    if m.iter().any(|&x| x >= shape[major]) {
        return Err(Error::invariant(
            "indptr",
            None,
            "an entry lies past the last slice",
        ));
    }
    let mut coords = vec![Vec::new(), Vec::new()];
    coords[major] = m;
    coords[minor] = usizes(c.indices(), k0..k1, shape[minor], "indices")?;
    Ok(coords)
}

/// Whether the CSF tree is exactly what prefix merging of its rows rebuilds (no
/// node level column needed). Fails for trees with an internal node without
/// children, which rows cannot describe.
pub(crate) fn csf_needs_levels(t: &AnyTensor, batch: usize) -> Result<bool> {
    if let AnyTensor::Level(l) = t {
        return level_needs_starts(t, l);
    }
    let AnyTensor::Csf(c) = t else {
        return Ok(false);
    };
    for (l, p) in c.indptr().iter().enumerate() {
        let all = usizes(p, 0..p.len(), usize::MAX, &format!("indptr[{l}]"))?;
        if let Some(i) = all.windows(2).position(|w| w[0] == w[1]) {
            return Err(Error::Unsupported(format!(
                "archiving a CSF tree with a childless node (level {l}, node {i}): rows cannot describe it"
            )));
        }
    }
    let n = c.shape().len();
    let order = c.axis_order();
    let src = Source::new(t, true)?;
    let mut prev: Option<Vec<usize>> = None;
    let mut k = 0;
    while k < src.len() {
        let end = (k + batch.max(1)).min(src.len());
        let rows = src.rows(k, end)?;
        let levels = rows.levels.unwrap_or_default();
        for (r, &level) in levels.iter().enumerate() {
            let at = |l: usize| rows.coords[order[l]][r];
            let derived = match &prev {
                None => 0,
                Some(p) => (0..n).find(|&l| p[l] != at(l)).unwrap_or(n - 1),
            };
            if derived != level {
                return Ok(true);
            }
            match &mut prev {
                Some(p) => p.iter_mut().enumerate().for_each(|(l, x)| *x = at(l)),
                None => prev = Some((0..n).map(at).collect()),
            }
        }
        k = end;
    }
    Ok(false)
}

/// Whether a level tensor's rows need the node-level column: rebuilt from its
/// rows without it, is the structure the tensor's? Fails when not even the column
/// rebuilds it (a compressed node with no stored value below it, which rows
/// cannot describe).
fn level_needs_starts(t: &AnyTensor, l: &AnyLevel) -> Result<bool> {
    let src = Source::new(t, true)?;
    let Some((coords, starts)) = &src.walked else {
        return Ok(false);
    };
    let order = l.format().axis_order();
    let rebuild = |with_starts: bool| -> Result<bool> {
        let mut b = LevelBuilder::<u64>::new(l.shape(), l.format().clone(), u64::MAX)?;
        let mut lvl = vec![0usize; order.len()];
        for (r, &s) in starts.iter().enumerate() {
            for (c, &d) in lvl.iter_mut().zip(order) {
                *c = coords[d][r];
            }
            b.push(&lvl, with_starts.then_some(s), r as u64)?;
        }
        let back = b.finish(l.index_type(), l.indptr_type(), &TensorOptions::trusted())?;
        Ok(back.positions() == l.positions() && back.coordinates() == l.coordinates())
    };
    if rebuild(false).unwrap_or(false) {
        return Ok(false);
    }
    if rebuild(true)? {
        return Ok(true);
    }
    Err(Error::Unsupported(
        "archiving a level tensor with a compressed node that stores no value below it: rows cannot describe it".into(),
    ))
}

/// The multi-index of row-major position `k`.
pub(crate) fn unravel(k: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0usize; shape.len()];
    crate::dims::unravel(k, shape, &mut idx);
    idx
}

pub(crate) use crate::dims::advance;

/// The values at `offsets` (element offsets into `values`) as an Arrow array.
fn gather(values: &ValueBuffer, offsets: &[usize]) -> Result<ArrayRef> {
    let ty = values.data_type();
    let w = ty.byte_width();
    let src = values.inner().as_slice();
    let mut out = MutableBuffer::with_capacity(offsets.len() * w);
    for &o in offsets {
        let bytes = src.get(o * w..(o + 1) * w).ok_or_else(|| {
            Error::invariant("dense values", Some(o), "element outside the buffer")
        })?;
        out.extend_from_slice(bytes);
    }
    let buf = ValueBuffer::from_body(ty, &Buffer::from(out), 0, offsets.len(), "values", false)?;
    Ok(value_array(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Convert;
    use crate::tensor::{CompressedAxis, CooTensor};

    #[test]
    fn csx_and_csf_rows_follow_storage_order() {
        let coo = CooTensor::<f32, i32>::from_entries(
            vec![4, 3],
            &[(vec![3, 0], 1.0), (vec![0, 2], 2.0), (vec![3, 1], 3.0)],
        )
        .unwrap();
        let csr: AnyTensor = coo.to_csx::<i32, i64>(CompressedAxis::Row).unwrap().into();
        let src = Source::new(&csr, false).unwrap();
        let rows = src.rows(1, 3).unwrap();
        assert_eq!(rows.coords, vec![vec![3, 3], vec![0, 1]]);
        let csf: AnyTensor = coo.to_csf::<i16, i8>(&[1, 0]).unwrap().into();
        let src = Source::new(&csf, true).unwrap();
        let rows = src.rows(0, 3).unwrap();
        // leaves in (dim 1, dim 0) order: (0,3) (1,3) (2,0)
        assert_eq!(rows.coords, vec![vec![3, 3, 0], vec![0, 1, 2]]);
        assert_eq!(rows.levels, Some(vec![0, 0, 0]));
        assert!(!csf_needs_levels(&csf, 2).unwrap());
    }

    #[test]
    fn unravel_and_advance_agree() {
        let shape = [2, 3, 2];
        let mut idx = unravel(0, &shape);
        for k in 0..12 {
            assert_eq!(idx, unravel(k, &shape));
            advance(&mut idx, &shape);
        }
    }
}
