//! Buffers between Arrow and numpy without copies, the only module of the binding
//! with `unsafe`.
//!
//! Out: a [`BufferView`] owns a clone of an Arrow [`Buffer`] (for a mapped file,
//! a reference to the mapping) and publishes it through numpy's
//! `__array_interface__` as read-only memory; `numpy.asarray(view)` makes an array
//! whose `.base` is the view, so the mapping lives as long as any array on it.
//!
//! In: [`import`] wraps a contiguous `numpy.ndarray`'s memory as a [`Buffer`] whose
//! owner holds a reference to the array (no copy), so encoders read the caller's
//! memory directly.

use std::ptr::NonNull;
use std::sync::Arc;

use arrow_buffer::Buffer;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// Read-only memory of an Arrow buffer, for `numpy.asarray`.
#[pyclass(frozen, module = "arrow_sparse._native")]
pub(crate) struct BufferView {
    buffer: Buffer,
    /// numpy type string, e.g. `<f8`
    typestr: &'static str,
    len: usize,
}

impl BufferView {
    /// A view of `len` elements of `typestr` at the start of `buffer`.
    pub(crate) fn new(buffer: Buffer, typestr: &'static str, len: usize) -> Self {
        BufferView {
            buffer,
            typestr,
            len,
        }
    }
}

#[pymethods]
impl BufferView {
    /// numpy's array interface (version 3): one dimension, read-only data.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", (self.len,))?;
        d.set_item("typestr", self.typestr)?;
        // an empty buffer may have a dangling pointer: numpy accepts any non-null
        // address for zero elements
        d.set_item("data", (self.buffer.as_ptr() as usize, true))?;
        Ok(d)
    }

    /// The address of the first byte (for tests and debugging).
    #[getter]
    fn address(&self) -> usize {
        self.buffer.as_ptr() as usize
    }

    /// Length in bytes.
    fn __len__(&self) -> usize {
        self.buffer.len()
    }
}

/// The numpy type string of each element type.
pub(crate) fn typestr_of_value(t: arrow_sparse::ValueType) -> &'static str {
    use arrow_sparse::ValueType as V;
    match t {
        V::Int8 => "|i1",
        V::Int16 => "<i2",
        V::Int32 => "<i4",
        V::Int64 => "<i8",
        V::UInt8 => "|u1",
        V::UInt16 => "<u2",
        V::UInt32 => "<u4",
        V::UInt64 => "<u8",
        V::Float16 => "<f2",
        V::Float32 => "<f4",
        _ => "<f8",
    }
}

/// Keeps the numpy array alive while Arrow uses its memory. Dropping it without
/// the GIL is fine: PyO3 defers the decref until a thread holds the GIL.
struct Owner(#[allow(dead_code)] std::panic::AssertUnwindSafe<Py<PyAny>>);

/// The memory of `array` (a C-contiguous `numpy.ndarray`) as a [`Buffer`], with
/// its numpy type string; the buffer holds a reference to the array.
pub(crate) fn import(array: &Bound<'_, PyAny>) -> PyResult<(Buffer, String)> {
    let py = array.py();
    let ndarray = py.import("numpy")?.getattr("ndarray")?;
    if !array.is_instance(&ndarray)? {
        return Err(PyTypeError::new_err(format!(
            "expected a numpy.ndarray, got {}",
            array.get_type().name()?
        )));
    }
    if !array
        .getattr("flags")?
        .get_item("C_CONTIGUOUS")?
        .extract::<bool>()?
    {
        return Err(PyValueError::new_err("the array is not C-contiguous"));
    }
    let interface = array.getattr("__array_interface__")?;
    let typestr: String = interface.get_item("typestr")?.extract()?;
    let data = interface.get_item("data")?;
    let data = data.cast::<PyTuple>()?;
    let address: usize = data.get_item(0)?.extract()?;
    let nbytes: usize = array.getattr("nbytes")?.extract()?;
    let itemsize: usize = array.getattr("itemsize")?.extract()?;
    if nbytes == 0 {
        // an empty (but aligned) allocation: numpy may report any address for no data
        return Ok((Buffer::from(arrow_buffer::MutableBuffer::new(0)), typestr));
    }
    let Some(ptr) = NonNull::new(address as *mut u8) else {
        return Err(PyValueError::new_err("the array has no data pointer"));
    };
    if itemsize == 0 || !address.is_multiple_of(itemsize.min(8)) {
        // Arrow's typed buffers need aligned elements: copy (numpy allocations are
        // always aligned; only views made at odd byte offsets get here)
        let bytes: Vec<u8> = array.call_method0("tobytes")?.extract()?;
        // into a 64-byte aligned allocation
        return Ok((Buffer::from_slice_ref(&bytes), typestr));
    }
    let owner = Arc::new(Owner(std::panic::AssertUnwindSafe(array.clone().unbind())));
    // SAFETY: `ptr` is the data pointer numpy reports for this C-contiguous array
    // and `nbytes` its size, so `ptr..ptr + nbytes` is one live allocation (or a view
    // of one). `owner` holds a strong reference to the array, which keeps that
    // memory (and any base object it views) alive as long as the Buffer and its
    // clones exist. Arrow only reads through the Buffer. A caller could still write
    // to the array from Python while an encoder reads it (a data race on plain
    // bytes, like any numpy buffer shared with C code); the binding calls the
    // encoders while the caller is blocked in `write`.
    let buffer = unsafe { Buffer::from_custom_allocation(ptr, nbytes, owner) };
    Ok((buffer, typestr))
}
