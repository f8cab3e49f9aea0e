"""A typed program that uses every public call of tfrec: ``mypy --strict`` checks it against the
package's stubs (scripts/check-types), so a stub that drifts from how the API is meant to be
used fails CI. It also runs, end to end, in a temporary directory: writing files, reading them
back, parsing, the Dataset stages, messages, tensors, Arrow and Polars, the state saver.

    python python/typing/typed_example.py          # everything cheap (no Ray)
    python python/typing/typed_example.py --ray    # the Ray Data part too (starts Ray)

The PyTorch part runs when torch is installed.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import sys
import tempfile
from collections.abc import Iterator
from typing import Any, Dict, Union

import numpy as np
import numpy.typing as npt
import polars as pl

import tfrec
import tfrec.__main__
import tfrec.arrow
import tfrec.polars
from tfrec import io as tio
from tfrec.state_saver import NextQueuedSequenceBatch, SequenceBatches


# A parse spec's values, as a program names them (typing's forms, so it runs on Python 3.9).
Spec = Dict[
    str,
    Union[tio.FixedLenFeature, tio.FixedLenSequenceFeature, tio.VarLenFeature, tio.SparseFeature, tio.RaggedFeature],
]


def dense(value: tio.SparseTensor | tio.RaggedTensor | npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A parsed feature that the spec makes dense (narrowing the parse ops' union)."""
    assert isinstance(value, np.ndarray), type(value)
    return value


def nonempty(n: int) -> bool:
    """A filter predicate that pickles (a data set pickles with its stages)."""
    return n > 0


def count_up(n: int) -> Iterator[int]:
    """A generator function for ``Dataset.from_generator``."""
    yield from range(n)


def messages() -> list[tfrec.Example]:
    ex = tfrec.Example.from_dict({"age": 19, "name": "goat", "score": [0.5, 0.25], "idx": [0, 3]})
    ex.features.feature["lens"] = tfrec.Feature(int64_list=tfrec.Int64List(value=[1, 1]))
    ex.features.feature["tags"] = tfrec.Feature(bytes_list=tfrec.BytesList(value=[b"a", b"b"]))
    ex.features.feature["w"] = tfrec.Feature(float_list=tfrec.FloatList(value=[1.0, 2.0]))
    assert ex.HasField("features")
    f = ex.features.feature["age"]
    assert f.WhichOneof("kind") == "int64_list" and f.HasField("int64_list")
    ages: list[int] = f.int64_list.value
    names: list[bytes] = ex.features.feature["name"].bytes_list.value
    scores: list[float] = ex.features.feature["score"].float_list.value
    assert tfrec.Feature.FromString(f.SerializeToString()) == f
    data = ex.SerializeToString()
    assert tfrec.Example.FromString(data) == ex and ex.ByteSize() == len(data)
    copy = tfrec.Example()
    assert copy.ParseFromString(data) == len(data)
    # Text and JSON print a map's keys sorted, so compare contents, not bytes.
    assert tfrec.Example.from_text(str(ex)).to_dict() == ex.to_dict()
    assert tfrec.Example.from_json(ex.to_json()).to_dict() == ex.to_dict()
    print(ex.to_friendly_json(), ages, names, scores, repr(ex)[:10])
    assert tfrec.Example.from_message(ex) == ex and tfrec.train.as_bytes(ex) == data
    as_dict: dict[str, list[bytes] | list[float] | list[int]] = ex.to_dict()
    replaced = tfrec.Example(features=tfrec.Features(feature={"k": tfrec.Feature(float_list=[0.5])}))
    replaced.features = tfrec.Features()
    print(sorted(as_dict), replaced.features.feature)

    seq = tfrec.SequenceExample(
        context=tfrec.Features(feature={"key": tfrec.Feature(bytes_list=[b"seq0"])}),
        feature_lists=tfrec.FeatureLists(
            feature_list={"tok": tfrec.FeatureList(feature=[tfrec.Feature(int64_list=[i]) for i in range(4)])}
        ),
    )
    assert seq.HasField("context") and seq.HasField("feature_lists")
    steps: list[tfrec.Feature] = seq.feature_lists.feature_list["tok"].feature
    seq_dict = seq.to_dict()
    assert tfrec.SequenceExample.from_dict(seq_dict) == seq
    assert tfrec.SequenceExample.from_json(seq.to_friendly_json()) == seq
    again = tfrec.SequenceExample()
    again.ParseFromString(seq.SerializeToString())
    again.context = seq.context
    again.feature_lists = seq.feature_lists
    print(len(steps), seq_dict.get("context"), again == seq)
    try:
        tfrec.Example.FromString(b"\xff\xff")
    except tfrec.DecodeError as e:
        print("DecodeError", e.message)
    return [ex, tfrec.Example.from_dict({"age": np.int64(31), "name": b"cat", "score": np.array([1.5, 2.5]),
                                         "idx": [1], "lens": [1, 1], "tags": [], "w": [3.0]})]


def parsing(records: list[bytes]) -> Spec:
    spec: Spec = {
        "age": tio.FixedLenFeature([], tfrec.int64),
        "name": tio.FixedLenFeature([], tfrec.string, default_value=b""),
        "tags": tio.VarLenFeature(tfrec.string),
        "sparse": tio.SparseFeature(index_key="idx", value_key="w", dtype=tfrec.float32, size=5),
        "ragged": tio.RaggedFeature(tfrec.float32, value_key="score", partitions=[tio.RaggedFeature.RowLengths("lens")]),
        "missing": tio.FixedLenSequenceFeature([], tfrec.int64, allow_missing=True),
    }
    partitions = [
        tio.RaggedFeature.RowSplits("splits"),
        tio.RaggedFeature.RowStarts("starts"),
        tio.RaggedFeature.RowLimits("limits"),
        tio.RaggedFeature.ValueRowIds("ids"),
        tio.RaggedFeature.UniformRowLength(2),
    ]
    print(tio.spec_to_json("r", tio.RaggedFeature(tfrec.int64, "v", partitions, row_splits_dtype=tfrec.int64)))
    batch = tio.parse_example(records, spec, num_threads=2)
    print(dense(batch["age"]).sum(), batch["name"])
    tags = batch["tags"]
    assert isinstance(tags, tio.SparseTensor)
    print(tags.indices, tags.values, tags.dense_shape, tags.shape, tags.dtype, tags.to_dense())
    one = tio.parse_single_example(records[0], spec)
    ragged = one["ragged"]
    assert isinstance(ragged, tio.RaggedTensor)
    print(ragged.to_list(), ragged.row_splits, ragged.ragged_rank, ragged.dtype, ragged.nrows(), ragged.flat_values)
    sparse = one["sparse"]
    assert isinstance(sparse, tio.SparseTensor)
    print(sparse.to_dense(default_value=-1.0))
    print(tio.dtype_name(np.int64), tfrec.int64.name, tio.spec_to_json("age", spec["age"]), tio.specs_to_json(spec))
    try:
        tio.parse_example(records, {"nope": tio.FixedLenFeature([], "int64")})
    except tfrec.ParseError as e:
        print("ParseError", e.key, e.example_index)

    seq = tfrec.SequenceExample.from_dict({"context": {"key": "s"}, "feature_lists": {"tok": [[1], [2], [3]]}})
    context_spec = {"key": tio.FixedLenFeature([], tfrec.string)}
    seq_spec = {"tok": tio.FixedLenSequenceFeature([], tfrec.int64)}
    ctx, lists, lengths = tio.parse_sequence_example([seq.SerializeToString()], context_spec, seq_spec)
    print(ctx["key"], dense(lists["tok"]).shape, lengths["tok"])
    ctx1, lists1 = tio.parse_single_sequence_example(seq.SerializeToString(), context_spec, seq_spec)
    print(ctx1, lists1)
    # String features as NumPy StringDType arrays or pyarrow arrays instead of bytes objects.
    text = tio.parse_example(records, spec, strings="numpy")
    print(dense(text["name"]).dtype, tio.parse_single_example(records[0], spec, strings="numpy")["name"])
    arrow_batch = tio.parse_example(records, spec, num_threads=2, strings="arrow")
    print(arrow_batch["name"], tio.parse_single_example(records[0], spec, strings="arrow")["name"])
    ctx2, lists2, lengths2 = tio.parse_sequence_example([seq.SerializeToString()], context_spec, seq_spec, strings="arrow")
    print(ctx2["key"], lists2, lengths2["tok"], tio.parse_single_sequence_example(seq.SerializeToString(), context_spec, seq_spec, strings="numpy"))

    t = tio.serialize_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    back = tio.parse_tensor(t, tfrec.float32)
    assert back.shape == (2, 3)
    print(tio.parse_tensor(tio.serialize_tensor([1.5, 2.5], dtype="bfloat16"), tfrec.bfloat16))
    print(tio.parse_tensor(tio.serialize_tensor(["a", "b"]), tfrec.string), tfrec.__version__)
    for dtype in (tfrec.half, tfrec.double, tfrec.int8, tfrec.uint16, tfrec.complex64, tfrec.bool):
        print(dtype.name, tio.parse_tensor(tio.serialize_tensor([1, 0], dtype=dtype), dtype))
    return spec


def datasets(tmp: str, files: list[str], spec: Spec) -> None:
    ds = (
        tfrec.TFRecordDataset(files, num_parallel_reads=2, on_corruption="raise")
        .shuffle(8, seed=1)
        .repeat(2)
        .skip(1)
        .take(6)
        .batch(2, drop_remainder=True)
        .parse(spec)
        .prefetch(tfrec.AUTOTUNE)
        .threads(2)
        .deterministic(True)
    )
    print(ds, ds.element_spec, ds.batch_size, ds.cardinality())
    for item in ds:
        print(sorted(item))
    mapped = tfrec.Dataset(files).interleave(2).shard(2, 0, by="file").map(len).filter(nonempty)
    print(list(mapped), list(pickle.loads(pickle.dumps(mapped))), list(mapped.filter(lambda n: n > 100)))
    print([b.shape for b in tfrec.TFRecordDataset(files).batch(3).as_numpy_iterator()])
    it = tfrec.TFRecordDataset(files).batch(2).iterator()
    print(sum(1 for _ in it), it.stats()["records"])
    records = tfrec.TFRecordDataset(files[0]).records()
    print(len(records.next_many(2)), records.stats()["records"], records.problems())
    slices = tfrec.Dataset.from_tensor_slices({"x": np.arange(10), "y": [str(i) for i in range(10)]})
    print(len(slices), slices.batch(4).cardinality(), list(slices.take(2)))
    gen = tfrec.Dataset.from_generator(count_up, args=(4,)).batch(2)
    print(gen, list(gen), tfrec.data.experimental.AUTOTUNE, tfrec.data.INFINITE_CARDINALITY)
    copy = os.path.join(tmp, "copy-of-part-0.tfrecord")
    tfrec.data.experimental.TFRecordWriter(copy, compression_type="GZIP").write(tfrec.TFRecordDataset(files[0]))
    print(len(list(tfrec.TFRecordDataset(copy))))
    seq = tfrec.SequenceExample.from_dict({"context": {"k": [1]}, "feature_lists": {"t": [[1], [2]]}})
    seq_path = os.path.join(tmp, "seq.tfrecord")
    with tfrec.TFRecordWriter(seq_path) as w:
        w.write(seq)
    parsed_seq = tfrec.TFRecordDataset(seq_path).parse(
        context_features={"k": tio.FixedLenFeature([], tfrec.int64)},
        sequence_features={"t": tio.FixedLenSequenceFeature([], tfrec.int64)},
    )
    print(list(parsed_seq))
    print(list(tfrec.TFRecordDataset(files).batch(2).parse(spec, strings="numpy")))

    # Damage: a DataLossError names the file, offset and record.
    bad = os.path.join(tmp, "bad.tfrecord")
    with open(files[0], "rb") as src, open(bad, "wb") as dst:
        raw = bytearray(src.read())
        raw[20] ^= 0xFF
        dst.write(raw)
    try:
        list(tfrec.TFRecordDataset(bad))
    except tfrec.DataLossError as e:
        print("DataLossError", e.path, e.offset, e.record_index, e.kind, e.message)
    print(len(list(tfrec.TFRecordDataset(bad, on_corruption="skip"))))
    try:
        tfrec.TFRecordDataset(os.path.join(tmp, "absent-*.tfrecord"))
    except tfrec.NotFoundError as e:
        print("NotFoundError", e)


def random_access(tmp: str, files: list[str]) -> None:
    raw = tfrec.RandomAccessDataset(files, index_paths=[os.path.join(tmp, f"{i}.idx") for i in range(len(files))])
    first: bytes = raw[0]
    some: list[bytes] = raw[[0, -1]] + raw[1:3] + raw[np.arange(2)] + raw.__getitems__(range(2))
    print(len(raw), raw.filenames, raw.features, len(first), len(some), len(raw.get_batch([0, 1])), len(list(raw)))
    parsed = tfrec.data.RandomAccessDataset(files[0], {"age": tio.FixedLenFeature([], tfrec.int64)})
    batch = parsed.get_batch(np.array([2, 0]))
    print(parsed[0]["age"], dense(batch["age"]), pickle.loads(pickle.dumps(parsed))[-1])
    texts = tfrec.RandomAccessDataset(files[0], {"age": tio.FixedLenFeature([], tfrec.int64)}, strings="numpy")
    print(texts[0]["age"])


def arrow_and_polars(tmp: str, files: list[str]) -> None:
    spec = {"age": tio.FixedLenFeature([], tfrec.int64), "score": tio.VarLenFeature(tfrec.float32)}
    stream = tfrec.arrow.read(files, spec, columns=["age"], batch_rows=2)
    print(stream.schema, stream.arrow_schema, stream.read_all().num_rows, stream.stats())
    for batch in stream:
        print(batch.num_rows)
    print(stream.to_reader().read_all().num_rows)
    print(tfrec.arrow.infer_spec(files, rows=10))
    print(tfrec.arrow.ArrowStream(files[0]).schema)
    copy = os.path.join(tmp, "copy.tfrecord")
    print(tfrec.arrow.write(tfrec.arrow.read(files, spec), copy))
    piped = tfrec.TFRecordDataset(files).batch(2).parse(spec).to_arrow()
    print(piped.read_all().num_rows)
    frame: pl.DataFrame = tfrec.polars.scan_tfrecord(files, spec).filter(pl.col("age") > 20).collect()
    print(frame, tfrec.polars.read(files, spec, columns=["score", "age"], n_rows=3).columns)


def state_saver(tmp: str) -> None:
    h0 = {"h": np.zeros(2, np.float32)}
    batches: SequenceBatches = tfrec.batch_sequences_with_states(
        input_key=["a", b"b"],
        input_sequences=[{"x": np.arange(5, dtype=np.float32)}, {"x": np.arange(3, dtype=np.float32)}],
        input_context=[{"label": 1}, {"label": 0}],
        input_length=None,
        initial_states=h0,
        num_unroll=2,
        batch_size=2,
    )
    with batches:
        for b in batches:
            print(b.key, b.next_key, b.sequence, b.sequence_count, b.length, b.total_length, b.insertion_index)
            print(b.batch_size, b.state_names, b.context["label"], batches.in_flight, batches.max_in_flight)
            b.save_state("h", b.state("h") + 1)

    def step(x: Any, h: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        return h.sum(axis=-1), h + np.asarray(x)[:, None]

    def step2(x: Any, hc: tuple[npt.NDArray[Any], ...]) -> tuple[npt.NDArray[Any], tuple[npt.NDArray[Any], ...]]:
        h, c = hc
        return h, (h + 1, c + np.asarray(x)[:, None])

    dicts = tfrec.batch_sequences_with_states(
        input_key=None,
        input_sequences=[{"input_key": "s0", "input_sequences": {"x": np.ones(4, np.float32)}, "input_length": 3}],
        input_context=None,
        input_length=None,
        initial_states={"h": np.zeros(2, np.float32), "c": np.zeros(2, np.float32)},
        num_unroll=2,
        batch_size=1,
    )
    first = dicts.next_batch()
    assert first is not None
    x = first.sequences["x"]
    assert isinstance(x, np.ndarray)
    outputs, (h, c) = tfrec.state_saving_rnn(step2, first, ("h", "c"), inputs=x)
    print(len(outputs), h, c)
    second: NextQueuedSequenceBatch = next(dicts)
    outs, final = tfrec.state_saving_rnn(step, second, "h", inputs=x, sequence_length=second.length)
    second.save_state("c", second.state("c"))
    print(len(outs), final)
    dicts.close(cancel_pending=True)

    sqss = tfrec.SequenceQueueingStateSaver(batch_size=1, num_unroll=2, initial_states={"h": np.zeros(1)})
    sqss.insert("k0", {"x": np.zeros(4)}, {"y": 0.0})
    sqss.put(b"k1", {"x": np.ones(2)}, input_context={"y": 1.0}, input_length=2)
    sqss.close()
    print(sqss.in_flight, sqss.batch_size, sqss.num_unroll)
    while True:
        try:
            batch = sqss.next_batch()
        except tfrec.OutOfRangeError:
            break
        batch.save_state("h", batch.state("h"))
    with tfrec.SequenceQueueingStateSaver(2, 2, {"h": np.zeros(1)}, allow_small_batch=True) as empty:
        empty.close()
        print(list(iter(empty)))

    path = os.path.join(tmp, "sequences.tfrecord")
    with tfrec.TFRecordWriter(path) as w:
        for i in range(3):
            w.write(tfrec.SequenceExample.from_dict({"context": {"key": f"s{i}"}, "feature_lists": {"tok": [[1], [2]]}}))
    files = tfrec.SequenceExampleFiles(
        path, {"tok": tio.FixedLenSequenceFeature([], tfrec.int64)}, {"key": tio.FixedLenFeature([], tfrec.string)}
    )
    from_files = tfrec.batch_sequences_with_states("key", files, None, None, {"h": np.zeros(1)}, num_unroll=2, batch_size=3)
    for b in from_files:
        b.save_state("h", b.state("h"))
        print(b.key)
    try:
        tfrec.batch_sequences_with_states(["a"], [{"x": np.zeros(2)}], None, None, {}, num_unroll=2, batch_size=1)
    except (tfrec.StateSaverError, ValueError) as e:
        print(type(e).__name__, e)


def command(path: str) -> None:
    try:
        tfrec.__main__.main(["count", path])
    except SystemExit as e:
        assert e.code == 0, e.code


def statistics(tmp: str, files: list[str]) -> None:
    import tfrec.stats as ts

    out = os.path.join(tmp, "stats.pb")
    options = ts.StatsOptions(num_top_values=5, epsilon=0.01)
    stats = ts.generate_statistics_from_tfrecord(files, options, out, threads=2, on_corruption="skip")
    text = os.path.join(tmp, "stats.txt")
    ts.write_stats_text(stats, text)
    ts.write_stats_binary(ts.load_stats_text(text), os.path.join(tmp, "again.pb"))
    same = ts.Statistics.of(ts.load_statistics(out)) == ts.Statistics.of(ts.load_stats_binary(out))
    print(same, ts.Statistics.of(stats).to_text()[:20], ts.Statistics(ts.Statistics.of(stats).SerializeToString()))
    report: ts.StatisticsReport = ts.visualize_statistics(stats, stats, "train", "eval", lhs_data_location=files)
    report.save(os.path.join(tmp, "report.html"))
    html: str = ts.get_statistics_html(stats, title="report") + report._repr_html_() + report.html
    print(len(html), len(ts.Statistics.of(stats)._repr_html_()))


def torch_part(files: list[str]) -> None:
    import tfrec.torch

    ds = tfrec.torch.IterableDataset(tfrec.TFRecordDataset(files).batch(2), shard_by="auto", to_tensors=True)
    print(ds.dataset, ds.shard_by, ds.rank, sum(1 for _ in ds))
    print(tfrec.torch.collate({"x": np.arange(3)}), tfrec.torch.shard_for(ds.dataset, 1, 0))
    spec = {"age": tio.FixedLenFeature([], tfrec.int64)}
    mapped = tfrec.torch.MapDataset(files, spec, to_tensors=True)
    again = tfrec.torch.MapDataset(tfrec.RandomAccessDataset(files, spec))
    print(len(mapped), mapped[0], mapped[[0, 1]], len(again.__getitems__([0, 2])), mapped.dataset, mapped.to_tensors)


def ray_part(tmp: str, files: list[str]) -> None:
    import tfrec.ray

    data = tfrec.ray.read_tfrecords(files, {"age": tio.FixedLenFeature([], tfrec.int64)}, on_corruption="skip")
    print(data.count())
    sink = tfrec.ray.write_tfrecords(data, os.path.join(tmp, "ray-out"))
    print(sink.files, sink.records_written)
    source = tfrec.ray.TFRecordDatasource(files)
    print(source.estimate_inmemory_data_size(), len(source.get_read_tasks(2)), source.skipped())


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        examples = messages()
        files = [os.path.join(tmp, f"part-{i}.tfrecord") for i in range(2)]
        for path in files:
            with tfrec.TFRecordWriter(path) as w:
                w.write(examples[0])
                w.write([e.SerializeToString() for e in examples])
                w.flush()
                print(w, w.records_written)
        gz = os.path.join(tmp, "part.tfrecord.gz")
        with tfrec.TFRecordWriter(gz, tfrec.TFRecordOptions(compression_type="GZIP", compression_level=6)) as w:
            w.write(bytearray(examples[1].SerializeToString()))
        print(len(list(tfrec.TFRecordDataset(gz, compression_type="GZIP"))))
        plain = tfrec.io.TFRecordWriter(os.path.join(tmp, "closed.tfrecord"), compression="ZLIB")
        plain.write(examples[0])
        plain.close()
        records = list(tfrec.TFRecordDataset(files[0]))
        spec = parsing(records)
        datasets(tmp, files, spec)
        random_access(tmp, files)
        arrow_and_polars(tmp, files)
        state_saver(tmp)
        command(files[0])
        statistics(tmp, files)
        if importlib.util.find_spec("torch") is not None:
            torch_part(files)
        if "--ray" in sys.argv:
            ray_part(tmp, files)
    print("typed example: done")


if __name__ == "__main__":
    main()
