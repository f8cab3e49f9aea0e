//! Property tests of the state saver: for random lengths, `num_unroll`, batch sizes,
//! capacities, threads and modes, every valid time step of every input appears exactly once,
//! in order within its sequence, and each segment receives exactly the state the previous
//! segment of its sequence saved; and a sparse sequence or context, split into segments and
//! batched, is exactly the dense one it was made from.

use std::collections::HashMap;

use ndarray::{Array1, Array2, ArrayD, IxDyn};
use proptest::prelude::*;
use tfrec::parse::{DenseTensor, SparseTensor};
use tfrec::state_saver::{SaverTensor, SequenceInput, SparseInput, StateSaverOptions};

/// A key the tests made from text, as text.
fn text(key: &[u8]) -> String {
    String::from_utf8(key.to_vec()).expect("a UTF-8 key")
}

fn i64s(t: &DenseTensor) -> ArrayD<i64> {
    t.i64_view()
        .unwrap_or_else(|| panic!("expected int64, got {:?}", t.dtype()))
        .to_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn every_step_once_in_order_with_exact_state_chains(
        lengths in proptest::collection::vec(1usize..40, 1..40),
        num_unroll in 1usize..7,
        batch_size in 1usize..6,
        extra_capacity in 0usize..6,
        threads in 0usize..4,
        deterministic in any::<bool>(),
        pad_to_multiple in any::<bool>(),
    ) {
        // Step t of sequence i holds i * 1000 + t; with pad=false lengths are rounded up.
        let lengths: Vec<usize> = lengths
            .iter()
            .map(|&n| if pad_to_multiple { n.div_ceil(num_unroll) * num_unroll } else { n })
            .collect();
        let inputs: Vec<SequenceInput> = lengths
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let x = Array1::from_shape_fn(n, |t| (i * 1000 + t) as i64);
                SequenceInput::new(format!("{i}")).sequence("x", x)
            })
            .collect();
        let saver = StateSaverOptions::new(batch_size, num_unroll)
            .capacity(batch_size + extra_capacity)
            .num_threads(threads)
            .deterministic(deterministic)
            .pad(!pad_to_multiple)
            .initial_state("token", ndarray::arr1(&[-1i64, -1]).into_dyn())
            .build(inputs)
            .expect("saver");
        let mut steps: HashMap<usize, Vec<i64>> = HashMap::new();
        // The token each sequence's next segment must receive.
        let mut expected_token: HashMap<usize, [i64; 2]> = HashMap::new();
        let mut saves = 0i64;
        while let Some(batch) = saver.next_batch().expect("batch") {
            let x = i64s(&batch.sequences["x"]);
            let token = i64s(batch.state("token").expect("state"));
            let mut next = ArrayD::<i64>::zeros(vec![batch.batch_size(), 2]);
            for j in 0..batch.batch_size() {
                let i: usize = text(&batch.key[j]).split(':').nth(1).and_then(|s| s.parse().ok()).expect("key");
                let got = [token[[j, 0]], token[[j, 1]]];
                let want = expected_token.get(&i).copied().unwrap_or([-1, -1]);
                prop_assert_eq!(got, want, "state of {}", &text(&batch.key[j]));
                let seen = steps.entry(i).or_default();
                prop_assert_eq!(batch.sequence[j] as usize * num_unroll, seen.len());
                for t in 0..batch.length[j] as usize {
                    seen.push(x[[j, t]]);
                }
                // A token no other segment saves.
                saves += 1;
                next[[j, 0]] = i as i64;
                next[[j, 1]] = saves;
                expected_token.insert(i, [i as i64, saves]);
            }
            batch.save_state("token", next).expect("save");
        }
        prop_assert_eq!(steps.len(), lengths.len());
        for (i, &n) in lengths.iter().enumerate() {
            let want: Vec<i64> = (0..n).map(|t| (i * 1000 + t) as i64).collect();
            prop_assert_eq!(&steps[&i], &want);
        }
        prop_assert!(saver.max_in_flight() <= batch_size + extra_capacity);
    }
}

/// The sparse form of `dense`: its non-zero values with their indices, in row-major order.
fn sparse_of(dense: &ArrayD<i64>) -> SparseInput {
    let rank = dense.ndim();
    let mut indices = Vec::new();
    let mut values = Vec::new();
    for (index, &v) in dense.indexed_iter() {
        if v != 0 {
            indices.extend((0..rank).map(|d| index[d] as i64));
            values.push(v);
        }
    }
    let n = values.len();
    SparseInput::new(
        ArrayD::from_shape_vec(IxDyn(&[n, rank]), indices).expect("rank columns a row"),
        SaverTensor::from(DenseTensor::from(Array1::from(values).into_dyn())),
        dense.shape().iter().map(|&d| d as i64).collect(),
    )
}

/// `sparse` as a dense array of its dense shape (0 where it has no value).
fn dense_of(sparse: &SparseTensor) -> ArrayD<i64> {
    let shape: Vec<usize> = sparse.dense_shape.iter().map(|&d| d as usize).collect();
    let mut out = ArrayD::<i64>::zeros(shape);
    let values = sparse.values.as_i64().expect("int64 values");
    for (row, &v) in sparse.indices.rows().into_iter().zip(values) {
        let index: Vec<usize> = row.iter().map(|&i| i as usize).collect();
        out[IxDyn(&index)] = v;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn sparse_split_and_batched_matches_the_dense_reference(
        lengths in proptest::collection::vec(1usize..12, 1..12),
        width in 1usize..4,
        num_unroll in 1usize..5,
        batch_size in 1usize..5,
        density in 0u32..4,
        seed in any::<u64>(),
    ) {
        // Each example holds a dense sequence `d` [steps, width] (about density/4 of it
        // non-zero), the same data as a sparse sequence `s`, and its first row as a dense
        // context `dc` and a sparse context `sc`.
        let mut state = seed;
        let mut draw = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        let inputs: Vec<SequenceInput> = lengths
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let d = Array2::from_shape_fn((n, width), |_| {
                    if draw() % 4 < density { i64::from(draw() % 100) + 1 } else { 0 }
                })
                .into_dyn();
                let c = d.index_axis(ndarray::Axis(0), 0).to_owned();
                SequenceInput::new(format!("{i}"))
                    .sparse_sequence("s", sparse_of(&d))
                    .sequence("d", d)
                    .sparse_context("sc", sparse_of(&c))
                    .context("dc", c)
            })
            .collect();
        let saver = StateSaverOptions::new(batch_size, num_unroll)
            .num_threads(0)
            .initial_state("h", ndarray::arr1(&[0i64]).into_dyn())
            .build(inputs)
            .expect("saver");
        while let Some(batch) = saver.next_batch().expect("batch") {
            let b = batch.batch_size();
            let s = &batch.sparse_sequences["s"];
            prop_assert_eq!(&s.dense_shape, &vec![batch_size as i64, num_unroll as i64, width as i64]);
            let s = dense_of(s);
            let d = batch.sequences["d"].i64_view().expect("int64").to_owned();
            prop_assert_eq!(s.slice(ndarray::s![..b, .., ..]).to_owned().into_dyn(), d);
            prop_assert!(s.slice(ndarray::s![b.., .., ..]).iter().all(|&v| v == 0));
            let sc = &batch.sparse_context["sc"];
            prop_assert_eq!(&sc.dense_shape, &vec![batch_size as i64, width as i64]);
            let sc = dense_of(sc);
            let dc = batch.context["dc"].i64_view().expect("int64").to_owned();
            prop_assert_eq!(sc.slice(ndarray::s![..b, ..]).to_owned().into_dyn(), dc);
            batch.save_state("h", ndarray::Array2::<i64>::zeros((b, 1))).expect("save");
        }
    }
}
