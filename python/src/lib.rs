//! The extension module `arrow_sparse._native` of the Python package
//! `arrow_sparse` (python/arrow_sparse/ is the public API over it).
//!
//! Reading and writing release the GIL; buffers cross between Arrow and numpy
//! without copies (module `buffer`); library errors become the exception classes
//! of `arrow_sparse.errors` (module `errors`).

mod buffer;
mod errors;
mod io;
mod kernels;
mod tensor;

use pyo3::prelude::*;

/// The native part of arrow_sparse; use the `arrow_sparse` package instead.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<tensor::Tensor>()?;
    m.add_class::<io::Reader>()?;
    m.add_class::<buffer::BufferView>()?;
    m.add_function(wrap_pyfunction!(io::read, m)?)?;
    m.add_function(wrap_pyfunction!(io::write, m)?)?;
    m.add_function(wrap_pyfunction!(io::write_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(io::read_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(io::read_range, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::spmv, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::sum, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::sum_over, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::elementwise, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::spmm, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::mttkrp, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::ttv, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::coo_fold, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::with_values, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::scale, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::allclose, m)?)?;
    Ok(())
}
