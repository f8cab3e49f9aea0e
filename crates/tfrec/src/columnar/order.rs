//! The order of a spec's columns: the order its JSON text names the features in.
//!
//! The parse layer keeps specs in sorted maps (TensorFlow sorts dense and sparse keys itself,
//! so the parse results do not depend on the order). A table is different: a user who writes
//! `{"label": …, "image": …}` expects the columns `label, image`, as pyarrow, Polars and
//! Parquet keep the order they are given. So the order lives here, beside the sorted specs.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// The feature names of a JSON spec in the order its text writes them: an Example spec's
/// keys, or a sequence spec's context features then its feature lists (the order of the
/// columns, see [`ColumnSpecs::with_order`](super::ColumnSpecs::with_order)).
///
/// Text that is not a JSON object gives no names: the spec's own parse
/// ([`SpecFile::from_json_str`](crate::parse::SpecFile::from_json_str)) reports why.
///
/// ```
/// let order = tfrec::columnar::spec_order(r#"{"b": {}, "a": {}}"#);
/// assert_eq!(order, ["b", "a"]);
/// ```
pub fn spec_order(text: &str) -> Vec<String> {
    if let Some(names) = example_names_streamed(text) {
        return names;
    }
    let Ok(Value::Object(top)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let keys = |v: Option<&Value>| match v {
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    };
    // The same test as `SpecFile::from_json` for a sequence spec.
    if top.contains_key("context_features") || top.contains_key("sequence_features") {
        let mut names: Vec<String> = keys(top.get("context_features"));
        names.extend(keys(top.get("sequence_features")));
        names
    } else {
        top.keys().cloned().collect()
    }
}

/// An Example spec's names in the order of its text, read without the text's tree (which, for
/// a spec of a million features, took about a kilobyte a feature). `None` for anything else (a
/// sequence spec, a name given twice, text that is not a JSON object), which
/// [`spec_order`] reads through the tree.
fn example_names_streamed(text: &str) -> Option<Vec<String>> {
    let mut names = Vec::new();
    crate::parse::each_example_entry(text, |name, _: serde::de::IgnoredAny| {
        names.push(name);
        Some(())
    })?;
    let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    if sorted.windows(2).any(|pair| pair[0] == pair[1]) {
        return None;
    }
    Some(names)
}

/// The entries of `specs` in `order` (names `specs` lacks are passed over, a repeated name
/// counts once), then the entries `order` leaves out, in name order. Lazy after the named
/// ones: an inferred spec of a million features (no order) costs no second list of them.
pub(super) fn in_order<'a, V>(
    specs: &'a BTreeMap<String, V>,
    order: &[String],
) -> impl Iterator<Item = (&'a String, &'a V)> + 'a {
    let mut taken = BTreeSet::new();
    let named: Vec<(&'a String, &'a V)> = order
        .iter()
        .filter_map(|name| specs.get_key_value(name))
        .filter(|(k, _)| taken.insert(k.as_str()))
        .collect();
    let rest = specs.iter().filter(move |(k, _)| !taken.contains(k.as_str()));
    named.into_iter().chain(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_order_of_example_and_sequence_specs() {
        assert_eq!(
            spec_order(r#"{"z": {"type": "VarLenFeature"}, "a": {}, "m": {}}"#),
            ["z", "a", "m"]
        );
        let seq = r#"{"sequence_features": {"y": {}, "b": {}}, "context_features": {"k": {}, "c": {}}}"#;
        assert_eq!(spec_order(seq), ["k", "c", "y", "b"]);
        assert_eq!(
            spec_order(r#"{"context_features": null, "sequence_features": {"s": {}}}"#),
            ["s"]
        );
        assert!(spec_order("not json").is_empty());
        assert!(spec_order("[1, 2]").is_empty());
    }

    /// The names read without the tree are those the tree gives, and text the streamed read
    /// leaves to the tree (a name given twice, a sequence spec, bad JSON) still gets its order.
    #[test]
    fn names_read_without_the_tree_are_the_trees() {
        let tree = |text: &str| match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(top)) => top.keys().cloned().collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        let text = r#"{"z": {"a": [1, {"b": null}]}, "a": 3, "m": "x", "é": {}}"#;
        assert_eq!(example_names_streamed(text).as_deref(), Some(&tree(text)[..]));
        assert_eq!(example_names_streamed("{}"), Some(Vec::new()));
        for left in [
            r#"{"a": {}, "b": {}, "a": {}}"#,
            r#"{"a": {}, "context_features": {}}"#,
            r#"{"a": {}"#,
            r#"{"a": {}} x"#,
            "[1]",
        ] {
            assert_eq!(example_names_streamed(left), None, "{left}");
        }
        assert_eq!(spec_order(r#"{"a": {}, "b": {}, "a": {}}"#), ["a", "b"]);
    }

    #[test]
    fn order_first_then_the_rest_sorted() {
        let specs: BTreeMap<String, u8> = [("a", 1), ("b", 2), ("c", 3), ("d", 4)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        let names = |order: &[&str]| {
            let order: Vec<String> = order.iter().map(|s| (*s).to_owned()).collect();
            in_order(&specs, &order).map(|(k, _)| k.clone()).collect::<Vec<_>>()
        };
        assert_eq!(names(&["c", "a", "d", "b"]), ["c", "a", "d", "b"]);
        assert_eq!(names(&["d", "x", "d"]), ["d", "a", "b", "c"]);
        assert_eq!(names(&[]), ["a", "b", "c", "d"]);
    }
}
