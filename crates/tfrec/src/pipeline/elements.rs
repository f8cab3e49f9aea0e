//! Stages over elements the library knows nothing of: what follows a caller's callback (a
//! Python `map` or `filter`, say), or a data set whose elements come from the caller. The
//! element stream starts from the running [`Pipeline`] (its outputs turned into elements by
//! the caller's `lift`) or from the caller's own source, and every stage over it is the
//! library's: the same shuffle buffer and generator as the record and batch stages (so a seeded
//! shuffle gives the same order wherever in the chain it stands), the same repeat (which
//! restarts the whole pipeline below, reshuffling its shuffles as a repeat of records does),
//! shard, skip, take, and tf.data's cardinality. The callbacks run on the thread that iterates.

use std::collections::VecDeque;
use std::sync::Arc;

use super::cardinality::Cardinality;
use super::dataset::Pipeline;
use super::error::{DatasetError, PipelineError};
use super::items::{CallbackError, ItemStage, ItemStream, MapFn, PredicateFn, StackFn, StageStream};
use super::stages::Stage;
use super::workers::PipelineIter;

/// One stage of an [`Elements`] plan, made by its constructors (which refuse the arguments
/// tf.data refuses). Cheap to clone: a callback is shared.
pub struct ElementStage<E>(ItemStage<E>);

impl<E> Clone for ElementStage<E> {
    fn clone(&self) -> Self {
        ElementStage(self.0.clone())
    }
}

impl<E> ElementStage<E> {
    /// Applies `f` to each element.
    pub fn map(f: impl Fn(E) -> Result<E, CallbackError> + Send + Sync + 'static) -> Self {
        ElementStage(ItemStage::Map(Arc::new(f) as MapFn<E>))
    }

    /// Keeps the elements for which `keep` is true.
    pub fn filter(keep: impl Fn(&E) -> Result<bool, CallbackError> + Send + Sync + 'static) -> Self {
        ElementStage(ItemStage::Filter(Arc::new(keep) as PredicateFn<E>))
    }

    /// Groups `size` elements into one made by `stack`; the last, smaller group is dropped
    /// with `drop_remainder`.
    pub fn batch(
        size: usize,
        drop_remainder: bool,
        stack: impl Fn(Vec<E>) -> Result<E, CallbackError> + Send + Sync + 'static,
    ) -> Result<Self, DatasetError> {
        if size == 0 {
            return Err(DatasetError::Zero { argument: "batch_size" });
        }
        Ok(ElementStage(ItemStage::Batch {
            size,
            drop_remainder,
            stack: Arc::new(stack) as StackFn<E>,
        }))
    }

    /// Shuffles through a buffer of `buffer_size` elements, as
    /// [`Dataset::shuffle_with`](super::Dataset::shuffle_with) shuffles records.
    pub fn shuffle(buffer_size: usize, seed: u64, reshuffle_each_iteration: bool) -> Result<Self, DatasetError> {
        Ok(ElementStage(ItemStage::Stage(Stage::shuffle(
            buffer_size,
            seed,
            reshuffle_each_iteration,
        )?)))
    }

    /// Goes over the elements so far `count` times (`None`: forever; an empty stream stays
    /// empty), restarting everything below.
    pub fn repeat(count: Option<u64>) -> Self {
        ElementStage(ItemStage::Stage(Stage::Repeat(count)))
    }

    /// Drops the first `count` elements.
    pub fn skip(count: u64) -> Self {
        ElementStage(ItemStage::Stage(Stage::Skip(count)))
    }

    /// Keeps at most `count` elements.
    pub fn take(count: u64) -> Self {
        ElementStage(ItemStage::Stage(Stage::Take(count)))
    }

    /// Keeps elements `index, index + num_shards, …`.
    pub fn shard(num_shards: usize, index: usize) -> Result<Self, DatasetError> {
        Ok(ElementStage(ItemStage::Stage(Stage::shard(num_shards, index)?)))
    }

    /// The stage's name, as tf.data calls it.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// The elements after this stage, given `before` of them.
    pub fn cardinality(&self, before: Cardinality) -> Cardinality {
        self.0.cardinality(before)
    }
}

/// A caller's source of elements: called at the start of each iteration, it gives that
/// iteration's elements.
pub type SourceFn<E> = Arc<dyn Fn() -> Result<ElementIterator<E>, CallbackError> + Send + Sync>;

/// The elements of one iteration of a caller's source.
pub type ElementIterator<E> = Box<dyn Iterator<Item = Result<E, CallbackError>> + Send>;

/// Turns one output of a [`Pipeline`] into elements, appended to the queue it is given (a
/// chunk of records becomes one element a record, a parsed batch one element).
pub type LiftFn<T, E> = Arc<dyn Fn(T, &mut VecDeque<E>) -> Result<(), CallbackError> + Send + Sync>;

/// Runs a wait for the pipeline below (`f`), letting go of whatever the iterating thread
/// holds that the pipeline does not need: a binding's interpreter lock, say.
pub type WaitFn = Arc<dyn Fn(&mut (dyn FnMut() + Send)) + Send + Sync>;

/// A data set of elements: a source, then stages in the order they were added. Iterate it with
/// [`Elements::iter`].
pub struct Elements<E> {
    source: Box<dyn ItemStream<E>>,
    source_cardinality: Cardinality,
    stages: Vec<ItemStage<E>>,
}

impl<E: Send + 'static> Elements<E> {
    /// The elements of a caller's source, `source()` called anew for each iteration (each pass
    /// of a `repeat`); `cardinality`: how many it gives, when known.
    pub fn from_source(source: SourceFn<E>, cardinality: Cardinality) -> Self {
        Elements {
            source: Box::new(FromSource {
                open: source,
                current: None,
                ended: false,
            }),
            source_cardinality: cardinality,
            stages: Vec::new(),
        }
    }

    /// The outputs of `pipeline` as elements, each turned into elements by `lift` on the
    /// iterating thread. The pipeline starts at the first element asked for; a `repeat` of
    /// the elements restarts it, its own shuffles reshuffled as a `repeat` of its records
    /// would reshuffle them. `cardinality`: how many elements the outputs make. Each wait for
    /// the pipeline (for its next output, for its threads to stop) runs inside `waits`, when
    /// given.
    pub fn from_pipeline<T: Send + 'static>(
        pipeline: Pipeline<T>,
        lift: LiftFn<T, E>,
        waits: Option<WaitFn>,
        cardinality: Cardinality,
    ) -> Self {
        Elements {
            source: Box::new(FromPipeline {
                pipeline: Some(pipeline),
                running: None,
                lift,
                waits,
                queue: VecDeque::new(),
            }),
            source_cardinality: cardinality,
            stages: Vec::new(),
        }
    }

    /// Adds `stage` after the stages so far.
    pub fn stage(mut self, stage: ElementStage<E>) -> Self {
        self.stages.push(stage.0);
        self
    }

    /// Adds `stages` after the stages so far, in order.
    pub fn stages<'a>(mut self, stages: impl IntoIterator<Item = &'a ElementStage<E>>) -> Self
    where
        E: 'a,
    {
        self.stages.extend(stages.into_iter().map(|s| s.0.clone()));
        self
    }

    /// How many elements there are, by tf.data's rules.
    pub fn cardinality(&self) -> Cardinality {
        self.stages
            .iter()
            .fold(self.source_cardinality, |n, stage| stage.cardinality(n))
    }

    /// The elements, on the calling thread (the pipeline below, when there is one, on its own
    /// threads). After an error the iterator ends.
    pub fn iter(self) -> ElementIter<E> {
        ElementIter {
            stream: Some(StageStream::chain(self.source, &self.stages, |_| Ok(()))),
        }
    }
}

/// The running elements of an [`Elements`] plan. Dropping it stops and joins the threads of the
/// pipeline below.
pub struct ElementIter<E> {
    /// `None` once the elements have ended or failed.
    stream: Option<Box<dyn ItemStream<E>>>,
}

impl<E> Iterator for ElementIter<E> {
    type Item = Result<E, PipelineError>;

    fn next(&mut self) -> Option<Self::Item> {
        let result = self.stream.as_mut()?.next_item();
        match result {
            Ok(Some(element)) => Some(Ok(element)),
            Ok(None) => {
                self.stream = None;
                None
            }
            Err(e) => {
                self.stream = None;
                Some(Err(e))
            }
        }
    }
}

/// A caller's source as an item stream.
struct FromSource<E> {
    open: SourceFn<E>,
    /// This iteration's elements, once asked for.
    current: Option<ElementIterator<E>>,
    /// This iteration's elements have all been given (the source is not asked again).
    ended: bool,
}

impl<E: Send> ItemStream<E> for FromSource<E> {
    fn next_item(&mut self) -> Result<Option<E>, PipelineError> {
        if self.ended {
            return Ok(None);
        }
        let source_failed = |error| PipelineError::Callback { stage: "source", error };
        let current = match &mut self.current {
            Some(current) => current,
            None => self.current.insert((self.open)().map_err(source_failed)?),
        };
        match current.next() {
            Some(element) => element.map(Some).map_err(source_failed),
            None => {
                self.ended = true;
                self.current = None;
                Ok(None)
            }
        }
    }

    fn restart(&mut self) {
        self.current = None;
        self.ended = false;
    }
}

/// A pipeline's outputs as an item stream of elements.
struct FromPipeline<T, E> {
    /// The pipeline, until it starts.
    pipeline: Option<Pipeline<T>>,
    running: Option<PipelineIter<T>>,
    lift: LiftFn<T, E>,
    waits: Option<WaitFn>,
    /// Elements of the last output not yet given.
    queue: VecDeque<E>,
}

impl<T, E> FromPipeline<T, E> {
    /// `f`, inside `waits` when there is one.
    fn waiting<R: Send>(waits: &Option<WaitFn>, f: impl FnOnce() -> R + Send) -> R {
        let Some(waits) = waits else { return f() };
        let mut f = Some(f);
        let mut result = None;
        waits(&mut || {
            if let Some(f) = f.take() {
                result = Some(f());
            }
        });
        match (result, f) {
            (Some(result), _) => result,
            // A `waits` that did not run the wait: it runs here.
            (None, Some(f)) => f(),
            (None, None) => unreachable!("the wait ran, so it gave a result"),
        }
    }
}

impl<T: Send + 'static, E: Send> ItemStream<E> for FromPipeline<T, E> {
    fn next_item(&mut self) -> Result<Option<E>, PipelineError> {
        loop {
            if let Some(element) = self.queue.pop_front() {
                return Ok(Some(element));
            }
            let running = match (&mut self.running, self.pipeline.take()) {
                (Some(running), _) => running,
                (None, Some(pipeline)) => self.running.insert(pipeline.iter()),
                (None, None) => return Ok(None),
            };
            match Self::waiting(&self.waits, || running.next()) {
                Some(output) => (self.lift)(output?, &mut self.queue)
                    .map_err(|error| PipelineError::Callback { stage: "lift", error })?,
                None => return Ok(None),
            }
        }
    }

    fn restart(&mut self) {
        self.queue.clear();
        if let Some(running) = &mut self.running {
            Self::waiting(&self.waits, || running.restart());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(n: u64) -> Elements<u64> {
        Elements::from_source(
            Arc::new(move || Ok(Box::new((0..n).map(Ok)) as ElementIterator<u64>)),
            Cardinality::Finite(n),
        )
    }

    fn run(elements: Elements<u64>) -> Vec<u64> {
        elements.iter().collect::<Result<_, _>>().expect("no error")
    }

    #[test]
    fn stages_apply_in_order() {
        let e = numbers(10)
            .stage(ElementStage::map(|x| Ok(x * 10)))
            .stage(ElementStage::filter(|x| Ok(*x % 20 == 0)))
            .stage(ElementStage::skip(1))
            .stage(ElementStage::take(3))
            .stage(ElementStage::repeat(Some(2)));
        assert_eq!(e.cardinality(), Cardinality::Unknown);
        assert_eq!(run(e), [20, 40, 60, 20, 40, 60]);
        let e = numbers(7)
            .stage(ElementStage::batch(3, false, |v: Vec<u64>| Ok(v.iter().sum())).expect("size"))
            .stage(ElementStage::shard(2, 1).expect("shard"));
        assert_eq!(e.cardinality(), Cardinality::Finite(1));
        assert_eq!(run(e), [3 + 4 + 5]);
    }

    #[test]
    fn a_callback_error_ends_the_elements_with_it() {
        let mut it = numbers(5)
            .stage(ElementStage::map(|x| if x == 2 { Err("two".into()) } else { Ok(x) }))
            .iter();
        assert_eq!(it.next().map(Result::ok), Some(Some(0)));
        assert_eq!(it.next().map(Result::ok), Some(Some(1)));
        match it.next() {
            Some(Err(PipelineError::Callback { stage, error })) => {
                assert_eq!(stage, "map");
                assert_eq!(error.to_string(), "two");
            }
            other => panic!("expected the map's error, got {other:?}"),
        }
        assert!(it.next().is_none());
    }

    #[test]
    fn the_element_shuffle_is_the_record_shuffle() {
        // The same buffer and generator: a seed gives the same order over elements as over
        // any other items, here checked against the buffer itself, pass after pass.
        let e = numbers(20)
            .stage(ElementStage::shuffle(6, 42, true).expect("size"))
            .stage(ElementStage::repeat(Some(2)));
        let got = run(e);
        let mut buffer = super::super::stages::ShuffleBuffer::new(6, 42, true);
        let mut want = Vec::new();
        for pass in 0..2 {
            if pass > 0 {
                drop(buffer.restart());
            }
            let mut input = 0..20u64;
            loop {
                while buffer.has_room() {
                    match input.next() {
                        Some(x) => buffer.push(x),
                        None => break,
                    }
                }
                match buffer.take_random() {
                    Some(x) => want.push(x),
                    None => break,
                }
            }
        }
        assert_eq!(got, want);
    }

    /// Three files of numbered records.
    fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        use crate::record::{RecordWriter, WriterOptions};
        (0..3u32)
            .map(|f| {
                let path = dir.join(format!("part-{f}.tfrecord"));
                let mut w = RecordWriter::create(&path, WriterOptions::default()).expect("create");
                for r in 0..(5 + 4 * f) {
                    w.write_record(format!("{f}/{r}").as_bytes()).expect("write");
                }
                w.finish().expect("finish");
                path
            })
            .collect()
    }

    fn records(p: super::super::Pipeline<super::super::RecordBatch>) -> Elements<Vec<u8>> {
        Elements::from_pipeline(
            p,
            Arc::new(|batch: super::super::RecordBatch, out: &mut VecDeque<Vec<u8>>| {
                out.extend(batch.records().into_iter().map(<[u8]>::to_vec));
                Ok(())
            }),
            None,
            Cardinality::Unknown,
        )
    }

    #[test]
    fn a_repeat_of_elements_restarts_the_pipeline_as_a_repeat_of_records_would() {
        use super::super::Dataset;
        let dir = tempfile::tempdir().expect("dir");
        let files = files(dir.path());
        let shuffled = || Dataset::from_files(files.clone()).shuffle(7, 5).expect("size");
        let want: Vec<Vec<u8>> = shuffled()
            .repeat(3)
            .take(40)
            .records()
            .collect::<Result<_, _>>()
            .expect("read");
        for threads in [0, 1, 2] {
            let p = shuffled().chunks(4).expect("size").raw().threads(threads).prefetch(1);
            let got: Vec<Vec<u8>> = records(p)
                .stage(ElementStage::map(Ok))
                .stage(ElementStage::repeat(Some(3)))
                .stage(ElementStage::take(40))
                .iter()
                .collect::<Result<_, _>>()
                .expect("read");
            assert_eq!(got, want, "{threads} threads");
        }
        // A restart in the middle of the stream (a take before the repeat) starts it over too.
        let want: Vec<Vec<u8>> = shuffled()
            .take(5)
            .repeat(2)
            .records()
            .collect::<Result<_, _>>()
            .expect("read");
        for threads in [0, 2] {
            let p = shuffled().chunks(3).expect("size").raw().threads(threads);
            let got: Vec<Vec<u8>> = records(p)
                .stage(ElementStage::take(5))
                .stage(ElementStage::repeat(Some(2)))
                .iter()
                .collect::<Result<_, _>>()
                .expect("read");
            assert_eq!(got, want, "{threads} threads");
        }
    }
}
