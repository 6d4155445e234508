//! Atomic file writes: everything goes to a temporary file in the destination's
//! directory, which is synced and then renamed over the destination (and the
//! directory synced, so that the new name is on storage too), so that a
//! failed write never leaves a partial file there. Every writer of the crate (IPC
//! streams, text and npz files, sparse tensor columns) goes through
//! [`write_atomic`]; the Parquet writer, which streams row groups over many calls,
//! holds an [`AtomicFile`] until it finishes.
//!
//! **Temporary files.** The temporary file of `DIR/NAME` is
//! `DIR/.NAME.arrow-sparse-tmp.K`, `K` = 0, 1, ... (one number per writer of the
//! same destination at the same time). Its writer holds an exclusive advisory lock
//! on it (`flock`) for as long as it lives. A writer that is killed (`kill -9`,
//! power loss) leaves its temporary file behind, unlocked: the next write to the
//! same destination takes the lock, sees that nobody holds the file, and removes
//! it; [`remove_stale_temporaries`] does the same for every destination of a
//! folder. A temporary file whose lock is held belongs to a running writer and is
//! never touched.
//!
//! **Modes.** A new file gets the mode `0o666` less the process umask (what
//! `File::create` gives); a replaced file keeps its permission bits.
//!
//! **Errors** name the destination, never the temporary file: `cannot write
//! out/x.arrow: folder out does not exist`, `cannot write x.arrow: Permission
//! denied (os error 13)`. They keep the [`std::io::ErrorKind`] of the failure.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The marker between the destination's name and the writer's number in the name
/// of a temporary file.
const MARKER: &str = ".arrow-sparse-tmp.";

/// How many writers of one destination may run at the same time (each holds one
/// numbered temporary file).
const MAX_WRITERS: usize = 64;

/// Run `f` on a temporary file next to `path`, then sync it and rename it to
/// `path`. When `f` fails, the temporary file is removed and `path` is untouched.
pub(crate) fn write_atomic(path: &Path, f: impl FnOnce(&mut File) -> Result<()>) -> Result<()> {
    write_atomic_with(path, true, f)
}

/// [`write_atomic`], syncing the temporary file before the rename only when
/// `sync` is set (see [`crate::ipc::StreamWriteOptions::sync`]).
pub(crate) fn write_atomic_with(
    path: &Path,
    sync: bool,
    f: impl FnOnce(&mut File) -> Result<()>,
) -> Result<()> {
    let mut tmp = AtomicFile::create(path)?;
    f(tmp.file_mut()).map_err(|e| tmp.name_error(e))?;
    tmp.commit_with(sync)?;
    Ok(())
}

/// A temporary file beside a destination, locked while it lives, renamed over the
/// destination by [`commit`](Self::commit) and removed when dropped uncommitted.
#[derive(Debug)]
pub(crate) struct AtomicFile {
    dest: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    /// Create the temporary file of `dest`, removing the stale ones that killed
    /// writers of `dest` left.
    pub(crate) fn create(dest: &Path) -> Result<AtomicFile> {
        let dir = folder(dest);
        let Some(name) = dest.file_name() else {
            return Err(dest_error(
                dest,
                io::Error::new(io::ErrorKind::InvalidInput, "not a file name"),
            ));
        };
        let mut k = 0;
        let mut reclaimed = 0;
        while k < MAX_WRITERS {
            let tmp = dir.join(temporary_name(name, k));
            match create_new(&tmp) {
                Ok(file) => {
                    // Lock it before anyone can take it for stale; a cleaner may
                    // have locked and removed it in between, so check that the
                    // name is still ours.
                    if lock(&file) != Lock::Busy && same_file(&file, &tmp) {
                        // the stale files of killed writers with higher numbers
                        for j in k + 1..MAX_WRITERS {
                            let other = dir.join(temporary_name(name, j));
                            if other.symlink_metadata().is_ok() {
                                remove_if_stale(&other);
                            }
                        }
                        return Ok(AtomicFile {
                            dest: dest.to_path_buf(),
                            tmp,
                            file: Some(file),
                        });
                    }
                    k += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    // a running writer's (skip it), or a stale one (remove it and
                    // try the same number again)
                    if reclaimed < MAX_WRITERS && remove_if_stale(&tmp) {
                        reclaimed += 1;
                    } else {
                        k += 1;
                    }
                }
                Err(e) => return Err(dest_error(dest, e)),
            }
        }
        Err(dest_error(
            dest,
            io::Error::new(
                io::ErrorKind::ResourceBusy,
                format!(
                    "{MAX_WRITERS} temporary files {} are in use (other writers of the same file)",
                    dir.join(temporary_name(name, 0)).display()
                ),
            ),
        ))
    }

    /// The temporary file.
    pub(crate) fn file(&self) -> &File {
        self.file.as_ref().expect("present until commit or drop")
    }

    /// The temporary file, to write to.
    pub(crate) fn file_mut(&mut self) -> &mut File {
        self.file.as_mut().expect("present until commit or drop")
    }

    /// Write the temporary file through its path with `f`, for libraries that
    /// open files by name and lock them themselves (HDF5 takes an exclusive
    /// `flock` of its own): our lock is released while `f` runs (the library's
    /// lock keeps other writers off meanwhile) and taken again after it;
    /// the file must still be ours then.
    #[cfg_attr(not(feature = "hdf5"), allow(dead_code))]
    pub(crate) fn write_by_path(&mut self, f: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        let file = self.file.as_ref().expect("present until commit or drop");
        let _ = file.unlock();
        // a failed write is its own error (dropping `self` removes the file)
        f(&self.tmp)?;
        let file = self.file.as_ref().expect("present until commit or drop");
        // The library has closed the file, but a child process forked by another
        // thread may still hold a copy of its descriptor, and with it the
        // library's lock, until the child's exec: wait for that to pass.
        let relocked = retry_while_locked(|| match lock(file) {
            Lock::Busy => Err(()),
            other => Ok(other),
        });
        if relocked.is_err() || !same_file(file, &self.tmp) {
            return Err(dest_error(
                &self.dest,
                io::Error::other(format!(
                    "the temporary file {} was taken over by another writer",
                    self.tmp.display()
                )),
            ));
        }
        Ok(())
    }

    /// An I/O error while writing, naming the destination.
    pub(crate) fn name_error(&self, e: Error) -> Error {
        match e {
            Error::Io(io) => dest_error(&self.dest, io),
            other => other,
        }
    }

    /// Sync the temporary file, give it the replaced file's permission bits, and
    /// rename it over the destination. Returns its size in bytes.
    pub(crate) fn commit(self) -> Result<u64> {
        self.commit_with(true)
    }

    /// [`commit`](Self::commit), with the syncs only when `sync` is set: the file
    /// before the rename (its contents are on storage), the directory after it
    /// (the rename is too: after an OS crash or power loss the destination holds
    /// the new file, not the old one).
    pub(crate) fn commit_with(mut self, sync: bool) -> Result<u64> {
        let file = self.file.as_ref().expect("present until commit or drop");
        let result = (|| {
            keep_mode(file, &self.dest)?;
            if sync {
                file.sync_all()?;
            }
            let bytes = file.metadata()?.len();
            std::fs::rename(&self.tmp, &self.dest)?;
            if sync {
                sync_folder(folder(&self.dest))?;
            }
            Ok(bytes)
        })();
        let bytes = result.map_err(|e| dest_error(&self.dest, e))?;
        // Renamed: nothing to remove any more. The lock is released explicitly
        // before the file is closed: a child process forked by another thread
        // holds a copy of the descriptor until its exec, and with it the lock
        // (an flock belongs to the open file description), so a reader opening
        // the destination with a lock of its own (HDF5 does) would find it busy.
        if let Some(file) = self.file.take() {
            let _ = file.unlock();
        }
        Ok(bytes)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            // still locked by us, so nobody else can have taken the name over
            let _ = std::fs::remove_file(&self.tmp);
            drop(file);
        }
    }
}

/// Remove the temporary files that killed writers left in `dir` (files named
/// `.NAME.arrow-sparse-tmp.K` that no running writer holds), and return their
/// paths. Temporary files of running writers (in this or any other process) are
/// left alone.
///
/// Every write of arrow-sparse goes to such a temporary file beside its
/// destination and renames it into place when complete; a writer killed on the
/// way (`kill -9`, power loss) never damages the destination but leaves its
/// temporary file behind. The next write to the same destination removes it by
/// itself; this function cleans a whole folder, e.g. after a crashed batch job.
///
/// ```
/// use arrow_sparse::{io, AnyTensor, CooTensor};
/// let dir = tempfile::tempdir()?;
/// // what a writer of m.mtx killed mid-write leaves behind
/// let stale = dir.path().join(".m.mtx.arrow-sparse-tmp.0");
/// std::fs::write(&stale, b"half a file")?;
/// assert_eq!(io::remove_stale_temporaries(dir.path())?, vec![stale.clone()]);
/// assert!(!stale.exists());
/// // writes clean up after themselves: nothing but the destination is left
/// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![0, 1], 1.0)])?;
/// io::write_path(&dir.path().join("m.mtx"), &AnyTensor::from(coo).into())?;
/// assert_eq!(std::fs::read_dir(dir.path())?.count(), 1);
/// assert!(io::remove_stale_temporaries(dir.path())?.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn remove_stale_temporaries(dir: impl AsRef<Path>) -> Result<Vec<PathBuf>> {
    let dir = dir.as_ref();
    let in_dir =
        |e: io::Error| Error::Io(io::Error::new(e.kind(), format!("{}: {e}", dir.display())));
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(in_dir)? {
        let entry = entry.map_err(in_dir)?;
        let name = entry.file_name();
        if is_temporary_name(&name.to_string_lossy()) && remove_if_stale(&entry.path()) {
            removed.push(entry.path());
        }
    }
    removed.sort();
    Ok(removed)
}

/// Sync directory `dir` (its entries: a rename into it) to storage. File systems
/// that cannot sync a directory (EINVAL, as some network and FUSE file systems
/// answer) are skipped: their renames are as durable as they get.
#[cfg(unix)]
fn sync_folder(dir: &Path) -> std::io::Result<()> {
    match File::open(dir)?.sync_all() {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(()),
        other => other,
    }
}

/// Elsewhere directories cannot be opened as files; the rename is what it is.
#[cfg(not(unix))]
fn sync_folder(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

/// The folder of `dest` (`.` for a bare file name).
fn folder(dest: &Path) -> &Path {
    dest.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// `.NAME.arrow-sparse-tmp.K`, with NAME shortened to keep the whole within the
/// 255 bytes most file systems allow.
fn temporary_name(name: &std::ffi::OsStr, k: usize) -> OsString {
    let suffix = format!("{MARKER}{k}");
    let mut name = name.to_string_lossy().into_owned();
    let room = 255 - 1 - suffix.len();
    if name.len() > room {
        let mut cut = room;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name.truncate(cut);
    }
    format!(".{name}{suffix}").into()
}

/// Whether `name` has the form of a temporary file name.
fn is_temporary_name(name: &str) -> bool {
    name.starts_with('.')
        && name.rfind(MARKER).is_some_and(|at| {
            let k = &name[at + MARKER.len()..];
            at > 1 && !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())
        })
}

/// Create `path` (which must not exist), readable and writable by whom the umask
/// allows.
fn create_new(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o666);
    options.open(path)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lock {
    /// Locked by us now.
    Taken,
    /// Someone holds it.
    Busy,
    /// The file system has no locks.
    Unsupported,
}

fn lock(file: &File) -> Lock {
    match file.try_lock() {
        Ok(()) => Lock::Taken,
        Err(std::fs::TryLockError::WouldBlock) => Lock::Busy,
        Err(std::fs::TryLockError::Error(_)) => Lock::Unsupported,
    }
}

/// Runs `attempt` until it succeeds, for at most two seconds while it fails
/// (sleeping 1, 2, 4, ... up to 50 ms in between), then returns its last
/// result. For a lock that another process can hold for a moment only: the copy
/// of a locked descriptor a child process holds between its fork and its exec.
pub(crate) fn retry_while_locked<T, E>(
    mut attempt: impl FnMut() -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let mut wait = std::time::Duration::from_millis(1);
    loop {
        match attempt() {
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(wait);
                wait = (wait * 2).min(std::time::Duration::from_millis(50));
            }
            result => return result,
        }
    }
}

/// Whether `path` still names the file `file` has open.
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.exists()
    }
}

/// Remove the temporary file `path` if no writer holds it: take its lock, check
/// that the name still points to the file we locked, remove it. A file that is
/// locked, cannot be opened, or lies on a file system without locks stays.
fn remove_if_stale(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    lock(&file) == Lock::Taken && same_file(&file, path) && std::fs::remove_file(path).is_ok()
}

/// Give the temporary file the permission bits of the file it replaces, if any.
fn keep_mode(file: &File, dest: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(old) = std::fs::metadata(dest)
            && old.is_file()
        {
            let mode = old.permissions().mode() & 0o777;
            if file.metadata()?.permissions().mode() & 0o777 != mode {
                file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (file, dest);
    Ok(())
}

/// An I/O error about `dest`: `cannot write DEST: ...` (a missing folder said as
/// such), of the same kind.
fn dest_error(dest: &Path, e: io::Error) -> Error {
    let dir = folder(dest);
    let detail = if e.kind() == io::ErrorKind::NotFound && !dir.is_dir() {
        format!("folder {} does not exist", dir.display())
    } else {
        e.to_string()
    };
    Error::Io(io::Error::new(
        e.kind(),
        format!("cannot write {}: {detail}", dest.display()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn ok(f: &mut File) -> Result<()> {
        use std::io::Write;
        f.write_all(b"complete")?;
        Ok(())
    }

    #[test]
    fn temporaries_are_named_after_the_destination() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("m.arrow");
        let a = AtomicFile::create(&dest).unwrap();
        let b = AtomicFile::create(&dest).unwrap();
        assert_eq!(
            names(dir.path()),
            [".m.arrow.arrow-sparse-tmp.0", ".m.arrow.arrow-sparse-tmp.1"]
        );
        // both are held: a cleaner leaves them alone
        assert!(remove_stale_temporaries(dir.path()).unwrap().is_empty());
        assert_eq!(b.commit().unwrap(), 0);
        drop(a); // dropped uncommitted: removed
        assert_eq!(names(dir.path()), ["m.arrow"]);
        assert!(is_temporary_name(".m.arrow.arrow-sparse-tmp.12"));
        for name in [
            "m.arrow",
            ".arrow-sparse-tmp.1",
            ".m.arrow-sparse-tmp.",
            ".m.arrow-sparse-tmp.1x",
            "m.arrow-sparse-tmp.1",
        ] {
            assert!(!is_temporary_name(name), "{name}");
        }
        let long = "é".repeat(127) + ".arrow";
        let t = temporary_name(std::ffi::OsStr::new(&long), 63);
        assert!(t.len() <= 255 && is_temporary_name(&t.to_string_lossy()));
    }

    #[test]
    fn a_killed_writers_temporary_is_taken_over_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("m.arrow");
        // what a writer killed with kill -9 leaves: its file, no lock
        std::fs::write(dir.path().join(".m.arrow.arrow-sparse-tmp.0"), b"half").unwrap();
        std::fs::write(dir.path().join(".m.arrow.arrow-sparse-tmp.1"), b"half").unwrap();
        write_atomic(&dest, ok).unwrap();
        assert_eq!(names(dir.path()), ["m.arrow"]);
        assert_eq!(std::fs::read(&dest).unwrap(), b"complete");
    }

    #[test]
    fn a_running_writers_temporary_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("m.arrow");
        let held = dir.path().join(".m.arrow.arrow-sparse-tmp.0");
        std::fs::write(&held, b"in progress").unwrap();
        let other = File::open(&held).unwrap();
        other.try_lock().unwrap(); // another writer (the lock is per open file)
        write_atomic(&dest, ok).unwrap();
        assert_eq!(
            names(dir.path()),
            [".m.arrow.arrow-sparse-tmp.0", "m.arrow"]
        );
        assert!(remove_stale_temporaries(dir.path()).unwrap().is_empty());
        drop(other); // its writer dies
        assert_eq!(remove_stale_temporaries(dir.path()).unwrap(), vec![held]);
        assert_eq!(names(dir.path()), ["m.arrow"]);
    }

    #[cfg(unix)]
    #[test]
    fn replaced_files_keep_their_mode_new_files_get_the_umask_default() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("m.arrow");
        write_atomic(&dest, ok).unwrap();
        // the umask of this process, from /proc (Linux) or assumed 022
        let umask = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
            })
            .unwrap_or(0o022);
        assert_eq!(mode(&dest), 0o666 & !umask);
        for kept in [0o640, 0o604, 0o444] {
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(kept)).unwrap();
            write_atomic(&dest, ok).unwrap();
            assert_eq!(mode(&dest), kept);
        }
    }

    #[test]
    fn errors_name_the_destination() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing").join("m.arrow");
        let err = write_atomic(&missing, ok).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "I/O error: cannot write {}: folder {} does not exist",
                missing.display(),
                dir.path().join("missing").display()
            )
        );
        // a file where a folder should be
        let file = dir.path().join("f");
        std::fs::write(&file, b"").unwrap();
        let under = file.join("m.arrow");
        let err = write_atomic(&under, ok).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "I/O error: cannot write {}: Not a directory (os error 20)",
                under.display()
            )
        );
        // the rename fails: a folder is in the way
        let taken = dir.path().join("taken");
        std::fs::create_dir(&taken).unwrap();
        let err = write_atomic(&taken, ok).unwrap_err();
        assert!(matches!(&err, Error::Io(e) if e.kind() == io::ErrorKind::IsADirectory));
        assert!(
            err.to_string()
                .starts_with(&format!("I/O error: cannot write {}: ", taken.display())),
            "{err}"
        );
        // errors of the write itself
        let err = write_atomic(&dir.path().join("w.arrow"), |_| {
            Err(io::Error::new(io::ErrorKind::StorageFull, "No space left on device").into())
        })
        .unwrap_err();
        assert!(
            err.to_string().contains("cannot write ")
                && err.to_string().contains("w.arrow: No space")
        );
        assert_eq!(names(dir.path()), ["f", "taken"]);
    }
}
