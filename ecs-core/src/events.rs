//! Events: values a system sends to later systems (or to the next frame), in a defined order.
//!
//! An event type is declared with `#[derive(Event)]`. A system sends one through
//! [`Commands::send`](crate::Commands::send): like every command it is applied at the end of
//! the system's stage, in row order, so the order of events is the same on any thread count and
//! under `run_all` and `run_schedule`. Code outside systems sends with
//! [`World::send_event`](crate::World::send_event).
//!
//! A system reads events with an `&EventReader<E>` parameter: it sees every event of type `E`
//! that it has not seen yet, oldest first, each once. A system with no component parameter
//! reads them once per call; the world keeps a cursor per reading system.
//!
//! **Lifetime.** A frame is one `run_all` or `run_schedule`. An event sent during frame N (or
//! between frames N − 1 and N) is kept until frame N + 2 starts: systems that run after its
//! sender in frame N read it then, the ones that run before it read it in frame N + 1. A
//! reading system that does not run for two frames misses what was sent in between (the
//! queue does not grow without bound). Running systems one by one (`run_<system>`) does not
//! start a frame: call [`World::update_events`](crate::World::update_events) between frames.

use std::any::Any;
use std::fmt;

/// A value a system sends to the systems that read it (implemented by `#[derive(Event)]`).
pub trait Event: Send + Sync + 'static {}

/// The queue of one event type: every event of the current and the previous frame, each with
/// a sequence number (its position among all events of the type ever sent).
pub struct Events<E> {
    events: Vec<E>,
    /// The sequence number of `events[0]`.
    first: u64,
    /// The sequence number of the current frame's first event.
    frame: u64,
}

impl<E> Default for Events<E> {
    fn default() -> Self {
        Events {
            events: Vec::new(),
            first: 0,
            frame: 0,
        }
    }
}

impl<E> fmt::Debug for Events<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Events")
            .field("len", &self.events.len())
            .field("first", &self.first)
            .field("frame", &self.frame)
            .finish()
    }
}

impl<E> Events<E> {
    /// Appends an event.
    pub(crate) fn send(&mut self, event: E) {
        self.events.push(event);
    }

    /// The sequence number the next event will get: a reader's cursor after reading all
    /// (the passes' readers keep their cursors; hidden, as a user reads with `EventReader`).
    #[doc(hidden)]
    pub fn end(&self) -> u64 {
        self.first + self.events.len() as u64
    }

    /// Every event kept (the previous frame's and the current one's), oldest first.
    pub fn iter(&self) -> std::slice::Iter<'_, E> {
        self.events.iter()
    }

    /// The events kept.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// True when no event is kept.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Starts a frame: the previous frame's events are dropped, the current one's become the
    /// previous frame's. The frame moves on before anything is dropped: a panicking `Drop`
    /// leaves the queue consistent, the other old events still dropped (while unwinding).
    pub(crate) fn update(&mut self) {
        let old = (self.frame - self.first) as usize;
        let end = self.end();
        self.first = self.frame;
        self.frame = end;
        self.events.drain(..old);
    }

    /// A reader of the events from sequence number `cursor` on.
    pub(crate) fn reader(&self, cursor: u64) -> EventReader<'_, E> {
        let skip = cursor
            .saturating_sub(self.first)
            .min(self.events.len() as u64) as usize;
        EventReader {
            events: &self.events[skip..],
        }
    }
}

/// Copying a queue for world states (`crate::state`).
impl<E: Clone> Events<E> {
    /// Makes this queue a copy of `other`, reusing its allocation (`clone_from` of each event).
    pub(crate) fn clone_from_queue(&mut self, other: &Self) {
        self.events.clone_from(&other.events);
        self.first = other.first;
        self.frame = other.frame;
    }

    /// A copy of the queue.
    pub(crate) fn cloned_queue(&self) -> Self {
        Events {
            events: self.events.clone(),
            first: self.first,
            frame: self.frame,
        }
    }
}

impl<E> Events<E> {
    /// The sequence numbers of the oldest event kept and of the current frame's first: with
    /// the events, what a checksum covers.
    pub(crate) fn sequence(&self) -> (u64, u64) {
        (self.first, self.frame)
    }
}

/// The events a system has not read yet, oldest first (an `&EventReader<E>` parameter).
pub struct EventReader<'a, E> {
    events: &'a [E],
}

impl<E> fmt::Debug for EventReader<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventReader")
            .field("len", &self.events.len())
            .finish()
    }
}

impl<'a, E> EventReader<'a, E> {
    /// The unread events, oldest first.
    pub fn iter(&self) -> std::slice::Iter<'a, E> {
        self.events.iter()
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

impl<'a, E> IntoIterator for &EventReader<'a, E> {
    type Item = &'a E;
    type IntoIter = std::slice::Iter<'a, E>;
    fn into_iter(self) -> Self::IntoIter {
        self.events.iter()
    }
}

/// An event queue whose type is erased: what the world keeps per declared event type.
pub(crate) trait AnyEvents: Send + Sync {
    /// Appends a boxed event of this queue's type; gives it back if it is of another type.
    fn send_any(&mut self, event: Box<dyn Any + Send>) -> Result<(), Box<dyn Any + Send>>;
    /// [`Events::update`].
    fn update(&mut self);
    /// The queue, for a typed view.
    fn as_any(&self) -> &dyn Any;
    /// The queue, for a typed view.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<E: Event> AnyEvents for Events<E> {
    fn send_any(&mut self, event: Box<dyn Any + Send>) -> Result<(), Box<dyn Any + Send>> {
        let event = event.downcast::<E>()?;
        self.send(*event);
        Ok(())
    }
    fn update(&mut self) {
        Events::update(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The typed queue of event type `E` among `queues`.
///
/// # Panics
/// When queue `id` is not of type `E` (a model whose tables disagree with its types).
pub(crate) fn typed<E: Event>(queues: &[Box<dyn AnyEvents>], id: u32) -> &Events<E> {
    queues[id as usize]
        .as_any()
        .downcast_ref()
        .expect("the event queue of the event's id")
}

/// [`typed`], mutable.
pub(crate) fn typed_mut<E: Event>(queues: &mut [Box<dyn AnyEvents>], id: u32) -> &mut Events<E> {
    queues[id as usize]
        .as_any_mut()
        .downcast_mut()
        .expect("the event queue of the event's id")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_live_for_the_frame_they_are_sent_in_and_the_next() {
        let mut q = Events::<u32>::default();
        q.send(1);
        q.send(2);
        let mut cursor = 0;
        // A reader reads each event once.
        assert_eq!(q.reader(cursor).iter().copied().collect::<Vec<_>>(), [1, 2]);
        cursor = q.end();
        assert!(q.reader(cursor).is_empty());
        q.update(); // frame 1: 1 and 2 are the previous frame's
        q.send(3);
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(q.reader(cursor).iter().copied().collect::<Vec<_>>(), [3]);
        // A reader that had read nothing still finds all three.
        assert_eq!(q.reader(0).len(), 3);
        q.update(); // frame 2: 1 and 2 are gone
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), [3]);
        assert_eq!(q.reader(0).iter().copied().collect::<Vec<_>>(), [3]);
        assert_eq!(q.end(), 3);
        q.update();
        q.update();
        assert!(q.is_empty() && q.reader(0).is_empty());
        q.send(4);
        assert_eq!((q.end(), q.reader(3).len()), (4, 1));
    }

    /// An event that counts its drops and panics when dropped if armed.
    struct Loud<'a> {
        armed: bool,
        drops: &'a std::cell::Cell<usize>,
    }
    impl Drop for Loud<'_> {
        fn drop(&mut self) {
            self.drops.set(self.drops.get() + 1);
            if self.armed && !std::thread::panicking() {
                panic!("armed event dropped");
            }
        }
    }

    #[test]
    fn a_panicking_event_drop_leaves_the_queue_consistent_and_drops_each_event_once() {
        use std::panic::{catch_unwind, AssertUnwindSafe};
        let drops = std::cell::Cell::new(0);
        let loud = |armed| Loud {
            armed,
            drops: &drops,
        };
        let mut q = Events::default();
        q.send(loud(true));
        q.send(loud(false));
        q.update(); // frame 1: both are the previous frame's
        q.send(loud(false));
        let cursor = q.end();
        let r = catch_unwind(AssertUnwindSafe(|| q.update()));
        assert!(r.is_err(), "the armed event's panic continues");
        assert_eq!(
            drops.get(),
            2,
            "both old events dropped, the second while unwinding"
        );
        // The frame moved on all the same: the third event is the previous frame's now.
        assert_eq!((q.len(), q.end(), q.reader(0).len()), (1, 3, 1));
        assert!(q.reader(cursor).is_empty());
        q.send(loud(false));
        q.update();
        assert_eq!(drops.get(), 3);
        assert_eq!((q.len(), q.end()), (1, 4));
        q.update();
        q.update();
        assert_eq!(drops.get(), 4, "every event dropped exactly once");
        assert!(q.is_empty());
        assert_eq!(q.end(), 4);
    }

    #[derive(Debug, PartialEq)]
    struct Hit(u8);
    impl Event for Hit {}

    #[test]
    fn erased_queues_take_only_their_type() {
        let info = crate::__private::EventInfo::of::<Hit>("Hit");
        let mut queues = vec![(info.queue)()];
        assert!(queues[0].send_any(Box::new(Hit(1))).is_ok());
        assert!(queues[0].send_any(Box::new(7u8)).is_err());
        queues[0].update();
        typed_mut::<Hit>(&mut queues, 0).send(Hit(2));
        assert_eq!(
            typed::<Hit>(&queues, 0).iter().collect::<Vec<_>>(),
            [&Hit(1), &Hit(2)]
        );
        assert_eq!((info.type_id)(), std::any::TypeId::of::<Hit>());
    }
}
