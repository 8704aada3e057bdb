//! What a converter reports besides claims: warnings, and the refusal
//! contract for provider-side refusals and errors.

use crate::contract::{Contract, Provenance, RefusalCode, Warning, WarningCode};
use crate::normalize::MatchProfile;

/// The refusal contract for provider-side refusals and errors.
pub(crate) fn refused(
    code: RefusalCode,
    provenance: Provenance,
    profile: MatchProfile,
) -> Contract {
    Contract::refused(code, provenance, profile, Vec::new())
}

/// A warning, with the claim, citation and chunk it is about.
pub(crate) fn warning(
    code: WarningCode,
    claim_index: Option<usize>,
    citation_index: Option<usize>,
    chunk_id: Option<&str>,
    message: String,
) -> Warning {
    Warning {
        code,
        claim_index,
        citation_index,
        chunk_id: chunk_id.map(str::to_string),
        message,
    }
}
