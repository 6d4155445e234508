//! Parquet archives of one tensor: `read_archive`, `ArchiveReader` (`read`,
//! `read_range` on every dimension, `chunks`, `read_row_group`,
//! `row_group_info`). What reads is converted, goes through kernels, and must
//! write back as an archive that reads as the same tensor (up to
//! `WRITE_BACK_ENTRIES` entries).
#![no_main]

use arrow_sparse::archive::{self, ArchiveReadOptions, ArchiveReader, ArchiveWriteOptions};
use arrow_sparse_fuzz::{
    CappedAlloc, WRITE_BACK_ENTRIES, assert_same, cheap_extents, entries, exercise, read_phase,
    scratch_file, write_scratch,
};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    arrow_sparse_fuzz::init();
    let path = write_scratch("input.parquet", data);
    let options = ArchiveReadOptions::default();
    let whole = read_phase(data.len(), || archive::read_archive(&path, &options));
    let _ = read_phase(data.len(), || -> arrow_sparse::Result<()> {
        let r = ArchiveReader::open_with(&path, &options)?;
        let shape = r.spec().shape.clone();
        // every partial read of a shape that is not cheap builds extent-sized
        // buffers (finding J): then one range of one dimension, one chunk and
        // one row group, chosen by the input
        let cheap = cheap_extents(&shape);
        let pick = data.len() % shape.len().max(1);
        for (d, &extent) in shape.iter().enumerate() {
            let ranges = [0..extent, extent / 2..extent, 1..2, 0..usize::MAX];
            let ranges = if cheap {
                &ranges[..]
            } else if d == pick {
                &ranges[data.len() % 4..][..1]
            } else {
                &[]
            };
            for range in ranges {
                if let Ok(part) = r.read_range(d, range.clone()) {
                    assert!(
                        part.rows_read <= r.rows(),
                        "read_range read {} of {} rows",
                        part.rows_read,
                        r.rows()
                    );
                }
            }
        }
        let _ = r.read_range(shape.len(), 0..1);
        let some = if cheap { 16 } else { 1 };
        for c in r.chunks().take(some) {
            let _ = c;
        }
        let n = r.num_row_groups();
        for i in 0..n.min(some) {
            let _ = r.row_group_info(i);
            let _ = r.read_row_group(i);
        }
        assert!(
            r.row_group_info(n).is_err() && r.read_row_group(n).is_err(),
            "row group past the end"
        );
        Ok(())
    });
    if let Ok(m) = whole {
        exercise(&m);
        if entries(&m.tensor) > WRITE_BACK_ENTRIES {
            return;
        }
        let again = scratch_file("again.parquet");
        if let Err(e) = archive::write_archive(&again, &m, &ArchiveWriteOptions::default()) {
            panic!("an archive that read does not write back: {e}");
        }
        match archive::read_archive(&again, &options) {
            Ok(back) => assert_same("archive round trip", &m.tensor, &back.tensor),
            Err(e) => panic!("an archive written from what read does not read: {e}"),
        }
    }
});
