//! [`ArchiveWriter`]: a tensor or a sequence of chunks into one archive, row group
//! by row group, atomically.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::parquet::arrow::ArrowWriter;
use ::parquet::arrow::arrow_writer::ArrowWriterOptions;
use ::parquet::file::metadata::{KeyValue, SortingColumn};
use ::parquet::file::properties::WriterProperties;
use ::parquet::schema::types::ColumnPath;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::encoding::{coordinate_encoding, value_encoding};
use super::meta::{
    Archive, ArchiveLayout, DmChain, LEVEL_COLUMN, RowGroupJson, TensorSpec, VALUE_COLUMN,
};
use super::rows::{
    Rows, Source, advance, coordinate_array, coordinate_type, csf_needs_levels, with_bytes,
};
use super::{ArchiveWriteOptions, METADATA_CRC_KEY, METADATA_KEY};
use crate::dims::DimMap;
use crate::error::{Error, Result};
use crate::ipc::TensorMessage;
use crate::tensor::AnyTensor;
use crate::types::IndexType;

/// What a finished write produced.
///
/// ```
/// use arrow_sparse::archive::{self, ArchiveWriteOptions};
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.parquet");
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![10], &[(vec![1], 1.0), (vec![8], 2.0)])?.into();
/// let summary = archive::write_archive(&path, &t.into(), &ArchiveWriteOptions::default())?;
/// assert_eq!((summary.rows, summary.row_groups), (2, 1));
/// assert_eq!(summary.bytes, std::fs::metadata(&path)?.len());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteSummary {
    /// Rows written (stored entries; every element for a dense tensor).
    pub rows: usize,
    /// Row groups written.
    pub row_groups: usize,
    /// Size of the file in bytes.
    pub bytes: u64,
}

/// Writes one tensor into a Parquet archive, from one tensor or from a sequence of
/// chunks, holding about one row group in memory.
///
/// Each [`write_chunk`](Self::write_chunk) appends the chunk's stored entries in
/// its storage order (every element, row-major, for a dense chunk). The declared
/// [`ArchiveLayout`] constrains the order: CSR / CSC need non-decreasing major
/// coordinates, dense needs every element exactly once in row-major order, a COO
/// spec with `canonical: Some(true)` needs strictly increasing coordinates (with
/// `None` the flag is computed). Nothing appears at the destination until
/// [`finish`](Self::finish) succeeds; dropping the writer discards the file.
///
/// ```
/// use arrow_sparse::archive::{ArchiveWriter, TensorSpec, ArchiveWriteOptions};
/// use arrow_sparse::{CooTensor, IndexType, ValueType};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("doc_parquet_chunks.parquet");
/// let spec = TensorSpec::coo(vec![1000, 10], ValueType::Float32, IndexType::Int32);
/// let mut w = ArchiveWriter::create(&path, spec, &ArchiveWriteOptions::default().with_row_group_size(2))?;
/// for block in 0..3usize {
///     let chunk = CooTensor::<f32, i64>::from_entries(vec![1000, 10], &[(vec![block * 10, 1], 1.0), (vec![block * 10 + 1, 2], 2.0)])?;
///     w.write_chunk(&chunk.into())?;
/// }
/// let summary = w.finish()?;
/// assert_eq!((summary.rows, summary.row_groups), (6, 3));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub struct ArchiveWriter {
    dest: PathBuf,
    tmp: crate::atomic::AtomicFile,
    writer: Option<ArrowWriter<BufWriter<File>>>,
    spec: TensorSpec,
    columns: Vec<String>,
    column_types: Vec<DataType>,
    schema: SchemaRef,
    levels: bool,
    options: ArchiveWriteOptions,
    rows: usize,
    in_group: usize,
    hashers: Vec<crc32fast::Hasher>,
    groups: Vec<RowGroupJson>,
    prev: Option<Vec<usize>>,
    sorted: bool,
    next_dense: Vec<usize>,
    check_fit: Vec<usize>,
    /// GCS: the map, and whether reduced minor coordinates may overflow the
    /// index type
    gcs: Option<(DimMap, bool)>,
}

impl std::fmt::Debug for ArchiveWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArchiveWriter")
            .field("dest", &self.dest)
            .field("spec", &self.spec)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl ArchiveWriter {
    /// Start an archive of `spec` at `path` (written to a temporary file in the same
    /// directory until [`finish`](Self::finish)).
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveLayout, ArchiveWriter, TensorSpec, ArchiveWriteOptions};
    /// use arrow_sparse::{CompressedAxis, Error, IndexType, ValueType};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let spec = TensorSpec::coo(vec![3, 4], ValueType::Float64, IndexType::Int32);
    /// let w = ArchiveWriter::create(&path, spec, &ArchiveWriteOptions::default())?;
    /// assert!(!path.exists()); // nothing at the destination before finish
    /// drop(w); // nor after dropping an unfinished writer: no file is left behind
    /// assert_eq!(std::fs::read_dir(dir.path())?.count(), 0);
    /// // the spec is checked: CSR needs 2 dimensions
    /// let csr = ArchiveLayout::Csx { axis: CompressedAxis::Row, index_type: IndexType::Int32, indptr_type: IndexType::Int64 };
    /// let bad = TensorSpec::coo(vec![2, 3, 4], ValueType::Float64, IndexType::Int32).with_layout(csr);
    /// assert!(matches!(ArchiveWriter::create(&path, bad, &ArchiveWriteOptions::default()), Err(Error::Shape { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn create(
        path: impl AsRef<Path>,
        spec: TensorSpec,
        options: &ArchiveWriteOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        Self::create_impl(path, spec, options, false)
    }

    fn create_impl(
        path: &Path,
        spec: TensorSpec,
        options: &ArchiveWriteOptions,
        levels: bool,
    ) -> Result<Self> {
        spec.check()?;
        options.compression.to_parquet()?;
        let tmp = crate::atomic::AtomicFile::create(path)?;
        let columns = spec.column_names();
        let column_types: Vec<DataType> = spec.shape.iter().map(|&e| coordinate_type(e)).collect();
        let mut fields: Vec<Field> = columns
            .iter()
            .zip(&column_types)
            .map(|(n, t)| Field::new(n, t.clone(), false))
            .collect();
        fields.push(Field::new(VALUE_COLUMN, spec.value_type.data_type(), false));
        if levels {
            fields.push(Field::new(
                LEVEL_COLUMN,
                coordinate_type(spec.shape.len()),
                false,
            ));
        }
        let n = spec.shape.len();
        // dimensions whose coordinates may not fit the declared index type
        let check_fit = match (spec.layout.rows(), spec.index_type()) {
            (ArchiveLayout::Csx { axis, .. }, Some(it)) => {
                let minor = axis.dims().1;
                fits_check(&spec.shape, it, &[minor])
            }
            (ArchiveLayout::Coo { .. } | ArchiveLayout::Csf { .. }, Some(it)) => {
                fits_check(&spec.shape, it, &(0..n).collect::<Vec<_>>())
            }
            (ArchiveLayout::Level { format, .. }, Some(it)) => {
                // the dimensions of levels that store coordinates
                let dims: Vec<usize> = format
                    .levels()
                    .iter()
                    .zip(format.axis_order())
                    .filter(|(t, _)| t.kind != crate::tensor::levels::LevelKind::Dense)
                    .map(|(_, &d)| d)
                    .collect();
                fits_check(&spec.shape, it, &dims)
            }
            _ => Vec::new(),
        };
        let gcs = match (spec.gcs_map()?, spec.layout.rows(), spec.index_type()) {
            (Some(map), ArchiveLayout::Gcs { axis, .. }, Some(it)) => {
                let minor = axis.dims().1;
                let overflows = !fits_check(map.reduced_shape(), it, &[minor]).is_empty();
                Some((map, overflows))
            }
            _ => None,
        };
        let ncols = fields.len();
        Ok(ArchiveWriter {
            dest: path.to_path_buf(),
            tmp,
            writer: None,
            schema: Arc::new(Schema::new(fields)),
            columns,
            column_types,
            levels,
            options: options.clone(),
            rows: 0,
            in_group: 0,
            hashers: vec![crc32fast::Hasher::new(); ncols],
            groups: Vec::new(),
            prev: None,
            sorted: true,
            next_dense: vec![0; n],
            check_fit,
            gcs,
            spec,
        })
    }

    /// The spec being written.
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveWriter, TensorSpec, ArchiveWriteOptions};
    /// use arrow_sparse::{IndexType, ValueType};
    /// let dir = tempfile::tempdir()?;
    /// let spec = TensorSpec::coo(vec![3, 4], ValueType::Float64, IndexType::Int32)
    ///     .with_dim_names(vec!["row".into(), "col".into()]);
    /// let w = ArchiveWriter::create(&dir.path().join("t.parquet"), spec.clone(), &ArchiveWriteOptions::default())?;
    /// assert_eq!(w.spec(), &spec);
    /// assert_eq!(w.spec().column_names(), ["row", "col"]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn spec(&self) -> &TensorSpec {
        &self.spec
    }

    /// Rows written so far.
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveWriter, TensorSpec, ArchiveWriteOptions};
    /// use arrow_sparse::{CooTensor, DenseTensor, IndexType, ValueType};
    /// let dir = tempfile::tempdir()?;
    /// let spec = TensorSpec::coo(vec![2, 3], ValueType::Float64, IndexType::Int32);
    /// let mut w = ArchiveWriter::create(&dir.path().join("t.parquet"), spec, &ArchiveWriteOptions::default())?;
    /// assert_eq!(w.rows(), 0);
    /// w.write_chunk(&CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0)])?.into())?;
    /// assert_eq!(w.rows(), 2);
    /// // a dense chunk appends every element
    /// w.write_chunk(&DenseTensor::<f64>::try_new(vec![2, 3], vec![0.0; 6].into())?.into())?;
    /// assert_eq!(w.rows(), 8);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Append the stored entries of `chunk` (same shape and value type as the
    /// spec) in its storage order.
    ///
    /// For a DM spec, `chunk` is either a DM tensor with the spec's DM levels
    /// (its storage's entries are appended) or a tensor of the storage's shape.
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveWriter, ArchiveReadOptions, TensorSpec, ArchiveWriteOptions};
    /// use arrow_sparse::{CooTensor, Error, IndexType, ValueType};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let spec = TensorSpec::coo(vec![4, 3], ValueType::Float64, IndexType::Int32);
    /// let mut w = ArchiveWriter::create(&path, spec, &ArchiveWriteOptions::default())?;
    /// w.write_chunk(&CooTensor::<f64, i64>::from_entries(vec![4, 3], &[(vec![0, 1], 1.0)])?.into())?;
    /// w.write_chunk(&CooTensor::<f64, i32>::from_entries(vec![4, 3], &[(vec![3, 2], 2.0)])?.into())?;
    /// let wrong_shape = CooTensor::<f64, i64>::from_entries(vec![4, 4], &[(vec![0, 0], 1.0)])?;
    /// assert!(matches!(w.write_chunk(&wrong_shape.into()), Err(Error::Shape { .. })));
    /// let wrong_type = CooTensor::<f32, i64>::from_entries(vec![4, 3], &[(vec![0, 0], 1.0)])?;
    /// assert!(matches!(w.write_chunk(&wrong_type.into()), Err(Error::Type { .. })));
    /// w.finish()?;
    /// let back = archive::read_archive(&path, &ArchiveReadOptions::default())?.tensor;
    /// assert_eq!((back.nnz(), back.get::<f64>(&[3, 2])?), (2, Some(2.0)));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn write_chunk(&mut self, chunk: &AnyTensor) -> Result<()> {
        let storage;
        let chunk = match (chunk, &self.spec.layout) {
            (AnyTensor::Dm(d), ArchiveLayout::Dm { chain, .. }) => {
                let (levels, inner) = DmChain::of(d)?;
                if &levels != chain {
                    return Err(Error::invariant(
                        "chunk",
                        None,
                        format!(
                            "its DM maps {} differ from the archive's {}",
                            levels.to_json(),
                            chain.to_json()
                        ),
                    ));
                }
                storage = inner;
                &storage
            }
            (chunk, _) => chunk,
        };
        if chunk.shape() != self.spec.shape.as_slice() {
            return Err(Error::shape(
                "chunk",
                format!("{:?}", self.spec.shape),
                format!("{:?}", chunk.shape()),
            ));
        }
        if chunk.value_type() != self.spec.value_type {
            return Err(Error::Type {
                what: "chunk value type".into(),
                expected: self.spec.value_type.name().into(),
                found: chunk.value_type().name().into(),
            });
        }
        let src = Source::new(chunk, self.levels)?;
        let batch = self.options.batch_size.max(1);
        let mut k = 0;
        while k < src.len() {
            let end = (k + batch).min(src.len());
            let rows = src.rows(k, end)?;
            self.write_rows(&rows)?;
            k = end;
        }
        Ok(())
    }

    pub(super) fn write_rows(&mut self, rows: &Rows) -> Result<()> {
        self.check_order(rows)?;
        if self.writer.is_none() {
            self.writer = Some(self.open_writer(Some(rows))?);
        }
        let rg = self.options.row_group_size.max(1);
        let mut off = 0;
        while off < rows.len() {
            let take = (rows.len() - off).min(rg - self.in_group);
            let batch = self.record_batch(rows, off, take)?;
            if let Some(w) = self.writer.as_mut() {
                w.write(&batch)?;
            }
            self.in_group += take;
            self.rows += take;
            off += take;
            if self.in_group == rg {
                self.end_group()?;
            }
        }
        Ok(())
    }

    /// The order and type constraints of the declared layout, on the rows to come.
    fn check_order(&mut self, rows: &Rows) -> Result<()> {
        let n = self.spec.shape.len();
        for &d in &self.check_fit {
            let it = self.spec.index_type().unwrap_or(IndexType::Int64);
            if let Some((r, &x)) = rows.coords[d]
                .iter()
                .enumerate()
                .find(|&(_, &x)| x as u64 > it.max_value())
            {
                return Err(Error::overflow(
                    format!("coordinate of row {} (dimension {d})", self.rows + r),
                    x.to_string(),
                    it.name(),
                ));
            }
        }
        let level = matches!(self.spec.layout.rows(), ArchiveLayout::Level { .. });
        // (a level tensor's positions count nodes, which rows do not bound)
        if let (Some(p), false) = (self.spec.indptr_type(), level) {
            let total = self.rows + rows.len();
            if total as u64 > p.max_value() {
                return Err(Error::overflow(
                    "indptr (number of rows)",
                    total.to_string(),
                    p.name(),
                ));
            }
        }
        let row = |r: usize| -> Vec<usize> { (0..n).map(|d| rows.coords[d][r]).collect() };
        // lexicographic comparisons with row r: of the previous chunk's last row, of
        // row q of this chunk
        let cmp = |prev: &[usize], r: usize| -> std::cmp::Ordering {
            (0..n)
                .map(|d| prev[d].cmp(&rows.coords[d][r]))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        };
        let cmp_rows = |q: usize, r: usize| -> std::cmp::Ordering {
            (0..n)
                .map(|d| rows.coords[d][q].cmp(&rows.coords[d][r]))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        };
        if let Some((map, overflows)) = &self.gcs {
            self.check_gcs_order(map, *overflows, rows)?;
        }
        match self.spec.layout.rows() {
            ArchiveLayout::Csx { axis, .. } => {
                let major = axis.dims().0;
                let mut last = self.prev.as_ref().map_or(0, |p| p[major]);
                for (r, &m) in rows.coords[major].iter().enumerate() {
                    if m < last {
                        return Err(Error::invariant(
                            "CSR/CSC row order",
                            Some(self.rows + r),
                            format!(
                                "major coordinate {m} after {last}: rows must come by major slice"
                            ),
                        ));
                    }
                    last = m;
                }
            }
            ArchiveLayout::Dense { .. } => {
                let size: usize = self.spec.shape.iter().product();
                for r in 0..rows.len() {
                    let expected = &self.next_dense;
                    if self.rows + r >= size || (0..n).any(|d| rows.coords[d][r] != expected[d]) {
                        return Err(Error::invariant(
                            "dense row order",
                            Some(self.rows + r),
                            format!("expected element {expected:?}, found {:?}", row(r)),
                        ));
                    }
                    advance(&mut self.next_dense, &self.spec.shape);
                }
            }
            ArchiveLayout::Coo { canonical, .. } if *canonical != Some(false) && self.sorted => {
                for r in 0..rows.len() {
                    let before = match (r, &self.prev) {
                        (0, None) => continue,
                        (0, Some(p)) => cmp(p, 0),
                        _ => cmp_rows(r - 1, r),
                    };
                    if before.is_ge() {
                        if *canonical == Some(true) {
                            return Err(Error::invariant(
                                "COO canonical flag",
                                Some(self.rows + r),
                                "the spec says canonical but rows are not strictly increasing",
                            ));
                        }
                        self.sorted = false;
                        break;
                    }
                }
            }
            _ => {}
        }
        if rows.len() > 0 {
            self.prev = Some(row(rows.len() - 1));
        }
        Ok(())
    }

    /// GCS rows: reduced major coordinates never decrease, reduced minor ones
    /// fit the index type.
    fn check_gcs_order(&self, map: &DimMap, overflows: bool, rows: &Rows) -> Result<()> {
        let ArchiveLayout::Gcs {
            axis, index_type, ..
        } = self.spec.layout.rows()
        else {
            return Ok(());
        };
        let (major, minor) = axis.dims();
        let mut r = [0usize; 2];
        let mut last = match &self.prev {
            Some(p) => {
                map.reduce_into(p, &mut r);
                r[major]
            }
            None => 0,
        };
        let mut c = vec![0usize; rows.coords.len()];
        for i in 0..rows.len() {
            for (x, col) in c.iter_mut().zip(&rows.coords) {
                *x = col[i];
            }
            map.reduce_into(&c, &mut r);
            if r[major] < last {
                return Err(Error::invariant(
                    "GCS row order",
                    Some(self.rows + i),
                    format!(
                        "reduced major coordinate {} after {last}: rows must come in the storage order of the reduced matrix",
                        r[major]
                    ),
                ));
            }
            last = r[major];
            if overflows && r[minor] as u64 > index_type.max_value() {
                return Err(Error::overflow(
                    format!("reduced coordinate of row {}", self.rows + i),
                    r[minor].to_string(),
                    index_type.name(),
                ));
            }
        }
        Ok(())
    }

    fn record_batch(&mut self, rows: &Rows, off: usize, len: usize) -> Result<RecordBatch> {
        let mut arrays: Vec<ArrayRef> = rows
            .coords
            .iter()
            .zip(&self.column_types)
            .map(|(c, t)| coordinate_array(&c[off..off + len], t))
            .collect();
        arrays.push(rows.values.slice(off, len));
        if self.levels {
            let levels = rows.levels.as_deref().ok_or_else(|| {
                Error::invariant("CSF node levels", None, "missing for a CSF archive")
            })?;
            let ty = coordinate_type(self.spec.shape.len());
            arrays.push(coordinate_array(&levels[off..off + len], &ty));
        }
        for (a, h) in arrays.iter().zip(self.hashers.iter_mut()) {
            with_bytes(a.as_ref(), "column", |b| h.update(b))?;
        }
        Ok(RecordBatch::try_new(self.schema.clone(), arrays)?)
    }

    fn end_group(&mut self) -> Result<()> {
        if let Some(w) = self.writer.as_mut() {
            w.flush()?;
        }
        let ncols = self.hashers.len();
        let hashers = std::mem::replace(&mut self.hashers, vec![crc32fast::Hasher::new(); ncols]);
        self.groups.push(RowGroupJson {
            rows: self.in_group as u64,
            crc32: Some(combine(hashers)),
        });
        self.in_group = 0;
        Ok(())
    }

    /// The Parquet writer, with encodings chosen from the first rows.
    fn open_writer(&self, sample: Option<&Rows>) -> Result<ArrowWriter<BufWriter<File>>> {
        let mut props = WriterProperties::builder()
            .set_compression(self.options.compression.to_parquet()?)
            .set_max_row_group_row_count(Some(self.options.row_group_size.max(1)))
            .set_max_row_group_bytes(None)
            .set_dictionary_enabled(false);
        for (d, name) in self.columns.iter().enumerate() {
            let xs = sample.map_or(&[][..], |s| &s.coords[d][..]);
            props = coordinate_encoding(props, name, xs, self.options.row_group_size);
        }
        props = value_encoding(
            props,
            sample.map(|s| s.values.as_ref()),
            self.spec.value_type,
            self.options.byte_stream_split,
        );
        if self.levels {
            props = props.set_column_dictionary_enabled(ColumnPath::from(LEVEL_COLUMN), true);
        }
        let sorted: Vec<usize> = match self.spec.layout.rows() {
            ArchiveLayout::Csx { axis, .. } => vec![axis.dims().0],
            // the leading dimension of the major part: reduced major coordinates
            // are row-major in that part's dimensions
            ArchiveLayout::Gcs { axis, .. } => self
                .gcs
                .as_ref()
                .and_then(|(map, _)| map.part(axis.dims().0).first().copied())
                .into_iter()
                .collect(),
            ArchiveLayout::Dense { .. } => (0..self.spec.shape.len()).collect(),
            ArchiveLayout::Coo {
                canonical: Some(true),
                ..
            } => (0..self.spec.shape.len()).collect(),
            _ => Vec::new(),
        };
        if !sorted.is_empty() {
            props = props.set_sorting_columns(Some(
                sorted
                    .into_iter()
                    .map(|d| SortingColumn {
                        column_idx: d as i32,
                        descending: false,
                        nulls_first: false,
                    })
                    .collect(),
            ));
        }
        let file = self.tmp.file().try_clone()?;
        let options = ArrowWriterOptions::new()
            .with_properties(props.build())
            .with_skip_arrow_metadata(true);
        Ok(ArrowWriter::try_new_with_options(
            BufWriter::with_capacity(1 << 20, file),
            self.schema.clone(),
            options,
        )?)
    }

    /// Write the last row group and the footer, then move the file into place.
    ///
    /// ```
    /// use arrow_sparse::archive::{ArchiveLayout, ArchiveReader, ArchiveWriter, TensorSpec, ArchiveWriteOptions};
    /// use arrow_sparse::{CooTensor, IndexType, ValueType};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.parquet");
    /// let spec = TensorSpec::coo(vec![4, 3], ValueType::Float64, IndexType::Int32);
    /// let mut w = ArchiveWriter::create(&path, spec, &ArchiveWriteOptions::default().with_row_group_size(2))?;
    /// w.write_chunk(&CooTensor::<f64, i64>::from_entries(vec![4, 3], &[(vec![0, 1], 1.0), (vec![1, 0], 2.0), (vec![3, 2], 3.0)])?.into())?;
    /// let summary = w.finish()?;
    /// assert_eq!((summary.rows, summary.row_groups, summary.bytes), (3, 2, std::fs::metadata(&path)?.len()));
    /// // the canonical flag left open by `TensorSpec::coo` is now known: sorted, no duplicates
    /// let r = ArchiveReader::open(&path)?;
    /// assert!(matches!(r.spec().layout, ArchiveLayout::Coo { canonical: Some(true), .. }));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn finish(mut self) -> Result<WriteSummary> {
        if self.in_group > 0 {
            self.end_group()?;
        }
        let mut spec = self.spec.clone();
        match spec.rows_layout_mut() {
            ArchiveLayout::Coo { canonical, .. } if canonical.is_none() => {
                *canonical = Some(self.sorted);
            }
            ArchiveLayout::Dense { .. } => {
                let size: usize = spec.shape.iter().product();
                if self.rows != size {
                    return Err(Error::length("dense archive rows", size, self.rows));
                }
            }
            _ => {}
        }
        let archive = Archive {
            spec,
            columns: self.columns.clone(),
            value_column: VALUE_COLUMN.into(),
            level_column: self.levels.then(|| LEVEL_COLUMN.to_string()),
            rows: self.rows,
            row_groups: Some(self.groups.clone()),
        };
        let json = archive.to_json()?;
        let mut writer = match self.writer.take() {
            Some(w) => w,
            None => self.open_writer(None)?,
        };
        let crc = crc32fast::hash(json.as_bytes());
        writer.append_key_value_metadata(KeyValue::new(METADATA_KEY.to_string(), json));
        writer.append_key_value_metadata(KeyValue::new(
            METADATA_CRC_KEY.to_string(),
            crc.to_string(),
        ));
        let meta = writer.close()?;
        let written: Vec<u64> = meta
            .row_groups()
            .iter()
            .map(|g| g.num_rows() as u64)
            .collect();
        let expected: Vec<u64> = self.groups.iter().map(|g| g.rows).collect();
        if written != expected {
            return Err(Error::invariant(
                "Parquet row groups",
                None,
                format!("wrote {written:?}, recorded {expected:?}"),
            ));
        }
        let bytes = self.tmp.commit()?;
        Ok(WriteSummary {
            rows: self.rows,
            row_groups: self.groups.len(),
            bytes,
        })
    }
}

/// The dimensions among `dims` whose extent exceeds what `it` holds.
fn fits_check(shape: &[usize], it: IndexType, dims: &[usize]) -> Vec<usize> {
    dims.iter()
        .copied()
        .filter(|&d| shape[d].saturating_sub(1) as u64 > it.max_value())
        .collect()
}

/// One CRC-32 per row group: the CRC of the columns' CRCs (little-endian), each
/// over the column's values as little-endian bytes.
pub(crate) fn combine(hashers: Vec<crc32fast::Hasher>) -> u32 {
    let mut all = crc32fast::Hasher::new();
    for h in hashers {
        all.update(&h.finalize().to_le_bytes());
    }
    all.finalize()
}

/// [`super::write_archive`]: the spec of the message's tensor, one chunk, finish.
pub(crate) fn write_tensor(
    path: &Path,
    message: &TensorMessage,
    options: &ArchiveWriteOptions,
) -> Result<WriteSummary> {
    let spec = TensorSpec::of(message)?;
    // the rows are a DM tensor's storage's
    let rows = match &message.tensor {
        AnyTensor::Dm(d) => DmChain::of(d)?.1,
        t => t.clone(),
    };
    let levels = csf_needs_levels(&rows, options.batch_size)?;
    let mut w = ArchiveWriter::create_impl(path, spec, options, levels)?;
    w.write_chunk(&rows)?;
    w.finish()
}
