//! Binsparse NPZ and (feature `hdf5`) HDF5 read / write speed (run by
//! `benches/compare_binsparse.py`, which times the PyPI reference `binsparse` and
//! scipy `load_npz` / `save_npz` on the same matrix).
//!
//! ```text
//! bench_binsparse DIR   read DIR/reference.npz (written by the reference) and write
//!                       it as DIR/ours_stored.npz (no compression, like np.savez) and
//!                       DIR/ours_deflated.npz (like save_npz), reading each back;
//!                       prints `RESULT what seconds` lines (best of 3); with
//!                       the feature `hdf5` also DIR/reference.h5, and
//!                       DIR/ours_contiguous.h5 / DIR/ours_deflated.h5
//! ```

use std::path::Path;
use std::time::Instant;

use arrow_sparse::Result;
use arrow_sparse::io::{ImportOptions, NpzWriteOptions, binsparse::BinsparseFormat, npz};

fn best<T>(mut f: impl FnMut() -> Result<T>) -> Result<(f64, T)> {
    let mut out = None;
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        let v = f()?;
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(v);
    }
    Ok((best, out.expect("three runs")))
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir] = &args[..] else {
        eprintln!("usage: bench_binsparse DIR");
        std::process::exit(2);
    };
    let dir = Path::new(dir);
    let options = ImportOptions::default();
    let (s, msg) = best(|| npz::read(dir.join("reference.npz"), &options))?;
    println!("RESULT read_reference_file {s:.3} nnz={}", msg.tensor.nnz());
    for (name, compressed) in [("stored", false), ("deflated", true)] {
        let path = dir.join(format!("ours_{name}.npz"));
        let w = NpzWriteOptions::default()
            .with_binsparse_format(BinsparseFormat::Csr)
            .with_compressed(compressed);
        let (s, ()) = best(|| npz::write(&path, &msg, &w))?;
        println!("RESULT write_{name} {s:.3}");
        let (s, back) = best(|| npz::read(&path, &options))?;
        assert_eq!(back.tensor.nnz(), msg.tensor.nnz());
        println!("RESULT read_{name} {s:.3}");
    }
    #[cfg(feature = "hdf5")]
    {
        use arrow_sparse::io::{Hdf5WriteOptions, hdf5};
        let (s, msg) = best(|| hdf5::read(dir.join("reference.h5"), &options))?;
        println!(
            "RESULT hdf5_read_reference_file {s:.3} nnz={}",
            msg.tensor.nnz()
        );
        for (name, compressed) in [("contiguous", false), ("deflated", true)] {
            let path = dir.join(format!("ours_{name}.h5"));
            let w = Hdf5WriteOptions {
                binsparse_format: Some(BinsparseFormat::Csr),
                compressed,
            };
            let (s, ()) = best(|| hdf5::write(&path, &msg, &w))?;
            println!("RESULT hdf5_write_{name} {s:.3}");
            let (s, back) = best(|| hdf5::read(&path, &options))?;
            assert_eq!(back.tensor.nnz(), msg.tensor.nnz());
            println!("RESULT hdf5_read_{name} {s:.3}");
        }
    }
    Ok(())
}
