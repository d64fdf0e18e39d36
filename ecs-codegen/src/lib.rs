//! sigecs generator.
