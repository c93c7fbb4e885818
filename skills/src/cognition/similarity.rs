//! How alike two texts are, for the stagnation detectors and the flashback
//! choice (seed 003: "Высокое сходство эмбеддингов между текущими и
//! предыдущими итерациями"): the cosine of their embeddings where the model's
//! backend offers embeddings, else the word overlap of
//! [`lexical_similarity`](crate::cognition::reflex::lexical_similarity).

use crate::cognition::reflex::lexical_similarity;

/// Vectors longer than this are not kept: the largest embedding models in
/// use give 4,096 dimensions; twice that bounds what a broken server can
/// make the detectors hold per remembered tick.
pub const MAX_EMBEDDING_DIMS: usize = 8_192;

/// The cosine of two embeddings, clamped to 0 ..= 1 (opposite directions
/// count as unrelated); `None` when they cannot be compared: different or
/// zero lengths, a zero vector, or a value that is not finite.
pub fn cosine(a: &[f32], b: &[f32]) -> Option<f64> {
    if a.is_empty() || a.len() != b.len() {
        return None;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let denom = (na * nb).sqrt();
    if !denom.is_finite() || denom == 0.0 || !dot.is_finite() {
        return None;
    }
    Some((dot / denom).clamp(0.0, 1.0))
}

/// An embedding fit to keep: not empty, not longer than
/// [`MAX_EMBEDDING_DIMS`], every value finite.
pub fn usable(v: &[f32]) -> bool {
    !v.is_empty() && v.len() <= MAX_EMBEDDING_DIMS && v.iter().all(|x| x.is_finite())
}

/// How two texts compare: by embeddings when both have a comparable one
/// (`semantic`), else by words.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Likeness {
    /// 0 (unrelated) ..= 1 (the same).
    pub value: f64,
    /// Whether embeddings gave it (else word overlap).
    pub semantic: bool,
}

/// `a` and `b` compared by their embeddings where both have one that
/// compares, else by their words.
pub fn likeness(a: &str, a_vec: Option<&[f32]>, b: &str, b_vec: Option<&[f32]>) -> Likeness {
    if let (Some(x), Some(y)) = (a_vec, b_vec)
        && let Some(value) = cosine(x, y)
    {
        return Likeness {
            value,
            semantic: true,
        };
    }
    Likeness {
        value: lexical_similarity(a, b),
        semantic: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_known_vectors() {
        assert_eq!(cosine(&[1.0, 0.0], &[1.0, 0.0]), Some(1.0));
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 2.0]), Some(0.0));
        let c = cosine(&[1.0, 1.0], &[1.0, 0.0]).unwrap();
        assert!((c - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-9, "{c}");
        // Opposite directions are unrelated, not negative.
        assert_eq!(cosine(&[1.0, 0.0], &[-1.0, 0.0]), Some(0.0));
    }

    #[test]
    fn vectors_that_do_not_compare_give_none() {
        assert_eq!(cosine(&[], &[]), None);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), None);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), None);
        assert_eq!(cosine(&[f32::NAN, 1.0], &[1.0, 0.0]), None);
        assert_eq!(
            cosine(&[f32::MAX, f32::MAX], &[f32::MAX, f32::MAX]),
            Some(1.0)
        );
    }

    #[test]
    fn only_bounded_finite_vectors_are_kept() {
        assert!(usable(&[0.1, 0.2]));
        assert!(!usable(&[]));
        assert!(!usable(&[f32::INFINITY]));
        assert!(!usable(&vec![0.1; MAX_EMBEDDING_DIMS + 1]));
        assert!(usable(&vec![0.1; MAX_EMBEDDING_DIMS]));
    }

    #[test]
    fn likeness_takes_embeddings_when_both_have_one_else_words() {
        // Different words, the same meaning by their vectors.
        let l = likeness(
            "the cat sat",
            Some(&[1.0, 0.0]),
            "a feline rested",
            Some(&[0.9, 0.1]),
        );
        assert!(l.semantic && l.value > 0.99, "{l:?}");
        // Only one vector: words decide (no shared word here).
        let l = likeness("the cat sat", Some(&[1.0, 0.0]), "a feline rested", None);
        assert_eq!(
            l,
            Likeness {
                value: 0.0,
                semantic: false
            }
        );
        // Vectors of different models (lengths) do not compare: words decide.
        let l = likeness("same words", Some(&[1.0]), "same words", Some(&[1.0, 0.0]));
        assert_eq!(
            l,
            Likeness {
                value: 1.0,
                semantic: false
            }
        );
    }
}
