//! The cache sizes kernels size their blocks from, read at run time.
//!
//! # The rule
//!
//! No kernel carries a block size tuned to one machine. The scatter kernels
//! (CSR <-> CSC, COO -> CSR / CSC, the column sums) work in two passes when their
//! output does not fit in half of the last-level cache: the first pass partitions
//! the entries by destination block, and the second scatters one block at a time,
//! with blocks sized so that one block's output fits in half of the (per-core) L2
//! cache (see [`kernels::convert`](super::convert)). Sizes come from
//! [`cache_sizes`], read once per process:
//!
//! 1. the environment variables `ARROW_SPARSE_L1_BYTES`, `ARROW_SPARSE_L2_BYTES`
//!    and `ARROW_SPARSE_LLC_BYTES` when set (plain numbers, or with a `K` / `M` /
//!    `G` suffix), to reproduce another machine's blocking;
//! 2. else, on Linux, `/sys/devices/system/cpu/cpu0/cache/index*/` (`level`,
//!    `type` and `size` of each data or unified cache);
//! 3. else 32 KiB, 256 KiB and 8 MiB.
//!
//! Every figure is clamped to a sane range (L1 4 KiB - 1 MiB, L2 64 KiB -
//! 64 MiB, last level 256 KiB - 4 GiB), so a strange report cannot make a block
//! empty or absurdly large. Results never depend on these sizes: only the order
//! of memory accesses does.
//!
//! ```
//! use arrow_sparse::kernels::cache::cache_sizes;
//! let c = cache_sizes();
//! assert!(c.l1 <= c.l2 && c.l2 <= c.llc);
//! assert!(c.l1 >= 4 << 10 && c.llc <= 4 << 30);
//! ```

use std::sync::OnceLock;

/// Data cache sizes in bytes (see the [module docs](self) for where they come
/// from).
///
/// ```
/// use arrow_sparse::kernels::cache::{cache_sizes, CacheSizes};
/// let CacheSizes { l1, l2, llc } = cache_sizes();
/// println!("L1d {l1} B, L2 {l2} B, last level {llc} B");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSizes {
    /// The level-1 data cache of one core.
    pub l1: usize,
    /// The level-2 cache of one core.
    pub l2: usize,
    /// The last-level cache (shared by the cores of one socket or complex).
    pub llc: usize,
}

const DEFAULT: CacheSizes = CacheSizes {
    l1: 32 << 10,
    l2: 256 << 10,
    llc: 8 << 20,
};

/// Parse `32K`, `32768K`, `1M`, `2G` or a plain byte count.
fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1usize << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<usize>().ok()?.checked_mul(mult)
}

/// The data / unified caches of cpu0 from sysfs: (level, bytes).
fn from_sysfs() -> Vec<(u32, usize)> {
    let mut out = Vec::new();
    let base = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    for i in 0..16 {
        let dir = base.join(format!("index{i}"));
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        if kind.trim() == "Instruction" {
            continue;
        }
        if let (Ok(level), Some(size)) = (level.trim().parse::<u32>(), parse_size(&size)) {
            out.push((level, size));
        }
    }
    out
}

fn detect() -> CacheSizes {
    let mut c = DEFAULT;
    let caches = from_sysfs();
    let level = |l: u32| caches.iter().find(|&&(x, _)| x == l).map(|&(_, s)| s);
    if let Some(s) = level(1) {
        c.l1 = s;
    }
    if let Some(s) = level(2) {
        c.l2 = s;
    }
    if let Some(&(_, s)) = caches
        .iter()
        .max_by_key(|&&(l, _)| l)
        .filter(|&&(l, _)| l >= 2)
    {
        c.llc = s;
    }
    let env = |name: &str| std::env::var(name).ok().and_then(|v| parse_size(&v));
    if let Some(s) = env("ARROW_SPARSE_L1_BYTES") {
        c.l1 = s;
    }
    if let Some(s) = env("ARROW_SPARSE_L2_BYTES") {
        c.l2 = s;
    }
    if let Some(s) = env("ARROW_SPARSE_LLC_BYTES") {
        c.llc = s;
    }
    c.l1 = c.l1.clamp(4 << 10, 1 << 20);
    c.l2 = c.l2.clamp(64 << 10, 64 << 20).max(c.l1);
    c.llc = c.llc.clamp(256 << 10, 4 << 30).max(c.l2);
    c
}

/// The cache sizes of this machine (read once; see the [module docs](self)).
///
/// ```
/// use arrow_sparse::kernels::cache::cache_sizes;
/// // the same figures on every call
/// assert_eq!(cache_sizes(), cache_sizes());
/// ```
pub fn cache_sizes() -> CacheSizes {
    static SIZES: OnceLock<CacheSizes> = OnceLock::new();
    *SIZES.get_or_init(detect)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_are_sane() {
        assert_eq!(parse_size("32K\n"), Some(32 << 10));
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("105M"), Some(105 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size(""), None);
        let c = cache_sizes();
        assert!(c.l1 <= c.l2 && c.l2 <= c.llc, "{c:?}");
    }
}
