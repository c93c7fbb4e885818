//! The tick's model calls: the main call with its deadline, and the short
//! calls of step 5–6 (cognitive and emotional evaluation by the main model,
//! one question per validator) run at once under one deadline. A call that
//! fails or runs out of time becomes an `Err` with the reason: an
//! evaluation falls back to lexical similarity, a validator abstains.

use porfiry_skills::LlmError;
use porfiry_skills::cognition::tick::{Reflection, ReflectionAnswers};
use porfiry_skills::llm::ModelRequest;

use crate::cognition::limits::{MODEL_DEADLINE, REFLECT_DEADLINE};
use crate::cognition::models::Voice;

/// Asks the main model; the answer text or why there is none.
pub async fn ask_main(voice: &Voice, request: &ModelRequest) -> Result<String, String> {
    call(voice, request, MODEL_DEADLINE).await
}

/// Runs a reflection's calls at once. `validators` pairs each validator's
/// name with its client, or why none could be built.
pub async fn reflect(
    main: &Voice,
    validators: Vec<(String, Result<Voice, LlmError>)>,
    reflection: Reflection,
) -> ReflectionAnswers {
    let cognitive = async {
        match &reflection.cognitive {
            Some(request) => Some(call(main, request, REFLECT_DEADLINE).await),
            None => None,
        }
    };
    let emotional = call(main, &reflection.emotional, REFLECT_DEADLINE);
    let votes = futures::future::join_all(reflection.validators.iter().map(|(name, request)| {
        let voice = validators
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_ref().map_err(|e| e.to_string()));
        async move {
            let answer = match voice {
                Some(Ok(voice)) => call(voice, request, REFLECT_DEADLINE).await,
                Some(Err(e)) => Err(e),
                None => Err("validator not in the registry".to_owned()),
            };
            if let Err(e) = &answer {
                tracing::info!(validator = %name, error = %e, "validator abstains");
            }
            (name.clone(), answer)
        }
    }));
    let (cognitive, emotional, validators) = tokio::join!(cognitive, emotional, votes);
    ReflectionAnswers {
        cognitive,
        emotional: Some(emotional),
        validators,
    }
}

async fn call(
    voice: &Voice,
    request: &ModelRequest,
    deadline: std::time::Duration,
) -> Result<String, String> {
    match tokio::time::timeout(deadline, voice.llm.complete(request)).await {
        Ok(Ok(completion)) => {
            // What each call cost: `RUST_LOG=porfiry_agent=debug` shows it
            // (the figures in docs/benchmarks.md come from these lines).
            tracing::debug!(
                model = %voice.name,
                budget = ?request.max_tokens,
                prompt_tokens = ?completion.usage.map(|u| u.prompt_tokens),
                completion_tokens = ?completion.usage.map(|u| u.completion_tokens),
                finish_reason = ?completion.finish_reason,
                "model answered"
            );
            Ok(completion.text)
        }
        Ok(Err(e)) => Err(format!("{}: {e}", voice.name)),
        Err(_) => Err(format!(
            "{}: no answer within {} s",
            voice.name,
            deadline.as_secs()
        )),
    }
}
