//! `tf.train.Example` and `tf.train.SequenceExample`: owned messages with builders, exact
//! protobuf decoding and canonical encoding, zero-copy views for the parsing hot path, and
//! rendering as protobuf text format, protobuf JSON and a friendlier JSON-lines form.

mod builder;
mod codec;
mod json_read;
mod message;
mod model;
mod render;
mod schema;
#[cfg(test)]
pub(crate) use schema::{one_sequence, three_examples};
mod text;
mod view;

pub use crate::pyfloat::{python_repr, shortest_repr, write_python_repr, write_shortest_repr};
pub use crate::wire::{DecodeError, DecodeErrorKind};
pub use builder::{
    BuildError, BytesValue, ExampleBuilder, FloatValue, Int64Value, IntoBytesList, IntoFloats, IntoInt64s,
    SequenceExampleBuilder,
};
pub use json_read::{encode_friendly_json, FriendlyJsonError, FriendlyMessage, TypeHints};
pub use message::Message;
pub use model::{Example, Feature, FeatureList, FeatureLists, Features, Kind, SequenceExample};
pub use render::RenderFormat;
pub use schema::{FeatureStats, Schema};
// For the statistics text format, which writes bytes as the message text format does.
#[cfg(feature = "stats")]
pub(crate) use text::escape_bytes;
pub use text::TextError;
pub use view::{detect_message, MessageKind};
pub use view::{
    ExampleView, FeatureEntries, FeatureListEntries, FeatureListView, FeatureRows, FeatureView, RawFeature,
    SequenceExampleView, Value,
};

/// Messages for the tests of the layers above.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{Example, Feature, FeatureList, SequenceExample};

    /// An `Example` of these features, encoded.
    pub(crate) fn encoded_example(features: &[(&str, Feature)]) -> Vec<u8> {
        let mut e = Example::default();
        for (k, f) in features {
            e.features_mut().insert(*k, f.clone());
        }
        e.encode()
    }

    /// A `SequenceExample` of these context features and feature lists, encoded.
    pub(crate) fn encoded_sequence_example(context: &[(&str, Feature)], lists: &[(&str, Vec<Feature>)]) -> Vec<u8> {
        let mut s = SequenceExample::default();
        for (k, f) in context {
            s.context_mut().insert(*k, f.clone());
        }
        for (k, steps) in lists {
            s.feature_lists_mut()
                .feature_list
                .insert((*k).to_owned(), FeatureList { feature: steps.clone() });
        }
        s.encode()
    }
}
