//! The file kinds the CLI reads and writes, chosen by extension: one reader and
//! one writer function per kind.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use arrow_sparse::Error;
use arrow_sparse::io::{self, mtx, npz, tns};
use arrow_sparse::ipc::{self, MmapReader, TensorMessage};

use crate::exit::Failure;
use crate::progress::Progress;

/// The kind of a file, from its extension (case-insensitive) or `--input-kind` /
/// `--output-kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FileKind {
    /// A stream of Arrow SparseTensor / Tensor IPC messages: `.arrow`, `.arrows`,
    /// `.ipc`, and (as inputs) files of unknown extensions.
    Arrow,
    /// A Parquet archive of one tensor, `.parquet`.
    Parquet,
    /// Matrix Market, `.mtx` (2-D only).
    Mtx,
    /// FROSTT text, `.tns`.
    Tns,
    /// NumPy zip archive (scipy or pydata/sparse layout), `.npz`.
    Npz,
    /// Binsparse HDF5, `.h5` / `.hdf5` (needs the cargo feature `hdf5`).
    Hdf5,
}

/// The extensions that name a kind, for messages.
pub const EXTENSIONS: &str = ".arrow, .parquet, .mtx, .tns, .npz, .h5 or .hdf5";

impl FileKind {
    /// The kind `path`'s extension names, if it names one.
    pub fn of(path: &Path) -> Option<FileKind> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("arrow" | "arrows" | "ipc") => Some(FileKind::Arrow),
            Some("parquet") => Some(FileKind::Parquet),
            Some("mtx") => Some(FileKind::Mtx),
            Some("tns") => Some(FileKind::Tns),
            Some("npz") => Some(FileKind::Npz),
            Some("h5" | "hdf5") => Some(FileKind::Hdf5),
            _ => None,
        }
    }

    /// What to say about the extension of `path` when it names no kind.
    pub fn unknown(path: &Path) -> String {
        match path.extension() {
            Some(e) => format!(
                "its extension .{} is not one of {EXTENSIONS}",
                e.to_string_lossy()
            ),
            None => format!("it has no extension ({EXTENSIONS})"),
        }
    }

    /// The short name used in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Arrow => "arrow",
            FileKind::Parquet => "parquet",
            FileKind::Mtx => "mtx",
            FileKind::Tns => "tns",
            FileKind::Npz => "npz",
            FileKind::Hdf5 => "hdf5",
        }
    }

    /// A phrase for human-readable output.
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Arrow => "Arrow IPC stream",
            FileKind::Parquet => "Parquet archive",
            FileKind::Mtx => "Matrix Market file",
            FileKind::Tns => "FROSTT tensor file",
            FileKind::Npz => "npz archive",
            FileKind::Hdf5 => "Binsparse HDF5 file",
        }
    }

    /// Whether a file of this kind holds exactly one tensor.
    pub fn single_tensor(self) -> bool {
        self != FileKind::Arrow
    }
}

#[cfg(not(feature = "hdf5"))]
fn no_hdf5() -> Error {
    Error::Unsupported(
        "Binsparse HDF5 files (arrow-sparse was built without the hdf5 feature: cargo build --features hdf5)"
            .into(),
    )
}

fn read_hdf5(path: &Path, options: &io::ImportOptions) -> Result<Source, Error> {
    #[cfg(feature = "hdf5")]
    return Ok(Source::Read(Box::new(io::hdf5::read(path, options)?)));
    #[cfg(not(feature = "hdf5"))]
    {
        let _ = (path, options);
        Err(no_hdf5())
    }
}

fn write_hdf5(
    path: &Path,
    message: &TensorMessage,
    options: &io::ExportOptions,
) -> Result<(), Error> {
    #[cfg(feature = "hdf5")]
    return io::hdf5::write(path, message, &options.hdf5);
    #[cfg(not(feature = "hdf5"))]
    {
        let _ = (path, message, options);
        Err(no_hdf5())
    }
}

#[cfg(not(feature = "parquet"))]
fn no_parquet() -> Error {
    Error::Unsupported(
        "Parquet archives (arrow-sparse was built without the parquet feature)".into(),
    )
}

impl Input {
    /// Open the dataset or Parquet archive a URL names (feature `object-store`).
    fn open_url(
        url: &str,
        kind: Option<FileKind>,
        options: &io::ImportOptions,
        progress: &Progress,
    ) -> Result<Input, Failure> {
        let _ = options;
        if kind.is_some_and(|k| k != FileKind::Parquet) {
            return Err(Failure::input(Error::Unsupported(format!(
                "{url}: a URL names a dataset or a Parquet archive, not a file of another kind"
            )))
            .about(url));
        }
        #[cfg(feature = "object-store")]
        {
            use arrow_sparse::archive::{ArchiveReader, DatasetReader, store::StoreLocation};
            let fail = |e: Error| Failure::input(e).about(url);
            let at = StoreLocation::from_url(url).map_err(fail)?;
            let is_archive = FileKind::of(Path::new(url)) == Some(FileKind::Parquet);
            if !is_archive {
                progress.spinner(format!("reading the dataset {url}"));
                let r = DatasetReader::open_store(&at, &Default::default()).map_err(fail)?;
                let message = r.read().map_err(fail)?;
                return Ok(Input {
                    path: PathBuf::from(url),
                    kind: FileKind::Parquet,
                    bytes: r.parts().iter().map(|p| p.bytes).sum(),
                    about: Some(format!("{url} (a dataset of {} parts)", r.parts().len())),
                    source: Source::Read(Box::new(message)),
                    dataset: Some((r.parts().len(), r.partition_dim(), r.block())),
                });
            }
            let r = ArchiveReader::open_store(&at, &Default::default()).map_err(fail)?;
            Ok(Input {
                path: PathBuf::from(url),
                kind: FileKind::Parquet,
                bytes: r.file_bytes(),
                about: None,
                source: Source::Parquet(Box::new(r)),
                dataset: None,
            })
        }
        #[cfg(not(feature = "object-store"))]
        {
            let _ = progress;
            Err(Failure::input(crate::store::no_object_store()).about(url))
        }
    }
}

/// What is behind an opened input.
enum Source {
    /// Messages decoded (and validated) one at a time, zero-copy, from a map.
    Arrow(MmapReader),
    /// The archive; its tensor is decoded when asked for.
    #[cfg(feature = "parquet")]
    Parquet(Box<arrow_sparse::archive::ArchiveReader>),
    /// A text or npz file, read whole when opened.
    Read(Box<TensorMessage>),
    /// The tensors of the first sparse tensor column of a file of record
    /// batches (IPC file / stream or Parquet table), read when opened.
    Column(Vec<TensorMessage>),
}

/// An opened input file.
pub struct Input {
    /// The path.
    pub path: PathBuf,
    /// Its kind.
    pub kind: FileKind,
    /// Its size in bytes.
    pub bytes: u64,
    /// How to name it in errors when its kind was guessed.
    about: Option<String>,
    source: Source,
    /// A dataset directory (read whole): its parts, partition dimension and block.
    pub dataset: Option<(usize, usize, usize)>,
}

impl Input {
    /// Open `path` as `kind` (`--input-kind`) or its extension says (a stream of
    /// IPC messages when it says nothing). Text and npz files are read (and
    /// validated) here, with the progress bar counting the bytes read; the other
    /// kinds only read their headers / footer. Errors name the file (and say how
    /// it was read when the extension did not tell).
    pub fn open(
        path: &Path,
        kind: Option<FileKind>,
        options: &io::ImportOptions,
        progress: &Progress,
    ) -> Result<Input, Failure> {
        let name = path.display().to_string();
        if let Some(url) = path.to_str().filter(|s| crate::store::is_url(s)) {
            return Self::open_url(url, kind, options, progress);
        }
        let (kind, about) = match (kind, FileKind::of(path)) {
            (Some(k), _) | (None, Some(k)) => (k, name.clone()),
            (None, None) => (
                FileKind::Arrow,
                format!(
                    "{name} (read as an Arrow IPC stream: {}; see --input-kind)",
                    FileKind::unknown(path)
                ),
            ),
        };
        let guessed = about != name;
        let fail = |e: Error| {
            let f = Failure::input(e);
            if guessed {
                Failure {
                    context: Some(about.clone()),
                    ..f
                }
            } else {
                f.about(&name)
            }
        };
        let meta = std::fs::metadata(path).map_err(|e| fail(Error::Io(e)))?;
        #[cfg(feature = "parquet")]
        if meta.is_dir() && arrow_sparse::archive::is_dataset_path(path) {
            // a dataset directory: read whole
            progress.spinner(format!("reading the dataset {name}"));
            let r = arrow_sparse::archive::DatasetReader::open(path).map_err(fail)?;
            let message = r.read().map_err(fail)?;
            return Ok(Input {
                path: path.to_path_buf(),
                kind: FileKind::Parquet,
                bytes: r.parts().iter().map(|p| p.bytes).sum(),
                about: Some(format!("{name} (a dataset of {} parts)", r.parts().len())),
                source: Source::Read(Box::new(message)),
                dataset: Some((r.parts().len(), r.partition_dim(), r.block())),
            });
        }
        if meta.is_dir() {
            return Err(Failure::input(Error::Io(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                format!("{name} is a directory, not a file"),
            ))));
        }
        let bytes = meta.len();
        let column = match kind {
            FileKind::Arrow | FileKind::Parquet => crate::columns::read(path)
                .map_err(fail)?
                .map(Source::Column),
            _ => None,
        };
        let source = match kind {
            _ if column.is_some() => Ok(column.expect("checked")),
            FileKind::Arrow => open_arrow(path),
            FileKind::Parquet => open_parquet(path),
            FileKind::Mtx | FileKind::Tns | FileKind::Npz => {
                read_file(path, kind, bytes, options, progress)
            }
            FileKind::Hdf5 => {
                // HDF5 reads by path (the library opens the file itself)
                progress.spinner(format!("reading {name}"));
                read_hdf5(path, options)
            }
        }
        .map_err(fail)?;
        Ok(Input {
            path: path.to_path_buf(),
            kind,
            bytes,
            about: guessed.then_some(about),
            source,
            dataset: None,
        })
    }

    /// The number of tensors.
    pub fn len(&self) -> usize {
        match &self.source {
            Source::Arrow(r) => r.len(),
            #[cfg(feature = "parquet")]
            Source::Parquet(_) => 1,
            Source::Read(_) => 1,
            Source::Column(t) => t.len(),
        }
    }

    /// Tensor `i` (decoded and validated now for streams and archives).
    pub fn get(&self, i: usize) -> Result<TensorMessage, Failure> {
        match &self.source {
            Source::Arrow(r) => r.get(i),
            #[cfg(feature = "parquet")]
            Source::Parquet(r) => r.read(),
            Source::Read(m) => Ok((**m).clone()),
            Source::Column(t) => Ok(t[i].clone()),
        }
        .map_err(|e| {
            let f = Failure::input(e);
            match &self.about {
                Some(about) => Failure {
                    context: Some(about.clone()),
                    ..f
                },
                None => f.about(&self.path.display().to_string()),
            }
        })
    }

    /// Every tensor, or only tensor `index` when given, counting them on the
    /// progress bar.
    pub fn messages(
        &self,
        index: Option<usize>,
        progress: &Progress,
    ) -> Result<Vec<TensorMessage>, Failure> {
        let picked: Vec<usize> = match index {
            Some(i) if i >= self.len() => {
                return Err(Failure::output(Error::Unsupported(format!(
                    "--tensor {i}: {} holds {} tensor(s), numbered from 0",
                    self.path.display(),
                    self.len()
                ))));
            }
            Some(i) => vec![i],
            None => (0..self.len()).collect(),
        };
        if let Source::Read(m) = &self.source {
            return Ok(vec![(**m).clone()]);
        }
        let verb = match self.kind {
            FileKind::Parquet => "decoding",
            _ => "decoding and validating",
        };
        let message = format!("{verb} {}", self.path.display());
        if picked.len() == 1 {
            progress.spinner(message);
        } else {
            progress.steps(message, picked.len() as u64, "tensors");
        }
        picked
            .into_iter()
            .map(|i| {
                let m = self.get(i);
                progress.inc(1);
                m
            })
            .collect()
    }

    /// Whether the input is a file of record batches with a sparse tensor column.
    pub fn is_column(&self) -> bool {
        matches!(self.source, Source::Column(_))
    }

    /// The memory-mapped stream, for an Arrow input.
    pub fn arrow(&self) -> Option<&MmapReader> {
        match &self.source {
            Source::Arrow(r) => Some(r),
            _ => None,
        }
    }

    /// The archive reader, for a Parquet input.
    #[cfg(feature = "parquet")]
    pub fn parquet(&self) -> Option<&arrow_sparse::archive::ArchiveReader> {
        match &self.source {
            Source::Parquet(r) => Some(r),
            _ => None,
        }
    }
}

/// Prefix an I/O error with the path it concerns.
fn in_file(path: &Path, e: std::io::Error) -> Error {
    Error::Io(std::io::Error::new(
        e.kind(),
        format!("{}: {e}", path.display()),
    ))
}

fn open_arrow(path: &Path) -> Result<Source, Error> {
    Ok(Source::Arrow(MmapReader::open_with(
        path,
        &ipc::StreamReadOptions::default(),
    )?))
}

fn open_parquet(path: &Path) -> Result<Source, Error> {
    #[cfg(feature = "parquet")]
    return Ok(Source::Parquet(Box::new(
        arrow_sparse::archive::ArchiveReader::open(path)?,
    )));
    #[cfg(not(feature = "parquet"))]
    {
        let _ = path;
        Err(no_parquet())
    }
}

/// Read a `.mtx`, `.tns` or `.npz` file, the bar following the bytes read.
fn read_file(
    path: &Path,
    kind: FileKind,
    bytes: u64,
    options: &io::ImportOptions,
    progress: &Progress,
) -> Result<Source, Error> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| in_file(path, e))?;
    progress.bytes(format!("reading {name}"), bytes);
    let input = progress.reader(file);
    let msg = match kind {
        FileKind::Mtx => mtx::read_from(input, &name, options)?,
        FileKind::Tns => tns::read_from(input, &name, options)?,
        _ => npz::read_from(BufReader::new(input), &name, options)?,
    };
    Ok(Source::Read(Box::new(msg)))
}

/// Options of the writers.
#[derive(Default)]
pub struct OutputOptions {
    /// For `.mtx`, `.tns` and `.npz` outputs.
    pub io: io::ExportOptions,
    /// For `.parquet` outputs.
    #[cfg(feature = "parquet")]
    pub parquet: arrow_sparse::archive::ArchiveWriteOptions,
}

/// Refuse, before anything is written, what the output kind cannot hold.
pub fn check_output(
    path: &Path,
    kind: FileKind,
    messages: &[TensorMessage],
    input: &Input,
) -> Result<(), Error> {
    if kind.single_tensor() && messages.len() != 1 {
        return Err(Error::Unsupported(format!(
            "{} ({}) holds one tensor and {} holds {}: pick one with --tensor N",
            path.display(),
            kind.describe(),
            input.path.display(),
            messages.len()
        )));
    }
    for m in messages {
        let t = &m.tensor;
        match kind {
            FileKind::Mtx if t.shape().len() != 2 => {
                return Err(Error::Unsupported(format!(
                    "{}: Matrix Market holds 2-D matrices, the tensor has shape {:?} (write .tns, .npz, .parquet or .arrow)",
                    path.display(),
                    t.shape()
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Why the output `path` cannot take a file of `kind`: a URL takes a Parquet
/// archive only (a dataset goes through `--partition-by`). `None` for a local
/// path or an archive. Known from the command line alone, so `convert` asks
/// before it reads its input (a usage error), and [`write`] again.
pub fn url_refusal(path: &Path, kind: FileKind) -> Option<String> {
    let url = path.to_str().filter(|s| crate::store::is_url(s))?;
    (kind != FileKind::Parquet).then(|| {
        format!(
            "{url}: a URL takes a Parquet archive (.parquet) or, with --partition-by, a dataset; not {}",
            kind.describe()
        )
    })
}

/// Write `messages` to `path` as its kind (atomically), after [`check_output`]:
/// the bytes written. A URL takes a Parquet archive only (uploaded whole).
pub fn write(
    path: &Path,
    kind: FileKind,
    messages: &[TensorMessage],
    options: &OutputOptions,
    progress: &Progress,
) -> Result<u64, Error> {
    let message = format!("writing {}", path.display());
    if let Some(refusal) = url_refusal(path, kind) {
        return Err(Error::Unsupported(refusal));
    }
    if let Some(url) = path.to_str().filter(|s| crate::store::is_url(s)) {
        progress.spinner(message);
        #[cfg(feature = "parquet")]
        return crate::store::write_archive(url, &messages[0], &options.parquet);
        #[cfg(not(feature = "parquet"))]
        return Err(no_parquet());
    }
    match kind {
        FileKind::Arrow => {
            progress.steps(message, messages.len() as u64, "tensors");
            write_arrow(path, messages, progress)?
        }
        FileKind::Parquet => {
            progress.spinner(message);
            write_parquet(path, &messages[0], options)?
        }
        FileKind::Mtx | FileKind::Tns | FileKind::Npz => {
            progress.spinner(message);
            io::write_path_with(path, &messages[0], &options.io)?
        }
        FileKind::Hdf5 => {
            progress.spinner(message);
            write_hdf5(path, &messages[0], &options.io)?
        }
    }
    Ok(std::fs::metadata(path)?.len())
}

fn write_arrow(path: &Path, messages: &[TensorMessage], progress: &Progress) -> Result<(), Error> {
    let counted = messages.iter().inspect(|_| progress.inc(1));
    ipc::write_tensor_stream(path, counted, &ipc::StreamWriteOptions::default())
}

fn write_parquet(
    path: &Path,
    message: &TensorMessage,
    options: &OutputOptions,
) -> Result<(), Error> {
    #[cfg(feature = "parquet")]
    {
        arrow_sparse::archive::write_archive(path, message, &options.parquet)?;
        Ok(())
    }
    #[cfg(not(feature = "parquet"))]
    {
        let _ = (path, message, options);
        Err(no_parquet())
    }
}
