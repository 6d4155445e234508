//! Binsparse in the HDF5 container (cargo feature `hdf5`, linked against the
//! system's libhdf5, 1.10 or later): `.h5` / `.hdf5` files as the Python
//! reference (`binsparse` on PyPI, through h5py) and the C reference
//! (binsparse-reference-c) write them. The root group carries the attribute
//! `binsparse`, a scalar string holding the JSON descriptor
//! `{"binsparse": {...}}`; each named binary array (`pointers_to_1`,
//! `indices_0`, `values`, `fill_value`, ...) is a 1-D dataset of the root group.
//!
//! Reading accepts the descriptor as a fixed-length or a variable-length string
//! (ASCII or UTF-8), and datasets in any layout HDF5 reads (contiguous, chunked,
//! deflated, either byte order). Everything after the container is the NPZ
//! reader's: the same descriptor checks, format mapping and typed errors (see
//! [`binsparse`]). [`ReadLimit`](crate::limit::ReadLimit) is
//! checked against each dataset's size, known from its dataspace, before it is
//! read.
//!
//! Writing produces the descriptor as a scalar fixed-length UTF-8 string (the C
//! reference's layout; h5py reads it as well; a descriptor longer than 64 KiB is
//! written variable-length) and one dataset per array with little-endian standard
//! types, contiguous by default or chunked and deflated with
//! [`Hdf5WriteOptions::compressed`]. The file is written atomically (a temporary
//! file beside the destination, renamed into place).
//!
//! ```
//! use arrow_sparse::io::{hdf5, binsparse::{BinsparseFormat, Hdf5WriteOptions}, ImportOptions};
//! use arrow_sparse::{AnyTensor, CooTensor, Format};
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("m.h5");
//! let t: AnyTensor = CooTensor::<f64, i32>::from_entries(vec![3, 4], &[(vec![0, 3], 1.5), (vec![2, 1], -2.0)])?.into();
//! let csr = t.convert(Format::Csr, arrow_sparse::IndexType::Int32, None)?;
//! hdf5::write(&path, &csr.clone().into(), &Hdf5WriteOptions::default())?;
//! let back = hdf5::read(&path, &ImportOptions::default())?;
//! assert_eq!(back.tensor, csr);
//! let options = Hdf5WriteOptions { binsparse_format: Some(BinsparseFormat::Coo), compressed: true };
//! hdf5::write(&path, &csr.into(), &options)?;
//! assert_eq!(hdf5::read(&path, &ImportOptions::default())?.tensor.format(), Format::Coo);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use arrow_buffer::Buffer;
use h5::types::{
    FixedAscii, FixedUnicode, FloatSize, IntSize, TypeDescriptor, VarLenAscii, VarLenUnicode,
};
use hdf5_metno as h5;

use super::ImportOptions;
use super::binsparse::{self, Container, Hdf5WriteOptions};
use super::npy::{Dtype, Npy};
use super::npz::err;
use crate::error::{Error, Result};
use crate::ipc::TensorMessage;
use crate::types::ValueType;

/// The longest fixed-length descriptor string read or written (64 KiB).
const MAX_FIXED: usize = 1 << 16;

/// The root group of an open Binsparse HDF5 file.
struct Group {
    file: h5::File,
    name: String,
    limit: crate::limit::ReadLimit,
    input_bytes: u64,
    loaded: u64,
}

fn h5err(what: &str, e: h5::Error) -> Error {
    err(what, e.to_string())
}

impl Group {
    fn datasets(&self) -> String {
        self.file
            .member_names()
            .map(|n| n.join(", "))
            .unwrap_or_default()
    }
}

/// The crate's value type of an HDF5 numeric type.
fn value_type(td: &TypeDescriptor) -> Option<ValueType> {
    use ValueType as V;
    Some(match td {
        TypeDescriptor::Integer(IntSize::U1) => V::Int8,
        TypeDescriptor::Integer(IntSize::U2) => V::Int16,
        TypeDescriptor::Integer(IntSize::U4) => V::Int32,
        TypeDescriptor::Integer(IntSize::U8) => V::Int64,
        TypeDescriptor::Unsigned(IntSize::U1) => V::UInt8,
        TypeDescriptor::Unsigned(IntSize::U2) => V::UInt16,
        TypeDescriptor::Unsigned(IntSize::U4) => V::UInt32,
        TypeDescriptor::Unsigned(IntSize::U8) => V::UInt64,
        TypeDescriptor::Float(FloatSize::U4) => V::Float32,
        TypeDescriptor::Float(FloatSize::U8) => V::Float64,
        _ => return None,
    })
}

fn read_as<T: h5::H5Type + arrow_buffer::ArrowNativeType>(
    ds: &h5::Dataset,
    what: &str,
) -> Result<Buffer> {
    let v: Vec<T> = ds.read_raw::<T>().map_err(|e| h5err(what, e))?;
    Ok(Buffer::from_vec(v))
}

impl Container for Group {
    fn name(&self) -> &str {
        &self.name
    }

    fn what(&self, key: &str) -> String {
        format!("{}: /{key}", self.name)
    }

    fn header(&mut self) -> Result<String> {
        let what = format!("{}: attribute binsparse", self.name);
        let attr = self.file.attr("binsparse").map_err(|e| h5err(&what, e))?;
        let td = attr
            .dtype()
            .and_then(|t| t.to_descriptor())
            .map_err(|e| h5err(&what, e))?;
        if attr.size() != 1 {
            return Err(err(
                &what,
                format!("expected one string, found shape {:?}", attr.shape()),
            ));
        }
        let fixed = |n: usize| {
            if n > MAX_FIXED {
                Err(err(
                    &what,
                    format!("a fixed-length string of {n} bytes (at most {MAX_FIXED} are read)"),
                ))
            } else {
                Ok(())
            }
        };
        let h = |e| h5err(&what, e);
        let text = match td {
            TypeDescriptor::VarLenUnicode => attr
                .read_raw::<VarLenUnicode>()
                .map_err(h)?
                .first()
                .map(|s| s.as_str().to_string()),
            TypeDescriptor::VarLenAscii => attr
                .read_raw::<VarLenAscii>()
                .map_err(h)?
                .first()
                .map(|s| s.as_str().to_string()),
            TypeDescriptor::FixedUnicode(n) => {
                fixed(n)?;
                attr.read_raw::<FixedUnicode<MAX_FIXED>>()
                    .map_err(h)?
                    .first()
                    .map(|s| s.as_str().to_string())
            }
            TypeDescriptor::FixedAscii(n) => {
                fixed(n)?;
                attr.read_raw::<FixedAscii<MAX_FIXED>>()
                    .map_err(h)?
                    .first()
                    .map(|s| s.as_str().to_string())
            }
            other => {
                return Err(err(
                    &what,
                    format!("expected a string, found an HDF5 {other}"),
                ));
            }
        };
        text.ok_or_else(|| err(&what, "empty"))
    }

    fn need(&mut self, key: &str, layout: &str) -> Result<Npy> {
        let what = self.what(key);
        let ds = match self.file.dataset(key) {
            Ok(ds) => ds,
            Err(_) => {
                return Err(err(
                    &self.name,
                    format!(
                        "{layout} needs the dataset `{key}`, which is missing (found: {})",
                        self.datasets()
                    ),
                ));
            }
        };
        let shape = ds.shape();
        let td = ds
            .dtype()
            .and_then(|t| t.to_descriptor())
            .map_err(|e| h5err(&what, e))?;
        let Some(vt) = value_type(&td) else {
            let descr = format!("HDF5 {td}");
            return Ok(Npy::from_parts(
                Dtype::Other(descr.clone()),
                descr,
                shape,
                Buffer::from_vec(Vec::<u8>::new()),
                what,
            ));
        };
        // the size the dataspace declares, checked before anything is read
        let count = shape
            .iter()
            .try_fold(1u64, |a, &x| a.checked_mul(x as u64))
            .unwrap_or(u64::MAX);
        let bytes = count.saturating_mul(vt.byte_width() as u64);
        self.loaded = self.loaded.saturating_add(bytes);
        self.limit.check(
            format!(
                "{what} ({bytes} bytes once read, {} bytes of datasets in all)",
                self.loaded
            ),
            self.loaded,
            self.input_bytes,
        )?;
        use ValueType as V;
        let data = match vt {
            V::Int8 => read_as::<i8>(&ds, &what)?,
            V::Int16 => read_as::<i16>(&ds, &what)?,
            V::Int32 => read_as::<i32>(&ds, &what)?,
            V::Int64 => read_as::<i64>(&ds, &what)?,
            V::UInt8 => read_as::<u8>(&ds, &what)?,
            V::UInt16 => read_as::<u16>(&ds, &what)?,
            V::UInt32 => read_as::<u32>(&ds, &what)?,
            V::UInt64 => read_as::<u64>(&ds, &what)?,
            V::Float32 => read_as::<f32>(&ds, &what)?,
            _ => read_as::<f64>(&ds, &what)?,
        };
        if data.len() as u64 != bytes {
            return Err(err(
                &what,
                format!("read {} bytes, the dataspace says {bytes}", data.len()),
            ));
        }
        Ok(Npy::from_parts(
            Dtype::Num(vt),
            super::npy::descr(vt),
            shape,
            data,
            what,
        ))
    }

    fn budget(&self, what: String, extra: u64) -> Result<()> {
        self.limit
            .check(what, self.loaded.saturating_add(extra), self.input_bytes)
    }
}

/// Read a Binsparse HDF5 file (`.h5` / `.hdf5`): the tensor, and its descriptor
/// in the metadata key [`meta::BINSPARSE_DESCRIPTOR`](super::meta::BINSPARSE_DESCRIPTOR). An HDF5 file without the
/// `binsparse` attribute, a missing dataset, a dataset of another dtype or length
/// than the descriptor says: [`Error::Parse`] naming the file and what is wrong.
///
/// ```
/// use arrow_sparse::io::{hdf5, binsparse::Hdf5WriteOptions, meta, ImportOptions};
/// use arrow_sparse::{AnyTensor, CooTensor, Error};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("v.hdf5");
/// let v: AnyTensor = CooTensor::<i16, i64>::from_entries(vec![9], &[(vec![4], 7)])?.into();
/// hdf5::write(&path, &v.into(), &Hdf5WriteOptions::default())?;
/// let back = hdf5::read(&path, &ImportOptions::default())?;
/// assert_eq!(back.tensor.get::<i16>(&[4])?, Some(7));
/// assert!(back.custom_metadata[0].1.contains("\"CVEC\""));
/// // not an HDF5 file at all
/// std::fs::write(&path, b"hello")?;
/// assert!(matches!(hdf5::read(&path, &ImportOptions::default()), Err(Error::Parse { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read(path: impl AsRef<Path>, options: &ImportOptions) -> Result<TensorMessage> {
    let path = path.as_ref();
    let name = path.display().to_string();
    // an I/O error (missing file, permissions) as such, before HDF5 sees the file
    let input_bytes = super::open(path)?
        .metadata()
        .map_err(|e| err(&name, format!("cannot read: {e}")))?
        .len();
    // HDF5 opens a file only if it can lock it; a lock found busy is retried for
    // a moment (a writer's descriptor copied into a child process between its
    // fork and its exec holds the writer's lock until the exec)
    let file = crate::atomic::retry_while_locked(|| match h5::File::open(path) {
        Err(e) if e.to_string().contains("unable to lock file") => Err(Err(e)),
        other => Ok(other),
    })
    .unwrap_or_else(|busy| busy)
    .map_err(|e| err(&name, format!("not an HDF5 file ({e})")))?;
    let mut g = Group {
        file,
        name,
        limit: options.limit,
        input_bytes,
        loaded: 0,
    };
    if !g
        .file
        .attr_names()
        .unwrap_or_default()
        .iter()
        .any(|a| a == "binsparse")
    {
        return Err(err(
            &g.name,
            format!(
                "not a Binsparse HDF5 file: the root group has no `binsparse` attribute (datasets: {})",
                g.datasets()
            ),
        ));
    }
    let (tensor, custom_metadata) = binsparse::read_container(&mut g)?;
    Ok(TensorMessage {
        tensor,
        custom_metadata,
    })
}

/// Write a Binsparse HDF5 file, atomically. The format is
/// [`Hdf5WriteOptions::binsparse_format`], else the one the metadata records,
/// else the tensor's own, as for NPZ (see [`binsparse`]).
///
/// ```
/// use arrow_sparse::io::{hdf5, binsparse::{BinsparseFormat, Hdf5WriteOptions}, ImportOptions};
/// use arrow_sparse::{AnyTensor, CooTensor, Format};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("m.h5");
/// let t: AnyTensor = CooTensor::<f32, i64>::from_entries(vec![4, 5], &[(vec![3, 0], 1.0), (vec![0, 4], 2.0)])?.into();
/// let options = Hdf5WriteOptions { binsparse_format: Some(BinsparseFormat::Dcsc), ..Default::default() };
/// hdf5::write(&path, &t.into(), &options)?;
/// let back = hdf5::read(&path, &ImportOptions::default())?;
/// assert_eq!((back.tensor.format(), back.tensor.nnz()), (Format::Csf, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write(
    path: impl AsRef<Path>,
    message: &TensorMessage,
    options: &Hdf5WriteOptions,
) -> Result<()> {
    let path = path.as_ref();
    let (arrays, text) = binsparse::encode(
        &message.tensor,
        &message.custom_metadata,
        options.binsparse_format,
    )?;
    let mut tmp = crate::atomic::AtomicFile::create(path)?;
    let what = path.display().to_string();
    tmp.write_by_path(|p| write_file(p, &arrays, &text, options.compressed, &what))
        .map_err(|e| tmp.name_error(e))?;
    tmp.commit()?;
    Ok(())
}

fn write_file(
    path: &Path,
    arrays: &[super::npz::Array],
    text: &str,
    compressed: bool,
    what: &str,
) -> Result<()> {
    let w = |e: h5::Error| Error::Io(std::io::Error::other(format!("{what}: HDF5: {e}")));
    let file = h5::File::create(path).map_err(w)?;
    for a in arrays {
        let vt = binsparse::descr_type(&a.descr).ok_or_else(|| {
            Error::Unsupported(format!(
                "{what}: no HDF5 type for the array {} ({})",
                a.key, a.descr
            ))
        })?;
        use ValueType as V;
        match vt {
            V::Int8 => dataset::<i8>(&file, a, compressed),
            V::Int16 => dataset::<i16>(&file, a, compressed),
            V::Int32 => dataset::<i32>(&file, a, compressed),
            V::Int64 => dataset::<i64>(&file, a, compressed),
            V::UInt8 => dataset::<u8>(&file, a, compressed),
            V::UInt16 => dataset::<u16>(&file, a, compressed),
            V::UInt32 => dataset::<u32>(&file, a, compressed),
            V::UInt64 => dataset::<u64>(&file, a, compressed),
            V::Float32 => dataset::<f32>(&file, a, compressed),
            _ => dataset::<f64>(&file, a, compressed),
        }
        .map_err(w)?;
    }
    let n = text.len();
    if n <= MAX_FIXED {
        let s: FixedUnicode<MAX_FIXED> = text
            .parse()
            .map_err(|e| w(h5::Error::from(format!("{e}"))))?;
        file.new_attr_builder()
            .empty_as(&TypeDescriptor::FixedUnicode(n.max(1)))
            .create("binsparse")
            .and_then(|attr| attr.write_scalar(&s))
            .map_err(w)?;
    } else {
        let s: VarLenUnicode = text
            .parse()
            .map_err(|e: h5::types::StringError| w(h5::Error::from(format!("{e}"))))?;
        file.new_attr::<VarLenUnicode>()
            .create("binsparse")
            .and_then(|attr| attr.write_scalar(&s))
            .map_err(w)?;
    }
    file.close().map_err(w)
}

fn dataset<T: h5::H5Type + arrow_buffer::ArrowNativeType>(
    file: &h5::File,
    a: &super::npz::Array,
    compressed: bool,
) -> h5::Result<()> {
    let data: &[T] = a.data.typed_data::<T>();
    let mut b = file.new_dataset_builder().with_data(data);
    if compressed && !data.is_empty() {
        let chunk = (1usize << 20) / std::mem::size_of::<T>();
        b = b.chunk(chunk.min(data.len())).deflate(6);
    }
    b.create(a.key.as_str())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AnyTensor, CooTensor};

    #[test]
    fn round_trip_and_typed_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.h5");
        let t: AnyTensor = CooTensor::<f64, i64>::from_entries(
            vec![3, 5],
            &[(vec![0, 4], 1.0), (vec![2, 0], 2.0)],
        )
        .unwrap()
        .into();
        for compressed in [false, true] {
            let o = Hdf5WriteOptions {
                binsparse_format: Some(binsparse::BinsparseFormat::Csr),
                compressed,
            };
            write(&path, &t.clone().into(), &o).unwrap();
            let back = read(&path, &ImportOptions::default()).unwrap();
            assert_eq!(back.tensor.get::<f64>(&[0, 4]).unwrap(), Some(1.0));
        }
        // empty tensors: zero-length datasets, contiguous and compressed
        let empty: AnyTensor = CooTensor::<f32, i32>::from_entries(vec![3, 3], &[])
            .unwrap()
            .into();
        for f in [
            binsparse::BinsparseFormat::Csr,
            binsparse::BinsparseFormat::Dcsc,
            binsparse::BinsparseFormat::Coo,
        ] {
            for compressed in [false, true] {
                let o = Hdf5WriteOptions {
                    binsparse_format: Some(f),
                    compressed,
                };
                let p = dir.path().join("empty.h5");
                write(&p, &empty.clone().into(), &o).unwrap();
                let back = read(&p, &ImportOptions::default()).unwrap();
                assert_eq!(
                    (back.tensor.shape(), back.tensor.nnz()),
                    (&[3usize, 3][..], 0)
                );
            }
        }
        // the limit is checked against the dataspace before reading
        let small = ImportOptions::default().with_limit(crate::limit::ReadLimit::bytes(16));
        assert!(matches!(read(&path, &small), Err(Error::Limit { .. })));
        // a missing file is an I/O error
        assert!(matches!(
            read(dir.path().join("none.h5"), &ImportOptions::default()),
            Err(Error::Io(_))
        ));
    }
}
