//! How much memory a reader may use, relative to the bytes it reads.
//!
//! A file of a few bytes can declare a matrix of 2^40 rows, a Parquet page of
//! 2 GiB, a dictionary of 4·10^8 entries or a broadcast that repeats every stored
//! entry 65,536 times. Every reader of this crate (IPC messages and streams, the
//! memory-mapped reader, Parquet archives and tables, sparse tensor columns, npz,
//! Matrix Market, FROSTT) therefore computes what a declared size would cost
//! **before** allocating it and refuses it with [`Error::Limit`] when it is more
//! than the reader's [`ReadLimit`] allows. The default allows 16 bytes of output
//! per byte of input, and never less than 64 MiB (`format/SPEC.md`, section 11
//! gives the rule per file kind); a caller that expects more (a matrix with many
//! empty rows, highly compressed data) raises it explicitly in the read options.
//!
//! ```
//! use arrow_sparse::limit::ReadLimit;
//! let limit = ReadLimit::default();
//! assert_eq!(limit.budget(1_000), 64 << 20); // the floor
//! assert_eq!(limit.budget(1 << 30), 16 << 30); // 16 x the input
//! assert_eq!(ReadLimit::bytes(4096).budget(1 << 30), 4096);
//! assert_eq!(ReadLimit::UNLIMITED.budget(0), u64::MAX);
//! ```

use crate::error::{Error, Result};

/// A memory budget for reading one input: the most bytes a reader may allocate
/// for what it decodes from `n` input bytes.
///
/// ```
/// use arrow_sparse::limit::ReadLimit;
/// let relative = ReadLimit::relative(4, 1 << 20);
/// assert_eq!(relative.budget(10), 1 << 20); // small inputs get the floor
/// assert_eq!(relative.budget(1 << 30), 4 << 30);
/// assert!(relative.check("a tiny file's indptr", 2 << 20, 10).is_err());
/// assert!(relative.check("a tiny file's indptr", 1 << 20, 10).is_ok());
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadLimit {
    /// At most `ratio` bytes per input byte, and at least `floor` bytes whatever
    /// the input's size.
    Relative {
        /// Bytes allowed per input byte.
        ratio: u64,
        /// Bytes allowed for any input, however small.
        floor: u64,
    },
    /// At most this many bytes, whatever the input's size.
    Bytes(u64),
}

impl Default for ReadLimit {
    /// [`ReadLimit::DEFAULT`]: 16 × the input, at least 64 MiB.
    fn default() -> Self {
        ReadLimit::DEFAULT
    }
}

impl ReadLimit {
    /// Default bytes allowed per input byte.
    ///
    /// ```
    /// use arrow_sparse::limit::ReadLimit;
    /// assert_eq!(ReadLimit::DEFAULT.budget(1 << 30), ReadLimit::DEFAULT_RATIO << 30);
    /// ```
    pub const DEFAULT_RATIO: u64 = 16;
    /// Default budget of any input, however small (64 MiB, the preallocation cap
    /// of arrow-rs's IPC reader).
    ///
    /// ```
    /// use arrow_sparse::limit::ReadLimit;
    /// assert_eq!(ReadLimit::DEFAULT.budget(0), ReadLimit::DEFAULT_FLOOR);
    /// ```
    pub const DEFAULT_FLOOR: u64 = 64 << 20;
    /// The default: 16 × the input, at least 64 MiB.
    ///
    /// ```
    /// use arrow_sparse::limit::ReadLimit;
    /// assert_eq!(ReadLimit::DEFAULT, ReadLimit::relative(16, 64 << 20));
    /// ```
    pub const DEFAULT: ReadLimit = ReadLimit::Relative {
        ratio: Self::DEFAULT_RATIO,
        floor: Self::DEFAULT_FLOOR,
    };
    /// No limit (for trusted files only: a hostile file can then make the reader
    /// ask for any amount of memory).
    ///
    /// ```
    /// use arrow_sparse::limit::ReadLimit;
    /// assert!(ReadLimit::UNLIMITED.check("anything", u64::MAX, 0).is_ok());
    /// ```
    pub const UNLIMITED: ReadLimit = ReadLimit::Bytes(u64::MAX);

    /// `ratio` bytes per input byte, at least `floor` bytes.
    ///
    /// ```
    /// use arrow_sparse::limit::ReadLimit;
    /// assert_eq!(ReadLimit::relative(2, 100).budget(1000), 2000);
    /// ```
    pub const fn relative(ratio: u64, floor: u64) -> Self {
        ReadLimit::Relative { ratio, floor }
    }

    /// At most `n` bytes whatever the input's size.
    ///
    /// ```
    /// use arrow_sparse::limit::ReadLimit;
    /// assert_eq!(ReadLimit::bytes(1 << 40).budget(3), 1 << 40);
    /// ```
    pub const fn bytes(n: u64) -> Self {
        ReadLimit::Bytes(n)
    }

    /// The bytes allowed for an input of `input_bytes` bytes.
    ///
    /// ```
    /// use arrow_sparse::limit::ReadLimit;
    /// assert_eq!(ReadLimit::default().budget(100 << 20), 1600 << 20);
    /// assert_eq!(ReadLimit::relative(u64::MAX, 0).budget(2), u64::MAX); // saturates
    /// ```
    pub fn budget(&self, input_bytes: u64) -> u64 {
        match *self {
            ReadLimit::Relative { ratio, floor } => ratio.saturating_mul(input_bytes).max(floor),
            ReadLimit::Bytes(n) => n,
        }
    }

    /// `Ok` when `needed` bytes fit the budget of an input of `input_bytes`
    /// bytes, else [`Error::Limit`] naming `what`.
    ///
    /// ```
    /// use arrow_sparse::{limit::ReadLimit, Error};
    /// let err = ReadLimit::bytes(10).check("the indptr of t.parquet", 11, 5).unwrap_err();
    /// assert!(matches!(err, Error::Limit { needed: 11, limit: 10, .. }));
    /// assert!(err.to_string().contains("the indptr of t.parquet"));
    /// ```
    pub fn check(&self, what: impl Into<String>, needed: u64, input_bytes: u64) -> Result<()> {
        let limit = self.budget(input_bytes);
        if needed <= limit {
            Ok(())
        } else {
            Err(Error::Limit {
                what: what.into(),
                needed,
                limit,
            })
        }
    }
}
