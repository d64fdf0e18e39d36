//! Runs the game loop both ways (`run_schedule`, and `run_all` with `--sequential`) and
//! compares its frames with the same game written as plain Rust below: ships, bullets and a
//! rock, and a mothership from a level (a tag among its components) whose cannons follow it
//! and sink with it.

use std::process::Command;

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_game_loop"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The game without an ECS: the same rules, systems in the same order, each system's spawns
/// and despawns applied right after it. Returns the lines the example prints after its
/// schedule, up to the undeclared sets.
fn reference() -> Vec<String> {
    struct Ship {
        x: f32,
        y: f32,
        vx: f32,
        health: i32,
        burning: bool,
    }
    let dt = 0.5f32;
    let mut ships: Vec<Ship> = (0..3)
        .map(|i| Ship {
            x: 0.0,
            y: i as f32,
            vx: 2.0 * (i + 1) as f32,
            health: 100,
            burning: false,
        })
        .collect();
    let (mut cooldown, period, range) = (0u32, 4u32, 3u32);
    let mut bullets: Vec<u32> = Vec::new(); // frames left
    let (mut rock_health, mut rock_burning, mut rock_alive) = (70, false, true);
    let (mut fired, mut expired, mut destroyed) = (0, 0, 0);
    let mut lines = Vec::new();
    // The mothership: at x = 20 - 0.5 (frame + 1) after each frame's drift, cannons one unit
    // either side and half a unit up; 40 hull per thing destroyed, sunk at 0.
    let mut hull = 100;
    let mut sunk = false;
    let mut hull_log = vec![(0, 100)]; // the change filter's first run sees the spawn
    for frame in 0..14 {
        let destroyed_before = destroyed;
        for ship in &mut ships {
            ship.x += ship.vx * dt;
        }
        if cooldown == 0 {
            bullets.push(range);
            fired += 1;
            cooldown = period;
        }
        cooldown -= 1;
        for life in &mut bullets {
            *life -= 1;
        }
        expired += bullets.iter().filter(|&&l| l == 0).count();
        bullets.retain(|&l| l > 0);
        // scorch: ships cross x = 10 at different frames; the rock sits at x = 12.
        for ship in &mut ships {
            if ship.x >= 10.0 && ship.health > 0 {
                ship.health -= 10;
                if ship.health <= 50 && ship.health + 10 > 50 {
                    ship.burning = true;
                }
            }
        }
        if rock_alive && rock_health > 0 {
            rock_health -= 10;
            if rock_health <= 50 && rock_health + 10 > 50 {
                rock_burning = true; // no signature declares it: a dynamic store
            }
        }
        for ship in ships.iter_mut().filter(|s| s.burning) {
            ship.health -= 5;
        }
        if rock_alive && rock_burning {
            rock_health -= 5;
            if rock_health <= 0 {
                rock_alive = false;
                destroyed += 1;
            }
        }
        destroyed += ships.iter().filter(|s| s.burning && s.health <= 0).count();
        ships.retain(|s| !(s.burning && s.health <= 0));
        lines.push(format!(
            "frame {frame:2}: ships {} burning {} bullets {} | fired {fired} expired {expired} \
             destroyed {destroyed}",
            ships.iter().filter(|s| !s.burning).count(),
            ships.iter().filter(|s| s.burning).count(),
            bullets.len(),
        ));
        let hits = (destroyed - destroyed_before) as i32;
        if hits > 0 && !sunk {
            hull -= 40 * hits;
            if hull <= 0 {
                sunk = true;
            } else {
                hull_log.push((frame, hull));
            }
        }
        let x = 20.0 - 0.5 * (frame + 1) as f32;
        lines.push(if sunk {
            format!("frame {frame:2}: cannons sunk")
        } else {
            format!("frame {frame:2}: cannons {},5.5 {},5.5", x - 1.0, x + 1.0)
        });
    }
    // The example lists survivors in store order: `BurningShip` before `Ship` (name order).
    ships.sort_by_key(|s| !s.burning);
    for s in &ships {
        lines.push(format!(
            "ship y={}: x={} health={} burning={}",
            s.y, s.x, s.health, s.burning
        ));
    }
    lines.push(if rock_alive {
        format!("rock health={rock_health}")
    } else {
        "rock destroyed".to_string()
    });
    let log: Vec<String> = hull_log.iter().map(|(f, h)| format!("{f}:{h}")).collect();
    lines.push(format!("hull changes (frame:hull): {}", log.join(" ")));
    // ships + turret + rock + bullets + the mothership and its two cannons
    let left = ships.len() + 1 + usize::from(rock_alive) + bullets.len() + if sunk { 0 } else { 3 };
    lines.push(format!("refused commands: 0, entities left: {left}"));
    lines
}

#[test]
fn frames_match_the_plain_rust_game() {
    let out = run(&[]);
    let expected = reference();
    // The level's cannons and its tag, then the schedule, up to an empty line.
    let (level, out) = out.split_once('\n').unwrap();
    assert_eq!(level, "level: mothership with cannons at 19,5.5 21,5.5");
    let (flagship, out) = out.split_once('\n').unwrap();
    assert_eq!(flagship, "level: 1 flagship");
    let (schedule, frames) = out.split_once("\n\n").unwrap();
    assert!(
        schedule.starts_with("systems, in run order (declaration order; one declaring after/before moves just as far as they require):\n   1. movement     src/components/mod.rs:"),
        "{schedule}"
    );
    assert!(schedule.contains("\nstage 0: movement\n"), "{schedule}");
    let (lines, undeclared) = frames.split_at(frames.find("undeclared ").unwrap());
    assert_eq!(lines.lines().collect::<Vec<_>>(), expected);

    // The burning rock lived in the dynamic store of `BURNING | HEALTH | POSITION`: it moved in
    // once (Burning inserted) and was despawned there.
    assert_eq!(
        undeclared,
        "undeclared BURNING | HEALTH | POSITION: 0 entities now, 1 at most, 1 move\n\
         #[derive(Signature)]\n\
         pub struct BurningHealthPosition {\n    \
         pub burning: Burning,\n    \
         pub health: Health,\n    \
         pub position: Position,\n\
         }\n"
    );

    // Spot checks of the reference itself, worked by hand: ship 2 (3 units a frame) reaches
    // x = 12 at frame 3, catches fire at frame 7 (health 50) and burns out at frame 10; ship 0
    // (1 unit a frame) reaches x = 10 at frame 9, is scorched to 50 by frame 13, catches fire
    // and burns to 45. The rock (at x = 12 from the start) catches fire at frame 1 (health 50,
    // then 45) and burns out at frame 4. The turret fires at frames 0, 4, 8, 12; a bullet
    // lives three frames.
    assert!(expected.contains(&"ship y=0: x=14 health=45 burning=true".to_string()));
    assert!(expected[8].ends_with("fired 2 expired 1 destroyed 1"));
    assert!(expected[26].ends_with("fired 4 expired 3 destroyed 3"));
    // The third thing destroyed (frame 11) sinks the mothership: 100 - 3 x 40 < 0.
    assert_eq!(expected[21], "frame 10: cannons 13.5,5.5 15.5,5.5");
    assert_eq!(expected[23], "frame 11: cannons sunk");
    assert!(expected.contains(&"hull changes (frame:hull): 0:100 4:60 10:20".to_string()));
    assert!(
        schedule.contains("stage 8: clock (once per run)"),
        "{schedule}"
    );
    assert!(expected.contains(&"rock destroyed".to_string()));
}

#[test]
fn run_all_and_run_schedule_print_the_same_game() {
    assert_eq!(run(&["--sequential"]), run(&[]));
}
