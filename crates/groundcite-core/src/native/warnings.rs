//! What a converter reports besides claims: warnings, and the refusal
//! contract for provider-side refusals and errors.

use crate::contract::{Contract, Provenance, RefusalCode};
use crate::normalize::MatchProfile;

/// The refusal contract for provider-side refusals and errors.
pub(crate) fn refused(
    code: RefusalCode,
    provenance: Provenance,
    profile: MatchProfile,
) -> Contract {
    Contract::refused(code, provenance, profile, Vec::new())
}

// One constructor for every module that reports warnings.
pub(crate) use crate::contract::warning;
