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
    /// Whether numpy may write through the view (only for buffers nothing else
    /// references: a kernel's fresh output).
    writable: bool,
}

impl BufferView {
    /// A read-only view of `len` elements of `typestr` at the start of `buffer`.
    pub(crate) fn new(buffer: Buffer, typestr: &'static str, len: usize) -> Self {
        BufferView {
            buffer,
            typestr,
            len,
            writable: false,
        }
    }

    /// A writable view of a vector nothing else holds (a kernel's output): the
    /// numpy array over it is the vector's only user.
    pub(crate) fn owned<V: arrow_buffer::ArrowNativeType>(
        v: Vec<V>,
        typestr: &'static str,
    ) -> Self {
        let len = v.len();
        BufferView {
            buffer: Buffer::from_vec(v),
            typestr,
            len,
            writable: true,
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
        // (address, read_only)
        d.set_item("data", (self.buffer.as_ptr() as usize, !self.writable))?;
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

/// A C-contiguous, writeable, aligned `numpy.ndarray` of element type `V`
/// (numpy type string `typestr`) that a kernel writes into: its address range is
/// checked against the operands' before it is lent out as `&mut [V]`.
pub(crate) struct OutArray<'py> {
    array: Bound<'py, PyAny>,
    address: usize,
    /// bytes
    len: usize,
    /// bytes per element
    item: usize,
}

impl<'py> OutArray<'py> {
    /// Check `array` for use as the output `name` of element type `typestr`
    /// (`size_of::<V>()` bytes per element) and `len` elements.
    pub(crate) fn new(
        array: &Bound<'py, PyAny>,
        name: &str,
        typestr: &str,
        item: usize,
        len: usize,
    ) -> PyResult<Self> {
        let py = array.py();
        let ndarray = py.import("numpy")?.getattr("ndarray")?;
        if !array.is_instance(&ndarray)? {
            return Err(PyTypeError::new_err(format!(
                "{name} must be a numpy.ndarray, got {}",
                array.get_type().name()?
            )));
        }
        let flags = array.getattr("flags")?;
        if !flags.get_item("C_CONTIGUOUS")?.extract::<bool>()? {
            return Err(PyValueError::new_err(format!("{name} is not C-contiguous")));
        }
        if !flags.get_item("WRITEABLE")?.extract::<bool>()? {
            return Err(PyValueError::new_err(format!("{name} is read-only")));
        }
        let interface = array.getattr("__array_interface__")?;
        let found: String = interface.get_item("typestr")?.extract()?;
        if found != typestr {
            return Err(PyValueError::new_err(format!(
                "{name} has dtype {found}, the result is {typestr}"
            )));
        }
        let size: usize = array.getattr("size")?.extract()?;
        if size != len {
            return Err(PyValueError::new_err(format!(
                "{name} has {size} elements, the result has {len}"
            )));
        }
        let data = interface.get_item("data")?;
        let address: usize = data.cast::<PyTuple>()?.get_item(0)?.extract()?;
        if len > 0 && (address == 0 || !address.is_multiple_of(item.min(8))) {
            return Err(PyValueError::new_err(format!(
                "{name} is not aligned to its element size"
            )));
        }
        Ok(OutArray {
            array: array.clone(),
            address,
            len: len * item,
            item,
        })
    }

    /// Fail when the output shares memory with `buffer` (an operand the kernel
    /// reads while it writes the output).
    pub(crate) fn check_disjoint(&self, name: &str, buffer: &Buffer) -> PyResult<()> {
        let (a, b) = (buffer.as_ptr() as usize, buffer.len());
        if self.len > 0 && b > 0 && a < self.address + self.len && self.address < a + b {
            return Err(PyValueError::new_err(format!(
                "out shares memory with {name}: pass a separate array"
            )));
        }
        Ok(())
    }

    /// The array.
    pub(crate) fn array(&self) -> &Bound<'py, PyAny> {
        &self.array
    }

    /// Run `f` on the array's memory as `&mut [V]`.
    pub(crate) fn with_slice<V: arrow_buffer::ArrowNativeType, R>(
        &mut self,
        f: impl FnOnce(&mut [V]) -> R,
    ) -> PyResult<R> {
        if std::mem::size_of::<V>() != self.item {
            return Err(PyTypeError::new_err(
                "out has another element size than the result",
            ));
        }
        let n = self.len / self.item.max(1);
        if n == 0 {
            return Ok(f(&mut []));
        }
        // SAFETY: `new` checked that the array is a C-contiguous, writeable
        // numpy.ndarray of `n` elements of V's type string at `address`, aligned
        // to the element size, so `address..address + n * size_of::<V>()` is one
        // live allocation of initialised plain numbers. `self.array` holds a
        // strong reference for as long as the slice lives (a numpy array with
        // references cannot be resized). The callers check with `check_disjoint`
        // that no operand buffer read during `f` overlaps it, and `&mut self`
        // keeps two slices of one OutArray from coexisting. Another Python thread
        // writing to the same array while the GIL is released is a data race on
        // plain numbers, as with any numpy buffer passed to C code.
        let slice = unsafe { std::slice::from_raw_parts_mut(self.address as *mut V, n) };
        Ok(f(slice))
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
