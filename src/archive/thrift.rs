//! A walk over Thrift compact protocol bytes that consumes them exactly as the
//! parquet crate (60.1) does, to learn before handing a footer or a page header
//! to that crate whether it decodes in time linear in its length.
//!
//! The crate's `skip` of an unknown field loops once per element of a
//! `list<bool>` (or a map of bools) without reading a byte, so a header of a few
//! bytes announcing 2^31 booleans costs seconds, and a footer of a few KiB
//! holding many such headers costs hours (`fuzz/FINDINGS.md`, M). What the crate
//! does next depends on where it is, and it reads the fields it knows by their
//! declared type whatever their wire type says, so the walk follows the same
//! declarations ([`FILE_META_DATA`], [`PAGE_HEADER`]; only the fields the crate
//! decodes, not the ones it skips) and refuses a known field of another wire
//! type. Where it accepts, it has been where the crate will be: it counts the
//! crate's loop turns that read nothing and refuses more of them than the
//! length of the buffer walked plus 4,096. Where the crate would fail first, the walk may go on or fail
//! elsewhere; either way nothing slow is reached.
//!
//! What the walk refuses that the crate might accept (varints longer than ten
//! bytes, nesting deeper than 32, collections announcing more elements than
//! bytes left) no writer produces.

/// How the parquet crate reads a field it knows (its declared type).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// `i16`, `i32` (and enums), `i64`: a zigzag varint, truncated to the width.
    I16,
    /// See [`Kind::I16`].
    I32,
    /// See [`Kind::I16`].
    I64,
    /// `i8`: one byte.
    Byte,
    /// `double`: eight bytes.
    Double,
    /// `binary` / `string`: a varint length and that many bytes.
    Binary,
    /// `bool`: in the field header, no bytes.
    Bool,
    /// `list<T>`.
    List(&'static Kind),
    /// A struct (or a union) whose known fields are listed.
    Struct(&'static Struct),
    /// An empty struct read as a union variant: one stop byte.
    Empty,
}

/// The fields of a struct the parquet crate decodes (the others it skips).
#[derive(Debug)]
pub(crate) struct Struct {
    /// Its Thrift name, for messages.
    pub(crate) name: &'static str,
    /// Field id and declared type of each known field.
    pub(crate) fields: &'static [(i16, Kind)],
}

use Kind::{Binary, Bool, Byte, Double, Empty, I16, I32, I64};

/// `FileMetaData` as parquet 60.1 decodes it (`parquet_metadata_from_bytes`;
/// without the `encryption` feature, fields 8 and 9 are skipped).
pub(crate) static FILE_META_DATA: Struct = Struct {
    name: "FileMetaData",
    fields: &[
        (1, I32),
        (2, Kind::List(&Kind::Struct(&SCHEMA_ELEMENT))),
        (3, I64),
        (4, Kind::List(&Kind::Struct(&ROW_GROUP))),
        (5, Kind::List(&Kind::Struct(&KEY_VALUE))),
        (6, Binary),
        (7, Kind::List(&Kind::Struct(&COLUMN_ORDER))),
    ],
};

static SCHEMA_ELEMENT: Struct = Struct {
    name: "SchemaElement",
    fields: &[
        (1, I32),
        (2, I32),
        (3, I32),
        (4, Binary),
        (5, I32),
        (6, I32),
        (7, I32),
        (8, I32),
        (9, I32),
        (10, Kind::Struct(&LOGICAL_TYPE)),
    ],
};

static LOGICAL_TYPE: Struct = Struct {
    name: "LogicalType",
    fields: &[
        (1, Empty),
        (2, Empty),
        (3, Empty),
        (4, Empty),
        (5, Kind::Struct(&DECIMAL_TYPE)),
        (6, Empty),
        (7, Kind::Struct(&TIMESTAMP_TYPE)),
        (8, Kind::Struct(&TIMESTAMP_TYPE)),
        (10, Kind::Struct(&INT_TYPE)),
        (11, Empty),
        (12, Empty),
        (13, Empty),
        (14, Empty),
        (15, Empty),
        (16, Kind::Struct(&VARIANT_TYPE)),
        (17, Kind::Struct(&GEOMETRY_TYPE)),
        (18, Kind::Struct(&GEOGRAPHY_TYPE)),
        (19, Empty),
    ],
};

static DECIMAL_TYPE: Struct = Struct {
    name: "DecimalType",
    fields: &[(1, I32), (2, I32)],
};

static TIMESTAMP_TYPE: Struct = Struct {
    name: "TimestampType",
    fields: &[(1, Bool), (2, Kind::Struct(&TIME_UNIT))],
};

static TIME_UNIT: Struct = Struct {
    name: "TimeUnit",
    fields: &[(1, Empty), (2, Empty), (3, Empty)],
};

static INT_TYPE: Struct = Struct {
    name: "IntType",
    fields: &[(1, Byte), (2, Bool)],
};

static VARIANT_TYPE: Struct = Struct {
    name: "VariantType",
    fields: &[(1, Byte)],
};

static GEOMETRY_TYPE: Struct = Struct {
    name: "GeometryType",
    fields: &[(1, Binary)],
};

static GEOGRAPHY_TYPE: Struct = Struct {
    name: "GeographyType",
    fields: &[(1, Binary), (2, I32)],
};

static KEY_VALUE: Struct = Struct {
    name: "KeyValue",
    fields: &[(1, Binary), (2, Binary)],
};

static COLUMN_ORDER: Struct = Struct {
    name: "ColumnOrder",
    fields: &[(1, Empty), (2, Empty), (3, Empty)],
};

static ROW_GROUP: Struct = Struct {
    name: "RowGroup",
    fields: &[
        (1, Kind::List(&Kind::Struct(&COLUMN_CHUNK))),
        (2, I64),
        (3, I64),
        (4, Kind::List(&Kind::Struct(&SORTING_COLUMN))),
        (5, I64),
        (7, I16),
    ],
};

static SORTING_COLUMN: Struct = Struct {
    name: "SortingColumn",
    fields: &[(1, I32), (2, Bool), (3, Bool)],
};

static COLUMN_CHUNK: Struct = Struct {
    name: "ColumnChunk",
    fields: &[
        (1, Binary),
        (2, I64),
        (3, Kind::Struct(&COLUMN_META_DATA)),
        (4, I64),
        (5, I32),
        (6, I64),
        (7, I32),
    ],
};

/// `ColumnMetaData` (fields 3, `path_in_schema`, and 8, `key_value_metadata`,
/// are skipped by the crate).
static COLUMN_META_DATA: Struct = Struct {
    name: "ColumnMetaData",
    fields: &[
        (1, I32),
        (2, Kind::List(&I32)),
        (4, I32),
        (5, I64),
        (6, I64),
        (7, I64),
        (9, I64),
        (10, I64),
        (11, I64),
        (12, Kind::Struct(&STATISTICS)),
        (13, Kind::List(&Kind::Struct(&PAGE_ENCODING_STATS))),
        (14, I64),
        (15, I32),
        (16, Kind::Struct(&SIZE_STATISTICS)),
        (17, Kind::Struct(&GEOSPATIAL_STATISTICS)),
    ],
};

static STATISTICS: Struct = Struct {
    name: "Statistics",
    fields: &[
        (1, Binary),
        (2, Binary),
        (3, I64),
        (4, I64),
        (5, Binary),
        (6, Binary),
        (7, Bool),
        (8, Bool),
        (9, I64),
    ],
};

static PAGE_ENCODING_STATS: Struct = Struct {
    name: "PageEncodingStats",
    fields: &[(1, I32), (2, I32), (3, I32)],
};

static SIZE_STATISTICS: Struct = Struct {
    name: "SizeStatistics",
    fields: &[(1, I64), (2, Kind::List(&I64)), (3, Kind::List(&I64))],
};

static GEOSPATIAL_STATISTICS: Struct = Struct {
    name: "GeospatialStatistics",
    fields: &[(1, Kind::Struct(&BOUNDING_BOX)), (2, Kind::List(&I32))],
};

static BOUNDING_BOX: Struct = Struct {
    name: "BoundingBox",
    fields: &[
        (1, Double),
        (2, Double),
        (3, Double),
        (4, Double),
        (5, Double),
        (6, Double),
        (7, Double),
        (8, Double),
    ],
};

/// `PageHeader` as parquet 60.1 decodes it (with or without page statistics:
/// the two readers consume the same bytes once the statistics' known fields
/// have their declared types, which the walk requires).
pub(crate) static PAGE_HEADER: Struct = Struct {
    name: "PageHeader",
    fields: &[
        (1, I32),
        (2, I32),
        (3, I32),
        (4, I32),
        (5, Kind::Struct(&DATA_PAGE_HEADER)),
        (6, Kind::Struct(&INDEX_PAGE_HEADER)),
        (7, Kind::Struct(&DICTIONARY_PAGE_HEADER)),
        (8, Kind::Struct(&DATA_PAGE_HEADER_V2)),
    ],
};

static DATA_PAGE_HEADER: Struct = Struct {
    name: "DataPageHeader",
    fields: &[
        (1, I32),
        (2, I32),
        (3, I32),
        (4, I32),
        (5, Kind::Struct(&STATISTICS)),
    ],
};

static INDEX_PAGE_HEADER: Struct = Struct {
    name: "IndexPageHeader",
    fields: &[],
};

static DICTIONARY_PAGE_HEADER: Struct = Struct {
    name: "DictionaryPageHeader",
    fields: &[(1, I32), (2, I32), (3, Bool)],
};

static DATA_PAGE_HEADER_V2: Struct = Struct {
    name: "DataPageHeaderV2",
    fields: &[
        (1, I32),
        (2, I32),
        (3, I32),
        (4, I32),
        (5, I32),
        (6, I32),
        (7, Bool),
        (8, Kind::Struct(&STATISTICS)),
    ],
};

/// Thrift compact protocol types (field headers; in collections 1 and 2 both
/// mean bool).
const T_TRUE: u8 = 1;
const T_FALSE: u8 = 2;
const T_BYTE: u8 = 3;
const T_I16: u8 = 4;
const T_I32: u8 = 5;
const T_I64: u8 = 6;
const T_DOUBLE: u8 = 7;
const T_BINARY: u8 = 8;
const T_LIST: u8 = 9;
const T_SET: u8 = 10;
const T_MAP: u8 = 11;
const T_STRUCT: u8 = 12;
const T_UUID: u8 = 13;

/// Deepest nesting walked (the crate's skip allows 64).
const MAX_DEPTH: usize = 32;

/// What a walk that cannot go on reports.
pub(crate) type TResult<T> = std::result::Result<T, String>;

/// The start of the message of a walk that ran out of bytes (a caller reading
/// a window of the file may retry with a larger one).
pub(crate) const ENDS_EARLY: &str = "the Thrift struct ends early";

/// Walk the struct `root` at the start of `buf` as the parquet crate decodes
/// it, calling `on_int(path, value)` for each integer field it knows (`path`:
/// the field ids from `root` down; the value truncated to its declared width).
/// Returns the bytes the struct takes.
pub(crate) fn walk(
    buf: &[u8],
    root: &'static Struct,
    on_int: &mut dyn FnMut(&[i16], i64),
) -> TResult<usize> {
    let mut w = Walker {
        buf,
        pos: 0,
        idle: 4096u64.saturating_add(buf.len() as u64),
        path: Vec::new(),
    };
    w.known_struct(root, 0, on_int)?;
    Ok(w.pos)
}

struct Walker<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Loop turns of the crate's skip that read nothing, still allowed.
    idle: u64,
    path: Vec<i16>,
}

impl Walker<'_> {
    fn left(&self) -> u64 {
        (self.buf.len() - self.pos) as u64
    }

    fn byte(&mut self) -> TResult<u8> {
        let b = *self.buf.get(self.pos).ok_or(ENDS_EARLY)?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> TResult<u64> {
        let mut v: u64 = 0;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err("a varint overflows 64 bits".into());
            }
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint longer than 10 bytes".into())
    }

    fn zigzag(&mut self) -> TResult<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn skip_bytes(&mut self, n: u64) -> TResult<()> {
        let left = self.left();
        if n > left {
            return Err(format!(
                "{ENDS_EARLY}: a field of {n} bytes with {left} bytes left"
            ));
        }
        self.pos += n as usize;
        Ok(())
    }

    /// `n` turns of the crate's skip loop that read no byte.
    fn idle(&mut self, n: u64) -> TResult<()> {
        self.idle = self.idle.checked_sub(n).ok_or_else(|| {
            format!(
                "a collection of {n} booleans (the parquet crate would loop over them without reading a byte)"
            )
        })?;
        Ok(())
    }

    /// A collection announcing `n` elements of at least one byte each.
    fn fits(&self, n: u64, what: &str) -> TResult<()> {
        if n > self.left() {
            return Err(format!(
                "{ENDS_EARLY}: a {what} of {n} elements with {} bytes left",
                self.left()
            ));
        }
        Ok(())
    }

    /// A collection's element type: the crate accepts 1 to 13 (1 and 2: bool).
    fn element_type(t: u8) -> TResult<u8> {
        match t {
            T_TRUE | T_FALSE => Ok(T_TRUE),
            T_BYTE..=T_UUID => Ok(t),
            other => Err(format!("a collection of unknown Thrift type {other}")),
        }
    }

    /// A list or set header: its element type and size (the crate reads a zero
    /// byte as an empty list and refuses sizes above `i32::MAX`).
    fn list_header(&mut self) -> TResult<(u8, u64)> {
        let h = self.byte()?;
        if h == 0 {
            return Ok((T_BYTE, 0));
        }
        let t = Self::element_type(h & 0x0F)?;
        let n = match h >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        if n > i32::MAX as u64 {
            return Err(format!("a list of {n} elements"));
        }
        Ok((t, n))
    }

    /// A field header: `None` at the stop byte (any byte whose low nibble is
    /// 0), else the type and the id.
    fn field(&mut self, last: i16) -> TResult<Option<(u8, i16)>> {
        let h = self.byte()?;
        let t = h & 0x0F;
        if t == 0 {
            return Ok(None);
        }
        if t > T_UUID {
            return Err(format!("a field of unknown Thrift type {t}"));
        }
        let id = match h >> 4 {
            0 => i16::try_from(self.zigzag()?).map_err(|_| "a field id out of range")?,
            d => last
                .checked_add(i16::from(d))
                .ok_or("a field id out of range")?,
        };
        Ok(Some((t, id)))
    }

    /// Skip a value of wire type `t` as the crate's `skip` does.
    fn skip(&mut self, t: u8, depth: usize) -> TResult<()> {
        if depth > MAX_DEPTH {
            return Err("Thrift values nested too deeply".into());
        }
        match t {
            T_TRUE | T_FALSE => Ok(()),
            T_BYTE => self.skip_bytes(1),
            T_I16 | T_I32 | T_I64 => self.varint().map(drop),
            T_DOUBLE => self.skip_bytes(8),
            T_UUID => self.skip_bytes(16),
            T_BINARY => {
                let n = self.varint()?;
                self.skip_bytes(n)
            }
            T_LIST | T_SET => {
                let (et, n) = self.list_header()?;
                if et == T_TRUE {
                    // the crate skips each element without reading it
                    return self.idle(n);
                }
                self.fits(n, "list")?;
                for _ in 0..n {
                    self.skip(et, depth + 1)?;
                }
                Ok(())
            }
            T_MAP => {
                let n = self.varint()?;
                if n > i32::MAX as u64 {
                    return Err(format!("a map of {n} entries"));
                }
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                let (k, v) = (Self::element_type(kv >> 4)?, Self::element_type(kv & 0x0F)?);
                if k == T_TRUE && v == T_TRUE {
                    return self.idle(n);
                }
                self.fits(n, "map")?;
                for _ in 0..n {
                    self.skip(k, depth + 1)?;
                    self.skip(v, depth + 1)?;
                }
                Ok(())
            }
            T_STRUCT => {
                while let Some((ft, _)) = self.field(0)? {
                    self.skip(ft, depth + 1)?;
                }
                Ok(())
            }
            other => Err(format!("unknown Thrift type {other}")),
        }
    }

    /// Walk a struct whose known fields `s` lists, its field header read.
    fn known_struct(
        &mut self,
        s: &'static Struct,
        depth: usize,
        on_int: &mut dyn FnMut(&[i16], i64),
    ) -> TResult<()> {
        if depth > MAX_DEPTH {
            return Err("Thrift values nested too deeply".into());
        }
        let mut last = 0i16;
        while let Some((t, id)) = self.field(last)? {
            last = id;
            match s.fields.iter().find(|(i, _)| *i == id) {
                Some(&(_, kind)) => {
                    self.path.push(id);
                    self.known(kind, t, depth + 1, on_int)
                        .map_err(|e| with_place(e, s.name, id))?;
                    self.path.pop();
                }
                None => self.skip(t, depth + 1)?,
            }
        }
        Ok(())
    }

    /// Read a value the crate reads as `kind`, whose wire type is `t` (for list
    /// elements, their element type).
    fn known(
        &mut self,
        kind: Kind,
        t: u8,
        depth: usize,
        on_int: &mut dyn FnMut(&[i16], i64),
    ) -> TResult<()> {
        let fits = match kind {
            I16 | I32 | I64 => matches!(t, T_I16 | T_I32 | T_I64),
            Byte => t == T_BYTE,
            Double => t == T_DOUBLE,
            Binary => t == T_BINARY,
            Bool => matches!(t, T_TRUE | T_FALSE),
            Kind::List(_) => matches!(t, T_LIST | T_SET),
            Kind::Struct(_) | Empty => t == T_STRUCT,
        };
        if !fits {
            return Err(format!(
                "Thrift type {t} where the parquet crate reads {}",
                kind_name(kind)
            ));
        }
        match kind {
            I16 | I32 | I64 => {
                let v = self.zigzag()?;
                let v = match kind {
                    I16 => i64::from(v as i16),
                    I32 => i64::from(v as i32),
                    _ => v,
                };
                on_int(&self.path, v);
                Ok(())
            }
            Byte => self.skip_bytes(1),
            Double => self.skip_bytes(8),
            Binary => {
                let n = self.varint()?;
                self.skip_bytes(n)
            }
            Bool => Ok(()),
            Kind::List(elem) => {
                let (et, n) = self.list_header()?;
                if n == 0 {
                    return Ok(());
                }
                self.fits(n, "list")?;
                for _ in 0..n {
                    self.known(*elem, et, depth + 1, on_int)?;
                }
                Ok(())
            }
            Kind::Struct(s) => self.known_struct(s, depth, on_int),
            Empty => match self.byte()? {
                0 => Ok(()),
                b => Err(format!("an empty struct with a field (byte {b:#04x})")),
            },
        }
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        I16 => "i16",
        I32 => "i32",
        I64 => "i64",
        Byte => "i8",
        Double => "double",
        Binary => "binary",
        Bool => "bool",
        Kind::List(_) => "a list",
        Kind::Struct(_) => "a struct",
        Empty => "an empty struct",
    }
}

/// Name the innermost known field where a walk stopped (once).
fn with_place(e: String, name: &str, id: i16) -> String {
    if e.contains(" (in ") {
        e
    } else {
        format!("{e} (in field {id} of {name})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compact-protocol writer for the tests.
    #[derive(Default)]
    struct W(Vec<u8>);

    impl W {
        fn varint(&mut self, mut u: u64) -> &mut Self {
            loop {
                let b = (u & 0x7F) as u8;
                u >>= 7;
                if u == 0 {
                    self.0.push(b);
                    return self;
                }
                self.0.push(b | 0x80);
            }
        }
        fn int(&mut self, v: i64) -> &mut Self {
            self.varint(((v << 1) ^ (v >> 63)) as u64)
        }
        /// A field header with a delta (1..=15).
        fn field(&mut self, delta: u8, t: u8) -> &mut Self {
            self.0.push(delta << 4 | t);
            self
        }
        fn raw(&mut self, b: &[u8]) -> &mut Self {
            self.0.extend_from_slice(b);
            self
        }
        fn stop(&mut self) -> &mut Self {
            self.0.push(0);
            self
        }
    }

    /// Integer fields seen: the path of field ids and the value.
    type Seen = Vec<(Vec<i16>, i64)>;

    /// The Thrift footer of a Parquet file's bytes (before its length and magic).
    fn footer_of(file: &[u8]) -> &[u8] {
        let n = file.len();
        let len = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize;
        &file[n - 8 - len..n - 8]
    }

    fn ints(buf: &[u8], root: &'static Struct) -> TResult<(usize, Seen)> {
        let mut seen = Vec::new();
        let n = walk(buf, root, &mut |p, v| seen.push((p.to_vec(), v)))?;
        Ok((n, seen))
    }

    #[test]
    fn a_page_header_walks_and_reports_its_integers() {
        let mut w = W::default();
        w.field(1, T_I32).int(2); // DICTIONARY_PAGE
        w.field(1, T_I32).int(800);
        w.field(1, T_I32).int(12);
        w.field(4, T_STRUCT); // 7: dictionary header
        w.field(1, T_I32)
            .int(100)
            .field(1, T_I32)
            .int(0)
            .field(1, T_TRUE)
            .stop();
        w.stop();
        let (n, seen) = ints(&w.0, &PAGE_HEADER).unwrap();
        assert_eq!(n, w.0.len());
        let want: Seen = vec![
            (vec![1], 2),
            (vec![2], 800),
            (vec![3], 12),
            (vec![7, 1], 100),
            (vec![7, 2], 0),
        ];
        assert_eq!(seen, want);
        // i32 fields are truncated as the crate truncates them
        let mut w = W::default();
        w.field(2, T_I32).int((1 << 32) + 5).stop();
        assert_eq!(ints(&w.0, &PAGE_HEADER).unwrap().1, vec![(vec![2], 5)]);
        // every truncation is an error, not a panic
        let full = {
            let mut w = W::default();
            w.field(1, T_I32)
                .int(0)
                .field(1, T_I32)
                .int(1 << 20)
                .field(1, T_I32)
                .int(9);
            w.field(2, T_STRUCT).field(1, T_I32).int(7).stop().stop();
            w.0
        };
        for k in 0..full.len() {
            assert!(
                walk(&full[..k], &PAGE_HEADER, &mut |_, _| {}).is_err(),
                "{k}"
            );
        }
    }

    #[test]
    fn booleans_the_crate_would_loop_over_are_counted() {
        // field 9 (unknown), list<bool> of 2^31 - 1 elements: 7 bytes that
        // the crate's skip loops over 2^31 times
        let mut w = W::default();
        w.field(9, T_LIST)
            .raw(&[0xF1])
            .varint(i32::MAX as u64)
            .stop();
        let e = walk(&w.0, &PAGE_HEADER, &mut |_, _| {}).unwrap_err();
        assert!(e.contains("booleans"), "{e}");
        // a map of bool to bool likewise
        let mut w = W::default();
        w.field(9, T_MAP).varint(1 << 30).raw(&[0x12]).stop();
        let e = walk(&w.0, &PAGE_HEADER, &mut |_, _| {}).unwrap_err();
        assert!(e.contains("booleans"), "{e}");
        // a few are fine, and read no byte (as the crate reads none): the
        // next byte is the stop byte
        let mut w = W::default();
        w.field(9, T_LIST).raw(&[0x31]).stop();
        assert_eq!(walk(&w.0, &PAGE_HEADER, &mut |_, _| {}).unwrap(), w.0.len());
        // many lists, each short enough alone, add up to the same refusal
        let mut w = W::default();
        w.field(9, T_STRUCT);
        for _ in 0..600 {
            w.field(1, T_LIST).raw(&[0xF2]).varint(1000);
        }
        w.stop().stop();
        let e = walk(&w.0, &PAGE_HEADER, &mut |_, _| {}).unwrap_err();
        assert!(e.contains("booleans"), "{e}");
    }

    #[test]
    fn known_fields_of_another_wire_type_are_refused() {
        // compressed_page_size as a binary: the crate would read its length
        // as the size and its bytes as fields
        let mut w = W::default();
        w.field(3, T_BINARY)
            .varint(3)
            .raw(&[0xF1, 0xFF, 0x07])
            .stop();
        let e = walk(&w.0, &PAGE_HEADER, &mut |_, _| {}).unwrap_err();
        assert!(e.contains("field 3 of PageHeader"), "{e}");
        // a bool field sent as an i32
        let mut w = W::default();
        w.field(7, T_STRUCT).field(3, T_I32).int(1).stop().stop();
        let e = walk(&w.0, &PAGE_HEADER, &mut |_, _| {}).unwrap_err();
        assert!(e.contains("field 3 of DictionaryPageHeader"), "{e}");
        // a known list of the wrong element type
        let mut w = W::default();
        w.field(4, T_LIST).raw(&[0x18]).varint(0).stop(); // RowGroups of binaries
        assert!(walk(&w.0, &FILE_META_DATA, &mut |_, _| {}).is_err());
        // an empty union variant with a field
        let mut w = W::default();
        w.field(7, T_LIST)
            .raw(&[0x1C])
            .field(1, T_STRUCT)
            .field(1, T_I32)
            .int(0)
            .stop()
            .stop();
        w.stop();
        assert!(walk(&w.0, &FILE_META_DATA, &mut |_, _| {}).is_err());
    }

    #[test]
    fn any_nibble_0_ends_a_struct_and_nesting_is_bounded() {
        // 0x10: low nibble 0 is the crate's stop byte too
        let mut w = W::default();
        w.field(2, T_I32).int(5).raw(&[0x10]);
        assert_eq!(walk(&w.0, &PAGE_HEADER, &mut |_, _| {}).unwrap(), w.0.len());
        let deep: Vec<u8> = std::iter::repeat_n(0x9C, 100).collect(); // field 9, struct
        let e = walk(&deep, &PAGE_HEADER, &mut |_, _| {}).unwrap_err();
        assert!(e.contains("nested"), "{e}");
    }

    /// Every footer field and page header the parquet writer emits with its
    /// options on (page statistics, bloom filters, page indexes, sorting
    /// columns, key-value metadata, dictionary and data page v2, several row
    /// groups, nullable and nested columns) walks whole: the tables do not
    /// refuse what the crate itself writes.
    #[test]
    fn what_the_parquet_writer_emits_walks_whole() {
        use ::parquet::arrow::ArrowWriter;
        use ::parquet::file::metadata::{KeyValue, SortingColumn};
        use ::parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
        use arrow_array::types::Int32Type;
        use arrow_array::{
            ArrayRef, Float64Array, Int32Array, ListArray, RecordBatch, StringArray,
        };
        use std::sync::Arc;
        let ids: ArrayRef = Arc::new(Int32Array::from_iter(
            (0..500).map(|i| (i % 7 != 0).then_some(i)),
        ));
        let xs: ArrayRef = Arc::new(Float64Array::from_iter_values(
            (0..500).map(|i| i as f64 * 0.5),
        ));
        let names: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..500).map(|i| format!("n{}", i % 13)),
        ));
        let lists: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
            (0..500).map(|i| (i % 5 != 0).then(|| vec![Some(i), None, Some(i + 1)])),
        ));
        let batch =
            RecordBatch::try_from_iter([("id", ids), ("x", xs), ("name", names), ("l", lists)])
                .unwrap();
        for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
            let props = WriterProperties::builder()
                .set_writer_version(version)
                .set_statistics_enabled(EnabledStatistics::Page)
                .set_bloom_filter_enabled(true)
                .set_max_row_group_row_count(Some(200))
                .set_data_page_row_count_limit(64)
                .set_write_batch_size(32)
                .set_sorting_columns(Some(vec![SortingColumn {
                    column_idx: 1,
                    descending: false,
                    nulls_first: true,
                }]))
                .set_key_value_metadata(Some(vec![KeyValue::new("k".into(), "v".to_string())]))
                .build();
            let mut buf = Vec::new();
            let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            let footer = footer_of(&buf);
            assert_eq!(
                walk(footer, &FILE_META_DATA, &mut |_, _| {}).unwrap(),
                footer.len()
            );
            // every page header of every column chunk, as check_chunks walks them
            let meta = ::parquet::file::metadata::ParquetMetaDataReader::new()
                .parse_and_finish(&bytes::Bytes::from(buf.clone()))
                .unwrap();
            let mut pages = 0;
            for rg in meta.row_groups() {
                for col in rg.columns() {
                    let (start, clen) = col.byte_range();
                    let (mut pos, end) = (start as usize, (start + clen) as usize);
                    while pos < end {
                        let mut compressed = 0i64;
                        let used = walk(&buf[pos..end], &PAGE_HEADER, &mut |p, v| {
                            if p == [3] {
                                compressed = v;
                            }
                        })
                        .unwrap();
                        pos += used + compressed as usize;
                        pages += 1;
                    }
                    assert_eq!(pos, end);
                }
            }
            assert!(pages > 20, "{pages}");
        }
    }

    #[test]
    fn the_archives_this_crate_writes_walk_whole() {
        use crate::archive::{self, ArchiveWriteOptions};
        use crate::{AnyTensor, CooTensor};
        let coo = CooTensor::<f64, i64>::from_entries(
            vec![3, 4],
            &[(vec![0, 1], 1.0), (vec![2, 3], 2.5)],
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        archive::write_archive(
            &path,
            &AnyTensor::from(coo).into(),
            &ArchiveWriteOptions::default(),
        )
        .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let footer = footer_of(&bytes);
        let mut rows = None;
        let used = walk(footer, &FILE_META_DATA, &mut |p, v| {
            if p == [3] {
                rows = Some(v);
            }
        })
        .unwrap();
        assert_eq!(used, footer.len());
        assert!(rows.is_some_and(|r| r > 0));
    }
}
