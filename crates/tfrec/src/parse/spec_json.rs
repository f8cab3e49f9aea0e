//! Reading spec objects from JSON strictly: serde derives the shape of each spec kind, with
//! unknown keys refused (`"defualt_value"`) and every wrongly typed value reported with its key
//! (`"allow_missing": "true"`); TensorFlow's own checks (`tf.io.*Feature` constructors and
//! `parsing_config._ParseOpParams`) then run on the typed fields.

use serde::de::{Deserializer, Error as _};
use serde::Deserialize;
use serde_json::Value;

use crate::json_text::{Json, Layout};

use super::json::{first_value_json, values_from_json, values_json};
use super::spec::{
    checked_elements, shape_string, FeatureSpec, FeatureSpecs, FixedLenFeature, FixedLenSequenceFeature, Partition,
    RaggedFeature, SequenceSpecs, SparseFeature, SpecError, SpecFile, VarLenFeature,
};
use super::values::{DType, SplitsDType, Values};

/// A string or a list of them (`index_key`), an integer or a list of them (`size`).
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(v) => vec![v],
            OneOrMany::Many(v) => v,
        }
    }
}

/// Deserializers that put the key in front of a type error, since serde_json's messages do not
/// say which field they are about. `null` reads as absent, as Python's `None`.
macro_rules! keyed {
    ($($fn:ident: $ty:ty => $key:literal;)*) => {$(
        fn $fn<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$ty>, D::Error> {
            Option::<$ty>::deserialize(d).map_err(|e| D::Error::custom(format!("{}: {e}", $key)))
        }
    )*};
}

keyed! {
    de_dtype: String => "dtype";
    de_shape: Vec<Option<i64>> => "shape";
    de_default: Value => "default_value";
    de_allow_missing: bool => "allow_missing";
    de_index_key: OneOrMany<String> => "index_key";
    de_value_key: String => "value_key";
    de_size: OneOrMany<i64> => "size";
    de_already_sorted: bool => "already_sorted";
    de_partitions: Vec<PartitionJson> => "partitions";
    de_row_splits_dtype: String => "row_splits_dtype";
    de_validate: bool => "validate";
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum PartitionJson {
    RowSplits { key: String },
    RowLengths { key: String },
    RowStarts { key: String },
    RowLimits { key: String },
    ValueRowIds { key: String },
    UniformRowLength { length: i64 },
}

/// One spec object as written; `None` is an absent (or null) key.
// The variants are TensorFlow's class names, which the JSON's "type" spells.
#[allow(clippy::enum_variant_names)]
#[derive(Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
enum SpecJson {
    FixedLenFeature {
        #[serde(default, deserialize_with = "de_shape")]
        shape: Option<Vec<Option<i64>>>,
        #[serde(default, deserialize_with = "de_dtype")]
        dtype: Option<String>,
        #[serde(default, deserialize_with = "de_default")]
        default_value: Option<Value>,
    },
    FixedLenSequenceFeature {
        #[serde(default, deserialize_with = "de_shape")]
        shape: Option<Vec<Option<i64>>>,
        #[serde(default, deserialize_with = "de_dtype")]
        dtype: Option<String>,
        #[serde(default, deserialize_with = "de_allow_missing")]
        allow_missing: Option<bool>,
        #[serde(default, deserialize_with = "de_default")]
        default_value: Option<Value>,
    },
    VarLenFeature {
        #[serde(default, deserialize_with = "de_dtype")]
        dtype: Option<String>,
    },
    SparseFeature {
        #[serde(default, deserialize_with = "de_index_key")]
        index_key: Option<OneOrMany<String>>,
        #[serde(default, deserialize_with = "de_value_key")]
        value_key: Option<String>,
        #[serde(default, deserialize_with = "de_dtype")]
        dtype: Option<String>,
        #[serde(default, deserialize_with = "de_size")]
        size: Option<OneOrMany<i64>>,
        #[serde(default, deserialize_with = "de_already_sorted")]
        already_sorted: Option<bool>,
    },
    RaggedFeature {
        #[serde(default, deserialize_with = "de_dtype")]
        dtype: Option<String>,
        #[serde(default, deserialize_with = "de_value_key")]
        value_key: Option<String>,
        #[serde(default, deserialize_with = "de_partitions")]
        partitions: Option<Vec<PartitionJson>>,
        #[serde(default, deserialize_with = "de_row_splits_dtype")]
        row_splits_dtype: Option<String>,
        #[serde(default, deserialize_with = "de_validate")]
        validate: Option<bool>,
    },
}

fn dtype_of(dtype: Option<String>, name: &str) -> Result<DType, SpecError> {
    let text = dtype.ok_or_else(|| SpecError::MissingType {
        feature: name.to_owned(),
    })?;
    DType::from_name(&text).ok_or_else(|| SpecError::UnsupportedDType {
        feature: name.to_owned(),
        dtype: text,
    })
}

/// A shape as `tf.TensorShape` reads it: `null` (or -1, the JSON form's other spelling) is an
/// unknown dimension; anything else below 0 is refused as TensorFlow's `Dimension` does.
fn dims_of(shape: Vec<Option<i64>>) -> Result<Vec<Option<usize>>, SpecError> {
    shape
        .into_iter()
        .map(|d| match d {
            None | Some(-1) => Ok(None),
            Some(n) => usize::try_from(n)
                .map(Some)
                .map_err(|_| SpecError::NegativeDimension { dim: n }),
        })
        .collect()
}

/// A fully known shape whose element count fits TensorFlow's int64.
fn known_shape(dims: Vec<Option<usize>>, name: &str) -> Result<Vec<usize>, SpecError> {
    if dims.iter().any(Option::is_none) {
        return Err(SpecError::UnknownDimension {
            feature: name.to_owned(),
            shape: shape_string(&dims),
        });
    }
    let shape: Vec<usize> = dims.into_iter().flatten().collect();
    checked_elements(&shape, name)?;
    Ok(shape)
}

fn default_of(default: Option<Value>, dtype: DType, name: &str) -> Result<Option<Values>, SpecError> {
    default
        .map(|d| {
            values_from_json(&d, dtype).map_err(|reason| SpecError::BadDefault {
                feature: name.to_owned(),
                reason,
            })
        })
        .transpose()
}

fn partition_of(p: PartitionJson) -> Result<Partition, SpecError> {
    Ok(match p {
        PartitionJson::RowSplits { key } => Partition::RowSplits(key),
        PartitionJson::RowLengths { key } => Partition::RowLengths(key),
        PartitionJson::RowStarts { key } => Partition::RowStarts(key),
        PartitionJson::RowLimits { key } => Partition::RowLimits(key),
        PartitionJson::ValueRowIds { key } => Partition::ValueRowIds(key),
        PartitionJson::UniformRowLength { length } if length < 0 => return Err(SpecError::NegativeUniformRowLength),
        PartitionJson::UniformRowLength { length } => Partition::UniformRowLength(length),
    })
}

/// Reads one spec object (see [`FeatureSpec::from_json`]).
pub(crate) fn spec_from_json(name: &str, value: &Value) -> Result<FeatureSpec, SpecError> {
    let parsed = SpecJson::deserialize(value).map_err(|e| SpecError::JsonFeature {
        feature: name.to_owned(),
        message: e.to_string(),
    })?;
    Ok(match parsed {
        SpecJson::FixedLenFeature {
            shape,
            dtype,
            default_value,
        } => {
            let dtype = dtype_of(dtype, name)?;
            let dims = dims_of(shape.ok_or_else(|| SpecError::MissingShape {
                feature: name.to_owned(),
            })?)?;
            if dims.first().is_some_and(Option::is_none) {
                return Err(SpecError::FirstDimensionUnknown {
                    feature: name.to_owned(),
                });
            }
            FeatureSpec::FixedLen(FixedLenFeature {
                shape: known_shape(dims, name)?,
                dtype,
                default_value: default_of(default_value, dtype, name)?,
            })
        }
        SpecJson::FixedLenSequenceFeature {
            shape,
            dtype,
            allow_missing,
            default_value,
        } => {
            let dtype = dtype_of(dtype, name)?;
            let dims = dims_of(shape.ok_or_else(|| SpecError::MissingShape {
                feature: name.to_owned(),
            })?)?;
            FeatureSpec::FixedLenSequence(FixedLenSequenceFeature {
                shape: known_shape(dims, name)?,
                dtype,
                allow_missing: allow_missing.unwrap_or(false),
                default_value: default_of(default_value, dtype, name)?,
            })
        }
        SpecJson::VarLenFeature { dtype } => FeatureSpec::VarLen(VarLenFeature {
            dtype: dtype_of(dtype, name)?,
        }),
        SpecJson::SparseFeature {
            index_key,
            value_key,
            dtype,
            size,
            already_sorted,
        } => {
            // Kept for after parsing, when `sparse_merge` refuses it.
            let size_form_error = match (&index_key, &size) {
                (Some(OneOrMany::One(_)), Some(OneOrMany::Many(_))) => {
                    Some("a Tensor or Python int for a single index_key")
                }
                (Some(OneOrMany::Many(_)), Some(OneOrMany::One(_))) => {
                    Some("a list of Tensors or Python ints for a list of index_keys")
                }
                _ => None,
            };
            // Python's `not feature.index_key` refuses absent, "" and [], but not [""]: a plain
            // "" becomes no keys, and the refusal waits for `check_specs`, which runs
            // TensorFlow's checks in its (sorted) order.
            let index_keys = match index_key {
                Some(OneOrMany::One(key)) if key.is_empty() => Vec::new(),
                other => other.map(OneOrMany::into_vec).unwrap_or_default(),
            };
            // An absent value_key is refused in `check_specs` too, in TensorFlow's order.
            let value_key = value_key.unwrap_or_default();
            let dtype = dtype_of(dtype, name)?;
            let size = size
                .ok_or_else(|| SpecError::JsonFeature {
                    feature: name.to_owned(),
                    message: "missing field `size`".to_owned(),
                })?
                .into_vec();
            FeatureSpec::Sparse(SparseFeature {
                index_keys,
                value_key,
                dtype,
                size,
                already_sorted: already_sorted.unwrap_or(false),
                size_form_error,
            })
        }
        SpecJson::RaggedFeature {
            dtype,
            value_key,
            partitions,
            row_splits_dtype,
            validate,
        } => {
            let row_splits_dtype = match row_splits_dtype.as_deref() {
                None | Some("int32") => SplitsDType::Int32,
                Some("int64") => SplitsDType::Int64,
                Some(other) => {
                    return Err(SpecError::SplitsDType {
                        dtype: other.to_owned(),
                    })
                }
            };
            FeatureSpec::Ragged(RaggedFeature {
                dtype: dtype_of(dtype, name)?,
                value_key,
                partitions: partitions
                    .unwrap_or_default()
                    .into_iter()
                    .map(partition_of)
                    .collect::<Result<_, _>>()?,
                row_splits_dtype,
                validate: validate.unwrap_or(false),
            })
        }
    })
}

/// The two keys of a sequence spec object; anything else is refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SequenceJson {
    #[serde(default)]
    context_features: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    sequence_features: Option<serde_json::Map<String, Value>>,
}

/// The specs' JSON text: one line, no spaces, UTF-8 as is (as the tensors').
const SPEC_LAYOUT: Layout = Layout::Compact;

/// JSON text read as a tree, its syntax errors as the spec layer's.
fn parse_text(text: &str) -> Result<Value, SpecError> {
    serde_json::from_str(text).map_err(|e| SpecError::JsonSyntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

fn partition_json(p: &Partition) -> Json<'_> {
    let kind = match p {
        Partition::UniformRowLength(n) => {
            return Json::Object(vec![
                ("kind", Json::Str("uniform_row_length")),
                ("length", Json::Int(*n)),
            ])
        }
        Partition::RowSplits(_) => "row_splits",
        Partition::RowLengths(_) => "row_lengths",
        Partition::RowStarts(_) => "row_starts",
        Partition::RowLimits(_) => "row_limits",
        Partition::ValueRowIds(_) => "value_row_ids",
    };
    let key = p.key().map_or(Json::Null, Json::Str);
    Json::Object(vec![("kind", Json::Str(kind)), ("key", key)])
}

impl FeatureSpec {
    /// Reads one spec object strictly (unknown keys and wrongly typed values are errors naming
    /// the key), then checks it as TensorFlow's constructors and `_ParseOpParams` do.
    pub(crate) fn from_json(name: &str, value: &Value) -> Result<FeatureSpec, SpecError> {
        spec_from_json(name, value)
    }

    fn json(&self) -> Json<'_> {
        fn default(d: &Option<Values>) -> Json<'_> {
            d.as_ref().map_or(Json::Null, values_json)
        }
        match self {
            FeatureSpec::FixedLen(s) => Json::Object(vec![
                ("type", Json::Str("FixedLenFeature")),
                ("shape", Json::Sizes(&s.shape)),
                ("dtype", Json::Str(s.dtype.json_name())),
                ("default_value", default(&s.default_value)),
            ]),
            FeatureSpec::FixedLenSequence(s) => Json::Object(vec![
                ("type", Json::Str("FixedLenSequenceFeature")),
                ("shape", Json::Sizes(&s.shape)),
                ("dtype", Json::Str(s.dtype.json_name())),
                ("allow_missing", Json::Bool(s.allow_missing)),
                (
                    "default_value",
                    s.default_value.as_ref().map_or(Json::Null, first_value_json),
                ),
            ]),
            FeatureSpec::VarLen(s) => Json::Object(vec![
                ("type", Json::Str("VarLenFeature")),
                ("dtype", Json::Str(s.dtype.json_name())),
            ]),
            FeatureSpec::Sparse(s) => Json::Object(vec![
                ("type", Json::Str("SparseFeature")),
                (
                    "index_key",
                    Json::Array(s.index_keys.iter().map(|k| Json::Str(k)).collect()),
                ),
                ("value_key", Json::Str(&s.value_key)),
                ("dtype", Json::Str(s.dtype.json_name())),
                ("size", Json::Ints(s.size.as_slice().into())),
                ("already_sorted", Json::Bool(s.already_sorted)),
            ]),
            FeatureSpec::Ragged(s) => Json::Object(vec![
                ("type", Json::Str("RaggedFeature")),
                ("dtype", Json::Str(s.dtype.json_name())),
                ("value_key", s.value_key.as_deref().map_or(Json::Null, Json::Str)),
                ("row_splits_dtype", Json::Str(s.row_splits_dtype.json_name())),
                ("validate", Json::Bool(s.validate)),
                (
                    "partitions",
                    Json::Array(s.partitions.iter().map(partition_json).collect()),
                ),
            ]),
        }
    }

    /// The JSON text of this spec, as a spec file holds it:
    /// `{"type":"FixedLenFeature","shape":[2],"dtype":"int64","default_value":null}`.
    pub fn to_json_string(&self) -> String {
        self.json().to_text(SPEC_LAYOUT)
    }
}

fn specs_json(specs: &FeatureSpecs) -> Json<'_> {
    Json::Object(specs.iter().map(|(k, s)| (k.as_str(), s.json())).collect())
}

/// Reads a JSON object of name → spec (a tree already parsed).
pub(crate) fn specs_from_json(value: &Value) -> Result<FeatureSpecs, SpecError> {
    let object = value.as_object().ok_or(SpecError::JsonNotAnObject)?;
    object
        .iter()
        .map(|(name, spec)| Ok((name.clone(), FeatureSpec::from_json(name, spec)?)))
        .collect()
}

/// Reads the JSON text of an object of name → spec, strictly (unknown keys and wrongly typed
/// values are errors naming the key), with TensorFlow's checks on each spec.
///
/// ```
/// use tfrec::parse::{specs_from_json_str, specs_to_json_string, FeatureSpec};
///
/// let specs = specs_from_json_str(r#"{"age": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}}"#)?;
/// assert!(matches!(specs["age"], FeatureSpec::FixedLen(_)));
/// assert_eq!(specs_from_json_str(&specs_to_json_string(&specs))?, specs);
/// # Ok::<(), tfrec::parse::SpecError>(())
/// ```
pub fn specs_from_json_str(text: &str) -> Result<FeatureSpecs, SpecError> {
    if let Some(specs) = example_specs_streamed(text) {
        return Ok(specs);
    }
    specs_from_json(&parse_text(text)?)
}

/// The specs of an object of name → spec, each read as soon as its value is parsed, so that
/// the text's whole tree is never in memory: for a spec of a million features that tree took
/// about a kilobyte a feature. `None` for anything else (a sequence spec, a spec TensorFlow
/// refuses, JSON that does not parse, another kind of value), which the caller reads again
/// through the whole tree: its errors are then the ones that way gives. A name given twice
/// keeps its last spec, as the tree does.
fn example_specs_streamed(text: &str) -> Option<FeatureSpecs> {
    let mut entries = Vec::new();
    each_example_entry(text, |name, value: Value| {
        let spec = FeatureSpec::from_json(&name, &value).ok()?;
        entries.push((name, spec));
        Some(())
    })?;
    Some(entries.into_iter().collect())
}

/// Reads the JSON text of an Example spec's object a top-level entry at a time, each name with
/// its value read as `V` (a `Value` to read the spec, `IgnoredAny` to pass over it), handed to
/// `each`, which stops the read by giving `None`. `None` as well for a sequence spec (a key
/// `context_features` or `sequence_features`) and for text that is not one JSON object: the
/// caller then reads the text through its whole tree, as every spec reader did before.
pub(crate) fn each_example_entry<V: serde::de::DeserializeOwned>(
    text: &str,
    each: impl FnMut(String, V) -> Option<()>,
) -> Option<()> {
    struct Entries<F, V>(F, std::marker::PhantomData<V>);
    impl<'de, F: FnMut(String, V) -> Option<()>, V: serde::de::DeserializeOwned> serde::de::Visitor<'de> for Entries<F, V> {
        type Value = Option<()>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object of name → spec")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
            while let Some(name) = map.next_key::<String>()? {
                if name == "context_features" || name == "sequence_features" {
                    return Ok(None);
                }
                let value: V = map.next_value()?;
                if (self.0)(name, value).is_none() {
                    return Ok(None);
                }
            }
            Ok(Some(()))
        }
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    reader.deserialize_map(Entries(each, std::marker::PhantomData)).ok()??;
    reader.end().ok()
}

/// The JSON text of specs, an object of name → spec (what [`specs_from_json_str`] reads).
pub fn specs_to_json_string(specs: &FeatureSpecs) -> String {
    specs_json(specs).to_text(SPEC_LAYOUT)
}

impl SequenceSpecs {
    /// Reads `{"context_features": {...}, "sequence_features": {...}}` (either may be absent or
    /// null; no other key is accepted) from a tree already parsed.
    pub(crate) fn from_json(value: &Value) -> Result<SequenceSpecs, SpecError> {
        let parts = SequenceJson::deserialize(value).map_err(|e| SpecError::JsonSequence { message: e.to_string() })?;
        let read = |part: Option<serde_json::Map<String, Value>>| match part {
            None => Ok(FeatureSpecs::new()),
            Some(object) => specs_from_json(&Value::Object(object)),
        };
        Ok(SequenceSpecs {
            context_features: read(parts.context_features)?,
            sequence_features: read(parts.sequence_features)?,
        })
    }

    /// Reads the JSON text `{"context_features": {...}, "sequence_features": {...}}` (either
    /// may be absent or null; no other key is accepted).
    pub fn from_json_str(text: &str) -> Result<SequenceSpecs, SpecError> {
        SequenceSpecs::from_json(&parse_text(text)?)
    }

    fn json(&self) -> Json<'_> {
        Json::Object(vec![
            ("context_features", specs_json(&self.context_features)),
            ("sequence_features", specs_json(&self.sequence_features)),
        ])
    }

    /// The JSON text (what [`SequenceSpecs::from_json_str`] reads).
    pub fn to_json_string(&self) -> String {
        self.json().to_text(SPEC_LAYOUT)
    }
}

impl SpecFile {
    /// Reads a spec file's tree: a sequence spec when it has `context_features` or
    /// `sequence_features`, else a map of name → spec.
    pub(crate) fn from_json(value: &Value) -> Result<SpecFile, SpecError> {
        if value.get("context_features").is_some() || value.get("sequence_features").is_some() {
            SequenceSpecs::from_json(value).map(SpecFile::Sequence)
        } else {
            specs_from_json(value).map(SpecFile::Example)
        }
    }

    /// Reads a spec file's JSON text: a sequence spec when it has `context_features` or
    /// `sequence_features`, else an object of name → spec. `str::parse` does the same.
    ///
    /// ```
    /// use tfrec::parse::SpecFile;
    ///
    /// let spec = SpecFile::from_json_str(r#"{"sequence_features": {"w": {"type": "VarLenFeature", "dtype": "string"}}}"#)?;
    /// assert!(matches!(spec, SpecFile::Sequence(_)));
    /// assert_eq!(spec.to_json_string().parse::<SpecFile>()?, spec);
    /// # Ok::<(), tfrec::parse::SpecError>(())
    /// ```
    pub fn from_json_str(text: &str) -> Result<SpecFile, SpecError> {
        if let Some(specs) = example_specs_streamed(text) {
            return Ok(SpecFile::Example(specs));
        }
        SpecFile::from_json(&parse_text(text)?)
    }

    /// The JSON text (what [`SpecFile::from_json_str`] reads).
    pub fn to_json_string(&self) -> String {
        match self {
            SpecFile::Example(specs) => specs_to_json_string(specs),
            SpecFile::Sequence(specs) => specs.to_json_string(),
        }
    }

    /// Reads a spec file from disk (see [`SpecFile::from_json_str`]).
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<SpecFile, SpecError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| SpecError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        SpecFile::from_json_str(&text)
    }
}

impl std::str::FromStr for SpecFile {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<SpecFile, SpecError> {
        SpecFile::from_json_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spec file read entry by entry gives what the whole tree gives, errors included: what
    /// the streamed read cannot take (a sequence spec, a refused spec, bad JSON, a name given
    /// twice with a bad spec first) is left to the tree, whose errors stand.
    #[test]
    fn specs_read_without_the_tree_are_the_trees() {
        let tree = |text: &str| parse_text(text).and_then(|v| SpecFile::from_json(&v));
        let fixed = r#"{"type": "FixedLenFeature", "shape": [2], "dtype": "float32", "default_value": [1.5, 2]}"#;
        let texts = [
            format!(r#"{{"b": {fixed}, "a": {{"type": "VarLenFeature", "dtype": "string"}}}}"#),
            "{}".to_owned(),
            format!(r#"{{"a": {fixed}, "a": {{"type": "VarLenFeature", "dtype": "int64"}}}}"#),
            format!(r#"{{"a": {{"type": "VarLenFeature", "dtype": "nope"}}, "a": {fixed}}}"#),
            format!(r#"{{"a": {fixed}, "a": {{"type": "VarLenFeature", "dtype": "nope"}}}}"#),
            format!(r#"{{"b": {{"type": "Fixed"}}, "a": {{"type": "VarLenFeature", "dtype": "nope"}}, "c": {fixed}}}"#),
            format!(r#"{{"a": {fixed}, "sequence_features": {{"s": {{"type": "VarLenFeature", "dtype": "int64"}}}}}}"#),
            r#"{"sequence_features": {"s": {"type": "VarLenFeature", "dtype": "int64"}}}"#.to_owned(),
            format!(r#"{{"a": {fixed}"#),
            format!(r#"{{"a": {fixed}}} []"#),
            "[1, 2]".to_owned(),
            "7".to_owned(),
        ];
        for text in &texts {
            assert_eq!(SpecFile::from_json_str(text), tree(text), "{text}");
        }
        // Read entry by entry: the plain spec and a name given twice, the last spec good;
        // left to the tree: a bad spec, even one given again after, and a sequence spec.
        assert!(example_specs_streamed(&texts[0]).is_some());
        assert!(example_specs_streamed(&texts[2]).is_some());
        assert!(example_specs_streamed(&texts[3]).is_none());
        assert!(example_specs_streamed(&texts[6]).is_none());
    }

    /// The error reading one spec gives, with TensorFlow's spec checks (which run after the
    /// JSON is read, in its order) included.
    fn err(text: &str) -> String {
        spec_from_json("k", &serde_json::from_str(text).expect("json"))
            .and_then(|spec| {
                let specs: FeatureSpecs = [("k".to_owned(), spec)].into_iter().collect();
                crate::parse::example::check_specs(&specs, true)
            })
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_the_key() {
        let e = err(r#"{"type": "FixedLenFeature", "shape": [], "dtype": "int64", "defualt_value": 1}"#);
        assert!(e.contains("defualt_value"), "{e}");
        let e = err(r#"{"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": "true"}"#);
        assert!(e.contains("allow_missing"), "{e}");
        let e = err(r#"{"type": "SparseFeature", "index_key": "i", "value_key": "v", "dtype": "int64", "size": 2.5}"#);
        assert!(e.contains("size"), "{e}");
        let e =
            err(r#"{"type": "RaggedFeature", "dtype": "int64", "partitions": [{"kind": "row_splits", "kee": "s"}]}"#);
        assert!(e.contains("partitions") && e.contains("kee"), "{e}");
        let e = err(r#"{"type": "VarLenFeature", "dtype": 3}"#);
        assert!(e.contains("dtype"), "{e}");
        let e = err(r#"{"type": "Fixed", "dtype": "int64"}"#);
        assert!(e.contains("Fixed"), "{e}");
    }

    #[test]
    fn tf_checks_on_shapes_and_sizes() {
        assert!(
            err(r#"{"type": "FixedLenFeature", "shape": [18446744073709551615], "dtype": "int64"}"#).contains("shape")
        );
        assert!(
            err(r#"{"type": "FixedLenFeature", "shape": [4294967296, 4294967296], "dtype": "int64"}"#)
                .contains("2**63 - 1")
        );
        assert_eq!(
            err(r#"{"type": "FixedLenFeature", "shape": [-5], "dtype": "int64"}"#),
            "Dimension -5 must be >= 0"
        );
        assert!(
            err(r#"{"type": "SparseFeature", "index_key": "i", "value_key": "v", "dtype": "int64", "size": -5}"#)
                .contains("Dimension -5 must be >= 0")
        );
        assert_eq!(
            err(r#"{"type": "SparseFeature", "index_key": "", "value_key": "v", "dtype": "int64", "size": 5}"#),
            "Missing index_key for SparseFeature k."
        );
        assert_eq!(
            err(r#"{"type": "SparseFeature", "index_key": ["i"], "value_key": "", "dtype": "int64", "size": 5}"#),
            "Missing value_key for SparseFeature k."
        );
        // A large but representable shape is a spec, not an allocation.
        assert!(spec_from_json(
            "k",
            &serde_json::json!({"type": "FixedLenFeature", "shape": [100_000_000_000u64], "dtype": "int64"})
        )
        .is_ok());
    }

    #[test]
    fn json_round_trips() {
        let text = r#"{
            "a": {"type": "FixedLenFeature", "shape": [2], "dtype": "float32", "default_value": [1.5, "NaN"]},
            "b": {"type": "VarLenFeature", "dtype": "string"},
            "c": {"type": "SparseFeature", "index_key": ["i", "j"], "value_key": "v", "dtype": "int64", "size": [3, 4], "already_sorted": true},
            "d": {"type": "RaggedFeature", "dtype": "int64", "value_key": null, "row_splits_dtype": "int64", "validate": true,
                  "partitions": [{"kind": "row_lengths", "key": "l"}, {"kind": "uniform_row_length", "length": 2}]},
            "e": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64", "allow_missing": true, "default_value": -1}
        }"#;
        let specs = specs_from_json_str(text).unwrap();
        let written = specs_to_json_string(&specs);
        let again = specs_from_json_str(&written).unwrap();
        assert_eq!(format!("{specs:?}"), format!("{again:?}"));
        assert!(written.contains(r#""default_value":[1.5,"NaN"]"#), "{written}");
        assert!(written.contains(r#""default_value":-1}"#), "{written}");
    }

    #[test]
    fn tf_reasons_for_bad_shapes() {
        let bad = |s: &str| {
            FeatureSpec::from_json("k", &serde_json::from_str(s).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            bad(r#"{"type": "FixedLenFeature", "dtype": "int64"}"#),
            "Missing shape for feature k."
        );
        assert_eq!(
            bad(r#"{"type": "FixedLenFeature", "shape": [null, 2], "dtype": "int64"}"#),
            "First dimension of shape for feature k unknown. Consider using FixedLenSequenceFeature."
        );
        assert_eq!(
            bad(r#"{"type": "FixedLenFeature", "shape": [2, null], "dtype": "int64"}"#),
            "All dimensions of shape for feature k need to be known but received [2,?]."
        );
        assert_eq!(bad(r#"{"type": "VarLenFeature"}"#), "Missing type for feature k.");
        assert!(bad(r#"{"type": "VarLenFeature", "dtype": "bool"}"#).contains("Unsupported dtype bool"));
    }
}
