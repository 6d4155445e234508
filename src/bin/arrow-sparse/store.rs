//! URLs where the CLI takes paths (`s3://bucket/prefix`, `file:///path`): datasets
//! and Parquet archives on object storage, with the cargo feature `object-store`.

use std::path::Path;

use arrow_sparse::Error;
use arrow_sparse::archive::{
    ArchiveReader, DatasetReader, DatasetWriteOptions, DatasetWriter, TensorSpec,
};

/// Whether `path` is a URL rather than a file system path.
pub fn is_url(path: &str) -> bool {
    arrow_sparse_url(path)
}

#[cfg(feature = "object-store")]
fn arrow_sparse_url(path: &str) -> bool {
    arrow_sparse::archive::store::is_url(path)
}

/// Without the feature: anything with `://` (so that such an argument gets the
/// error below rather than "no such file").
#[cfg(not(feature = "object-store"))]
fn arrow_sparse_url(path: &str) -> bool {
    path.contains("://")
}

/// The error for a URL when the binary was built without the feature.
#[cfg(not(feature = "object-store"))]
pub fn no_object_store() -> Error {
    Error::Unsupported(
        "object store URLs (arrow-sparse was built without the object-store feature: cargo build --features object-store)"
            .into(),
    )
}

fn url_of(path: &Path) -> Option<&str> {
    path.to_str().filter(|s| is_url(s))
}

/// The archive at `path`, a file or a URL.
pub fn open_archive(path: &Path) -> Result<ArchiveReader, Error> {
    match url_of(path) {
        None => ArchiveReader::open(path),
        #[cfg(feature = "object-store")]
        Some(url) => ArchiveReader::open_store(
            &arrow_sparse::archive::store::StoreLocation::from_url(url)?,
            &Default::default(),
        ),
        #[cfg(not(feature = "object-store"))]
        Some(_) => Err(no_object_store()),
    }
}

/// Write `message` as the Parquet archive at the URL `url` (staged locally,
/// then uploaded whole): the bytes written.
pub fn write_archive(
    url: &str,
    message: &arrow_sparse::ipc::TensorMessage,
    options: &arrow_sparse::archive::ArchiveWriteOptions,
) -> Result<u64, Error> {
    #[cfg(feature = "object-store")]
    {
        let at = arrow_sparse::archive::store::StoreLocation::from_url(url)?;
        Ok(arrow_sparse::archive::write_archive_to_store(&at, message, options)?.bytes)
    }
    #[cfg(not(feature = "object-store"))]
    {
        let _ = (url, message, options);
        Err(no_object_store())
    }
}

/// A dataset writer into the directory or URL `path`.
pub fn create_dataset(
    path: &Path,
    spec: TensorSpec,
    options: &DatasetWriteOptions,
) -> Result<DatasetWriter, Error> {
    match url_of(path) {
        None => DatasetWriter::create(path, spec, options),
        #[cfg(feature = "object-store")]
        Some(url) => DatasetWriter::create_in_store(
            &arrow_sparse::archive::store::StoreLocation::from_url(url)?,
            spec,
            options,
        ),
        #[cfg(not(feature = "object-store"))]
        Some(_) => {
            let _ = (spec, options);
            Err(no_object_store())
        }
    }
}

/// The dataset at `path`, a directory or a URL.
pub fn open_dataset(path: &Path) -> Result<DatasetReader, Error> {
    match url_of(path) {
        None => DatasetReader::open(path),
        #[cfg(feature = "object-store")]
        Some(url) => DatasetReader::open_store(
            &arrow_sparse::archive::store::StoreLocation::from_url(url)?,
            &Default::default(),
        ),
        #[cfg(not(feature = "object-store"))]
        Some(_) => Err(no_object_store()),
    }
}
