//! # sigecs-ggrs: sigecs worlds on GGRS
//!
//! GGRS (the Rust reimplementation of GGPO's peer-to-peer rollback networking) asks a game for
//! three things, as [`GgrsRequest`]s: save the state of a frame (with a checksum), load the
//! state of an earlier frame, and advance one frame with given inputs. [`handle_requests`]
//! fulfils them for a sigecs world that saves its state (`sigecs::state`; the build script
//! opts in with `Builder::rollback(true)`):
//!
//! - `SaveGameState` saves the world into the request's cell, with the
//!   state's checksum ([`WorldState::checksum`]). The cell's [`WorldState`] is reused: GGRS
//!   keeps one cell per frame of its prediction window, so each save copies only what changed
//!   since that cell's last save.
//! - `LoadGameState` loads the cell's state into the world (without cloning it).
//! - `AdvanceFrame` calls your function with the world and the inputs; it runs the frame
//!   (resources from the inputs, the schedule, anything else the game does).
//!
//! A session's `Config` names [`WorldState`] as its `State`. The world must be deterministic
//! (the default: see `World::set_deterministic`), and nothing outside it may change what a
//! frame does.
//!
//! ```
//! use ggrs::{Config, PredictRepeatLast, SessionBuilder};
//! use sigecs::state::WorldState;
//! use sigecs_fixtures::rollback::*;
//!
//! struct Game;
//! impl Config for Game {
//!     type Input = u8;
//!     type InputPredictor = PredictRepeatLast;
//!     type State = WorldState;
//!     type Address = std::net::SocketAddr;
//! }
//!
//! let mut world = World::new();
//! world.spawn(Body { position: Position(0.0), velocity: Velocity(1.0) });
//! // GGRS's own determinism check: every frame is rolled back and run again 7 times.
//! let mut session = SessionBuilder::<Game>::new()
//!     .with_num_players(1)?
//!     .with_check_distance(7)
//!     .start_synctest_session()?;
//! for frame in 0..60u8 {
//!     session.add_local_input(0, frame % 3)?;
//!     let requests = session.advance_frame()?;
//!     sigecs_ggrs::handle_requests(&mut world, requests, |world, inputs| {
//!         world.resource_mut::<Frame>().0 += u64::from(inputs[0].0);
//!         world.run_schedule().expect("the frame's commands apply");
//!     })?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ggrs::{Config, Frame, GameStateCell, GgrsRequest, InputStatus};
use sigecs::state::{StateError, StateModel, WorldState};
use std::ops::DerefMut;

/// Fulfils GGRS's requests, in order, on `world`: saves into and loads from the requests'
/// cells, and calls `advance` for each frame to run (see the [crate docs](crate)). Returns
/// the frames it saved with their checksums, in order (a frame saved twice, before and after
/// a rollback, appears twice: the later checksum is the one that counts).
///
/// `W` is the generated `World` (or `sigecs::World` itself), which dereferences to the
/// runtime's world. An `Err` comes from a `LoadGameState` whose cell holds no state this
/// world saved (GGRS asked for a frame it never had saved, or another world saved it); the
/// world is unchanged by that request and the ones after it are not fulfilled.
pub fn handle_requests<C, W, M>(
    world: &mut W,
    requests: Vec<GgrsRequest<C>>,
    mut advance: impl FnMut(&mut W, &[(C::Input, InputStatus)]),
) -> Result<Vec<(Frame, u64)>, StateError>
where
    C: Config<State = WorldState>,
    W: DerefMut<Target = sigecs::World<M>>,
    M: StateModel,
{
    let mut saved = Vec::new();
    for request in requests {
        match request {
            GgrsRequest::SaveGameState { cell, frame } => {
                saved.push((frame, save(world, &cell, frame)))
            }
            GgrsRequest::LoadGameState { cell, frame } => load(world, &cell, frame)?,
            GgrsRequest::AdvanceFrame { inputs } => advance(world, &inputs),
        }
    }
    Ok(saved)
}

/// Saves `world` as frame `frame` into `cell`, reusing the state the cell held; returns the
/// checksum.
pub fn save<M: StateModel>(
    world: &sigecs::World<M>,
    cell: &GameStateCell<WorldState>,
    frame: Frame,
) -> u64 {
    // Take the cell's state out (an empty one stays for a moment) to save into it in place.
    let mut state = cell
        .data()
        .map(|mut held| std::mem::take(held.as_mut_dangerous()))
        .unwrap_or_default();
    world.save_state(&mut state);
    let checksum = state.checksum().expect("a state just saved has a checksum");
    cell.save(frame, Some(state), Some(u128::from(checksum)));
    checksum
}

/// Loads the state `cell` holds (frame `frame`) into `world`.
pub fn load<M: StateModel>(
    world: &mut sigecs::World<M>,
    cell: &GameStateCell<WorldState>,
    frame: Frame,
) -> Result<(), StateError> {
    let state = cell.data().ok_or(StateError::NoFrame {
        frame: i64::from(frame),
    })?;
    world.load_state(&state)
}
