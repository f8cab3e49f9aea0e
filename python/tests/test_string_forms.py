"""``strings=``: every parse call can give string features as NumPy ``StringDType`` arrays
(``"numpy"``) or pyarrow ``binary`` arrays (``"arrow"``) instead of object arrays of ``bytes``
(``"object"``, the default). For every parse function and spec kind (fixed, var-len, sparse,
ragged, sequences), over generated records with empty strings, empty lists and non-ASCII
text, each form holds the default's values; a value that is not UTF-8 is a
``UnicodeDecodeError`` naming the feature with ``"numpy"`` and bytes with the others; a bad
``strings=`` is a ``ValueError``."""

import random

import numpy as np
import pytest

import tfrec
from tfrec import io

pa = pytest.importorskip("pyarrow")
StringDType = np.dtypes.StringDType

FORMS = ["numpy", "arrow"]
WORDS = ["", "a", "é", "日本語", "longer than fifteen bytes, kept out of line", "x" * 40]


def word(rng):
    return rng.choice(WORDS).encode()


def example(rng, bad=False):
    n_tags = rng.randrange(4)
    n_sparse = rng.randrange(3)
    d = {
        "id": rng.randrange(100),
        "word": word(rng),
        "pair": [word(rng), word(rng)],
        "grid": [word(rng) for _ in range(4)],
        "tags": [word(rng) for _ in range(n_tags)] or tfrec.train.Feature(bytes_list=tfrec.train.BytesList(value=[])),
        "idx": list(range(n_sparse)),
        "sval": [word(rng) for _ in range(n_sparse)],
        "rag": [word(rng) for _ in range(4)],
        "rag_len": [1, 3],
    }
    if bad:
        d["tags"] = [b"ok", b"\xff\xfe"]
    return tfrec.Example.from_dict(d).SerializeToString()


FEATURES = {
    "id": io.FixedLenFeature([], "int64"),
    "word": io.FixedLenFeature([], "string"),
    "pair": io.FixedLenFeature([2], "string"),
    "grid": io.FixedLenFeature([2, 2], "string"),
    "tags": io.VarLenFeature("string"),
    "sparse": io.SparseFeature("idx", "sval", "string", 5),
    "rag": io.RaggedFeature("string", partitions=[io.RaggedFeature.RowLengths("rag_len")]),
}


def sequence_example(rng, bad=False):
    steps = rng.randrange(4)
    lists = {
        "tokens": [[word(rng)] for _ in range(steps)],
        "words": [[word(rng) for _ in range(rng.randrange(3))] for _ in range(steps)],
    }
    if bad:
        lists["tokens"] = [[b"\xc3"]]
    return tfrec.SequenceExample.from_dict(
        {"context": {"lang": word(rng), "ctx_tags": [word(rng) for _ in range(rng.randrange(3))]},
         "feature_lists": lists}
    ).SerializeToString()


CONTEXT = {"lang": io.FixedLenFeature([], "string"), "ctx_tags": io.VarLenFeature("string")}
SEQUENCE = {
    "tokens": io.FixedLenSequenceFeature([], "string", allow_missing=True),
    "words": io.RaggedFeature("string"),
}


def records(seed, n=12):
    rng = random.Random(seed)
    return [example(rng) for _ in range(n)]


def sequence_records(seed, n=12):
    rng = random.Random(seed)
    return [sequence_example(rng) for _ in range(n)]


def as_lists(value):
    """Python values of a parsed tensor in any form: strings as ``bytes`` (``str`` of a
    StringDType array encoded back), sparse and ragged as their parts."""
    if isinstance(value, io.SparseTensor):
        return ("sparse", value.indices.tolist(), as_lists(value.values), value.dense_shape.tolist())
    if isinstance(value, io.RaggedTensor):
        return ("ragged", as_lists(value.flat_values), [s.tolist() for s in value.nested_row_splits])
    if isinstance(value, (pa.Array, pa.Scalar)):
        return value.to_pylist() if isinstance(value, pa.Array) else value.as_py()
    return encode(value.tolist())


def encode(x):
    if isinstance(x, list):
        return [encode(v) for v in x]
    return x.encode() if isinstance(x, str) else x


def string_arrays(value):
    """The arrays of strings in a parsed tensor (a dense tensor, or sparse or ragged values)."""
    if isinstance(value, io.SparseTensor):
        return [value.values]
    if isinstance(value, io.RaggedTensor):
        return [value.flat_values]
    return [value]


def check_form(form, got, want, numeric=("id",)):
    assert list(got) == list(want)
    for name in want:
        assert as_lists(got[name]) == as_lists(want[name]), name
        for array in string_arrays(got[name]):
            if name in numeric:
                assert isinstance(array, np.ndarray) and array.dtype != object
            elif form == "numpy":
                assert isinstance(array, np.ndarray) and isinstance(array.dtype, StringDType), name
            elif isinstance(array, pa.Array):
                leaf = array.type
                while pa.types.is_fixed_size_list(leaf):
                    leaf = leaf.value_type
                assert leaf == pa.binary(), name
            else:
                assert isinstance(array, pa.BinaryScalar), name


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parse_example_holds_the_defaults_values(form, seed):
    batch = records(seed)
    check_form(form, io.parse_example(batch, FEATURES, strings=form), io.parse_example(batch, FEATURES))
    threaded = io.parse_example(batch, FEATURES, num_threads=2, strings=form)
    check_form(form, threaded, io.parse_example(batch, FEATURES))


@pytest.mark.parametrize("form", FORMS)
def test_parse_single_example(form):
    for record in records(3, 6):
        check_form(form, io.parse_single_example(record, FEATURES, strings=form), io.parse_single_example(record, FEATURES))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", [0, 1])
def test_parse_sequence_example(form, seed):
    batch = sequence_records(seed)
    got = io.parse_sequence_example(batch, CONTEXT, SEQUENCE, strings=form)
    want = io.parse_sequence_example(batch, CONTEXT, SEQUENCE)
    for g, w in zip(got, want):
        check_form(form, g, w, numeric=tuple(w) if w is want[2] else ())
    for record in batch[:5]:
        got = io.parse_single_sequence_example(record, CONTEXT, SEQUENCE, strings=form)
        want = io.parse_single_sequence_example(record, CONTEXT, SEQUENCE)
        for g, w in zip(got, want):
            check_form(form, g, w)


@pytest.mark.parametrize("form", FORMS)
def test_an_empty_batch(form):
    got = io.parse_example([], FEATURES, strings=form)
    want = io.parse_example([], FEATURES)
    check_form(form, got, want)
    assert len(got["word"]) == 0


def test_strings_of_the_numpy_form_are_text():
    out = io.parse_example(records(0), FEATURES, strings="numpy")
    assert set(out["word"].tolist()) <= set(WORDS)
    assert all(isinstance(w, str) for w in out["word"].tolist())


@pytest.mark.parametrize("form", ["object", "numpy", "arrow"])
def test_a_sparse_tensor_of_each_form_makes_its_dense_array(form):
    batch = records(4)
    values = io.parse_example(batch, FEATURES, strings=form)["tags"]
    if form == "arrow":
        assert isinstance(values.values, pa.Array)
        return
    dense = values.to_dense()
    want = io.parse_example(batch, FEATURES)["tags"].to_dense()
    assert encode(dense.tolist()) == want.tolist()


def test_numpy_strings_around_the_inline_limit_are_numpys_own():
    # NumPy keeps a string of up to 15 bytes inside its array element; the binding writes such
    # elements itself. Every length around the limit (one- and two-byte characters) must equal
    # NumPy's own array of the same text, and stay NumPy's to change: replaced by shorter,
    # longer and empty text, joined, sorted, copied.
    rng = random.Random(10)
    texts = ["".join(rng.choice(["a", "é", "z"]) for _ in range(n)) for n in range(0, 20) for _ in range(3)]
    texts = [t for t in texts if len(t.encode()) <= 20]
    rng.shuffle(texts)
    record = tfrec.Example.from_dict({"t": [t.encode() for t in texts]}).SerializeToString()
    got = io.parse_example([record], {"t": io.VarLenFeature("string")}, strings="numpy")["t"].values
    want = np.array(texts, dtype=StringDType())
    assert got.tolist() == texts
    assert (got == want).all()
    assert np.array_equal(np.sort(got), np.sort(want))
    assert (np.strings.add(got, "!") == np.strings.add(want, "!")).all()
    assert np.strings.str_len(got).tolist() == [len(t) for t in texts]
    copy = got.copy()
    for i, replacement in enumerate(["", "short", "a string longer than fifteen bytes", "é" * 7]):
        got[i] = replacement
        texts[i] = replacement
    assert got.tolist() == texts
    assert copy.tolist() != texts
    del copy, got


def test_not_utf8_is_an_error_naming_the_feature_with_numpy():
    rng = random.Random(5)
    batch = [example(rng) for _ in range(3)] + [example(rng, bad=True)]
    with pytest.raises(UnicodeDecodeError, match="feature 'tags'") as caught:
        io.parse_example(batch, FEATURES, strings="numpy")
    assert caught.value.object == b"\xff\xfe"
    # The other forms hold bytes, which need not be text.
    assert io.parse_example(batch, FEATURES, strings="arrow")["tags"].values.to_pylist()[-1] == b"\xff\xfe"
    assert io.parse_example(batch, FEATURES)["tags"].values[-1] == b"\xff\xfe"
    with pytest.raises(UnicodeDecodeError, match="feature 'tokens'"):
        io.parse_sequence_example([sequence_example(rng, bad=True)], CONTEXT, SEQUENCE, strings="numpy")


def test_a_character_split_between_two_values_is_not_text():
    # "é" is C3 A9: the values' bytes together are UTF-8, each alone is not.
    record = tfrec.Example.from_dict({"tags": [b"a\xc3", b"\xa9b"]}).SerializeToString()
    with pytest.raises(UnicodeDecodeError, match="value 0 of feature 'tags'"):
        io.parse_example([record], {"tags": io.VarLenFeature("string")}, strings="numpy")


@pytest.mark.parametrize("call", ["parse_example", "parse_single_example", "dataset", "random_access"])
def test_a_bad_strings_is_a_value_error(call, tmp_path):
    record = records(0, 1)[0]
    with pytest.raises(ValueError, match="strings must be 'object', 'numpy' or 'arrow', not \"text\""):
        if call == "parse_example":
            io.parse_example([record], FEATURES, strings="text")
        elif call == "parse_single_example":
            io.parse_single_example(record, FEATURES, strings="text")
        else:
            path = tmp_path / "a.tfrecord"
            with tfrec.TFRecordWriter(str(path)) as w:
                w.write(record)
            if call == "dataset":
                tfrec.TFRecordDataset(str(path)).batch(2).parse(FEATURES, strings="text")
            else:
                tfrec.RandomAccessDataset(str(path), features=FEATURES, strings="text")


def write(path, batch):
    with tfrec.TFRecordWriter(str(path)) as w:
        for r in batch:
            w.write(r)
    return str(path)


@pytest.mark.parametrize("form", FORMS)
def test_the_pipeline_holds_the_defaults_values(form, tmp_path):
    path = write(tmp_path / "e.tfrecord", records(6, 30))
    ds = tfrec.TFRecordDataset(path)
    cases = [
        (ds.batch(7).parse(FEATURES, strings=form), ds.batch(7).parse(FEATURES)),
        (ds.batch(7).parse(FEATURES, strings=form).threads(2), ds.batch(7).parse(FEATURES)),
        # Unbatched: each record alone (parse_single_example).
        (ds.take(5).parse(FEATURES, strings=form), ds.take(5).parse(FEATURES)),
        # After a map the parse runs over elements.
        (ds.batch(7).map(lambda b: b).parse(FEATURES, strings=form), ds.batch(7).parse(FEATURES)),
        # Stages over elements after the parse (the library's lift of parsed values).
        (ds.batch(7).parse(FEATURES, strings=form).map(lambda d: d), ds.batch(7).parse(FEATURES)),
    ]
    for got, want in cases:
        got, want = list(got), list(want)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            check_form(form, g, w)


@pytest.mark.parametrize("form", FORMS)
def test_the_pipeline_of_sequences(form, tmp_path):
    path = write(tmp_path / "s.tfrecord", sequence_records(7, 20))
    ds = tfrec.TFRecordDataset(path).batch(6)
    got = list(ds.parse(context_features=CONTEXT, sequence_features=SEQUENCE, strings=form))
    want = list(ds.parse(context_features=CONTEXT, sequence_features=SEQUENCE))
    for g, w in zip(got, want):
        check_form(form, g[0], w[0])
        check_form(form, g[1], w[1])
        check_form(form, g[2], w[2], numeric=tuple(w[2]))


def test_the_pipeline_names_the_feature_not_utf8(tmp_path):
    rng = random.Random(8)
    path = write(tmp_path / "bad.tfrecord", [example(rng) for _ in range(5)] + [example(rng, bad=True)])
    with pytest.raises(UnicodeDecodeError, match="feature 'tags'"):
        list(tfrec.TFRecordDataset(path).batch(4).parse(FEATURES, strings="numpy"))
    assert len(list(tfrec.TFRecordDataset(path).batch(4).parse(FEATURES, strings="arrow"))) == 2


@pytest.mark.parametrize("form", FORMS)
def test_random_access(form, tmp_path):
    import pickle

    path = write(tmp_path / "r.tfrecord", records(9, 10))
    got = tfrec.RandomAccessDataset(path, features=FEATURES, strings=form)
    want = tfrec.RandomAccessDataset(path, features=FEATURES)
    check_form(form, got[3], want[3])
    check_form(form, got.get_batch([1, 4, 2]), want.get_batch([1, 4, 2]))
    # Pickled with its `strings` (a spec without RaggedFeature's partitions, whose nested
    # classes do not pickle).
    plain = {k: v for k, v in FEATURES.items() if k != "rag"}
    got = pickle.loads(pickle.dumps(tfrec.RandomAccessDataset(path, features=plain, strings=form)))
    check_form(form, got[5], tfrec.RandomAccessDataset(path, features=plain)[5])
