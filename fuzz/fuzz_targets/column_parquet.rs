//! Sparse tensor columns (extension arrays) in a table read from a Parquet file:
//! `column::files::read_tensors` and `read_batches`. Every tensor that reads is
//! converted and goes through kernels, and the column must write back as a table
//! that reads as the same tensors.
#![no_main]

use std::sync::Arc;

use arrow_sparse::column::{SparseTensorArray, files as io};
use arrow_sparse_fuzz::{
    CappedAlloc, assert_same, exercise, read_phase, scratch_file, write_scratch,
};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    arrow_sparse_fuzz::init();
    let path = write_scratch("input.parquet", data);
    let _ = read_phase(data.len(), || io::read_batches(&path));
    let Ok(Some(tensors)) = read_phase(data.len(), || io::read_tensors(&path)) else {
        return;
    };
    for t in tensors.iter().take(4) {
        exercise(&t.clone().into());
    }
    if tensors.is_empty() {
        return;
    }
    let column = match SparseTensorArray::from_tensors(tensors.iter()) {
        Ok(c) => c,
        Err(e) => panic!("the tensors of one column do not make a column again: {e}"),
    };
    let schema = Arc::new(arrow_schema::Schema::new(vec![column.field("t")]));
    let batch = arrow_array::RecordBatch::try_new(schema.clone(), vec![column.into_array()])
        .expect("one column");
    let again = scratch_file("again.parquet");
    if let Err(e) = io::write_batches(&again, schema, &[batch]) {
        panic!("a column that read does not write back: {e}");
    }
    match io::read_tensors(&again) {
        Ok(Some(back)) => {
            assert_eq!(back.len(), tensors.len(), "column round trip: tensor count");
            for (a, b) in tensors.iter().zip(&back) {
                assert_same("column round trip", a, b);
            }
        }
        other => panic!("a column written from what read does not read: {other:?}"),
    }
});
