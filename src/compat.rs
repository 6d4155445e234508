//! Deprecated names of the 0.1 API, kept for one release so that code written
//! against them still compiles (with a deprecation warning naming the new name).
//! `CHANGELOG.md` lists every rename. Nothing here is documented or tested beyond
//! "it still compiles and does what the new name does".

/// The Parquet archive module under its 0.1 name, which shadowed the `parquet`
/// crate. Renamed to [`archive`](crate::archive).
#[cfg(feature = "parquet")]
#[deprecated(
    since = "0.2.0",
    note = "renamed to `arrow_sparse::archive` (the old name shadowed the `parquet` crate)"
)]
pub mod parquet {
    use std::path::Path;

    use crate::archive;
    use crate::error::Result;
    use crate::ipc::TensorMessage;

    pub use crate::archive::{
        ArchiveCompression, ArchiveLayout, ArchiveReadOptions, ArchiveReader, ArchiveWriteOptions,
        ArchiveWriter, DmChain, METADATA_CRC_KEY, METADATA_KEY, METADATA_VERSION, RangeRead,
        RowGroupInfo, TensorSpec, WriteSummary,
    };

    /// Renamed to [`ArchiveWriter`].
    #[deprecated(since = "0.2.0", note = "renamed to `archive::ArchiveWriter`")]
    pub type ParquetWriter = ArchiveWriter;
    /// Renamed to [`ArchiveReader`].
    #[deprecated(since = "0.2.0", note = "renamed to `archive::ArchiveReader`")]
    pub type ParquetReader = ArchiveReader;
    /// Renamed to [`ArchiveWriteOptions`].
    #[deprecated(since = "0.2.0", note = "renamed to `archive::ArchiveWriteOptions`")]
    pub type WriteOptions = ArchiveWriteOptions;
    /// Renamed to [`ArchiveReadOptions`].
    #[deprecated(since = "0.2.0", note = "renamed to `archive::ArchiveReadOptions`")]
    pub type ReadOptions = ArchiveReadOptions;
    /// Renamed to [`ArchiveCompression`].
    #[deprecated(since = "0.2.0", note = "renamed to `archive::ArchiveCompression`")]
    pub type Compression = ArchiveCompression;
    /// Renamed to [`ArchiveLayout`].
    #[deprecated(since = "0.2.0", note = "renamed to `archive::ArchiveLayout`")]
    pub type Layout = ArchiveLayout;

    /// Renamed to [`archive::write_archive`].
    #[deprecated(since = "0.2.0", note = "renamed to `archive::write_archive`")]
    pub fn write_parquet(
        path: impl AsRef<Path>,
        message: &TensorMessage,
        options: &ArchiveWriteOptions,
    ) -> Result<WriteSummary> {
        archive::write_archive(path, message, options)
    }

    /// Renamed to [`archive::read_archive`].
    #[deprecated(since = "0.2.0", note = "renamed to `archive::read_archive`")]
    pub fn read_parquet(
        path: impl AsRef<Path>,
        options: &ArchiveReadOptions,
    ) -> Result<TensorMessage> {
        archive::read_archive(path, options)
    }

    /// Renamed to [`archive::is_archive_path`].
    #[deprecated(since = "0.2.0", note = "renamed to `archive::is_archive_path`")]
    pub fn is_parquet_path(path: impl AsRef<Path>) -> bool {
        archive::is_archive_path(path)
    }
}

/// 0.1 names of [`crate::ipc`] items (re-exported there, hidden).
pub(crate) mod ipc {
    use std::path::Path;

    use crate::error::Result;
    use crate::ipc::{
        StreamReadOptions, StreamWriteOptions, TensorMessage, TensorStreamReader,
        TensorStreamWriter,
    };

    /// Renamed to [`TensorStreamWriter`].
    #[deprecated(
        since = "0.2.0",
        note = "renamed to `ipc::TensorStreamWriter` (arrow-ipc's `StreamWriter` writes record batches)"
    )]
    pub type StreamWriter<W> = TensorStreamWriter<W>;
    /// Renamed to [`TensorStreamReader`].
    #[deprecated(
        since = "0.2.0",
        note = "renamed to `ipc::TensorStreamReader` (arrow-ipc's `StreamReader` reads record batches)"
    )]
    pub type StreamReader<R> = TensorStreamReader<R>;
    /// Renamed to [`StreamReadOptions`].
    #[deprecated(since = "0.2.0", note = "renamed to `ipc::StreamReadOptions`")]
    pub type ReadOptions = StreamReadOptions;
    /// Renamed to [`StreamWriteOptions`].
    #[deprecated(since = "0.2.0", note = "renamed to `ipc::StreamWriteOptions`")]
    pub type WriteOptions = StreamWriteOptions;

    /// Renamed to [`crate::ipc::write_tensor_stream`] (it writes the stream format,
    /// not the Arrow IPC file format).
    #[deprecated(since = "0.2.0", note = "renamed to `ipc::write_tensor_stream`")]
    pub fn write_file<'a>(
        path: impl AsRef<Path>,
        messages: impl IntoIterator<Item = &'a TensorMessage>,
        options: &StreamWriteOptions,
    ) -> Result<()> {
        crate::ipc::write_tensor_stream(path, messages, options)
    }

    /// Renamed to [`crate::ipc::read_tensor_stream`].
    #[deprecated(since = "0.2.0", note = "renamed to `ipc::read_tensor_stream`")]
    pub fn read_file(
        path: impl AsRef<Path>,
        options: &StreamReadOptions,
    ) -> Result<Vec<TensorMessage>> {
        crate::ipc::read_tensor_stream(path, options)
    }
}

/// 0.1 names of [`crate::io`] items (re-exported there, hidden).
pub(crate) mod io {
    use crate::io::{ExportOptions, ImportOptions};

    /// Renamed to [`ImportOptions`].
    #[deprecated(since = "0.2.0", note = "renamed to `io::ImportOptions`")]
    pub type ReadOptions = ImportOptions;
    /// Renamed to [`ExportOptions`].
    #[deprecated(since = "0.2.0", note = "renamed to `io::ExportOptions`")]
    pub type WriteOptions = ExportOptions;
}
