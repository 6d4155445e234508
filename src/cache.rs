//! The machine's cache sizes, read once at run time. Kernels that block or
//! partition their work (the radix scatter of [`kernels::convert`](crate::kernels::convert)) size
//! their blocks from these figures and from the data, never from constants tuned
//! on one machine.
//!
//! Source: Linux sysfs, `/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}`
//! (data or unified caches only). Where that is not readable (other systems,
//! restricted containers) the documented fallback is a 32 KiB level-1 data cache, a
//! 256 KiB level-2 cache and an 8 MiB last-level cache: small figures on purpose,
//! because blocks sized for a smaller cache than the real one cost only a few more
//! partitions, while blocks sized for a larger one spill and lose the point of
//! blocking.
//!
//! ```
//! use arrow_sparse::cache::cache_sizes;
//! let c = cache_sizes();
//! assert!(c.l1 > 0 && c.l2 >= 16 * 1024 && c.last_level >= c.l2);
//! ```

use std::sync::OnceLock;

/// Level-1 data cache size assumed when the system does not say (see the module
/// docs).
///
/// ```
/// use arrow_sparse::cache::{CacheSizes, FALLBACK_L1};
/// assert_eq!(CacheSizes::from_sysfs_entries(&[]).l1, FALLBACK_L1);
/// ```
pub const FALLBACK_L1: usize = 32 * 1024;
/// Level-2 size assumed when the system does not say (see the module docs).
///
/// ```
/// use arrow_sparse::cache::{CacheSizes, FALLBACK_L2};
/// assert_eq!(CacheSizes::from_sysfs_entries(&[]).l2, FALLBACK_L2);
/// ```
pub const FALLBACK_L2: usize = 256 * 1024;
/// Last-level size assumed when the system does not say (see the module docs).
///
/// ```
/// use arrow_sparse::cache::{CacheSizes, FALLBACK_LAST_LEVEL};
/// assert_eq!(CacheSizes::from_sysfs_entries(&[]).last_level, FALLBACK_LAST_LEVEL);
/// ```
pub const FALLBACK_LAST_LEVEL: usize = 8 * 1024 * 1024;

/// Data cache sizes of one core, in bytes.
///
/// ```
/// use arrow_sparse::cache::CacheSizes;
/// let c = CacheSizes::from_sysfs_entries(&[(1, "Data", "48K"), (2, "Unified", "512K"), (3, "Unified", "32768K")]);
/// assert_eq!((c.l1, c.l2, c.last_level, c.from_system), (48 * 1024, 512 * 1024, 32 << 20, true));
/// let none = CacheSizes::from_sysfs_entries(&[]);
/// assert!(!none.from_system);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSizes {
    /// The level-1 (per-core) data cache.
    pub l1: usize,
    /// The level-2 (per-core) data or unified cache.
    pub l2: usize,
    /// The largest (last-level) data or unified cache, shared or not.
    pub last_level: usize,
    /// `true` when the figures come from the system, `false` for the fallback.
    pub from_system: bool,
}

impl CacheSizes {
    /// Sizes from `(level, type, size)` triples as sysfs spells them (`"512K"`,
    /// `"32M"`, `"Data"`, `"Unified"`, `"Instruction"`); the fallback for what is
    /// missing.
    ///
    /// ```
    /// use arrow_sparse::cache::{CacheSizes, FALLBACK_L2};
    /// let c = CacheSizes::from_sysfs_entries(&[(3, "Unified", "16M")]);
    /// assert_eq!((c.l2, c.last_level), (FALLBACK_L2, 16 << 20));
    /// ```
    pub fn from_sysfs_entries(entries: &[(u32, &str, &str)]) -> CacheSizes {
        let mut l1 = None;
        let mut l2 = None;
        let mut last: Option<(u32, usize)> = None;
        for &(level, kind, size) in entries {
            if kind.eq_ignore_ascii_case("instruction") {
                continue;
            }
            let Some(bytes) = parse_size(size) else {
                continue;
            };
            if level == 1 {
                l1 = Some(l1.map_or(bytes, |b: usize| b.max(bytes)));
            }
            if level == 2 {
                l2 = Some(l2.map_or(bytes, |b: usize| b.max(bytes)));
            }
            if last.is_none_or(|(l, _)| level > l) {
                last = Some((level, bytes));
            }
        }
        let from_system = l1.is_some() || l2.is_some() || last.is_some();
        let l1 = l1.unwrap_or(FALLBACK_L1);
        let l2 = l2.unwrap_or(FALLBACK_L2);
        let last_level = last.map_or(FALLBACK_LAST_LEVEL, |(_, b)| b).max(l2);
        CacheSizes {
            l1,
            l2,
            last_level,
            from_system,
        }
    }
}

/// `"512K"`, `"32M"`, `"1G"` or plain bytes.
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

fn read_sysfs() -> CacheSizes {
    let mut owned: Vec<(u32, String, String)> = Vec::new();
    for i in 0..16 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        if let Ok(level) = level.trim().parse::<u32>() {
            owned.push((level, kind.trim().to_string(), size.trim().to_string()));
        }
    }
    let entries: Vec<(u32, &str, &str)> = owned
        .iter()
        .map(|(l, k, s)| (*l, k.as_str(), s.as_str()))
        .collect();
    CacheSizes::from_sysfs_entries(&entries)
}

/// This machine's cache sizes (read once, then cached for the process).
///
/// ```
/// use arrow_sparse::cache::cache_sizes;
/// let c = cache_sizes();
/// println!("L1 {} bytes, L2 {} bytes, last level {} bytes", c.l1, c.l2, c.last_level);
/// ```
pub fn cache_sizes() -> CacheSizes {
    static SIZES: OnceLock<CacheSizes> = OnceLock::new();
    *SIZES.get_or_init(read_sysfs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_fall_back() {
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
        let c = CacheSizes::from_sysfs_entries(&[(1, "Data", "48K"), (2, "Unified", "2048K")]);
        assert_eq!((c.l1, c.l2, c.last_level), (48 << 10, 2 << 20, 2 << 20));
        // the level-1 instruction cache is not the data cache
        let c = CacheSizes::from_sysfs_entries(&[(1, "Instruction", "64K"), (1, "Data", "32K")]);
        assert_eq!((c.l1, c.l2), (32 << 10, FALLBACK_L2));
        let c = CacheSizes::from_sysfs_entries(&[(2, "Instruction", "1M")]);
        assert_eq!(
            c,
            CacheSizes {
                l1: FALLBACK_L1,
                l2: FALLBACK_L2,
                last_level: FALLBACK_LAST_LEVEL,
                from_system: false
            }
        );
        let c = cache_sizes();
        assert!(c.l1 > 0 && c.l2 > 0 && c.last_level >= c.l2);
    }
}
