//! Datasets and archives on object storage (feature `object-store`, format/SPEC.md
//! 9.8): the dataset reader and writer over `object_store` stores, with every
//! request counted by a wrapper store, so the tests see which objects and byte
//! ranges a read fetches. The S3 tests run against a real S3-compatible server,
//! moto's, started from the project venv on a loopback port (the venv is made by
//! `scripts/setup-interop.sh`); the others use the crate's in-memory and
//! local-file-system stores.
#![cfg(feature = "object-store")]

mod common;

use std::fmt;
use std::net::TcpListener;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_sparse::archive::store::StoreLocation;
use arrow_sparse::archive::{
    self, ArchiveReader, ArchiveWriteOptions, DATASET_MANIFEST, DatasetReader, DatasetWriteOptions,
    DatasetWriter, TensorSpec, write_dataset, write_dataset_to_store,
};
use arrow_sparse::kernels::spmv::spmv;
use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Error, IndexType, ValueType};
use common::Rng;
use futures_util::stream::BoxStream;
use object_store::path::Path as ObjectPath;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

// ------------------------------------------------------------ a counting store

/// One read request: the object and the byte range it asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Get {
    path: String,
    range: Range<u64>,
}

/// A store that forwards every call to `inner` and records the reads.
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn ObjectStore>,
    gets: Mutex<Vec<Get>>,
    puts: Mutex<Vec<String>>,
}

impl Counting {
    fn new(inner: Arc<dyn ObjectStore>) -> Arc<Self> {
        Arc::new(Counting {
            inner,
            gets: Mutex::new(Vec::new()),
            puts: Mutex::new(Vec::new()),
        })
    }

    /// The reads since the last call.
    fn take(&self) -> Vec<Get> {
        std::mem::take(&mut *self.gets.lock().unwrap())
    }

    fn take_puts(&self) -> Vec<String> {
        std::mem::take(&mut *self.puts.lock().unwrap())
    }
}

impl fmt::Display for Counting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for Counting {
    async fn put_opts(
        &self,
        location: &ObjectPath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.puts.lock().unwrap().push(location.to_string());
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &ObjectPath,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.puts
            .lock()
            .unwrap()
            .push(format!("{location} (multipart)"));
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &ObjectPath,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let head = options.head;
        let r = self.inner.get_opts(location, options).await?;
        if !head {
            self.gets.lock().unwrap().push(Get {
                path: location.to_string(),
                range: r.range.clone(),
            });
        }
        Ok(r)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<ObjectPath>>,
    ) -> BoxStream<'static, object_store::Result<ObjectPath>> {
        self.inner.delete_stream(locations)
    }

    fn list(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &ObjectPath,
        to: &ObjectPath,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

fn bytes_of(gets: &[Get]) -> u64 {
    gets.iter().map(|g| g.range.end - g.range.start).sum()
}

/// Run `f` on a runtime of the test's own (for the raw store calls).
fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

// ------------------------------------------------------------------ the tensors

/// A canonical `shape` COO tensor of about `nnz` distinct random entries.
fn random(r: &mut Rng, shape: &[usize], nnz: usize) -> CooTensor<f64, i64> {
    common::canonical_coo(r, shape, nnz, |k| (k % 97) as f64 - 48.5)
}

/// Parts of `rows` rows, row groups of 2,000 rows.
fn options(dim: usize, rows: usize) -> DatasetWriteOptions {
    DatasetWriteOptions::new(dim, rows)
        .with_archive_options(ArchiveWriteOptions::default().with_row_group_size(2000))
}

/// The checks every store must pass: a dataset written to `at` reads back
/// exactly, whole and by ranges, fetching only the objects and byte ranges it
/// needs (`counting` is the store `at` points into).
fn reads_fetch_only_what_they_need(at: &StoreLocation, counting: &Counting) {
    let mut r = Rng(7);
    let coo = random(&mut r, &[4000, 300], 400_000);
    let csr: AnyTensor = coo.to_csx::<i32, i64>(CompressedAxis::Row).unwrap().into();
    let written = write_dataset_to_store(at, &csr.clone().into(), &options(0, 1000)).unwrap();
    assert_eq!((written.parts, written.rows), (4, csr.nnz()));
    let puts = counting.take_puts();
    assert_eq!(
        puts.last().map(String::as_str),
        Some(format!("{}/{DATASET_MANIFEST}", at.path()).as_str()),
        "the manifest is written last: {puts:?}"
    );
    assert_eq!(puts.len(), 5, "{puts:?}");
    counting.take();

    // opening reads the manifest and nothing else
    let reader = DatasetReader::open_store(at, &Default::default()).unwrap();
    let gets = counting.take();
    assert_eq!(gets.len(), 1, "{gets:?}");
    assert!(gets[0].path.ends_with(DATASET_MANIFEST));
    let sizes: Vec<u64> = reader.parts().iter().map(|p| p.bytes).collect();
    let total: u64 = sizes.iter().sum();

    // the whole tensor, exactly; every byte fetched belongs to a part, and no
    // part is fetched more than once over (its tail window overlaps its chunks)
    assert_eq!(reader.read().unwrap().tensor, csr);
    let gets = counting.take();
    assert!(
        gets.iter().all(|g| g.path.contains("/dim_0_block=")),
        "{gets:?}"
    );
    assert!(
        bytes_of(&gets) <= 2 * total,
        "{} of {total}",
        bytes_of(&gets)
    );

    // rows 1200..1300 lie in part 1 (rows 1000..2000): only that part is read,
    // its footer and the row groups that can hold those rows
    let part = reader.read_range(0, 1200..1300).unwrap();
    let gets = counting.take();
    assert_eq!((part.parts_read, part.parts_total), (1, 4));
    assert!(part.row_groups_read < part.row_groups_total, "{part:?}");
    assert!(
        gets.iter()
            .all(|g| g.path.ends_with("dim_0_block=1/part-0.parquet")),
        "{gets:?}"
    );
    assert!(
        bytes_of(&gets) < sizes[1] / 2,
        "{} bytes fetched for a part of {}",
        bytes_of(&gets),
        sizes[1]
    );
    // one request for the footer (its last 64 KiB), then at most one per row
    // group read (its column chunks are adjacent, so the ranges coalesce; none
    // for a group inside the footer's window)
    assert!(gets.len() <= 1 + part.row_groups_read, "{gets:?}");
    eprintln!(
        "range read of rows 1200..1300: {} requests, {} bytes of a {}-byte part ({} of {} row groups); all parts {total} bytes",
        gets.len(),
        bytes_of(&gets),
        sizes[1],
        part.row_groups_read,
        part.row_groups_total
    );
    assert_eq!(gets[0].range.end, sizes[1]);
    let local = tempfile::tempdir().unwrap();
    let expect = ArchiveReader::open(write_local(&csr, local.path()))
        .unwrap()
        .read_range(0, 1200..1300)
        .unwrap()
        .tensor;
    assert_eq!(part.tensor, expect);

    // the streamed SpMV reads each part once and equals the in-memory kernel
    let x: Vec<f64> = (0..300).map(|j| (j as f64 * 0.37).sin()).collect();
    assert_eq!(reader.spmv(&x).unwrap(), spmv(&csr, &x).unwrap());
    let gets = counting.take();
    for p in reader.parts() {
        let path = format!("{}", p.path.display());
        let n = gets.iter().filter(|g| g.path.ends_with(&path)).count();
        assert!(n >= 1, "{path} not read");
    }
    assert!(bytes_of(&gets) <= 2 * total);
}

/// `t` as the archive `one.parquet` in `dir`.
fn write_local(t: &AnyTensor, dir: &Path) -> PathBuf {
    let path = dir.join("one.parquet");
    archive::write_archive(&path, &t.clone().into(), &ArchiveWriteOptions::default()).unwrap();
    path
}

#[test]
fn an_in_memory_store_reads_only_the_objects_and_ranges_it_needs() {
    let counting = Counting::new(Arc::new(object_store::memory::InMemory::new()));
    let at = StoreLocation::new(counting.clone(), "tensors/a").unwrap();
    reads_fetch_only_what_they_need(&at, &counting);
}

/// A single archive written to a store: staged locally, uploaded in one PUT
/// (no manifest, no other object), replaced whole by a second write, and
/// refused with a typed error where the store cannot take it.
#[test]
fn an_archive_is_uploaded_whole_and_replaced_whole() {
    let counting = Counting::new(Arc::new(object_store::memory::InMemory::new()));
    let at = StoreLocation::new(counting.clone(), "one/a.parquet").unwrap();
    let mut r = Rng(5);
    let t: AnyTensor = random(&mut r, &[300, 40], 900).into();
    let opts = ArchiveWriteOptions::default().with_row_group_size(100);
    let summary = archive::write_archive_to_store(&at, &t.clone().into(), &opts).unwrap();
    assert_eq!(summary.row_groups, 9);
    assert_eq!(counting.take_puts(), vec!["one/a.parquet".to_string()]);
    let back = ArchiveReader::open_store(&at, &Default::default()).unwrap();
    assert_eq!(back.file_bytes(), summary.bytes);
    assert_eq!(back.read().unwrap().tensor, t);
    // written again: the new archive, whole
    let u: AnyTensor = random(&mut r, &[10, 4], 7).into();
    archive::write_archive_to_store(&at, &u.clone().into(), &opts).unwrap();
    assert_eq!(counting.take_puts().len(), 1);
    let again = ArchiveReader::open_store(&at, &Default::default()).unwrap();
    assert_eq!(again.read().unwrap().tensor, u);
    // a file URL under a regular file: the store's error, typed
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plain"), b"x").unwrap();
    let bad = StoreLocation::from_url(&format!("file://{}/plain/a.parquet", dir.path().display()))
        .unwrap();
    let err = archive::write_archive_to_store(&bad, &t.into(), &opts).unwrap_err();
    assert!(matches!(err, Error::ObjectStore(_)), "{err}");
}

#[test]
fn file_urls_read_datasets_written_to_directories_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng(3);
    let t: AnyTensor = random(&mut r, &[50, 40, 30], 3000).into();
    // written to a directory, read through a file:// URL
    let out = dir.path().join("ds");
    write_dataset(&out, &t.clone().into(), &options(1, 7)).unwrap();
    let at = StoreLocation::from_url(&format!("file://{}", out.display())).unwrap();
    let r = DatasetReader::open_store(&at, &Default::default()).unwrap();
    // partitioned along dimension 1, the entries are in (1, 0, 2) order
    let local = DatasetReader::open(&out).unwrap().read().unwrap().tensor;
    assert_eq!(r.read().unwrap().tensor, local);
    assert_eq!(
        local.to_coo::<f64, i64>().unwrap().canonicalize().unwrap(),
        t.to_coo::<f64, i64>().unwrap()
    );
    assert_eq!(
        r.read_range(1, 10..20).unwrap().tensor,
        DatasetReader::open(&out)
            .unwrap()
            .read_range(1, 10..20)
            .unwrap()
            .tensor
    );
    // written through a file:// URL, read as a directory: the same files
    let url = format!("file://{}/again", dir.path().display());
    write_dataset_to_store(
        &StoreLocation::from_url(&url).unwrap(),
        &t.clone().into(),
        &options(1, 7),
    )
    .unwrap();
    assert_eq!(
        DatasetReader::open(dir.path().join("again"))
            .unwrap()
            .read()
            .unwrap()
            .tensor,
        local
    );
}

#[test]
fn a_store_dataset_is_replaced_whole_and_foreign_prefixes_are_refused() {
    let counting = Counting::new(Arc::new(object_store::memory::InMemory::new()));
    let store: Arc<dyn ObjectStore> = counting.clone();
    let at = StoreLocation::new(store.clone(), "ds").unwrap();
    let mut r = Rng(11);
    let big: AnyTensor = random(&mut r, &[100, 10], 400).into();
    write_dataset_to_store(&at, &big.into(), &options(0, 10)).unwrap();
    let old_parts = DatasetReader::open_store(&at, &Default::default())
        .unwrap()
        .parts()
        .len();
    assert_eq!(old_parts, 10);
    // a smaller tensor in its place: the stale parts are gone
    let small: AnyTensor = random(&mut r, &[100, 10], 5).into();
    write_dataset_to_store(&at, &small.clone().into(), &options(0, 50)).unwrap();
    let back = DatasetReader::open_store(&at, &Default::default()).unwrap();
    assert_eq!(back.read().unwrap().tensor, small);
    let listed: Vec<String> = block(async {
        use futures_util::TryStreamExt;
        store
            .list(Some(&ObjectPath::from("ds")))
            .map_ok(|m| m.location.to_string())
            .try_collect()
            .await
            .unwrap()
    });
    assert_eq!(listed.len(), back.parts().len() + 1, "{listed:?}");

    // a prefix with other objects is not a dataset to replace
    block(store.put(&ObjectPath::from("other/notes.txt"), "hello".into())).unwrap();
    let other = StoreLocation::new(store.clone(), "other").unwrap();
    let e = write_dataset_to_store(&other, &small.clone().into(), &options(0, 50)).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
    // no dataset there: a typed error naming the store
    let e = DatasetReader::open_store(&other, &Default::default()).unwrap_err();
    assert!(
        matches!(e, Error::ObjectStore(object_store::Error::NotFound { .. })),
        "{e}"
    );
}

#[test]
fn a_store_part_that_disagrees_with_its_manifest_is_a_typed_error() {
    let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let at = StoreLocation::new(store.clone(), "ds").unwrap();
    let mut r = Rng(5);
    let t: AnyTensor = random(&mut r, &[40, 10], 200).into();
    write_dataset_to_store(&at, &t.into(), &options(0, 20)).unwrap();
    let reader = DatasetReader::open_store(&at, &Default::default()).unwrap();
    let part = format!("ds/{}", reader.parts()[0].path.display());
    // truncated: shorter than the manifest says
    let bytes = block(async {
        store
            .get(&ObjectPath::from(part.as_str()))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap()
    });
    block(store.put(
        &ObjectPath::from(part.as_str()),
        bytes.slice(..bytes.len() - 9).into(),
    ))
    .unwrap();
    let e = reader.read().unwrap_err();
    assert!(!e.to_string().is_empty());
    // garbage of the right size
    block(store.put(
        &ObjectPath::from(part.as_str()),
        vec![7u8; bytes.len()].into(),
    ))
    .unwrap();
    assert!(reader.read().is_err());
    // a manifest that is not JSON
    block(store.put(
        &ObjectPath::from("ds/_arrow_sparse_dataset.json"),
        "{".into(),
    ))
    .unwrap();
    let e = DatasetReader::open_store(&at, &Default::default()).unwrap_err();
    assert!(matches!(e, Error::Parse { .. }), "{e}");
}

#[test]
fn a_streamed_writer_uploads_each_part_once_it_is_complete() {
    let counting = Counting::new(Arc::new(object_store::memory::InMemory::new()));
    let at = StoreLocation::new(counting.clone(), "stream").unwrap();
    let spec = TensorSpec::coo(vec![1000, 50], ValueType::Int64, IndexType::Int32);
    let mut w = DatasetWriter::create_in_store(&at, spec, &options(0, 100)).unwrap();
    let mut uploaded = Vec::new();
    for k in 0..10usize {
        let entries: Vec<(Vec<usize>, i64)> = (0..50)
            .map(|j| (vec![k * 100 + j, j], (k * j) as i64))
            .collect();
        w.write_chunk(
            &CooTensor::<i64, i64>::from_entries(vec![1000, 50], &entries)
                .unwrap()
                .into(),
        )
        .unwrap();
        // block k's part is uploaded when block k + 1 starts
        uploaded.push(counting.take_puts().len());
    }
    assert_eq!(uploaded[0], 0);
    assert!(uploaded[1..].iter().all(|&n| n == 1), "{uploaded:?}");
    assert_eq!(w.finish().unwrap().parts, 10);
    let puts = counting.take_puts();
    assert_eq!(puts.len(), 2, "the last part and the manifest: {puts:?}");
    let back = DatasetReader::open_store(&at, &Default::default()).unwrap();
    assert_eq!(back.read_range(0, 300..400).unwrap().tensor.nnz(), 50);
}

// ------------------------------------------------------------------ S3 (moto)

/// moto's S3 server on a loopback port, stopped when dropped.
struct Moto {
    child: Child,
    endpoint: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Start moto's server from the venv and make `buckets` in it.
fn moto(buckets: &[&str]) -> Moto {
    moto_with(buckets, false)
}

/// [`moto`], over TLS (a self-signed certificate) when `tls`.
fn moto_with(buckets: &[&str], tls: bool) -> Moto {
    let python = common::python();
    let port = free_port().to_string();
    let mut args = vec!["-m", "moto.server", "-H", "127.0.0.1", "-p", &port];
    if tls {
        args.push("--ssl");
    }
    let child = Command::new(&python)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start moto's server with {}: {e}", python.display()));
    let server = Moto {
        child,
        endpoint: format!("{}://127.0.0.1:{port}", if tls { "https" } else { "http" }),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let port: u16 = port.parse().unwrap();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "moto's server did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    for b in buckets {
        // moto makes a bucket on a PUT of its name; the store's API has no such call
        let out = Command::new(&python)
            .args([
                "-c",
                "import sys, boto3; boto3.client('s3', endpoint_url=sys.argv[1], verify=False, region_name='us-east-1', aws_access_key_id='test', aws_secret_access_key='test').create_bucket(Bucket=sys.argv[2])",
                &server.endpoint,
                b,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    server
}

/// A store of bucket `bucket` on the server.
fn s3(server: &Moto, bucket: &str) -> Arc<dyn ObjectStore> {
    Arc::new(
        object_store::aws::AmazonS3Builder::new()
            .with_endpoint(&server.endpoint)
            .with_allow_http(true)
            .with_region("us-east-1")
            .with_bucket_name(bucket)
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .build()
            .unwrap(),
    )
}

/// Run the CLI with `env` added: exit code, stdout, stderr.
fn cli_with(env: &[(&str, String)], args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arrow-sparse"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The environment the CLI reads an S3 store from.
fn s3_env(server: &Moto) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT_URL", server.endpoint.clone()),
        ("AWS_ALLOW_HTTP", "true".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ACCESS_KEY_ID", "test".into()),
        ("AWS_SECRET_ACCESS_KEY", "test".into()),
    ]
}

#[test]
#[ignore = "needs the Python venv: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn an_s3_server_reads_only_the_objects_and_ranges_it_needs() {
    let server = moto(&["tensors"]);
    let counting = Counting::new(s3(&server, "tensors"));
    let at = StoreLocation::new(counting.clone(), "a/b").unwrap();
    reads_fetch_only_what_they_need(&at, &counting);
}

#[test]
#[ignore = "needs the Python venv: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn an_s3_server_takes_multipart_parts_and_the_cli_s_urls() {
    let server = moto(&["big"]);
    let counting = Counting::new(s3(&server, "big"));
    let at = StoreLocation::new(counting.clone(), "ds").unwrap();
    // one part over the 8 MiB upload chunk: a multipart upload
    let mut r = Rng(99);
    let n = 1_500_000;
    let entries: Vec<(Vec<usize>, f64)> = (0..n)
        .map(|k| (vec![k / 1000, r.below(1 << 20)], r.next() as f64))
        .collect();
    let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![n / 1000, 1 << 20], &entries)
        .unwrap()
        .into();
    let opts = DatasetWriteOptions::new(0, 1 << 20).with_archive_options(
        ArchiveWriteOptions::default().with_compression(archive::ArchiveCompression::Uncompressed),
    );
    write_dataset_to_store(&at, &t.clone().into(), &opts).unwrap();
    let puts = counting.take_puts();
    assert!(puts[0].ends_with("(multipart)"), "{puts:?}");
    let back = DatasetReader::open_store(&at, &Default::default()).unwrap();
    assert!(back.parts()[0].bytes > 8 << 20);
    assert_eq!(back.read().unwrap().tensor, t);
    // the same tensor as one archive: a multipart upload too
    let one = StoreLocation::new(counting.clone(), "one.parquet").unwrap();
    let summary = archive::write_archive_to_store(&one, &t.clone().into(), &opts.archive).unwrap();
    assert!(summary.bytes > 8 << 20);
    assert_eq!(
        counting.take_puts(),
        vec!["one.parquet (multipart)".to_string()]
    );
    let back = ArchiveReader::open_store(&one, &Default::default()).unwrap();
    assert_eq!(back.read().unwrap().tensor, t);

    // the CLI: a Matrix Market file into an s3:// dataset and back out
    let dir = tempfile::tempdir().unwrap();
    let mtx = dir.path().join("a.mtx");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate real general\n6 4 4\n1 1 1.5\n3 2 -2\n5 4 4\n6 1 0.25\n",
    )
    .unwrap();
    let env = s3_env(&server);
    let run = |args: &[&str]| cli_with(&env, args);
    let mtx_arg = mtx.to_str().unwrap();
    let (code, out, err) = run(&[
        "convert",
        mtx_arg,
        "s3://big/cli/ds",
        "--partition-by",
        "0",
        "--rows-per-file",
        "2",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("s3://big/cli/ds (dataset)"), "{out}");
    let (code, dump, err) = run(&["dump", "s3://big/cli/ds"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        dump.contains(r#""entries":[[0,0,1.5],[2,1,-2.0],[4,3,4.0],[5,0,0.25]]"#),
        "{dump}"
    );
    let (code, out, err) = run(&["inspect", "s3://big/cli/ds"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("s3://big/cli/ds: dataset of 3 Parquet archives"),
        "{out}"
    );
    let local = dir.path().join("back.mtx");
    let (code, _, err) = run(&["convert", "s3://big/cli/ds", local.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::read_to_string(&local).unwrap().contains("6 4 4"));
    // a single archive at a URL: uploaded whole, read back; other kinds refused
    let (code, out, err) = run(&["convert", mtx_arg, "s3://big/cli/a.parquet"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (code, dump, err) = run(&["dump", "s3://big/cli/a.parquet"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        dump.contains(r#""entries":[[0,0,1.5],[2,1,-2.0],[4,3,4.0],[5,0,0.25]]"#),
        "{dump}"
    );
    let (code, _, err) = run(&["convert", mtx_arg, "s3://big/cli/a.arrow"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("a URL takes a Parquet archive"), "{err}");
    // no such dataset: a one-line error, exit code 3
    let (code, _, err) = run(&["dump", "s3://big/nothing"]);
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // an unreachable server: an error, not a hang
    drop(server);
    let (code, _, err) = run(&["dump", "s3://big/cli/ds"]);
    assert_eq!(code, Some(3), "{err}");
}

/// The CLI over HTTPS: the TLS stack (rustls) against moto's server with a
/// self-signed certificate, accepted with `AWS_ALLOW_INVALID_CERTIFICATES`;
/// without it, the certificate is refused with an error, not a panic.
#[test]
#[ignore = "needs the Python venv: run scripts/setup-interop.sh, then cargo test -- --include-ignored"]
fn an_s3_server_over_tls_is_reached_through_rustls() {
    let server = moto_with(&["secure"], true);
    let dir = tempfile::tempdir().unwrap();
    let mtx = dir.path().join("a.mtx");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 7\n3 3 -1\n",
    )
    .unwrap();
    let run = |args: &[&str], trust: bool| {
        let mut env = s3_env(&server);
        if trust {
            env.push(("AWS_ALLOW_INVALID_CERTIFICATES", "true".into()));
        }
        cli_with(&env, args)
    };
    let (code, out, err) = run(
        &[
            "convert",
            mtx.to_str().unwrap(),
            "s3://secure/ds",
            "--partition-by",
            "1",
        ],
        true,
    );
    assert_eq!(code, Some(0), "{out}{err}");
    let (code, dump, err) = run(&["dump", "s3://secure/ds"], true);
    assert_eq!(code, Some(0), "{err}");
    assert!(dump.contains(r#""entries":[[0,1,7],[2,2,-1]]"#), "{dump}");
    let (code, _, err) = run(&["dump", "s3://secure/ds"], false);
    assert_eq!(code, Some(3), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Without the venv, a plain run reports the S3 tests as ignored, and
/// `--include-ignored` makes them fail: they never pass.
#[test]
fn without_the_venv_the_s3_tests_never_pass() {
    let tests =
        common::assert_missing_program_is_never_a_pass("ARROW_SPARSE_PYTHON", "Python venv");
    assert_eq!(
        tests,
        [
            "an_s3_server_over_tls_is_reached_through_rustls",
            "an_s3_server_reads_only_the_objects_and_ranges_it_needs",
            "an_s3_server_takes_multipart_parts_and_the_cli_s_urls"
        ]
    );
}
