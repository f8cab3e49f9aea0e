//! The state saver's throughput: 10 k sequences of 1–1000 steps × 64 float32 features,
//! `num_unroll` 20, batch 32, one float32 state of 64 saved after every batch, in segments/s;
//! next to the cost of copying the same data once, measured in the same run: every segment
//! copied into freshly allocated, zero-padded `[32, 20, 64]` batch buffers with no other work,
//! (a) sequence after sequence (the plainest copy, the baseline) and (b) in the
//! batches' layout, 32 sequences side by side. The target is at least 50% of (a).
//! `cargo bench -p tfrec-cli --bench state_saver`; `TFREC_BENCH_SCALE=0.05` for a smoke run.

// The CLI's rule against the print macros (clippy.toml) is for the tool, whose output may be a
// closed pipe; a benchmark prints its report to the terminal.
#![allow(clippy::disallowed_macros)]

mod data;

use std::time::{Duration, Instant};

use ndarray::{Array2, ArrayD};
use tfrec::state_saver::{SequenceInput, StateSaverOptions};

// See the parse bench: the application picks the allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const FEATURES: usize = 64;
const NUM_UNROLL: usize = 20;
const BATCH: usize = 32;
const ROUNDS: usize = 3;

/// The baseline: each sequence's rows copied once into batch-shaped buffers.
fn copy_once(sequences: &[Array2<f32>]) -> usize {
    let row = NUM_UNROLL * FEATURES;
    let mut buffer: Vec<f32> = Vec::with_capacity(BATCH * row);
    let mut segments = 0;
    let mut in_batch = 0;
    for s in sequences {
        let flat = s.as_slice().expect("standard layout");
        for chunk in flat.chunks(row) {
            buffer.extend_from_slice(chunk);
            buffer.resize(buffer.len() + row - chunk.len(), 0.0);
            segments += 1;
            in_batch += 1;
            if in_batch == BATCH {
                std::hint::black_box(&buffer);
                buffer = Vec::with_capacity(BATCH * row);
                in_batch = 0;
            }
        }
    }
    std::hint::black_box(&buffer);
    segments
}

/// The same copy, but each batch takes the next segment of 32 sequences in turn (the
/// batches' layout), refilling a lane with the next sequence when one ends.
fn copy_interleaved(sequences: &[Array2<f32>]) -> usize {
    let row = NUM_UNROLL * FEATURES;
    let mut lanes: Vec<(usize, usize)> = Vec::new(); // (sequence, next segment)
    let mut next_seq = 0;
    let mut segments = 0;
    loop {
        while lanes.len() < BATCH && next_seq < sequences.len() {
            lanes.push((next_seq, 0));
            next_seq += 1;
        }
        if lanes.is_empty() {
            break;
        }
        let mut buffer: Vec<f32> = Vec::with_capacity(BATCH * row);
        for lane in lanes.iter_mut() {
            let flat = sequences[lane.0].as_slice().expect("standard layout");
            let start = lane.1 * row;
            let end = (start + row).min(flat.len());
            buffer.extend_from_slice(&flat[start..end]);
            buffer.resize(buffer.len() + row - (end - start), 0.0);
            lane.1 += 1;
            segments += 1;
        }
        std::hint::black_box(&buffer);
        lanes.retain(|&(s, seg)| seg * row < sequences[s].len());
    }
    segments
}

/// The saver over `inputs`, saving the state after every batch; returns the segments.
fn run_saver(inputs: Vec<SequenceInput>, threads: usize) -> usize {
    let saver = StateSaverOptions::new(BATCH, NUM_UNROLL)
        .capacity(256)
        .num_threads(threads)
        .initial_state("h", ArrayD::<f32>::zeros(vec![FEATURES]))
        .build(inputs)
        .expect("saver");
    let mut segments = 0;
    while let Some(batch) = saver.next_batch().expect("batch") {
        segments += batch.batch_size();
        std::hint::black_box(&batch.sequences["x"]);
        let h = batch.state("h").expect("state").clone();
        batch.save_state("h", h).expect("save");
    }
    segments
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n = ((10_000.0 * data::scale()) as usize).max(2 * BATCH);
    let mut rng = data::Rng::new(12);
    let sequences: Vec<Array2<f32>> = (0..n)
        .map(|_| {
            let steps = 1 + rng.below(1000) as usize;
            Array2::from_shape_fn((steps, FEATURES), |_| rng.float())
        })
        .collect();
    let steps: usize = sequences.iter().map(|s| s.nrows()).sum();
    let mb = (steps * FEATURES * 4) as f64 / 1e6;
    let inputs = || -> Vec<SequenceInput> {
        sequences
            .iter()
            .enumerate()
            .map(|(i, s)| SequenceInput::new(format!("{i}")).sequence("x", s.clone()))
            .collect()
    };

    let mut segments = 0;
    let copy = data::best_of(ROUNDS, &mut || segments = copy_once(&sequences));
    let interleaved = data::best_of(ROUNDS, &mut || {
        assert_eq!(copy_interleaved(&sequences), segments);
    });
    let saver_time = |threads| {
        (0..ROUNDS)
            .map(|_| {
                // The inputs are owned arrays handed to the saver; cloning them is set-up.
                let inputs = inputs();
                let t = Instant::now();
                let got = run_saver(inputs, threads);
                let elapsed = t.elapsed();
                assert_eq!(got, segments, "every segment once");
                elapsed
            })
            .min()
            .unwrap_or_default()
    };
    let inline = saver_time(0);
    let two = saver_time(2);
    let rate = |d: Duration| segments as f64 / d.as_secs_f64();
    println!(
        "\nstate saver: {n} sequences, {steps} steps x {FEATURES} float32 ({mb:.0} MB), {segments} segments \
         (num_unroll {NUM_UNROLL}, batch {BATCH}; best of {ROUNDS})"
    );
    for (name, d) in [
        ("(a) copy, by sequence  ", copy),
        ("(b) copy, batch layout ", interleaved),
    ] {
        println!(
            "  {name} {:>9.0} segments/s {:>6.0} MB/s",
            rate(d),
            mb / d.as_secs_f64()
        );
    }
    for (name, d) in [("saver, no reader thread", inline), ("saver, 2 reader threads", two)] {
        println!(
            "  {name} {:>9.0} segments/s {:>6.0} MB/s  = {:.0}% of (a), {:.0}% of (b)",
            rate(d),
            mb / d.as_secs_f64(),
            100.0 * copy.as_secs_f64() / d.as_secs_f64(),
            100.0 * interleaved.as_secs_f64() / d.as_secs_f64()
        );
    }
}
