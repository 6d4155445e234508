//! Exit codes, and the error type that carries one.

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

/// A failed command: what went wrong and its exit code.
#[derive(Debug)]
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// What went wrong (a library error, or a usage message).
    pub error: Cause,
    /// The file it is about, when the error does not say so itself.
    pub context: Option<String>,
}

/// What a [`Failure`] is about.
#[derive(Debug)]
pub enum Cause {
    /// An error of the library (or of the file system).
    Error(Error),
    /// A bad command line: the message, and clap's usage lines to print after it
    /// (text output only).
    Usage(String, String),
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
        Failure::new(code, error)
    }

    /// An error while converting or writing: cannot convert (4), except I/O
    /// errors (1).
    pub fn output(error: Error) -> Failure {
        let code = match &error {
            Error::Io(_) => ERROR,
            _ => CANNOT_CONVERT,
        };
        Failure::new(code, error)
    }

    /// A bad command line (exit code 2).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: USAGE,
            error: Cause::Usage(message.into(), String::new()),
            context: None,
        }
    }

    fn new(code: u8, error: Error) -> Failure {
        Failure {
            code,
            error: Cause::Error(error),
            context: None,
        }
    }

    /// The same failure, about input file `path` (see [`Failure::about`]).
    pub fn in_file(self, path: &std::path::Path) -> Failure {
        self.about(&path.display().to_string())
    }

    /// Say which file the error is about (`FILE: error`), unless the error names
    /// it already.
    pub fn about(mut self, file: &str) -> Failure {
        let m = self.message();
        let named =
            m.contains(&format!("{file}:")) || m.contains(&format!("{file} ")) || m.ends_with(file);
        if !named {
            self.context = Some(file.to_string());
        }
        self
    }

    /// The message, without the `arrow-sparse: error:` prefix.
    pub fn message(&self) -> String {
        let error = match &self.error {
            Cause::Error(e) => e.to_string(),
            Cause::Usage(m, _) => m.clone(),
        };
        match &self.context {
            Some(c) => format!("{c}: {error}"),
            None => error,
        }
    }

    /// Whether this is a closed pipe on output (`arrow-sparse dump x | head`).
    pub fn is_broken_pipe(&self) -> bool {
        matches!(&self.error, Cause::Error(Error::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// The exit code as the process's.
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.code)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure::new(ERROR, error)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::from(Error::Io(e))
    }
}
