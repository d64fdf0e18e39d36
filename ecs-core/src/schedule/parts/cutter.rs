//! The cutter: the rows of a pass's parts ([`SplitRows`]), how many rows a job gets
//! ([`job_rows`]), and how the parts are cut into jobs of equal work and handed out, each
//! piece once ([`Cut`], [`JobRanges`], [`Pieces`]).

use super::cost::{Weights, CHUNKS_PER_THREAD};

/// Rows of a part of a pass: a column slice, or a tuple of slices of one length, that can be
/// cut in two.
pub trait SplitRows: Sized + Send {
    /// Number of rows.
    fn len(&self) -> usize;
    /// True when there are no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Rows `..mid` and `mid..`.
    fn split_at(self, mid: usize) -> (Self, Self);
}

impl<T: Send> SplitRows for &mut [T] {
    #[inline]
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    #[inline]
    fn split_at(self, mid: usize) -> (Self, Self) {
        self.split_at_mut(mid)
    }
}

impl<T: Sync> SplitRows for &[T] {
    #[inline]
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    #[inline]
    fn split_at(self, mid: usize) -> (Self, Self) {
        <[T]>::split_at(self, mid)
    }
}

/// A column that a store may lack (an `Option<&C>` parameter over a dynamic store): no rows
/// of its own (a part's length is its first column's), cut like the others when present.
impl<S: SplitRows> SplitRows for Option<S> {
    #[inline]
    fn len(&self) -> usize {
        self.as_ref().map_or(0, S::len)
    }
    #[inline]
    fn split_at(self, mid: usize) -> (Self, Self) {
        match self {
            Some(s) => {
                let (a, b) = s.split_at(mid);
                (Some(a), Some(b))
            }
            None => (None, None),
        }
    }
}

macro_rules! tuple_split {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: SplitRows),+> SplitRows for ($($name,)+) {
            #[inline]
            fn len(&self) -> usize {
                self.0.len()
            }
            #[inline]
            fn split_at(self, mid: usize) -> (Self, Self) {
                $( let $name = self.$idx.split_at(mid); )+
                (($($name.0,)+), ($($name.1,)+))
            }
        }
    };
}

#[allow(non_snake_case)]
mod tuples {
    use super::SplitRows;
    tuple_split!(A 0);
    tuple_split!(A 0, B 1);
    tuple_split!(A 0, B 1, C 2);
    tuple_split!(A 0, B 1, C 2, D 3);
    tuple_split!(A 0, B 1, C 2, D 3, E 4);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
}

/// Rows per job for a pass over `total` rows on `threads` threads, or `None` when the pass
/// runs inline: fewer than `2 × min_chunk` rows (saturating: `usize::MAX` means never split),
/// or one thread. `min_chunk` 0 acts as 1.
///
/// Jobs are equal and never under `min_chunk` rows; when there are enough rows, their number
/// is a multiple of `threads` (up to `CHUNKS_PER_THREAD` each), so every thread gets the same
/// share: 60,000 rows with a `min_chunk` of 16,384 on 2 threads are 2 jobs of 30,000, not
/// 16,384 + 16,384 + 16,384 + 10,848 (which leaves one thread a third more work).
#[inline]
pub fn job_rows(total: usize, min_chunk: usize, threads: usize) -> Option<usize> {
    let min_chunk = min_chunk.max(1);
    // `total / 2 < min_chunk` is `total < 2 × min_chunk` without overflow.
    if total / 2 < min_chunk || threads <= 1 {
        return None;
    }
    // At least 2: every job has at least `min_chunk` rows.
    let max_jobs = total / min_chunk;
    let jobs = if max_jobs >= threads {
        threads.saturating_mul(CHUNKS_PER_THREAD.min(max_jobs / threads))
    } else {
        max_jobs
    };
    Some(total.div_ceil(jobs))
}

/// Rows per chunk for a single store of `len` rows on the current pool: `len` itself (one
/// chunk, inline) when the pass is too small to split or the pool has one thread.
#[cfg(test)]
pub(super) fn chunk_len(len: usize, min_chunk: usize) -> usize {
    // The size test first: asking rayon for its thread count is not free (and starts its
    // global pool), and most stores are too small to split anyway.
    if len / 2 < min_chunk.max(1) {
        return len.max(1);
    }
    job_rows(len, min_chunk, rayon::current_num_threads()).unwrap_or(len.max(1))
}

/// Cuts `parts` into jobs of about `rows` rows each, in order.
#[cfg(test)]
pub(super) fn jobs<P: SplitRows>(parts: impl IntoIterator<Item = P>, rows: usize) -> Vec<Vec<P>> {
    weighted_jobs(parts, rows, Weights::ROWS)
}

/// Cuts `parts` into jobs of about `rows` rows' worth of work each (rows weighed by
/// `weights`), in order.
#[cfg(test)]
pub(super) fn weighted_jobs<P: SplitRows>(
    parts: impl IntoIterator<Item = P>,
    rows: usize,
    weights: Weights<'_>,
) -> Vec<Vec<P>> {
    let mut pieces = Vec::new();
    let ends = cut(parts.into_iter().collect(), rows, weights, &mut pieces).ends;
    let mut rest = pieces.into_iter();
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let job = rest.by_ref().take(end - start).collect();
            start = end;
            job
        })
        .collect()
}

/// Cuts `parts` (a pass's parts in order) into jobs of `job_rows` rows' worth of work each,
/// a row of part `i` weighing `weights`' `i`th: the pieces go to `pieces`, and the returned
/// ranges say where each job ends in it.
pub(super) fn cut<P: SplitRows>(
    parts: Vec<P>,
    job_rows: usize,
    weights: Weights<'_>,
    pieces: &mut Vec<P>,
) -> JobRanges {
    let weight = weights.of(parts.len());
    let rows: usize = parts.iter().map(P::len).sum();
    let work = parts.iter().enumerate().fold(0u128, |work, (i, p)| {
        work.saturating_add(p.len() as u128 * weight(i) as u128)
    });
    // The share of the work `job_rows` of `rows` rows are: with even weights, `job_rows` rows.
    let job_work = work
        .saturating_mul(job_rows.max(1) as u128)
        .div_ceil(rows.max(1) as u128);
    let mut cut = Cut::new(job_work);
    for (i, part) in parts.into_iter().enumerate() {
        cut.push(pieces, part, weight(i));
    }
    cut.finish(pieces.len())
}

/// Parts cut into jobs of about `work` each, in order, as they come: the pieces go to one
/// list, and the cut keeps where each job ends in it. Only [`Cut::push`] depends on the part
/// type, so a pass compiles little of the splitting.
pub(super) struct Cut {
    /// The work of one job (a row weighs its part's weight).
    work: u128,
    /// Work the current job still has room for.
    room: u128,
    /// The end of each finished job in the list of pieces.
    ends: Vec<usize>,
}

impl Cut {
    fn new(work: u128) -> Self {
        let work = work.max(1);
        Cut {
            work,
            room: work,
            ends: Vec::new(),
        }
    }

    /// Adds `part`, whose rows weigh `weight` each, to the jobs, cut where a job is full
    /// (a job takes at least one row); empty pieces are left out.
    fn push<P: SplitRows>(&mut self, pieces: &mut Vec<P>, mut part: P, weight: u64) {
        let weight = u128::from(weight.max(1));
        while !part.is_empty() {
            let work = part.len() as u128 * weight;
            if work < self.room {
                self.room -= work;
                pieces.push(part);
                return;
            }
            // The rows nearest to filling the job: at least one, at most the part.
            let rows = ((self.room + weight / 2) / weight).clamp(1, part.len() as u128) as usize;
            let (head, tail) = part.split_at(rows);
            pieces.push(head);
            self.ends.push(pieces.len());
            self.room = self.work;
            part = tail;
        }
    }

    /// The jobs of a list of `pieces` pieces.
    fn finish(mut self, pieces: usize) -> JobRanges {
        if self.ends.last().copied().unwrap_or(0) < pieces {
            self.ends.push(pieces);
        }
        JobRanges::new(self.ends, pieces)
    }
}

/// Where each job's pieces are in the list of a split pass's pieces, and whether the job was
/// taken: each job's range is claimed once.
pub(super) struct JobRanges {
    /// The end of each job, ascending.
    ends: Vec<usize>,
    taken: Vec<std::sync::atomic::AtomicBool>,
}

impl JobRanges {
    /// Jobs ending at `ends` in a list of `pieces` pieces.
    ///
    /// # Panics
    /// When `ends` descend or pass `pieces`.
    pub(super) fn new(ends: Vec<usize>, pieces: usize) -> Self {
        assert!(
            ends.windows(2).all(|w| w[0] <= w[1]) && ends.last().is_none_or(|&e| e <= pieces),
            "job ends ascend within the pieces"
        );
        let taken = ends.iter().map(|_| Default::default()).collect();
        JobRanges { ends, taken }
    }

    /// How many jobs there are.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Do the jobs end within a list of `pieces` pieces?
    fn within(&self, pieces: usize) -> bool {
        self.ends.last().is_none_or(|&e| e <= pieces)
    }

    /// The range of job `j` the first time it is asked for; `None` after that, or when there
    /// is no job `j`. Ranges are disjoint and within the list the jobs were made for.
    fn claim(&self, j: usize) -> Option<std::ops::Range<usize>> {
        let end = *self.ends.get(j)?;
        if self.taken[j].swap(true, std::sync::atomic::Ordering::AcqRel) {
            return None;
        }
        let start = if j == 0 { 0 } else { self.ends[j - 1] };
        Some(start..end)
    }
}

/// The pieces of a split pass, each moved out once, by the job that holds it. One list and
/// job ranges rather than a list per job: a pass instantiates no lock, vector of vectors or
/// iterator over its part type (at 512 systems those were a fifth of the crate's code).
pub(super) struct Pieces<P> {
    /// Owns the buffer with its length set to 0: the pieces belong to the jobs, and dropping
    /// the vector frees the buffer without dropping any (a piece a panic left untaken leaks).
    buffer: Vec<P>,
    pub(super) jobs: JobRanges,
}

// SAFETY: a shared `Pieces` only hands out pieces by value, each once (see `Pieces::take`), so
// sharing it between threads moves pieces between threads, which `P: Send` allows.
unsafe impl<P: Send> Sync for Pieces<P> {}

impl<P> Pieces<P> {
    /// The pieces of `buffer`, in `jobs` (made for a list of `buffer.len()` pieces).
    ///
    /// # Panics
    /// When `jobs` were made for a longer list.
    pub(super) fn new(mut buffer: Vec<P>, jobs: JobRanges) -> Self {
        assert!(jobs.within(buffer.len()), "jobs within the pieces");
        // SAFETY: shortening a vector only forgets its elements; they stay initialized in the
        // buffer, and `take` moves each out once.
        unsafe { buffer.set_len(0) };
        Pieces { buffer, jobs }
    }

    /// Hands `f` the pieces of job `j` in order, moved out; nothing for a job already taken
    /// or out of range.
    pub(super) fn take(&self, j: usize, f: &mut impl FnMut(P)) {
        let Some(range) = self.jobs.claim(j) else {
            return;
        };
        let base = self.buffer.as_ptr();
        for i in range {
            // SAFETY: job ranges end within the pieces `buffer` held (checked in `new`), so
            // `base + i` is an initialized piece in the buffer, which lives as long as `self`.
            // Ranges are disjoint and each is claimed once, so no piece is read twice:
            // reading it moves it out.
            f(unsafe { base.add(i).read() });
        }
    }
}
