//! The embedding model behind hybrid retrieval: `groundcite_embed`'s
//! all-MiniLM-L6-v2, seen by the index through its [`Embed`] trait.

use std::path::Path;
use std::sync::Arc;

use groundcite_index::Embed;

/// The sentence-embedding model, as the index and the ranker use it.
#[derive(Debug)]
pub struct EmbedModel(groundcite_embed::Embedder);

impl EmbedModel {
    /// The loaded model.
    pub fn inner(&self) -> &groundcite_embed::Embedder {
        &self.0
    }
}

impl Embed for EmbedModel {
    fn model_id(&self) -> &str {
        self.0.model_id()
    }

    fn dim(&self) -> usize {
        self.0.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, groundcite_index::EmbedFailure> {
        Ok(self.0.embed(texts)?)
    }
}

/// Loads the embedding model from `explicit`, else where
/// [`groundcite_embed::find_model`] looks. `Ok(None)` when no model is
/// installed (retrieval is then BM25 alone); an error when one is found but
/// cannot be loaded.
pub fn load_embedder(
    explicit: Option<&Path>,
) -> Result<Option<Arc<dyn Embed>>, groundcite_embed::EmbedError> {
    let dir = match groundcite_embed::find_model(explicit) {
        Ok(d) => d,
        Err(e) if explicit.is_none() && is_not_found(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let model = groundcite_embed::Embedder::load(&dir)?;
    Ok(Some(Arc::new(EmbedModel(model))))
}

fn is_not_found(e: &groundcite_embed::EmbedError) -> bool {
    matches!(e.kind(), groundcite_embed::EmbedErrorKind::NotFound)
}
