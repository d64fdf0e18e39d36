//! A two-player game on GGRS rollback networking: the world ([`new_world`]), one frame of the
//! game ([`run_frame`]), the scripted inputs both players play ([`input`]), GGRS's
//! configuration ([`GameConfig`]) and a UDP socket bound to 127.0.0.1 ([`LoopbackSocket`]).
//! `main.rs` runs one peer; the tests run GGRS's `SyncTestSession` over it and two peers in
//! one process over a lossy socket.

pub mod components;

use components::*;
use ggrs::{Config, Message, NonBlockingSocket, PredictRepeatLast};
use sigecs::state::WorldState;
use sigecs::Entity;
use std::net::{SocketAddr, UdpSocket};

include!(concat!(env!("OUT_DIR"), "/world.rs"));

/// GGRS's configuration for the game: a byte of input per player, the world's state.
pub struct GameConfig;

impl Config for GameConfig {
    type Input = u8;
    type InputPredictor = PredictRepeatLast;
    type State = WorldState;
    type Address = SocketAddr;
}

/// The arena at frame 0: two ships with a turret each, facing each other.
pub fn new_world() -> World {
    let mut world = World::new();
    for (player, x) in [(0u8, -50.0), (1, 50.0)] {
        let ship = world.spawn(Ship {
            position: Position { x, y: 0.0 },
            velocity: Velocity::default(),
            player: Player(player),
            cooldown: Cooldown(0),
            sprite: Sprite(u32::from(player) + 1),
        });
        let gun = world.spawn(Gun {
            turret: Turret { angle: 0.0 },
            player: Player(player),
        });
        world.set_parent(gun, ship).expect("both are alive");
    }
    world
}

/// Runs one frame with the players' inputs: a power-up every 90 frames, the schedule, then
/// the collisions of projectiles with the other player's ship (hits are events the next
/// frame's `score` reads).
pub fn run_frame(world: &mut World, inputs: [u8; 2]) {
    world.resource_mut::<Inputs>().0 = inputs;
    let frame = {
        let count = world.resource_mut::<FrameCount>();
        count.0 += 1;
        count.0
    };
    if frame % 90 == 0 {
        let lucky = (frame / 90 % 2) as u8;
        let ship = world
            .query::<(Entity, &Player, &Cooldown)>()
            .find(|(_, p, _)| p.0 == lucky)
            .map(|(e, _, _)| e);
        if let Some(ship) = ship {
            world.insert(ship, PowerUp(60)).expect("the ship is alive");
        }
    }
    // A command can fail only on an entity gone in the same stage (a stun on a despawned
    // ship): ships are never despawned, so nothing fails; the result is the same either way.
    let _ = world.run_schedule();
    let ships: Vec<(Entity, u8, Position)> = world
        .query::<(Entity, &Player, &Position, &Cooldown)>()
        .map(|(e, p, pos, _)| (e, p.0, *pos))
        .collect();
    let shots: Vec<(Entity, u8, Position)> = world
        .query::<(Entity, &Projectile, &Position)>()
        .map(|(e, p, pos)| (e, p.owner, *pos))
        .collect();
    for (shot, owner, at) in shots {
        let hit = ships.iter().find(|(_, player, pos)| {
            *player != owner && (pos.x - at.x).powi(2) + (pos.y - at.y).powi(2) < 16.0
        });
        if let Some(&(target, _, _)) = hit {
            world.despawn(shot);
            world.send_event(Hit { target, by: owner });
        }
    }
}

/// The scripted input of `player` at `frame`: a deterministic pattern that steers, turns and
/// fires, changing every few frames.
pub fn input(player: usize, frame: i32) -> u8 {
    let mut x = (frame as u64 / 6).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (player as u64 + 1);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    (x & 0x3F) as u8
}

/// A non-blocking UDP socket for GGRS bound to 127.0.0.1 (GGRS's own binds every interface).
pub struct LoopbackSocket {
    socket: UdpSocket,
    buffer: Vec<u8>,
}

impl LoopbackSocket {
    /// Binds 127.0.0.1:`port` (0: a free port).
    pub fn bind(port: u16) -> std::io::Result<Self> {
        let socket = UdpSocket::bind(("127.0.0.1", port))?;
        socket.set_nonblocking(true)?;
        Ok(LoopbackSocket {
            socket,
            buffer: vec![0; 4096],
        })
    }

    /// The address it is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.socket
            .local_addr()
            .expect("a bound socket has an address")
    }
}

impl NonBlockingSocket<SocketAddr> for LoopbackSocket {
    fn send_to(&mut self, msg: &Message, addr: &SocketAddr) {
        let bytes = bincode::serialize(msg).expect("GGRS messages serialize");
        // UDP may lose packets; GGRS resends what matters.
        let _ = self.socket.send_to(&bytes, addr);
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
        let mut received = Vec::new();
        while let Ok((n, from)) = self.socket.recv_from(&mut self.buffer) {
            if let Ok(msg) = bincode::deserialize(&self.buffer[..n]) {
                received.push((from, msg));
            }
        }
        received
    }
}
