//! How the inference thread turns messages into a prompt: llama.cpp's own
//! formatting of the GGUF's chat template where llama.cpp recognises it,
//! else the template itself rendered by [`crate::jinja`]. The choice is made
//! once, at load, by rendering a probe conversation: a model whose template
//! neither can render is refused before anything starts, with both reasons.

use std::num::NonZeroU16;

use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};

use crate::jinja::JinjaTemplate;
use crate::template_choice::Template;

/// The GGUF key of the Jinja chat template.
const TEMPLATE_KEY: &str = "tokenizer.chat_template";

/// The conversation a template must render at load: every role a request
/// can carry.
const PROBE: &[(&str, &str)] = &[
    ("system", "s"),
    ("user", "u"),
    ("assistant", "a"),
    ("user", "u"),
];

/// A model's prompt format.
pub(crate) enum ChatTemplate {
    /// llama.cpp recognises the template and formats it in C++.
    Builtin(LlamaChatTemplate),
    /// llama.cpp does not: the Jinja text, rendered by minijinja.
    Jinja(Box<JinjaTemplate>),
}

impl ChatTemplate {
    /// The format for `model` under the chosen `template`: the GGUF's own
    /// text, a llama.cpp name (`gemma` for a Gemma base model without one),
    /// or a Jinja file's text. Text llama.cpp does not recognise is rendered
    /// by minijinja; a name is llama.cpp's or nothing.
    pub(crate) fn for_model(model: &LlamaModel, template: &Template) -> Result<Self, String> {
        let source = match template {
            Template::Own => model.meta_val_str(TEMPLATE_KEY).ok(),
            Template::Jinja { text, .. } => Some(text.clone()),
            Template::Named(name) => {
                let builtin = LlamaChatTemplate::new(name).map_err(|e| e.to_string())?;
                let template = Self::Builtin(builtin);
                template
                    .render(model, PROBE)
                    .map_err(|e| format!("llama.cpp's '{name}' template failed: {e}"))?;
                return Ok(template);
            }
        };
        let builtin = match &source {
            Some(text) => LlamaChatTemplate::new(text).map_err(|e| e.to_string()),
            None => model.chat_template(None).map_err(|e| e.to_string()),
        };
        let builtin_failed = match builtin {
            Ok(template) => {
                let template = Self::Builtin(template);
                match template.render(model, PROBE) {
                    Ok(_) => return Ok(template),
                    Err(e) => e,
                }
            }
            Err(e) => e,
        };
        let Some(source) = source else {
            return Err(format!("it has no chat template ({builtin_failed})"));
        };
        let jinja = Self::Jinja(Box::new(JinjaTemplate::new(
            source,
            special_text(model, model.vocab().bos()),
            special_text(model, model.vocab().eos()),
        )?));
        jinja.render(model, PROBE).map_err(|e| {
            format!("its chat template is not one llama.cpp knows ({builtin_failed}) and {e}")
        })?;
        tracing::info!("chat template: rendered with minijinja (llama.cpp does not know it)");
        Ok(jinja)
    }

    /// The prompt for `messages` (`(role, content)`), ending where the
    /// assistant's answer starts.
    pub(crate) fn render(
        &self,
        model: &LlamaModel,
        messages: &[(&str, &str)],
    ) -> Result<String, String> {
        self.render_with(model, messages, true)
    }

    /// The text of `messages`; with `add_generation_prompt` it ends where
    /// the assistant's answer starts, without it after the last message
    /// (a whole conversation, its last answer closed as the model closes
    /// one: what training shows the model).
    pub(crate) fn render_with(
        &self,
        model: &LlamaModel,
        messages: &[(&str, &str)],
        add_generation_prompt: bool,
    ) -> Result<String, String> {
        match self {
            Self::Builtin(template) => {
                let messages = messages
                    .iter()
                    .map(|&(role, content)| {
                        LlamaChatMessage::new(role.to_owned(), content.to_owned())
                            .map_err(|e| format!("a message cannot be passed to llama.cpp: {e}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                model
                    .apply_chat_template(template, &messages, add_generation_prompt)
                    .map_err(|e| format!("the model's chat template could not be applied: {e}"))
            }
            Self::Jinja(template) => template.render(messages, add_generation_prompt),
        }
    }

    /// Whether llama.cpp renders.
    #[cfg(test)]
    fn is_builtin(&self) -> bool {
        matches!(self, Self::Builtin(_))
    }
}

/// A special token's text (`<|im_start|>`, `<bos>`): what a template prints.
pub(crate) fn special_text(model: &LlamaModel, token: llama_cpp_2::token::LlamaToken) -> String {
    let bytes = model
        .vocab()
        .token_to_piece(token, true, None::<NonZeroU16>);
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_model::test_model_path;
    use llama_cpp_2::model::params::LlamaModelParams;

    fn jinja_text(text: &str) -> Template {
        Template::Jinja {
            path: "t.jinja".into(),
            text: text.to_owned(),
        }
    }

    fn model() -> LlamaModel {
        let path = test_model_path().unwrap_or_else(|e| panic!("{e}"));
        let backend = crate::actor::backend().unwrap();
        LlamaModel::load_from_file(backend, &path, &LlamaModelParams::default()).unwrap()
    }

    /// The real model's own template renders the same prompt both ways, and
    /// one llama.cpp does not know falls back to minijinja (issue 30 §1).
    #[test]
    fn real_model_templates_render_alike_both_ways_and_an_unknown_one_falls_back() {
        let model = model();
        let own = ChatTemplate::for_model(&model, &Template::Own).unwrap();
        assert!(own.is_builtin(), "llama.cpp knows SmolLM2's ChatML");
        let source = model.meta_val_str(TEMPLATE_KEY).unwrap();
        let jinja = ChatTemplate::Jinja(Box::new(
            JinjaTemplate::new(
                source,
                special_text(&model, model.vocab().bos()),
                special_text(&model, model.vocab().eos()),
            )
            .unwrap(),
        ));
        let chat = [
            ("system", "Be brief."),
            ("user", "Hi"),
            ("assistant", "Hello."),
            ("user", "Time?"),
        ];
        assert_eq!(
            own.render(&model, &chat).unwrap(),
            jinja.render(&model, &chat).unwrap()
        );

        let unknown = "{% for m in messages %}[[{{ m.role | upper }}]] {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}[[ASSISTANT]] {% endif %}";
        let fell_back = ChatTemplate::for_model(&model, &jinja_text(unknown)).unwrap();
        assert!(!fell_back.is_builtin());
        assert_eq!(
            fell_back.render(&model, &[("user", "Hi")]).unwrap(),
            "[[USER]] Hi\n[[ASSISTANT]] "
        );
        let broken = ChatTemplate::for_model(&model, &jinja_text("{% for %}"))
            .err()
            .unwrap();
        assert!(broken.contains("does not compile"), "{broken}");
    }

    /// A name llama.cpp knows replaces the file's template: SmolLM2 under
    /// `gemma` gets Gemma's turns, the format a Gemma base model without a
    /// template is given by its architecture (issue 43 §1).
    #[test]
    fn a_named_template_formats_with_llama_cpps_own_turns() {
        let model = model();
        let gemma = ChatTemplate::for_model(&model, &Template::Named("gemma".into())).unwrap();
        let prompt = gemma
            .render(&model, &[("system", "Be brief."), ("user", "Hi")])
            .unwrap();
        assert!(
            prompt.contains("<start_of_turn>user\n") && prompt.ends_with("<start_of_turn>model\n"),
            "{prompt:?}"
        );
        assert!(
            prompt.contains("Be brief."),
            "the system text is kept: {prompt:?}"
        );
    }
}
