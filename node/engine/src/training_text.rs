//! The text a model is trained on, in the very format it is prompted in:
//! a request's messages through the model's chat template (the one the
//! engine would choose, flag included), then the wanted reply closed as the
//! template closes an answer. What `porfiry model teach` tokenises.

use std::path::Path;

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;

use crate::actor::backend;
use crate::chat_template::ChatTemplate;
use crate::engine::EngineError;
use crate::template_choice::choose_template;

/// One request and the reply to teach: `(role, content)` messages, the
/// system prompt first where there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// The messages the node sends.
    pub messages: Vec<(String, String)>,
    /// The reply the model should give.
    pub reply: String,
}

/// One conversation's training text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainingText {
    /// The prompt, the reply and the template's end of the answer.
    pub text: String,
    /// Bytes of `text` that are the prompt: the reply starts here.
    pub prompt_len: usize,
}

/// Each conversation as the model should see it: the prompt the engine
/// renders for its messages, then the reply and the template's end of the
/// answer (taken from rendering the whole conversation; a template whose
/// whole rendering does not start with its prompt gets the reply and the
/// model's end-of-sequence text).
pub fn training_texts(
    path: &Path,
    template_flag: Option<&str>,
    conversations: &[Conversation],
) -> Result<Vec<TrainingText>, EngineError> {
    let info = crate::gguf::inspect(path)?;
    let choice = choose_template(path, &info, template_flag)?;
    let load_error = |detail: String| EngineError::Load {
        path: path.to_owned(),
        detail,
    };
    let backend = backend().map_err(load_error)?;
    let params = LlamaModelParams::default().with_vocab_only(true);
    let model = LlamaModel::load_from_file(backend, path, &params)
        .map_err(|e| load_error(format!("{e} (is it a model llama.cpp supports?)")))?;
    let template = ChatTemplate::for_model(&model, &choice.template).map_err(load_error)?;
    conversations
        .iter()
        .map(|c| render(&model, &template, c).map_err(load_error))
        .collect()
}

fn render(
    model: &LlamaModel,
    template: &ChatTemplate,
    conversation: &Conversation,
) -> Result<TrainingText, String> {
    let mut messages: Vec<(&str, &str)> = conversation
        .messages
        .iter()
        .map(|(role, content)| (role.as_str(), content.as_str()))
        .collect();
    let prompt = template.render_with(model, &messages, true)?;
    messages.push(("assistant", conversation.reply.as_str()));
    let whole = template.render_with(model, &messages, false)?;
    let prompt_len = prompt.len();
    if whole.starts_with(&prompt) && whole.len() > prompt_len {
        return Ok(TrainingText {
            text: whole,
            prompt_len,
        });
    }
    let eos = crate::chat_template::special_text(model, model.vocab().eos());
    Ok(TrainingText {
        text: format!("{prompt}{}{eos}", conversation.reply),
        prompt_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_model::{test_gemma_path, test_model_path};

    fn hello() -> Conversation {
        Conversation {
            messages: vec![
                ("system".into(), "Be brief.".into()),
                ("user".into(), "Hi".into()),
            ],
            reply: "TOOL_CALL: get_current_time".into(),
        }
    }

    #[test]
    fn a_reply_follows_the_prompt_the_engine_sends_and_is_closed_as_an_answer() {
        let path = match test_model_path() {
            Ok(path) => path,
            Err(why) => return eprintln!("skipped: {why}"),
        };
        let texts = training_texts(&path, None, &[hello()]).unwrap();
        assert_eq!(
            texts[0].text,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n\
              <|im_start|>assistant\nTOOL_CALL: get_current_time<|im_end|>\n"
        );
        assert_eq!(
            &texts[0].text[texts[0].prompt_len..],
            "TOOL_CALL: get_current_time<|im_end|>\n"
        );
    }

    #[test]
    fn gemma_without_a_template_gets_its_architectures_turns() {
        let path = match test_gemma_path() {
            Ok(path) => path,
            Err(why) => return eprintln!("skipped: {why}"),
        };
        let texts = training_texts(&path, None, &[hello()]).unwrap();
        let text = &texts[0].text;
        assert!(
            text.ends_with("<start_of_turn>model\nTOOL_CALL: get_current_time<end_of_turn>\n"),
            "{text}"
        );
        assert!(
            text[texts[0].prompt_len..].starts_with("TOOL_CALL:"),
            "{text}"
        );
    }

    #[test]
    fn a_file_that_is_no_model_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.gguf");
        std::fs::write(&path, b"not a model").unwrap();
        let err = training_texts(&path, None, &[hello()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("notes.gguf"), "{err}");
    }
}
