//! Level formats: a tensor stored as MLIR's sparse tensor storage describes it
//! (`../shared/SEEDS/mlir-sparse-storage.txt`): a sequence of levels, each dense,
//! compressed or singleton with `unique` / `ordered` properties, a dimension to
//! level permutation, and the buffers of the seed: positions and coordinates per
//! level, one values buffer.
//!
//! COO, CSR, CSC and CSF are special cases ([`AnyLevel::from_tensor`] shares their
//! buffers); DCSR, DCSC, CSF with dense levels, batched CSR and sparse vectors are
//! others ([`LevelFormat`]'s named constructors, [`LevelTensor::from_coo`]).
//!
//! ```
//! use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
//! use arrow_sparse::CooTensor;
//! // the MLIR seed's 8 x 8 matrix as DCSR: only rows 0 and 7 are stored
//! let coo = CooTensor::<f32, i64>::from_entries(vec![8, 8], &[(vec![0, 1], 1.1), (vec![0, 4], 2.2), (vec![7, 2], 3.3)])?;
//! let dcsr = LevelTensor::<f32, i32>::from_coo(&coo, &LevelFormat::dcsr())?;
//! assert_eq!(dcsr.coordinates(0).unwrap().as_ref(), &[0, 7]);
//! assert_eq!(dcsr.positions(1).unwrap().as_ref(), &[0, 2, 3]);
//! assert_eq!(dcsr.coordinates(1).unwrap().as_ref(), &[1, 4, 2]);
//! assert_eq!(dcsr.get(&[7, 2]), Some(3.3));
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use std::collections::HashSet;
use std::fmt;

use arrow_buffer::ScalarBuffer;

use super::levels::{Level, LevelKind, LevelView, Strided};
use super::validate::{
    Validation, check_bounds, check_dim_names, check_indptr, check_len, check_permutation,
    check_shape,
};
use super::{CompressedAxis, CooTensor, TensorOptions};
use crate::buffer::{IndexBuffer, ValueBuffer, with_index_slice};
use crate::error::{Error, Result};
use crate::types::{Index, IndexType, Value, ValueType};

mod builder;
mod storage;

pub(crate) use builder::LevelBuilder;

/// Most levels (dimensions) of a level format (the most dimensions a sparse
/// tensor column allows too).
///
/// ```
/// use arrow_sparse::tensor::level::{LevelFormat, LevelType, MAX_LEVELS};
/// assert!(LevelFormat::try_new(vec![LevelType::DENSE; MAX_LEVELS], (0..MAX_LEVELS).collect()).is_ok());
/// assert!(LevelFormat::try_new(vec![LevelType::DENSE; MAX_LEVELS + 1], (0..=MAX_LEVELS).collect()).is_err());
/// ```
pub const MAX_LEVELS: usize = 256;

/// One level's type: its kind and MLIR's properties.
///
/// `unique`: no coordinate (for a singleton level: no tuple of the coordinates
/// from the compressed level that starts its run down to it) repeats within a
/// parent segment. `ordered`: they never decrease there. `soa`: a singleton
/// level's coordinates are a buffer of their own (else they are interleaved,
/// array of structures, in the buffer of the compressed level that starts the
/// run). Dense levels are always unique and ordered; only singleton levels may be
/// `soa`. Written (and parsed) as in MLIR: `dense`, `compressed(nonunique)`,
/// `singleton(nonordered, soa)`.
///
/// ```
/// use arrow_sparse::tensor::level::LevelType;
/// let t = LevelType::COMPRESSED.nonunique();
/// assert_eq!(t.to_string(), "compressed(nonunique)");
/// assert_eq!("singleton(nonordered, soa)".parse::<LevelType>()?, LevelType::SINGLETON.nonordered().with_soa());
/// assert!("sparse".parse::<LevelType>().is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LevelType {
    /// Dense, compressed or singleton.
    pub kind: LevelKind,
    /// Coordinates do not repeat within a segment.
    pub unique: bool,
    /// Coordinates do not decrease within a segment.
    pub ordered: bool,
    /// A singleton level with a coordinates buffer of its own.
    pub soa: bool,
}

impl LevelType {
    /// `dense`.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelType;
    /// assert_eq!(LevelType::DENSE.to_string(), "dense");
    /// ```
    pub const DENSE: LevelType = LevelType {
        kind: LevelKind::Dense,
        unique: true,
        ordered: true,
        soa: false,
    };
    /// `compressed` (unique and ordered).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelType;
    /// assert_eq!(LevelType::COMPRESSED.to_string(), "compressed");
    /// ```
    pub const COMPRESSED: LevelType = LevelType {
        kind: LevelKind::Compressed,
        unique: true,
        ordered: true,
        soa: false,
    };
    /// `singleton` (unique and ordered, coordinates interleaved).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelType;
    /// assert_eq!(LevelType::SINGLETON.to_string(), "singleton");
    /// ```
    pub const SINGLETON: LevelType = LevelType {
        kind: LevelKind::Singleton,
        unique: true,
        ordered: true,
        soa: false,
    };

    /// The same type without the `unique` property.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelType;
    /// assert!(!LevelType::COMPRESSED.nonunique().unique);
    /// ```
    pub const fn nonunique(self) -> Self {
        LevelType {
            unique: false,
            ..self
        }
    }

    /// The same type without the `ordered` property.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelType;
    /// assert_eq!(LevelType::COMPRESSED.nonordered().to_string(), "compressed(nonordered)");
    /// ```
    pub const fn nonordered(self) -> Self {
        LevelType {
            ordered: false,
            ..self
        }
    }

    /// The same type with the `soa` property (singleton levels only).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelType;
    /// assert_eq!(LevelType::SINGLETON.with_soa().to_string(), "singleton(soa)");
    /// ```
    pub const fn with_soa(self) -> Self {
        LevelType { soa: true, ..self }
    }

    /// The name in MLIR's older `lvlTypes` syntax (the seed's): `dense`,
    /// `compressed`, `compressed-nu`, `singleton-nu-no`, ...; `None` for `soa`,
    /// which that syntax did not have.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelType;
    /// assert_eq!(LevelType::COMPRESSED.nonunique().legacy_name().as_deref(), Some("compressed-nu"));
    /// assert_eq!(LevelType::SINGLETON.with_soa().legacy_name(), None);
    /// ```
    pub fn legacy_name(&self) -> Option<String> {
        if self.soa {
            return None;
        }
        let mut s = kind_name(self.kind).to_string();
        if !self.unique {
            s.push_str("-nu");
        }
        if !self.ordered {
            s.push_str("-no");
        }
        Some(s)
    }
}

fn kind_name(k: LevelKind) -> &'static str {
    match k {
        LevelKind::Dense => "dense",
        LevelKind::Compressed => "compressed",
        LevelKind::Singleton => "singleton",
    }
}

impl fmt::Display for LevelType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut props = Vec::new();
        if !self.unique {
            props.push("nonunique");
        }
        if !self.ordered {
            props.push("nonordered");
        }
        if self.soa {
            props.push("soa");
        }
        f.write_str(kind_name(self.kind))?;
        if !props.is_empty() {
            write!(f, "({})", props.join(", "))?;
        }
        Ok(())
    }
}

impl std::str::FromStr for LevelType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let bad = |detail: String| Error::Parse {
            what: "level type".into(),
            detail,
        };
        if s.len() > 64 {
            return Err(bad(format!("{} bytes (at most 64)", s.len())));
        }
        let s = s.trim();
        let (kind, props) = match s.find('(') {
            None => (s, ""),
            Some(i) => {
                let rest = s[i + 1..]
                    .strip_suffix(')')
                    .ok_or_else(|| bad(format!("{s:?}: unclosed parenthesis")))?;
                (s[..i].trim(), rest)
            }
        };
        let mut t = match kind {
            "dense" => LevelType::DENSE,
            "compressed" => LevelType::COMPRESSED,
            "singleton" => LevelType::SINGLETON,
            other => {
                return Err(bad(format!(
                    "unknown level kind {other:?} (expected dense, compressed or singleton)"
                )));
            }
        };
        for p in props.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match p {
                "nonunique" => t.unique = false,
                "nonordered" => t.ordered = false,
                "soa" => t.soa = true,
                other => return Err(bad(format!("unknown level property {other:?}"))),
            }
        }
        Ok(t)
    }
}

/// A level format: the level types and the dimension-to-level map, a
/// permutation (`axis_order[l]` is the dimension stored at level `l`, as CSF's
/// axis order; MLIR's `map = (d0, d1) -> (d1 : ..., d0 : ...)`).
///
/// Rules (MLIR's): a singleton level follows a compressed or singleton level; the
/// singleton levels of one run (a compressed level and the singleton levels after
/// it) are all `soa` or none is; dense levels carry no properties; only singleton
/// levels are `soa`.
///
/// ```
/// use arrow_sparse::tensor::level::{LevelFormat, LevelType};
/// let dcsc = LevelFormat::try_new(vec![LevelType::COMPRESSED; 2], vec![1, 0])?;
/// assert_eq!(dcsc, LevelFormat::dcsc());
/// assert_eq!(dcsc.to_string(), "(d0, d1) -> (d1 : compressed, d0 : compressed)");
/// assert_eq!(dcsc.to_string().parse::<LevelFormat>()?, dcsc); // MLIR's map syntax, both ways
/// assert!("(d0, d1) -> (d1 : compressed)".parse::<LevelFormat>().is_err());
/// // a singleton level needs a compressed level before it
/// assert!(LevelFormat::try_new(vec![LevelType::DENSE, LevelType::SINGLETON], vec![0, 1]).is_err());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LevelFormat {
    levels: Vec<LevelType>,
    axis_order: Vec<usize>,
}

fn rule(level: usize, detail: impl Into<String>) -> Error {
    Error::invariant("level format", Some(level), detail)
}

impl LevelFormat {
    /// A format from its level types (outermost first) and axis order (the
    /// dimension each level stores). Checks the rules above.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelType};
    /// let coo3 = LevelFormat::try_new(
    ///     vec![LevelType::COMPRESSED.nonunique(), LevelType::SINGLETON.nonunique(), LevelType::SINGLETON],
    ///     vec![0, 1, 2],
    /// )?;
    /// assert_eq!(coo3, LevelFormat::coo(3)?);
    /// // dense levels have no properties; axis_order is a permutation
    /// assert!(LevelFormat::try_new(vec![LevelType::DENSE.nonunique()], vec![0]).is_err());
    /// assert!(LevelFormat::try_new(vec![LevelType::DENSE; 2], vec![0, 0]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(levels: Vec<LevelType>, axis_order: Vec<usize>) -> Result<Self> {
        let n = levels.len();
        if n == 0 || n > MAX_LEVELS {
            return Err(Error::shape(
                "level format",
                format!("1 to {MAX_LEVELS} levels"),
                format!("{n} levels"),
            ));
        }
        check_permutation("axis_order", &axis_order, n)?;
        for (l, t) in levels.iter().enumerate() {
            match t.kind {
                LevelKind::Dense if !t.unique || !t.ordered || t.soa => {
                    return Err(rule(l, format!("a dense level has no properties ({t})")));
                }
                LevelKind::Compressed if t.soa => {
                    return Err(rule(l, "only singleton levels are soa"));
                }
                LevelKind::Singleton => {
                    let prev = l.checked_sub(1).map(|p| levels[p]);
                    match prev {
                        Some(p) if p.kind == LevelKind::Compressed => {}
                        Some(p) if p.kind == LevelKind::Singleton && p.soa == t.soa => {}
                        Some(p) if p.kind == LevelKind::Singleton => {
                            return Err(rule(
                                l,
                                "the singleton levels of a run are all soa or none is",
                            ));
                        }
                        _ => {
                            return Err(rule(
                                l,
                                "a singleton level follows a compressed or singleton level",
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(LevelFormat { levels, axis_order })
    }

    /// The level types, outermost first.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelType};
    /// assert_eq!(LevelFormat::csr().levels(), &[LevelType::DENSE, LevelType::COMPRESSED]);
    /// ```
    pub fn levels(&self) -> &[LevelType] {
        &self.levels
    }

    /// The dimension stored at each level.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::csc().axis_order(), &[1, 0]);
    /// ```
    pub fn axis_order(&self) -> &[usize] {
        &self.axis_order
    }

    /// Number of levels (= dimensions).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::batched_csr(2)?.ndim(), 4);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.levels.len()
    }

    fn fixed(levels: Vec<LevelType>, axis_order: Vec<usize>) -> Self {
        LevelFormat { levels, axis_order }
    }

    /// A sparse vector: `(d0 : compressed)`.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::sparse_vector().to_string(), "(d0) -> (d0 : compressed)");
    /// ```
    pub fn sparse_vector() -> Self {
        Self::fixed(vec![LevelType::COMPRESSED], vec![0])
    }

    /// CSR: `(d0 : dense, d1 : compressed)`.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::csr().to_string(), "(d0, d1) -> (d0 : dense, d1 : compressed)");
    /// ```
    pub fn csr() -> Self {
        Self::fixed(vec![LevelType::DENSE, LevelType::COMPRESSED], vec![0, 1])
    }

    /// CSC: `(d1 : dense, d0 : compressed)`.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::csc().to_string(), "(d0, d1) -> (d1 : dense, d0 : compressed)");
    /// ```
    pub fn csc() -> Self {
        Self::fixed(vec![LevelType::DENSE, LevelType::COMPRESSED], vec![1, 0])
    }

    /// DCSR (doubly compressed rows): `(d0 : compressed, d1 : compressed)`.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::dcsr().to_string(), "(d0, d1) -> (d0 : compressed, d1 : compressed)");
    /// ```
    pub fn dcsr() -> Self {
        Self::fixed(vec![LevelType::COMPRESSED; 2], vec![0, 1])
    }

    /// DCSC (doubly compressed columns): `(d1 : compressed, d0 : compressed)`.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::dcsc().to_string(), "(d0, d1) -> (d1 : compressed, d0 : compressed)");
    /// ```
    pub fn dcsc() -> Self {
        Self::fixed(vec![LevelType::COMPRESSED; 2], vec![1, 0])
    }

    /// Sorted COO with unique entries: `compressed(nonunique)`, then
    /// `singleton(nonunique)` levels, the last `singleton` (MLIR's
    /// `#COO`); a `(d0 : compressed)` vector for `ndim` 1.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::coo(2)?.to_string(), "(d0, d1) -> (d0 : compressed(nonunique), d1 : singleton)");
    /// assert_eq!(LevelFormat::coo(1)?, LevelFormat::sparse_vector());
    /// assert!(LevelFormat::coo(0).is_err());
    /// assert!(LevelFormat::coo(usize::MAX).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn coo(ndim: usize) -> Result<Self> {
        if ndim > MAX_LEVELS {
            return Err(Error::shape(
                "level format",
                format!("1 to {MAX_LEVELS} levels"),
                format!("{ndim} levels"),
            ));
        }
        let levels = (0..ndim)
            .map(|l| match (l, l + 1 == ndim) {
                (0, true) => LevelType::COMPRESSED,
                (0, false) => LevelType::COMPRESSED.nonunique(),
                (_, true) => LevelType::SINGLETON,
                _ => LevelType::SINGLETON.nonunique(),
            })
            .collect();
        Self::try_new(levels, (0..ndim).collect())
    }

    /// CSF: every level compressed, in `axis_order`.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::csf(vec![2, 0, 1])?.to_string(), "(d0, d1, d2) -> (d2 : compressed, d0 : compressed, d1 : compressed)");
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn csf(axis_order: Vec<usize>) -> Result<Self> {
        Self::try_new(vec![LevelType::COMPRESSED; axis_order.len()], axis_order)
    }

    /// CSF with its first `dense` levels dense (the CSF seed's mixed formats), in
    /// `axis_order`.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// let f = LevelFormat::csf_with_dense(1, vec![0, 1, 2])?;
    /// assert_eq!(f.to_string(), "(d0, d1, d2) -> (d0 : dense, d1 : compressed, d2 : compressed)");
    /// assert!(LevelFormat::csf_with_dense(4, vec![0, 1, 2]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn csf_with_dense(dense: usize, axis_order: Vec<usize>) -> Result<Self> {
        let n = axis_order.len();
        if dense > n {
            return Err(Error::shape(
                "dense levels",
                format!("at most {n}"),
                dense.to_string(),
            ));
        }
        let levels = (0..n)
            .map(|l| {
                if l < dense {
                    LevelType::DENSE
                } else {
                    LevelType::COMPRESSED
                }
            })
            .collect();
        Self::try_new(levels, axis_order)
    }

    /// Batched CSR: `batch` dense batch dimensions, then a CSR matrix
    /// (`dense, ..., dense, compressed`).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::batched_csr(1)?.to_string(), "(d0, d1, d2) -> (d0 : dense, d1 : dense, d2 : compressed)");
    /// assert!(LevelFormat::batched_csr(usize::MAX).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn batched_csr(batch: usize) -> Result<Self> {
        if batch > MAX_LEVELS - 2 {
            return Err(Error::shape(
                "batched CSR",
                format!("at most {} batch dimensions", MAX_LEVELS - 2),
                batch.to_string(),
            ));
        }
        let n = batch + 2;
        LevelFormat::csf_with_dense(n - 1, (0..n).collect())
    }

    /// The format in MLIR's older syntax, as the MLIR seed writes it:
    /// `lvlType = [ "dense", "compressed" ]`, followed by `, dimToLvl =
    /// affine_map<(d0, d1) -> (d1, d0)>` when the map is not the identity. `None`
    /// when a level is `soa` (no such name in that syntax).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelFormat;
    /// assert_eq!(LevelFormat::csr().legacy_lvl_types().as_deref(), Some(r#"lvlType = [ "dense", "compressed" ]"#));
    /// assert_eq!(
    ///     LevelFormat::dcsc().legacy_lvl_types().as_deref(),
    ///     Some(r#"lvlType = [ "compressed", "compressed" ], dimToLvl = affine_map<(d0, d1) -> (d1, d0)>"#)
    /// );
    /// ```
    pub fn legacy_lvl_types(&self) -> Option<String> {
        let names = self
            .levels
            .iter()
            .map(|t| t.legacy_name().map(|n| format!("\"{n}\"")))
            .collect::<Option<Vec<_>>>()?;
        let mut s = format!("lvlType = [ {} ]", names.join(", "));
        if self.axis_order.iter().enumerate().any(|(l, &d)| l != d) {
            let dims: Vec<String> = (0..self.ndim()).map(|d| format!("d{d}")).collect();
            let lvls: Vec<String> = self.axis_order.iter().map(|d| format!("d{d}")).collect();
            s.push_str(&format!(
                ", dimToLvl = affine_map<({}) -> ({})>",
                dims.join(", "),
                lvls.join(", ")
            ));
        }
        Some(s)
    }

    /// The compressed level that starts the run of level `l` (`l` itself unless
    /// it is a singleton level).
    pub(crate) fn run_start(&self, l: usize) -> usize {
        let mut c = l;
        while c > 0 && self.levels[c].kind == LevelKind::Singleton {
            c -= 1;
        }
        c
    }

    /// Levels of the run that starts at compressed level `c` (1 without
    /// singletons after it).
    fn run_len(&self, c: usize) -> usize {
        1 + self.levels[c + 1..]
            .iter()
            .take_while(|t| t.kind == LevelKind::Singleton)
            .count()
    }

    /// How many coordinates per node the buffer of level `c` interleaves: the run
    /// length for a compressed level followed by singleton levels that are not
    /// `soa`, else 1.
    pub(crate) fn aos_width(&self, c: usize) -> usize {
        match self.levels.get(c + 1) {
            Some(t) if t.kind == LevelKind::Singleton && !t.soa => self.run_len(c),
            _ => 1,
        }
    }

    /// Where level `l`'s coordinates are: (the level whose buffer holds them,
    /// stride, offset); `None` for a dense level.
    pub(crate) fn coordinate_source(&self, l: usize) -> Option<(usize, usize, usize)> {
        let t = self.levels[l];
        match t.kind {
            LevelKind::Dense => None,
            LevelKind::Singleton if !t.soa => {
                let c = self.run_start(l);
                Some((c, self.aos_width(c), l - c))
            }
            LevelKind::Singleton => Some((l, 1, 0)),
            LevelKind::Compressed => Some((l, self.aos_width(l), 0)),
        }
    }

    /// Whether level `l` has a coordinates buffer of its own.
    pub(crate) fn has_coordinates(&self, l: usize) -> bool {
        self.coordinate_source(l).is_some_and(|(b, _, _)| b == l)
    }

    /// The nearest plain format on the wire (format/SPEC.md 8.6).
    pub(crate) fn plain(&self) -> Plain {
        let kinds: Vec<LevelKind> = self.levels.iter().map(|t| t.kind).collect();
        if kinds.iter().all(|&k| k == LevelKind::Dense) {
            Plain::Dense
        } else if kinds == [LevelKind::Dense, LevelKind::Compressed] {
            Plain::Csx(if self.axis_order == [0, 1] {
                CompressedAxis::Row
            } else {
                CompressedAxis::Column
            })
        } else if kinds[0] == LevelKind::Compressed
            && kinds[1..].iter().all(|&k| k == LevelKind::Singleton)
        {
            Plain::Coo
        } else {
            Plain::Csf
        }
    }
}

impl std::str::FromStr for LevelFormat {
    type Err = Error;
    /// Parse MLIR's map syntax, as [`Display`](fmt::Display) writes it:
    /// `(d0, d1) -> (d1 : dense, d0 : compressed)` (the dimensions named `d0`,
    /// `d1`, ... in order; each level one dimension).
    fn from_str(s: &str) -> Result<Self> {
        let bad = |detail: String| Error::Parse {
            what: "level format".into(),
            detail,
        };
        if s.len() > 1 << 16 {
            return Err(bad(format!("{} bytes (at most 65536)", s.len())));
        }
        let (lhs, rhs) = s
            .split_once("->")
            .ok_or_else(|| bad(format!("{s:?}: expected (d0, ...) -> (d0 : level, ...)")))?;
        let inner = |x: &str| -> Result<String> {
            let x = x.trim();
            x.strip_prefix('(')
                .and_then(|x| x.strip_suffix(')'))
                .map(str::to_string)
                .ok_or_else(|| bad(format!("{x:?}: expected a parenthesized list")))
        };
        let (lhs, rhs) = (inner(lhs)?, inner(rhs)?);
        let dims: Vec<&str> = lhs.split(',').map(str::trim).collect();
        for (i, d) in dims.iter().enumerate() {
            if *d != format!("d{i}") {
                return Err(bad(format!("dimension {i} is named {d:?}, expected d{i}")));
            }
        }
        // split the levels at the commas outside parentheses
        let mut items = Vec::new();
        let (mut depth, mut start) = (0usize, 0usize);
        for (i, ch) in rhs.char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    items.push(&rhs[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&rhs[start..]);
        if items.len() != dims.len() {
            return Err(bad(format!(
                "{} dimensions but {} levels (one level per dimension)",
                dims.len(),
                items.len()
            )));
        }
        let mut levels = Vec::with_capacity(items.len());
        let mut order = Vec::with_capacity(items.len());
        for item in items {
            let (d, t) = item
                .split_once(':')
                .ok_or_else(|| bad(format!("{item:?}: expected dK : level")))?;
            let d = d.trim();
            let k = dims
                .iter()
                .position(|x| *x == d)
                .ok_or_else(|| bad(format!("{d:?} is not a dimension")))?;
            order.push(k);
            levels.push(t.parse::<LevelType>()?);
        }
        LevelFormat::try_new(levels, order)
    }
}

/// The plain format a level format travels as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plain {
    Dense,
    Csx(CompressedAxis),
    Coo,
    Csf,
}

impl fmt::Display for LevelFormat {
    /// MLIR's map: `(d0, d1) -> (d1 : dense, d0 : compressed)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = (0..self.ndim()).map(|d| format!("d{d}")).collect();
        let lvls: Vec<String> = self
            .levels
            .iter()
            .zip(&self.axis_order)
            .map(|(t, d)| format!("d{d} : {t}"))
            .collect();
        write!(f, "({}) -> ({})", dims.join(", "), lvls.join(", "))
    }
}

/// A level tensor of any value and index types.
///
/// Per level `l` (storing dimension `axis_order[l]` of extent `size`), with
/// `parents` nodes above it (1 for level 0):
/// * dense: no buffers; `parents * size` nodes, node `p * size + c` holding
///   coordinate `c` under parent `p`;
/// * compressed: `positions[l]` (`parents + 1` entries, from 0, never
///   decreasing; its last entry is the node count) and `coordinates[l]` (one per
///   node, times the run length when singleton levels after it interleave theirs);
/// * singleton: `parents` nodes, one per parent; coordinates in `coordinates[l]`
///   when `soa`, else interleaved in the run's compressed level's buffer.
///
/// `values` holds one value per node of the last level. Positions share one
/// index type and coordinates one (possibly another), each kept apart from the
/// buffers, since a format may have none of them.
///
/// ```
/// use arrow_sparse::tensor::level::{AnyLevel, LevelFormat};
/// use arrow_sparse::{IndexBuffer, IndexType, TensorOptions, ValueBuffer};
/// // the MLIR seed's sparse vector: 1.1, 2.2, 3.3, 4.4 at 3, 6, 9, 12 of 16
/// let v = AnyLevel::try_new(
///     vec![16],
///     LevelFormat::sparse_vector(),
///     vec![Some(IndexBuffer::Int64(vec![0, 4].into()))],
///     vec![Some(IndexBuffer::Int64(vec![3, 6, 9, 12].into()))],
///     ValueBuffer::Float32(vec![1.1, 2.2, 3.3, 4.4].into()),
///     &TensorOptions::default(),
/// )?;
/// assert_eq!((v.nnz(), v.index_type(), v.indptr_type()), (4, IndexType::Int64, IndexType::Int64));
/// assert_eq!(v.get::<f32>(&[9])?, Some(3.3));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AnyLevel {
    shape: Vec<usize>,
    dim_names: Vec<String>,
    format: LevelFormat,
    index_type: IndexType,
    indptr_type: IndexType,
    positions: Vec<Option<IndexBuffer>>,
    coordinates: Vec<Option<IndexBuffer>>,
    values: ValueBuffer,
}

fn presence(l: usize, buffer: &str, want: bool, have: bool, t: LevelType) -> Result<()> {
    if want == have {
        return Ok(());
    }
    let what = if want { "needs" } else { "has no" };
    Err(Error::invariant(
        format!("{buffer}[{l}]"),
        None,
        format!("a {t} level {what} {buffer} buffer here"),
    ))
}

impl AnyLevel {
    /// The validating constructor: every level tensor is built here.
    ///
    /// Checks (always, O(ndim)): the shape (extents fit int64), one level per
    /// dimension, one positions and one coordinates slot per level with a buffer
    /// exactly where the format has one, one index type for all positions and one
    /// for all coordinates, and the lengths level by level (positions `parents +
    /// 1`, starting at 0; coordinates the node count times the interleaving
    /// width; values the last level's node count), every count without overflow.
    /// With [`Validation::Full`] also, in O(nnz): positions never decrease, every
    /// coordinate lies inside its level, and every `unique` / `ordered` property
    /// the format declares holds (a format may declare less than is true, never
    /// more).
    ///
    /// The index types are the buffers'; a format without positions (or without
    /// coordinates) takes the other kind's type, or int64;
    /// [`with_index_types`](Self::with_index_types) sets them.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{AnyLevel, LevelFormat};
    /// use arrow_sparse::{Error, IndexBuffer, TensorOptions, ValueBuffer};
    /// let idx = |v: Vec<i32>| Some(IndexBuffer::Int32(v.into()));
    /// let build = |cols: Vec<i32>| AnyLevel::try_new(
    ///     vec![2, 4], LevelFormat::dcsr(),
    ///     vec![idx(vec![0, 1]), idx(vec![0, 2])], vec![idx(vec![1]), idx(cols)],
    ///     ValueBuffer::Float64(vec![1.0, 2.0].into()), &TensorOptions::default());
    /// assert!(build(vec![0, 3]).is_ok());
    /// // DCSR's column level is declared ordered: [3, 0] is not
    /// assert!(matches!(build(vec![3, 0]), Err(Error::Invariant { .. })));
    /// // ... nor unique: [2, 2]
    /// assert!(build(vec![2, 2]).is_err());
    /// // column 4 is outside the 2 x 4 shape
    /// assert!(matches!(build(vec![0, 4]), Err(Error::IndexOutOfBounds { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(
        shape: Vec<usize>,
        format: LevelFormat,
        positions: Vec<Option<IndexBuffer>>,
        coordinates: Vec<Option<IndexBuffer>>,
        values: ValueBuffer,
        options: &TensorOptions,
    ) -> Result<Self> {
        let n = shape.len();
        check_shape(&shape, "level tensor")?;
        if n != format.ndim() {
            return Err(Error::shape(
                "level tensor",
                format!("{} dimensions (the format's levels)", format.ndim()),
                format!("{n} dimensions"),
            ));
        }
        check_len("positions slots", positions.len(), n)?;
        check_len("coordinates slots", coordinates.len(), n)?;
        let first_type =
            |bufs: &[Option<IndexBuffer>]| bufs.iter().flatten().next().map(|b| b.data_type());
        let pt = first_type(&positions);
        let ct = first_type(&coordinates);
        let indptr_type = pt.or(ct).unwrap_or(IndexType::Int64);
        let index_type = ct.or(pt).unwrap_or(IndexType::Int64);
        for (kind, bufs, ty) in [
            ("positions", &positions, indptr_type),
            ("coordinates", &coordinates, index_type),
        ] {
            if let Some(b) = bufs.iter().flatten().find(|b| b.data_type() != ty) {
                return Err(Error::Type {
                    what: format!("level tensor {kind}"),
                    expected: format!("one type for all ({})", ty.name()),
                    found: b.data_type().name().into(),
                });
            }
        }
        let counts =
            Self::check_structure(&shape, &format, &positions, &coordinates, values.len())?;
        if options.validation() == Validation::Full {
            Self::check_data(&shape, &format, &positions, &coordinates, &counts)?;
        }
        let dim_names = options.names_for(n);
        check_dim_names(&dim_names, n)?;
        Ok(AnyLevel {
            shape,
            dim_names,
            format,
            index_type,
            indptr_type,
            positions,
            coordinates,
            values,
        })
    }

    /// The O(ndim) checks; returns the node count of every level.
    fn check_structure(
        shape: &[usize],
        format: &LevelFormat,
        positions: &[Option<IndexBuffer>],
        coordinates: &[Option<IndexBuffer>],
        leaves: usize,
    ) -> Result<Vec<usize>> {
        let mut counts = Vec::with_capacity(shape.len());
        let mut parents = 1usize;
        for (l, &t) in format.levels.iter().enumerate() {
            let size = shape[format.axis_order[l]];
            presence(
                l,
                "positions",
                t.kind == LevelKind::Compressed,
                positions[l].is_some(),
                t,
            )?;
            presence(
                l,
                "coordinates",
                format.has_coordinates(l),
                coordinates[l].is_some(),
                t,
            )?;
            let count = match t.kind {
                LevelKind::Dense => parents.checked_mul(size).ok_or_else(|| {
                    Error::overflow(
                        format!("nodes of dense level {l}"),
                        format!("{parents} x {size}"),
                        "usize",
                    )
                })?,
                LevelKind::Singleton => parents,
                LevelKind::Compressed => {
                    let pos = positions[l]
                        .as_ref()
                        .ok_or_else(|| rule(l, "no positions"))?;
                    let what = format!("positions[{l}]");
                    check_len(&what, pos.len(), parents.saturating_add(1))?;
                    let (first, last) = (pos.get_usize(0), pos.get_usize(parents));
                    match (first, last) {
                        (Some(0), Some(end)) => end,
                        _ => {
                            return Err(Error::invariant(
                                what,
                                None,
                                format!(
                                    "must start at 0 and end at a count, found {first:?} .. {last:?}"
                                ),
                            ));
                        }
                    }
                }
            };
            if let Some(crd) = &coordinates[l] {
                let width = format.aos_width(l);
                let want = count.checked_mul(width).ok_or_else(|| {
                    Error::overflow(
                        format!("coordinates[{l}]"),
                        format!("{count} x {width}"),
                        "usize",
                    )
                })?;
                check_len(&format!("coordinates[{l}]"), crd.len(), want)?;
            }
            counts.push(count);
            parents = count;
        }
        check_len("values", leaves, parents)?;
        Ok(counts)
    }

    /// The O(nnz) checks: positions, coordinate bounds, declared properties.
    fn check_data(
        shape: &[usize],
        format: &LevelFormat,
        positions: &[Option<IndexBuffer>],
        coordinates: &[Option<IndexBuffer>],
        counts: &[usize],
    ) -> Result<()> {
        let sizes: Vec<usize> = format.axis_order.iter().map(|&d| shape[d]).collect();
        for (l, pos) in positions.iter().enumerate() {
            if let Some(p) = pos {
                check_indptr(&format!("positions[{l}]"), p.as_slice(), counts[l])?;
            }
        }
        for (l, crd) in coordinates.iter().enumerate() {
            let Some(c) = crd else { continue };
            let what = format!("coordinates[{l}]");
            let width = format.aos_width(l);
            if width == 1 {
                check_bounds(&what, c.as_slice(), sizes[l])?;
            } else {
                let bounds = &sizes[l..l + width];
                with_index_slice!(c.as_slice(), s => {
                    for (i, x) in s.iter().enumerate() {
                        let bound = bounds[i % width];
                        if x.index().is_none_or(|v| v >= bound) {
                            return Err(Error::IndexOutOfBounds { buffer: what, position: i, value: x.wide(), bound: bound as u64 });
                        }
                    }
                });
            }
        }
        // properties, run by run
        let mut c = 0;
        while c < format.ndim() {
            let t = format.levels[c];
            if t.kind != LevelKind::Compressed {
                c += 1;
                continue;
            }
            let len = format.run_len(c);
            let claims: Vec<LevelType> = format.levels[c..c + len].to_vec();
            if claims.iter().any(|t| t.unique || t.ordered) {
                let pos = positions[c]
                    .as_ref()
                    .ok_or_else(|| rule(c, "no positions"))?;
                let cols: Vec<Strided> = (c..c + len)
                    .map(|l| coordinate_view(format, coordinates, l, counts[l]))
                    .collect::<Result<_>>()?;
                check_run(c, pos, &cols, &claims)?;
            }
            c += len;
        }
        Ok(())
    }

    /// Set the index types of a format that has no positions (or no
    /// coordinates) buffer, where no buffer says them. A type that contradicts a
    /// buffer is an [`Error::Type`].
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{AnyLevel, LevelFormat, LevelType};
    /// use arrow_sparse::{IndexType, TensorOptions, ValueBuffer};
    /// // a dense 2 x 2 level tensor: no index buffer at all
    /// let format = LevelFormat::try_new(vec![LevelType::DENSE; 2], vec![0, 1])?;
    /// let t = AnyLevel::try_new(vec![2, 2], format, vec![None, None], vec![None, None],
    ///     ValueBuffer::Int32(vec![1, 0, 0, 2].into()), &TensorOptions::default())?;
    /// let t = t.with_index_types(IndexType::Int16, IndexType::Int32)?;
    /// assert_eq!((t.index_type(), t.indptr_type()), (IndexType::Int16, IndexType::Int32));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_index_types(
        mut self,
        index_type: IndexType,
        indptr_type: IndexType,
    ) -> Result<Self> {
        for (kind, bufs, ty) in [
            ("coordinates", &self.coordinates, index_type),
            ("positions", &self.positions, indptr_type),
        ] {
            if let Some(b) = bufs.iter().flatten().find(|b| b.data_type() != ty) {
                return Err(Error::Type {
                    what: format!("level tensor {kind} type"),
                    expected: b.data_type().name().into(),
                    found: ty.name().into(),
                });
            }
        }
        self.index_type = index_type;
        self.indptr_type = indptr_type;
        Ok(self)
    }

    /// The same tensor with its coordinates converted to `index_type` and its
    /// positions to `indptr_type` (checked; buffers already of the type are
    /// shared).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::{CooTensor, Error, IndexType};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![300], &[(vec![299], 1.0)])?;
    /// let t = AnyLevel::from_tensor(&coo.into())?;
    /// let narrow = t.cast_index_types(IndexType::Int16, IndexType::Int8)?;
    /// assert_eq!((narrow.index_type(), narrow.indptr_type()), (IndexType::Int16, IndexType::Int8));
    /// assert!(matches!(t.cast_index_types(IndexType::Int8, IndexType::Int8), Err(Error::Overflow { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn cast_index_types(
        &self,
        index_type: IndexType,
        indptr_type: IndexType,
    ) -> Result<AnyLevel> {
        let cast = |bufs: &[Option<IndexBuffer>], ty: IndexType, what: &str| {
            bufs.iter()
                .map(|b| b.as_ref().map(|b| b.cast(ty, what)).transpose())
                .collect::<Result<Vec<_>>>()
        };
        let mut out = self.clone();
        out.positions = cast(&self.positions, indptr_type, "positions")?;
        out.coordinates = cast(&self.coordinates, index_type, "coordinates")?;
        out.index_type = index_type;
        out.indptr_type = indptr_type;
        Ok(out)
    }

    /// Extents.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{AnyLevel, LevelFormat};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t = AnyLevel::from_tensor(&CooTensor::<f64, i64>::from_entries(vec![3, 4], &[])?.into())?;
    /// assert_eq!(t.shape(), &[3, 4]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![3], &[])?.with_dim_names(vec!["i".into()])?;
    /// assert_eq!(AnyLevel::from_tensor(&coo.into())?.dim_names(), &["i"]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        &self.dim_names
    }
    /// The level format.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{AnyLevel, LevelFormat};
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![3, 4], &[(vec![1, 2], 1.0)])?;
    /// let csc: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Column)?.into();
    /// assert_eq!(AnyLevel::from_tensor(&csc)?.format(), &LevelFormat::csc());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn format(&self) -> &LevelFormat {
        &self.format
    }
    /// The positions buffer of each level (compressed levels have one).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, IndexBuffer};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 4], &[(vec![1, 2], 1.0)])?;
    /// let t = AnyLevel::from_tensor(&coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into())?;
    /// assert_eq!(t.positions()[0], None);
    /// assert_eq!(t.positions()[1], Some(IndexBuffer::Int32(vec![0, 0, 1].into())));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn positions(&self) -> &[Option<IndexBuffer>] {
        &self.positions
    }
    /// The coordinates buffer of each level (compressed and `soa` singleton
    /// levels have one; other singleton levels' are interleaved in their run's).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::{AnyTensor, CooTensor, IndexBuffer};
    /// // row-major COO: level 0 holds both coordinates of every entry
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 4], &[(vec![0, 3], 1.0), (vec![1, 2], 2.0)])?;
    /// let t = AnyLevel::from_tensor(&coo.into())?;
    /// assert_eq!(t.coordinates()[0], Some(IndexBuffer::Int64(vec![0, 3, 1, 2].into())));
    /// assert_eq!(t.coordinates()[1], None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn coordinates(&self) -> &[Option<IndexBuffer>] {
        &self.coordinates
    }
    /// Values, one per node of the last level.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::{AnyTensor, CooTensor, ValueBuffer};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![4], &[(vec![3], 1.5)])?;
    /// assert_eq!(AnyLevel::from_tensor(&coo.into())?.values(), &ValueBuffer::Float64(vec![1.5].into()));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn values(&self) -> &ValueBuffer {
        &self.values
    }
    /// Number of stored values (stored zeros of dense levels included).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![3, 4], &[(vec![1, 2], 1.0)])?;
    /// // batched-CSR-like (dense, compressed) stores 1 value; (compressed, dense) stores row 1 whole
    /// let f = arrow_sparse::tensor::level::LevelFormat::try_new(
    ///     vec![arrow_sparse::tensor::level::LevelType::COMPRESSED, arrow_sparse::tensor::level::LevelType::DENSE], vec![0, 1])?;
    /// assert_eq!(LevelTensor::<f64, i32>::from_coo(&coo, &LevelFormat::csr())?.as_any().nnz(), 1);
    /// assert_eq!(LevelTensor::<f64, i32>::from_coo(&coo, &f)?.as_any().nnz(), 4);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// The value type.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::{CooTensor, ValueType};
    /// let coo = CooTensor::<i16, i64>::from_entries(vec![4], &[(vec![3], 2)])?;
    /// assert_eq!(AnyLevel::from_tensor(&coo.into())?.value_type(), ValueType::Int16);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value_type(&self) -> ValueType {
        self.values.data_type()
    }
    /// The type of the coordinates buffers.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::{CooTensor, IndexType};
    /// let coo = CooTensor::<i16, i8>::from_entries(vec![4], &[(vec![3], 2)])?;
    /// assert_eq!(AnyLevel::from_tensor(&coo.into())?.index_type(), IndexType::Int8);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn index_type(&self) -> IndexType {
        self.index_type
    }
    /// The type of the positions buffers.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::{CompressedAxis, Convert, CooTensor, IndexType};
    /// let coo = CooTensor::<i16, i64>::from_entries(vec![2, 4], &[(vec![1, 3], 2)])?;
    /// let t = AnyLevel::from_tensor(&coo.to_csx::<i8, i32>(CompressedAxis::Row)?.into())?;
    /// assert_eq!((t.index_type(), t.indptr_type()), (IndexType::Int8, IndexType::Int32));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn indptr_type(&self) -> IndexType {
        self.indptr_type
    }

    /// The typed view, if the types are `V`, `I` (coordinates) and `P`
    /// (positions) (zero-copy).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f32, i64>::from_entries(vec![4], &[(vec![3], 2.0)])?;
    /// let t = AnyLevel::from_tensor(&coo.into())?;
    /// assert!(t.downcast::<f32, i64, i64>().is_some());
    /// assert!(t.downcast::<f32, i32, i64>().is_none());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn downcast<V: Value, I: Index, P: Index>(&self) -> Option<LevelTensor<V, I, P>> {
        if self.index_type != I::TYPE || self.indptr_type != P::TYPE {
            return None;
        }
        Some(LevelTensor {
            positions: self
                .positions
                .iter()
                .map(|b| match b {
                    None => Some(None),
                    Some(b) => b.as_typed::<P>().cloned().map(Some),
                })
                .collect::<Option<_>>()?,
            coordinates: self
                .coordinates
                .iter()
                .map(|b| match b {
                    None => Some(None),
                    Some(b) => b.as_typed::<I>().cloned().map(Some),
                })
                .collect::<Option<_>>()?,
            values: self.values.as_typed::<V>()?.clone(),
            any: self.clone(),
        })
    }

    /// The same tensor with other dimension names (one per dimension).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::CooTensor;
    /// let t = AnyLevel::from_tensor(&CooTensor::<f32, i64>::from_entries(vec![4], &[])?.into())?;
    /// assert_eq!(t.clone().with_dim_names(vec!["i".into()])?.dim_names(), &["i"]);
    /// assert!(t.with_dim_names(vec![]).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_dim_names(mut self, names: Vec<String>) -> Result<Self> {
        check_dim_names(&names, self.shape.len())?;
        self.dim_names = names;
        Ok(self)
    }

    /// The same structure (buffers shared) holding `values` instead, any value
    /// type, one per stored value.
    pub(crate) fn with_values(&self, values: ValueBuffer) -> Result<AnyLevel> {
        check_len("values", values.len(), self.values.len())?;
        let mut out = self.clone();
        out.values = values;
        Ok(out)
    }

    /// The node count of every level (the structure was checked at construction).
    fn counts(&self) -> Vec<usize> {
        let mut parents = 1usize;
        let mut out = Vec::with_capacity(self.shape.len());
        for (l, t) in self.format.levels.iter().enumerate() {
            let count = match t.kind {
                LevelKind::Dense => parents.saturating_mul(self.shape[self.format.axis_order[l]]),
                LevelKind::Singleton => parents,
                LevelKind::Compressed => self.positions[l]
                    .as_ref()
                    .and_then(|p| p.get_usize(p.len().saturating_sub(1)))
                    .unwrap_or(0),
            };
            out.push(count);
            parents = count;
        }
        out
    }

    /// The level view (zero-copy): the same buffers seen as
    /// [`AnyTensor::levels`](crate::AnyTensor::levels) sees every format, with this tensor's declared
    /// properties.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 1.0)])?;
    /// let t = LevelTensor::<f64, i32, i64>::from_coo(&coo, &LevelFormat::batched_csr(1)?)?;
    /// assert_eq!(
    ///     t.as_any().levels()?.mlir_encoding(),
    ///     "#sparse_tensor.encoding<{ map = (d0, d1, d2) -> (d0 : dense, d1 : dense, d2 : compressed), posWidth = 64, crdWidth = 32 }>"
    /// );
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn levels(&self) -> Result<LevelView> {
        let counts = self.counts();
        let sizes: Vec<usize> = self
            .format
            .axis_order
            .iter()
            .map(|&d| self.shape[d])
            .collect();
        let mut levels = Vec::with_capacity(self.shape.len());
        for (l, &t) in self.format.levels.iter().enumerate() {
            let coordinates = match t.kind {
                LevelKind::Dense => None,
                _ => Some(coordinate_view(
                    &self.format,
                    &self.coordinates,
                    l,
                    counts[l],
                )?),
            };
            levels.push(Level {
                kind: t.kind,
                size: sizes[l],
                positions: self.positions[l].as_ref().map(Strided::whole),
                coordinates,
                non_unique: !t.unique,
                non_ordered: !t.ordered,
                soa: t.soa,
            });
        }
        let bits = |ty: IndexType| ty.byte_width() * 8;
        let kinds = || self.format.levels.iter().map(|t| t.kind);
        Ok(LevelView {
            ndim: self.shape.len(),
            shape: self.shape.clone(),
            levels,
            dim_to_lvl: self
                .format
                .axis_order
                .iter()
                .map(|&d| vec![(d, 1)])
                .collect(),
            values: self.values.clone(),
            pos_width: if kinds().any(|k| k == LevelKind::Compressed) {
                bits(self.indptr_type)
            } else {
                0
            },
            crd_width: if kinds().any(|k| k != LevelKind::Dense) {
                bits(self.index_type)
            } else {
                0
            },
        })
    }

    /// The exact MLIR `#sparse_tensor.encoding` attribute of this tensor (its
    /// declared properties; posWidth / crdWidth from its index types).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![3, 4], &[(vec![1, 2], 1.0)])?;
    /// let t = LevelTensor::<f64, i16, i32>::from_coo(&coo, &LevelFormat::dcsc())?;
    /// assert_eq!(
    ///     t.as_any().mlir_encoding()?,
    ///     "#sparse_tensor.encoding<{ map = (d0, d1) -> (d1 : compressed, d0 : compressed), posWidth = 32, crdWidth = 16 }>"
    /// );
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn mlir_encoding(&self) -> Result<String> {
        Ok(self.levels()?.mlir_encoding())
    }

    /// Visit every stored value (stored zeros of dense levels included) with its
    /// dimension coordinates, in storage order, through the one generic walk over
    /// the levels ([`LevelView::for_each_stored`]). Fails if the value type is
    /// not `V`.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 5.0), (vec![0, 0], 1.0)])?;
    /// let t = LevelTensor::<f64, i32>::from_coo(&coo, &LevelFormat::dcsc())?;
    /// let mut seen = Vec::new();
    /// t.as_any().for_each_entry::<f64>(&mut |c, v| seen.push((c.to_vec(), v)))?;
    /// assert_eq!(seen, [(vec![0, 0], 1.0), (vec![1, 2], 5.0)]); // column by column
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn for_each_entry<V: Value>(&self, f: &mut dyn FnMut(&[usize], V)) -> Result<()> {
        let values = self.values.as_typed::<V>().ok_or_else(|| Error::Type {
            what: "value type".into(),
            expected: V::TYPE.name().into(),
            found: self.value_type().name().into(),
        })?;
        let view = self.levels()?;
        let order = &self.format.axis_order;
        let mut dims = vec![0usize; self.shape.len()];
        view.for_each_stored(|lvl, q| {
            for (&c, &d) in lvl.iter().zip(order) {
                dims[d] = c;
            }
            f(&dims, values[q]);
        })
    }

    /// The sum of the values stored at `coords` (zero when none), or `None`
    /// outside the shape. Fails if the value type is not `V`.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::AnyLevel;
    /// use arrow_sparse::CooTensor;
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![4], &[(vec![3], 2.0), (vec![3], 0.5)])?;
    /// let t = AnyLevel::from_tensor(&coo.into())?;
    /// assert_eq!(t.get::<f64>(&[3])?, Some(2.5));
    /// assert_eq!(t.get::<f64>(&[0])?, Some(0.0));
    /// assert_eq!(t.get::<f64>(&[4])?, None);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get<V: Value>(&self, coords: &[usize]) -> Result<Option<V>> {
        let values = self.values.as_typed::<V>().ok_or_else(|| Error::Type {
            what: "value type".into(),
            expected: V::TYPE.name().into(),
            found: self.value_type().name().into(),
        })?;
        if coords.len() != self.shape.len() || coords.iter().zip(&self.shape).any(|(c, d)| c >= d) {
            return Ok(None);
        }
        let mut acc = V::ZERO;
        for q in self.levels()?.positions(coords) {
            if let Some(&v) = values.get(q) {
                acc = acc.checked_sum(v).unwrap_or(acc);
            }
        }
        Ok(Some(acc))
    }
}

/// Level `l`'s coordinates as a strided view of the buffer that holds them.
fn coordinate_view(
    format: &LevelFormat,
    coordinates: &[Option<IndexBuffer>],
    l: usize,
    count: usize,
) -> Result<Strided> {
    let (b, stride, offset) = format
        .coordinate_source(l)
        .ok_or_else(|| rule(l, "a dense level has no coordinates"))?;
    let buffer = coordinates
        .get(b)
        .and_then(|c| c.clone())
        .ok_or_else(|| rule(l, "no coordinates buffer"))?;
    Ok(Strided {
        buffer,
        offset,
        stride,
        len: count,
    })
}

/// Check the declared properties of the run whose compressed level is `c`:
/// within each segment of `pos`, the tuple keys `(cols[0][i], ..., cols[k][i])`
/// of level `c + k` never decrease (ordered) / never repeat (unique).
fn check_run(c: usize, pos: &IndexBuffer, cols: &[Strided], claims: &[LevelType]) -> Result<()> {
    let len = cols.len();
    let at = |k: usize, i: usize| cols[k].get(i).unwrap_or(usize::MAX);
    let fail = |k: usize, i: usize, what: &str| {
        Error::invariant(
            format!("level {}", c + k),
            Some(i),
            format!(
                "declared {}, but its coordinates {what} within a segment",
                claims[k]
            ),
        )
    };
    let segments = pos.len().saturating_sub(1);
    // levels whose uniqueness needs a set (unique but not ordered)
    let hashed: Vec<usize> = (0..len)
        .filter(|&k| claims[k].unique && !claims[k].ordered)
        .collect();
    for p in 0..segments {
        let (Some(lo), Some(hi)) = (pos.get_usize(p), pos.get_usize(p + 1)) else {
            continue;
        };
        for i in lo + 1..hi {
            // the first level of the run at which entries i - 1 and i differ
            let k = (0..len).find(|&k| at(k, i - 1) != at(k, i)).unwrap_or(len);
            let down = k < len && at(k, i) < at(k, i - 1);
            for (m, t) in claims.iter().enumerate() {
                if t.ordered && down && k <= m {
                    return Err(fail(m, i, "decrease"));
                }
                if t.unique && t.ordered && k > m {
                    return Err(fail(m, i, "repeat"));
                }
            }
        }
        for &m in &hashed {
            let key = |i: usize| -> Vec<usize> { (0..=m).map(|k| at(k, i)).collect() };
            if hi - lo <= 16 {
                for i in lo..hi {
                    for j in lo..i {
                        if key(i) == key(j) {
                            return Err(fail(m, i, "repeat"));
                        }
                    }
                }
            } else {
                let mut seen = HashSet::with_capacity(hi - lo);
                for i in lo..hi {
                    if !seen.insert(key(i)) {
                        return Err(fail(m, i, "repeat"));
                    }
                }
            }
        }
    }
    Ok(())
}

/// A level tensor with values `V`, coordinates `I` and positions `P`.
///
/// ```
/// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
/// use arrow_sparse::{Convert, CooTensor};
/// // CSF with a dense leading level: every i, then compressed j, k
/// let coo = CooTensor::<f32, i64>::from_entries(vec![2, 3, 4], &[(vec![0, 1, 2], 1.0), (vec![0, 1, 3], 2.0), (vec![1, 0, 0], 3.0)])?;
/// let t = LevelTensor::<f32, i16, i32>::from_coo(&coo, &LevelFormat::csf_with_dense(1, vec![0, 1, 2])?)?;
/// assert_eq!(t.positions(1).unwrap().as_ref(), &[0, 1, 2]); // one j under each i
/// assert_eq!(t.coordinates(1).unwrap().as_ref(), &[1, 0]);
/// assert_eq!(t.positions(2).unwrap().as_ref(), &[0, 2, 3]);
/// assert_eq!(t.to_coo::<i64>()?.canonicalize()?, coo.canonicalize()?);
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LevelTensor<V: Value, I: Index, P: Index = I> {
    any: AnyLevel,
    positions: Vec<Option<ScalarBuffer<P>>>,
    coordinates: Vec<Option<ScalarBuffer<I>>>,
    values: ScalarBuffer<V>,
}

impl<V: Value, I: Index, P: Index> LevelTensor<V, I, P> {
    /// Build and fully validate a level tensor (see [`AnyLevel::try_new`]).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
    /// // the MLIR seed's CSR example: 1.1 at (0, 1), 2.2 at (0, 4), 3.3 at (7, 2)
    /// let t = LevelTensor::<f32, i64>::try_new(
    ///     vec![8, 8], LevelFormat::csr(),
    ///     vec![None, Some(vec![0, 2, 2, 2, 2, 2, 2, 2, 3].into())],
    ///     vec![None, Some(vec![1, 4, 2].into())],
    ///     vec![1.1, 2.2, 3.3].into())?;
    /// assert_eq!(t.get(&[7, 2]), Some(3.3));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(
        shape: Vec<usize>,
        format: LevelFormat,
        positions: Vec<Option<ScalarBuffer<P>>>,
        coordinates: Vec<Option<ScalarBuffer<I>>>,
        values: ScalarBuffer<V>,
    ) -> Result<Self> {
        Self::try_new_with(
            shape,
            format,
            positions,
            coordinates,
            values,
            &TensorOptions::default(),
        )
    }

    /// Build with explicit [`TensorOptions`] (names, [`Validation`]).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
    /// use arrow_sparse::{TensorOptions, Validation};
    /// // coordinates [3, 1] in a level declared ordered: only full validation looks
    /// let build = |v| LevelTensor::<f32, i32>::try_new_with(vec![4], LevelFormat::sparse_vector(),
    ///     vec![Some(vec![0, 2].into())], vec![Some(vec![3, 1].into())], vec![1.0, 2.0].into(),
    ///     &TensorOptions::default().with_validation(v));
    /// assert!(build(Validation::Full).is_err());
    /// assert!(build(Validation::Trusted).is_ok());
    /// ```
    pub fn try_new_with(
        shape: Vec<usize>,
        format: LevelFormat,
        positions: Vec<Option<ScalarBuffer<P>>>,
        coordinates: Vec<Option<ScalarBuffer<I>>>,
        values: ScalarBuffer<V>,
        options: &TensorOptions,
    ) -> Result<Self> {
        let any = AnyLevel::try_new(
            shape,
            format,
            positions
                .iter()
                .map(|b| b.clone().map(IndexBuffer::from))
                .collect(),
            coordinates
                .iter()
                .map(|b| b.clone().map(IndexBuffer::from))
                .collect(),
            ValueBuffer::from(values.clone()),
            options,
        )?
        .with_index_types(I::TYPE, P::TYPE)?;
        Ok(LevelTensor {
            any,
            positions,
            coordinates,
            values,
        })
    }

    /// A sparse vector (`(d0 : compressed)`) from its sorted, distinct
    /// coordinates and their values.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64>::sparse_vector(16, vec![3, 6, 9, 12].into(), vec![1.1, 2.2, 3.3, 4.4].into())?;
    /// assert_eq!(v.positions(0).unwrap().as_ref(), &[0, 4]);
    /// // unsorted coordinates are refused
    /// assert!(LevelTensor::<f32, i64>::sparse_vector(16, vec![6, 3].into(), vec![1.0, 2.0].into()).is_err());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn sparse_vector(
        size: usize,
        coordinates: ScalarBuffer<I>,
        values: ScalarBuffer<V>,
    ) -> Result<Self> {
        let nnz = values.len();
        let end = P::try_from_usize(nnz)
            .ok_or_else(|| Error::overflow("positions", nnz.to_string(), P::TYPE.name()))?;
        Self::try_new(
            vec![size],
            LevelFormat::sparse_vector(),
            vec![Some(vec![P::usize_as(0), end].into())],
            vec![Some(coordinates)],
            values,
        )
    }

    /// Attach dimension names (one per dimension).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64>::sparse_vector(4, vec![1].into(), vec![1.0].into())?;
    /// assert_eq!(v.with_dim_names(vec!["i".into()])?.dim_names(), &["i"]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn with_dim_names(mut self, names: Vec<String>) -> Result<Self> {
        self.any = self.any.with_dim_names(names)?;
        Ok(self)
    }
    /// Extents.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64>::sparse_vector(4, vec![1].into(), vec![1.0].into())?;
    /// assert_eq!(v.shape(), &[4]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.any.shape()
    }
    /// Number of dimensions.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64>::sparse_vector(4, vec![1].into(), vec![1.0].into())?;
    /// assert_eq!(v.ndim(), 1);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.any.shape().len()
    }
    /// One name per dimension (`""` where unnamed).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64>::sparse_vector(4, vec![1].into(), vec![1.0].into())?;
    /// assert_eq!(v.dim_names(), &[""]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn dim_names(&self) -> &[String] {
        self.any.dim_names()
    }
    /// The level format.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
    /// let v = LevelTensor::<f32, i64>::sparse_vector(4, vec![1].into(), vec![1.0].into())?;
    /// assert_eq!(v.format(), &LevelFormat::sparse_vector());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn format(&self) -> &LevelFormat {
        self.any.format()
    }
    /// Level `l`'s positions (compressed levels).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64, i8>::sparse_vector(4, vec![1].into(), vec![1.0].into())?;
    /// assert_eq!(v.positions(0).unwrap().as_ref(), &[0i8, 1]);
    /// assert!(v.positions(1).is_none());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn positions(&self, l: usize) -> Option<&ScalarBuffer<P>> {
        self.positions.get(l)?.as_ref()
    }
    /// Level `l`'s coordinates buffer (compressed and `soa` singleton levels).
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64>::sparse_vector(4, vec![1].into(), vec![1.0].into())?;
    /// assert_eq!(v.coordinates(0).unwrap().as_ref(), &[1]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn coordinates(&self, l: usize) -> Option<&ScalarBuffer<I>> {
        self.coordinates.get(l)?.as_ref()
    }
    /// Values.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64>::sparse_vector(4, vec![1].into(), vec![1.5].into())?;
    /// assert_eq!(v.values().as_ref(), &[1.5]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn values(&self) -> &ScalarBuffer<V> {
        &self.values
    }
    /// Number of stored values.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64>::sparse_vector(4, vec![1, 2].into(), vec![1.5, 0.0].into())?;
    /// assert_eq!(v.nnz(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// The type-erased tensor.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// use arrow_sparse::IndexType;
    /// let v = LevelTensor::<f32, i16, i64>::sparse_vector(4, vec![1].into(), vec![1.5].into())?;
    /// assert_eq!((v.as_any().index_type(), v.as_any().indptr_type()), (IndexType::Int16, IndexType::Int64));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn as_any(&self) -> &AnyLevel {
        &self.any
    }
    /// The sum of the values stored at `coords` (zero when none), or `None`
    /// outside the shape.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64>::sparse_vector(4, vec![1].into(), vec![1.5].into())?;
    /// assert_eq!((v.get(&[1]), v.get(&[2]), v.get(&[4])), (Some(1.5), Some(0.0), None));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn get(&self, coords: &[usize]) -> Option<V> {
        self.any.get::<V>(coords).ok().flatten()
    }
    /// Visit every stored value with its coordinates, in storage order.
    ///
    /// ```
    /// use arrow_sparse::tensor::level::LevelTensor;
    /// let v = LevelTensor::<f32, i64>::sparse_vector(4, vec![1, 3].into(), vec![1.5, 2.5].into())?;
    /// let mut seen = Vec::new();
    /// v.for_each(|c, x| seen.push((c[0], x)))?;
    /// assert_eq!(seen, [(1, 1.5), (3, 2.5)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn for_each(&self, mut f: impl FnMut(&[usize], V)) -> Result<()> {
        self.any.for_each_entry::<V>(&mut f)
    }

    /// All stored values as row-major COO in storage order (what
    /// [`Convert::to_coo`](crate::Convert::to_coo) returns).
    pub(crate) fn coo_entries<J: Index>(&self) -> Result<CooTensor<V, J>> {
        let n = self.ndim();
        let mut coords: Vec<J> =
            crate::alloc::with_capacity(self.nnz().saturating_mul(n), "COO coordinates")?;
        let mut values: Vec<V> = crate::alloc::with_capacity(self.nnz(), "COO values")?;
        let mut bad = None;
        self.for_each(|c, v| {
            for &x in c {
                match J::try_from_usize(x) {
                    Some(j) => coords.push(j),
                    None => bad = Some(x),
                }
            }
            values.push(v);
        })?;
        if let Some(x) = bad {
            return Err(Error::overflow("coordinate", x.to_string(), J::TYPE.name()));
        }
        CooTensor::from_trusted_parts(
            self.shape(),
            coords.into(),
            values.into(),
            self.dim_names(),
            None,
        )
    }
}

impl<V: Value, I: Index, P: Index> From<LevelTensor<V, I, P>> for AnyLevel {
    fn from(t: LevelTensor<V, I, P>) -> Self {
        t.any
    }
}
