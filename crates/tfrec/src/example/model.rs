//! Owned `tf.train.Example` / `tf.train.SequenceExample` messages.
//!
//! Maps keep their entries in the order they were read or inserted (a duplicated key keeps its
//! first position and takes the last value, as protobuf's maps do), so decoding and encoding
//! reproduce TensorFlow's bytes. Optional sub-messages remember whether they were present:
//! `Example {}` and `Example { features {} }` are different bytes.

use indexmap::IndexMap;

/// One feature: a list of bytes, floats or int64s, or no kind set at all.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Feature {
    /// An empty `Feature` message: no kind set. Parsers treat it as missing for dense features
    /// and as an empty list for sparse and ragged ones.
    #[default]
    None,
    /// `bytes_list`.
    Bytes(Vec<Vec<u8>>),
    /// `float_list`.
    Float(Vec<f32>),
    /// `int64_list`.
    Int64(Vec<i64>),
}

/// The three value types a feature can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `bytes_list`: byte strings (`tf.string`).
    Bytes,
    /// `float_list`: float32 values.
    Float,
    /// `int64_list`: int64 values.
    Int64,
}

/// The one table of a kind's names: the kind, its word (`bytes`, as in TensorFlow's "Number
/// of bytes values" messages), its `*_list` field, TensorFlow's dtype name (error messages)
/// and the dtype name of the JSON forms (spec files, tensors).
const NAMES: [(Kind, &str, &str, &str, &str); 3] = [
    (Kind::Bytes, "bytes", "bytes_list", "string", "string"),
    (Kind::Float, "float", "float_list", "float", "float32"),
    (Kind::Int64, "int64", "int64_list", "int64", "int64"),
];

impl Kind {
    fn names(self) -> &'static (Kind, &'static str, &'static str, &'static str, &'static str) {
        &NAMES[self as usize]
    }

    /// The kind's word: `bytes`, `float`, `int64`.
    pub fn word(self) -> &'static str {
        self.names().1
    }

    /// The `*_list` field name of this kind.
    pub fn list_name(self) -> &'static str {
        self.names().2
    }

    /// TensorFlow's name for the dtype of this kind (`string`, `float`, `int64`).
    pub fn tf_dtype_name(self) -> &'static str {
        self.names().3
    }

    /// The dtype name of the JSON forms: `string`, `float32`, `int64`.
    pub fn json_dtype_name(self) -> &'static str {
        self.names().4
    }

    /// The kind a name stands for: its word, TensorFlow's dtype name or the JSON dtype name
    /// (`bytes`/`string`, `float`/`float32`, `int64`).
    pub fn from_name(name: &str) -> Option<Kind> {
        NAMES
            .iter()
            .find(|(_, word, _, tf, json)| [*word, *tf, *json].contains(&name))
            .map(|n| n.0)
    }

    /// The kind of a `*_list` field name.
    pub fn from_list_name(name: &str) -> Option<Kind> {
        NAMES.iter().find(|n| n.2 == name).map(|n| n.0)
    }
}

impl Feature {
    /// The kind, or `None` when no kind is set.
    pub fn kind(&self) -> Option<Kind> {
        match self {
            Feature::None => None,
            Feature::Bytes(_) => Some(Kind::Bytes),
            Feature::Float(_) => Some(Kind::Float),
            Feature::Int64(_) => Some(Kind::Int64),
        }
    }

    /// Number of values (0 when no kind is set).
    pub fn len(&self) -> usize {
        match self {
            Feature::None => 0,
            Feature::Bytes(v) => v.len(),
            Feature::Float(v) => v.len(),
            Feature::Int64(v) => v.len(),
        }
    }

    /// Whether the feature holds no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The int64 values, if this is an `int64_list`.
    pub fn as_int64(&self) -> Option<&[i64]> {
        match self {
            Feature::Int64(v) => Some(v),
            _ => None,
        }
    }

    /// The float values, if this is a `float_list`.
    pub fn as_float(&self) -> Option<&[f32]> {
        match self {
            Feature::Float(v) => Some(v),
            _ => None,
        }
    }

    /// The bytes values, if this is a `bytes_list`.
    pub fn as_bytes(&self) -> Option<&[Vec<u8>]> {
        match self {
            Feature::Bytes(v) => Some(v),
            _ => None,
        }
    }
}

/// A map from feature name to [`Feature`] (`tf.train.Features`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Features {
    /// The entries, in the order read or inserted.
    pub feature: IndexMap<String, Feature>,
}

impl Features {
    /// The feature called `name`.
    pub fn get(&self, name: &str) -> Option<&Feature> {
        self.feature.get(name)
    }

    /// Sets `name` (replacing its value in place if present).
    pub fn insert(&mut self, name: impl Into<String>, feature: Feature) {
        self.feature.insert(name.into(), feature);
    }

    /// Number of features.
    pub fn len(&self) -> usize {
        self.feature.len()
    }

    /// Whether there are no features.
    pub fn is_empty(&self) -> bool {
        self.feature.is_empty()
    }

    /// The features in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Feature)> {
        self.feature.iter().map(|(k, v)| (k.as_str(), v))
    }
}

/// A sequence of features, one per time step (`tf.train.FeatureList`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FeatureList {
    /// The features, one per step.
    pub feature: Vec<Feature>,
}

/// A map from name to [`FeatureList`] (`tf.train.FeatureLists`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FeatureLists {
    /// The lists by name, in the order read or inserted.
    pub feature_list: IndexMap<String, FeatureList>,
}

impl FeatureLists {
    /// The list called `name`.
    pub fn get(&self, name: &str) -> Option<&FeatureList> {
        self.feature_list.get(name)
    }

    /// The lists in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &FeatureList)> {
        self.feature_list.iter().map(|(k, v)| (k.as_str(), v))
    }
}

/// `tf.train.Example`: one record of named features.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Example {
    /// `None` when the `features` field is absent (an empty message).
    pub features: Option<Features>,
}

impl Example {
    /// The features (empty when absent).
    pub fn features(&self) -> &Features {
        static EMPTY: std::sync::OnceLock<Features> = std::sync::OnceLock::new();
        self.features
            .as_ref()
            .unwrap_or_else(|| EMPTY.get_or_init(Features::default))
    }

    /// The feature called `name`.
    pub fn get(&self, name: &str) -> Option<&Feature> {
        self.features.as_ref()?.get(name)
    }

    /// The features, created empty if absent, for editing.
    pub fn features_mut(&mut self) -> &mut Features {
        self.features.get_or_insert_with(Features::default)
    }
}

/// `tf.train.SequenceExample`: context features plus lists of per-step features.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SequenceExample {
    /// `None` when the `context` field is absent.
    pub context: Option<Features>,
    /// `None` when the `feature_lists` field is absent.
    pub feature_lists: Option<FeatureLists>,
}

impl SequenceExample {
    /// The context feature called `name`.
    pub fn context_feature(&self, name: &str) -> Option<&Feature> {
        self.context.as_ref()?.get(name)
    }

    /// The feature list called `name`.
    pub fn feature_list(&self, name: &str) -> Option<&FeatureList> {
        self.feature_lists.as_ref()?.get(name)
    }

    /// The context, created empty if absent, for editing.
    pub fn context_mut(&mut self) -> &mut Features {
        self.context.get_or_insert_with(Features::default)
    }

    /// The feature lists, created empty if absent, for editing.
    pub fn feature_lists_mut(&mut self) -> &mut FeatureLists {
        self.feature_lists.get_or_insert_with(FeatureLists::default)
    }
}
