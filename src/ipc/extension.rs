//! GCS, DM and level tensors on the wire: the storage tensor's plain message plus
//! extension metadata (`ARROW:extension:name` / `ARROW:extension:metadata`, JSON)
//! in the Message's `custom_metadata`. A reader that ignores the metadata (such as
//! libarrow) sees a valid tensor of the storage shape. Specified in
//! `format/SPEC.md` section 8 and `format/extension-metadata.schema.json`.

use crate::tensor::TensorOptions;
use serde_json::{Map, Value as J, json};

use crate::dims::{DimMap, ViewChain, ViewOp};
use crate::error::{Error, Result};
use crate::tensor::level::{AnyLevel, LevelFormat, LevelType, MAX_LEVELS as MAX_LEVEL_TYPES};
use crate::tensor::{AnyDm, AnyGcs, AnyTensor, Validation};
use crate::types::IndexType;

/// Key of the extension name.
///
/// ```
/// use arrow_sparse::ipc::{self, extension::{EXTENSION_NAME, GCS_NAME}};
/// use arrow_sparse::{dims::DimMap, AnyTensor, CompressedAxis, CooTensor, IndexType};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3, 4], &[(vec![1, 2, 3], 5.0)])?.into();
/// let gcs = t.to_gcs(DimMap::try_new(vec![2, 3, 4], vec![0, 1, 2], vec![2])?, CompressedAxis::Row, IndexType::Int32)?;
/// let encoded = ipc::encode(&gcs, &[], &ipc::StreamWriteOptions::default())?;
/// // what any Arrow reader sees in the Message's custom_metadata
/// let message = arrow_ipc::root_as_message(&encoded.header[8..])?;
/// let custom = message.custom_metadata().expect("custom metadata");
/// assert!(custom.iter().any(|kv| kv.key() == Some(EXTENSION_NAME) && kv.value() == Some(GCS_NAME)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const EXTENSION_NAME: &str = "ARROW:extension:name";
/// Key of the extension metadata (JSON).
///
/// ```
/// use arrow_sparse::ipc::{self, extension::{EXTENSION_METADATA, EXTENSION_NAME, GCS_NAME}};
/// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix, Format};
/// // a plain CSR matrix [[0, 1], [2, 0]] ...
/// let m: AnyTensor = CsxMatrix::<f64, i32, i32>::try_new(
///     vec![2, 2], CompressedAxis::Row, vec![0, 1, 2].into(), vec![1, 0].into(), vec![1.0, 2.0].into())?.into();
/// // ... sent with metadata saying it stores a GCS tensor whose rows are dimension 1
/// let json = r#"{"version":1,"shape":[2,2],"dimensions":[1,0],"partitioning":[1]}"#;
/// let meta = [(EXTENSION_NAME, GCS_NAME), (EXTENSION_METADATA, json)].map(|(k, v)| (k.to_string(), v.to_string()));
/// let bytes = ipc::encode(&m, &meta, &ipc::StreamWriteOptions::default())?.to_vec().into();
/// let (msg, _) = ipc::decode(&bytes, &ipc::StreamReadOptions::default())?.expect("a message");
/// assert_eq!(msg.tensor.format(), Format::Gcs);
/// assert_eq!(msg.tensor.get::<f64>(&[0, 1])?, Some(2.0)); // the matrix transposed
/// assert!(msg.custom_metadata.is_empty()); // the reader consumes the extension keys
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const EXTENSION_METADATA: &str = "ARROW:extension:metadata";
/// Extension name of GCS tensors.
///
/// ```
/// use arrow_sparse::ipc::{self, extension::{EXTENSION_NAME, GCS_NAME}};
/// use arrow_sparse::{AnyTensor, CooTensor, Error, Format};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![3], &[(vec![2], 1.5)])?.into();
/// let send = |name: &str| -> arrow_sparse::Result<_> {
///     let meta = [(EXTENSION_NAME.to_string(), name.to_string())];
///     let bytes = ipc::encode(&t, &meta, &ipc::StreamWriteOptions::default())?.to_vec().into();
///     Ok(ipc::decode(&bytes, &ipc::StreamReadOptions::default())?.expect("a message").0)
/// };
/// // other extension names are passed through as plain metadata
/// let other = send("my.units")?;
/// assert_eq!((other.tensor.format(), other.custom_metadata.len()), (Format::Coo, 1));
/// // this one asks for a GCS tensor, which needs its metadata
/// assert!(matches!(send(GCS_NAME), Err(Error::Parse { .. })));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const GCS_NAME: &str = "arrow_sparse.gcs";
/// Extension name of DM tensors.
///
/// ```
/// use arrow_sparse::ipc::{self, extension::{DM_NAME, EXTENSION_NAME}};
/// use arrow_sparse::{AnyTensor, CooTensor, Format, IndexType, dims::DimMap};
/// let t: AnyTensor = CooTensor::<f64, i64>::from_entries(vec![2, 3], &[(vec![0, 2], 2.0)])?.into();
/// let dm = t.to_dm(DimMap::try_new(vec![2, 3], vec![1, 0], vec![1])?, Format::Coo, IndexType::Int64)?;
/// let encoded = ipc::encode(&dm, &[], &ipc::StreamWriteOptions::default())?;
/// let message = arrow_ipc::root_as_message(&encoded.header[8..])?;
/// let custom = message.custom_metadata().expect("custom metadata");
/// assert!(custom.iter().any(|kv| kv.key() == Some(EXTENSION_NAME) && kv.value() == Some(DM_NAME)));
/// let (back, _) = ipc::decode(&encoded.to_vec().into(), &ipc::StreamReadOptions::default())?.expect("a message");
/// assert_eq!((back.tensor.format(), back.tensor.get::<f64>(&[0, 2])?), (Format::Dm, Some(2.0)));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const DM_NAME: &str = "arrow_sparse.dm";
/// Extension name of level tensors (format/SPEC.md 8.6): the message is the
/// nearest plain tensor ([`AnyLevel::to_storage`]), the metadata the level types,
/// the axis order and the index types.
///
/// ```
/// use arrow_sparse::ipc::{self, extension::{EXTENSION_METADATA, EXTENSION_NAME, LEVELS_NAME}};
/// use arrow_sparse::tensor::level::{LevelFormat, LevelTensor};
/// use arrow_sparse::{AnyTensor, CooTensor, Format};
/// let coo = CooTensor::<f64, i64>::from_entries(vec![3, 4], &[(vec![2, 1], 5.0)])?;
/// let dcsr: AnyTensor = LevelTensor::<f64, i32>::dcsr(&coo)?.into();
/// let encoded = ipc::encode(&dcsr, &[], &ipc::StreamWriteOptions::default())?;
/// let message = arrow_ipc::root_as_message(&encoded.header[8..])?;
/// let custom: Vec<_> = message.custom_metadata().expect("custom metadata").iter()
///     .map(|kv| (kv.key().unwrap_or_default().to_string(), kv.value().unwrap_or_default().to_string())).collect();
/// assert_eq!(custom[0], (EXTENSION_NAME.to_string(), LEVELS_NAME.to_string()));
/// assert_eq!(custom[1], (EXTENSION_METADATA.to_string(),
///     r#"{"axis_order":[0,1],"index_type":"int32","indptr_type":"int32","levels":["compressed","compressed"],"version":1}"#.to_string()));
/// let (back, _) = ipc::decode(&encoded.to_vec().into(), &ipc::StreamReadOptions::default())?.expect("a message");
/// assert_eq!((back.tensor.format(), back.tensor), (Format::Level, dcsr));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const LEVELS_NAME: &str = "arrow_sparse.levels";
/// The version of the GCS / DM / level extension metadata (the `"version"` field of the JSON
/// in `ARROW:extension:metadata`) this crate writes and reads.
///
/// ```
/// use arrow_sparse::ipc::{self, extension::{EXTENSION_METADATA, EXTENSION_METADATA_VERSION, EXTENSION_NAME, GCS_NAME}};
/// use arrow_sparse::{AnyTensor, CompressedAxis, CsxMatrix, Error, Format};
/// let m: AnyTensor = CsxMatrix::<f64, i32, i32>::try_new(
///     vec![2, 2], CompressedAxis::Row, vec![0, 1, 2].into(), vec![1, 0].into(), vec![1.0, 2.0].into())?.into();
/// let send = |version: u64| -> arrow_sparse::Result<_> {
///     let json = format!(r#"{{"version":{version},"shape":[2,2],"dimensions":[0,1],"partitioning":[1]}}"#);
///     let meta = [(EXTENSION_NAME.to_string(), GCS_NAME.to_string()), (EXTENSION_METADATA.to_string(), json)];
///     let bytes = ipc::encode(&m, &meta, &ipc::StreamWriteOptions::default())?.to_vec().into();
///     Ok(ipc::decode(&bytes, &ipc::StreamReadOptions::default())?.expect("a message").0)
/// };
/// assert_eq!(send(EXTENSION_METADATA_VERSION)?.tensor.format(), Format::Gcs);
/// assert!(matches!(send(EXTENSION_METADATA_VERSION + 1), Err(Error::Parse { .. })));
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub const EXTENSION_METADATA_VERSION: u64 = 1;

/// Renamed to [`EXTENSION_METADATA_VERSION`] (the crate had two `VERSION`
/// constants: this one and the column metadata's).
#[deprecated(
    since = "0.2.0",
    note = "renamed to `ipc::extension::EXTENSION_METADATA_VERSION`"
)]
pub const VERSION: u64 = EXTENSION_METADATA_VERSION;

/// Most DM levels (nested maps) a message may describe.
const MAX_LEVELS: usize = 64;
/// Most view ops per DM level.
const MAX_VIEWS: usize = 256;

fn map_json(kind: &str, map: &DimMap, names: &[String]) -> Map<String, J> {
    let mut m = Map::new();
    m.insert("kind".into(), json!(kind));
    m.insert("shape".into(), json!(map.shape()));
    m.insert("dim_names".into(), json!(names));
    m.insert("dimensions".into(), json!(map.dimensions()));
    m.insert("partitioning".into(), json!(map.partitioning()));
    m
}

fn op_json(op: &ViewOp) -> J {
    match op {
        ViewOp::Permute { order } => json!({"op": "permute", "order": order}),
        ViewOp::Select { dim, index } => json!({"op": "select", "dim": dim, "index": index}),
        ViewOp::Slice {
            dim,
            start,
            stop,
            step,
        } => json!({"op": "slice", "dim": dim, "start": start, "stop": stop, "step": step}),
        ViewOp::Reshape { shape } => json!({"op": "reshape", "shape": shape}),
        ViewOp::Broadcast { shape } => json!({"op": "broadcast", "shape": shape}),
        ViewOp::Rotate { dim, shift } => json!({"op": "rotate", "dim": dim, "shift": shift}),
        ViewOp::Take { dim, indices } => {
            json!({"op": "take", "dim": dim, "indices": indices.as_slice()})
        }
    }
}

fn too_deep(levels: usize) -> Error {
    Error::Unsupported(format!(
        "a DM chain of {levels} levels (at most {MAX_LEVELS} are written)"
    ))
}

/// The DM levels of `dm` as the JSON map objects of SPEC 8.3 (`kind` `dm`, with
/// their views), outermost first, and the first tensor below them that is not a
/// DM tensor (a GCS or plain tensor). Used by the IPC writer and by Parquet
/// archives, which store the same objects.
pub(crate) fn dm_chain(dm: &AnyDm) -> Result<(Vec<J>, AnyTensor)> {
    let mut levels = Vec::new();
    let mut cur = dm;
    loop {
        let mut m = map_json("dm", cur.map(), cur.dim_names());
        m.insert(
            "views".into(),
            J::Array(cur.views().ops().iter().map(op_json).collect()),
        );
        levels.push(J::Object(m));
        if levels.len() > MAX_LEVELS {
            return Err(too_deep(levels.len()));
        }
        match cur.storage() {
            AnyTensor::Dm(inner) => cur = inner,
            other => return Ok((levels, other.clone())),
        }
    }
}

/// Split a GCS / DM tensor into its plain storage tensor and the custom metadata
/// that describes it. Plain tensors come back unchanged.
pub(crate) fn lower(
    tensor: &AnyTensor,
    custom: &[(String, String)],
) -> Result<(AnyTensor, Vec<(String, String)>)> {
    let (name, meta, storage) = match tensor {
        AnyTensor::Gcs(g) => {
            let mut m = map_json("gcs", g.map(), g.dim_names());
            m.remove("kind");
            m.insert("version".into(), json!(EXTENSION_METADATA_VERSION));
            (GCS_NAME, J::Object(m), AnyTensor::Csx(g.matrix().clone()))
        }
        AnyTensor::Dm(d) => {
            let (mut levels, inner) = dm_chain(d)?;
            // level storage: its nearest plain tensor, its levels beside the maps
            let mut storage_levels = None;
            let storage = match inner {
                AnyTensor::Level(l) => {
                    storage_levels = Some(levels_json(&l, false));
                    l.to_storage()?
                }
                AnyTensor::Gcs(g) => {
                    levels.push(J::Object(map_json("gcs", g.map(), g.dim_names())));
                    AnyTensor::Csx(g.matrix().clone())
                }
                plain => plain,
            };
            if levels.len() > MAX_LEVELS {
                return Err(too_deep(levels.len()));
            }
            let mut meta = json!({"version": EXTENSION_METADATA_VERSION, "maps": levels});
            if let (Some(l), J::Object(m)) = (storage_levels, &mut meta) {
                m.insert("levels".into(), l);
            }
            (DM_NAME, meta, storage)
        }
        AnyTensor::Level(l) => (LEVELS_NAME, levels_json(l, true), l.to_storage()?),
        plain => return Ok((plain.clone(), custom.to_vec())),
    };
    let mut out: Vec<(String, String)> = custom
        .iter()
        .filter(|(k, _)| k != EXTENSION_NAME && k != EXTENSION_METADATA)
        .cloned()
        .collect();
    out.push((EXTENSION_NAME.into(), name.into()));
    out.push((EXTENSION_METADATA.into(), meta.to_string()));
    Ok((storage, out))
}

fn parse_err(detail: impl Into<String>) -> Error {
    Error::Parse {
        what: "extension metadata".into(),
        detail: detail.into(),
    }
}

fn field<'a>(o: &'a Map<String, J>, key: &str) -> Result<&'a J> {
    o.get(key)
        .ok_or_else(|| parse_err(format!("missing field {key:?}")))
}

fn usize_of(v: &J, what: &str) -> Result<usize> {
    v.as_u64()
        .and_then(|x| usize::try_from(x).ok())
        .ok_or_else(|| parse_err(format!("{what} must be a non-negative integer, found {v}")))
}

fn usizes(o: &Map<String, J>, key: &str) -> Result<Vec<usize>> {
    match field(o, key)? {
        J::Array(a) => a.iter().map(|v| usize_of(v, key)).collect(),
        other => Err(parse_err(format!("{key} must be an array, found {other}"))),
    }
}

fn names(o: &Map<String, J>, ndim: usize) -> Result<Vec<String>> {
    match o.get("dim_names") {
        None => Ok(vec![String::new(); ndim]),
        Some(J::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| parse_err("dim_names must be strings"))
            })
            .collect(),
        Some(other) => Err(parse_err(format!(
            "dim_names must be an array, found {other}"
        ))),
    }
}

fn object(v: &J, what: &str) -> Result<Map<String, J>> {
    v.as_object()
        .cloned()
        .ok_or_else(|| parse_err(format!("{what} must be an object")))
}

fn parse_map(o: &Map<String, J>) -> Result<DimMap> {
    DimMap::try_new(
        usizes(o, "shape")?,
        usizes(o, "dimensions")?,
        usizes(o, "partitioning")?,
    )
}

fn parse_op(v: &J) -> Result<ViewOp> {
    let o = object(v, "a view")?;
    let u = |k: &str| usize_of(field(&o, k)?, k);
    Ok(match field(&o, "op")?.as_str() {
        Some("permute") => ViewOp::Permute {
            order: usizes(&o, "order")?,
        },
        Some("select") => ViewOp::Select {
            dim: u("dim")?,
            index: u("index")?,
        },
        Some("slice") => ViewOp::Slice {
            dim: u("dim")?,
            start: u("start")?,
            stop: u("stop")?,
            step: u("step")?,
        },
        Some("reshape") => ViewOp::Reshape {
            shape: usizes(&o, "shape")?,
        },
        Some("broadcast") => ViewOp::Broadcast {
            shape: usizes(&o, "shape")?,
        },
        Some("rotate") => ViewOp::Rotate {
            dim: u("dim")?,
            shift: field(&o, "shift")?
                .as_i64()
                .ok_or_else(|| parse_err("rotate shift must be an integer"))?,
        },
        Some("take") => ViewOp::Take {
            dim: u("dim")?,
            indices: usizes(&o, "indices")?.into(),
        },
        other => return Err(parse_err(format!("unknown view op {other:?}"))),
    })
}

fn check_version(o: &Map<String, J>) -> Result<()> {
    match field(o, "version")?.as_u64() {
        Some(EXTENSION_METADATA_VERSION) => Ok(()),
        _ => Err(parse_err(format!(
            "unsupported version {} (this reader knows version {EXTENSION_METADATA_VERSION})",
            o["version"]
        ))),
    }
}

/// Rebuild a GCS / DM tensor from a decoded plain tensor and its metadata; the
/// extension keys are removed from the returned metadata (the writer derives
/// them again from the tensor). Unknown extension names pass through untouched.
pub(crate) fn raise(
    tensor: AnyTensor,
    custom: Vec<(String, String)>,
    max_broadcast: u64,
    budget: u64,
    validation: Validation,
) -> Result<(AnyTensor, Vec<(String, String)>)> {
    let name = custom
        .iter()
        .find(|(k, _)| k == EXTENSION_NAME)
        .map(|(_, v)| v.as_str());
    if name != Some(GCS_NAME) && name != Some(DM_NAME) && name != Some(LEVELS_NAME) {
        return Ok((tensor, custom));
    }
    let text = custom
        .iter()
        .find(|(k, _)| k == EXTENSION_METADATA)
        .map(|(_, v)| v.as_str())
        .ok_or_else(|| {
            parse_err(format!(
                "{EXTENSION_NAME} is {name:?} but {EXTENSION_METADATA} is missing"
            ))
        })?;
    let meta: J =
        serde_json::from_str(text).map_err(|e| parse_err(format!("invalid JSON: {e}")))?;
    let meta = object(&meta, "the metadata")?;
    check_version(&meta)?;
    let raised = if name == Some(GCS_NAME) {
        wrap_gcs(tensor, &meta)?
    } else if name == Some(LEVELS_NAME) {
        raise_level(&tensor, &meta, validation)?
    } else {
        let levels = match field(&meta, "maps")? {
            J::Array(a) if !a.is_empty() && a.len() <= MAX_LEVELS => a.clone(),
            _ => {
                return Err(parse_err(format!(
                    "maps must be an array of 1 to {MAX_LEVELS} maps"
                )));
            }
        };
        // a level tensor's nearest plain tensor as the storage (format/SPEC.md 8.3)
        let storage = match meta.get("levels") {
            None => tensor,
            Some(l) => raise_level(&tensor, &object(l, "levels")?, validation)?,
        };
        raise_levels(&levels, storage, max_broadcast, budget)?
    };
    let rest = custom
        .into_iter()
        .filter(|(k, _)| k != EXTENSION_NAME && k != EXTENSION_METADATA)
        .collect();
    Ok((raised, rest))
}

/// Wrap `storage` in `levels` (JSON map objects of SPEC 8.3, outermost first, kinds
/// `dm` and `gcs`), checking every map, view and the broadcast limits: no stored
/// entry repeated more than `max_broadcast` times, and the logical entries the
/// views make (stored entries × repeats, each a coordinate per dimension and a
/// value, what a dump or a conversion to COO materializes) within `budget` bytes.
pub(crate) fn raise_levels(
    levels: &[J],
    storage: AnyTensor,
    max_broadcast: u64,
    budget: u64,
) -> Result<AnyTensor> {
    if levels.len() > MAX_LEVELS {
        return Err(parse_err(format!(
            "maps must be an array of 1 to {MAX_LEVELS} maps"
        )));
    }
    let mut repeat: u64 = 1;
    // stored entries: every element of a dense storage
    let stored = match &storage {
        AnyTensor::Dense(_) => storage
            .shape()
            .iter()
            .fold(1usize, |a, &b| a.saturating_mul(b)),
        other => other.nnz(),
    };
    let mut cur = storage;
    for level in levels.iter().rev() {
        let o = object(level, "a map")?;
        cur = match field(&o, "kind")?.as_str() {
            Some("gcs") => wrap_gcs(cur, &o)?,
            Some("dm") => {
                let map = parse_map(&o)?;
                let ops = match o.get("views") {
                    None => Vec::new(),
                    Some(J::Array(a)) if a.len() <= MAX_VIEWS => {
                        a.iter().map(parse_op).collect::<Result<Vec<_>>>()?
                    }
                    Some(_) => {
                        return Err(parse_err(format!(
                            "views must be an array of at most {MAX_VIEWS} ops"
                        )));
                    }
                };
                let chain = ViewChain::from_ops(map.shape().to_vec(), ops)?;
                repeat = repeat.saturating_mul(broadcast_factor(&chain));
                if repeat > max_broadcast {
                    return Err(parse_err(format!(
                        "broadcast / take views repeat a stored entry up to {repeat} times (limit {max_broadcast}, see StreamReadOptions::max_broadcast)"
                    )));
                }
                let n = chain.output_shape().len();
                let names = names(&o, n)?;
                AnyTensor::Dm(
                    AnyDm::try_new(map, cur, &TensorOptions::default())?
                        .with_views(chain)?
                        .with_dim_names(names)?,
                )
            }
            other => return Err(parse_err(format!("unknown map kind {other:?}"))),
        };
    }
    if repeat > 1 {
        let stored = stored as u64;
        let entry = 8 * cur.shape().len() as u64 + cur.value_type().byte_width() as u64;
        let needed = stored.saturating_mul(repeat).saturating_mul(entry);
        if needed > budget {
            return Err(Error::Limit {
                what: format!(
                    "the broadcast views of a DM tensor ({stored} stored entries, each repeated {repeat} times)"
                ),
                needed,
                limit: budget,
            });
        }
    }
    Ok(cur)
}

fn wrap_gcs(storage: AnyTensor, o: &Map<String, J>) -> Result<AnyTensor> {
    let map = parse_map(o)?;
    let names = names(o, map.ndim())?;
    match storage {
        AnyTensor::Csx(m) => Ok(AnyTensor::Gcs(AnyGcs::try_new(
            map,
            m,
            &TensorOptions::default().with_dim_names(names),
        )?)),
        other => Err(Error::invariant(
            "GCS storage",
            None,
            format!("must be a CSR or CSC matrix, found {}", other.format()),
        )),
    }
}

/// How many logical entries one stored entry can become through broadcasts and
/// repeated take indices.
fn broadcast_factor(chain: &ViewChain) -> u64 {
    let mut shape = chain.base_shape().to_vec();
    let mut factor: u64 = 1;
    for op in chain.ops() {
        match op {
            ViewOp::Broadcast { shape: out } => {
                for (&t, &s) in out.iter().zip(&shape) {
                    if let Some(k) = t.checked_div(s) {
                        factor = factor.saturating_mul(k as u64);
                    }
                }
            }
            // an index taken k times shows its entries k times
            ViewOp::Take { indices, .. } => {
                factor = factor.saturating_mul(indices.max_repeat().max(1) as u64);
            }
            _ => {}
        }
        shape = op.output_shape(&shape).unwrap_or_default();
    }
    factor
}

/// The JSON object describing a level tensor's format (format/SPEC.md 8.6):
/// `levels` (MLIR's level type names), `axis_order`, `index_type`,
/// `indptr_type`, and `version` when `versioned`. Also the `levels` object of
/// archives and sparse tensor columns.
pub(crate) fn levels_json(l: &AnyLevel, versioned: bool) -> J {
    levels_json_of(l.format(), l.index_type(), l.indptr_type(), versioned)
}

/// [`levels_json`] of a format and its index types.
pub(crate) fn levels_json_of(
    f: &LevelFormat,
    index_type: IndexType,
    indptr_type: IndexType,
    versioned: bool,
) -> J {
    let mut m = Map::new();
    m.insert(
        "levels".into(),
        J::Array(f.levels().iter().map(|t| json!(t.to_string())).collect()),
    );
    m.insert("axis_order".into(), json!(f.axis_order()));
    m.insert("index_type".into(), json!(index_type.name()));
    m.insert("indptr_type".into(), json!(indptr_type.name()));
    if versioned {
        m.insert("version".into(), json!(EXTENSION_METADATA_VERSION));
    }
    J::Object(m)
}

/// Parse the object of [`levels_json`] (its `version`, if any, checked by the
/// caller): a level format and the coordinates and positions types. Every field
/// is bounded before it is looked at: at most [`MAX_LEVEL_TYPES`] levels, each
/// name at most 64 bytes.
pub(crate) fn parse_levels(o: &Map<String, J>) -> Result<(LevelFormat, IndexType, IndexType)> {
    let names = match field(o, "levels")? {
        J::Array(a) if !a.is_empty() && a.len() <= MAX_LEVEL_TYPES => a,
        _ => {
            return Err(parse_err(format!(
                "levels must be an array of 1 to {MAX_LEVEL_TYPES} level types"
            )));
        }
    };
    let levels = names
        .iter()
        .map(|v| {
            v.as_str()
                .ok_or_else(|| parse_err("level types must be strings"))?
                .parse::<LevelType>()
        })
        .collect::<Result<Vec<_>>>()?;
    let order = match field(o, "axis_order")? {
        J::Array(a) if a.len() == levels.len() => a
            .iter()
            .map(|v| usize_of(v, "axis_order"))
            .collect::<Result<Vec<_>>>()?,
        _ => {
            return Err(parse_err(format!(
                "axis_order must be an array of {} dimensions",
                levels.len()
            )));
        }
    };
    let ty = |key: &str| -> Result<IndexType> {
        field(o, key)?
            .as_str()
            .ok_or_else(|| parse_err(format!("{key} must be a string")))?
            .parse::<IndexType>()
    };
    Ok((
        LevelFormat::try_new(levels, order)?,
        ty("index_type")?,
        ty("indptr_type")?,
    ))
}

/// The level tensor whose nearest plain tensor is `storage`.
fn raise_level(
    storage: &AnyTensor,
    o: &Map<String, J>,
    validation: Validation,
) -> Result<AnyTensor> {
    let (format, it, pt) = parse_levels(o)?;
    Ok(AnyTensor::Level(AnyLevel::from_storage(
        storage,
        format,
        it,
        pt,
        &crate::tensor::TensorOptions::default().with_validation(validation),
    )?))
}
