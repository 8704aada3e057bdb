//! Strict JSON schemas for GroundedAnswer per provider target, and the strict-subset lint.
