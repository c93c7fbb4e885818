//! Embeddings from the loaded model (`Llm::embed`), for the cognitive core's
//! similarity detector and flashback choice: each text is decoded alone in a
//! small context made for the request (mean pooling over its tokens, then
//! L2-normalised), so the generation context and its KV cache — what prefix
//! reuse keeps — are not touched, and no second context holds memory between
//! requests.

use std::num::NonZeroU32;

use llama_cpp_2::context::params::{LlamaContextParams, LlamaPoolingType};
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;

/// Tokens of a text embedded: the start of a reply or a diary entry carries
/// its topic; 512 tokens keep the context (and its memory) small on a phone.
pub const EMBED_CONTEXT: u32 = 512;

/// One unit vector per text, in order.
pub(crate) fn embed(
    backend: &LlamaBackend,
    model: &LlamaModel,
    texts: &[String],
    threads: i32,
) -> Result<Vec<Vec<f32>>, String> {
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(EMBED_CONTEXT))
        .with_n_batch(EMBED_CONTEXT)
        .with_n_ubatch(EMBED_CONTEXT)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
        .with_embeddings(true)
        .with_pooling_type(LlamaPoolingType::Mean);
    let mut ctx = model
        .new_context(backend, params)
        .map_err(|e| format!("could not make an embeddings context: {e}"))?;
    let limit = EMBED_CONTEXT as usize;
    let mut out = Vec::with_capacity(texts.len());
    for text in texts {
        // Special-token text in a reply is embedded as text, not as markup.
        let mut tokens = model.vocab().tokenize(text.as_bytes(), true, false);
        tokens.truncate(limit);
        if tokens.is_empty() {
            return Err("a text to embed has no tokens".into());
        }
        let mut batch = LlamaBatch::new(tokens.len(), 1);
        for (pos, token) in tokens.iter().enumerate() {
            let pos = i32::try_from(pos).map_err(|e| e.to_string())?;
            batch
                .add(*token, pos, &[0], true)
                .map_err(|e| format!("embeddings batch: {e}"))?;
        }
        ctx.clear_kv_cache();
        ctx.decode(&mut batch)
            .map_err(|e| format!("embeddings decode failed: {e}"))?;
        let vector = ctx
            .embeddings_seq_ith(0)
            .map_err(|e| format!("no embeddings from the model: {e}"))?;
        out.push(normalised(vector));
    }
    Ok(out)
}

/// `v` scaled to length 1 (a zero vector stays zero).
fn normalised(v: &[f32]) -> Vec<f32> {
    let norm = v
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return v.to_vec();
    }
    // Narrowing back to f32 after the sum in f64 is the intent.
    #[allow(clippy::cast_possible_truncation)]
    v.iter().map(|x| (f64::from(*x) / norm) as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_out_of_unit_length() {
        let v = normalised(&[3.0, 4.0]);
        assert!(
            (v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6,
            "{v:?}"
        );
        assert_eq!(normalised(&[0.0, 0.0]), vec![0.0, 0.0]);
    }
}
