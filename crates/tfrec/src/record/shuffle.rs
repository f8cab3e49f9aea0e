//! Shuffling through a bounded buffer: the one buffer behind tf.data's `shuffle` in the
//! pipeline (of records and of batches) and behind `tfrec shuffle` ([`RecordShuffler`]), on the
//! one seeded generator, so a seed means the same order wherever the buffer is used.

use crate::rng::SplitMix64;

/// tf.data's `shuffle` buffer: up to `capacity` items (and, when bounded by weight, no more
/// weight than the bound once it holds one); each output is a random one of them, its place
/// taken by the next input.
#[derive(Debug)]
pub struct ShuffleBuffer<T> {
    items: Vec<T>,
    capacity: usize,
    /// The weight of an item (its bytes, say); zero for every item unless bounded by weight.
    weigh: fn(&T) -> u64,
    /// The weight of the items held.
    weight: u64,
    max_weight: u64,
    seed: u64,
    reshuffle_each_iteration: bool,
    iteration: u64,
    rng: SplitMix64,
}

impl<T> ShuffleBuffer<T> {
    /// A buffer of up to `capacity` items (at least 1) whose order is fixed by `seed`; with
    /// `reshuffle_each_iteration`, each [`restart`](Self::restart) gives a new order (still
    /// fixed by the seed), else the first one again.
    pub fn new(capacity: usize, seed: u64, reshuffle_each_iteration: bool) -> Self {
        ShuffleBuffer {
            items: Vec::new(),
            capacity: capacity.max(1),
            weigh: |_| 0,
            weight: 0,
            max_weight: u64::MAX,
            seed,
            reshuffle_each_iteration,
            iteration: 0,
            rng: SplitMix64::new(seed),
        }
    }

    /// Also bounds the buffer by the total weight of its items: it has no room once they weigh
    /// `max_weight` or more (one item always fits, however heavy).
    pub fn bounded_by_weight(mut self, max_weight: u64, weigh: fn(&T) -> u64) -> Self {
        self.max_weight = max_weight;
        self.weigh = weigh;
        self
    }

    /// Whether the buffer has room for another input.
    pub fn has_room(&self) -> bool {
        self.items.is_empty() || (self.items.len() < self.capacity && self.weight < self.max_weight)
    }

    /// Adds an input (whether or not there is room: the bounds are the caller's to keep).
    pub fn push(&mut self, item: T) {
        self.weight = self.weight.saturating_add((self.weigh)(&item));
        self.items.push(item);
    }

    /// A random item of the buffer, or `None` when it is empty.
    pub fn take_random(&mut self) -> Option<T> {
        if self.items.is_empty() {
            return None;
        }
        let i = self.rng.below(self.items.len());
        let item = self.items.swap_remove(i);
        self.weight = self.weight.saturating_sub((self.weigh)(&item));
        Some(item)
    }

    /// How many items the buffer holds.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the buffer holds no item.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Starts the next iteration (of a later `repeat`), handing back the items left over.
    pub fn restart(&mut self) -> std::vec::Drain<'_, T> {
        self.iteration += 1;
        let seed = if self.reshuffle_each_iteration {
            self.seed ^ self.iteration.wrapping_mul(0xD1B5_4A32_D192_ED03)
        } else {
            self.seed
        };
        self.rng = SplitMix64::new(seed);
        self.weight = 0;
        self.items.drain(..)
    }
}

/// Records in, the same records out in an order fixed by the seed (`tfrec shuffle`): a
/// [`ShuffleBuffer`] bounded by records and by bytes; once full, each new record first pushes
/// out a random one.
#[derive(Debug)]
pub struct RecordShuffler {
    buffer: ShuffleBuffer<Vec<u8>>,
}

impl RecordShuffler {
    /// A shuffle through up to `max_records` records (at least 1) of `max_bytes` together.
    pub fn new(max_records: usize, max_bytes: u64, seed: u64) -> Self {
        RecordShuffler {
            buffer: ShuffleBuffer::new(max_records, seed, false).bounded_by_weight(max_bytes, |r| r.len() as u64),
        }
    }

    /// Adds a record, first handing random ones to `out` while the buffer is full.
    pub fn push<E>(&mut self, record: &[u8], mut out: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        while !self.buffer.has_room() {
            let Some(r) = self.buffer.take_random() else {
                break;
            };
            out(&r)?;
        }
        // A fresh allocation of the record's size: reusing the buffer of a record handed out
        // (of another size) costs a reallocation that copies its old bytes, measured dearer.
        self.buffer.push(record.to_vec());
        Ok(())
    }

    /// Hands every record still held to `out`, in random order.
    pub fn finish<E>(mut self, mut out: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        while let Some(r) = self.buffer.take_random() {
            out(&r)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shuffled(records: &[Vec<u8>], max_records: usize, max_bytes: u64, seed: u64) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut keep = |r: &[u8]| {
            out.push(r.to_vec());
            Ok::<_, ()>(())
        };
        let mut s = RecordShuffler::new(max_records, max_bytes, seed);
        for r in records {
            s.push(r, &mut keep).unwrap();
        }
        s.finish(&mut keep).unwrap();
        out
    }

    #[test]
    fn records_come_out_once_each_in_an_order_fixed_by_the_seed() {
        let records: Vec<Vec<u8>> = (0..50u8).map(|i| vec![i; usize::from(i % 7)]).collect();
        let a = shuffled(&records, 10, u64::MAX, 3);
        assert_eq!(a, shuffled(&records, 10, u64::MAX, 3));
        assert_ne!(a, records);
        let mut sorted = a.clone();
        sorted.sort();
        let mut want = records.clone();
        want.sort();
        assert_eq!(sorted, want);
    }

    #[test]
    fn a_record_bound_and_a_byte_bound_are_the_same_buffer() {
        // Records of 4 bytes each: 12 bytes hold 3 records, as a bound of 3 records does.
        let records: Vec<Vec<u8>> = (0..40u32).map(|i| i.to_le_bytes().to_vec()).collect();
        assert_eq!(shuffled(&records, 3, u64::MAX, 9), shuffled(&records, 1000, 12, 9));
        // A buffer of one record (or of a record heavier than the bound) keeps the order.
        assert_eq!(shuffled(&records, 1000, 1, 9), records);
    }

    #[test]
    fn the_buffer_hands_out_as_the_pipeline_draws() {
        // The pipeline fills while there is room, then takes one: the same draws as pushing
        // through a `RecordShuffler`.
        let records: Vec<Vec<u8>> = (0..30u8).map(|i| vec![i]).collect();
        let mut buffer = ShuffleBuffer::new(5, 11, false);
        let mut input = records.iter().cloned();
        let mut out = Vec::new();
        loop {
            while buffer.has_room() {
                match input.next() {
                    Some(r) => buffer.push(r),
                    None => break,
                }
            }
            match buffer.take_random() {
                Some(r) => out.push(r),
                None => break,
            }
        }
        assert_eq!(out, shuffled(&records, 5, u64::MAX, 11));
    }
}
