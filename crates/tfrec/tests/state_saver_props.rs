//! Property test of the state saver: for random lengths, `num_unroll`, batch sizes,
//! capacities, threads and modes, every valid time step of every input appears exactly once,
//! in order within its sequence, and each segment receives exactly the state the previous
//! segment of its sequence saved.

use std::collections::HashMap;

use ndarray::{Array1, ArrayD};
use proptest::prelude::*;
use tfrec::parse::DenseTensor;
use tfrec::state_saver::{SequenceInput, StateSaverOptions};

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
