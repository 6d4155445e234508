//! What the Matrix Market and FROSTT readers and writers share: a chunked line
//! reader, token parsers, the value trait, and duplicate detection.
//!
//! Reading is streaming: [`Lines`] reads the input in 1 MiB chunks and hands out one
//! line at a time (a line may not exceed [`MAX_LINE`] bytes), so the memory used
//! apart from the output tensor is bounded whatever the file size. Entries go
//! straight into the output buffers, which grow as data arrives (a header that
//! announces more entries than the file holds reserves at most [`MAX_RESERVE`]).

use std::io::{ErrorKind, Read, Write};

use half::f16;

use crate::error::{Error, Result};
use crate::io::Duplicates;
use crate::types::Value;

/// Bytes read from the input per call.
const CHUNK: usize = 1 << 20;
/// The longest line accepted, in bytes.
pub(crate) const MAX_LINE: usize = 16 << 20;
/// The most entries reserved in advance on the word of a header.
pub(crate) const MAX_RESERVE: usize = 1 << 20;
/// The most comment bytes kept in the metadata of a Matrix Market file.
pub(crate) const MAX_COMMENTS: usize = 64 << 10;

/// A parse error at `name:line`.
pub(crate) fn line_error(name: &str, line: u64, detail: impl Into<String>) -> Error {
    Error::Parse {
        what: format!("{name}:{line}"),
        detail: detail.into(),
    }
}

/// A token for an error message: lossy UTF-8, at most 40 characters, quoted.
pub(crate) fn show(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(tok);
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push_str("...");
    }
    format!("{out:?}")
}

/// How often (in entries) the text readers compare what they hold with the budget.
pub(crate) const LIMIT_EVERY: u64 = 1 << 12;

/// The explicit read limit of the text readers (`format/SPEC.md` section 11):
/// the memory the parsed entries take (`entries × bytes_per_entry`) against the
/// [`ReadLimit`](crate::limit::ReadLimit) budget of the input's bytes, checked for
/// the count a header declares before anything is reserved (when the input's
/// size is known: [`read`](super::mtx::read) of a file), and every
/// [`LIMIT_EVERY`] entries (at least) against the bytes read so far.
pub(crate) struct TextLimit {
    limit: crate::limit::ReadLimit,
    bytes_per_entry: u64,
    name: String,
    /// The entry count of the next comparison.
    next: u64,
}

impl TextLimit {
    /// Entries of `bytes_per_entry` bytes each in the output (coordinates as
    /// int64 and the value; a symmetric file's mirrored entries counted twice).
    pub(crate) fn new(limit: crate::limit::ReadLimit, bytes_per_entry: u64, name: &str) -> Self {
        TextLimit {
            limit,
            bytes_per_entry,
            name: name.to_string(),
            next: LIMIT_EVERY,
        }
    }

    /// The `declared` entries of a header (at line `line`) against the input's
    /// size, when known.
    pub(crate) fn declared<R: Read>(
        &self,
        declared: u64,
        line: u64,
        lines: &Lines<R>,
    ) -> Result<()> {
        let Some(len) = lines.input_len() else {
            return Ok(());
        };
        self.limit.check(
            format!(
                "{}:{line}: the {declared} entries announced ({} bytes each once read)",
                self.name, self.bytes_per_entry
            ),
            declared.saturating_mul(self.bytes_per_entry),
            len,
        )
    }

    /// The `entries` read so far against the bytes read so far.
    #[inline]
    pub(crate) fn read_so_far<R: Read>(&mut self, entries: u64, lines: &Lines<R>) -> Result<()> {
        if entries < self.next {
            return Ok(());
        }
        self.next = entries.saturating_add(LIMIT_EVERY);
        self.limit.check(
            format!(
                "the entries of {} ({entries} read, {} bytes each)",
                self.name, self.bytes_per_entry
            ),
            entries.saturating_mul(self.bytes_per_entry),
            lines.input_bytes(),
        )
    }
}

/// Reads lines from a byte source in large chunks. Lines end with `\n` or `\r\n`;
/// the last line may lack its terminator.
pub(crate) struct Lines<R> {
    inner: R,
    /// Bytes read from `inner` so far.
    consumed: u64,
    /// The input's size when known (a file), for [`TextLimit`].
    input_len: Option<u64>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    line: u64,
    name: String,
}

impl<R: Read> Lines<R> {
    pub(crate) fn new(inner: R, name: &str) -> Self {
        Lines {
            inner,
            consumed: 0,
            input_len: None,
            buf: Vec::new(),
            start: 0,
            end: 0,
            eof: false,
            line: 0,
            name: name.to_string(),
        }
    }

    /// Declare the input's size (a file's length), which [`TextLimit`] measures
    /// the declared entries against before reading them.
    pub(crate) fn with_input_len(mut self, len: Option<u64>) -> Self {
        self.input_len = len;
        self
    }

    /// The input's size when known.
    pub(crate) fn input_len(&self) -> Option<u64> {
        self.input_len
    }

    /// The input bytes the budget is measured against: the input's size when
    /// known, else the bytes read so far (at least).
    pub(crate) fn input_bytes(&self) -> u64 {
        self.input_len.unwrap_or(0).max(self.consumed)
    }

    /// The name used in error messages.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The 1-based number of the line last returned (0 before the first).
    pub(crate) fn line_no(&self) -> u64 {
        self.line
    }

    /// The next line (its 1-based number, its bytes without the terminator), or
    /// `None` at the end of the input.
    #[inline]
    pub(crate) fn next_line(&mut self) -> Result<Option<(u64, &[u8])>> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                let (s, e) = (self.start, self.start + i);
                self.start = e + 1;
                self.line += 1;
                return Ok(Some((self.line, strip_cr(&self.buf[s..e]))));
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let (s, e) = (self.start, self.end);
                self.start = e;
                self.line += 1;
                return Ok(Some((self.line, strip_cr(&self.buf[s..e]))));
            }
            self.fill()?;
        }
    }

    fn fill(&mut self) -> Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            if self.buf.len() > MAX_LINE {
                return Err(line_error(
                    &self.name,
                    self.line + 1,
                    format!("line longer than {} MiB", MAX_LINE >> 20),
                ));
            }
            let grown = (self.buf.len() * 2).clamp(CHUNK, MAX_LINE + 1);
            self.buf.resize(grown, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    self.consumed += n as u64;
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::Io(e)),
            }
        }
    }
}

#[inline]
fn strip_cr(l: &[u8]) -> &[u8] {
    match l.last() {
        Some(b'\r') => &l[..l.len() - 1],
        _ => l,
    }
}

#[inline(always)]
fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Whitespace-separated tokens of one line.
pub(crate) struct Tokens<'a> {
    line: &'a [u8],
    pos: usize,
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(line: &'a [u8]) -> Self {
        Tokens { line, pos: 0 }
    }

    #[inline(always)]
    fn skip_space(&mut self) {
        while self.pos < self.line.len() && is_space(self.line[self.pos]) {
            self.pos += 1;
        }
    }

    /// An unsigned decimal integer token, in one pass. `Err(None)`: the line
    /// ended; `Err(Some(token))`: the token is not such an integer.
    #[inline(always)]
    pub(crate) fn next_u64(&mut self) -> std::result::Result<u64, Option<&'a [u8]>> {
        self.skip_space();
        let (s, start) = (self.line, self.pos);
        let rest = &s[start..];
        // up to 19 digits, 8 at a time
        let (mut acc, mut n) = swar8(rest);
        if n == 8 {
            let (v, k) = swar8(&rest[8..]);
            acc = acc * POW10[k] + v;
            n += k;
            if k == 8 {
                let (v, k) = swar8(&rest[16..]);
                if k <= 3 {
                    acc = acc * POW10[k] + v;
                }
                n += k;
            }
        }
        let end = start + n;
        if n == 0 || n > 19 || (end < s.len() && !is_space(s[end])) {
            // not all digits, or 20 digits (may overflow): the careful path
            let tok = self.next_token();
            return match tok {
                None => Err(None),
                Some(t) => parse_u64(t).ok_or(Some(t)),
            };
        }
        self.pos = end;
        Ok(acc)
    }

    /// A value token (`integer`: an integer field), in one pass.
    #[inline(always)]
    pub(crate) fn next_value<V: TextValue>(
        &mut self,
        integer: bool,
    ) -> std::result::Result<V, Option<&'a [u8]>> {
        self.skip_space();
        let rest = &self.line[self.pos..];
        let parsed = if integer {
            V::int_prefix(rest)
        } else {
            V::real_prefix(rest)
        };
        if let Some((v, n)) = parsed
            && n > 0
            && (n == rest.len() || is_space(rest[n]))
        {
            self.pos += n;
            return Ok(v);
        }
        Err(self.next_token())
    }

    /// The next token, or `None` at the end of the line.
    #[inline]
    pub(crate) fn next_token(&mut self) -> Option<&'a [u8]> {
        let l = self.line;
        let mut p = self.pos;
        while p < l.len() && is_space(l[p]) {
            p += 1;
        }
        if p == l.len() {
            self.pos = p;
            return None;
        }
        let s = p;
        while p < l.len() && !is_space(l[p]) {
            p += 1;
        }
        self.pos = p;
        Some(&l[s..p])
    }
}

const POW10: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The leading ASCII digits of `s`, up to 8, read at once (SWAR): their value
/// and how many there are.
#[inline(always)]
fn swar8(s: &[u8]) -> (u64, usize) {
    let mut b = [0u8; 8];
    match s.get(..8) {
        Some(head) => b.copy_from_slice(head),
        None => b[..s.len()].copy_from_slice(s),
    }
    // digits become 0..=9; a byte is not a digit when x >= 10, i.e. when x + 0x76
    // or x has its top bit set (carries only reach bytes after the first non-digit)
    let x = u64::from_le_bytes(b) ^ 0x3030_3030_3030_3030;
    let non_digit = (x.wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080;
    let n = (non_digit.trailing_zeros() / 8) as usize;
    if n == 0 {
        return (0, 0);
    }
    // keep the n digits, most significant first in the low bytes, zeros before
    let mut v = x << (8 * (8 - n));
    v = v.wrapping_mul(10).wrapping_add(v >> 8) & 0x00ff_00ff_00ff_00ff;
    v = v.wrapping_mul(100).wrapping_add(v >> 16) & 0x0000_ffff_0000_ffff;
    v = v.wrapping_mul(10_000).wrapping_add(v >> 32) & 0x0000_0000_ffff_ffff;
    (v, n)
}

/// Whether a line holds no token (empty or only blanks).
#[inline]
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| is_space(b))
}

/// A decimal integer without sign (`None` when not all digits or overflowing).
#[inline]
pub(crate) fn parse_u64(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() || tok.len() > 20 {
        return None;
    }
    let mut acc: u64 = 0;
    if tok.len() < 20 {
        // at most 19 digits: cannot overflow
        for &b in tok {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            acc = acc * 10 + d as u64;
        }
        return Some(acc);
    }
    for &b in tok {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        acc = acc.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(acc)
}

/// A decimal integer with an optional sign, as i128 (every 64-bit value fits).
#[inline]
pub(crate) fn parse_i128(tok: &[u8]) -> Option<i128> {
    match tok.first()? {
        b'-' => parse_u64(&tok[1..]).map(|m| -(m as i128)),
        b'+' => parse_u64(&tok[1..]).map(|m| m as i128),
        _ => parse_u64(tok).map(|m| m as i128),
    }
}

/// A decimal integer with an optional sign at the start of `s`, and its length.
#[inline(always)]
fn int_prefix_i128(s: &[u8]) -> Option<(i128, usize)> {
    let (neg, start) = match s.first()? {
        b'-' => (true, 1),
        b'+' => (false, 1),
        _ => (false, 0),
    };
    let mut i = start;
    let mut acc: u64 = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        acc = acc.checked_mul(10)?.checked_add((s[i] - b'0') as u64)?;
        i += 1;
    }
    if i == start {
        return None;
    }
    let v = acc as i128;
    Some((if neg { -v } else { v }, i))
}

/// A value type as read from and written to text.
pub(crate) trait TextValue: Value + Copy {
    /// A decimal integer at the start of `s` and its length (see
    /// [`parse_int`](Self::parse_int)).
    fn int_prefix(s: &[u8]) -> Option<(Self, usize)>;
    /// A real number at the start of `s` and its length (see
    /// [`parse_real`](Self::parse_real)).
    fn real_prefix(s: &[u8]) -> Option<(Self, usize)>;
    /// Parse a decimal integer (optional sign). Floats convert (rounding beyond
    /// 2^53 for f64); integers are range-checked.
    fn parse_int(tok: &[u8]) -> Option<Self>;
    /// Parse a real number. Float types accept decimal and exponent forms, `inf`,
    /// `infinity` and `nan` (any case); integer types accept only integers.
    fn parse_real(tok: &[u8]) -> Option<Self>;
    /// One (the value of a pattern entry).
    fn one() -> Self;
    /// `-self`, or `None` when it does not exist in the type.
    fn neg(self) -> Option<Self>;
    /// Equal, counting NaN equal to NaN (a symmetric matrix may hold NaN).
    fn same(self, other: Self) -> bool;
    /// Append the shortest decimal text that reads back to the same value.
    fn write_text(self, out: &mut Vec<u8>);
}

macro_rules! int_text {
    ($($t:ty),*) => {$(
        impl TextValue for $t {
            #[inline(always)]
            fn int_prefix(s: &[u8]) -> Option<(Self, usize)> {
                let (v, n) = int_prefix_i128(s)?;
                Some((<$t>::try_from(v).ok()?, n))
            }
            #[inline(always)]
            fn real_prefix(s: &[u8]) -> Option<(Self, usize)> {
                Self::int_prefix(s)
            }
            #[inline]
            fn parse_int(tok: &[u8]) -> Option<Self> {
                <$t>::try_from(parse_i128(tok)?).ok()
            }
            #[inline]
            fn parse_real(tok: &[u8]) -> Option<Self> {
                Self::parse_int(tok)
            }
            fn one() -> Self { 1 }
            fn neg(self) -> Option<Self> { self.checked_neg() }
            fn same(self, other: Self) -> bool { self == other }
            fn write_text(self, out: &mut Vec<u8>) {
                let _ = write!(out, "{self}");
            }
        }
    )*};
}
int_text!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_text {
    ($($t:ty),*) => {$(
        impl TextValue for $t {
            #[inline(always)]
            fn int_prefix(s: &[u8]) -> Option<(Self, usize)> {
                int_prefix_i128(s).map(|(v, n)| (v as $t, n))
            }
            #[inline(always)]
            fn real_prefix(s: &[u8]) -> Option<(Self, usize)> {
                fast_float2::parse_partial::<$t, _>(s).ok()
            }
            #[inline]
            fn parse_int(tok: &[u8]) -> Option<Self> {
                parse_i128(tok).map(|v| v as $t)
            }
            #[inline]
            fn parse_real(tok: &[u8]) -> Option<Self> {
                fast_float2::parse::<$t, _>(tok).ok()
            }
            fn one() -> Self { 1.0 }
            fn neg(self) -> Option<Self> { Some(-self) }
            fn same(self, other: Self) -> bool {
                self == other || (self.is_nan() && other.is_nan())
            }
            fn write_text(self, out: &mut Vec<u8>) {
                // Debug is the shortest decimal that round-trips, with an exponent
                // for very large or small magnitudes, and `NaN` / `inf` / `-inf`.
                let _ = write!(out, "{self:?}");
            }
        }
    )*};
}
float_text!(f32, f64);

impl TextValue for f16 {
    fn int_prefix(s: &[u8]) -> Option<(Self, usize)> {
        int_prefix_i128(s).map(|(v, n)| (f16::from_f64(v as f64), n))
    }
    fn real_prefix(s: &[u8]) -> Option<(Self, usize)> {
        fast_float2::parse_partial::<f64, _>(s)
            .ok()
            .map(|(v, n)| (f16::from_f64(v), n))
    }
    fn parse_int(tok: &[u8]) -> Option<Self> {
        parse_i128(tok).map(|v| f16::from_f64(v as f64))
    }
    fn parse_real(tok: &[u8]) -> Option<Self> {
        fast_float2::parse::<f64, _>(tok).ok().map(f16::from_f64)
    }
    fn one() -> Self {
        f16::ONE
    }
    fn neg(self) -> Option<Self> {
        Some(-self)
    }
    fn same(self, other: Self) -> bool {
        self == other || (self.is_nan() && other.is_nan())
    }
    fn write_text(self, out: &mut Vec<u8>) {
        // every f16 is an f32; the shortest f32 text reads back to the same f16
        self.to_f32().write_text(out)
    }
}

/// Append `n` in decimal.
#[inline]
pub(crate) fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Whether `a` comes strictly before `b` (same lengths), comparing in order.
#[inline(always)]
fn less<'a>(a: impl Iterator<Item = &'a i64>, b: impl Iterator<Item = &'a i64>) -> bool {
    for (x, y) in a.zip(b) {
        if x != y {
            return x < y;
        }
    }
    false
}

/// Maps entry numbers back to line numbers without storing one per entry: entries
/// normally sit on consecutive lines, so only the places where that stops being
/// true (a comment or blank line in the data) are recorded.
#[derive(Default)]
pub(crate) struct LineMap {
    /// `(entry, line)`: entry `k >= entry` sits on line `line + (k - entry)` up to
    /// the next jump.
    jumps: Vec<(usize, u64)>,
}

impl LineMap {
    #[inline]
    pub(crate) fn note(&mut self, entry: usize, line: u64) {
        match self.jumps.last() {
            Some(&(e, l)) if l + (entry - e) as u64 == line => {}
            _ => self.jumps.push((entry, line)),
        }
    }

    pub(crate) fn line(&self, entry: usize) -> u64 {
        let i = self.jumps.partition_point(|&(e, _)| e <= entry);
        match i.checked_sub(1).and_then(|i| self.jumps.get(i)) {
            Some(&(e, l)) => l + (entry - e) as u64,
            None => 0,
        }
    }
}

/// Parsed coordinate entries: 0-based coordinates (row-major, `ndim` per entry)
/// and values, with the order they arrived in tracked on the fly.
pub(crate) struct Entries<V> {
    pub(crate) ndim: usize,
    pub(crate) coords: Vec<i64>,
    pub(crate) values: Vec<V>,
    /// Strictly increasing in lexicographic (row-major) order so far.
    pub(crate) sorted_lex: bool,
    /// Strictly increasing in colexicographic (column-major) order so far.
    pub(crate) sorted_colex: bool,
    pub(crate) lines: LineMap,
}

impl<V: TextValue> Entries<V> {
    /// Reserve for `expected` entries, at most [`MAX_RESERVE`] up front.
    pub(crate) fn new(ndim: usize, expected: Option<u64>) -> Self {
        let n = expected.map_or(0, |e| e.min(MAX_RESERVE as u64) as usize);
        Entries {
            ndim,
            coords: Vec::with_capacity(n * ndim),
            values: Vec::with_capacity(n),
            sorted_lex: true,
            sorted_colex: true,
            lines: LineMap::default(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    #[inline]
    pub(crate) fn push(&mut self, c: &[i64], v: V, line: u64) {
        let n = self.values.len();
        if n > 0 && (self.sorted_lex || self.sorted_colex) {
            let prev = &self.coords[self.coords.len() - self.ndim..];
            if self.sorted_lex {
                self.sorted_lex = less(prev.iter(), c.iter());
            }
            if self.sorted_colex {
                self.sorted_colex = less(prev.iter().rev(), c.iter().rev());
            }
        }
        for &x in c {
            self.coords.push(x);
        }
        self.values.push(v);
        self.lines.note(n, line);
    }

    fn coord(&self, k: usize) -> &[i64] {
        &self.coords[k * self.ndim..(k + 1) * self.ndim]
    }

    /// Apply the duplicate policy. Entries sorted in either order have no
    /// duplicates (O(1)); otherwise the entries are sorted by coordinates (an index
    /// permutation, O(nnz log nnz)). `Sum` leaves them sorted and merged
    /// (canonical); `Error` reports the first repeated entry in file order with
    /// both line numbers; `Keep` does nothing. `describe` formats the coordinates
    /// of an entry for the message (1-based, as in the file).
    pub(crate) fn apply_duplicates(
        &mut self,
        policy: Duplicates,
        name: &str,
        describe: &dyn Fn(&[i64]) -> String,
    ) -> Result<()> {
        if policy == Duplicates::Keep || self.sorted_lex || self.sorted_colex {
            return Ok(());
        }
        match policy {
            Duplicates::Keep => Ok(()),
            Duplicates::Error => match self.first_duplicate() {
                None => Ok(()),
                Some((a, b)) => Err(line_error(
                    name,
                    self.lines.line(b),
                    format!(
                        "duplicate entry {}: the same coordinates as line {} \
                         (read with duplicates = sum to add them, or keep to keep both)",
                        describe(self.coord(b)),
                        self.lines.line(a)
                    ),
                )),
            },
            Duplicates::Sum => {
                let (perm, eq_prev) = self.sorted_permutation();
                let mut coords = Vec::with_capacity(self.coords.len());
                let mut values: Vec<V> = Vec::with_capacity(self.values.len());
                for (&k, &dup) in perm.iter().zip(&eq_prev) {
                    let k = k as usize;
                    if dup {
                        let last = values.len() - 1;
                        values[last] =
                            values[last].checked_sum(self.values[k]).ok_or_else(|| {
                                line_error(
                                    name,
                                    self.lines.line(k),
                                    format!(
                                        "the sum of the duplicate entries {} overflows {}",
                                        describe(self.coord(k)),
                                        V::TYPE.name()
                                    ),
                                )
                            })?;
                    } else {
                        coords.extend_from_slice(self.coord(k));
                        values.push(self.values[k]);
                    }
                }
                self.coords = coords;
                self.values = values;
                self.sorted_lex = true;
                self.lines = LineMap::default();
                Ok(())
            }
        }
    }

    /// Bits needed per dimension by the largest coordinate.
    fn coord_bits(&self) -> Vec<u32> {
        let mut bits = vec![0u32; self.ndim];
        for row in self.coords.chunks_exact(self.ndim) {
            for (b, &x) in bits.iter_mut().zip(row) {
                *b = (*b).max(64 - (x as u64).leading_zeros());
            }
        }
        bits
    }

    /// The first entry (in file order) that repeats an earlier entry's
    /// coordinates, with that earlier entry: `(earlier, repeat)`. Coordinates
    /// packed into one integer are radix sorted (no entry numbers carried along);
    /// only when a key repeats does a second pass look for the entries.
    fn first_duplicate(&self) -> Option<(usize, usize)> {
        let bits = self.coord_bits();
        let total: u32 = bits.iter().sum();
        if total <= 64 {
            let pack = |row: &[i64]| {
                bits.iter()
                    .zip(row)
                    .fold(0u64, |key, (&b, &x)| (key << b) | x as u64)
            };
            return self.first_duplicate_packed(total, pack);
        }
        if total <= 128 {
            let pack = |row: &[i64]| {
                bits.iter()
                    .zip(row)
                    .fold(0u128, |key, (&b, &x)| (key << b) | x as u128)
            };
            return self.first_duplicate_packed(total, pack);
        }
        let (perm, eq_prev) = self.sorted_permutation();
        let mut first: Option<(usize, usize)> = None;
        for (i, _) in eq_prev.iter().enumerate().filter(|&(_, &e)| e) {
            let (a, b) = (perm[i - 1] as usize, perm[i] as usize);
            if first.is_none_or(|(_, s)| b < s) {
                first = Some((a, b));
            }
        }
        first
    }

    fn first_duplicate_packed<K: RadixKey + Ord>(
        &self,
        bits: u32,
        pack: impl Fn(&[i64]) -> K,
    ) -> Option<(usize, usize)> {
        let mut keys: Vec<K> = self.coords.chunks_exact(self.ndim).map(&pack).collect();
        radix_sort(&mut keys, bits);
        let mut repeated: Vec<K> = keys
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0])
            .collect();
        if repeated.is_empty() {
            return None;
        }
        repeated.dedup();
        drop(keys);
        // entries whose key repeats, in file order: the first seen twice wins
        let mut seen: Vec<Option<usize>> = vec![None; repeated.len()];
        for (k, row) in self.coords.chunks_exact(self.ndim).enumerate() {
            if let Ok(i) = repeated.binary_search(&pack(row)) {
                match seen[i] {
                    Some(a) => return Some((a, k)),
                    None => seen[i] = Some(k),
                }
            }
        }
        None
    }

    /// Entry numbers sorted by coordinates (ties by entry number), and for each
    /// position whether its coordinates equal the previous one's.
    fn sorted_permutation(&self) -> (Vec<u64>, Vec<bool>) {
        let (n, nd) = (self.len(), self.ndim);
        // Coordinates and entry number packed into one integer key when they fit
        // in 128 bits (radix sorted), else a comparison sort.
        let bits = self.coord_bits();
        let total: u32 = bits.iter().sum();
        let idx_bits = 64 - (n as u64).leading_zeros();
        if total + idx_bits <= 64 {
            let mut keys: Vec<u64> = self
                .coords
                .chunks_exact(nd)
                .enumerate()
                .map(|(k, row)| {
                    let mut key = 0u64;
                    for (&b, &x) in bits.iter().zip(row) {
                        key = (key << b) | x as u64;
                    }
                    (key << idx_bits) | k as u64
                })
                .collect();
            radix_sort(&mut keys, total + idx_bits);
            return split_keys(&keys, idx_bits);
        }
        if total + idx_bits <= 128 {
            let mut keys: Vec<u128> = self
                .coords
                .chunks_exact(nd)
                .enumerate()
                .map(|(k, row)| {
                    let mut key = 0u128;
                    for (&b, &x) in bits.iter().zip(row) {
                        key = (key << b) | x as u128;
                    }
                    (key << idx_bits) | k as u128
                })
                .collect();
            radix_sort(&mut keys, total + idx_bits);
            return split_keys(&keys, idx_bits);
        }
        let mut perm: Vec<u64> = (0..n as u64).collect();
        perm.sort_unstable_by(|&a, &b| {
            self.coord(a as usize)
                .cmp(self.coord(b as usize))
                .then(a.cmp(&b))
        });
        let eq = std::iter::once(false)
            .chain(
                perm.windows(2)
                    .map(|w| self.coord(w[0] as usize) == self.coord(w[1] as usize)),
            )
            .collect();
        (perm, eq)
    }

    /// Whether the entries are sorted lexicographically without duplicates.
    pub(crate) fn is_canonical(&self) -> bool {
        self.sorted_lex
    }
}

/// An unsigned key for [`radix_sort`].
trait RadixKey: Copy + Default {
    fn digit(self, shift: u32) -> usize;
    fn high(self, idx_bits: u32) -> Self;
    fn low(self, idx_bits: u32) -> u64;
}

impl RadixKey for u64 {
    #[inline(always)]
    fn digit(self, shift: u32) -> usize {
        ((self >> shift) & 0x7ff) as usize
    }
    #[inline(always)]
    fn high(self, idx_bits: u32) -> Self {
        self.checked_shr(idx_bits).unwrap_or(0)
    }
    #[inline(always)]
    fn low(self, idx_bits: u32) -> u64 {
        self & u64::MAX.checked_shr(64 - idx_bits).unwrap_or(0)
    }
}

impl RadixKey for u128 {
    #[inline(always)]
    fn digit(self, shift: u32) -> usize {
        ((self >> shift) & 0x7ff) as usize
    }
    #[inline(always)]
    fn high(self, idx_bits: u32) -> Self {
        self.checked_shr(idx_bits).unwrap_or(0)
    }
    #[inline(always)]
    fn low(self, idx_bits: u32) -> u64 {
        (self as u64) & u64::MAX.checked_shr(64 - idx_bits).unwrap_or(0)
    }
}

/// LSD radix sort on 11-bit digits of the low `bits` bits; digits every key
/// shares are skipped.
fn radix_sort<K: RadixKey>(keys: &mut Vec<K>, bits: u32) {
    const RADIX: usize = 1 << 11;
    let mut tmp = vec![K::default(); keys.len()];
    let mut shift = 0;
    while shift < bits {
        let mut offsets = vec![0usize; RADIX];
        for &k in keys.iter() {
            offsets[k.digit(shift)] += 1;
        }
        if offsets.contains(&keys.len()) {
            shift += 11;
            continue;
        }
        let mut acc = 0;
        for o in offsets.iter_mut() {
            let c = *o;
            *o = acc;
            acc += c;
        }
        for &k in keys.iter() {
            let o = &mut offsets[k.digit(shift)];
            tmp[*o] = k;
            *o += 1;
        }
        std::mem::swap(keys, &mut tmp);
        shift += 11;
    }
}

/// Sorted packed keys to (entry numbers, equal to the previous coordinates).
fn split_keys<K: RadixKey + PartialEq>(keys: &[K], idx_bits: u32) -> (Vec<u64>, Vec<bool>) {
    let perm = keys.iter().map(|k| k.low(idx_bits)).collect();
    let eq = std::iter::once(false)
        .chain(
            keys.windows(2)
                .map(|w| w[0].high(idx_bits) == w[1].high(idx_bits)),
        )
        .collect();
    (perm, eq)
}

/// Whether row-major coordinates are strictly increasing lexicographically.
pub(crate) fn strictly_sorted(coords: &[i64], ndim: usize) -> bool {
    ndim > 0
        && coords
            .chunks_exact(ndim)
            .zip(coords.chunks_exact(ndim).skip(1))
            .all(|(a, b)| a < b)
}

/// Format 0-based coordinates 1-based: `(3, 4)`.
pub(crate) fn one_based(c: &[i64]) -> String {
    let parts: Vec<String> = c.iter().map(|x| (x + 1).to_string()).collect();
    format!("({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_on_lf_and_crlf_and_keep_a_last_partial_line() {
        let data = b"a b\r\n\nc\nlast";
        let mut l = Lines::new(&data[..], "x");
        let mut got = Vec::new();
        while let Some((n, line)) = l.next_line().unwrap() {
            got.push((n, line.to_vec()));
        }
        assert_eq!(
            got,
            vec![
                (1, b"a b".to_vec()),
                (2, b"".to_vec()),
                (3, b"c".to_vec()),
                (4, b"last".to_vec())
            ]
        );
    }

    #[test]
    fn integers_are_checked() {
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"99999999999999999999"), None);
        assert_eq!(parse_u64(b"12a"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_i128(b"-5"), Some(-5));
        assert_eq!(i8::parse_int(b"-129"), None);
        assert_eq!(u8::parse_int(b"255"), Some(255));
        assert_eq!(i32::parse_real(b"1.5"), None);
        assert_eq!(f64::parse_real(b"1.5e3"), Some(1500.0));
        assert_eq!(f64::parse_real(b"+2"), Some(2.0));
        assert!(f64::parse_real(b"nan").unwrap().is_nan());
        assert_eq!(f64::parse_real(b"1.5x"), None);
        assert_eq!(f64::parse_int(b"1.5"), None);
    }

    #[test]
    fn unsigned_tokens_parse_like_the_careful_parser() {
        let mut cases: Vec<Vec<u8>> = vec![];
        for s in [
            "0",
            "7",
            "12",
            "1234567",
            "12345678",
            "123456789",
            "1234567890123456",
            "12345678901234567",
            "1234567890123456789",
            "9999999999999999999",
            "18446744073709551615",
            "18446744073709551616",
            "123456789012345678901",
            "00000000000000000000000042",
            "12a",
            "a1",
            "-1",
            "+1",
            "1.5",
            "",
            "  ",
            "1\x7f",
            "9\u{00e9}",
            "1:",
            "5/",
            "/5",
            "0x10",
        ] {
            cases.push(s.as_bytes().to_vec());
        }
        // every byte after a digit, and digit strings of every length
        for b in 0..=255u8 {
            cases.push(vec![b'3', b, b'4']);
            cases.push(vec![b]);
        }
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (x >> 59) as usize;
            cases.push(
                (0..len)
                    .map(|i| b'0' + ((x >> (i * 2)) % 10) as u8)
                    .collect(),
            );
        }
        for c in cases {
            let mut line = c.clone();
            line.extend_from_slice(b" 5");
            let got = Tokens::new(&line).next_u64();
            let tok = Tokens::new(&line).next_token();
            let want = match tok {
                None => Err(None),
                Some(t) => parse_u64(t).ok_or(Some(t)),
            };
            assert_eq!(got, want, "{}", show(&c));
            // the cursor stands after the token
            let mut t = Tokens::new(&line);
            let single = !c.is_empty() && !c.iter().any(|&b| is_space(b));
            if t.next_u64().is_ok() && single {
                assert_eq!(t.next_u64(), Ok(5), "{}", show(&c));
            }
        }
    }

    #[test]
    fn floats_write_shortest_round_trip_text() {
        for v in [
            0.1f64,
            -1e-300,
            1e300,
            123456789.0,
            f64::MIN_POSITIVE,
            5e-324,
        ] {
            let mut out = Vec::new();
            v.write_text(&mut out);
            assert_eq!(f64::parse_real(&out), Some(v), "{}", show(&out));
        }
        let mut out = Vec::new();
        f16::from_f32(0.1).write_text(&mut out);
        assert_eq!(f16::parse_real(&out), Some(f16::from_f32(0.1)));
    }

    #[test]
    fn line_map_recovers_line_numbers() {
        let mut m = LineMap::default();
        for (k, l) in [(0, 5), (1, 6), (2, 9), (3, 10), (4, 12)] {
            m.note(k, l);
        }
        assert_eq!(
            (0..5).map(|k| m.line(k)).collect::<Vec<_>>(),
            [5, 6, 9, 10, 12]
        );
    }

    #[test]
    fn duplicates_are_found_summed_or_kept() {
        let mut e = Entries::<f64>::new(2, Some(10));
        for (k, (c, v)) in [([2, 1], 1.0), ([0, 0], 2.0), ([2, 1], 3.0), ([1, 1], 4.0)]
            .iter()
            .enumerate()
        {
            e.push(c, *v, k as u64 + 3);
        }
        let err = e
            .apply_duplicates(Duplicates::Error, "f", &|c| one_based(c))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("f:5") && err.contains("(3, 2)") && err.contains("line 3"),
            "{err}"
        );
        e.apply_duplicates(Duplicates::Sum, "f", &|c| one_based(c))
            .unwrap();
        assert_eq!(e.coords, [0, 0, 1, 1, 2, 1]);
        assert_eq!(e.values, [2.0, 4.0, 4.0]);
        assert!(e.is_canonical());
    }
}
