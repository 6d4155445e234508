//! Exit codes, and the error type that carries one.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use arrow_sparse::Error;

/// Success.
pub const OK: u8 = 0;
/// Any other error: a file that cannot be opened, created or written (I/O).
pub const ERROR: u8 = 1;
/// A bad command line (clap's own code for usage errors).
pub const USAGE: u8 = 2;
/// The input cannot be read: malformed, truncated or corrupt, or content this tool
/// does not support (e.g. a scipy BSR npz).
pub const INVALID_INPUT: u8 = 3;
/// The input was read but cannot be converted or written as asked: the output
/// format cannot hold the tensor (a 3-D tensor into `.mtx`, several tensors into
/// a single-tensor file, a GCS tensor into Parquet), or the requested conversion
/// is impossible (`--to csr` of a 3-D tensor, indices that overflow
/// `--index-type`).
pub const CANNOT_CONVERT: u8 = 4;

/// The text for `--help` and the README.
pub const HELP: &str = "\
Exit codes:
  0  success
  1  error: a file cannot be opened, created or written (I/O)
  2  bad command line (usage)
  3  invalid input: malformed, truncated, corrupt or unsupported content
  4  cannot convert: the output format or --to cannot hold the input as asked";

/// A failed command: the error and its exit code.
#[derive(Debug)]
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// What went wrong.
    pub error: Error,
    /// The input file it concerns, named in the message when the error does not.
    pub file: Option<PathBuf>,
}

impl Failure {
    /// An error while reading the input: invalid input (3), except I/O errors that
    /// are not about the content (a missing file, a permission), which are 1.
    pub fn input(error: Error) -> Failure {
        let code = match &error {
            Error::Io(e)
                if !matches!(
                    e.kind(),
                    std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidData
                ) =>
            {
                ERROR
            }
            _ => INVALID_INPUT,
        };
        Failure {
            code,
            error,
            file: None,
        }
    }

    /// An error while converting or writing: cannot convert (4), except I/O
    /// errors (1).
    pub fn output(error: Error) -> Failure {
        let code = match &error {
            Error::Io(_) => ERROR,
            _ => CANNOT_CONVERT,
        };
        Failure {
            code,
            error,
            file: None,
        }
    }

    /// The same failure, about input file `path`.
    pub fn in_file(mut self, path: &Path) -> Failure {
        self.file.get_or_insert_with(|| path.to_path_buf());
        self
    }

    /// The message: the error, after the file's name unless it names it already.
    pub fn message(&self) -> String {
        let msg = self.error.to_string();
        match &self.file {
            Some(p) if !msg.contains(&*p.to_string_lossy()) => {
                format!("{}: {msg}", p.display())
            }
            _ => msg,
        }
    }

    /// The exit code as the process's.
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.code)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure {
            code: ERROR,
            error,
            file: None,
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::from(Error::Io(e))
    }
}
