"""Sparse sequences and context in ``tfrec.batch_sequences_with_states``: split per step and
padded as TF 1.15's ``batch_sequences_with_states`` does, batched with TF's indices and dense
shapes (expected values recorded from TF 1.15), and the inputs TF rejects. All data is made
here."""

import numpy as np
import pytest

import tfrec
from tfrec.io import SparseTensor
from tfrec.state_saver import StateSaverError

H0 = {"t": np.zeros((), np.int64)}


def sp(indices, values, shape, dtype=np.int32):
    rank = len(shape)
    return SparseTensor(np.array(indices, np.int64).reshape(-1, rank), np.array(values, dtype),
                        np.array(shape, np.int64))


def run(examples, num_unroll, batch_size, **kw):
    batches = tfrec.batch_sequences_with_states(
        None, examples, None, None, H0, num_unroll=num_unroll, batch_size=batch_size, **kw)
    out = []
    for b in batches:
        out.append(b)
        b.save_state("t", b.state("t") + 1)
    return out, batches


def fields(s):
    return s.indices.tolist(), s.values.tolist(), s.dense_shape.tolist()


def tf_probe_examples():
    return [
        {"input_key": "k0",
         "input_sequences": {"a": np.arange(5, dtype=np.float32),
                             "sp": sp([[1, 2, 0], [3, 0, 1], [3, 1, 1]], [7, 8, 9], [5, 3, 4])},
         "input_context": {"c": sp([[0, 2], [1, 6]], [5, 6], [2, 7], np.int64)}},
        {"input_key": "k1",
         "input_sequences": {"a": np.arange(3, dtype=np.float32), "sp": sp([[0, 0, 5], [2, 1, 1]], [1, 2], [3, 2, 6])},
         "input_context": {"c": sp([], [], [3, 1], np.int64)}},
    ]


def test_split_batch_and_max_shape_as_tf115():
    bs, batches = run(tf_probe_examples(), num_unroll=2, batch_size=2)
    # Batches 1 and 2 as TF 1.15 hands them out (TF then ends with OutOfRangeError before k0's
    # third segment, the end-of-input behaviour of its barrier; tfrec hands it out).
    assert bs[0].key.tolist() == [b"00000_of_00003:k0", b"00000_of_00002:k1"]
    assert fields(bs[0].sequences["sp"]) == ([[0, 1, 2, 0], [1, 0, 0, 5]], [7, 1], [2, 2, 3, 6])
    assert fields(bs[0].context["c"]) == ([[0, 0, 2], [0, 1, 6]], [5, 6], [2, 3, 7])
    assert fields(bs[1].sequences["sp"]) == ([[0, 1, 0, 1], [0, 1, 1, 1], [1, 0, 1, 1]], [8, 9, 2], [2, 2, 3, 6])
    assert fields(bs[1].context["c"]) == ([[0, 0, 2], [0, 1, 6]], [5, 6], [2, 3, 7])
    # The small last batch keeps TF's dense_shape[0] = batch_size; padded steps are empty.
    assert bs[2].key.tolist() == [b"00002_of_00003:k0"]
    assert fields(bs[2].sequences["sp"]) == ([], [], [2, 2, 3, 4])
    assert bs[2].sequences["sp"].indices.shape == (0, 4)
    assert fields(bs[2].context["c"]) == ([[0, 0, 2], [0, 1, 6]], [5, 6], [2, 2, 7])
    assert bs[0].sequences["sp"].values.dtype == np.int32 and bs[0].context["c"].values.dtype == np.int64
    assert bs[0].sequences["sp"].indices.dtype == np.int64 and bs[0].sequences["sp"].dense_shape.dtype == np.int64
    assert "\0sparse_id" not in bs[0].context and set(bs[0].sequences) == {"a", "sp"}
    assert batches.in_flight == 0  # every example left the saver, with its sparse values


def test_padding_keeps_steps_past_the_dense_length_as_tf115():
    # TF 1.15: dense length 3, num_unroll 2 -> padded length 4; the sparse step 3 is kept and
    # dense_shape[0] (9) is replaced by the padded length; a step at 4 is out of bounds.
    e = {"input_key": "k4", "input_sequences": {"a": np.arange(3, dtype=np.float32),
                                                 "sp": sp([[3, 0, 0]], [1], [9, 3, 4])}}
    bs, _ = run([e], num_unroll=2, batch_size=1)
    assert [fields(b.sequences["sp"]) for b in bs] == [([], [], [1, 2, 3, 4]), ([[0, 1, 0, 0]], [1], [1, 2, 3, 4])]
    e["input_sequences"]["sp"] = sp([[4, 0, 0]], [1], [9, 3, 4])
    with pytest.raises(StateSaverError, match=r"indices\[0\] = \[4,0,0\] is out of bounds: need 0 <= index < \[4,3,4\]"):
        run([e], num_unroll=2, batch_size=1)


@pytest.mark.parametrize("indices, what", [
    ([[1, 2, 0], [0, 0, 1]], r"indices\[1\] = \[0,0,1\] is out of order"),
    ([[1, 2, 0], [1, 2, 0]], r"indices\[1\] = \[1,2,0\] is repeated"),
    ([[1, 3, 0], [2, 0, 0]], r"indices\[0\] = \[1,3,0\] is out of bounds"),
])
def test_indices_checked_as_tf_does(indices, what):
    e = {"input_key": "k", "input_sequences": {"a": np.arange(4, dtype=np.float32), "sp": sp(indices, [1, 2], [4, 3, 4])}}
    with pytest.raises(StateSaverError, match=what) as err:
        run([e], num_unroll=2, batch_size=1)
    assert err.value.kind == "input" and err.value.example_index == 0


def test_sparse_only_sequences_take_the_longest_first_dimension():
    e = {"input_key": "k", "input_sequences": {"p": sp([[0, 0]], [5], [3, 2]), "q": sp([[4, 1]], [6], [5, 2])}}
    bs, _ = run([e], num_unroll=2, batch_size=1)
    assert [int(b.total_length[0]) for b in bs] == [5, 5, 5]
    assert [fields(b.sequences["q"]) for b in bs] == [([], [], [1, 2, 2])] * 2 + [([[0, 0, 1]], [6], [1, 2, 2])]
    assert [fields(b.sequences["p"])[2] for b in bs] == [[1, 2, 2]] * 3
    assert set(bs[0].sequences) == {"p", "q"}


def test_without_padding_the_first_dimensions_must_match_and_divide():
    good = {"input_key": "k", "input_sequences": {"a": np.zeros(4, np.float32), "sp": sp([[3, 1]], [2], [4, 2])}}
    bs, _ = run([good], num_unroll=2, batch_size=1, pad=False)
    assert fields(bs[1].sequences["sp"]) == ([[0, 1, 1]], [2], [1, 2, 2])
    for shape, what in (([3, 2], "multiple of: 2, but saw value: 3"), ([6, 2], "same first dimension")):
        bad = {"input_key": "k", "input_sequences": {"a": np.zeros(4, np.float32), "sp": sp([[0, 1]], [2], shape)}}
        with pytest.raises(StateSaverError, match=what):
            run([bad], num_unroll=2, batch_size=1, pad=False)


def test_rank_one_sequence_and_changing_structure_rejected():
    e = {"input_key": "k", "input_sequences": {"a": np.zeros(2, np.float32), "sp": sp([[1]], [2], [2])}}
    with pytest.raises(StateSaverError, match="rank of input SparseTensor should be > 1"):
        run([e], num_unroll=2, batch_size=1)
    with_sp = {"input_key": "k", "input_sequences": {"a": np.zeros(2, np.float32), "sp": sp([], [], [2, 1])}}
    without = {"input_key": "j", "input_sequences": {"a": np.zeros(2, np.float32)}}
    with pytest.raises(StateSaverError, match="first example's"):
        run([with_sp, without], num_unroll=2, batch_size=1)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                   np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128, object])
def test_sparse_values_keep_their_dtype(dtype):
    vals = [b"x", b""] if dtype is object else np.array([1, 0]).astype(dtype)
    e = {"input_key": b"\xff\x00raw", "input_sequences": {"a": np.zeros(3, np.float32), "sp": sp([[0, 1], [2, 0]], vals, [3, 2], dtype)},
         "input_context": {"c": sp([[1]], vals[:1], [2], dtype)}}
    bs, _ = run([e], num_unroll=2, batch_size=1)
    got = [b.sequences["sp"] for b in bs]
    assert all(g.values.dtype == np.dtype(dtype) for g in got)
    assert np.concatenate([g.values for g in got]).tolist() == list(vals)
    assert bs[1].context["c"].values.dtype == np.dtype(dtype) and bs[1].context["c"].values.tolist() == list(vals[:1])
    assert bs[1].key.tolist() == [b"00001_of_00002:\xff\x00raw"]


def test_zero_length_sequence_is_an_error():
    e = {"input_key": "k", "input_sequences": {"a": np.zeros(0, np.float32), "sp": sp([], [], [0, 3])}}
    with pytest.raises(StateSaverError) as err:
        run([e], num_unroll=2, batch_size=1)
    assert err.value.kind == "empty_sequence"


def test_push_style_saver_takes_sparse():
    sqss = tfrec.SequenceQueueingStateSaver(batch_size=1, num_unroll=2, initial_states=H0)
    sqss.insert(b"\x80k", {"a": np.zeros(2, np.float32), "sp": sp([[1, 0]], [3], [2, 1])},
                {"c": sp([[0]], [4], [1])})
    sqss.close()
    b = sqss.next_batch()
    assert fields(b.sequences["sp"]) == ([[0, 1, 0]], [3], [1, 2, 1])
    assert fields(b.context["c"]) == ([[0, 0]], [4], [1, 1])
    assert b.key.tolist() == [b"00000_of_00001:\x80k"]
