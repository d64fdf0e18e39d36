//! Two GGRS peers in one process over UDP on 127.0.0.1, each behind a socket that delays
//! packets (0 to 30 ms) and drops one in twenty: one peer's world runs on a rayon pool of one
//! thread, the other's on two. 1,000 frames with GGRS's desync detection on (checksums
//! exchanged every 10 frames): no desync, and both end in the same state. Bounded: it fails
//! past 30 s.

use ggrs::{
    DesyncDetection, GgrsError, GgrsEvent, Message, NonBlockingSocket, P2PSession, PlayerType,
    SessionBuilder, SessionState,
};
use rollback::{input, new_world, run_frame, GameConfig, LoopbackSocket, World};
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const FRAMES: i32 = 1_000;

/// A socket that holds each packet back for a while and loses some, deterministically.
struct LossySocket {
    inner: LoopbackSocket,
    /// Packets waiting to be sent: when, to whom, what.
    held: VecDeque<(Instant, SocketAddr, Message)>,
    rng: u64,
    /// Packets lost so far, shared with the test.
    dropped: Arc<AtomicUsize>,
}

impl LossySocket {
    fn new(inner: LoopbackSocket, seed: u64, dropped: Arc<AtomicUsize>) -> Self {
        LossySocket {
            inner,
            held: VecDeque::new(),
            rng: seed,
            dropped,
        }
    }

    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// Sends the held packets whose time has come.
    fn release(&mut self) {
        let now = Instant::now();
        let mut later = VecDeque::new();
        while let Some((at, to, msg)) = self.held.pop_front() {
            if at <= now {
                self.inner.send_to(&msg, &to);
            } else {
                later.push_back((at, to, msg));
            }
        }
        self.held = later;
    }
}

impl NonBlockingSocket<SocketAddr> for LossySocket {
    fn send_to(&mut self, msg: &Message, addr: &SocketAddr) {
        if self.next().is_multiple_of(20) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        } else {
            let delay = Duration::from_millis(self.next() % 31);
            self.held
                .push_back((Instant::now() + delay, *addr, msg.clone()));
        }
        self.release();
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
        self.release();
        self.inner.receive_all_messages()
    }
}

/// One peer: its session, world, pool and the checksums of the frames it saved.
struct Peer {
    me: usize,
    session: P2PSession<GameConfig>,
    world: World,
    pool: rayon::ThreadPool,
    checksums: BTreeMap<i32, u64>,
}

impl Peer {
    /// Polls the network and, when it may, runs one frame. Panics on a desync.
    fn step(&mut self) {
        self.session.poll_remote_clients();
        for event in self.session.events() {
            if let GgrsEvent::DesyncDetected { frame, .. } = event {
                panic!("peer {} detected a desync at frame {frame}", self.me);
            }
        }
        if self.session.current_state() != SessionState::Running {
            return;
        }
        let frame = self.session.current_frame();
        if self.session.confirmed_frame() >= FRAMES && frame > FRAMES + 16 {
            return;
        }
        self.session
            .add_local_input(self.me, input(self.me, frame))
            .unwrap();
        match self.session.advance_frame() {
            Ok(requests) => {
                let world = &mut self.world;
                let saved = self.pool.install(|| {
                    sigecs_ggrs::handle_requests(world, requests, |w, inputs| {
                        run_frame(w, [inputs[0].0, inputs[1].0])
                    })
                    .unwrap()
                });
                self.checksums.extend(saved);
            }
            Err(GgrsError::PredictionThreshold) => {}
            Err(e) => panic!("peer {}: {e}", self.me),
        }
    }

    fn done(&self) -> bool {
        self.session.confirmed_frame() >= FRAMES && self.session.current_frame() > FRAMES
    }
}

fn peer(me: usize, socket: LossySocket, remote: SocketAddr, threads: usize) -> Peer {
    let session = SessionBuilder::<GameConfig>::new()
        .with_num_players(2)
        .unwrap()
        .with_input_delay(2)
        .with_max_prediction_window(8)
        .with_desync_detection_mode(DesyncDetection::On { interval: 10 })
        .add_player(PlayerType::Local, me)
        .unwrap()
        .add_player(PlayerType::Remote(remote), 1 - me)
        .unwrap()
        .start_p2p_session(socket)
        .unwrap();
    Peer {
        me,
        session,
        world: new_world(),
        pool: rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap(),
        checksums: BTreeMap::new(),
    }
}

#[test]
fn two_peers_over_a_lossy_network_stay_in_sync() {
    let (sa, sb) = (
        LoopbackSocket::bind(0).unwrap(),
        LoopbackSocket::bind(0).unwrap(),
    );
    let (aa, ab) = (sa.local_addr(), sb.local_addr());
    let dropped = Arc::new(AtomicUsize::new(0));
    let mut a = peer(
        0,
        LossySocket::new(sa, 0x1234_5678_9ABC_DEF1, dropped.clone()),
        ab,
        1,
    );
    let mut b = peer(
        1,
        LossySocket::new(sb, 0x0FED_CBA9_8765_4321, dropped.clone()),
        aa,
        2,
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(a.done() && b.done()) {
        assert!(
            Instant::now() < deadline,
            "1,000 frames within 30 s: at {} and {}",
            a.session.current_frame(),
            b.session.current_frame()
        );
        a.step();
        b.step();
        std::thread::sleep(Duration::from_micros(200));
    }
    // Frame FRAMES is confirmed on both: its state is final, and the same.
    assert_eq!(a.checksums[&FRAMES], b.checksums[&FRAMES]);
    assert!(
        dropped.load(Ordering::Relaxed) > 0,
        "the network lost packets"
    );
    for p in [&a, &b] {
        assert_eq!(p.world.check_invariants(), Ok(()));
        let scores = p.world.resource::<rollback::components::Scores>().0;
        assert!(scores.iter().sum::<u32>() > 0, "hits scored: {scores:?}");
    }
}
