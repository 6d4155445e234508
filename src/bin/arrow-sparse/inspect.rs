//! `inspect`: a readable (or, with `--json`, a JSON) summary of every tensor of a
//! file, one function per file kind.

use std::fmt::Write as _;

#[cfg(not(feature = "parquet"))]
use arrow_sparse::Error;
use arrow_sparse::ipc::TensorMessage;
use arrow_sparse::{AnyTensor, CoordLayout, dump};
use serde_json::{Map, Value, json};

use crate::exit::Failure;
use crate::files::{FileKind, Input};

/// The text of `inspect` (no trailing newline).
pub fn text(input: &Input) -> Result<String, Failure> {
    if input.is_column() {
        let mut s = format!(
            "{}: record batches with a sparse tensor column ({}), {} tensor(s), {} bytes",
            input.path.display(),
            if input.kind == FileKind::Parquet {
                "Parquet table"
            } else {
                "Arrow IPC"
            },
            input.len(),
            input.bytes
        );
        for i in 0..input.len() {
            let _ = write!(s, "\n{}", dump::summary(i, &input.get(i)?, None));
        }
        return Ok(s);
    }
    if let Some((parts, dim, block)) = input.dataset {
        return Ok(format!(
            "{}: dataset of {parts} Parquet archives (dimension {dim} in blocks of {block}), {} bytes\n{}",
            input.path.display(),
            input.bytes,
            dump::summary(0, &input.get(0)?, None)
        ));
    }
    match input.kind {
        FileKind::Arrow => arrow_text(input),
        FileKind::Parquet => parquet_text(input),
        FileKind::Mtx | FileKind::Tns | FileKind::Npz | FileKind::Hdf5 => file_text(input),
    }
}

/// The JSON object of `inspect --json`: `file`, `kind`, `bytes`, `tensors` (one
/// object per tensor, see [`tensor_json`]) and, for a Parquet archive, `parquet`
/// (rows, columns, compression, row groups).
pub fn json(input: &Input) -> Result<Value, Failure> {
    if input.is_column() {
        let tensors = (0..input.len())
            .map(|i| Ok(tensor_json(i, &input.get(i)?, None)))
            .collect::<Result<Vec<_>, Failure>>()?;
        return Ok(json!({
            "file": input.path.display().to_string(),
            "kind": "column",
            "container": input.kind.name(),
            "bytes": input.bytes,
            "tensors": tensors,
        }));
    }
    if let Some((parts, dim, block)) = input.dataset {
        return Ok(json!({
            "file": input.path.display().to_string(),
            "kind": "dataset",
            "bytes": input.bytes,
            "dataset": {"parts": parts, "partition_dim": dim, "block": block},
            "tensors": [tensor_json(0, &input.get(0)?, None)],
        }));
    }
    let tensors = match input.kind {
        FileKind::Parquet => return parquet_json(input),
        FileKind::Arrow => arrow_json(input)?,
        FileKind::Mtx | FileKind::Tns | FileKind::Npz | FileKind::Hdf5 => {
            vec![tensor_json(0, &input.get(0)?, None)]
        }
    };
    Ok(json!({
        "file": input.path.display().to_string(),
        "kind": input.kind.name(),
        "bytes": input.bytes,
        "tensors": tensors,
    }))
}

fn arrow_text(input: &Input) -> Result<String, Failure> {
    let reader = input.arrow().expect("an Arrow input has a stream reader");
    let mut s = format!(
        "{}: {} message(s), {} bytes",
        input.path.display(),
        reader.len(),
        reader.mapping().len()
    );
    for (i, info) in reader.messages().iter().enumerate() {
        let msg = input.get(i)?;
        let bytes = info.body_offset + info.body_len - info.offset;
        let _ = write!(s, "\n{}", dump::summary(i, &msg, Some(bytes)));
    }
    Ok(s)
}

fn arrow_json(input: &Input) -> Result<Vec<Value>, Failure> {
    let reader = input.arrow().expect("an Arrow input has a stream reader");
    let mut tensors = Vec::with_capacity(reader.len());
    for (i, info) in reader.messages().iter().enumerate() {
        let bytes = info.body_offset + info.body_len - info.offset;
        tensors.push(tensor_json(i, &input.get(i)?, Some(bytes as u64)));
    }
    Ok(tensors)
}

fn file_text(input: &Input) -> Result<String, Failure> {
    Ok(format!(
        "{}: {}, 1 tensor, {} bytes\n{}",
        input.path.display(),
        input.kind.describe(),
        input.bytes,
        dump::summary(0, &input.get(0)?, None)
    ))
}

fn metadata_json(metadata: &[(String, String)]) -> Value {
    Value::Object(
        metadata
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect(),
    )
}

fn layout_name(l: CoordLayout) -> &'static str {
    match l {
        CoordLayout::RowMajor => "row-major",
        CoordLayout::ColumnMajor => "column-major",
    }
}

/// One tensor: `index`, `format`, `value_type`, `index_type` (null for dense),
/// `indptr_type` (CSX, CSF, GCS), `shape`, `dim_names`, `nnz`, `density`,
/// `index_bytes`, `value_bytes`, `message_bytes` (IPC streams), then what the
/// format adds: `coord_layout` and `canonical` (COO), `axis_order` (CSF),
/// `dimensions`, `partitioning`, `reduced_shape` and `storage` (GCS, DM), and
/// `metadata` (the custom metadata as an object).
fn tensor_json(index: usize, msg: &TensorMessage, message_bytes: Option<u64>) -> Value {
    let t = &msg.tensor;
    let size: f64 = t.shape().iter().map(|&d| d as f64).product();
    let density = if size > 0.0 {
        t.nnz() as f64 / size
    } else {
        0.0
    };
    let mut o = Map::new();
    o.insert("index".into(), index.into());
    o.insert("format".into(), t.format().name().into());
    o.insert("value_type".into(), t.value_type().name().into());
    o.insert("index_type".into(), t.index_type().map(|i| i.name()).into());
    if let Some(p) = t.indptr_type() {
        o.insert("indptr_type".into(), p.name().into());
    }
    o.insert("shape".into(), t.shape().into());
    o.insert("dim_names".into(), t.dim_names().into());
    o.insert("nnz".into(), t.nnz().into());
    o.insert("density".into(), density.into());
    o.insert("index_bytes".into(), t.index_bytes().into());
    o.insert("value_bytes".into(), t.value_bytes().into());
    if let Some(b) = message_bytes {
        o.insert("message_bytes".into(), b.into());
    }
    if let AnyTensor::Coo(c) = t {
        o.insert("coord_layout".into(), layout_name(c.layout()).into());
        o.insert("canonical".into(), c.is_canonical().into());
    }
    if let Some(order) = t.axis_order() {
        o.insert("axis_order".into(), order.into());
    }
    if let Some(map) = t.dim_map() {
        o.insert("dimensions".into(), map.dimensions().into());
        o.insert("partitioning".into(), map.partitioning().into());
        o.insert("reduced_shape".into(), map.reduced_shape().into());
    }
    let storage = match t {
        AnyTensor::Gcs(g) => Some(AnyTensor::Csx(g.matrix().clone())),
        AnyTensor::Dm(d) => Some(d.storage().clone()),
        _ => None,
    };
    if let Some(s) = storage {
        o.insert(
            "storage".into(),
            json!({"format": s.format().name(), "shape": s.shape()}),
        );
    }
    o.insert("metadata".into(), metadata_json(&msg.custom_metadata));
    // a Binsparse descriptor, as JSON
    if let Some(d) = msg
        .custom_metadata
        .iter()
        .find(|(k, _)| k == arrow_sparse::io::meta::BINSPARSE_DESCRIPTOR)
        .and_then(|(_, v)| serde_json::from_str::<Value>(v).ok())
    {
        o.insert("binsparse".into(), d);
    }
    Value::Object(o)
}

#[cfg(not(feature = "parquet"))]
fn parquet_text(_: &Input) -> Result<String, Failure> {
    Err(Failure::input(Error::Unsupported(
        "Parquet archives (arrow-sparse was built without the parquet feature)".into(),
    )))
}

#[cfg(not(feature = "parquet"))]
fn parquet_json(input: &Input) -> Result<Value, Failure> {
    parquet_text(input).map(Value::from)
}

#[cfg(feature = "parquet")]
fn compression(reader: &arrow_sparse::archive::ArchiveReader) -> Option<String> {
    use ::parquet::basic::Compression as C;
    let g = reader.parquet_metadata().row_groups().first()?;
    Some(match g.column(0).compression() {
        C::UNCOMPRESSED => "none".to_string(),
        C::ZSTD(level) => format!("zstd:{}", level.compression_level()),
        other => other.to_string().to_lowercase(),
    })
}

#[cfg(feature = "parquet")]
fn column_names(reader: &arrow_sparse::archive::ArchiveReader) -> Vec<String> {
    let Some(g) = reader.parquet_metadata().row_groups().first() else {
        return Vec::new();
    };
    g.columns()
        .iter()
        .map(|c| {
            let enc: Vec<String> = c.encodings().map(|e| e.to_string()).collect();
            format!("{} ({})", c.column_path().string(), enc.join("/"))
        })
        .collect()
}

/// The text of a Parquet archive: the tensor, then the row groups, from the
/// footer and the `arrow_sparse` metadata only (no row group is decoded).
#[cfg(feature = "parquet")]
fn parquet_text(input: &Input) -> Result<String, Failure> {
    use arrow_sparse::archive::ArchiveLayout as Layout;
    let r = input
        .parquet()
        .expect("a Parquet input has an archive reader");
    let spec = r.spec();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: Parquet archive, 1 tensor, {} bytes",
        input.path.display(),
        input.bytes
    );
    let _ = writeln!(s, "tensor 0: {}", spec.format());
    let names: Vec<&str> = (0..spec.shape.len())
        .map(|d| match spec.dim_names.get(d).map(String::as_str) {
            Some("") | None => "-",
            Some(n) => n,
        })
        .collect();
    let _ = writeln!(
        s,
        "  shape:       {:?}  dim names: [{}]",
        spec.shape,
        names.join(", ")
    );
    let _ = writeln!(s, "  value type:  {}", spec.value_type);
    match (spec.index_type(), spec.indptr_type()) {
        (Some(i), Some(p)) => {
            let _ = writeln!(s, "  index type:  {i} (indptr {p})");
        }
        (Some(i), None) => {
            let _ = writeln!(s, "  index type:  {i}");
        }
        _ => {}
    }
    if let Layout::Dm { storage, chain } = &spec.layout {
        let _ = writeln!(
            s,
            "  dm maps:     {} level(s) over a {} storage (rows: its entries): {}",
            chain.len(),
            storage.format(),
            chain.to_json()
        );
    }
    match spec.layout.rows() {
        Layout::Csf { axis_order, .. } => {
            let _ = writeln!(s, "  axis order:  {axis_order:?}");
        }
        Layout::Gcs {
            dimensions,
            partitioning,
            axis,
            ..
        } => {
            let _ = writeln!(
                s,
                "  gcs map:     dimensions {dimensions:?}, partitioning {partitioning:?}, compressed axis {axis:?}"
            );
        }
        Layout::Coo {
            coord_layout,
            canonical,
            ..
        } => {
            let _ = writeln!(
                s,
                "  layout:      {coord_layout:?} coordinates, canonical: {}",
                canonical.unwrap_or(false)
            );
        }
        Layout::Dense { strides } => {
            let _ = writeln!(s, "  strides:     {strides:?} (elements)");
        }
        Layout::Level { format, .. } => {
            let _ = writeln!(s, "  levels:      {format}");
        }
        _ => {}
    }
    let what = if matches!(spec.layout.rows(), Layout::Dense { .. }) {
        "elements"
    } else {
        "stored entries"
    };
    let _ = writeln!(s, "  rows:        {} ({what})", r.rows());
    let columns = column_names(r);
    if !columns.is_empty() {
        let _ = writeln!(s, "  columns:     {}", columns.join(", "));
    }
    if let Some(c) = compression(r) {
        let _ = writeln!(s, "  compression: {c}");
    }
    let _ = write!(s, "  row groups:  {}", r.num_row_groups());
    for i in 0..r.num_row_groups() {
        let info = r
            .row_group_info(i)
            .map_err(|e| Failure::input(e).in_file(&input.path))?;
        let ranges: Vec<String> = r
            .columns()
            .iter()
            .zip(&info.ranges)
            .map(|(c, range)| match range {
                Some((lo, hi)) => format!("{c} {lo}..={hi}"),
                None => format!("{c} ?"),
            })
            .collect();
        let _ = write!(
            s,
            "\n    {i}: rows {}..{}, {} bytes, {}",
            info.first_row,
            info.first_row + info.rows,
            info.bytes,
            ranges.join(", ")
        );
    }
    for (k, v) in &spec.custom_metadata {
        let _ = write!(s, "\n  metadata:    {k} = {v}");
    }
    Ok(s)
}

/// The JSON of a Parquet archive, from its footer and metadata: the tensor's
/// description (`nnz` for sparse formats, where it is the row count) and the
/// `parquet` object (`rows`, `columns`, `compression`, `row_groups` with their
/// coordinate ranges per column, `[min, max]` or null).
#[cfg(feature = "parquet")]
fn parquet_json(input: &Input) -> Result<Value, Failure> {
    use arrow_sparse::archive::ArchiveLayout as Layout;
    let r = input
        .parquet()
        .expect("a Parquet input has an archive reader");
    let spec = r.spec();
    let mut t = Map::new();
    t.insert("index".into(), 0.into());
    t.insert("format".into(), spec.format().name().into());
    t.insert("value_type".into(), spec.value_type.name().into());
    t.insert(
        "index_type".into(),
        spec.index_type().map(|i| i.name()).into(),
    );
    if let Some(p) = spec.indptr_type() {
        t.insert("indptr_type".into(), p.name().into());
    }
    t.insert("shape".into(), spec.shape.clone().into());
    let names: Vec<String> = (0..spec.shape.len())
        .map(|d| spec.dim_names.get(d).cloned().unwrap_or_default())
        .collect();
    t.insert("dim_names".into(), names.into());
    match spec.layout.rows() {
        Layout::Dense { .. } => {}
        _ => {
            t.insert("nnz".into(), r.rows().into());
        }
    }
    if let Layout::Dm { storage, chain } = &spec.layout {
        t.insert("dm_storage".into(), storage.format().to_string().into());
        t.insert(
            "dm_maps".into(),
            serde_json::from_str(&chain.to_json()).unwrap_or(Value::Null),
        );
    }
    match spec.layout.rows() {
        Layout::Gcs {
            dimensions,
            partitioning,
            axis,
            ..
        } => {
            t.insert("gcs_dimensions".into(), dimensions.clone().into());
            t.insert("gcs_partitioning".into(), partitioning.clone().into());
            t.insert(
                "gcs_compressed_axis".into(),
                format!("{axis:?}").to_lowercase().into(),
            );
        }
        Layout::Coo {
            coord_layout,
            canonical,
            ..
        } => {
            t.insert("coord_layout".into(), layout_name(*coord_layout).into());
            t.insert("canonical".into(), canonical.unwrap_or(false).into());
        }
        Layout::Csf { axis_order, .. } => {
            t.insert("axis_order".into(), axis_order.clone().into());
        }
        _ => {}
    }
    t.insert("metadata".into(), metadata_json(&spec.custom_metadata));
    let mut groups = Vec::with_capacity(r.num_row_groups());
    for i in 0..r.num_row_groups() {
        let info = r
            .row_group_info(i)
            .map_err(|e| Failure::input(e).in_file(&input.path))?;
        let ranges: Map<String, Value> = r
            .columns()
            .iter()
            .zip(&info.ranges)
            .map(|(c, range)| {
                let v = match range {
                    // coordinates are below an extent, a usize: they fit i64
                    Some((lo, hi)) => json!([
                        i64::try_from(*lo).unwrap_or(i64::MAX),
                        i64::try_from(*hi).unwrap_or(i64::MAX)
                    ]),
                    None => Value::Null,
                };
                (c.clone(), v)
            })
            .collect();
        groups.push(json!({
            "first_row": info.first_row,
            "rows": info.rows,
            "bytes": info.bytes,
            "ranges": ranges,
        }));
    }
    Ok(json!({
        "file": input.path.display().to_string(),
        "kind": input.kind.name(),
        "bytes": input.bytes,
        "tensors": [Value::Object(t)],
        "parquet": {
            "rows": r.rows(),
            "columns": r.columns(),
            "compression": compression(r),
            "row_groups": groups,
        },
    }))
}
