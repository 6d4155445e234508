//! The last-resort isolation of dependencies that panic on hostile input.
//!
//! The readers validate what they hand to arrow-ipc and the parquet crate (block
//! and buffer ranges, node counts, page headers, sizes), so that the known panics
//! of those crates are not reached (`fuzz/FINDINGS.md` lists them, with the input
//! and the crate version). Decoders as deep as Parquet's page decoders can still
//! panic on input no pre-check describes; [`guard`] runs such a call under
//! `catch_unwind` and turns a panic into a typed error. Only calls into a
//! dependency are guarded, never this crate's own code, which must not panic.
//!
//! A caught panic still goes through the process's panic hook, which by default
//! prints it. [`crate::error::install_panic_hook`] installs a hook that stays
//! silent for panics caught here (and only those): the CLI uses it.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::{Error, Result};

thread_local! {
    /// How many guarded calls are running on this thread.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Whether the current thread is inside a guarded dependency call.
pub(crate) fn active() -> bool {
    DEPTH.try_with(Cell::get).unwrap_or(0) > 0
}

/// Which dependency a guarded call runs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Dependency {
    /// The parquet crate.
    #[cfg(feature = "parquet")]
    Parquet,
    /// arrow-ipc (and the arrow-data validation it calls).
    ArrowIpc,
}

/// Run `f`, a call into `dep` decoding `what`, turning a panic inside it into an
/// error ([`Error::Parquet`] or [`Error::Arrow`]). The closure's effects before
/// the panic remain; callers drop whatever it was decoding.
pub(crate) fn guard<T>(dep: Dependency, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    struct Depth;
    impl Drop for Depth {
        fn drop(&mut self) {
            let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
    let _ = DEPTH.try_with(|d| d.set(d.get() + 1));
    let depth = Depth;
    let r = catch_unwind(AssertUnwindSafe(f));
    drop(depth);
    match r {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(match dep {
                #[cfg(feature = "parquet")]
                Dependency::Parquet => Error::Parquet(::parquet::errors::ParquetError::General(
                    format!("malformed {what}: the decoder failed ({msg})"),
                )),
                Dependency::ArrowIpc => Error::Arrow(arrow_schema::ArrowError::IpcError(format!(
                    "malformed {what}: the arrow-ipc decoder failed ({msg})"
                ))),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_a_guarded_call_is_an_error_and_the_depth_is_restored() {
        let mut state = vec![1, 2, 3];
        assert!(!active());
        let r: Result<i32> = guard(Dependency::ArrowIpc, "record batch", || {
            assert!(active());
            state.push(4);
            let i = state.len();
            Ok(state[i])
        });
        match r {
            Err(Error::Arrow(e)) => assert!(
                e.to_string().contains("malformed record batch")
                    && e.to_string().contains("index out of bounds"),
                "{e}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(!active());
        assert_eq!(state, [1, 2, 3, 4]);
        assert_eq!(guard(Dependency::ArrowIpc, "x", || Ok(7)).unwrap(), 7);
        // nested guards
        let r: Result<()> = guard(Dependency::ArrowIpc, "outer", || {
            guard(Dependency::ArrowIpc, "inner", || Ok(()))?;
            assert!(active());
            Ok(())
        });
        assert!(r.is_ok() && !active());
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn a_parquet_panic_is_a_parquet_error() {
        let r: Result<()> = guard(Dependency::Parquet, "row group", || {
            let v: Vec<u8> = Vec::new();
            let _ = v[usize::MAX - v.len()];
            Ok(())
        });
        assert!(
            matches!(&r, Err(Error::Parquet(e)) if e.to_string().contains("malformed row group")),
            "{r:?}"
        );
    }
}
