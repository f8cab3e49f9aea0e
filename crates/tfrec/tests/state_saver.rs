//! Tests of the state saver on the documented semantics: keys, segment lengths, padding,
//! context, state hand-over, ordering, the end of the input, capacity, misuse errors, reader
//! threads and SequenceExample files.

mod common;

use common::Rng;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ndarray::{arr0, Array1, Array2, ArrayD};
use tfrec::example::SequenceExample;
use tfrec::parse::{DenseTensor, SequenceSpecs};
use tfrec::pipeline::Dataset;
use tfrec::record::{RecordWriter, WriterOptions};
use tfrec::state_saver::{
    restore_raw, Batch, KeySource, SaverTensor, SequenceInput, SparseInput, StateSaver, StateSaverError,
    StateSaverOptions, TensorDType,
};

/// A key the tests made from text, as text.
fn text(key: &[u8]) -> String {
    String::from_utf8(key.to_vec()).expect("a UTF-8 key")
}

/// A batch's keys, as text.
fn texts(keys: Vec<Vec<u8>>) -> Vec<String> {
    keys.iter().map(|k| text(k)).collect()
}

fn f32s(t: &DenseTensor) -> ArrayD<f32> {
    t.f32_view()
        .unwrap_or_else(|| panic!("expected float32, got {:?}", t.dtype()))
        .to_owned()
}

fn i64s(t: &DenseTensor) -> ArrayD<i64> {
    t.i64_view()
        .unwrap_or_else(|| panic!("expected int64, got {:?}", t.dtype()))
        .to_owned()
}

fn strings(t: &DenseTensor) -> ArrayD<Vec<u8>> {
    t.to_bytes_array()
        .unwrap_or_else(|| panic!("expected string, got {:?}", t.dtype()))
}

/// An example `key` of `steps` steps of one float: step t holds `base + t + 1`.
fn counting(key: &str, steps: usize, base: f32) -> SequenceInput {
    let x = Array2::from_shape_fn((steps, 1), |(t, _)| base + t as f32 + 1.0);
    SequenceInput::new(key).sequence("x", x)
}

fn sum_state() -> ArrayD<f32> {
    ArrayD::zeros(vec![1])
}

/// Saves every state unchanged.
fn save_all(batch: &Batch) {
    for (name, values) in batch.states() {
        batch.save_state(name, values.clone()).expect("save");
    }
}

/// Every batch, saving states unchanged.
fn drain(saver: &mut StateSaver) -> Vec<Batch> {
    let mut out = Vec::new();
    while let Some(batch) = saver.next_batch().expect("batch") {
        save_all(&batch);
        out.push(batch);
    }
    out
}

#[test]
fn keys_and_next_keys() {
    let mut saver = StateSaverOptions::new(1, 2)
        .initial_state("s", sum_state())
        .build(vec![counting("abc", 5, 0.0)])
        .expect("saver");
    let batches = drain(&mut saver);
    let keys: Vec<String> = batches.iter().map(|b| text(&b.key[0])).collect();
    let next: Vec<String> = batches.iter().map(|b| text(&b.next_key[0])).collect();
    assert_eq!(keys, ["00000_of_00003:abc", "00001_of_00003:abc", "00002_of_00003:abc"]);
    assert_eq!(next, ["00001_of_00003:abc", "00002_of_00003:abc", "STOP:abc"]);
    let seq: Vec<i32> = batches.iter().map(|b| b.sequence[0]).collect();
    assert_eq!(seq, [0, 1, 2]);
    assert!(batches
        .iter()
        .all(|b| b.sequence_count[0] == 3 && b.total_length[0] == 5));
}

#[test]
fn keys_wider_than_five_digits() {
    let steps = 100_001;
    let x = Array1::<i64>::zeros(steps);
    let input = SequenceInput::new("k").sequence("x", x);
    let saver = StateSaverOptions::new(1, 1)
        .initial_state("s", arr0(0i64).into_dyn())
        .build(vec![input])
        .expect("saver");
    let mut n = 0;
    while let Some(batch) = saver.next_batch().expect("batch") {
        if n == 5 {
            assert_eq!(text(&batch.key[0]), "00005_of_100001:k");
        }
        if n == 99_999 {
            assert_eq!(text(&batch.key[0]), "99999_of_100001:k");
            assert_eq!(text(&batch.next_key[0]), "100000_of_100001:k");
        }
        if n == 100_000 {
            assert_eq!(text(&batch.key[0]), "100000_of_100001:k");
            assert_eq!(text(&batch.next_key[0]), "STOP:k");
        }
        save_all(&batch);
        n += 1;
    }
    assert_eq!(n, steps);
}

#[test]
fn length_three_unroll_two_gives_two_then_one_with_padding() {
    let input = SequenceInput::new("a")
        .sequence("f", ndarray::arr2(&[[1.5f32, 2.5], [3.5, 4.5], [5.5, 6.5]]))
        .sequence("i", ndarray::arr1(&[7i64, 8, 9]))
        .sequence("s", ndarray::arr1(&[b"x".to_vec(), b"y".to_vec(), b"z".to_vec()]));
    let mut saver = StateSaverOptions::new(1, 2)
        .initial_state("s0", sum_state())
        .build(vec![input])
        .expect("saver");
    let batches = drain(&mut saver);
    let lengths: Vec<i32> = batches.iter().map(|b| b.length[0]).collect();
    assert_eq!(lengths, [2, 1]);
    assert!(batches.iter().all(|b| b.total_length[0] == 3));
    let last = &batches[1];
    assert_eq!(last.sequences["f"].shape(), [1, 2, 2]);
    assert_eq!(
        f32s(&last.sequences["f"]).iter().copied().collect::<Vec<_>>(),
        [5.5, 6.5, 0.0, 0.0]
    );
    assert_eq!(i64s(&last.sequences["i"]).iter().copied().collect::<Vec<_>>(), [9, 0]);
    assert_eq!(
        strings(&last.sequences["s"]).iter().cloned().collect::<Vec<_>>(),
        [b"z".to_vec(), Vec::new()]
    );
    assert_eq!(
        i64s(&batches[0].sequences["i"]).iter().copied().collect::<Vec<_>>(),
        [7, 8]
    );
}

#[test]
fn explicit_length_counts_valid_steps_only() {
    // 6 steps of data, 4 of them valid: segments of 2 hold 2, 2, 0 valid steps.
    let input = counting("a", 6, 0.0).length(4);
    let mut saver = StateSaverOptions::new(1, 2)
        .initial_state("s", sum_state())
        .build(vec![input])
        .expect("saver");
    let batches = drain(&mut saver);
    let lengths: Vec<i32> = batches.iter().map(|b| b.length[0]).collect();
    assert_eq!(lengths, [2, 2, 0]);
    assert!(batches.iter().all(|b| b.total_length[0] == 4));
    // The rows past the valid length are the input's, not padding.
    assert_eq!(
        f32s(&batches[2].sequences["x"]).iter().copied().collect::<Vec<_>>(),
        [5.0, 6.0]
    );
}

#[test]
fn context_is_copied_into_every_segment() {
    let inputs: Vec<SequenceInput> = (0..3)
        .map(|i| {
            counting(&format!("k{i}"), 2 + 3 * i, 0.0)
                .context("label", arr0(100 + i as i64).into_dyn())
                .context("name", ndarray::arr1(&[format!("n{i}").into_bytes(), b"z".to_vec()]))
        })
        .collect();
    let mut saver = StateSaverOptions::new(2, 2)
        .capacity(3)
        .initial_state("s", sum_state())
        .build(inputs)
        .expect("saver");
    let mut seen = 0;
    for batch in drain(&mut saver) {
        assert_eq!(batch.context["label"].shape(), [batch.batch_size()]);
        assert_eq!(batch.context["name"].shape(), [batch.batch_size(), 2]);
        for j in 0..batch.batch_size() {
            let i: i64 = text(&batch.key[j])
                .rsplit("k")
                .next()
                .and_then(|s| s.parse().ok())
                .expect("key");
            assert_eq!(i64s(&batch.context["label"])[[j]], 100 + i);
            assert_eq!(strings(&batch.context["name"])[[j, 0]], format!("n{i}").into_bytes());
            seen += 1;
        }
    }
    assert_eq!(seen, 1 + 3 + 4);
}

/// Runs a running-sum model over `inputs` of the [`counting`] kind and checks every state a
/// segment receives against the sum of the sequence's earlier steps.
fn check_running_sums(options: StateSaverOptions, lengths: &[usize]) -> Vec<(String, i32, f32)> {
    let u = 3;
    let inputs: Vec<SequenceInput> = lengths
        .iter()
        .enumerate()
        .map(|(i, &n)| counting(&format!("s{i}"), n, 10.0 * i as f32))
        .collect();
    let saver = options.initial_state("sum", sum_state()).build(inputs).expect("saver");
    let mut received = Vec::new();
    let mut finished = 0;
    while let Some(batch) = saver.next_batch().expect("batch") {
        let x = f32s(&batch.sequences["x"]);
        let mut sum = f32s(batch.state("sum").expect("state")).clone();
        for j in 0..batch.batch_size() {
            let i: usize = text(&batch.key[j])
                .rsplit(":s")
                .next()
                .and_then(|s| s.parse().ok())
                .expect("key");
            let seg = batch.sequence[j] as usize;
            let base = 10.0 * i as f32;
            let expected: f32 = (0..seg * u).map(|t| base + t as f32 + 1.0).sum();
            assert_eq!(sum[[j, 0]], expected, "state of {}", text(&batch.key[j]));
            received.push((text(&batch.key[j]).clone(), batch.sequence[j], sum[[j, 0]]));
            for t in 0..batch.length[j] as usize {
                sum[[j, 0]] += x[[j, t, 0]];
            }
            if batch.next_key[j].starts_with(b"STOP:") {
                let n = lengths[i];
                assert_eq!(sum[[j, 0]], (0..n).map(|t| base + t as f32 + 1.0).sum::<f32>());
                finished += 1;
            }
        }
        batch.save_state("sum", sum).expect("save");
    }
    assert_eq!(finished, lengths.len());
    received.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    received
}

fn random_lengths(n: usize, max: u64, seed: u64) -> Vec<usize> {
    let mut rng = Rng(seed | 1);
    (0..n).map(|_| 1 + rng.below(max) as usize).collect()
}

#[test]
fn state_is_handed_over_exactly() {
    let lengths = random_lengths(200, 40, 7);
    check_running_sums(StateSaverOptions::new(8, 3).capacity(20), &lengths);
}

#[test]
fn several_reader_threads_give_the_same_segments_and_state_chains() {
    let lengths = random_lengths(150, 30, 11);
    let one = check_running_sums(StateSaverOptions::new(5, 3).capacity(12).num_threads(1), &lengths);
    let three = check_running_sums(StateSaverOptions::new(5, 3).capacity(12).num_threads(3), &lengths);
    assert_eq!(one, three);
    let inline = check_running_sums(StateSaverOptions::new(5, 3).capacity(12).num_threads(0), &lengths);
    assert_eq!(one, inline);
    // TensorFlow's mode (batches as soon as ready) has timing-dependent batches but the same
    // segments and chains.
    let free = check_running_sums(
        StateSaverOptions::new(5, 3)
            .capacity(12)
            .num_threads(3)
            .deterministic(false),
        &lengths,
    );
    assert_eq!(one, free);
}

#[test]
fn deterministic_batches_do_not_depend_on_threads() {
    let lengths = random_lengths(60, 20, 5);
    let run = |threads| {
        let inputs: Vec<SequenceInput> = lengths
            .iter()
            .enumerate()
            .map(|(i, &n)| counting(&format!("s{i}"), n, 0.0))
            .collect();
        let mut saver = StateSaverOptions::new(4, 2)
            .capacity(9)
            .num_threads(threads)
            .initial_state("h", sum_state())
            .build(inputs)
            .expect("saver");
        drain(&mut saver).into_iter().map(|b| texts(b.key)).collect::<Vec<_>>()
    };
    assert_eq!(run(1), run(3));
    assert_eq!(run(1), run(0));
}

#[test]
fn older_examples_come_first() {
    // A has 2 segments, B, C and D one each. Batch 2, capacity 3: the first batch takes A's
    // and B's first segments; then A's second segment comes before the newer C and D.
    let inputs = vec![
        counting("A", 4, 0.0),
        counting("B", 2, 0.0),
        counting("C", 2, 0.0),
        counting("D", 2, 0.0),
    ];
    let mut saver = StateSaverOptions::new(2, 2)
        .capacity(3)
        .initial_state("s", sum_state())
        .build(inputs)
        .expect("saver");
    let batches = drain(&mut saver);
    let keys: Vec<Vec<String>> = batches.iter().map(|b| texts(b.key.clone())).collect();
    assert_eq!(
        keys,
        [
            vec!["00000_of_00002:A".to_owned(), "00000_of_00001:B".to_owned()],
            vec!["00001_of_00002:A".to_owned(), "00000_of_00001:C".to_owned()],
            vec!["00000_of_00001:D".to_owned()],
        ]
    );
    let index: Vec<Vec<i64>> = batches.iter().map(|b| b.insertion_index.clone()).collect();
    let m = i64::MIN;
    assert_eq!(index, [vec![m, m + 1], vec![m, m + 2], vec![m + 3]]);
}

#[test]
fn insertion_indices_order_every_batch() {
    let lengths = random_lengths(100, 25, 3);
    let inputs: Vec<SequenceInput> = lengths
        .iter()
        .enumerate()
        .map(|(i, &n)| counting(&format!("{i}"), n, 0.0))
        .collect();
    let mut saver = StateSaverOptions::new(6, 4)
        .capacity(10)
        .initial_state("s", sum_state())
        .build(inputs)
        .expect("saver");
    for batch in drain(&mut saver) {
        for j in 0..batch.batch_size() {
            let i: i64 = text(&batch.key[j])
                .split(':')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .expect("key");
            assert_eq!(batch.insertion_index[j], i64::MIN + i);
        }
        assert!(batch.insertion_index.windows(2).all(|w| w[0] < w[1]));
    }
}

#[test]
fn small_batch_at_the_end_of_input() {
    let inputs = |n| (0..n).map(|i| counting(&format!("k{i}"), 2, 0.0)).collect::<Vec<_>>();
    let mut saver = StateSaverOptions::new(2, 2)
        .initial_state("s", sum_state())
        .build(inputs(5))
        .expect("saver");
    let sizes: Vec<usize> = drain(&mut saver).iter().map(Batch::batch_size).collect();
    assert_eq!(sizes, [2, 2, 1]);
    assert!(saver.next_batch().expect("end").is_none());

    let strict = StateSaverOptions::new(2, 2)
        .allow_small_batch(false)
        .initial_state("s", sum_state())
        .build(inputs(5))
        .expect("saver");
    for _ in 0..2 {
        let b = strict.next_batch().expect("ok").expect("batch");
        save_all(&b);
    }
    match strict.next_batch() {
        Err(StateSaverError::InsufficientElements {
            requested: 2,
            remaining: 1,
        }) => {}
        other => panic!("expected the end-of-input error, got {other:?}"),
    }
    // An input that divides evenly simply ends.
    let mut even = StateSaverOptions::new(2, 2)
        .allow_small_batch(false)
        .initial_state("s", sum_state())
        .build(inputs(4))
        .expect("saver");
    assert_eq!(drain(&mut even).len(), 2);
}

#[test]
fn capacity_bounds_examples_in_flight() {
    let capacity = 7;
    let threads = 2;
    let pulled = Arc::new(AtomicUsize::new(0));
    let lengths = random_lengths(120, 30, 13);
    let inputs: Vec<SequenceInput> = lengths
        .iter()
        .enumerate()
        .map(|(i, &n)| counting(&format!("{i}"), n, 0.0))
        .collect();
    let counter = Arc::clone(&pulled);
    let source = inputs.into_iter().inspect(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let saver = StateSaverOptions::new(3, 4)
        .capacity(capacity)
        .num_threads(threads)
        .initial_state("s", sum_state())
        .build(source)
        .expect("saver");
    let mut finished = 0usize;
    let mut started: std::collections::HashSet<String> = Default::default();
    let mut max_seen = 0;
    while let Some(batch) = saver.next_batch().expect("batch") {
        let finals = batch.next_key.iter().filter(|k| k.starts_with(b"STOP:")).count();
        // Examples read from the input and not finished: in flight, or read ahead (a buffer of
        // 4 * threads + 8, plus one being read by each reader and by the consumer).
        let outstanding = pulled.load(Ordering::SeqCst) - (finished + finals);
        let read_ahead = 4 * threads + 8 + threads + 1;
        assert!(outstanding <= capacity + read_ahead, "{outstanding} outstanding");
        for j in 0..batch.batch_size() {
            let key = text(&batch.key[j]).split(':').nth(1).expect("key").to_owned();
            started.insert(key);
        }
        // Examples seen in batches and not finished yet are surely in flight.
        let visible = started.len() - finished;
        max_seen = max_seen.max(visible);
        assert!(visible <= capacity, "{visible} examples in flight");
        assert!(saver.in_flight() <= capacity);
        finished += finals;
        save_all(&batch);
    }
    assert_eq!(finished, lengths.len());
    assert_eq!(saver.max_in_flight(), capacity);
    assert!(max_seen >= 3, "{max_seen}");
}

fn expect_err(result: Result<StateSaver, StateSaverError>) -> StateSaverError {
    match result {
        Ok(saver) => loop {
            match saver.next_batch() {
                Ok(Some(b)) => save_all(&b),
                Ok(None) => panic!("no error"),
                Err(e) => return e,
            }
        },
        Err(e) => e,
    }
}

#[test]
fn capacity_below_batch_size_is_refused() {
    let e = expect_err(
        StateSaverOptions::new(4, 2)
            .capacity(3)
            .build(Vec::<SequenceInput>::new()),
    );
    assert!(matches!(
        e,
        StateSaverError::CapacityTooSmall {
            capacity: 3,
            batch_size: 4
        }
    ));
    assert_eq!(e.to_string(), "capacity 3 needs to be >= batch_size 4");
}

#[test]
fn next_batch_with_unsaved_states_names_them() {
    let input = counting("long", 6, 0.0)
        .initial_state("c", sum_state())
        .initial_state("h", sum_state());
    let saver = StateSaverOptions::new(1, 2).build(vec![input]).expect("saver");
    let batch = saver.next_batch().expect("ok").expect("batch");
    batch
        .save_state("h", sum_state().insert_axis(ndarray::Axis(0)))
        .expect("save h");
    match saver.next_batch() {
        Err(StateSaverError::UnsavedStates { states, keys }) => {
            assert_eq!(states, ["c"]);
            assert_eq!(keys, ["00000_of_00003:long"]);
        }
        other => panic!("expected unsaved states, got {other:?}"),
    }
    // Nothing changed: saving the rest and asking again goes on.
    batch
        .save_state("c", sum_state().insert_axis(ndarray::Axis(0)))
        .expect("save c");
    let next = saver.next_batch().expect("ok").expect("batch");
    assert_eq!(texts(next.key.clone()), ["00001_of_00003:long"]);
}

#[test]
fn bad_save_state_calls_are_errors() {
    let input = counting("k", 4, 0.0).initial_state("h", ArrayD::<f32>::zeros(vec![2]));
    let saver = StateSaverOptions::new(1, 2).build(vec![input]).expect("saver");
    let batch = saver.next_batch().expect("ok").expect("batch");
    let good = ArrayD::<f32>::zeros(vec![1, 2]);
    match batch.save_state("nope", good.clone()) {
        Err(e @ StateSaverError::UnknownState { .. }) => assert_eq!(e.to_string(), "state was not declared: nope"),
        other => panic!("{other:?}"),
    }
    match batch.state("nope") {
        Err(StateSaverError::UnknownState { state }) => assert_eq!(state, "nope"),
        other => panic!("{other:?}"),
    }
    match batch.save_state("h", ArrayD::<f32>::zeros(vec![1, 3])) {
        Err(StateSaverError::StateShape {
            state,
            expected,
            found,
            keys,
        }) => {
            assert_eq!((state.as_str(), expected, found), ("h", vec![1, 2], vec![1, 3]));
            assert_eq!(keys, ["00000_of_00002:k"]);
        }
        other => panic!("{other:?}"),
    }
    match batch.save_state("h", ArrayD::<i64>::zeros(vec![1, 2])) {
        Err(StateSaverError::StateDType { state, .. }) => assert_eq!(state, "h"),
        other => panic!("{other:?}"),
    }
    batch.save_state("h", good.clone()).expect("first save");
    match batch.save_state("h", good) {
        Err(StateSaverError::SavedTwice { state, keys }) => {
            assert_eq!(state, "h");
            assert_eq!(keys, ["00000_of_00002:k"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(saver.next_batch().expect("ok").is_some());
}

#[test]
fn stale_batch_cannot_save() {
    let input = counting("k", 6, 0.0);
    let saver = StateSaverOptions::new(1, 2)
        .initial_state("h", sum_state())
        .build(vec![input])
        .expect("saver");
    let first = saver.next_batch().expect("ok").expect("batch");
    save_all(&first);
    let _second = saver.next_batch().expect("ok").expect("batch");
    match first.save_state("h", ArrayD::<f32>::zeros(vec![1, 1])) {
        Err(StateSaverError::SavedTwice { .. } | StateSaverError::StaleBatch { .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn key_reused_in_flight_is_an_error() {
    let inputs = vec![
        counting("same", 4, 0.0),
        counting("other", 2, 0.0),
        counting("same", 4, 0.0),
    ];
    let e = expect_err(
        StateSaverOptions::new(1, 2)
            .capacity(3)
            .initial_state("h", sum_state())
            .build(inputs),
    );
    match e {
        StateSaverError::KeyInFlight { key } => assert_eq!(key, "same"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn keys_are_any_bytes_and_errors_show_them_as_text() {
    // TensorFlow's keys are `tf.string`: bytes that need not be UTF-8 come out as they went in.
    let raw = b"\xff\x00k".to_vec();
    let x = Array2::<f32>::zeros((3, 1));
    let inputs = vec![
        SequenceInput::new(raw.clone()).sequence("x", x.clone()),
        SequenceInput::new("ünï").sequence("x", Array2::<f32>::zeros((2, 1))),
    ];
    let mut saver = StateSaverOptions::new(2, 2)
        .initial_state("h", sum_state())
        .build(inputs)
        .expect("saver");
    let batches = drain(&mut saver);
    assert_eq!(
        batches[0].key,
        [
            b"00000_of_00002:\xff\x00k".to_vec(),
            "00000_of_00001:ünï".as_bytes().to_vec()
        ]
    );
    assert_eq!(batches[1].next_key, [b"STOP:\xff\x00k".to_vec()]);
    // In errors (message and fields) a key is text: UTF-8 as is, other bytes escaped.
    let twice = vec![
        SequenceInput::new(raw.clone()).sequence("x", Array2::<f32>::zeros((4, 1))),
        SequenceInput::new(raw).sequence("x", Array2::<f32>::zeros((4, 1))),
    ];
    let e = expect_err(
        StateSaverOptions::new(1, 2)
            .initial_state("h", sum_state())
            .build(twice),
    );
    assert!(e.to_string().contains(r#"key "\\xff\0k" reused"#), "{e}");
    match e {
        StateSaverError::KeyInFlight { key } => assert_eq!(key, "\\xff\u{0}k"),
        other => panic!("{other:?}"),
    }
    let bad = SequenceInput::new(b"\xfe".to_vec()).sequence("x", Array1::<f32>::zeros(0));
    match expect_err(
        StateSaverOptions::new(1, 2)
            .initial_state("h", sum_state())
            .build(vec![bad]),
    ) {
        StateSaverError::NotASequence { key, .. } | StateSaverError::EmptySequence { key, .. } => {
            assert_eq!(key, "\\xfe")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn other_numeric_dtypes_travel_in_carriers_and_keep_their_type() {
    // Three steps of int32 [1, 2, 3]; a float64 state; a complex128 context scalar.
    let steps: Vec<u8> = [1i32, 2, 3].iter().flat_map(|x| x.to_ne_bytes()).collect();
    let x = SaverTensor::from_raw(TensorDType::Int32, &[3], &steps).expect("int32");
    let c = SaverTensor::from_raw(TensorDType::Complex128, &[], &[7u8; 16]).expect("complex128");
    let h = SaverTensor::from_raw(TensorDType::Float64, &[1], &0.5f64.to_ne_bytes()).expect("float64");
    let saver = StateSaverOptions::new(1, 2)
        .initial_state("h", h)
        .build(vec![SequenceInput::new("k").sequence("x", x).context("c", c)])
        .expect("saver");
    let first = saver.next_batch().expect("batch").expect("a batch");
    assert_eq!(first.sequence_type("x"), Some(TensorDType::Int32));
    assert_eq!(first.context_type("c"), Some(TensorDType::Complex128));
    assert_eq!(first.state_type("h"), Some(TensorDType::Float64));
    let (raw, shape) = restore_raw(TensorDType::Int32, &first.sequences["x"]).expect("int32 carrier");
    assert_eq!(
        (raw, shape),
        ([1i32, 2].iter().flat_map(|x| x.to_ne_bytes()).collect(), vec![1, 2])
    );
    let (raw, shape) = restore_raw(TensorDType::Complex128, &first.context["c"]).expect("complex carrier");
    assert_eq!((raw, shape), (vec![7u8; 16], vec![1]));
    // A state of another element type is refused, naming both (the carriers alike: int64).
    let wrong = SaverTensor::from_raw(TensorDType::UInt64, &[1, 1], &[0; 8]).expect("uint64");
    match first.save_state("h", wrong) {
        Err(e @ StateSaverError::StateDType { .. }) => {
            assert!(e.to_string().contains("has dtype float64, but saw uint64"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    let right = SaverTensor::from_raw(TensorDType::Float64, &[1, 1], &2.5f64.to_ne_bytes()).expect("float64");
    first.save_state("h", right).expect("saved");
    let second = saver.next_batch().expect("batch").expect("a batch");
    let (raw, _) = restore_raw(TensorDType::Float64, second.state("h").expect("h")).expect("carrier");
    assert_eq!(raw, 2.5f64.to_ne_bytes());
    // The padded step is zero in the original type too.
    let (raw, _) = restore_raw(TensorDType::Int32, &second.sequences["x"]).expect("carrier");
    assert_eq!(raw, [3i32, 0].iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>());
}

#[test]
fn an_element_type_other_than_the_first_examples_is_an_error() {
    let int32 = SaverTensor::from_raw(TensorDType::Int32, &[2], &[0; 8]).expect("int32");
    let inputs = vec![
        SequenceInput::new("a").sequence("x", int32),
        SequenceInput::new("b").sequence("x", Array1::<i64>::zeros(2)),
    ];
    let e = expect_err(
        StateSaverOptions::new(1, 2)
            .initial_state("h", sum_state())
            .build(inputs),
    );
    assert_eq!(
        e.to_string(),
        r#"example "b": sequence "x": expected int32 [], found int64 []"#
    );
    // A complex128 scalar has no time axis (its carrier's extra axis is not one).
    let c = SaverTensor::from_raw(TensorDType::Complex128, &[], &[0; 16]).expect("complex128");
    let e = expect_err(
        StateSaverOptions::new(1, 2)
            .initial_state("h", sum_state())
            .build(vec![SequenceInput::new("s").sequence("x", c)]),
    );
    assert!(matches!(e, StateSaverError::NotASequence { .. }), "{e:?}");
}

#[test]
fn key_reuse_after_the_sequence_finished_is_fine() {
    // Three epochs of the same 5 keys; capacity below the number of examples.
    let inputs: Vec<SequenceInput> = (0..15).map(|i| counting(&format!("k{}", i % 5), 3, 0.0)).collect();
    let mut saver = StateSaverOptions::new(2, 2)
        .capacity(3)
        .initial_state("h", sum_state())
        .build(inputs)
        .expect("saver");
    let segments: usize = drain(&mut saver).iter().map(Batch::batch_size).sum();
    assert_eq!(segments, 30);
}

#[test]
fn unique_keys_get_a_seeded_suffix() {
    let inputs = || (0..6).map(|_| counting("dup", 3, 0.0)).collect::<Vec<_>>();
    let keys = |seed| {
        let mut saver = StateSaverOptions::new(2, 2)
            .make_keys_unique(seed)
            .initial_state("h", sum_state())
            .build(inputs())
            .expect("saver");
        drain(&mut saver)
            .into_iter()
            .flat_map(|b| texts(b.key))
            .collect::<Vec<String>>()
    };
    let a = keys(1);
    assert_eq!(a, keys(1));
    assert_ne!(a, keys(2));
    for k in &a {
        let suffix = k.split(":dup").nth(1).expect("key");
        assert!(
            !suffix.is_empty() && suffix.len() <= 8 && suffix.bytes().all(|b| b.is_ascii_digit()),
            "{k}"
        );
    }
}

#[test]
fn bad_examples_are_errors_naming_the_key() {
    let run = |input: SequenceInput, pad: bool| {
        expect_err(
            StateSaverOptions::new(1, 2)
                .pad(pad)
                .initial_state("h", sum_state())
                .build(vec![counting("fine", 2, 0.0), input]),
        )
    };
    let unequal = counting("u", 3, 0.0).sequence("y", Array1::<i64>::zeros(4));
    match run(unequal, true) {
        StateSaverError::UnequalLengths { key, lengths } => {
            assert_eq!(key, "u");
            assert_eq!(lengths, [("x".to_owned(), 3), ("y".to_owned(), 4)]);
        }
        other => panic!("{other:?}"),
    }
    match run(counting("odd", 3, 0.0), false) {
        e @ StateSaverError::NotMultiple { .. } => assert!(
            e.to_string().contains(
                "Tensor x first dimension should be a multiple of: 2, but saw value: 3. Consider setting pad=True."
            ) && e.to_string().contains("\"odd\"")
        ),
        other => panic!("{other:?}"),
    }
    match run(counting("empty", 0, 0.0), true) {
        StateSaverError::EmptySequence { key, name } => assert_eq!((key.as_str(), name.as_str()), ("empty", "x")),
        other => panic!("{other:?}"),
    }
    match run(counting("empty", 0, 0.0), false) {
        StateSaverError::EmptySequence { key, .. } => assert_eq!(key, "empty"),
        other => panic!("{other:?}"),
    }
    match run(counting("long", 2, 0.0).length(3), true) {
        StateSaverError::LengthTooLong {
            key,
            length: 3,
            steps: 2,
        } => assert_eq!(key, "long"),
        other => panic!("{other:?}"),
    }
    match run(SequenceInput::new("none"), true) {
        StateSaverError::NoSequences { key } => assert_eq!(key, "none"),
        other => panic!("{other:?}"),
    }
    match run(counting("colon", 2, 0.0).context("a:b", arr0(1i64).into_dyn()), true) {
        StateSaverError::BadName { key, name } => assert_eq!((key.as_str(), name.as_str()), ("colon", "a:b")),
        other => panic!("{other:?}"),
    }
    match run(
        SequenceInput::new("scalar").sequence("x", arr0(1.0f32).into_dyn()),
        true,
    ) {
        StateSaverError::NotASequence { key, .. } => assert_eq!(key, "scalar"),
        other => panic!("{other:?}"),
    }
    let other_dtype = SequenceInput::new("typed").sequence("x", Array2::<i64>::zeros((2, 1)));
    match run(other_dtype, true) {
        StateSaverError::Mismatch { key, what, name, .. } => {
            assert_eq!((key.as_str(), what, name.as_str()), ("typed", "sequence", "x"))
        }
        other => panic!("{other:?}"),
    }
    let other_state = counting("st", 2, 0.0).initial_state("h", ArrayD::<f32>::zeros(vec![2]));
    match run(other_state, true) {
        StateSaverError::Mismatch { key, what, name, .. } => {
            assert_eq!((key.as_str(), what, name.as_str()), ("st", "initial state", "h"))
        }
        other => panic!("{other:?}"),
    }
    let extra = counting("extra", 2, 0.0).context("more", arr0(1i64).into_dyn());
    match run(extra, true) {
        StateSaverError::Mismatch { key, what, .. } => assert_eq!((key.as_str(), what), ("extra", "context")),
        other => panic!("{other:?}"),
    }
    // No states at all.
    let e = expect_err(StateSaverOptions::new(1, 2).build(vec![counting("bare", 2, 0.0)]));
    assert!(
        matches!(e, StateSaverError::NoStates { ref key } if key == "bare"),
        "{e:?}"
    );
}

#[test]
fn input_errors_stop_the_saver() {
    let items: Vec<Result<SequenceInput, String>> = vec![Ok(counting("a", 2, 0.0)), Err("boom".into())];
    let saver = StateSaverOptions::new(1, 2)
        .initial_state("h", sum_state())
        .build_fallible(items)
        .expect("saver");
    let first = loop {
        match saver.next_batch() {
            Ok(Some(b)) => save_all(&b),
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    match first {
        StateSaverError::Input { index: 1, message } => assert_eq!(message, "boom"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        saver.next_batch(),
        Err(StateSaverError::Stopped { cause: "input", .. })
    ));
}

#[test]
fn a_panic_inside_the_input_fails_the_saver_and_nothing_more_is_read() {
    // Another reader must not take the next item at the panicked item's position (the run
    // could then end cleanly with that example missing).
    for threads in [0, 1, 2, 4] {
        let pulled = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&pulled);
        let inputs = (0..50).map(move |i| {
            seen.fetch_add(1, Ordering::SeqCst);
            if i == 3 {
                // Gives the other readers time to queue on the input lock (the passing run does
                // not depend on it; it only makes the old race likely to show).
                std::thread::sleep(std::time::Duration::from_millis(30));
                panic!("input panicked at item {i}");
            }
            counting(&format!("{i}"), 2, 0.0)
        });
        let saver = StateSaverOptions::new(1, 2)
            .num_threads(threads)
            .initial_state("h", sum_state())
            .build(inputs);
        match expect_err(saver) {
            StateSaverError::Panic { message } => assert!(message.contains("item 3"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(pulled.load(Ordering::SeqCst), 4, "threads {threads}");
    }
}

#[test]
fn dropping_a_saver_mid_stream_stops_its_threads() {
    let inputs = (0..10_000).map(|i| counting(&format!("{i}"), 5, 0.0));
    let saver = StateSaverOptions::new(4, 2)
        .capacity(8)
        .initial_state("h", sum_state())
        .build(inputs)
        .expect("saver");
    let b = saver.next_batch().expect("ok").expect("batch");
    drop(saver);
    // The batch outlives the saver; saving into it is harmless.
    save_all(&b);
}

/// What was written for one key: x rows, y values, label.
type Written = (Vec<Vec<f32>>, Vec<i64>, i64);

#[test]
fn sequence_examples_from_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("seq.tfrecord");
    let mut writer = RecordWriter::create(&path, WriterOptions::default()).expect("create");
    let mut expected: HashMap<String, Written> = HashMap::new();
    let mut rng = Rng(99);
    for i in 0..40 {
        let steps = 1 + rng.below(12) as usize;
        let x: Vec<Vec<f32>> = (0..steps).map(|t| vec![i as f32, t as f32]).collect();
        let y: Vec<i64> = (0..steps).map(|t| (i * 100 + t) as i64).collect();
        let key = format!("user{i}");
        let record = SequenceExample::builder()
            .context_bytes("id", key.as_str())
            .context_int64("label", i as i64 % 3)
            .float_list("x", x.clone())
            .int64_list("y", y.clone())
            .build()
            .expect("valid")
            .encode();
        writer.write_record(&record).expect("write");
        expected.insert(key, (x, y, i as i64 % 3));
    }
    writer.finish().expect("finish");
    let specs = SequenceSpecs::from_json_str(
        &serde_json::json!({
            "context_features": {
                "id": {"type": "FixedLenFeature", "shape": [], "dtype": "string"},
                "label": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
            },
            "sequence_features": {
                "x": {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "float32"},
                "y": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "int64"},
            }
        })
        .to_string(),
    )
    .expect("spec");
    let u = 4;
    let mut saver = StateSaverOptions::new(5, u)
        .capacity(10)
        .num_threads(2)
        .initial_state("h", sum_state())
        .build_from_dataset(
            Dataset::from_files(vec![path.clone()]),
            &specs,
            KeySource::Feature("id".into()),
        )
        .expect("saver");
    let mut steps_seen: BTreeMap<String, usize> = BTreeMap::new();
    for batch in drain(&mut saver) {
        let x = f32s(&batch.sequences["x"]);
        let y = i64s(&batch.sequences["y"]);
        for j in 0..batch.batch_size() {
            let key = text(&batch.key[j]).split_once(':').expect("key").1.to_owned();
            let (ex, ey, label) = &expected[&key];
            assert_eq!(i64s(&batch.context["label"])[[j]], *label);
            let seg = batch.sequence[j] as usize;
            for t in 0..batch.length[j] as usize {
                assert_eq!(y[[j, t]], ey[seg * u + t]);
                assert_eq!(x[[j, t, 1]], ex[seg * u + t][1]);
            }
            *steps_seen.entry(key).or_default() += batch.length[j] as usize;
        }
    }
    assert_eq!(steps_seen.len(), 40);
    for (key, n) in steps_seen {
        assert_eq!(n, expected[&key].1.len());
    }

    // Generated keys: the record's position.
    let by_index = StateSaverOptions::new(5, u)
        .initial_state("h", sum_state())
        .build_from_dataset(Dataset::from_files(vec![path]), &specs, KeySource::Index)
        .expect("saver");
    let first = by_index.next_batch().expect("ok").expect("batch");
    assert_eq!(text(&first.key[0]).split_once(':').expect("key").1, "0");
}

#[test]
fn record_specs_the_saver_cannot_use_are_refused() {
    let specs = SequenceSpecs::from_json_str(
        &serde_json::json!({
            "sequence_features": {"v": {"type": "VarLenFeature", "dtype": "int64"}}
        })
        .to_string(),
    )
    .expect("spec");
    let e = StateSaverOptions::new(1, 1)
        .build_from_dataset(Dataset::from_files(vec![]), &specs, KeySource::Index)
        .expect_err("refused");
    assert!(e.to_string().contains("FixedLenSequenceFeature"), "{e}");
}

// ---- issue 29: schedule, close, construction checks, key reuse ---------------------------------

/// An endless input of distinct keys, counting the examples pulled.
fn endless(pulled: Arc<AtomicUsize>) -> impl Iterator<Item = SequenceInput> + Send + 'static {
    let lengths = [7usize, 1, 12, 4, 9, 3];
    (0usize..).map(move |i| {
        pulled.fetch_add(1, Ordering::SeqCst);
        counting(&format!("e{i}"), lengths[i % lengths.len()], 0.0)
    })
}

#[test]
fn endless_input_with_unbounded_capacity_yields_batches_and_holds_few_examples() {
    for (threads, deterministic) in [(0, true), (2, true), (2, false)] {
        let pulled = Arc::new(AtomicUsize::new(0));
        let saver = StateSaverOptions::new(4, 3)
            .capacity(usize::MAX)
            .num_threads(threads)
            .deterministic(deterministic)
            .initial_state("s", sum_state())
            .build(endless(Arc::clone(&pulled)))
            .expect("saver");
        let mut finished = 0usize;
        for _ in 0..200 {
            let batch = saver.next_batch().expect("batch").expect("an endless input never ends");
            assert_eq!(batch.batch_size(), 4);
            finished += batch.next_key.iter().filter(|k| k.starts_with(b"STOP:")).count();
            save_all(&batch);
            // Memory is bounded by the examples held: in flight (at most batch_size +
            // lookahead) plus the readers' window (4 * threads + 8, one more per reader and
            // one for the consumer).
            let held = pulled.load(Ordering::SeqCst) - finished;
            assert!(held <= 4 + 64 + 4 * threads + 8 + threads + 1, "{held} examples held");
        }
        assert!(saver.max_in_flight() <= 4 + 64, "{}", saver.max_in_flight());
        assert!(finished > 100);
    }
}

#[test]
fn a_lookahead_of_zero_inserts_only_what_the_batch_needs() {
    let pulled = Arc::new(AtomicUsize::new(0));
    let saver = StateSaverOptions::new(3, 2)
        .capacity(usize::MAX)
        .lookahead(0)
        .num_threads(0)
        .initial_state("s", sum_state())
        .build(endless(Arc::clone(&pulled)))
        .expect("saver");
    for _ in 0..50 {
        let batch = saver.next_batch().expect("batch").expect("batch");
        save_all(&batch);
        assert!(saver.in_flight() <= 3);
    }
    assert_eq!(saver.max_in_flight(), 3);
}

/// The keys of every batch, saving states unchanged.
fn batch_keys(options: StateSaverOptions, inputs: Vec<SequenceInput>) -> Vec<Vec<String>> {
    let mut saver = options.initial_state("s", sum_state()).build(inputs).expect("saver");
    drain(&mut saver).into_iter().map(|b| texts(b.key)).collect()
}

#[test]
fn batches_do_not_depend_on_capacity_lookahead_or_threads() {
    let lengths = random_lengths(80, 25, 29);
    let inputs: Vec<SequenceInput> = lengths
        .iter()
        .enumerate()
        .map(|(i, &n)| counting(&format!("{i}"), n, 0.0))
        .collect();
    let reference = batch_keys(StateSaverOptions::new(5, 3).capacity(5).num_threads(0), inputs.clone());
    for capacity in [5, 6, 17, 1000, usize::MAX] {
        for lookahead in [0, 3, 64] {
            for threads in [0, 1, 3] {
                for deterministic in [true, false] {
                    let o = StateSaverOptions::new(5, 3)
                        .capacity(capacity)
                        .lookahead(lookahead)
                        .num_threads(threads)
                        .deterministic(deterministic);
                    assert_eq!(
                        batch_keys(o, inputs.clone()),
                        reference,
                        "capacity {capacity} lookahead {lookahead} threads {threads} det {deterministic}"
                    );
                }
            }
        }
    }
}

/// An input of `ready` examples, then one that blocks until `release` is dropped or sent to
/// (then the input ends). `entered` is signalled when the blocking pull starts.
fn blocking_input(
    ready: Vec<SequenceInput>,
) -> (
    impl Iterator<Item = SequenceInput> + Send + 'static,
    std::sync::mpsc::Sender<()>,
    std::sync::mpsc::Receiver<()>,
) {
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let (entered_tx, entered) = std::sync::mpsc::channel::<()>();
    let mut ready = ready.into_iter();
    let iter = std::iter::from_fn(move || {
        if let Some(x) = ready.next() {
            return Some(x);
        }
        let _ = entered_tx.send(());
        let _ = wait.recv();
        None
    });
    (iter, release, entered)
}

#[test]
fn close_from_another_thread_ends_a_waiting_next_batch() {
    for cancel_pending in [true, false] {
        let (input, release, entered) = blocking_input(vec![counting("a", 2, 0.0)]);
        let saver = Arc::new(
            StateSaverOptions::new(2, 2)
                .num_threads(1)
                .initial_state("s", sum_state())
                .build(input)
                .expect("saver"),
        );
        let waiting = {
            let saver = Arc::clone(&saver);
            std::thread::spawn(move || {
                let mut keys = Vec::new();
                while let Some(batch) = saver.next_batch().expect("batch") {
                    save_all(&batch);
                    keys.extend(texts(batch.key));
                }
                keys
            })
        };
        // The reader is now blocked in the input; once "a" is in flight the consumer waits for
        // a second segment. `in_flight` and `close` work while another thread is inside
        // `next_batch`.
        entered.recv().expect("the input was entered");
        while saver.in_flight() < 1 {
            std::thread::yield_now();
        }
        saver.close(cancel_pending);
        let keys = waiting.join().expect("the waiting thread ends");
        if cancel_pending {
            assert!(keys.is_empty(), "{keys:?}");
        } else {
            // Draining: the example in flight still comes out, as a small batch.
            assert_eq!(keys, ["00000_of_00001:a"]);
        }
        assert!(saver.next_batch().expect("after close").is_none());
        drop(release);
    }
}

#[test]
fn close_without_cancel_drains_the_sequences_in_flight() {
    let (input, release, _entered) = blocking_input(vec![counting("a", 6, 0.0), counting("b", 5, 0.0)]);
    let saver = StateSaverOptions::new(2, 2)
        .lookahead(0)
        .num_threads(0)
        .initial_state("s", sum_state())
        .build(input)
        .expect("saver");
    let first = saver.next_batch().expect("batch").expect("batch");
    assert_eq!(texts(first.key.clone()), ["00000_of_00003:a", "00000_of_00003:b"]);
    save_all(&first);
    saver.close(false);
    let mut keys = Vec::new();
    while let Some(batch) = saver.next_batch().expect("batch") {
        save_all(&batch);
        keys.push(texts(batch.key));
    }
    assert_eq!(
        keys,
        [
            ["00001_of_00003:a", "00001_of_00003:b"],
            ["00002_of_00003:a", "00002_of_00003:b"]
        ]
    );
    drop(release);
}

#[test]
fn close_without_cancel_and_no_small_batches_ends_with_insufficient_elements() {
    let (input, release, _entered) = blocking_input(vec![counting("a", 4, 0.0), counting("b", 2, 0.0)]);
    let saver = StateSaverOptions::new(2, 2)
        .lookahead(0)
        .num_threads(0)
        .allow_small_batch(false)
        .initial_state("s", sum_state())
        .build(input)
        .expect("saver");
    let first = saver.next_batch().expect("batch").expect("batch");
    save_all(&first);
    saver.close(false);
    match saver.next_batch() {
        Err(StateSaverError::InsufficientElements {
            requested: 2,
            remaining: 1,
        }) => {}
        other => panic!("{other:?}"),
    }
    drop(release);
}

#[test]
fn a_colon_in_a_default_state_name_is_refused_when_built() {
    let e = StateSaverOptions::new(1, 2)
        .initial_state("h:0", sum_state())
        .build(vec![counting("a", 2, 0.0)])
        .expect_err("a colon");
    assert!(e.is_option_error());
    assert_eq!(e.to_string(), "state name may not have a colon: 'h:0'");
}

#[test]
fn key_reuse_follows_the_barrier() {
    // A different segment count: the segment keys differ, so TensorFlow accepts it.
    let keys = batch_keys(
        StateSaverOptions::new(1, 2).capacity(3),
        vec![counting("k", 6, 0.0), counting("k", 4, 0.0)],
    );
    assert_eq!(keys.len(), 5);
    // The same count, but the earlier example is on its last segment: nothing collides.
    let keys = batch_keys(
        StateSaverOptions::new(2, 2).capacity(2).lookahead(0),
        vec![counting("k", 4, 0.0), counting("o", 2, 0.0), counting("k", 4, 0.0)],
    );
    assert_eq!(
        keys,
        [
            vec!["00000_of_00002:k", "00000_of_00001:o"],
            vec!["00001_of_00002:k", "00000_of_00002:k"],
            vec!["00001_of_00002:k"],
        ]
    );
}

#[test]
fn close_without_cancel_ends_even_when_the_input_was_read_to_its_end() {
    for _ in 0..20 {
        let inputs: Vec<SequenceInput> = (0..6).map(|i| counting(&format!("k{i}"), 2, 0.0)).collect();
        let saver = StateSaverOptions::new(1, 2)
            .lookahead(0)
            .num_threads(1)
            .initial_state("s", sum_state())
            .build(inputs)
            .expect("saver");
        let first = saver.next_batch().expect("batch").expect("batch");
        save_all(&first);
        // The reader may have buffered every example and seen the end by now.
        saver.close(false);
        assert!(saver.next_batch().expect("after close").is_none());
    }
}

#[test]
fn the_saver_is_sync() {
    fn sync<T: Sync + Send>() {}
    sync::<StateSaver>();
}

#[test]
fn sparse_ranks_that_differ_within_a_batch_stop_the_saver() {
    // TensorFlow batches sparse tensors of one rank only; examples of other ranks may meet in
    // a batch only if they never share one.
    let context = |rank: usize| {
        SparseInput::new(
            ArrayD::zeros(vec![0, rank]),
            SaverTensor::from(DenseTensor::from(Array1::<i64>::zeros(0).into_dyn())),
            vec![1; rank],
        )
    };
    let inputs = (1..=2).map(move |rank| counting(&format!("k{rank}"), 2, 0.0).sparse_context("c", context(rank)));
    let saver = StateSaverOptions::new(2, 2)
        .initial_state("sum", sum_state())
        .build(inputs)
        .expect("saver");
    match saver.next_batch() {
        Err(e @ StateSaverError::SparseRank { .. }) => {
            assert_eq!(e.to_string(), "sparse tensor 'c' has ranks [1, 2] within one batch");
        }
        other => panic!("expected the ranks refused, got {other:?}"),
    }
    assert!(matches!(
        saver.next_batch(),
        Err(StateSaverError::Stopped {
            cause: "sparse_rank",
            ..
        })
    ));
}
