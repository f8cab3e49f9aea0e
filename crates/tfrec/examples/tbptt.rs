//! Truncated back-propagation through time with the state saver: a small tanh RNN (ndarray
//! only, hand-written gradients) learns a slow running average of a ±1 stream over sequences
//! of 20 to 200 steps (2 to 20 times `num_unroll`, mostly not a multiple of it, so the last
//! segment is padded and masked by `length`; sequences of different lengths end at different
//! batches, so new sequences start beside older ones' later segments; the last batch of an
//! epoch is small). Trained twice on the same data from the same start: once
//! handing each sequence's hidden state from segment to segment, once resetting it to zero at
//! every segment. Only the first can know what happened before the segment, so its loss ends
//! clearly lower; the program exits non-zero if it does not.
//!
//! `cargo run -p tfrec --example tbptt --release`

use ndarray::{Array1, Array2, ArrayD, ArrayViewD, Axis, Ix2};
use tfrec::parse::DenseTensor;
use tfrec::state_saver::{SequenceInput, StateSaverOptions};

const HIDDEN: usize = 8;
const NUM_UNROLL: usize = 10;
const MIN_STEPS: usize = 20;
const MAX_STEPS: usize = 200;
const SEQUENCES: usize = 256;
const BATCH: usize = 32;
const EPOCHS: usize = 20;
/// The target is `y_t = DECAY * y_{t-1} + GAIN * x_t`: a memory of about 50 steps.
const DECAY: f32 = 0.98;
const GAIN: f32 = 0.1;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn uniform(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The RNN `h_t = tanh(W h_{t-1} + U x_t + b)`, `ŷ_t = V h_t + c`, with Adam moments.
#[derive(Clone)]
struct Rnn {
    w: Array2<f32>,
    u: Array2<f32>,
    b: Array1<f32>,
    v: Array2<f32>,
    c: Array1<f32>,
}

impl Rnn {
    fn new(seed: u64) -> Rnn {
        let mut rng = Rng(seed);
        let mut init =
            |rows, cols, scale: f32| Array2::from_shape_fn((rows, cols), |_| (rng.uniform() * 2.0 - 1.0) * scale);
        Rnn {
            w: init(HIDDEN, HIDDEN, 0.3),
            u: init(HIDDEN, 1, 0.5),
            b: Array1::zeros(HIDDEN),
            v: init(1, HIDDEN, 0.5),
            c: Array1::zeros(1),
        }
    }

    fn zeros_like(&self) -> Rnn {
        Rnn {
            w: Array2::zeros(self.w.raw_dim()),
            u: Array2::zeros(self.u.raw_dim()),
            b: Array1::zeros(self.b.raw_dim()),
            v: Array2::zeros(self.v.raw_dim()),
            c: Array1::zeros(self.c.raw_dim()),
        }
    }

    fn params_mut(&mut self) -> [&mut [f32]; 5] {
        [
            self.w.as_slice_mut().expect("standard layout"),
            self.u.as_slice_mut().expect("standard layout"),
            self.b.as_slice_mut().expect("standard layout"),
            self.v.as_slice_mut().expect("standard layout"),
            self.c.as_slice_mut().expect("standard layout"),
        ]
    }

    /// One segment: the loss summed over valid steps, the number of valid steps, the gradients
    /// of the summed loss, and the final hidden state. Steps past a row's length carry the
    /// state unchanged (as `static_state_saving_rnn` does).
    fn segment(
        &self,
        x: &Array2<f32>,
        y: &Array2<f32>,
        len: &[i32],
        h0: Array2<f32>,
    ) -> (f32, usize, Rnn, Array2<f32>) {
        let (batch, steps) = x.dim();
        let mut hs = vec![h0];
        let mut loss = 0.0;
        let mut count = 0;
        let mut dy = Array2::<f32>::zeros((batch, steps));
        for t in 0..steps {
            let prev = &hs[t];
            let mut a = prev.dot(&self.w.t()) + &self.b;
            for j in 0..batch {
                for k in 0..HIDDEN {
                    a[[j, k]] += self.u[[k, 0]] * x[[j, t]];
                }
            }
            let mut h = a.mapv(f32::tanh);
            for j in 0..batch {
                if t as i32 >= len[j] {
                    h.row_mut(j).assign(&prev.row(j));
                    continue;
                }
                let pred = h.row(j).dot(&self.v.row(0)) + self.c[0];
                let err = pred - y[[j, t]];
                loss += err * err;
                count += 1;
                dy[[j, t]] = 2.0 * err;
            }
            hs.push(h);
        }
        let mut g = self.zeros_like();
        let mut dh_next = Array2::<f32>::zeros((batch, HIDDEN));
        for t in (0..steps).rev() {
            let h = &hs[t + 1];
            let prev = &hs[t];
            let mut dh = dh_next.clone();
            for j in 0..batch {
                let d = dy[[j, t]];
                if d != 0.0 {
                    for k in 0..HIDDEN {
                        g.v[[0, k]] += d * h[[j, k]];
                        dh[[j, k]] += d * self.v[[0, k]];
                    }
                    g.c[0] += d;
                }
            }
            let mut da = Array2::<f32>::zeros((batch, HIDDEN));
            let mut carry = Array2::<f32>::zeros((batch, HIDDEN));
            for j in 0..batch {
                let valid = (t as i32) < len[j];
                for k in 0..HIDDEN {
                    if valid {
                        da[[j, k]] = dh[[j, k]] * (1.0 - h[[j, k]] * h[[j, k]]);
                    } else {
                        carry[[j, k]] = dh[[j, k]];
                    }
                }
            }
            g.w += &da.t().dot(prev);
            for j in 0..batch {
                for k in 0..HIDDEN {
                    g.u[[k, 0]] += da[[j, k]] * x[[j, t]];
                }
            }
            g.b += &da.sum_axis(Axis(0));
            dh_next = da.dot(&self.w) + carry;
        }
        let last = hs.pop().expect("one state per step");
        (loss, count, g, last)
    }
}

struct Adam {
    m: Rnn,
    v: Rnn,
    t: i32,
}

impl Adam {
    fn step(&mut self, model: &mut Rnn, grad: &mut Rnn, scale: f32, lr: f32) {
        self.t += 1;
        let (b1, b2) = (0.9f32, 0.999f32);
        let (c1, c2) = (1.0 - b1.powi(self.t), 1.0 - b2.powi(self.t));
        let params = model.params_mut();
        let grads = grad.params_mut();
        let ms = self.m.params_mut();
        let vs = self.v.params_mut();
        for (((p, g), m), v) in params.into_iter().zip(grads).zip(ms).zip(vs) {
            for i in 0..p.len() {
                let gi = (g[i] * scale).clamp(-1.0, 1.0);
                m[i] = b1 * m[i] + (1.0 - b1) * gi;
                v[i] = b2 * v[i] + (1.0 - b2) * gi * gi;
                p[i] -= lr * (m[i] / c1) / ((v[i] / c2).sqrt() + 1e-8);
            }
        }
    }
}

fn data(seed: u64) -> Vec<(Array2<f32>, Array2<f32>)> {
    let mut rng = Rng(seed);
    (0..SEQUENCES)
        .map(|_| {
            let steps = MIN_STEPS + (rng.next() % (MAX_STEPS - MIN_STEPS + 1) as u64) as usize;
            let mut y = 0.0f32;
            let mut xs = Array2::zeros((steps, 1));
            let mut ys = Array2::zeros((steps, 1));
            for t in 0..steps {
                let x = if rng.next() & 1 == 1 { 1.0 } else { -1.0 };
                y = DECAY * y + GAIN * x;
                xs[[t, 0]] = x;
                ys[[t, 0]] = y;
            }
            (xs, ys)
        })
        .collect()
}

fn as_f32(t: &DenseTensor) -> Result<ArrayViewD<'_, f32>, String> {
    t.f32_view()
        .ok_or_else(|| format!("expected float32, got {}", t.dtype()))
}

/// What the batches of one epoch held that sequences of one length would never show.
#[derive(Debug, Default)]
struct Seen {
    /// Padded (masked) steps: `num_unroll - length` summed over entries.
    padded_steps: usize,
    /// Batches smaller than `BATCH`.
    small_batches: usize,
    /// Batches holding segments of different positions (a sequence's first beside another's
    /// later one).
    interleaved_batches: usize,
    batches: usize,
}

/// Trains for `EPOCHS` epochs; returns the mean loss per valid step of each epoch, and what
/// the first epoch's batches held.
fn train(
    sequences: &[(Array2<f32>, Array2<f32>)],
    hand_over: bool,
) -> Result<(Vec<f32>, Seen), Box<dyn std::error::Error>> {
    let mut seen = Seen::default();
    let mut model = Rnn::new(42);
    let mut adam = Adam {
        m: model.zeros_like(),
        v: model.zeros_like(),
        t: 0,
    };
    let mut losses = Vec::new();
    for epoch in 0..EPOCHS {
        // A step size that halves every 5 epochs.
        let lr = 0.02 * 0.5f32.powf(epoch as f32 / 5.0);
        let inputs: Vec<SequenceInput> = sequences
            .iter()
            .enumerate()
            .map(|(i, (x, y))| {
                SequenceInput::new(format!("{epoch}-{i}"))
                    .sequence("x", x.clone())
                    .sequence("y", y.clone())
            })
            .collect();
        let saver = StateSaverOptions::new(BATCH, NUM_UNROLL)
            .capacity(4 * BATCH)
            .num_threads(2)
            .initial_state("h", ArrayD::<f32>::zeros(vec![HIDDEN]))
            .build(inputs)?;
        let (mut total, mut steps) = (0.0f64, 0usize);
        while let Some(batch) = saver.next_batch()? {
            if epoch == 0 {
                seen.batches += 1;
                seen.padded_steps += batch.length.iter().map(|&l| NUM_UNROLL - l as usize).sum::<usize>();
                seen.small_batches += usize::from(batch.batch_size() < BATCH);
                seen.interleaved_batches += usize::from(batch.sequence.iter().any(|&s| s != batch.sequence[0]));
            }
            let x = as_f32(&batch.sequences["x"])?
                .index_axis(Axis(2), 0)
                .to_owned()
                .into_dimensionality::<Ix2>()?;
            let y = as_f32(&batch.sequences["y"])?
                .index_axis(Axis(2), 0)
                .to_owned()
                .into_dimensionality::<Ix2>()?;
            let h0 = as_f32(batch.state("h")?)?.to_owned().into_dimensionality::<Ix2>()?;
            let (loss, count, mut grad, h) = model.segment(&x, &y, &batch.length, h0);
            total += f64::from(loss);
            steps += count;
            adam.step(&mut model, &mut grad, 1.0 / count.max(1) as f32, lr);
            let saved = if hand_over {
                h
            } else {
                Array2::zeros((batch.batch_size(), HIDDEN))
            };
            batch.save_state("h", saved)?;
        }
        let mean = (total / steps.max(1) as f64) as f32;
        println!("  epoch {epoch:2}: loss {mean:.5}");
        losses.push(mean);
    }
    Ok((losses, seen))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sequences = data(7);
    println!(
        "{SEQUENCES} sequences of {MIN_STEPS}..={MAX_STEPS} steps, num_unroll {NUM_UNROLL}, batch {BATCH}, hidden {HIDDEN}"
    );
    println!("with state hand-over:");
    let (carried, seen) = train(&sequences, true)?;
    println!("with the state reset at every segment:");
    let (reset, _) = train(&sequences, false)?;
    println!(
        "epoch 0: {} batches, {} padded steps masked by length, {} small batches, {} batches mixing segment positions",
        seen.batches, seen.padded_steps, seen.small_batches, seen.interleaved_batches
    );
    if seen.padded_steps == 0 || seen.small_batches == 0 || seen.interleaved_batches == 0 {
        println!("RESULT: FAIL: the data should exercise padding, small batches and interleaving");
        std::process::exit(1);
    }
    let (a, b) = (carried[EPOCHS - 1], reset[EPOCHS - 1]);
    if a < 0.5 * b {
        println!("RESULT: OK: final loss with hand-over {a:.5} < with reset {b:.5}");
        Ok(())
    } else {
        println!("RESULT: FAIL: final loss with hand-over {a:.5} is not clearly below with reset {b:.5}");
        std::process::exit(1);
    }
}
