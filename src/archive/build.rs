//! Rebuilding a tensor from its rows: the coordinate -> structure direction
//! (CSX indptr from the runs of major coordinates, CSF trees from the leaf
//! sequence, dense buffers from the row-major enumeration). Every tensor built
//! here passes its format's validating constructor.

use crate::tensor::{EntryOrder, TensorOptions};
use arrow_array::Array;
use arrow_buffer::{Buffer, MutableBuffer};

use super::meta::{ArchiveLayout, TensorSpec};
use super::rows::{Rows, unravel, with_bytes};
use crate::buffer::{IndexBuffer, ValueBuffer};
use crate::dims::DimMap;
use crate::error::{Error, Result};
use crate::tensor::dense::row_major_strides;
use crate::tensor::level::LevelBuilder;
use crate::tensor::{
    AnyCoo, AnyCsf, AnyCsx, AnyDense, AnyGcs, AnyTensor, CompressedAxis, CoordLayout, Validation,
};
use crate::types::{Index, IndexType, ValueType};
use crate::with_index_type;

/// Elements reserved up front at most: the rest grows as rows actually arrive, so
/// a count claimed by a hostile footer cannot reserve memory by itself.
const MAX_RESERVE: usize = 1 << 24;

/// Indptr elements staged at most before they are appended (the indptr of a
/// matrix with many empty slices is not built twice over).
const FLUSH: usize = 1 << 16;

/// A growing index buffer of one [`IndexType`].
struct IdxAcc {
    ty: IndexType,
    buf: MutableBuffer,
    len: usize,
    what: String,
}

impl IdxAcc {
    fn new(ty: IndexType, what: impl Into<String>, expect: usize) -> Self {
        IdxAcc {
            ty,
            buf: MutableBuffer::new(expect.min(MAX_RESERVE) * ty.byte_width()),
            len: 0,
            what: what.into(),
        }
    }

    fn extend(&mut self, xs: &[usize]) -> Result<()> {
        fn typed<I: Index>(buf: &mut MutableBuffer, xs: &[usize], what: &str) -> Result<()> {
            let v = xs
                .iter()
                .map(|&x| {
                    I::try_from_usize(x)
                        .ok_or_else(|| Error::overflow(what, x.to_string(), I::TYPE.name()))
                })
                .collect::<Result<Vec<I>>>()?;
            buf.extend_from_slice(&v);
            Ok(())
        }
        with_index_type!(self.ty, I => typed::<I>(&mut self.buf, xs, &self.what))?;
        self.len += xs.len();
        Ok(())
    }

    fn finish(self) -> Result<IndexBuffer> {
        IndexBuffer::from_body(
            self.ty,
            &Buffer::from(self.buf),
            0,
            self.len,
            &self.what,
            false,
        )
    }
}

/// Concatenate index buffers of one type.
fn concat(parts: Vec<IdxAcc>, ty: IndexType, what: &str) -> Result<IndexBuffer> {
    let total: usize = parts.iter().map(|p| p.len).sum();
    let mut buf = MutableBuffer::new(total * ty.byte_width());
    for p in &parts {
        buf.extend_from_slice(p.buf.as_slice());
    }
    IndexBuffer::from_body(ty, &Buffer::from(buf), 0, total, what, false)
}

enum Kind {
    Dense {
        strides: Vec<usize>,
    },
    Coo {
        layout: CoordLayout,
        canonical: bool,
        /// one accumulator (row-major) or one per dimension (column-major)
        coords: Vec<IdxAcc>,
    },
    Csx {
        axis: CompressedAxis,
        major: usize,
        minor: usize,
        /// the matrix's shape (the reduced shape for GCS)
        shape: Vec<usize>,
        /// GCS: the map that reduces the rows' N-D coordinates to the matrix's
        gcs: Option<Box<DimMap>>,
        indptr: IdxAcc,
        indices: IdxAcc,
        /// indptr entries written so far
        next: usize,
        last: usize,
    },
    Csf {
        order: Vec<usize>,
        /// the indptr type (kept apart: a 1-D tensor has no indptr buffer)
        indptr_type: IndexType,
        indptr: Vec<IdxAcc>,
        indices: Vec<IdxAcc>,
        /// the previous row's coordinates, in level order
        prev: Option<Vec<usize>>,
    },
    Level {
        /// the dimension of each level
        order: Vec<usize>,
        index_type: IndexType,
        indptr_type: IndexType,
        /// stored values as row numbers + 1 (0: a zero a dense level fills in)
        builder: Box<LevelBuilder<u64>>,
    },
}

/// The bounds a [`Builder`] checks before reserving anything.
pub(crate) struct Limits<'a> {
    /// The reader's memory limit.
    pub(crate) limit: crate::limit::ReadLimit,
    /// Bytes of the archive.
    pub(crate) input_bytes: u64,
    /// The archive's path, for messages.
    pub(crate) name: &'a str,
    /// `ArchiveReadOptions::max_indptr_len`.
    pub(crate) max_indptr_len: usize,
    /// `ArchiveReadOptions::max_broadcast`.
    pub(crate) max_broadcast: u64,
}

/// Accumulates rows in storage order and builds the tensor of a [`TensorSpec`].
pub(crate) struct Builder {
    spec: TensorSpec,
    max_broadcast: u64,
    /// Bytes the logical entries of DM views may take.
    budget: u64,
    rows: usize,
    value_type: ValueType,
    values: MutableBuffer,
    kind: Kind,
}

impl Builder {
    /// A builder for `spec` (whose shape is the rows'), expecting `expect` rows
    /// (the footer's count); `limits` bound the CSX / GCS indptr, the broadcast
    /// views of DM levels, and the bytes of everything built.
    pub(crate) fn new(spec: TensorSpec, expect: u64, limits: &Limits) -> Result<Self> {
        let max_indptr_len = limits.max_indptr_len;
        let budget = limits.limit.budget(limits.input_bytes);
        // what each row leaves in the tensor: its value, and its coordinates as
        // the layout stores them (CSF: an index and an indptr entry per level at
        // most; the CSR / CSC indptr is checked below)
        let n64 = spec.shape.len() as u64;
        let coords = match spec.layout.rows() {
            ArchiveLayout::Dense { .. } => 0,
            ArchiveLayout::Coo { index_type, .. } => n64 * index_type.byte_width() as u64,
            ArchiveLayout::Csx { index_type, .. } | ArchiveLayout::Gcs { index_type, .. } => {
                index_type.byte_width() as u64
            }
            ArchiveLayout::Csf {
                index_type,
                indptr_type,
                ..
            } => n64 * (index_type.byte_width() + indptr_type.byte_width()) as u64,
            ArchiveLayout::Dm { .. } => n64 * 8,
            // what the builder holds per row (u64 coordinates, positions and
            // the row number); dense fills count against the budget as they come
            ArchiveLayout::Level { .. } => n64 * 16 + 8,
        };
        let per_row = coords + spec.value_type.byte_width() as u64;
        limits.limit.check(
            format!("the {expect} rows of {}", limits.name),
            expect.saturating_mul(per_row),
            limits.input_bytes,
        )?;
        let expect = usize::try_from(expect).unwrap_or(usize::MAX);
        let n = spec.shape.len();
        let gcs = spec.gcs_map()?;
        let kind = match spec.layout.rows() {
            ArchiveLayout::Dense { strides } => Kind::Dense {
                strides: strides.clone(),
            },
            ArchiveLayout::Coo {
                index_type,
                coord_layout,
                canonical,
            } => Kind::Coo {
                layout: *coord_layout,
                canonical: canonical.unwrap_or(false),
                coords: match coord_layout {
                    CoordLayout::RowMajor => {
                        vec![IdxAcc::new(*index_type, "coords", expect.saturating_mul(n))]
                    }
                    CoordLayout::ColumnMajor => (0..n)
                        .map(|_| IdxAcc::new(*index_type, "coords", expect))
                        .collect(),
                },
            },
            ArchiveLayout::Csx {
                axis,
                index_type,
                indptr_type,
            }
            | ArchiveLayout::Gcs {
                axis,
                index_type,
                indptr_type,
                ..
            } => {
                let (major, minor) = axis.dims();
                let shape = match &gcs {
                    Some(map) => map.reduced_shape().to_vec(),
                    None => spec.shape.clone(),
                };
                // the indptr has one element per major slice whatever the row
                // count: bound it before anything is allocated
                let len = shape[major].saturating_add(1);
                if len > max_indptr_len {
                    return Err(Error::overflow(
                        "CSR/CSC indptr length",
                        len.to_string(),
                        format!("ArchiveReadOptions::max_indptr_len ({max_indptr_len})"),
                    ));
                }
                limits.limit.check(
                    format!("the indptr of {} ({len} elements)", limits.name),
                    (len as u64).saturating_mul(indptr_type.byte_width() as u64),
                    limits.input_bytes,
                )?;
                Kind::Csx {
                    axis: *axis,
                    major,
                    minor,
                    shape,
                    gcs: gcs.map(Box::new),
                    indptr: IdxAcc::new(*indptr_type, "indptr", len),
                    indices: IdxAcc::new(*index_type, "indices", expect),
                    next: 0,
                    last: 0,
                }
            }
            ArchiveLayout::Csf {
                axis_order,
                index_type,
                indptr_type,
            } => Kind::Csf {
                order: axis_order.clone(),
                indptr_type: *indptr_type,
                indptr: (0..n - 1)
                    .map(|l| IdxAcc::new(*indptr_type, format!("indptr[{l}]"), 0))
                    .collect(),
                indices: (0..n)
                    .map(|l| IdxAcc::new(*index_type, format!("indices[{l}]"), 0))
                    .collect(),
                prev: None,
            },
            ArchiveLayout::Level {
                format,
                index_type,
                indptr_type,
            } => Kind::Level {
                order: format.axis_order().to_vec(),
                index_type: *index_type,
                indptr_type: *indptr_type,
                builder: Box::new(LevelBuilder::new(&spec.shape, format.clone(), budget)?),
            },
            ArchiveLayout::Dm { .. } => {
                return Err(Error::invariant(
                    "DM storage layout",
                    None,
                    "a DM layout inside a DM layout",
                ));
            }
        };
        let value_type = spec.value_type;
        Ok(Builder {
            max_broadcast: limits.max_broadcast,
            budget,
            values: MutableBuffer::new(expect.min(MAX_RESERVE) * value_type.byte_width()),
            value_type,
            spec,
            rows: 0,
            kind,
        })
    }

    /// Append rows (coordinates already checked against the result's shape).
    pub(crate) fn push(&mut self, rows: &Rows) -> Result<()> {
        let n = rows.len();
        if rows.values.data_type() != &self.value_type.data_type() {
            return Err(Error::Type {
                what: "value column".into(),
                expected: self.value_type.data_type().to_string(),
                found: rows.values.data_type().to_string(),
            });
        }
        with_bytes(rows.values.as_ref(), "value column", |b| {
            self.values.extend_from_slice(b)
        })?;
        let base = self.rows;
        let ndim = rows.coords.len();
        match &mut self.kind {
            Kind::Dense { .. } => {}
            Kind::Coo { layout, coords, .. } => match layout {
                CoordLayout::RowMajor => {
                    let mut inter = Vec::with_capacity(n * ndim);
                    for r in 0..n {
                        inter.extend(rows.coords.iter().map(|c| c[r]));
                    }
                    coords[0].extend(&inter)?;
                }
                CoordLayout::ColumnMajor => {
                    for (acc, c) in coords.iter_mut().zip(&rows.coords) {
                        acc.extend(c)?;
                    }
                }
            },
            Kind::Csx {
                major,
                minor,
                gcs,
                indptr,
                indices,
                next,
                last,
                ..
            } => {
                let reduced;
                let (majors, minors) = match gcs {
                    None => (&rows.coords[*major], &rows.coords[*minor]),
                    Some(map) => {
                        reduced = reduce(map, &rows.coords, n);
                        (&reduced[*major], &reduced[*minor])
                    }
                };
                let mut ptr = Vec::new();
                for (r, &m) in majors.iter().enumerate() {
                    if m < *last {
                        return Err(Error::invariant(
                            "CSR/CSC archive rows",
                            Some(base + r),
                            format!(
                                "major coordinate {m} after {last}: the rows are not in CSR/CSC storage order"
                            ),
                        ));
                    }
                    *last = m;
                    while *next <= m {
                        ptr.push(base + r);
                        *next += 1;
                        if ptr.len() == FLUSH {
                            indptr.extend(&ptr)?;
                            ptr.clear();
                        }
                    }
                }
                indptr.extend(&ptr)?;
                indices.extend(minors)?;
            }
            Kind::Csf {
                order,
                indptr,
                indices,
                prev,
                ..
            } => {
                let levels = ndim;
                let mut new_ptr: Vec<Vec<usize>> = vec![Vec::new(); levels];
                let mut new_idx: Vec<Vec<usize>> = vec![Vec::new(); levels];
                // nodes per level, counting those added in this batch
                let mut count: Vec<usize> = indices.iter().map(|a| a.len).collect();
                let mut cur = vec![0usize; levels];
                for r in 0..n {
                    for (c, &d) in cur.iter_mut().zip(order.iter()) {
                        *c = rows.coords[d][r];
                    }
                    let derived = match prev.as_ref() {
                        None => 0,
                        Some(p) => (0..levels).find(|&l| p[l] != cur[l]).unwrap_or(levels - 1),
                    };
                    let level = match &rows.levels {
                        None => derived,
                        Some(given) => {
                            let l = given[r];
                            // a new node at level l keeps the ancestors above it
                            if l >= levels || (prev.is_none() && l != 0) || l > derived {
                                return Err(Error::invariant(
                                    "CSF node level column",
                                    Some(base + r),
                                    format!(
                                        "level {l} disagrees with the coordinates (at most {derived})"
                                    ),
                                ));
                            }
                            l
                        }
                    };
                    for l in level..levels {
                        if l + 1 < levels {
                            new_ptr[l].push(count[l + 1]);
                        }
                        new_idx[l].push(cur[l]);
                        count[l] += 1;
                    }
                    match prev {
                        Some(p) => p.copy_from_slice(&cur),
                        None => *prev = Some(cur.clone()),
                    }
                }
                for l in 0..levels {
                    if l + 1 < levels {
                        indptr[l].extend(&new_ptr[l])?;
                    }
                    indices[l].extend(&new_idx[l])?;
                }
            }
            Kind::Level { order, builder, .. } => {
                let mut lvl = vec![0usize; order.len()];
                for r in 0..n {
                    for (c, &d) in lvl.iter_mut().zip(order.iter()) {
                        *c = rows.coords[d][r];
                    }
                    let start = rows.levels.as_ref().and_then(|l| l.get(r).copied());
                    builder.push(&lvl, start, (base + r + 1) as u64)?;
                }
            }
        }
        self.rows += n;
        Ok(())
    }

    /// The tensor, through its format's validating constructor (and, for DM,
    /// wrapped in the checked chain).
    pub(crate) fn finish(self, validation: Validation) -> Result<AnyTensor> {
        let chain = match &self.spec.layout {
            ArchiveLayout::Dm { chain, .. } => Some(chain.clone()),
            _ => None,
        };
        let (max_broadcast, budget) = (self.max_broadcast, self.budget);
        let rows = self.finish_rows(validation)?;
        match chain {
            Some(chain) => chain.wrap_within(rows, max_broadcast, budget),
            None => Ok(rows),
        }
    }

    /// The tensor of the rows (the storage, for DM).
    fn finish_rows(self, validation: Validation) -> Result<AnyTensor> {
        let spec = self.spec;
        let names = spec.dim_names.clone();
        let values = ValueBuffer::from_body(
            self.value_type,
            &Buffer::from(self.values),
            0,
            self.rows,
            "values",
            false,
        )?;
        Ok(match self.kind {
            Kind::Dense { strides } => {
                let size: usize = spec.shape.iter().product();
                if self.rows != size {
                    return Err(Error::length("dense archive rows", size, self.rows));
                }
                let values = if strides == row_major_strides(&spec.shape) || size <= 1 {
                    values
                } else {
                    scatter(&values, &spec.shape, &strides)?
                };
                AnyTensor::Dense(AnyDense::try_new(
                    spec.shape,
                    strides,
                    values,
                    &TensorOptions::default()
                        .with_validation(validation)
                        .with_dim_names(names),
                )?)
            }
            Kind::Coo {
                layout,
                canonical,
                coords,
            } => {
                let ty = coords.first().map_or(IndexType::Int64, |c| c.ty);
                let coords = match layout {
                    CoordLayout::RowMajor => match coords.into_iter().next() {
                        Some(c) => c.finish()?,
                        None => return Err(Error::invariant("coords", None, "missing")),
                    },
                    CoordLayout::ColumnMajor => concat(coords, ty, "coords")?,
                };
                AnyTensor::Coo(AnyCoo::try_new(
                    spec.shape,
                    layout,
                    EntryOrder::from(canonical),
                    coords,
                    values,
                    &TensorOptions::default()
                        .with_validation(validation)
                        .with_dim_names(names),
                )?)
            }
            Kind::Csx {
                axis,
                major,
                shape,
                gcs,
                mut indptr,
                indices,
                mut next,
                ..
            } => {
                let extent = shape[major];
                let mut ptr = Vec::new();
                while next <= extent {
                    ptr.push(self.rows);
                    next += 1;
                    if ptr.len() == FLUSH {
                        indptr.extend(&ptr)?;
                        ptr.clear();
                    }
                }
                indptr.extend(&ptr)?;
                let matrix_names = match (&gcs, spec.layout.rows()) {
                    (
                        Some(_),
                        ArchiveLayout::Gcs {
                            matrix_dim_names, ..
                        },
                    ) => matrix_dim_names.clone(),
                    _ => names.clone(),
                };
                let matrix = AnyCsx::try_new(
                    shape,
                    axis,
                    indptr.finish()?,
                    indices.finish()?,
                    values,
                    &TensorOptions::default()
                        .with_validation(validation)
                        .with_dim_names(matrix_names),
                )?;
                match gcs {
                    Some(map) => AnyTensor::Gcs(AnyGcs::try_new(
                        *map,
                        matrix,
                        &TensorOptions::default().with_dim_names(names),
                    )?),
                    None => AnyTensor::Csx(matrix),
                }
            }
            Kind::Csf {
                order,
                indptr_type,
                mut indptr,
                indices,
                ..
            } => {
                for l in 0..indptr.len() {
                    let end = indices[l + 1].len;
                    indptr[l].extend(&[end])?;
                }
                AnyTensor::Csf(
                    AnyCsf::try_new(
                        spec.shape,
                        order,
                        indptr
                            .into_iter()
                            .map(IdxAcc::finish)
                            .collect::<Result<_>>()?,
                        indices
                            .into_iter()
                            .map(IdxAcc::finish)
                            .collect::<Result<_>>()?,
                        values,
                        &TensorOptions::default()
                            .with_validation(validation)
                            .with_dim_names(names),
                    )?
                    .with_indptr_type(indptr_type)?,
                )
            }
            Kind::Level {
                index_type,
                indptr_type,
                builder,
                ..
            } => {
                let shaped = builder.finish(
                    index_type,
                    indptr_type,
                    &TensorOptions::default()
                        .with_validation(validation)
                        .with_dim_names(names),
                )?;
                // row numbers -> the rows' values; zeros where dense levels filled in
                let rows = shaped.values().as_typed::<u64>().ok_or_else(|| {
                    Error::invariant("level rows", None, "not row numbers (internal)")
                })?;
                let w = self.value_type.byte_width();
                let raw = values.inner().as_slice();
                let mut out = MutableBuffer::new(rows.len() * w);
                for &s in rows.iter() {
                    match (s as usize).checked_sub(1) {
                        None => out.extend_zeros(w),
                        Some(k) => {
                            out.extend_from_slice(raw.get(k * w..(k + 1) * w).ok_or_else(|| {
                                Error::invariant("level rows", Some(k), "no such row (internal)")
                            })?)
                        }
                    }
                }
                let values = ValueBuffer::from_body(
                    self.value_type,
                    &Buffer::from(out),
                    0,
                    rows.len(),
                    "values",
                    false,
                )?;
                AnyTensor::Level(shaped.with_values(values)?)
            }
        })
    }
}

/// The reduced (2-D) coordinates of `n` rows of N-D coordinates, already checked
/// to lie inside the map's shape.
fn reduce(map: &DimMap, coords: &[Vec<usize>], n: usize) -> [Vec<usize>; 2] {
    let mut out = [Vec::with_capacity(n), Vec::with_capacity(n)];
    let mut c = vec![0usize; coords.len()];
    let mut r = [0usize; 2];
    for i in 0..n {
        for (x, col) in c.iter_mut().zip(coords) {
            *x = col[i];
        }
        map.reduce_into(&c, &mut r);
        out[0].push(r[0]);
        out[1].push(r[1]);
    }
    out
}

/// Place row-major `values` at their offsets under packed `strides`.
fn scatter(values: &ValueBuffer, shape: &[usize], strides: &[usize]) -> Result<ValueBuffer> {
    let ty = values.data_type();
    let w = ty.byte_width();
    let src = values.inner().as_slice();
    let size = values.len();
    let mut out = MutableBuffer::from_len_zeroed(size * w);
    let mut idx = unravel(0, shape);
    for k in 0..size {
        let off: usize = idx.iter().zip(strides).map(|(i, s)| i * s).sum();
        let dst = out
            .as_slice_mut()
            .get_mut(off * w..(off + 1) * w)
            .ok_or_else(|| {
                Error::invariant("dense strides", Some(k), "offset outside the tensor")
            })?;
        dst.copy_from_slice(&src[k * w..(k + 1) * w]);
        super::rows::advance(&mut idx, shape);
    }
    ValueBuffer::from_body(ty, &Buffer::from(out), 0, size, "values", false)
}
