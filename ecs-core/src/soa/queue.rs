//! The [`DestroyQueue`] that connects a manager to its destroy hook (the classic SoA manager's immediate
//! clean-up).

use std::mem;
use std::sync::{Arc, Mutex, PoisonError};

use crate::entity::Entity;

/// Entities destroyed in an [`EntityManager`](crate::entity::EntityManager) whose components a
/// manager should drop, shared between the manager and its destroy hook (see
/// a manager's `register_destroy_hook`).
/// Cloning gives another handle to the same queue.
#[derive(Clone, Debug, Default)]
pub struct DestroyQueue(pub(super) Arc<Mutex<Vec<Entity>>>);

impl DestroyQueue {
    /// Queues `entity`.
    pub fn push(&self, entity: Entity) {
        self.lock().push(entity);
    }

    /// Number of queued entities.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Moves the queued entities into `out` (which should be empty), emptying the queue.
    pub(super) fn swap_into(&self, out: &mut Vec<Entity>) {
        mem::swap(&mut *self.lock(), out);
    }

    /// Puts `entities` back at the front of the queue, ahead of anything queued since they were
    /// taken out, so they are processed first and in their original order.
    pub(super) fn requeue_front(&self, entities: &[Entity]) {
        self.lock().splice(0..0, entities.iter().copied());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entity>> {
        // A panic while the lock is held cannot leave the Vec inconsistent (push, swap, splice).
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
