//! One [`ExtensionType`] per column format, so that arrow-rs's own field API
//! recognises sparse tensor columns: `field.try_extension_type::<CsrType>()`,
//! `Field::with_extension_type(CsrType)`, `field.extension_type_name()`.
//!
//! Each type wraps the column constants ([`SparseTensorType`], its
//! [`ExtensionType::Metadata`]) of one format; [`SparseTensorType`] remains the view
//! of a column of any format.

use arrow_schema::extension::ExtensionType;
use arrow_schema::{ArrowError, DataType};

use super::meta::{COO_NAME, CSC_NAME, CSF_NAME, CSR_NAME, GCS_NAME, SparseTensorType};
use crate::error::{Error, Result};
use crate::tensor::Format;

macro_rules! extension_type {
    (
        $(#[$doc:meta])*
        $name:ident, $ext:expr, $format:expr, $fname:literal,
        tensor: $tensor:literal
    ) => {
        $(#[$doc])*
        ///
        /// ```
        /// use arrow_schema::extension::ExtensionType;
        /// use arrow_schema::Field;
        #[doc = concat!(" use arrow_sparse::column::{", stringify!($name), ", SparseTensorArray, SparseTensorType};")]
        /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, IndexType};
        /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0), (vec![0, 1], 1.5)])?;
        #[doc = concat!(" let t: AnyTensor = ", $tensor, ";")]
        /// let column = SparseTensorArray::from_tensors([&t])?;
        /// // arrow-rs's own field API knows the column's type
        /// let field = column.field("m");
        #[doc = concat!(" assert_eq!(field.extension_type_name(), Some(", stringify!($name), "::NAME));")]
        #[doc = concat!(" let ty = field.try_extension_type::<", stringify!($name), ">()?;")]
        /// assert_eq!(ty.tensor_type(), column.data_type());
        /// // and builds the same field from the type
        /// let built = Field::new("m", column.data_type().storage_type(), true).with_extension_type(ty);
        /// assert_eq!(built, field);
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name(SparseTensorType);

        impl $name {
            /// The column constants (value and index types, dimensions, ...).
            ///
            /// ```
            #[doc = concat!(" use arrow_sparse::column::{", stringify!($name), ", SparseTensorArray};")]
            /// use arrow_sparse::{AnyTensor, CompressedAxis, Convert, CooTensor, Format, ValueType};
            /// let coo = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![1, 2], 4.0), (vec![0, 1], 1.5)])?;
            #[doc = concat!(" let t: AnyTensor = ", $tensor, ";")]
            /// let field = SparseTensorArray::from_tensors([&t])?.field("m");
            #[doc = concat!(" let ty = field.try_extension_type::<", stringify!($name), ">()?.tensor_type().clone();")]
            #[doc = concat!(" assert_eq!((ty.format(), ty.value_type()), (", stringify!($format), ", ValueType::Float64));")]
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn tensor_type(&self) -> &SparseTensorType {
                &self.0
            }
        }

        impl From<$name> for SparseTensorType {
            fn from(t: $name) -> Self {
                t.0
            }
        }

        impl TryFrom<SparseTensorType> for $name {
            type Error = Error;
            fn try_from(ty: SparseTensorType) -> Result<Self> {
                if ty.format() != $format {
                    return Err(Error::Type {
                        what: concat!("format of an ", $fname, " column type").into(),
                        expected: $format.to_string(),
                        found: ty.format().to_string(),
                    });
                }
                Ok($name(ty))
            }
        }

        impl ExtensionType for $name {
            const NAME: &'static str = $ext;
            type Metadata = SparseTensorType;

            fn metadata(&self) -> &SparseTensorType {
                &self.0
            }

            fn serialize_metadata(&self) -> Option<String> {
                Some(self.0.metadata_json())
            }

            fn deserialize_metadata(
                metadata: Option<&str>,
            ) -> std::result::Result<SparseTensorType, ArrowError> {
                let text = metadata.ok_or_else(|| {
                    ArrowError::from(Error::Parse {
                        what: "sparse tensor column metadata".into(),
                        detail: concat!("an ", $fname, " column needs ARROW:extension:metadata").into(),
                    })
                })?;
                Ok(SparseTensorType::parse($format, text)?)
            }

            fn supports_data_type(&self, data_type: &DataType) -> std::result::Result<(), ArrowError> {
                Ok(self.0.check_storage("", data_type)?)
            }

            fn try_new(
                data_type: &DataType,
                metadata: SparseTensorType,
            ) -> std::result::Result<Self, ArrowError> {
                let ty = $name::try_from(metadata)?;
                ty.supports_data_type(data_type)?;
                Ok(ty)
            }
        }
    };
}

extension_type!(
    /// The extension type of COO columns, `arrow_sparse.coo`.
    CooType, COO_NAME, Format::Coo, "arrow_sparse.coo",
    tensor: "coo.clone().into()"
);
extension_type!(
    /// The extension type of CSR columns, `arrow_sparse.csr`.
    CsrType, CSR_NAME, Format::Csr, "arrow_sparse.csr",
    tensor: "coo.to_csx::<i32, i32>(CompressedAxis::Row)?.into()"
);
extension_type!(
    /// The extension type of CSC columns, `arrow_sparse.csc`.
    CscType, CSC_NAME, Format::Csc, "arrow_sparse.csc",
    tensor: "coo.to_csx::<i32, i64>(CompressedAxis::Column)?.into()"
);
extension_type!(
    /// The extension type of CSF columns, `arrow_sparse.csf`.
    CsfType, CSF_NAME, Format::Csf, "arrow_sparse.csf",
    tensor: "coo.to_csf::<i32, i32>(&[1, 0])?.into()"
);
extension_type!(
    /// The extension type of GCS columns, `arrow_sparse.gcs`.
    GcsType, GCS_NAME, Format::Gcs, "arrow_sparse.gcs",
    tensor: "AnyTensor::from(coo.clone()).to_gcs(arrow_sparse::dims::DimMap::identity(vec![2, 3])?, CompressedAxis::Row, IndexType::Int32)?"
);

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use arrow_schema::Field;

    use super::*;
    use crate::column::SparseTensorArray;
    use crate::{AnyTensor, CompressedAxis, Convert, CooTensor};

    fn csr_field() -> (SparseTensorType, Field) {
        let coo = CooTensor::<f32, i64>::from_entries(vec![3, 4], &[(vec![2, 3], 1.0)]).unwrap();
        let t: AnyTensor = coo.to_csx::<i32, i64>(CompressedAxis::Row).unwrap().into();
        let col = SparseTensorArray::from_tensors([&t]).unwrap();
        (col.data_type().clone(), col.field("m"))
    }

    #[test]
    fn arrow_field_api_round_trips_every_format_type() {
        let (ty, field) = csr_field();
        let csr = field.try_extension_type::<CsrType>().unwrap();
        assert_eq!(csr.tensor_type(), &ty);
        assert!(field.has_valid_extension_type::<CsrType>());
        // a CSR column is not a CSC, COO, CSF or GCS column
        assert!(field.try_extension_type::<CscType>().is_err());
        assert!(field.try_extension_type::<CooType>().is_err());
        assert!(field.try_extension_type::<CsfType>().is_err());
        assert!(field.try_extension_type::<GcsType>().is_err());
        assert_eq!(SparseTensorType::from(csr.clone()), ty);
        assert!(CooType::try_from(ty.clone()).is_err());
        // metadata and storage must agree
        let mut plain = Field::new("m", DataType::Int64, true);
        assert!(plain.try_with_extension_type(csr.clone()).is_err());
        let mut no_meta = field.clone();
        no_meta.set_metadata(HashMap::from([(
            "ARROW:extension:name".to_string(),
            CsrType::NAME.to_string(),
        )]));
        let e = no_meta.try_extension_type::<CsrType>().unwrap_err();
        assert!(e.to_string().contains("ARROW:extension:metadata"), "{e}");
        let mut bad_storage = field.clone();
        bad_storage = bad_storage.with_data_type(DataType::Int64);
        assert!(bad_storage.try_extension_type::<CsrType>().is_err());
    }

    #[test]
    fn errors_are_arrow_errors_that_keep_the_crate_error() {
        let (_, field) = csr_field();
        let mut broken = field.clone();
        broken
            .metadata_mut()
            .insert("ARROW:extension:metadata".to_string(), "{".to_string());
        let e = broken.try_extension_type::<CsrType>().unwrap_err();
        let ArrowError::ExternalError(inner) = e else {
            panic!("{e:?}")
        };
        assert!(matches!(
            inner.downcast_ref::<Error>(),
            Some(Error::Parse { .. })
        ));
    }
}
