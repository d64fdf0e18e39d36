//! Applying the structural changes that systems requested through [`Commands`], in request
//! order, and reporting the ones that failed.
//!
//! [`Commands`]: crate::schedule::Commands

use super::{CommandFailure, World, WorldError};
use crate::model::WorldModel;
use crate::schedule::parts::Pending;
use crate::schedule::Command;
use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// The commands of one run that could not be applied, oldest first. Every other command of
/// the run was applied. Returned by the generated `run_*` methods of systems that take
/// `&mut Commands`, so a failure cannot go unnoticed (`Result` is `#[must_use]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandErrors(pub Vec<WorldError>);

impl fmt::Display for CommandErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = crate::plural::count(self.0.len(), "command", "commands");
        write!(f, "{count} could not be applied")?;
        for (i, e) in self.0.iter().enumerate().take(10) {
            write!(f, "\n  {}: {e}", i + 1)?;
        }
        if self.0.len() > 10 {
            write!(f, "\n  … and {} more", self.0.len() - 10)?;
        }
        Ok(())
    }
}

impl std::error::Error for CommandErrors {}

impl CommandErrors {
    /// `Ok(())` for no errors. For generated code (a frame's command errors).
    #[doc(hidden)]
    pub fn into_result(errors: Vec<WorldError>) -> Result<(), CommandErrors> {
        if errors.is_empty() {
            Ok(())
        } else {
            Err(CommandErrors(errors))
        }
    }
}

/// How many commands ahead applying a buffer asks for an entity's slots: about as many as
/// the random reads of one command's lookup take to arrive while the commands between run.
const PREFETCH_AHEAD: usize = 4;

impl<M: WorldModel> World<M> {
    /// Applies command buffers in order (each buffer's commands in request order). Reserved
    /// entities become alive first; a reserved entity whose spawn did not happen is retired.
    /// Returns the failures; everything else was applied.
    #[inline(always)]
    pub(crate) fn apply_commands(&mut self, pending: Pending) -> Vec<WorldError> {
        // Most passes request nothing and allocate no buffer: decided inline, without a call.
        if pending.0.capacity() == 0 && self.locations.entities().reserved_len() == 0 {
            // No allocation and no buffer in it (its length is at most its capacity): nothing
            // to drop, and no call to the drop of a `Vec` of buffers.
            std::mem::forget(pending);
            return Vec::new();
        }
        self.apply_requested(pending)
    }

    /// [`World::apply_commands`] of a pass that made a buffer (requested something, or
    /// split into jobs).
    #[inline(never)]
    fn apply_requested(&mut self, pending: Pending) -> Vec<WorldError> {
        if pending.is_empty() && self.locations.entities().reserved_len() == 0 {
            return Vec::new();
        }
        let start = std::time::Instant::now();
        let errors = self.apply_pending(pending);
        self.command_time += start.elapsed();
        errors
    }

    /// Applies every command, also when one of them panics (a component's `Drop`, while
    /// the world is consistent): the rest are still applied, every reservation that was not
    /// spawned is retired, and then the first panic continues. So a panic can never leave an
    /// entity alive without a row.
    #[inline(never)]
    fn apply_pending(&mut self, pending: Pending) -> Vec<WorldError> {
        let mut reserved = Vec::new();
        self.locations.flush_reserved(&mut reserved);
        let mut errors = Vec::new();
        let mut panic = None;
        let mut keep_first = |payload| {
            // The first panic is the one that continues; a later one's payload is dropped
            // (quietly: it is a user value too).
            if panic.is_none() {
                panic = Some(payload);
            } else {
                super::spawn::drop_quietly(payload);
            }
        };
        for buffer in pending.0 {
            let mut commands = buffer.into_iter();
            while let Some(command) = commands.next() {
                // The entity locations' slots are random reads: start the one of a later command
                // now, so it is in cache by the time that command runs.
                if let Some(e) = commands
                    .as_slice()
                    .get(PREFETCH_AHEAD)
                    .and_then(Command::entity)
                {
                    self.locations.prefetch(e);
                }
                // A despawn cannot fail (a dead id is no error): it needs no description.
                if let Command::Despawn(e) = command {
                    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| self.despawn(e))) {
                        keep_first(payload);
                    }
                    continue;
                }
                let request = command.request();
                let applied = catch_unwind(AssertUnwindSafe(|| self.apply_command(command)));
                match applied {
                    Ok(Ok(())) => {}
                    // These name the operation and the component already.
                    Ok(Err(
                        e @ (WorldError::UndeclaredSignature { .. }
                        | WorldError::MissingComponent { .. }),
                    )) => errors.push(e),
                    // A dead entity, an undeclared type or exhausted ids: say which command.
                    Ok(Err(error)) => errors.push(WorldError::Command(Box::new(CommandFailure {
                        request: request.to_string(),
                        error,
                    }))),
                    Err(payload) => keep_first(payload),
                }
            }
        }
        for e in reserved {
            self.locations.destroy_unplaced(e);
        }
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
        errors
    }

    fn apply_command(&mut self, command: Command) -> Result<(), WorldError> {
        let tables = self.tables;
        match command {
            Command::Despawn(entity) => {
                self.despawn(entity);
                Ok(())
            }
            Command::Spawn { entity, value } => self.spawn_erased(entity, value),
            Command::Failed { error, .. } => Err(error),
            #[cfg(feature = "transform")]
            Command::SetTransform { entity, local } => self.set_transform(entity, local),
            #[cfg(feature = "transform")]
            Command::SetParent { child, parent } => self.set_parent(child, parent),
            #[cfg(feature = "transform")]
            Command::RemoveParent(child) => self.remove_parent(child),
            Command::Send { value, type_name } => match tables.event_of_type((*value).type_id()) {
                Some(id) => {
                    let sent = self.events[id as usize].send_any(value);
                    debug_assert!(sent.is_ok(), "the queue of the event's type");
                    Ok(())
                }
                None => {
                    super::spawn::drop_quietly(value);
                    Err(WorldError::NotInWorld {
                        kind: "event",
                        type_name,
                    })
                }
            },
            Command::Insert {
                entity,
                value,
                type_name,
            } => match tables.component_of_type((*value).type_id()) {
                Some(c) => self.insert_boxed(entity, c, value),
                None => {
                    super::spawn::drop_quietly(value);
                    Err(WorldError::NotInWorld {
                        kind: "component",
                        type_name,
                    })
                }
            },
            Command::Remove {
                entity,
                type_id,
                type_name,
            } => match tables.component_of_type(type_id) {
                Some(c) => self.remove_dropping(entity, c),
                None => Err(WorldError::NotInWorld {
                    kind: "component",
                    type_name,
                }),
            },
        }
    }
}
