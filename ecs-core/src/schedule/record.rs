//! The time of each store's share of a pass, for simulating schedules this machine cannot
//! run (a task graph by store, many cores): [`recording`] runs a closure and returns, in
//! order, every part (one store's rows of one pass) that ran inline on the calling thread,
//! with its rows and how long it took.
//!
//! Behind the `record` feature: the runner reads the clock after each inline part only when it
//! is built with it, so a build without it pays nothing per store.

use std::cell::RefCell;
use std::time::{Duration, Instant};

/// One part of a pass as it ran inline: its store's rows, and the time from the end of the
/// previous part (or the start of the recording) to its end, so the pass's own set-up counts
/// with its first part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartTime {
    /// Rows of the part (0 for a store the pass visits that was empty).
    pub rows: usize,
    /// Its time.
    pub time: Duration,
}

/// A recording on this thread: the parts so far and the clock at the end of the last.
struct Recording {
    parts: Vec<PartTime>,
    mark: Instant,
}

thread_local! {
    static RECORDING: RefCell<Option<Recording>> = const { RefCell::new(None) };
}

/// Runs `f` and returns its result with the parts of passes that ran inline on this thread
/// meanwhile, in the order they ran. Parts of a pass split across rayon's pool run on other
/// threads and are not recorded: record on a one-thread pool to see every part. A recording
/// inside `f` takes the parts that run during it; the outer one goes on after it.
pub fn recording<R>(f: impl FnOnce() -> R) -> (R, Vec<PartTime>) {
    let outer = RECORDING.with(|r| {
        r.borrow_mut().replace(Recording {
            parts: Vec::new(),
            mark: Instant::now(),
        })
    });
    // Restores the outer recording even when `f` unwinds.
    struct Restore(Option<Option<Recording>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                RECORDING.with(|r| *r.borrow_mut() = outer);
            }
        }
    }
    let mut restore = Restore(Some(outer));
    let result = f();
    let mut outer = restore.0.take().expect("restored once");
    if let Some(outer) = outer.as_mut() {
        // The outer recording's next part starts where this one ended.
        outer.mark = Instant::now();
    }
    let inner = RECORDING.with(|r| std::mem::replace(&mut *r.borrow_mut(), outer));
    let parts = inner.map_or_else(Vec::new, |inner| inner.parts);
    (result, parts)
}

/// A part of `rows` rows just ran inline on this thread: records it if a recording is on.
#[inline]
pub(crate) fn part_done(rows: usize) {
    RECORDING.with(|r| {
        if let Some(recording) = r.borrow_mut().as_mut() {
            let now = Instant::now();
            recording.parts.push(PartTime {
                rows,
                time: now - recording.mark,
            });
            recording.mark = now;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_parts_in_order_only_while_recording() {
        part_done(7);
        let ((), parts) = recording(|| {
            part_done(3);
            std::thread::sleep(Duration::from_millis(2));
            part_done(0);
        });
        assert_eq!(parts.iter().map(|p| p.rows).collect::<Vec<_>>(), [3, 0]);
        assert!(parts[1].time >= Duration::from_millis(2), "{parts:?}");
        let ((), none) = recording(|| ());
        assert!(none.is_empty());
    }

    #[test]
    fn a_nested_recording_takes_its_own_parts() {
        let (inner, outer) = recording(|| {
            part_done(1);
            let ((), inner) = recording(|| part_done(2));
            part_done(3);
            inner
        });
        assert_eq!(inner.iter().map(|p| p.rows).collect::<Vec<_>>(), [2]);
        assert_eq!(outer.iter().map(|p| p.rows).collect::<Vec<_>>(), [1, 3]);
    }

    #[test]
    fn a_panic_inside_ends_the_recording() {
        let caught = std::panic::catch_unwind(|| recording(|| panic!("inside")));
        assert!(caught.is_err());
        part_done(5);
        let ((), parts) = recording(|| part_done(6));
        assert_eq!(parts.iter().map(|p| p.rows).collect::<Vec<_>>(), [6]);
    }
}
