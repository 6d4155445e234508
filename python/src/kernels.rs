//! The library's kernels on tensors and numpy arrays, without the GIL: SpMV,
//! SpMM, MTTKRP, TTV, reductions, scaling, comparison and element-wise
//! operations. Results are numpy arrays over the kernels' own output buffers (no
//! copy), the caller's `out` arrays, or tensors.

use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_sparse::kernels::Numeric;
use arrow_sparse::kernels::convert::{canonicalize as canonicalize_kernel, transpose_csx};
use arrow_sparse::kernels::csf::{
    mttkrp as mttkrp_kernel, mttkrp_csr, ttv as ttv_kernel, ttv_dense,
};
use arrow_sparse::kernels::elementwise::{
    BinaryOp, binary, scale as scale_kernel, sum_duplicates as sum_duplicates_kernel,
    with_values as with_values_kernel,
};
use arrow_sparse::kernels::reduce::{
    SumOutput, allclose as allclose_kernel, sum_all, sum_axes_with,
};
use arrow_sparse::kernels::spmv::{spmm_scaled_into, spmv as spmv_kernel, spmv_scaled_into};
use arrow_sparse::{
    AnyCsf, AnyCsx, AnyTensor, DenseTensor, Error, Format, IndexType, Value, ValueType,
};
use half::f16;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::buffer::{BufferView, OutArray, import, typestr_of_value};
use crate::errors::{IntoPy, guarded, to_py};
use crate::tensor::Tensor;

/// A Python number as a value of type `Self` (range-checked: an int8 scale
/// factor of 300 is an `OverflowError`, a float for an integer tensor a
/// `TypeError`).
trait Scalar: Sized {
    /// The multiplicative identity (the default `alpha`).
    const ONE: Self;
    fn from_py(o: &Bound<'_, PyAny>) -> PyResult<Self>;
}

macro_rules! scalar {
    ($($t:ty = $one:expr),*) => {$(
        impl Scalar for $t {
            const ONE: Self = $one;
            fn from_py(o: &Bound<'_, PyAny>) -> PyResult<Self> {
                o.extract::<$t>()
            }
        }
    )*};
}
scalar!(
    i8 = 1,
    i16 = 1,
    i32 = 1,
    i64 = 1,
    u8 = 1,
    u16 = 1,
    u32 = 1,
    u64 = 1,
    f32 = 1.0,
    f64 = 1.0
);

impl Scalar for f16 {
    const ONE: Self = f16::ONE;
    fn from_py(o: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(f16::from_f64(o.extract::<f64>()?))
    }
}

/// Run `$body` with `$V` bound to the Rust type of value type `$t`.
macro_rules! with_value {
    ($t:expr, $V:ident => $body:expr) => {
        match $t {
            ValueType::Int8 => {
                type $V = i8;
                $body
            }
            ValueType::Int16 => {
                type $V = i16;
                $body
            }
            ValueType::Int32 => {
                type $V = i32;
                $body
            }
            ValueType::Int64 => {
                type $V = i64;
                $body
            }
            ValueType::UInt8 => {
                type $V = u8;
                $body
            }
            ValueType::UInt16 => {
                type $V = u16;
                $body
            }
            ValueType::UInt32 => {
                type $V = u32;
                $body
            }
            ValueType::UInt64 => {
                type $V = u64;
                $body
            }
            ValueType::Float16 => {
                type $V = f16;
                $body
            }
            ValueType::Float32 => {
                type $V = f32;
                $body
            }
            _ => {
                type $V = f64;
                $body
            }
        }
    };
}

/// Run `$body` (a `PyResult`) with `$I` bound to the Rust type of index type
/// `$t`; an index type this binding does not know is an `UnsupportedError` about
/// `$what`.
macro_rules! with_index {
    ($t:expr, $what:expr, $I:ident => $body:expr) => {
        match $t {
            IndexType::Int8 => {
                type $I = i8;
                $body
            }
            IndexType::Int16 => {
                type $I = i16;
                $body
            }
            IndexType::Int32 => {
                type $I = i32;
                $body
            }
            IndexType::Int64 => {
                type $I = i64;
                $body
            }
            IndexType::UInt8 => {
                type $I = u8;
                $body
            }
            IndexType::UInt16 => {
                type $I = u16;
                $body
            }
            IndexType::UInt32 => {
                type $I = u32;
                $body
            }
            IndexType::UInt64 => {
                type $I = u64;
                $body
            }
            other => Err(to_py(Error::Unsupported(format!(
                "{} with {} indices",
                $what,
                other.name()
            )))),
        }
    };
}

/// A writable numpy array over a kernel's output vector (no copy; the array is
/// the vector's only user).
fn vector_out<V: arrow_buffer::ArrowNativeType>(
    py: Python<'_>,
    t: ValueType,
    v: Vec<V>,
) -> PyResult<Py<PyAny>> {
    let view = BufferView::owned(v, typestr_of_value(t));
    let np = py.import("numpy")?;
    Ok(np
        .call_method1("asarray", (Bound::new(py, view)?,))?
        .unbind())
}

/// The memory of numpy array `x` (an operand named `name`) as a buffer of the
/// tensor's value type `vt` (no copy).
fn operand(x: &Bound<'_, PyAny>, name: &str, vt: ValueType) -> PyResult<Buffer> {
    let (buffer, typestr) = import(x)?;
    if typestr != typestr_of_value(vt) {
        return Err(PyValueError::new_err(format!(
            "{name} has dtype {typestr}, the tensor holds {}: cast {name} first",
            vt.name()
        )));
    }
    Ok(buffer)
}

/// Every buffer of `t` (to check an `out` array against).
fn tensor_buffers(t: &AnyTensor, out: &mut Vec<Buffer>) {
    match t {
        AnyTensor::Dense(d) => out.push(d.values().inner().clone()),
        AnyTensor::Coo(c) => {
            out.push(c.coords().inner().clone());
            out.push(c.values().inner().clone());
        }
        AnyTensor::Csx(m) => {
            out.push(m.indptr().inner().clone());
            out.push(m.indices().inner().clone());
            out.push(m.values().inner().clone());
        }
        AnyTensor::Gcs(g) => tensor_buffers(&AnyTensor::Csx(g.matrix().clone()), out),
        AnyTensor::Csf(c) => {
            out.extend(c.indptr().iter().map(|b| b.inner().clone()));
            out.extend(c.indices().iter().map(|b| b.inner().clone()));
            out.push(c.values().inner().clone());
        }
        AnyTensor::Dm(d) => tensor_buffers(d.storage(), out),
        AnyTensor::Level(l) => {
            out.extend(l.positions().iter().flatten().map(|b| b.inner().clone()));
            out.extend(l.coordinates().iter().flatten().map(|b| b.inner().clone()));
            out.push(l.values().inner().clone());
        }
        _ => {}
    }
}

/// Check `out` against the tensor's buffers and the other operands.
fn check_out(out: &OutArray<'_>, t: &AnyTensor, others: &[(&str, &Buffer)]) -> PyResult<()> {
    let mut bufs = Vec::new();
    tensor_buffers(t, &mut bufs);
    for b in &bufs {
        out.check_disjoint("the tensor's buffers", b)?;
    }
    for (name, b) in others {
        out.check_disjoint(name, b)?;
    }
    Ok(())
}

/// Rows and columns of the matrix a SpMV / SpMM multiplies (GCS / DM: of the
/// reduced matrix).
fn matrix_shape(t: &AnyTensor) -> PyResult<(usize, usize)> {
    let s = match t {
        AnyTensor::Gcs(g) => g.map().reduced_shape().to_vec(),
        AnyTensor::Dm(d) => d.map().reduced_shape().to_vec(),
        other => other.shape().to_vec(),
    };
    match s[..] {
        [r, c] => Ok((r, c)),
        _ => Err(to_py(Error::Shape {
            what: "matrix operand".into(),
            expected: "2 dimensions (or a map with two parts)".into(),
            found: format!("{} dimensions", s.len()),
        })),
    }
}

/// A zeroed vector of `n` elements, allocated fallibly.
fn zeroed<V: Numeric>(n: usize, what: &str) -> PyResult<Vec<V>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        return Err(to_py(Error::Allocation {
            what: what.into(),
            elements: n,
            element_bytes: std::mem::size_of::<V>(),
        }));
    }
    v.resize(n, V::ZERO);
    Ok(v)
}

fn scalar_or<V: Scalar>(o: Option<&Bound<'_, PyAny>>, default: V) -> PyResult<V> {
    o.map_or(Ok(default), V::from_py)
}

/// `y = alpha A x + beta y` (see `arrow_sparse.spmv`); `x` (and `out`) must have
/// the tensor's value type. Without `out` a new array is returned (`beta` does not
/// apply); with `out` the result is written there and `out` returned.
#[pyfunction]
#[pyo3(signature = (a, x, *, out=None, alpha=None, beta=None))]
pub(crate) fn spmv(
    py: Python<'_>,
    a: &Tensor,
    x: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    alpha: Option<&Bound<'_, PyAny>>,
    beta: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let t = &a.message.tensor;
    let vt = t.value_type();
    let xb = operand(x, "x", vt)?;
    with_value!(vt, V => {
        let al: V = scalar_or(alpha, V::ONE)?;
        let be: V = scalar_or(beta, V::ZERO)?;
        let xs = ScalarBuffer::<V>::from(xb.clone());
        match out {
            None => {
                if beta.is_some() {
                    return Err(PyValueError::new_err("beta applies only with out="));
                }
                let y = match alpha {
                    None => guarded(py, || spmv_kernel::<V>(t, &xs))?,
                    Some(_) => {
                        let (rows, _) = matrix_shape(t)?;
                        let mut y = zeroed::<V>(rows, "SpMV result")?;
                        guarded(py, || spmv_scaled_into::<V>(al, t, &xs, V::ZERO, &mut y))?;
                        y
                    }
                };
                vector_out(py, vt, y)
            }
            Some(o) => {
                let (rows, _) = matrix_shape(t)?;
                let mut y = OutArray::new(o, "out", typestr_of_value(vt), std::mem::size_of::<V>(), rows)?;
                check_out(&y, t, &[("x", &xb)])?;
                y.with_slice::<V, _>(|ys| guarded(py, || spmv_scaled_into::<V>(al, t, &xs, be, ys)))??;
                Ok(y.array().clone().unbind())
            }
        }
    })
}

/// `C = alpha A B + beta C` (see `arrow_sparse.spmm`): `b` is a C-contiguous
/// k x n array; the flat m x n result is returned (or written to `out`).
#[pyfunction]
#[pyo3(signature = (a, b, n, *, out=None, alpha=None, beta=None))]
pub(crate) fn spmm(
    py: Python<'_>,
    a: &Tensor,
    b: &Bound<'_, PyAny>,
    n: usize,
    out: Option<&Bound<'_, PyAny>>,
    alpha: Option<&Bound<'_, PyAny>>,
    beta: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let t = &a.message.tensor;
    let vt = t.value_type();
    let bb = operand(b, "b", vt)?;
    let (rows, _) = matrix_shape(t)?;
    let len = rows.checked_mul(n).ok_or_else(|| {
        to_py(Error::Overflow {
            what: "SpMM result size".into(),
            value: format!("{rows} x {n}"),
            target: "usize".into(),
        })
    })?;
    with_value!(vt, V => {
        let al: V = scalar_or(alpha, V::ONE)?;
        let be: V = scalar_or(beta, V::ZERO)?;
        if n == 0 {
            // an m x 0 product has no elements (and the kernels divide by n)
            return match out {
                None => vector_out(py, vt, Vec::<V>::new()),
                Some(o) => {
                    OutArray::new(o, "out", typestr_of_value(vt), std::mem::size_of::<V>(), 0)?;
                    Ok(o.clone().unbind())
                }
            };
        }
        let bs = ScalarBuffer::<V>::from(bb.clone());
        match out {
            None => {
                if beta.is_some() {
                    return Err(PyValueError::new_err("beta applies only with out="));
                }
                let mut c = zeroed::<V>(len, "SpMM result")?;
                guarded(py, || spmm_scaled_into::<V>(al, t, &bs, n, V::ZERO, &mut c))?;
                vector_out(py, vt, c)
            }
            Some(o) => {
                let mut c = OutArray::new(o, "out", typestr_of_value(vt), std::mem::size_of::<V>(), len)?;
                check_out(&c, t, &[("b", &bb)])?;
                c.with_slice::<V, _>(|cs| guarded(py, || spmm_scaled_into::<V>(al, t, &bs, n, be, cs)))??;
                Ok(c.array().clone().unbind())
            }
        }
    })
}

/// The CSF tensor of `t` with int32 or int64 indices (the index types the CSF
/// kernels are compiled for here): other index types are widened to int64, and
/// other formats converted to CSF (copies).
fn csf_of(py: Python<'_>, t: &AnyTensor) -> PyResult<AnyCsf> {
    if let AnyTensor::Csf(c) = t {
        let (i, p) = (c.index_type(), c.indptr_type());
        if i == p && matches!(i, IndexType::Int32 | IndexType::Int64) {
            return Ok(c.clone());
        }
    }
    let order = t.axis_order().map(<[usize]>::to_vec);
    let c = guarded(py, || {
        t.convert(Format::Csf, IndexType::Int64, order.as_deref())
    })?;
    match c {
        AnyTensor::Csf(c) => Ok(c),
        other => Err(to_py(Error::Unsupported(format!(
            "converting to CSF gave a {} tensor",
            other.format()
        )))),
    }
}

fn type_mismatch(what: &str, expected: ValueType, found: ValueType) -> PyErr {
    to_py(Error::Type {
        what: what.into(),
        expected: expected.name().into(),
        found: found.name().into(),
    })
}

/// The factor matrices of an MTTKRP on a tensor of `shape`: `factors[d]` a
/// C-contiguous `shape[d] x rank` array of value type `vt` (None: not read, an
/// empty placeholder).
fn dense_factors<V: Numeric>(
    factors: &[Option<Bound<'_, PyAny>>],
    shape: &[usize],
    vt: ValueType,
) -> PyResult<Vec<DenseTensor<V>>> {
    let mut fs = Vec::with_capacity(factors.len());
    for (d, f) in factors.iter().enumerate() {
        let dense = match f {
            None => DenseTensor::<V>::try_new(vec![0, 0], ScalarBuffer::from(Vec::<V>::new()))
                .py_err()?,
            Some(f) => {
                let buf = operand(f, &format!("factors[{d}]"), vt)?;
                let dims: Vec<usize> = f.getattr("shape")?.extract()?;
                let rows = shape.get(d).copied().unwrap_or(0);
                let fshape = match dims[..] {
                    [r, k] => vec![r, k],
                    _ => vec![rows, dims.iter().product::<usize>() / rows.max(1)],
                };
                DenseTensor::<V>::try_new(fshape, ScalarBuffer::from(buf)).py_err()?
            }
        };
        fs.push(dense);
    }
    Ok(fs)
}

/// `t` as a CSR matrix with int32 / int64 indices and indptr (the types the
/// CSR MTTKRP is compiled for here); other index types are widened to int64
/// (a copy). Other formats are refused: `shape=` says `t` is a matricization.
fn csr_of(py: Python<'_>, t: &AnyTensor) -> PyResult<AnyCsx> {
    let AnyTensor::Csx(m) = t else {
        return Err(to_py(Error::Unsupported(format!(
            "mttkrp with shape= takes the CSR matricization of the tensor, not a {} tensor",
            t.format()
        ))));
    };
    let narrow = |i: IndexType| matches!(i, IndexType::Int32 | IndexType::Int64);
    if narrow(m.index_type()) && narrow(m.indptr_type()) {
        return Ok(m.clone());
    }
    match guarded(py, || t.convert(t.format(), IndexType::Int64, None))? {
        AnyTensor::Csx(m) => Ok(m),
        other => Err(to_py(Error::Unsupported(format!(
            "converting to CSR gave a {} tensor",
            other.format()
        )))),
    }
}

/// Run `$body` with `$I` bound to the Rust type of an int32 / int64 index type.
macro_rules! with_narrow_index {
    ($t:expr, $I:ident => $body:expr) => {
        match $t {
            IndexType::Int32 => {
                type $I = i32;
                $body
            }
            _ => {
                type $I = i64;
                $body
            }
        }
    };
}

/// MTTKRP (see `arrow_sparse.mttkrp`): `factors[d]` is a C-contiguous
/// `shape[d] x rank` array (None at `mode`); returns the flat `shape[mode] x rank`
/// result and the rank. Without `shape`, `a` is the tensor (the CSF kernel);
/// with it, `a` is the CSR matricization of a tensor of that shape along `mode`
/// (`kernels::csf::mttkrp_csr`).
#[pyfunction]
#[pyo3(signature = (a, mode, factors, shape = None))]
pub(crate) fn mttkrp(
    py: Python<'_>,
    a: &Tensor,
    mode: usize,
    factors: Vec<Option<Bound<'_, PyAny>>>,
    shape: Option<Vec<usize>>,
) -> PyResult<(Py<PyAny>, usize)> {
    let t = &a.message.tensor;
    let vt = t.value_type();
    with_value!(vt, V => {
        let m = match shape {
            None => {
                let c = csf_of(py, t)?;
                let fs = dense_factors::<V>(&factors, t.shape(), vt)?;
                with_narrow_index!(c.index_type(), I => {
                    let typed = c.downcast::<V, I, I>().ok_or_else(|| type_mismatch("MTTKRP tensor", vt, c.value_type()))?;
                    guarded(py, || mttkrp_kernel::<V, I, I>(&typed, mode, &fs))?
                })
            }
            Some(shape) => {
                let c = csr_of(py, t)?;
                let fs = dense_factors::<V>(&factors, &shape, vt)?;
                with_narrow_index!(c.index_type(), I => with_narrow_index!(c.indptr_type(), P => {
                    let typed = c.downcast::<V, I, P>().ok_or_else(|| type_mismatch("MTTKRP matrix", vt, c.value_type()))?;
                    guarded(py, || mttkrp_csr::<V, I, P>(&typed, &shape, mode, &fs))?
                }))
            }
        };
        let rank = m.shape().get(1).copied().unwrap_or(0);
        let values: Vec<V> = m.values().to_vec();
        Ok((vector_out(py, vt, values)?, rank))
    })
}

/// TTV (see `arrow_sparse.ttv`): the tensor times vector `v` along `mode`, a
/// COO tensor over the other dimensions, or with `dense` a dense one.
#[pyfunction]
#[pyo3(signature = (a, mode, v, dense = false))]
pub(crate) fn ttv(
    py: Python<'_>,
    a: &Tensor,
    mode: usize,
    v: &Bound<'_, PyAny>,
    dense: bool,
) -> PyResult<Tensor> {
    let t = &a.message.tensor;
    let vt = t.value_type();
    let vb = operand(v, "v", vt)?;
    let c = csf_of(py, t)?;
    with_value!(vt, V => {
        let vs = ScalarBuffer::<V>::from(vb);
        let r: AnyTensor = with_narrow_index!(c.index_type(), I => {
            let typed = c.downcast::<V, I, I>().ok_or_else(|| type_mismatch("TTV tensor", vt, c.value_type()))?;
            if dense {
                guarded(py, || ttv_dense::<V, I, I>(&typed, mode, &vs))?.into()
            } else {
                guarded(py, || ttv_kernel::<V, I, I>(&typed, mode, &vs))?.into()
            }
        });
        Ok(Tensor::new(r.into()))
    })
}

/// A COO tensor folded: `op` `"sum_duplicates"` (duplicate coordinates summed
/// by the kernels' accumulation rule, sorted) or `"canonicalize"` (sorted
/// lexicographically, duplicates summed with checked steps, row-major coordinates;
/// an already canonical row-major tensor is returned as it is).
#[pyfunction]
pub(crate) fn coo_fold(py: Python<'_>, a: &Tensor, op: &str) -> PyResult<Tensor> {
    let canonical = match op {
        "sum_duplicates" => false,
        "canonicalize" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown COO operation {other:?}"
            )));
        }
    };
    let AnyTensor::Coo(c) = &a.message.tensor else {
        return Err(to_py(Error::Unsupported(format!(
            "{op} of a {} tensor (it is for COO; other formats hold no duplicates to sum)",
            a.message.tensor.format()
        ))));
    };
    with_index!(c.index_type(), op, I => with_value!(c.value_type(), V => {
        let typed = c.downcast::<V, I>().ok_or_else(|| type_mismatch(op, c.value_type(), c.value_type()))?;
        let r = if canonical {
            guarded(py, || canonicalize_kernel::<V, I>(&typed))?
        } else {
            guarded(py, || sum_duplicates_kernel::<V, I>(&typed))?
        };
        Ok(Tensor::new(AnyTensor::from(r).into()))
    }))
}

/// The same matrix compressed along the other axis (CSR <-> CSC) with the same
/// index types: `kernels::convert::transpose_csx` (one radix scatter, no COO in
/// between), what `Tensor.convert("csc" / "csr")` runs when the index type stays.
pub(crate) fn recompress(py: Python<'_>, m: &AnyCsx) -> PyResult<AnyCsx> {
    let what = "CSR <-> CSC";
    with_index!(m.index_type(), what, I => with_index!(m.indptr_type(), what, P => with_value!(m.value_type(), V => {
        let typed = m.downcast::<V, I, P>().ok_or_else(|| type_mismatch(what, m.value_type(), m.value_type()))?;
        Ok(AnyCsx::from(guarded(py, || transpose_csx::<V, I, P>(&typed))?))
    })))
}

/// The tensor with the numpy array `values` as its stored values (same format,
/// shape and index buffers, shared): `kernels::elementwise::with_values`.
#[pyfunction]
pub(crate) fn with_values(
    py: Python<'_>,
    a: &Tensor,
    values: &Bound<'_, PyAny>,
) -> PyResult<Tensor> {
    let v = crate::tensor::values_from(values)?;
    let t = &a.message.tensor;
    let r = guarded(py, || with_values_kernel(t, v))?;
    Ok(Tensor::new(r.into()))
}

/// Every stored value times `alpha` (checked for integers), same format.
#[pyfunction]
pub(crate) fn scale(py: Python<'_>, a: &Tensor, alpha: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let t = &a.message.tensor;
    with_value!(t.value_type(), V => {
        let al = V::from_py(alpha)?;
        let r = guarded(py, || scale_kernel::<V>(t, al))?;
        Ok(Tensor::new(r.into()))
    })
}

/// Whether `a` and `b` hold the same elements within `atol + rtol * |b|`.
#[pyfunction]
pub(crate) fn allclose(
    py: Python<'_>,
    a: &Tensor,
    b: &Tensor,
    rtol: f64,
    atol: f64,
) -> PyResult<bool> {
    let (x, y) = (&a.message.tensor, &b.message.tensor);
    if x.value_type() != y.value_type() {
        return Err(type_mismatch(
            "allclose operand value type",
            x.value_type(),
            y.value_type(),
        ));
    }
    with_value!(x.value_type(), V => {
        guarded(py, || allclose_kernel::<V>(x, y, rtol, atol))
    })
}

/// The sum of every entry, as a Python int or float.
#[pyfunction]
pub(crate) fn sum(py: Python<'_>, a: &Tensor) -> PyResult<Py<PyAny>> {
    let t = &a.message.tensor;
    with_value!(t.value_type(), V => {
        let s = guarded(py, || sum_all::<V>(t))?;
        Ok(vec_scalar(py, t.value_type(), vec![s])?)
    })
}

fn vec_scalar<V: arrow_buffer::ArrowNativeType>(
    py: Python<'_>,
    t: ValueType,
    v: Vec<V>,
) -> PyResult<Py<PyAny>> {
    let a = vector_out(py, t, v)?;
    Ok(a.bind(py).get_item(0)?.unbind())
}

/// The sums over `axes`: a tensor over the remaining dimensions, dense or sparse as
/// `output` says (`"auto"`: the rule of `kernels::reduce::SumOutput::Auto`).
#[pyfunction]
#[pyo3(signature = (a, axes, output = "auto"))]
pub(crate) fn sum_over(
    py: Python<'_>,
    a: &Tensor,
    axes: Vec<usize>,
    output: &str,
) -> PyResult<Tensor> {
    let output = match output {
        "auto" => SumOutput::Auto,
        "dense" => SumOutput::Dense,
        "sparse" => SumOutput::Sparse,
        other => {
            return Err(PyValueError::new_err(format!(
                "output must be \"auto\", \"dense\" or \"sparse\", not {other:?}"
            )));
        }
    };
    let t = &a.message.tensor;
    with_value!(t.value_type(), V => {
        let s = guarded(py, || sum_axes_with::<V>(t, &axes, output))?;
        Ok(Tensor::new(s.into()))
    })
}

/// `a op b` element by element (same shape and value type), in the format of `a`.
#[pyfunction]
pub(crate) fn elementwise(py: Python<'_>, a: &Tensor, b: &Tensor, op: &str) -> PyResult<Tensor> {
    let op = match op {
        "add" => BinaryOp::Add,
        "subtract" => BinaryOp::Subtract,
        "multiply" => BinaryOp::Multiply,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown operation {other:?}"
            )));
        }
    };
    let (x, y) = (&a.message.tensor, &b.message.tensor);
    if x.value_type() != y.value_type() {
        return Err(crate::errors::to_py(Error::Type {
            what: "operand value type".into(),
            expected: x.value_type().name().into(),
            found: y.value_type().name().into(),
        }));
    }
    with_value!(x.value_type(), V => {
        let r = guarded(py, || binary::<V>(x, y, op))?;
        Ok(Tensor::new(r.into()))
    })
}
