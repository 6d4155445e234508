//! Atomic file writes: everything goes to a temporary file in the destination's
//! directory, which is synced and then renamed over the destination, so that a
//! failed write never leaves a partial file there. Every writer of the crate (IPC
//! streams, text and npz files, sparse tensor columns) goes through
//! [`write_atomic`]; the Parquet writer, which streams row groups over many calls,
//! holds its own temporary file the same way.

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};

/// Run `f` on a temporary file next to `path`, then sync it and rename it to
/// `path`. When `f` fails, the temporary file is removed and `path` is untouched.
pub(crate) fn write_atomic(path: &Path, f: impl FnOnce(&mut File) -> Result<()>) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    f(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| Error::Io(e.error))?;
    Ok(())
}
