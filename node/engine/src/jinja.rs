//! Chat templates llama.cpp's built-in matcher does not know: the GGUF's
//! `tokenizer.chat_template`, a Jinja template as Hugging Face tokenizers
//! write them, rendered with minijinja the way `transformers` renders it
//! (`trim_blocks` and `lstrip_blocks` on; `messages`, `add_generation_prompt`,
//! `bos_token`, `eos_token` in the context; `raise_exception`; Python's
//! string and dict methods through minijinja-contrib's `pycompat`). llama.cpp
//! recognises the common templates by their text and formats them in C++;
//! a new model family's template it does not recognise is refused there,
//! and is rendered here instead of refusing the model.

use minijinja::{Environment, Error, ErrorKind, context};

/// The template's name in its environment.
const NAME: &str = "chat";

/// A compiled chat template and the special tokens it may print.
pub struct JinjaTemplate {
    env: Environment<'static>,
    bos: String,
    eos: String,
}

/// One message as a template sees it.
#[derive(serde::Serialize)]
struct Message<'a> {
    role: &'a str,
    content: &'a str,
}

impl JinjaTemplate {
    /// Compiles `source`; `bos` and `eos` are the model's special tokens as
    /// text (templates print them themselves).
    pub fn new(source: String, bos: String, eos: String) -> Result<Self, String> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function(
            "raise_exception",
            |message: String| -> Result<String, Error> {
                Err(Error::new(ErrorKind::InvalidOperation, message))
            },
        );
        env.add_template_owned(NAME, source)
            .map_err(|e| format!("its chat template does not compile: {e}"))?;
        Ok(Self { env, bos, eos })
    }

    /// The text of `messages` (`(role, content)`); with
    /// `add_generation_prompt`, ending where the assistant's answer starts.
    pub fn render(
        &self,
        messages: &[(&str, &str)],
        add_generation_prompt: bool,
    ) -> Result<String, String> {
        let messages: Vec<Message<'_>> = messages
            .iter()
            .map(|&(role, content)| Message { role, content })
            .collect();
        let template = self
            .env
            .get_template(NAME)
            .map_err(|e| format!("its chat template is missing: {e}"))?;
        template
            .render(context! {
                messages => messages,
                add_generation_prompt => add_generation_prompt,
                bos_token => self.bos,
                eos_token => self.eos,
            })
            .map_err(|e| format!("its chat template failed: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SmolLM2's template (ChatML with a default system prompt), as its
    /// GGUF carries it.
    const CHATML: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    fn template(source: &str) -> JinjaTemplate {
        JinjaTemplate::new(source.to_owned(), "<s>".into(), "</s>".into()).unwrap()
    }

    #[test]
    fn chatml_renders_as_transformers_renders_it() {
        let t = template(CHATML);
        assert_eq!(
            t.render(&[("system", "Be brief."), ("user", "Hi")], true)
                .unwrap(),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
        assert!(
            t.render(&[("user", "Hi")], true)
                .unwrap()
                .starts_with("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
        );
        // A whole conversation for training: the answer closed, no new turn.
        assert_eq!(
            t.render(&[("user", "Hi"), ("assistant", "Yo")], false)
                .unwrap(),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n"
        );
    }

    #[test]
    fn python_methods_blocks_trimmed_and_special_tokens_work() {
        // Gemma-style: no system role (folded into the first user turn),
        // `.strip()`, `bos_token`, whitespace control by trim/lstrip blocks.
        let gemma = "{{ bos_token }}{% if messages[0]['role'] == 'system' %}\n    {% set first = messages[0]['content'] + '\n\n' %}\n    {% set rest = messages[1:] %}\n{% else %}\n    {% set first = '' %}\n    {% set rest = messages %}\n{% endif %}\n{% for m in rest %}\n    {% set role = 'model' if m['role'] == 'assistant' else m['role'] %}\n<start_of_turn>{{ role }}\n{{ (first if loop.first else '') + m['content'] | trim }}<end_of_turn>\n{% endfor %}\n{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}";
        let out = template(gemma)
            .render(
                &[
                    ("system", "Sys."),
                    ("user", "  Hi  "),
                    ("assistant", "Yo"),
                    ("user", "Q"),
                ],
                true,
            )
            .unwrap();
        assert_eq!(
            out,
            "<s><start_of_turn>user\nSys.\n\nHi<end_of_turn>\n<start_of_turn>model\nYo<end_of_turn>\n<start_of_turn>user\nQ<end_of_turn>\n<start_of_turn>model\n"
        );
        let py = template("{{ messages[0].content.strip().upper() }}{{ eos_token }}");
        assert_eq!(py.render(&[("user", " a b ")], true).unwrap(), "A B</s>");
    }

    #[test]
    fn a_template_that_refuses_or_does_not_compile_is_an_error_saying_so() {
        let strict = template(
            "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}ok",
        );
        let e = strict.render(&[("system", "x")], true).unwrap_err();
        assert!(e.contains("System role not supported"), "{e}");
        assert_eq!(strict.render(&[("user", "x")], true).unwrap(), "ok");
        let e = JinjaTemplate::new("{% for %}".into(), String::new(), String::new())
            .err()
            .unwrap();
        assert!(e.contains("does not compile"), "{e}");
    }
}
