//! `arrow_sparse._native.Tensor`: one tensor and its message metadata, with its
//! buffers as zero-copy views and the constructors from numpy buffers.

use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_sparse::dims::DimMap;
use arrow_sparse::ipc::TensorMessage;
use arrow_sparse::{
    AnyCoo, AnyCsf, AnyCsx, AnyDense, AnyGcs, AnyTensor, CompressedAxis, CoordLayout, Format,
    IndexBuffer, IndexType, Validation, ValueBuffer, ValueType,
};
use arrow_sparse::{EntryOrder, TensorOptions};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::buffer::{BufferView, import, typestr_of_value};
use crate::errors::{IntoPy, guarded};

/// A sparse or dense tensor (the Python class `arrow_sparse.Tensor` wraps it).
#[pyclass(frozen, module = "arrow_sparse._native")]
pub(crate) struct Tensor {
    pub(crate) message: TensorMessage,
}

impl Tensor {
    pub(crate) fn new(message: TensorMessage) -> Self {
        Tensor { message }
    }

    fn tensor(&self) -> &AnyTensor {
        &self.message.tensor
    }
}

fn value_view(b: &ValueBuffer) -> BufferView {
    BufferView::new(b.inner().clone(), typestr_of_value(b.data_type()), b.len())
}

fn index_view(b: &IndexBuffer) -> BufferView {
    let t = match b.data_type() {
        IndexType::Int8 => ValueType::Int8,
        IndexType::Int16 => ValueType::Int16,
        IndexType::Int32 => ValueType::Int32,
        IndexType::Int64 => ValueType::Int64,
        IndexType::UInt8 => ValueType::UInt8,
        IndexType::UInt16 => ValueType::UInt16,
        IndexType::UInt32 => ValueType::UInt32,
        _ => ValueType::UInt64,
    };
    BufferView::new(b.inner().clone(), typestr_of_value(t), b.len())
}

/// `(name, view)` for every buffer of `t`, names prefixed by `prefix`.
fn collect_buffers(t: &AnyTensor, prefix: &str, out: &mut Vec<(String, BufferView)>) {
    match t {
        AnyTensor::Dense(d) => out.push((format!("{prefix}values"), value_view(d.values()))),
        AnyTensor::Coo(c) => {
            out.push((format!("{prefix}coords"), index_view(c.coords())));
            out.push((format!("{prefix}values"), value_view(c.values())));
        }
        AnyTensor::Csx(m) => push_csx(m, prefix, out),
        AnyTensor::Gcs(g) => push_csx(g.matrix(), prefix, out),
        AnyTensor::Csf(c) => {
            for (i, b) in c.indptr().iter().enumerate() {
                out.push((format!("{prefix}indptr_{i}"), index_view(b)));
            }
            for (i, b) in c.indices().iter().enumerate() {
                out.push((format!("{prefix}indices_{i}"), index_view(b)));
            }
            out.push((format!("{prefix}values"), value_view(c.values())));
        }
        AnyTensor::Dm(d) => collect_buffers(d.storage(), &format!("{prefix}storage."), out),
        AnyTensor::Level(l) => {
            // MLIR's buffers, by level: positions of compressed levels,
            // coordinates of compressed levels and of `soa` singleton levels
            for (i, b) in l.positions().iter().enumerate() {
                if let Some(b) = b {
                    out.push((format!("{prefix}positions_{i}"), index_view(b)));
                }
            }
            for (i, b) in l.coordinates().iter().enumerate() {
                if let Some(b) = b {
                    out.push((format!("{prefix}coordinates_{i}"), index_view(b)));
                }
            }
            out.push((format!("{prefix}values"), value_view(l.values())));
        }
        _ => {}
    }
}

fn push_csx(m: &AnyCsx, prefix: &str, out: &mut Vec<(String, BufferView)>) {
    out.push((format!("{prefix}indptr"), index_view(m.indptr())));
    out.push((format!("{prefix}indices"), index_view(m.indices())));
    out.push((format!("{prefix}values"), value_view(m.values())));
}

fn parse_index_type(s: &str) -> PyResult<IndexType> {
    s.parse::<IndexType>().py_err()
}

fn parse_axis(s: &str) -> PyResult<CompressedAxis> {
    match s {
        "row" => Ok(CompressedAxis::Row),
        "column" => Ok(CompressedAxis::Column),
        other => Err(PyValueError::new_err(format!(
            "compressed_axis must be \"row\" or \"column\", found {other:?}"
        ))),
    }
}

fn parse_format(s: &str) -> PyResult<Format> {
    s.parse::<Format>().py_err()
}

fn value_type_of(typestr: &str) -> PyResult<ValueType> {
    Ok(match typestr {
        "|i1" => ValueType::Int8,
        "<i2" => ValueType::Int16,
        "<i4" => ValueType::Int32,
        "<i8" => ValueType::Int64,
        "|u1" => ValueType::UInt8,
        "<u2" => ValueType::UInt16,
        "<u4" => ValueType::UInt32,
        "<u8" => ValueType::UInt64,
        "<f2" => ValueType::Float16,
        "<f4" => ValueType::Float32,
        "<f8" => ValueType::Float64,
        other => {
            return Err(PyTypeError::new_err(format!(
                "unsupported numpy dtype {other:?}: arrow-sparse holds little-endian int8..int64, uint8..uint64, float16, float32, float64"
            )));
        }
    })
}

/// A value buffer over the memory of a numpy array (no copy).
pub(crate) fn values_from(array: &Bound<'_, PyAny>) -> PyResult<ValueBuffer> {
    let (buffer, typestr) = import(array)?;
    let t = value_type_of(&typestr)?;
    Ok(typed_value(t, buffer))
}

fn typed_value(t: ValueType, b: Buffer) -> ValueBuffer {
    // `import` returns buffers whose address is a multiple of the element size (or
    // copies), so ScalarBuffer::from cannot fail its alignment assertion
    match t {
        ValueType::Int8 => ValueBuffer::Int8(ScalarBuffer::from(b)),
        ValueType::Int16 => ValueBuffer::Int16(ScalarBuffer::from(b)),
        ValueType::Int32 => ValueBuffer::Int32(ScalarBuffer::from(b)),
        ValueType::Int64 => ValueBuffer::Int64(ScalarBuffer::from(b)),
        ValueType::UInt8 => ValueBuffer::UInt8(ScalarBuffer::from(b)),
        ValueType::UInt16 => ValueBuffer::UInt16(ScalarBuffer::from(b)),
        ValueType::UInt32 => ValueBuffer::UInt32(ScalarBuffer::from(b)),
        ValueType::UInt64 => ValueBuffer::UInt64(ScalarBuffer::from(b)),
        ValueType::Float16 => ValueBuffer::Float16(ScalarBuffer::from(b)),
        ValueType::Float32 => ValueBuffer::Float32(ScalarBuffer::from(b)),
        _ => ValueBuffer::Float64(ScalarBuffer::from(b)),
    }
}

/// An index buffer over the memory of a numpy array (no copy).
fn indices_from(array: &Bound<'_, PyAny>) -> PyResult<IndexBuffer> {
    let (b, typestr) = import(array)?;
    Ok(match value_type_of(&typestr)? {
        ValueType::Int8 => IndexBuffer::Int8(ScalarBuffer::from(b)),
        ValueType::Int16 => IndexBuffer::Int16(ScalarBuffer::from(b)),
        ValueType::Int32 => IndexBuffer::Int32(ScalarBuffer::from(b)),
        ValueType::Int64 => IndexBuffer::Int64(ScalarBuffer::from(b)),
        ValueType::UInt8 => IndexBuffer::UInt8(ScalarBuffer::from(b)),
        ValueType::UInt16 => IndexBuffer::UInt16(ScalarBuffer::from(b)),
        ValueType::UInt32 => IndexBuffer::UInt32(ScalarBuffer::from(b)),
        ValueType::UInt64 => IndexBuffer::UInt64(ScalarBuffer::from(b)),
        other => {
            return Err(PyTypeError::new_err(format!(
                "index arrays must have an integer dtype, found {}",
                other.name()
            )));
        }
    })
}

fn validation(validate: bool) -> Validation {
    if validate {
        Validation::Full
    } else {
        Validation::Trusted
    }
}

#[pymethods]
impl Tensor {
    /// Build a tensor from numpy arrays, without copying them (private: the
    /// Python layer's `Tensor.from_*` call it).
    #[staticmethod]
    #[pyo3(signature = (format, shape, arrays, *, dim_names=None, strides=None, offset=0, column_major_coords=false, canonical=false, axis_order=None, dimensions=None, partitioning=None, compressed_axis="row", validate=true))]
    #[allow(clippy::too_many_arguments)]
    fn _from_arrays(
        py: Python<'_>,
        format: &str,
        shape: Vec<usize>,
        arrays: &Bound<'_, PyDict>,
        dim_names: Option<Vec<String>>,
        strides: Option<Vec<isize>>,
        offset: usize,
        column_major_coords: bool,
        canonical: bool,
        axis_order: Option<Vec<usize>>,
        dimensions: Option<Vec<usize>>,
        partitioning: Option<Vec<usize>>,
        compressed_axis: &str,
        validate: bool,
    ) -> PyResult<Tensor> {
        let names = dim_names.unwrap_or_default();
        let v = validation(validate);
        let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
            arrays
                .get_item(k)?
                .ok_or_else(|| PyValueError::new_err(format!("missing array {k:?}")))
        };
        let values = values_from(&get("values")?)?;
        let tensor = match parse_format(format)? {
            Format::Dense => {
                let strides = match strides {
                    Some(s) => s,
                    // a stride past isize::MAX (a shape too large) fails the checks
                    None => arrow_sparse::tensor::dense::row_major_strides(&shape)
                        .into_iter()
                        .map(|s| isize::try_from(s).unwrap_or(isize::MAX))
                        .collect(),
                };
                guarded(py, || {
                    AnyDense::try_new_with_offset(
                        shape,
                        strides,
                        offset,
                        values,
                        &TensorOptions::default()
                            .with_validation(v)
                            .with_dim_names(names),
                    )
                })
                .map(AnyTensor::Dense)?
            }
            Format::Coo => {
                let coords = indices_from(&get("coords")?)?;
                let layout = if column_major_coords {
                    CoordLayout::ColumnMajor
                } else {
                    CoordLayout::RowMajor
                };
                guarded(py, || {
                    AnyCoo::try_new(
                        shape,
                        layout,
                        EntryOrder::from(canonical),
                        coords,
                        values,
                        &TensorOptions::default()
                            .with_validation(v)
                            .with_dim_names(names),
                    )
                })
                .map(AnyTensor::Coo)?
            }
            f @ (Format::Csr | Format::Csc) => {
                let axis = if f == Format::Csr {
                    CompressedAxis::Row
                } else {
                    CompressedAxis::Column
                };
                let indptr = indices_from(&get("indptr")?)?;
                let indices = indices_from(&get("indices")?)?;
                guarded(py, || {
                    AnyCsx::try_new(
                        shape,
                        axis,
                        indptr,
                        indices,
                        values,
                        &TensorOptions::default()
                            .with_validation(v)
                            .with_dim_names(names),
                    )
                })
                .map(AnyTensor::Csx)?
            }
            Format::Csf => {
                let n = shape.len();
                let mut indptr = Vec::new();
                let mut indices = Vec::new();
                for i in 0..n.saturating_sub(1) {
                    indptr.push(indices_from(&get(&format!("indptr_{i}"))?)?);
                }
                for i in 0..n {
                    indices.push(indices_from(&get(&format!("indices_{i}"))?)?);
                }
                let order = axis_order.unwrap_or_else(|| (0..n).collect());
                guarded(py, || {
                    AnyCsf::try_new(
                        shape,
                        order,
                        indptr,
                        indices,
                        values,
                        &TensorOptions::default()
                            .with_validation(v)
                            .with_dim_names(names),
                    )
                })
                .map(AnyTensor::Csf)?
            }
            Format::Gcs => {
                let n = shape.len();
                let dims = dimensions.unwrap_or_else(|| (0..n).collect());
                let parts = partitioning.unwrap_or_else(|| vec![n / 2]);
                let map = DimMap::try_new(shape, dims, parts).py_err()?;
                let axis = parse_axis(compressed_axis)?;
                let indptr = indices_from(&get("indptr")?)?;
                let indices = indices_from(&get("indices")?)?;
                let reduced = map.reduced_shape().to_vec();
                guarded(py, || {
                    let m = AnyCsx::try_new(
                        reduced,
                        axis,
                        indptr,
                        indices,
                        values,
                        &TensorOptions::default().with_validation(v),
                    )?;
                    AnyGcs::try_new(map, m, &TensorOptions::default().with_dim_names(names))
                })
                .map(AnyTensor::Gcs)?
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "{other} tensors are built with Tensor.to_dm"
                )));
            }
        };
        Ok(Tensor::new(tensor.into()))
    }

    /// `(dimensions, partitioning)` of the GCS map with the fewest bytes for a
    /// tensor of `shape` with `nnz` entries (what `convert --to gcs` picks).
    #[staticmethod]
    fn _best_mapping(
        shape: Vec<usize>,
        nnz: usize,
        compressed_axis: &str,
    ) -> PyResult<(Vec<usize>, Vec<usize>)> {
        let axis = parse_axis(compressed_axis)?;
        let (map, _) = arrow_sparse::tensor::gcs::best_mapping(&shape, nnz, axis).py_err()?;
        Ok((map.dimensions().to_vec(), map.partitioning().to_vec()))
    }

    /// `"coo"`, `"csr"`, `"csc"`, `"csf"`, `"dense"`, `"gcs"`, `"dm"` or `"level"`.
    #[getter]
    fn format(&self) -> &'static str {
        self.tensor().format().name()
    }

    /// Extents, one per dimension.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.tensor().shape().to_vec()
    }

    /// Dimension names (empty strings where unnamed).
    #[getter]
    fn dim_names(&self) -> Vec<String> {
        self.tensor().dim_names().to_vec()
    }

    /// Element type name, e.g. `"float64"`.
    #[getter]
    fn value_type(&self) -> &'static str {
        self.tensor().value_type().name()
    }

    /// Index type name, or None for a dense tensor.
    #[getter]
    fn index_type(&self) -> Option<&'static str> {
        self.tensor().index_type().map(IndexType::name)
    }

    /// Index type of the indptr buffers (CSR / CSC / CSF / GCS), else None.
    #[getter]
    fn indptr_type(&self) -> Option<&'static str> {
        self.tensor().indptr_type().map(IndexType::name)
    }

    /// Number of stored entries (for a dense tensor: its non-zeros).
    #[getter]
    fn nnz(&self) -> usize {
        self.tensor().nnz()
    }

    /// The message's custom metadata as a dict.
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.message.custom_metadata {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// CSF axis order, else None.
    #[getter]
    fn axis_order(&self) -> Option<Vec<usize>> {
        self.tensor().axis_order().map(<[usize]>::to_vec)
    }

    /// GCS / DM dimension permutation, else None.
    #[getter]
    fn dimensions(&self) -> Option<Vec<usize>> {
        self.tensor().dim_map().map(|m| m.dimensions().to_vec())
    }

    /// GCS / DM partitioning (split points of `dimensions`), else None.
    #[getter]
    fn partitioning(&self) -> Option<Vec<usize>> {
        self.tensor().dim_map().map(|m| m.partitioning().to_vec())
    }

    /// Dense element strides (in elements, signed), else None.
    #[getter]
    fn strides(&self) -> Option<Vec<isize>> {
        match self.tensor() {
            AnyTensor::Dense(d) => Some(d.strides().to_vec()),
            _ => None,
        }
    }

    /// Dense element offset of index (0, ..., 0) in the values buffer, else None.
    #[getter]
    fn offset(&self) -> Option<usize> {
        match self.tensor() {
            AnyTensor::Dense(d) => Some(d.offset()),
            _ => None,
        }
    }

    /// Whether COO coordinates are stored dimension by dimension (else None for
    /// other formats).
    #[getter]
    fn column_major_coords(&self) -> Option<bool> {
        match self.tensor() {
            AnyTensor::Coo(c) => Some(c.layout() == CoordLayout::ColumnMajor),
            _ => None,
        }
    }

    /// COO canonical flag (sorted, no duplicates), else None.
    #[getter]
    fn is_canonical(&self) -> Option<bool> {
        match self.tensor() {
            AnyTensor::Coo(c) => Some(c.is_canonical()),
            _ => None,
        }
    }

    /// GCS compressed axis of the reduced matrix (`"row"` / `"column"`), else None.
    #[getter]
    fn compressed_axis(&self) -> Option<&'static str> {
        match self.tensor() {
            AnyTensor::Gcs(g) => Some(match g.matrix().axis() {
                CompressedAxis::Row => "row",
                _ => "column",
            }),
            _ => None,
        }
    }

    /// Reduced (2-D) shape of a GCS tensor, else None.
    #[getter]
    fn reduced_shape(&self) -> Option<Vec<usize>> {
        match self.tensor() {
            AnyTensor::Gcs(g) => Some(g.matrix().shape().to_vec()),
            _ => None,
        }
    }

    /// A level tensor's levels in MLIR's map syntax, else None.
    #[getter]
    fn levels(&self) -> Option<String> {
        match self.tensor() {
            AnyTensor::Level(l) => Some(l.format().to_string()),
            _ => None,
        }
    }

    /// A level tensor with `levels` (MLIR's map syntax), `index_type`
    /// coordinates and `indptr_type` positions.
    #[pyo3(signature = (levels, index_type="int64", indptr_type=None))]
    fn to_level(
        &self,
        py: Python<'_>,
        levels: &str,
        index_type: &str,
        indptr_type: Option<&str>,
    ) -> PyResult<Tensor> {
        let format = levels.parse::<arrow_sparse::LevelFormat>().py_err()?;
        let it = parse_index_type(index_type)?;
        let pt = match indptr_type {
            Some(p) => parse_index_type(p)?,
            None => it,
        };
        let t = guarded(py, || self.tensor().to_level(&format, it, pt))?;
        Ok(Tensor::new(TensorMessage {
            tensor: t,
            custom_metadata: self.message.custom_metadata.clone(),
        }))
    }

    /// Storage format of a DM tensor, else None.
    #[getter]
    fn storage_format(&self) -> Option<&'static str> {
        match self.tensor() {
            AnyTensor::Dm(d) => Some(d.storage().format().name()),
            _ => None,
        }
    }

    /// `[(name, BufferView)]`, in wire order.
    fn _buffers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut out = Vec::new();
        collect_buffers(self.tensor(), "", &mut out);
        let list = PyList::empty(py);
        for (name, view) in out {
            list.append((name, Bound::new(py, view)?))?;
        }
        Ok(list)
    }

    /// The same entries in another format (see `arrow_sparse.Tensor.convert`).
    #[pyo3(signature = (to, index_type="int64", axis_order=None))]
    fn convert(
        &self,
        py: Python<'_>,
        to: &str,
        index_type: &str,
        axis_order: Option<Vec<usize>>,
    ) -> PyResult<Tensor> {
        let to = parse_format(to)?;
        let it = parse_index_type(index_type)?;
        let t = match self.tensor() {
            // CSR <-> CSC keeping the index types: the transpose kernel, no COO between
            AnyTensor::Csx(m)
                if matches!(to, Format::Csr | Format::Csc)
                    && to != self.tensor().format()
                    && m.index_type() == it
                    && m.indptr_type() == it =>
            {
                AnyTensor::Csx(crate::kernels::recompress(py, m)?)
            }
            t => guarded(py, || t.convert(to, it, axis_order.as_deref()))?,
        };
        Ok(Tensor::new(TensorMessage {
            tensor: t,
            custom_metadata: self.message.custom_metadata.clone(),
        }))
    }

    /// A GCS tensor with the given map (see `arrow_sparse.Tensor.to_gcs`).
    #[pyo3(signature = (dimensions, partitioning, compressed_axis="row", index_type="int64"))]
    fn to_gcs(
        &self,
        py: Python<'_>,
        dimensions: Vec<usize>,
        partitioning: Vec<usize>,
        compressed_axis: &str,
        index_type: &str,
    ) -> PyResult<Tensor> {
        let axis = parse_axis(compressed_axis)?;
        let it = parse_index_type(index_type)?;
        let map =
            DimMap::try_new(self.tensor().shape().to_vec(), dimensions, partitioning).py_err()?;
        let t = guarded(py, || self.tensor().to_gcs(map, axis, it))?;
        Ok(Tensor::new(t.into()))
    }

    /// A DM tensor with the given map over storage `storage` with `index_type`
    /// indices.
    #[pyo3(signature = (dimensions, partitioning, storage="coo", index_type="int64"))]
    fn to_dm(
        &self,
        py: Python<'_>,
        dimensions: Vec<usize>,
        partitioning: Vec<usize>,
        storage: &str,
        index_type: &str,
    ) -> PyResult<Tensor> {
        let storage = parse_format(storage)?;
        let it = parse_index_type(index_type)?;
        let map =
            DimMap::try_new(self.tensor().shape().to_vec(), dimensions, partitioning).py_err()?;
        let t = guarded(py, || self.tensor().to_dm(map, storage, it))?;
        Ok(Tensor::new(t.into()))
    }

    /// The MLIR `#sparse_tensor.encoding` attribute of the tensor's level view.
    #[getter]
    fn mlir_encoding(&self) -> PyResult<String> {
        Ok(self.tensor().levels().py_err()?.mlir_encoding())
    }

    /// numpy's `take` along `axis` as a view: a DM tensor over this tensor's
    /// buffers (a DM tensor gets one more view). Negative indices and axis count
    /// from the end, as in numpy.
    #[pyo3(signature = (indices, axis=0))]
    fn take(&self, indices: Vec<i64>, axis: i64) -> PyResult<Tensor> {
        let t = self.tensor();
        let n = t.shape().len() as i64;
        let dim = if axis < 0 { axis + n } else { axis };
        if !(0..n).contains(&dim) {
            return Err(arrow_sparse::Error::Shape {
                what: "take".into(),
                expected: format!("an axis in -{n}..{n}"),
                found: axis.to_string(),
            })
            .py_err();
        }
        let dim = dim as usize;
        let extent = t.shape()[dim] as i64;
        let idx: Vec<usize> = indices
            .iter()
            .enumerate()
            .map(|(position, &i)| {
                let j = if i < 0 { i + extent } else { i };
                if (0..extent).contains(&j) {
                    Ok(j as usize)
                } else {
                    Err(arrow_sparse::Error::IndexOutOfBounds {
                        buffer: format!("take on axis {dim}"),
                        position,
                        value: i as i128,
                        bound: extent as u64,
                    })
                }
            })
            .collect::<arrow_sparse::Result<_>>()
            .py_err()?;
        let dm = match t {
            AnyTensor::Dm(d) => d.clone(),
            other => arrow_sparse::AnyDm::try_new(
                DimMap::identity(other.shape().to_vec()).py_err()?,
                other.clone(),
                &TensorOptions::default().with_dim_names(other.dim_names().to_vec()),
            )
            .py_err()?,
        };
        Ok(Tensor::new(
            AnyTensor::Dm(dm.take(dim, &idx).py_err()?).into(),
        ))
    }

    /// The libarrow-style JSON line (format, types, shape, sorted entries): what
    /// `arrow-sparse dump` prints.
    fn _json_line(&self, py: Python<'_>) -> PyResult<String> {
        guarded(py, || arrow_sparse::dump::json_line(self.tensor()))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<Tensor>() {
            Ok(o) => o.get().message == self.message,
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        let t = self.tensor();
        format!(
            "Tensor(format={:?}, shape={:?}, value_type={:?}, index_type={:?}, nnz={})",
            t.format().name(),
            t.shape(),
            t.value_type().name(),
            t.index_type().map(IndexType::name),
            t.nnz()
        )
    }
}
