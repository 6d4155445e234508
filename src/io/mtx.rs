//! Matrix Market (`.mtx`) files: `coordinate` (real, integer, pattern) and `array`
//! (real, integer) matrices, `general`, `symmetric` or `skew-symmetric`, 1-based.
//!
//! Reading gives a COO tensor for `coordinate` files and a row-major dense tensor
//! for `array` files. Symmetry rules:
//!
//! * a `symmetric` file stores each off-diagonal pair once; the reader expands
//!   entry `(i, j, v)`, `i != j`, to `(i, j, v)` and `(j, i, v)` (either triangle is
//!   accepted; storing both `(i, j)` and `(j, i)` counts as a duplicate);
//! * a `skew-symmetric` file has no diagonal entries and `(i, j, v)` expands to
//!   `(i, j, v)` and `(j, i, -v)` (so it needs a signed value type);
//! * `array` files hold the lower triangle column by column (with the diagonal
//!   for `symmetric`, without for `skew-symmetric`).
//!
//! The header (format, field, symmetry) and the comment lines go to the message
//! metadata ([`meta`]); writing the message back uses them, so a
//! symmetric file comes back symmetric (only one triangle written). `hermitian`
//! and `complex` files are refused.
//!
//! ```
//! use arrow_sparse::io::{self, mtx};
//! let text = "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 4.0\n3 1 -2.5\n";
//! let msg = mtx::read_from(text.as_bytes(), "inline.mtx", &io::ImportOptions::default())?;
//! assert_eq!(msg.tensor.nnz(), 3); // (1,1), (3,1) and its mirror (1,3)
//! assert_eq!(msg.tensor.get::<f64>(&[0, 2])?, Some(-2.5));
//!
//! let mut out = Vec::new();
//! mtx::write_to(&mut out, &msg, &mtx::MtxWriteOptions::default())?;
//! assert_eq!(String::from_utf8(out).unwrap(), text); // the metadata keeps it symmetric
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use crate::tensor::EntryOrder;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

use super::text::{
    Entries, Lines, MAX_COMMENTS, MAX_RESERVE, TextLimit, TextValue, is_blank, line_error,
    one_based, parse_u64, push_u64, show, strictly_sorted,
};
use super::{ImportOptions, meta, meta_get, open, write_atomic};
use crate::convert::Convert;
use crate::error::{Error, Result};
use crate::ipc::TensorMessage;
use crate::tensor::validate::MAX_EXTENT;
use crate::tensor::{AnyTensor, CooTensor, CoordLayout, DenseTensor};
use crate::types::ValueType;
use crate::{with_index_type, with_value_type};

/// The Matrix Market storage format.
///
/// ```
/// use arrow_sparse::io::{mtx, MtxFormat, ImportOptions};
/// use arrow_sparse::Format;
/// // an `array` file lists every element, column by column, and reads as a dense tensor
/// let text = "%%MatrixMarket matrix array real general\n2 2\n1\n2\n0\n4\n";
/// let msg = mtx::read_from(text.as_bytes(), "mem.mtx", &ImportOptions::default())?;
/// assert_eq!(msg.tensor.format(), Format::Dense);
/// assert_eq!(msg.tensor.get::<f64>(&[1, 0])?, Some(2.0));
/// assert_ne!(MtxFormat::Array, MtxFormat::Coordinate);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MtxFormat {
    /// `coordinate`: one line per stored entry.
    Coordinate,
    /// `array`: every element, column by column.
    Array,
}

/// The Matrix Market field (the type of the values).
///
/// ```
/// use arrow_sparse::io::{mtx, ImportOptions};
/// use arrow_sparse::ValueType;
/// // `integer` files read as int64 by default, `pattern` entries as float64 ones
/// let int = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n2 1 -7\n";
/// let msg = mtx::read_from(int.as_bytes(), "int.mtx", &ImportOptions::default())?;
/// assert_eq!((msg.tensor.value_type(), msg.tensor.get::<i64>(&[1, 0])?), (ValueType::Int64, Some(-7)));
/// let pattern = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1\n";
/// let msg = mtx::read_from(pattern.as_bytes(), "pattern.mtx", &ImportOptions::default())?;
/// assert_eq!(msg.tensor.get::<f64>(&[1, 0])?, Some(1.0));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MtxField {
    /// `real` (also read: `double`).
    Real,
    /// `integer`.
    Integer,
    /// `pattern`: coordinates only (`coordinate` files); values read as one.
    Pattern,
}

/// The Matrix Market symmetry.
///
/// ```
/// use arrow_sparse::io::{mtx, MtxSymmetry, ImportOptions};
/// assert_eq!(MtxSymmetry::default(), MtxSymmetry::General);
/// // skew-symmetric: the entry (2, 1) = 3 also gives (1, 2) = -3
/// let text = "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n";
/// let msg = mtx::read_from(text.as_bytes(), "skew.mtx", &ImportOptions::default())?;
/// assert_eq!(msg.tensor.nnz(), 2);
/// assert_eq!(msg.tensor.get::<i64>(&[0, 1])?, Some(-3));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MtxSymmetry {
    /// `general`: every entry stored.
    #[default]
    General,
    /// `symmetric`: `a(i, j) = a(j, i)`, one triangle stored.
    Symmetric,
    /// `skew-symmetric`: `a(i, j) = -a(j, i)`, strictly one triangle stored.
    SkewSymmetric,
}

impl MtxFormat {
    /// The header word.
    ///
    /// ```
    /// use arrow_sparse::io::MtxFormat;
    /// assert_eq!(MtxFormat::Coordinate.name(), "coordinate");
    /// assert_eq!(MtxFormat::Array.name(), "array");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            MtxFormat::Coordinate => "coordinate",
            MtxFormat::Array => "array",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        [MtxFormat::Coordinate, MtxFormat::Array]
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
    }
}

impl MtxField {
    /// The header word.
    ///
    /// ```
    /// use arrow_sparse::io::MtxField;
    /// assert_eq!(MtxField::Real.name(), "real"); // files saying `double` read as Real too
    /// assert_eq!(MtxField::Integer.name(), "integer");
    /// assert_eq!(MtxField::Pattern.name(), "pattern");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            MtxField::Real => "real",
            MtxField::Integer => "integer",
            MtxField::Pattern => "pattern",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        if s.eq_ignore_ascii_case("double") {
            return Some(MtxField::Real);
        }
        [MtxField::Real, MtxField::Integer, MtxField::Pattern]
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
    }
}

impl MtxSymmetry {
    /// The header word.
    ///
    /// ```
    /// use arrow_sparse::io::MtxSymmetry;
    /// assert_eq!(MtxSymmetry::General.name(), "general");
    /// assert_eq!(MtxSymmetry::Symmetric.name(), "symmetric");
    /// assert_eq!(MtxSymmetry::SkewSymmetric.name(), "skew-symmetric");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            MtxSymmetry::General => "general",
            MtxSymmetry::Symmetric => "symmetric",
            MtxSymmetry::SkewSymmetric => "skew-symmetric",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        [
            MtxSymmetry::General,
            MtxSymmetry::Symmetric,
            MtxSymmetry::SkewSymmetric,
        ]
        .into_iter()
        .find(|f| f.name().eq_ignore_ascii_case(s))
    }
}

/// Options for writing `.mtx` files. Every field left `None` is taken from the
/// message metadata ([`meta`]) when it fits the tensor, else:
/// `array` for dense tensors and `coordinate` otherwise; `integer` for integer
/// value types and `real` for floats; `general`.
///
/// A symmetry asked for here must hold (else an error); a symmetry that only
/// comes from the metadata falls back to `general` when the tensor is no longer
/// symmetric.
///
/// ```
/// use arrow_sparse::io::mtx::{self, MtxField, MtxWriteOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let defaults = MtxWriteOptions::default();
/// assert_eq!((defaults.format, defaults.field, defaults.symmetry), (None, None, None));
/// // int32 values would be written as `integer`; ask for `real` instead
/// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 5)])?.into();
/// let options = MtxWriteOptions { field: Some(MtxField::Real), ..Default::default() };
/// let mut out = Vec::new();
/// mtx::write_to(&mut out, &t.into(), &options)?;
/// assert_eq!(String::from_utf8(out).unwrap(), "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 5\n");
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct MtxWriteOptions {
    /// `coordinate` or `array`.
    pub format: Option<MtxFormat>,
    /// `real`, `integer` (integer value types only) or `pattern` (coordinate only).
    pub field: Option<MtxField>,
    /// `general`, `symmetric` or `skew-symmetric` (square matrices only).
    pub symmetry: Option<MtxSymmetry>,
}

impl MtxWriteOptions {
    /// Set the format.
    ///
    /// ```
    /// use arrow_sparse::io::mtx::{self, MtxFormat, MtxWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![1, 0], 3.0)])?.into();
    /// // a sparse tensor written as `array`: every element, column by column
    /// let options = MtxWriteOptions::default().with_format(MtxFormat::Array);
    /// let mut out = Vec::new();
    /// mtx::write_to(&mut out, &t.into(), &options)?;
    /// assert_eq!(String::from_utf8(out).unwrap(), "%%MatrixMarket matrix array real general\n2 2\n0.0\n3.0\n0.0\n0.0\n");
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_format(mut self, f: MtxFormat) -> Self {
        self.format = Some(f);
        self
    }
    /// Set the field.
    ///
    /// ```
    /// use arrow_sparse::io::mtx::{self, MtxField, MtxWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 9.5)])?.into();
    /// // `pattern` writes the coordinates only
    /// let options = MtxWriteOptions::default().with_field(MtxField::Pattern);
    /// let mut out = Vec::new();
    /// mtx::write_to(&mut out, &t.clone().into(), &options)?;
    /// assert_eq!(String::from_utf8(out).unwrap(), "%%MatrixMarket matrix coordinate pattern general\n2 3 1\n2 3\n");
    /// // `integer` needs an integer value type
    /// let options = MtxWriteOptions::default().with_field(MtxField::Integer);
    /// assert!(mtx::write_to(&mut Vec::new(), &t.into(), &options).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_field(mut self, f: MtxField) -> Self {
        self.field = Some(f);
        self
    }
    /// Set the symmetry.
    ///
    /// ```
    /// use arrow_sparse::io::mtx::{self, MtxSymmetry, MtxWriteOptions};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 2), (vec![1, 0], -2)])?.into();
    /// // skew-symmetric: only the strictly lower triangle is written
    /// let options = MtxWriteOptions::default().with_symmetry(MtxSymmetry::SkewSymmetric);
    /// let mut out = Vec::new();
    /// mtx::write_to(&mut out, &t.clone().into(), &options)?;
    /// assert_eq!(String::from_utf8(out).unwrap(), "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 -2\n");
    /// // a symmetry asked for must hold: this matrix is not symmetric
    /// let options = MtxWriteOptions::default().with_symmetry(MtxSymmetry::Symmetric);
    /// assert!(mtx::write_to(&mut Vec::new(), &t.into(), &options).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_symmetry(mut self, s: MtxSymmetry) -> Self {
        self.symmetry = Some(s);
        self
    }
}

/// What the banner and the size line say.
struct Header {
    format: MtxFormat,
    field: MtxField,
    symmetry: MtxSymmetry,
    rows: usize,
    cols: usize,
    /// Entries announced (coordinate files).
    nnz: u64,
    size_line: u64,
    /// The comment lines without their `%`, joined by `\n` (`None`: no comment).
    comments: Option<String>,
}

/// Read a `.mtx` file.
///
/// ```
/// use arrow_sparse::io::{self, mtx, Duplicates};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("a.mtx");
/// std::fs::write(&path, "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n")?;
/// let msg = mtx::read(&path, &io::ImportOptions::default().with_duplicates(Duplicates::Sum))?;
/// assert_eq!(msg.tensor.shape(), &[2, 3]);
/// assert_eq!(msg.tensor.get::<f64>(&[0, 2])?, Some(1.0)); // pattern entries read as one
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read(path: impl AsRef<Path>, options: &ImportOptions) -> Result<TensorMessage> {
    let path = path.as_ref();
    let f = open(path)?;
    let len = f.metadata().ok().map(|m| m.len());
    let lines = Lines::new(f, &path.display().to_string()).with_input_len(len);
    read_lines(lines, options)
}

/// Read Matrix Market text from any byte source; `name` is used in error messages.
///
/// ```
/// use arrow_sparse::io::{mtx, ImportOptions};
/// use arrow_sparse::Error;
/// let text = "%%MatrixMarket matrix coordinate real general\n% a comment\n3 2 2\n3 1 0.5\n1 2 -1e3\n";
/// let msg = mtx::read_from(text.as_bytes(), "mem.mtx", &ImportOptions::default())?;
/// assert_eq!((msg.tensor.shape(), msg.tensor.nnz()), (&[3usize, 2][..], 2));
/// assert_eq!(msg.tensor.get::<f64>(&[0, 1])?, Some(-1000.0));
/// // 4 is outside the 3 rows: a parse error
/// let bad = "%%MatrixMarket matrix coordinate real general\n3 2 1\n4 1 0.5\n";
/// assert!(matches!(mtx::read_from(bad.as_bytes(), "bad.mtx", &ImportOptions::default()), Err(Error::Parse { .. })));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn read_from<R: Read>(reader: R, name: &str, options: &ImportOptions) -> Result<TensorMessage> {
    read_lines(Lines::new(reader, name), options)
}

fn read_lines<R: Read>(mut lines: Lines<R>, options: &ImportOptions) -> Result<TensorMessage> {
    let name = lines.name().to_string();
    let name = name.as_str();
    let h = read_header(&mut lines)?;
    let vt = options.value_type.unwrap_or(match h.field {
        MtxField::Integer => ValueType::Int64,
        _ => ValueType::Float64,
    });
    if h.symmetry == MtxSymmetry::SkewSymmetric
        && vt.as_index_type().is_some_and(|t| !t.is_signed())
    {
        return Err(Error::Type {
            what: format!("value type for the skew-symmetric file {name}"),
            expected: "a signed type".into(),
            found: vt.name().into(),
        });
    }
    let tensor: AnyTensor = with_value_type!(vt, V => match h.format {
        MtxFormat::Coordinate => {
            let coo = read_coordinate::<V, R>(&mut lines, &h, options)?;
            let it = options.index_type.unwrap_or(crate::IndexType::Int64);
            with_index_type!(it, I => AnyTensor::from(coo.cast_indices::<I>().map_err(|e| in_file(name, e))?))
        }
        MtxFormat::Array => read_array::<V, R>(&mut lines, &h, options)?.into(),
    });
    let mut custom_metadata = vec![
        (meta::MTX_FORMAT.to_string(), h.format.name().to_string()),
        (meta::MTX_FIELD.to_string(), h.field.name().to_string()),
        (
            meta::MTX_SYMMETRY.to_string(),
            h.symmetry.name().to_string(),
        ),
    ];
    if let Some(c) = h.comments {
        custom_metadata.push((meta::MTX_COMMENTS.to_string(), c));
    }
    Ok(TensorMessage {
        tensor,
        custom_metadata,
    })
}

/// A coordinate `.mtx` file read in chunks, for files larger than memory: the
/// header is read by [`open`](Self::open), then each
/// [`next_chunk`](Self::next_chunk) parses up to a given number of entries into a
/// COO tensor of the whole shape (int64 coordinates, in the file's order; a
/// symmetric file's mirrored entries follow the entry they mirror). Memory: one
/// chunk. Duplicates are not looked for: that needs every entry (a
/// [`DatasetWriter`](crate::archive::DatasetWriter) with sorting resolves them).
///
/// ```
/// use arrow_sparse::io::{mtx::MtxChunks, ImportOptions};
/// let text = "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 4\n3 1 -2\n3 2 7\n";
/// let mut r = MtxChunks::open(text.as_bytes(), "mem.mtx", &ImportOptions::default())?;
/// assert_eq!(r.shape(), [3, 3]);
/// let first = r.next_chunk(2)?.unwrap(); // (1,1), (3,1) and its mirror (1,3)
/// assert_eq!((first.nnz(), first.get::<i64>(&[0, 2])?), (3, Some(-2)));
/// let second = r.next_chunk(2)?.unwrap();
/// assert_eq!(second.nnz(), 2);
/// assert!(r.next_chunk(2)?.is_none());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub struct MtxChunks<R> {
    lines: Lines<R>,
    header: Header,
    value_type: ValueType,
    count: u64,
    custom_metadata: Vec<(String, String)>,
}

impl<R: Read> MtxChunks<R> {
    /// Read the header of a coordinate file (an `array` file is
    /// [`Error::Unsupported`]; read it whole with [`read_from`]).
    ///
    /// ```
    /// use arrow_sparse::io::{mtx::MtxChunks, ImportOptions};
    /// use arrow_sparse::{Error, ValueType};
    /// let text = "%%MatrixMarket matrix coordinate pattern general\n2 5 0\n";
    /// let r = MtxChunks::open(text.as_bytes(), "mem.mtx", &ImportOptions::default())?;
    /// assert_eq!((r.shape(), r.value_type()), ([2, 5], ValueType::Float64));
    /// let dense = "%%MatrixMarket matrix array real general\n1 1\n1\n";
    /// assert!(matches!(MtxChunks::open(dense.as_bytes(), "d.mtx", &ImportOptions::default()), Err(Error::Unsupported(_))));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn open(reader: R, name: &str, options: &ImportOptions) -> Result<Self> {
        let mut lines = Lines::new(reader, name);
        let header = read_header(&mut lines)?;
        if header.format != MtxFormat::Coordinate {
            return Err(Error::Unsupported(format!(
                "reading the array file {name} in chunks (only coordinate files)"
            )));
        }
        let value_type = options.value_type.unwrap_or(match header.field {
            MtxField::Integer => ValueType::Int64,
            _ => ValueType::Float64,
        });
        if header.symmetry == MtxSymmetry::SkewSymmetric
            && value_type.as_index_type().is_some_and(|t| !t.is_signed())
        {
            return Err(Error::Type {
                what: format!("value type for the skew-symmetric file {name}"),
                expected: "a signed type".into(),
                found: value_type.name().into(),
            });
        }
        let mut custom_metadata = vec![
            (
                meta::MTX_FORMAT.to_string(),
                header.format.name().to_string(),
            ),
            (meta::MTX_FIELD.to_string(), header.field.name().to_string()),
            (
                meta::MTX_SYMMETRY.to_string(),
                header.symmetry.name().to_string(),
            ),
        ];
        if let Some(c) = &header.comments {
            custom_metadata.push((meta::MTX_COMMENTS.to_string(), c.clone()));
        }
        Ok(MtxChunks {
            lines,
            header,
            value_type,
            count: 0,
            custom_metadata,
        })
    }

    /// The matrix's shape.
    ///
    /// ```
    /// use arrow_sparse::io::{mtx::MtxChunks, ImportOptions};
    /// let r = MtxChunks::open("%%MatrixMarket matrix coordinate real general\n4 2 0\n".as_bytes(), "m.mtx", &ImportOptions::default())?;
    /// assert_eq!(r.shape(), [4, 2]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> [usize; 2] {
        [self.header.rows, self.header.cols]
    }

    /// The value type of the chunks (the options', else int64 for `integer`
    /// files and float64 otherwise).
    ///
    /// ```
    /// use arrow_sparse::io::{mtx::MtxChunks, ImportOptions};
    /// use arrow_sparse::ValueType;
    /// let r = MtxChunks::open("%%MatrixMarket matrix coordinate integer general\n4 2 0\n".as_bytes(), "m.mtx", &ImportOptions::default())?;
    /// assert_eq!(r.value_type(), ValueType::Int64);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_type(&self) -> ValueType {
        self.value_type
    }

    /// The header and comments as message metadata, as [`read_from`] gives them.
    ///
    /// ```
    /// use arrow_sparse::io::{meta, mtx::MtxChunks, ImportOptions};
    /// let r = MtxChunks::open("%%MatrixMarket matrix coordinate real symmetric\n% hi\n4 4 0\n".as_bytes(), "m.mtx", &ImportOptions::default())?;
    /// assert!(r.custom_metadata().contains(&(meta::MTX_SYMMETRY.to_string(), "symmetric".to_string())));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn custom_metadata(&self) -> &[(String, String)] {
        &self.custom_metadata
    }

    /// The next entries (at least `max` of the file's lines' worth, fewer at the
    /// end, one more when a mirrored entry does not fit), or `None` after the
    /// last one. A file with fewer or more entries than its size line announces
    /// is an error, as in [`read_from`].
    ///
    /// ```
    /// use arrow_sparse::io::{mtx::MtxChunks, ImportOptions};
    /// use arrow_sparse::Error;
    /// let truncated = "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1.0\n";
    /// let mut r = MtxChunks::open(truncated.as_bytes(), "t.mtx", &ImportOptions::default())?;
    /// assert!(matches!(r.next_chunk(10), Err(Error::Parse { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn next_chunk(&mut self, max: usize) -> Result<Option<AnyTensor>> {
        let vt = self.value_type;
        with_value_type!(vt, V => self.chunk_of::<V>(max.max(1)))
    }

    fn chunk_of<V: TextValue>(&mut self, max: usize) -> Result<Option<AnyTensor>>
    where
        AnyTensor: From<CooTensor<V, i64>>,
    {
        let h = &self.header;
        let name = self.lines.name().to_string();
        let skew = h.symmetry == MtxSymmetry::SkewSymmetric;
        let mirror = h.symmetry != MtxSymmetry::General;
        let mut coords: Vec<i64> = Vec::with_capacity(2 * max.min(MAX_RESERVE));
        let mut values: Vec<V> = Vec::with_capacity(max.min(MAX_RESERVE));
        while values.len() < max {
            let Some((ln, line)) = self.lines.next_line()? else {
                if self.count < h.nnz {
                    return Err(line_error(
                        &name,
                        self.lines.line_no(),
                        format!(
                            "the file ends after {} of the {} entries announced by the size line (line {}): truncated?",
                            self.count, h.nnz, h.size_line
                        ),
                    ));
                }
                break;
            };
            let Some((r, c, v)) = coordinate_line::<V>(line, ln, h, self.count, &name)? else {
                continue;
            };
            self.count += 1;
            coords.extend_from_slice(&[r, c]);
            values.push(v);
            if mirror && r != c {
                let m = if skew {
                    v.neg().ok_or_else(|| {
                        line_error(
                            &name,
                            ln,
                            format!("{v:?} has no negative in {}", V::TYPE.name()),
                        )
                    })?
                } else {
                    v
                };
                coords.extend_from_slice(&[c, r]);
                values.push(m);
            }
        }
        if values.is_empty() {
            return Ok(None);
        }
        let coo = CooTensor::try_new(
            vec![h.rows, h.cols],
            CoordLayout::RowMajor,
            EntryOrder::from(false),
            coords.into(),
            values.into(),
        )
        .map_err(|e| in_file(&name, e))?;
        Ok(Some(coo.into()))
    }
}

/// An error without a line (validation of the finished tensor), naming the file.
pub(crate) fn in_file(name: &str, e: Error) -> Error {
    Error::Parse {
        what: name.to_string(),
        detail: e.to_string(),
    }
}

const BANNER: &str = "expected the banner `%%MatrixMarket matrix coordinate|array real|integer|pattern general|symmetric|skew-symmetric`";

fn read_header<R: Read>(lines: &mut Lines<R>) -> Result<Header> {
    let name = lines.name().to_string();
    let Some((ln, first)) = lines.next_line()? else {
        return Err(line_error(&name, 1, format!("empty file: {BANNER}")));
    };
    let words: Vec<String> = first
        .split(|b| *b == b' ' || *b == b'\t')
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    let bad = |detail: String| Err(line_error(&name, ln, detail));
    if words.is_empty() || !words[0].eq_ignore_ascii_case("%%MatrixMarket") {
        return bad(format!(
            "{BANNER}, found {}",
            show(&first[..first.len().min(60)])
        ));
    }
    if words.len() != 5 {
        return bad(format!(
            "{BANNER}: the banner has {} words, expected 5",
            words.len()
        ));
    }
    if !words[1].eq_ignore_ascii_case("matrix") {
        return bad(format!(
            "object {:?} is not supported (only `matrix`)",
            words[1]
        ));
    }
    let Some(format) = MtxFormat::parse(&words[2]) else {
        return bad(format!(
            "unknown format {:?} (expected coordinate or array)",
            words[2]
        ));
    };
    let field = match MtxField::parse(&words[3]) {
        Some(f) => f,
        None if words[3].eq_ignore_ascii_case("complex") => {
            return bad("complex matrices are not supported (no complex value type)".into());
        }
        None => {
            return bad(format!(
                "unknown field {:?} (expected real, integer or pattern)",
                words[3]
            ));
        }
    };
    let symmetry = match MtxSymmetry::parse(&words[4]) {
        Some(s) => s,
        None if words[4].eq_ignore_ascii_case("hermitian") => {
            return bad("hermitian matrices are not supported (complex values)".into());
        }
        None => {
            return bad(format!(
                "unknown symmetry {:?} (expected general, symmetric or skew-symmetric)",
                words[4]
            ));
        }
    };
    if format == MtxFormat::Array && field == MtxField::Pattern {
        return bad("an array file cannot have the pattern field".into());
    }
    // comments, then the size line
    let mut comments: Option<String> = None;
    let (size_line, size) = loop {
        let Some((ln, line)) = lines.next_line()? else {
            let at = lines.line_no() + 1;
            return Err(line_error(
                &name,
                at,
                "the file ends before the size line (`rows columns entries` for coordinate, `rows columns` for array)",
            ));
        };
        if let Some(c) = line.strip_prefix(b"%") {
            let kept = comments.as_ref().map_or(0, String::len);
            if kept + c.len() < MAX_COMMENTS {
                match &mut comments {
                    Some(all) => {
                        all.push('\n');
                        all.push_str(&String::from_utf8_lossy(c));
                    }
                    None => comments = Some(String::from_utf8_lossy(c).into_owned()),
                }
            }
            continue;
        }
        if is_blank(line) {
            continue;
        }
        break (ln, line.to_vec());
    };
    let want = match format {
        MtxFormat::Coordinate => 3,
        MtxFormat::Array => 2,
    };
    let expected = match format {
        MtxFormat::Coordinate => "`rows columns entries`",
        MtxFormat::Array => "`rows columns`",
    };
    let toks: Vec<&[u8]> = size
        .split(|b| *b == b' ' || *b == b'\t')
        .filter(|w| !w.is_empty())
        .collect();
    let err = |detail: String| line_error(&name, size_line, detail);
    if toks.len() != want {
        return Err(err(format!(
            "expected the size line {expected}, found {} numbers in {}",
            toks.len(),
            show(&size)
        )));
    }
    let mut nums = [0u64; 3];
    for (i, t) in toks.iter().enumerate() {
        nums[i] = parse_u64(t)
            .filter(|&n| n <= MAX_EXTENT as u64)
            .ok_or_else(|| {
                err(format!(
                    "expected the size line {expected} with integers in 0..={MAX_EXTENT}, found {}",
                    show(t)
                ))
            })?;
    }
    let (rows, cols) = (nums[0] as usize, nums[1] as usize);
    if symmetry != MtxSymmetry::General && rows != cols {
        return Err(err(format!(
            "a {} matrix must be square, found {rows} x {cols}",
            symmetry.name()
        )));
    }
    Ok(Header {
        format,
        field,
        symmetry,
        rows,
        cols,
        nnz: nums[2],
        size_line,
        comments,
    })
}

#[cold]
#[inline(never)]
fn coord_error(
    name: &str,
    ln: u64,
    found: std::result::Result<u64, Option<&[u8]>>,
    what: &str,
    bound: usize,
    layout: &str,
) -> Error {
    let tok = match found {
        Err(None) => {
            return line_error(
                name,
                ln,
                format!("expected {layout}, the line ends before the {what} index"),
            );
        }
        Err(Some(t)) => show(t),
        Ok(x) => show(x.to_string().as_bytes()),
    };
    line_error(
        name,
        ln,
        format!("expected a {what} index in 1..={bound}, found {tok}"),
    )
}

#[cold]
#[inline(never)]
fn value_error<V: TextValue>(
    name: &str,
    ln: u64,
    tok: Option<&[u8]>,
    field: MtxField,
    layout: &str,
) -> Error {
    match tok {
        None => line_error(
            name,
            ln,
            format!("expected {layout}, the line ends before the value"),
        ),
        Some(t) => line_error(
            name,
            ln,
            format!("expected {}, found {}", value_kind::<V>(field), show(t)),
        ),
    }
}

fn value_kind<V: TextValue>(field: MtxField) -> String {
    match (field, V::TYPE.is_float()) {
        (MtxField::Integer, true) => "an integer value".into(),
        (MtxField::Real, true) => "a real value".into(),
        _ => format!("an {} value", V::TYPE.name()),
    }
}

#[inline(always)]
fn parse_value<V: TextValue>(tok: Option<&[u8]>, field: MtxField) -> Option<V> {
    match field {
        MtxField::Pattern => Some(V::one()),
        MtxField::Integer => V::parse_int(tok?),
        MtxField::Real => V::parse_real(tok?),
    }
}

/// One line of a coordinate file's body: `None` for a comment or blank line, else
/// the entry `(row, column, value)`, 0-based, of the lower triangle for symmetric
/// and skew-symmetric files (the value negated when the upper one was stored);
/// `count` entries came before it.
fn coordinate_line<V: TextValue>(
    line: &[u8],
    ln: u64,
    h: &Header,
    count: u64,
    name: &str,
) -> Result<Option<(i64, i64, V)>> {
    let layout = if h.field == MtxField::Pattern {
        "`row column`"
    } else {
        "`row column value`"
    };
    match line.first() {
        None | Some(b'%') => return Ok(None),
        Some(b' ' | b'\t') if is_blank(line) => return Ok(None),
        _ => {}
    }
    if count == h.nnz {
        return Err(line_error(
            name,
            ln,
            format!(
                "more entries than the {} announced by the size line (line {})",
                h.nnz, h.size_line
            ),
        ));
    }
    let mut t = super::text::Tokens::new(line);
    let mut r = match t.next_u64() {
        Ok(x) if x >= 1 && x <= h.rows as u64 => x as i64 - 1,
        e => return Err(coord_error(name, ln, e, "row", h.rows, layout)),
    };
    let mut c = match t.next_u64() {
        Ok(x) if x >= 1 && x <= h.cols as u64 => x as i64 - 1,
        e => return Err(coord_error(name, ln, e, "column", h.cols, layout)),
    };
    let mut v = match h.field {
        MtxField::Pattern => V::one(),
        f => match t.next_value::<V>(f == MtxField::Integer) {
            Ok(v) => v,
            Err(tok) => return Err(value_error::<V>(name, ln, tok, f, layout)),
        },
    };
    if let Some(extra) = t.next_token() {
        return Err(line_error(
            name,
            ln,
            format!("expected {layout}, found more: {}", show(extra)),
        ));
    }
    let sym = h.symmetry;
    if sym != MtxSymmetry::General {
        if sym == MtxSymmetry::SkewSymmetric {
            if r == c {
                return Err(line_error(
                    name,
                    ln,
                    format!(
                        "a skew-symmetric matrix stores no diagonal entry, found ({}, {})",
                        r + 1,
                        c + 1
                    ),
                ));
            }
            // both the stored value and its mirror must exist
            let Some(n) = v.neg() else {
                return Err(line_error(
                    name,
                    ln,
                    format!("{v:?} has no negative in {}", V::TYPE.name()),
                ));
            };
            if r < c {
                v = n;
            }
        }
        // keep the lower triangle: (i, j) with i >= j
        if r < c {
            std::mem::swap(&mut r, &mut c);
        }
    }
    Ok(Some((r, c, v)))
}

fn read_coordinate<V: TextValue, R: Read>(
    lines: &mut Lines<R>,
    h: &Header,
    options: &ImportOptions,
) -> Result<CooTensor<V, i64>> {
    let name = lines.name().to_string();
    let sym = h.symmetry;
    // coordinates as int64 and the value; a symmetric file's entries are mirrored
    let mirrored = if sym == MtxSymmetry::General { 1 } else { 2 };
    let mut limit = TextLimit::new(
        options.limit,
        mirrored * (16 + V::TYPE.byte_width() as u64),
        &name,
    );
    limit.declared(h.nnz, h.size_line, lines)?;
    let mut e = Entries::<V>::new(2, Some(h.nnz));
    let mut count = 0u64;
    while let Some((ln, line)) = lines.next_line()? {
        let Some((r, c, v)) = coordinate_line::<V>(line, ln, h, count, &name)? else {
            continue;
        };
        e.push(&[r, c], v, ln);
        count += 1;
        limit.read_so_far(count, lines)?;
    }
    if count < h.nnz {
        return Err(line_error(
            &name,
            lines.line_no(),
            format!(
                "the file ends after {count} of the {} entries announced by the size line (line {}): truncated?",
                h.nnz, h.size_line
            ),
        ));
    }
    e.apply_duplicates(options.duplicates, &name, &|c| one_based(c))?;
    let canonical = e.is_canonical();
    let (coords, values) = if sym == MtxSymmetry::General {
        (e.coords, e.values)
    } else {
        expand(
            &e.coords,
            &e.values,
            sym == MtxSymmetry::SkewSymmetric,
            &name,
        )?
    };
    let canonical = if sym == MtxSymmetry::General {
        canonical
    } else {
        strictly_sorted(&coords, 2)
    };
    CooTensor::try_new(
        vec![h.rows, h.cols],
        CoordLayout::RowMajor,
        EntryOrder::from(canonical),
        coords.into(),
        values.into(),
    )
    .map_err(|e| in_file(&name, e))
}

/// Both triangles of a symmetric (or skew-symmetric) matrix from its lower one.
fn expand<V: TextValue>(
    coords: &[i64],
    values: &[V],
    skew: bool,
    name: &str,
) -> Result<(Vec<i64>, Vec<V>)> {
    let off = coords.chunks_exact(2).filter(|c| c[0] != c[1]).count();
    let n = values.len() + off;
    let mut out_c = Vec::new();
    let mut out_v = Vec::new();
    out_c
        .try_reserve_exact(2 * n)
        .and_then(|_| out_v.try_reserve_exact(n))
        .map_err(|_| {
            in_file(
                name,
                Error::overflow("symmetric expansion", n.to_string(), "memory"),
            )
        })?;
    for (c, &v) in coords.chunks_exact(2).zip(values) {
        out_c.extend_from_slice(c);
        out_v.push(v);
        if c[0] != c[1] {
            out_c.extend_from_slice(&[c[1], c[0]]);
            let m = if skew {
                v.neg().ok_or_else(|| {
                    in_file(
                        name,
                        Error::overflow(
                            "skew-symmetric mirror",
                            format!("-({v:?})"),
                            V::TYPE.name(),
                        ),
                    )
                })?
            } else {
                v
            };
            out_v.push(m);
        }
    }
    Ok((out_c, out_v))
}

fn read_array<V: TextValue, R: Read>(
    lines: &mut Lines<R>,
    h: &Header,
    options: &ImportOptions,
) -> Result<DenseTensor<V>> {
    let name = lines.name().to_string();
    let (rows, cols) = (h.rows as u64, h.cols as u64);
    // the dense result holds rows x cols values whatever the symmetry
    let mut limit = TextLimit::new(options.limit, V::TYPE.byte_width() as u64, &name);
    limit.declared(rows.saturating_mul(cols), h.size_line, lines)?;
    let expected = match h.symmetry {
        MtxSymmetry::General => rows.checked_mul(cols),
        MtxSymmetry::Symmetric => rows.checked_mul(rows + 1).map(|x| x / 2),
        MtxSymmetry::SkewSymmetric => rows.checked_mul(rows.saturating_sub(1)).map(|x| x / 2),
    }
    .filter(|&n| n <= isize::MAX as u64)
    .ok_or_else(|| {
        line_error(
            &name,
            h.size_line,
            format!("a {rows} x {cols} array is too large"),
        )
    })?;
    let mut vals: Vec<V> = Vec::with_capacity(expected.min(MAX_RESERVE as u64) as usize);
    while let Some((ln, line)) = lines.next_line()? {
        if line.first() == Some(&b'%') {
            continue;
        }
        let mut t = super::text::Tokens::new(line);
        while let Some(tok) = t.next_token() {
            if vals.len() as u64 == expected {
                return Err(line_error(
                    &name,
                    ln,
                    format!(
                        "more values than the {expected} that a {rows} x {cols} {} array holds",
                        h.symmetry.name()
                    ),
                ));
            }
            let Some(v) = parse_value::<V>(Some(tok), h.field) else {
                return Err(value_error::<V>(
                    &name,
                    ln,
                    Some(tok),
                    h.field,
                    "one value per element",
                ));
            };
            vals.push(v);
        }
        limit.read_so_far(vals.len() as u64, lines)?;
    }
    if (vals.len() as u64) < expected {
        return Err(line_error(
            &name,
            lines.line_no(),
            format!(
                "the file ends after {} of the {expected} values of a {rows} x {cols} {} array: truncated?",
                vals.len(),
                h.symmetry.name()
            ),
        ));
    }
    let (m, n) = (h.rows, h.cols);
    let dense: Vec<V> = match h.symmetry {
        MtxSymmetry::General => {
            let mut out = vec![V::ZERO; m * n];
            for j in 0..n {
                for i in 0..m {
                    out[i * n + j] = vals[j * m + i];
                }
            }
            out
        }
        sym => {
            let skew = sym == MtxSymmetry::SkewSymmetric;
            let mut out = Vec::new();
            out.try_reserve_exact(m * n).map_err(|_| {
                in_file(
                    &name,
                    Error::overflow("dense array", format!("{m} x {n}"), "memory"),
                )
            })?;
            out.resize(m * n, V::ZERO);
            let mut k = 0;
            for j in 0..n {
                let first = if skew { j + 1 } else { j };
                for i in first..m {
                    let v = vals[k];
                    k += 1;
                    out[i * n + j] = v;
                    out[j * n + i] = if skew {
                        v.neg().ok_or_else(|| {
                            in_file(
                                &name,
                                Error::overflow(
                                    "skew-symmetric mirror",
                                    format!("-({v:?})"),
                                    V::TYPE.name(),
                                ),
                            )
                        })?
                    } else {
                        v
                    };
                }
            }
            out
        }
    };
    DenseTensor::try_new(vec![m, n], dense.into()).map_err(|e| in_file(&name, e))
}

/// Write a tensor (2-D) as a `.mtx` file, atomically.
///
/// ```
/// use arrow_sparse::io::{self, mtx, MtxSymmetry};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("sym.mtx");
/// let coo = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 7), (vec![1, 0], 7)])?;
/// let opts = mtx::MtxWriteOptions::default().with_symmetry(MtxSymmetry::Symmetric);
/// mtx::write(&path, &AnyTensor::from(coo).into(), &opts)?;
/// let text = std::fs::read_to_string(&path)?;
/// assert_eq!(text, "%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n2 1 7\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write(
    path: impl AsRef<Path>,
    message: &TensorMessage,
    options: &MtxWriteOptions,
) -> Result<()> {
    let path = path.as_ref();
    write_atomic(path, |f| {
        let mut w = BufWriter::with_capacity(1 << 20, f);
        write_to(&mut w, message, options)?;
        w.flush()?;
        Ok(())
    })
}

/// Write a tensor (2-D) as Matrix Market text to any byte sink.
///
/// ```
/// use arrow_sparse::io::mtx::{self, MtxWriteOptions};
/// use arrow_sparse::{AnyTensor, DenseTensor};
/// let d: AnyTensor = DenseTensor::<f32>::try_new(vec![2, 2], vec![1.5, 0.0, -2.0, 4.0].into())?.into();
/// let mut out = Vec::new();
/// mtx::write_to(&mut out, &d.into(), &MtxWriteOptions::default())?; // dense: `array`, column by column
/// assert_eq!(String::from_utf8(out).unwrap(), "%%MatrixMarket matrix array real general\n2 2\n1.5\n-2.0\n0.0\n4.0\n");
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn write_to<W: Write>(
    mut out: W,
    message: &TensorMessage,
    options: &MtxWriteOptions,
) -> Result<()> {
    let t = &message.tensor;
    if t.shape().len() != 2 {
        return Err(Error::shape(
            "Matrix Market output",
            "a 2-D tensor",
            format!("{} dimensions", t.shape().len()),
        ));
    }
    let md = &message.custom_metadata;
    let is_int = t.value_type().as_index_type().is_some();
    let format = options
        .format
        .or_else(|| meta_get(md, meta::MTX_FORMAT).and_then(MtxFormat::parse))
        .unwrap_or(match t {
            AnyTensor::Dense(_) => MtxFormat::Array,
            _ => MtxFormat::Coordinate,
        });
    let inferred = if is_int {
        MtxField::Integer
    } else {
        MtxField::Real
    };
    let field = match options.field {
        Some(MtxField::Integer) if !is_int => {
            return Err(Error::Type {
                what: "values of a Matrix Market integer file".into(),
                expected: "an integer value type".into(),
                found: t.value_type().name().into(),
            });
        }
        Some(f) => f,
        None => match meta_get(md, meta::MTX_FIELD).and_then(MtxField::parse) {
            Some(MtxField::Integer) if is_int => MtxField::Integer,
            Some(MtxField::Pattern) if format == MtxFormat::Coordinate => MtxField::Pattern,
            Some(MtxField::Real) => MtxField::Real,
            _ => inferred,
        },
    };
    if format == MtxFormat::Array && field == MtxField::Pattern {
        return Err(Error::Unsupported(
            "a Matrix Market array file cannot have the pattern field".into(),
        ));
    }
    let (symmetry, strict) = match options.symmetry {
        Some(s) => (s, true),
        None => (
            meta_get(md, meta::MTX_SYMMETRY)
                .and_then(MtxSymmetry::parse)
                .unwrap_or_default(),
            false,
        ),
    };
    let (rows, cols) = (t.shape()[0], t.shape()[1]);
    let symmetry = if symmetry != MtxSymmetry::General && rows != cols {
        if strict {
            return Err(Error::shape(
                format!("{} Matrix Market output", symmetry.name()),
                "a square matrix",
                format!("{rows} x {cols}"),
            ));
        }
        MtxSymmetry::General
    } else {
        symmetry
    };
    let comments = meta_get(md, meta::MTX_COMMENTS);
    let w = Writer {
        format,
        field,
        symmetry,
        strict,
        comments,
    };
    with_value_type!(t.value_type(), V => w.write::<V, W>(&mut out, t))
}

struct Writer<'a> {
    format: MtxFormat,
    field: MtxField,
    symmetry: MtxSymmetry,
    strict: bool,
    comments: Option<&'a str>,
}

/// Flush `buf` to `out` once it holds this many bytes.
const FLUSH: usize = 1 << 16;

impl Writer<'_> {
    fn header(&self, buf: &mut Vec<u8>, symmetry: MtxSymmetry) {
        buf.extend_from_slice(b"%%MatrixMarket matrix ");
        for w in [
            self.format.name(),
            " ",
            self.field.name(),
            " ",
            symmetry.name(),
            "\n",
        ] {
            buf.extend_from_slice(w.as_bytes());
        }
        if let Some(c) = self.comments {
            for line in c.split('\n') {
                buf.push(b'%');
                buf.extend_from_slice(line.as_bytes());
                buf.push(b'\n');
            }
        }
    }

    fn write<V: TextValue, W: Write>(&self, out: &mut W, t: &AnyTensor) -> Result<()> {
        match (self.format, self.symmetry) {
            (MtxFormat::Coordinate, MtxSymmetry::General) => {
                self.coordinate_general::<V, W>(out, t)
            }
            (MtxFormat::Coordinate, sym) => self.coordinate_symmetric::<V, W>(out, t, sym),
            (MtxFormat::Array, sym) => self.array::<V, W>(out, t, sym),
        }
    }

    fn entry<V: TextValue>(&self, buf: &mut Vec<u8>, i: usize, j: usize, v: V) {
        push_u64(buf, i as u64 + 1);
        buf.push(b' ');
        push_u64(buf, j as u64 + 1);
        if self.field != MtxField::Pattern {
            buf.push(b' ');
            v.write_text(buf);
        }
        buf.push(b'\n');
    }

    fn coordinate_general<V: TextValue, W: Write>(&self, out: &mut W, t: &AnyTensor) -> Result<()> {
        let nnz = t.nnz();
        let mut buf = Vec::with_capacity(FLUSH + 256);
        self.header(&mut buf, MtxSymmetry::General);
        write_size(&mut buf, &[t.shape()[0], t.shape()[1], nnz]);
        let mut count = 0usize;
        let mut failed: Option<std::io::Error> = None;
        t.for_each_entry::<V>(&mut |c, v| {
            count += 1;
            self.entry(&mut buf, c[0], c[1], v);
            if buf.len() >= FLUSH && failed.is_none() {
                if let Err(e) = out.write_all(&buf) {
                    failed = Some(e);
                }
                buf.clear();
            }
        })?;
        if let Some(e) = failed {
            return Err(Error::Io(e));
        }
        if count != nnz {
            return Err(Error::invariant(
                "tensor entries",
                None,
                format!("nnz() is {nnz} but {count} entries were visited"),
            ));
        }
        out.write_all(&buf)?;
        Ok(())
    }

    fn not_symmetric(&self, sym: MtxSymmetry, i: usize, j: usize, a: String, b: String) -> Error {
        Error::invariant(
            format!("{} Matrix Market output", sym.name()),
            None,
            format!(
                "the matrix is not {}: a({}, {}) = {a} but a({}, {}) = {b}",
                sym.name(),
                i + 1,
                j + 1,
                j + 1,
                i + 1
            ),
        )
    }

    fn coordinate_symmetric<V: TextValue, W: Write>(
        &self,
        out: &mut W,
        t: &AnyTensor,
        sym: MtxSymmetry,
    ) -> Result<()> {
        let skew = sym == MtxSymmetry::SkewSymmetric;
        let coo = t.to_coo::<V, i64>()?.canonicalize()?;
        let mut lower = 0usize;
        let mut broken = None;
        for k in 0..coo.nnz() {
            let (i, j, v) = (coo.coord(k, 0), coo.coord(k, 1), coo.values()[k]);
            let mirror = coo.get(&[j, i]).unwrap_or(V::ZERO);
            let ok = match (i == j, skew) {
                (true, true) => v.is_zero(),
                (_, false) => mirror.same(v),
                (false, true) => v.neg().is_some_and(|n| n.same(mirror)),
            };
            if !ok {
                broken = Some((i, j, v, mirror));
                break;
            }
            if i > j || (i == j && !skew) {
                lower += 1;
            }
        }
        if let Some((i, j, v, m)) = broken {
            if self.strict {
                return Err(self.not_symmetric(sym, i, j, format!("{v:?}"), format!("{m:?}")));
            }
            return self.coordinate_general::<V, W>(out, t);
        }
        // Write the lower triangle in the tensor's own entry order when it has no
        // duplicates (then its entries are those of `coo`): a symmetric file read
        // in any entry order writes back as the same tensor, mirrors included.
        let stored = t.to_coo::<V, i64>()?;
        let out_coo = if stored.nnz() == coo.nnz() {
            &stored
        } else {
            &coo
        };
        let mut buf = Vec::with_capacity(FLUSH + 256);
        self.header(&mut buf, sym);
        write_size(&mut buf, &[coo.shape()[0], coo.shape()[1], lower]);
        for k in 0..out_coo.nnz() {
            let (i, j) = (out_coo.coord(k, 0), out_coo.coord(k, 1));
            if i > j || (i == j && !skew) {
                self.entry(&mut buf, i, j, out_coo.values()[k]);
                if buf.len() >= FLUSH {
                    out.write_all(&buf)?;
                    buf.clear();
                }
            }
        }
        out.write_all(&buf)?;
        Ok(())
    }

    fn array<V: TextValue, W: Write>(
        &self,
        out: &mut W,
        t: &AnyTensor,
        sym: MtxSymmetry,
    ) -> Result<()> {
        let dense = match t {
            AnyTensor::Dense(d) => d.downcast::<V>().ok_or_else(|| {
                Error::Unsupported("internal type dispatch failed for dense".into())
            })?,
            _ => t.to_coo::<V, i64>()?.to_dense()?,
        };
        let (m, n) = (dense.shape()[0], dense.shape()[1]);
        let at = |i: usize, j: usize| dense.get(&[i, j]).unwrap_or(V::ZERO);
        let skew = sym == MtxSymmetry::SkewSymmetric;
        if sym != MtxSymmetry::General {
            for j in 0..n {
                for i in j..m {
                    let (v, w) = (at(i, j), at(j, i));
                    let ok = if skew {
                        v.neg().is_some_and(|x| x.same(w))
                    } else {
                        v.same(w)
                    };
                    if !ok {
                        if self.strict {
                            return Err(self.not_symmetric(
                                sym,
                                i,
                                j,
                                format!("{v:?}"),
                                format!("{w:?}"),
                            ));
                        }
                        return self.array::<V, W>(out, t, MtxSymmetry::General);
                    }
                }
            }
        }
        let mut buf = Vec::with_capacity(FLUSH + 256);
        self.header(&mut buf, sym);
        write_size(&mut buf, &[m, n]);
        for j in 0..n {
            let first = match sym {
                MtxSymmetry::General => 0,
                MtxSymmetry::Symmetric => j,
                MtxSymmetry::SkewSymmetric => j + 1,
            };
            for i in first..m {
                at(i, j).write_text(&mut buf);
                buf.push(b'\n');
                if buf.len() >= FLUSH {
                    out.write_all(&buf)?;
                    buf.clear();
                }
            }
        }
        out.write_all(&buf)?;
        Ok(())
    }
}

fn write_size(buf: &mut Vec<u8>, nums: &[usize]) {
    for (k, &x) in nums.iter().enumerate() {
        if k > 0 {
            buf.push(b' ');
        }
        push_u64(buf, x as u64);
    }
    buf.push(b'\n');
}
