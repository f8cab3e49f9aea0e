//! Builders for `Example` and `SequenceExample`, with the TFRecord notebook's coercions:
//! bool, integers and enums-as-integers become int64; f32/f64 become float; strings and byte
//! buffers become bytes. A u64 above `i64::MAX` is an error, not a silent wrap.

use super::model::{Example, Feature, FeatureList, SequenceExample};

/// A value that cannot become a feature value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// An unsigned integer above `i64::MAX`.
    #[error("feature {key:?}: {value} does not fit in an int64")]
    Int64Overflow {
        /// The feature.
        key: String,
        /// The value.
        value: u64,
    },
}

/// A single value that becomes one int64.
pub trait Int64Value: Copy {
    /// The value as int64, or the offending u64 when it does not fit.
    fn to_int64(self) -> Result<i64, u64>;
}

macro_rules! int64_lossless {
    ($($t:ty),*) => {$(
        impl Int64Value for $t {
            #[inline]
            fn to_int64(self) -> Result<i64, u64> { Ok(i64::from(self)) }
        }
    )*};
}
int64_lossless!(bool, i8, i16, i32, i64, u8, u16, u32);

impl Int64Value for u64 {
    #[inline]
    fn to_int64(self) -> Result<i64, u64> {
        i64::try_from(self).map_err(|_| self)
    }
}

impl Int64Value for usize {
    #[inline]
    fn to_int64(self) -> Result<i64, u64> {
        (self as u64).to_int64()
    }
}

impl Int64Value for isize {
    #[inline]
    fn to_int64(self) -> Result<i64, u64> {
        Ok(self as i64)
    }
}

/// A single value that becomes one float (f64 is rounded to the nearest f32, as TF does).
pub trait FloatValue: Copy {
    /// The float32 value.
    fn to_float(self) -> f32;
}

impl FloatValue for f32 {
    #[inline]
    fn to_float(self) -> f32 {
        self
    }
}

impl FloatValue for f64 {
    #[inline]
    fn to_float(self) -> f32 {
        self as f32
    }
}

/// A single value that becomes one bytes element.
pub trait BytesValue {
    /// The bytes.
    fn to_bytes(self) -> Vec<u8>;
}

impl BytesValue for &str {
    fn to_bytes(self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}
impl BytesValue for String {
    fn to_bytes(self) -> Vec<u8> {
        self.into_bytes()
    }
}
impl BytesValue for &String {
    fn to_bytes(self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}
impl BytesValue for &[u8] {
    fn to_bytes(self) -> Vec<u8> {
        self.to_vec()
    }
}
impl BytesValue for Vec<u8> {
    fn to_bytes(self) -> Vec<u8> {
        self
    }
}
impl BytesValue for &Vec<u8> {
    fn to_bytes(self) -> Vec<u8> {
        self.clone()
    }
}
impl<const N: usize> BytesValue for &[u8; N] {
    fn to_bytes(self) -> Vec<u8> {
        self.to_vec()
    }
}

/// One value or a collection of values for an int64 feature.
pub trait IntoInt64s {
    /// The values; an unsigned value above `i64::MAX` is the error.
    fn into_int64s(self) -> Result<Vec<i64>, u64>;
}

impl<T: Int64Value> IntoInt64s for T {
    fn into_int64s(self) -> Result<Vec<i64>, u64> {
        Ok(vec![self.to_int64()?])
    }
}
impl<T: Int64Value> IntoInt64s for Vec<T> {
    fn into_int64s(self) -> Result<Vec<i64>, u64> {
        self.into_iter().map(Int64Value::to_int64).collect()
    }
}
impl<T: Int64Value> IntoInt64s for &[T] {
    fn into_int64s(self) -> Result<Vec<i64>, u64> {
        self.iter().map(|v| v.to_int64()).collect()
    }
}
impl<T: Int64Value, const N: usize> IntoInt64s for [T; N] {
    fn into_int64s(self) -> Result<Vec<i64>, u64> {
        self.into_iter().map(Int64Value::to_int64).collect()
    }
}

/// One value or a collection of values for a float feature.
pub trait IntoFloats {
    /// The values.
    fn into_floats(self) -> Vec<f32>;
}

impl<T: FloatValue> IntoFloats for T {
    fn into_floats(self) -> Vec<f32> {
        vec![self.to_float()]
    }
}
impl<T: FloatValue> IntoFloats for Vec<T> {
    fn into_floats(self) -> Vec<f32> {
        self.into_iter().map(FloatValue::to_float).collect()
    }
}
impl<T: FloatValue> IntoFloats for &[T] {
    fn into_floats(self) -> Vec<f32> {
        self.iter().map(|v| v.to_float()).collect()
    }
}
impl<T: FloatValue, const N: usize> IntoFloats for [T; N] {
    fn into_floats(self) -> Vec<f32> {
        self.into_iter().map(FloatValue::to_float).collect()
    }
}

/// One value or a collection of values for a bytes feature. A `Vec<u8>` or `&[u8]` is *one*
/// value; a `Vec<&str>` or `[&str; N]` is several.
pub trait IntoBytesList {
    /// The values.
    fn into_bytes_list(self) -> Vec<Vec<u8>>;
}

impl<T: BytesValue> IntoBytesList for T {
    fn into_bytes_list(self) -> Vec<Vec<u8>> {
        vec![self.to_bytes()]
    }
}
impl<T: BytesValue> IntoBytesList for Vec<T> {
    fn into_bytes_list(self) -> Vec<Vec<u8>> {
        self.into_iter().map(BytesValue::to_bytes).collect()
    }
}
impl<T: BytesValue, const N: usize> IntoBytesList for [T; N] {
    fn into_bytes_list(self) -> Vec<Vec<u8>> {
        self.into_iter().map(BytesValue::to_bytes).collect()
    }
}

/// Collects features in order; the first conversion error is reported by `build`.
#[derive(Debug, Default)]
struct FeatureSink {
    features: Vec<(String, Feature)>,
    error: Option<BuildError>,
}

impl FeatureSink {
    fn int64(&mut self, key: &str, values: impl IntoInt64s) {
        match values.into_int64s() {
            Ok(v) => self.features.push((key.to_owned(), Feature::Int64(v))),
            Err(value) => {
                self.error.get_or_insert(BuildError::Int64Overflow {
                    key: key.to_owned(),
                    value,
                });
            }
        }
    }
}

/// Builds an [`Example`], one feature per call; a key given twice is an error at `build`.
///
/// ```
/// use tfrec::example::{Example, Feature};
///
/// let example = Example::builder()
///     .int64("age", 19)
///     .float("scores", [0.5f32, 1.5])
///     .bytes("name", "goat")
///     .build()?;
/// assert_eq!(example.get("scores"), Some(&Feature::Float(vec![0.5, 1.5])));
/// let bytes = example.encode();
/// assert_eq!(Example::decode(&bytes)?, example);
/// # Ok::<(), tfrec::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct ExampleBuilder {
    sink: FeatureSink,
}

impl ExampleBuilder {
    /// Adds an int64 feature from one integer/bool or a collection of them.
    pub fn int64(mut self, key: &str, values: impl IntoInt64s) -> Self {
        self.sink.int64(key, values);
        self
    }

    /// Adds a float feature from one f32/f64 or a collection of them.
    pub fn float(mut self, key: &str, values: impl IntoFloats) -> Self {
        self.sink
            .features
            .push((key.to_owned(), Feature::Float(values.into_floats())));
        self
    }

    /// Adds a bytes feature from one string/buffer or a collection of them.
    pub fn bytes(mut self, key: &str, values: impl IntoBytesList) -> Self {
        self.sink
            .features
            .push((key.to_owned(), Feature::Bytes(values.into_bytes_list())));
        self
    }

    /// Adds a feature as it is.
    pub fn feature(mut self, key: &str, feature: Feature) -> Self {
        self.sink.features.push((key.to_owned(), feature));
        self
    }

    /// The Example, or the first value that could not be converted.
    pub fn build(self) -> Result<Example, BuildError> {
        if let Some(error) = self.sink.error {
            return Err(error);
        }
        let mut example = Example::default();
        let features = example.features_mut();
        for (key, feature) in self.sink.features {
            features.insert(key, feature);
        }
        Ok(example)
    }
}

impl Example {
    /// Starts building an Example.
    pub fn builder() -> ExampleBuilder {
        ExampleBuilder::default()
    }
}

/// Builds a [`SequenceExample`]: context features like [`ExampleBuilder`], plus feature lists.
#[derive(Debug, Default)]
pub struct SequenceExampleBuilder {
    context: FeatureSink,
    lists: Vec<(String, FeatureList)>,
}

impl SequenceExampleBuilder {
    /// Adds an int64 context feature.
    pub fn context_int64(mut self, key: &str, values: impl IntoInt64s) -> Self {
        self.context.int64(key, values);
        self
    }

    /// Adds a float context feature.
    pub fn context_float(mut self, key: &str, values: impl IntoFloats) -> Self {
        self.context
            .features
            .push((key.to_owned(), Feature::Float(values.into_floats())));
        self
    }

    /// Adds a bytes context feature.
    pub fn context_bytes(mut self, key: &str, values: impl IntoBytesList) -> Self {
        self.context
            .features
            .push((key.to_owned(), Feature::Bytes(values.into_bytes_list())));
        self
    }

    /// Adds a feature list with one feature per step.
    pub fn feature_list(mut self, key: &str, steps: impl IntoIterator<Item = Feature>) -> Self {
        self.lists.push((
            key.to_owned(),
            FeatureList {
                feature: steps.into_iter().collect(),
            },
        ));
        self
    }

    /// Adds an int64 feature list, one step per item.
    pub fn int64_list<I: IntoInt64s>(mut self, key: &str, steps: impl IntoIterator<Item = I>) -> Self {
        let mut features = Vec::new();
        for step in steps {
            match step.into_int64s() {
                Ok(v) => features.push(Feature::Int64(v)),
                Err(value) => {
                    self.context.error.get_or_insert(BuildError::Int64Overflow {
                        key: key.to_owned(),
                        value,
                    });
                }
            }
        }
        self.feature_list(key, features)
    }

    /// Adds a float feature list, one step per item.
    pub fn float_list<F: IntoFloats>(self, key: &str, steps: impl IntoIterator<Item = F>) -> Self {
        let features: Vec<Feature> = steps.into_iter().map(|s| Feature::Float(s.into_floats())).collect();
        self.feature_list(key, features)
    }

    /// Adds a bytes feature list, one step per item.
    pub fn bytes_list<B: IntoBytesList>(self, key: &str, steps: impl IntoIterator<Item = B>) -> Self {
        let features: Vec<Feature> = steps.into_iter().map(|s| Feature::Bytes(s.into_bytes_list())).collect();
        self.feature_list(key, features)
    }

    /// The SequenceExample, or the first value that could not be converted.
    pub fn build(self) -> Result<SequenceExample, BuildError> {
        if let Some(error) = self.context.error {
            return Err(error);
        }
        let mut seq = SequenceExample::default();
        if !self.context.features.is_empty() {
            let context = seq.context_mut();
            for (key, feature) in self.context.features {
                context.insert(key, feature);
            }
        }
        if !self.lists.is_empty() {
            let lists = seq.feature_lists_mut();
            for (key, list) in self.lists {
                lists.feature_list.insert(key, list);
            }
        }
        Ok(seq)
    }
}

impl SequenceExample {
    /// Starts building a SequenceExample.
    pub fn builder() -> SequenceExampleBuilder {
        SequenceExampleBuilder::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coercions_follow_the_notebook() {
        let ex = Example::builder()
            .int64("flag", true)
            .int64("small", 3u8)
            .int64("ids", vec![1u32, 2, 3])
            .float("score", [0.5f64, 1.5])
            .bytes("name", "goat")
            .bytes("raw", vec![0u8, 255])
            .bytes("tags", vec!["a", "b"])
            .build()
            .unwrap();
        assert_eq!(ex.get("flag"), Some(&Feature::Int64(vec![1])));
        assert_eq!(ex.get("ids"), Some(&Feature::Int64(vec![1, 2, 3])));
        assert_eq!(ex.get("score"), Some(&Feature::Float(vec![0.5, 1.5])));
        assert_eq!(ex.get("raw"), Some(&Feature::Bytes(vec![vec![0, 255]])));
        assert_eq!(
            ex.get("tags"),
            Some(&Feature::Bytes(vec![b"a".to_vec(), b"b".to_vec()]))
        );
    }

    #[test]
    fn u64_overflow_is_an_error() {
        let err = Example::builder().int64("big", u64::MAX).build().unwrap_err();
        assert_eq!(
            err,
            BuildError::Int64Overflow {
                key: "big".into(),
                value: u64::MAX
            }
        );
        assert!(Example::builder().int64("max", i64::MAX as u64).build().is_ok());
    }

    #[test]
    fn sequence_builder() {
        let seq = SequenceExample::builder()
            .context_float("age", 19.0)
            .float_list("ratings", [4.5, 5.0])
            .bytes_list("names", [vec!["a", "b"], vec!["c"]])
            .build()
            .unwrap();
        assert_eq!(seq.context_feature("age"), Some(&Feature::Float(vec![19.0])));
        assert_eq!(seq.feature_list("ratings").map(|l| l.feature.len()), Some(2));
    }
}
