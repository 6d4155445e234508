//! The library's kernels on tensors and numpy arrays, without the GIL: SpMV,
//! reductions and element-wise operations. Results are numpy arrays over the
//! kernels' own output buffers (no copy) or tensors.

use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_sparse::kernels::elementwise::{BinaryOp, binary};
use arrow_sparse::kernels::reduce::{sum_all, sum_axes};
use arrow_sparse::kernels::spmv::spmv as spmv_kernel;
use arrow_sparse::{Error, ValueType};
use half::f16;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::buffer::{BufferView, import, typestr_of_value};
use crate::errors::guarded;
use crate::tensor::Tensor;

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

/// A numpy array over a kernel's output vector (no copy).
fn vector_out<V: arrow_buffer::ArrowNativeType>(
    py: Python<'_>,
    t: ValueType,
    v: Vec<V>,
) -> PyResult<Py<PyAny>> {
    let len = v.len();
    let view = BufferView::new(Buffer::from_vec(v), typestr_of_value(t), len);
    let np = py.import("numpy")?;
    Ok(np
        .call_method1("asarray", (Bound::new(py, view)?,))?
        .unbind())
}

/// `y = A x` (see `arrow_sparse.spmv`); `x` must have the tensor's value type.
#[pyfunction]
pub(crate) fn spmv(py: Python<'_>, a: &Tensor, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let t = &a.message.tensor;
    let vt = t.value_type();
    let (buffer, typestr) = import(x)?;
    if typestr != typestr_of_value(vt) {
        return Err(PyValueError::new_err(format!(
            "x has dtype {typestr}, the tensor holds {}: cast x first",
            vt.name()
        )));
    }
    with_value!(vt, V => {
        let x = ScalarBuffer::<V>::from(buffer);
        let y = guarded(py, || spmv_kernel::<V>(t, &x))?;
        vector_out(py, vt, y)
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

/// The sums over `axes`: a tensor over the remaining dimensions, dense or sparse by
/// the rule of `kernels::reduce::sum_axes`.
#[pyfunction]
pub(crate) fn sum_over(py: Python<'_>, a: &Tensor, axes: Vec<usize>) -> PyResult<Tensor> {
    let t = &a.message.tensor;
    with_value!(t.value_type(), V => {
        let s = guarded(py, || sum_axes::<V>(t, &axes))?;
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
