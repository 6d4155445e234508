//! A level tensor and its nearest plain tensor (how it travels on the wire and
//! on disk, format/SPEC.md 8.6), both ways.

use arrow_buffer::ScalarBuffer;

use super::{AnyLevel, LevelFormat, LevelKind, LevelType, Plain, coordinate_view, rule};
use crate::buffer::{IndexBuffer, ValueBuffer, with_index_slice};
use crate::dims::advance;
use crate::error::{Error, Result};
use crate::tensor::levels::{Level, Strided};
use crate::tensor::{
    AnyCoo, AnyCsf, AnyCsx, AnyDense, AnyTensor, CoordLayout, EntryOrder, TensorOptions,
};
use crate::types::{Index, IndexType};
use crate::{with_index_type, with_value_type};

impl AnyLevel {
    /// The level tensor that a plain tensor is, sharing its buffers: COO is
    /// `compressed` then `singleton` levels (interleaved for row-major
    /// coordinates, `soa` for column-major), CSR / CSC are `(dense, compressed)`,
    /// CSF is all `compressed`, a row- or column-major dense tensor all `dense`;
    /// the properties are what the data are (one O(nnz) pass). Only the
    /// two-element root positions of COO and CSF, and dense tensors with other
    /// strides, are new buffers. GCS and DM tensors, whose levels combine
    /// dimensions, go through COO (a copy) to the COO levels.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{AnyLevel, LevelFormat};
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 2], 1.0), (vec![1, 0], 2.0)])?;
    /// let csr = coo.to_csx::<i32, i32>(CompressedAxis::Row)?;
    /// let t = AnyLevel::from_tensor(&csr.clone().into())?;
    /// assert_eq!(t.format(), &LevelFormat::csr());
    /// // zero-copy: the level tensor's buffers are the matrix's
    /// assert_eq!(t.positions()[1].as_ref().unwrap().inner().as_ptr(), csr.indptr().inner().as_ptr());
    /// assert_eq!(t.values().inner().as_ptr(), csr.values().inner().as_ptr());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_tensor(t: &AnyTensor) -> Result<AnyLevel> {
        let t = match t {
            AnyTensor::Level(l) => return Ok(l.clone()),
            AnyTensor::Dense(d) if !d.is_row_major() && !d.is_column_major() => {
                with_value_type!(d.value_type(), V => {
                    let typed = d.downcast::<V>().ok_or_else(|| Error::Unsupported("dense dispatch (internal)".into()))?;
                    AnyTensor::from(typed.to_row_major()?)
                })
            }
            AnyTensor::Gcs(_) | AnyTensor::Dm(_) => {
                with_value_type!(t.value_type(), V => {
                    let coo = t.to_coo::<V, i64>()?;
                    AnyTensor::from(coo)
                })
            }
            other => other.clone(),
        };
        let view = t.levels()?;
        let n = view.ndim;
        let order: Vec<usize> = view
            .dim_to_lvl
            .iter()
            .map(|e| match e.as_slice() {
                [(d, 1)] => Ok(*d),
                _ => Err(Error::invariant(
                    "level map",
                    None,
                    "not a permutation (internal)",
                )),
            })
            .collect::<Result<_>>()?;
        let types: Vec<LevelType> = view.levels.iter().map(Level::level_type).collect();
        let format = LevelFormat::try_new(types, order)?;
        let mut positions = Vec::with_capacity(n);
        let mut coordinates = Vec::with_capacity(n);
        for (l, level) in view.levels.iter().enumerate() {
            positions.push(level.positions.as_ref().map(|s| s.buffer.clone()));
            coordinates.push(if format.has_coordinates(l) {
                let s = level
                    .coordinates
                    .as_ref()
                    .ok_or_else(|| rule(l, "no coordinates (internal)"))?;
                let width = format.aos_width(l);
                Some(
                    if s.stride == width && s.offset == 0 && s.buffer.len() == s.len * width {
                        s.buffer.clone()
                    } else if s.stride == 1 {
                        s.buffer
                            .slice(s.offset, s.len)
                            .ok_or_else(|| rule(l, "coordinates out of range (internal)"))?
                    } else {
                        s.buffer.gather_strided(s.offset, s.stride, s.len)
                    },
                )
            } else {
                None
            });
        }
        let it = t.index_type().unwrap_or(IndexType::Int64);
        let pt = t.indptr_type().unwrap_or(it);
        AnyLevel::try_new(
            t.shape().to_vec(),
            format,
            positions,
            coordinates,
            view.values,
            &TensorOptions::trusted().with_dim_names(t.dim_names().to_vec()),
        )?
        .with_index_types(it, pt)
    }

    /// The nearest plain tensor, as it travels on the wire (format/SPEC.md 8.6):
    /// all-dense formats as a dense tensor (strides in level order), `(dense,
    /// compressed)` as CSR / CSC, `compressed` then `singleton` levels as COO,
    /// everything else as CSF with every dense level expanded to a compressed one
    /// (coordinates `0..size` per parent) and every singleton level to a
    /// compressed one (one child per parent). Buffers are shared where the layouts
    /// coincide. When an expansion's coordinates or positions do not fit the
    /// index types, the CSF uses int64 for them.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
    /// use arrow_sparse::{AnyTensor, CooTensor, Format};
    /// // batched CSR: two 2 x 3 matrices
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2, 3], &[(vec![0, 1, 2], 1.0), (vec![1, 0, 0], 2.0)])?;
    /// let t = LevelTensor::<f64, i32>::from_coo(&coo, &LevelFormat::batched_csr(1)?)?;
    /// let AnyTensor::Csf(csf) = t.as_any().to_storage()? else { unreachable!() };
    /// assert_eq!(csf.indices()[0], arrow_sparse::IndexBuffer::Int32(vec![0, 1].into())); // expanded
    /// assert_eq!(csf.indices()[1], arrow_sparse::IndexBuffer::Int32(vec![0, 1, 0, 1].into())); // expanded
    /// assert_eq!(csf.indptr()[1], arrow_sparse::IndexBuffer::Int32(vec![0, 0, 1, 2, 2].into())); // shared
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn to_storage(&self) -> Result<AnyTensor> {
        let opts = TensorOptions::trusted().with_dim_names(self.dim_names.clone());
        let n = self.shape.len();
        let order = &self.format.axis_order;
        let sizes: Vec<usize> = order.iter().map(|&d| self.shape[d]).collect();
        let counts = self.counts();
        Ok(match self.format.plain() {
            Plain::Dense => {
                let mut strides = vec![0usize; n];
                let mut s = 1usize;
                for l in (0..n).rev() {
                    strides[order[l]] = s;
                    s = s.saturating_mul(sizes[l]);
                }
                AnyTensor::Dense(AnyDense::try_new(
                    self.shape.clone(),
                    strides,
                    self.values.clone(),
                    &opts,
                )?)
            }
            Plain::Csx(axis) => AnyTensor::Csx(AnyCsx::try_new(
                self.shape.clone(),
                axis,
                self.positions[1]
                    .clone()
                    .ok_or_else(|| rule(1, "no positions"))?,
                self.coordinates[1]
                    .clone()
                    .ok_or_else(|| rule(1, "no coordinates"))?,
                self.values.clone(),
                &opts,
            )?),
            Plain::Coo => {
                let nnz = counts[0];
                let identity = order.iter().enumerate().all(|(l, &d)| l == d);
                let last = self.format.levels[n - 1];
                let canonical = identity && last.unique && last.ordered;
                let aos = self.format.aos_width(0) == n;
                let (layout, coords) = if aos && identity {
                    let c = self.coordinates[0]
                        .clone()
                        .ok_or_else(|| rule(0, "no coordinates"))?;
                    (CoordLayout::RowMajor, c)
                } else {
                    // dimension d is level inv[d]
                    let mut inv = vec![0usize; n];
                    for (l, &d) in order.iter().enumerate() {
                        inv[d] = l;
                    }
                    let cols: Vec<Strided> = (0..n)
                        .map(|l| coordinate_view(&self.format, &self.coordinates, l, nnz))
                        .collect::<Result<_>>()?;
                    let coords = with_index_type!(self.index_type, I => {
                        let mut out: Vec<I> = crate::alloc::with_capacity(nnz.saturating_mul(n), "COO coordinates")?;
                        let typed: Vec<&[I]> = cols.iter().map(|s| s.buffer.as_typed::<I>().map(|b| &b[..]).unwrap_or(&[])).collect();
                        let at = |l: usize, i: usize| -> Result<I> {
                            let s = &cols[l];
                            typed[l].get(s.offset + i * s.stride).copied().ok_or_else(|| rule(l, "coordinate out of range"))
                        };
                        if aos {
                            for i in 0..nnz { for &l in &inv { out.push(at(l, i)?); } }
                        } else {
                            for &l in &inv { for i in 0..nnz { out.push(at(l, i)?); } }
                        }
                        IndexBuffer::from(ScalarBuffer::from(out))
                    });
                    let layout = if aos {
                        CoordLayout::RowMajor
                    } else {
                        CoordLayout::ColumnMajor
                    };
                    (layout, coords)
                };
                AnyTensor::Coo(AnyCoo::try_new(
                    self.shape.clone(),
                    layout,
                    EntryOrder::from(canonical),
                    coords,
                    self.values.clone(),
                    &opts,
                )?)
            }
            Plain::Csf => self.expand_to_csf(&sizes, &counts, opts)?,
        })
    }

    fn expand_to_csf(
        &self,
        sizes: &[usize],
        counts: &[usize],
        opts: TensorOptions,
    ) -> Result<AnyTensor> {
        let n = self.shape.len();
        let levels = &self.format.levels;
        // what the expansions need: dense coordinates up to size - 1, positions up
        // to a level's node count
        let mut max_crd = 0usize;
        let mut max_pos = 0usize;
        for l in 0..n {
            match levels[l].kind {
                LevelKind::Dense => {
                    max_crd = max_crd.max(sizes[l].saturating_sub(1));
                    max_pos = max_pos.max(counts[l]);
                }
                LevelKind::Singleton => max_pos = max_pos.max(counts[l]),
                LevelKind::Compressed => {}
            }
        }
        let fits = |ty: IndexType, x: usize| x as u64 <= ty.max_value();
        let it = if fits(self.index_type, max_crd) {
            self.index_type
        } else {
            IndexType::Int64
        };
        let pt = if fits(self.indptr_type, max_pos) {
            self.indptr_type
        } else {
            IndexType::Int64
        };
        let mut indptr = Vec::with_capacity(n - 1);
        let mut indices = Vec::with_capacity(n);
        let mut parents = 1usize;
        for l in 0..n {
            let count = counts[l];
            let (ptr, idx) = match levels[l].kind {
                LevelKind::Dense => {
                    let s = sizes[l];
                    let ptr = (l > 0).then(|| (0..=parents).map(|p| p * s).collect::<Vec<usize>>());
                    let mut idx =
                        crate::alloc::with_capacity::<usize>(count, "expanded dense coordinates")?;
                    for _ in 0..parents {
                        idx.extend(0..s);
                    }
                    (ptr.map(|p| usizes(&p, pt)).transpose()?, usizes(&idx, it)?)
                }
                LevelKind::Singleton => {
                    let ptr: Vec<usize> = (0..=parents).collect();
                    (
                        Some(usizes(&ptr, pt)?),
                        self.column(l, count)?.cast(it, "coordinates")?,
                    )
                }
                LevelKind::Compressed => {
                    let ptr = match l {
                        0 => None,
                        _ => Some(
                            self.positions[l]
                                .as_ref()
                                .ok_or_else(|| rule(l, "no positions"))?
                                .cast(pt, "positions")?,
                        ),
                    };
                    (ptr, self.column(l, count)?.cast(it, "coordinates")?)
                }
            };
            if let Some(p) = ptr {
                indptr.push(p);
            }
            indices.push(idx);
            parents = count;
        }
        Ok(AnyTensor::Csf(
            AnyCsf::try_new(
                self.shape.clone(),
                self.format.axis_order.clone(),
                indptr,
                indices,
                self.values.clone(),
                &opts,
            )?
            .with_indptr_type(pt)?,
        ))
    }

    /// Level `l`'s coordinates as a buffer of their own (shared when they are
    /// one, extracted from an interleaved buffer otherwise).
    fn column(&self, l: usize, count: usize) -> Result<IndexBuffer> {
        let s = coordinate_view(&self.format, &self.coordinates, l, count)?;
        Ok(
            if s.stride == 1 && s.offset == 0 && s.buffer.len() == count {
                s.buffer
            } else {
                s.buffer.gather_strided(s.offset, s.stride, s.len)
            },
        )
    }

    /// The level tensor of `format` whose [`to_storage`](Self::to_storage) is
    /// `storage`: the inverse, checking every expanded buffer (a dense level's
    /// coordinates must be `0..size` under every parent, a singleton level's
    /// positions `0, 1, ..., parents`) and restoring the index types given.
    /// Buffers are shared where the layouts coincide. This is how IPC messages,
    /// archives and columns carrying `arrow_sparse.levels` metadata are read.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{AnyLevel, LevelFormat, LevelTensor};
    /// use arrow_sparse::{Convert, CooTensor, IndexType, TensorOptions};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2, 3], &[(vec![0, 1, 2], 1.0), (vec![1, 0, 0], 2.0)])?;
    /// let t = LevelTensor::<f64, i32>::from_coo(&coo, &LevelFormat::batched_csr(1)?)?.as_any().clone();
    /// let storage = t.to_storage()?;
    /// let back = AnyLevel::from_storage(&storage, t.format().clone(), IndexType::Int32, IndexType::Int32, &TensorOptions::default())?;
    /// assert_eq!(back, t);
    /// // a CSF whose levels 0 and 1 are not complete is no (dense, dense, compressed) tensor
    /// let dense_first = LevelFormat::csf_with_dense(2, vec![0, 1, 2])?;
    /// let csf: arrow_sparse::AnyTensor = coo.to_csf::<i32, i32>(&[0, 1, 2])?.into();
    /// assert!(AnyLevel::from_storage(&csf, dense_first, IndexType::Int32, IndexType::Int32, &TensorOptions::default()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_storage(
        storage: &AnyTensor,
        format: LevelFormat,
        index_type: IndexType,
        indptr_type: IndexType,
        options: &TensorOptions,
    ) -> Result<AnyLevel> {
        let n = format.ndim();
        let shape = storage.shape().to_vec();
        if shape.len() != n {
            return Err(Error::shape(
                "level tensor storage",
                format!("{n} dimensions"),
                format!("{} dimensions", shape.len()),
            ));
        }
        let order = format.axis_order.clone();
        let sizes: Vec<usize> = order.iter().map(|&d| shape[d]).collect();
        let opts = options.clone().with_dim_names(storage.dim_names().to_vec());
        let mismatch = |found: &str| {
            Error::invariant(
                "level tensor storage",
                None,
                format!(
                    "the format {format} travels as {:?}, found {found}",
                    format.plain()
                ),
            )
        };
        let cast = |b: &IndexBuffer, ty: IndexType, what: &str| b.cast(ty, what);
        let (positions, coordinates, values): (
            Vec<Option<IndexBuffer>>,
            Vec<Option<IndexBuffer>>,
            ValueBuffer,
        ) = match (format.plain(), storage) {
            (Plain::Dense, AnyTensor::Dense(d)) => {
                let mut want = vec![0usize; n];
                let mut s = 1usize;
                for l in (0..n).rev() {
                    want[order[l]] = s;
                    s = s.saturating_mul(sizes[l]);
                }
                // zero-copy only for the packed layout of the whole buffer from
                // its start (a view at an offset, or with other strides, is
                // gathered)
                let packed = d.offset() == 0
                    && d.strides().len() == want.len()
                    && d.strides()
                        .iter()
                        .zip(&want)
                        .all(|(&s, &w)| usize::try_from(s) == Ok(w))
                    && Some(d.values().len())
                        == sizes.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
                let values = if packed {
                    d.values().clone()
                } else {
                    gather_dense(d, &order, &sizes)?
                };
                (vec![None; n], vec![None; n], values)
            }
            (Plain::Csx(axis), AnyTensor::Csx(m)) if m.axis() == axis => (
                vec![None, Some(cast(m.indptr(), indptr_type, "positions")?)],
                vec![None, Some(cast(m.indices(), index_type, "coordinates")?)],
                m.values().clone(),
            ),
            (Plain::Coo, AnyTensor::Coo(c)) => {
                let nnz = c.nnz();
                let identity = order.iter().enumerate().all(|(l, &d)| l == d);
                let aos = format.aos_width(0) == n;
                let coords = cast(c.coords(), index_type, "coordinates")?;
                let column = |d: usize| match c.layout() {
                    CoordLayout::RowMajor => coords.gather_strided(d, n, nnz),
                    CoordLayout::ColumnMajor => coords
                        .slice(d * nnz, nnz)
                        .unwrap_or_else(|| coords.gather_strided(d * nnz, 1, nnz)),
                };
                let mut crd: Vec<Option<IndexBuffer>> = vec![None; n];
                if aos && (identity && c.layout() == CoordLayout::RowMajor || n == 1) {
                    crd[0] = Some(if n == 1 { column(0) } else { coords.clone() });
                } else if aos {
                    let cols: Vec<IndexBuffer> = order.iter().map(|&d| column(d)).collect();
                    crd[0] = Some(interleave(&cols, nnz));
                } else {
                    for (l, &d) in order.iter().enumerate() {
                        crd[l] = Some(column(d));
                    }
                }
                let mut pos = vec![None; n];
                pos[0] = Some(usizes(&[0, nnz], indptr_type)?);
                (pos, crd, c.values().clone())
            }
            (Plain::Csf, AnyTensor::Csf(t)) if t.axis_order() == order.as_slice() => {
                let mut pos: Vec<Option<IndexBuffer>> = vec![None; n];
                let mut crd: Vec<Option<IndexBuffer>> = vec![None; n];
                let mut parents = 1usize;
                // per run start: the columns of the run, to interleave
                let mut runs: Vec<(usize, Vec<IndexBuffer>)> = Vec::new();
                for l in 0..n {
                    let idx = &t.indices()[l];
                    let ptr = l.checked_sub(1).map(|p| &t.indptr()[p]);
                    let count = idx.len();
                    let what =
                        |b: &str| format!("{b}[{l}] of an expanded {} level", format.levels[l]);
                    match format.levels[l].kind {
                        LevelKind::Dense => {
                            let s = sizes[l];
                            if Some(count) != parents.checked_mul(s) {
                                return Err(Error::length(
                                    what("indices"),
                                    parents.saturating_mul(s),
                                    count,
                                ));
                            }
                            expect_seq(idx, |i| Some(i % s.max(1)), &what("indices"))?;
                            if let Some(p) = ptr {
                                expect_seq(p, |i| i.checked_mul(s), &what("indptr"))?;
                            }
                        }
                        LevelKind::Singleton => {
                            if count != parents {
                                return Err(Error::length(what("indices"), parents, count));
                            }
                            if let Some(p) = ptr {
                                expect_seq(p, Some, &what("indptr"))?;
                            }
                        }
                        LevelKind::Compressed => {
                            pos[l] = Some(match ptr {
                                None => usizes(&[0, count], indptr_type)?,
                                Some(p) => cast(p, indptr_type, "positions")?,
                            });
                        }
                    }
                    if format.levels[l].kind != LevelKind::Dense {
                        let col = cast(idx, index_type, "coordinates")?;
                        let (b, width, _) = format
                            .coordinate_source(l)
                            .ok_or_else(|| rule(l, "no coordinates"))?;
                        if width == 1 {
                            crd[l] = Some(col);
                        } else if b == l {
                            runs.push((l, vec![col]));
                        } else if let Some(run) = runs.last_mut() {
                            run.1.push(col);
                        }
                    }
                    parents = count;
                }
                for (c, cols) in runs {
                    let count = cols.first().map_or(0, IndexBuffer::len);
                    crd[c] = Some(interleave(&cols, count));
                }
                (pos, crd, t.values().clone())
            }
            (_, other) => return Err(mismatch(&other.format().to_string())),
        };
        AnyLevel::try_new(shape, format, positions, coordinates, values, &opts)?
            .with_index_types(index_type, indptr_type)
    }
}

/// `xs` as an index buffer of type `ty` (checked).
fn usizes(xs: &[usize], ty: IndexType) -> Result<IndexBuffer> {
    with_index_type!(ty, I => {
        let v = xs
            .iter()
            .map(|&x| I::try_from_usize(x).ok_or_else(|| Error::overflow("level buffer", x.to_string(), ty.name())))
            .collect::<Result<Vec<I>>>()?;
        Ok(IndexBuffer::from(ScalarBuffer::from(v)))
    })
}

/// Columns of equal length interleaved (array of structures), in one type.
fn interleave(cols: &[IndexBuffer], count: usize) -> IndexBuffer {
    let ty = cols
        .first()
        .map_or(IndexType::Int64, IndexBuffer::data_type);
    with_index_type!(ty, I => {
        let typed: Vec<&[I]> = cols.iter().map(|c| c.as_typed::<I>().map(|b| &b[..]).unwrap_or(&[])).collect();
        let mut out: Vec<I> = Vec::with_capacity(count * cols.len());
        for i in 0..count {
            for c in &typed {
                if let Some(&x) = c.get(i) {
                    out.push(x);
                }
            }
        }
        IndexBuffer::from(ScalarBuffer::from(out))
    })
}

/// Element `i` of `b` must be `f(i)`.
fn expect_seq(b: &IndexBuffer, f: impl Fn(usize) -> Option<usize>, what: &str) -> Result<()> {
    with_index_slice!(b.as_slice(), s => {
        for (i, x) in s.iter().enumerate() {
            let want = f(i);
            if x.index() != want {
                return Err(Error::invariant(what, Some(i), format!("expected {want:?}, found {}", x.wide())));
            }
        }
    });
    Ok(())
}

/// A dense tensor's values in level order (a copy).
fn gather_dense(d: &AnyDense, order: &[usize], sizes: &[usize]) -> Result<ValueBuffer> {
    with_value_type!(d.value_type(), V => {
        let t = d.downcast::<V>().ok_or_else(|| Error::Unsupported("dense dispatch (internal)".into()))?;
        let size = sizes.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).ok_or_else(|| Error::overflow("dense size", format!("{sizes:?}"), "usize"))?;
        let mut out: Vec<V> = crate::alloc::with_capacity(size, "dense level values")?;
        let mut lvl = vec![0usize; sizes.len()];
        let mut dims = vec![0usize; sizes.len()];
        for _ in 0..size {
            for (&c, &dd) in lvl.iter().zip(order) {
                dims[dd] = c;
            }
            out.push(t.get(&dims).ok_or_else(|| Error::invariant("dense storage", None, "element outside the buffer"))?);
            advance(&mut lvl, sizes);
        }
        Ok(ValueBuffer::from(ScalarBuffer::from(out)))
    })
}
