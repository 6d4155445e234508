//! Encoding choices, made once per archive from its first batch of rows: delta or
//! dictionary (RLE) for coordinates, dictionary / byte stream split / plain for
//! values (format/SPEC.md 9.2).

use std::collections::HashSet;

use ::parquet::basic::Encoding;
use ::parquet::file::properties::WriterPropertiesBuilder;
use ::parquet::schema::types::ColumnPath;
use arrow_array::Array;

use super::meta::VALUE_COLUMN;
use super::rows::with_bytes;

/// Estimated bits per value of DELTA_BINARY_PACKED for `xs` (blocks of 128
/// deltas, miniblocks of 32 bit-packed at their own width).
fn delta_bits(xs: &[usize]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let deltas: Vec<i128> = xs.windows(2).map(|w| w[1] as i128 - w[0] as i128).collect();
    let mut bits = 0u64;
    for block in deltas.chunks(128) {
        let min = block.iter().copied().min().unwrap_or(0);
        bits += 16; // min delta (zigzag varint) + 4 widths
        for mini in block.chunks(32) {
            let max = mini.iter().map(|&d| (d - min) as u128).max().unwrap_or(0);
            bits += 32 * (128 - max.leading_zeros()) as u64;
        }
    }
    bits as f64 / deltas.len() as f64
}

/// Estimated bits per value of dictionary encoding (RLE / bit-packed indices) for
/// `xs`, counting the dictionary once per row group; `None` when there are too
/// many distinct values for it to pay.
fn dictionary_bits(xs: &[usize], row_group: usize) -> Option<f64> {
    let mut distinct = HashSet::new();
    for &x in xs {
        distinct.insert(x);
        if distinct.len() > 1 << 14 {
            return None;
        }
    }
    let width = (usize::BITS - distinct.len().saturating_sub(1).leading_zeros()).max(1) as u64;
    let mut bits = 0u64;
    let mut i = 0;
    while i < xs.len() {
        let run = xs[i..].iter().take_while(|&&x| x == xs[i]).count();
        bits += if run >= 8 {
            16 + width.div_ceil(8) * 8
        } else {
            run as u64 * width
        };
        i += run;
    }
    let scale = row_group.max(xs.len()) as f64 / xs.len().max(1) as f64;
    let dictionary = (distinct.len() as f64 * 64.0) / row_group.max(1) as f64;
    Some(bits as f64 / xs.len().max(1) as f64 + dictionary / scale.max(1.0))
}

/// Coordinates: delta for columns sorted in storage order (runs of equal values
/// cost next to nothing, steps a few bits); for the others, dictionary (RLE /
/// bit-packed indices) when it beats delta on the sample.
pub(crate) fn coordinate_encoding(
    props: WriterPropertiesBuilder,
    name: &str,
    sample: &[usize],
    row_group: usize,
) -> WriterPropertiesBuilder {
    let path = ColumnPath::from(name);
    let props = props.set_column_encoding(path.clone(), Encoding::DELTA_BINARY_PACKED);
    if sample.windows(2).all(|w| w[0] <= w[1]) {
        return props;
    }
    match dictionary_bits(sample, row_group) {
        Some(dict) if dict < delta_bits(sample) => props.set_column_dictionary_enabled(path, true),
        _ => props,
    }
}

/// Values: dictionary when the sample has few distinct values, else byte stream
/// split for float32 / float64 when `byte_stream_split` (it lets zstd find the
/// exponent bytes), plain otherwise.
pub(crate) fn value_encoding(
    props: WriterPropertiesBuilder,
    sample: Option<&dyn Array>,
    value_type: crate::types::ValueType,
    byte_stream_split: bool,
) -> WriterPropertiesBuilder {
    use crate::types::ValueType as V;
    let path = ColumnPath::from(VALUE_COLUMN);
    let few = sample.is_some_and(|a| {
        with_bytes(a, "value", |b| {
            let w = value_type.byte_width();
            let n = b.len() / w;
            let mut distinct = HashSet::new();
            for v in b.chunks_exact(w) {
                distinct.insert(v);
                if distinct.len() > n / 8 + 1 {
                    return false;
                }
            }
            n > 0
        })
        .unwrap_or(false)
    });
    if few {
        return props.set_column_dictionary_enabled(path, true);
    }
    match value_type {
        V::Float32 | V::Float64 if byte_stream_split => {
            props.set_column_encoding(path, Encoding::BYTE_STREAM_SPLIT)
        }
        _ => props,
    }
}
