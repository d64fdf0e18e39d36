//! Statistics of a world's stores, with two of the three efficiency measures of "The next step
//! in Entity Component Systems" (the third, parallel efficiency, is the schedule's): memory
//! efficiency, bytes of live components divided by bytes allocated for components; and cache
//! efficiency, which the source defines as how many arrays a system needs at the same time and
//! how small one item of them is ([`CacheStats`]).

use std::fmt;

/// How a signature's store lays out its components (DESIGN.md decision 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// One dense column per component.
    Columns,
    /// One array of row structs holding the hot components, and a parallel array of the cold.
    Rows,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad` so width and alignment flags apply in tables.
        f.pad(match self {
            Layout::Columns => "columns",
            Layout::Rows => "rows",
        })
    }
}

/// Statistics of one store: a declared signature's, or the dynamic store of an undeclared
/// component set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreStats {
    /// The signature's name, or the undeclared set's (`A | B`).
    pub name: &'static str,
    /// The store's layout.
    pub layout: Layout,
    /// Is it a declared signature's store (false: a dynamic store, see `World::undeclared`)?
    pub declared: bool,
    /// Live entities in the store.
    pub entities: usize,
    /// Bytes of live component values (entities × the sum of the component sizes).
    pub live_bytes: usize,
    /// Bytes allocated for components (capacity × size, padding of row structs included).
    pub component_bytes: usize,
    /// Bytes allocated in all, entity id column included.
    pub allocated_bytes: usize,
}

impl StoreStats {
    /// `live_bytes / component_bytes`; 1.0 for a store that allocated nothing.
    pub fn efficiency(&self) -> f64 {
        ratio(self.live_bytes, self.component_bytes)
    }
}

/// Statistics of every store of a world, in store id order: the declared signatures' stores,
/// then the dynamic stores of undeclared component sets. Totals over `stores` are the world's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorldStats {
    /// One entry per store, declared then dynamic (see [`StoreStats::declared`]).
    pub stores: Vec<StoreStats>,
}

impl WorldStats {
    /// The declared signatures' stores (`stores` filtered on [`StoreStats::declared`]; hidden
    /// as a duplicate of it).
    #[doc(hidden)]
    pub fn declared(&self) -> impl Iterator<Item = &StoreStats> {
        self.stores.iter().filter(|s| s.declared)
    }

    /// The dynamic stores (of undeclared component sets; hidden as a duplicate of filtering
    /// `stores` on [`StoreStats::declared`]).
    #[doc(hidden)]
    pub fn dynamic(&self) -> impl Iterator<Item = &StoreStats> {
        self.stores.iter().filter(|s| !s.declared)
    }

    /// Live entities in all stores.
    pub fn entities(&self) -> usize {
        self.stores.iter().map(|s| s.entities).sum()
    }

    /// Bytes allocated in all stores.
    pub fn allocated_bytes(&self) -> usize {
        self.stores.iter().map(|s| s.allocated_bytes).sum()
    }

    /// Memory efficiency of the whole world: live component bytes / allocated component bytes.
    pub fn efficiency(&self) -> f64 {
        ratio(
            self.stores.iter().map(|s| s.live_bytes).sum(),
            self.stores.iter().map(|s| s.component_bytes).sum(),
        )
    }
}

fn ratio(live: usize, allocated: usize) -> f64 {
    if allocated == 0 {
        1.0
    } else {
        live as f64 / allocated as f64
    }
}

impl fmt::Display for WorldStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<24} {:<8} {:>10} {:>14} {:>11}",
            "signature", "layout", "entities", "bytes", "efficiency"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, s: &StoreStats| {
            writeln!(
                f,
                "{:<24} {:<8} {:>10} {:>14} {:>10.1}%",
                s.name,
                s.layout,
                s.entities,
                s.allocated_bytes,
                100.0 * s.efficiency()
            )
        };
        for s in self.declared() {
            row(f, s)?;
        }
        let dynamic = self.dynamic().count();
        if dynamic > 0 {
            writeln!(f, "undeclared sets (dynamic stores, in the total):")?;
            for s in self.dynamic() {
                row(f, s)?;
            }
        }
        write!(
            f,
            "{:<24} {:<8} {:>10} {:>14} {:>10.1}%",
            "total",
            "",
            self.entities(),
            self.allocated_bytes(),
            100.0 * self.efficiency()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efficiency_is_live_over_allocated() {
        let s = StoreStats {
            name: "A",
            layout: Layout::Columns,
            declared: true,
            entities: 3,
            live_bytes: 30,
            component_bytes: 40,
            allocated_bytes: 56,
        };
        assert_eq!(s.efficiency(), 0.75);
        let w = WorldStats {
            stores: vec![
                s.clone(),
                StoreStats {
                    live_bytes: 10,
                    component_bytes: 10,
                    ..s.clone()
                },
                StoreStats {
                    name: "A | B",
                    declared: false,
                    live_bytes: 5,
                    component_bytes: 10,
                    ..s
                },
            ],
        };
        assert_eq!(w.efficiency(), 45.0 / 60.0);
        assert_eq!(w.entities(), 9, "the dynamic store counts");
        assert_eq!(w.allocated_bytes(), 3 * 56);
        assert_eq!(w.declared().count(), 2);
        assert_eq!(w.dynamic().map(|s| s.name).collect::<Vec<_>>(), ["A | B"]);
        let text = w.to_string();
        assert!(text.contains("     75.0%\nA "), "{text}");
        assert!(text.contains("    100.0%\nundeclared"), "{text}");
        assert!(text.contains("     50.0%\ntotal "), "{text}");
        assert!(text.ends_with("     75.0%"), "the total: {text}");
        assert!(
            text.contains("undeclared sets (dynamic stores, in the total):\nA | B "),
            "{text}"
        );
        let total = text.lines().last().unwrap();
        assert_eq!(
            total.split_whitespace().take(2).collect::<Vec<_>>(),
            ["total", "9"],
            "the total counts the dynamic store's entities: {text}"
        );
        assert_eq!(WorldStats::default().efficiency(), 1.0);
    }
}

/// Cache efficiency of one system over one store, as "The next step" defines it: the fewer
/// arrays a pass streams at once and the smaller an item of them, the better. `loaded` counts
/// the bytes per row of every array the pass streams (a whole row struct for a `rows` store),
/// `used` the bytes of the components it names; `used / loaded` is the share of each loaded
/// byte the pass needs (1 for `columns` stores).
///
/// The components counted are the system's required ones (its `&C`/`&mut C` parameters and
/// `with(..)` filters); `Option<&C>` parameters are not counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheStats {
    /// The system.
    pub system: &'static str,
    /// The store's signature.
    pub store: &'static str,
    /// Rows of the store now.
    pub rows: usize,
    /// Arrays (columns with bytes) the pass streams at once.
    pub arrays: usize,
    /// Bytes per row of those arrays.
    pub loaded: usize,
    /// Bytes per row of the components the system names.
    pub used: usize,
}

impl CacheStats {
    /// `used / loaded` (1 when nothing is loaded).
    pub fn efficiency(&self) -> f64 {
        if self.loaded == 0 {
            1.0
        } else {
            self.used as f64 / self.loaded as f64
        }
    }

    /// A table of `passes`, then their efficiency weighted by rows × bytes loaded (the share
    /// of all loaded bytes the passes use).
    pub fn table(passes: &[CacheStats]) -> String {
        use std::fmt::Write;
        let mut out = format!(
            "{:<20} {:<16} {:>8} {:>6} {:>12} {:>10} {:>10}\n",
            "system", "store", "rows", "arrays", "loaded B/row", "used B/row", "efficiency"
        );
        let (mut loaded, mut used) = (0usize, 0usize);
        for p in passes {
            let _ = writeln!(
                out,
                "{:<20} {:<16} {:>8} {:>6} {:>12} {:>10} {:>9.1}%",
                p.system,
                p.store,
                p.rows,
                p.arrays,
                p.loaded,
                p.used,
                100.0 * p.efficiency()
            );
            loaded += p.rows * p.loaded;
            used += p.rows * p.used;
        }
        let total = if loaded == 0 {
            1.0
        } else {
            used as f64 / loaded as f64
        };
        let _ = write!(
            out,
            "cache efficiency: {:.1}% of the bytes the passes stream are bytes they use",
            100.0 * total
        );
        out
    }
}
