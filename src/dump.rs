//! Text renderings of tensors: the JSON line of `arrow-sparse dump` and the
//! human-readable summary of `arrow-sparse inspect`.
//!
//! ```
//! use arrow_sparse::{dump, AnyTensor, CooTensor};
//! let t: AnyTensor = CooTensor::<i32, i64>::from_entries(vec![2, 2], &[(vec![1, 1], 9)])?.into();
//! let msg = arrow_sparse::ipc::TensorMessage::from(t);
//! assert!(dump::json_line(&msg.tensor)?.ends_with(r#""nnz":1,"entries":[[1,1,9]]}"#));
//! assert!(dump::summary(0, &msg, None).starts_with("tensor 0: coo\n  shape:       [2, 2]"));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use std::fmt::Write as _;

use crate::error::Result;
use crate::ipc::TensorMessage;
use crate::tensor::AnyTensor;
use crate::types::Value;
use crate::with_value_type;

/// Append `s` as a JSON string literal (quoted; `"`, `\` and control characters
/// escaped).
///
/// ```
/// use arrow_sparse::dump::write_json_string;
/// let mut out = String::from("name=");
/// write_json_string(&mut out, "a \"b\"\n\u{1}é");
/// assert_eq!(out, r#"name="a \"b\"\n\u0001é""#);
/// ```
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_usizes(out: &mut String, xs: &[usize]) {
    out.push('[');
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{x}");
    }
    out.push(']');
}

/// One JSON line describing `tensor`, keys in this order: `format`, `value_type`,
/// `index_type` (`null` for dense), `shape`, `dim_names`, `nnz`, `dimensions` and
/// `partitioning` (GCS and DM only), `axis_order` (CSF and level tensors),
/// `levels` (level tensors: the level types as MLIR writes them), `entries`. GCS and DM
/// tensors print their logical N-D shape and entries. Entries are `[coord..., value]`, sorted lexicographically by
/// coordinates with duplicates kept in storage order; a dense tensor lists its
/// non-zero elements, a level tensor every stored value (the zeros its dense
/// levels store too). No trailing newline.
///
/// ```
/// use arrow_sparse::{dump::json_line, CooTensor};
/// let t = CooTensor::<f32, i16>::from_entries(vec![2, 2], &[(vec![1, 0], 0.5), (vec![0, 1], 2.0)])?;
/// assert_eq!(
///     json_line(&t.into())?,
///     r#"{"format":"coo","value_type":"float32","index_type":"int16","shape":[2,2],"dim_names":["",""],"nnz":2,"entries":[[0,1,2.0],[1,0,0.5]]}"#
/// );
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn json_line(tensor: &AnyTensor) -> Result<String> {
    let mut out = String::new();
    out.push_str("{\"format\":");
    write_json_string(&mut out, tensor.format().name());
    out.push_str(",\"value_type\":");
    write_json_string(&mut out, tensor.value_type().name());
    out.push_str(",\"index_type\":");
    match tensor.index_type() {
        Some(t) => write_json_string(&mut out, t.name()),
        None => out.push_str("null"),
    }
    out.push_str(",\"shape\":");
    write_usizes(&mut out, tensor.shape());
    out.push_str(",\"dim_names\":[");
    for (i, n) in tensor.dim_names().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_string(&mut out, n);
    }
    out.push(']');
    with_value_type!(tensor.value_type(), V => write_entries::<V>(&mut out, tensor))?;
    out.push('}');
    Ok(out)
}

fn write_entries<V: Value>(out: &mut String, tensor: &AnyTensor) -> Result<()> {
    let coo = tensor.to_coo::<V, i64>()?;
    let ndim = coo.ndim();
    let order: Vec<usize> = (0..ndim).collect();
    let perm = if coo.is_canonical() {
        (0..coo.nnz()).collect()
    } else {
        coo.sort_permutation(&order)?
    };
    let _ = write!(out, ",\"nnz\":{}", coo.nnz());
    if let Some(map) = tensor.dim_map() {
        out.push_str(",\"dimensions\":");
        write_usizes(out, map.dimensions());
        out.push_str(",\"partitioning\":");
        write_usizes(out, map.partitioning());
    }
    if let Some(order) = tensor.axis_order() {
        out.push_str(",\"axis_order\":");
        write_usizes(out, order);
    }
    if let AnyTensor::Level(l) = tensor {
        out.push_str(",\"levels\":[");
        for (i, t) in l.format().levels().iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_json_string(out, &t.to_string());
        }
        out.push(']');
    }
    out.push_str(",\"entries\":[");
    for (n, &k) in perm.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push('[');
        for d in 0..ndim {
            let _ = write!(out, "{},", coo.coord(k, d));
        }
        coo.values()[k].write_json(out);
        out.push(']');
    }
    out.push(']');
    Ok(())
}

/// A human-readable, multi-line summary of one message (no trailing newline).
/// `message_bytes` is the encoded size when known.
///
/// ```
/// use arrow_sparse::{dump::summary, ipc::TensorMessage, AnyTensor, CooTensor};
/// let t = CooTensor::<f64, i32>::from_entries(vec![2, 4], &[(vec![0, 1], 1.0), (vec![1, 3], 2.0)])?;
/// let t: AnyTensor = t.with_dim_names(vec!["row".into(), String::new()])?.into();
/// let mut msg = TensorMessage::from(t);
/// msg.custom_metadata.push(("origin".into(), "docs".into()));
/// assert_eq!(
///     summary(3, &msg, Some(512)),
///     "tensor 3: coo
///   shape:       [2, 4]  dim names: [row, -]
///   value type:  float64
///   index type:  int32
///   layout:      RowMajor coordinates, canonical: false
///   nnz:         2 of 8 elements (density 25.0000%)
///   bytes:       index 16 + values 16 (message 512)
///   metadata:    origin = docs"
/// );
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub fn summary(index: usize, msg: &TensorMessage, message_bytes: Option<usize>) -> String {
    let t = &msg.tensor;
    let mut s = String::new();
    let _ = writeln!(s, "tensor {index}: {}", t.format());
    let names: Vec<String> = t
        .dim_names()
        .iter()
        .map(|n| {
            if n.is_empty() {
                "-".to_string()
            } else {
                n.clone()
            }
        })
        .collect();
    let _ = writeln!(
        s,
        "  shape:       {:?}  dim names: [{}]",
        t.shape(),
        names.join(", ")
    );
    let _ = writeln!(s, "  value type:  {}", t.value_type());
    match (t.index_type(), t.indptr_type()) {
        (Some(i), Some(p)) => {
            let _ = writeln!(s, "  index type:  {i} (indptr {p})");
        }
        (Some(i), None) => {
            let _ = writeln!(s, "  index type:  {i}");
        }
        _ => {}
    }
    if let Some(o) = t.axis_order() {
        let _ = writeln!(s, "  axis order:  {o:?}");
    }
    if let AnyTensor::Level(l) = t {
        let _ = writeln!(s, "  levels:      {}", l.format());
    }
    if let Some(map) = t.dim_map() {
        let _ = writeln!(
            s,
            "  map:         dimensions {:?}, partitioning {:?} -> reduced shape {:?}",
            map.dimensions(),
            map.partitioning(),
            map.reduced_shape()
        );
    }
    match t {
        AnyTensor::Gcs(g) => {
            let _ = writeln!(
                s,
                "  storage:     {} matrix {:?}",
                AnyTensor::Csx(g.matrix().clone()).format(),
                g.matrix().shape()
            );
        }
        AnyTensor::Dm(d) => {
            if !d.views().is_empty() {
                let _ = writeln!(
                    s,
                    "  views:       {:?} (base shape {:?})",
                    d.views().ops(),
                    d.views().base_shape()
                );
            }
            let _ = writeln!(
                s,
                "  storage:     {} {:?}",
                d.storage().format(),
                d.storage().shape()
            );
        }
        _ => {}
    }
    if let crate::AnyTensor::Coo(c) = t {
        let _ = writeln!(
            s,
            "  layout:      {:?} coordinates, canonical: {}",
            c.layout(),
            c.is_canonical()
        );
    }
    let nnz = t.nnz();
    let size: f64 = t.shape().iter().map(|&d| d as f64).product();
    let density = if size > 0.0 {
        100.0 * nnz as f64 / size
    } else {
        0.0
    };
    let label = if matches!(t, AnyTensor::Dense(_)) {
        "non-zeros"
    } else {
        "nnz"
    };
    let _ = writeln!(
        s,
        "  {label}:{}{nnz} of {size} elements (density {density:.4}%)",
        " ".repeat(12 - label.len())
    );
    let _ = write!(
        s,
        "  bytes:       index {} + values {}",
        t.index_bytes(),
        t.value_bytes()
    );
    if let Some(b) = message_bytes {
        let _ = write!(s, " (message {b})");
    }
    for (k, v) in &msg.custom_metadata {
        let _ = write!(s, "\n  metadata:    {k} = {v}");
    }
    s
}
