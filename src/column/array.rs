//! [`SparseTensorArray`]: a checked sparse tensor column whose rows are read as
//! tensors without copying their buffers.

use crate::tensor::{EntryOrder, TensorOptions};
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, FixedSizeListArray, Int64Array, LargeListArray, ListArray,
    RecordBatch, StructArray,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::{Field, FieldRef};

use super::meta::{Child, SparseTensorType};
use crate::buffer::{IndexBuffer, ValueBuffer};
use crate::error::{Error, Result};
use crate::tensor::{
    AnyCoo, AnyCsf, AnyCsx, AnyGcs, AnyLevel, AnyTensor, CompressedAxis, CoordLayout, Format,
    Validation,
};
use crate::types::{IndexType, ValueType};

/// A `FixedSizeList<int64>` child (shape, axis order, dimensions, partitioning).
#[derive(Clone, Debug)]
struct FixedCol {
    name: String,
    list: FixedSizeListArray,
    values: Int64Array,
    size: usize,
}

/// The offsets of a `List` or `LargeList` child.
#[derive(Clone, Debug)]
enum Offsets {
    Small(OffsetBuffer<i32>),
    Large(OffsetBuffer<i64>),
}

/// A `List<T>` child: the row offsets and the one buffer all rows slice.
#[derive(Clone, Debug)]
struct ListCol {
    name: String,
    offsets: Offsets,
    nulls: Option<NullBuffer>,
    /// The values child's data buffer, its offset and length in elements.
    buffer: Buffer,
    start: usize,
    len: usize,
    width: usize,
}

#[derive(Clone, Debug)]
enum Col {
    Fixed(FixedCol),
    List(ListCol),
    Bool(BooleanArray),
}

fn bad(name: &str, row: Option<usize>, detail: impl Into<String>) -> Error {
    Error::invariant(format!("column child {name:?}"), row, detail)
}

impl FixedCol {
    fn get(&self, row: usize) -> Result<Vec<usize>> {
        if self.list.is_null(row) {
            return Err(bad(&self.name, Some(row), "null in a non-null row"));
        }
        let start = row
            .checked_mul(self.size)
            .ok_or_else(|| bad(&self.name, Some(row), "offset overflow"))?;
        let end = start.saturating_add(self.size);
        let items = self
            .values
            .values()
            .get(start..end)
            .ok_or_else(|| bad(&self.name, Some(row), "row lies outside the values"))?;
        if let Some(nulls) = self.values.nulls()
            && (start..end).any(|i| nulls.is_null(i))
        {
            return Err(bad(&self.name, Some(row), "null element in a non-null row"));
        }
        items
            .iter()
            .map(|&x| {
                usize::try_from(x).map_err(|_| {
                    Error::shape(
                        format!("{} of row {row}", self.name),
                        "non-negative integers",
                        x.to_string(),
                    )
                })
            })
            .collect()
    }
}

impl ListCol {
    fn new(name: &str, array: &ArrayRef) -> Result<Self> {
        let (offsets, nulls, values) = if let Some(l) = array.as_any().downcast_ref::<ListArray>() {
            (
                Offsets::Small(l.offsets().clone()),
                l.nulls().cloned(),
                l.values().clone(),
            )
        } else if let Some(l) = array.as_any().downcast_ref::<LargeListArray>() {
            (
                Offsets::Large(l.offsets().clone()),
                l.nulls().cloned(),
                l.values().clone(),
            )
        } else {
            return Err(bad(name, None, "is not a list array"));
        };
        if values.null_count() > 0 {
            return Err(bad(name, None, "holds null elements"));
        }
        let data = values.to_data();
        let width = values
            .data_type()
            .primitive_width()
            .ok_or_else(|| bad(name, None, "elements are not primitive"))?;
        let buffer = match data.buffers().first() {
            Some(b) => b.clone(),
            None if data.is_empty() => Buffer::from_vec(Vec::<u8>::new()),
            None => return Err(bad(name, None, "has no data buffer")),
        };
        Ok(ListCol {
            name: name.to_string(),
            offsets,
            nulls,
            buffer,
            start: data.offset(),
            len: data.len(),
            width,
        })
    }

    /// The element range of `row` in the values child.
    fn range(&self, row: usize) -> Result<(usize, usize)> {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(row)) {
            return Err(bad(&self.name, Some(row), "null list in a non-null row"));
        }
        let (a, b) = match &self.offsets {
            Offsets::Small(o) => (
                o.get(row).map(|&x| x as i64),
                o.get(row + 1).map(|&x| x as i64),
            ),
            Offsets::Large(o) => (o.get(row).copied(), o.get(row + 1).copied()),
        };
        let (Some(a), Some(b)) = (a, b) else {
            return Err(bad(&self.name, Some(row), "row beyond the offsets"));
        };
        match (usize::try_from(a), usize::try_from(b)) {
            (Ok(a), Ok(b)) if a <= b && b <= self.len => Ok((a, b)),
            _ => Err(bad(
                &self.name,
                Some(row),
                format!("offsets {a}..{b} do not lie in 0..{}", self.len),
            )),
        }
    }

    /// The byte offset in the data buffer and the element count of `row`.
    fn slot(&self, row: usize) -> Result<(usize, usize)> {
        let (a, b) = self.range(row)?;
        Ok(((self.start + a) * self.width, b - a))
    }

    fn index(&self, row: usize, ty: IndexType) -> Result<IndexBuffer> {
        let (offset, len) = self.slot(row)?;
        IndexBuffer::from_body(ty, &self.buffer, offset, len, &self.name, false)
    }

    fn values(&self, row: usize, ty: ValueType) -> Result<ValueBuffer> {
        let (offset, len) = self.slot(row)?;
        ValueBuffer::from_body(ty, &self.buffer, offset, len, &self.name, false)
    }
}

/// A sparse tensor column: an Arrow `StructArray` of the storage layout of
/// `format/SPEC.md` section 10 together with its [`SparseTensorType`].
///
/// Built from tensors with [`from_tensors`](Self::from_tensors) /
/// [`from_rows`](Self::from_rows), or from a column read from a file with
/// [`try_new`](Self::try_new) (which validates every row once). Rows come back
/// with [`value`](Self::value): the tensor's buffers are zero-copy slices of the
/// column's child buffers.
///
/// ```
/// use arrow_sparse::column::SparseTensorArray;
/// use arrow_sparse::{AnyTensor, CooTensor};
/// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.5)])?.into();
/// let b: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![4, 4], &[(vec![3, 0], -2.0)])?.into();
/// let column = SparseTensorArray::from_tensors([&a, &b])?;
/// assert_eq!(column.len(), 2);
/// assert_eq!(column.value(1)?, Some(b)); // rows may differ in shape and nnz
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SparseTensorArray {
    ty: SparseTensorType,
    array: StructArray,
    cols: Vec<Col>,
    /// The validation `value` applies (rows already checked by `try_new` are
    /// rebuilt with the O(1) checks only).
    validation: Validation,
}

impl SparseTensorArray {
    /// A column holding `tensors` (no null rows). Its type is
    /// [`SparseTensorType::infer`]red from them: they must share format, value
    /// and index types, number of dimensions and dimension names (and, for GCS,
    /// the compressed axis). Fails on an empty input (use [`from_rows`](Self::from_rows)).
    ///
    /// ```
    /// use arrow_sparse::column::SparseTensorArray;
    /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Error, Format};
    /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![1, 0], 3.0)])?;
    /// let csr: AnyTensor = coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into();
    /// let column = SparseTensorArray::from_tensors([&csr, &csr])?;
    /// assert_eq!((column.len(), column.data_type().format()), (2, Format::Csr));
    /// // every row must have the column's type: row 1 is COO, not CSR
    /// let coo: AnyTensor = coo.into();
    /// assert!(matches!(SparseTensorArray::from_tensors([&csr, &coo]), Err(Error::Row { row: 1, .. })));
    /// // no tensor to infer the type from
    /// assert!(matches!(SparseTensorArray::from_tensors(&[]), Err(Error::Unsupported(_))));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_tensors<'a>(tensors: impl IntoIterator<Item = &'a AnyTensor>) -> Result<Self> {
        let tensors: Vec<&AnyTensor> = tensors.into_iter().collect();
        let ty = SparseTensorType::infer(tensors.iter().copied())?;
        Self::from_rows(&ty, tensors.into_iter().map(Some))
    }

    /// A column of type `ty` holding `rows` (`None` is a null row).
    ///
    /// ```
    /// use arrow_sparse::column::{SparseTensorArray, SparseTensorType};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f32, i32>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
    /// let ty = SparseTensorType::of(&t)?;
    /// let column = SparseTensorArray::from_rows(&ty, [Some(&t), None, Some(&t)])?;
    /// assert_eq!(column.len(), 3);
    /// assert!(column.is_null(1)?);
    /// assert_eq!(column.value(2)?, Some(t));
    /// // unlike from_tensors, an empty column is fine: the type is given
    /// assert!(SparseTensorArray::from_rows(&ty, [])?.is_empty());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_rows<'a>(
        ty: &SparseTensorType,
        rows: impl IntoIterator<Item = Option<&'a AnyTensor>>,
    ) -> Result<Self> {
        let array = super::write::build(ty, rows)?;
        // built from tensors that passed their constructors: O(1) checks suffice
        Self::resolve(ty.clone(), array, Validation::Trusted)
    }

    /// Check a column read from a file or received from another library: the
    /// field's extension name and metadata, the storage type, and every non-null
    /// row through its format's validating constructor (O(total size)).
    ///
    /// Errors: [`Error::Type`] / [`Error::Parse`] for the field and its metadata,
    /// [`Error::Row`] (with the row number and the constructor's error, e.g.
    /// [`Error::Length`] or [`Error::IndexOutOfBounds`]) for a row that is not a
    /// valid tensor.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::{ArrayRef, FixedSizeListArray, Int64Array, StructArray};
    /// use arrow_schema::{DataType, Field};
    /// use arrow_sparse::column::SparseTensorArray;
    /// use arrow_sparse::{AnyTensor, CooTensor, Error};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0)])?.into();
    /// let column = SparseTensorArray::from_tensors([&t])?;
    /// let (field, array) = (column.field("t"), column.clone().into_array());
    /// assert_eq!(SparseTensorArray::try_new(&field, &array)?.value(0)?, Some(t));
    /// // the same storage with its "shape" child set to (1, 1): coordinate (1, 2) is out of bounds
    /// let (fields, mut children, nulls) = column.storage().clone().into_parts();
    /// let item = Arc::new(Field::new("item", DataType::Int64, false));
    /// children[0] = Arc::new(FixedSizeListArray::try_new(item, 2, Arc::new(Int64Array::from(vec![1, 1])), None)?);
    /// let bad: ArrayRef = Arc::new(StructArray::try_new(fields, children, nulls)?);
    /// let err = SparseTensorArray::try_new(&field, &bad).unwrap_err();
    /// assert!(matches!(err, Error::Row { row: 0, source } if matches!(*source, Error::IndexOutOfBounds { .. })));
    /// // a field without the extension metadata is not a sparse tensor column
    /// let plain = Field::new("t", array.data_type().clone(), true);
    /// assert!(matches!(SparseTensorArray::try_new(&plain, &array), Err(Error::Type { .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new(field: &Field, array: &ArrayRef) -> Result<Self> {
        Self::try_new_with(field, array, Validation::Full)
    }

    /// As [`try_new`](Self::try_new); with [`Validation::Trusted`] the O(nnz)
    /// pass over each row is skipped (only lengths and offsets are checked).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::{ArrayRef, FixedSizeListArray, Int64Array, StructArray};
    /// use arrow_schema::{DataType, Field};
    /// use arrow_sparse::column::SparseTensorArray;
    /// use arrow_sparse::{AnyTensor, CooTensor, Error, Validation};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0)])?.into();
    /// let column = SparseTensorArray::from_tensors([&t])?;
    /// let field = column.field("t");
    /// let trusted = SparseTensorArray::try_new_with(&field, &column.clone().into_array(), Validation::Trusted)?;
    /// assert_eq!(trusted.value(0)?, Some(t));
    /// // a row whose coordinate (1, 2) lies outside its shape (1, 1) ...
    /// let (fields, mut children, nulls) = column.storage().clone().into_parts();
    /// let item = Arc::new(Field::new("item", DataType::Int64, false));
    /// children[0] = Arc::new(FixedSizeListArray::try_new(item, 2, Arc::new(Int64Array::from(vec![1, 1])), None)?);
    /// let bad: ArrayRef = Arc::new(StructArray::try_new(fields, children, nulls)?);
    /// // ... is caught by the full check only: trust only data you wrote yourself
    /// assert!(matches!(SparseTensorArray::try_new_with(&field, &bad, Validation::Full), Err(Error::Row { row: 0, .. })));
    /// assert!(SparseTensorArray::try_new_with(&field, &bad, Validation::Trusted).is_ok());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn try_new_with(field: &Field, array: &ArrayRef, validation: Validation) -> Result<Self> {
        let ty = SparseTensorType::from_field(field)?;
        let array = array
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| Error::Type {
                what: format!("array of column {:?}", field.name()),
                expected: "a struct array".into(),
                found: array.data_type().to_string(),
            })?
            .clone();
        ty.check_storage(field.name(), array.data_type())?;
        let column = Self::resolve(ty, array, validation)?;
        for row in (0..column.len()).filter(|&r| column.array.is_valid(r)) {
            column.build(row, validation)?;
        }
        Ok(Self {
            validation: Validation::Trusted,
            ..column
        })
    }

    /// The sparse tensor column named `name` of a record batch, checked as by
    /// [`try_new`](Self::try_new).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::RecordBatch;
    /// use arrow_schema::Schema;
    /// use arrow_sparse::column::SparseTensorArray;
    /// use arrow_sparse::{AnyTensor, CooTensor, Error};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0)])?.into();
    /// let column = SparseTensorArray::from_tensors([&t])?;
    /// let schema = Arc::new(Schema::new(vec![column.field("tensor")]));
    /// let batch = RecordBatch::try_new(schema, vec![column.into_array()])?;
    /// assert_eq!(SparseTensorArray::from_batch(&batch, "tensor")?.value(0)?, Some(t));
    /// assert!(matches!(SparseTensorArray::from_batch(&batch, "other"), Err(Error::Unsupported(_))));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn from_batch(batch: &RecordBatch, name: &str) -> Result<Self> {
        let schema = batch.schema();
        let (i, field) = schema
            .column_with_name(name)
            .ok_or_else(|| Error::Unsupported(format!("no column named {name:?}")))?;
        Self::try_new(field, batch.column(i))
    }

    fn resolve(ty: SparseTensorType, array: StructArray, validation: Validation) -> Result<Self> {
        let mut cols = Vec::new();
        for (name, child) in ty.children() {
            let a = array
                .column_by_name(&name)
                .ok_or_else(|| bad(&name, None, "is missing"))?;
            cols.push(match child {
                Child::Fixed(size) => {
                    let list = a
                        .as_any()
                        .downcast_ref::<FixedSizeListArray>()
                        .ok_or_else(|| bad(&name, None, "is not a fixed-size list"))?
                        .clone();
                    let values = list
                        .values()
                        .as_any()
                        .downcast_ref::<Int64Array>()
                        .ok_or_else(|| bad(&name, None, "is not a list of int64"))?
                        .clone();
                    // Nulls may stand under null rows (a Parquet reader writes
                    // the slots of a null struct row as nulls); `get` refuses
                    // them in the rows it reads.
                    Col::Fixed(FixedCol {
                        name,
                        list,
                        values,
                        size,
                    })
                }
                Child::List(_) => Col::List(ListCol::new(&name, a)?),
                Child::Bool => Col::Bool(
                    a.as_any()
                        .downcast_ref::<BooleanArray>()
                        .ok_or_else(|| bad(&name, None, "is not boolean"))?
                        .clone(),
                ),
            });
        }
        Ok(SparseTensorArray {
            ty,
            array,
            cols,
            validation,
        })
    }

    /// The column's type.
    ///
    /// ```
    /// use arrow_sparse::column::{SparseTensorArray, SparseTensorType};
    /// use arrow_sparse::{AnyTensor, CooTensor, Format, ValueType};
    /// let t: AnyTensor = CooTensor::<f32, i32>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0)])?.into();
    /// let column = SparseTensorArray::from_tensors([&t])?;
    /// assert_eq!(column.data_type(), &SparseTensorType::of(&t)?);
    /// assert_eq!((column.data_type().format(), column.data_type().value_type()), (Format::Coo, ValueType::Float32));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn data_type(&self) -> &SparseTensorType {
        &self.ty
    }
    /// Number of rows.
    ///
    /// ```
    /// use arrow_sparse::column::{SparseTensorArray, SparseTensorType};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
    /// let column = SparseTensorArray::from_rows(&SparseTensorType::of(&t)?, [Some(&t), None, Some(&t)])?;
    /// assert_eq!(column.len(), 3); // null rows count
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.array.len()
    }
    /// Whether the column has no rows.
    ///
    /// ```
    /// use arrow_sparse::column::{SparseTensorArray, SparseTensorType};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
    /// let ty = SparseTensorType::of(&t)?;
    /// assert!(SparseTensorArray::from_rows(&ty, [])?.is_empty());
    /// assert!(!SparseTensorArray::from_rows(&ty, [None])?.is_empty()); // one null row
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.array.is_empty()
    }
    /// Whether row `i` is null; [`Error::IndexOutOfBounds`] when there is no row
    /// `i` (like [`value`](Self::value); arrow-rs's `Array::is_null` panics there).
    ///
    /// ```
    /// use arrow_sparse::column::{SparseTensorArray, SparseTensorType};
    /// use arrow_sparse::{AnyTensor, CooTensor, Error};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
    /// let column = SparseTensorArray::from_rows(&SparseTensorType::of(&t)?, [Some(&t), None])?;
    /// assert_eq!((column.is_null(0)?, column.is_null(1)?), (false, true));
    /// assert!(matches!(column.is_null(2), Err(Error::IndexOutOfBounds { position: 2, .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_null(&self, i: usize) -> Result<bool> {
        self.check_row(i)?;
        Ok(self.array.is_null(i))
    }

    fn check_row(&self, i: usize) -> Result<()> {
        if i >= self.len() {
            return Err(Error::IndexOutOfBounds {
                buffer: "rows of the sparse tensor column".into(),
                position: i,
                value: i as i128,
                bound: self.len() as u64,
            });
        }
        Ok(())
    }
    /// The storage struct array.
    ///
    /// ```
    /// use arrow_array::Array;
    /// use arrow_sparse::column::SparseTensorArray;
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 1], 1.0), (vec![1, 2], 2.0)])?.into();
    /// let column = SparseTensorArray::from_tensors([&t, &t])?;
    /// let storage = column.storage();
    /// assert_eq!(storage.column_names(), ["shape", "coords", "values", "canonical"]);
    /// assert_eq!(storage.len(), 2);
    /// assert_eq!(storage.data_type(), &column.data_type().storage_type());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn storage(&self) -> &StructArray {
        &self.array
    }
    /// The storage as an [`ArrayRef`], for a `RecordBatch`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::{Array, Int64Array, RecordBatch};
    /// use arrow_schema::{DataType, Field, Schema};
    /// use arrow_sparse::column::SparseTensorArray;
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
    /// let column = SparseTensorArray::from_tensors([&t, &t])?;
    /// let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), column.field("t")]));
    /// let array = column.into_array();
    /// assert_eq!(array.len(), 2);
    /// let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![7, 8])), array])?;
    /// assert_eq!(batch.num_rows(), 2);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn into_array(self) -> ArrayRef {
        Arc::new(self.array)
    }
    /// A nullable field of this column's extension type named `name`.
    ///
    /// ```
    /// use arrow_sparse::column::{SparseTensorArray, SparseTensorType, COO_NAME};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
    /// let column = SparseTensorArray::from_tensors([&t])?;
    /// let field = column.field("tensor");
    /// assert_eq!((field.name().as_str(), field.is_nullable()), ("tensor", true));
    /// assert_eq!(field.extension_type_name(), Some(COO_NAME));
    /// assert_eq!(&SparseTensorType::from_field(&field)?, column.data_type());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn field(&self, name: &str) -> Field {
        self.ty.field(name)
    }
    /// As [`field`](Self::field), shared.
    ///
    /// ```
    /// use arrow_schema::Schema;
    /// use arrow_sparse::column::{sparse_columns, SparseTensorArray};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])?.into();
    /// let column = SparseTensorArray::from_tensors([&t])?;
    /// let field = column.field_ref("tensor");
    /// assert_eq!(*field, column.field("tensor"));
    /// assert_eq!(sparse_columns(&Schema::new(vec![field])), [0]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn field_ref(&self, name: &str) -> FieldRef {
        Arc::new(self.field(name))
    }

    /// Row `i` as a tensor (`None` for a null row), its buffers zero-copy slices
    /// of the column's child buffers (copied only if misaligned).
    ///
    /// ```
    /// use arrow_sparse::column::{SparseTensorArray, SparseTensorType};
    /// use arrow_sparse::{AnyTensor, CooTensor, Error};
    /// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0)])?.into();
    /// let column = SparseTensorArray::from_rows(&SparseTensorType::of(&t)?, [Some(&t), None])?;
    /// let row = column.value(0)?.expect("row 0 is not null");
    /// assert_eq!((row.get::<f64>(&[1, 2])?, &row), (Some(4.0), &t));
    /// assert_eq!(column.value(1)?, None); // a null row
    /// assert!(matches!(column.value(2), Err(Error::IndexOutOfBounds { position: 2, .. })));
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn value(&self, i: usize) -> Result<Option<AnyTensor>> {
        self.check_row(i)?;
        if self.array.is_null(i) {
            return Ok(None);
        }
        self.build(i, self.validation).map(Some)
    }

    /// Every row, in order.
    ///
    /// ```
    /// use arrow_sparse::column::{SparseTensorArray, SparseTensorType};
    /// use arrow_sparse::{AnyTensor, CooTensor};
    /// let a: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![0], 1.0)])?.into();
    /// let b: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![5], &[(vec![4], 2.0)])?.into();
    /// let column = SparseTensorArray::from_rows(&SparseTensorType::of(&a)?, [Some(&a), None, Some(&b)])?;
    /// let rows = column.iter().collect::<arrow_sparse::Result<Vec<_>>>()?;
    /// assert_eq!(rows, [Some(a), None, Some(b)]);
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = Result<Option<AnyTensor>>> + '_ {
        (0..self.len()).map(|i| self.value(i))
    }

    fn fixed(&self, k: usize, row: usize) -> Result<Vec<usize>> {
        match &self.cols[k] {
            Col::Fixed(c) => c.get(row),
            _ => Err(bad("?", None, "internal child mismatch")),
        }
    }

    fn list(&self, k: usize) -> Result<&ListCol> {
        match &self.cols[k] {
            Col::List(c) => Ok(c),
            _ => Err(bad("?", None, "internal child mismatch")),
        }
    }

    fn index(&self, k: usize, row: usize) -> Result<IndexBuffer> {
        self.list(k)?.index(row, self.ty.index_type())
    }

    fn indptr(&self, k: usize, row: usize) -> Result<IndexBuffer> {
        let ty = self.ty.indptr_type().unwrap_or(self.ty.index_type());
        self.list(k)?.index(row, ty)
    }

    fn values(&self, k: usize, row: usize) -> Result<ValueBuffer> {
        self.list(k)?.values(row, self.ty.value_type())
    }

    /// Row `row` (not null) through its format's constructor.
    fn build(&self, row: usize, v: Validation) -> Result<AnyTensor> {
        self.build_row(row, v).map_err(|e| Error::Row {
            row,
            source: Box::new(e),
        })
    }

    fn build_row(&self, row: usize, v: Validation) -> Result<AnyTensor> {
        let storage = self.build_storage(row, v)?;
        match self.ty.levels() {
            None => Ok(storage),
            Some((format, it, pt)) => Ok(AnyTensor::Level(AnyLevel::from_storage(
                &storage,
                format.clone(),
                it,
                pt,
                &TensorOptions::default().with_validation(v),
            )?)),
        }
    }

    fn build_storage(&self, row: usize, v: Validation) -> Result<AnyTensor> {
        let ty = &self.ty;
        let shape = self.fixed(0, row)?;
        let names = ty.dim_names().to_vec();
        Ok(match ty.format() {
            Format::Coo => {
                let canonical = match &self.cols[3] {
                    Col::Bool(b) if b.is_valid(row) => b.value(row),
                    _ => return Err(bad("canonical", Some(row), "null in a non-null row")),
                };
                AnyTensor::Coo(AnyCoo::try_new(
                    shape,
                    CoordLayout::RowMajor,
                    EntryOrder::from(canonical),
                    self.index(1, row)?,
                    self.values(2, row)?,
                    &TensorOptions::default()
                        .with_validation(v)
                        .with_dim_names(names),
                )?)
            }
            Format::Csr | Format::Csc => {
                let axis = if ty.format() == Format::Csr {
                    CompressedAxis::Row
                } else {
                    CompressedAxis::Column
                };
                AnyTensor::Csx(AnyCsx::try_new(
                    shape,
                    axis,
                    self.indptr(1, row)?,
                    self.index(2, row)?,
                    self.values(3, row)?,
                    &TensorOptions::default()
                        .with_validation(v)
                        .with_dim_names(names),
                )?)
            }
            Format::Csf => {
                let n = ty.ndim();
                let order = match ty.axis_order() {
                    Some(o) => o.to_vec(),
                    None => self.fixed(2 * n + 1, row)?,
                };
                let indptr = (0..n - 1)
                    .map(|l| self.indptr(1 + l, row))
                    .collect::<Result<_>>()?;
                let indices = (0..n)
                    .map(|l| self.index(n + l, row))
                    .collect::<Result<_>>()?;
                AnyTensor::Csf(
                    AnyCsf::try_new(
                        shape,
                        order,
                        indptr,
                        indices,
                        self.values(2 * n, row)?,
                        &TensorOptions::default()
                            .with_validation(v)
                            .with_dim_names(names),
                    )?
                    .with_indptr_type(ty.indptr_type().unwrap_or(ty.index_type()))?,
                )
            }
            _ => {
                let per_row = match ty.gcs_map() {
                    Some(_) => None,
                    None => Some((self.fixed(4, row)?, self.fixed(5, row)?)),
                };
                let map = ty.gcs_dim_map(shape, per_row)?;
                let matrix = AnyCsx::try_new(
                    map.reduced_shape().to_vec(),
                    ty.compressed_axis().unwrap_or_default(),
                    self.indptr(1, row)?,
                    self.index(2, row)?,
                    self.values(3, row)?,
                    &TensorOptions::default().with_validation(v),
                )?;
                AnyTensor::Gcs(AnyGcs::try_new(
                    map,
                    matrix,
                    &TensorOptions::default().with_dim_names(names),
                )?)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CooTensor;

    #[test]
    fn rows_past_the_end_are_errors_not_panics() {
        let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.0)])
            .unwrap()
            .into();
        let ty = SparseTensorType::of(&t).unwrap();
        // with a null buffer (arrow-rs's is_null asserts on the index there) and without
        for rows in [vec![Some(&t), None], vec![Some(&t)]] {
            let column = SparseTensorArray::from_rows(&ty, rows.clone()).unwrap();
            for i in [rows.len(), rows.len() + 7, usize::MAX] {
                assert!(
                    matches!(column.is_null(i), Err(Error::IndexOutOfBounds { position, .. }) if position == i)
                );
                assert!(matches!(
                    column.value(i),
                    Err(Error::IndexOutOfBounds { .. })
                ));
            }
        }
    }
}
